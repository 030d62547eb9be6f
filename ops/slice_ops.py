"""Joining and slicing: ConcatV2, Pack (stack) and StridedSlice (``Output[...]``).

Each op stands in one block: declaration, shape function, kernel, builder.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from minigraph.graph import Output, register_operator
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.array_ops import identity
from minigraph.ops.common import INDEX_TYPES, axis_value, host_array
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, merge, unknown_shape, with_rank
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = ("concat", "stack", "strided_slice")


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
    attrs=["N: int >= 1", "T: type", f"Tidx: {INDEX_TYPES} = int32"],
    shape_fn=_concat_shape,
    host_inputs=["axis"],
    doc="Joins tensors along one existing dimension.",
)


@register_kernel("ConcatV2", "CPU", "GPU")
def _concat_kernel(ctx: KernelContext, values: list[Any], axis: Any) -> Any:
    rank = values[0].ndim
    if rank == 0:
        ctx.fail("Can't concatenate scalars (use stack instead)")
    a = axis_value(ctx, host_array(ctx, axis), rank)
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
    """
    return _concat(_as_list(values), axis, name=name)


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


# -- StridedSlice ----------------------------------------------------------------------


def _slice_spec(
    begin: list[int], end: list[int], strides: list[int], attrs: dict, fail: Any
) -> tuple[Any, ...]:
    """A NumPy basic index (ints, slices, None, Ellipsis) for StridedSlice's inputs and masks."""
    spec: list[Any] = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if attrs["ellipsis_mask"] & bit:
            spec.append(Ellipsis)
        elif attrs["new_axis_mask"] & bit:
            spec.append(None)
        elif attrs["shrink_axis_mask"] & bit:
            spec.append(b)
        else:
            if s == 0:
                fail(f"strides[{i}] must be non-zero")
            spec.append(
                slice(
                    None if attrs["begin_mask"] & bit else b,
                    None if attrs["end_mask"] & bit else e,
                    s,
                )
            )
    return tuple(spec)


def _apply_slice_to_dims(c: Any, dims: tuple, spec: tuple) -> TensorShape:
    """Output dims of basic indexing ``spec`` on ``dims`` (None where unknown)."""
    n_real = sum(1 for s in spec if s is not None and s is not Ellipsis)
    if n_real > len(dims):
        c.fail(f"Index out of range using input dim {len(dims)}; input has only {len(dims)} dims")
    out: list[int | None] = []
    d = 0
    for s in spec:
        if s is None:
            out.append(1)
        elif s is Ellipsis:
            k = len(dims) - n_real
            out.extend(dims[d : d + k])
            d += k
        elif isinstance(s, slice):
            n = dims[d]
            out.append(None if n is None else len(builtins.range(*s.indices(n))))
            d += 1
        else:
            n = dims[d]
            if n is not None and not -n <= s < n:
                c.fail(f"slice index {s} of dimension {d} out of bounds.")
            d += 1
    if Ellipsis not in spec:
        out.extend(dims[d:])
    return TensorShape(out)


def _strided_slice_shape(
    c: InferenceContext, x: TensorSpec, begin: TensorSpec, end: TensorSpec, strides: TensorSpec
) -> TensorShape:
    for s in (begin, end, strides):
        with_rank(s.shape, 1)
    if x.shape.rank is None or any(s.value is None for s in (begin, end, strides)):
        return unknown_shape()
    spec = _slice_spec(
        begin.value.tolist(), end.value.tolist(), strides.value.tolist(), c.attrs, c.fail
    )
    return _apply_slice_to_dims(c, x.shape.dims, spec)


STRIDED_SLICE = define_op(
    "StridedSlice",
    inputs=["input: T", "begin: Index", "end: Index", "strides: Index"],
    outputs=["output: T"],
    attrs=[
        "T: type",
        f"Index: {INDEX_TYPES}",
        "begin_mask: int = 0",
        "end_mask: int = 0",
        "ellipsis_mask: int = 0",
        "new_axis_mask: int = 0",
        "shrink_axis_mask: int = 0",
    ],
    shape_fn=_strided_slice_shape,
    host_inputs=["begin", "end", "strides"],
    aliases_input=True,
    doc="NumPy-style basic slicing (``x[1:, ..., None, -1]``) encoded as begin/end/strides "
    "and bit masks, as TensorFlow's StridedSlice.",
)


@register_kernel("StridedSlice", "CPU", "GPU")
def _strided_slice_kernel(ctx: KernelContext, x: Any, begin: Any, end: Any, strides: Any) -> Any:
    b, e, s = (host_array(ctx, v).tolist() for v in (begin, end, strides))
    if not len(b) == len(e) == len(s):
        ctx.fail(
            f"Expected begin, end, and strides to be 1D equal size tensors, but got "
            f"shapes [{len(b)}], [{len(e)}], and [{len(s)}] instead."
        )
    spec = _slice_spec(b, e, s, ctx.attrs, ctx.fail)
    _apply_slice_to_dims(ctx, x.shape, spec)  # bounds and rank checks
    out = x[spec]
    return out if isinstance(out, np.ndarray) or ctx.xp is not np else np.asarray(out)


StridedSlice = make_wrapper_class(STRIDED_SLICE)
strided_slice = make_builder(STRIDED_SLICE)


def _getitem(x: Output, key: Any) -> Output:
    """``x[...]``: ints, slices (steps included), negative indices, None and Ellipsis."""
    if not isinstance(key, tuple):
        key = (key,)
    begin, end, strides = [], [], []
    masks = dict(begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0)
    for i, k in enumerate(key):
        bit = 1 << i
        if k is Ellipsis:
            masks["ellipsis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif k is None:
            masks["new_axis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif isinstance(k, slice):
            begin.append(0 if k.start is None else k.start)
            end.append(0 if k.stop is None else k.stop)
            strides.append(1 if k.step is None else k.step)
            masks["begin_mask"] |= bit if k.start is None else 0
            masks["end_mask"] |= bit if k.stop is None else 0
        elif isinstance(k, int | np.integer) and not isinstance(k, bool):
            masks["shrink_axis_mask"] |= bit
            begin.append(int(k)), end.append(int(k) + 1), strides.append(1)
        else:
            raise TypeError(
                f"Only integers, slices (`:`), ellipsis (`...`), and newaxis (`None`) are valid "
                f"indices, got {k!r}"
            )
    if not key:
        return identity(x)
    as_vec = lambda v: np.array(v, np.int32)  # noqa: E731
    return strided_slice(x, as_vec(begin), as_vec(end), as_vec(strides), **masks)


register_operator("__getitem__", _getitem)


__all__ = ["ConcatV2", "Concat", "Pack", "StridedSlice", *BUILDERS]
