"""Segment reductions: rows of ``data`` combined by segment id (how embeddings combine rows).

Ops (one factory call per family): SegmentSum, SegmentMean, SegmentMax, SegmentMin,
SegmentProd (sorted ids); UnsortedSegmentSum, UnsortedSegmentMax, UnsortedSegmentMin,
UnsortedSegmentProd. The folds and checks they share with the SparseSegment* ops
(ops/sparse_segment_ops.py) are in ops/segment_reduce.py, which says how results match
TensorFlow's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import (
    NUMBER,
    REAL,
    host_array,
    shape_str,
)
from minigraph.ops.segment_reduce import (
    NUM_SEGMENTS_ATTR,
    SEGMENT_ID_TYPES,
    SUM,
    Built,
    Reduction,
    check_unsorted_ids,
    divide_counts,
    fold,
    num_segments_value,
    sorted_rows,
)
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import (
    TensorShape,
    merge_dim,
    merge_prefix,
    unknown_shape,
    with_rank,
    with_rank_at_least,
)
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = (
    "segment_sum", "segment_mean", "segment_max", "segment_min", "segment_prod",
    "unsorted_segment_sum", "unsorted_segment_max", "unsorted_segment_min",
    "unsorted_segment_prod",
)  # fmt: skip


# -- SegmentSum, SegmentMean, SegmentMax, SegmentMin, SegmentProd -----------------------------


def _segment_shape(c: InferenceContext, data: TensorSpec, segment_ids: TensorSpec) -> TensorShape:
    d = with_rank_at_least(data.shape, 1)
    ids = with_rank(segment_ids.shape, 1)
    if d.rank is not None:
        merge_dim(d[0], ids[0])
    rows = None
    if segment_ids.value is not None:
        rows = sorted_rows(c.fail, segment_ids.value.reshape(-1))
    return TensorShape([rows]).concatenate(d[1:])


def _segment_kernel(red: Reduction) -> Callable[..., Any]:
    def kernel(ctx: KernelContext, data: Any, segment_ids: Any) -> Any:
        ids = host_array(ctx, segment_ids)
        if data.ndim < 1:
            ctx.fail("input must be at least rank 1")
        if ids.ndim != 1:
            ctx.fail("segment_ids should be a vector.")
        if ids.size != data.shape[0]:
            ctx.fail("segment_ids should be the same size as dimension 0 of input.")
        rows = sorted_rows(ctx.fail, ids)
        extra = tuple(data.shape[1:])
        ctx.check_size((rows, *extra), data.dtype)
        flat = data.reshape(ids.size, math.prod(extra))
        keys = ids if ctx.xp is np else ctx.xp.asarray(ids)
        out = fold(ctx, flat, keys, rows, red, red.empty, start=False)
        if red.name == "Mean":
            counts = ctx.xp.bincount(keys, minlength=rows)
            out = divide_counts(ctx.xp, out, counts)
        return out.reshape((rows, *extra))

    return kernel


# Each reduction's word and TensorFlow's result for its doc example (the same rows).
_EXAMPLES = {
    "Sum": ("sum", [[5, 5, 5, 5], [5, 6, 7, 8]]),
    "Mean": ("mean (integer means truncate toward zero)", [[2, 2, 2, 2], [5, 6, 7, 8]]),
    "Max": ("maximum", [[4, 3, 3, 4], [5, 6, 7, 8]]),
    "Min": ("minimum", [[1, 2, 2, 1], [5, 6, 7, 8]]),
    "Prod": ("product", [[4, 6, 6, 4], [5, 6, 7, 8]]),
}

_NAN_NOTE = """

NaN: each segment folds in row order{start}: a row
replaces the value so far unless it is {cmp}, as TensorFlow's scalar loop: ``[1, NaN]``
gives NaN, ``[NaN, 1]`` gives 1; of 0.0 and -0.0 the later wins.{extra}"""

_SORTED_NAN = """ TensorFlow's sorted kernel vectorises rows of 8 or more columns and
there treats NaN and zero signs as the CPU's vector width decides; minigraph keeps one rule.
An empty segment gives 0 here, not the lowest (highest) value as in UnsortedSegment*."""


def _doc_args(red: Reduction, builder: str, start: str = "", extra: str = "") -> dict:
    what, result = _EXAMPLES[red.name]
    note = ""
    if red.ufunc in ("maximum", "minimum"):
        cmp = "smaller" if red.ufunc == "maximum" else "larger"
        note = _NAN_NOTE.format(start=start, cmp=cmp, extra=extra)
    return dict(
        what=what,
        note=note,
        types_word="real numbers" if red.types == REAL else "every number type",
        builder=builder,
        doctest=repr(np.array(result, np.int32)),
    )


_SEGMENT_DOC = """
Computes the {what} of each segment of rows of ``data``: with ``segment_ids`` sorted,
``output[i, ...]`` is the {what} of the ``data[j, ...]`` with ``segment_ids[j] == i``.

``output`` has ``segment_ids[-1] + 1`` rows (0 when ``segment_ids`` is empty); a row that
no id names is {empty}. ``segment_ids`` must be sorted (repeats allowed) and
non-negative: checked on every device, as TensorFlow's CPU does.{note}

Inputs:
- ``data``: any of ``T``'s dtypes ({types_word}), rank >= 1.
- ``segment_ids``: a vector of int32 or int64 (``Tindices``), as long as ``data``'s first
  dim. Host memory (the output's size depends on its last value).

Shape inference: ``[segment_ids[-1] + 1] + data.shape[1:]`` when ``segment_ids`` is a
constant (checked at build time), else ``[None] + data.shape[1:]``.

Errors (InvalidArgumentError naming the node, at build time when shapes or constant values
prove them, else at run time):
- ``input must be at least rank 1`` / ``segment_ids should be a vector.`` /
  ``segment_ids should be the same size as dimension 0 of input.``
- ``segment ids are not increasing``; ``segment ids must be >= 0`` (the last id is
  negative); ``Segment id -1 out of range [0, 2), possibly because 'segment_ids' input is
  not sorted.``: the first of them in TensorFlow's order.
- ResourceExhaustedError, before allocating, when the output is too large.

Example (TensorFlow's):

>>> import minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.{builder}([[1, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]], [0, 0, 1])
>>> y.shape
TensorShape([2, 4])
>>> mg.Session(g).run(y)
{doctest}
"""


def _segment_op(red: Reduction) -> Built:
    """Declare and register Segment<name>."""
    builder = f"segment_{red.name.lower()}"
    op_def = define_op(
        f"Segment{red.name}",
        inputs=["data: T", "segment_ids: Tindices"],
        outputs=["output: T"],
        attrs=[f"T: {red.types}", f"Tindices: {SEGMENT_ID_TYPES}"],
        shape_fn=_segment_shape,
        host_inputs=["segment_ids"],
        doc=_SEGMENT_DOC.format(empty=red.empty, **_doc_args(red, builder, extra=_SORTED_NAN)),
    )
    register_kernel(op_def.name, "CPU", "GPU")(_segment_kernel(red))
    return make_builder(op_def, builder), make_wrapper_class(op_def)


_MAX = Reduction("Max", "maximum", REAL)
_MIN = Reduction("Min", "minimum", REAL)
_PROD = Reduction("Prod", "multiply", NUMBER, empty=1)
segment_sum, SegmentSum = _segment_op(SUM)
segment_mean, SegmentMean = _segment_op(Reduction("Mean", "add", NUMBER))
segment_max, SegmentMax = _segment_op(_MAX)
segment_min, SegmentMin = _segment_op(_MIN)
segment_prod, SegmentProd = _segment_op(_PROD)


# -- UnsortedSegmentSum, UnsortedSegmentMax, UnsortedSegmentMin, UnsortedSegmentProd ----------


def _unsorted_segment_shape(
    c: InferenceContext, data: TensorSpec, segment_ids: TensorSpec, num_segments: TensorSpec
) -> TensorShape:
    with_rank(num_segments.shape, 0)
    if segment_ids.shape.rank is None:
        return unknown_shape()
    rest = merge_prefix(data.shape, segment_ids.shape)
    n = num_segments_value(c, num_segments, 2)
    if n is not None and segment_ids.value is not None:
        check_unsorted_ids(c.fail, np, segment_ids.value, n)
    return TensorShape([n]).concatenate(rest)


def _unsorted_segment_kernel(red: Reduction) -> Callable[..., Any]:
    def kernel(ctx: KernelContext, data: Any, segment_ids: Any, num_segments: Any) -> Any:
        xp = ctx.xp
        ns = host_array(ctx, num_segments)
        if ns.ndim != 0:
            ctx.fail(f"num_segments should be a scalar, not shape {shape_str(ns.shape)}")
        ids_shape = tuple(segment_ids.shape)
        if tuple(data.shape[: len(ids_shape)]) != ids_shape or data.ndim < len(ids_shape):
            ctx.fail(
                f"data.shape = {shape_str(data.shape)} does not start with segment_ids.shape "
                f"= {shape_str(ids_shape)}"
            )
        n = int(ns)
        if n < 0:
            ctx.fail(f"Input num_segments == {n} must not be negative.")
        extra = tuple(data.shape[len(ids_shape) :])
        ctx.check_size((n, *extra), data.dtype)
        check_unsorted_ids(ctx.fail, xp, segment_ids, n)
        keys = segment_ids.reshape(-1)
        rows = data.reshape(keys.shape[0], math.prod(extra))
        if keys.shape[0] and int(keys.min()) < 0:  # TensorFlow drops negative ids
            keep = xp.flatnonzero(keys >= 0)
            keys, rows = xp.take(keys, keep), xp.take(rows, keep, axis=0)
        fill = red.initial(data.dtype)
        out = fold(ctx, rows, keys, n, red, fill, start=True)
        return out.reshape((n, *extra))

    return kernel


_UNSORTED_DOC = """
Computes the {what} of the slices of ``data`` that share a segment id, in any order:
``output[i, ...]`` is the {what} of the ``data[j..., ...]`` with ``segment_ids[j...] == i``.

``segment_ids`` may have any rank: ``data.shape`` must start with ``segment_ids.shape``
and each id names the slice of ``data`` under it. ``output`` has ``num_segments`` rows; a
row that no id names gets the initial value: 0 (Sum), 1 (Prod), the lowest (Max) or
highest (Min) finite value of ``T`` (``-3.4028235e38`` for float32; a segment of only
``-inf`` gives it too), as TensorFlow. A negative id drops its slice, as TensorFlow
documents (on every device); an id at or past ``num_segments`` is an error (TensorFlow's
CPU kernel raises it; its GPU kernel would drop it).{note}

Inputs:
- ``data``: any of ``T``'s dtypes ({types_word}).
- ``segment_ids``: {ids_types}, ``data.shape[:segment_ids.ndim]``.
- ``num_segments``: an int32 or int64 scalar (``Tnumsegments``). Host memory.

Shape inference: ``[num_segments] + data.shape[segment_ids.ndim:]``, the first dim unknown
unless ``num_segments`` is a constant; unknown when ``segment_ids``'s rank is.

Errors (InvalidArgumentError naming the node, at build time when shapes or constant values
prove them, else at run time):
- ``num_segments should be a scalar, not shape [1]`` / ``Shape must be rank 0 but is rank 1``
- ``data.shape = [2] does not start with segment_ids.shape = [3]``
- ``Input num_segments == -1 must not be negative.`` (at build time: ``Dimension size, given
  by scalar input 2, must be non-negative but is -1``)
- ``segment_ids[1] = 5 is out of range [0, 3)``: the first such id in flat order.
- ResourceExhaustedError, before allocating, when ``num_segments`` rows are too many.

Example (TensorFlow's):

>>> import minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.{builder}([[1, 2, 3, 4], [5, 6, 7, 8], [4, 3, 2, 1]], [0, 1, 0], 2)
>>> y.shape
TensorShape([2, 4])
>>> mg.Session(g).run(y)
{doctest}
"""


def _unsorted_segment_op(red: Reduction, ids_types: str = SEGMENT_ID_TYPES) -> Built:
    """Declare and register UnsortedSegment<name>."""
    builder = f"unsorted_segment_{red.name.lower()}"
    op_def = define_op(
        f"UnsortedSegment{red.name}",
        inputs=["data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"],
        outputs=["output: T"],
        attrs=[f"T: {red.types}", f"Tindices: {ids_types}", NUM_SEGMENTS_ATTR],
        shape_fn=_unsorted_segment_shape,
        host_inputs=["num_segments"],
        doc=_UNSORTED_DOC.format(
            ids_types=ids_types.strip("{}").replace(", ", " or "),
            **_doc_args(red, builder, start=" from the initial value"),
        ),
    )
    register_kernel(op_def.name, "CPU", "GPU")(_unsorted_segment_kernel(red))
    return make_builder(op_def, builder), make_wrapper_class(op_def)


unsorted_segment_sum, UnsortedSegmentSum = _unsorted_segment_op(SUM, "{int16, int32, int64}")
unsorted_segment_max, UnsortedSegmentMax = _unsorted_segment_op(_MAX)
unsorted_segment_min, UnsortedSegmentMin = _unsorted_segment_op(_MIN)
unsorted_segment_prod, UnsortedSegmentProd = _unsorted_segment_op(_PROD)


__all__ = [
    "SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd",
    "UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd",
    *BUILDERS,
]  # fmt: skip
