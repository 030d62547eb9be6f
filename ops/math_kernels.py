"""The functions behind math_ops' elementwise kernels where NumPy has no one ufunc:
TensorFlow's integer checks and divisions, Sigmoid written into its output, Round, and each
op's C expression for fused GPU kernels (op_def.Elementwise.cuda). Each is written once
against ``xp`` (NumPy or CuPy)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from minigraph.kernel import KernelContext
from minigraph.op_def import AroundUfunc
from minigraph.ops import special


def _no_zero_divisor(ctx: KernelContext, x: Any, y: Any) -> None:
    if not y.all():
        ctx.fail("Integer division by zero")


def _no_negative_power(ctx: KernelContext, x: Any, y: Any) -> None:
    if y.dtype.kind == "i" and (y < 0).any():
        ctx.fail("Integers to negative integer powers are not allowed")


def _truncate_div(xp: Any, x: Any, y: Any) -> Any:
    if x.dtype.kind == "u":
        return xp.floor_divide(x, y)
    if x.dtype.kind == "i":  # floor, then one step towards zero where it rounded down
        q = xp.floor_divide(x, y)
        return q + ((q * y != x) & ((x < 0) != (y < 0))).astype(q.dtype)
    return xp.trunc(x / y)


def _div(xp: Any, x: Any, y: Any) -> Any:
    return _truncate_div(xp, x, y) if x.dtype.kind in "iu" else x / y


def _floor_div(xp: Any, x: Any, y: Any) -> Any:
    if x.dtype.kind in "iu":
        return xp.floor_divide(x, y)
    return xp.floor(x / y)  # TF: the floor of the rounded quotient (1.0 // 0.1 is 10)


def _floor_mod(xp: Any, x: Any, y: Any) -> Any:
    if x.dtype.kind in "iu":
        return xp.remainder(x, y)
    r = xp.fmod(x, y)  # TF's formula: the sign of zero is fmod's, infinities as TF
    return xp.where((r != 0) & ((y < 0) != (r < 0)), r + y, r)


def _div_no_nan(xp: Any, x: Any, y: Any) -> Any:
    q = x / y
    return xp.where(y == 0, xp.zeros((), q.dtype), q)


def _squared_difference(xp: Any, x: Any, y: Any) -> Any:
    d = x - y
    return d * xp.conj(d) if d.dtype.kind == "c" else d * d


def _sign(xp: Any, x: Any) -> Any:
    if x.dtype.kind != "c":
        return xp.sign(x)
    a = xp.abs(x)
    return x / (a + (a == 0))  # x / |x|, and 0 for 0


def _rsqrt(xp: Any, x: Any) -> Any:
    return 1 / xp.sqrt(x)


def _sigmoid(xp: Any, x: Any, out: Any = None) -> Any:
    """The sigmoid of x, into ``out`` when given (which may be x: fusion's running value)."""
    if x.dtype.kind == "c":
        result = 1 / (1 + xp.exp(-x))
        if out is None:
            return result
        xp.copyto(out, result)
        return out
    one = _scalar(xp, 1, x.dtype)
    out = xp.empty(x.shape, x.dtype) if out is None else out  # (0-d too: not a scalar)
    if x.dtype.itemsize > 2:
        return _logistic(xp, x, out, one)
    # float16: exp(-x) overflows from x < -11 where the sigmoid is still a float16 number
    # (TensorFlow computes it in float32). With e = exp(-|x|) <= 1, 1 / (1 + e) where
    # x >= 0, else e / (1 + e): the numerator is max(e, x >= 0) (and NaN stays NaN).
    e = xp.exp(-xp.abs(x))
    xp.maximum(e, x >= _scalar(xp, 0, x.dtype), out=out)
    e += one
    return xp.divide(out, e, out=out)


def _logistic(xp: Any, x: Any, out: Any, one: Any) -> Any:
    """1 / (1 + exp(-x)) into ``out`` in four passes (float32 and wider; ``one`` is 1 for
    the ufuncs): where exp(-x) overflows (x < -88.7 in float32) the result is 0, as
    TensorFlow's (which flushes its subnormals to zero too)."""
    xp.negative(x, out=out)
    xp.exp(out, out=out)
    xp.add(out, one, out=out)
    return xp.divide(one, out, out=out)


def _sigmoid_into(xp: Any, attrs: Any) -> Any:
    """Sigmoid in a fused chain (op_def.Elementwise.bind): for float32 and wider, the four
    passes with their 1 made once (a loop body's gates at batch 1 run it every step)."""
    dtype = np.dtype(attrs["T"].np)
    if dtype.kind != "f" or dtype.itemsize <= 2:
        return lambda x, out: _sigmoid(xp, x, out=out)
    one = _scalar(xp, 1, dtype)
    return lambda x, out: _logistic(xp, x, out, one)


def _scalar(xp: Any, value: int, dtype: Any) -> Any:
    """``value`` for a ufunc call with arrays of ``dtype``: on the host a read-only 0-d array
    made once (NumPy 2 takes 0.7 µs to place a Python scalar in a call on a tiny array);
    on a GPU the Python scalar itself (a CuPy array belongs to one device)."""
    return _zero_d(value, np.dtype(dtype)) if xp is np else value


@functools.lru_cache(maxsize=64)
def _zero_d(value: int, dtype: np.dtype) -> np.ndarray:
    a = np.full((), value, dtype)
    a.flags.writeable = False
    return a


# Functions of (xp, x) that also take ``out=``: their kernels and fused chains write there
# (each with its op_def.Elementwise.bind).
_WRITE_OUT = {_sigmoid: _sigmoid_into}


def _round(xp: Any, x: Any) -> Any:
    # Half to even. TF's CPU kernel gives zeros for ints (a bug tf.round never reaches).
    return x.copy() if x.dtype.kind in "iu" else xp.rint(x)


# Each op's C expression by dtype kind, for fused GPU kernels (see _cuda): mg_max and mg_min
# are NumPy's maximum and minimum (NaN wins; minigraph.fusion_cuda defines them).
_FLOAT_ONLY = {
    name: {"f": f"{name}({{0}})"}
    for name in ("sqrt", "exp", "expm1", "log", "log1p", "sin", "cos", "tanh", "floor", "ceil")
}
_CUDA_FORMS: dict[Any, dict[str, str]] = {
    "add": dict.fromkeys("fiu", "{0} + {1}"),
    "subtract": dict.fromkeys("fiu", "{0} - {1}"),
    "multiply": dict.fromkeys("fiu", "{0} * {1}"),
    "true_divide": {"f": "{0} / {1}"},
    "maximum": dict.fromkeys("fiu", "mg_max({0}, {1})"),
    "minimum": dict.fromkeys("fiu", "mg_min({0}, {1})"),
    "power": {"f": "pow({0}, {1})"},
    "arctan2": {"f": "atan2({0}, {1})"},
    "negative": dict.fromkeys("fi", "-{0}"),
    "absolute": {"f": "fabs({0})", "i": "({0} < C(0) ? -{0} : {0})"},
    "square": dict.fromkeys("fiu", "{0} * {0}"),
    "reciprocal": {"f": "C(1) / {0}"},
    "rint": {"f": "rint({0})"},
    **_FLOAT_ONLY,
    _rsqrt: {"f": "C(1) / R(sqrt({0}))"},
    _div_no_nan: {"f": "({1} == C(0) ? C(0) : {0} / {1})"},
    _squared_difference: {"f": "R({0} - {1}) * R({0} - {1})"},
    # As on the host: 1 / (1 + exp(-x)), and for half max(e, x >= 0) / (1 + e), e = exp(-|x|).
    _sigmoid: {
        "f": "(sizeof(T) > 2 ? C(1) / R(C(1) + R(exp(-{0}))) : "
        "({0} >= C(0) ? C(1) : R(exp(-fabs({0})))) / R(C(1) + R(exp(-fabs({0})))))"
    },
    special.erf: {"f": "erf({0})"},
    special.erfc: {"f": "erfc({0})"},
}


def first_nan(op: str) -> str:
    """``{0} op {1}`` as a Python expression whose NaN is NumPy's: the first operand's
    (quieted) where both are NaN. LLVM may swap an addition's operands, and which NaN the
    processor returns follows the order."""
    return f"({{0}} {op} {{0}} if {{0}} != {{0}} else {{0}} {op} {{1}})"


# -x: LLVM's fneg, a sign flip as np.negative's; its optimizer may move it through a later
# product (-x * c as x * -c), which changes a NaN's sign only (minigraph.fusion_jit).
HOST_NEGATIVE = "-{0}"


def _around(ufunc: str, before: str, after: str) -> AroundUfunc:
    """A one-value AroundUfunc: ``_u0 = before``, ``ufunc`` (NumPy's, on the op's dtype),
    then ``after``."""
    return AroundUfunc(ufunc, before=(f"_u0 = {before}",), after=(after,))


def _host_sigmoid(dtype: Any) -> AroundUfunc | None:
    """_logistic's four passes as two loops around NumPy's exp: 1 / (1 + exp(-x))."""
    if np.dtype(dtype).itemsize <= 2:
        return None  # float16's own formula (see _sigmoid)
    return _around("exp", HOST_NEGATIVE, "T(1) / (T(1) + _u0)")


# Each op's Python expression for a compiled host loop (minigraph.fusion_jit), float kinds
# only: the ops whose every step is exactly rounded, so that the loop gives the ufunc's bits,
# and those around one NumPy ufunc (op_def.AroundUfunc: exp, tanh; erf's rational
# approximations). A callable gives the form for the dtype. Not among them: maximum and
# minimum (NumPy's choice between 0.0 and -0.0 depends on its SIMD path).
_HOST_FORMS: dict[Any, dict[str, Any]] = {
    "add": {"f": first_nan("+")},
    "subtract": {"f": first_nan("-")},
    "multiply": {"f": first_nan("*")},
    "true_divide": {"f": first_nan("/")},
    "negative": {"f": HOST_NEGATIVE},
    "absolute": {"f": "abs({0})"},
    "square": {"f": "{0} * {0}"},
    "sqrt": {"f": "np.sqrt({0})"},
    "reciprocal": {"f": "T(1) / {0}"},
    "exp": {"f": _around("exp", "{0}", "_u0")},
    "tanh": {"f": _around("tanh", "{0}", "_u0")},
    _sigmoid: {"f": _host_sigmoid},
    special.erf: {"f": functools.partial(special.host_form, False)},
    special.erfc: {"f": functools.partial(special.host_form, True)},
}
