"""DynamicPartition: splitting rows by partition id (DynamicStitch, which interleaves them
back, is in data_flow_ops.py).

One block: declaration, shape function, kernels (host: boolean masks for few partitions, a
blocked counting sort for many; GPU: one order by counting, cuda_kernels.partition_order),
the shared kernel for partitions of one ids tensor, class and builder. Rows move as one
word or opaque item each (ops.common.as_rows), as in DynamicStitch.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import as_rows, check_in_range, from_rows, row_element, shape_str
from minigraph.ops.cuda_kernels import partition_order
from minigraph.registry import define_op, register_kernel, register_shared_kernel
from minigraph.shapes import TensorShape, merge_prefix, unknown_shape
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = ("dynamic_partition",)


# -- DynamicPartition --------------------------------------------------------------


def _dynamic_partition_shape(
    c: InferenceContext, data: TensorSpec, partitions: TensorSpec
) -> list[TensorShape]:
    n = c.attrs["num_partitions"]
    if partitions.shape.rank is None:
        return [unknown_shape()] * n
    rest = merge_prefix(data.shape, partitions.shape)
    if partitions.value is not None:
        check_in_range(c.fail, "partitions", partitions.value, n)
    # Counts are never inferred, even from constant partitions (as TensorFlow).
    return [TensorShape([None]).concatenate(rest)] * n


DYNAMIC_PARTITION = define_op(
    "DynamicPartition",
    inputs=["data: T", "partitions: int32"],
    outputs=["outputs: num_partitions * T"],
    attrs=["T: type", "num_partitions: int >= 1"],
    shape_fn=_dynamic_partition_shape,
    doc="""
Splits ``data`` into ``num_partitions`` tensors by the partition id of each slice:

    outputs[i] = stack([data[js, ...] for js where partitions[js] == i])

where ``js`` runs over the multi-indices of ``partitions`` in row-major order, so
each output keeps the order of its slices in ``data`` (the split is stable).
``data.shape`` must start with ``partitions.shape``; ``outputs[i].shape`` is
``[count of i in partitions] + data.shape[partitions.ndim:]``. A scalar
``partitions`` sends the whole of ``data`` to one output (with a leading dim of 1).
DynamicStitch with the partitioned positions puts the pieces back together.

Inputs:
- ``data``: any dtype ``T`` (every numeric dtype and bool).
- ``partitions``: int32 (int64 is rejected), each id in ``[0, num_partitions)``.

Attrs: ``num_partitions`` >= 1; ``T`` (set from ``data``).

Shape inference: every output is ``[None] + data.shape[partitions.ndim:]`` (the
counts are never inferred, as in TensorFlow); unknown when the rank of
``partitions`` is unknown.

Errors (InvalidArgumentError naming the node, at build time when shapes or
constant values prove them, else at run time):
- ``Value for attr 'num_partitions' of 0 must be at least minimum 1``
- ``cannot compute DynamicPartition as input #1(zero-based) was expected to be a
  int32 tensor but is a int64 tensor``
- ``Dimensions must be equal, but are 3 and 2`` / ``data.shape must start with
  partitions.shape, got data.shape = [3,1], partitions.shape = [2,1]``
- ``partitions[2] = 99 is not in [0, 4)``: the first bad id in row-major order;
  ``partitions[1,1] = 17 is not in [0, 7)`` for 2-D ``partitions``,
  ``partitions = 17 is not in [0, 7)`` for a scalar. TensorFlow's GPU kernel drops
  bad ids silently; minigraph rejects them on every device.

Example:

    data = [10, 20, 30, 40, 50]
    partitions = [0, 0, 1, 1, 0]
    num_partitions = 2
    outputs[0] = [10, 20, 50]
    outputs[1] = [30, 40]

    data = [[1, 2], [3, 4]]
    partitions = [[0, 1], [1, 0]]      # one id per element: partitions.ndim = 2
    num_partitions = 2
    outputs[0] = [1, 4]
    outputs[1] = [2, 3]

>>> import minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     parts = mg.dynamic_partition([10, 20, 30, 40, 50], [0, 0, 1, 1, 0], 2)
>>> [p.shape for p in parts]
[TensorShape([None]), TensorShape([None])]
>>> mg.Session(g).run(parts)
[array([10, 20, 50], dtype=int32), array([30, 40], dtype=int32)]
""",
)


# Word rows (8 bytes or less) into up to this many partitions go through a mask and a
# compress per partition, block by block; into more, through the blocked counting sort.
# Wider rows: a mask and a compress per partition over all rows, up to the second number;
# beyond it, one sort. Measured on 2026-12-02 (2 cores, ms):
#   4M rows of 64 bytes: masks 38 / 55 / 57 / 61 / 80 / 87 into 2 / 4 / 6 / 8 / 12 / 16
#   parts, one sort 103 / 132 / 142 / 141 / 155 / 128 (masks by blocks are slower there:
#   57 / 68 / 87 / 121 / 108 / 124);
# and on 2026-12-03 (min of 5, interleaved), 16M float32 into 3 / 4 / 6 / 8 parts: masks
#   by blocks 61 / 68 / 85 / 102, blocked sort (32K rows a block) 78 / 75 / 77 / 80.
_MASKED_WORD_PARTITIONS = 5
_MASKED_PARTITIONS = 16
# The masks work on blocks of about this many bytes of data (they stay in cache).
_PARTITION_BLOCK_BYTES = 1 << 20
# The counting sort sorts blocks of this many rows. NumPy's radix argsort of 8-bit keys
# costs about 2.2 ns a row at any size, but its order and its scratch (8 bytes a row each)
# are new arrays: glibc maps them fresh (and page-faults them) unless it keeps blocks of
# their size, which it does up to 4 MB once the host pool has made its first buffer
# (host_pool.let_malloc_keep_medium_blocks), so up to 256K rows. Fewer, larger blocks make
# fewer segments to gather and fewer hand-offs between the threads, which cost most when
# the machine has just idled. 16M float32 into 16 parts, Session runs interleaved (6 best
# of 10, ms, 2026-12-03): back to back 40-45 with 64K rows, 39-41 with 128K, 38-42 with
# 256K; after a 0.3 s pause 47-60, 41-59, 43-50; the seed composition after a pause
# 98-120, 87-108, 83-103. 512K rows (4 MB orders, mapped anew each time): 58-69.
# It makes at most _PARTITION_SEGMENTS (block, partition) segments, so that gathering
# them stays cheap.
_PARTITION_SORT_ROWS = 1 << 18
_PARTITION_SEGMENTS = 1 << 15


def _key_dtype(xp: Any, top: int) -> Any:
    """The narrowest unsigned dtype for partition keys up to ``top``; int32 past 16 bits.

    NumPy's stable sort is a one-pass radix sort for 8- and 16-bit keys (about 7x
    faster than its int32 merge sort).
    """
    if top < 1 << 8:
        return xp.uint8
    if top < 1 << 16:
        return xp.uint16
    return xp.int32


def _partition_sorted(xp: Any, rows: Any, ids: Any, num_partitions: int) -> list[Any]:
    """A stable counting sort: one gather into one buffer, split into views."""
    ends = xp.cumsum(xp.bincount(ids, minlength=num_partitions))[:-1]
    keys = ids.astype(_key_dtype(xp, num_partitions - 1), copy=False)
    order = xp.argsort(keys, kind="stable")
    grouped = xp.take(rows, order, axis=0)
    return xp.split(grouped, [int(e) for e in ends.tolist()])


def _partition_masked_blocks(
    ctx: KernelContext, rows: np.ndarray, ids: np.ndarray, num_partitions: int
) -> list[Any]:
    """A mask and a gather per partition, block by block (NumPy only).

    Over the whole array, each partition's pass reads every row from memory again; a
    block of about _PARTITION_BLOCK_BYTES stays in cache for all of its passes (16M
    float32 into 8 parts: 53 ms against 77). Each block's pieces go into the block's own
    stretch of one pooled scratch buffer (partition 0's rows first), not into new arrays
    (np.compress's pieces page-faulted on every run: 1400-6800 faults, see the commit).
    Partition k is then the concatenation of its pieces in block order, so the split
    stays stable.
    """
    block = max(1, _PARTITION_BLOCK_BYTES // rows.itemsize)
    scratch = _buffer_like(ctx, rows)

    def split(start: int) -> list[np.ndarray]:
        i, r = ids[start : start + block], rows[start : start + block]
        pieces = []
        for k in range(num_partitions):
            where = np.flatnonzero(i == k)
            piece = scratch[start : start + where.size]
            np.take(r, where, out=piece, mode="clip")  # in range; "raise" takes a copy
            pieces.append(piece)
            start += where.size
        return pieces

    pieces = ctx.parallel_map(split, range(0, max(ids.size, 1), block), rows.nbytes)
    counts = [sum(p[k].shape[0] for p in pieces) for k in range(num_partitions)]
    return _concatenated(ctx, rows, [[p[k] for p in pieces] for k in range(num_partitions)], counts)


def _concatenated(
    ctx: KernelContext, rows: np.ndarray, segments: list[list[np.ndarray]], counts: list[int]
) -> list[np.ndarray]:
    """Partition k as the concatenation of ``segments[k]`` (``counts[k]`` rows in all):
    views of one buffer of the input's size, written on both cores."""
    bounds = [0, *np.cumsum(counts).tolist()]
    out = _buffer_like(ctx, rows)

    def gather(k: int) -> None:
        np.concatenate(segments[k], out=out[bounds[k] : bounds[k + 1]])

    ctx.parallel_map(gather, range(len(segments)), rows.nbytes)
    return np.split(out, bounds[1:-1])


def _partition_blocked(
    ctx: KernelContext, rows: list[np.ndarray], partitions: np.ndarray, num_partitions: int
) -> list[list[Any]]:
    """The counting sort of :func:`_partition_sorted`, block by block (NumPy only), of each
    of ``rows`` (1-D, as long as ``partitions`` has entries) by the same partitions: one
    sort for all of them. It checks that the partitions are in range, block by block
    while they are in cache (a pass over 16M int32 of its own costs 3 ms).

    One sort over all rows gathers from all of memory at random, and its order is a
    fresh 8 bytes a row (see _PARTITION_SORT_ROWS). Each block of _PARTITION_SORT_ROWS
    rows is sorted by partition id on its own (8- or 16-bit keys, a radix argsort) and
    gathered in that order into one scratch buffer, leaving it grouped into one segment
    per partition; partition k is then the concatenation of segment k of every block, in
    block order (so the split stays stable), written into one output buffer. Blocks,
    then partitions, are split over both cores. 16M float32 (min of 7, 2026-12-03): into
    16 parts 95 ms against 147 for one 2-D argsort of 1 MB blocks and a gather (122
    against 146 on one thread); into 8, 75 against 96 for masks by blocks (117
    against 205 on one thread). The sort is about 70% of the work (16M into 8 on one
    thread: 86 ms of 122), so partitions of several arrays by one ids share it.
    """
    ids = partitions.reshape(-1)
    size = ids.size
    blocks = min(-(-size // _PARTITION_SORT_ROWS), _PARTITION_SEGMENTS // num_partitions)
    if blocks < 2:
        check_in_range(ctx.fail, "partitions", partitions, num_partitions)
        return [_partition_sorted(np, r, ids, num_partitions) for r in rows]
    unsigned = ids.view(f"u{ids.itemsize}")  # a negative id is a large unsigned one
    in_range = [True]
    block = -(-size // blocks)
    blocks = -(-size // block)
    key = _key_dtype(np, num_partitions - 1)  # 8 or 16 bits: at most 2**14 partitions here
    probe = np.arange(num_partitions, dtype=key)
    # Where segment (b, k) begins in the scratch buffers; it ends where (b, k + 1) begins.
    begins = np.empty((blocks, num_partitions + 1), np.intp)
    begins[:, num_partitions] = np.minimum(np.arange(1, blocks + 1) * block, size)
    scratches = [_buffer_like(ctx, r) for r in rows]

    def sort_block(b: int) -> None:
        start = b * block
        if int(unsigned[start : start + block].max()) >= num_partitions:
            in_range[0] = False
            return
        keys = ids[start : start + block].astype(key)
        order = np.argsort(keys, kind="stable")
        for r, scratch in zip(rows, scratches):
            # "clip" (the order is in range): with an ``out``, "raise" gathers into a copy.
            np.take(
                r[start : start + block],
                order,
                out=scratch[start : start + keys.size],
                mode="clip",
            )
        begins[b, :num_partitions] = np.searchsorted(keys, probe, sorter=order)
        begins[b, :num_partitions] += start

    ctx.parallel_each(sort_block, blocks, sum(r.nbytes for r in rows))
    if not in_range[0]:
        check_in_range(ctx.fail, "partitions", partitions, num_partitions)  # finds the first
    firsts, lasts = begins[:, :-1].T.tolist(), begins[:, 1:].T.tolist()
    counts = (begins[:, 1:] - begins[:, :-1]).sum(axis=0).tolist()
    return [
        _concatenated(
            ctx,
            r,
            [[scratch[a:z] for a, z in zip(firsts[k], lasts[k])] for k in range(num_partitions)],
            counts,
        )
        for r, scratch in zip(rows, scratches)
    ]


def _partition_masked(
    ctx: KernelContext, rows: np.ndarray, ids: np.ndarray, num_partitions: int
) -> list[np.ndarray]:
    """One mask and one gather of whole rows per partition, no sort (NumPy only, rows of
    more than 8 bytes): each partition is gathered into its place in one buffer of the
    input's size, the partitions on both cores. np.compress would make each partition a
    new array, and page-fault it: 4M rows of 64 bytes into 8, Session runs 79-85 ms
    against 86-90 (about 20 page faults a run against 2700; 2026-12-03). The masks come
    from the pool and give the counts: a bincount cast the ids to a fresh intp array, and
    a mask and its positions freed together made glibc trim each thread's heap (5300 page
    faults a run in a fresh process, see the commit)."""
    masks = [ctx.empty(ids.shape, np.bool_) for _ in range(num_partitions)]

    def mark(k: int) -> int:
        return int(np.count_nonzero(np.equal(ids, k, out=masks[k])))

    counts = ctx.parallel_map(mark, range(num_partitions), ids.nbytes * num_partitions)
    bounds = [0, *np.cumsum(counts).tolist()]
    out = _buffer_like(ctx, rows)
    item = row_element(rows.shape[1] * rows.itemsize)  # one opaque item a row: one move
    src, dst = rows.view(item).reshape(-1), out.view(item).reshape(-1)

    def gather(k: int) -> None:
        where = np.flatnonzero(masks[k])
        np.take(src, where, out=dst[bounds[k] : bounds[k + 1]], mode="clip")  # in range

    ctx.parallel_map(gather, range(num_partitions), rows.nbytes)
    return np.split(out, bounds[1:-1])


def _buffer_like(ctx: KernelContext, rows: np.ndarray) -> np.ndarray:
    """A new buffer of the input's size: no size to check (the input holds as much; each
    partition may be under a Session's cap that the input is over)."""
    return ctx.empty(rows.shape, rows.dtype)


@register_kernel("DynamicPartition", "CPU", "GPU")
def _dynamic_partition_kernel(ctx: KernelContext, data: Any, partitions: Any) -> Any:
    xp = ctx.xp
    n = ctx.attrs["num_partitions"]
    if tuple(data.shape[: partitions.ndim]) != tuple(partitions.shape):
        ctx.fail(
            f"data.shape must start with partitions.shape, got data.shape = "
            f"{shape_str(data.shape)}, partitions.shape = {shape_str(partitions.shape)}"
        )
    extra = tuple(data.shape[partitions.ndim :])
    ids = partitions.reshape(-1)
    rows = as_rows(xp, data, ids.size, math.prod(extra))
    if _sorts_in_blocks(xp, rows, n):
        (parts,) = _partition_blocked(ctx, [rows], partitions, n)  # it checks the ids itself
        return [from_rows(p, data.dtype, extra) for p in parts]
    if xp is not np:
        (parts,) = _partition_device(ctx, [rows], partitions, n)
        return [from_rows(p, data.dtype, extra) for p in parts]
    check_in_range(ctx.fail, "partitions", partitions, n)
    if rows.ndim == 1:
        # Rows of 8 bytes or less into few parts, in blocks; longer ones fill whole cache
        # lines, and there the blocks' extra copy costs more than it saves.
        parts = _partition_masked_blocks(ctx, rows, ids, n)
    elif n <= _MASKED_PARTITIONS and rows.size:
        parts = _partition_masked(ctx, rows, ids, n)
    else:
        parts = _partition_sorted(xp, rows, ids, n)
    return [from_rows(p, data.dtype, extra) for p in parts]


def _partition_device(
    ctx: KernelContext, rows: list[Any], partitions: Any, num_partitions: int
) -> list[list[Any]]:
    """Each of ``rows`` partitioned on a device by one order for all of them: the positions
    of the ids in a stable sort by id, made by counting (cuda_kernels.partition_order, no
    sort), with one device sync for the sizes, as TensorFlow's GPU kernel syncs once. A
    compress per partition would cost a sync each; bad ids are counted on the way, and
    only then looked for (TensorFlow's GPU kernel drops them silently; minigraph fails)."""
    xp = ctx.xp
    order, sizes = partition_order(xp, partitions.reshape(-1), num_partitions)
    if sizes[num_partitions]:
        check_in_range(ctx.fail, "partitions", partitions, num_partitions)  # finds the first
    bounds = np.cumsum(sizes[:-2], dtype=np.int64).tolist()  # the bad ids' count is last
    return [xp.split(xp.take(r, order, axis=0), bounds) for r in rows]


def _sorts_in_blocks(xp: Any, rows: Any, num_partitions: int) -> bool:
    """Whether these rows are partitioned by the blocked counting sort: host rows of 8
    bytes or less (one word each) into more than _MASKED_WORD_PARTITIONS parts."""
    return xp is np and rows.ndim == 1 and num_partitions > _MASKED_WORD_PARTITIONS


@register_shared_kernel("DynamicPartition", 1, ["num_partitions"])
def _dynamic_partition_shared(
    ctx: KernelContext, others: list[list[Any]], partitions: Any
) -> list[list[Any]] | None:
    """Partitions of several data by one partitions tensor (the seed idiom partitions the
    data and ``range(n)`` alike), with one sort for all of them where the kernel would
    sort (:func:`_sorts_in_blocks`). The seed composition (16M float32, 8 parts),
    interleaved Session runs: see the commit. None elsewhere, and where a data's shape is
    wrong: each member's kernel then runs."""
    n = ctx.attrs["num_partitions"]
    datas = [d for (d,) in others]
    if any(tuple(d.shape[: partitions.ndim]) != tuple(partitions.shape) for d in datas):
        return None
    ids = partitions.reshape(-1)
    extras = [tuple(d.shape[partitions.ndim :]) for d in datas]
    rows = [as_rows(ctx.xp, d, ids.size, math.prod(e)) for d, e in zip(datas, extras)]
    if ctx.xp is not np:
        parts = _partition_device(ctx, rows, partitions, n)  # fails as the first member would
        return [[from_rows(p, d.dtype, e) for p in ps] for ps, d, e in zip(parts, datas, extras)]
    if not all(_sorts_in_blocks(ctx.xp, r, n) for r in rows):
        return None
    parts = _partition_blocked(ctx, rows, partitions, n)  # fails as the first member would
    return [[from_rows(p, d.dtype, e) for p in ps] for ps, d, e in zip(parts, datas, extras)]


DynamicPartition = make_wrapper_class(DYNAMIC_PARTITION)
dynamic_partition = make_builder(DYNAMIC_PARTITION, "dynamic_partition")


__all__ = ["DynamicPartition", *BUILDERS]
