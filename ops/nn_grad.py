"""Gradients of the neural-network ops (ops/nn_ops.py, loss_ops.py), one block per op, with
TensorFlow's formulas (tensorflow/python/ops/nn_grad.py).

The activations' gradients build TensorFlow's dedicated gradient ops (ReluGrad...,
declared in ops/nn_grad_ops.py), and those ops have TensorFlow's gradients in turn, so a
gradient of a gradient (a Hessian-vector product, a gradient penalty) works through them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph.graph import Operation, Output
from minigraph.ops.array_ops import ones_like, zeros_like
from minigraph.ops.compare_ops import less, select
from minigraph.ops.grad_util import static_dims, unbroadcast
from minigraph.ops.linalg_ops import matmul
from minigraph.ops.math_ops import add, divide, exp, multiply, negative, sigmoid, subtract
from minigraph.ops.nn_grad_ops import (
    bias_add_grad,
    elu_grad,
    leaky_relu_grad,
    relu6_grad,
    relu_grad,
    selu_grad,
    softplus_grad,
)
from minigraph.ops.nn_ops import log_softmax, softmax
from minigraph.ops.reduction_ops import reduce_sum
from minigraph.ops.shape_ops import expand_dims, reshape, shape, squeeze
from minigraph.ops.slice_ops import concat, tile
from minigraph.registry import register_gradient

# -- activations ---------------------------------------------------------------------------


@register_gradient("Relu")
def _relu_grad(op: Operation, grad: Output) -> list[Any]:
    return [relu_grad(grad, op.outputs[0])]


@register_gradient("Relu6")
def _relu6_grad(op: Operation, grad: Output) -> list[Any]:
    return [relu6_grad(grad, op.outputs[0])]


@register_gradient("Elu")
def _elu_grad(op: Operation, grad: Output) -> list[Any]:
    return [elu_grad(grad, op.outputs[0])]


@register_gradient("Selu")
def _selu_grad(op: Operation, grad: Output) -> list[Any]:
    return [selu_grad(grad, op.outputs[0])]


@register_gradient("LeakyRelu")
def _leaky_relu_grad(op: Operation, grad: Output) -> list[Any]:
    return [leaky_relu_grad(grad, op.inputs[0], alpha=op.get_attr("alpha"))]


@register_gradient("Softplus")
def _softplus_grad(op: Operation, grad: Output) -> list[Any]:
    return [multiply(grad, sigmoid(op.inputs[0]))]


# -- the activations' gradient ops: second derivatives -------------------------------------


@register_gradient("ReluGrad")
def _relu_grad_grad(op: Operation, grad: Output) -> list[Any]:
    x = op.inputs[1]
    return [relu_grad(grad, x), zeros_like(x)]


@register_gradient("Relu6Grad")
def _relu6_grad_grad(op: Operation, grad: Output) -> list[Any]:
    x = op.inputs[1]
    return [relu6_grad(grad, x), zeros_like(x)]


@register_gradient("LeakyReluGrad")
def _leaky_relu_grad_grad(op: Operation, grad: Output) -> list[Any]:
    x = op.inputs[1]
    return [leaky_relu_grad(grad, x, alpha=op.get_attr("alpha")), zeros_like(x)]


@register_gradient("EluGrad")
def _elu_grad_grad(op: Operation, grad: Output) -> list[Any]:
    y = op.inputs[1]
    negative_part = select(less(y, 0.0), multiply(grad, op.inputs[0]), zeros_like(y))
    return [elu_grad(grad, y), negative_part]


@register_gradient("SeluGrad")
def _selu_grad_grad(op: Operation, grad: Output) -> list[Any]:
    y = op.inputs[1]
    negative_part = select(less(y, 0.0), multiply(grad, op.inputs[0]), zeros_like(y))
    return [selu_grad(grad, y), negative_part]


@register_gradient("SoftplusGrad")
def _softplus_grad_grad(op: Operation, grad: Output) -> list[Any]:
    """With dx = dy / (1 + exp(-x)): d(dx)/d(dy) is SoftplusGrad again, and d(dx)/dx is
    dy / (exp(-x) + 2 + exp(x))."""
    dy, x = op.inputs
    ddy = softplus_grad(grad, x)
    d2x = divide(multiply(grad, dy), add(add(exp(negative(x)), 2.0), exp(x)))
    return [ddy, d2x]


# -- Softmax, LogSoftmax -------------------------------------------------------------------


@register_gradient("Softmax")
def _softmax_grad(op: Operation, grad: Output) -> list[Any]:
    """(grad - sum(grad * softmax)) * softmax over the last axis."""
    y = op.outputs[0]
    sum_channels = reduce_sum(multiply(grad, y), -1, keepdims=True)
    return [multiply(subtract(grad, sum_channels), y)]


@register_gradient("LogSoftmax")
def _log_softmax_grad(op: Operation, grad: Output) -> list[Any]:
    """grad - sum(grad) * softmax over the last axis (softmax = exp of the output)."""
    return [subtract(grad, multiply(reduce_sum(grad, -1, keepdims=True), exp(op.outputs[0])))]


# -- BiasAdd, BiasAddGrad ------------------------------------------------------------------


@register_gradient("BiasAdd")
def _bias_add_grad(op: Operation, grad: Output) -> list[Any]:
    """The value's gradient passes; the bias's is BiasAddGrad."""
    return [grad, bias_add_grad(grad, data_format=op.get_attr("data_format"))]


@register_gradient("BiasAddGrad")
def _bias_add_grad_grad(op: Operation, grad: Output) -> list[Any]:
    """The bias gradient ``grad`` reshaped to the channel dim and tiled over the others
    (constants when the input's shape is known)."""
    nchw = op.get_attr("data_format") == "NCHW"
    dims = static_dims(op.inputs[0])
    if dims is not None:
        channel = 1 if nchw and len(dims) > 2 else len(dims) - 1
        expanded = [1] * len(dims)
        expanded[channel] = -1
        multiples = list(dims)
        multiples[channel] = 1
        expanded_shape: Any = np.array(expanded, np.int32)
        tile_mults: Any = np.array(multiples, np.int32)
    else:
        full = shape(op.inputs[0])
        bias_shape = shape(grad)
        if nchw:
            head, tail = full[:1], full[2:]
            expanded_shape = concat([ones_like(head), bias_shape, ones_like(tail)], 0)
            tile_mults = concat([head, np.array([1], np.int32), tail], 0)
        else:
            head = full[:-1]
            expanded_shape = concat([ones_like(head), bias_shape], 0)
            tile_mults = concat([head, np.array([1], np.int32)], 0)
    return [tile(reshape(grad, expanded_shape), tile_mults)]


# -- losses --------------------------------------------------------------------------------


@register_gradient("L2Loss")
def _l2_loss_grad(op: Operation, grad: Output) -> list[Any]:
    return [multiply(op.inputs[0], grad)]


def _broadcast_mul(vec: Output, mat: Output) -> Output:
    """``vec[:, None] * mat``: a per-row scale."""
    return multiply(expand_dims(vec, -1), mat)


def _is_zero_fill(grad: Output, output: Output) -> bool:
    """Whether ``grad`` is the zeros mg.gradients gives an output that nothing
    differentiates (TensorFlow's ``_is_zeros_tensor``), so a term it scales is skipped."""
    return grad.op.type == "ZerosLike" and grad.op.inputs[0] == output


def _xent_logits_grad(op: Operation, grad_loss: Output, grad_grad: Output) -> Output:
    """The logits' gradient of both cross-entropy ops: the loss's gradient scales the
    op's own ``backprop`` output; a gradient of ``backprop`` (a second derivative) adds
    its product with softmax's Jacobian."""
    grad = _broadcast_mul(grad_loss, op.outputs[1])
    if not _is_zero_fill(grad_grad, op.outputs[1]):
        probs = softmax(op.inputs[0])
        row_dot = squeeze(matmul(expand_dims(grad_grad, 1), expand_dims(probs, 2)), axis=1)
        grad = add(grad, multiply(subtract(grad_grad, row_dot), probs))
    return grad


@register_gradient("SoftmaxCrossEntropyWithLogits")
def _softmax_xent_grad(op: Operation, grad_loss: Output, grad_grad: Output) -> list[Any]:
    """As TensorFlow's, with two fixes: the labels' gradient takes the gradient of
    ``backprop`` too (TensorFlow's drops it, so its second derivatives through labels
    are wrong), and features and labels that broadcast get gradients summed back to their
    own shapes (TensorFlow's graph mode fails on them)."""
    features, labels = op.inputs
    grad = _xent_logits_grad(op, grad_loss, grad_grad)
    grad_labels = _broadcast_mul(grad_loss, negative(log_softmax(features)))
    if not _is_zero_fill(grad_grad, op.outputs[1]):  # backprop = softmax - labels
        grad_labels = subtract(grad_labels, grad_grad)
    return [unbroadcast(grad, features, labels), unbroadcast(grad_labels, labels, features)]


@register_gradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent_grad(op: Operation, grad_loss: Output, grad_grad: Output) -> list[Any]:
    return [_xent_logits_grad(op, grad_loss, grad_grad), None]
