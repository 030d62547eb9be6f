"""Array ops: Const, Placeholder, PlaceholderWithDefault, Identity, IdentityN, StopGradient,
PreventGradient, Snapshot, NoOp, Fill, ZerosLike, OnesLike, Range and Cast.

Each op stands in one block: declaration, shape function, kernel, builder.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from minigraph import dtypes, errors
from minigraph.dtypes import DType
from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec, shape_from_value
from minigraph.kernel import KernelContext, check_output_size
from minigraph.ops.common import INDEX_TYPES, host_array, same_shape, shape_str
from minigraph.ops.tensor_list import zeros_list
from minigraph.registry import define_op, register_kernel
from minigraph.scope import current_scope
from minigraph.shapes import TensorShape, as_shape, merge, unknown_shape, with_rank
from minigraph.transfer import to_device
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
    "placeholder_with_default",
    "identity",
    "fill",
    "zeros",
    "ones",
    "zeros_like",
    "ones_like",
    "range",
    "cast",
    "identity_n",
    "stop_gradient",
    "no_op",
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
        on_device = ctx.memo["value"] = to_device(ctx.xp, value)
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
    dims = None if shape is None else as_shape(shape).check_valid()
    if dims is not None and not dims.is_fully_defined():
        raise ValueError(f"constant's shape must be fully defined, got {dims}")
    try:
        arr = to_numpy(value, want)
        if dims is not None:
            shape_list = dims.as_list()
            if arr.size == 1:
                check_output_size(shape_list, arr.itemsize, scope.unique_op_name(name), "Const")
                arr = np.broadcast_to(arr.reshape(()), shape_list)
            elif arr.size != dims.num_elements():
                raise ValueError(
                    f"Expected Tensor's shape: {dims}, but got {arr.size} elements for shape "
                    f"{list(arr.shape)}"
                )
            else:
                arr = arr.reshape(shape_list)
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


# -- PlaceholderWithDefault ---------------------------------------------------------


def _placeholder_with_default_shape(c: InferenceContext, x: TensorSpec) -> TensorShape:
    """The ``shape`` attr, which the default must agree with (a feed may be any value of
    that shape, so the output may be less precise than the default)."""
    out = as_shape(c.attrs["shape"])
    merge(x.shape, out)
    return out


PLACEHOLDER_WITH_DEFAULT = define_op(
    "PlaceholderWithDefault",
    inputs=["input: dtype"],
    outputs=["output: dtype"],
    attrs=["dtype: type", "shape: shape"],
    shape_fn=_placeholder_with_default_shape,
    aliases_input=True,
    # Stateful only so that it is never folded or merged: a run may feed it.
    is_stateful=True,
    doc="""
A placeholder that passes its ``input`` through when its output is not fed. ``input``
must be compatible with ``shape`` (the output's shape, which may be less precise);
a fed value must have that shape.

Example: ``placeholder_with_default([1, 2], shape=[None])`` gives ``[1, 2]``, or what is
fed for it.
""",
)


@register_kernel("PlaceholderWithDefault", "CPU", "GPU")
def _placeholder_with_default_kernel(ctx: KernelContext, x: Any) -> Any:
    return x


PlaceholderWithDefault = make_wrapper_class(PLACEHOLDER_WITH_DEFAULT)
_placeholder_with_default = make_builder(PLACEHOLDER_WITH_DEFAULT, "placeholder_with_default")


def placeholder_with_default(input: Any, shape: Any, name: str | None = None) -> Output:  # noqa: A002
    """``input``, unless a value is fed for the result (tf.compat.v1.placeholder_with_default).

    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     x = mg.placeholder_with_default(np.float32([1, 2]), shape=[None])
    >>> s = mg.Session(g)
    >>> s.run(x), s.run(x, {x: np.float32([5, 6, 7])})
    (array([1., 2.], dtype=float32), array([5., 6., 7.], dtype=float32))
    """
    return _placeholder_with_default(input, shape=shape, name=name or "PlaceholderWithDefault")


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
        if fill_value == 0 and ctx.attrs["T"] == dtypes.variant:
            return zeros_list(ctx, x)  # a TensorList of zeros: a list's zero gradient
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


_INT64_MAX = 2**63 - 1


def _range_count(fail: Any, start: Any, limit: Any, delta: Any) -> int:
    """TensorFlow's checks and element count (NaN fails the order checks, as there)."""
    if delta == 0:
        fail(f"Requires delta != 0: {delta}")
    if delta > 0:
        if not start <= limit:
            fail(f"Requires start <= limit when delta > 0: {start}/{limit}")
    elif not start >= limit:
        fail(f"Requires start >= limit when delta < 0: {start}/{limit}")
    if all(isinstance(v, int) for v in (start, limit, delta)):
        return -(-abs(limit - start) // abs(delta))  # exact in Python ints
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        size = np.ceil(np.abs((np.float64(limit) - np.float64(start)) / np.float64(delta)))
    if not size <= _INT64_MAX:  # inf (an infinite bound) or past int64
        fail(f"Requires ((limit - start) / delta) <= {_INT64_MAX}")
    return int(size)


def _range_scalars(fail: Any, values: Any) -> list[Any]:
    """start, limit and delta as Python numbers; each must be a scalar."""
    out = []
    for what, v in zip(("start", "limit", "delta"), values):
        if v.ndim != 0:
            fail(f"{what} must be a scalar, not shape {shape_str(v.shape)}")
        out.append(v.item())
    return out


def _range_shape(
    c: InferenceContext, start: TensorSpec, limit: TensorSpec, delta: TensorSpec
) -> TensorShape:
    for what, s in zip(("start", "limit", "delta"), (start, limit, delta)):
        if s.shape.rank is not None and s.shape.rank != 0:
            c.fail(f"{what} must be a scalar, not shape {s.shape}")
    if any(s.value is None for s in (start, limit, delta)):
        return unknown_shape(1)
    values = _range_scalars(c.fail, [start.value, limit.value, delta.value])
    return TensorShape([_range_count(c.fail, *values)])


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
    s, lim, d = _range_scalars(ctx.fail, [host_array(ctx, v) for v in (start, limit, delta)])
    n = _range_count(ctx.fail, s, lim, d)
    dtype = ctx.attrs["Tidx"].np
    if dtype.kind in "iu":
        return _integer_range(ctx, s, d, n, dtype)
    ctx.check_size([n], dtype)
    return (s + ctx.xp.arange(n, dtype=dtype) * d).astype(dtype)  # start + i * delta, as TF


# A host range is written this many elements at a time, into an output from the pool: a
# fresh np.arange pays its page faults every run. 16M int32: 7 ms against 15.
_RANGE_BLOCK = 1 << 16


def _integer_range(ctx: KernelContext, start: int, delta: int, n: int, dtype: np.dtype) -> Any:
    """start + i * delta in ``dtype``'s wrapping arithmetic: block b is ``i * delta`` for
    its i plus one offset ``b * delta + start``, the same modulo 2**bits (a product may
    wrap where the sum does not; the sum is exact)."""
    xp = ctx.xp
    out = ctx.allocate([n], dtype)
    block = _RANGE_BLOCK if xp is np else max(n, 1)  # one launch on a GPU
    ramp = xp.arange(min(block, n), dtype=dtype)
    ramp *= dtype.type(delta)
    for b in builtins.range(0, n, block):  # this module's range() is the op's builder
        part = out[b : b + block]
        xp.add(ramp[: part.size], _wrapped(dtype, b * delta + start), out=part)
    return out


def _wrapped(dtype: np.dtype, value: int) -> Any:
    """``value`` modulo 2**bits as a scalar of the integer ``dtype``."""
    bits = 8 * dtype.itemsize
    value %= 1 << bits
    if dtype.kind == "i" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return dtype.type(value)


Range = make_wrapper_class(RANGE)
_range = make_builder(RANGE, "range")


def range(
    start: Any,
    limit: Any = None,
    delta: Any = 1,
    dtype: Any = None,  # noqa: A001
    name: str = "range",
) -> Output:
    """``[start, start + delta, ...)`` below ``limit``; ``range(n)`` counts from 0, as tf.range.

    Without ``dtype``, the widest of the arguments' dtypes in int32 < int64 < float32 <
    float64 (a Python int is int32, int64 when it does not fit; a float is float32; a
    NumPy scalar keeps its dtype), as TensorFlow; tensors of another dtype are cast.
    """
    if limit is None:
        start, limit = 0, start
    values = [start, limit, delta]
    if dtype is None:
        found = [_range_dtype(v) for v in values]
        odd = [d for d in found if d not in _RANGE_HIERARCHY]
        dt = odd[0] if odd else max(found, key=_RANGE_HIERARCHY.index)
    else:
        dt = dtypes.as_dtype(dtype)
    converted = []
    for v in values:
        out = as_output(v)
        if out is None:
            converted.append(to_numpy(v, dt))
        elif out.dtype != dt and dt in _RANGE_HIERARCHY and out.dtype in _RANGE_HIERARCHY:
            converted.append(cast(out, dt))
        else:
            converted.append(out)
    return _range(*converted, name=name)


_RANGE_HIERARCHY = [dtypes.int32, dtypes.int64, dtypes.float16, dtypes.float32, dtypes.float64]


def _range_dtype(value: Any) -> DType:
    """The dtype TensorFlow gives a range argument on its own."""
    out = as_output(value)
    if out is not None:
        return out.dtype
    if isinstance(value, np.ndarray | np.generic):
        return dtypes.as_dtype(value.dtype)
    if isinstance(value, bool):
        raise TypeError(f"range arguments must be numbers, got {value!r}")
    if isinstance(value, float):
        return dtypes.float32
    return dtypes.as_dtype(to_numpy(value).dtype)  # int32, int64 if needed; or why not


# -- Cast ------------------------------------------------------------------------------------


CAST = define_op(
    "Cast",
    inputs=["x: SrcT"],
    outputs=["y: DstT"],
    attrs=["SrcT: type", "DstT: type", "Truncate: bool = False"],
    shape_fn=same_shape,
    doc="Converts ``x`` to ``DstT`` (floats to ints truncate toward zero; complex to a real "
    "type or bool keeps the real part, as TensorFlow). With "
    "``Truncate=True``, a float narrowed to a float with a shorter mantissa is rounded "
    "toward zero (the dropped mantissa bits are zeroed first), as TensorFlow does; "
    "otherwise it is rounded to nearest.",
)


@register_kernel("Cast", "CPU", "GPU")
def _cast_kernel(ctx: KernelContext, x: Any) -> Any:
    dst = ctx.attrs["DstT"].np
    if ctx.attrs["Truncate"]:
        x = _truncate_mantissa(ctx.xp, x, dst)
    if x.dtype.kind == "c" and dst.kind != "c":
        x = x.real  # as TensorFlow: the imaginary part is dropped, even for bool (1j: False)
    return x.astype(dst)


# Mantissa bits of each float kind (a complex dtype's parts count as its float).
_MANTISSA_BITS = {2: 10, 4: 23, 8: 52}


def _truncate_mantissa(xp: Any, x: Any, dst: np.dtype) -> Any:
    """``Truncate=True`` as TensorFlow's LSBZeroSetter: a float cast to a float type with a
    shorter mantissa first zeroes the mantissa bits the target lacks (rounding toward zero
    instead of to nearest); NaN stays NaN. Other casts are unchanged."""
    if x.dtype.kind not in "fc" or dst.kind not in "fc":
        return x
    part = x.real.dtype if x.dtype.kind == "c" else x.dtype
    dst_part = np.dtype(dst).type(0).real.dtype
    drop = _MANTISSA_BITS[part.itemsize] - _MANTISSA_BITS[dst_part.itemsize]
    if drop <= 0:
        return x
    uint = np.dtype(f"u{part.itemsize}")
    mask = uint.type(~np.uint64((1 << drop) - 1) & np.uint64(np.iinfo(uint).max))
    if x.dtype.kind == "c":
        re = _truncate_mantissa(xp, x.real.copy(), dst_part)
        im = _truncate_mantissa(xp, x.imag.copy(), dst_part)
        return re + 1j * im.astype(x.dtype)
    bits = (x if x.flags.c_contiguous else x.copy()).view(uint)  # view: C order only
    cut = (bits & mask).view(part)
    return xp.where(xp.isnan(x), x, cut)


Cast = make_wrapper_class(CAST)
_cast = make_builder(CAST, "cast")


def cast(x: Any, dtype: Any, name: str | None = None) -> Output:
    """``x`` converted to ``dtype``; ``x`` itself when it already has that dtype."""
    if dtype is None:
        raise TypeError("Expected DataType for argument 'dtype' not None.")
    dt: DType = dtypes.as_dtype(dtype)
    out = convert_to_output(x)
    return out if out.dtype == dt else _cast(out, DstT=dt, name=name or "Cast")


# -- IdentityN, StopGradient, PreventGradient, Snapshot, NoOp ------------------------------


def _identity_n_shape(c: InferenceContext, xs: list[TensorSpec]) -> list[TensorShape]:
    return [x.shape for x in xs]


IDENTITY_N = define_op(
    "IdentityN",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: list(type) >= 1"],
    shape_fn=_identity_n_shape,
    doc="Returns its list of inputs, of any dtypes, unchanged.",
)


@register_kernel("IdentityN", "CPU", "GPU")
def _identity_n_kernel(ctx: KernelContext, xs: list[Any]) -> list[Any]:
    # Copies: the plan knows an op's outputs as views of its input 0 only (aliases_input),
    # so returning any input as it is would let a later consumer overwrite it in place.
    return [x.copy() for x in xs]


IdentityN = make_wrapper_class(IDENTITY_N)
_identity_n = make_builder(IDENTITY_N, "identity_n")


def identity_n(input: Any, name: str | None = None) -> list[Output]:  # noqa: A002
    """Each of a list of tensors, unchanged, as ``tf.identity_n``."""
    return _identity_n(list(input), name=name or "IdentityN")


def _identity_like(op_type: str, attrs: list[str], doc: str, copy: bool) -> Any:
    """An op whose output is its input (``copy``: a new buffer holding the same values)."""
    op_def = define_op(
        op_type,
        inputs=["input: T"],
        outputs=["output: T"],
        attrs=["T: type", *attrs],
        shape_fn=same_shape,
        aliases_input=not copy,
        doc=doc,
    )

    def kernel(ctx: KernelContext, x: Any) -> Any:
        return x.copy() if copy else x

    register_kernel(op_type, "CPU", "GPU")(kernel)
    return make_wrapper_class(op_def), make_builder(op_def)


StopGradient, _stop_gradient = _identity_like(
    "StopGradient",
    [],
    "Returns its input; gradients do not flow through it (``mg.gradients`` holds it constant).",
    copy=False,
)
PreventGradient, _prevent_gradient = _identity_like(
    "PreventGradient",
    ["message: string = ''"],
    "Returns its input; taking its gradient is an error carrying ``message``.",
    copy=False,
)
Snapshot, _snapshot = _identity_like(
    "Snapshot", [], "A copy of its input (a new buffer with the same values).", copy=True
)


def stop_gradient(input: Any, name: str | None = None) -> Output:  # noqa: A002
    """Returns ``input`` unchanged, as ``tf.stop_gradient``."""
    return _stop_gradient(input, name=name or "StopGradient")


def _no_op_shape(c: InferenceContext) -> list[TensorShape]:
    return []


NO_OP = define_op(
    "NoOp",
    shape_fn=_no_op_shape,
    doc="Does nothing; a node to hang control dependencies on, run for its effect.",
)


@register_kernel("NoOp", "CPU", "GPU")
def _no_op_kernel(ctx: KernelContext) -> tuple[()]:
    return ()


NoOp = make_wrapper_class(NO_OP)


def no_op(name: str | None = None) -> Any:
    """A node that does nothing, as ``tf.no_op``; returns its Operation.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     x = mg.constant(1)
    ...     with mg.control_dependencies([x]):
    ...         done = mg.no_op(name="done")
    >>> done.type, mg.Session(g).run(done) is None
    ('NoOp', True)
    """
    scope = current_scope().with_op_name(name or "NoOp")
    return apply_op("NoOp", scope, [], {})


__all__ = [
    "Const",
    "Placeholder",
    "PlaceholderWithDefault",
    "Identity",
    "Fill",
    "ZerosLike",
    "OnesLike",
    "Range",
    "Cast",
    "IdentityN",
    "StopGradient",
    "PreventGradient",
    "Snapshot",
    "NoOp",
    *BUILDERS,
]
