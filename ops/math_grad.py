"""Gradients of the math ops (ops/math_ops.py, math_n_ops.py, complex_ops.py), of the
gradient ops themselves (ops/math_grad_ops.py: second derivatives) and of selection
(compare_ops.py), one block per op, with TensorFlow's formulas
(tensorflow/python/ops/math_grad.py, clip_ops.py).

Complex inputs take the conjugate where TensorFlow's do: the gradient of ``f`` at ``x``
is ``grad * conj(f'(x))``. ``conj`` adds no op for real tensors, so real gradients are
TensorFlow's graphs op for op. A broadcast operand's gradient is summed back to its
shape (grad_util.binary_grads). Ops TensorFlow declares NotDifferentiable, or whose
gradient is None for every input (the comparisons, logical ops, Floor, Ceil, Round, Rint,
FloorDiv, TruncateDiv), stop gradients here too; TruncateMod, IsNan, IsInf and IsFinite
have no gradient in TensorFlow, and differentiating through them is an error in both.
"""

from __future__ import annotations

import math
from typing import Any

from minigraph.graph import Operation, Output
from minigraph.ops.array_ops import ones_like, zeros, zeros_like
from minigraph.ops.compare_ops import (
    greater,
    greater_equal,
    less,
    less_equal,
    logical_or,
    not_equal,
    select,
    where_v2,
)
from minigraph.ops.complex_ops import conj
from minigraph.ops.grad_util import binary_grads, unbroadcast
from minigraph.ops.math_grad_ops import (
    reciprocal_grad,
    rsqrt_grad,
    sigmoid_grad,
    sqrt_grad,
    tanh_grad,
)
from minigraph.ops.math_ops import (
    cos,
    div_no_nan,
    exp,
    floordiv,
    log,
    multiply,
    negative,
    pow,
    reciprocal,
    sign,
    sin,
    square,
    truediv,
)
from minigraph.registry import not_differentiable, register_gradient

not_differentiable(
    "Less",
    "LessEqual",
    "Greater",
    "GreaterEqual",
    "Equal",
    "NotEqual",
    "LogicalAnd",
    "LogicalOr",
    "LogicalNot",
    # TensorFlow registers gradients for these that return None for every input.
    "Floor",
    "Ceil",
    "Round",
    "Rint",
    "FloorDiv",
    "TruncateDiv",
)


# -- Sums and products -----------------------------------------------------------------------


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
    return binary_grads(op, multiply(grad, conj(y)), multiply(conj(x), grad))


@register_gradient("Neg")
def _neg_grad(op: Operation, grad: Output) -> list[Any]:
    return [negative(grad)]


@register_gradient("Conj")
def _conj_grad(op: Operation, grad: Output) -> list[Any]:
    return [conj(grad)]


# -- Divisions ------------------------------------------------------------------------------


def _quotient_grads(op: Operation, grad: Output, div: Any) -> list[Any]:
    """d(x / y) = (grad / conj(y), grad * (-conj(x) / conj(y)) / conj(y)), with ``div``
    the division TensorFlow's gradient uses."""
    cx, cy = conj(op.inputs[0]), conj(op.inputs[1])
    return binary_grads(op, div(grad, cy), multiply(grad, div(div(negative(cx), cy), cy)))


@register_gradient("RealDiv")
@register_gradient("Div")  # TensorFlow's _DivGrad divides with RealDiv too
def _real_div_grad(op: Operation, grad: Output) -> list[Any]:
    return _quotient_grads(op, grad, truediv)


@register_gradient("DivNoNan")
def _div_no_nan_grad(op: Operation, grad: Output) -> list[Any]:
    return _quotient_grads(op, grad, div_no_nan)


@register_gradient("FloorMod")
def _floor_mod_grad(op: Operation, grad: Output) -> list[Any]:
    """x - floor(x / y) * y: (grad, -grad * floor(x / y))."""
    x, y = conj(op.inputs[0]), conj(op.inputs[1])
    return binary_grads(op, grad, multiply(grad, negative(floordiv(x, y))))


# -- Powers, extremes, distances ---------------------------------------------------------------


@register_gradient("Pow")
def _pow_grad(op: Operation, grad: Output) -> list[Any]:
    """(grad * y * x**(y - 1), grad * z * log(x)), conjugated; log(x) is taken as 0 where
    x is 0 (or, for reals, negative), as TensorFlow's."""
    x, y = op.inputs
    cx, cy = conj(x), conj(y)
    gx = multiply(multiply(grad, cy), pow(cx, cy - 1))
    mask = not_equal(cx, 0) if x.dtype.is_complex else greater(cx, 0)
    safe_x = select(mask, cx, ones_like(x))
    log_x = select(mask, log(safe_x), zeros_like(x))
    gy = multiply(multiply(grad, conj(op.outputs[0])), log_x)
    return binary_grads(op, gx, gy)


def _extreme_grads(op: Operation, grad: Output, picks_x: Any) -> list[Any]:
    """The gradient goes to x where ``picks_x(x, y)`` (ties included), else to y."""
    x, y = op.inputs
    zero = zeros_like(grad)
    mask = picks_x(x, y)
    return binary_grads(op, where_v2(mask, grad, zero), where_v2(mask, zero, grad))


@register_gradient("Maximum")
def _maximum_grad(op: Operation, grad: Output) -> list[Any]:
    return _extreme_grads(op, grad, greater_equal)


@register_gradient("Minimum")
def _minimum_grad(op: Operation, grad: Output) -> list[Any]:
    return _extreme_grads(op, grad, less_equal)


@register_gradient("SquaredDifference")
def _squared_difference_grad(op: Operation, grad: Output) -> list[Any]:
    """2 * grad * (x - y) and its negation (TensorFlow conjugates nothing here)."""
    x, y = op.inputs
    x_grad = multiply(multiply(2.0, grad), x - y)
    return binary_grads(op, x_grad, negative(x_grad))


@register_gradient("Atan2")
def _atan2_grad(op: Operation, grad: Output) -> list[Any]:
    """atan2(y, x): (grad * x, -grad * y) / (y**2 + x**2)."""
    y, x = op.inputs
    grad_inv = truediv(grad, square(y) + square(x))
    return binary_grads(op, multiply(x, grad_inv), multiply(negative(y), grad_inv))


# -- Unary functions -------------------------------------------------------------------------


@register_gradient("Abs")
def _abs_grad(op: Operation, grad: Output) -> list[Any]:
    return [multiply(grad, sign(op.inputs[0]))]


@register_gradient("Sign")
def _sign_grad(op: Operation, grad: Output) -> list[Any]:
    return [zeros_like(op.inputs[0])]  # zeros, not None, as TensorFlow's _SignGrad


@register_gradient("Square")
def _square_grad(op: Operation, grad: Output) -> list[Any]:
    return [multiply(grad, multiply(conj(op.inputs[0]), 2.0))]


@register_gradient("Sqrt")
def _sqrt_grad(op: Operation, grad: Output) -> list[Any]:
    return [sqrt_grad(op.outputs[0], grad)]


@register_gradient("Rsqrt")
def _rsqrt_grad(op: Operation, grad: Output) -> list[Any]:
    return [rsqrt_grad(op.outputs[0], grad)]


@register_gradient("Reciprocal")
def _reciprocal_grad(op: Operation, grad: Output) -> list[Any]:
    return [reciprocal_grad(op.outputs[0], grad)]


@register_gradient("Exp")
def _exp_grad(op: Operation, grad: Output) -> list[Any]:
    return [multiply(grad, conj(op.outputs[0]))]


@register_gradient("Expm1")
def _expm1_grad(op: Operation, grad: Output) -> list[Any]:
    return [multiply(grad, exp(conj(op.inputs[0])))]


@register_gradient("Log")
def _log_grad(op: Operation, grad: Output) -> list[Any]:
    return [multiply(grad, reciprocal(conj(op.inputs[0])))]


@register_gradient("Log1p")
def _log1p_grad(op: Operation, grad: Output) -> list[Any]:
    return [multiply(grad, reciprocal(1 + conj(op.inputs[0])))]


@register_gradient("Sin")
def _sin_grad(op: Operation, grad: Output) -> list[Any]:
    return [multiply(grad, cos(conj(op.inputs[0])))]


@register_gradient("Cos")
def _cos_grad(op: Operation, grad: Output) -> list[Any]:
    return [multiply(negative(grad), sin(conj(op.inputs[0])))]


@register_gradient("Tanh")
def _tanh_grad(op: Operation, grad: Output) -> list[Any]:
    return [tanh_grad(conj(op.outputs[0]), grad)]


@register_gradient("Sigmoid")
def _sigmoid_grad(op: Operation, grad: Output) -> list[Any]:
    return [sigmoid_grad(conj(op.outputs[0]), grad)]


def _gaussian_grad(op: Operation, grad: Output, scale: float) -> list[Any]:
    """grad * scale * exp(-x**2): Erf's and Erfc's derivative up to the sign of ``scale``."""
    x = conj(op.inputs[0])
    return [multiply(multiply(grad, scale), exp(negative(square(x))))]


@register_gradient("Erf")
def _erf_grad(op: Operation, grad: Output) -> list[Any]:
    return _gaussian_grad(op, grad, 2 / math.sqrt(math.pi))


@register_gradient("Erfc")
def _erfc_grad(op: Operation, grad: Output) -> list[Any]:
    return _gaussian_grad(op, grad, -2 / math.sqrt(math.pi))


# -- The gradient ops' own gradients (second derivatives) -------------------------------------


@register_gradient("TanhGrad")
def _tanh_grad_grad(op: Operation, grad: Output) -> list[Any]:
    """z = dy * (1 - y * y): (-2 * grad * dy * y, tanh_grad(y, grad)), conjugated."""
    a, b = conj(op.inputs[0]), conj(op.inputs[1])
    return [multiply(multiply(multiply(grad, -2.0), b), a), tanh_grad(a, grad)]


@register_gradient("SigmoidGrad")
def _sigmoid_grad_grad(op: Operation, grad: Output) -> list[Any]:
    """z = dy * y * (1 - y): (grad * dy * (1 - 2y), sigmoid_grad(y, grad)), conjugated."""
    a, b = conj(op.inputs[0]), conj(op.inputs[1])
    gb = multiply(grad, b)
    return [gb - multiply(multiply(2.0, gb), a), sigmoid_grad(a, grad)]


@register_gradient("SqrtGrad")
def _sqrt_grad_grad(op: Operation, grad: Output) -> list[Any]:
    """z = 0.5 * dy / conj(y): (-conj(grad / y) * z, 0.5 * grad / y)."""
    ga = truediv(grad, op.inputs[0])
    return [multiply(negative(conj(ga)), op.outputs[0]), multiply(0.5, ga)]


@register_gradient("RsqrtGrad")
def _rsqrt_grad_grad(op: Operation, grad: Output) -> list[Any]:
    """z = -0.5 * dy * conj(y)**3: (-1.5 * conj(grad) * dy * conj(y)**2, rsqrt_grad(y, grad))."""
    ca, cg = conj(op.inputs[0]), conj(grad)
    grad_a = multiply(multiply(multiply(-1.5, cg), op.inputs[1]), square(ca))
    return [grad_a, rsqrt_grad(ca, grad)]


@register_gradient("ReciprocalGrad")
def _reciprocal_grad_grad(op: Operation, grad: Output) -> list[Any]:
    """z = -dy * conj(y)**2: (-2 * conj(grad) * dy * conj(y), reciprocal_grad(y, grad))."""
    ca, cg = conj(op.inputs[0]), conj(grad)
    grad_a = multiply(multiply(multiply(cg, -2.0), op.inputs[1]), ca)
    return [grad_a, reciprocal_grad(ca, grad)]


# -- Selection -------------------------------------------------------------------------------


@register_gradient("Select")
def _select_grad(op: Operation, grad: Output) -> list[Any]:
    c, x = op.inputs[0], op.inputs[1]
    zero = zeros_like(x)
    return [None, select(c, grad, zero), select(c, zero, grad)]


@register_gradient("SelectV2")
def _select_v2_grad(op: Operation, grad: Output) -> list[Any]:
    """Each branch's share, summed back over the axes it was broadcast along."""
    c, x, y = op.inputs
    z = op.outputs[0]
    zero = zeros([], dtype=grad.dtype)
    gx = where_v2(c, grad, zero)
    gy = where_v2(c, zero, grad)
    return [None, unbroadcast(gx, x, z), unbroadcast(gy, y, z)]


@register_gradient("ClipByValue")
def _clip_by_value_grad(op: Operation, grad: Output) -> list[Any]:
    """The gradient goes to t where it lies within the bounds, else to the bound that
    clipped it (TensorFlow's clip_ops._clip_by_value_grad)."""
    t, lo, hi = op.inputs
    zero = zeros_like(grad)
    below, above = less(t, lo), greater(t, hi)
    t_grad = select(logical_or(below, above), zero, grad)
    lo_grad = select(below, grad, zero)
    hi_grad = select(above, grad, zero)
    return [t_grad, unbroadcast(lo_grad, lo, t), unbroadcast(hi_grad, hi, t)]
