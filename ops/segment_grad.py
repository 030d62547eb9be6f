"""Gradients of the segment reductions (ops/segment_ops.py, ops/sparse_segment_ops.py), one
block per op, with TensorFlow's formulas (tensorflow/python/ops/math_grad.py).

Max and Min share a segment's gradient equally between the rows that equal its result;
Prod divides the product by each row where a segment has no zero, gives a segment's one
zero the product of the others and every row of a segment with two zeros nothing; rows
with a negative id (Unsorted*) get zero. The SparseSegment* gradients are TensorFlow's
gradient ops (ops/segment_grad_ops.py): SparseSegment<name>Grad, or with
``sparse_gradient=True`` SparseSegment<name>GradV2, whose rows minigraph adds into a dense
gradient (the value of TensorFlow's IndexedSlices; minigraph has none).
"""

from __future__ import annotations

from typing import Any

from minigraph import dtypes
from minigraph.graph import Operation, Output
from minigraph.ops import sparse_segment_ops  # noqa: F401  (its ops' gradients)
from minigraph.ops.array_ops import cast, ones, ones_like, zeros_like
from minigraph.ops.compare_ops import equal, greater, greater_equal, logical_and, where_v2
from minigraph.ops.gather_ops import gather
from minigraph.ops.math_ops import divide, maximum, multiply
from minigraph.ops.segment_grad_ops import (
    sparse_segment_mean_grad,
    sparse_segment_mean_grad_v2,
    sparse_segment_sqrt_n_grad,
    sparse_segment_sqrt_n_grad_v2,
    sparse_segment_sum_grad,
    sparse_segment_sum_grad_v2,
)
from minigraph.ops.segment_ops import (
    segment_prod,
    segment_sum,
    unsorted_segment_prod,
    unsorted_segment_sum,
)
from minigraph.ops.shape_ops import expand_dims, rank, reshape, shape
from minigraph.ops.slice_ops import concat
from minigraph.registry import register_gradient

# -- SegmentSum, SegmentMean ---------------------------------------------------------------


@register_gradient("SegmentSum")
def _segment_sum_grad(op: Operation, grad: Output) -> list[Any]:
    return [gather(grad, op.inputs[1]), None]


@register_gradient("SegmentMean")
def _segment_mean_grad(op: Operation, grad: Output) -> list[Any]:
    """Each row gets its segment's gradient over the segment's row count (counted by a
    SegmentSum of ones shaped ``segment_ids.shape + [1] * (rank(data) - 1)``)."""
    data, ids = op.inputs
    ones_shape = concat([shape(ids), ones(expand_dims(rank(data) - 1, 0), dtypes.int32)], 0)
    counts = segment_sum(ones(ones_shape, grad.dtype), ids)
    return [gather(divide(grad, counts), ids), None]


# -- SegmentMax, SegmentMin ----------------------------------------------------------------


@register_gradient("SegmentMax")
@register_gradient("SegmentMin")
def _segment_min_or_max_grad(op: Operation, grad: Output) -> list[Any]:
    """The rows equal to their segment's result share its gradient equally."""
    data, ids = op.inputs
    is_selected = equal(data, gather(op.outputs[0], ids))
    num_selected = segment_sum(cast(is_selected, grad.dtype), ids)
    gathered = gather(divide(grad, num_selected), ids)
    return [where_v2(is_selected, gathered, zeros_like(data)), None]


# -- SegmentProd ---------------------------------------------------------------------------


@register_gradient("SegmentProd")
def _segment_prod_grad(op: Operation, grad: Output) -> list[Any]:
    """The product over each row where its segment has no zero; the product of the others
    for a segment's one zero; nothing for a segment with two zeros or more."""
    data, ids = op.inputs
    is_zero = equal(data, 0)
    num_zeros = segment_sum(cast(is_zero, dtypes.int32), ids)
    grad = where_v2(greater(num_zeros, 1), zeros_like(grad), grad)
    non_zero_data = where_v2(is_zero, ones_like(data), data)
    non_zero_prod = segment_prod(non_zero_data, ids)
    prod_divided_by_el = divide(gather(op.outputs[0], ids), non_zero_data)
    partial = where_v2(is_zero, gather(non_zero_prod, ids), prod_divided_by_el)
    return [multiply(gather(grad, ids), partial), None]


# -- UnsortedSegmentSum, Max, Min, Prod ----------------------------------------------------


def _gather_drop_negatives(
    params: Output, ids: Output, clipped: Output | None = None, is_positive: Output | None = None
) -> tuple[Output, Output, Output]:
    """``params`` gathered at ``ids``, zero where an id is negative (TensorFlow's
    _GatherDropNegatives); also returns the clipped ids and the mask, shaped to broadcast
    against the result, for reuse."""
    if clipped is None:
        clipped = maximum(ids, zeros_like(ids))
    gathered = gather(params, clipped)
    if is_positive is None:
        trailing = ones(expand_dims(rank(gathered) - rank(ids), 0), dtypes.int32)
        is_positive = reshape(greater_equal(ids, 0), concat([shape(ids), trailing], 0))
    return where_v2(is_positive, gathered, zeros_like(gathered)), clipped, is_positive


@register_gradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op: Operation, grad: Output) -> list[Any]:
    return [_gather_drop_negatives(grad, op.inputs[1])[0], None, None]


@register_gradient("UnsortedSegmentMax")
@register_gradient("UnsortedSegmentMin")
def _unsorted_segment_min_or_max_grad(op: Operation, grad: Output) -> list[Any]:
    """As SegmentMax's, rows with a negative id excluded."""
    data, ids, num_segments = op.inputs
    gathered_outputs, clipped, is_positive = _gather_drop_negatives(op.outputs[0], ids)
    is_selected = logical_and(equal(data, gathered_outputs), is_positive)
    num_selected = unsorted_segment_sum(cast(is_selected, grad.dtype), ids, num_segments)
    gathered, _, _ = _gather_drop_negatives(divide(grad, num_selected), ids, clipped, is_positive)
    return [where_v2(is_selected, gathered, zeros_like(gathered)), None, None]


@register_gradient("UnsortedSegmentProd")
def _unsorted_segment_prod_grad(op: Operation, grad: Output) -> list[Any]:
    """As SegmentProd's, rows with a negative id getting zero."""
    data, ids, num_segments = op.inputs
    is_zero = equal(data, 0)
    num_zeros = unsorted_segment_sum(cast(is_zero, dtypes.int32), ids, num_segments)
    grad = where_v2(greater(num_zeros, 1), zeros_like(grad), grad)
    non_zero_data = where_v2(is_zero, ones_like(data), data)
    non_zero_prod = unsorted_segment_prod(non_zero_data, ids, num_segments)
    clipped = maximum(ids, zeros_like(ids))
    prod_divided_by_el = divide(gather(op.outputs[0], clipped), data)  # may hold inf/NaN
    partial = where_v2(is_zero, gather(non_zero_prod, clipped), prod_divided_by_el)
    gathered_grad = _gather_drop_negatives(grad, ids, clipped)[0]
    return [multiply(gathered_grad, partial), None, None]


# -- SparseSegmentSum, Mean, SqrtN (and WithNumSegments) -----------------------------------

_SPARSE_GRADS = {
    "Sum": (sparse_segment_sum_grad, sparse_segment_sum_grad_v2),
    "Mean": (sparse_segment_mean_grad, sparse_segment_mean_grad_v2),
    "SqrtN": (sparse_segment_sqrt_n_grad, sparse_segment_sqrt_n_grad_v2),
}


def _sparse_segment_grad(op: Operation, grad: Output) -> list[Any]:
    """SparseSegment<name>Grad into ``data``'s rows; with ``sparse_gradient``, the rows of
    SparseSegment<name>GradV2 at its sorted unique indices, summed into a dense gradient
    as TensorFlow densifies that IndexedSlices."""
    data, indices, segment_ids = op.inputs[:3]
    name = op.type[len("SparseSegment") :].removesuffix("WithNumSegments")
    dense, sparse = _SPARSE_GRADS[name]
    dim0 = shape(data)[0]
    if op.get_attr("sparse_gradient"):
        values, unique = sparse(grad, indices, segment_ids, dim0)
        data_grad = unsorted_segment_sum(values, unique, dim0)
    else:
        data_grad = dense(grad, indices, segment_ids, dim0)
    return [data_grad] + [None] * (op.num_inputs - 1)


for _name in _SPARSE_GRADS:
    register_gradient(f"SparseSegment{_name}")(_sparse_segment_grad)
    register_gradient(f"SparseSegment{_name}WithNumSegments")(_sparse_segment_grad)
