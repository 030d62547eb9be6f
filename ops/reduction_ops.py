"""Reductions and scans: Sum, Mean, Prod, Max, Min, Any, All; ArgMax, ArgMin; Cumsum, Cumprod.

Three factories, one per kind: :func:`reduction` (the axes are an input, a scalar or a
vector, negative allowed; ``keep_dims``), :func:`arg_reduction` (one scalar ``dimension``;
the index of the first extreme, NaN skipped) and :func:`scan` (``exclusive``,
``reverse``). The axes are host inputs, read on the host on every device; shape
inference uses their value when it is a known constant.

TensorFlow's results that NumPy does not give by itself, all matched here: an empty
reduction gives the identity (Sum 0, Prod 1, Max the lowest value or -inf, Min the
highest or +inf, Any False, All True, Mean NaN for floats and 0 for integers and
complex); integer Mean sums in 64 bits and truncates toward zero; integer sums and
products wrap in their own dtype; Max and Min propagate NaN.
"""

from __future__ import annotations

import inspect
import math
import typing
from collections.abc import Callable, Sequence
from typing import NoReturn

import numpy as np

from minigraph import dtypes
from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import (
    INDEX_TYPES,
    NUMBER,
    REAL,
    host_array,
    reduce,
    shape_str,
    type_set,
)
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, unknown_shape, with_rank, with_rank_at_most
from minigraph.wrappers import as_output, make_builder, make_wrapper_class

BUILDERS = (
    "reduce_sum",
    "reduce_mean",
    "reduce_prod",
    "reduce_max",
    "reduce_min",
    "reduce_any",
    "reduce_all",
    "argmax",
    "argmin",
    "cumsum",
    "cumprod",
)


# -- Sum, Mean, Prod, Max, Min, Any, All -----------------------------------------------


def _reduction_axes(fail: Callable[[str], NoReturn], axes: np.ndarray, rank: int) -> tuple:
    """The axes, made non-negative, checked in order as ReductionHelper checks them."""
    seen: list[int] = []
    for a in axes.reshape(-1).tolist():  # at most rank + 1 turns: then a repeat or a bad axis
        if not -rank <= a < rank:
            fail(f"Invalid reduction dimension ({a} for input with {rank} dimension(s)")
        a %= rank
        if a in seen:
            fail(f"Invalid reduction arguments: Axes contains duplicate dimension: {a}")
        seen.append(a)
    return tuple(seen)


def _reduced_dims(dims: Sequence[typing.Any], axes: tuple, keep_dims: bool) -> list:
    if keep_dims:
        return [1 if i in axes else d for i, d in enumerate(dims)]
    return [d for i, d in enumerate(dims) if i not in axes]


def _reduction_shape(
    c: InferenceContext, input: TensorSpec, reduction_indices: TensorSpec
) -> TensorShape:
    axes = with_rank_at_most(reduction_indices.shape, 1).dims
    dims = input.shape.dims
    keep_dims = c.attrs["keep_dims"]
    if dims is None:
        return unknown_shape()
    rank = len(dims)
    if reduction_indices.value is None:
        if keep_dims:
            return unknown_shape(rank)
        # A valid graph reduces as many distinct axes as the vector holds.
        count = None if axes is None else (axes[0] if axes else 1)
        if count == 0:
            return input.shape
        return unknown_shape(None if count is None or count > rank else rank - count)
    reduced = _reduction_axes(c.fail, reduction_indices.value, rank)
    return TensorShape(_reduced_dims(dims, reduced, keep_dims))


def _numeric(name: str, same_dtype: bool = False) -> Callable[..., typing.Any]:
    """``xp.<name>`` over the axes (Sum and Prod in the input's own dtype, so integers wrap
    as TensorFlow's do; Max and Min propagate NaN)."""

    def fn(xp: typing.Any, x: typing.Any, axes: tuple, keep: bool, n: int) -> typing.Any:
        return reduce(xp, name, x, axes, keep, x.dtype if same_dtype else None)

    return fn


def _mean(xp: typing.Any, x: typing.Any, axes: tuple, keep: bool, n: int) -> typing.Any:
    """TensorFlow's Mean: integers sum in 64 bits (int64 itself wraps) and the quotient is
    truncated toward zero; float16 sums in float32."""
    kind = x.dtype.kind
    if kind in "iu":
        wide = np.dtype(np.int64 if kind == "i" else np.uint64)
        s = reduce(xp, "sum", x, axes, keep, wide)
        count = wide.type(n)  # typed, so no promotion rule can make the quotient a float
        q = s // count
        if kind == "i":
            q = q + ((s < 0) & (s % count != 0))  # floor -> toward zero
        return q.astype(x.dtype)
    acc = np.dtype(np.float32) if x.dtype == np.float16 else x.dtype
    total = reduce(xp, "sum", x, axes, keep, acc)
    return (total / acc.type(n)).astype(x.dtype, copy=False)


# The value of an empty reduction, per op, from the input's dtype.
def _zero(dtype: np.dtype) -> typing.Any:
    return False if dtype.kind == "b" else 0


def _one(dtype: np.dtype) -> typing.Any:
    return True if dtype.kind == "b" else 1


def _lowest(dtype: np.dtype) -> typing.Any:
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype: np.dtype) -> typing.Any:
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max


def _empty_mean(dtype: np.dtype) -> typing.Any:
    return np.nan if dtype.kind == "f" else 0  # complex too: TF's 0/0 gives 0 there


# NumPy reduces over leading or middle axes one short run of the kept trailing elements at a
# time; below this many, with many more elements reduced into each result than the run is
# long, a copy with the reduced axes last, reduced along its rows, is faster.
_SHORT_TRAILING_RUN = 16
_MOVE_MIN_SIZE = 1 << 12  # smaller inputs reduce in microseconds either way


def _reduced_axes_last(ctx: KernelContext, x: np.ndarray, axes: tuple, n: int) -> np.ndarray | None:
    """``x`` (host) copied with the kept axes first and its ``n`` reduced elements per result
    as one last axis, where some kept axes follow the last reduced one and their run of
    elements is shorter than _SHORT_TRAILING_RUN and than n / 2; else None.

    Keras's global pooling, a Mean over [1, 2] of a [1024, 8, 8, 4] tensor: 1.0 -> 0.2 ms,
    Max 1.8 -> 0.33; a Sum over the rows of [1M, 3] 15 -> 2.7 ms. Runs of 2, 4 and 8 gain
    from n = 2, 8 and 16 on (Sum and Max, 128K elements); a run of 64 loses. A sum then
    adds pairwise along each row, as NumPy sums rows, and may round differently from a
    sum over the axes in place (TensorFlow's order is its own again).
    """
    run = math.prod(x.shape[max(axes) + 1 :])
    if ctx.xp is not np or x.size < _MOVE_MIN_SIZE:
        return None
    if not 1 < run < _SHORT_TRAILING_RUN or n < 2 * run:
        return None
    kept = [a for a in range(x.ndim) if a not in axes]
    order = kept + list(axes)
    moved = ctx.empty((*[x.shape[a] for a in kept], n), x.dtype)
    np.copyto(moved.reshape([x.shape[a] for a in order]), x.transpose(order))
    return moved


def _reduction_kernel(
    compute: Callable[..., typing.Any], empty: Callable[[np.dtype], typing.Any]
) -> Callable[..., typing.Any]:
    def kernel(ctx: KernelContext, x: typing.Any, reduction_indices: typing.Any) -> typing.Any:
        axes = _reduction_axes(ctx.fail, host_array(ctx, reduction_indices), x.ndim)
        keep = ctx.attrs["keep_dims"]
        if not axes:
            return x.copy()  # a reduction over no axis is the identity, in a new buffer
        n = 1
        for a in axes:
            n *= x.shape[a]
        shape = _reduced_dims(x.shape, axes, keep)
        if n == 0:
            return ctx.allocate(shape, x.dtype, fill=empty(x.dtype))
        if x.size == 0:  # nothing to compute (CuPy refuses some reductions of empty arrays)
            return ctx.allocate(shape, x.dtype)
        moved = _reduced_axes_last(ctx, x, axes, n)
        if moved is None:
            r = compute(ctx.xp, x, axes, keep, n)
        else:
            r = compute(np, moved, (moved.ndim - 1,), False, n).reshape(shape)
        return r if r.ndim else ctx.xp.asarray(r, dtype=x.dtype)  # NumPy gives scalars

    return kernel


def reduction(
    op_type: str,
    builder: str,
    types: str | None,
    compute: Callable[..., typing.Any],
    empty: Callable[[np.dtype], typing.Any],
    doc: str,
) -> tuple[typing.Any, type]:
    """Declare and register one reduction op; returns (tf.compat.v1 builder, class).

    ``types`` is the constraint on ``T``, or None for the bool-only ops (Any, All).
    """
    doc = inspect.cleandoc(doc)
    t = "T" if types else "bool"
    op_def = define_op(
        op_type,
        inputs=[f"input: {t}", "reduction_indices: Tidx"],
        outputs=[f"output: {t}"],
        attrs=["keep_dims: bool = False"]
        + ([f"T: {types}"] if types else [])
        + [f"Tidx: {INDEX_TYPES} = int32"],
        shape_fn=_reduction_shape,
        host_inputs=["reduction_indices"],
        doc=doc,
    )
    register_kernel(op_type, "CPU", "GPU")(_reduction_kernel(compute, empty))
    raw = make_builder(op_def, f"_{builder}")

    def build(
        input_tensor: typing.Any,
        axis: typing.Any = None,
        keepdims: typing.Any = None,
        name: str | None = None,
        reduction_indices: typing.Any = None,
        keep_dims: typing.Any = None,
    ) -> Output:
        axis = _deprecated_arg("axis", axis, "reduction_indices", reduction_indices)
        keep = _deprecated_arg("keepdims", keepdims, "keep_dims", keep_dims)
        if axis is None:
            axis = _all_axes(input_tensor)
        elif as_output(axis) is None and np.size(axis) == 0:
            axis = np.zeros(0, np.int32)  # [] is no axis (an int32 vector), not a float
        return raw(input_tensor, axis, keep_dims=bool(keep), name=name)

    build.__name__ = build.__qualname__ = builder
    build.__doc__ = f"{doc}\n\n{_REDUCE_ARGS}".replace("BUILDER", builder)
    return build, make_wrapper_class(op_def)


_REDUCE_ARGS = """``axis`` (or the older ``reduction_indices``) is an int, a list of ints or an
integer tensor (negative axes count from the end); None reduces every axis. With
``keepdims`` (or ``keep_dims``) the reduced axes stay, with length 1. As
``tf.compat.v1.BUILDER``."""


def _deprecated_arg(
    name: str, value: typing.Any, old_name: str, old_value: typing.Any
) -> typing.Any:
    """tf.compat.v1's ``deprecated_argument_lookup``: the new name or the old, not both."""
    if old_value is not None:
        if value is not None:
            raise ValueError(f"Cannot specify both '{old_name}' and '{name}'.")
        return old_value
    return value


def _all_axes(x: typing.Any) -> typing.Any:
    """Every axis of ``x``: a constant when its rank is known, else ``range(rank(x))``."""
    out = as_output(x)
    rank = np.ndim(x) if out is None else out.shape.rank
    if rank is not None:
        return np.arange(rank, dtype=np.int32)
    from minigraph.ops.array_ops import range
    from minigraph.ops.shape_ops import rank as rank_of

    return range(0, rank_of(out), 1)


reduce_sum, Sum = reduction(
    "Sum",
    "reduce_sum",
    NUMBER,
    _numeric("sum", same_dtype=True),
    _zero,
    """The sum of the elements along the given axes (0 for an empty set; integers wrap).

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     x = mg.constant([[1, 1, 1], [1, 1, 1]])
    ...     ys = [mg.reduce_sum(x), mg.reduce_sum(x, 0), mg.reduce_sum(x, 1, keepdims=True)]
    >>> mg.Session(g).run(ys)
    [array(6, dtype=int32), array([2, 2, 2], dtype=int32), array([[3], [3]], dtype=int32)]""",
)
reduce_mean, Mean = reduction(
    "Mean",
    "reduce_mean",
    NUMBER,
    _mean,
    _empty_mean,
    """The mean of the elements along the given axes. Integer means truncate toward zero;
    an empty mean is NaN for floats, 0 for integers.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     x = mg.constant([[1.0, 1.0], [2.0, 2.0]])
    ...     ys = [mg.reduce_mean(x), mg.reduce_mean(x, 0), mg.reduce_mean([-1, -2])]
    >>> mg.Session(g).run(ys)
    [array(1.5, dtype=float32), array([1.5, 1.5], dtype=float32), array(-1, dtype=int32)]""",
)
reduce_prod, Prod = reduction(
    "Prod",
    "reduce_prod",
    NUMBER,
    _numeric("prod", same_dtype=True),
    _one,
    """The product of the elements along the given axes (1 for an empty set).

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.reduce_prod(mg.constant([[1.0, 2.0], [3.0, 4.0]]), 1)
    >>> mg.Session(g).run(y)
    array([ 2., 12.], dtype=float32)""",
)
reduce_max, Max = reduction(
    "Max",
    "reduce_max",
    REAL,
    _numeric("max"),
    _lowest,
    """The largest element along the given axes; NaN propagates; an empty set gives the
    lowest value of the dtype (-inf for floats).

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.reduce_max(mg.constant([[1.0, 5.0], [3.0, 2.0]]), axis=-1)
    >>> mg.Session(g).run(y)
    array([5., 3.], dtype=float32)""",
)
reduce_min, Min = reduction(
    "Min",
    "reduce_min",
    REAL,
    _numeric("min"),
    _highest,
    """The smallest element along the given axes; NaN propagates; an empty set gives the
    highest value of the dtype (+inf for floats).

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.reduce_min(mg.constant([[1, 5], [3, 2]]), axis=0)
    >>> mg.Session(g).run(y)
    array([1, 2], dtype=int32)""",
)
reduce_any, Any = reduction(
    "Any",
    "reduce_any",
    None,
    _numeric("any"),
    _zero,
    """Logical OR of the elements along the given axes (False for an empty set).

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.reduce_any([[True, True], [False, False]], 1)
    >>> mg.Session(g).run(y)
    array([ True, False])""",
)
reduce_all, All = reduction(
    "All",
    "reduce_all",
    None,
    _numeric("all"),
    _one,
    """Logical AND of the elements along the given axes (True for an empty set).

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.reduce_all([[True, True], [False, False]], 0)
    >>> mg.Session(g).run(y)
    array([False, False])""",
)


# -- ArgMax, ArgMin --------------------------------------------------------------------


def _arg_axis(fail: Callable[[str], NoReturn], dim: int, rank: int) -> int:
    axis = dim + rank if dim < 0 else dim
    if not 0 <= axis < rank:
        fail(f"Expected dimension in the range [{-rank}, {rank}), but got {dim}")
    return axis


def _empty_axis_fail(fail: Callable[[str], NoReturn], dim: int, shape: str) -> NoReturn:
    fail(f"Reduction axis {dim} is empty in shape {shape}")


def _arg_shape(c: InferenceContext, input: TensorSpec, dimension: TensorSpec) -> TensorShape:
    with_rank(dimension.shape, 0)
    dims = input.shape.dims
    if dims is None:
        return unknown_shape()
    if dimension.value is None:
        return unknown_shape(max(len(dims) - 1, 0))
    dim = int(dimension.value)
    axis = _arg_axis(c.fail, dim, len(dims))
    if dims[axis] == 0:
        _empty_axis_fail(c.fail, dim, str(input.shape))
    return TensorShape(dims[:axis] + dims[axis + 1 :])


def _arg_kernel(name: str, nan_as: float) -> Callable[..., typing.Any]:
    def kernel(ctx: KernelContext, x: typing.Any, dimension: typing.Any) -> typing.Any:
        xp = ctx.xp
        d = host_array(ctx, dimension)
        if d.ndim:
            ctx.fail(f"dim must be a scalar, but received tensor of shape: {shape_str(d.shape)}")
        dim = int(d)
        axis = _arg_axis(ctx.fail, dim, x.ndim)
        if x.shape[axis] == 0:
            _empty_axis_fail(ctx.fail, dim, shape_str(x.shape))
        if x.size == 0:  # another axis is empty: so is the result
            return ctx.allocate(x.shape[:axis] + x.shape[axis + 1 :], ctx.attrs["output_type"].np)
        if x.dtype.kind == "f":
            x = xp.where(xp.isnan(x), x.dtype.type(nan_as), x)  # TF never picks a NaN
        elif x.dtype.kind == "b":
            x = x.view(np.uint8)
        r = getattr(xp, name)(x, axis=axis)
        return xp.asarray(r).astype(ctx.attrs["output_type"].np)  # int16 wraps, as TF

    return kernel


def arg_reduction(
    op_type: str, builder: str, index_types: str, output_types: str, nan_as: float, doc: str
) -> tuple[typing.Any, type]:
    """Declare and register ArgMax or ArgMin; returns (tf.compat.v1 builder, class)."""
    doc = inspect.cleandoc(doc)
    op_def = define_op(
        op_type,
        inputs=["input: T", "dimension: Tidx"],
        outputs=["output: output_type"],
        attrs=[
            f"T: {type_set(dtypes.REAL_NUMBER_TYPES + (dtypes.bool_,))}",
            f"Tidx: {index_types} = int32",
            f"output_type: {output_types} = int64",
        ],
        shape_fn=_arg_shape,
        host_inputs=["dimension"],
        doc=doc,
    )
    register_kernel(op_type, "CPU", "GPU")(_arg_kernel(builder, nan_as))
    raw = make_builder(op_def, f"_{builder}")

    def build(
        input: typing.Any,
        axis: typing.Any = None,
        name: str | None = None,
        dimension: typing.Any = None,
        output_type: typing.Any = dtypes.int64,
    ) -> Output:
        axis = _deprecated_arg("axis", axis, "dimension", dimension)
        return raw(input, 0 if axis is None else axis, output_type=output_type, name=name)

    build.__name__ = build.__qualname__ = builder
    build.__doc__ = doc
    return build, make_wrapper_class(op_def)


argmax, ArgMax = arg_reduction(
    "ArgMax",
    "argmax",
    "{int16, int32, int64}",
    "{int16, uint16, int32, int64}",
    -np.inf,
    """The index of the largest element along ``axis`` (default 0), as ``tf.compat.v1.argmax``:
    the first one on ties; NaN is skipped (a slice of only NaN and -inf gives 0); an empty
    axis is an error.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     i = mg.argmax([2, 20, 30, 3, 6])
    ...     j = mg.argmax([[1.0, 9.0], [7.0, 7.0]], axis=1, output_type=mg.int32)
    >>> mg.Session(g).run([i, j])
    [array(2), array([1, 0], dtype=int32)]""",
)
argmin, ArgMin = arg_reduction(
    "ArgMin",
    "argmin",
    INDEX_TYPES,
    INDEX_TYPES,
    np.inf,
    """The index of the smallest element along ``axis`` (default 0), as
    ``tf.compat.v1.argmin``: the first one on ties; NaN is skipped (a slice of only NaN
    and +inf gives 0); an empty axis is an error.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     i = mg.argmin([2, 20, 30, 3, 6])
    >>> mg.Session(g).run(i)
    array(0)""",
)


# -- Cumsum, Cumprod -------------------------------------------------------------------


def _scan_axis(fail: Callable[[str], NoReturn], arg: int, rank: int) -> int:
    axis = rank + arg if arg < 0 else arg
    if not 0 <= axis < rank:  # TensorFlow prints the axis after adding the rank
        fail(f"ScanOp: Expected scan axis in the range [{-rank}, {rank}), but got {axis}")
    return axis


def _scan_shape(c: InferenceContext, x: TensorSpec, axis: TensorSpec) -> TensorShape:
    if axis.shape.rank is not None and axis.shape.rank != 0:
        c.fail(f"ScanOp: axis must be a scalar, not {axis.shape}")
    if axis.value is not None and x.shape.rank is not None:
        _scan_axis(c.fail, int(axis.value), x.shape.rank)
    return x.shape


def _scan_kernel(name: str, identity: int) -> Callable[..., typing.Any]:
    def kernel(ctx: KernelContext, x: typing.Any, axis: typing.Any) -> typing.Any:
        xp = ctx.xp
        a = host_array(ctx, axis)
        if a.ndim:
            ctx.fail(f"ScanOp: axis must be a scalar, not {shape_str(a.shape)}")
        ax = _scan_axis(ctx.fail, int(a), x.ndim)
        exclusive, reverse = ctx.attrs["exclusive"], ctx.attrs["reverse"]
        scan_fn = getattr(xp, name)
        if x.size == 0 or not (exclusive or reverse):
            return scan_fn(x, axis=ax, dtype=x.dtype) if x.size else xp.empty_like(x)
        out = ctx.allocate(x.shape, x.dtype)
        # Scan the flipped input into the flipped output: both are views.
        src = xp.flip(x, ax) if reverse else x
        dst = xp.flip(out, ax) if reverse else out
        if not exclusive:
            dst[...] = scan_fn(src, axis=ax, dtype=x.dtype)
            return out
        lead = (slice(None),) * ax
        dst[lead + (slice(0, 1),)] = identity
        if x.shape[ax] > 1:
            dst[lead + (slice(1, None),)] = scan_fn(
                src[lead + (slice(None, -1),)], axis=ax, dtype=x.dtype
            )
        return out

    return kernel


def scan(op_type: str, builder: str, identity: int, doc: str) -> tuple[typing.Any, type]:
    """Declare and register Cumsum or Cumprod; returns (tf.compat.v1 builder, class)."""
    doc = inspect.cleandoc(doc)
    op_def = define_op(
        op_type,
        inputs=["x: T", "axis: Tidx"],
        outputs=["out: T"],
        attrs=[
            "exclusive: bool = False",
            "reverse: bool = False",
            f"T: {NUMBER}",
            f"Tidx: {INDEX_TYPES} = int32",
        ],
        shape_fn=_scan_shape,
        host_inputs=["axis"],
        doc=doc,
    )
    register_kernel(op_type, "CPU", "GPU")(_scan_kernel(builder, identity))
    raw = make_builder(op_def, f"_{builder}")

    def build(
        x: typing.Any,
        axis: typing.Any = 0,
        exclusive: bool = False,
        reverse: bool = False,
        name: str | None = None,
    ) -> Output:
        return raw(x, axis, exclusive=exclusive, reverse=reverse, name=name)

    build.__name__ = build.__qualname__ = builder
    build.__doc__ = doc
    return build, make_wrapper_class(op_def)


cumsum, Cumsum = scan(
    "Cumsum",
    "cumsum",
    0,
    """The running sum along ``axis`` (default 0), as ``tf.math.cumsum``; ``exclusive``
    leaves out each element itself, ``reverse`` sums from the end.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     x = mg.constant([1, 2, 3])
    ...     ys = [mg.cumsum(x), mg.cumsum(x, exclusive=True), mg.cumsum(x, reverse=True)]
    >>> mg.Session(g).run(ys)
    [array([1, 3, 6], dtype=int32), array([0, 1, 3], dtype=int32),
     array([6, 5, 3], dtype=int32)]""",
)
cumprod, Cumprod = scan(
    "Cumprod",
    "cumprod",
    1,
    """The running product along ``axis`` (default 0), as ``tf.math.cumprod``; ``exclusive``
    leaves out each element itself, ``reverse`` multiplies from the end.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     x = mg.constant([2.0, 3.0, 4.0])
    ...     ys = [mg.cumprod(x, exclusive=True), mg.cumprod(x, exclusive=True, reverse=True)]
    >>> mg.Session(g).run(ys)
    [array([1., 2., 6.], dtype=float32), array([12., 4., 1.], dtype=float32)]""",
)

__all__ = [
    "Sum",
    "Mean",
    "Prod",
    "Max",
    "Min",
    "Any",
    "All",
    "ArgMax",
    "ArgMin",
    "Cumsum",
    "Cumprod",
    *BUILDERS,
]
