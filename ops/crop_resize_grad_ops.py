"""CropAndResize's gradient ops: CropAndResizeGradImage and CropAndResizeGradBoxes, what
its gradient builds (image_grad.py).

Declared with TensorFlow 2.21's OpDefs and the checks and messages of its CPU kernels
(crop_and_resize_op.cc). Both sample each box's grid where CropAndResize does
(detection_ops.sample_at, vectorised over boxes and pixels) and skip samples outside the
image, as the forward op extrapolates there. The image gradient adds each sample's
gradient, split over its four bilinear corners (or given to its nearest pixel), into the
image in TensorFlow's loop order (box, row, column, corner), so float sums round as its
CPU kernel's; the boxes' gradient is the bilinear blend's derivative with respect to the
box edges, always bilinear (TensorFlow approximates ``nearest`` by it too).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph import errors
from minigraph.inference import InferenceContext, TensorSpec, shape_from_value
from minigraph.kernel import KernelContext
from minigraph.ops.common import host_array, shape_str
from minigraph.ops.detection_ops import sample_at
from minigraph.ops.scatter_ops import _ADD
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, with_rank
from minigraph.wrappers import make_wrapper_class

BUILDERS: tuple[str, ...] = ()  # gradient ops: built by mg.gradients, not by users


def _grads_checks(ctx: KernelContext, grads: Any) -> None:
    if grads.ndim != 4:
        ctx.fail(f"grads image must be 4-D{shape_str(grads.shape)}")
    if grads.shape[1] <= 0 or grads.shape[2] <= 0:
        ctx.fail("grads dimensions must be positive")


def _box_count(ctx: KernelContext, grads: Any, boxes: Any, box_ind: Any) -> int:
    """TensorFlow's ParseAndCheckBoxSizes, then the boxes against ``grads``."""
    num_boxes = 0
    if boxes.size or box_ind.size:
        if boxes.ndim != 2:
            ctx.fail(f"boxes must be 2-D{shape_str(boxes.shape)}")
        num_boxes = boxes.shape[0]
        if boxes.shape[1] != 4:
            ctx.fail("boxes must have 4 columns")
        if box_ind.ndim != 1:
            ctx.fail(f"box_index must be 1-D{shape_str(box_ind.shape)}")
        if box_ind.shape[0] != num_boxes:
            ctx.fail("box_index has incompatible shape")
    if grads.shape[0] != num_boxes:
        ctx.fail("boxes and grads have incompatible shape")
    return num_boxes


def _check_indices(ctx: KernelContext, box_ind: Any, batch: int) -> None:
    if bool(((box_ind < 0) | (box_ind >= batch)).any()):
        ctx.fail("box_index has values outside [0, batch_size)", errors.OutOfRangeError)


def _samples(xp: Any, boxes: Any, crop: tuple[int, int], image: tuple[int, int], ratio: bool):
    """Each box's sample rows and columns ([B, H], [B, W]) and where they are inside."""
    in_y, inside_y = sample_at(xp, boxes[:, 0], boxes[:, 2], crop[0], image[0], ratio)
    in_x, inside_x = sample_at(xp, boxes[:, 1], boxes[:, 3], crop[1], image[1], ratio)
    return in_y, in_x, inside_y[:, :, None] & inside_x[:, None, :]


# -- CropAndResizeGradImage ---------------------------------------------------------------


def _crop_and_resize_grad_image_shape(
    c: InferenceContext, grads: TensorSpec, boxes: TensorSpec, box_ind: TensorSpec,
    image_size: TensorSpec,
) -> TensorShape:  # fmt: skip
    """TensorFlow's: image_size's values, rank 4."""
    with_rank(image_size.shape, 1)
    return with_rank(shape_from_value(c, image_size), 4)


CROP_AND_RESIZE_GRAD_IMAGE = define_op(
    "CropAndResizeGradImage",
    inputs=["grads: float32", "boxes: float32", "box_ind: int32", "image_size: int32"],
    outputs=["output: T"],
    attrs=["T: {float32, float16, float64}", "method: {'bilinear', 'nearest'} = 'bilinear'"],
    shape_fn=_crop_and_resize_grad_image_shape,
    host_inputs=["image_size"],
    doc="""
The gradient of CropAndResize with respect to its image: each sample of ``grads``
(``[num_boxes, crop_height, crop_width, depth]``) goes back to the pixels of image
``box_ind`` it was read from, split over the four bilinear corners by their weights
(``method="bilinear"``) or all to the nearest pixel (``"nearest"``); samples outside the
image (extrapolated by CropAndResize) give nothing. ``image_size`` is the image's shape
``[batch, height, width, depth]``; the result has dtype ``T``, each share rounded to ``T``
and added in TensorFlow's order. Errors as CropAndResize's, with TensorFlow's messages
("image_size and grads are incompatible", "boxes and grads have incompatible shape";
OutOfRangeError for a ``box_ind`` outside the batch).

Example: the box ``[0, 0, 1, 1]`` of a 2x2 image cropped to 3x3, with ``grads`` of ones:
``[[2.25, 2.25], [2.25, 2.25]]``.
""",
)


@register_kernel("CropAndResizeGradImage", "CPU", "GPU")
def _crop_and_resize_grad_image_kernel(
    ctx: KernelContext, grads: Any, boxes: Any, box_ind: Any, image_size: Any
) -> Any:
    xp = ctx.xp
    _grads_checks(ctx, grads)
    num_boxes = _box_count(ctx, grads, boxes, box_ind)
    size = host_array(ctx, image_size)
    if size.ndim != 1:
        ctx.fail(f"image_size must be 1-D{shape_str(size.shape)}")
    if size.shape[0] != 4:
        ctx.fail(f"image_size must have 4 elements{shape_str(size.shape)}")
    batch, height, width, depth = (int(v) for v in size.tolist())
    if height <= 0 or width <= 0:
        ctx.fail("image dimensions must be positive")
    if grads.shape[3] != depth:
        ctx.fail("image_size and grads are incompatible")
    if batch < 0 or depth < 0:
        ctx.fail(f"Dimension {min(batch, depth)} must be >= 0")
    dtype = np.dtype(ctx.attrs["T"].np)
    ctx.check_size((batch, height, width, depth), dtype)
    out = xp.zeros((batch * height * width, depth), dtype)
    if num_boxes == 0 or depth == 0:
        return out.reshape(batch, height, width, depth)
    _check_indices(ctx, box_ind, batch)
    crop = (grads.shape[1], grads.shape[2])
    in_y, in_x, inside = _samples(xp, boxes, crop, (height, width), ratio=False)
    base = box_ind.astype(np.int64)[:, None, None] * height

    def pixel(y: Any, x: Any) -> Any:  # [B, H, W] flat pixel indices
        return (base + y.astype(np.int64)[:, :, None]) * width + x.astype(np.int64)[:, None, :]

    if ctx.attrs["method"] == "nearest":  # roundf: halves away from zero (here >= 0)
        near_y = xp.floor(in_y) + (in_y - xp.floor(in_y) >= np.float32(0.5))
        near_x = xp.floor(in_x) + (in_x - xp.floor(in_x) >= np.float32(0.5))
        flat, shares = pixel(near_y, near_x)[..., None], grads[..., None, :]
    else:
        top, left, bottom, right = xp.floor(in_y), xp.floor(in_x), xp.ceil(in_y), xp.ceil(in_x)
        y_lerp = (in_y - top)[:, :, None, None]
        x_lerp = (in_x - left)[:, None, :, None]
        one = np.float32(1)
        d_top, d_bottom = (one - y_lerp) * grads, y_lerp * grads
        corners = [(top, left), (top, right), (bottom, left), (bottom, right)]
        flat = xp.stack([pixel(y, x) for y, x in corners], axis=-1)  # [B, H, W, 4]
        parts = [(one - x_lerp) * d_top, x_lerp * d_top, (one - x_lerp) * d_bottom,
                 x_lerp * d_bottom]  # fmt: skip
        shares = xp.stack(parts, axis=3)  # [B, H, W, 4, D], float32 as TensorFlow's
    keep = xp.broadcast_to(inside[..., None], flat.shape).reshape(-1)
    flat = flat.reshape(-1)[keep]
    shares = shares.astype(dtype).reshape(-1, depth)[keep]
    _ADD(ctx, out, flat, shares)
    return out.reshape(batch, height, width, depth)


# -- CropAndResizeGradBoxes ---------------------------------------------------------------


def _crop_and_resize_grad_boxes_shape(
    c: InferenceContext, grads: TensorSpec, image: TensorSpec, boxes: TensorSpec,
    box_ind: TensorSpec,
) -> TensorShape:  # fmt: skip
    """TensorFlow's: the boxes' shape."""
    return boxes.shape


CROP_AND_RESIZE_GRAD_BOXES = define_op(
    "CropAndResizeGradBoxes",
    inputs=["grads: float32", "image: T", "boxes: float32", "box_ind: int32"],
    outputs=["output: float32"],
    attrs=[
        "T: {uint8, uint16, int8, int16, int32, int64, float16, float32, float64}",
        "method: {'bilinear'} = 'bilinear'",
    ],
    shape_fn=_crop_and_resize_grad_boxes_shape,
    doc="""
The gradient of CropAndResize with respect to its boxes (``[num_boxes, 4]``, float32): for
each sample inside the image, ``grads`` times the bilinear blend's slope along y and x
(from the image's four corner pixels) times the sample position's derivative with respect
to each box edge (``height - 1 - y * ratio`` for y1, ``y * ratio`` for y2, with ``ratio =
(height - 1) / (crop_height - 1)``; half of ``height - 1`` each for a crop height of 1),
summed over the box's samples and channels, as TensorFlow's CPU kernel. Bilinear only
(TensorFlow's gradient uses it for ``nearest`` crops too). Errors with TensorFlow's
messages ("image, grads depth differ", "boxes and grads have incompatible shape";
OutOfRangeError for a ``box_ind`` outside the batch).

Example: the box ``[0, 0, 1, 1]`` of the 2x2 image ``[[0, 1], [2, 3]]`` cropped to 1x1 with
``grads`` ``[[[[1]]]]``: ``[[1, 0.5, 1, 0.5]]``.
""",
)


@register_kernel("CropAndResizeGradBoxes", "CPU", "GPU")
def _crop_and_resize_grad_boxes_kernel(
    ctx: KernelContext, grads: Any, image: Any, boxes: Any, box_ind: Any
) -> Any:
    xp = ctx.xp
    _grads_checks(ctx, grads)
    if image.ndim != 4:
        ctx.fail(f"input image must be 4-D{shape_str(image.shape)}")
    batch, height, width, depth = image.shape
    if height <= 0 or width <= 0:
        ctx.fail("image dimensions must be positive")
    if depth != grads.shape[3]:
        ctx.fail("image, grads depth differ")
    num_boxes = _box_count(ctx, grads, boxes, box_ind)
    out = xp.zeros(boxes.shape, np.float32)
    if num_boxes == 0 or depth == 0:
        return out
    _check_indices(ctx, box_ind, batch)
    crop_h, crop_w = grads.shape[1], grads.shape[2]
    in_y, in_x, inside = _samples(xp, boxes, (crop_h, crop_w), (height, width), ratio=True)
    top, left, bottom, right = xp.floor(in_y), xp.floor(in_x), xp.ceil(in_y), xp.ceil(in_x)
    y_lerp = (in_y - top)[:, :, None, None]
    x_lerp = (in_x - left)[:, None, :, None]
    rows = image.reshape(batch * height * width, depth)
    base = box_ind.astype(np.int64)[:, None, None] * height

    def gather(y: Any, x: Any) -> Any:
        flat = (base + y.astype(np.int64)[:, :, None]) * width + x.astype(np.int64)[:, None, :]
        return xp.take(rows, flat, axis=0).astype(np.float32, copy=False)

    top_left, top_right = gather(top, left), gather(top, right)
    bottom_left, bottom_right = gather(bottom, left), gather(bottom, right)
    one = np.float32(1)
    slope_y = (one - x_lerp) * (bottom_left - top_left) + x_lerp * (bottom_right - top_right)
    slope_x = (one - y_lerp) * (top_right - top_left) + y_lerp * (bottom_right - bottom_left)
    weight = xp.where(inside[..., None], grads, np.float32(0))
    dy = (slope_y * weight).sum(axis=(2, 3), dtype=np.float64)  # [B, H]: by sample row
    dx = (slope_x * weight).sum(axis=(1, 3), dtype=np.float64)  # [B, W]: by sample column
    out[:, 0], out[:, 2] = _edge_grads(xp, dy, crop_h, height)
    out[:, 1], out[:, 3] = _edge_grads(xp, dx, crop_w, width)
    return out


def _edge_grads(xp: Any, d: Any, size: int, in_size: int) -> tuple[Any, Any]:
    """The two edges' gradients along one axis from each sample line's summed slope ``d``
    ([B, size]): the sample position's derivative with respect to each edge."""
    if size == 1:
        half = d[:, 0] * (0.5 * (in_size - 1))
        return half, half
    ratio = np.float32(in_size - 1) / np.float32(size - 1)
    at = xp.arange(size, dtype=np.float32) * ratio  # y * height_ratio, in float32
    return (d * (np.float32(in_size - 1) - at)).sum(axis=1), (d * at).sum(axis=1)


CropAndResizeGradImage = make_wrapper_class(CROP_AND_RESIZE_GRAD_IMAGE)
CropAndResizeGradBoxes = make_wrapper_class(CROP_AND_RESIZE_GRAD_BOXES)

__all__ = ["CropAndResizeGradImage", "CropAndResizeGradBoxes"]
