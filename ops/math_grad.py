"""Gradients of the math ops (ops/math_ops.py, math_n_ops.py), one block per op, with
TensorFlow's formulas (tensorflow/python/ops/math_grad.py); complex inputs take the
conjugate where TensorFlow's do."""

from __future__ import annotations

from typing import Any

from minigraph.graph import Operation, Output
from minigraph.ops.grad_util import binary_grads
from minigraph.ops.math_ops import multiply, negative, truediv
from minigraph.registry import register_gradient


@register_gradient("AddN")
def _add_n_grad(op: Operation, grad: Output) -> list[Any]:
    return [grad] * op.num_inputs


@register_gradient("Add")
@register_gradient("AddV2")
def _add_grad(op: Operation, grad: Output) -> list[Any]:
    return binary_grads(op, grad, grad)


@register_gradient("Sub")
def _sub_grad(op: Operation, grad: Output) -> list[Any]:
    return binary_grads(op, grad, negative(grad))


@register_gradient("Mul")
def _mul_grad(op: Operation, grad: Output) -> list[Any]:
    x, y = op.inputs
    return binary_grads(op, multiply(grad, y), multiply(x, grad))


@register_gradient("RealDiv")
def _real_div_grad(op: Operation, grad: Output) -> list[Any]:
    x, y = op.inputs
    return binary_grads(op, truediv(grad, y), multiply(grad, truediv(truediv(negative(x), y), y)))


@register_gradient("Neg")
def _neg_grad(op: Operation, grad: Output) -> list[Any]:
    return [negative(grad)]
