"""Gradients of the math ops (ops/math_grad.py), computed by TensorFlow 2.21: family "math"
of make_grad_fixtures.py. Shapes that broadcast check that a gradient is summed back to its
input's shape."""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(7)
f32, f64 = np.float32, np.float64


def normal(shape, dtype=f64):
    return rng.standard_normal(shape).astype(dtype)


CASES = [
    case("AddN", inputs=[normal([2, 3]), normal([2, 3]), normal([2, 3])]),
    case("AddV2", x=normal([2, 3]), y=normal([3])),
    case("Add", x=normal([4, 1, 3], f32), y=normal([2, 1], f32)),
    case("Sub", x=normal([]), y=normal([2, 2])),
    case("Mul", x=normal([2, 3]), y=normal([2, 1])),
    case("RealDiv", x=normal([3, 2]), y=normal([2]) + 3.0),
    case("Neg", x=normal([5], f32)),
    case("Cast", x=normal([4], f32), DstT=f64),
    case("Cast", name="Cast to int", x=normal([4], f32), DstT=np.int32),
    case("Mul", name="Mul wrt x only", x=normal([2]), y=normal([2]), wrt=["x"]),
]
