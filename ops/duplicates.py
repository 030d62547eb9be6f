"""Repeated indices, resolved the same way on NumPy and CuPy.

Fancy assignment leaves the winner among repeated indices undefined (on a GPU the
writes race), so the kernels that keep one update per index (DynamicStitch and
TensorScatterUpdate keep the last) ask :func:`winners` or :func:`occurrences`, and the
kernels that fold the repeats together (TensorScatterMin/Max, and deterministic sums on
the GPU) call :func:`reduce_by_key`, which sorts by index and folds each index's values
in a fixed pairwise order. All use only what CuPy has (:mod:`minigraph.cupy_limits`):
integer ``maximum.at``/``minimum.at``, whose atomics give the same result in any order,
``unique``, a stable ``argsort``, ``cumsum`` and slicing; never ``ufunc.reduceat``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minigraph.cupy_limits import has_atomic_at

__all__ = ["positions", "winners", "occurrences", "reduce_by_key"]

# Use a table over the slots while it has at most this many entries per index; beyond
# that, sorting the indices costs less than touching the table.
_TABLE_SLOTS_PER_INDEX = 64


def positions(xp: Any, n: int) -> Any:
    """``0..n-1`` as the narrowest unsigned type that CuPy's integer atomics take."""
    return xp.arange(n, dtype=_position_type(n))


def _position_type(n: int) -> type:
    return np.uint32 if n <= 2**32 else np.uint64


Empty = Callable[[tuple[int, ...], Any], Any]


def winners(xp: Any, flat: Any, n_slots: int, last: bool, empty: Empty | None = None) -> Any:
    """For each ``flat[j]`` (1-D, values in ``[0, n_slots)``), the position of the first (or
    last) occurrence of its value: ``flat[winners[j]] == flat[j]``. ``empty(shape, dtype)``
    makes the table over the slots (a kernel's ``ctx.empty``, whose large buffers are kept
    from run to run: a fresh table of 64M slots page-faulted on every call)."""
    n = int(flat.shape[0])
    use_table = n_slots <= _TABLE_SLOTS_PER_INDEX * n and (
        xp is np or has_atomic_at("maximum", _position_type(n), max(n_slots, n))
    )
    if not use_table:  # sorting: for sparse indices, or past CuPy's int32 scatter extents
        _, where, inverse = xp.unique(
            flat[::-1] if last else flat, return_index=True, return_inverse=True
        )
        first = xp.take(where, inverse.reshape(-1))  # positions in the array unique saw
        return (n - 1 - first)[::-1] if last else first
    pos = positions(xp, n)
    table = (empty or xp.empty)((n_slots,), pos.dtype)  # only the slots flat names are read
    if xp is np:  # NumPy writes in order, leaving the wanted position in every named slot
        if last:
            table[flat] = pos
        else:
            table[flat[::-1]] = pos[::-1]
        named = table[flat]
        if not ((named < pos) if last else (named > pos)).any():
            return named
    else:
        xp.put(table, flat, pos)  # the writes race: any one may win
    # An atomic max/min, the same in any order on integers, settles the race.
    (xp.maximum if last else xp.minimum).at(table, flat, pos)
    return xp.take(table, flat)


def occurrences(
    xp: Any, flat: Any, n_slots: int, last: bool, empty: Empty | None = None
) -> Any | None:
    """Mask of the first (or last) occurrence of each value in ``flat`` (1-D, values in
    ``[0, n_slots)``); None when no value repeats. ``empty`` as for :func:`winners`."""
    n = int(flat.shape[0])
    if n < 2:
        return None
    mask = winners(xp, flat, n_slots, last, empty) == positions(xp, n)
    return None if bool(mask.all()) else mask


def reduce_by_key(
    xp: Any, keys: Any, values: Any, combine: Callable[[Any, Any], Any]
) -> tuple[Any, Any]:
    """The distinct ``keys`` (ascending) and, for each, its rows of ``values`` folded by
    the associative ``combine``, in a fixed order that keeps the rows' order.

    Rows are sorted stably by key; then each run of equal keys is folded pairwise,
    ``((v0 . v1) . (v2 . v3)) . ...``, in log2(longest run) vectorised rounds. The order
    depends on the data only, so float results are bitwise reproducible on a GPU too.
    """
    n = int(keys.shape[0])
    if n == 0:
        return keys, values
    order = xp.argsort(keys, kind="stable")
    keys, values = xp.take(keys, order), xp.take(values, order, axis=0)
    head = xp.concatenate([xp.ones(1, bool), keys[1:] != keys[:-1]])
    starts = xp.flatnonzero(head)
    run = xp.cumsum(head) - 1
    rank = xp.arange(n) - xp.take(starts, run)  # place within its run
    left = xp.take(xp.diff(xp.append(starts, n)), run) - rank  # rows from here to run's end
    longest = int(left.max())
    column = (-1,) + (1,) * (values.ndim - 1)
    step = 1
    while step < longest:
        # Row j takes in row j + step when j leads a block of 2 * step rows of its run.
        lead = ((rank[:-step] % (2 * step) == 0) & (left[:-step] > step)).reshape(column)
        values[:-step] = xp.where(lead, combine(values[:-step], values[step:]), values[:-step])
        step *= 2
    return xp.take(keys, starts), xp.take(values, starts, axis=0)
