"""Gathers and index ops: GatherV2 (slices along one axis, ``batch_dims``), GatherNd (by
index rows; ``gather_nd``'s ``batch_dims`` as tf.gather_nd builds it), OneHot, Where (the
coordinates of true elements) and Unique.

Each op stands in one block: declaration, shape function, kernel, builder.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from minigraph import dtypes, errors
from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import (
    ALL,
    BAD_INDICES_POLICY,
    INDEX_TYPES,
    axis_value,
    check_in_range,
    host_array,
    shape_str,
    type_set,
)
from minigraph.ops.indexing import index_fail, row_offsets, rows_view
from minigraph.registry import define_op, register_kernel
from minigraph.scope import current_scope
from minigraph.shapes import TensorShape, unknown_shape, with_rank, with_rank_at_least
from minigraph.wrappers import convert_to_output, make_builder, make_wrapper_class

BUILDERS = ("gather", "gather_nd", "one_hot", "where", "unique")


# -- GatherV2 --------------------------------------------------------------------------


def _gather_batch_dims(fail: Any, b: int, index_rank: int, params_rank: int, a: int | None) -> int:
    """GatherV2's ``batch_dims``, made non-negative, after TensorFlow's checks (``a``: the
    axis, None when it is not known yet)."""
    if not -index_rank <= b <= index_rank:
        fail(f"Expected batch_dims in the range [{-index_rank}, {index_rank}], but got {b}")
    if b < 0:
        b += index_rank
    if b and b >= params_rank:
        fail(f"batch_dims ({b}) must be less than rank(params) ({params_rank}).")
    if a is not None and a < b:
        fail(f"batch_dims ({b}) must be less than or equal to axis ({a}).")
    return b


def _gather_shape(
    c: InferenceContext, params: TensorSpec, indices: TensorSpec, axis: TensorSpec
) -> TensorShape:
    with_rank(axis.shape, 0)
    if params.shape.rank is None or indices.shape.rank is None:
        return unknown_shape()
    with_rank_at_least(params.shape, 1)
    prank, ind = params.shape.rank, indices.shape.dims
    a = None if axis.value is None else axis_value(c, axis.value, prank)
    b = _gather_batch_dims(c.fail, c.attrs["batch_dims"], len(ind), prank, a)
    dims = list(params.shape.dims)
    for i in builtins.range(b):
        if dims[i] is not None and ind[i] is not None and dims[i] != ind[i]:
            c.fail(f"params.shape[{i}]: {dims[i]} should be equal to indices.shape[{i}]: {ind[i]}")
        dims[i] = ind[i] if dims[i] is None else dims[i]
    if a is None:  # any axis >= batch_dims: the batch dims and the rank are still known
        return TensorShape(dims[:b] + [None] * (prank + len(ind) - 1 - 2 * b))
    return TensorShape(dims[:a] + list(ind[b:]) + dims[a + 1 :])


GATHER = define_op(
    "GatherV2",
    inputs=["params: Tparams", "indices: Tindices", "axis: Taxis"],
    outputs=["output: Tparams"],
    attrs=[
        "batch_dims: int = 0",
        "Tparams: type",
        "Tindices: {int16, int32, int64}",
        f"Taxis: {INDEX_TYPES}",
    ],
    shape_fn=_gather_shape,
    host_inputs=["axis"],
    doc="Gathers slices of ``params`` along ``axis`` at ``indices``; every index must be "
    "in [0, params.shape[axis]). With ``batch_dims`` = b (negative: counted from the rank of "
    "``indices``), the first b dims of ``params`` and ``indices`` are batch dims, matched "
    "pairwise: ``output.shape == params.shape[:axis] + indices.shape[b:] + "
    "params.shape[axis + 1:]`` (with ``axis`` not known when the graph is built, its rank "
    "``rank(params) + rank(indices) - 1 - b`` and its batch dims are). ``indices`` are "
    "int16, int32 or int64; ``axis`` int32 or int64.",
)


@register_kernel("GatherV2", "CPU", "GPU")
def _gather_kernel(ctx: KernelContext, params: Any, indices: Any, axis: Any) -> Any:
    xp = ctx.xp
    if params.ndim == 0:
        ctx.fail("params must be at least 1 dimensional")
    axis = host_array(ctx, axis)
    if axis.ndim != 0:
        ctx.fail(f"axis must be scalar, got shape {shape_str(axis.shape)}")
    a = axis_value(ctx, axis, params.ndim)
    b = _gather_batch_dims(ctx.fail, ctx.attrs["batch_dims"], indices.ndim, params.ndim, a)
    for i in builtins.range(b):
        if params.shape[i] != indices.shape[i]:
            ctx.fail(
                f"params.shape[{i}]: {params.shape[i]} should be equal to "
                f"indices.shape[{i}]: {indices.shape[i]}"
            )
    limit = params.shape[a]
    check_in_range(ctx.fail, "indices", indices, limit)
    shape = params.shape[:a] + indices.shape[b:] + params.shape[a + 1 :]
    ctx.check_size(shape, params.dtype)
    if b == 0:
        out = xp.take(params, indices, axis=a)
        return np.asarray(out) if isinstance(out, np.generic) else out  # NumPy gives scalars
    # [batch, mid, limit, post] gathered at [batch, k] -> [batch, mid, k, post], all at once.
    if math.prod(shape) == 0:
        return xp.empty(shape, params.dtype)
    batch = math.prod(params.shape[:b])
    mid = math.prod(params.shape[b:a])
    p = params.reshape(batch, mid, limit, math.prod(params.shape[a + 1 :]))
    ind = indices.reshape(batch, math.prod(indices.shape[b:]))
    rows = xp.arange(batch).reshape(batch, 1, 1)
    cols = xp.arange(mid).reshape(1, mid, 1)
    return p[rows, cols, ind[:, None, :]].reshape(shape)


GatherV2 = Gather = make_wrapper_class(GATHER)
_gather = make_builder(GATHER, "gather")


def gather(
    params: Any,
    indices: Any,
    validate_indices: Any = None,
    name: str | None = None,
    axis: Any = None,
    batch_dims: int | None = 0,
) -> Output:
    """Gathers slices along ``axis`` (default: ``batch_dims``), as ``tf.gather``;
    ``batch_dims=None`` is 0, as there.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.gather([10, 20, 30], [2, 0])
    ...     z = mg.gather([[1, 2, 3], [4, 5, 6]], [[2, 0], [1, 1]], batch_dims=1)
    >>> mg.Session(g).run([y, z])
    [array([30, 10], dtype=int32), array([[3, 1],
           [5, 5]], dtype=int32)]
    """
    if batch_dims is None:
        batch_dims = 0
    if axis is None:
        axis = batch_dims
    return _gather(params, indices, axis, batch_dims=batch_dims, name=name or "GatherV2")


# -- GatherNd ----------------------------------------------------------------------------


def _gather_nd_checks(fail: Callable[[str], NoReturn], params: tuple, ind: tuple) -> None:
    """DoGatherNd's shape checks, in order."""
    if len(params) < 1:
        fail("params must be at least a vector")
    if len(ind) < 1:
        fail("indices must be at least a vector")
    if ind[-1] > len(params):
        fail(
            "index innermost dimension length must be <= params rank; saw: "
            f"{ind[-1]} vs. {len(params)}"
        )
    if math.prod(ind[:-1]) > 0 and math.prod(params) == 0:
        fail(
            "Requested more than 0 entries, but params is empty.  Params shape: "
            f"{shape_str(params)}"
        )


def _gather_index_fail(
    fail: Callable[[str], NoReturn], node: str, ind: tuple, params: tuple
) -> Callable[[int, list[int]], NoReturn]:
    return index_fail(fail, ind, f"param shape {shape_str(params)}", f", node name: {node}")


def _gather_nd_shape(c: InferenceContext, params: TensorSpec, indices: TensorSpec) -> TensorShape:
    ind = with_rank_at_least(indices.shape, 1)
    p = params.shape
    if p.rank is None or ind.rank is None or ind[-1] is None:
        return unknown_shape()
    ix = ind[-1]
    if ix > p.rank:
        c.fail(
            "indices.shape[-1] must be <= params.rank, but saw indices shape: "
            f"{ind} and params shape: {p}"
        )
    if p.is_fully_defined() and ind.is_fully_defined():
        _gather_nd_checks(c.fail, p.dims, ind.dims)
        if indices.value is not None and c.attrs["bad_indices_policy"] != "IGNORE":
            bad_row = _gather_index_fail(c.fail, c.node_name, ind.dims, p.dims)
            row_offsets(np, indices.value, p.dims[:ix], False, bad_row)
    return TensorShape(ind.dims[:-1] + p.dims[ix:])


GATHER_ND = define_op(
    "GatherNd",
    inputs=["params: Tparams", "indices: Tindices"],
    outputs=["output: Tparams"],
    attrs=[f"Tparams: {ALL}", "Tindices: {int16, int32, int64}", BAD_INDICES_POLICY],
    shape_fn=_gather_nd_shape,
    doc="""\
Gathers elements or slices of ``params`` at index rows: the inverse of ScatterNd.

``indices`` is an integer tensor of rank >= 1 whose last dim ``ix =
indices.shape[-1]`` (``0 <= ix <= rank(params)``) is the depth of an index row:
row ``indices[b...]`` picks ``params[indices[b...]]``, an element when ``ix ==
rank(params)``, else a slice, so ``output.shape == indices.shape[:-1] +
params.shape[ix:]`` (unknown when the rank of ``params`` or ``ix`` is). A rank-1
``indices`` is one row; ``ix == 0`` copies all of ``params`` once per row;
duplicate rows are fine. An index must be in ``[0, dim)``; negative indices never
wrap. The op has no ``batch_dims``: ``mg.gather_nd(..., batch_dims=b)`` builds it
as ``tf.gather_nd`` does (batch coordinates prefixed to each index row, one GatherNd,
a reshape; the batch dims of ``params`` must be known when the graph is built).

Inputs and attrs:
- ``params``: any numeric dtype or bool (``Tparams``), rank >= 1.
- ``indices``: int16, int32 or int64 (``Tindices``), rank >= 1.
- ``bad_indices_policy``: ``''``, ``'DEFAULT'`` or ``'ERROR'`` (the default: an
  out-of-range row is an error naming the first bad row), or ``'IGNORE'`` (bad
  rows give zeros). Any other value is rejected at build time.

Errors, in TensorFlow's wording: InvalidArgumentError naming the node, at build
time when the shapes (or constant indices) already prove them, else at run time.
- ``Shape must be at least rank 1 but is rank 0`` (``indices must be at least a
  vector``); ``params must be at least a vector``.
- ``indices.shape[-1] must be <= params.rank, but saw indices shape: [1,2] and
  params shape: [2]`` (``index innermost dimension length must be <= params
  rank; saw: 2 vs. 1``).
- ``Requested more than 0 entries, but params is empty.  Params shape: [0,3]``.
- ``indices[0,1] = [7] does not index into param shape [3], node name: X``: the
  first bad row (TensorFlow may name any bad row).
- ResourceExhaustedError, before allocating, for an output too large to hold.

Example:

>>> import minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     rows = mg.gather_nd([[1, 2], [3, 4]], [[1], [0]])
...     elems = mg.gather_nd([[1, 2], [3, 4]], [[0, 0], [1, 1]])
...     one = mg.gather_nd([[1, 2], [3, 4]], [1, 0])
>>> mg.Session(g).run([rows, elems, one])
[array([[3, 4],
       [1, 2]], dtype=int32), array([1, 4], dtype=int32), array(3, dtype=int32)]
""",
)


@register_kernel("GatherNd", "CPU", "GPU")
def _gather_nd_kernel(ctx: KernelContext, params: Any, indices: Any) -> Any:
    xp = ctx.xp
    _gather_nd_checks(ctx.fail, params.shape, indices.shape)
    ix = indices.shape[-1]
    out = ctx.allocate(indices.shape[:-1] + params.shape[ix:], params.dtype)
    n_result = math.prod(indices.shape[:-1])
    if n_result == 0 or out.size == 0:
        return out
    ignore = ctx.attrs["bad_indices_policy"] == "IGNORE"
    bad_row = _gather_index_fail(ctx.fail, ctx.node_name, indices.shape, params.shape)
    flat, bad = row_offsets(xp, indices, params.shape[:ix], ignore, bad_row)
    if bad is not None:
        flat = xp.where(bad, 0, flat)  # row 0 exists: params is not empty
    src = rows_view(params, math.prod(params.shape[:ix]))
    dst = rows_view(out, n_result)
    if xp is np:  # mode="clip" skips take's own bounds pass (the rows are checked above)

        def gather(rows: slice) -> None:  # each thread fills its own stretch of rows
            np.take(src, flat[rows], axis=0, out=dst[rows], mode="clip")

        ctx.parallel_slices(gather, n_result, out.nbytes + flat.nbytes)
    else:
        xp.take(src, flat, axis=0, out=dst)
    if bad is not None:
        dst[bad] = 0
    return out


GatherNd = make_wrapper_class(GATHER_ND)
_gather_nd = make_builder(GATHER_ND, "gather_nd")


def gather_nd(
    params: Any,
    indices: Any,
    name: str | None = None,
    batch_dims: int = 0,
    bad_indices_policy: str = "",
) -> Output:
    if batch_dims == 0:
        return _gather_nd(params, indices, bad_indices_policy=bad_indices_policy, name=name)
    return _batch_gather_nd(params, indices, batch_dims, bad_indices_policy, name or "GatherNd")


def _batch_gather_nd(params: Any, indices: Any, b: int, policy: str, name: str) -> Output:
    """``gather_nd`` with ``batch_dims``, built as tf.gather_nd builds it: each index row is
    prefixed with its batch coordinates, one GatherNd runs over the whole of ``params``,
    and the flat batch is reshaped back. The batch dims of ``params`` must be known."""
    from minigraph.ops.array_ops import cast
    from minigraph.ops.shape_ops import reshape, shape
    from minigraph.ops.slice_ops import concat, tile
    from minigraph.scope import name_scope

    node = current_scope().unique_op_name(name)

    def fail(msg: str) -> NoReturn:
        raise errors.InvalidArgumentError(msg, node, "GatherNd")

    if isinstance(b, bool) or not isinstance(b, int | np.integer):
        fail(f"batch_dims must be an int, got {b!r}")
    p, ind = convert_to_output(params), convert_to_output(indices)
    prank, irank = p.shape.rank, ind.shape.rank
    if prank is None or irank is None:
        fail("gather_nd with batch_dims needs the ranks of params and indices")
    if not 0 <= b < min(prank, irank):
        fail(f"batch_dims = {b} must be in [0, min(rank(params), rank(indices) - 1))")
    batch = p.shape.dims[:b]
    if any(d is None for d in batch):
        fail(f"gather_nd with batch_dims needs known batch dims in params, got {p.shape}")
    for i, (d, e) in enumerate(zip(batch, ind.shape.dims[:b])):
        if e is not None and d != e:
            fail(f"params.shape[{i}]: {d} should be equal to indices.shape[{i}]: {e}")
    n = math.prod(batch)
    grid = np.indices(batch).reshape(b, n).T.astype(ind.dtype.np)
    grid = grid.reshape((n,) + (1,) * (irank - b - 1) + (b,))
    with name_scope(name):
        ind_shape = shape(ind)
        multiples = concat([[1], ind_shape[b:-1], [1]], 0)
        flat = reshape(ind, concat([[n], ind_shape[b:]], 0))
        full = concat([tile(grid, multiples), flat], -1)
        out = _gather_nd(p, full, bad_indices_policy=policy)
        out_shape = concat([np.array(batch, np.int32), cast(shape(out), "int32")[1:]], 0)
        return reshape(out, out_shape)


gather_nd.__doc__ = GATHER_ND.doc


# -- OneHot --------------------------------------------------------------------------------


def _one_hot_axis(fail: Any, axis: int, rank: int) -> int:
    if axis != -1 and not 0 <= axis <= rank:
        fail(f"Expected axis to be -1 or between [0, {rank + 1}).  But received: {axis}")
    return rank if axis == -1 else axis


def _one_hot_shape(
    c: InferenceContext, indices: TensorSpec, depth: TensorSpec, on: TensorSpec, off: TensorSpec
) -> TensorShape:
    for spec in (depth, on, off):
        with_rank(spec.shape, 0)
    d = None if depth.value is None else int(depth.value)
    if d is not None and d < 0:
        c.fail(f"depth must be non-negative, got: {d}")
    s = indices.shape
    if s.rank is None:
        return unknown_shape()
    a = _one_hot_axis(c.fail, c.attrs["axis"], s.rank)
    return TensorShape(s.dims[:a] + (d,) + s.dims[a:])


ONE_HOT = define_op(
    "OneHot",
    inputs=["indices: TI", "depth: int32", "on_value: T", "off_value: T"],
    outputs=["output: T"],
    attrs=["axis: int = -1", "T: type", "TI: {uint8, int8, int32, int64} = int64"],
    shape_fn=_one_hot_shape,
    host_inputs=["depth"],
    doc="A new dimension of size ``depth`` at ``axis`` (-1: last) holding ``on_value`` where "
    "its position equals the index and ``off_value`` elsewhere; an index outside "
    "[0, depth) gives a row of ``off_value``.",
)


@register_kernel("OneHot", "CPU", "GPU")
def _one_hot_kernel(ctx: KernelContext, indices: Any, depth: Any, on: Any, off: Any) -> Any:
    xp = ctx.xp
    d = host_array(ctx, depth)
    if d.ndim != 0:
        ctx.fail(f"depth must be a scalar, but got: {shape_str(d.shape)}")
    for what, v in (("on_value", on), ("off_value", off)):
        if v.ndim != 0:
            ctx.fail(f"{what} must be a scalar, but got: {shape_str(v.shape)}")
    n = int(d)
    if n < 0:
        ctx.fail(f"depth must be non-negative, got: {n}")
    a = _one_hot_axis(ctx.fail, ctx.attrs["axis"], indices.ndim)
    shape = indices.shape[:a] + (n,) + indices.shape[a:]
    ctx.check_size(shape, on.dtype)
    positions = xp.arange(n).reshape((n,) + (1,) * (indices.ndim - a))
    hit = xp.expand_dims(indices, a).astype(np.int64) == positions
    return xp.where(hit, on, off).astype(on.dtype, copy=False)


OneHot = make_wrapper_class(ONE_HOT)
_one_hot = make_builder(ONE_HOT, "one_hot")


def one_hot(
    indices: Any,
    depth: Any,
    on_value: Any = None,
    off_value: Any = None,
    axis: Any = None,
    dtype: Any = None,
    name: str | None = None,
) -> Output:
    """One-hot rows for ``indices``, as ``tf.one_hot``: the dtype is ``dtype``, else that of
    ``on_value`` or ``off_value``, else float32; on/off default to 1 and 0.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.one_hot([0, 2, -1, 1], 3, 5.0, 0.0)
    >>> mg.Session(g).run(y)
    array([[5., 0., 0.],
           [0., 0., 5.],
           [0., 0., 0.],
           [0., 5., 0.]], dtype=float32)
    """
    scope = current_scope()
    node = scope.unique_op_name(name or "one_hot")

    def fail(msg: str) -> NoReturn:
        raise errors.InvalidArgumentError(msg, node, "OneHot")

    given = {}
    for key, v in (("on_value", on_value), ("off_value", off_value)):
        if v is not None:
            given[key] = convert_to_output(v, None if dtype is None else dtypes.as_dtype(dtype))
    if dtype is None:
        kinds = {k: v.dtype for k, v in given.items()}
        if len(set(kinds.values())) > 1:
            fail(
                f"dtype {kinds['on_value'].name} of on_value does not match dtype "
                f"{kinds['off_value'].name} of off_value"
            )
        dt = next(iter(kinds.values())) if kinds else dtypes.float32
    else:
        dt = dtypes.as_dtype(dtype)
    on = given.get("on_value", np.ones((), dt.np))
    off = given.get("off_value", np.zeros((), dt.np))
    return _one_hot(
        indices, depth, on, off, axis=-1 if axis is None else axis, name=name or "one_hot"
    )


# -- Where -------------------------------------------------------------------------------


def _where_shape(c: InferenceContext, x: TensorSpec) -> TensorShape:
    if x.shape.rank == 0:
        c.fail("WhereOp : Unhandled input dimensions: 0")
    return TensorShape([None, x.shape.rank])


WHERE = define_op(
    "Where",
    inputs=["input: T"],
    outputs=["index: int64"],
    attrs=[f"T: {type_set(dtypes.NUMBER_TYPES + (dtypes.bool_,))} = bool"],
    shape_fn=_where_shape,
    doc="The coordinates of the true (non-zero) elements of ``input``, one row each in "
    "row-major order: an int64 matrix ``[num_true, rank(input)]``.",
)


@register_kernel("Where", "CPU", "GPU")
def _where_kernel(ctx: KernelContext, x: Any) -> Any:
    if x.ndim == 0:
        ctx.fail("WhereOp : Unhandled input dimensions: 0")
    return ctx.xp.argwhere(x).astype(np.int64, copy=False)


Where = make_wrapper_class(WHERE)
_where = make_builder(WHERE, "where")


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Output:
    """The coordinates of the true elements of ``condition`` (Where) when ``x`` and ``y`` are
    None; otherwise elements of ``x`` where true and of ``y`` elsewhere (SelectV2), as
    ``tf.where``.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.where([[True, False], [False, True]])
    >>> mg.Session(g).run(y)
    array([[0, 0],
           [1, 1]])
    """
    if x is None and y is None:
        return _where(condition, name=name or "Where")
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    from minigraph.ops.compare_ops import where_v2

    return where_v2(condition, x, y, name=name)


# -- Unique ------------------------------------------------------------------------------


def _unique_shape(c: InferenceContext, x: TensorSpec) -> list[TensorShape]:
    s = with_rank(x.shape, 1)
    return [TensorShape([None]), s]


UNIQUE = define_op(
    "Unique",
    inputs=["x: T"],
    outputs=["y: T", "idx: out_idx"],
    attrs=["T: type", f"out_idx: {INDEX_TYPES} = int32"],
    shape_fn=_unique_shape,
    doc="The distinct values of the vector ``x`` in order of first occurrence (``y``), and "
    "for each element of ``x`` its position in ``y`` (``idx``). NaNs are all distinct; "
    "-0.0 equals 0.0.",
)


@register_kernel("Unique", "CPU", "GPU")
def _unique_kernel(ctx: KernelContext, x: Any) -> tuple[Any, Any]:
    xp = ctx.xp
    if x.ndim != 1:
        ctx.fail("unique expects a 1D vector.")
    idx_dtype = ctx.attrs["out_idx"].np
    n = x.shape[0]
    if n == 0:
        return x.copy(), xp.zeros(0, idx_dtype)
    # Sort stably: equal values form runs whose first element is their first occurrence.
    perm = xp.argsort(x, kind="stable") if xp is np else xp.argsort(x)
    ordered = x[perm]
    starts = xp.ones(n, bool)
    starts[1:] = ordered[1:] != ordered[:-1]  # NaN != NaN: every NaN starts a run
    run = xp.cumsum(starts) - 1  # run number of each sorted element
    first = perm[starts]  # first occurrence of each run, in sorted order
    order = xp.argsort(first)  # runs in order of first occurrence
    rank = xp.empty(order.shape[0], idx_dtype)
    rank[order] = xp.arange(order.shape[0], dtype=idx_dtype)
    idx = xp.empty(n, idx_dtype)
    idx[perm] = rank[run]
    return x[first[order]], idx


Unique = make_wrapper_class(UNIQUE)
_unique = make_builder(UNIQUE, "unique")


def unique(x: Any, out_idx: Any = dtypes.int32, name: str | None = None) -> tuple[Output, Output]:
    """``(y, idx)``: the distinct values of ``x`` in order of first occurrence, and where each
    element of ``x`` is in ``y``, as ``tf.unique``.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y, idx = mg.unique([1, 1, 2, 4, 4, 4, 7, 8, 8])
    >>> mg.Session(g).run([y, idx])
    [array([1, 2, 4, 7, 8], dtype=int32), array([0, 0, 1, 2, 2, 2, 3, 4, 4], dtype=int32)]
    """
    y, idx = _unique(x, out_idx=out_idx, name=name or "Unique")
    return y, idx


__all__ = [
    "GatherV2",
    "Gather",
    "GatherNd",
    "OneHot",
    "Where",
    "Unique",
    *BUILDERS,
]
