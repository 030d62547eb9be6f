"""CropAndResize's gradient ops run by TensorFlow 2.21 (see make_op_fixtures.py): family
"detection_grad_ops": CropAndResizeGradImage (bilinear and nearest, float16/32/64, boxes
flipped and reaching outside the image, crops of one row or column, repeated boxes) and
CropAndResizeGradBoxes (every image dtype), and their errors. Left out: non-finite boxes
(TensorFlow's CPU kernels index with their NaN coordinates; minigraph skips such samples,
as CropAndResize extrapolates them).
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(2728)
f16, f32, f64, i32 = np.float16, np.float32, np.float64, np.int32

BOXES = np.array(
    [[0.1, 0.2, 0.9, 0.7], [0.8, 0.9, 0.05, 0.1], [-0.3, 0.4, 1.2, 1.1], [0.0, 0.0, 1.0, 1.0]],
    f32,
)
IND = np.array([1, 0, 1, 0], i32)


def grads(n, h, w, d):
    return rng.standard_normal((n, h, w, d)).astype(f32)


def image(shape, dtype=f32):
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 100, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def grad_image(name, g, boxes=BOXES, ind=IND, size=(2, 5, 6, 3), T=f32, **kw):
    return case("CropAndResizeGradImage", name=f"GradImage {name}", grads=g, boxes=boxes,
                box_ind=ind, image_size=np.array(size, i32), T=T, **kw)  # fmt: skip


def grad_boxes(name, g, im, boxes=BOXES, ind=IND, **kw):
    return case("CropAndResizeGradBoxes", name=f"GradBoxes {name}", grads=g, image=im,
                boxes=boxes, box_ind=ind, **kw)  # fmt: skip


CASES = [
    grad_image("bilinear", grads(4, 3, 4, 3)),
    grad_image("nearest", grads(4, 3, 4, 3), method="nearest"),
    grad_image("float64", grads(4, 4, 3, 3), T=f64),
    grad_image("float16", grads(4, 2, 3, 3), T=f16, rtol=1e-2, atol=1e-2),
    grad_image("one row and column", grads(4, 1, 1, 3)),
    grad_image("one column nearest", grads(4, 3, 1, 3), method="nearest"),
    grad_image(
        "repeated boxes", grads(3, 3, 3, 2), BOXES[[0, 0, 0]], np.zeros(3, i32), (1, 4, 4, 2)
    ),
    grad_image("no boxes", grads(0, 2, 2, 3), np.zeros((0, 4), f32), np.zeros(0, i32)),
    grad_image("1-pixel image", grads(4, 2, 2, 3), size=(2, 1, 1, 3)),
    grad_image("depth mismatch", grads(4, 3, 4, 2)),
    grad_image("grads and boxes", grads(3, 3, 4, 3)),
    grad_image("index out of range", grads(4, 3, 4, 3), ind=np.array([0, 2, 1, 0], i32)),
    grad_image("image_size of 3", grads(4, 3, 4, 3), size=(2, 5, 6)),
    grad_image("empty image", grads(4, 3, 4, 3), size=(2, 0, 6, 3)),
    grad_image("rank-3 grads", grads(4, 3, 4, 3)[0]),
    grad_image("boxes of 3 columns", grads(4, 3, 4, 3), boxes=BOXES[:, :3]),
    grad_image("box_ind mismatch", grads(4, 3, 4, 3), ind=IND[:3]),
    grad_boxes("float32", grads(4, 3, 4, 3), image([2, 5, 6, 3])),
    grad_boxes("float64 one row", grads(4, 1, 5, 2), image([2, 4, 6, 2], f64)),
    grad_boxes("one column", grads(4, 4, 1, 2), image([2, 4, 6, 2])),
    grad_boxes("uint8", grads(4, 3, 3, 2), image([2, 5, 5, 2], np.uint8), rtol=1e-4),
    grad_boxes("int32", grads(4, 2, 3, 1), image([2, 3, 4, 1], i32), rtol=1e-4),
    grad_boxes("float16", grads(4, 3, 3, 2), image([2, 5, 5, 2], f16), rtol=1e-3, atol=1e-3),
    grad_boxes(
        "no boxes", grads(0, 2, 2, 3), image([2, 5, 6, 3]), np.zeros((0, 4), f32), np.zeros(0, i32)
    ),
    grad_boxes("depth mismatch", grads(4, 3, 4, 2), image([2, 5, 6, 3])),
    grad_boxes("grads and boxes", grads(3, 3, 4, 3), image([2, 5, 6, 3])),
    grad_boxes(
        "index out of range",
        grads(4, 3, 4, 3),
        image([2, 5, 6, 3]),
        ind=np.array([0, 0, -1, 0], i32),
    ),
    grad_boxes("rank-3 image", grads(4, 3, 4, 3), image([5, 6, 3])),
]
