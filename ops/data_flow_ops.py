"""DynamicStitch, ParallelDynamicStitch and DynamicPartition: interleaving and splitting rows.

Each op stands in one block: declaration, shape function, CPU kernel, class and
builder. Both kernels move whole rows (the dims after the index dims) and view a
row of 1, 2, 4 or 8 bytes as one unsigned word, since NumPy's 1-D gathers and
scatters are several times faster than its row-wise ones (DynamicStitch moves
other rows as one opaque item each, for the same reason). Index arrays are cast
to intp before indexing (a cache-sized chunk at a time while no index repeats):
NumPy indexes with int32 arrays 2-3x slower (it converts them in small buffers).
Duplicates in DynamicStitch are resolved explicitly (the later (m, i) wins), since
NumPy and CuPy leave the winner of a repeated-index assignment undefined.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import numpy as np

from minigraph.cupy_limits import has_atomic_at
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import (
    WORDS,
    check_in_range,
    host_array,
    put_rows,
    row_element,
    shape_str,
)
from minigraph.ops.cuda_kernels import stitch_rows
from minigraph.ops.duplicates import occurrences, positions, winners
from minigraph.registry import (
    define_op,
    register_input_facts,
    register_kernel,
    register_shared_kernel,
)
from minigraph.shapes import TensorShape, merge, merge_prefix, unknown_shape
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = ("dynamic_stitch", "parallel_dynamic_stitch", "dynamic_partition")

Fail = Callable[[str], NoReturn]

# A row of this many bytes moves as one unsigned word.


# -- Shared helpers -------------------------------------------------------------------


def _prod(dims: tuple[int, ...]) -> int:
    n = 1
    for d in dims:
        n *= int(d)
    return n


def _rows(xp: Any, x: Any, n: int, row: int) -> Any:
    """``x`` as ``n`` rows: one unsigned word per row when a row is 1, 2, 4 or 8 bytes, else
    an ``[n, row]`` array. The word view makes gathers and scatters 1-D, 2-5x faster."""
    rows = xp.ascontiguousarray(x).reshape(n, row)
    word = WORDS.get(row * rows.itemsize)
    return rows if word is None else rows.view(word).reshape(n)


def _unrows(rows: Any, dtype: Any, extra: tuple[int, ...]) -> Any:
    """The inverse of :func:`_rows`: ``len(rows)`` rows of shape ``extra`` and ``dtype``."""
    return rows.view(dtype).reshape((rows.shape[0], *extra))


# -- DynamicStitch / ParallelDynamicStitch ---------------------------------------------


def _stitch_first_dim(fail: Fail, indices: list[np.ndarray]) -> int:
    """``max(indices) + 1`` (0 when all are empty); fails on the first index out of range.

    Python ints, so index 2**31 - 1 gives 2**31 rows (TensorFlow's int32 wraps).
    Lists in order, each in flat order, as TensorFlow; only a negative index
    can be out of range, since the range ends at the maximum.
    """
    # One pass per list in the common case: as unsigned, a negative index is the largest.
    tops = [int(i.view(np.uint32).max()) for i in indices if i.size]
    if all(t < 2**31 for t in tops):
        return 1 + max(tops, default=-1)
    first_dim = 1 + max((int(i.max()) for i in indices if i.size), default=-1)
    for m, i in enumerate(indices):
        if i.size and int(i.min()) < 0:
            flat = i.reshape(-1)
            pos = int((flat < 0).argmax())
            fail(f"indices[{m}][{pos}] = {int(flat[pos])} is out of range [0, {first_dim})")
    return first_dim


def _dynamic_stitch_shape(
    c: InferenceContext, indices: list[TensorSpec], data: list[TensorSpec]
) -> TensorShape:
    extra = unknown_shape()
    for i, d in zip(indices, data):
        if i.shape.rank is None:
            continue
        extra = merge(extra, merge_prefix(d.shape, i.shape))
    if any(i.value is None for i in indices):
        return TensorShape([None]).concatenate(extra)
    # Every index is a constant: the size is known, and a bad index is a bad graph.
    first_dim = _stitch_first_dim(c.fail, [i.value for i in indices])  # type: ignore[misc]
    return TensorShape([first_dim]).concatenate(extra)


_STITCH_DOC = """
Interleaves the values of the ``data`` tensors into one tensor:

    merged[indices[m][i, ..., j], ...] = data[m][i, ..., j, ...]

Each ``indices[m]`` may be a scalar or have any rank; ``data[m].shape`` must start
with ``indices[m].shape``, and the rest of it (``constant``) must be the same for
every m. The output shape is ``[max(indices) + 1] + constant`` (``[0] + constant``
when every ``indices[m]`` is empty). Rows that no index names are zero (``False``
for bool). When an index appears more than once, the later (m, i) in list order,
then flat order, wins, deterministically on every device.{parallel}

Inputs:
- ``indices``: a list of N >= 1 int32 tensors (int64 is rejected), each index in
  ``[0, max(indices)]``, so none may be negative. On a GPU they stay in device
  memory (TensorFlow's are host memory there): one sync brings back the output size.
- ``data``: a list of N tensors of one dtype ``T`` (every numeric dtype and bool),
  ``data[m].shape = indices[m].shape + constant``.

Attrs (set from the inputs): ``N``, the list length; ``T``.

Shape inference: ``constant`` comes from the data shapes (merged across m); dim 0
is known when every ``indices[m]`` is a constant, else unknown.

Errors (InvalidArgumentError naming the node, at build time when shapes or
constant values prove them, else at run time; index errors come before shape
errors at run time, as in TensorFlow):
- ``List argument 'data' to 'DynamicStitch' Op with length 3 must match length 2
  of argument 'indices'.``
- ``cannot compute DynamicStitch as input #0(zero-based) was expected to be a
  int32 tensor but is a int64 tensor``
- ``indices[1][3] = -1 is out of range [0, 5)``: list 1, flat position 3 of that
  tensor; the first bad index is reported.
- ``Dimensions must be equal, but are 2 and 3`` / ``data[0].shape = [2] does not
  start with indices[0].shape = [3]``
- ``Dimension 0 in both shapes must be equal, but are 1 and 2. Shapes are [1] and
  [2].`` / ``Need data[0].shape[1:] = data[1].shape[1:], got data[0].shape = [3,1],
  data[1].shape = [4,2], indices[0].shape = [3], indices[1].shape = [4]``
- ResourceExhaustedError, before allocating, when the output is too large.

Unlike TensorFlow, minigraph counts rows in int64 (index ``2**31 - 1`` gives
``2**31`` rows instead of an error) and rejects negative constant indices at
build time (TensorFlow's shape function returns 0 rows for them).

Example (TensorFlow's):

    indices[0] = 6
    indices[1] = [4, 1]
    indices[2] = [[5, 2], [0, 3]]
    data[0] = [61, 62]
    data[1] = [[41, 42], [11, 12]]
    data[2] = [[[51, 52], [21, 22]], [[1, 2], [31, 32]]]
    merged = [[1, 2], [11, 12], [21, 22], [31, 32], [41, 42],
              [51, 52], [61, 62]]

It merges the partitions that DynamicPartition makes; here it adds 1 to the
elements of ``x`` that are not -1 and leaves the others as they were:

    x = [0.1, -1., 5.2, 4.3, -1., 7.4]
    mask = cast(not_equal(x, -1.), int32)
    parts = dynamic_partition(x, mask, 2)
    parts[1] = parts[1] + 1.
    positions = dynamic_partition(range(shape(x)[0]), mask, 2)
    x = dynamic_stitch(positions, parts)     # [1.1, -1., 6.2, 5.3, -1., 8.4]

>>> import minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.{builder}([[0, 4], [1, 0]], [[1.5, 2.5], [3.5, 9.5]])
>>> y.shape
TensorShape([5])
>>> mg.Session(g).run(y)
array([9.5, 3.5, 0. , 0. , 2.5], dtype=float32)
"""

_STITCH_ARGS = dict(
    inputs=["indices: N * int32", "data: N * T"],
    outputs=["merged: T"],
    attrs=["N: int >= 1", "T: type"],
    shape_fn=_dynamic_stitch_shape,
)

DYNAMIC_STITCH = define_op(
    "DynamicStitch",
    doc=_STITCH_DOC.format(parallel="", builder="dynamic_stitch"),
    **_STITCH_ARGS,  # type: ignore[arg-type]
)
PARALLEL_DYNAMIC_STITCH = define_op(
    "ParallelDynamicStitch",
    doc=_STITCH_DOC.format(
        parallel="\n\nParallelDynamicStitch is DynamicStitch under another name: TensorFlow\n"
        "leaves its duplicates undefined, minigraph runs the same kernel, so the later\n"
        "(m, i) wins here too. (TensorFlow's ParallelDynamicStitch doc still says\n"
        "``[max(indices)]`` rows; its kernel, like this one, gives ``max(indices) + 1``.)",
        builder="parallel_dynamic_stitch",
    ),
    **_STITCH_ARGS,  # type: ignore[arg-type]
)


def _stitch_check_shapes(ctx: KernelContext, indices: list[Any], data: list[Any]) -> None:
    """TensorFlow's run-time checks: data[m] starts with indices[m], same rest for every m."""
    i0, d0 = indices[0], data[0]
    for m, (i, d) in enumerate(zip(indices, data)):
        if tuple(d.shape[: i.ndim]) != tuple(i.shape) or d.ndim < i.ndim:
            ctx.fail(
                f"data[{m}].shape = {shape_str(d.shape)} does not start with "
                f"indices[{m}].shape = {shape_str(i.shape)}"
            )
        if m and tuple(d.shape[i.ndim :]) != tuple(d0.shape[i0.ndim :]):
            ctx.fail(
                f"Need data[0].shape[{i0.ndim}:] = data[{m}].shape[{i.ndim}:], got "
                f"data[0].shape = {shape_str(d0.shape)}, data[{m}].shape = {shape_str(d.shape)}, "
                f"indices[0].shape = {shape_str(i0.shape)}, "
                f"indices[{m}].shape = {shape_str(i.shape)}"
            )


# Indices are cast to intp this many at a time (NumPy indexes with intp 2-3x faster than
# with int32), into one buffer that stays in cache: a cast copy of every index at once
# would be 8 bytes an index of fresh memory. The seed composition's stitch (16M float32
# from 8 lists): 74 ms against 93 with one cast of all indices (min of 7, 2026-12-03).
_STITCH_CHUNK = 1 << 16


def _intp_chunks(i: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """``(start, flat[start : start + _STITCH_CHUNK] as intp)`` over ``i`` flattened, each
    in the same buffer (use one before asking for the next)."""
    flat = i.reshape(-1)
    buf = np.empty(min(_STITCH_CHUNK, flat.size), np.intp)
    for start in range(0, flat.size, _STITCH_CHUNK):
        part = buf[: min(_STITCH_CHUNK, flat.size - start)]
        part[...] = flat[start : start + part.size]
        yield start, part


def _each_chunk(
    ctx: KernelContext,
    host: list[np.ndarray],
    work_bytes: int,
    fn: Callable[[int, int, np.ndarray], None],
) -> None:
    """``fn(m, start, part)`` for every chunk of every list, ``part`` being list m's indices
    from ``start`` as intp (see :func:`_intp_chunks`), each chunk taken by whichever core
    is free: lists of unequal length (or a core the machine holds up) no longer leave one
    core the longest. ``fn`` must write disjoint memory. A stitch of 8 lists of 512K and
    one of 4M rows of 64 bytes, the long one winning every row: 123-142 -> 103-125 ms
    with equal runs of chunks per core (interleaved, 5 best of 7); the parallel stitch
    case then 78-90 -> 63-84 ms with chunks taken as the cores free up."""
    chunks = [
        (m, start, min(_STITCH_CHUNK, i.size - start))
        for m, i in enumerate(host)
        for start in range(0, i.size, _STITCH_CHUNK)
    ]
    buffers = threading.local()  # one cast buffer per thread

    def run(c: int) -> None:
        buf = getattr(buffers, "intp", None)
        if buf is None:
            buf = buffers.intp = np.empty(_STITCH_CHUNK, np.intp)
        m, start, size = chunks[c]
        part = buf[:size]
        part[...] = host[m].reshape(-1)[start : start + size]
        fn(m, start, part)

    ctx.parallel_each(run, len(chunks), work_bytes)


def _stitch_distinct(ctx: KernelContext, indices: list[np.ndarray], first_dim: int) -> int:
    """How many distinct indices there are: one boolean scatter, cheaper than sorting.

    The lists mark on both cores: two threads writing True to one byte agree. 8 lists of
    4M indices in all: 6.4 ms against 10.5 on one thread (min of 11, 2026-12-03)."""
    seen = ctx.empty((first_dim,), np.bool_, fill=False)

    def mark(m: int, start: int, part: np.ndarray) -> None:
        seen[part] = True

    _each_chunk(ctx, indices, 8 * sum(i.size for i in indices), mark)
    return int(np.count_nonzero(seen))


@register_kernel("DynamicStitch", "CPU", "GPU")
@register_kernel("ParallelDynamicStitch", "CPU", "GPU")
def _dynamic_stitch_kernel(ctx: KernelContext, indices: list[Any], data: list[Any]) -> Any:
    xp = ctx.xp
    if xp is not np:
        return _stitch_on_device(ctx, indices, data)
    host = [host_array(ctx, i) for i in indices]
    first_dim = _stitch_first_dim(ctx.fail, host)
    _stitch_check_shapes(ctx, host, data)
    extra = tuple(data[0].shape[host[0].ndim :])
    dtype = data[0].dtype
    ctx.check_size((first_dim, *extra), dtype)
    row = _prod(extra)
    if first_dim == 0 or row == 0:
        return ctx.allocate((first_dim, *extra), dtype, fill=0)
    rows = [_rows(xp, d, i.size, row) for i, d in zip(host, data)]
    sizes = [i.size for i in host]
    distinct = ctx.attrs.get(_DISTINCT, False) or (
        sum(sizes) <= first_dim and _stitch_distinct(ctx, host, first_dim) == sum(sizes)
    )
    # Each list straight into the output: about 2x faster than an inverse map, then
    # a concatenation of the data and one gather. Where an index repeats, only the
    # (m, i) that wins it is written, so every output row is written once. Rows that
    # no index names stay zero; zeroed memory costs no more than empty memory.
    if distinct:
        fill = 0 if sum(sizes) < first_dim else None
        out = ctx.allocate((first_dim, *rows[0].shape[1:]), rows[0].dtype, fill=fill)

        def put(m: int, start: int, part: np.ndarray) -> None:  # no two write one row
            put_rows(out, part, rows[m][start : start + part.size])

        _each_chunk(ctx, host, out.nbytes, put)
        return _unrows(out, dtype, extra)
    # Some index repeats (more indices than rows say so without a look: 8 lists of 4M
    # rows of 64 bytes with repeats, 196 ms against 228 with a look). Each index has one
    # winner: found, and its row written, chunk by chunk where positions fit 32 bits.
    out = ctx.allocate((first_dim, *rows[0].shape[1:]), rows[0].dtype, fill=0)
    if sum(sizes) >= 2**32 or not _stitch_winners_in_chunks(ctx, out, host, rows):
        _stitch_winners(ctx, out, host, rows)
    return _unrows(out, dtype, extra)


def _stitch_winners_in_chunks(
    ctx: KernelContext, out: np.ndarray, host: list[np.ndarray], rows: list[np.ndarray]
) -> bool:
    """Writes each index's last (m, i) row into ``out``, a chunk of indices at a time.

    A table over the output rows takes every position in (m, i) order; NumPy writes in
    order, so each named row's entry is its last position, and a row is written by the
    (m, i) whose position it holds. No two lists write the same row, so they go on both
    cores. False, with some rows written, if NumPy's writes were out of order after all.
    No index array of all lists, no array of every position: 8 lists of 4M rows of 64
    bytes with repeats take 141-168 ms against 165-205 (min of 9, 2026-12-03).
    """
    table = ctx.empty(out.shape[:1], np.uint32)  # only the rows that an index names are read
    offsets = [0, *np.cumsum([i.size for i in host]).tolist()]

    def positions(m: int, start: int, size: int) -> np.ndarray:
        first = offsets[m] + start
        return np.arange(first, first + size, dtype=np.uint32)

    for m, i in enumerate(host):  # in order: the later position lands last
        for start, part in _intp_chunks(i):
            table[part] = positions(m, start, part.size)
    in_order = [True]

    def put(m: int, start: int, part: np.ndarray) -> None:  # the chunk's winning rows
        pos = positions(m, start, part.size)
        named = table[part]
        if (named < pos).any():
            in_order[0] = False
        keep = np.flatnonzero(named == pos)
        if keep.size == part.size:
            put_rows(out, part, rows[m][start : start + part.size])
        elif keep.size:
            put_rows(out, part[keep], rows[m][start + keep])

    _each_chunk(ctx, host, out.nbytes, put)
    return in_order[0]


def _stitch_winners(
    ctx: KernelContext, out: np.ndarray, host: list[np.ndarray], rows: list[np.ndarray]
) -> None:
    """Writes each index's last (m, i) row into ``out``, from :func:`occurrences` over all
    indices at once (as intp, in one buffer: one cast instead of N)."""
    flat = np.concatenate([i.reshape(-1) for i in host], dtype=np.intp)
    sizes = [i.size for i in host]
    ends = np.cumsum(sizes).tolist()
    wins = occurrences(np, flat, out.shape[0], last=True, empty=ctx.empty)

    def put(m: int) -> None:  # list m's winning rows; no two lists write the same row
        end, size = ends[m], sizes[m]
        i, r = flat[end - size : end], rows[m]
        if wins is not None:
            keep = np.flatnonzero(wins[end - size : end])
            if keep.size < size:
                i, r = i[keep], r[keep]
        if i.size:
            put_rows(out, i, r)

    ctx.parallel_map(put, range(len(host)), out.nbytes)


def _stitch_on_device(ctx: KernelContext, indices: list[Any], data: list[Any]) -> Any:
    """The GPU's stitch: indices stay on the device, one sync for the output size.

    The indices' minimum and maximum come back together (a negative one: the host check
    names it, as on the CPU). Unless the indices are known distinct, a table over the output
    rows takes each index's last position (1-based) by an integer atomic max, the same in
    any order; then each list writes only the rows it wins (cuda_kernels.stitch_rows), so
    no row is written twice. Rows that no index names stay zero.
    """
    xp = ctx.xp
    flat = [i.reshape(-1) for i in indices]
    sizes = [i.size for i in flat]
    total = sum(sizes)
    every = xp.concatenate(flat)
    low, top = 0, -1
    if total:
        low, top = (int(v) for v in xp.asnumpy(xp.stack([every.min(), every.max()])))
    if low < 0:
        _stitch_first_dim(ctx.fail, [xp.asnumpy(i) for i in indices])  # raises, naming it
    first_dim = top + 1
    _stitch_check_shapes(ctx, indices, data)
    extra = tuple(data[0].shape[indices[0].ndim :])
    dtype = data[0].dtype
    ctx.check_size((first_dim, *extra), dtype)
    if first_dim == 0 or _prod(extra) == 0:
        return ctx.allocate((first_dim, *extra), dtype, fill=0)
    distinct = ctx.attrs.get(_DISTINCT, False)
    out = ctx.empty((first_dim, *extra), dtype, fill=None if distinct and total == first_dim else 0)
    table = None
    if not distinct:
        pos = positions(xp, total + 1)
        table = xp.zeros(first_dim, pos.dtype)
        if has_atomic_at("maximum", pos.dtype, max(first_dim, total)):
            xp.maximum.at(table, every, pos[1:])
        else:  # past CuPy 13's int32 extents: sort; every write to a row writes its winner
            table[every] = winners(xp, every, first_dim, last=True).astype(pos.dtype) + 1
    first = 0
    for i, d, n in zip(flat, data, sizes):
        rows = xp.ascontiguousarray(d).reshape((n, *extra))
        stitch_rows(xp, out, i, rows, n, table, first)
        first += n
    return out


# The attr the input-facts pass sets on a stitch whose indices cannot repeat.
_DISTINCT = "_distinct_indices"


@register_input_facts("DynamicStitch")
@register_input_facts("ParallelDynamicStitch")
def _stitch_input_facts(step: Any, producer: Callable[[int], Any]) -> dict[str, bool] | None:
    """Indices that are distinct outputs of one DynamicPartition of an integer Range,
    maybe reshaped (the seed idiom, and DynamicPartition's gradient), never repeat: the
    kernel need not look for repeats (16M indices: 32 ms)."""

    def made_by(slot: int) -> Any:  # through host-to-device copies (indices on a GPU)
        made = producer(slot)
        while made is not None and made[0].op_def.name == "_Copy":
            made = producer(made[0].inputs[0])
        return made

    made = [made_by(s) for s in step.inputs[: step.input_lengths[0]]]
    if not made or None in made or len({id(p) for p, _ in made}) != 1:
        return None
    partition = made[0][0]
    if partition.op_def.name != "DynamicPartition" or len({i for _, i in made}) < len(made):
        return None
    source = producer(partition.inputs[0])
    while source is not None and source[0].op_def.name == "Reshape":  # same values
        source = producer(source[0].inputs[0])
    if source is None or source[0].op_def.name != "Range":
        return None
    return {_DISTINCT: True} if source[0].specs[0].dtype.is_integer else None


DynamicStitch = make_wrapper_class(DYNAMIC_STITCH)
ParallelDynamicStitch = make_wrapper_class(PARALLEL_DYNAMIC_STITCH)
dynamic_stitch = make_builder(DYNAMIC_STITCH, "dynamic_stitch")
parallel_dynamic_stitch = make_builder(PARALLEL_DYNAMIC_STITCH, "parallel_dynamic_stitch")


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
    rows = _rows(xp, data, ids.size, _prod(extra))
    if _sorts_in_blocks(xp, rows, n):
        (parts,) = _partition_blocked(ctx, [rows], partitions, n)  # it checks the ids itself
        return [_unrows(p, data.dtype, extra) for p in parts]
    check_in_range(ctx.fail, "partitions", partitions, n)
    if xp is not np:
        # One sort on the GPU: a compress per partition would cost a device sync each.
        parts = _partition_sorted(xp, rows, ids, n)
    elif rows.ndim == 1:
        # Rows of 8 bytes or less into few parts, in blocks; longer ones fill whole cache
        # lines, and there the blocks' extra copy costs more than it saves.
        parts = _partition_masked_blocks(ctx, rows, ids, n)
    elif n <= _MASKED_PARTITIONS and rows.size:
        parts = _partition_masked(ctx, rows, ids, n)
    else:
        parts = _partition_sorted(xp, rows, ids, n)
    return [_unrows(p, data.dtype, extra) for p in parts]


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
    rows = [_rows(ctx.xp, d, ids.size, _prod(e)) for d, e in zip(datas, extras)]
    if not all(_sorts_in_blocks(ctx.xp, r, n) for r in rows):
        return None
    parts = _partition_blocked(ctx, rows, partitions, n)  # fails as the first member would
    return [[_unrows(p, d.dtype, e) for p in ps] for ps, d, e in zip(parts, datas, extras)]


DynamicPartition = make_wrapper_class(DYNAMIC_PARTITION)
dynamic_partition = make_builder(DYNAMIC_PARTITION, "dynamic_partition")


__all__ = ["DynamicStitch", "ParallelDynamicStitch", "DynamicPartition", *BUILDERS]
