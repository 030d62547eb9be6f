"""TensorFlow 2.21's gradient ops of the unary math functions (ops/math_grad_ops.py) and
Conj (ops/complex_ops.py), run forward: family "math_grad_ops" of make_op_fixtures.py.

Special values check where SqrtGrad, RsqrtGrad and ReciprocalGrad give 0 (dy == 0, even
at an infinite or NaN derivative) and where TanhGrad and SigmoidGrad do not; sizes above
a SIMD packet run TensorFlow's vectorised loop as well as its scalar one. ``dy`` needs only
as many elements as ``y`` (the output is shaped as ``y``); other counts are TensorFlow's
run-time error.
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(4242)
f16, f32, f64, c64, c128 = np.float16, np.float32, np.float64, np.complex64, np.complex128
nan, inf = np.nan, np.inf
OPS = ["TanhGrad", "SigmoidGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad"]

# Each y against dy = 0 and dy = 1.5: zeros, infinities and NaN in y.
SPECIAL_Y = np.array([0.0, -0.0, inf, -inf, nan, 0.5, -2.0, 1e-30], f64)


def _values(dtype, shape):
    x = rng.uniform(0.1, 2.0, shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.uniform(-1.0, 1.0, shape)
    return x.astype(dtype)


def _cases():
    cases = []
    for k, op in enumerate(OPS):
        for dtype in (f16, f32, f64, c64, c128):
            cases.append(
                case(
                    op,
                    name=f"{op} {np.dtype(dtype).name}",
                    y=_values(dtype, [2, 3]),
                    dy=_values(dtype, [2, 3]) - 1.0,
                )
            )
        y = np.repeat(SPECIAL_Y, 2).astype([f32, f64][k % 2])
        dy = np.tile(np.array([0.0, 1.5], y.dtype), SPECIAL_Y.size)
        cases += [
            case(op, name=f"{op} special values", y=y, dy=dy),
            case(op, name=f"{op} long", y=_values(f32, [37]), dy=_values(f32, [37])),
            case(op, name=f"{op} scalar", y=np.float64(0.75), dy=np.float64(-2.0)),
            case(op, name=f"{op} empty", y=np.zeros([0, 2], f32), dy=np.zeros([0, 2], f32)),
            case(op, name=f"{op} dy reshaped", y=_values(f64, [2, 3]), dy=_values(f64, [6])),
            case(op, name=f"{op} sizes differ", y=_values(f32, [2, 3]), dy=_values(f32, [3])),
            case(op, name=f"{op} ints", y=np.ones(2, np.int32), dy=np.ones(2, np.int32)),
        ]
    cases += [
        case("Conj", input=_values(c64, [2, 3])),
        case(
            "Conj",
            name="Conj complex128 special",
            input=np.array([complex(0.0, -0.0), complex(inf, nan), complex(-1.5, inf)], c128),
        ),
        case("Conj", name="Conj scalar", input=np.complex64(1 - 2j)),
        case("Conj", name="Conj float", input=np.float32([1.0, 2.0])),
    ]
    return cases


CASES = _cases()
