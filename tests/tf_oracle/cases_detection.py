"""Detection ops run by TensorFlow 2.21 (see make_op_fixtures.py): family "detection":
NonMaxSuppressionV3/V4/V5 and CropAndResize.

The NMS cases start from TensorFlow's own kernel tests (non_max_suppression_op_test.cc: the
three clusters of unit boxes, flipped corners, duplicates, soft NMS) and add ties, thresholds
at their edges, float16, NaN and infinite boxes, negative scores under soft NMS and padding.
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(2027)

f16, f32, f64 = np.float16, np.float32, np.float64
i8, i32, i64, u8, u16 = np.int8, np.int32, np.int64, np.uint8, np.uint16

# TensorFlow's three clusters of unit boxes, and the same with flipped corners.
CLUSTERS = np.array(
    [
        [0, 0, 1, 1],
        [0, 0.1, 1, 1.1],
        [0, -0.1, 1, 0.9],
        [0, 10, 1, 11],
        [0, 10.1, 1, 11.1],
        [0, 100, 1, 101],
    ],
    f32,
)
FLIPPED = np.array(
    [
        [1, 1, 0, 0],
        [0, 0.1, 1, 1.1],
        [0, 0.9, 1, -0.1],
        [0, 10, 1, 11],
        [1, 10.1, 0, 11.1],
        [1, 101, 0, 100],
    ],
    f32,
)
SCORES = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3], f32)


def random_boxes(n, dtype=f32, size=(0.05, 0.4)):
    centre = rng.uniform(0, 1, (n, 2))
    half = rng.uniform(*size, (n, 2)) / 2
    return np.concatenate([centre - half, centre + half], axis=1).astype(dtype)


def nms(
    op, boxes, scores, max_output_size, iou=0.5, score=float("-inf"), name=None, dtype=None, **extra
):
    """One NMS case; thresholds in the scores' dtype unless ``dtype`` says (V3/V4's
    T_threshold)."""
    t = dtype or scores.dtype
    args = dict(
        boxes=boxes,
        scores=scores,
        max_output_size=np.int32(max_output_size),
        iou_threshold=np.asarray(iou, t),
        score_threshold=np.asarray(score, t),
    )
    if op == "NonMaxSuppressionV5":
        args["soft_nms_sigma"] = np.asarray(extra.pop("sigma", 0.0), t)
    return case(op, name=name, **args, **extra)


V3, V4, V5 = "NonMaxSuppressionV3", "NonMaxSuppressionV4", "NonMaxSuppressionV5"
TIES = np.array([[0, 0, 1, 1]] * 3 + [[0, 5, 1, 6]] * 3, f32)
TOUCHING = np.array(
    [[0, 0, 1, 1], [0, 1, 1, 2], [0, 0.5, 1, 1.5], [2, 2, 2, 3]], f32
)  # the last is empty
RANDOM = random_boxes(60)
RANDOM_SCORES = rng.uniform(0, 1, 60).astype(f32)
NEGATIVE = rng.uniform(-1, 0.2, 60).astype(f32)

CASES = [
    # NonMaxSuppressionV3: TensorFlow's own cases
    nms(V3, CLUSTERS, SCORES, 3, name="V3-clusters"),
    nms(V3, FLIPPED, SCORES, 3, name="V3-flipped-corners"),
    nms(V3, CLUSTERS, SCORES, 2, name="V3-at-most-two"),
    nms(V3, CLUSTERS, SCORES, 30, name="V3-at-most-thirty"),
    nms(V3, CLUSTERS[:1], SCORES[:1], 3, name="V3-single-box"),
    nms(V3, np.tile(CLUSTERS[:1], (10, 1)), np.full(10, 0.9, f32), 3, name="V3-duplicates"),
    nms(V3, CLUSTERS, SCORES, 3, score=0.4, name="V3-score-threshold"),
    nms(V3, CLUSTERS, SCORES, 6, score=0.6, name="V3-score-equal-threshold"),
    nms(V3, CLUSTERS, SCORES, 0, name="V3-max-output-zero"),
    nms(V3, np.zeros((0, 4), f32), np.zeros(0, f32), 3, name="V3-empty"),
    nms(V3, CLUSTERS, SCORES, 6, score=1.0, name="V3-nothing-above-threshold"),
    # thresholds at their edges, ties, signed zeros, NaN scores
    nms(V3, TOUCHING, np.float32([0.9, 0.8, 0.7, 0.6]), 4, iou=0.0, name="V3-iou-zero"),
    nms(V3, TIES, np.full(6, 0.5, f32), 6, iou=1.0, name="V3-iou-one-identical"),
    nms(V3, TIES, np.float32([0.5, 0.7, 0.7, 0.7, 0.5, 0.7]), 6, name="V3-ties-by-index"),
    nms(V3, TIES, np.float32([0.0, -0.0, 0.0, -0.0, 0.0, 0.0]), 6, name="V3-signed-zeros"),
    nms(V3, CLUSTERS, np.float32([0.9, np.nan, 0.6, np.inf, 0.5, -np.inf]), 6,
        name="V3-nan-inf-scores"),
    nms(V3, CLUSTERS, SCORES, 6, iou=1 / 3, name="V3-iou-third"),
    nms(V3, RANDOM, RANDOM_SCORES, 40, iou=0.3, name="V3-random-60"),
    nms(V3, RANDOM, RANDOM_SCORES, 40, iou=0.3, score=0.5, name="V3-random-60-threshold"),
    nms(V3, RANDOM.astype(f16), RANDOM_SCORES.astype(f16), 40, iou=0.4, name="V3-half"),
    nms(V3, RANDOM.astype(f16), RANDOM_SCORES.astype(f16), 40, iou=0.4, score=0.3, dtype=f32,
        name="V3-half-float-thresholds"),
    nms(V3, RANDOM, RANDOM_SCORES, 40, iou=0.4, dtype=f16, name="V3-float-half-thresholds"),
    nms(V3, np.vstack([CLUSTERS, [[np.nan, 0, 1, 1], [0, 0, np.inf, 1]]]).astype(f32),
        np.float32([0.9, 0.75, 0.6, 0.95, 0.5, 0.3, 0.8, 0.7]), 8, name="V3-nan-inf-boxes"),
    nms(V3, np.vstack([CLUSTERS, [[np.nan, 0, 1, 1]]]).astype(f32),
        np.float32([0.9, 0.75, 0.6, 0.95, 0.5, 0.3, 0.97]), 8, score=-1.0,
        name="V3-nan-box-first"),
    # NonMaxSuppressionV3: errors
    nms(V3, CLUSTERS, SCORES, 3, iou=1.2, name="V3-iou-above-one"),
    nms(V3, CLUSTERS, SCORES, 3, iou=-0.1, name="V3-iou-negative"),
    nms(V3, CLUSTERS, SCORES, 3, iou=float("nan"), name="V3-iou-nan"),
    nms(V3, CLUSTERS, SCORES, -1, name="V3-max-output-negative"),
    nms(V3, CLUSTERS, SCORES[:5], 3, name="V3-scores-mismatch"),
    nms(V3, CLUSTERS[:, :3], SCORES, 3, name="V3-boxes-3-columns"),
    nms(V3, CLUSTERS[None], SCORES, 3, name="V3-boxes-rank3"),
    nms(V3, CLUSTERS, SCORES[:, None], 3, name="V3-scores-rank2"),
    case(V3, name="V3-max-output-vector", boxes=CLUSTERS, scores=SCORES,
         max_output_size=np.int32([3]), iou_threshold=f32(0.5), score_threshold=f32(0)),
    case(V3, name="V3-iou-vector", boxes=CLUSTERS, scores=SCORES,
         max_output_size=np.int32(3), iou_threshold=np.float32([0.5]), score_threshold=f32(0)),
    case(V3, name="V3-score-threshold-vector", boxes=CLUSTERS, scores=SCORES,
         max_output_size=np.int32(3), iou_threshold=f32(0.5),
         score_threshold=np.float32([0])),
    # NonMaxSuppressionV4: padding and the valid count
    nms(V4, CLUSTERS, SCORES, 3, name="V4-unpadded"),
    nms(V4, CLUSTERS, SCORES, 6, score=0.4, pad_to_max_output_size=True, name="V4-padded"),
    nms(V4, FLIPPED, SCORES, 4, pad_to_max_output_size=True, name="V4-padded-flipped"),
    nms(V4, CLUSTERS, SCORES, 0, pad_to_max_output_size=True, name="V4-padded-zero"),
    nms(V4, np.zeros((0, 4), f32), np.zeros(0, f32), 5, pad_to_max_output_size=True,
        name="V4-padded-empty"),
    nms(V4, RANDOM.astype(f16), RANDOM_SCORES.astype(f16), 20, iou=0.5, score=0.2,
        pad_to_max_output_size=True, name="V4-padded-half"),
    nms(V4, CLUSTERS, SCORES, -2, pad_to_max_output_size=True, name="V4-padded-negative"),
    nms(V4, CLUSTERS, SCORES, 3, iou=2.0, name="V4-iou-above-one"),
    # NonMaxSuppressionV5: hard NMS with scores, soft NMS
    nms(V5, CLUSTERS, SCORES, 6, iou=0.5, name="V5-hard"),
    nms(V5, CLUSTERS, SCORES, 6, iou=0.5, score=0.0, sigma=0.5, name="V5-soft-tf-test"),
    nms(V5, CLUSTERS, SCORES, 6, iou=1.0, score=0.0, sigma=0.5, pad_to_max_output_size=True,
        name="V5-soft-padded"),
    nms(V5, FLIPPED, SCORES, 6, sigma=0.1, name="V5-soft-flipped"),
    nms(V5, RANDOM, RANDOM_SCORES, 60, score=0.0, sigma=0.5, name="V5-soft-random-60"),
    nms(V5, RANDOM, RANDOM_SCORES, 30, score=0.4, sigma=0.05, name="V5-soft-threshold"),
    nms(V5, RANDOM, NEGATIVE, 60, sigma=0.3, name="V5-soft-negative-scores"),
    nms(V5, RANDOM, NEGATIVE, 60, score=-0.5, sigma=0.3, name="V5-soft-negative-threshold"),
    nms(V5, RANDOM.astype(f16), RANDOM_SCORES.astype(f16), 60, score=0.1, sigma=0.5,
        name="V5-soft-half"),
    nms(V5, TIES, np.full(6, 0.5, f32), 6, sigma=1.0, name="V5-soft-ties"),
    nms(V5, np.vstack([CLUSTERS, [[np.nan, 0, 1, 1]]]).astype(f32),
        np.float32([0.9, 0.75, 0.6, 0.95, 0.5, 0.3, 0.8]), 8, sigma=0.5,
        name="V5-soft-nan-box"),
    nms(V5, np.zeros((0, 4), f32), np.zeros(0, f32), 4, sigma=0.5,
        pad_to_max_output_size=True, name="V5-empty-padded"),
    nms(V5, CLUSTERS, SCORES, 3, sigma=-0.5, name="V5-sigma-negative"),
    case(V5, name="V5-sigma-vector", boxes=CLUSTERS, scores=SCORES,
         max_output_size=np.int32(3), iou_threshold=f32(0.5), score_threshold=f32(0),
         soft_nms_sigma=np.float32([0.5])),
]  # fmt: skip

IMAGE = rng.standard_normal((2, 5, 6, 3)).astype(f32)
BOXES = np.array(
    [
        [0, 0, 1, 1],
        [0.1, 0.2, 0.7, 0.9],
        [0.7, 0.9, 0.1, 0.2],
        [-0.5, -0.2, 0.6, 1.4],
        [0.25, 0.25, 0.25, 0.25],
        [1.2, 0.1, 1.5, 0.8],
        [0.3, 0.1, 0.31, 0.5],
        [-1e20, 0, 1e20, 1],
    ],
    f32,
)
BOX_IND = np.int32([0, 1, 1, 0, 1, 0, 1, 0])


def crop(name, image=IMAGE, boxes=BOXES, box_ind=BOX_IND, size=(3, 4), **attrs):
    return case(
        "CropAndResize",
        name=name,
        image=image,
        boxes=boxes,
        box_ind=box_ind,
        crop_size=np.int32(size),
        **attrs,
    )


CASES += [
    *[
        crop(f"CAR-{method}-{h}x{w}", size=(h, w), method=method)
        for method in ["bilinear", "nearest"]
        for h, w in [(3, 4), (1, 1), (1, 5), (4, 1), (7, 9)]
    ],
    crop("CAR-extrapolation", extrapolation_value=7.5),
    crop("CAR-nearest-extrapolation", method="nearest", extrapolation_value=-2.0),
    crop("CAR-uint8", image=rng.integers(0, 256, (2, 4, 4, 2)).astype(u8), size=(5, 3)),
    crop("CAR-uint16", image=rng.integers(0, 65536, (2, 4, 4, 1)).astype(u16), size=(2, 2)),
    crop("CAR-int8", image=rng.integers(-128, 128, (2, 3, 7, 1)).astype(i8), size=(3, 3),
         method="nearest"),
    crop("CAR-int64", image=rng.integers(-10**12, 10**12, (2, 4, 4, 1)).astype(i64)),
    crop("CAR-int32", image=rng.integers(-1000, 1000, (2, 4, 4, 2)).astype(i32)),
    crop("CAR-half", image=IMAGE.astype(f16), size=(6, 5)),
    crop("CAR-double", image=rng.standard_normal((2, 9, 4, 2)), size=(4, 8)),
    crop("CAR-one-pixel-image", image=IMAGE[:, :1, :1], size=(3, 3)),
    crop("CAR-single-row-image", image=IMAGE[:, :1], size=(2, 5)),
    crop("CAR-no-channels", image=np.zeros((2, 3, 3, 0), f32)),
    crop("CAR-no-boxes", boxes=np.zeros((0, 4), f32), box_ind=np.zeros(0, i32)),
    crop("CAR-no-boxes-empty-batch", image=np.zeros((0, 3, 3, 1), f32),
         boxes=np.zeros((0, 4), f32), box_ind=np.zeros(0, i32)),
    # errors
    crop("CAR-box-ind-too-big", box_ind=np.int32([0, 1, 2, 0, 1, 0, 1, 0])),
    crop("CAR-box-ind-negative", box_ind=np.int32([0, 1, 1, -1, 1, 0, 1, 0])),
    crop("CAR-empty-batch", image=np.zeros((0, 3, 3, 1), f32)),
    crop("CAR-crop-zero", size=(0, 3)),
    crop("CAR-crop-negative", size=(3, -2)),
    crop("CAR-crop-three", size=(3, 3, 3)),
    crop("CAR-crop-rank2", size=[(3, 3)]),
    crop("CAR-nan-box", boxes=np.where(np.arange(32).reshape(8, 4) == 5, np.nan, BOXES)),
    crop("CAR-inf-box", boxes=np.where(np.arange(32).reshape(8, 4) == 30, np.inf, BOXES)),
    crop("CAR-boxes-5-columns", boxes=np.zeros((8, 5), f32)),
    crop("CAR-boxes-rank1", boxes=np.zeros(8, f32)),
    crop("CAR-box-ind-mismatch", box_ind=BOX_IND[:7]),
    crop("CAR-box-ind-rank2", box_ind=BOX_IND[:, None]),
    crop("CAR-image-rank3", image=IMAGE[0]),
    crop("CAR-image-zero-height", image=np.zeros((2, 0, 3, 1), f32)),
    crop("CAR-bad-method", method="bicubic"),
]  # fmt: skip
