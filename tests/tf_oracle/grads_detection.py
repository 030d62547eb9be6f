"""Gradients of CropAndResize (ops/image_grad.py), computed by TensorFlow 2.21: family
"detection" of make_grad_fixtures.py: bilinear and nearest crops of float16/32/64 images
(the image through CropAndResizeGradImage, the boxes through CropAndResizeGradBoxes,
bilinear for both methods as TensorFlow), an integer image (no image gradient), crops of
one pixel, boxes flipped or reaching outside the image. box_ind and crop_size get none."""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(2729)
f16, f32, f64, i32 = np.float16, np.float32, np.float64, np.int32

BOXES = np.array(
    [[0.1, 0.2, 0.9, 0.7], [0.8, 0.9, 0.05, 0.1], [-0.3, 0.4, 1.2, 1.1]],
    f32,
)
IND = np.array([1, 0, 1], i32)


def crop(name, shape, dtype=f32, size=(3, 4), boxes=BOXES, ind=IND, **kw):
    if np.dtype(dtype).kind in "iu":
        image = rng.integers(0, 50, shape).astype(dtype)
    else:
        image = rng.standard_normal(shape).astype(dtype)
    return case(
        "CropAndResize",
        name=f"CropAndResize {name}",
        image=image,
        boxes=boxes,
        box_ind=ind,
        crop_size=np.array(size, i32),
        **kw,
    )


CASES = [
    crop("bilinear", [2, 5, 6, 3]),
    crop("nearest", [2, 5, 6, 2], method="nearest"),
    crop("float64", [2, 4, 5, 2], f64, size=(4, 3), extrapolation_value=0.5),
    crop("float16", [2, 4, 4, 2], f16, size=(2, 2), rtol=1e-2, atol=1e-2),
    crop("uint8 image", [2, 5, 5, 2], np.uint8, rtol=1e-4),
    crop("one pixel", [2, 5, 6, 2], size=(1, 1)),
    crop("one row", [2, 5, 6, 1], size=(1, 5), wrt=["boxes"]),
]
