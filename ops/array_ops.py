"""Array ops: constants, placeholders, identity, fills, ranges and casts.

Each op stands in one block: declaration, shape function, kernel, builder.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph import dtypes, errors
from minigraph.dtypes import DType
from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec, shape_from_value
from minigraph.kernel import KernelContext
from minigraph.ops.common import INDEX_TYPES, host_array, same_shape
from minigraph.registry import define_op, register_kernel
from minigraph.scope import current_scope
from minigraph.shapes import TensorShape, as_shape, unknown_shape, with_rank
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
    "fill",
    "zeros",
    "ones",
    "zeros_like",
    "ones_like",
    "range",
    "cast",
)


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


IDENTITY = define_op(
    "Identity",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: type"],
    shape_fn=same_shape,
    aliases_input=True,
    doc="Returns its input unchanged.",
)


@register_kernel("Identity", "CPU", "GPU")
def _identity_kernel(ctx: KernelContext, x: Any) -> Any:
    return x


Identity = make_wrapper_class(IDENTITY)
identity = make_builder(IDENTITY)


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
    dims = host_array(ctx, dims)
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
    shape_fn=same_shape,
    doc="A tensor of zeros with the shape and dtype of ``x``.",
)
ONES_LIKE = define_op(
    "OnesLike",
    inputs=["x: T"],
    outputs=["y: T"],
    attrs=["T: type"],
    shape_fn=same_shape,
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
    s, lim, d = (host_array(ctx, v).item() for v in (start, limit, delta))
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
    shape_fn=same_shape,
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
    "Fill",
    "ZerosLike",
    "OnesLike",
    "Range",
    "Cast",
    *BUILDERS,
]
