"""Segment reductions: rows of ``data`` combined by segment id (how embeddings combine rows).

Ops (one factory call per family): SegmentSum, SegmentMean, SegmentMax, SegmentMin,
SegmentProd (sorted ids); UnsortedSegmentSum, UnsortedSegmentMax, UnsortedSegmentMin,
UnsortedSegmentProd; SparseSegmentSum, SparseSegmentMean, SparseSegmentSqrtN (and their
``WithNumSegments`` forms).

Float results match TensorFlow's CPU bit for bit where its order is a loop: sums and
products fold in row order (``ufunc.at`` over element offsets: the Unsorted* kernels and
1-D Segment* data; Segment* rows of several columns match within rounding, Eigen
vectorises them); SparseSegment* sums keep TensorFlow's blocks of 8 rows (float16 summed
in float32). Max and Min follow TensorFlow's scalar rule: a row replaces the value so far
unless it is smaller (larger), so ``[1, NaN] -> NaN``, ``[NaN, 1] -> 1`` and of 0.0 and
-0.0 the later wins; order-free ``ufunc.at`` passes settle that by row positions. On the
GPU sums fold with :func:`reduce_by_key` (deterministic, no float atomics; within
``n * eps`` of the CPU's), Max/Min with CuPy's order-free atomics or else by sorting too.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from minigraph import errors
from minigraph.cupy_limits import has_atomic_at
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import (
    FLOAT,
    NUMBER,
    REAL,
    first_bad_index,
    host_array,
    multi_index,
    shape_str,
)
from minigraph.ops.duplicates import positions, reduce_by_key
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import (
    TensorShape,
    merge,
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
    "unsorted_segment_prod", "sparse_segment_sum", "sparse_segment_mean", "sparse_segment_sqrt_n",
)  # fmt: skip

Fail = Callable[[str], NoReturn]

SEGMENT_ID_TYPES = "{int32, int64}"
_NUM_SEGMENTS_ATTR = f"Tnumsegments: {SEGMENT_ID_TYPES} = int32"
_Built = tuple[Callable[..., Any], type]  # a factory's (builder, class)

# Element offsets per ufunc.at call on the CPU (8 MB of int64).
_AT_CHUNK = 1 << 20
_INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class _Reduction:
    """How one family member combines rows."""

    name: str  # Sum, Mean, Max, Min, Prod, SqrtN
    ufunc: str  # add, multiply, maximum, minimum: the fold
    types: str  # the constraint on T
    empty: int = 0  # what a Segment* row with no ids gets (Prod: 1)

    def initial(self, dtype: np.dtype) -> Any:
        """The Unsorted* ops' initial value: 0, 1, or the lowest/highest finite value."""
        if self.ufunc in ("add", "multiply"):
            return 0 if self.ufunc == "add" else 1
        info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
        return info.min if self.ufunc == "maximum" else info.max


# -- Folding rows by segment ---------------------------------------------------------------


def _keeps_left(ufunc: str) -> Callable[[Any, Any], Any]:
    """Where TensorFlow's fold keeps the value so far ``a`` against the next row ``b``."""
    return (lambda a, b: b < a) if ufunc == "maximum" else (lambda a, b: b > a)


def _fold_by_key(xp: Any, keys: Any, rows: Any, ufunc: str) -> tuple[Any, Any, Any | None]:
    """(distinct keys, each key's rows folded in row order, NaN flags or None). Max/Min rows
    carry a flag "a NaN is here", which makes TensorFlow's rule associative: a right part
    with a NaN wins outright, else it replaces the left unless the rule keeps it."""
    if ufunc in ("add", "multiply"):
        targets, folded = reduce_by_key(xp, keys, rows, getattr(xp, ufunc))
        return targets, folded, None
    keep = _keeps_left(ufunc)

    def combine(a: Any, b: Any) -> Any:
        flag = b[:, 1]
        value = xp.where(keep(a[:, 0], b[:, 0]) & (flag == 0), a[:, 0], b[:, 0])
        return xp.stack([value, xp.maximum(a[:, 1], flag)], axis=1)

    nan = xp.isnan(rows) if rows.dtype.kind == "f" else xp.zeros(rows.shape, bool)
    packed = xp.stack([rows, nan.astype(rows.dtype)], axis=1)
    targets, folded = reduce_by_key(xp, keys, packed, combine)
    return targets, folded[:, 0], folded[:, 1]


def _fold(
    ctx: KernelContext, rows: Any, keys: Any, n_out: int, red: _Reduction, fill: Any, start: bool
) -> Any:
    """``[n_out, k]``: row j folded into output row ``keys[j]`` (in ``[0, n_out)``), in row
    order; rows no key names get ``fill``. ``start``: each fold starts from the
    reduction's initial value (the Unsorted* ops), else from its first row."""
    xp = ctx.xp
    k = rows.shape[1]
    out = ctx.allocate((n_out, k), rows.dtype, fill=fill)
    if keys.shape[0] == 0 or out.size == 0:
        return out
    if xp is np and red.ufunc in ("add", "multiply"):
        _at_rows(np, getattr(np, red.ufunc), out, keys, rows)
        return out
    init = rows.dtype.type(red.initial(rows.dtype))
    keep = _keeps_left(red.ufunc)
    at = (
        None if red.ufunc in ("add", "multiply") else _extremum_at(xp, rows, keys, n_out, red.ufunc)
    )
    if at is not None:
        folded, nan_last = at
        if start:  # the initial value goes first: it wins only over -inf/inf, never after NaN
            kept = keep(init, folded) if nan_last is None else keep(init, folded) & (nan_last == 0)
            return xp.where(kept, init, folded).astype(rows.dtype, copy=False)
        present = (xp.bincount(keys, minlength=n_out) > 0).reshape(-1, 1)
        return xp.where(present, folded, out).astype(rows.dtype, copy=False)
    targets, folded, nan = _fold_by_key(xp, keys, rows, red.ufunc)
    if start and nan is not None:
        folded = xp.where(keep(init, folded) & (nan == 0), init, folded)
    out[targets] = folded
    return out


def _at_rows(xp: Any, ufunc: Any, out: Any, keys: Any, rows: Any) -> None:
    """``ufunc.at(out, keys, rows)`` for ``[n, k]`` rows, in row order on NumPy. As 1-D
    ``ufunc.at`` over element offsets (3x faster than over rows), a few rows at a time so
    that the int64 offsets stay small."""
    k = rows.shape[1]
    step = max(1, _AT_CHUNK // max(k, 1))
    flat_out, columns = out.reshape(-1), xp.arange(k)
    for start in range(0, keys.shape[0], step):
        part = keys[start : start + step].astype(np.int64)
        offsets = (part[:, None] * k + columns).reshape(-1)
        ufunc.at(flat_out, offsets, rows[start : start + step].reshape(-1))


def _extremum_at(xp: Any, rows: Any, keys: Any, n_out: int, ufunc: str) -> Any:
    """TensorFlow's Max/Min fold by order-free ``ufunc.at`` passes, the order settled by row
    positions: (``[n_out, k]`` from a neutral start, last NaN positions or None); None
    where CuPy has no atomic for it. Only the rows after a segment's last NaN count (none:
    NaN), and a 0 takes the sign of the segment's last zero. CuPy gets 8- and 16-bit
    values widened exactly to 32 bits, as its atomics want."""
    n, k = rows.shape
    x = rows
    if xp is not np and x.dtype.itemsize < 4:
        x = x.astype({"f": np.float32, "i": np.int32, "u": np.uint32}[x.dtype.kind])
    pos = positions(xp, n + 1)[1:]  # 1-based: 0 is "none"
    if xp is not np and not (
        has_atomic_at(ufunc, x.dtype, max(n_out, n) * k)
        and has_atomic_at("maximum", pos.dtype, max(n_out, n) * k)
    ):
        return None
    floats = x.dtype.kind == "f"
    lo, hi = (-np.inf, np.inf) if floats else (np.iinfo(x.dtype).min, np.iinfo(x.dtype).max)
    neutral = lo if ufunc == "maximum" else hi
    out = xp.full((n_out, k), neutral, x.dtype)
    nan_last = None
    by_row = xp.broadcast_to(pos.reshape(-1, 1), (n, k))
    if floats and bool(xp.isnan(x).any()):
        nan_last = xp.zeros((n_out, k), pos.dtype)
        _at_rows(xp, xp.maximum, nan_last, keys, xp.where(xp.isnan(x), by_row, 0))
        x = xp.where(by_row > xp.take(nan_last, keys, axis=0), x, x.dtype.type(neutral))
    _at_rows(xp, getattr(xp, ufunc), out, keys, x)
    if floats and bool((out == 0).any()):  # of 0.0 and -0.0 the later wins
        last = xp.zeros((n_out, k), pos.dtype)
        _at_rows(xp, xp.maximum, last, keys, xp.where(x == 0, by_row, 0))
        at = (xp.maximum(last, 1).astype(np.int64) - 1) * k + xp.arange(k)
        zero = xp.where(xp.signbit(xp.take(x.reshape(-1), at)), -0.0, 0.0).astype(x.dtype)
        out = xp.where(out == 0, zero, out)
    if nan_last is not None:  # nothing after the last NaN: NaN
        seg_last = xp.zeros((n_out, 1), pos.dtype)
        _at_rows(xp, xp.maximum, seg_last, keys, pos.reshape(-1, 1))
        none_after = (nan_last > 0) & (nan_last == seg_last)
        out = xp.where(none_after, x.dtype.type(np.nan), out)
    return out, nan_last


def _divide_counts(xp: Any, sums: Any, counts: Any) -> Any:
    """Each row of ``sums`` over its count (at least 1): ints truncate toward zero."""
    c = xp.maximum(counts, 1).reshape(-1, 1)
    kind = sums.dtype.kind
    if kind in "fc":
        return sums / c.astype(sums.dtype)
    if kind == "u":
        return (sums.astype(np.uint64) // c.astype(np.uint64)).astype(sums.dtype)
    wide = sums.astype(np.int64)
    q = wide // c
    q = q + ((q * c != wide) & (wide < 0))  # floor -> toward zero
    return q.astype(sums.dtype)


# -- Checks ----------------------------------------------------------------------------------


def _sorted_rows(
    fail: Fail,
    ids: np.ndarray,
    num_segments: int | None = None,
    bad_index: tuple[int, str] | None = None,
    sized: Callable[[int], None] | None = None,
) -> int:
    """Output rows for sorted ``segment_ids`` (``last + 1``, or ``num_segments``). Fails as
    TensorFlow's loop, which checks each run of equal ids in turn: the next run's id is
    larger, the run's id is in range, then its ``indices`` (``bad_index``: the first bad
    one's flat position and message). ``sized(rows)`` checks the output's size first, as
    TensorFlow shapes and allocates the output before its loop."""
    n = int(ids.size)
    plus_one = int(ids[-1]) + 1 if n else 0
    if plus_one > _INT64_MAX:
        fail(f"Last segment id must be < kintmax, got {plus_one - 1} limit {_INT64_MAX}")
    rows = plus_one
    if num_segments is not None:
        if num_segments < plus_one:
            fail("segment ids must be < num_segments")
        rows = num_segments
    if rows < 0 or (n and rows == 0):
        fail("segment ids must be >= 0")
    if sized is not None:
        sized(rows)
    if n == 0:
        return rows
    starts = np.flatnonzero(np.concatenate([[True], ids[1:] != ids[:-1]]))
    events: list[tuple[int, int, str]] = []
    falls = np.flatnonzero(ids[1:] < ids[:-1])
    if falls.size:  # the run that ends where the ids fall
        run = int(np.searchsorted(starts, int(falls[0]) + 1)) - 1
        events.append((run, 0, "segment ids are not increasing"))
    run_ids = ids[starts]
    outside = np.flatnonzero((run_ids < 0) | (run_ids >= rows))
    if outside.size:
        run = int(outside[0])
        message = f"Segment id {int(run_ids[run])} out of range [0, {rows}), possibly "
        events.append((run, 1, message + "because 'segment_ids' input is not sorted."))
    if bad_index is not None:
        run = int(np.searchsorted(starts, bad_index[0], side="right")) - 1
        events.append((run, 2, bad_index[1]))
    if events:
        fail(min(events)[2])
    return rows


def _check_unsorted_ids(fail: Fail, xp: Any, ids: Any, n: int) -> None:
    """The first id (flat order) at or past ``n``; negative ids are dropped, not errors."""
    flat = ids.reshape(-1)
    if flat.size == 0 or int(flat.max()) < n:
        return
    pos = int(xp.argmax(flat >= n))
    fail(
        f"segment_ids{multi_index(tuple(ids.shape), pos)} = {int(flat[pos])} is out of range "
        f"[0, {n})"
    )


def _bad_index(indices: Any, limit: int) -> tuple[int, str] | None:
    bad = first_bad_index(indices.reshape(-1), limit)
    if bad is None:
        return None
    pos, value = bad
    return pos, f"Bad: indices[{pos}] == {value} out of range [0, {limit})"


def _rows_overflow(rows: int, rest: Any) -> str | None:
    """TensorFlow's words when ``[rows] + rest`` has more elements than int64 counts (its
    TensorShape multiplies the dims in order), else None (also when a dim is unknown)."""
    if rest is None or None in rest or 0 in rest:
        return None
    count = rows
    for d in rest:
        if count * d > _INT64_MAX:
            return f"Encountered overflow when multiplying {count} with {d}, result: -1"
        count *= d
    return None


def _num_segments_value(c: InferenceContext, spec: TensorSpec, index: int) -> int | None:
    with_rank(spec.shape, 0)
    if spec.value is None:
        return None
    n = int(spec.value)
    if n < 0:
        c.fail(f"Dimension size, given by scalar input {index}, must be non-negative but is {n}")
    return n


# -- SegmentSum, SegmentMean, SegmentMax, SegmentMin, SegmentProd -----------------------------


def _segment_shape(c: InferenceContext, data: TensorSpec, segment_ids: TensorSpec) -> TensorShape:
    d = with_rank_at_least(data.shape, 1)
    ids = with_rank(segment_ids.shape, 1)
    if d.rank is not None:
        merge_dim(d[0], ids[0])
    rows = None
    if segment_ids.value is not None:
        rows = _sorted_rows(c.fail, segment_ids.value.reshape(-1))
    return TensorShape([rows]).concatenate(d[1:])


def _segment_kernel(red: _Reduction) -> Callable[..., Any]:
    def kernel(ctx: KernelContext, data: Any, segment_ids: Any) -> Any:
        ids = host_array(ctx, segment_ids)
        if data.ndim < 1:
            ctx.fail("input must be at least rank 1")
        if ids.ndim != 1:
            ctx.fail("segment_ids should be a vector.")
        if ids.size != data.shape[0]:
            ctx.fail("segment_ids should be the same size as dimension 0 of input.")
        rows = _sorted_rows(ctx.fail, ids)
        extra = tuple(data.shape[1:])
        ctx.check_size((rows, *extra), data.dtype)
        flat = data.reshape(ids.size, math.prod(extra))
        keys = ids if ctx.xp is np else ctx.xp.asarray(ids)
        out = _fold(ctx, flat, keys, rows, red, red.empty, start=False)
        if red.name == "Mean":
            counts = ctx.xp.bincount(keys, minlength=rows)
            out = _divide_counts(ctx.xp, out, counts)
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


def _doc_args(red: _Reduction, builder: str, start: str = "", extra: str = "") -> dict:
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


def _segment_op(red: _Reduction) -> _Built:
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


_SUM = _Reduction("Sum", "add", NUMBER)
_MAX = _Reduction("Max", "maximum", REAL)
_MIN = _Reduction("Min", "minimum", REAL)
_PROD = _Reduction("Prod", "multiply", NUMBER, empty=1)
segment_sum, SegmentSum = _segment_op(_SUM)
segment_mean, SegmentMean = _segment_op(_Reduction("Mean", "add", NUMBER))
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
    n = _num_segments_value(c, num_segments, 2)
    if n is not None and segment_ids.value is not None:
        _check_unsorted_ids(c.fail, np, segment_ids.value, n)
    return TensorShape([n]).concatenate(rest)


def _unsorted_segment_kernel(red: _Reduction) -> Callable[..., Any]:
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
        _check_unsorted_ids(ctx.fail, xp, segment_ids, n)
        keys = segment_ids.reshape(-1)
        rows = data.reshape(keys.shape[0], math.prod(extra))
        if keys.shape[0] and int(keys.min()) < 0:  # TensorFlow drops negative ids
            keep = xp.flatnonzero(keys >= 0)
            keys, rows = xp.take(keys, keep), xp.take(rows, keep, axis=0)
        fill = red.initial(data.dtype)
        out = _fold(ctx, rows, keys, n, red, fill, start=True)
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


def _unsorted_segment_op(red: _Reduction, ids_types: str = SEGMENT_ID_TYPES) -> _Built:
    """Declare and register UnsortedSegment<name>."""
    builder = f"unsorted_segment_{red.name.lower()}"
    op_def = define_op(
        f"UnsortedSegment{red.name}",
        inputs=["data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"],
        outputs=["output: T"],
        attrs=[f"T: {red.types}", f"Tindices: {ids_types}", _NUM_SEGMENTS_ATTR],
        shape_fn=_unsorted_segment_shape,
        host_inputs=["num_segments"],
        doc=_UNSORTED_DOC.format(
            ids_types=ids_types.strip("{}").replace(", ", " or "),
            **_doc_args(red, builder, start=" from the initial value"),
        ),
    )
    register_kernel(op_def.name, "CPU", "GPU")(_unsorted_segment_kernel(red))
    return make_builder(op_def, builder), make_wrapper_class(op_def)


unsorted_segment_sum, UnsortedSegmentSum = _unsorted_segment_op(_SUM, "{int16, int32, int64}")
unsorted_segment_max, UnsortedSegmentMax = _unsorted_segment_op(_MAX)
unsorted_segment_min, UnsortedSegmentMin = _unsorted_segment_op(_MIN)
unsorted_segment_prod, UnsortedSegmentProd = _unsorted_segment_op(_PROD)


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
    n = None if num_segments is None else _num_segments_value(c, num_segments, 3)
    bad = None
    if indices.value is not None and d.rank is not None and d[0] is not None:
        bad = _bad_index(indices.value, d[0])
    rows = n

    def sized(rows: int) -> None:  # a huge output before a bad index, as TensorFlow
        overflow = _rows_overflow(rows, d.dims[1:] if d.dims is not None else None)
        if overflow is not None:
            raise errors.ResourceExhaustedError(overflow, c.node_name, c.op_type)

    if segment_ids.value is not None and (num_segments is None or n is not None):
        rows = _sorted_rows(c.fail, segment_ids.value.reshape(-1), n, bad, sized)
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
    _at_rows(np, np.add, sums, block, rows)
    out = np.zeros((n_out, k), rows.dtype)
    _at_rows(np, np.add, out, np.repeat(keys[starts], blocks), sums)
    return out


def _sparse_segment_kernel(red: _Reduction) -> Callable[..., Any]:
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
            overflow = _rows_overflow(rows, extra)
            if overflow is not None:
                ctx.fail(overflow, errors.ResourceExhaustedError)
            ctx.check_size((rows, *extra), data.dtype)

        rows = _sorted_rows(ctx.fail, ids, n, _bad_index(indices, limit), sized)
        k = math.prod(extra)
        # float16 sums in float32, as TensorFlow's CPU kernel.
        wide = np.float32 if data.dtype == np.float16 else data.dtype
        picked = xp.take(data.reshape(limit, k), indices, axis=0).astype(wide, copy=False)
        if xp is np:
            empty = not (picked.size and rows)
            out = np.zeros((rows, k), wide) if empty else _block_sums(picked, ids, rows)
        else:
            out = _fold(ctx, picked, xp.asarray(ids), rows, _SUM, 0, start=False)
        if red.name != "Sum":
            out = _sparse_scale(xp, out, xp.bincount(xp.asarray(ids), minlength=rows), red)
        return out.astype(data.dtype, copy=False).reshape((rows, *extra))

    return kernel


def _sparse_scale(xp: Any, sums: Any, counts: Any, red: _Reduction) -> Any:
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

Attrs: ``sparse_gradient`` (bool, default false): how TensorFlow differentiates it;
minigraph has no gradients yet and ignores it.

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


def _sparse_segment_ops(red: _Reduction) -> tuple[Callable[..., Any], type, type]:
    """Declare and register SparseSegment<name> and SparseSegment<name>WithNumSegments;
    returns (the tf.compat.v1 builder, class, WithNumSegments class)."""
    what, formula, tf_example, doctest = _SPARSE_EXAMPLES[red.name]
    builder = f"sparse_segment_{'sqrt_n' if red.name == 'SqrtN' else red.name.lower()}"
    kernel = _sparse_segment_kernel(red)
    doc = _SPARSE_DOC.format(
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
            + ([_NUM_SEGMENTS_ATTR] if with_ns else [])
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
    _Reduction("Sum", "add", REAL)
)
sparse_segment_mean, SparseSegmentMean, SparseSegmentMeanWithNumSegments = _sparse_segment_ops(
    _Reduction("Mean", "add", FLOAT)
)
sparse_segment_sqrt_n, SparseSegmentSqrtN, SparseSegmentSqrtNWithNumSegments = _sparse_segment_ops(
    _Reduction("SqrtN", "add", FLOAT)
)


__all__ = [
    "SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd",
    "UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd",
    "SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN",
    "SparseSegmentSumWithNumSegments", "SparseSegmentMeanWithNumSegments",
    "SparseSegmentSqrtNWithNumSegments",
    *BUILDERS,
]  # fmt: skip
