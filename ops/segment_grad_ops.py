"""The ops TensorFlow's gradients of SparseSegmentSum, SparseSegmentMean and
SparseSegmentSqrtN (``WithNumSegments`` too) are made of: SparseSegment<name>Grad (a dense
gradient, ``output_dim0`` rows) and SparseSegment<name>GradV2 (only the rows ``indices``
name, with those sorted unique indices: what ``sparse_gradient=True`` asks for). One
factory call per reduction; the gradient functions are ops/segment_grad.py's.

Each row of ``grad`` (one per segment) is scaled as the forward op scaled that segment
(1, ``1 / count`` or ``1 / sqrt(count)``, computed in float64 and rounded to ``T``, as
TensorFlow's kernel) and added into the rows its ``indices`` name, in index order
(``ops/segment_reduce.fold``: bit for bit TensorFlow's order on the CPU, deterministic on
a GPU). TensorFlow's checks and messages, in its order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import FLOAT, host_array
from minigraph.ops.segment_reduce import SEGMENT_ID_TYPES, SUM, fold
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, merge, with_rank, with_rank_at_least
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS: tuple[str, ...] = ()  # gradient ops: built by ops/segment_grad.py, not by users

_SCALES = {"Sum": "1", "Mean": "1 / count", "SqrtN": "1 / sqrt(count)"}


# -- SparseSegment{Sum,Mean,SqrtN}Grad and ...GradV2: one factory --------------------------


def _grad_shape(v2: bool) -> Callable[..., Any]:
    """TensorFlow's SparseSegmentReductionGradShapeFn (V2: the unique-indices form)."""

    def shape_fn(
        c: InferenceContext,
        grad: TensorSpec,
        indices: TensorSpec,
        segment_ids: TensorSpec,
        dim0: TensorSpec,
    ) -> Any:
        g = with_rank_at_least(grad.shape, 1)
        merge(segment_ids.shape, with_rank(indices.shape, 1))
        with_rank(dim0.shape, 0)
        rest = g[1:]
        m = None if dim0.value is None else int(dim0.value)
        if m is not None and m < 0:
            c.fail(
                f"Expected a non-negative size, got {m}"
                if v2
                else "Cannot specify a negative value for output_dim0"
            )
        if v2:
            return [TensorShape([None]).concatenate(rest), TensorShape([None])]
        return TensorShape([m]).concatenate(rest)

    return shape_fn


def _check_ids(
    ctx: KernelContext, indices: Any, segment_ids: Any, rows: int, m: int, scan_ids: bool
) -> None:
    """The kernel's index checks, in TensorFlow's order: the last segment id against
    ``grad``'s rows; every segment id first when the kernel scales (``scan_ids``: V1 Mean
    and SqrtN); then, entry by entry, the index and then its segment id."""
    xp = ctx.xp
    if int(segment_ids[-1]) + 1 > rows:
        ctx.fail("Invalid number of segments")
    bad_id = (segment_ids < 0) | (segment_ids >= rows)
    bad_index = (indices < 0) | (indices >= m)
    bad = bad_id if scan_ids else bad_id | bad_index
    if not bool(bad.any()):
        if scan_ids:
            bad = bad_index
        if not bool(bad.any()):
            return
    i = int(xp.argmax(bad))
    if bool(bad_index[i]) and not (scan_ids and bool(bad_id[i])):
        ctx.fail(f"Index {int(indices[i])} out of range [0, {m}).")
    ctx.fail(f"Segment id {int(segment_ids[i])} out of range [0, {rows}).")


def _grad_kernel(name: str, v2: bool) -> Callable[..., Any]:
    dim0_name = "dense_output_dim0" if v2 else "output_dim0"

    def kernel(ctx: KernelContext, grad: Any, indices: Any, segment_ids: Any, dim0: Any) -> Any:
        xp = ctx.xp
        if indices.ndim != 1:
            ctx.fail("indices should be a vector.")
        if segment_ids.ndim != 1:
            ctx.fail("segment_ids should be a vector.")
        size = host_array(ctx, dim0)
        if size.ndim != 0:
            ctx.fail(f"{dim0_name} should be a scalar.")
        n = indices.shape[0]
        if n != segment_ids.size:
            ctx.fail("segment_ids and indices should have same size.")
        if grad.ndim < 1:
            ctx.fail("Shape must be at least rank 1 but is rank 0")
        m = int(size)
        if m < 0:
            ctx.fail(f"Expected a non-negative size, got {m}")
        rows, extra = int(grad.shape[0]), tuple(grad.shape[1:])
        if m == 0 or n == 0:  # no checks: TensorFlow returns first (zeros, not its garbage)
            empty = (0, *extra) if v2 else (m, *extra)
            ctx.check_size(empty, grad.dtype)
            out = xp.zeros(empty, grad.dtype)
            return (out, xp.zeros((0,), indices.dtype)) if v2 else out
        if not v2:
            ctx.check_size((m, *extra), grad.dtype)
        _check_ids(ctx, indices, segment_ids, rows, m, name != "Sum" and not v2)
        picked = xp.take(grad.reshape(rows, math.prod(extra)), segment_ids, axis=0)
        if name != "Sum":
            counts = xp.maximum(xp.bincount(segment_ids, minlength=rows), 1).astype(np.float64)
            scale = 1.0 / (counts if name == "Mean" else xp.sqrt(counts))
            picked = picked * xp.take(scale.astype(grad.dtype), segment_ids).reshape(-1, 1)
        if not v2:
            return fold(ctx, picked, indices, m, SUM, 0, start=True).reshape((m, *extra))
        unique, where = xp.unique(indices, return_inverse=True)
        where = where.reshape(-1)  # NumPy 2 shapes the inverse as the input; it is 1-D here
        out = fold(ctx, picked, where, int(unique.shape[0]), SUM, 0, start=True)
        return out.reshape((int(unique.shape[0]), *extra)), unique.astype(indices.dtype)

    return kernel


_DOC = """
The gradient of SparseSegment{name} (and SparseSegment{name}WithNumSegments) with respect
to its ``data``: {what}.

Row ``segment_ids[j]`` of ``grad`` (the forward output's gradient, a row per segment),
times the scale of that segment ({scale}), is added to row ``indices[j]``, for each
``j`` in order; the scale is computed in float64 and rounded to ``T``, as TensorFlow's
kernel does.
{shape}

Inputs: ``grad`` (float16, float32 or float64, rank >= 1); ``indices`` and
``segment_ids`` as given to the forward op (int32 or int64 vectors of one length);
``{dim0}``: an int32 scalar, the forward ``data``'s first dim (host memory).

Errors (InvalidArgumentError naming the node; TensorFlow's messages and order):
``indices should be a vector.``, ``segment_ids should be a vector.``,
``{dim0} should be a scalar.``, ``segment_ids and indices should have same size.``,
``Expected a non-negative size, got -1``.{neg}
Then, when ``{dim0}`` and ``indices`` are both non-empty: ``Invalid number of segments``
(the last segment id is past ``grad``'s rows), ``Index 7 out of range [0, 6).`` and
``Segment id -1 out of range [0, 3).``: {order}.

Example: ``grad = [[1, 2], [3, 4]]``, ``indices = [2, 0, 2]``, ``segment_ids = [0, 0, 1]``
and ``{dim0} = 3`` give {example}.
"""

_EXAMPLES = {
    ("Sum", False): "``[[1, 2], [0, 0], [4, 6]]``",
    ("Mean", False): "``[[0.5, 1], [0, 0], [3.5, 5]]``",
    ("SqrtN", False): "``[[0.7071, 1.4142], [0, 0], [3.7071, 5.4142]]``",
    ("Sum", True): "``([[1, 2], [4, 6]], [0, 2])``",
    ("Mean", True): "``([[0.5, 1], [3.5, 5]], [0, 2])``",
    ("SqrtN", True): "``([[0.7071, 1.4142], [3.7071, 5.4142]], [0, 2])``",
}


def _sparse_segment_grad_ops(name: str) -> tuple[Any, Any, type, type]:
    """Declare and register SparseSegment<name>Grad and SparseSegment<name>GradV2;
    returns (builder, V2 builder, class, V2 class)."""
    built = []
    for v2 in (False, True):
        dim0 = "dense_output_dim0" if v2 else "output_dim0"
        op_def = define_op(
            f"SparseSegment{name}Grad{'V2' if v2 else ''}",
            inputs=["grad: T", "indices: Tidx", "segment_ids: Tsegmentids", f"{dim0}: int32"],
            outputs=["output: T"] + (["sorted_unique_indices: Tidx"] if v2 else []),
            attrs=[
                f"T: {FLOAT}",
                f"Tidx: {SEGMENT_ID_TYPES} = int32",
                f"Tsegmentids: {SEGMENT_ID_TYPES} = int32",
            ],
            shape_fn=_grad_shape(v2),
            host_inputs=[dim0],
            doc=_DOC.format(
                name=name,
                what="the rows ``indices`` name, with those indices sorted and\nunique "
                "(``sorted_unique_indices``), what ``sparse_gradient=True`` asks for"
                if v2
                else f"a dense tensor of ``{dim0}`` rows, zero where no index points",
                scale=_SCALES[name],
                dim0=dim0,
                shape="\nShape inference: ``[None] + grad.shape[1:]`` and ``[None]``."
                if v2
                else "\nShape inference: ``[output_dim0] + grad.shape[1:]``, the first dim\n"
                "unknown unless ``output_dim0`` is a constant.",
                neg=""
                if v2
                else "\nA negative constant fails at build time: ``Cannot specify a negative value "
                "for\noutput_dim0``.",
                order="every segment id is checked before any index"
                if name != "Sum" and not v2
                else "entry by entry, the index before its segment id",
                example=_EXAMPLES[(name, v2)],
            ),
        )
        register_kernel(op_def.name, "CPU", "GPU")(_grad_kernel(name, v2))
        built.append(op_def)
    return (
        make_builder(built[0], f"sparse_segment_{name.lower()}_grad"),
        make_builder(built[1], f"sparse_segment_{name.lower()}_grad_v2"),
        make_wrapper_class(built[0]),
        make_wrapper_class(built[1]),
    )


(
    sparse_segment_sum_grad,
    sparse_segment_sum_grad_v2,
    SparseSegmentSumGrad,
    SparseSegmentSumGradV2,
) = _sparse_segment_grad_ops("Sum")
(
    sparse_segment_mean_grad,
    sparse_segment_mean_grad_v2,
    SparseSegmentMeanGrad,
    SparseSegmentMeanGradV2,
) = _sparse_segment_grad_ops("Mean")
(
    sparse_segment_sqrt_n_grad,
    sparse_segment_sqrt_n_grad_v2,
    SparseSegmentSqrtNGrad,
    SparseSegmentSqrtNGradV2,
) = _sparse_segment_grad_ops("SqrtN")


__all__ = [
    "SparseSegmentSumGrad", "SparseSegmentMeanGrad", "SparseSegmentSqrtNGrad",
    "SparseSegmentSumGradV2", "SparseSegmentMeanGradV2", "SparseSegmentSqrtNGradV2",
]  # fmt: skip
