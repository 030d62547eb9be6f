"""The resize gradient ops run by TensorFlow 2.21 (see make_op_fixtures.py): family
"image_grad_ops": ResizeBilinearGrad, ResizeNearestNeighborGrad and ResizeBicubicGrad,
up and down, every coordinate mode, their dtypes, with NaN and inf among the gradients,
and their errors."""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(2730)
f16, f32, f64, i32, u8 = np.float16, np.float32, np.float64, np.int32, np.uint8
MODES = {
    "legacy": {},
    "align_corners": {"align_corners": True},
    "half_pixel": {"half_pixel_centers": True},
}


def grads(shape, dtype=f32):
    return rng.standard_normal(shape).astype(dtype)


def image_grad(op, resized, original, dtype=f32, mode="legacy", g=None):
    return case(op, name=f"{op} {resized[1:3]} from {original[1:3]} {mode} {np.dtype(dtype).name}",
                grads=grads(resized) if g is None else g,
                original_image=np.zeros(original, dtype), **MODES[mode])  # fmt: skip


def nearest_grad(resized, size, dtype=f32, mode="legacy", **kw):
    g = grads(resized) * 10 if dtype in (f16, f32, f64) else rng.integers(0, 9, resized)
    return case("ResizeNearestNeighborGrad",
                name=f"ResizeNearestNeighborGrad {resized[1:3]} to {size} {mode} "
                     f"{np.dtype(dtype).name}",
                grads=g.astype(dtype), size=np.array(size, i32), **MODES[mode], **kw)  # fmt: skip


SPECIAL = grads([1, 3, 4, 2])
SPECIAL[0, 0, 1, 0], SPECIAL[0, 2, 3, 1], SPECIAL[0, 1, 1, 1] = np.nan, np.inf, -np.inf

CASES = [
    *(image_grad("ResizeBilinearGrad", [2, 5, 7, 2], [2, 3, 4, 2], f32, m) for m in MODES),
    *(image_grad("ResizeBilinearGrad", [1, 2, 3, 3], [1, 6, 5, 3], f64, m) for m in MODES),
    image_grad("ResizeBilinearGrad", [1, 8, 3, 1], [1, 3, 3, 1], f16, "half_pixel"),
    image_grad("ResizeBilinearGrad", [1, 1, 1, 2], [1, 4, 5, 2], f32, "align_corners"),
    image_grad("ResizeBilinearGrad", [1, 3, 4, 2], [1, 2, 2, 2], f32, g=SPECIAL),
    image_grad("ResizeBilinearGrad", [0, 3, 4, 2], [1, 2, 2, 2]),
    *(image_grad("ResizeBicubicGrad", [1, 7, 3, 2], [1, 4, 5, 2], f32, m) for m in MODES),
    *(image_grad("ResizeBicubicGrad", [2, 3, 8, 1], [2, 6, 3, 1], f64, m) for m in MODES),
    *(nearest_grad([2, 7, 5, 2], [3, 4], f32, m) for m in MODES),
    *(nearest_grad([1, 3, 4, 1], [7, 6], f64, m) for m in MODES),
    nearest_grad([1, 5, 4, 2], [2, 3], f16, "half_pixel"),
    nearest_grad([1, 5, 4, 2], [2, 3], i32, "align_corners"),
    nearest_grad([1, 6, 2, 1], [4, 2], u8),
    nearest_grad([0, 2, 2, 1], [3, 3]),
    # errors
    case(
        "ResizeBilinearGrad",
        name="ResizeBilinearGrad grads rank 3",
        grads=grads([3, 4, 2]),
        original_image=np.zeros([1, 2, 2, 2], f32),
    ),  # fmt: skip
    case(
        "ResizeBilinearGrad",
        name="ResizeBilinearGrad image rank 3",
        grads=grads([1, 3, 4, 2]),
        original_image=np.zeros([2, 2, 2], f32),
    ),  # fmt: skip
    case(
        "ResizeBilinearGrad",
        name="ResizeBilinearGrad both modes",
        grads=grads([1, 3, 4, 2]),
        original_image=np.zeros([1, 2, 2, 2], f32),
        align_corners=True,
        half_pixel_centers=True,
    ),  # fmt: skip
    case(
        "ResizeBilinearGrad",
        name="ResizeBilinearGrad empty resized",
        grads=grads([1, 0, 4, 2]),
        original_image=np.zeros([1, 2, 2, 2], f32),
    ),  # fmt: skip
    case(
        "ResizeBilinearGrad",
        name="ResizeBilinearGrad empty original",
        grads=grads([1, 3, 4, 2]),
        original_image=np.zeros([1, 2, 0, 2], f32),
    ),  # fmt: skip
    case(
        "ResizeBicubicGrad",
        name="ResizeBicubicGrad grads rank 3",
        grads=grads([3, 4, 2]),
        original_image=np.zeros([1, 2, 2, 2], f32),
    ),  # fmt: skip
    nearest_grad([1, 2, 2, 1], [0, 3]),
    nearest_grad([1, 2, 2, 1], [3, 3, 3]),
    case(
        "ResizeNearestNeighborGrad",
        name="ResizeNearestNeighborGrad size rank 2",
        grads=grads([1, 2, 2, 1]),
        size=np.array([[3, 3]], i32),
    ),  # fmt: skip
    case(
        "ResizeNearestNeighborGrad",
        name="ResizeNearestNeighborGrad grads rank 3",
        grads=grads([2, 2, 1]),
        size=np.array([3, 3], i32),
    ),  # fmt: skip
    nearest_grad([1, 2, 2, 1], [3, 3], align_corners=True, half_pixel_centers=True),
]
