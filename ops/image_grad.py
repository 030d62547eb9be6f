"""Gradients of the image ops (image_ops, detection_ops), one block per op, with
TensorFlow's formulas (tensorflow/python/ops/image_grad.py and image_ops_impl.py's
NotDifferentiable list): each resize sends its gradient back through its gradient op
(image_grad_ops.py); the size inputs get none. CropAndResize's goes through
CropAndResizeGradImage and CropAndResizeGradBoxes (crop_resize_grad_ops.py).

Integer images get no gradient (the gradient ops take floats; TensorFlow's ResizeBicubic
gradient checks this too). NonMaxSuppressionV3/V4 have no gradient by design (their
outputs are indices); NonMaxSuppressionV5, whose selected_scores is a float, has none
registered, as in TensorFlow, so differentiating through it is an error
(NoGradientError, TensorFlow's LookupError).
"""

from __future__ import annotations

from typing import Any

from minigraph.graph import Operation, Output
from minigraph.ops import (  # noqa: F401  (the ops named here)
    crop_resize_grad_ops,
    detection_ops,
    image_grad_ops,
)
from minigraph.ops.grad_util import shape_of, static_dims
from minigraph.ops.shape_ops import shape
from minigraph.ops.strided_slice_ops import strided_slice
from minigraph.registry import not_differentiable, register_gradient
from minigraph.wrappers import apply_op

__all__: list[str] = []


def _resize_attrs(op: Operation) -> dict[str, Any]:
    return {k: op.node.attrs[k] for k in ("align_corners", "half_pixel_centers")}


def _float_image(op: Operation, *types: str) -> bool:
    return op.inputs[0].dtype.name in types


@register_gradient("ResizeBilinear")
def _resize_bilinear_grad(op: Operation, grad: Output) -> list[Any]:
    if not _float_image(op, "float16", "float32", "float64"):
        return [None, None]
    inputs = [grad, op.inputs[0]]
    return [apply_op("ResizeBilinearGrad", None, inputs, _resize_attrs(op)).outputs[0], None]


@register_gradient("ResizeBicubic")
def _resize_bicubic_grad(op: Operation, grad: Output) -> list[Any]:
    if not _float_image(op, "float32", "float64"):
        return [None, None]
    inputs = [grad, op.inputs[0]]
    return [apply_op("ResizeBicubicGrad", None, inputs, _resize_attrs(op)).outputs[0], None]


@register_gradient("ResizeNearestNeighbor")
def _resize_nearest_neighbor_grad(op: Operation, grad: Output) -> list[Any]:
    """The image's height and width as a constant when known, else sliced from its Shape."""
    image = op.inputs[0]
    if not _float_image(op, "float16", "float32", "float64"):
        return [None, None]
    dims = static_dims(image)
    if dims is not None:
        size: Any = dims[1:3]
    else:
        size = strided_slice(shape(image), [1], [3], [1])
    inputs = [grad, size]
    grads = apply_op("ResizeNearestNeighborGrad", None, inputs, _resize_attrs(op)).outputs[0]
    return [grads, None]


@register_gradient("CropAndResize")
def _crop_and_resize_grad(op: Operation, grad: Output) -> list[Any]:
    """CropAndResizeGradImage for a float image (its shape a constant when known, else a
    Shape node) and CropAndResizeGradBoxes (bilinear, also for ``nearest`` crops) for the
    boxes; box_ind and crop_size get none."""
    image, boxes, box_ind, _ = op.inputs
    dx = None
    if _float_image(op, "float16", "float32", "float64"):
        attrs = {"T": image.dtype, "method": op.node.attrs["method"]}
        inputs = [grad, boxes, box_ind, shape_of(image)]
        dx = apply_op("CropAndResizeGradImage", None, inputs, attrs).outputs[0]
    inputs = [grad, image, boxes, box_ind]
    d_boxes = apply_op("CropAndResizeGradBoxes", None, inputs, {}).outputs[0]
    return [dx, d_boxes, None, None]


not_differentiable("ResizeBilinearGrad", "NonMaxSuppressionV3", "NonMaxSuppressionV4")
