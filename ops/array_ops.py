"""Array ops: constants, placeholders, shapes, reshaping, joining, slicing, gathering.

Each op stands in one block: declaration, shape function, kernel, builder.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from minigraph import dtypes, errors
from minigraph.dtypes import DType
from minigraph.graph import Output, register_operator
from minigraph.inference import InferenceContext, TensorSpec, shape_from_value
from minigraph.kernel import KernelContext
from minigraph.registry import define_op, register_kernel
from minigraph.scope import current_scope
from minigraph.shapes import (
    TensorShape,
    as_shape,
    merge,
    unknown_shape,
    with_rank,
    with_rank_at_least,
)
from minigraph.wrappers import (
    apply_op,
    as_output,
    const_node,
    convert_to_output,
    make_builder,
    make_wrapper_class,
    to_numpy,
)

BUILDERS = (
    "constant",
    "placeholder",
    "identity",
    "shape",
    "size",
    "rank",
    "reshape",
    "fill",
    "zeros",
    "ones",
    "zeros_like",
    "ones_like",
    "concat",
    "stack",
    "transpose",
    "strided_slice",
    "gather",
    "range",
    "cast",
)

INDEX_TYPES = "{int32, int64}"


def _host_int(ctx: KernelContext, x: Any) -> np.ndarray:
    """A small shape-like input (dims, axis, perm) as a NumPy array on the host."""
    return x if isinstance(x, np.ndarray) else ctx.xp.asnumpy(x)


# -- Const --------------------------------------------------------------------


def _const_shape(c: InferenceContext) -> np.ndarray:
    return c.attrs["value"]


CONST = define_op(
    "Const",
    outputs=["output: dtype"],
    attrs=["value: tensor", "dtype: type"],
    shape_fn=_const_shape,
    doc="A constant tensor; its value is fixed when the graph is built.",
)


@register_kernel("Const", "CPU", "GPU")
def _const_kernel(ctx: KernelContext) -> Any:
    value = ctx.attrs["value"]
    if ctx.xp is np:
        return value
    # Copied to the device once per plan; plans never let a kernel write a constant.
    on_device = ctx.memo.get("value")
    if on_device is None:
        on_device = ctx.memo["value"] = ctx.xp.asarray(value)
    return on_device


class Const(make_wrapper_class(CONST)):  # type: ignore[misc]
    """``ops.Const(scope, value, dtype=None)``: a constant, as TensorFlow's C++ ``ops::Const``."""

    def __init__(self, scope: Any, value: Any, dtype: Any = None) -> None:
        want = None if dtype is None else dtypes.as_dtype(dtype)
        try:
            arr = to_numpy(value, want)
        except (TypeError, ValueError) as e:
            raise errors.InvalidArgumentError(
                str(e), scope.unique_op_name("Const"), "Const"
            ) from None
        self.output = const_node(scope, arr)
        self.operation = self.output.op


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str = "Const") -> Output:
    """A constant tensor from a Python value or NumPy array.

    Python ints become int32 (int64 when too large), floats float32; NumPy
    arrays keep their dtype unless ``dtype`` is given. With ``shape``, a scalar
    is broadcast and a value of the same size is reshaped.

    >>> import minigraph as mg
    >>> with mg.Graph().as_default():
    ...     c = mg.constant([[1, 2], [3, 4]])
    >>> c.dtype, c.shape
    (mg.int32, TensorShape([2, 2]))
    """
    scope = current_scope().with_op_name(name)
    want = None if dtype is None else dtypes.as_dtype(dtype)
    try:
        arr = to_numpy(value, want)
        if shape is not None:
            dims = [int(d) for d in shape]
            arr = np.broadcast_to(arr, dims) if arr.size == 1 else arr.reshape(dims)
    except (TypeError, ValueError) as e:
        raise errors.InvalidArgumentError(str(e), scope.unique_op_name(name), "Const") from None
    return const_node(scope, arr)


# -- Placeholder ----------------------------------------------------------------


def _placeholder_shape(c: InferenceContext) -> TensorShape:
    return as_shape(c.attrs["shape"])


PLACEHOLDER = define_op(
    "Placeholder",
    outputs=["output: dtype"],
    attrs=["dtype: type", "shape: shape = None"],
    shape_fn=_placeholder_shape,
    is_stateful=True,
    doc="A value that must be fed when the graph runs.",
)


@register_kernel("Placeholder", "CPU", "GPU")
def _placeholder_kernel(ctx: KernelContext) -> Any:
    ctx.fail(f"You must feed a value for placeholder tensor '{ctx.node_name}'")


Placeholder = make_wrapper_class(PLACEHOLDER)


def placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> Output:
    """A tensor whose value is fed at run time (``feed_dict``).

    >>> import minigraph as mg
    >>> with mg.Graph().as_default():
    ...     x = mg.placeholder(mg.float32, shape=[None, 4], name="x")
    >>> x.name, x.shape
    ('x:0', TensorShape([None, 4]))
    """
    scope = current_scope().with_op_name(name or "Placeholder")
    return apply_op("Placeholder", scope, [], {"dtype": dtype, "shape": shape}).output(0)


# -- Identity ----------------------------------------------------------------------


def _same_shape(c: InferenceContext, x: TensorSpec, *rest: Any) -> TensorShape:
    return x.shape


IDENTITY = define_op(
    "Identity",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: type"],
    shape_fn=_same_shape,
    aliases_input=True,
    doc="Returns its input unchanged.",
)


@register_kernel("Identity", "CPU", "GPU")
def _identity_kernel(ctx: KernelContext, x: Any) -> Any:
    return x


Identity = make_wrapper_class(IDENTITY)
identity = make_builder(IDENTITY)


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
    shape = _host_int(ctx, shape)
    if shape.ndim != 1:
        ctx.fail(f"sizes input must be 1-D, not {list(shape.shape)}")
    dims = [None if d == -1 else int(d) for d in shape.tolist()]
    for d in dims:
        if d is not None and d < 0:
            ctx.fail(f"Size must be non-negative, not {d}")
    return x.reshape(_reshape_target(ctx.fail, x.size, dims))


Reshape = make_wrapper_class(RESHAPE)
reshape = make_builder(RESHAPE)


# -- Fill, zeros, ones ---------------------------------------------------------------


def _fill_shape(c: InferenceContext, dims: TensorSpec, value: TensorSpec) -> TensorShape:
    with_rank(dims.shape, 1)
    with_rank(value.shape, 0)
    out = shape_from_value(c, dims)
    if dims.value is not None and (dims.value < 0).any():
        c.fail(f"dims must be non-negative, got {dims.value.tolist()}")
    return out


FILL = define_op(
    "Fill",
    inputs=["dims: index_type", "value: T"],
    outputs=["output: T"],
    attrs=["T: type", f"index_type: {INDEX_TYPES} = int32"],
    shape_fn=_fill_shape,
    host_inputs=["dims"],
    doc="A tensor of shape ``dims`` filled with the scalar ``value``.",
)


@register_kernel("Fill", "CPU", "GPU")
def _fill_kernel(ctx: KernelContext, dims: Any, value: Any) -> Any:
    dims = _host_int(ctx, dims)
    if dims.ndim != 1:
        ctx.fail(f"dims must be a vector, got shape {list(dims.shape)}")
    if value.ndim != 0:
        ctx.fail(f"value must be a scalar, got shape {list(value.shape)}")
    if (dims < 0).any():
        ctx.fail(f"dims must be non-negative, got {dims.tolist()}")
    out = ctx.allocate(dims.tolist(), value.dtype)
    out[...] = value
    return out


Fill = make_wrapper_class(FILL)
fill = make_builder(FILL)


def zeros(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Output:
    """A tensor of zeros; ``shape`` is a list or a 1-D integer tensor."""
    dt = dtypes.as_dtype(dtype)
    return fill(shape, np.zeros((), dt.np), name=name or "zeros")


def ones(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Output:
    """A tensor of ones; ``shape`` is a list or a 1-D integer tensor."""
    dt = dtypes.as_dtype(dtype)
    return fill(shape, np.ones((), dt.np), name=name or "ones")


def _like_kernel(fill_value: int) -> Any:
    def kernel(ctx: KernelContext, x: Any) -> Any:
        return ctx.allocate(x.shape, x.dtype, fill=fill_value)

    return kernel


ZEROS_LIKE = define_op(
    "ZerosLike",
    inputs=["x: T"],
    outputs=["y: T"],
    attrs=["T: type"],
    shape_fn=_same_shape,
    doc="A tensor of zeros with the shape and dtype of ``x``.",
)
ONES_LIKE = define_op(
    "OnesLike",
    inputs=["x: T"],
    outputs=["y: T"],
    attrs=["T: type"],
    shape_fn=_same_shape,
    doc="A tensor of ones with the shape and dtype of ``x``.",
)
register_kernel("ZerosLike", "CPU", "GPU")(_like_kernel(0))
register_kernel("OnesLike", "CPU", "GPU")(_like_kernel(1))
ZerosLike = make_wrapper_class(ZEROS_LIKE)
OnesLike = make_wrapper_class(ONES_LIKE)


def zeros_like(tensor: Any, dtype: Any = None, name: str | None = None) -> Output:
    """Zeros with ``tensor``'s shape (and its dtype, unless ``dtype`` is given)."""
    x = convert_to_output(tensor)
    if dtype is not None and dtypes.as_dtype(dtype) != x.dtype:
        x = cast(x, dtype)
    return make_builder(ZEROS_LIKE)(x, name=name)


def ones_like(tensor: Any, dtype: Any = None, name: str | None = None) -> Output:
    """Ones with ``tensor``'s shape (and its dtype, unless ``dtype`` is given)."""
    x = convert_to_output(tensor)
    if dtype is not None and dtypes.as_dtype(dtype) != x.dtype:
        x = cast(x, dtype)
    return make_builder(ONES_LIKE)(x, name=name)


# -- ConcatV2 -----------------------------------------------------------------------


def _axis_value(c: Any, axis: Any, rank: int) -> int:
    a = int(np.asarray(axis).reshape(()))
    if not -rank <= a < rank:
        c.fail(f"Expected axis in the range [{-rank}, {rank}), but got {a}")
    return a % rank


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
    a = _axis_value(c, axis.value, rank)
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
    a = _axis_value(ctx, _host_int(ctx, axis), rank)
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
    p = _host_int(ctx, perm).tolist()
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
    b, e, s = (_host_int(ctx, v).tolist() for v in (begin, end, strides))
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


# -- GatherV2 --------------------------------------------------------------------------


def _gather_shape(
    c: InferenceContext, params: TensorSpec, indices: TensorSpec, axis: TensorSpec
) -> TensorShape:
    with_rank(axis.shape, 0)
    if params.shape.rank is None or indices.shape.rank is None or axis.value is None:
        return unknown_shape()
    with_rank_at_least(params.shape, 1)
    a = _axis_value(c, axis.value, params.shape.rank)
    dims = params.shape.dims
    return TensorShape(dims[:a] + indices.shape.dims + dims[a + 1 :])


GATHER = define_op(
    "GatherV2",
    inputs=["params: Tparams", "indices: Tindices", "axis: Taxis"],
    outputs=["output: Tparams"],
    attrs=["Tparams: type", f"Tindices: {INDEX_TYPES}", f"Taxis: {INDEX_TYPES}"],
    shape_fn=_gather_shape,
    host_inputs=["axis"],
    doc="Gathers slices of ``params`` along ``axis`` at ``indices``; every index must be "
    "in [0, params.shape[axis]).",
)


def first_bad_index(flat: Any, limit: int) -> tuple[int, int] | None:
    """(position, value) of the first entry of a flat index array outside [0, limit)."""
    # One pass (one device sync) in the common case: as unsigned, a negative is too large
    # (at least 2**(bits-1), so the limit is capped there).
    bits = 8 * flat.dtype.itemsize
    if not flat.size or int(flat.view(f"u{bits // 8}").max()) < min(limit, 2 ** (bits - 1)):
        return None
    pos = int(((flat < 0) | (flat >= limit)).argmax())
    return pos, int(flat[pos])


def check_in_range(fail: Callable[[str], NoReturn], name: str, x: Any, limit: int) -> None:
    """Fails on the first entry of ``x``, in flat order, outside [0, limit), named as
    TensorFlow names it: ``indices[1,0] = 7 is not in [0, 5)``."""
    bad = first_bad_index(x.reshape(-1), limit)
    if bad is not None:
        pos, value = bad
        fail(f"{name}{multi_index(tuple(x.shape), pos)} = {value} is not in [0, {limit})")


def multi_index(shape: tuple[int, ...], flat_pos: int) -> str:
    """TensorFlow's SliceDebugString: ``[i,j]`` for a flat position, "" for a scalar."""
    if not shape:
        return ""
    return "[" + ",".join(str(int(i)) for i in np.unravel_index(flat_pos, shape)) + "]"


@register_kernel("GatherV2", "CPU", "GPU")
def _gather_kernel(ctx: KernelContext, params: Any, indices: Any, axis: Any) -> Any:
    if params.ndim == 0:
        ctx.fail("params must be at least 1 dimensional")
    a = _axis_value(ctx, _host_int(ctx, axis), params.ndim)
    limit = params.shape[a]
    check_in_range(ctx.fail, "indices", indices, limit)
    shape = params.shape[:a] + indices.shape + params.shape[a + 1 :]
    ctx.check_size(shape, params.dtype)
    return ctx.xp.take(params, indices, axis=a)


GatherV2 = Gather = make_wrapper_class(GATHER)
_gather = make_builder(GATHER, "gather")


def gather(
    params: Any,
    indices: Any,
    validate_indices: Any = None,
    name: str | None = None,
    axis: Any = None,
) -> Output:
    """Gathers slices along ``axis`` (default 0), as ``tf.gather``.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.gather([10, 20, 30], [2, 0])
    >>> mg.Session(g).run(y)
    array([30, 10], dtype=int32)
    """
    return _gather(params, indices, 0 if axis is None else axis, name=name or "GatherV2")


# -- Range ---------------------------------------------------------------------------------


def _range_count(fail: Any, start: Any, limit: Any, delta: Any) -> int:
    if delta == 0:
        fail(f"Requires delta != 0: {delta}")
    if delta > 0 and start > limit:
        fail(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if delta < 0 and start < limit:
        fail(f"Requires start >= limit when delta < 0: {start}/{limit}")
    return int(np.ceil(abs((limit - start) / delta)))


def _range_shape(
    c: InferenceContext, start: TensorSpec, limit: TensorSpec, delta: TensorSpec
) -> TensorShape:
    for s in (start, limit, delta):
        with_rank(s.shape, 0)
    if any(s.value is None for s in (start, limit, delta)):
        return unknown_shape(1)
    return TensorShape(
        [_range_count(c.fail, start.value.item(), limit.value.item(), delta.value.item())]
    )


RANGE = define_op(
    "Range",
    inputs=["start: Tidx", "limit: Tidx", "delta: Tidx"],
    outputs=["output: Tidx"],
    attrs=["Tidx: {int32, int64, float32, float64} = int32"],
    shape_fn=_range_shape,
    host_inputs=["start", "limit", "delta"],
    doc="The sequence start, start + delta, ... up to but excluding limit.",
)


@register_kernel("Range", "CPU", "GPU")
def _range_kernel(ctx: KernelContext, start: Any, limit: Any, delta: Any) -> Any:
    s, lim, d = (_host_int(ctx, v).item() for v in (start, limit, delta))
    n = _range_count(ctx.fail, s, lim, d)
    dtype = ctx.attrs["Tidx"].np
    ctx.check_size([n], dtype)
    if dtype.kind in "iu":  # exact in one pass
        return ctx.xp.arange(s, s + n * d, d, dtype=dtype)
    return (s + ctx.xp.arange(n, dtype=dtype) * d).astype(dtype)  # start + i * delta, as TF


Range = make_wrapper_class(RANGE)
_range = make_builder(RANGE, "range")


def range(
    start: Any,
    limit: Any = None,
    delta: Any = 1,
    dtype: Any = None,  # noqa: A001
    name: str = "range",
) -> Output:
    """``[start, start + delta, ...)`` below ``limit``; ``range(n)`` counts from 0, as tf.range."""
    if limit is None:
        start, limit = 0, start
    values = [start, limit, delta]
    if dtype is None:
        known = [as_output(v).dtype for v in values if as_output(v) is not None]
        floats = any(
            isinstance(v, float) or (isinstance(v, np.ndarray | np.generic) and v.dtype.kind == "f")
            for v in values
        )
        dtype = known[0] if known else (dtypes.float32 if floats else dtypes.int32)
    dt = dtypes.as_dtype(dtype)
    values = [v if as_output(v) is not None else to_numpy(v, dt) for v in values]
    return _range(*values, name=name)


# -- Cast ------------------------------------------------------------------------------------


CAST = define_op(
    "Cast",
    inputs=["x: SrcT"],
    outputs=["y: DstT"],
    attrs=["SrcT: type", "DstT: type", "Truncate: bool = False"],
    shape_fn=_same_shape,
    doc="Converts ``x`` to ``DstT`` (floats to ints truncate toward zero).",
)


@register_kernel("Cast", "CPU", "GPU")
def _cast_kernel(ctx: KernelContext, x: Any) -> Any:
    with np.errstate(invalid="ignore", over="ignore"):
        return x.astype(ctx.attrs["DstT"].np)


Cast = make_wrapper_class(CAST)
_cast = make_builder(CAST, "cast")


def cast(x: Any, dtype: Any, name: str | None = None) -> Output:
    """``x`` converted to ``dtype``; ``x`` itself when it already has that dtype."""
    dt: DType = dtypes.as_dtype(dtype)
    out = convert_to_output(x)
    return out if out.dtype == dt else _cast(out, DstT=dt, name=name or "Cast")


__all__ = [
    "Const",
    "Placeholder",
    "Identity",
    "Shape",
    "Size",
    "Rank",
    "Reshape",
    "Fill",
    "ZerosLike",
    "OnesLike",
    "ConcatV2",
    "Concat",
    "Pack",
    "Transpose",
    "StridedSlice",
    "GatherV2",
    "Gather",
    "Range",
    "Cast",
    *BUILDERS,
]
