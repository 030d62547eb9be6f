"""The resize gradient ops: ResizeBilinearGrad, ResizeNearestNeighborGrad and
ResizeBicubicGrad, what the resize ops' gradients build (image_grad.py).

Declared with TensorFlow's OpDefs, shape functions and the checks and messages of its CPU
kernels (resize_*_op.cc). Each forward resize reads, for every output row (column), a few
input rows (columns) with weights (image_ops.py's coordinates, the same functions), so its
gradient sends each output pixel's gradient back to those pixels with the same weights.
The kernels invert that map on the host (for each input row, the output rows that read it:
a few "taps", padded to the most any row has) and loop over tap pairs, each a gather of
the whole batch, never over pixels; a term is rounded as TensorFlow's
(``T(grad * wy * wx)``) and the terms reach a pixel in TensorFlow's order of output rows,
then columns, summed in ``T``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph import dtypes
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import host_array, shape_str, type_set
from minigraph.ops.image_ops import cubic_taps, lerp_weights, nearest_index, resize_scale
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import ShapeError, TensorShape, with_rank
from minigraph.wrappers import make_wrapper_class

BUILDERS: tuple[str, ...] = ()  # gradient ops: built by mg.gradients, not by users

_BOTH = "If half_pixel_centers is True, align_corners must be False."
_INT32_MAX = 2**31 - 1
_ATTRS = ["align_corners: bool = False", "half_pixel_centers: bool = False"]


def _inverse(index: np.ndarray, weights: np.ndarray | None, in_size: int) -> tuple:
    """For a map where output index ``i`` reads input ``index[i, t]`` with weight
    ``weights[i, t]``: for each input index, the output indices that read it and their
    weights, in order of output index then tap, as [in_size, K] arrays (K the most any
    input index has; ``valid`` marks the real entries)."""
    out, taps = index.shape
    src = np.repeat(np.arange(out, dtype=np.int64), taps)
    dst = index.reshape(-1)
    order = np.lexsort((np.tile(np.arange(taps), out), src, dst))  # by dst, src, tap
    dst, src = dst[order], src[order]
    counts = np.bincount(dst, minlength=in_size)
    k = max(int(counts.max()), 1) if counts.size else 1
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    slot = np.arange(dst.size) - starts[dst]
    rows = np.zeros((in_size, k), np.int64)
    valid = np.zeros((in_size, k), bool)
    rows[dst, slot] = src
    valid[dst, slot] = True
    w = None
    if weights is not None:
        w = np.zeros((in_size, k), np.float32)
        w[dst, slot] = weights.reshape(-1)[order]
    return rows, w, valid


def _spread(
    ctx: KernelContext, grads: Any, rows: tuple, cols: tuple, shape: tuple, dtype: Any,
    in_dtype: bool = False,
) -> Any:  # fmt: skip
    """The gradient [n, h, w, c] in ``dtype`` of a resize whose inverse maps are ``rows``
    and ``cols`` (:func:`_inverse`): for every pair of taps, the output pixels that read
    each input pixel, times their two weights (in float32, or in ``dtype`` when
    ``in_dtype``, as TensorFlow's kernels), added in ``dtype``. Padding taps add nothing."""
    xp = ctx.xp
    out = xp.zeros(shape, dtype)
    if out.size == 0 or grads.size == 0:
        return out
    row_src, row_valid, col_src, col_valid = (xp.asarray(a) for a in (*rows[::2], *cols[::2]))
    row_w, col_w = (None if a[1] is None else xp.asarray(a[1]) for a in (rows, cols))
    work = np.dtype(dtype) if in_dtype else np.dtype(np.float32)
    g = grads.astype(work, copy=False)
    zero = xp.zeros((), dtype)
    for ky in range(row_src.shape[1]):
        band = xp.take(g, row_src[:, ky], axis=1)  # [n, h, resized w, c]
        if row_w is not None:
            band = band * row_w[:, ky, None, None].astype(work)
        for kx in range(col_src.shape[1]):
            term = xp.take(band, col_src[:, kx], axis=2)
            if col_w is not None:
                term *= col_w[:, kx, None].astype(work)
            mask = row_valid[:, ky, None, None] & col_valid[:, kx, None]
            out += xp.where(mask, term.astype(dtype, copy=False), zero)
    return out


def _grad_checks(ctx: KernelContext, grads: Any, original: tuple[int, int]) -> None:
    """ImageResizerGradientState's checks on the resized and original sizes."""
    if grads.shape[1] <= 0 or grads.shape[2] <= 0:
        ctx.fail("resized dimensions must be positive")
    if original[0] <= 0 or original[1] <= 0:
        ctx.fail("original dimensions must be positive")
    if max(original) > _INT32_MAX:
        ctx.fail("original sizes must be between 0 and max int32")


# -- ResizeBilinearGrad and ResizeBicubicGrad -------------------------------------------


def _like_original_shape(c: InferenceContext, grads: TensorSpec, image: TensorSpec) -> TensorShape:
    """TensorFlow's: original_image's shape, rank 4 (batch and channels as grads' when
    known)."""
    if c.attrs["half_pixel_centers"] and c.attrs["align_corners"]:
        c.fail(_BOTH)
    dims = with_rank(image.shape, 4).as_list()
    g = grads.shape.as_list() if grads.shape.rank == 4 else [None] * 4
    return TensorShape([g[0] if g[0] is not None else dims[0], dims[1], dims[2],
                        g[3] if g[3] is not None else dims[3]])  # fmt: skip


def _image_grad_checks(ctx: KernelContext, grads: Any, image: Any) -> tuple[int, int]:
    """ResizeBilinearGrad's and ResizeBicubicGrad's checks, in TensorFlow's order; the
    original image's (h, w)."""
    if ctx.attrs["half_pixel_centers"] and ctx.attrs["align_corners"]:
        ctx.fail(_BOTH)
    if grads.ndim != 4:
        ctx.fail(f"input_grad must be 4-dimensional{shape_str(grads.shape)}")
    if image.ndim != 4:
        ctx.fail(f"original_image must be 4-dimensional{shape_str(image.shape)}")
    original = (int(image.shape[1]), int(image.shape[2]))
    _grad_checks(ctx, grads, original)
    return original


def _scales(ctx: KernelContext, grads: Any, original: tuple[int, int]) -> tuple:
    corners = ctx.attrs["align_corners"]
    return tuple(
        resize_scale(original[i], grads.shape[1 + i], corners) for i in range(2)
    )  # fmt: skip


_FLOAT_TYPES = type_set((dtypes.float16, dtypes.float32, dtypes.float64))

RESIZE_BILINEAR_GRAD = define_op(
    "ResizeBilinearGrad",
    inputs=["grads: float", "original_image: T"],
    outputs=["output: T"],
    attrs=[f"T: {_FLOAT_TYPES}", *_ATTRS],
    shape_fn=_like_original_shape,
    doc="""
The gradient of ResizeBilinear: each pixel of ``grads`` (float32, the resized image's
shape) goes back to the four pixels of ``original_image`` (whose height, width and dtype
the result has; its values are not read) it was blended from, times the blend's weights,
with ResizeBilinear's coordinates (``align_corners``, ``half_pixel_centers``). As
TensorFlow's CPU kernel, each term ``grads * y_weight * x_weight`` is computed in float32
and added in ``T``.

Errors (InvalidArgumentError): ``grads`` or ``original_image`` not 4-D, empty sizes,
both ``align_corners`` and ``half_pixel_centers``.

Example: ``grads`` ``[[1, 1, 1, 1]]`` for the [1, 1, 2, 1] image resized to width 4 gives
``[[1.5, 2.5]]`` (the last two columns read the right pixel only).
""",
)


@register_kernel("ResizeBilinearGrad", "CPU", "GPU")
def _resize_bilinear_grad_kernel(ctx: KernelContext, grads: Any, image: Any) -> Any:
    original = _image_grad_checks(ctx, grads, image)
    n, rh, rw, c = grads.shape
    shape = (n, original[0], original[1], c)
    ctx.check_size(shape, image.dtype)
    half = ctx.attrs["half_pixel_centers"]
    maps = []
    for size, resized, scale in zip(original, (rh, rw), _scales(ctx, grads, original)):
        low, high, lerp = lerp_weights(np, resized, size, scale, half)
        weights = np.stack([np.float32(1) - lerp, lerp], axis=1)
        maps.append(_inverse(np.stack([low, high], axis=1), weights, size))
    return _spread(ctx, grads, maps[0], maps[1], shape, image.dtype)


_BICUBIC_TYPES = type_set((dtypes.float32, dtypes.float64))

RESIZE_BICUBIC_GRAD = define_op(
    "ResizeBicubicGrad",
    inputs=["grads: float", "original_image: T"],
    outputs=["output: T"],
    attrs=[f"T: {_BICUBIC_TYPES}", *_ATTRS],
    shape_fn=_like_original_shape,
    doc="""
The gradient of ResizeBicubic: each pixel of ``grads`` goes back to the 4x4 pixels of
``original_image`` (whose height, width and dtype the result has) it was computed from,
times ResizeBicubic's weights (TensorFlow's table, Keys' kernel). As TensorFlow's CPU
kernel, each term is computed in ``T``. Errors as ResizeBilinearGrad.

Example: ``grads`` of ones [1, 1, 8, 1] for a [1, 1, 4, 1] image, ``half_pixel_centers``,
sums to 8 over the four pixels (each output's weights sum to 1).
""",
)


@register_kernel("ResizeBicubicGrad", "CPU", "GPU")
def _resize_bicubic_grad_kernel(ctx: KernelContext, grads: Any, image: Any) -> Any:
    original = _image_grad_checks(ctx, grads, image)
    n, rh, rw, c = grads.shape
    shape = (n, original[0], original[1], c)
    ctx.check_size(shape, image.dtype)
    half = ctx.attrs["half_pixel_centers"]
    maps = []
    for size, resized, scale in zip(original, (rh, rw), _scales(ctx, grads, original)):
        index, weights = cubic_taps(resized, size, scale, half)
        maps.append(_inverse(index, weights, size))
    return _spread(ctx, grads, maps[0], maps[1], shape, image.dtype, in_dtype=True)


# -- ResizeNearestNeighborGrad ----------------------------------------------------------

_NEAREST_TYPES = type_set(
    (dtypes.uint8, dtypes.int8, dtypes.int32, dtypes.float16, dtypes.float32, dtypes.float64)
)


def _nearest_grad_shape(c: InferenceContext, grads: TensorSpec, size: TensorSpec) -> TensorShape:
    """TensorFlow's ResizeShapeFn on grads: [batch, size[0], size[1], channels]."""
    dims = with_rank(grads.shape, 4).as_list()
    sdims = with_rank(size.shape, 1).dims
    if sdims is not None and sdims[0] not in (None, 2):
        raise ShapeError(f"Dimension must be 2 but is {sdims[0]}")
    hw: list[int | None] = [None, None]
    if size.value is not None:
        hw = [int(v) if v >= 0 else None for v in size.value.reshape(-1).tolist()]
    return TensorShape([dims[0], hw[0], hw[1], dims[3]])


RESIZE_NEAREST_NEIGHBOR_GRAD = define_op(
    "ResizeNearestNeighborGrad",
    inputs=["grads: T", "size: int32"],
    outputs=["output: T"],
    attrs=[f"T: {_NEAREST_TYPES}", *_ATTRS],
    shape_fn=_nearest_grad_shape,
    host_inputs=["size"],
    doc="""
The gradient of ResizeNearestNeighbor: each pixel of ``grads`` is added to the pixel of
the original image (of height and width ``size``) that ResizeNearestNeighbor copied it
from, with its coordinates; sums in ``T`` in TensorFlow's order (output rows, then
columns).

Errors (InvalidArgumentError): ``grads`` not 4-D, ``size`` not a vector of 2 positive
values ("shape_t's elements must be positive"). Unlike the forward op, both
``align_corners`` and ``half_pixel_centers`` are accepted, as TensorFlow's kernel: the
half-pixel coordinate rounded, with align_corners' scale.

Example: ``grads`` ``[[1, 2, 3, 4]]`` (shape [1, 1, 4, 1]) with ``size=[1, 2]`` gives
``[[3, 7]]``.
""",
)


@register_kernel("ResizeNearestNeighborGrad", "CPU", "GPU")
def _resize_nearest_neighbor_grad_kernel(ctx: KernelContext, grads: Any, size: Any) -> Any:
    if grads.ndim != 4:
        ctx.fail(f"input must be 4-dimensional{shape_str(grads.shape)}")
    sizes = host_array(ctx, size)
    if sizes.ndim != 1:
        ctx.fail(f"shape_t must be 1-dimensional{shape_str(sizes.shape)}")
    if sizes.size != 2:
        ctx.fail(f"shape_t must have two elements{shape_str(sizes.shape)}")
    original = (int(sizes[0]), int(sizes[1]))
    if min(original) <= 0:
        ctx.fail("shape_t's elements must be positive")
    n, rh, rw, c = grads.shape
    shape = (n, original[0], original[1], c)
    ctx.check_size(shape, grads.dtype)
    if grads.size == 0:  # nothing resized (TF's loops run over no pixel)
        return ctx.xp.zeros(shape, grads.dtype)
    corners = ctx.attrs["align_corners"]
    maps = []
    for orig, resized in zip(original, (rh, rw)):
        scale = resize_scale(orig, resized, corners)
        index = nearest_index(np, resized, orig, scale, ctx.attrs)
        maps.append(_inverse(index[:, None], None, orig))
    return _spread(ctx, grads, maps[0], maps[1], shape, grads.dtype, in_dtype=True)


ResizeBilinearGrad = make_wrapper_class(RESIZE_BILINEAR_GRAD)
ResizeBicubicGrad = make_wrapper_class(RESIZE_BICUBIC_GRAD)
ResizeNearestNeighborGrad = make_wrapper_class(RESIZE_NEAREST_NEIGHBOR_GRAD)

__all__ = ["ResizeBilinearGrad", "ResizeBicubicGrad", "ResizeNearestNeighborGrad"]
