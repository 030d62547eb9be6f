"""Random ops run by TensorFlow 2.21 (see make_op_fixtures.py): family "random": the shapes
and errors of RandomUniform, RandomStandardNormal, TruncatedNormal and RandomUniformInt.

Only cases whose output holds no random value are here (errors, and empty outputs, which
compare equal): minigraph draws other bits than TensorFlow (see ops/random_ops.py), so its
distributions are tested statistically in tests/test_random_ops.py instead.
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

f16, f32, f64 = np.float16, np.float32, np.float64
i32, i64 = np.int32, np.int64

FLOAT_OPS = ["RandomUniform", "RandomStandardNormal", "TruncatedNormal"]

CASES = [
    *[
        c
        for op in FLOAT_OPS
        for c in [
            case(op, name=f"{op}-empty", shape=np.array([3, 0], i32), dtype=f32, seed=1),
            case(op, name=f"{op}-empty-f16-int64", shape=np.array([0], i64), dtype=f16),
            case(op, name=f"{op}-empty-f64", shape=np.array([2, 0, 4], i32), dtype=f64, seed2=3),
            case(op, name=f"{op}-negative", shape=np.array([2, -1], i32), dtype=f32),
            case(op, name=f"{op}-negative-3", shape=np.array([-3], i64), dtype=f64),
            case(op, name=f"{op}-rank2-shape", shape=np.array([[2, 1]], i32), dtype=f32),
            case(op, name=f"{op}-scalar-shape", shape=np.int32(3), dtype=f32),
            case(op, name=f"{op}-overflow", shape=np.array([2**40, 2**40], i64), dtype=f32),
            case(op, name=f"{op}-int-dtype", shape=np.array([2], i32), dtype=i32),
        ]
    ],
    case("RandomUniformInt", name="RUI-empty", shape=np.array([0, 2], i32),
         minval=np.int32(0), maxval=np.int32(5), seed=4),
    case("RandomUniformInt", name="RUI-empty-no-range", shape=np.array([0], i32),
         minval=np.int64(5), maxval=np.int64(5)),
    case("RandomUniformInt", name="RUI-equal", shape=np.array([2], i32),
         minval=np.int32(5), maxval=np.int32(5)),
    case("RandomUniformInt", name="RUI-reversed", shape=np.array([2], i64),
         minval=np.int64(7), maxval=np.int64(-5)),
    case("RandomUniformInt", name="RUI-min-vector", shape=np.array([2], i32),
         minval=np.array([1], i32), maxval=np.int32(5)),
    case("RandomUniformInt", name="RUI-max-vector", shape=np.array([2], i32),
         minval=np.int32(1), maxval=np.array([5, 6], i32)),
    case("RandomUniformInt", name="RUI-negative", shape=np.array([-2], i32),
         minval=np.int32(1), maxval=np.int32(5)),
]  # fmt: skip
