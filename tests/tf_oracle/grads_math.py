"""Gradients of the math ops (ops/math_grad.py), computed by TensorFlow 2.21: family "math"
of make_grad_fixtures.py. Shapes that broadcast check that a gradient is summed back to its
input's shape; complex cases check the conjugates TensorFlow takes; the gradient ops
(TanhGrad...) are differentiated too (second derivatives). Ops whose TF gradient is None
(FloorDiv, Floor...) check that minigraph gives None as well."""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(7)
f16, f32, f64, c64, c128 = np.float16, np.float32, np.float64, np.complex64, np.complex128


def normal(shape, dtype=f64):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def positive(shape, dtype=f64):
    return rng.uniform(0.5, 2.0, shape).astype(dtype)


def away_from_integers(shape, dtype=f64):
    """Values whose floor/round/quotient is not at a jump."""
    return (rng.integers(-4, 4, shape) + rng.uniform(0.2, 0.8, shape)).astype(dtype)


_UNARY_ANY = ["Neg", "Square", "Exp", "Expm1", "Sin", "Cos", "Tanh", "Sigmoid", "Sign"]
_UNARY_POSITIVE = ["Sqrt", "Rsqrt", "Reciprocal", "Log", "Log1p"]


def _unary():
    cases = []
    for k, op in enumerate(_UNARY_ANY + _UNARY_POSITIVE + ["Abs", "Erf", "Erfc"]):
        make = positive if op in _UNARY_POSITIVE else normal
        dtype = [f32, f64][k % 2]
        cases.append(case(op, x=make([2, 3], dtype)))
    for op in _UNARY_ANY + _UNARY_POSITIVE:
        make = positive if op in _UNARY_POSITIVE else normal
        cases.append(case(op, name=f"{op} complex128", x=make([3], c128) + 0.5))
    for op in ["Tanh", "Sigmoid", "Sqrt", "Exp"]:
        cases.append(case(op, name=f"{op} float16", x=positive([4], f16)))
    cases += [
        case("Square", name="Square complex64", x=normal([2, 2], c64)),
        case("Log", name="Log scalar", x=np.float64(1.7)),
        case("Sqrt", name="Sqrt empty", x=np.zeros([0, 3], f32)),
        case("Abs", name="Abs negative float16", x=-positive([3], f16)),
        case("Conj", input=normal([2, 3], c64)),
        case("Conj", name="Conj complex128", input=normal([4], c128)),
        # TF's gradient is None for every input: minigraph stops there too.
        case("Floor", x=away_from_integers([3])),
        case("Ceil", x=away_from_integers([3], f32)),
        case("Round", x=away_from_integers([3])),
        case("Rint", x=away_from_integers([3], f32)),
    ]
    return cases


def _binary():
    return [
        case("AddN", inputs=[normal([2, 3]), normal([2, 3]), normal([2, 3])]),
        case("AddV2", x=normal([2, 3]), y=normal([3])),
        case("Add", x=normal([4, 1, 3], f32), y=normal([2, 1], f32)),
        case("AddV2", name="AddV2 complex", x=normal([2, 3], c64), y=normal([], c64)),
        case("Sub", x=normal([]), y=normal([2, 2])),
        case("Sub", name="Sub empty", x=normal([0, 2]), y=normal([2])),
        case("Mul", x=normal([2, 3]), y=normal([2, 1])),
        case("Mul", name="Mul complex64", x=normal([2, 3], c64), y=normal([3], c64)),
        case("Mul", name="Mul complex128", x=normal([2, 1], c128), y=normal([1, 3], c128)),
        case("Mul", name="Mul wrt x only", x=normal([2]), y=normal([2]), wrt=["x"]),
        case("RealDiv", x=normal([3, 2]), y=normal([2]) + 3.0),
        case("RealDiv", name="RealDiv complex", x=normal([2, 2], c128), y=normal([2], c128) + 2),
        case("Div", x=normal([2, 3], f32), y=positive([3], f32)),
        case("DivNoNan", x=normal([2, 3]), y=np.array([0.0, 1.5, -2.0])),
        case("DivNoNan", name="DivNoNan complex", x=normal([3], c64), y=normal([3], c64)),
        case("FloorMod", x=away_from_integers([2, 3]), y=np.array([1.5, -2.5, 3.0])),
        case("Pow", x=positive([2, 3]), y=normal([3])),
        case("Pow", name="Pow at zero and below", x=np.array([-2.0, 0.0, 1.5]), y=np.float64(2)),
        case("Pow", name="Pow complex", x=normal([3], c128), y=normal([3], c128)),
        case("Pow", name="Pow float32", x=positive([2, 2], f32), y=positive([2, 1], f32)),
        case("Maximum", x=np.array([1.0, 2.0, -1.0, 3.0]), y=np.array([1.0, 0.5, 4.0, 3.0])),
        case("Minimum", x=np.array([[1.0, 2.0], [-1.0, 3.0]], f32), y=np.array([2.0, -1.0], f32)),
        case("Maximum", name="Maximum scalar", x=normal([2, 2]), y=np.float64(0.0)),
        case("SquaredDifference", x=normal([2, 3]), y=normal([2, 1])),
        case(
            "SquaredDifference",
            name="SquaredDifference complex",
            x=normal([3], c64),
            y=normal([3], c64),
        ),
        case("Atan2", y=normal([2, 3]), x=normal([3])),
        case("Atan2", name="Atan2 float32", y=normal([3], f32), x=normal([], f32)),
        case("FloorDiv", x=away_from_integers([3]), y=np.array([1.5, 2.5, -3.5])),
        case("TruncateDiv", x=away_from_integers([3], f32), y=np.array([1.5, 2.5, -3.5], f32)),
        case("Neg", x=normal([5], f32)),
        case("Cast", x=normal([4], f32), DstT=f64),
        case("Cast", name="Cast to int", x=normal([4], f32), DstT=np.int32),
    ]


def _gradient_ops():
    """Second derivatives: the gradient ops, each differentiated with respect to y and dy."""
    cases = []
    for k, op in enumerate(["TanhGrad", "SigmoidGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad"]):
        dtype = [f64, f32][k % 2]
        cases.append(case(op, y=positive([2, 3], dtype), dy=normal([2, 3], dtype)))
        cases.append(
            case(op, name=f"{op} complex", y=positive([3], c128) + 0.5j, dy=normal([3], c128))
        )
    return cases


def _selection():
    cond = np.array([[True, False, True], [False, False, True]])
    return [
        case("Select", condition=cond, x=normal([2, 3]), y=normal([2, 3])),
        case(
            "Select",
            name="Select rows",
            condition=np.array([False, True]),
            x=normal([2, 3], f32),
            y=normal([2, 3], f32),
        ),
        case(
            "Select", name="Select scalar", condition=np.bool_(True), x=normal([2]), y=normal([2])
        ),
        case("SelectV2", condition=cond, t=normal([3]), e=normal([2, 1])),
        case(
            "SelectV2",
            name="SelectV2 scalar branches",
            condition=cond[:, :1],
            t=np.float64(1.5),
            e=normal([1, 3]),
        ),
        case(
            "SelectV2",
            name="SelectV2 complex",
            condition=cond[0],
            t=normal([2, 3], c64),
            e=normal([], c64),
        ),
        case(
            "ClipByValue",
            t=np.array([-2.0, -1.0, 0.0, 0.5, 1.0, 3.0]),
            clip_value_min=np.float64(-1),
            clip_value_max=np.float64(1),
        ),
        case(
            "ClipByValue",
            name="ClipByValue tensor bounds",
            t=normal([2, 3], f32),
            clip_value_min=np.full([2, 3], -0.5, f32),
            clip_value_max=positive([2, 3], f32),
        ),
    ]


CASES = _unary() + _binary() + _gradient_ops() + _selection()
