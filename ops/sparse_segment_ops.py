"""SparseSegmentSum, SparseSegmentMean, SparseSegmentSqrtN and their ``WithNumSegments``
forms: rows of ``data`` picked by ``indices``, then combined by segment id (one factory
call). Their folds and checks are ops/segment_reduce.py's, shared with ops/segment_ops.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from minigraph import errors
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import (
    FLOAT,
    REAL,
    host_array,
    shape_str,
)
from minigraph.ops.segment_reduce import (
    NUM_SEGMENTS_ATTR,
    SEGMENT_ID_TYPES,
    SUM,
    Reduction,
    at_rows,
    bad_index,
    fold,
    num_segments_value,
    rows_overflow,
    sorted_rows,
)
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import (
    TensorShape,
    merge,
    with_rank,
    with_rank_at_least,
)
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = ("sparse_segment_sum", "sparse_segment_mean", "sparse_segment_sqrt_n")


# -- SparseSegmentSum, SparseSegmentMean, SparseSegmentSqrtN (+ WithNumSegments) ---------------


def _sparse_segment_shape(
    c: InferenceContext,
    data: TensorSpec,
    indices: TensorSpec,
    segment_ids: TensorSpec,
    num_segments: TensorSpec | None = None,
) -> TensorShape:
    d = with_rank_at_least(data.shape, 1)
    merge(with_rank(indices.shape, 1), with_rank(segment_ids.shape, 1))
    n = None if num_segments is None else num_segments_value(c, num_segments, 3)
    bad = None
    if indices.value is not None and d.rank is not None and d[0] is not None:
        bad = bad_index(indices.value, d[0])
    rows = n

    def sized(rows: int) -> None:  # a huge output before a bad index, as TensorFlow
        overflow = rows_overflow(rows, d.dims[1:] if d.dims is not None else None)
        if overflow is not None:
            raise errors.ResourceExhaustedError(overflow, c.node_name, c.op_type)

    if segment_ids.value is not None and (num_segments is None or n is not None):
        rows = sorted_rows(c.fail, segment_ids.value.reshape(-1), n, bad, sized)
    elif bad is not None:
        c.fail(bad[1])
    return TensorShape([rows]).concatenate(d[1:])


def _block_sums(rows: np.ndarray, keys: np.ndarray, n_out: int) -> np.ndarray:
    """TensorFlow's CPU order for sparse segment sums: the first 8 rows (9 when 1 is left
    over, else the 2-7 left over), then each next block of 8 summed on its own and added:
    rows into blocks, then blocks into segments, each by ``ufunc.at`` in order."""
    m, k = rows.shape
    head = np.concatenate([[True], keys[1:] != keys[:-1]])
    starts = np.flatnonzero(head)
    run = np.cumsum(head) - 1
    lengths = np.diff(np.append(starts, m))
    left = lengths & 7
    first = np.where(left == 0, 8, np.where(left == 1, 9, left))
    blocks = 1 + np.maximum(0, -(-(lengths - first) // 8))
    place = np.arange(m) - starts[run]
    in_run = np.where(place < first[run], 0, 1 + (place - first[run]) // 8)
    block = (np.cumsum(blocks) - blocks)[run] + in_run
    sums = np.zeros((int(blocks.sum()), k), rows.dtype)
    at_rows(np, np.add, sums, block, rows)
    out = np.zeros((n_out, k), rows.dtype)
    at_rows(np, np.add, out, np.repeat(keys[starts], blocks), sums)
    return out


def _sparse_segment_kernel(red: Reduction) -> Callable[..., Any]:
    def kernel(
        ctx: KernelContext, data: Any, indices: Any, segment_ids: Any, num_segments: Any = None
    ) -> Any:
        xp = ctx.xp
        ids = host_array(ctx, segment_ids)
        if indices.ndim != 1:
            ctx.fail("indices should be a vector.")
        if ids.ndim != 1:
            ctx.fail("segment_ids should be a vector.")
        if indices.shape[0] != ids.size:
            ctx.fail("segment_ids and indices should have same size.")
        if data.ndim < 1:
            ctx.fail("Shape must be at least rank 1")
        n = None
        if num_segments is not None:
            ns = host_array(ctx, num_segments)
            if ns.ndim != 0:
                ctx.fail(f"num_segments should be a scalar, not shape {shape_str(ns.shape)}")
            n = int(ns)
        limit = int(data.shape[0])
        extra = tuple(data.shape[1:])

        def sized(rows: int) -> None:  # a huge output before a bad index, as TensorFlow
            overflow = rows_overflow(rows, extra)
            if overflow is not None:
                ctx.fail(overflow, errors.ResourceExhaustedError)
            ctx.check_size((rows, *extra), data.dtype)

        rows = sorted_rows(ctx.fail, ids, n, bad_index(indices, limit), sized)
        k = math.prod(extra)
        # float16 sums in float32, as TensorFlow's CPU kernel.
        wide = np.float32 if data.dtype == np.float16 else data.dtype
        picked = xp.take(data.reshape(limit, k), indices, axis=0).astype(wide, copy=False)
        if xp is np:
            empty = not (picked.size and rows)
            out = np.zeros((rows, k), wide) if empty else _block_sums(picked, ids, rows)
        else:
            out = fold(ctx, picked, xp.asarray(ids), rows, SUM, 0, start=False)
        if red.name != "Sum":
            out = _sparse_scale(xp, out, xp.bincount(xp.asarray(ids), minlength=rows), red)
        return out.astype(data.dtype, copy=False).reshape((rows, *extra))

    return kernel


def _sparse_scale(xp: Any, sums: Any, counts: Any, red: Reduction) -> Any:
    """TensorFlow's scaling: below 10 rows a product with ``1 / m``, else a division by
    ``m`` (``m`` the count for Mean, its square root for SqrtN), in the sums' dtype."""
    m = xp.maximum(counts, 1).astype(np.float64)
    if red.name == "SqrtN":
        m = xp.sqrt(m)
    m = m.astype(sums.dtype).reshape(-1, 1)
    small = (counts < 10).reshape(-1, 1)
    return xp.where(small, sums * (sums.dtype.type(1) / m), sums / m)


_SPARSE_DOC = """
Computes the {what} of segments of the rows ``data[indices]``: with ``segment_ids``
sorted,

    output[i, ...] = {formula} over the j with segment_ids[j] == i

``output`` has ``segment_ids[-1] + 1`` rows (0 when ``segment_ids`` is empty); a row that
no id names is 0. ``indices`` may repeat and come in any order; each must be in
``[0, data.shape[0])``.{note}

Inputs:
- ``data``: {types_word}, rank >= 1.
- ``indices``: a vector of int32 or int64 (``Tidx``): the rows of ``data`` to combine.
- ``segment_ids``: a vector of int32 or int64 (``Tsegmentids``) as long as ``indices``,
  sorted and non-negative. Host memory.

Attrs: ``sparse_gradient`` (bool, default false): which op the gradient is built with,
as in TensorFlow: SparseSegment{name}Grad (dense), or SparseSegment{name}GradV2 (the rows
``indices`` name, which minigraph sums into a dense gradient: it has no IndexedSlices).
The values are the same.

Shape inference: ``[segment_ids[-1] + 1] + data.shape[1:]``, the first dim unknown unless
``segment_ids`` is a constant; constant inputs are checked at build time.

Errors (InvalidArgumentError naming the node):
- ``indices should be a vector.`` / ``segment_ids should be a vector.`` /
  ``segment_ids and indices should have same size.`` / ``Shape must be at least rank 1``
- ``segment ids are not increasing``; ``segment ids must be >= 0``; ``Segment id 3 out of
  range [0, 2), possibly because 'segment_ids' input is not sorted.``;
  ``Bad: indices[1] == 7 out of range [0, 3)``: the first of them in TensorFlow's order.
- ResourceExhaustedError, before allocating, when the output is too large.

Example (TensorFlow's):

    c = [[1, 2, 3, 4], [-1, -2, -3, -4], [5, 6, 7, 8]]
    {builder}(c, [0, 1], [0, 0])     # {tf_example}

>>> import minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.{builder}([[1., 2, 3, 4], [-1, -2, -3, -4], [5, 6, 7, 8]], [0, 2], [0, 0])
>>> mg.Session(g).run(y)
{doctest}
"""

_SPARSE_EXAMPLES = {
    "Sum": ("sum", "sum(data[indices[j], ...])", "[[0, 0, 0, 0]]",
            "array([[ 6.,  8., 10., 12.]], dtype=float32)"),
    "Mean": ("mean", "sum(data[indices[j], ...]) / count", "[[0., 0., 0., 0.]]",
             "array([[3., 4., 5., 6.]], dtype=float32)"),
    "SqrtN": ("sum over the square root of the count",
              "sum(data[indices[j], ...]) / sqrt(count)", "[[0., 0., 0., 0.]]",
              "array([[4.2426405, 5.656854 , 7.071068 , 8.485281 ]], dtype=float32)"),
}  # fmt: skip

_WITH_NUM_SEGMENTS_DOC = """
SparseSegment{name} with a ``num_segments`` input (``Tnumsegments``: an int32 or int64
scalar, host memory): the output has ``num_segments`` rows, at least ``segment_ids[-1] +
1`` (else ``segment ids must be < num_segments``), known to shape inference when
``num_segments`` is a constant. ``mg.{builder}(..., num_segments=n)`` builds it. The rest
is as SparseSegment{name}:
{doc}"""

_SPARSE_NOTE = """

Below 10 rows a segment's sum is multiplied by ``1 / {m}``, from 10 rows divided by
``{m}``, as TensorFlow does."""


def _sparse_segment_ops(red: Reduction) -> tuple[Callable[..., Any], type, type]:
    """Declare and register SparseSegment<name> and SparseSegment<name>WithNumSegments;
    returns (the tf.compat.v1 builder, class, WithNumSegments class)."""
    what, formula, tf_example, doctest = _SPARSE_EXAMPLES[red.name]
    builder = f"sparse_segment_{'sqrt_n' if red.name == 'SqrtN' else red.name.lower()}"
    kernel = _sparse_segment_kernel(red)
    doc = _SPARSE_DOC.format(
        name=red.name,
        what=what,
        formula=formula,
        note=_SPARSE_NOTE.format(m=formula.split(" / ")[1]) if red.name != "Sum" else "",
        types_word="real numbers" if red.types == REAL else "float16, float32 or float64",
        builder=builder,
        tf_example=tf_example,
        doctest=doctest,
    )
    defs = []
    for with_ns in (False, True):
        op_def = define_op(
            f"SparseSegment{red.name}{'WithNumSegments' if with_ns else ''}",
            inputs=["data: T", "indices: Tidx", "segment_ids: Tsegmentids"]
            + (["num_segments: Tnumsegments"] if with_ns else []),
            outputs=["output: T"],
            attrs=[f"T: {red.types}", f"Tidx: {SEGMENT_ID_TYPES} = int32"]
            + ([NUM_SEGMENTS_ATTR] if with_ns else [])
            + [f"Tsegmentids: {SEGMENT_ID_TYPES} = int32", "sparse_gradient: bool = False"],
            shape_fn=_sparse_segment_shape,
            host_inputs=["segment_ids", "num_segments"] if with_ns else ["segment_ids"],
            doc=_WITH_NUM_SEGMENTS_DOC.format(name=red.name, builder=builder, doc=doc)
            if with_ns
            else doc,
        )
        register_kernel(op_def.name, "CPU", "GPU")(kernel)
        defs.append(op_def)
    plain = make_builder(defs[0], f"_{builder}")
    with_num = make_builder(defs[1], f"_{builder}_with_num_segments")

    def build(
        data: Any,
        indices: Any,
        segment_ids: Any,
        name: str | None = None,
        num_segments: Any = None,
        sparse_gradient: bool = False,
    ) -> Any:
        if num_segments is None:
            return plain(data, indices, segment_ids, sparse_gradient=sparse_gradient, name=name)
        return with_num(
            data, indices, segment_ids, num_segments, sparse_gradient=sparse_gradient, name=name
        )

    build.__name__ = build.__qualname__ = builder
    build.__doc__ = (
        f"{doc.strip()}\n\nWith ``num_segments``, builds SparseSegment{red.name}WithNumSegments:"
        " the output has ``num_segments`` rows."
    )
    return build, make_wrapper_class(defs[0]), make_wrapper_class(defs[1])


sparse_segment_sum, SparseSegmentSum, SparseSegmentSumWithNumSegments = _sparse_segment_ops(
    Reduction("Sum", "add", REAL)
)
sparse_segment_mean, SparseSegmentMean, SparseSegmentMeanWithNumSegments = _sparse_segment_ops(
    Reduction("Mean", "add", FLOAT)
)
sparse_segment_sqrt_n, SparseSegmentSqrtN, SparseSegmentSqrtNWithNumSegments = _sparse_segment_ops(
    Reduction("SqrtN", "add", FLOAT)
)


__all__ = [
    "SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN",
    "SparseSegmentSumWithNumSegments", "SparseSegmentMeanWithNumSegments",
    "SparseSegmentSqrtNWithNumSegments",
    *BUILDERS,
]  # fmt: skip
