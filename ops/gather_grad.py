"""Gradients of the index ops: GatherV2, GatherNd, DynamicStitch and ParallelDynamicStitch,
DynamicPartition, ScatterNd, TensorScatterUpdate/Add/Sub/Min/Max, ScatterNdNonAliasingAdd
and TopKV2, one block per op, with TensorFlow's formulas
(tensorflow/python/ops/{array_grad, data_flow_grad, nn_grad}.py).

Where TensorFlow returns an IndexedSlices (GatherV2 along axis 0, GatherNd with ``[N, 1]``
indices) minigraph, which has none, returns the dense tensor TensorFlow would convert it
to: the slices summed into their rows (UnsortedSegmentSum, ScatterNd), so repeated indices
add up. DynamicStitch and TensorScatterUpdate give every duplicate index the gradient of
the row it names, also the ones the forward op overwrote, as TensorFlow does (see
docs/semantics.md). The scatter gradients pass the forward op's ``bad_indices_policy`` on
(TensorFlow passes it for Min/Max only): a row IGNORE skipped gets no gradient instead of
an error. OneHot, Where and InTopKV2 are not differentiable; Unique has no gradient (an
error on a path that needs one), as in TensorFlow.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from minigraph import dtypes
from minigraph.dtypes import DType
from minigraph.graph import Operation, Output
from minigraph.ops import nn_ops, scatter_nd_non_aliasing  # noqa: F401  (their ops' gradients)
from minigraph.ops.array_ops import cast, range, zeros_like
from minigraph.ops.compare_ops import equal
from minigraph.ops.data_flow_ops import parallel_dynamic_stitch
from minigraph.ops.gather_ops import gather, gather_nd
from minigraph.ops.grad_util import shape_of, static_dims
from minigraph.ops.math_ops import add, divide, floormod, multiply, negative
from minigraph.ops.partition_ops import dynamic_partition
from minigraph.ops.reduction_ops import reduce_prod
from minigraph.ops.scatter_ops import scatter_nd, tensor_scatter_nd_update
from minigraph.ops.segment_ops import unsorted_segment_sum
from minigraph.ops.shape_ops import expand_dims, rank, reshape, shape, size, slice, transpose
from minigraph.ops.slice_ops import concat
from minigraph.registry import not_differentiable, register_gradient

not_differentiable("OneHot", "Where", "InTopKV2")


def _known_int(x: Output) -> int | None:
    """A scalar's value when shape inference knows it (a constant, or folded)."""
    v = x.spec.value
    return None if v is None or v.ndim != 0 else int(v)


def _shape_as(x: Output, dtype: DType) -> Any:
    """``x``'s shape in ``dtype`` (the scatter ops want their indices' dtype): a constant
    when known, else a Shape node."""
    dims = static_dims(x)
    return np.array(dims, dtype.np) if dims is not None else shape(x, out_type=dtype)


def _policy(op: Operation) -> str:
    return op.get_attr("bad_indices_policy")


# -- GatherV2 -------------------------------------------------------------------------------


def _known(v: Any) -> int | None:
    """A scalar int known while building (a NumPy value, or a folded Output), else None."""
    if isinstance(v, Output):
        return _known_int(v)
    return int(v)


def _part(v: Any, lo: Any, hi: Any = None) -> Any:
    """``v[lo:hi]`` of a shape vector: a constant when all three are known, else a Slice."""
    if isinstance(v, np.ndarray) and isinstance(lo, int) and (hi is None or isinstance(hi, int)):
        return v[lo:hi]
    return slice(v, reshape(lo, [1]), [-1] if hi is None else reshape(hi - lo, [1]))


def _prod(v: Any) -> Any:
    return np.int32(np.prod(v)) if isinstance(v, np.ndarray) else reduce_prod(v)


def _vec(*parts: Any) -> Any:
    """A shape vector from scalars and vectors: a constant when every part is one."""
    if not any(isinstance(p, Output) for p in parts):
        return np.concatenate([np.asarray(p, np.int32).reshape(-1) for p in parts])
    return concat([reshape(p, [-1]) for p in parts], 0)


def _gather_axis(op: Operation) -> tuple[Any, Any]:
    """GatherV2's (axis, batch_dims), made non-negative: ints when known while building,
    else int32 scalars computed from the ranks."""
    params, indices, axis = op.inputs
    b: Any = op.get_attr("batch_dims")
    if b < 0:
        b = b + indices.shape.rank if indices.shape.rank is not None else b + rank(indices)
    a: Any = _known_int(axis)
    p_rank = params.shape.rank
    if a is None or (a < 0 and p_rank is None):
        a = floormod(cast(axis, dtypes.int32), rank(params))
    elif p_rank is not None:
        a %= p_rank
    return a, b


@register_gradient("GatherV2")
def _gather_v2_grad(op: Operation, grad: Output) -> list[Any]:
    """The gradient rows summed into the params rows they were gathered from. Along axis
    0 without batch dims that is TensorFlow's IndexedSlices, densified. Otherwise params
    is viewed as ``[B, M, N, I]`` (batch dims, the dims before the axis, the axis, the
    rest) and the gradient as ``[B, M, K, I]`` (K: the non-batch index dims); with M moved
    next to I, each batch's rows are summed into its own N rows by one UnsortedSegmentSum
    over ``index + batch * N`` (TensorFlow's _BatchGatherGrad)."""
    params, indices, _ = op.inputs
    a, b = _gather_axis(op)
    p_shape, i_shape = shape_of(params), shape_of(indices)
    if _known(a) == 0 and _known(b) == 0:
        n = size(indices)
        rows = reshape(grad, _vec(n, _part(p_shape, 1)))
        return [unsorted_segment_sum(rows, reshape(indices, _vec(n)), p_shape[0]), None, None]
    b_size, m_size = _prod(_part(p_shape, 0, b)), _prod(_part(p_shape, b, a))
    known = isinstance(p_shape, np.ndarray) and isinstance(a, int)
    n_size = p_shape[a] if known else reshape(_part(p_shape, a, a + 1), [])
    i_size, k_size = _prod(_part(p_shape, a + 1)), _prod(_part(i_shape, b))
    plain = _known(m_size) == 1  # no dims between the batch dims and the axis
    if plain:
        values = reshape(grad, _vec(b_size * k_size, i_size))
    else:
        values = reshape(grad, _vec(b_size, m_size, k_size, i_size))
        values = reshape(transpose(values, [0, 2, 1, 3]), _vec(b_size * k_size, m_size * i_size))
    ids = reshape(indices, _vec(b_size, k_size))
    if _known(b) != 0:  # each batch's own rows: index + batch * N
        batch = multiply(range(cast(b_size, dtypes.int64)), cast(n_size, dtypes.int64))
        ids = add(cast(ids, dtypes.int64), expand_dims(batch, 1))
    ids = reshape(ids, _vec(b_size * k_size))
    summed = unsorted_segment_sum(values, ids, b_size * n_size)
    if not plain:
        summed = reshape(summed, _vec(b_size, n_size, m_size, i_size))
        summed = transpose(summed, [0, 2, 1, 3])
    return [reshape(summed, p_shape), None, None]


# -- GatherNd -------------------------------------------------------------------------------


@register_gradient("GatherNd")
def _gather_nd_grad(op: Operation, grad: Output) -> list[Any]:
    """The gradient scattered back to the rows indexed, duplicates summed (TensorFlow's
    IndexedSlices for ``[N, 1]`` indices has the same value). A single index row (rank-1
    ``indices``, which ScatterNd refuses; TensorFlow's gradient fails there) is scattered
    as a batch of one, as is every ``indices`` of unknown rank."""
    params, indices = op.inputs
    if indices.shape.rank is None or indices.shape.rank < 2:
        indices, grad = expand_dims(indices, 0), expand_dims(grad, 0)
    grad_params = scatter_nd(
        indices, grad, _shape_as(params, indices.dtype), bad_indices_policy=_policy(op)
    )
    return [grad_params, None]


# -- DynamicStitch, ParallelDynamicStitch ------------------------------------------------------


@register_gradient("DynamicStitch")
@register_gradient("ParallelDynamicStitch")
def _dynamic_stitch_grad(op: Operation, grad: Output) -> list[Any]:
    """``data[m]`` gets the gradient rows ``indices[m]`` name: every duplicate index the
    row's gradient, the overwritten ones too (TensorFlow's _DynamicStitchGrads)."""
    n = op.num_inputs // 2
    return [None] * n + [gather(grad, op.inputs[m]) for m in builtins.range(n)]


# -- DynamicPartition ----------------------------------------------------------------------


@register_gradient("DynamicPartition")
def _dynamic_partition_grad(op: Operation, *grads: Output) -> list[Any]:
    """The partitions' gradients stitched back to where their rows came from: the
    positions ``range(size(partitions))`` partitioned as the data were."""
    data, partitions = op.inputs
    prefix = shape_of(partitions)
    original = reshape(range(_prod(prefix)), prefix)
    positions = dynamic_partition(original, partitions, op.get_attr("num_partitions"))
    stitched = parallel_dynamic_stitch(positions, list(grads))
    return [reshape(stitched, shape_of(data)), None]


# -- ScatterNd, TensorScatterUpdate/Add/Sub, ScatterNdNonAliasingAdd ---------------------------


@register_gradient("ScatterNd")
def _scatter_nd_grad(op: Operation, grad: Output) -> list[Any]:
    indices = op.inputs[0]
    return [None, gather_nd(grad, indices, bad_indices_policy=_policy(op)), None]


@register_gradient("TensorScatterUpdate")
def _tensor_scatter_update_grad(op: Operation, grad: Output) -> list[Any]:
    """The tensor gets the gradient except where it was overwritten; each update (each
    duplicate too) the gradient of the element it was written to."""
    indices, updates = op.inputs[1], op.inputs[2]
    policy = _policy(op)
    tensor_grad = tensor_scatter_nd_update(
        grad, indices, zeros_like(updates, dtype=grad.dtype), bad_indices_policy=policy
    )
    return [tensor_grad, None, gather_nd(grad, indices, bad_indices_policy=policy)]


@register_gradient("TensorScatterAdd")
@register_gradient("ScatterNdNonAliasingAdd")
def _tensor_scatter_add_grad(op: Operation, grad: Output) -> list[Any]:
    indices = op.inputs[1]
    return [grad, None, gather_nd(grad, indices, bad_indices_policy=_policy(op))]


@register_gradient("TensorScatterSub")
def _tensor_scatter_sub_grad(op: Operation, grad: Output) -> list[Any]:
    indices = op.inputs[1]
    return [grad, None, negative(gather_nd(grad, indices, bad_indices_policy=_policy(op)))]


# -- TensorScatterMin, TensorScatterMax -------------------------------------------------------


@register_gradient("TensorScatterMin")
@register_gradient("TensorScatterMax")
def _tensor_scatter_min_or_max_grad(op: Operation, grad: Output) -> list[Any]:
    """Each element's gradient shared equally between the tensor's value and the updates
    that equal the result there (TensorFlow's _TensorScatterMinOrMaxGrad)."""
    x, indices, y = op.inputs
    out = op.outputs[0]
    policy = _policy(op)
    x_indicators = cast(equal(x, out), grad.dtype)
    y_output = gather_nd(out, indices, bad_indices_policy=policy)
    y_indicators = cast(equal(y, y_output), grad.dtype)
    ys_indicators = scatter_nd(
        indices, y_indicators, _shape_as(x, indices.dtype), bad_indices_policy=policy
    )
    indicators = add(x_indicators, ys_indicators)  # every element has at least one
    x_grad = divide(multiply(grad, x_indicators), indicators)
    y_grad = multiply(
        gather_nd(divide(grad, indicators), indices, bad_indices_policy=policy), y_indicators
    )
    return [x_grad, None, y_grad]


# -- TopKV2 ----------------------------------------------------------------------------------


@register_gradient("TopKV2")
def _top_k_grad(op: Operation, grad: Output, _: Output | None = None) -> list[Any]:
    """The values' gradient scattered to the positions they were taken from, row by row
    (the indices of a row are distinct); ``k`` gets none."""
    x, indices = op.inputs[0], op.outputs[1]
    x_shape, k = shape_of(x), shape_of(indices)[-1]
    last = x_shape[-1]
    outer = _prod(x_shape[:-1])
    rows = cast(reshape(indices, _vec(outer, k)), dtypes.int64)
    starts = multiply(range(cast(outer, dtypes.int64)), cast(last, dtypes.int64))
    flat = reshape(add(rows, expand_dims(starts, 1)), [-1])
    total = cast(_vec(_prod(x_shape)), dtypes.int64)
    scattered = scatter_nd(expand_dims(flat, 1), reshape(grad, [-1]), total)
    return [reshape(scattered, x_shape), None]
