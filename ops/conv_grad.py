"""Gradients of the convolution layers' ops: convolutions, pooling and batch norm
(conv_ops, conv_backprop_ops, pool_grad_ops, batch_norm_ops), one block per op, with
TensorFlow's formulas (tensorflow/python/ops/nn_grad.py).

A convolution's gradients are its two backprop ops with the forward op's own attrs
(strides, dilations, padding and explicit_paddings, data_format); a backprop op's
gradients are the other backprop op and the forward convolution, so gradients of
gradients (second order) are built from the same four ops. Shapes passed to a backprop op
are constants when shape inference knows them, else Shape nodes.
"""

from __future__ import annotations

from typing import Any

from minigraph.graph import Operation, Output
from minigraph.ops import (  # noqa: F401  (the ops built here)
    batch_norm_ops,
    conv_backprop_ops,
    conv_ops,
    pool_grad_ops,
)
from minigraph.ops.array_ops import zeros_like
from minigraph.ops.grad_util import shape_of
from minigraph.ops.shape_ops import transpose
from minigraph.registry import register_gradient
from minigraph.wrappers import apply_op

__all__: list[str] = []


def same_attrs(op: Operation, op_type: str, inputs: list[Any]) -> Output:
    """``op_type`` on ``inputs`` with ``op``'s attrs (all but the inferred dtype ``T``), as
    TensorFlow's gradients pass ``op.get_attr(...)`` on; its first output."""
    attrs = {k: v for k, v in op.node.attrs.items() if k != "T"}
    return apply_op(op_type, None, inputs, attrs).outputs[0]


# -- Conv2D and its backprops -----------------------------------------------------------


@register_gradient("Conv2D")
def _conv2d_grad(op: Operation, grad: Output) -> list[Any]:
    x, w = op.inputs
    return [
        same_attrs(op, "Conv2DBackpropInput", [shape_of(x), w, grad]),
        same_attrs(op, "Conv2DBackpropFilter", [x, shape_of(w), grad]),
    ]


@register_gradient("Conv2DBackpropInput")
def _conv2d_backprop_input_grad(op: Operation, grad: Output) -> list[Any]:
    """input_sizes gets none; the filter's is a filter backprop with ``grad`` as the
    image, out_backprop's the convolution of ``grad``."""
    _, w, dy = op.inputs
    return [
        None,
        same_attrs(op, "Conv2DBackpropFilter", [grad, shape_of(w), dy]),
        same_attrs(op, "Conv2D", [grad, w]),
    ]


@register_gradient("Conv2DBackpropFilter")
def _conv2d_backprop_filter_grad(op: Operation, grad: Output) -> list[Any]:
    x, _, dy = op.inputs
    return [
        same_attrs(op, "Conv2DBackpropInput", [shape_of(x), grad, dy]),
        None,
        same_attrs(op, "Conv2D", [x, grad]),
    ]


# -- DepthwiseConv2dNative and its backprops ----------------------------------------------


@register_gradient("DepthwiseConv2dNative")
def _depthwise_conv2d_native_grad(op: Operation, grad: Output) -> list[Any]:
    x, w = op.inputs
    return [
        same_attrs(op, "DepthwiseConv2dNativeBackpropInput", [shape_of(x), w, grad]),
        same_attrs(op, "DepthwiseConv2dNativeBackpropFilter", [x, shape_of(w), grad]),
    ]


@register_gradient("DepthwiseConv2dNativeBackpropInput")
def _depthwise_backprop_input_grad(op: Operation, grad: Output) -> list[Any]:
    _, w, dy = op.inputs
    return [
        None,
        same_attrs(op, "DepthwiseConv2dNativeBackpropFilter", [grad, shape_of(w), dy]),
        same_attrs(op, "DepthwiseConv2dNative", [grad, w]),
    ]


@register_gradient("DepthwiseConv2dNativeBackpropFilter")
def _depthwise_backprop_filter_grad(op: Operation, grad: Output) -> list[Any]:
    x, _, dy = op.inputs
    return [
        same_attrs(op, "DepthwiseConv2dNativeBackpropInput", [shape_of(x), grad, dy]),
        None,
        same_attrs(op, "DepthwiseConv2dNative", [x, grad]),
    ]


# -- pooling ----------------------------------------------------------------------------


@register_gradient("MaxPool")
def _max_pool_grad(op: Operation, grad: Output) -> list[Any]:
    return [same_attrs(op, "MaxPoolGrad", [op.inputs[0], op.outputs[0], grad])]


@register_gradient("MaxPoolGrad")
def _max_pool_grad_grad(op: Operation, grad: Output) -> list[Any]:
    """Zeros for MaxPool's input and output (the pick is piecewise constant), and the
    gradient picked by the same cells for ``grad``."""
    x, y, _ = op.inputs
    attrs = {k: v for k, v in op.node.attrs.items() if k not in ("T", "explicit_paddings")}
    second = apply_op("MaxPoolGradGrad", None, [x, y, grad], attrs).outputs[0]
    return [zeros_like(x), zeros_like(y), second]


@register_gradient("MaxPoolGradGrad")
def _max_pool_grad_grad_grad(op: Operation, grad: Output) -> list[Any]:
    x, y, _ = op.inputs
    return [zeros_like(x), zeros_like(y), same_attrs(op, "MaxPoolGrad", [x, y, grad])]


@register_gradient("AvgPool")
def _avg_pool_grad(op: Operation, grad: Output) -> list[Any]:
    return [same_attrs(op, "AvgPoolGrad", [shape_of(op.inputs[0]), grad])]


@register_gradient("AvgPoolGrad")
def _avg_pool_grad_grad(op: Operation, grad: Output) -> list[Any]:
    """orig_input_shape (int32) gets none; grad's is AvgPool of the gradient (linear)."""
    return [None, same_attrs(op, "AvgPool", [grad])]


# -- batch norm ---------------------------------------------------------------------------


@register_gradient("FusedBatchNormV3")
def _fused_batch_norm_v3_grad(op: Operation, dy: Output, *unused: Output) -> list[Any]:
    """FusedBatchNormGradV3 on what the forward op saved (the batch's statistics in its
    reserve spaces) in training; in inference on the population mean and variance, with
    NCHW/NCDHW transposed to channels-last (as TensorFlow's _BaseFusedBatchNormGrad: the
    inference kernel runs NHWC only). mean and variance get none."""
    x, scale, _, mean, variance = op.inputs
    attrs = {k: op.node.attrs[k] for k in ("epsilon", "data_format", "is_training")}
    if attrs["is_training"]:
        saved = [op.outputs[3], op.outputs[4], op.outputs[5]]
        grads = apply_op("FusedBatchNormGradV3", None, [dy, x, scale, *saved], attrs).outputs
        return [grads[0], grads[1], grads[2], None, None]
    fmt = attrs["data_format"]
    rank = 5 if "D" in fmt else 4
    to_last = [0, *range(2, rank), 1]
    if fmt.startswith("NC"):
        x, dy = transpose(x, to_last), transpose(dy, to_last)
    attrs["data_format"] = "NHWC" if rank == 4 else "NDHWC"
    inputs = [dy, x, scale, mean, variance, op.outputs[5]]
    grads = apply_op("FusedBatchNormGradV3", None, inputs, attrs).outputs
    dx = grads[0]
    if fmt.startswith("NC"):
        dx = transpose(dx, [0, rank - 1, *range(1, rank - 1)])
    return [dx, grads[1], grads[2], None, None]
