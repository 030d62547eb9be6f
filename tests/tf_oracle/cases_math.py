"""Elementwise math, comparisons and selection run by TensorFlow 2.21 (make_op_fixtures.py):
family "math".

Left out on purpose: ``Select`` (``tf.raw_ops.Select`` names its inputs ``x``/``y``, the op
``t``/``e``, so a case cannot name them for both); ``Round`` on integers (TF's CPU kernel
gives zeros, a bug ``tf.round`` never reaches; minigraph returns the integers); dtypes TF has
no CPU kernel for (``RealDiv``/``Reciprocal`` on ints, ``DivNoNan`` on ints, float16
``Rint``/``TruncateMod``), which minigraph refuses at build time or computes.
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(2111)

nan, inf = np.nan, np.inf
f16, f32, f64, c64, c128 = np.float16, np.float32, np.float64, np.complex64, np.complex128
i8, i16, i32, i64, u8, u16, u32, u64 = (
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
)
SPECIAL = np.array([0.0, -0.0, 1.5, -2.5, 0.5, -0.5, 3.7, -1e-3, inf, -inf, nan, 2.0], f64)


def _floats(dtype, shape=(2, 3)):
    return rng.uniform(-4, 4, shape).astype(dtype)


def _ints(dtype, shape=(2, 3), lo=-20, hi=20):
    lo = max(lo, int(np.iinfo(dtype).min))
    return rng.integers(lo, hi, shape).astype(dtype)


def _nonzero(x):
    return np.where(x == 0, 1, x).astype(x.dtype)


def _binary():
    cases = []
    for k, op in enumerate(
        ["AddV2", "Sub", "Mul", "Maximum", "Minimum", "SquaredDifference", "Equal", "Less"]
    ):
        for dt in [f16, [f32, f64][k % 2], [i32, i64][k % 2]]:
            x = _floats(dt) if dt in (f16, f32, f64) else _ints(dt)
            y = _floats(dt, (3,)) if dt in (f16, f32, f64) else _ints(dt, (3,))
            cases.append(case(op, name=f"{op} {np.dtype(dt).name} broadcast", x=x, y=y))
    s = SPECIAL.astype(f32)
    for op in ["AddV2", "Mul", "RealDiv", "Div", "DivNoNan", "FloorDiv", "FloorMod", "Pow"]:
        cases.append(case(op, name=f"{op} specials", x=s[:, None], y=s[None, :]))
    for op in ["RealDiv", "Div", "FloorDiv", "FloorMod", "TruncateDiv", "TruncateMod"]:
        for dt in [f16, f32, f64]:
            if op == "TruncateMod" and dt == f16:
                continue
            cases.append(case(op, name=f"{op} {np.dtype(dt).name}", x=_floats(dt), y=_floats(dt)))
    cases.append(
        case(
            "FloorDiv",
            name="FloorDiv 1.0 // 0.1",
            x=np.array([1.0, -1.0], f32),
            y=np.array([0.1, 0.1], f32),
        )
    )
    for op in ["Div", "FloorDiv", "FloorMod", "TruncateDiv", "TruncateMod"]:
        for dt in [i8, i16, i32, i64, u8, u16, u32, u64][len(op) % 2 :: 2]:
            if op == "TruncateMod" and dt not in (i32, i64):
                continue
            x, y = _ints(dt, lo=-50, hi=50), _nonzero(_ints(dt, (3,), lo=-7, hi=7))
            cases.append(case(op, name=f"{op} {np.dtype(dt).name}", x=x, y=y))
        zero = np.array([3, 0], i32)
        if op in ("TruncateDiv", "TruncateMod"):
            cases.append(
                case(
                    op,
                    name=f"{op} by zero",
                    x=np.array([7, 7], i32),
                    y=zero,
                    mg_error="InvalidArgumentError",
                    why="TF raises InternalError for an integer division by zero here, as its "
                    "Div and Floor ops raise InvalidArgumentError; minigraph raises "
                    "InvalidArgumentError for all (semantics.md, section 11)",
                )
            )
        else:
            cases.append(case(op, name=f"{op} by zero", x=np.array([7, 7], i32), y=zero))
    cases += [
        case(
            "Pow",
            name="Pow int wraps",
            x=np.array([2, 3, 0, -2], i32),
            y=np.array([31, 40, 0, 3], i32),
        ),
        case("Pow", name="Pow int negative", x=np.array([1, 2], i32), y=np.array([2, -1], i32)),
        case("Pow", name="Pow f64", x=np.abs(_floats(f64)), y=_floats(f64)),
        case(
            "Pow",
            name="Pow c128",
            x=np.array([1 + 1j, 2 - 1j], c128),
            y=np.array([2 + 0j, 0.5j], c128),
        ),
        case(
            "AddV2", name="AddV2 int8 wraps", x=np.array([127, -128], i8), y=np.array([1, -1], i8)
        ),
        case("AddV2", name="AddV2 c64", x=np.array([1 + 2j, 3j], c64), y=np.array([1j], c64)),
        case("AddV2", name="AddV2 empty", x=np.zeros((0, 3), f32), y=np.ones(3, f32)),
        case("AddV2", name="AddV2 incompatible", x=np.ones((2, 3), f32), y=np.ones((2, 4), f32)),
        case(
            "SquaredDifference",
            name="SquaredDifference c128",
            x=np.array([1 + 2j, 3j], c128),
            y=np.array([0j, 1 - 1j], c128),
        ),
        case(
            "Equal",
            name="Equal incompatible, no error",
            x=np.ones(2, f32),
            y=np.ones(3, f32),
            incompatible_shape_error=False,
        ),
        case(
            "NotEqual",
            name="NotEqual incompatible, no error",
            x=np.ones(2, f32),
            y=np.ones(3, f32),
            incompatible_shape_error=False,
        ),
        case(
            "NotEqual",
            name="NotEqual broadcast, no error",
            x=np.ones((2, 1), i32),
            y=np.arange(3, dtype=i32),
            incompatible_shape_error=False,
        ),
        case("Equal", name="Equal incompatible", x=np.ones(2, f32), y=np.ones(3, f32)),
        case("Equal", name="Equal bool", x=np.array([True, False]), y=np.array([True, True])),
        case("LogicalAnd", x=np.array([True, False, True]), y=np.array([True])),
    ]
    return cases


def _unary():
    cases = []
    s32 = SPECIAL.astype(f32)
    ops = [
        "Abs",
        "Sign",
        "Square",
        "Sqrt",
        "Rsqrt",
        "Reciprocal",
        "Exp",
        "Expm1",
        "Log",
        "Log1p",
        "Sin",
        "Cos",
        "Tanh",
        "Sigmoid",
        "Erf",
        "Erfc",
        "Floor",
        "Ceil",
        "Round",
        "Rint",
        "IsNan",
        "IsInf",
        "IsFinite",
        "Neg",
    ]
    for op in ops:
        cases.append(case(op, name=f"{op} specials", x=s32))
        dt = f64 if op == "Rint" or len(cases) % 2 else f16  # each op in one more dtype
        cases.append(case(op, name=f"{op} {np.dtype(dt).name}", x=_floats(dt, (5,))))
    for op in [
        "Exp",
        "Log",
        "Sqrt",
        "Tanh",
        "Sigmoid",
        "Expm1",
        "Log1p",
        "Sin",
        "Sign",
        "Square",
        "Rsqrt",
        "Reciprocal",
    ]:
        cases.append(case(op, name=f"{op} c128", x=np.array([1 + 1j, -0.5 + 2j, 3 - 1j], c128)))
    for op in ["Abs", "Sign", "Square", "Neg"]:
        cases.append(case(op, name=f"{op} int32", x=np.array([-(2**31), -3, 0, 5], i32)))
    cases += [
        case("Erf", name="Erf f64 range", x=np.linspace(-6, 6, 49)),
        case("Erfc", name="Erfc f64 tail", x=np.linspace(-6, 26, 33)),
        case(
            "Sigmoid",
            name="Sigmoid extremes",
            x=np.array([-100, -40, -20, 0, 20, 100], f32),
            atol=1e-30,
            rtol=1e-5,
        ),
        case("Round", name="Round halves", x=np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5], f32)),
        case("Erf", name="Erf int", x=np.array([1, 2], i32)),
        case("Sqrt", name="Sqrt empty", x=np.zeros((0, 2), f32)),
    ]
    return cases


def _selection():
    t = rng.uniform(-4, 4, (3, 4)).astype(f32)
    return [
        case(
            "SelectV2",
            name="SelectV2 broadcast",
            condition=rng.random((3, 1)) > 0.5,
            t=t,
            e=np.float32(9),
        ),
        case(
            "SelectV2",
            name="SelectV2 all broadcast",
            condition=rng.random(4) > 0.5,
            t=t[:1],
            e=t[:, :1],
        ),
        case(
            "SelectV2",
            name="SelectV2 incompatible",
            condition=np.array([True, False]),
            t=np.ones((3, 1), f32),
            e=np.ones(3, f32),
        ),
        case(
            "SelectV2",
            name="SelectV2 int64",
            condition=np.array([[True], [False]]),
            t=np.array([1, 2], i64),
            e=np.array([[5], [6]], i64),
        ),
        case(
            "ClipByValue",
            name="ClipByValue scalars",
            t=t,
            clip_value_min=np.float32(-1),
            clip_value_max=np.float32(1),
        ),
        case(
            "ClipByValue",
            name="ClipByValue tensors",
            t=t,
            clip_value_min=-np.abs(t[::-1]),
            clip_value_max=np.abs(t),
        ),
        case(
            "ClipByValue",
            name="ClipByValue NaN",
            t=np.array([nan, 5, -5, 1], f32),
            clip_value_min=np.float32(0),
            clip_value_max=np.float32(3),
        ),
        case(
            "ClipByValue",
            name="ClipByValue NaN bound",
            t=np.array([2, 5, -5, 1], f32),
            clip_value_min=np.float32(nan),
            clip_value_max=np.float32(3),
        ),
        case(
            "ClipByValue",
            name="ClipByValue min above max",
            t=np.array([2, 5, -5, 1], f32),
            clip_value_min=np.float32(3),
            clip_value_max=np.float32(0),
        ),
        case(
            "ClipByValue",
            name="ClipByValue int32",
            t=np.arange(-5, 5, dtype=i32),
            clip_value_min=np.int32(-2),
            clip_value_max=np.int32(3),
        ),
        case(
            "ClipByValue",
            name="ClipByValue bad shape",
            t=np.ones((2, 3), f32),
            clip_value_min=np.ones(2, f32),
            clip_value_max=np.float32(3),
        ),
    ]


CASES = _binary() + _unary() + _selection()
