"""Gradients of the reductions and scans (ops/reduction_ops.py), one block per op, with
TensorFlow's formulas (tensorflow/python/ops/math_grad.py: _SumGrad, _MeanGrad,
_ProdGrad, _MinOrMaxGrad, _CumsumGrad, _CumprodGrad).

A reduction's gradient is the output's gradient stretched back over the reduced axes.
When the input's shape and the axes are known while the graph is built, the stretch is a
Reshape and a Tile by constants, as TensorFlow's fast path; otherwise the kept-dims shape
is computed in the graph (TensorFlow's reduced_shape: a DynamicStitch of the input's
shape with ones at the axes), so inputs of unknown shape and axes fed at run time work.
ArgMax and ArgMin (whose gradients are None in TensorFlow) and the bool reductions Any and
All stop gradients.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph import dtypes
from minigraph.graph import Operation, Output
from minigraph.ops.array_ops import cast, constant, ones
from minigraph.ops.array_ops import range as range_op
from minigraph.ops.compare_ops import equal, logical_not
from minigraph.ops.complex_ops import conj
from minigraph.ops.data_flow_ops import dynamic_stitch
from minigraph.ops.gather_ops import gather, where
from minigraph.ops.grad_util import static_dims
from minigraph.ops.math_ops import div_no_nan, floormod, multiply, truediv
from minigraph.ops.reduction_ops import cumprod, cumsum, reduce_any, reduce_prod, reduce_sum
from minigraph.ops.shape_ops import (
    broadcast_to,
    expand_dims,
    rank,
    reshape,
    shape,
    size,
    transpose,
)
from minigraph.ops.slice_ops import concat, stack, tile
from minigraph.registry import not_differentiable, register_gradient

not_differentiable("ArgMax", "ArgMin", "Any", "All")


def _static_axes(op: Operation) -> list[int] | None:
    """The reduction axes, non-negative and in the given order, when they are constant
    and the input's rank is known (the shape function has checked them)."""
    value, r = op.inputs[1].spec.value, op.inputs[0].shape.rank
    if value is None or r is None:
        return None
    return [int(a) % r for a in value.reshape(-1).tolist()] if r else []


def _normalized(axes: Any, rank: Output) -> Output:
    """Axes (a scalar or vector of any index type) made non-negative, as int32."""
    a = cast(axes, dtypes.int32)
    return floormod(a + rank, rank)


def _kept_dims(op: Operation) -> Any:
    """The output's shape as if ``keep_dims`` were true: constants when known, else
    TensorFlow's reduced_shape."""
    x = op.inputs[0]
    dims, axes = static_dims(x), _static_axes(op)
    if dims is not None and axes is not None:
        return np.array([1 if i in axes else d for i, d in enumerate(dims)], np.int32)
    input_shape = shape(x)
    input_rank = size(input_shape)
    a = _normalized(op.inputs[1], input_rank)
    return dynamic_stitch(
        [range_op(0, input_rank), a], [input_shape, ones(shape(a), dtype=dtypes.int32)]
    )


def _stretched(op: Operation, grad: Output) -> Output:
    """``grad`` (shaped as the reduction's output) broadcast back to the input's shape."""
    x = op.inputs[0]
    dims, axes = static_dims(x), _static_axes(op)
    r = x.shape.rank
    if r is not None and axes is not None and sorted(axes) == np.arange(r).tolist():
        # Every axis reduced: a Reshape to ones and a Tile, by constants where known.
        grad = reshape(grad, np.ones(r, np.int32))
        return tile(grad, shape(x) if dims is None else np.array(dims, np.int32))
    if dims is not None and axes is not None:
        kept = _kept_dims(op)
        return tile(reshape(grad, kept), np.array(dims, np.int32) // np.maximum(kept, 1))
    if not op.get_attr("keep_dims"):
        grad = reshape(grad, _kept_dims(op))
    return broadcast_to(grad, shape(x))


@register_gradient("Sum")
def _sum_grad(op: Operation, grad: Output) -> list[Any]:
    return [_stretched(op, grad), None]


@register_gradient("Mean")
def _mean_grad(op: Operation, grad: Output) -> list[Any]:
    """The sum's gradient divided by how many elements each output averaged."""
    sum_grad = _stretched(op, grad)
    in_dims, out_dims = static_dims(op.inputs[0]), static_dims(op.outputs[0])
    axes = _static_axes(op)
    if in_dims is not None and out_dims is not None:
        count = int(np.prod(in_dims, dtype=np.int64)) // max(int(np.prod(out_dims)), 1)
        factor = constant(count, dtype=sum_grad.dtype)
    elif axes is not None:  # known axes: only the unknown dims among them are looked up
        dims = op.inputs[0].shape.dims or []
        known = int(np.prod([dims[a] for a in axes if dims[a] is not None], dtype=np.int64))
        unknown = [a for a in axes if dims[a] is None]
        if len(unknown) == 1:  # one dim: no product to take
            count = gather(shape(op.inputs[0]), np.int32(unknown[0]))
        else:
            count = reduce_prod(gather(shape(op.inputs[0]), np.array(unknown, np.int32)))
        factor = cast(count, sum_grad.dtype)
        if known != 1:
            factor = multiply(factor, constant(known, dtype=sum_grad.dtype))
    else:
        input_shape = shape(op.inputs[0])
        normalized = _normalized(op.inputs[1], size(input_shape))
        factor = cast(reduce_prod(gather(input_shape, normalized)), sum_grad.dtype)
    return [truediv(sum_grad, factor), None]


def _prod_layout(op: Operation) -> tuple[Any, ...]:
    """TensorFlow's layout for the product's gradient: the permutation putting the
    reduced axes first, its inverse, the reduced and kept element counts, and the permuted
    shape; constants when the shape and axes are known."""
    x = op.inputs[0]
    dims, axes = static_dims(x), _static_axes(op)
    if dims is not None and axes is not None:
        other = [i for i in np.arange(len(dims)).tolist() if i not in axes]
        perm = np.array(axes + other, np.int32)
        reduced_num = int(np.prod([dims[i] for i in axes], dtype=np.int64))
        other_num = int(np.prod([dims[i] for i in other], dtype=np.int64))
        shaped = np.array([dims[i] for i in perm], np.int32)
        return perm, np.argsort(perm).astype(np.int32), [reduced_num, other_num], shaped
    input_shape, r = shape(x), rank(x)
    reduced = _normalized(reshape(op.inputs[1], [-1]), r)
    idx = range_op(0, r)
    # The axes not reduced, in order (TensorFlow's ListDiff): those equal to no reduced one.
    hit = reduce_any(equal(expand_dims(idx, 1), expand_dims(reduced, 0)), axis=1)
    other = cast(reshape(where(logical_not(hit)), [-1]), dtypes.int32)
    perm = concat([reduced, other], 0)
    inverse = dynamic_stitch([perm], [idx])  # TensorFlow's InvertPermutation
    counts = stack(
        [reduce_prod(gather(input_shape, reduced)), reduce_prod(gather(input_shape, other))]
    )
    return perm, inverse, counts, shape(transpose(x, perm))


@register_gradient("Prod")
def _prod_grad(op: Operation, grad: Output) -> list[Any]:
    """The product of every other element of each reduced group, from an exclusive
    cumulative product each way (no division, so zeros in the input are fine)."""
    x = op.inputs[0]
    dims = static_dims(x)
    input_shape = shape(x) if dims is None else np.array(dims, np.int32)
    if not op.get_attr("keep_dims"):
        grad = reshape(grad, _kept_dims(op))
    grad = broadcast_to(grad, input_shape)
    perm, inverse, counts, permuted_shape = _prod_layout(op)
    reshaped = reshape(transpose(x, perm), counts)
    left = cumprod(reshaped, axis=0, exclusive=True)
    right = cumprod(reshaped, axis=0, exclusive=True, reverse=True)
    others = reshape(multiply(conj(left), conj(right)), permuted_shape)
    return [reshape(multiply(grad, transpose(others, inverse)), input_shape), None]


def _extreme_grad(op: Operation, grad: Output) -> list[Any]:
    """Max and Min: the gradient shared equally by the elements equal to the result."""
    x, y = op.inputs[0], op.outputs[0]
    if not op.get_attr("keep_dims"):
        kept = _kept_dims(op)
        y, grad = reshape(y, kept), reshape(grad, kept)
    else:
        kept = shape(y)
    indicators = cast(equal(y, x), grad.dtype)
    num_selected = reshape(reduce_sum(indicators, op.inputs[1]), kept)
    return [multiply(truediv(indicators, num_selected), grad), None]


@register_gradient("Max")
def _max_grad(op: Operation, grad: Output) -> list[Any]:
    return _extreme_grad(op, grad)


@register_gradient("Min")
def _min_grad(op: Operation, grad: Output) -> list[Any]:
    return _extreme_grad(op, grad)


@register_gradient("Cumsum")
def _cumsum_grad(op: Operation, grad: Output) -> list[Any]:
    """The running sum in the other direction."""
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    return [cumsum(grad, op.inputs[1], exclusive=exclusive, reverse=not reverse), None]


@register_gradient("Cumprod")
def _cumprod_grad(op: Operation, grad: Output) -> list[Any]:
    """sum over later outputs of grad * output / x, the division by x taken as 0 where x
    is 0 (TensorFlow's formula: wrong at zeros, as TensorFlow's)."""
    x, axis = op.inputs
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    prod = cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = cumsum(multiply(prod, grad), axis, exclusive=exclusive, reverse=not reverse)
    return [div_no_nan(out, x), None]
