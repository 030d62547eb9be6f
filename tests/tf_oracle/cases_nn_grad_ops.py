"""The activations' gradient ops and BiasAddGrad run by TensorFlow 2.21 (see
make_op_fixtures.py): family "nn_grad_ops" (ops/nn_grad_ops.py). Gradients and features
include NaN, infinities, signed zeros and the kinks (0, and 6 for Relu6), where TensorFlow's
products (ReluGrad, Relu6Grad) and selections (the others) differ; every float dtype, the
integer types ReluGrad and Relu6Grad take, and BiasAddGrad in both formats.
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(31)

f16, f32, f64, c64 = np.float16, np.float32, np.float64, np.complex64
i8, i32, i64, u8 = np.int8, np.int32, np.int64, np.uint8
nan, inf = np.nan, np.inf


def normal(shape, dtype=f32, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


# every gradient against every feature: 9 x 9 pairs, flattened
_G = [nan, inf, -inf, 0.0, -0.0, 1.0, -2.5, 1e-30, 3e38]
_X = [nan, inf, -inf, 0.0, -0.0, 6.0, -1.0, 2.0, 7.5]
GRADS = np.repeat(np.array(_G, f32), len(_X))
FEATURES = np.tile(np.array(_X, f32), len(_G))
# Elu/Selu outputs lie above -1 and -scale*alpha: a special set of their own
OUTPUTS = np.tile(np.array([nan, inf, -1.0, -0.0, 0.0, -0.5, -1.7, 3.0, 1e-3], f32), len(_G))

ACTIVATION_GRADS = [
    ("ReluGrad", "features", FEATURES),
    ("Relu6Grad", "features", FEATURES),
    ("EluGrad", "outputs", OUTPUTS),
    ("SeluGrad", "outputs", OUTPUTS),
    ("SoftplusGrad", "features", FEATURES),
    ("LeakyReluGrad", "features", FEATURES),
]

CASES = [
    *[case(op, name=f"{op} special", gradients=GRADS, **{second: x})
      for op, second, x in ACTIVATION_GRADS],
    *[case(op, name=f"{op} {np.dtype(dt).name}", gradients=normal((3, 4), dt),
           **{second: normal((3, 4), dt, 3.0)})
      for op, second, _ in ACTIVATION_GRADS
      for dt in (f16, f64)],
    *[case(op, name=f"{op} mismatch", gradients=normal(2), **{second: normal(3)})
      for op, second, _ in ACTIVATION_GRADS],
    case("ReluGrad", name="ReluGrad scalar", gradients=f32(2.0), features=f32(1.0)),
    case("ReluGrad", name="ReluGrad empty", gradients=normal((0, 3)), features=normal((0, 3))),
    case("ReluGrad", name="ReluGrad rank mismatch", gradients=normal((2, 3)),
         features=normal((3, 2))),
    case("ReluGrad", name="ReluGrad int32", gradients=np.array([5, -3, 7, 2], i32),
         features=np.array([-1, 0, 1, 9], i32)),
    case("ReluGrad", name="ReluGrad uint8", gradients=np.array([5, 3, 7], u8),
         features=np.array([0, 1, 9], u8)),
    case("Relu6Grad", name="Relu6Grad int8", gradients=np.array([5, -3, 7, 2, 4], i8),
         features=np.array([-1, 0, 1, 6, 5], i8)),
    case("Relu6Grad", name="Relu6Grad int64", gradients=np.array([5, -3, 7], i64),
         features=np.array([6, 3, 7], i64)),
    case("LeakyReluGrad", name="LeakyReluGrad alpha 2", gradients=GRADS, features=FEATURES,
         alpha=2.0),
    case("LeakyReluGrad", name="LeakyReluGrad alpha 0.01 f64", gradients=normal(6, f64),
         features=normal(6, f64), alpha=0.01),
    # BiasAddGrad
    case("BiasAddGrad", out_backprop=normal((2, 5, 6, 3))),
    case("BiasAddGrad", name="BiasAddGrad NCHW", out_backprop=normal((2, 3, 5, 6)),
         data_format="NCHW"),
    case("BiasAddGrad", name="BiasAddGrad NCHW rank 3", out_backprop=normal((2, 3, 4)),
         data_format="NCHW"),
    case("BiasAddGrad", name="BiasAddGrad NCHW rank 2", out_backprop=normal((2, 3)),
         data_format="NCHW"),
    case("BiasAddGrad", name="BiasAddGrad NCHW rank 5", out_backprop=normal((2, 3, 2, 2, 2), f64),
         data_format="NCHW"),
    case("BiasAddGrad", name="BiasAddGrad rank 2", out_backprop=normal((4, 3), f64)),
    case("BiasAddGrad", name="BiasAddGrad float16", out_backprop=normal((64, 3), f16, 30.0)),
    case("BiasAddGrad", name="BiasAddGrad int32",
         out_backprop=np.arange(-6, 6, dtype=i32).reshape(4, 3)),
    case("BiasAddGrad", name="BiasAddGrad complex64",
         out_backprop=(normal((2, 3)) + 1j * normal((2, 3))).astype(c64)),
    case("BiasAddGrad", name="BiasAddGrad empty batch", out_backprop=normal((0, 3))),
    case("BiasAddGrad", name="BiasAddGrad no channels", out_backprop=normal((2, 0))),
    case("BiasAddGrad", name="BiasAddGrad special",
         out_backprop=np.array([[nan, 1.0], [inf, -inf], [-0.0, -0.0]], f32)),
    case("BiasAddGrad", name="BiasAddGrad rank 1", out_backprop=normal(3)),
    case("BiasAddGrad", name="BiasAddGrad scalar", out_backprop=f32(1.0)),
]  # fmt: skip
