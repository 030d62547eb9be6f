"""Elementwise math, comparison and logical ops, with NumPy broadcasting.

One factory, :func:`elementwise`, declares and registers a whole family; the
kernels write into a forwardable input buffer when the executor offers one, so
a chain of elementwise ops on a large tensor needs about two buffers, not one
per op. Both operands must have the same dtype: minigraph never mixes int and
float silently (``mg.cast`` says so explicitly), as TensorFlow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph import dtypes
from minigraph.graph import Output, register_operator
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import ALL, INEXACT, NUMBER, REAL
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, broadcast
from minigraph.wrappers import as_output, convert_to_output, make_builder, make_wrapper_class

BUILDERS = (
    "add",
    "subtract",
    "multiply",
    "divide",
    "negative",
    "maximum",
    "minimum",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_not",
)


def _unary_shape(c: InferenceContext, x: TensorSpec) -> TensorShape:
    return x.shape


def _binary_shape(c: InferenceContext, x: TensorSpec, y: TensorSpec) -> TensorShape:
    return broadcast(x.shape, y.shape)


# Reusing an input buffer saves memory and page faults on large tensors; below this many
# elements a fresh array costs less than checking whether one can be reused.
_FORWARD_MIN_SIZE = 4096


def _binary_kernel(ufunc_name: str, keeps_dtype: bool, quiet: bool) -> Any:
    np_ufunc = getattr(np, ufunc_name)

    def kernel(ctx: KernelContext, x: Any, y: Any) -> Any:
        xp = ctx.xp
        ufunc = np_ufunc if xp is np else getattr(xp, ufunc_name)
        if x.shape == y.shape or not y.ndim:
            shape = x.shape
        elif not x.ndim:
            shape = y.shape
        else:
            try:
                shape = np.broadcast_shapes(x.shape, y.shape)
            except ValueError:
                ctx.fail(f"Incompatible shapes: {TensorShape(x.shape)} vs. {TensorShape(y.shape)}")
            ctx.check_size(shape, x.dtype)  # both sides broadcast: the output can be huge
        out = None
        if keeps_dtype and ctx.forwardable and x.size >= _FORWARD_MIN_SIZE:
            out = ctx.forwarded((x, y), shape, x.dtype)
        if quiet and xp is np:
            with np.errstate(all="ignore"):
                r = ufunc(x, y, out=out)
        else:
            r = ufunc(x, y) if out is None else ufunc(x, y, out=out)
        return r if shape else xp.asarray(r)  # NumPy gives scalars for 0-d operands

    return kernel


def _unary_kernel(ufunc_name: str, keeps_dtype: bool) -> Any:
    np_ufunc = getattr(np, ufunc_name)

    def kernel(ctx: KernelContext, x: Any) -> Any:
        xp = ctx.xp
        ufunc = np_ufunc if xp is np else getattr(xp, ufunc_name)
        out = None
        if keeps_dtype and ctx.forwardable and x.size >= _FORWARD_MIN_SIZE:
            out = ctx.forwarded((x,), x.shape, x.dtype)
        r = ufunc(x) if out is None else ufunc(x, out=out)
        return r if x.ndim else xp.asarray(r)  # NumPy gives scalars for 0-d operands

    return kernel


def elementwise(
    op_type: str,
    ufunc: str,
    types: str,
    *,
    builder: str,
    binary: bool = True,
    out_type: str | None = None,
    quiet: bool = False,
    doc: str = "",
) -> tuple[Any, type]:
    """Declare, register and generate one elementwise op; returns (builder, class)."""
    ins = ["x: T", "y: T"] if binary else ["x: T"]
    op_def = define_op(
        op_type,
        inputs=ins,
        outputs=[f"z: {out_type or 'T'}"] if binary else [f"y: {out_type or 'T'}"],
        attrs=[f"T: {types}"],
        shape_fn=_binary_shape if binary else _unary_shape,
        doc=doc,
    )
    keeps = out_type is None
    kernel = _binary_kernel(ufunc, keeps, quiet) if binary else _unary_kernel(ufunc, keeps)
    register_kernel(op_type, "CPU", "GPU")(kernel)
    return make_builder(op_def, builder), make_wrapper_class(op_def)


add, Add = elementwise("Add", "add", NUMBER, builder="add", doc="x + y, with broadcasting.")
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
    quiet=True,
    doc="x / y for floating and complex types.",
)
negative, Neg = elementwise(
    "Neg", "negative", NUMBER, builder="negative", binary=False, doc="-x, elementwise."
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
equal, Equal = elementwise(
    "Equal",
    "equal",
    ALL,
    builder="equal",
    out_type="bool",
    doc="x == y, elementwise, as a bool tensor.",
)
not_equal, NotEqual = elementwise(
    "NotEqual",
    "not_equal",
    ALL,
    builder="not_equal",
    out_type="bool",
    doc="x != y, elementwise, as a bool tensor.",
)
less, Less = elementwise(
    "Less", "less", REAL, builder="less", out_type="bool", doc="x < y, elementwise."
)
less_equal, LessEqual = elementwise(
    "LessEqual",
    "less_equal",
    REAL,
    builder="less_equal",
    out_type="bool",
    doc="x <= y, elementwise.",
)
greater, Greater = elementwise(
    "Greater", "greater", REAL, builder="greater", out_type="bool", doc="x > y, elementwise."
)
greater_equal, GreaterEqual = elementwise(
    "GreaterEqual",
    "greater_equal",
    REAL,
    builder="greater_equal",
    out_type="bool",
    doc="x >= y, elementwise.",
)
logical_and, LogicalAnd = elementwise(
    "LogicalAnd", "logical_and", "{bool}", builder="logical_and", doc="x AND y, elementwise."
)
logical_or, LogicalOr = elementwise(
    "LogicalOr", "logical_or", "{bool}", builder="logical_or", doc="x OR y, elementwise."
)
logical_not, LogicalNot = elementwise(
    "LogicalNot",
    "logical_not",
    "{bool}",
    builder="logical_not",
    binary=False,
    doc="NOT x, elementwise.",
)


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


def _reflected(fn: Any) -> Any:
    return lambda self, other: fn(other, self)


for _method, _fn in [
    ("__add__", add),
    ("__sub__", subtract),
    ("__mul__", multiply),
    ("__truediv__", divide),
    ("__lt__", less),
    ("__le__", less_equal),
    ("__gt__", greater),
    ("__ge__", greater_equal),
    ("__and__", logical_and),
    ("__or__", logical_or),
]:
    register_operator(_method, _fn)
for _method, _fn in [
    ("__radd__", add),
    ("__rsub__", subtract),
    ("__rmul__", multiply),
    ("__rtruediv__", divide),
    ("__rand__", logical_and),
    ("__ror__", logical_or),
]:
    register_operator(_method, _reflected(_fn))
register_operator("__neg__", negative)
register_operator("__invert__", logical_not)

__all__ = [
    "Add",
    "Sub",
    "Mul",
    "RealDiv",
    "Neg",
    "Maximum",
    "Minimum",
    "Equal",
    "NotEqual",
    "Less",
    "LessEqual",
    "Greater",
    "GreaterEqual",
    "LogicalAnd",
    "LogicalOr",
    "LogicalNot",
    *BUILDERS,
]
