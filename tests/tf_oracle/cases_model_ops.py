"""Small ops that real models' frozen graphs hold, run by TensorFlow 2.21 (see
make_op_fixtures.py): family "model_ops": PlaceholderWithDefault (its default; a feed is
tested in test_model_ops.py), Atan2 and ScatterNdNonAliasingAdd.
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(26)

f16, f32, f64 = np.float16, np.float32, np.float64
i32, i64, u8 = np.int32, np.int64, np.uint8
nan, inf = np.nan, np.inf
# TF's eager kernel passes any default; its graph mode (the shape function) refuses one
# that disagrees with ``shape``, as minigraph does when the node is built.
_BUILD_TIME = "TF's shape function refuses it in graph mode; eager runs no shape function"
# Rank-1 indices: TF's eager kernel scatters their first element; its graph mode (the shape
# function, ScatterNdShapeHelper) refuses them, as minigraph does when shapes are known.
_SHAPE_HELPER = "TF's ScatterNdShapeHelper refuses it in graph mode; eager runs no shape function"
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -1e-30, inf, -inf, nan], f64)

CASES = [
    # PlaceholderWithDefault: the default passes; its shape must agree with the attr
    case("PlaceholderWithDefault", input=np.arange(6, dtype=f32).reshape(2, 3), shape=[None, 3]),
    case("PlaceholderWithDefault", name="PWD-unknown-rank", input=np.int64(7), shape=None),
    case("PlaceholderWithDefault", name="PWD-exact", input=np.array([True, False]), shape=[2]),
    case(
        "PlaceholderWithDefault",
        name="PWD-mismatch",
        input=np.zeros((2, 3), f32),
        shape=[3, 3],
        mg_error="InvalidArgumentError",
        why=_BUILD_TIME,
    ),
    case(
        "PlaceholderWithDefault",
        name="PWD-rank",
        input=np.zeros((2, 3), f32),
        shape=[6],
        mg_error="InvalidArgumentError",
        why=_BUILD_TIME,
    ),
    # Atan2 (inputs y, x), broadcasting, specials, each float dtype
    case("Atan2", y=SPECIAL.astype(f32)[:, None], x=SPECIAL.astype(f32)[None, :]),
    case("Atan2", name="Atan2-f64", y=SPECIAL[:, None], x=SPECIAL[None, :]),
    case(
        "Atan2",
        name="Atan2-f16",
        y=rng.uniform(-3, 3, (3, 4)).astype(f16),
        x=rng.uniform(-3, 3, 4).astype(f16),
        rtol=1e-3,
    ),
    case(
        "Atan2",
        name="Atan2-f32-random",
        y=rng.standard_normal((4, 5)).astype(f32),
        x=rng.standard_normal((4, 5)).astype(f32),
    ),
    case("Atan2", name="Atan2-broadcast-error", y=np.zeros(3, f32), x=np.zeros(2, f32)),
    # ScatterNdNonAliasingAdd
    case(
        "ScatterNdNonAliasingAdd",
        input=np.arange(1, 9, dtype=i32),
        indices=np.array([[4], [3], [1], [7]], i32),
        updates=np.array([9, 10, 11, 12], i32),
    ),
    case(
        "ScatterNdNonAliasingAdd",
        name="SNNAA-duplicates-f32",
        input=rng.standard_normal((4, 3)).astype(f32),
        indices=np.array([[1], [3], [1], [1]], i64),
        updates=rng.standard_normal((4, 3)).astype(f32),
    ),
    case(
        "ScatterNdNonAliasingAdd",
        name="SNNAA-elements-f64",
        input=np.zeros((2, 3), f64),
        indices=np.array([[[0, 1], [1, 2]], [[0, 1], [1, 0]]], i32),
        updates=np.array([[1.0, 2.0], [3.0, 4.0]], f64),
    ),
    case(
        "ScatterNdNonAliasingAdd",
        name="SNNAA-bool",
        input=np.array([True, False, False]),
        indices=np.array([[1], [2], [1]], i32),
        updates=np.array([True, False, True]),
    ),
    case(
        "ScatterNdNonAliasingAdd",
        name="SNNAA-uint8-wraps",
        input=np.array([250, 1], u8),
        indices=np.array([[0], [0]], i32),
        updates=np.array([5, 6], u8),
    ),
    case(
        "ScatterNdNonAliasingAdd",
        name="SNNAA-bad-index",
        input=np.zeros(4, f32),
        indices=np.array([[1], [4]], i32),
        updates=np.ones(2, f32),
    ),
    case(
        "ScatterNdNonAliasingAdd",
        name="SNNAA-negative-index",
        input=np.zeros(4, f32),
        indices=np.array([[-1]], i32),
        updates=np.ones(1, f32),
    ),
    case(
        "ScatterNdNonAliasingAdd",
        name="SNNAA-ignore",
        input=np.zeros(4, f32),
        indices=np.array([[1], [4]], i32),
        updates=np.ones(2, f32),
        bad_indices_policy="IGNORE",
    ),
    case(
        "ScatterNdNonAliasingAdd",
        name="SNNAA-updates-shape",
        input=np.zeros((4, 2), f32),
        indices=np.array([[1], [2]], i32),
        updates=np.ones((2, 3), f32),
    ),
    case(
        "ScatterNdNonAliasingAdd",
        name="SNNAA-outer-shape",
        input=np.zeros((4, 2), f32),
        indices=np.array([[1], [2]], i32),
        updates=np.ones((3, 2), f32),
    ),
    case(
        "ScatterNdNonAliasingAdd",
        name="SNNAA-scalar-input",
        input=np.float32(1),
        indices=np.array([[0]], i32),
        updates=np.ones(1, f32),
    ),
    case(
        "ScatterNdNonAliasingAdd",
        name="SNNAA-empty",
        input=np.zeros((0, 2), f32),
        indices=np.zeros((0, 1), i32),
        updates=np.zeros((0, 2), f32),
    ),
    case(
        "ScatterNdNonAliasingAdd",
        name="SNNAA-index-too-deep",
        input=np.zeros((2, 2), f32),
        indices=np.array([[0, 0, 0]], i32),
        updates=np.ones(1, f32),
    ),
    case(
        "ScatterNdNonAliasingAdd",
        name="SNNAA-rank1-indices",
        mg_error="InvalidArgumentError",
        why=_SHAPE_HELPER,
        input=np.zeros(3, f32),
        indices=np.array([2, 1], i32),
        updates=np.array([1.0, 2.0], f32),
    ),
    case(
        "ScatterNdNonAliasingAdd",
        name="SNNAA-rank1-index",
        mg_error="InvalidArgumentError",
        why=_SHAPE_HELPER,
        input=np.zeros((3, 2), f32),
        indices=np.array([1], i32),
        updates=np.array([[1.0, 2.0]], f32),
    ),
    case(
        "ScatterNdNonAliasingAdd",
        name="SNNAA-complex",
        input=np.zeros(3, np.complex64),
        indices=np.array([[2], [2]], i32),
        updates=np.array([1 + 2j, 3 - 1j], np.complex64),
    ),
]
