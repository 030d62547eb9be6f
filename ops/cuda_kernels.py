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
import math
from typing import Any

import numpy as np

from minigraph.devices import is_cupy
from minigraph.ops.common import WORDS

__all__ = ["row_words", "stitch_rows", "index_rows", "partition_order", "max_into"]


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


@functools.cache
def _index_rows_kernel(ix: int, offsets: bool) -> Any:
    import cupy

    # One thread per index row: TensorFlow's bounds check (0 <= v < dim, negatives never
    # wrap) of each entry, and the row's flat offset (sum of entry * stride), in one pass.
    # A bad row sets the one flag word (every writer writes 1: a benign race), so the
    # common case, no bad row, costs this pass, a 4-byte memset and a 4-byte read back.
    dims = ", ".join(f"int64 d{k}" for k in range(ix))
    strides = "".join(f", int64 s{k}" for k in range(ix))
    body = "".join(
        f"{{ const long long v = (long long)idx[i * {ix} + {k}];\n"
        f"  bad |= (v < 0) | (v >= d{k});" + (f" f += v * s{k};" if offsets else "") + " }\n"
        for k in range(ix)
    )
    return cupy.ElementwiseKernel(
        f"raw I idx, {dims}{strides if offsets else ''}",
        "int64 flat, raw int32 flag" if offsets else "raw int32 flag",
        "bool bad = false; long long f = 0;\n"
        + body
        + ("flat = f;\n" if offsets else "")
        + "if (bad) flag[0] = 1;",
        f"minigraph_index_rows_{ix}{'_offsets' if offsets else ''}",
    )


def index_rows(xp: Any, idx: Any, dims: tuple[int, ...]) -> tuple[Any, bool]:
    """For device index rows ``idx`` ([rows, len(dims)], int32 or int64): their flat
    offsets into ``dims`` (int64; for one column the column itself, not copied), and
    whether any row is out of range (``0 <= v < dim`` fails for an entry). One pass and one
    device sync; the caller finds the bad rows only when there are some.

    Without CuPy: one elementwise compare of the unsigned view against the dims (a
    negative is a large unsigned number; dims are capped at 2**(bits-1), above every valid
    index), one contiguous full ``any``, and the offsets column by column."""
    rows, ix = idx.shape
    strides = [math.prod(dims[k + 1 :]) for k in range(ix)]
    if rows == 0:
        return (idx[:, 0] if ix == 1 else xp.zeros(0, np.int64)), False
    if is_cupy(xp):
        idx = xp.ascontiguousarray(idx)
        flag = xp.zeros(1, np.int32)
        if ix == 1:
            _index_rows_kernel(1, False)(idx, dims[0], flag, size=rows)
            return idx[:, 0], bool(flag.get()[0])
        flat = xp.empty(rows, np.int64)
        _index_rows_kernel(ix, True)(idx, *dims, *strides, flat, flag)
        return flat, bool(flag.get()[0])
    unsigned = idx.view(f"u{idx.dtype.itemsize}")
    cap = 2 ** (8 * idx.dtype.itemsize - 1)
    limits = xp.asarray([min(d, cap) for d in dims], dtype=unsigned.dtype)
    any_bad = bool((unsigned >= limits).any())
    if ix == 1:
        return idx[:, 0], any_bad
    flat = idx[:, ix - 1].astype(np.int64)
    for k in range(ix - 1):
        flat += idx[:, k].astype(np.int64) * strides[k]
    return flat, any_bad


# DynamicPartition by counts: each block of _PARTITION_THREADS threads takes a tile of
# _PARTITION_TILE ids. The first kernel counts each key (the partition id; ids outside
# [0, parts) all count as key ``parts``, placed last) per tile into counts[key, tile]; a
# scan of that key-major table gives where each (key, tile) run begins in the output; the
# second kernel ranks each id among the earlier ids of its key in its tile (a warp's peers
# by __match_any_sync, the earlier warps' counts from shared memory) and writes its
# position there. So the order equals a stable sort of the keys, without sorting, and the
# table's last column per key gives the sizes: the one sync. Up to _PARTITION_MAX_KEYS
# keys (shared memory: (warps + 1) * keys int32).
_PARTITION_THREADS = 256
_PARTITION_TILE = 4096
_PARTITION_MAX_KEYS = 1024
_PARTITION_SOURCE = r"""
extern "C" __global__ void minigraph_partition_count(
    const int* ids, long long n, long long tiles, int keys, int tile_size, int* counts)
{
    extern __shared__ int local[];
    for (int k = threadIdx.x; k < keys; k += blockDim.x) local[k] = 0;
    __syncthreads();
    const long long start = (long long)blockIdx.x * tile_size;
    for (int r = threadIdx.x; r < tile_size; r += blockDim.x) {
        const long long i = start + r;
        if (i < n) {
            const unsigned int v = (unsigned int)ids[i];
            atomicAdd(&local[v < (unsigned int)(keys - 1) ? (int)v : keys - 1], 1);
        }
    }
    __syncthreads();
    for (int k = threadIdx.x; k < keys; k += blockDim.x) {
        counts[(long long)k * tiles + blockIdx.x] = local[k];
    }
}

extern "C" __global__ void minigraph_partition_order(
    const int* ids, const long long* ends, const int* counts, long long n, long long tiles,
    int keys, int tile_size, long long* order)
{
    extern __shared__ int shared[];
    int* placed = shared;        // [keys]: ids of each key this block has placed so far
    int* round = shared + keys;  // [warps][keys]: this round's count of each key per warp
    const int warps = blockDim.x >> 5;
    const int warp = threadIdx.x >> 5;
    const unsigned int lower = (1u << (threadIdx.x & 31)) - 1u;
    for (int j = threadIdx.x; j < keys * (warps + 1); j += blockDim.x) shared[j] = 0;
    __syncthreads();
    const long long tile = blockIdx.x;
    for (int r = 0; r < tile_size; r += blockDim.x) {
        const long long i = tile * tile_size + r + threadIdx.x;
        int key = -1;
        if (i < n) {
            const unsigned int v = (unsigned int)ids[i];
            key = v < (unsigned int)(keys - 1) ? (int)v : keys - 1;
        }
        const unsigned int peers = __match_any_sync(0xffffffffu, key);
        const int rank = __popc(peers & lower);
        if (key >= 0 && rank == 0) round[warp * keys + key] = __popc(peers);
        __syncthreads();
        if (key >= 0) {
            int before = placed[key] + rank;
            for (int w = 0; w < warp; ++w) before += round[w * keys + key];
            const long long j = (long long)key * tiles + tile;
            order[ends[j] - counts[j] + before] = i;
        }
        __syncthreads();
        for (int k = threadIdx.x; k < keys; k += blockDim.x) {
            int sum = 0;
            for (int w = 0; w < warps; ++w) {
                sum += round[w * keys + k];
                round[w * keys + k] = 0;
            }
            placed[k] += sum;
        }
        __syncthreads();
    }
}
"""


@functools.cache
def _partition_kernels() -> tuple[Any, Any]:
    import cupy

    module = cupy.RawModule(code=_PARTITION_SOURCE)
    return (
        module.get_function("minigraph_partition_count"),
        module.get_function("minigraph_partition_order"),
    )


def partition_order(xp: Any, ids: Any, parts: int) -> tuple[Any, list[int]]:
    """For int32 partition ids (1-D, on the device): the positions of the ids in a stable
    sort by id, ids outside [0, parts) last, and the count of each id, then of the bad
    ones (``parts + 1`` counts). One device sync, for the counts.

    Without CuPy, or past _PARTITION_MAX_KEYS keys: the keys (ids clipped to ``parts``,
    as unsigned: a negative one is large) in the narrowest dtype, their bincount and their
    stable argsort (on CuPy, bincount syncs twice more, for its checks)."""
    n = ids.size
    keys = parts + 1
    if n == 0:
        return xp.zeros(0, np.int64), [0] * keys
    if is_cupy(xp) and keys <= _PARTITION_MAX_KEYS:
        count, place = _partition_kernels()
        ids = xp.ascontiguousarray(ids)
        tiles = -(-n // _PARTITION_TILE)
        counts = xp.empty(keys * tiles, np.int32)
        args = (np.int64(n), np.int64(tiles), np.int32(keys), np.int32(_PARTITION_TILE))
        count((tiles,), (_PARTITION_THREADS,), (ids, *args, counts), shared_mem=4 * keys)
        ends = xp.cumsum(counts, dtype=np.int64)
        order = xp.empty(n, np.int64)
        warps = _PARTITION_THREADS // 32
        place(
            (tiles,),
            (_PARTITION_THREADS,),
            (ids, ends, counts, *args, order),
            shared_mem=4 * keys * (warps + 1),
        )
        last = ends[tiles - 1 :: tiles].get().tolist()  # where each key's run ends
        return order, [b - a for a, b in zip([0, *last[:-1]], last)]
    width = 1 if keys <= 1 << 8 else 2 if keys <= 1 << 16 else 4
    key = xp.minimum(ids.view(np.uint32), parts).astype(WORDS[width])
    sizes = xp.bincount(key, minlength=keys)
    return xp.argsort(key, kind="stable"), [int(c) for c in sizes.tolist()]


@functools.cache
def _max_into_kernel() -> Any:
    import cupy

    # TensorFlow's MaxPool rule, one window at a time: a cell replaces the running value
    # only if greater, so NaN never wins and of 0.0 and -0.0 the first stays.
    return cupy.ElementwiseKernel("T w", "T out", "if (w > out) out = w;", "minigraph_max_into")


def max_into(xp: Any, out: Any, window: Any) -> None:
    """``out = where(window > out, window, out)`` in place: one pass, no host sync.

    Without CuPy: a boolean mask and a masked copy."""
    if is_cupy(xp):
        _max_into_kernel()(window, out)
        return
    xp.copyto(out, window, where=window > out)
