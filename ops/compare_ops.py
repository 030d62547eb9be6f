"""Comparisons, logical ops and selection, with NumPy broadcasting.

Ops: Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual, LogicalAnd, LogicalOr,
LogicalNot, Select (TensorFlow 1's: the condition is a scalar, shaped as the branches, or
a vector over their first dim), SelectV2 (all three broadcast), ClipByValue.

The comparisons are :func:`minigraph.ops.math_ops.elementwise` ops with a bool output;
Equal and NotEqual take TensorFlow's ``incompatible_shape_error`` attr.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from minigraph import errors
from minigraph.graph import Output, register_operator
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import ALL, REAL, select_bits, shape_str
from minigraph.ops.math_ops import elementwise, reflected
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import ShapeError, TensorShape, broadcast, merge
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = (
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_not",
    "select",
    "where_v2",
    "clip_by_value",
)


# -- Comparisons and logical ops -------------------------------------------------------------


def _equality_shape(c: InferenceContext, x: TensorSpec, y: TensorSpec) -> TensorShape:
    """Broadcasting; with ``incompatible_shape_error=False``, shapes that can never
    broadcast give a scalar, and shapes that might not give an unknown shape."""
    if c.attrs["incompatible_shape_error"]:
        return broadcast(x.shape, y.shape)
    a, b = x.shape.dims, y.shape.dims
    if a is None or b is None:
        return TensorShape(None)
    n = max(len(a), len(b))
    certain = True
    for p, q in zip((1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b):
        if p == 1 or q == 1 or (p is not None and p == q):
            continue
        if p is not None and q is not None:
            return TensorShape([])
        certain = False
    return broadcast(x.shape, y.shape) if certain else TensorShape(None)


_INCOMPATIBLE = "incompatible_shape_error: bool = True"

equal, Equal = elementwise(
    "Equal",
    "equal",
    ALL,
    builder="equal",
    out_type="bool",
    attrs=[_INCOMPATIBLE],
    shape_fn=_equality_shape,
    incompatible=False,
    doc="""
x == y, elementwise, as a bool tensor. Shapes that do not broadcast are an error, or,
with ``incompatible_shape_error=False``, give the scalar False.
""",
)
not_equal, NotEqual = elementwise(
    "NotEqual",
    "not_equal",
    ALL,
    builder="not_equal",
    out_type="bool",
    attrs=[_INCOMPATIBLE],
    shape_fn=_equality_shape,
    incompatible=True,
    doc="""
x != y, elementwise, as a bool tensor. Shapes that do not broadcast are an error, or,
with ``incompatible_shape_error=False``, give the scalar True.
""",
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
    "LogicalAnd", "logical_and", "bool", builder="logical_and", doc="x AND y, elementwise."
)
logical_or, LogicalOr = elementwise(
    "LogicalOr", "logical_or", "bool", builder="logical_or", doc="x OR y, elementwise."
)
logical_not, LogicalNot = elementwise(
    "LogicalNot",
    "logical_not",
    "bool",
    builder="logical_not",
    binary=False,
    doc="NOT x, elementwise.",
)


# -- Select (TensorFlow 1) -------------------------------------------------------------------


def _same_branches(fail: Callable[[str], NoReturn], t: TensorShape, e: TensorShape) -> TensorShape:
    try:
        return merge(t, e)
    except ShapeError:
        fail(f"'then' and 'else' must have the same size.  but are: {t} vs. {e}")


def _select_shape(
    c: InferenceContext, cond: TensorSpec, t: TensorSpec, e: TensorSpec
) -> TensorShape:
    data = _same_branches(c.fail, t.shape, e.shape)
    crank, drank = cond.shape.rank, data.rank
    if crank is None or crank == 0 or drank is None:
        return data
    if crank == 1 and drank != 1:  # a vector over the first dim of the branches
        if drank == 0:
            c.fail(f"'then' must be at least a vector, but saw shape: {data}")
        n, m = data[0], cond.shape[0]
        if n is not None and m is not None and n != m:
            c.fail(f"Number of batches of 'then' must match size of 'cond', but saw: {n} vs. {m}")
        return TensorShape([n if n is not None else m, *list(data)[1:]])
    try:
        return merge(cond.shape, data)
    except ShapeError:
        c.fail(
            f"Inputs to operation {c.node_name} of type Select must have the same size and "
            f"shape.  Input 0: {cond.shape} != input 1: {data}"
        )


SELECT = define_op(
    "Select",
    inputs=["condition: bool", "t: T", "e: T"],
    outputs=["output: T"],
    attrs=["T: type"],
    shape_fn=_select_shape,
    doc="""
Elements of ``t`` where ``condition`` is true, else of ``e`` (TensorFlow 1's ``tf.where``).
``t`` and ``e`` have one shape; ``condition`` is a scalar (choosing a whole branch), has
that shape, or is a vector whose length is their first dim (choosing rows). Nothing else
broadcasts: SelectV2 does.

>>> import minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.select([True, False], [[1, 2], [3, 4]], [[5, 6], [7, 8]])
>>> mg.Session(g).run(y)
array([[1, 2],
       [7, 8]], dtype=int32)
""",
)


@register_kernel("Select", "CPU", "GPU")
def _select_kernel(ctx: KernelContext, cond: Any, t: Any, e: Any) -> Any:
    if t.shape != e.shape:
        ctx.fail(
            "'then' and 'else' must have the same size.  but are: "
            f"{shape_str(t.shape)} vs. {shape_str(e.shape)}"
        )
    if cond.ndim == 1 and t.ndim != 1:
        if t.ndim == 0:
            ctx.fail(f"'then' must be at least a vector, but saw shape: {shape_str(t.shape)}")
        if t.shape[0] != cond.shape[0]:
            ctx.fail(
                "Number of batches of 'then' must match size of 'cond', but saw: "
                f"{t.shape[0]} vs. {cond.shape[0]}"
            )
        cond = cond.reshape(cond.shape + (1,) * (t.ndim - 1))
    elif cond.ndim and cond.shape != t.shape:
        ctx.fail(
            f"Inputs to operation {ctx.node_name} of type Select must have the same size and "
            f"shape.  Input 0: {shape_str(cond.shape)} != input 1: {shape_str(t.shape)}"
        )
    return select_bits(ctx.xp, cond, t, e)


Select = make_wrapper_class(SELECT)
_select = make_builder(SELECT, "select")


def select(condition: Any, x: Any, y: Any, name: str | None = None) -> Output:
    """``x`` where ``condition`` is true, else ``y``: TensorFlow 1's three-argument
    ``tf.compat.v1.where`` (the Select op; the condition may be a vector over rows)."""
    return _select(condition, x, y, name=name or "Select")


# -- SelectV2 --------------------------------------------------------------------------------


def _broadcast_fail(fail: Callable[[str], NoReturn], c: Any, t: Any, e: Any) -> NoReturn:
    fail(f"condition {c}, then {t}, and else {e} must be broadcastable")


def _select_v2_shape(
    c: InferenceContext, cond: TensorSpec, t: TensorSpec, e: TensorSpec
) -> TensorShape:
    try:
        return broadcast(broadcast(cond.shape, t.shape), e.shape)
    except ShapeError:
        _broadcast_fail(c.fail, cond.shape, t.shape, e.shape)


SELECT_V2 = define_op(
    "SelectV2",
    inputs=["condition: bool", "t: T", "e: T"],
    outputs=["output: T"],
    attrs=["T: type"],
    shape_fn=_select_v2_shape,
    doc="""
Elements of ``t`` where ``condition`` is true, else of ``e``, with all three broadcast
together (TensorFlow 2's ``tf.where(condition, x, y)``).

>>> import minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.where_v2([[True], [False]], [1, 2, 3], 0)
>>> mg.Session(g).run(y)
array([[1, 2, 3],
       [0, 0, 0]], dtype=int32)
""",
)


@register_kernel("SelectV2", "CPU", "GPU")
def _select_v2_kernel(ctx: KernelContext, cond: Any, t: Any, e: Any) -> Any:
    try:
        shape = np.broadcast_shapes(cond.shape, t.shape, e.shape)
    except ValueError:
        _broadcast_fail(ctx.fail, *(shape_str(a.shape) for a in (cond, t, e)))
    ctx.check_size(shape, t.dtype)
    return select_bits(ctx.xp, cond, t, e)


SelectV2 = make_wrapper_class(SELECT_V2)
_select_v2 = make_builder(SELECT_V2, "where_v2")


def where_v2(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Output:
    """``x`` where ``condition`` is true, else ``y``, all three broadcast (SelectV2), as
    ``tf.where`` in TensorFlow 2. With neither ``x`` nor ``y``: ``mg.where(condition)``."""
    if x is None and y is None:
        import minigraph

        return minigraph.where(condition, name=name)  # the Where op: true coordinates
    if x is None or y is None:
        raise errors.InvalidArgumentError(
            "x and y must both be non-None or both be None.", name or "SelectV2", "SelectV2"
        )
    return _select_v2(condition, x, y, name=name or "SelectV2")


# -- ClipByValue -----------------------------------------------------------------------------


def _clip_fail(fail: Callable[[str], NoReturn], t: Any, lo: Any, hi: Any) -> NoReturn:
    fail(
        "clip_value_min and clip_value_max must be either of the same shape as input, or a "
        f"scalar. input shape: {t}clip_value_min shape: {lo}clip_value_max shape: {hi}"
    )


def _clip_by_value_shape(
    c: InferenceContext, t: TensorSpec, lo: TensorSpec, hi: TensorSpec
) -> TensorShape:
    out = t.shape
    for bound in (lo.shape, hi.shape):
        if bound.rank:  # neither unknown nor a scalar: it must be shaped as t
            try:
                out = merge(out, bound)
            except ShapeError:
                _clip_fail(c.fail, t.shape, lo.shape, hi.shape)
    return out


CLIP_BY_VALUE = define_op(
    "ClipByValue",
    inputs=["t: T", "clip_value_min: T", "clip_value_max: T"],
    outputs=["output: T"],
    attrs=[f"T: {REAL}"],
    shape_fn=_clip_by_value_shape,
    doc="""
``t`` clipped to ``[clip_value_min, clip_value_max]``, each bound a scalar or shaped as
``t``. As TensorFlow: ``min(t, max)`` first, then ``max(., min)``, so NaN in ``t`` stays
NaN, a NaN bound is ignored, and ``min > max`` gives ``min``.

>>> import minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.clip_by_value([-2.0, 0.5, 7.0], 0.0, 1.0)
>>> mg.Session(g).run(y)
array([0. , 0.5, 1. ], dtype=float32)
""",
)


@register_kernel("ClipByValue", "CPU", "GPU")
def _clip_by_value_kernel(ctx: KernelContext, t: Any, lo: Any, hi: Any) -> Any:
    if lo.shape not in ((), t.shape) or hi.shape not in ((), t.shape):
        _clip_fail(ctx.fail, *(shape_str(a.shape) for a in (t, lo, hi)))
    xp = ctx.xp
    m = xp.where(hi < t, hi, t)
    return xp.where(m < lo, lo, m)


ClipByValue = make_wrapper_class(CLIP_BY_VALUE)
_clip_by_value = make_builder(CLIP_BY_VALUE, "clip_by_value")


def clip_by_value(
    t: Any, clip_value_min: Any, clip_value_max: Any, name: str | None = None
) -> Output:
    """``t`` clipped to ``[clip_value_min, clip_value_max]`` (the ClipByValue op; TensorFlow's
    Python builds the same from Minimum and Maximum)."""
    return _clip_by_value(t, clip_value_min, clip_value_max, name=name or "ClipByValue")


for _method, _fn in [
    ("__lt__", less),
    ("__le__", less_equal),
    ("__gt__", greater),
    ("__ge__", greater_equal),
    ("__and__", logical_and),
    ("__or__", logical_or),
]:
    register_operator(_method, _fn)
register_operator("__rand__", reflected(logical_and))
register_operator("__ror__", reflected(logical_or))
register_operator("__invert__", logical_not)

__all__ = [
    "Equal",
    "NotEqual",
    "Less",
    "LessEqual",
    "Greater",
    "GreaterEqual",
    "LogicalAnd",
    "LogicalOr",
    "LogicalNot",
    "Select",
    "SelectV2",
    "ClipByValue",
    *BUILDERS,
]
