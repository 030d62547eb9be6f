"""Scatter and gather by index rows: ScatterNd, TensorScatter{Update,Add,Sub,Min,Max}, GatherNd.

The six scatter ops share one shape helper (TensorFlow's ScatterNdShapeHelper),
one chain of kernel checks and one kernel core, parameterised by the rule that
combines an update with the value already there; ``_tensor_scatter`` declares
and registers one TensorScatter* op from its rule. Every kernel turns index
rows into flat row offsets (one dot against the strides) and works on a
``[rows, slice]`` view, so no Python loop runs over rows or elements.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from minigraph import config
from minigraph.cupy_limits import has_atomic_at
from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec, shape_from_value
from minigraph.kernel import KernelContext
from minigraph.ops.common import (
    ALL,
    BAD_INDICES_POLICY,
    INDEX_TYPES,
    NUMBER,
    REAL,
    host_array,
    put_rows,
    shape_str,
)
from minigraph.ops.duplicates import occurrences, positions, reduce_by_key, winners
from minigraph.ops.indexing import index_fail, row_offsets, rows_view
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import (
    ShapeError,
    TensorShape,
    merge,
    with_rank,
    with_rank_at_least,
)
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = (
    "scatter_nd",
    "tensor_scatter_nd_update",
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_sub",
    "tensor_scatter_nd_min",
    "tensor_scatter_nd_max",
)


# Combine = fn(ctx, out_rows, flat, update_rows): applies the update rows in place.
Combine = Callable[[Any, Any, Any, Any], None]


# -- Combining rules ------------------------------------------------------------------


def _select(ctx: KernelContext, mask: Any, flat: Any, upd: Any) -> tuple[Any, Any]:
    """The offsets and update rows where ``mask`` holds (``take`` beats boolean indexing);
    on the host the rows go into a pooled buffer (no larger than the updates), not a new
    array that page-faults."""
    xp = ctx.xp
    where = xp.flatnonzero(mask)
    if xp is not np:
        return xp.take(flat, where), xp.take(upd, where, axis=0)
    rows = ctx.empty((where.shape[0], *upd.shape[1:]), upd.dtype)
    # "clip" (the positions are in range): with an ``out``, "raise" gathers into a copy.
    return np.take(flat, where), np.take(upd, where, axis=0, out=rows, mode="clip")


def _assign(ctx: KernelContext, out: Any, flat: Any, upd: Any) -> None:
    """TensorScatterUpdate: the last update in index order wins."""
    xp = ctx.xp
    if xp is not np:
        # Every row naming an offset writes that offset's last row, so racing writes agree:
        # no compaction, and no device sync.
        out[flat] = xp.take(upd, winners(xp, flat, out.shape[0], last=True), axis=0)
        return
    slots = _position_slots(out, flat.shape[0])
    if slots is None:
        last = occurrences(xp, flat, out.shape[0], last=True, empty=ctx.empty)
        if last is not None:
            flat, upd = _select(ctx, last, flat, upd)
        put_rows(out, flat, upd)  # the offsets are distinct now: the writes are well defined
        return
    # The output rows that the updates overwrite serve as the table of winners (no table
    # of every row to allocate): each named row first takes the position of the last
    # update naming it, then every update naming it writes that one's row.
    n = flat.shape[0]
    pos = positions(np, n)
    slots[flat] = pos  # NumPy writes in order, leaving the last position in every named row
    named = np.empty_like(pos)
    late: list[bool] = []
    work = 64 * n  # a cache line an update: the reads and writes land at random

    def read(piece: slice) -> None:  # every read before any write: the table is the output
        np.take(slots, flat[piece], out=named[piece], mode="clip")  # in range
        if (named[piece] < pos[piece]).any():
            late.append(True)

    def write(piece: slice) -> None:  # a row's writers agree: order does not matter
        out[flat[piece]] = np.take(upd, named[piece], axis=0)

    ctx.parallel_slices(read, n, work)
    if late:  # not in order after all: the largest position wins
        np.maximum.at(slots, flat, pos)
        named = slots[flat]
    ctx.parallel_slices(write, n, work)


def _position_slots(out: np.ndarray, n: int) -> np.ndarray | None:
    """``out`` (C-contiguous ``[rows]`` or ``[rows, slice]``) as uint32 words, one per row, to
    hold positions below ``n``, when its rows are 4 or 8 bytes; else None.

    A table of every row's winner takes 4 bytes a row: as much memory as the output
    itself for 4-byte rows, which then costs more than the update. For 1M float32
    elements into [4M, 16] (min of 7, 2026-12-03): 60 ms against 77 with a table
    (NumPy's fancy assignment, whose winner is undefined: 61); for 1M rows of 64 bytes
    the table (16 MB, 1/16 of the output) stays faster: 115 ms against 133.
    """
    row_bytes = out.itemsize * (out.shape[1] if out.ndim == 2 else 1)
    if row_bytes not in (4, 8) or n >= 2**32 or not out.flags.c_contiguous:
        return None
    return out.view(np.uint8).reshape(out.shape[0], row_bytes)[:, :4].view(np.uint32)[:, 0]


def _in_rounds(
    ctx: KernelContext,
    out: np.ndarray,
    flat: np.ndarray,
    upd: np.ndarray,
    apply: Callable[[np.ndarray, np.ndarray, np.ndarray], None],
    rest: Callable[[np.ndarray, np.ndarray, np.ndarray], None],
) -> None:
    """Applies each offset's updates in index order on the host, a round at a time: round
    r applies every offset's r-th update in one vectorised ``apply(out, offsets, rows)``
    (its offsets never repeat), so each offset sees exactly the sequence a loop over the
    updates would. Random offsets leave few rows after a round or two (1M rows into 4M:
    120K after the first); where a round would take under half of the rows left (an offset
    with many updates), those rows go to ``rest`` instead, in index order. A round's rows
    are split over both cores: no two write one row."""

    def apply_on_cores(rows: np.ndarray, head: np.ndarray) -> None:
        ctx.parallel_slices(lambda s: apply(out, rows[s], head[s]), rows.shape[0], head.nbytes)

    while True:
        first = occurrences(np, flat, out.shape[0], last=False, empty=ctx.empty)
        if first is None:
            apply_on_cores(flat, upd)
            return
        heads = _select(ctx, first, flat, upd)
        if 2 * heads[0].shape[0] < flat.shape[0]:
            rest(out, flat, upd)
            return
        apply_on_cores(*heads)
        flat, upd = _select(ctx, ~first, flat, upd)


def _accumulate(ufunc_name: str) -> Combine:
    """ScatterNd, TensorScatterAdd/Sub: ``out = out op upd`` row after row, in index order,
    so float sums round as TensorFlow's CPU loop does; integers wrap."""

    def combine(ctx: KernelContext, out: Any, flat: Any, upd: Any) -> None:
        if ctx.xp is not np:
            _accumulate_on_device(ctx.xp, ufunc_name, out, flat, upd)
            return
        ufunc = getattr(np, ufunc_name)
        if out.ndim == 1:
            ufunc.at(out, flat, upd)
            return

        # ufunc.at is slow for slices: rounds of vectorised read-modify-writes instead, so
        # per offset it is still ((out op u1) op u2) op ... 1M rows of 64 bytes into 4M
        # rows: 115-143 ms against 157-195 with ufunc.at for every repeat (see _in_rounds).
        def apply(out: np.ndarray, rows: np.ndarray, head: np.ndarray) -> None:
            cur = np.take(out, rows, axis=0)
            put_rows(out, rows, ufunc(cur, head, out=cur))

        _in_rounds(ctx, out, flat, upd, apply, lambda out, f, u: ufunc.at(out, f, u))

    return combine


def _accumulate_on_device(xp: Any, ufunc_name: str, out: Any, flat: Any, upd: Any) -> None:
    """The GPU's sums: CuPy's ``add.at``, one atomic add per element, where CUDA has one
    for the dtype. Integer atomics give the same result in any order; float ones round
    differently from run to run, so after ``enable_op_determinism`` (and for dtypes
    without atomics) each offset's updates are summed in a fixed order instead."""
    order_free = out.dtype.kind != "f" or not config.op_determinism_enabled()
    if order_free and has_atomic_at("add", out.dtype, max(out.size, upd.size)):
        xp.add.at(out, flat, upd if ufunc_name == "add" else xp.negative(upd))
        return
    targets, sums = reduce_by_key(xp, flat, upd, xp.add)  # bool: add is OR
    out[targets] = getattr(xp, ufunc_name)(xp.take(out, targets, axis=0), sums)


def _extremum(ufunc_name: str, nan_fill: float) -> Combine:
    """TensorScatterMin/Max: an update replaces only if ``upd < out`` (``>``), in index order.

    Per element that leaves the first of (out, u1, u2, ...) that equals the extreme of
    the non-NaN values, unless out is NaN: a NaN update never wins, a NaN already
    there stays, and of 0.0 and -0.0 the earlier stays. The rows are folded per offset
    by ``reduce_by_key`` with that same rule, which is associative once NaN updates are
    replaced by ``nan_fill`` (an infinity that never replaces anything); on the CPU the
    updates go in rounds (:func:`_in_rounds`) and only what the rounds leave is folded.
    No ``ufunc.at``: NumPy's minimum breaks ties between 0.0 and -0.0
    differently for float16 and float32, and CuPy's atomics follow neither rule.
    """
    less = ufunc_name == "minimum"

    def keep(xp: Any, cur: Any, upd: Any) -> Any:
        return xp.where(upd < cur if less else upd > cur, upd, cur)

    def apply(xp: Any, out: Any, targets: Any, upd: Any) -> None:  # targets never repeat
        kept = xp.take(out, targets, axis=0)
        # In place: a where() result would be one more fresh array the size of the updates.
        xp.copyto(kept, upd, where=upd < kept if less else upd > kept)
        if xp is np:
            put_rows(out, targets, kept)
        else:
            out[targets] = kept

    def fold(xp: Any, out: Any, flat: Any, upd: Any) -> None:
        if upd.dtype.kind == "f":
            upd = xp.where(xp.isnan(upd), upd.dtype.type(nan_fill), upd)
        apply(xp, out, *reduce_by_key(xp, flat, upd, lambda a, b: keep(xp, a, b)))

    def combine(ctx: KernelContext, out: Any, flat: Any, upd: Any) -> None:
        if ctx.xp is not np:  # one fold of all rows: two device syncs, and no compaction
            fold(ctx.xp, out, flat, upd)
            return
        # Rounds, each a vectorised step: 1M rows of 64 bytes into 4M rows, 110-150 ms
        # against 255-277 with the repeats folded by a sort (interleaved, 2026-12-03).
        _in_rounds(ctx, out, flat, upd, lambda *a: apply(np, *a), lambda *a: fold(np, *a))

    return combine


# -- Scatter checks, in TensorFlow's order ----------------------------------------------


def _valid_empty(n_out: int, n_indices: int, n_updates: int) -> bool:
    """ValidEmptyOutputShape: no updates at all, or output, indices and updates all non-empty."""
    if n_indices == 0 and n_updates == 0:
        return True
    return n_out != 0 and n_indices != 0 and n_updates != 0


def _rank_checks(fail: Callable[[str], NoReturn], ind: tuple, upd: tuple) -> None:
    if len(ind) < 1:
        fail(f"Indices shape must have rank at least one. Found:{shape_str(ind)}")
    if len(upd) < 1:
        fail(f"Updates shape must have rank at least one. Found:{shape_str(upd)}")


def _scatter_nd_checks(
    fail: Callable[[str], NoReturn], out: tuple, ind: tuple, upd: tuple, shape_len: int
) -> None:
    """ScatterNd's own kernel checks (``shape_len``: elements of the ``shape`` input)."""
    _rank_checks(fail, ind, upd)
    for d in out:
        if d < 0:
            fail(f"Dimension {d} must be >= 0")
    # TensorFlow counts the elements of the shape vector here, not of the output.
    if not _valid_empty(shape_len, math.prod(ind), math.prod(upd)):
        fail("Indices and updates specified for empty output shape")
    outer, ix = len(ind) - 1, ind[-1]
    if tuple(upd[:outer]) != tuple(ind[:outer]):
        fail(
            f"Dimensions [0,{outer}) of indices[shape={shape_str(ind)}] must match dimensions "
            f"[0,{outer}) of updates[shape={shape_str(upd)}]"
        )
    if len(upd) - outer != len(out) - ix or tuple(upd[outer:]) != tuple(out[ix:]):
        fail(
            f"Dimensions [{ix},{len(out)}) of input[shape={shape_str(out)}] must match dimensions "
            f"[{outer},{len(upd)}) of updates[shape={shape_str(upd)}]"
        )


def _tensor_scatter_checks(
    fail: Callable[[str], NoReturn], out: tuple, ind: tuple, upd: tuple
) -> None:
    """TensorScatter*'s own kernel checks."""
    _rank_checks(fail, ind, upd)
    if not _valid_empty(math.prod(out), math.prod(ind), math.prod(upd)):
        fail("Indices and updates specified for empty output shape")
    outer, ix = len(ind) - 1, ind[-1]
    if tuple(upd[:outer]) != tuple(ind[:outer]):
        fail(
            "Outer dimensions of indices and update must match. Indices shape: "
            f"{shape_str(ind)}, updates shape:{shape_str(upd)}"
        )
    if len(upd) - outer != len(out) - ix:
        fail(
            "Inner dimensions of output shape must match inner dimensions of updates shape. "
            f"Output: {shape_str(out)} updates: {shape_str(upd)}"
        )
    if tuple(upd[outer:]) != tuple(out[ix:]):
        fail(
            f"The inner {len(out) - ix} dimensions of output.shape={shape_str(out)} must match the "
            f"inner {len(upd) - outer} dimensions of updates.shape={shape_str(upd)}"
        )


def _do_scatter_nd_checks(
    fail: Callable[[str], NoReturn], out: tuple, ind: tuple, upd: tuple
) -> None:
    """DoScatterNd's checks, which every scatter op ends with (PrepareAndValidateInputs)."""
    if len(out) < 1:
        fail(f"Output must be at least 1-D, got shape: {shape_str(out)}")
    n_out = math.prod(out)
    if not _valid_empty(n_out, math.prod(ind), math.prod(upd)):
        fail(f"Indices and updates specified for empty output.  indices shape: {shape_str(ind)}")
    if upd[0] != ind[0]:
        fail(
            f"Dimensions [0,1) of indices[shape={shape_str(ind)}] = {ind[0]} must match dimensions "
            f"[0,1) of updates[shape={shape_str(upd)}] = {upd[0]}"
        )
    # ValidateScatterNdUpdateShape: rank-1 indices count as one row of depth 1 here,
    # which the checks before contradict, so they only pass with nothing to scatter.
    slice_dim = ind[-1] if len(ind) > 1 else 1
    batch_dim = len(ind) - 1 if len(ind) > 1 else 1
    prefix = (
        f"Dimensions [0,{batch_dim}) of indices[shape={shape_str(ind)}] must match dimensions "
        f"[0,{batch_dim}) of updates[shape={shape_str(upd)}]"
    )
    suffix = (
        f"Dimensions [{slice_dim},{len(out)}) of input[shape={shape_str(out)}] must match "
        f"dimensions [{slice_dim},{len(upd)}) of updates[shape={shape_str(upd)}]"
    )
    if len(upd) < batch_dim:
        fail(prefix)
    if len(upd) != batch_dim + len(out) - slice_dim:
        fail(suffix)
    if tuple(upd[:batch_dim]) != tuple(ind[:batch_dim]):
        fail(prefix)
    if tuple(upd[batch_dim:]) != tuple(out[slice_dim:]):
        fail(suffix)
    if n_out and slice_dim == 0:
        fail(
            f"Only indices.shape[-1] values between 1 and {len(out)} are currently supported.  "
            f"Requested rank: {slice_dim}"
        )


def _scatter_index_fail(
    fail: Callable[[str], NoReturn], ind: tuple, out: tuple
) -> Callable[[int, list[int]], NoReturn]:
    return index_fail(fail, ind, f"shape {shape_str(out)}")


# -- The shared scatter kernel core ------------------------------------------------------


def _update_rows(
    ctx: KernelContext, out_dims: tuple[int, ...], indices: Any, updates: Any
) -> tuple[int, Any, Any] | None:
    """(output rows, flat offsets, update rows) to apply, bad rows dropped under IGNORE."""
    ix = indices.shape[-1]
    ignore = ctx.attrs["bad_indices_policy"] == "IGNORE"
    bad_row = _scatter_index_fail(ctx.fail, indices.shape, out_dims)
    flat, bad = row_offsets(ctx.xp, indices, tuple(out_dims[:ix]), ignore, bad_row)
    upd = rows_view(updates, flat.shape[0])
    if bad is not None:
        flat, upd = _select(ctx, ~bad, flat, upd)
    return (math.prod(out_dims[:ix]), flat, upd) if flat.shape[0] else None


def _scatter(
    ctx: KernelContext,
    tensor: Any | None,
    out_dims: tuple[int, ...],
    indices: Any,
    updates: Any,
    combine: Combine,
) -> Any:
    """DoScatterNd: into zeros (``tensor`` None: ScatterNd) or into ``tensor``, in place when
    the executor hands this kernel its buffer, else into a copy."""
    _do_scatter_nd_checks(ctx.fail, out_dims, indices.shape, updates.shape)
    out = ctx.allocate(out_dims, updates.dtype, fill=0) if tensor is None else None
    work = _update_rows(ctx, out_dims, indices, updates) if math.prod(out_dims) else None
    if out is None:
        out = ctx.forwarded((tensor,), tensor.shape, tensor.dtype)  # never indices or updates
        if out is None:
            out = ctx.allocate(tensor.shape, tensor.dtype)
            ctx.copy(out, tensor)
    if work is not None:
        n_rows, flat, upd = work
        combine(ctx, rows_view(out, n_rows), flat, upd)
    return out


# -- Shape functions -----------------------------------------------------------------------


def _num_elements(s: TensorShape) -> int | None:
    """InferenceContext::NumElements: 0 as soon as one known dim is 0."""
    if s.rank is None:
        return None
    if 0 in s.dims:
        return 0
    return s.num_elements()


def _scatter_nd_shape_helper(
    c: InferenceContext, ind: TensorShape, upd: TensorShape, out: TensorShape
) -> None:
    """TensorFlow's ScatterNdShapeHelper: empty output, then prefix and suffix dims."""
    if _num_elements(out) == 0 and ((_num_elements(ind) or 0) > 0 or (_num_elements(upd) or 0) > 0):
        c.fail("Indices and updates specified for empty input")
    if ind.rank is None or upd.rank is None or upd.rank == 0 or ind[-1] is None:
        return
    outer, ix = ind.rank - 1, ind[-1]
    pre_ind, pre_upd = ind[:outer], upd[:outer]
    try:
        merge(pre_ind, pre_upd)
    except ShapeError as e:
        c.fail(
            f"Dimensions [0,{outer}) of indices[shape={ind}] = {pre_ind} must match dimensions "
            f"[0,{outer}) of updates[shape={upd}] = {pre_upd}: {e}"
        )
    suf_out, suf_upd = out[ix:], upd[outer:]
    try:
        merge(suf_out, suf_upd)
    except ShapeError as e:
        c.fail(
            f"Dimensions [{ix},{out.rank}) of input[shape={out}] = {suf_out} must match "
            f"dimensions [{outer},{upd.rank}) of updates[shape={upd}] = {suf_upd}: {e}"
        )


def _known_scatter_checks(
    c: InferenceContext, out: TensorShape, indices: TensorSpec, upd: TensorShape, own: Callable
) -> None:
    """With every shape known, the kernel's checks (``own`` first) run at build time, and
    so does the index check for constant indices: such a graph can never run."""
    ind = indices.shape
    if not (out.is_fully_defined() and ind.is_fully_defined() and upd.is_fully_defined()):
        return
    own(c.fail, out.dims, ind.dims, upd.dims)
    _do_scatter_nd_checks(c.fail, out.dims, ind.dims, upd.dims)
    if (
        indices.value is not None
        and out.num_elements()
        and c.attrs["bad_indices_policy"] != "IGNORE"
    ):
        dims = out.dims[: ind.dims[-1]]
        row_offsets(np, indices.value, dims, False, _scatter_index_fail(c.fail, ind.dims, out.dims))


def _scatter_nd_shape(
    c: InferenceContext, indices: TensorSpec, updates: TensorSpec, shape: TensorSpec
) -> TensorShape:
    ind = with_rank_at_least(indices.shape, 1)
    upd = with_rank_at_least(updates.shape, 1)
    with_rank(shape.shape, 1)
    out = shape_from_value(c, shape)
    _scatter_nd_shape_helper(c, ind, upd, out)
    own = functools.partial(_scatter_nd_checks, shape_len=out.rank or 0)
    _known_scatter_checks(c, out, indices, upd, own)
    return out


def _tensor_scatter_shape(
    c: InferenceContext, tensor: TensorSpec, indices: TensorSpec, updates: TensorSpec
) -> TensorShape:
    out = with_rank_at_least(tensor.shape, 1)
    ind = with_rank_at_least(indices.shape, 1)
    upd = with_rank_at_least(updates.shape, 1)
    _scatter_nd_shape_helper(c, ind, upd, out)
    _known_scatter_checks(c, out, indices, upd, _tensor_scatter_checks)
    return out


# -- Docs ----------------------------------------------------------------------------------


def _scatter_doc(summary: str, rule: str, inputs: str, run_errors: str, example: str) -> str:
    """One scatter op's page: what it does, the index rules, inputs, errors, examples."""
    return f"""\
{summary}

{rule}

``indices`` is an integer tensor of rank >= 2 whose last dim ``ix = indices.shape[-1]``
(``1 <= ix <= rank(output)``) is the depth of an index row: row ``indices[b...]``
selects the element (``ix == rank``) or the slice ``output[indices[b...]]``
(``ix < rank``) that ``updates[b...]`` goes to, so ``updates.shape ==
indices.shape[:-1] + output.shape[ix:]``. An index must be in ``[0, dim)``;
negative indices never wrap.

Inputs and attrs:
{inputs}
- ``indices``: int32 or int64 (``Tindices``), rank >= 2.
- ``bad_indices_policy``: ``''``, ``'DEFAULT'`` or ``'ERROR'`` (the default: an
  out-of-range row is an error naming the first bad row), or ``'IGNORE'`` (bad
  rows are skipped). Any other value is rejected at build time.

Errors, in TensorFlow's wording: InvalidArgumentError naming the node, at build
time when the shapes (or constant indices) already prove them, else at run time.
- ``Shape must be at least rank 1 but is rank 0``.
- ``Indices and updates specified for empty input`` (at run time ``... empty
  output shape`` or ``... empty output.  indices shape: [1,1]``): something to
  scatter, but nothing to scatter it into.
- ``Dimensions [0,2) of indices[shape=[3,2,2]] = [3,2] must match dimensions
  [0,2) of updates[shape=[2,2,2]] = [2,2]: ...``, and the same for the trailing
  dims, ``Dimensions [1,2) of input[shape=[2,2]] = [2] must match dimensions
  [1,2) of updates[shape=[2,3]] = [3]: ...``; at run time {run_errors}. Rank-1
  ``indices`` fail this way whenever there is something to scatter.
- ``indices[2] = [7] does not index into shape [6]``: the first bad row, where
  it is in ``indices.shape[:-1]`` and its values (TensorFlow names the last).
- ResourceExhaustedError, before allocating, for an output too large to hold.

{example}
"""


_TENSOR_SCATTER_INTRO = (
    "Like ScatterNd, but into a copy of ``tensor`` instead of zeros. When the executor "
    "says the buffer of ``tensor`` is not fed, not a constant and has no other consumer, "
    "it is updated in place and becomes the output; the result is the same."
)
_TENSOR_SCATTER_RUN_ERRORS = (
    "``Outer dimensions of indices and update must match. ...``, ``Inner dimensions of "
    "output shape must match inner dimensions of updates shape. ...`` or ``The inner 1 "
    "dimensions of output.shape=[2,2] must match the inner 1 dimensions of "
    "updates.shape=[2,3]``"
)


def _tensor_scatter_doc(summary: str, rule: str, types: str, example: str) -> str:
    inputs = (
        f"- ``tensor``: {types} (``T``), rank >= 1; the output has its shape and dtype.\n"
        "- ``updates``: ``T``, shape ``indices.shape[:-1] + tensor.shape[ix:]``."
    )
    rule = f"{_TENSOR_SCATTER_INTRO} {rule}"
    return _scatter_doc(summary, rule, inputs, _TENSOR_SCATTER_RUN_ERRORS, example)


# -- ScatterNd ---------------------------------------------------------------------------

SCATTER_ND = define_op(
    "ScatterNd",
    inputs=["indices: Tindices", "updates: T", "shape: Tindices"],
    outputs=["output: T"],
    attrs=[f"T: {ALL}", f"Tindices: {INDEX_TYPES}", BAD_INDICES_POLICY],
    shape_fn=_scatter_nd_shape,
    host_inputs=["shape"],
    doc=_scatter_doc(
        "Scatters ``updates`` at ``indices`` into a new tensor of zeros of shape ``shape``.",
        "Duplicate index rows add up, in index order (bool updates combine with OR); "
        "integer sums wrap around. The output has dtype ``T`` and shape ``shape``; "
        "shape inference reads a constant ``shape`` (``-1`` entries become unknown dims), "
        "else gives ``len(shape)`` unknown dims. Without duplicates it undoes GatherNd.",
        "- ``updates``: any numeric dtype or bool (``T``), shape "
        "``indices.shape[:-1] + shape[ix:]``.\n"
        "- ``shape``: 1-D with the dtype of ``indices``, values >= 0; host memory.",
        "``Dimensions [0,2) of indices[shape=[3,2,2]] must match dimensions [0,2) of "
        "updates[shape=[2,2,2]]`` or ``Dimensions [1,3) of input[shape=[2,2,2]] must match "
        "dimensions [2,2) of updates[shape=[2,2]]``; a bad ``shape`` gives ``Invalid value "
        "in tensor used for shape: -2`` (run time: ``Dimension -2 must be >= 0``)",
        """\
Examples: elements into a vector (``shape`` takes the dtype of ``indices``), and
two 2x2 slices into the first dim of a ``[3, 2, 2]`` tensor:

>>> import minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     out = mg.scatter_nd([[4], [3], [1], [7]], [9, 10, 11, 12], [8])
...     slices = mg.scatter_nd([[0], [2]], [[[5, 5], [6, 6]], [[7, 7], [8, 8]]], [3, 2, 2])
...     dup = mg.scatter_nd([[1], [1]], [2.5, 4.0], [3])
>>> sess = mg.Session(g)
>>> sess.run(out)
array([ 0, 11,  0, 10,  9,  0,  0, 12], dtype=int32)
>>> sess.run(slices)[[0, 2]].tolist(), sess.run(slices)[1].tolist()
([[[5, 5], [6, 6]], [[7, 7], [8, 8]]], [[0, 0], [0, 0]])
>>> sess.run(dup)
array([0. , 6.5, 0. ], dtype=float32)""",
    ),
)


@register_kernel("ScatterNd", "CPU", "GPU")
def _scatter_nd_kernel(ctx: KernelContext, indices: Any, updates: Any, shape: Any) -> Any:
    shape = host_array(ctx, shape)
    dims = tuple(int(d) for d in shape.reshape(-1).tolist())
    _scatter_nd_checks(ctx.fail, dims, indices.shape, updates.shape, shape.size)
    if shape.ndim != 1:
        ctx.fail("Shape must be a vector")
    return _scatter(ctx, None, dims, indices, updates, _ADD)


_ADD = _accumulate("add")
ScatterNd = make_wrapper_class(SCATTER_ND)
_scatter_nd = make_builder(SCATTER_ND, "scatter_nd")


def scatter_nd(
    indices: Any, updates: Any, shape: Any, name: str | None = None, *, bad_indices_policy: str = ""
) -> Output:
    return _scatter_nd(indices, updates, shape, bad_indices_policy=bad_indices_policy, name=name)


scatter_nd.__doc__ = SCATTER_ND.doc


# -- TensorScatterUpdate, Add, Sub, Min, Max: one factory --------------------------------


def _tensor_scatter(
    op_type: str, builder_name: str, types: str, combine: Combine, doc: str
) -> tuple[type, Callable[..., Output]]:
    """Declare and register one TensorScatter* op; returns its class and builder."""
    op_def = define_op(
        op_type,
        inputs=["tensor: T", "indices: Tindices", "updates: T"],
        outputs=["output: T"],
        attrs=[f"T: {types}", f"Tindices: {INDEX_TYPES}", BAD_INDICES_POLICY],
        shape_fn=_tensor_scatter_shape,
        doc=doc,
    )

    def kernel(ctx: KernelContext, tensor: Any, indices: Any, updates: Any) -> Any:
        _tensor_scatter_checks(ctx.fail, tensor.shape, indices.shape, updates.shape)
        return _scatter(ctx, tensor, tensor.shape, indices, updates, combine)

    kernel.__name__ = kernel.__qualname__ = f"_{builder_name}_kernel"
    register_kernel(op_type, "CPU", "GPU")(kernel)
    generated = make_builder(op_def, builder_name)

    def builder(
        tensor: Any,
        indices: Any,
        updates: Any,
        name: str | None = None,
        *,
        bad_indices_policy: str = "",
    ) -> Output:
        return generated(tensor, indices, updates, bad_indices_policy=bad_indices_policy, name=name)

    builder.__name__ = builder.__qualname__ = builder_name
    builder.__doc__ = doc
    return make_wrapper_class(op_def), builder


def _example(builder: str, tensor: str, updates: str, expected: str) -> str:
    """A doctest: ``builder`` on ``tensor`` at rows 4, 3, 1 and 7."""
    return f"""\
Example:

>>> import minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     out = mg.{builder}({tensor}, [[4], [3], [1], [7]], {updates})
>>> mg.Session(g).run(out)
{expected}"""


_ONES = "mg.ones([8], mg.int32)"
TensorScatterUpdate, tensor_scatter_nd_update = _tensor_scatter(
    "TensorScatterUpdate",
    "tensor_scatter_nd_update",
    ALL,
    _assign,
    _tensor_scatter_doc(
        "Scatters ``updates`` at ``indices`` into a copy of ``tensor``, replacing values.",
        "Duplicate index rows are not summed: the last update in index order wins, on "
        "every device and every run (TensorFlow's GPU kernel leaves the winner undefined).",
        "any numeric dtype or bool",
        _example(
            "tensor_scatter_nd_update",
            "[0] * 8",
            "[9, 10, 11, 12]",
            "array([ 0, 11,  0, 10,  9,  0,  0, 12], dtype=int32)",
        )
        + """

Elements of a matrix, whole rows, and a duplicate (the last one wins):

>>> with g.as_default():
...     two = mg.tensor_scatter_nd_update([[1, 1], [1, 1], [1, 1]], [[0, 1], [2, 0]], [5, 10])
...     rows = mg.tensor_scatter_nd_update(mg.zeros([3, 2]), [[2]], [[1.0, 2.0]])
...     dup = mg.tensor_scatter_nd_update([0, 0, 0], [[1], [1]], [4, 8])
>>> mg.Session(g).run(two).tolist(), mg.Session(g).run(rows).tolist()
([[1, 5], [1, 1], [10, 1]], [[0.0, 0.0], [0.0, 0.0], [1.0, 2.0]])
>>> mg.Session(g).run(dup)
array([0, 8, 0], dtype=int32)""",
    ),
)
TensorScatterAdd, tensor_scatter_nd_add = _tensor_scatter(
    "TensorScatterAdd",
    "tensor_scatter_nd_add",
    NUMBER,
    _ADD,
    _tensor_scatter_doc(
        "Adds ``updates`` at ``indices`` into a copy of ``tensor``.",
        "Duplicate index rows all add, in index order, so float sums round as TensorFlow's "
        "CPU kernel does; integer sums wrap around (int32 max + 1 is int32 min).",
        "any numeric dtype (no bool)",
        _example(
            "tensor_scatter_nd_add",
            _ONES,
            "[9, 10, 11, 12]",
            "array([ 1, 12,  1, 11, 10,  1,  1, 13], dtype=int32)",
        ),
    ),
)
TensorScatterSub, tensor_scatter_nd_sub = _tensor_scatter(
    "TensorScatterSub",
    "tensor_scatter_nd_sub",
    NUMBER,
    _accumulate("subtract"),
    _tensor_scatter_doc(
        "Subtracts ``updates`` at ``indices`` from a copy of ``tensor``.",
        "Duplicate index rows all subtract, in index order; integer results wrap around.",
        "any numeric dtype (no bool)",
        _example(
            "tensor_scatter_nd_sub",
            _ONES,
            "[9, 10, 11, 12]",
            "array([  1, -10,   1,  -9,  -8,   1,   1, -11], dtype=int32)",
        ),
    ),
)
_MIN_MAX_RULE = (
    "An update replaces the value only if it is {cmp} (strictly), applied in index order "
    "as TensorFlow's CPU kernel does: a NaN update never wins and a NaN already in "
    "``tensor`` stays ({nan}), and of equal values the earlier stays ({zero}). Neither "
    "``np.{fn}`` nor ``np.f{fn2}`` gives this rule."
)
TensorScatterMin, tensor_scatter_nd_min = _tensor_scatter(
    "TensorScatterMin",
    "tensor_scatter_nd_min",
    REAL,
    _extremum("minimum", np.inf),
    _tensor_scatter_doc(
        "Takes the minimum of a copy of ``tensor`` and ``updates`` at ``indices``.",
        _MIN_MAX_RULE.format(
            cmp="less",
            nan="``min(1, nan) = 1``, ``min(nan, 0) = nan``",
            zero="``min(0.0, -0.0) = 0.0``",
            fn="minimum",
            fn2="min",
        ),
        "any real numeric dtype (no complex, no bool)",
        _example(
            "tensor_scatter_nd_min",
            _ONES,
            "[0, 2, -1, 2]",
            "array([ 1, -1,  1,  1,  0,  1,  1,  1], dtype=int32)",
        ),
    ),
)
TensorScatterMax, tensor_scatter_nd_max = _tensor_scatter(
    "TensorScatterMax",
    "tensor_scatter_nd_max",
    REAL,
    _extremum("maximum", -np.inf),
    _tensor_scatter_doc(
        "Takes the maximum of a copy of ``tensor`` and ``updates`` at ``indices``.",
        _MIN_MAX_RULE.format(
            cmp="greater",
            nan="``max(1, nan) = 1``, ``max(nan, 2) = nan``",
            zero="``max(0.0, -0.0) = 0.0``",
            fn="maximum",
            fn2="max",
        ),
        "any real numeric dtype (no complex, no bool)",
        _example(
            "tensor_scatter_nd_max",
            "[1.0] * 8",
            "[0.0, 2.0, float('nan'), 2.0]",
            "array([1., 1., 1., 2., 1., 1., 1., 2.], dtype=float32)",
        ),
    ),
)


__all__ = [
    "ScatterNd",
    "TensorScatterUpdate",
    "TensorScatterAdd",
    "TensorScatterSub",
    "TensorScatterMin",
    "TensorScatterMax",
    *BUILDERS,
]
