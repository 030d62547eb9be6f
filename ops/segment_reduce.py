"""What the segment reductions share (ops/segment_ops.py, ops/sparse_segment_ops.py): how a
family member combines rows (Reduction), folding rows by segment id on both devices, and
TensorFlow's checks of segment ids and indices, in its order.

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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from minigraph.cupy_limits import has_atomic_at
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import (
    NUMBER,
    first_bad_index,
    multi_index,
)
from minigraph.ops.duplicates import positions, reduce_by_key
from minigraph.shapes import (
    with_rank,
)

Fail = Callable[[str], NoReturn]

SEGMENT_ID_TYPES = "{int32, int64}"
NUM_SEGMENTS_ATTR = f"Tnumsegments: {SEGMENT_ID_TYPES} = int32"
Built = tuple[Callable[..., Any], type]  # a factory's (builder, class)

# Element offsets per ufunc.at call on the CPU (8 MB of int64).
_AT_CHUNK = 1 << 20
_INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class Reduction:
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


# The sum that SparseSegment* ops fold picked rows with, and the Sum ops themselves.
SUM = Reduction("Sum", "add", NUMBER)

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


def fold(
    ctx: KernelContext, rows: Any, keys: Any, n_out: int, red: Reduction, fill: Any, start: bool
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
        at_rows(np, getattr(np, red.ufunc), out, keys, rows)
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


def at_rows(xp: Any, ufunc: Any, out: Any, keys: Any, rows: Any) -> None:
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
        at_rows(xp, xp.maximum, nan_last, keys, xp.where(xp.isnan(x), by_row, 0))
        x = xp.where(by_row > xp.take(nan_last, keys, axis=0), x, x.dtype.type(neutral))
    at_rows(xp, getattr(xp, ufunc), out, keys, x)
    if floats and bool((out == 0).any()):  # of 0.0 and -0.0 the later wins
        last = xp.zeros((n_out, k), pos.dtype)
        at_rows(xp, xp.maximum, last, keys, xp.where(x == 0, by_row, 0))
        at = (xp.maximum(last, 1).astype(np.int64) - 1) * k + xp.arange(k)
        zero = xp.where(xp.signbit(xp.take(x.reshape(-1), at)), -0.0, 0.0).astype(x.dtype)
        out = xp.where(out == 0, zero, out)
    if nan_last is not None:  # nothing after the last NaN: NaN
        seg_last = xp.zeros((n_out, 1), pos.dtype)
        at_rows(xp, xp.maximum, seg_last, keys, pos.reshape(-1, 1))
        none_after = (nan_last > 0) & (nan_last == seg_last)
        out = xp.where(none_after, x.dtype.type(np.nan), out)
    return out, nan_last


def divide_counts(xp: Any, sums: Any, counts: Any) -> Any:
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


def sorted_rows(
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


def check_unsorted_ids(fail: Fail, xp: Any, ids: Any, n: int) -> None:
    """The first id (flat order) at or past ``n``; negative ids are dropped, not errors."""
    flat = ids.reshape(-1)
    if flat.size == 0 or int(flat.max()) < n:
        return
    pos = int(xp.argmax(flat >= n))
    fail(
        f"segment_ids{multi_index(tuple(ids.shape), pos)} = {int(flat[pos])} is out of range "
        f"[0, {n})"
    )


def bad_index(indices: Any, limit: int) -> tuple[int, str] | None:
    bad = first_bad_index(indices.reshape(-1), limit)
    if bad is None:
        return None
    pos, value = bad
    return pos, f"Bad: indices[{pos}] == {value} out of range [0, {limit})"


def rows_overflow(rows: int, rest: Any) -> str | None:
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


def num_segments_value(c: InferenceContext, spec: TensorSpec, index: int) -> int | None:
    with_rank(spec.shape, 0)
    if spec.value is None:
        return None
    n = int(spec.value)
    if n < 0:
        c.fail(f"Dimension size, given by scalar input {index}, must be non-negative but is {n}")
    return n
