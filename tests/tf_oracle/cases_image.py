"""Image and layout ops run by TensorFlow 2.21 (see make_op_fixtures.py): family "image":
SpaceToDepth, DepthToSpace, grouped Conv2D, ResizeBilinear, ResizeNearestNeighbor,
ResizeBicubic.

Left out: NCHW SpaceToDepth/DepthToSpace (TensorFlow's CPU has no kernel for it, its GPU
runs it; minigraph does the same, tested in test_image_ops.py, while these cases also run
on the simulated GPU).
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(2026)

f16, f32, f64 = np.float16, np.float32, np.float64
i8, i32, i64, u8 = np.int8, np.int32, np.int64, np.uint8


def normal(shape, dtype=f32):
    return rng.standard_normal(shape).astype(dtype)


IMAGE = normal((2, 4, 6, 3))

CASES = [
    # SpaceToDepth, DepthToSpace
    case("SpaceToDepth", input=IMAGE, block_size=2),
    case("SpaceToDepth", name="S2D-b3-int32", input=np.arange(72, dtype=i32).reshape(1, 6, 3, 4),
         block_size=3),
    case("SpaceToDepth", name="S2D-bool", input=rng.random((1, 2, 4, 1)) > 0.5, block_size=2),
    case("SpaceToDepth", name="S2D-not-divisible", input=normal((1, 4, 5, 1)), block_size=2),
    case("SpaceToDepth", name="S2D-rank3", input=normal((4, 4, 1)), block_size=2),
    case("SpaceToDepth", name="S2D-block1", input=normal((1, 4, 4, 1)), block_size=1),
    case("SpaceToDepth", name="S2D-empty-batch", input=normal((0, 4, 4, 2)), block_size=2),
    case("DepthToSpace", input=normal((2, 2, 3, 12)), block_size=2),
    case("DepthToSpace", name="D2S-b3-u8", input=np.arange(54, dtype=u8).reshape(1, 1, 2, 27),
         block_size=3),
    case("DepthToSpace", name="D2S-complex", input=(normal((1, 2, 2, 4)) + 1j).astype(np.complex64),
         block_size=2),
    case("DepthToSpace", name="D2S-not-divisible", input=normal((1, 2, 2, 6)), block_size=2),
    case("DepthToSpace", name="D2S-inverse", input=np.arange(48, dtype=f64).reshape(1, 2, 2, 12),
         block_size=2),
    # grouped Conv2D: the filter's in-depth divides the input's
    case("Conv2D", name="Conv2D-groups3", input=normal((2, 5, 6, 6)), filter=normal((3, 3, 2, 9)),
         strides=[1, 1, 1, 1], padding="SAME"),
    case("Conv2D", name="Conv2D-depthwise-as-grouped", input=normal((1, 7, 7, 4)),
         filter=normal((7, 7, 1, 4)), strides=[1, 1, 1, 1], padding="SAME"),
    case("Conv2D", name="Conv2D-depthwise-mult2", input=normal((1, 6, 5, 3)),
         filter=normal((3, 3, 1, 6)), strides=[1, 2, 2, 1], padding="VALID"),
    case("Conv2D", name="Conv2D-groups2-f64-dilated", input=normal((1, 8, 8, 4), f64),
         filter=normal((3, 3, 2, 4), f64), strides=[1, 1, 1, 1], padding="SAME",
         dilations=[1, 2, 2, 1]),
    case("Conv2D", name="Conv2D-groups-explicit", input=normal((1, 4, 4, 4)),
         filter=normal((2, 2, 2, 2)), strides=[1, 1, 1, 1], padding="EXPLICIT",
         explicit_paddings=[0, 0, 1, 0, 0, 1, 0, 0]),
    case("Conv2D", name="Conv2D-groups-not-divisible", input=normal((1, 4, 4, 5)),
         filter=normal((2, 2, 2, 4)), strides=[1, 1, 1, 1], padding="VALID"),
    case("Conv2D", name="Conv2D-groups-bad-out", input=normal((1, 4, 4, 4)),
         filter=normal((2, 2, 2, 3)), strides=[1, 1, 1, 1], padding="VALID"),
    # ResizeBilinear, ResizeNearestNeighbor: each corner mode, up and down, odd ratios
    *[
        case(op, name=f"{op}-{label}-{h}x{w}", images=img, size=np.array([h, w], i32),
             align_corners=ac, half_pixel_centers=hp)
        for op in ["ResizeBilinear", "ResizeNearestNeighbor"]
        for label, ac, hp in [("legacy", False, False), ("corners", True, False),
                              ("half", False, True)]
        for img in [normal((2, 5, 7, 3))]
        for h, w in [(9, 4), (3, 11), (5, 7), (1, 1), (10, 14)]
    ],
    case("ResizeBilinear", name="RB-uint8", images=rng.integers(0, 255, (1, 3, 4, 2)).astype(u8),
         size=np.array([5, 6], i32), half_pixel_centers=True),
    case("ResizeBilinear", name="RB-f64", images=normal((1, 4, 4, 1), f64),
         size=np.array([7, 3], i32)),
    case("ResizeBilinear", name="RB-f16", images=normal((1, 3, 3, 2), f16),
         size=np.array([4, 5], i32), align_corners=True),
    case("ResizeBilinear", name="RB-int64-same-size",
         images=np.arange(8, dtype=i64).reshape(1, 2, 2, 2), size=np.array([2, 2], i32)),
    case("ResizeBilinear", name="RB-1channel-big", images=normal((1, 16, 16, 1)),
         size=np.array([37, 23], i32), half_pixel_centers=True),
    case("ResizeBilinear", name="RB-both-modes", images=normal((1, 2, 2, 1)),
         size=np.array([3, 3], i32), align_corners=True, half_pixel_centers=True),
    case("ResizeBilinear", name="RB-zero-size", images=normal((1, 2, 2, 1)),
         size=np.array([0, 3], i32)),
    case("ResizeBilinear", name="RB-negative-size", images=normal((1, 2, 2, 1)),
         size=np.array([3, -1], i32)),
    case("ResizeBilinear", name="RB-empty-image", images=normal((1, 0, 2, 1)),
         size=np.array([3, 3], i32)),
    case("ResizeBilinear", name="RB-empty-batch", images=normal((0, 2, 2, 1)),
         size=np.array([3, 3], i32)),
    case("ResizeBilinear", name="RB-rank3", images=normal((2, 2, 1)), size=np.array([3, 3], i32)),
    case("ResizeBilinear", name="RB-size3", images=normal((1, 2, 2, 1)),
         size=np.array([3, 3, 3], i32)),
    case("ResizeNearestNeighbor", name="RNN-int8",
         images=rng.integers(-9, 9, (1, 3, 5, 2)).astype(i8), size=np.array([7, 2], i32),
         align_corners=True),
    case("ResizeNearestNeighbor", name="RNN-f16-half", images=normal((2, 4, 3, 1), f16),
         size=np.array([6, 6], i32), half_pixel_centers=True),
    case("ResizeNearestNeighbor", name="RNN-both-modes", images=normal((1, 2, 2, 1)),
         size=np.array([3, 3], i32), align_corners=True, half_pixel_centers=True),
    case("ResizeNearestNeighbor", name="RNN-zero-size", images=normal((1, 2, 2, 1)),
         size=np.array([3, 0], i32)),
    case("ResizeNearestNeighbor", name="RNN-no-channels", images=normal((1, 2, 2, 0)),
         size=np.array([3, 3], i32)),
    # ResizeBicubic: each corner mode, up and down (fewer than 4 rows or columns, 1 pixel)
    *[
        case("ResizeBicubic", name=f"RBC-{label}-{h}x{w}", images=img, size=np.array([h, w], i32),
             align_corners=ac, half_pixel_centers=hp)
        for label, ac, hp in [("legacy", False, False), ("corners", True, False),
                              ("half", False, True)]
        for img in [normal((1, 5, 7, 3))]
        for h, w in [(9, 4), (3, 11), (5, 7), (1, 1), (10, 14), (2, 23)]
    ],
    case("ResizeBicubic", name="RBC-small-image-half", images=normal((1, 2, 1, 2)),
         size=np.array([5, 3], i32), half_pixel_centers=True),
    case("ResizeBicubic", name="RBC-1pixel-up", images=normal((1, 1, 1, 4)),
         size=np.array([3, 2], i32)),
    case("ResizeBicubic", name="RBC-uint8", images=rng.integers(0, 255, (1, 6, 5, 2)).astype(u8),
         size=np.array([11, 13], i32), half_pixel_centers=True),
    case("ResizeBicubic", name="RBC-int64", images=rng.integers(-2**40, 2**40, (1, 4, 4, 1)),
         size=np.array([7, 3], i32)),
    case("ResizeBicubic", name="RBC-f64", images=normal((1, 4, 6, 1), f64),
         size=np.array([7, 3], i32), align_corners=True),
    case("ResizeBicubic", name="RBC-f16", images=normal((1, 3, 3, 2), f16),
         size=np.array([4, 5], i32), half_pixel_centers=True),
    case("ResizeBicubic", name="RBC-same-size", images=normal((1, 4, 5, 1)),
         size=np.array([4, 5], i32)),
    case("ResizeBicubic", name="RBC-5channels-big", images=normal((1, 12, 12, 5)),
         size=np.array([25, 17], i32), half_pixel_centers=True),
    case("ResizeBicubic", name="RBC-down-a-lot", images=normal((1, 30, 23, 1)),
         size=np.array([3, 4], i32)),
    case("ResizeBicubic", name="RBC-inf-nan",
         images=np.array([1, np.inf, 2, np.nan, 3, 4], f32).reshape(1, 2, 3, 1),
         size=np.array([3, 5], i32), half_pixel_centers=True),
    case("ResizeBicubic", name="RBC-both-modes", images=normal((1, 2, 2, 1)),
         size=np.array([3, 3], i32), align_corners=True, half_pixel_centers=True),
    case("ResizeBicubic", name="RBC-zero-size", images=normal((1, 2, 2, 1)),
         size=np.array([0, 3], i32)),
    case("ResizeBicubic", name="RBC-empty-image", images=normal((1, 2, 0, 1)),
         size=np.array([3, 3], i32)),
    case("ResizeBicubic", name="RBC-empty-batch", images=normal((0, 2, 2, 1)),
         size=np.array([3, 3], i32)),
    case("ResizeBicubic", name="RBC-rank3", images=normal((2, 2, 1)), size=np.array([3, 3], i32)),
    case("ResizeBicubic", name="RBC-size1", images=normal((1, 2, 2, 1)), size=np.array([3], i32)),
]  # fmt: skip
