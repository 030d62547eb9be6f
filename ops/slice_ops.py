"""Joining and splitting: ConcatV2, Pack (stack), Split, SplitV, Unpack (unstack), Tile and
ReverseV2. (StridedSlice and ``Output[...]`` are in strided_slice_ops; Slice is in
shape_ops.)

Each op stands in one block: declaration, shape function, kernel, builder.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from minigraph import errors
from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.array_ops import identity
from minigraph.ops.common import INDEX_TYPES, axis_value, host_array, shape_str
from minigraph.ops.shape_ops import index_value
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, merge, unknown_shape, with_rank
from minigraph.wrappers import as_output, convert_to_output, make_builder, make_wrapper_class

BUILDERS = (
    "concat",
    "stack",
    "split",
    "unstack",
    "tile",
    "reverse",
)


# -- ConcatV2 -----------------------------------------------------------------------


def _concat_shape(c: InferenceContext, values: list[TensorSpec], axis: TensorSpec) -> TensorShape:
    with_rank(axis.shape, 0)
    known = [v.shape for v in values if v.shape.rank is not None]
    if not known:
        return unknown_shape()
    rank = known[0].rank
    if rank == 0:
        c.fail("Can't concatenate scalars (use stack instead)")
    if axis.value is None:
        out = unknown_shape(rank)
        for s in known:
            with_rank(s, rank)
        return out
    a = axis_value(c, axis.value, rank)
    total: int | None = 0
    rest = unknown_shape(rank)
    for v in values:
        s = with_rank(v.shape, rank)
        rest = merge(rest, TensorShape(s.dims[:a] + (None,) + s.dims[a + 1 :]))
        total = None if total is None or s.dims[a] is None else total + s.dims[a]
    return TensorShape(rest.dims[:a] + (total,) + rest.dims[a + 1 :])


CONCAT = define_op(
    "ConcatV2",
    inputs=["values: N * T", "axis: Tidx"],
    outputs=["output: T"],
    attrs=["N: int >= 2", "T: type", f"Tidx: {INDEX_TYPES} = int32"],
    shape_fn=_concat_shape,
    host_inputs=["axis"],
    doc="Joins tensors along one existing dimension.",
)


@register_kernel("ConcatV2", "CPU", "GPU")
def _concat_kernel(ctx: KernelContext, values: list[Any], axis: Any) -> Any:
    rank = values[0].ndim
    axis = host_array(ctx, axis)
    if axis.ndim != 0:
        ctx.fail(f"Concat dim tensor should be a scalar integer, but got shape {list(axis.shape)}")
    if rank == 0:
        ctx.fail("Can't concatenate scalars (use stack instead)")
    a = axis_value(ctx, axis, rank)
    for i, v in enumerate(values):
        if (
            v.ndim != rank
            or v.shape[:a] + v.shape[a + 1 :] != values[0].shape[:a] + values[0].shape[a + 1 :]
        ):
            ctx.fail(
                f"ConcatOp : Dimension {a} in both shapes must be equal: shape[0] = "
                f"{list(values[0].shape)} vs. shape[{i}] = {list(v.shape)}"
            )
    shape = list(values[0].shape)
    shape[a] = sum(v.shape[a] for v in values)
    out = ctx.allocate(shape, values[0].dtype)
    return ctx.xp.concatenate(values, axis=a, out=out)


ConcatV2 = Concat = make_wrapper_class(CONCAT)
_concat = make_builder(CONCAT, "concat")


def concat(values: Any, axis: Any, name: str = "concat") -> Output:
    """Joins a list of tensors along dimension ``axis``.

    >>> import minigraph as mg
    >>> with mg.Graph().as_default():
    ...     c = mg.concat([[[1, 2]], [[3, 4]]], axis=0)
    >>> c.shape
    TensorShape([2, 2])

    One tensor is returned as it is (an Identity), as TensorFlow's ``tf.concat`` does:
    its ConcatV2 takes two or more.
    """
    values = _as_list(values)
    if isinstance(values, list) and len(values) == 1:
        given = as_output(axis)
        rank = given.shape.rank if given is not None else np.ndim(axis)
        if rank not in (None, 0):
            raise errors.InvalidArgumentError(
                f"Shape must be rank 0 but is rank {rank} for 'axis'", name, "ConcatV2"
            )
        return identity(values[0], name=name)
    return _concat(values, axis, name=name)


def _as_list(values: Any) -> Any:
    """A tuple of inputs as a list; anything else as it is (apply_op says why it is wrong)."""
    return list(values) if isinstance(values, tuple) else values


# -- Pack (stack) ----------------------------------------------------------------------


def _pack_shape(c: InferenceContext, values: list[TensorSpec]) -> TensorShape:
    s = unknown_shape()
    for v in values:
        s = merge(s, v.shape)
    if s.rank is None:
        return s
    a = c.attrs["axis"]
    if not -(s.rank + 1) <= a <= s.rank:
        c.fail(f"Invalid axis: {a}; must be in [{-(s.rank + 1)}, {s.rank + 1})")
    a %= s.rank + 1
    return TensorShape(s.dims[:a] + (len(values),) + s.dims[a:])


PACK = define_op(
    "Pack",
    inputs=["values: N * T"],
    outputs=["output: T"],
    attrs=["N: int >= 1", "T: type", "axis: int = 0"],
    shape_fn=_pack_shape,
    doc="Stacks tensors of one shape along a new dimension ``axis``.",
)


@register_kernel("Pack", "CPU", "GPU")
def _pack_kernel(ctx: KernelContext, values: list[Any]) -> Any:
    first = values[0].shape
    for i, v in enumerate(values):
        if v.shape != first:
            ctx.fail(
                f"Shapes of all inputs must match: values[0].shape = {list(first)} != "
                f"values[{i}].shape = {list(v.shape)}"
            )
    a = ctx.attrs["axis"] % (len(first) + 1)
    shape = list(first[:a]) + [len(values)] + list(first[a:])
    return ctx.xp.stack(values, axis=a, out=ctx.allocate(shape, values[0].dtype))


Pack = make_wrapper_class(PACK)
_pack = make_builder(PACK, "stack")


def stack(values: Any, axis: int = 0, name: str = "stack") -> Output:
    """Stacks a list of same-shaped tensors along a new dimension ``axis``."""
    return _pack(_as_list(values), axis=axis, name=name)


# -- Split, SplitV ----------------------------------------------------------------------


def _split_axis(c: Any, axis: Any, rank: int, kernel: bool) -> int:
    axis = np.asarray(axis)
    if axis.ndim != 0:
        c.fail(f"split_dim must be a scalar, got shape {shape_str(axis.shape)}")
    a = int(axis)
    if not -rank <= a < rank:
        if kernel:
            c.fail(f"-input rank(-{rank}) <= split_dim < input rank ({rank}), but got {a}")
        c.fail(f"Dimension size, given by scalar input {a} must be in range [{-rank}, {rank})")
    return a % rank


def _split_shape(c: InferenceContext, axis: TensorSpec, value: TensorSpec) -> list[TensorShape]:
    with_rank(axis.shape, 0)
    n = c.attrs["num_split"]
    s = value.shape
    if s.rank is None or axis.value is None:
        return [unknown_shape(s.rank)] * n
    a = _split_axis(c, axis.value, s.rank, kernel=False)
    d = s.dims[a]
    if d is not None and d % n:
        c.fail(f"Dimension size must be evenly divisible by {n} but is {d}")
    part = None if d is None else d // n
    return [TensorShape(s.dims[:a] + (part,) + s.dims[a + 1 :])] * n


SPLIT = define_op(
    "Split",
    inputs=["split_dim: int32", "value: T"],
    outputs=["output: num_split * T"],
    attrs=["num_split: int >= 1", "T: type"],
    shape_fn=_split_shape,
    host_inputs=["split_dim"],
    aliases_input=True,
    aliased_input=1,
    doc="Splits ``value`` along ``split_dim`` (the first input; ``tf.raw_ops``: ``axis``) "
    "into ``num_split`` equal pieces.",
)


@register_kernel("Split", "CPU", "GPU")
def _split_kernel(ctx: KernelContext, axis: Any, value: Any) -> list[Any]:
    # A loop body splits values of one shape at one constant axis every step: the pieces'
    # index is the last call's when the axis is the very same array, read-only when the memo
    # took it (its value cannot change, and the memo holds it, so no other array takes its
    # identity).
    last = ctx.memo.get("views")
    if last is not None and last[0] is axis and last[1] == value.shape:
        return [value[ix] for ix in last[2]]
    n = ctx.attrs["num_split"]
    if value.ndim == 0:
        ctx.fail("-input rank(-0) <= split_dim < input rank (0), but got 0")
    a = _split_axis(ctx, host_array(ctx, axis), value.ndim, kernel=True)
    if value.shape[a] % n:
        ctx.fail(
            "Number of ways to split should evenly divide the split dimension, but got "
            f"split_dim {a} (size = {value.shape[a]}) and num_split {n}"
        )
    size = value.shape[a] // n
    bounds = [size * i for i in range(n + 1)]
    if isinstance(axis, np.ndarray) and not _copied(ctx.xp, value, n, a):
        index = _view_index(a, bounds)
        if not axis.flags.writeable:
            ctx.memo["views"] = (axis, value.shape, index)  # one assignment: runs share it
        return [value[ix] for ix in index]
    return _pieces(ctx.xp, value, bounds, a)


Split = make_wrapper_class(SPLIT)
_split = make_builder(SPLIT, "split")


def _split_v_sizes(fail: Any, sizes: list[int], d: int | None) -> list[int | None]:
    """SplitV's size_splits with its one -1 resolved against ``d`` (None if unknown)."""
    neg = [i for i, v in enumerate(sizes) if v == -1]
    if len(neg) > 1:
        fail("There can only be one -1 in the input.")
    for i, v in enumerate(sizes):
        if v < -1:
            fail(f"Split size at index {i} must be >= 0. Got: {v}")
    known = sum(v for v in sizes if v != -1)
    if d is None:
        return [None if v == -1 else v for v in sizes]
    if (not neg and known != d) or (neg and known > d):
        fail(
            "Determined shape must either match input shape along split_dim exactly if fully "
            "specified, or be less than the size of the input along split_dim if not fully "
            f"specified.  Got: {known}"
        )
    return [d - known if v == -1 else v for v in sizes]


def _split_v_shape(
    c: InferenceContext, value: TensorSpec, size_splits: TensorSpec, axis: TensorSpec
) -> list[TensorShape]:
    with_rank(axis.shape, 0)
    ss = with_rank(size_splits.shape, 1)
    n = c.attrs["num_split"]
    if ss[0] is not None and ss[0] != n:
        c.fail(f"Dimension 0 in both shapes must be equal, but are {ss[0]} and {n}.")
    s = value.shape
    if s.rank is None or axis.value is None:
        return [unknown_shape(s.rank)] * n
    a = _split_axis(c, axis.value, s.rank, kernel=False)
    if size_splits.value is None:
        return [TensorShape(s.dims[:a] + (None,) + s.dims[a + 1 :])] * n
    parts = _split_v_sizes(c.fail, size_splits.value.tolist(), s.dims[a])
    return [TensorShape(s.dims[:a] + (p,) + s.dims[a + 1 :]) for p in parts]


SPLIT_V = define_op(
    "SplitV",
    inputs=["value: T", "size_splits: Tlen", "split_dim: int32"],
    outputs=["output: num_split * T"],
    attrs=["num_split: int >= 1", "T: type", "Tlen: {int8, int32, int64} = int64"],
    shape_fn=_split_v_shape,
    host_inputs=["size_splits", "split_dim"],
    aliases_input=True,
    doc="Splits ``value`` along ``split_dim`` (the last input; ``tf.raw_ops``: ``axis``) "
    "into pieces of the sizes in ``size_splits`` (one of them may be -1: the rest).",
)


# A host piece cut along the last axis of a value of this many rows or more is a copy: as a
# view, every ufunc that reads it would call its inner loop once per short row.
_COPIED_MIN_ROWS = 64


def _pieces(xp: Any, value: Any, bounds: list[int], axis: int) -> list[Any]:
    """``value[bounds[i]:bounds[i + 1]]`` along ``axis`` for each i: views (the op declares
    its outputs views of ``value``, so the plan counts their readers together), but for
    pieces of many short rows, which are copied contiguous: as views, every ufunc that reads
    them would call its inner loop once per row (an LSTM cell's four gates at batch 64,
    [64, 256] into 4: a tanh of a [64, 64] view 2.4 µs, of a copy 1.7). Equal pieces are
    copied by one transposing copy ([64, 256] into 4: 2.9 µs; 11.6 as rows moved as opaque
    items, which every NumPy copy here beat)."""
    n = len(bounds) - 1
    copy_rows = _copied(xp, value, n, axis)
    width = bounds[1] - bounds[0]
    if copy_rows and width > 1 and bounds[-1] == n * width and bounds[0] == 0:  # equal pieces
        parts = np.ascontiguousarray(value.reshape(-1, n, width).swapaxes(0, 1))
        return list(parts.reshape(n, *value.shape[:-1], width))
    pieces = [value[ix] for ix in _view_index(axis, bounds)]
    if not copy_rows:
        return pieces
    return [np.ascontiguousarray(p) if 1 < p.shape[-1] < value.shape[-1] else p for p in pieces]


def _copied(xp: Any, value: Any, n: int, axis: int) -> bool:
    """Whether _pieces copies the ``n`` pieces of ``value`` cut along ``axis`` (see there)."""
    return (
        xp is np
        and n > 1
        and axis == value.ndim - 1
        and value.size >= _COPIED_MIN_ROWS * value.shape[-1]
    )


def _view_index(axis: int, bounds: list[int]) -> list[tuple[slice, ...]]:
    """The index of each piece ``bounds[i]:bounds[i + 1]`` along ``axis``."""
    lead = (slice(None),) * axis
    return [(*lead, slice(start, stop)) for start, stop in zip(bounds, bounds[1:])]


@register_kernel("SplitV", "CPU", "GPU")
def _split_v_kernel(ctx: KernelContext, value: Any, size_splits: Any, axis: Any) -> list[Any]:
    split_sizes = host_array(ctx, size_splits)
    sizes = split_sizes.reshape(-1).tolist()
    n = ctx.attrs["num_split"]
    if split_sizes.ndim != 1 or len(sizes) != n:
        ctx.fail(
            "size of the split_tensor must be 1-D and have the same elements as outputs got "
            f"{split_sizes.ndim} -D and {len(sizes)} elements"
        )
    if value.ndim == 0:
        ctx.fail("-input rank(-0) <= split_dim < input rank (0), but got 0")
    a = _split_axis(ctx, host_array(ctx, axis), value.ndim, kernel=True)
    parts = _split_v_sizes(ctx.fail, sizes, value.shape[a])
    return _pieces(ctx.xp, value, [0, *np.cumsum(parts).tolist()], a)


SplitV = make_wrapper_class(SPLIT_V)
_split_v = make_builder(SPLIT_V, "split_v")


def split(
    value: Any,
    num_or_size_splits: Any,
    axis: Any = 0,
    num: int | None = None,
    name: str = "split",
) -> list[Output]:
    """Splits ``value`` along ``axis``: into ``num_or_size_splits`` equal pieces (Split) when
    it is an int, else into pieces of those sizes (SplitV), as ``tf.split``.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     a, b = mg.split([[1, 2, 3], [4, 5, 6]], [1, -1], axis=1)
    >>> mg.Session(g).run(b)
    array([[2, 3],
           [5, 6]], dtype=int32)
    """
    if isinstance(num_or_size_splits, int | np.integer) and not isinstance(
        num_or_size_splits, bool
    ):
        return _split(axis, value, num_split=int(num_or_size_splits), name=name)
    sizes = as_output(num_or_size_splits)
    if sizes is None:
        sizes = np.asarray(num_or_size_splits)
        if sizes.dtype.kind not in "iu":
            raise TypeError(f"size_splits must be integers, got {num_or_size_splits!r}")
        sizes = sizes.astype(np.int64 if sizes.dtype == np.int64 else np.int32)
        n = sizes.size
    elif num is not None:
        n = num
    else:
        dims = sizes.shape.dims
        if dims is None or len(dims) != 1 or dims[0] is None:
            raise ValueError(f"Cannot infer argument `num` from shape {sizes.shape}")
        n = dims[0]
    return _split_v(value, sizes, axis, num_split=int(num if num is not None else n), name=name)


# -- Unpack (unstack) --------------------------------------------------------------------


def _unpack_axis(fail: Any, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        fail(f"axis = {axis} not in [{-rank}, {rank})")
    return axis % rank


def _unpack_shape(c: InferenceContext, value: TensorSpec) -> list[TensorShape]:
    n = c.attrs["num"]
    s = value.shape
    if s.rank is None:
        return [unknown_shape()] * n
    a = _unpack_axis(c.fail, c.attrs["axis"], s.rank)
    if s.dims[a] is not None and s.dims[a] != n:
        c.fail(f"Dimension must be {n} but is {s.dims[a]}")
    return [TensorShape(s.dims[:a] + s.dims[a + 1 :])] * n


UNPACK = define_op(
    "Unpack",
    inputs=["value: T"],
    outputs=["output: num * T"],
    attrs=["num: int >= 0", "T: type", "axis: int = 0"],
    shape_fn=_unpack_shape,
    aliases_input=True,
    doc="Unstacks ``value`` along ``axis`` into ``num`` tensors of one rank less.",
)


@register_kernel("Unpack", "CPU", "GPU")
def _unpack_kernel(ctx: KernelContext, value: Any) -> list[Any]:
    n = ctx.attrs["num"]
    a = _unpack_axis(ctx.fail, ctx.attrs["axis"], value.ndim)
    if value.shape[a] != n:
        ctx.fail(f"Input shape axis {a} must equal {n}, got shape {shape_str(value.shape)}")
    moved = ctx.xp.moveaxis(value, a, 0)
    return [moved[i, ...] for i in builtins.range(n)]  # 0-d arrays, never NumPy scalars


Unpack = make_wrapper_class(UNPACK)
_unpack = make_builder(UNPACK, "unstack")


def unstack(value: Any, num: int | None = None, axis: int = 0, name: str = "unstack") -> list:
    """The tensors of ``value`` along ``axis``, as ``tf.unstack`` (``num`` inferred from the
    static shape when not given).

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     rows = mg.unstack([[1, 2], [3, 4]], axis=1)
    >>> mg.Session(g).run(rows)
    [array([1, 3], dtype=int32), array([2, 4], dtype=int32)]
    """
    if num is None:
        x = convert_to_output(value)
        s = x.shape
        if s.rank is None:
            raise ValueError(f"Cannot infer argument `num` from shape {s}")
        if not -s.rank <= axis < s.rank:
            raise ValueError(f"Argument `axis` = {axis} not in range [{-s.rank}, {s.rank})")
        num = s.dims[axis]
        if num is None:
            raise ValueError(f"Cannot infer argument `num` from shape {s}")
        value = x
    return _unpack(value, num=num, axis=axis, name=name)


# -- Tile ------------------------------------------------------------------------------


def _tile_check(fail: Any, multiples: list[int]) -> None:
    for i, m in enumerate(multiples):
        if m < 0:
            fail(f"Expected multiples[{i}] >= 0, but got {m}")


def _tile_shape(c: InferenceContext, x: TensorSpec, multiples: TensorSpec) -> TensorShape:
    m = with_rank(multiples.shape, 1)
    s = x.shape
    if s.rank is not None and m[0] is not None and m[0] != s.rank:
        c.fail(f"Shape must be rank {m[0]} but is rank {s.rank}")
    rank = s.rank if s.rank is not None else m[0]
    if rank is None:
        return unknown_shape()
    if multiples.value is None:
        return unknown_shape(rank)
    mult = multiples.value.tolist()
    _tile_check(c.fail, mult)
    dims = s.dims if s.rank is not None else (None,) * rank
    return TensorShape([None if d is None else d * k for d, k in zip(dims, mult)])


TILE = define_op(
    "Tile",
    inputs=["input: T", "multiples: Tmultiples"],
    outputs=["output: T"],
    attrs=["T: type", f"Tmultiples: {INDEX_TYPES} = int32"],
    shape_fn=_tile_shape,
    host_inputs=["multiples"],
    doc="``input`` repeated ``multiples[i]`` times along each dimension ``i``.",
)


@register_kernel("Tile", "CPU", "GPU")
def _tile_kernel(ctx: KernelContext, x: Any, multiples: Any) -> Any:
    m = host_array(ctx, multiples)
    if m.ndim != 1 or m.size != x.ndim:
        ctx.fail(
            f"Expected multiples argument to be a vector of length {x.ndim} but got length "
            f"{m.size if m.ndim == 1 else list(m.shape)}"
        )
    mult = m.tolist()
    _tile_check(ctx.fail, mult)
    out = ctx.allocate([d * k for d, k in zip(x.shape, mult)], x.dtype)
    if out.size:
        out[...] = ctx.xp.tile(x, mult) if x.ndim else x
    return out


Tile = make_wrapper_class(TILE)
_tile = make_builder(TILE, "tile")


def tile(input: Any, multiples: Any, name: str | None = None) -> Output:  # noqa: A002
    """``input`` repeated ``multiples[i]`` times along dimension ``i``, as ``tf.tile``.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.tile([[1, 2]], [2, 2])
    >>> mg.Session(g).run(y)
    array([[1, 2, 1, 2],
           [1, 2, 1, 2]], dtype=int32)
    """
    return _tile(input, index_value(multiples), name=name or "Tile")


# -- ReverseV2 -----------------------------------------------------------------------------


def _reverse_axes(fail: Any, axes: list[int], rank: int) -> tuple[int, ...]:
    seen: list[int] = []
    for i, a in enumerate(axes):
        if not -rank <= a < rank:
            fail(f"'axis'[{i}] = {a} is out of valid range [0, {rank - 1}")
        a %= rank
        if a in seen:
            fail(f"axis {a} specified more than once.")
        seen.append(a)
    return tuple(seen)


def _reverse_shape(c: InferenceContext, x: TensorSpec, axis: TensorSpec) -> TensorShape:
    with_rank(axis.shape, 1)
    if x.shape.rank is not None and axis.value is not None:
        _reverse_axes(c.fail, axis.value.tolist(), x.shape.rank)
    return x.shape


REVERSE = define_op(
    "ReverseV2",
    inputs=["tensor: T", "axis: Tidx"],
    outputs=["output: T"],
    attrs=[f"Tidx: {INDEX_TYPES} = int32", "T: type"],
    shape_fn=_reverse_shape,
    host_inputs=["axis"],
    aliases_input=True,
    doc="``tensor`` with the order of its elements reversed along each dimension in ``axis``.",
)


@register_kernel("ReverseV2", "CPU", "GPU")
def _reverse_kernel(ctx: KernelContext, x: Any, axis: Any) -> Any:
    axes = _reverse_axes(ctx.fail, host_array(ctx, axis).reshape(-1).tolist(), x.ndim)
    return ctx.xp.flip(x, axes) if axes else x


ReverseV2 = make_wrapper_class(REVERSE)
_reverse = make_builder(REVERSE, "reverse")


def reverse(tensor: Any, axis: Any, name: str | None = None) -> Output:
    """``tensor`` reversed along each dimension in ``axis``, as ``tf.reverse``.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.reverse([[1, 2, 3], [4, 5, 6]], [-1])
    >>> mg.Session(g).run(y)
    array([[3, 2, 1],
           [6, 5, 4]], dtype=int32)
    """
    return _reverse(tensor, index_value(axis), name=name or "ReverseV2")


__all__ = [
    "ConcatV2",
    "Concat",
    "Pack",
    "Split",
    "SplitV",
    "Unpack",
    "Tile",
    "ReverseV2",
    *BUILDERS,
]
