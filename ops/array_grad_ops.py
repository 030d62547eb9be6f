"""The gradient ops of the array family, declared with TensorFlow's OpDefs so that a
gradient graph reads (and exports) as TensorFlow's: StridedSliceGrad (the gradient of
StridedSlice) and MirrorPadGrad (of MirrorPad).

Each scatters a gradient back to its input's shape: StridedSliceGrad writes ``dy`` into
zeros through the very index StridedSlice reads (strided_slice_ops.strided_slice_index), and
MirrorPadGrad folds each mirrored border back onto the cells it copied, one vectorised
add a padded side.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph import errors
from minigraph.inference import InferenceContext, TensorSpec, shape_from_value
from minigraph.kernel import KernelContext
from minigraph.ops.common import INDEX_TYPES, host_array, shape_str
from minigraph.ops.pad_ops import check_paddings
from minigraph.ops.strided_slice_ops import SLICE_ATTRS, strided_slice_index
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, merge, unknown_shape, with_rank
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = ()


# -- StridedSliceGrad ------------------------------------------------------------------


def _strided_slice_grad_shape(
    c: InferenceContext,
    shape: TensorSpec,
    begin: TensorSpec,
    end: TensorSpec,
    strides: TensorSpec,
    dy: TensorSpec,
) -> TensorShape:
    with_rank(shape.shape, 1)
    for s in (begin, end, strides):
        with_rank(s.shape, 1)
    out = shape_from_value(c, shape)
    values = [s.value for s in (begin, end, strides)]
    if out.rank is not None and all(v is not None for v in values):
        # The slice of a tensor of this shape must be shaped as dy (the kernel's check,
        # made here when the constants already tell).
        _, sliced = strided_slice_index(c, out.dims, *values)
        if not dy.shape.is_compatible_with(sliced):
            c.fail(f"shape of dy was {dy.shape} instead of {sliced}")
    return out


STRIDED_SLICE_GRAD = define_op(
    "StridedSliceGrad",
    inputs=["shape: Index", "begin: Index", "end: Index", "strides: Index", "dy: T"],
    outputs=["output: T"],
    attrs=SLICE_ATTRS,
    shape_fn=_strided_slice_grad_shape,
    host_inputs=["shape", "begin", "end", "strides"],
    doc="The gradient of StridedSlice: zeros of ``shape`` with ``dy`` written where "
    "StridedSlice with the same begin/end/strides and masks reads.",
)


@register_kernel("StridedSliceGrad", "CPU", "GPU")
def _strided_slice_grad_kernel(
    ctx: KernelContext, shape: Any, begin: Any, end: Any, strides: Any, dy: Any
) -> Any:
    dims = host_array(ctx, shape)
    if dims.ndim != 1:
        ctx.fail(f"shape must be 1-D, got shape.shape = {shape_str(dims.shape)}")
    for d in dims.tolist():
        if d < 0:
            ctx.fail(f"Dimension {d} must be >= 0")
    arrays = [host_array(ctx, v) for v in (begin, end, strides)]
    spec, sliced = strided_slice_index(ctx, tuple(dims.tolist()), *arrays)
    if tuple(sliced.dims or ()) != dy.shape:
        ctx.fail(f"shape of dy was {shape_str(dy.shape)} instead of {shape_str(sliced.dims)}")
    out = ctx.allocate(dims.tolist(), dy.dtype, fill=0)
    out[spec] = dy
    return out


StridedSliceGrad = make_wrapper_class(STRIDED_SLICE_GRAD)
strided_slice_grad = make_builder(STRIDED_SLICE_GRAD, "strided_slice_grad")


# -- MirrorPadGrad ---------------------------------------------------------------------


def _mirror_pad_grad_dims(
    fail: Any, dims: tuple, paddings: np.ndarray, mode: str
) -> list[int | None]:
    """The unpadded dims, with the checks of TensorFlow's MirrorPadGradOp in its order
    (``dims`` may hold None: those checks wait for the kernel)."""
    out: list[int | None] = []
    for (before, after), d in zip(paddings.tolist(), dims):
        if before < 0 or after < 0:
            fail(f"Paddings must be non-negative: {before}, {after}")
        if d is None:
            out.append(None)
            continue
        total = before + after
        if not total < d:
            fail(
                "Total paddings must be less than the input dimension size: "
                f"{total} was not less than {d}"
            )
        size = d - total
        if mode == "SYMMETRIC" and (before > size or after > size):
            fail(
                "paddings must be no greater than the output dimension size: "
                f"{before}, {after} greater than {size}"
            )
        if mode == "REFLECT" and (before >= size or after >= size):
            fail(
                "paddings must be less than the output dimension size: "
                f"{before}, {after} not less than {size}"
            )
        out.append(size)
    return out


def _mirror_pad_grad_shape(c: InferenceContext, x: TensorSpec, paddings: TensorSpec) -> Any:
    p = with_rank(paddings.shape, 2)
    n = p.dims[0] if p.dims[0] is not None else x.shape.rank
    if n is None:
        return unknown_shape()
    dims = with_rank(x.shape, n).dims
    merge(p, TensorShape([n, 2]))
    if paddings.value is None:
        return unknown_shape(n)
    return TensorShape(_mirror_pad_grad_dims(c.fail, dims, paddings.value, c.attrs["mode"]))


MIRROR_PAD_GRAD = define_op(
    "MirrorPadGrad",
    inputs=["input: T", "paddings: Tpaddings"],
    outputs=["output: T"],
    attrs=["T: type", f"Tpaddings: {INDEX_TYPES} = int32", "mode: {'REFLECT', 'SYMMETRIC'}"],
    shape_fn=_mirror_pad_grad_shape,
    host_inputs=["paddings"],
    doc="The gradient of MirrorPad: ``input`` (shaped as MirrorPad's output) with each "
    "padded border added onto the cells it mirrors, and the borders cut off.",
)


@register_kernel("MirrorPadGrad", "CPU", "GPU")
def _mirror_pad_grad_kernel(ctx: KernelContext, x: Any, paddings: Any) -> Any:
    if x.dtype.kind not in "iufc":  # TensorFlow registers it for number types only
        raise errors.NotFoundError(
            f"No MirrorPadGrad kernel for {x.dtype.name}: it sums, so it takes numbers",
            ctx.node_name,
            ctx.op_type,
        )
    p = host_array(ctx, paddings)
    check_paddings(ctx.fail, x.shape, p.shape, None, None)
    mode = ctx.attrs["mode"]
    _mirror_pad_grad_dims(ctx.fail, x.shape, p, mode)
    # REFLECT leaves the edge out of the mirror (border cell k copies cell k + 1 from the
    # edge), SYMMETRIC repeats it (cell k copies cell k).
    shift = 1 if mode == "REFLECT" else 0
    out = x
    for axis, (before, after) in enumerate(p.tolist()):
        if not before and not after:
            continue
        size = out.shape[axis] - before - after

        def cut(start: int, stop: int, step: int = 1, axis: int = axis) -> tuple[slice, ...]:
            return (slice(None),) * axis + (slice(start, stop, step),)

        inner = out[cut(before, before + size)].copy()
        if before:  # border cells before-1 ... 0 mirror cells shift ... shift+before-1
            inner[cut(shift, shift + before)] += out[cut(before - 1, None, -1)]
        if after:  # border cells after the edge mirror the cells just inside it
            start = before + size
            inner[cut(size - shift - after, size - shift)] += out[
                cut(start + after - 1, start - 1, -1)
            ]
        out = inner
    return out.copy() if out is x else out


MirrorPadGrad = make_wrapper_class(MIRROR_PAD_GRAD)
mirror_pad_grad = make_builder(MIRROR_PAD_GRAD, "mirror_pad_grad")


__all__ = ["StridedSliceGrad", "MirrorPadGrad"]
