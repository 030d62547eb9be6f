"""The few CUDA kernels the ops' GPU paths launch themselves, each where CuPy's own calls
cost several passes over the data (measured on an H200: docs/benchmarks.md).

Each is a ``cupy.ElementwiseKernel`` built on first use, so importing the ops never imports
CuPy; CuPy compiles it once per dtype signature and caches the binary on disk. The caller
takes the kernel only where ``xp`` is CuPy itself (``minigraph.devices.is_cupy``), else runs a
formulation in plain array calls that gives the same result, which the simulated GPU (and
so every machine's test suite) runs; tests/gpu checks the two against each other.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from minigraph.devices import is_cupy
from minigraph.ops.common import WORDS

__all__ = ["row_words", "stitch_rows"]


def row_words(x: Any, n: int) -> Any:
    """``x`` (C-contiguous, ``n`` rows) as ``n`` rows of unsigned words: a 1-D array of
    ``n * words_per_row`` words, the widest word that divides a row and the address."""
    row_bytes = x.nbytes // max(n, 1)
    for size in (8, 4, 2, 1):
        if row_bytes % size == 0 and x.data.ptr % size == 0:
            return x.reshape(-1).view(WORDS[size])
    raise AssertionError("unreachable: every row is whole bytes")


@functools.cache
def _stitch_rows_kernel() -> Any:
    import cupy

    # Element i is word i % row of row j = i / row; the row goes to out[idx[j]] where the
    # table names position first + j (1-based) as its index's last one, or always when
    # first < 0 (indices known to be distinct). So every output row is written by one
    # thread per word: no race, no atomics, one read and one write of each word.
    return cupy.ElementwiseKernel(
        "raw I idx, raw W data, raw P table, int64 row, int64 first",
        "raw W out",
        """
        const long long j = i / row;
        const long long k = idx[j];
        if (first < 0 || table[k] == (P)(first + j + 1)) {
            out[k * row + (i - j * row)] = data[i];
        }
        """,
        "minigraph_stitch_rows",
    )


def stitch_rows(
    xp: Any, out: Any, idx: Any, rows: Any, n: int, table: Any | None, first: int
) -> None:
    """Writes row ``j`` of ``rows`` (``n`` rows, C-contiguous) to ``out[idx[j]]`` where
    ``table[idx[j]] == first + j + 1`` (the 1-based position of that index's winner among
    all lists), or everywhere when ``table`` is None; ``out`` has ``rows``' row size.

    Without CuPy: every row writes its index's winner's value, taken from ``rows`` when the
    winner is in this list, its own otherwise (a later list writes that index again), so
    racing writes to one row agree."""
    if n == 0:
        return
    if is_cupy(xp):
        words = row_words(rows, n)
        out_words = out.reshape(-1).view(words.dtype)
        probe = table if table is not None else xp.empty(1, np.uint32)  # not read: first < 0
        per_row = words.size // n
        _stitch_rows_kernel()(
            idx,
            words,
            probe,
            per_row,
            -1 if table is None else first,
            out_words,
            size=words.size,
        )
        return
    if table is None:
        out[idx] = rows
        return
    local = xp.take(table, idx).astype(np.int64) - (first + 1)  # the winner, from this list
    own = xp.arange(n, dtype=np.int64)
    out[idx] = xp.take(rows, xp.where(local < n, local, own), axis=0)
