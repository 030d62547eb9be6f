"""SpaceToBatchND and BatchToSpaceND: blocks of spatial dims moved into the batch and back.

Each op stands in one block: declaration, shape function, CPU kernel, class and
builder. Both kernels write their output once, through a reshaped and transposed
view, instead of padding, transposing and copying (see performance.md).
"""

from __future__ import annotations

import itertools
from typing import Any, NoReturn

import numpy as np

from minigraph import errors
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import host_array, row_element, shape_str
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, merge, with_rank_at_least
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = ("space_to_batch_nd", "batch_to_space_nd")

_INT64_MAX = 2**63 - 1
_INDEX_TYPES = "{int32, int64}"
# A run of positions p = q * block + j is a rectangle (q0, q1, j0, j1) in (q, j).
Rect = tuple[int, int, int, int]


# -- Shared shape-function helpers (TensorFlow's InferenceContext arithmetic) ------


def _too_large(c: InferenceContext, message: str) -> NoReturn:
    """A dim past int64 is an output too large to allocate (semantics.md Part 1)."""
    raise errors.ResourceExhaustedError(message, c.node_name, c.op_type)


def _mul_dim(c: InferenceContext, a: int | None, b: int) -> int | None:
    if a == 0 or b == 1:
        return a
    if b == 0 or a == 1:
        return b
    if a is None:
        return None
    if a * b > _INT64_MAX:
        _too_large(c, f"Negative dimension size caused by overflow when multiplying {a} and {b}")
    return a * b


def _add_dim(c: InferenceContext, a: int | None, b: int) -> int | None:
    if b == 0:
        return a
    if a is None:
        return None
    if a + b > _INT64_MAX:
        _too_large(c, f"Dimension size overflow from adding {a} and {b}")
    return a + b


def _sub_dim(c: InferenceContext, a: int | None, b: int) -> int | None:
    if b == 0 or a is None:
        return a
    if a < b:
        c.fail(f"Negative dimension size caused by subtracting {b} from {a}")
    return a - b


def _div_dim(c: InferenceContext, a: int | None, b: int) -> int | None:
    if b == 1 or a is None:
        return a
    if a % b:
        c.fail(f"Dimension size must be evenly divisible by {b} but is {a}")
    return a // b


def _block_shape_prelude(
    c: InferenceContext, x: TensorSpec, block_shape: TensorSpec, pairs: TensorSpec
) -> tuple[int, TensorShape, list[int] | None, list[list[int]] | None]:
    """Checks shared by both shape functions; returns M, input shape and known values."""
    if block_shape.shape.rank != 1:
        c.fail("block_shape must have rank 1.")
    m = block_shape.shape[0]
    if m is None:
        c.fail("block_shape must have known size.")
    shape = with_rank_at_least(x.shape, m + 1)
    merge(pairs.shape, TensorShape([m, 2]))
    block = None if block_shape.value is None else [int(v) for v in block_shape.value.tolist()]
    values = None if pairs.value is None else pairs.value.reshape(m, 2).tolist()
    return m, shape, block, values


def _spatial_dim(shape: TensorShape, i: int) -> int | None:
    return None if shape.dims is None else shape.dims[i + 1]


def _result(shape: TensorShape, m: int, batch: int | None, spatial: list) -> TensorShape:
    if shape.dims is None:
        return TensorShape(None)
    return TensorShape([batch, *spatial, *shape.dims[m + 1 :]])


# -- Shared kernel helpers ---------------------------------------------------------


def _kernel_prelude(
    ctx: KernelContext, x: Any, block_shape: Any, pairs: Any, what: str
) -> tuple[list[int], list[list[int]], int, int, int]:
    """TensorFlow's checks 1-5: ranks, pair shape, positive blocks and their product.

    Returns (block, pairs, product, lo, hi): dims [lo, hi) are the non-combined
    block dims; the prefix and suffix with block 1 and no padding/crop are moved
    into the batch and depth, as TensorFlow does.
    """
    bs = host_array(ctx, block_shape)
    if bs.ndim != 1:
        ctx.fail(f"block_shape rank should be 1 instead of {bs.ndim}")
    m = bs.shape[0]
    if x.ndim < m + 1:
        ctx.fail(f"input rank should be >= {m + 1} instead of {x.ndim}")
    ps = host_array(ctx, pairs)
    if ps.shape != (m, 2):
        ctx.fail(f"{what} should have shape [{m}, 2] instead of {shape_str(ps.shape)}")
    block = [int(b) for b in bs.tolist()]
    values = ps.tolist()
    product = 1
    for i, b in enumerate(block):
        if b < 1:
            ctx.fail(f"All values in block_shape must be positive, got value, {b} at index {i}.")
        product *= b
        if product > _INT64_MAX:  # TensorFlow's MultiplyWithoutOverflow gives -1
            ctx.fail("Product of block sizes must be positive, got -1")
    lo = 0
    while lo < m and block[lo] == 1 and values[lo] == [0, 0]:
        lo += 1
    hi = m
    while hi > lo and block[hi - 1] == 1 and values[hi - 1] == [0, 0]:
        hi -= 1
    return block, values, product, lo, hi


def _unchanged(ctx: KernelContext, x: Any) -> Any:
    """The input as the output: its own buffer when the executor hands it over, else a copy."""
    if 0 in ctx.forwardable:
        return x
    out = ctx.allocate(x.shape, x.dtype)
    ctx.copy(out, x)
    return out


def _allocate(ctx: KernelContext, shape: list[int], dtype: Any) -> Any:
    """An uninitialised output, ResourceExhaustedError if a dim or its size is too large."""
    for i, d in enumerate(shape):
        if d > _INT64_MAX:
            ctx.fail(
                f"OOM when allocating tensor with shape {shape_str(tuple(shape))}: "
                f"dimension {i} does not fit in int64",
                errors.ResourceExhaustedError,
            )
    return ctx.allocate(shape, dtype)


def _prod(dims: Any) -> int:
    n = 1
    for d in dims:
        n *= int(d)
    return n


def _runs(start: int, length: int, block: int) -> list[Rect]:
    """Positions [start, start + length) of a dim split as p = q * block + j, as rectangles.

    At most three: a partial first row, the full rows, a partial last row; so
    every rectangle has either one row or every column, and the matching
    positions t = p - start form one contiguous slice of length rows * columns.
    """
    if length == 0:
        return []
    end = start + length
    qa, ra = divmod(start, block)
    qz, rz = divmod(end, block)
    if qa == qz:
        return [(qa, qa + 1, ra, rz)]
    out = []
    if ra:
        out.append((qa, qa + 1, ra, block))
        qa += 1
    if qz > qa:
        out.append((qa, qz, 0, block))
    if rz:
        out.append((qz, qz + 1, 0, rz))
    return out


def _gaps(start: int, length: int, block: int, rows: int) -> list[Rect]:
    """The complement of :func:`_runs` in ``rows`` rows: where padding goes."""
    if length == 0:
        return [(0, rows, 0, block)]
    end = start + length
    qa, ra = divmod(start, block)
    qz, rz = divmod(end, block)
    out = [
        (0, qa, 0, block),
        (qa, qa + 1, 0, ra),
        (qz, qz + 1, rz, block),
        (qz + 1, rows, 0, block),
    ]
    return [r for r in out if r[0] < min(r[1], rows) and r[2] < r[3]]


def _split(view: Any, rects: tuple[Rect, ...], starts: list[int], blocks: list[int]) -> Any:
    """``view`` ([n, t_1..t_k, d]) at the positions of these rectangles, each t_i split in two.

    Position t = q * block + j - start; every rectangle has one row or all
    columns, so its positions are one slice, and splitting an axis is always a
    view: writing to the result writes to ``view``.
    """
    index: list[slice] = [slice(None)]
    shape = [view.shape[0]]
    for (q0, q1, j0, j1), start, block in zip(rects, starts, blocks):
        t0 = q0 * block + j0 - start
        index.append(slice(t0, t0 + (q1 - q0) * (j1 - j0)))
        shape += [q1 - q0, j1 - j0]
    shape.append(view.shape[-1])
    return view[(*index, slice(None))].reshape(shape)


def _transposed_index(rects: tuple[Rect, ...]) -> tuple[slice, ...]:
    """The index of these rectangles in a [n, q_1, j_1, .., q_k, j_k, d] view."""
    index = [slice(None)]
    for q0, q1, j0, j1 in rects:
        index += [slice(q0, q1), slice(j0, j1)]
    return (*index, slice(None))


def _as_chunks(xp: Any, *views: Any, words: bool = False) -> tuple[Any, ...]:
    """The views with their last (depth) axis folded into one element of that many bytes,
    or (``words``) into 4-byte words when a depth row is a multiple of 4 bytes past 8,
    other than 16.

    NumPy's strided copy costs about the same per element whatever its size, so
    copying whole depth rows as one element is up to 4x faster for small depths.
    Where the source is read in order and the output written through a transposed
    view (SpaceToBatchND), a ufunc over words (see :func:`_copy`) is faster for rows
    that NumPy has no fixed-size copy for (1, 2, 4, 8 and 16 bytes): [16, 512, 512, d]
    float32 into blocks [2, 4] (min of 5, 2026-12-03), d = 3 / 6 / 8 / 16 / 32: 30 / 36
    / 23 / 67 / 82 ms against 36 / 51 / 29 / 100 / 108 with one element a row; d = 4:
    16-22 against 16-18. For BatchToSpaceND words are slower (66 ms against 46 for
    d = 16). NumPy only: the GPU copies element by element anyway.
    """
    first = views[0]
    nbytes = first.shape[-1] * first.dtype.itemsize
    if xp is not np or nbytes == 0:
        return views
    if first.shape[-1] > 1 and any(v.strides[-1] != v.dtype.itemsize for v in views):
        return views
    if words and nbytes > 8 and nbytes % 4 == 0 and nbytes != 16:
        return tuple(v.view(np.uint32) for v in views)  # NumPy-only (uint reinterpretation)
    chunk = row_element(nbytes)
    return tuple(v.view(chunk) for v in views)  # NumPy-only (void/uint reinterpretation)


def _copy(xp: Any, dst: Any, src: Any, ufunc_up_to: int) -> None:
    """``dst[...] = src`` for [n, q_1, j_1, ..., q_k, j_k, w] views of chunks or words (see
    _as_chunks).

    NumPy's assignment walks in the destination's memory order, one inner loop
    per run of its fastest axis; for small elements that loop is slow, and in
    BatchToSpaceND it is only block_shape[-1] long. A ufunc keeps the axis order
    it is given where the operands disagree, so copying chunks of at most
    ``ufunc_up_to`` bytes with q_k innermost is 1.3-7x faster (measured); rows of
    words are copied by a ufunc in the given order.
    """
    if xp is np and dst.dtype.kind == "u" and dst.shape[-1] > 1:
        np.positive(src, out=dst)  # NumPy-only: order choice
    elif xp is np and dst.dtype.kind == "u" and dst.dtype.itemsize <= ufunc_up_to and dst.ndim > 3:
        q, j = dst.ndim - 3, dst.ndim - 2
        np.positive(src.swapaxes(q, j), out=dst.swapaxes(q, j))  # NumPy-only: order choice
    else:
        dst[...] = src


def _copy_split(ctx: KernelContext, dst: Any, src: Any, ufunc_up_to: int) -> None:
    """:func:`_copy`, in slices of the first axis longer than 1 copied on both cores."""
    axis = next((a for a in range(dst.ndim - 1) if dst.shape[a] > 1), 0)

    def copy(part: slice) -> None:
        index = (slice(None),) * axis + (part,)
        _copy(ctx.xp, dst[index], src[index], ufunc_up_to)

    ctx.parallel_slices(copy, dst.shape[axis], dst.size * dst.itemsize)


def _block_perm(k: int) -> list[int]:
    """[b_1..b_k, n, o_1..o_k, d] -> [n, o_1, b_1, ..., o_k, b_k, d]."""
    return [k, *(a for i in range(k) for a in (k + 1 + i, i)), 2 * k + 1]


# -- SpaceToBatchND ----------------------------------------------------------------


def _space_to_batch_nd_shape(
    c: InferenceContext, x: TensorSpec, block_shape: TensorSpec, paddings: TensorSpec
) -> TensorShape:
    m, shape, block, pads = _block_shape_prelude(c, x, block_shape, paddings)
    batch = None if shape.dims is None else shape.dims[0]
    if block is not None and m > 0:
        for b in block:
            if b < 1:
                c.fail("block_shape must be positive")
            batch = None if batch is None else _mul_dim(c, batch, b)
    elif m > 0:
        batch = None
    spatial: list[int | None] = [None] * m
    if pads is not None:
        for i, (start, end) in enumerate(pads):
            if start < 0 or end < 0:
                c.fail("paddings cannot be negative")
            if block is not None:
                padded = _add_dim(c, _add_dim(c, _spatial_dim(shape, i), start), end)
                spatial[i] = _div_dim(c, padded, block[i])
    return _result(shape, m, batch, spatial)


SPACE_TO_BATCH_ND = define_op(
    "SpaceToBatchND",
    inputs=["input: T", "block_shape: Tblock_shape", "paddings: Tpaddings"],
    outputs=["output: T"],
    attrs=[
        "T: type",
        f"Tblock_shape: {_INDEX_TYPES} = int32",
        f"Tpaddings: {_INDEX_TYPES} = int32",
    ],
    shape_fn=_space_to_batch_nd_shape,
    host_inputs=["block_shape", "paddings"],
    doc="""\
SpaceToBatch for N-D tensors: zero-pads the spatial dims ``[1, ..., M]`` of
``input``, splits them into a grid of blocks of shape ``block_shape`` and
interleaves the positions inside a block into the batch dim (0). In the output,
the spatial dims are positions in the grid; the batch dim combines the position
inside a block with the original batch position. The dims after the first M
spatial dims are never touched. BatchToSpaceND is its inverse. It is what
reduces an atrous (dilated) convolution to a regular one.

Inputs:
- ``input``: any dtype (every numeric dtype and bool), shape
  ``[batch] + spatial_shape + remaining_shape`` with ``len(spatial_shape) == M``.
- ``block_shape``: int32 or int64 ``[M]``, every value >= 1. Host memory.
- ``paddings``: int32 or int64 ``[M, 2]``, every value >= 0;
  ``paddings[i] = [pad_start, pad_end]`` pads input dim ``i + 1``, and
  ``block_shape[i]`` must divide ``input_shape[i + 1] + pad_start + pad_end``.
  Host memory.

Attrs (set from the inputs): ``T``; ``Tblock_shape`` and ``Tpaddings`` in
{int32, int64}, each independent of the other.

Equivalent to:
1. zero-pad dims ``[1, ..., M]`` by ``paddings``, giving ``padded`` of shape
   ``padded_shape``;
2. reshape to ``[batch] + [padded_shape[1] / block_shape[0], block_shape[0], ...,
   padded_shape[M] / block_shape[M-1], block_shape[M-1]] + remaining_shape``;
3. permute to ``block_shape + [batch] + [padded_shape[1] / block_shape[0], ...,
   padded_shape[M] / block_shape[M-1]] + remaining_shape``;
4. reshape to the output shape
   ``[batch * prod(block_shape)] + [padded_shape[1] / block_shape[0], ...,
   padded_shape[M] / block_shape[M-1]] + remaining_shape``.

So output batch index ``((o_0 * b_1 + o_1) * b_2 + ...) * batch + n``, with
``o_i`` the offset inside block dim i. An empty ``block_shape`` (M = 0) or one of
all ones with no padding gives the input unchanged. Unlike TensorFlow, any
number of block dims is allowed.

Shape inference: with constant ``block_shape`` and ``paddings`` the output
shape is known (unknown input dims stay unknown); without them the batch and
spatial dims are unknown and the remaining dims are still known.

Errors (InvalidArgumentError naming the node, at build time when shapes or
constant values prove them, else at run time):
- ``block_shape must have rank 1.`` / ``block_shape rank should be 1 instead of 2``
- ``Shape must be at least rank 3 but is rank 2`` / ``input rank should be >= 3 instead of 2``
- ``paddings should have shape [2, 2] instead of [1,2]`` (at build time the
  shapes are merged: ``Dimension 0 in both shapes must be equal, ...``)
- ``block_shape must be positive`` / ``All values in block_shape must be
  positive, got value, 0 at index 0.``
- ``paddings cannot be negative`` / ``Paddings must be non-negative``
- ``Dimension size must be evenly divisible by 3 but is 2`` /
  ``padded_shape[0]=2 is not divisible by block_shape[0]=3``
- ResourceExhaustedError, before allocating, when the output is too large,
  including ``Negative output dimension size caused by overflow when multiplying
  10 and 3530822107858468864`` (a dim past int64).

Example: input of shape ``[1, 2, 2, 1]``, ``block_shape = [2, 2]``,
``paddings = [[0, 0], [0, 0]]``:

    x = [[[[1], [2]], [[3], [4]]]]

gives shape ``[4, 1, 1, 1]``:

    [[[[1]]], [[[2]]], [[[3]]], [[[4]]]]

```python
>>> import numpy as np, minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.space_to_batch_nd(np.array([[[[1], [2]], [[3], [4]]]]), [2, 2], [[0, 0], [0, 0]])
>>> y.shape
TensorShape([4, 1, 1, 1])
>>> mg.Session(g).run(y).ravel()
array([1, 2, 3, 4])

```
""",
)


@register_kernel("SpaceToBatchND", "CPU", "GPU")
def _space_to_batch_nd_kernel(ctx: KernelContext, x: Any, block_shape: Any, paddings: Any) -> Any:
    block, pads, product, lo, hi = _kernel_prelude(ctx, x, block_shape, paddings, "paddings")
    if lo == hi:
        return _unchanged(ctx, x)
    batch = x.shape[0] * product
    if batch > _INT64_MAX:
        ctx.fail(
            "Negative output dimension size caused by overflow when multiplying "
            f"{x.shape[0]} and {product}",
            errors.ResourceExhaustedError,
        )
    rows = []
    for i in range(lo, hi):
        start, end = pads[i]
        if start < 0 or end < 0:
            ctx.fail("Paddings must be non-negative")
        padded = x.shape[i + 1] + start + end
        if padded % block[i]:
            ctx.fail(f"padded_shape[{i}]={padded} is not divisible by block_shape[{i}]={block[i]}")
        rows.append(padded // block[i])
    out = _allocate(ctx, [batch, *x.shape[1 : lo + 1], *rows, *x.shape[hi + 1 :]], x.dtype)

    # Internal view: [n, s_1..s_k, d] in, [b_1..b_k, n, o_1..o_k, d] out, with the
    # combined prefix in n and the rest in d; the transposed output view indexes
    # the padded input as [n, o_1, b_1, ..., o_k, b_k, d].
    k = hi - lo
    blocks = block[lo:hi]
    starts = [p[0] for p in pads[lo:hi]]
    sizes = list(x.shape[lo + 1 : hi + 1])
    n, depth = _prod(x.shape[: lo + 1]), _prod(x.shape[hi + 1 :])
    src = x.reshape([n, *sizes, depth])
    dst = out.reshape([*blocks, n, *rows, depth]).transpose(_block_perm(k))
    for i in range(k):  # zero only where padding lands
        for gap in _gaps(starts[i], sizes[i], blocks[i], rows[i]):
            index = [slice(None)] * (2 * k + 2)
            index[1 + 2 * i] = slice(gap[0], gap[1])
            index[2 + 2 * i] = slice(gap[2], gap[3])
            dst[tuple(index)] = 0
    # Unaligned padding cuts a dim into up to three rectangles (see _runs); the
    # copies are their products: one when every padding is a multiple of the block.
    dst, src = _as_chunks(ctx.xp, dst, src, words=True)
    for rects in itertools.product(*(_runs(starts[i], sizes[i], blocks[i]) for i in range(k))):
        _copy_split(ctx, dst[_transposed_index(rects)], _split(src, rects, starts, blocks), 4)
    return out


SpaceToBatchND = make_wrapper_class(SPACE_TO_BATCH_ND)
space_to_batch_nd = make_builder(SPACE_TO_BATCH_ND, "space_to_batch_nd")


# -- BatchToSpaceND ----------------------------------------------------------------


def _batch_to_space_nd_shape(
    c: InferenceContext, x: TensorSpec, block_shape: TensorSpec, crops: TensorSpec
) -> TensorShape:
    m, shape, block, cuts = _block_shape_prelude(c, x, block_shape, crops)
    batch = None if shape.dims is None else shape.dims[0]
    if block is not None:
        for b in block:
            if b < 1:
                c.fail("block_shape must be positive")
            batch = None if batch is None else _div_dim(c, batch, b)
    elif m > 0:
        batch = None
    spatial: list[int | None] = [None] * m
    if cuts is not None:
        for i, (start, end) in enumerate(cuts):
            if start < 0 or end < 0:
                c.fail("crops cannot be negative")
            if block is not None:
                full = _mul_dim(c, _spatial_dim(shape, i), block[i])
                spatial[i] = _sub_dim(c, _sub_dim(c, full, start), end)
    return _result(shape, m, batch, spatial)


BATCH_TO_SPACE_ND = define_op(
    "BatchToSpaceND",
    inputs=["input: T", "block_shape: Tblock_shape", "crops: Tcrops"],
    outputs=["output: T"],
    attrs=[
        "T: type",
        f"Tblock_shape: {_INDEX_TYPES} = int32",
        f"Tcrops: {_INDEX_TYPES} = int32",
    ],
    shape_fn=_batch_to_space_nd_shape,
    host_inputs=["block_shape", "crops"],
    doc="""\
BatchToSpace for N-D tensors, the inverse of SpaceToBatchND: reshapes the batch
dim (0) into ``block_shape + [batch / prod(block_shape)]``, interleaves those
block positions back into the spatial dims ``[1, ..., M]``, then crops each
spatial dim by ``crops``. The dims after the first M spatial dims are never
touched.

Inputs:
- ``input``: any dtype (every numeric dtype and bool), shape
  ``[batch] + spatial_shape + remaining_shape`` with ``len(spatial_shape) == M``;
  ``batch`` must be divisible by ``prod(block_shape)``.
- ``block_shape``: int32 or int64 ``[M]``, every value >= 1. Host memory.
- ``crops``: int32 or int64 ``[M, 2]``, every value >= 0;
  ``crops[i] = [crop_start, crop_end]`` crops output dim ``i + 1``, and
  ``crop_start + crop_end <= input_shape[i + 1] * block_shape[i]``. Host memory.

Attrs (set from the inputs): ``T``; ``Tblock_shape`` and ``Tcrops`` in
{int32, int64}, each independent of the other.

Equivalent to:
1. reshape to ``block_shape + [batch / prod(block_shape)] + input_shape[1:]``;
2. permute to ``[batch / prod(block_shape), input_shape[1], block_shape[0], ...,
   input_shape[M], block_shape[M-1]] + remaining_shape``;
3. reshape to ``[batch / prod(block_shape), input_shape[1] * block_shape[0], ...,
   input_shape[M] * block_shape[M-1]] + remaining_shape``;
4. crop: output dim ``i + 1`` is ``input_shape[i + 1] * block_shape[i] -
   crop_start - crop_end``.

An empty ``block_shape`` (M = 0) or one of all ones with no crops gives the input
unchanged. Cropping everything is allowed (a dim of size 0). Unlike TensorFlow,
any number of block dims is allowed and every block value must be >= 1
(TensorFlow checks only their product, which may wrap around); a product past
int64 is reported as ``Product of block sizes must be positive, got -1``.

Shape inference: with constant ``block_shape`` and ``crops`` the output shape is
known (unknown input dims stay unknown); without them the batch and spatial dims
are unknown and the remaining dims are still known.

Errors (InvalidArgumentError naming the node, at build time when shapes or
constant values prove them, else at run time):
- ``block_shape must have rank 1.`` / ``block_shape rank should be 1 instead of 2``
- ``Shape must be at least rank 3 but is rank 2`` / ``input rank should be >= 3 instead of 2``
- ``crops should have shape [2, 2] instead of [1,2]``
- ``block_shape must be positive`` / ``All values in block_shape must be
  positive, got value, -1 at index 0.``
- ``Dimension size must be evenly divisible by 2 but is 3`` /
  ``Input batch dimension (3) is not divisible by product of block sizes (6)``
- ``crops cannot be negative`` / ``Crops must be non-negative``
- ``Negative dimension size caused by subtracting 2 from 1`` /
  ``cropped_shape[0]=-1 must be non-negative``
- ResourceExhaustedError, before allocating, when the output is too large.

Example: the output of SpaceToBatchND's example, shape ``[4, 1, 1, 1]``
``[[[[1]]], [[[2]]], [[[3]]], [[[4]]]]`` with ``block_shape = [2, 2]`` and
``crops = [[0, 0], [0, 0]]`` gives back shape ``[1, 2, 2, 1]``:

    [[[[1], [2]], [[3], [4]]]]

```python
>>> import numpy as np, minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.batch_to_space_nd(np.array([[[[1]]], [[[2]]], [[[3]]], [[[4]]]]), [2, 2],
...                              [[0, 0], [0, 0]])
>>> y.shape
TensorShape([1, 2, 2, 1])
>>> mg.Session(g).run(y).ravel()
array([1, 2, 3, 4])

```
""",
)


@register_kernel("BatchToSpaceND", "CPU", "GPU")
def _batch_to_space_nd_kernel(ctx: KernelContext, x: Any, block_shape: Any, crops: Any) -> Any:
    block, cuts, product, lo, hi = _kernel_prelude(ctx, x, block_shape, crops, "crops")
    if x.shape[0] % product:
        ctx.fail(
            f"Input batch dimension ({x.shape[0]}) is not divisible by product of block "
            f"sizes ({product})"
        )
    if lo == hi:
        return _unchanged(ctx, x)
    sizes = list(x.shape[lo + 1 : hi + 1])
    cropped = []
    for i in range(lo, hi):
        start, end = cuts[i]
        if start < 0 or end < 0:
            ctx.fail("Crops must be non-negative")
        size = x.shape[i + 1] * block[i] - start - end
        if size < 0:
            ctx.fail(f"cropped_shape[{i}]={size} must be non-negative")
        cropped.append(size)
    batch = x.shape[0] // product
    out = _allocate(ctx, [batch, *x.shape[1 : lo + 1], *cropped, *x.shape[hi + 1 :]], x.dtype)

    # Internal view: [b_1..b_k, n, s_1..s_k, d] in, transposed to the uncropped
    # output [n, s_1, b_1, ..., s_k, b_k, d]; out is [n, c_1..c_k, d].
    k = hi - lo
    blocks = block[lo:hi]
    starts = [c[0] for c in cuts[lo:hi]]
    n, depth = batch * _prod(x.shape[1 : lo + 1]), _prod(x.shape[hi + 1 :])
    src = x.reshape([*blocks, n, *sizes, depth]).transpose(_block_perm(k))
    dst, src = _as_chunks(ctx.xp, out.reshape([n, *cropped, depth]), src)
    for rects in itertools.product(*(_runs(starts[i], cropped[i], blocks[i]) for i in range(k))):
        _copy_split(ctx, _split(dst, rects, starts, blocks), src[_transposed_index(rects)], 8)
    return out


BatchToSpaceND = make_wrapper_class(BATCH_TO_SPACE_ND)
batch_to_space_nd = make_builder(BATCH_TO_SPACE_ND, "batch_to_space_nd")


__all__ = ["SpaceToBatchND", "BatchToSpaceND", *BUILDERS]
