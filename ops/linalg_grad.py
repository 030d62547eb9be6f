"""Gradients of the linear-algebra ops (ops/linalg_ops.py), one block per op, with
TensorFlow's formulas: MatMul and BatchMatMulV2 as tensorflow/python/ops/math_grad.py,
Einsum as linalg_grad.py's _EinsumGrad (einsums of the gradient, with a broadcast for the
labels only one operand has). Complex operands take the conjugate where TensorFlow's do.

Beyond TensorFlow, whose Einsum takes one or two operands: any number of operands (each
gradient is the einsum of the output's gradient with the other operands), equations
without ``->``, and labelled dims of 1 broadcast against larger ones (summed back), as
minigraph's Einsum follows ``np.einsum`` there.
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from minigraph import errors
from minigraph.graph import Operation, Output
from minigraph.ops.array_ops import fill
from minigraph.ops.complex_ops import conj
from minigraph.ops.grad_util import static_dims
from minigraph.ops.linalg_ops import einsum, mat_mul, matmul, parse_equation
from minigraph.ops.math_ops import add, multiply
from minigraph.ops.reduction_ops import reduce_sum
from minigraph.ops.shape_ops import (
    broadcast_gradient_args,
    broadcast_to,
    expand_dims,
    gradient_reduction_axes,
    rank,
    reshape,
    shape,
)
from minigraph.ops.slice_ops import concat, stack
from minigraph.registry import register_gradient

ELLIPSIS = "..."


def _fail(message: str) -> NoReturn:
    # unreachable: the forward op's shape function checked the same
    raise errors.InternalError(message)


# -- MatMul ----------------------------------------------------------------------------------


@register_gradient("MatMul")
def _matmul_grad(op: Operation, grad: Output) -> list[Any]:
    """MatMul ops whatever the operands' known ranks (TensorFlow's gen_math_ops.mat_mul),
    with conjugated complex operands."""
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    a, b = conj(op.inputs[0]), conj(op.inputs[1])
    if not ta and not tb:
        grad_a = mat_mul(grad, b, transpose_b=True, grad_a=True)
        grad_b = mat_mul(a, grad, transpose_a=True, grad_b=True)
    elif not ta and tb:
        grad_a = mat_mul(grad, b, grad_a=True)
        grad_b = mat_mul(grad, a, transpose_a=True, grad_b=True)
    elif ta and not tb:
        grad_a = mat_mul(b, grad, transpose_b=True, grad_a=True)
        grad_b = mat_mul(a, grad, grad_b=True)
    else:
        grad_a = mat_mul(b, grad, transpose_a=True, transpose_b=True, grad_a=True)
        grad_b = mat_mul(grad, a, transpose_a=True, transpose_b=True, grad_b=True)
    return [grad_a, grad_b]


# -- BatchMatMulV2 ---------------------------------------------------------------------------


@register_gradient("BatchMatMulV2")
def _batch_matmul_grad(op: Operation, grad: Output) -> list[Any]:
    """Adjoint products (so complex operands are conjugated), then each gradient summed
    over the batch dims its operand was broadcast along."""
    x, y = op.inputs
    adj_x, adj_y = op.get_attr("adj_x"), op.get_attr("adj_y")
    if not adj_x and not adj_y:
        grad_x = matmul(grad, y, adjoint_b=True, grad_a=True)
        grad_y = matmul(x, grad, adjoint_a=True, grad_b=True)
    elif not adj_x:
        grad_x = matmul(grad, y, grad_a=True)
        grad_y = matmul(grad, x, adjoint_a=True, grad_b=True)
    elif not adj_y:
        grad_x = matmul(y, grad, adjoint_b=True, grad_a=True)
        grad_y = matmul(x, grad, grad_b=True)
    else:
        grad_x = matmul(y, grad, adjoint_a=True, adjoint_b=True, grad_a=True)
        grad_y = matmul(grad, x, adjoint_a=True, adjoint_b=True, grad_b=True)
    sx, sy = x.shape, y.shape
    may_batch = any(s.rank is None or s.rank > 2 for s in (sx, sy))
    bx, by = sx[:-2], sy[:-2]
    if not may_batch or (bx.is_fully_defined() and by.is_fully_defined() and bx == by):
        return [grad_x, grad_y]
    xd, yd = static_dims(x), static_dims(y)
    if xd is not None and yd is not None:
        rx, ry = gradient_reduction_axes(xd[:-2], yd[:-2], _fail)
        return [_summed(grad_x, rx, xd), _summed(grad_y, ry, yd)]
    shape_x, shape_y = shape(x), shape(y)
    sum_x, sum_y = broadcast_gradient_args(shape_x[:-2], shape_y[:-2])
    return [
        reshape(reduce_sum(grad_x, sum_x), shape_x),
        reshape(reduce_sum(grad_y, sum_y), shape_y),
    ]


def _summed(grad: Output, axes: np.ndarray, dims: list[int]) -> Output:
    """``grad`` summed over constant ``axes`` (none: as it is) and reshaped to ``dims``."""
    summed = reduce_sum(grad, axes.astype(np.int32)) if axes.size else grad
    return reshape(summed, np.array(dims, np.int32))


# -- Einsum ----------------------------------------------------------------------------------


def _subs(labels: list[str]) -> str:
    return "".join(labels)


def _axis_of(subs: list[str], label: str) -> int:
    """The axis of ``label``'s first occurrence: counted from the start before an
    ellipsis, from the end (negative) after one (TensorFlow's _GetAxisFromLabel)."""
    k = subs.index(label)
    if ELLIPSIS in subs and k > subs.index(ELLIPSIS):
        return k - len(subs)
    return k


def _grad_reduced(
    grad: Output, out_subs: list[str], in_subs: list[str], x: Output, reduced: set[str]
) -> Output:
    """The gradient of ``x`` for the unary einsum ``in_subs -> out_subs`` that sums over
    the labels ``reduced`` (TensorFlow's _GetGradReduced): ``grad`` broadcast along them,
    and when the rest is not already ``x``'s layout (a trace, a transpose), an einsum
    from the reduced labels and ``out_subs`` back to ``in_subs``."""
    reduced_subs = [label for label in dict.fromkeys(in_subs) if label in reduced]
    axes = [_axis_of(in_subs, label) for label in reduced_subs]
    repeated = len(set(in_subs)) + len(set(out_subs)) < len(in_subs) + len(out_subs)
    rest = [label for label in in_subs if label not in reduced]
    xd = static_dims(x)
    if not repeated and rest == out_subs and ELLIPSIS not in in_subs:
        # a plain sum over some axes: reshape with 1 there, broadcast to x's shape
        keep = np.ones(len(in_subs), np.int32)
        keep[axes] = 0
        if xd is not None:
            kept: Any = np.where(keep == 1, np.array(xd, np.int32), 1).astype(np.int32)
            full: Any = np.array(xd, np.int32)
        else:
            full = shape(x)
            kept = add(multiply(full, keep), 1 - keep)
        return broadcast_to(reshape(grad, kept), full)
    gd = static_dims(grad)
    if xd is not None and gd is not None:
        dims: Any = np.array([xd[a] for a in axes] + gd, np.int32)
        ones: Any = np.array([1] * len(axes) + gd, np.int32)
    else:
        full = shape(x)
        grad_shape = shape(grad)
        dims = concat([stack([full[a] for a in axes]), grad_shape], 0)
        ones = concat([np.ones(len(axes), np.int32), grad_shape], 0)
    widened = broadcast_to(reshape(grad, ones), dims)
    return einsum(f"{_subs(reduced_subs + out_subs)}->{_subs(in_subs)}", widened)


def _grad_wrt(
    grad: Output,
    out_subs: list[str],
    x: Output,
    in_subs: list[str],
    others: list[tuple[Output, list[str]]],
) -> Output:
    """The gradient of operand ``x`` before any unbroadcasting (TensorFlow's _GetGradWrt):
    the einsum of the output's gradient with the other operands into ``x``'s labels,
    through :func:`_grad_reduced` for labels only ``x`` has."""
    seen = set(out_subs).union(*(set(s) for _, s in others))
    reduced = set(in_subs) - seen - {ELLIPSIS}
    left = [label for label in in_subs if label not in reduced]
    lhs = ",".join(_subs(s) for s in [out_subs, *(s for _, s in others)])
    g = einsum(f"{lhs}->{_subs(left)}", grad, *(t for t, _ in others))
    return _grad_reduced(g, left, in_subs, x, reduced) if reduced else g


def _sum_to(grad: Output, x: Output, subs: list[str], out_has_ellipsis: bool) -> Output:
    """``grad`` (x's labels at the output's sizes, the output's broadcast dims at the
    ellipsis) brought back to ``x``'s shape: summed over the broadcast dims ``x`` lacks or
    has as 1, and, where np.einsum broadcast a labelled dim, summed over x's dims of 1 that
    met larger ones and broadcast along x's dims that met a 1."""
    xd, gd = static_dims(x), static_dims(grad)
    start = subs.index(ELLIPSIS) if ELLIPSIS in subs else len(subs)
    if xd is not None and gd is not None:
        if xd == gd:
            return grad
        aligned = xd[:start] + [1] * (len(gd) - len(xd)) + xd[start:]
        axes, _ = gradient_reduction_axes(aligned, gd, _fail)
        if axes.size:
            grad = reduce_sum(grad, axes.astype(np.int32), keepdims=True)
        if any(g == 1 and a != 1 for g, a in zip(gd, aligned)):
            grad = broadcast_to(grad, np.array(aligned, np.int32))
        return reshape(grad, np.array(xd, np.int32))
    labelled = x.shape.dims is not None and all(d is not None and d != 1 for d in x.shape.dims)
    if not out_has_ellipsis and labelled:
        return grad
    shape_x = shape(x)
    if ELLIPSIS in subs:
        pad = fill(expand_dims(rank(grad) - rank(x), 0), np.int32(1))
        aligned_shape = concat([shape_x[:start], pad, shape_x[start:]], 0)
    else:
        aligned_shape = shape_x
    stretched, _ = broadcast_gradient_args(aligned_shape, shape(grad))
    summed = broadcast_to(reduce_sum(grad, stretched, keepdims=True), aligned_shape)
    return reshape(summed, shape_x)


@register_gradient("Einsum")
def _einsum_grad(op: Operation, grad: Output) -> list[Any]:
    terms, out = parse_equation(_fail, op.get_attr("equation"), op.num_inputs)
    inputs = list(op.inputs)
    if len(inputs) == 1:
        (x,), (subs,) = inputs, terms
        reduced = set(subs) - set(out) - {ELLIPSIS}
        if not reduced:
            return [einsum(f"{_subs(out)}->{_subs(subs)}", grad)]
        return [_grad_reduced(grad, out, subs, x, reduced)]
    if ELLIPSIS in out:  # "...ij,jk->...ik": the gradient of "jk" is "jk..." before summing
        terms = [t if ELLIPSIS in t else [*t, ELLIPSIS] for t in terms]
    if grad.dtype.is_complex:
        inputs = [conj(t) for t in inputs]
    grads = []
    for i, (x, subs) in enumerate(zip(inputs, terms)):
        others = [(t, s) for j, (t, s) in enumerate(zip(inputs, terms)) if j != i]
        g = _grad_wrt(grad, out, x, subs, others)
        grads.append(_sum_to(g, op.inputs[i], subs, ELLIPSIS in out))
    return grads
