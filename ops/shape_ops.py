"""Shape ops: Shape, Size, Rank, Reshape, Transpose, Slice, ExpandDims, Squeeze,
BroadcastTo and BroadcastGradientArgs.

Each op stands in one block: declaration, shape function, kernel, builder.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec, shape_from_value
from minigraph.kernel import KernelContext
from minigraph.ops.array_ops import range
from minigraph.ops.common import INDEX_TYPES, host_array
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import (
    TensorShape,
    unknown_shape,
    with_rank,
    with_rank_at_most,
)
from minigraph.wrappers import as_output, convert_to_output, make_builder, make_wrapper_class

BUILDERS = (
    "shape",
    "size",
    "rank",
    "reshape",
    "transpose",
    "slice",
    "expand_dims",
    "squeeze",
    "broadcast_to",
    "broadcast_gradient_args",
)


def index_value(value: Any) -> Any:
    """Shape-like Python data (a list of dims, axes, paddings) as an int32 array (int64 when
    a value needs it), as TensorFlow converts it; Outputs and NumPy arrays pass unchanged.
    An empty list is an int32 vector (not float32, as a bare conversion would give)."""
    if isinstance(value, np.ndarray | np.generic) or as_output(value) is not None:
        return value
    try:
        arr = np.asarray(value)
    except ValueError:
        return value  # ragged: let the builder report it
    if arr.size == 0 and arr.dtype.kind == "f":
        return arr.astype(np.int32)
    if arr.dtype.kind in "iu":
        big = arr.size and (arr.min() < -(2**31) or arr.max() >= 2**31)
        return arr.astype(np.int64 if big else np.int32)
    return value


# -- Shape, Size, Rank -------------------------------------------------------------


def _shape_shape(c: InferenceContext, x: TensorSpec) -> Any:
    if x.shape.is_fully_defined():
        return np.array(x.shape.dims, c.attrs["out_type"].np)
    return TensorShape([x.shape.rank])


SHAPE = define_op(
    "Shape",
    inputs=["input: T"],
    outputs=["output: out_type"],
    attrs=["T: type", "out_type: {int32, int64} = int32"],
    shape_fn=_shape_shape,
    host_outputs=["output"],
    doc="The shape of a tensor, as a 1-D integer tensor.",
)


@register_kernel("Shape", "CPU", "GPU")
def _shape_kernel(ctx: KernelContext, x: Any) -> Any:
    return np.array(x.shape, ctx.attrs["out_type"].np)


Shape = make_wrapper_class(SHAPE)
shape = make_builder(SHAPE)


def _size_shape(c: InferenceContext, x: TensorSpec) -> Any:
    n = x.shape.num_elements()
    return TensorShape([]) if n is None else np.array(n, c.attrs["out_type"].np)


SIZE = define_op(
    "Size",
    inputs=["input: T"],
    outputs=["output: out_type"],
    attrs=["T: type", "out_type: {int32, int64} = int32"],
    shape_fn=_size_shape,
    host_outputs=["output"],
    doc="The number of elements of a tensor, as a scalar.",
)


@register_kernel("Size", "CPU", "GPU")
def _size_kernel(ctx: KernelContext, x: Any) -> Any:
    return np.array(x.size, ctx.attrs["out_type"].np)


Size = make_wrapper_class(SIZE)
size = make_builder(SIZE)


def _rank_shape(c: InferenceContext, x: TensorSpec) -> Any:
    return TensorShape([]) if x.shape.rank is None else np.array(x.shape.rank, np.int32)


RANK = define_op(
    "Rank",
    inputs=["input: T"],
    outputs=["output: int32"],
    attrs=["T: type"],
    shape_fn=_rank_shape,
    host_outputs=["output"],
    doc="The rank (number of dimensions) of a tensor, as an int32 scalar.",
)


@register_kernel("Rank", "CPU", "GPU")
def _rank_kernel(ctx: KernelContext, x: Any) -> Any:
    return np.array(x.ndim, np.int32)


Rank = make_wrapper_class(RANK)
rank = make_builder(RANK)


# -- Reshape -----------------------------------------------------------------------


def _reshape_target(fail: Any, n: int | None, dims: list[int | None]) -> list[int | None]:
    """Resolve one -1 (None) in ``dims`` against ``n`` elements, as Reshape does."""
    unknown = [i for i, d in enumerate(dims) if d is None]
    if len(unknown) > 1:
        fail(f"Only one input size may be -1, not both {unknown[0]} and {unknown[1]}")
    known = 1
    for d in dims:
        if d is not None:
            known *= d
    if n is None:
        return dims
    if unknown:
        if known == 0 or n % known:
            if known == 0 and n == 0:
                return [0 if d is None else d for d in dims]
            fail(
                f"Input to reshape is a tensor with {n} values, but the requested shape "
                f"requires a multiple of {known}"
            )
        return [n // known if d is None else d for d in dims]
    if known != n:
        fail(f"Input to reshape is a tensor with {n} values, but the requested shape has {known}")
    return dims


def _reshape_shape(c: InferenceContext, tensor: TensorSpec, shape: TensorSpec) -> TensorShape:
    with_rank(shape.shape, 1)
    target = shape_from_value(c, shape)
    if shape.value is None:
        return target
    return TensorShape(_reshape_target(c.fail, tensor.shape.num_elements(), list(target.dims)))


RESHAPE = define_op(
    "Reshape",
    inputs=["tensor: T", "shape: Tshape"],
    outputs=["output: T"],
    attrs=["T: type", f"Tshape: {INDEX_TYPES} = int32"],
    shape_fn=_reshape_shape,
    host_inputs=["shape"],
    aliases_input=True,
    doc="The same elements in a new shape; one dimension may be -1 (inferred).",
)


@register_kernel("Reshape", "CPU", "GPU")
def _reshape_kernel(ctx: KernelContext, x: Any, shape: Any) -> Any:
    shape = host_array(ctx, shape)
    if shape.ndim != 1:
        ctx.fail(f"sizes input must be 1-D, not {list(shape.shape)}")
    dims = [None if d == -1 else int(d) for d in shape.tolist()]
    for d in dims:
        if d is not None and d < 0:
            ctx.fail(f"Size must be non-negative, not {d}")
    target = _reshape_target(ctx.fail, x.size, dims)
    ctx.check_size(target, x.dtype)  # an empty shape whose other dims pass int64
    return x.reshape(target)


Reshape = make_wrapper_class(RESHAPE)
reshape = make_builder(RESHAPE)


# -- Transpose -----------------------------------------------------------------------


def _transpose_shape(c: InferenceContext, x: TensorSpec, perm: TensorSpec) -> TensorShape:
    with_rank(perm.shape, 1)
    n = perm.shape[0] if perm.shape.rank == 1 else None
    s = x.shape if n is None else with_rank(x.shape, n)
    if perm.value is None:
        return unknown_shape(s.rank)
    p = perm.value.tolist()
    _check_perm(c, p, len(p))
    return TensorShape([s.dims[i] for i in p])


def _check_perm(c: Any, p: list[int], rank: int) -> None:
    if sorted(p) != list(np.arange(rank)):
        c.fail(f"{p} is not a valid permutation of {rank} dimensions")


TRANSPOSE = define_op(
    "Transpose",
    inputs=["x: T", "perm: Tperm"],
    outputs=["y: T"],
    attrs=["T: type", f"Tperm: {INDEX_TYPES} = int32"],
    shape_fn=_transpose_shape,
    host_inputs=["perm"],
    aliases_input=True,
    doc="Permutes the dimensions of ``x``: ``y.shape[i] == x.shape[perm[i]]``.",
)


@register_kernel("Transpose", "CPU", "GPU")
def _transpose_kernel(ctx: KernelContext, x: Any, perm: Any) -> Any:
    p = host_array(ctx, perm)
    if p.ndim != 1:
        ctx.fail(f"perm must be a vector, not a tensor of shape {list(p.shape)}")
    p = p.tolist()
    if len(p) != x.ndim:
        ctx.fail(
            f"transpose expects a vector of size {x.ndim}. But input(1) is a vector of "
            f"size {len(p)}"
        )
    _check_perm(ctx, p, x.ndim)
    return x.transpose(p)


Transpose = make_wrapper_class(TRANSPOSE)
_transpose = make_builder(TRANSPOSE, "transpose")


def transpose(a: Any, perm: Any = None, name: str = "transpose") -> Output:
    """Permutes dimensions; by default reverses them, as ``tf.transpose``."""
    x = convert_to_output(a)
    if perm is None:
        if x.shape.rank is not None:
            perm = np.arange(x.shape.rank - 1, -1, -1, dtype=np.int32)
        else:
            from minigraph.ops.math_ops import subtract

            perm = range(subtract(rank(x), 1), -1, -1)
    return _transpose(x, perm, name=name)


# -- Slice -------------------------------------------------------------------------------


def _slice_bounds(fail: Any, dims: tuple, begin: list[int], size: list[int]) -> list[int | None]:
    """Slice's checks, in TensorFlow's order; the output dims (None where unknown)."""
    out: list[int | None] = []
    for i, (d, b, s) in enumerate(zip(dims, begin, size)):
        if d is None:
            out.append(None if s < 0 else s)  # a bad size waits for the kernel
            continue
        if s == -1:
            s = d - b
        if not 0 <= b <= d:
            fail(f"Expected begin[{i}] in [0, {d}], but got {b}")
        if not 0 <= s <= d - b:
            fail(f"Expected size[{i}] in [0, {d - b}], but got {s}")
        out.append(s)
    return out


def _slice_lengths_fail(fail: Any, rank: int, nb: int, ns: int) -> None:
    fail(
        f"Expected begin and size arguments to be 1-D tensors of size {rank}, but got "
        f"shapes [{nb}] and [{ns}] instead."
    )


def _slice_shape(
    c: InferenceContext, x: TensorSpec, begin: TensorSpec, size: TensorSpec
) -> TensorShape:
    b_shape, s_shape = with_rank(begin.shape, 1), with_rank(size.shape, 1)
    rank = x.shape.rank
    n = b_shape[0] if b_shape[0] is not None else s_shape[0]
    if rank is None:
        rank = n
    if rank is None:
        return unknown_shape()
    for m in (b_shape[0], s_shape[0]):
        if m is not None and m != rank:
            _slice_lengths_fail(c.fail, rank, b_shape[0], s_shape[0])
    dims = x.shape.dims if x.shape.rank is not None else (None,) * rank
    if size.value is None:
        return unknown_shape(rank)
    sizes = size.value.tolist()
    if begin.value is None:  # a size of -1 depends on begin; the others are known
        return TensorShape([None if s < 0 else s for s in sizes])
    return TensorShape(_slice_bounds(c.fail, dims, begin.value.tolist(), sizes))


SLICE = define_op(
    "Slice",
    inputs=["input: T", "begin: Index", "size: Index"],
    outputs=["output: T"],
    attrs=["T: type", f"Index: {INDEX_TYPES}"],
    shape_fn=_slice_shape,
    host_inputs=["begin", "size"],
    aliases_input=True,
    doc="The block ``input[begin[i] : begin[i] + size[i]]`` in every dimension; a size of "
    "-1 takes the rest of that dimension.",
)


@register_kernel("Slice", "CPU", "GPU")
def _slice_kernel(ctx: KernelContext, x: Any, begin: Any, size: Any) -> Any:
    b, s = host_array(ctx, begin), host_array(ctx, size)
    if b.ndim != 1 or s.ndim != 1 or b.size != x.ndim or s.size != x.ndim:
        _slice_lengths_fail(ctx.fail, x.ndim, b.size, s.size)
    b = b.tolist()
    sizes = _slice_bounds(ctx.fail, x.shape, b, s.tolist())
    out = x[tuple(builtins.slice(i, i + n) for i, n in zip(b, sizes))]
    return np.asarray(out) if isinstance(out, np.generic) else out  # NumPy gives scalars


Slice = make_wrapper_class(SLICE)
_slice = make_builder(SLICE, "slice")


def slice(input_: Any, begin: Any, size: Any, name: str | None = None) -> Output:  # noqa: A001
    """The block of ``input_`` at ``begin`` of extent ``size`` (-1: to the end), as ``tf.slice``.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.slice([[1, 2, 3], [4, 5, 6]], [0, 1], [-1, 1])
    >>> mg.Session(g).run(y)
    array([[2],
           [5]], dtype=int32)
    """
    return _slice(input_, index_value(begin), index_value(size), name=name or "Slice")


# -- ExpandDims ----------------------------------------------------------------------------


def _expand_dims_axis(fail: Any, dim: np.ndarray) -> int:
    if dim.size != 1:
        fail("'dim' input must be a tensor with a single value")
    return int(dim.reshape(-1)[0])


def _expand_dims_shape(c: InferenceContext, x: TensorSpec, dim: TensorSpec) -> TensorShape:
    if dim.shape.num_elements() not in (None, 1):
        c.fail("'dim' input must be a tensor with a single value")
    if x.shape.rank is None or dim.value is None:
        return unknown_shape(None if x.shape.rank is None else x.shape.rank + 1)
    rank = x.shape.rank
    a = _expand_dims_axis(c.fail, dim.value)
    if not -(rank + 1) <= a <= rank:
        c.fail(f"dim {a} not in the interval [{-(rank + 1)}, {rank}].")
    a %= rank + 1
    return TensorShape(x.shape.dims[:a] + (1,) + x.shape.dims[a:])


EXPAND_DIMS = define_op(
    "ExpandDims",
    inputs=["input: T", "dim: Tdim"],
    outputs=["output: T"],
    attrs=["T: type", f"Tdim: {INDEX_TYPES} = int32"],
    shape_fn=_expand_dims_shape,
    host_inputs=["dim"],
    aliases_input=True,
    doc="Inserts a dimension of size 1 at index ``dim`` (in ``[-rank-1, rank]``; "
    "``tf.raw_ops`` calls this input ``axis``).",
)


@register_kernel("ExpandDims", "CPU", "GPU")
def _expand_dims_kernel(ctx: KernelContext, x: Any, dim: Any) -> Any:
    a = _expand_dims_axis(ctx.fail, host_array(ctx, dim))
    if not -(x.ndim + 1) <= a <= x.ndim:
        ctx.fail(f"Tried to expand dim index {a} for tensor with {x.ndim} dimensions.")
    return ctx.xp.expand_dims(x, a % (x.ndim + 1))


ExpandDims = make_wrapper_class(EXPAND_DIMS)
_expand_dims = make_builder(EXPAND_DIMS, "expand_dims")


def expand_dims(
    input: Any,  # noqa: A002
    axis: Any = None,
    name: str | None = None,
    dim: Any = None,
) -> Output:
    """Inserts a dimension of size 1 at ``axis`` (``dim``: its old name), as
    ``tf.compat.v1.expand_dims``.

    >>> import minigraph as mg
    >>> with mg.Graph().as_default():
    ...     y = mg.expand_dims(mg.zeros([2, 3]), -1)
    >>> y.shape
    TensorShape([2, 3, 1])
    """
    if (axis is None) == (dim is None):
        raise ValueError("Exactly one of 'axis' and 'dim' must be given")
    axis = dim if axis is None else axis
    return _expand_dims(input, index_value(axis), name=name or "ExpandDims")


# -- Squeeze -----------------------------------------------------------------------------


def _squeeze_axes(fail: Any, axes: tuple[int, ...], rank: int, kernel: bool) -> set[int]:
    out = set()
    for i, a in enumerate(axes):
        if not -rank <= a < rank:
            if kernel:
                fail(f"Tried to squeeze dim index {a} for tensor with {rank} dimensions.")
            fail(f"squeeze_dims[{i}] not in [{-rank},{rank}).")
        out.add(a % rank)
    return out


def _squeeze_shape(c: InferenceContext, x: TensorSpec) -> TensorShape:
    dims = x.shape.dims
    if dims is None:
        return unknown_shape()
    axes = _squeeze_axes(c.fail, c.attrs["squeeze_dims"], len(dims), kernel=False)
    out = []
    for i, d in enumerate(dims):
        if axes and i in axes:
            if d not in (None, 1):
                c.fail(f"Can not squeeze dim[{i}], expected a dimension of 1, got {d}")
        elif not axes and d is None:
            return unknown_shape()  # any unknown dim may turn out to be 1
        elif axes or d != 1:
            out.append(d)
    return TensorShape(out)


SQUEEZE = define_op(
    "Squeeze",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: type", "squeeze_dims: list(int) = ()"],
    shape_fn=_squeeze_shape,
    aliases_input=True,
    doc="Removes dimensions of size 1: those in ``squeeze_dims``, or every one when it is empty.",
)


@register_kernel("Squeeze", "CPU", "GPU")
def _squeeze_kernel(ctx: KernelContext, x: Any) -> Any:
    axes = _squeeze_axes(ctx.fail, ctx.attrs["squeeze_dims"], x.ndim, kernel=True)
    for a in sorted(axes):
        if x.shape[a] != 1:
            ctx.fail(f"Can not squeeze dim[{a}], expected a dimension of 1, got {x.shape[a]}")
    keep = [d for i, d in enumerate(x.shape) if (i not in axes if axes else d != 1)]
    return x.reshape(keep)


Squeeze = make_wrapper_class(SQUEEZE)
_squeeze = make_builder(SQUEEZE, "squeeze")


def squeeze(
    input: Any,  # noqa: A002
    axis: Any = None,
    name: str | None = None,
    squeeze_dims: Any = None,
) -> Output:
    """Removes size-1 dimensions (only those in ``axis``, when given), as ``tf.squeeze``.

    >>> import minigraph as mg
    >>> with mg.Graph().as_default():
    ...     y = mg.squeeze(mg.zeros([1, 2, 1, 3, 1]), axis=[0, -1])
    >>> y.shape
    TensorShape([2, 1, 3])
    """
    if axis is not None and squeeze_dims is not None:
        raise ValueError("Cannot specify both 'squeeze_dims' and 'axis'")
    axis = squeeze_dims if axis is None else axis
    if axis is None:
        axis = ()
    elif isinstance(axis, int | np.integer):
        axis = (int(axis),)
    return _squeeze(input, squeeze_dims=tuple(axis), name=name or "Squeeze")


# -- BroadcastTo -------------------------------------------------------------------------


def _broadcast_to_shape(c: InferenceContext, x: TensorSpec, shape: TensorSpec) -> TensorShape:
    with_rank(shape.shape, 1)
    out = shape_from_value(c, shape)
    if shape.value is not None and (shape.value < 0).any():
        c.fail(f"Dimension {int(shape.value.min())} must be >= 0")
    if out.rank is None or x.shape.rank is None:
        return out
    with_rank_at_most(x.shape, out.rank)
    for d_in, d_out in zip(reversed(x.shape.dims), reversed(out.dims)):
        if d_in is not None and d_out is not None and d_in != 1 and d_in != d_out:
            c.fail(f"Dimensions must be equal, but are {d_in} and {d_out}")
    return out


BROADCAST_TO = define_op(
    "BroadcastTo",
    inputs=["input: T", "shape: Tidx"],
    outputs=["output: T"],
    attrs=["T: type", f"Tidx: {INDEX_TYPES} = int32"],
    shape_fn=_broadcast_to_shape,
    host_inputs=["shape"],
    doc="``input`` repeated along its size-1 (and missing leading) dimensions to ``shape``, "
    "with NumPy's broadcasting rules.",
)


@register_kernel("BroadcastTo", "CPU", "GPU")
def _broadcast_to_kernel(ctx: KernelContext, x: Any, shape: Any) -> Any:
    dims = host_array(ctx, shape)
    if dims.ndim != 1:
        ctx.fail(f"shape must be a vector, got shape {list(dims.shape)}")
    for d in dims.tolist():
        if d < 0:
            ctx.fail(f"Dimension {d} must be >= 0")
    dims = dims.tolist()
    if x.ndim > len(dims):
        ctx.fail(
            f"Rank of input ({x.ndim}) must be no greater than rank of output shape ({len(dims)})."
        )
    for d_in, d_out in zip(reversed(x.shape), reversed(dims)):
        if d_in != 1 and d_in != d_out:
            ctx.fail(
                f"Incompatible shapes: [{','.join(map(str, x.shape))}] vs. "
                f"[{','.join(map(str, dims))}]"
            )
    out = ctx.allocate(dims, x.dtype)
    out[...] = x
    return out


BroadcastTo = make_wrapper_class(BROADCAST_TO)
_broadcast_to = make_builder(BROADCAST_TO, "broadcast_to")


def broadcast_to(input: Any, shape: Any, name: str | None = None) -> Output:  # noqa: A002
    """``input`` broadcast to ``shape``, as ``tf.broadcast_to``.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.broadcast_to([1, 2, 3], [2, 3])
    >>> mg.Session(g).run(y)
    array([[1, 2, 3],
           [1, 2, 3]], dtype=int32)
    """
    return _broadcast_to(input, index_value(shape), name=name or "BroadcastTo")


# -- BroadcastGradientArgs -----------------------------------------------------------


def gradient_reduction_axes(s0: Any, s1: Any, fail: Any) -> tuple[np.ndarray, np.ndarray]:
    """The axes of the broadcast result that each of two shapes was stretched along (so
    that its gradient is summed over them), as TensorFlow's BCast gives them: an axis
    missing from a shape, or 1 in it where the result is larger, and every axis where
    both are 1; ascending."""
    a, b = [int(d) for d in s0], [int(d) for d in s1]
    rank = max(len(a), len(b))
    a, b = [1] * (rank - len(a)) + a, [1] * (rank - len(b)) + b
    r0, r1 = [], []
    for axis, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            fail(f"Incompatible shapes: [{','.join(map(str, s0))}] vs. [{','.join(map(str, s1))}]")
        if x == 1 and (y != 1 or x == y):
            r0.append(axis)
        if y == 1 and (x != 1 or x == y):
            r1.append(axis)
    return np.array(r0, np.int64), np.array(r1, np.int64)


def _broadcast_gradient_args_shape(c: InferenceContext, s0: TensorSpec, s1: TensorSpec) -> Any:
    with_rank(s0.shape, 1)
    with_rank(s1.shape, 1)
    if s0.value is not None and s1.value is not None:
        dtype = c.attrs["T"].np
        r0, r1 = gradient_reduction_axes(s0.value, s1.value, c.fail)
        return [r0.astype(dtype), r1.astype(dtype)]
    return [TensorShape([None]), TensorShape([None])]


BROADCAST_GRADIENT_ARGS = define_op(
    "BroadcastGradientArgs",
    inputs=["s0: T", "s1: T"],
    outputs=["r0: T", "r1: T"],
    attrs=["T: {int32, int64} = int32"],
    shape_fn=_broadcast_gradient_args_shape,
    host_inputs=["s0", "s1"],
    host_outputs=["r0", "r1"],
    doc="""
The axes along which a binary op's gradient is summed for each input: given the shapes
``s0`` and ``s1`` of two broadcast operands, the axes of the result each was stretched
along.

>>> import minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     r0, r1 = mg.broadcast_gradient_args([2, 3, 1], [3, 4])
>>> [v.tolist() for v in mg.Session(g).run([r0, r1])]
[[2], [0]]
""",
)


@register_kernel("BroadcastGradientArgs", "CPU", "GPU")
def _broadcast_gradient_args_kernel(ctx: KernelContext, s0: Any, s1: Any) -> Any:
    for name, s in (("s0", s0), ("s1", s1)):
        if s.ndim != 1:
            ctx.fail(f"In[{name[1]}] must be a vector. {list(s.shape)}")
    dtype = ctx.attrs["T"].np
    r0, r1 = gradient_reduction_axes(host_array(ctx, s0), host_array(ctx, s1), ctx.fail)
    return [r0.astype(dtype), r1.astype(dtype)]


BroadcastGradientArgs = make_wrapper_class(BROADCAST_GRADIENT_ARGS)
_broadcast_gradient_args = make_builder(BROADCAST_GRADIENT_ARGS)


def broadcast_gradient_args(s0: Any, s1: Any, name: str | None = None) -> list[Output]:
    """``[r0, r1]``: the axes to sum each operand's gradient over (see the op)."""
    return _broadcast_gradient_args(
        index_value(s0), index_value(s1), name=name or "BroadcastGradientArgs"
    )


__all__ = [
    "Shape",
    "Size",
    "Rank",
    "Reshape",
    "Transpose",
    "Slice",
    "ExpandDims",
    "Squeeze",
    "BroadcastTo",
    "BroadcastGradientArgs",
    *BUILDERS,
]
