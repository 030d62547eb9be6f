"""Elementwise math with NumPy broadcasting: arithmetic, TensorFlow's five divisions,
powers, and the unary functions.

Ops: Add, AddV2, Sub, Mul, RealDiv, Div, DivNoNan, FloorDiv, FloorMod, TruncateDiv,
TruncateMod, Pow, SquaredDifference, Maximum, Minimum, Atan2, Neg, Abs, Sign, Square, Sqrt,
Rsqrt, Reciprocal, Exp, Expm1, Log, Log1p, Sin, Cos, Tanh, Sigmoid, Erf, Erfc, Floor,
Ceil, Round, Rint, IsNan, IsInf, IsFinite. Comparisons, logical ops, Select and
ClipByValue are in compare_ops; MatMul and Einsum in linalg_ops.

One factory, :func:`elementwise`, declares and registers each op; a kernel is a ufunc
name (whose kernel writes into a forwardable input buffer when the executor offers one,
so a chain of elementwise ops on a large tensor needs about two buffers) or a function
of ``(xp, *arrays)`` written once for NumPy and CuPy (those live in math_kernels, with
each op's C expression for fused GPU kernels). Both operands must have the same
dtype: minigraph never mixes int and float silently (``mg.cast`` says so explicitly), as
TensorFlow. Integer division by zero is an InvalidArgumentError (checked before
computing); float division follows IEEE, with NumPy's warnings silenced.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minigraph import dtypes
from minigraph.fusion_jit import run_op
from minigraph.graph import Output, register_operator
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import REUSE_MIN_SIZE, UNPAID_VIEW_SIZE, KernelContext
from minigraph.op_def import Elementwise
from minigraph.ops import special
from minigraph.ops.common import (
    FLOAT,
    INEXACT,
    NUMBER,
    REAL,
    remember,
    type_set,
    widened_ufunc,
)
from minigraph.ops.math_kernels import (
    _CUDA_FORMS,
    _HOST_FORMS,
    _WRITE_OUT,
    _div,
    _div_no_nan,
    _floor_div,
    _floor_mod,
    _no_negative_power,
    _no_zero_divisor,
    _round,
    _rsqrt,
    _sigmoid,
    _sign,
    _squared_difference,
    _truncate_div,
)
from minigraph.registry import define_op, register_kernel
from minigraph.runs import may_widen
from minigraph.shapes import TensorShape, broadcast
from minigraph.wrappers import as_output, convert_to_output, make_builder, make_wrapper_class

BUILDERS = (
    "add",
    "subtract",
    "multiply",
    "divide",
    "truediv",
    "floordiv",
    "floormod",
    "mod",
    "truncatediv",
    "truncatemod",
    "pow",
    "squared_difference",
    "div_no_nan",
    "negative",
    "maximum",
    "minimum",
    "atan2",
    "abs",
    "sign",
    "square",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "exp",
    "expm1",
    "log",
    "log1p",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "erf",
    "erfc",
    "floor",
    "ceil",
    "round",
    "rint",
    "is_nan",
    "is_inf",
    "is_finite",
)

# TensorFlow's type sets (bfloat16 aside, which minigraph has not).
SIGNED = type_set(dtypes.FLOAT_TYPES + (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64))
SIGNED_OR_COMPLEX = type_set(
    dtypes.FLOAT_TYPES
    + (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64)
    + dtypes.COMPLEX_TYPES
)
# TensorFlow's Add (v1) takes uint8 but no wider unsigned type, unlike AddV2
ADD_V1_TYPES = type_set(
    dtypes.FLOAT_TYPES
    + (dtypes.uint8, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64)
    + dtypes.COMPLEX_TYPES
)
TRUNCATE_MOD_TYPES = type_set((dtypes.int32, dtypes.int64) + dtypes.FLOAT_TYPES)
SQUARED_DIFFERENCE_TYPES = type_set(
    dtypes.FLOAT_TYPES + (dtypes.int32, dtypes.int64) + dtypes.COMPLEX_TYPES
)

Check = Callable[[KernelContext, Any, Any], None]


def _unary_shape(c: InferenceContext, x: TensorSpec) -> TensorShape:
    return x.shape


def _binary_shape(c: InferenceContext, x: TensorSpec, y: TensorSpec) -> TensorShape:
    return broadcast(x.shape, y.shape)


# Reusing an input buffer saves memory and page faults on large tensors; below this many
# elements a fresh array costs less than checking whether one can be reused.
_FORWARD_MIN_SIZE = REUSE_MIN_SIZE


def _compute(ctx: KernelContext, fn: Any, np_fn: Any, args: tuple, out: Any) -> Any:
    """``fn(*args)``: a ufunc (``np_fn`` on the CPU, CuPy's of that name on the GPU), or a
    function of ``(xp, *args)``."""
    xp = ctx.xp
    if np_fn is None:
        return fn(xp, *args) if out is None else fn(xp, *args, out=out)
    ufunc = np_fn if xp is np else getattr(xp, fn)
    return ufunc(*args) if out is None else ufunc(*args, out=out)


def _finish(xp: Any, r: Any, dtype: Any, shape: tuple) -> Any:
    if r.dtype != dtype:
        r = r.astype(dtype)
    return r if shape else xp.asarray(r)  # NumPy gives scalars for 0-d operands


# ufuncs whose output dtype is the out_type of their ops (bool) with no cast needed
_COMPARISONS = frozenset(
    ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and"]
    + ["logical_or"]
)


def _binary_kernel(fn: Any, out_type: Any, check: Check | None, incompatible: bool | None) -> Any:
    np_fn: Any = getattr(np, fn) if isinstance(fn, str) else None
    forwards = np_fn is not None and out_type is None
    plain = np_fn is not None and (out_type is None or fn in _COMPARISONS)

    def kernel(ctx: KernelContext, x: Any, y: Any) -> Any:
        known = ctx.memo.get("plain")  # operand shapes for which the ufunc call is all
        if known is not None:
            scalar = known.get((x.shape, y.shape))
            if scalar is not None:  # the hot path: a loop body's step, every iteration
                r = np_fn(x, y)
                return np.asarray(r) if scalar else r  # NumPy gives scalars for 0-d operands
        xp = ctx.xp
        if x.shape == y.shape or not y.ndim:
            shape = x.shape
        elif not x.ndim:
            shape = y.shape
        elif y.ndim < x.ndim and x.shape[x.ndim - y.ndim :] == y.shape:
            shape = x.shape  # y repeats along x's leading axes, as a bias (1 µs saved)
        else:
            try:
                shape = np.broadcast_shapes(x.shape, y.shape)
            except ValueError:
                if incompatible is not None and not ctx.attrs["incompatible_shape_error"]:
                    return xp.asarray(incompatible)
                ctx.fail(f"Incompatible shapes: {TensorShape(x.shape)} vs. {TensorShape(y.shape)}")
            ctx.check_size(shape, x.dtype)  # both sides broadcast: the output can be huge
        if check is not None and x.dtype.kind in "iu" and 0 not in shape:
            check(ctx, x, y)
        out = None
        if forwards and ctx.forwardable and x.size >= _FORWARD_MIN_SIZE:
            out = ctx.forwarded((x, y), shape, x.dtype)
        if out is None and x.size >= UNPAID_VIEW_SIZE:
            ctx.check_size(shape, x.dtype)  # x may be a broadcast view: its size is unpaid
        if plain:  # the executor's hot path (Add, Mul...): one ufunc call
            ufunc = np_fn if xp is np else getattr(xp, fn)
            if forwards and xp is np and x.ndim and y.ndim and x.shape != y.shape:
                if may_widen((x.size, y.size), math.prod(shape)):  # a short repeated operand
                    out = ctx.empty(shape, x.dtype) if out is None else out
                    return widened_ufunc(ufunc, x, y, out)
            if out is None:
                if check is None and xp is np and shape in (x.shape, y.shape):  # unchecked
                    if math.prod(shape) < _FORWARD_MIN_SIZE:  # and nothing to forward
                        remember(ctx, "plain", (x.shape, y.shape), not shape)
                r = ufunc(x, y)
            else:
                r = ufunc(x, y, out=out)
            return r if shape else xp.asarray(r)  # NumPy gives scalars for 0-d operands
        r = _compute(ctx, fn, np_fn, (x, y), out)
        return _finish(xp, r, x.dtype if out_type is None else out_type, shape)

    def specialize(ctx: KernelContext, dims: Sequence[Any]) -> Any:
        """The bare NumPy ufunc, when the kernel would do nothing else: shapes known to
        broadcast to a small, non-scalar output (no size check, no buffer to reuse)."""
        if not plain or check is not None or ctx.xp is not np:
            return None
        if any(d is None or None in d for d in dims):
            return None
        try:
            shape = np.broadcast_shapes(*dims)
        except ValueError:
            return None
        size = math.prod(shape)
        if not shape or size >= _FORWARD_MIN_SIZE:
            return None
        return None if may_widen([math.prod(d) for d in dims], size) else np_fn

    kernel.specialize = specialize  # type: ignore[attr-defined]
    return kernel


# Ops whose NumPy kernel makes many passes over memory (erf: a rational approximation per
# region): a large host tensor runs as a one-op chain's compiled loops (fusion_jit.run_op).
_COMPILED_ALONE = frozenset([special.erf, special.erfc])


def _unary_kernel(fn: Any, out_type: Any) -> Any:
    np_fn: Any = getattr(np, fn) if isinstance(fn, str) else None
    forwards = (np_fn is not None or fn in _WRITE_OUT) and out_type is None
    plain = np_fn is not None and out_type is None
    compiled_alone = fn in _COMPILED_ALONE

    def kernel(ctx: KernelContext, x: Any) -> Any:
        if plain and ctx.xp is np and x.ndim and x.size < _FORWARD_MIN_SIZE:
            r = np_fn(x)  # the hot path (a loop body's Tanh): nothing to reuse or check
            return r if r.dtype is x.dtype else _finish(np, r, x.dtype, x.shape)
        out = None
        if forwards and ctx.forwardable and x.size >= _FORWARD_MIN_SIZE:
            out = ctx.forwarded((x,), x.shape, x.dtype)
        if out is None and x.size >= UNPAID_VIEW_SIZE:
            ctx.check_size(x.shape, x.dtype)  # x may be a broadcast view: its size is unpaid
        if compiled_alone and (r := run_op(ctx, (x,), out)) is not None:
            return r
        r = _compute(ctx, fn, np_fn, (x,), out)
        return _finish(ctx.xp, r, x.dtype if out_type is None else out_type, x.shape)

    def specialize(ctx: KernelContext, dims: Sequence[Any]) -> Any:
        """The bare NumPy ufunc for a small, non-scalar input of known shape, when it gives
        the op's dtype itself (nothing for ``_finish`` to cast)."""
        if np_fn is None or ctx.xp is not np or "T" not in ctx.attrs:
            return None
        (d,) = dims
        if d is None or None in d or not d or math.prod(d) >= _FORWARD_MIN_SIZE:
            return None
        dtype = ctx.attrs["T"].np
        try:
            got = np_fn.resolve_dtypes((dtype, None))[-1]
        except (TypeError, AttributeError):  # no loop for it; a NumPy without resolve_dtypes
            return None
        return np_fn if got == (dtype if out_type is None else out_type) else None

    kernel.specialize = specialize  # type: ignore[attr-defined]
    return kernel


def elementwise(
    op_type: str,
    fn: str | Callable[..., Any],
    types: str,
    *,
    builder: str,
    binary: bool = True,
    out_type: str | None = None,
    check: Check | None = None,
    attrs: Sequence[str] = (),
    shape_fn: Callable[..., Any] | None = None,
    incompatible: bool | None = None,
    doc: str = "",
) -> tuple[Any, type]:
    """Declare, register and generate one elementwise op; returns (builder, class).

    ``types`` is a type constraint (``{float32, float64}``) or one dtype (``bool``);
    ``fn`` is a ufunc name (NumPy's and CuPy's) or a function of ``(xp, *arrays)``;
    ``check(ctx, x, y)`` runs first on integer operands (division by zero);
    ``incompatible`` is the scalar a binary op gives for shapes that do not broadcast
    when its ``incompatible_shape_error`` attr is false (Equal, NotEqual).
    """
    fixed = not types.startswith("{")  # one dtype ("bool"): no type attr, as TF's LogicalAnd
    t = types if fixed else "T"
    ins = [f"x: {t}", f"y: {t}"] if binary else [f"x: {t}"]
    op_def = define_op(
        op_type,
        inputs=ins,
        outputs=[f"z: {out_type or t}"] if binary else [f"y: {out_type or t}"],
        attrs=[*([] if fixed else [f"T: {types}"]), *attrs],
        shape_fn=shape_fn or (_binary_shape if binary else _unary_shape),
        doc=doc,
        elementwise=_fusable(fn) if out_type is None and check is None else None,
    )
    dtype = None if out_type is None else np.dtype(dtypes.as_dtype(out_type).np)
    if binary:
        kernel = _binary_kernel(fn, dtype, check, incompatible)
    else:
        kernel = _unary_kernel(fn, dtype)
    register_kernel(op_type, "CPU", "GPU")(kernel)
    return make_builder(op_def, builder), make_wrapper_class(op_def)


def _fusable(fn: str | Callable[..., Any]) -> Elementwise:
    """How elementwise fusion runs this op in place: the ufunc, or ``fn``'s result copied
    into the buffer (cast as the kernel casts it)."""
    cuda, host = _by_kind(_CUDA_FORMS, fn), _by_kind(_HOST_FORMS, fn)
    if isinstance(fn, str):
        return Elementwise.ufunc(fn, cuda=cuda, host=host)
    if fn in _WRITE_OUT:
        return Elementwise(_WRITE_OUT[fn], cuda=cuda, host=host)  # type: ignore[index]
    return Elementwise.result(lambda xp, attrs, *args: fn(xp, *args), cuda=cuda, host=host)


def _by_kind(forms: dict[Any, dict[str, Any]], fn: str | Callable[..., Any]) -> Any:
    """The op's expression in ``forms`` (a C expression for a fused GPU kernel, or a
    Python one for a compiled host loop), by dtype kind (a callable: of the dtype): each
    mirrors the kernel above step by step, so a fused chain gives its bits."""
    by_kind = forms.get(fn)  # type: ignore[call-overload]
    if by_kind is None:
        return None

    def form(attrs: Any, dtype: Any) -> Any:
        made = by_kind.get(np.dtype(dtype).kind)
        return made(dtype) if callable(made) else made

    return form


# -- Binary ops ------------------------------------------------------------------------------

add, AddV2 = elementwise(
    "AddV2",
    "add",
    NUMBER,
    builder="add",
    doc="""
x + y, with broadcasting: what ``tf.add`` and ``+`` emit in TensorFlow 2. Integers wrap.

>>> import minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     z = mg.add([1, 2, 3], 10)
>>> mg.Session(g).run(z)
array([11, 12, 13], dtype=int32)
""",
)
_add_v1, Add = elementwise(
    "Add", "add", ADD_V1_TYPES, builder="add_v1", doc="x + y, with broadcasting (TF 1.x graphs)."
)
subtract, Sub = elementwise(
    "Sub", "subtract", NUMBER, builder="subtract", doc="x - y, with broadcasting."
)
multiply, Mul = elementwise(
    "Mul", "multiply", NUMBER, builder="multiply", doc="x * y, with broadcasting."
)
_real_div, RealDiv = elementwise(
    "RealDiv",
    "true_divide",
    INEXACT,
    builder="real_div",
    doc="x / y for floating and complex types (IEEE: 1/0 is inf, 0/0 is NaN).",
)
_div_v1, Div = elementwise(
    "Div",
    _div,
    NUMBER,
    builder="div",
    check=_no_zero_divisor,
    doc="""
x / y as TensorFlow 1's ``Div``: integers truncate towards zero (``-7 / 2`` is -3), floats
and complex numbers divide exactly. An integer division by zero is an InvalidArgumentError
("Integer division by zero").
""",
)
truncatediv, TruncateDiv = elementwise(
    "TruncateDiv",
    _truncate_div,
    REAL,
    builder="truncatediv",
    check=_no_zero_divisor,
    doc="""
x / y rounded towards zero, as C: ``-7 / 2`` is -3. An integer division by zero is an
InvalidArgumentError (TensorFlow raises an InternalError).
""",
)
truncatemod, TruncateMod = elementwise(
    "TruncateMod",
    "fmod",
    TRUNCATE_MOD_TYPES,
    builder="truncatemod",
    check=_no_zero_divisor,
    doc="""
The remainder of ``truncatediv``, with the sign of x (C's ``%`` and ``fmod``):
``TruncateMod(-7, 2)`` is -1. An integer division by zero is an InvalidArgumentError.
""",
)
floordiv, FloorDiv = elementwise(
    "FloorDiv",
    _floor_div,
    REAL,
    builder="floordiv",
    check=_no_zero_divisor,
    doc="""
x / y rounded towards negative infinity (``//``). For floats it is ``floor(x / y)`` of
the rounded quotient, as TensorFlow (``1.0 // 0.1`` is 10.0; NumPy's is 9.0). An integer
division by zero is an InvalidArgumentError ("Integer division by zero").

>>> import minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     q = mg.floordiv([7, -7], [2, 2])
>>> mg.Session(g).run(q)
array([ 3, -4], dtype=int32)
""",
)
floormod, FloorMod = elementwise(
    "FloorMod",
    _floor_mod,
    REAL,
    builder="floormod",
    check=_no_zero_divisor,
    doc="""
The remainder of ``floordiv``, with the sign of y (``%``): ``x - floordiv(x, y) * y``.
``FloorMod(-7, 2)`` is 1. Floats follow TensorFlow's ``fmod``-based formula (``-5 % inf``
is inf). An integer division by zero is an InvalidArgumentError.
""",
)
mod = floormod
div_no_nan, DivNoNan = elementwise(
    "DivNoNan",
    _div_no_nan,
    INEXACT,
    builder="div_no_nan",
    doc="x / y, but 0 wherever y is 0 (even when x is NaN or infinite).",
)
pow, Pow = elementwise(  # tf.pow
    "Pow",
    "power",
    SIGNED_OR_COMPLEX,
    builder="pow",
    check=_no_negative_power,
    doc="""
x to the power y. Integers wrap on overflow; a negative integer exponent is an
InvalidArgumentError ("Integers to negative integer powers are not allowed").
""",
)
squared_difference, SquaredDifference = elementwise(
    "SquaredDifference",
    _squared_difference,
    SQUARED_DIFFERENCE_TYPES,
    builder="squared_difference",
    doc="(x - y) * conj(x - y), with broadcasting.",
)
maximum, Maximum = elementwise(
    "Maximum",
    "maximum",
    REAL,
    builder="maximum",
    doc="The larger of x and y, elementwise (NaN propagates).",
)
minimum, Minimum = elementwise(
    "Minimum",
    "minimum",
    REAL,
    builder="minimum",
    doc="The smaller of x and y, elementwise (NaN propagates).",
)


# TensorFlow names Atan2's inputs y and x (the factory's are x and y), so it is declared here.
ATAN2 = define_op(
    "Atan2",
    inputs=["y: T", "x: T"],
    outputs=["z: T"],
    attrs=[f"T: {FLOAT}"],
    shape_fn=_binary_shape,
    elementwise=_fusable("arctan2"),
    doc="""
The angle of the point (x, y) in radians, in [-pi, pi], with broadcasting: atan(y / x)
placed in the right quadrant by the signs of both (C's ``atan2``, signed zeros and
infinities included).
""",
)
register_kernel("Atan2", "CPU", "GPU")(_binary_kernel("arctan2", None, None, None))
Atan2 = make_wrapper_class(ATAN2)
atan2 = make_builder(ATAN2, "atan2")


# -- Unary ops -------------------------------------------------------------------------------


def _unary(
    op_type: str,
    fn: Any,
    types: str,
    doc: str,
    out_type: str | None = None,
    builder: str | None = None,
) -> tuple[Any, type]:
    """One unary op; its builder is named as TF's (``IsNan`` -> ``is_nan``)."""
    if builder is None:
        builder = "".join("_" + c.lower() if c.isupper() else c for c in op_type).lstrip("_")
    return elementwise(
        op_type,
        fn,
        types,
        builder=builder,
        binary=False,
        out_type=out_type,
        doc=doc,
    )


negative, Neg = _unary(
    "Neg", "negative", SIGNED_OR_COMPLEX, "-x, elementwise (integers wrap).", builder="negative"
)
abs, Abs = _unary("Abs", "absolute", SIGNED, "|x|, elementwise (integers wrap: |min| is min).")
sign, Sign = _unary(
    "Sign",
    _sign,
    SIGNED_OR_COMPLEX,
    "-1, 0 or 1 by the sign of x (NaN for NaN); x / |x| for complex x, 0 for 0.",
)
square, Square = _unary("Square", "square", NUMBER, "x * x, elementwise.")
sqrt, Sqrt = _unary("Sqrt", "sqrt", INEXACT, "The square root (NaN below 0 for reals).")
rsqrt, Rsqrt = _unary("Rsqrt", _rsqrt, INEXACT, "1 / sqrt(x), elementwise.")
reciprocal, Reciprocal = _unary("Reciprocal", "reciprocal", INEXACT, "1 / x, elementwise.")
exp, Exp = _unary("Exp", "exp", INEXACT, "e to the power x.")
expm1, Expm1 = _unary("Expm1", "expm1", INEXACT, "exp(x) - 1, accurate near 0.")
log, Log = _unary("Log", "log", INEXACT, "The natural logarithm (-inf at 0, NaN below).")
log1p, Log1p = _unary("Log1p", "log1p", INEXACT, "log(1 + x), accurate near 0.")
sin, Sin = _unary("Sin", "sin", INEXACT, "The sine, elementwise.")
cos, Cos = _unary("Cos", "cos", INEXACT, "The cosine, elementwise.")
tanh, Tanh = _unary("Tanh", "tanh", INEXACT, "The hyperbolic tangent, elementwise.")
sigmoid, Sigmoid = _unary(
    "Sigmoid", _sigmoid, INEXACT, "1 / (1 + exp(-x)) (0 where exp(-x) overflows, as in TensorFlow)."
)
erf, Erf = _unary(
    "Erf",
    special.erf,
    FLOAT,
    """
The error function, 2/sqrt(pi) times the integral of exp(-t*t) from 0 to x.

>>> import minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.erf([0.0, 0.5, -1.0])
>>> mg.Session(g).run(y)
array([ 0.       ,  0.5204999, -0.8427008], dtype=float32)
""",
)
erfc, Erfc = _unary("Erfc", special.erfc, FLOAT, "1 - erf(x), accurate where erf(x) is near 1.")
floor, Floor = _unary("Floor", "floor", FLOAT, "The largest integer not above x.")
ceil, Ceil = _unary("Ceil", "ceil", FLOAT, "The smallest integer not below x.")
round, Round = _unary(  # tf.round
    "Round",
    _round,
    SIGNED_OR_COMPLEX,
    """
x rounded to the nearest integer, halves to even (banker's rounding, as ``tf.round``);
integers are returned unchanged, complex numbers are rounded part by part.

>>> import minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.round([0.5, 1.5, 2.5, -0.5, -1.7])
>>> mg.Session(g).run(y)
array([ 0.,  2.,  2., -0., -2.], dtype=float32)
""",
)
rint, Rint = _unary("Rint", "rint", FLOAT, "The nearest integer, halves to even.")
is_nan, IsNan = _unary("IsNan", "isnan", FLOAT, "Whether x is NaN.", "bool")
is_inf, IsInf = _unary("IsInf", "isinf", FLOAT, "Whether x is +inf or -inf.", "bool")
is_finite, IsFinite = _unary(
    "IsFinite", "isfinite", FLOAT, "Whether x is neither infinite nor NaN.", "bool"
)


# -- Division as the Python operators do it ------------------------------------------------

# tf.math.truediv: integers are divided as floats (int8/16 -> float32, wider -> float64).
_TRUEDIV_FLOAT = {
    dtypes.int8: dtypes.float32,
    dtypes.int16: dtypes.float32,
    dtypes.uint8: dtypes.float32,
    dtypes.uint16: dtypes.float32,
    dtypes.int32: dtypes.float64,
    dtypes.int64: dtypes.float64,
    dtypes.uint32: dtypes.float64,
    dtypes.uint64: dtypes.float64,
}


def divide(x: Any, y: Any, name: str | None = None) -> Output:
    """x / y as ``tf.divide``: floats divide as they are, integers are cast to float first.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     q = mg.divide(mg.constant([1, 3]), mg.constant([2, 2]))
    >>> q.dtype
    mg.float64
    """
    from minigraph.ops.array_ops import cast

    xo, yo = as_output(x), as_output(y)
    if xo is None:
        xo = convert_to_output(x, None if yo is None else yo.dtype)
    if yo is None:
        yo = convert_to_output(y, xo.dtype)
    target = _TRUEDIV_FLOAT.get(xo.dtype)
    if target is not None:
        xo, yo = cast(xo, target), cast(yo, target)
    return _real_div(xo, yo, name=name or "truediv")


truediv = divide


def reflected(fn: Any) -> Any:
    return lambda self, other: fn(other, self)


for _method, _fn in [
    ("__add__", add),
    ("__sub__", subtract),
    ("__mul__", multiply),
    ("__truediv__", divide),
    ("__floordiv__", floordiv),
    ("__mod__", floormod),
    ("__pow__", pow),
]:
    register_operator(_method, _fn)
    register_operator(_method.replace("__", "__r", 1), reflected(_fn))
register_operator("__neg__", negative)
register_operator("__abs__", abs)

__all__ = [
    "Add",
    "AddV2",
    "Sub",
    "Mul",
    "RealDiv",
    "Div",
    "DivNoNan",
    "FloorDiv",
    "FloorMod",
    "TruncateDiv",
    "TruncateMod",
    "Pow",
    "SquaredDifference",
    "Maximum",
    "Minimum",
    "Atan2",
    "Neg",
    "Abs",
    "Sign",
    "Square",
    "Sqrt",
    "Rsqrt",
    "Reciprocal",
    "Exp",
    "Expm1",
    "Log",
    "Log1p",
    "Sin",
    "Cos",
    "Tanh",
    "Sigmoid",
    "Erf",
    "Erfc",
    "Floor",
    "Ceil",
    "Round",
    "Rint",
    "IsNan",
    "IsInf",
    "IsFinite",
    *BUILDERS,
]
