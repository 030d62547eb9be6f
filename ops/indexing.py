"""Index rows (the last axis of a GatherNd/ScatterNd ``indices``) as flat row offsets.

Shared by the scatters and GatherNd: one bounds check per column, offsets summed per
column, and the bad-row error in TensorFlow's wording.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from minigraph.ops.common import multi_index
from minigraph.ops.cuda_kernels import index_rows

__all__ = ["row_offsets", "rows_view", "index_fail"]


# -- Index rows -> flat row offsets (shared by every kernel) ----------------------


def row_offsets(
    xp: Any, indices: Any, dims: tuple[int, ...], ignore: bool, fail: Callable[..., NoReturn]
) -> tuple[Any, Any]:
    """Flat offsets of the index rows into ``dims``, and the mask of bad rows (or None).

    A row is bad unless ``0 <= i < dim`` for each entry (negatives never wrap).
    Unless ``ignore``, the first bad row fails: ``fail(position, values)``.
    """
    ix = len(dims)
    rows = math.prod(indices.shape[:-1])
    idx = indices.reshape(rows, ix)
    if ix == 0:
        return xp.zeros(rows, np.int64), None
    # TensorFlow's FastBoundsCheck: as unsigned, a negative index is too large. Dims are
    # capped at 2**(bits-1): every valid index is below it.
    unsigned = idx.view(f"u{idx.dtype.itemsize}")
    cap = 2 ** (8 * idx.dtype.itemsize - 1)
    limits = [min(d, cap) for d in dims]
    if xp is not np:
        # On a device, one pass checks every row and makes the offsets, with one sync
        # (a max per strided column was a slow single-block reduction each, 1 ms per
        # 1M rows on an H200); the bad rows are looked for only when there are some.
        flat, any_bad = index_rows(xp, idx, tuple(dims))
        bad = _bad_rows(xp, unsigned, limits, ignore, fail, idx) if any_bad else None
        return flat, bad
    bad = None
    # The common case, all valid, costs one max per column; only then is each row checked.
    if rows and any(m >= lim for m, lim in zip(column_maxima(xp, unsigned), limits)):
        bad = _bad_rows(xp, unsigned, limits, ignore, fail, idx)
    if ix == 1:
        return idx[:, 0], bad
    # Column by column: 2x faster than an integer matmul in NumPy, and plain on a GPU.
    flat = idx[:, ix - 1].astype(np.int64)
    for k in range(ix - 1):
        flat += idx[:, k].astype(np.int64) * math.prod(dims[k + 1 :])
    return flat, bad


def _bad_rows(
    xp: Any, unsigned: Any, limits: list[int], ignore: bool, fail: Callable[..., NoReturn], idx: Any
) -> Any:
    """The mask of rows with an entry out of range; unless ``ignore``, fails on the first."""
    bad = unsigned >= xp.asarray(limits, dtype=unsigned.dtype)
    bad = bad[:, 0] if bad.shape[1] == 1 else bad.any(axis=1)
    if not ignore:
        pos = int(xp.argmax(bad))
        fail(pos, [int(v) for v in idx[pos].tolist()])
    return bad


def column_maxima(xp: Any, x: Any) -> list[int]:
    """The largest entry of each column of a 2-D array. Column by column: NumPy's
    ``max(axis=0)`` over a few wide columns is 50x slower."""
    return xp.stack([x[:, k].max() for k in range(x.shape[1])]).tolist()


def rows_view(x: Any, n_rows: int) -> Any:
    """``x`` as ``[n_rows, slice]``, or ``[n_rows]`` when slices are single elements.

    The 1-D form lets ``ufunc.at`` and fancy indexing take their fast element paths.
    """
    slice_size = x.size // n_rows if n_rows else 0
    return x.reshape(n_rows) if slice_size == 1 else x.reshape(n_rows, slice_size)


def index_fail(
    fail: Callable[[str], NoReturn], ind: tuple, into: str, suffix: str = ""
) -> Callable[[int, list[int]], NoReturn]:
    """The error for a bad index row, in TensorFlow's wording: ``indices[i] = [..] does not
    index into <into>``."""

    def bad_row(pos: int, values: list[int]) -> NoReturn:
        fail(
            f"indices{multi_index(tuple(ind[:-1]), pos)} = [{', '.join(map(str, values))}] "
            f"does not index into {into}{suffix}"
        )

    return bad_row
