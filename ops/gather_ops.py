"""Gathers: GatherV2 (slices along one axis) and GatherNd (by index rows).

Each op stands in one block: declaration, shape function, kernel, builder.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

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
)
from minigraph.ops.indexing import index_fail, row_offsets, rows_view
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, unknown_shape, with_rank, with_rank_at_least
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = ("gather", "gather_nd")


# -- GatherV2 --------------------------------------------------------------------------


def _gather_shape(
    c: InferenceContext, params: TensorSpec, indices: TensorSpec, axis: TensorSpec
) -> TensorShape:
    with_rank(axis.shape, 0)
    if params.shape.rank is None or indices.shape.rank is None or axis.value is None:
        return unknown_shape()
    with_rank_at_least(params.shape, 1)
    a = axis_value(c, axis.value, params.shape.rank)
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


@register_kernel("GatherV2", "CPU", "GPU")
def _gather_kernel(ctx: KernelContext, params: Any, indices: Any, axis: Any) -> Any:
    if params.ndim == 0:
        ctx.fail("params must be at least 1 dimensional")
    a = axis_value(ctx, host_array(ctx, axis), params.ndim)
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
wrap. (``tf.gather_nd``'s ``batch_dims`` is a Python wrapper, not offered here.)

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
    params: Any, indices: Any, name: str | None = None, *, bad_indices_policy: str = ""
) -> Output:
    return _gather_nd(params, indices, bad_indices_policy=bad_indices_policy, name=name)


gather_nd.__doc__ = GATHER_ND.doc


__all__ = ["GatherV2", "Gather", "GatherNd", *BUILDERS]
