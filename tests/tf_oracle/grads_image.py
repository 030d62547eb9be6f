"""Gradients of the resize ops (ops/image_grad.py), computed by TensorFlow 2.21: family
"image" of make_grad_fixtures.py: up and down, every coordinate mode (legacy,
align_corners, half_pixel_centers), float16/32/64 images; the size gets none."""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(2729)
f16, f32, f64 = np.float16, np.float32, np.float64
MODES = {
    "legacy": {},
    "align_corners": {"align_corners": True},
    "half_pixel": {"half_pixel_centers": True},
}


def resize(op, shape, size, dtype=f32, mode="legacy"):
    return case(op, name=f"{op} {shape[1:3]} to {size} {mode} {np.dtype(dtype).name}",
                images=rng.standard_normal(shape).astype(dtype), size=np.array(size, np.int32),
                **MODES[mode])  # fmt: skip


CASES = [
    *(resize("ResizeBilinear", [2, 3, 4, 2], [5, 7], f32, m) for m in MODES),
    *(resize("ResizeBilinear", [1, 6, 5, 3], [4, 2], f64, m) for m in MODES),
    resize("ResizeBilinear", [1, 4, 4, 1], [4, 4], f32),
    resize("ResizeBilinear", [1, 1, 3, 2], [3, 8], f16, "half_pixel"),
    *(resize("ResizeNearestNeighbor", [2, 3, 4, 2], [7, 5], f32, m) for m in MODES),
    *(resize("ResizeNearestNeighbor", [1, 7, 6, 1], [3, 4], f64, m) for m in MODES),
    resize("ResizeNearestNeighbor", [1, 2, 3, 2], [5, 4], f16, "half_pixel"),
    *(resize("ResizeBicubic", [1, 4, 5, 2], [7, 3], f32, m) for m in MODES),
    *(resize("ResizeBicubic", [2, 6, 3, 1], [3, 8], f64, m) for m in MODES),
]
