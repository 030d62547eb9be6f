"""Conv3D, MaxPool3D and AvgPool3D where TensorFlow 2.21's default CPU kernels (oneDNN) are
the answer (see make_op_fixtures.py and cases_conv3d.py): family "conv3d_onednn". TF_ENV
turns oneDNN on (TensorFlow's default on x86 Linux) whatever the environment.

- Dilated Conv3D: the reference CPU kernel refuses dilations; oneDNN, like TensorFlow's GPU,
  runs them (and so does minigraph, on every device).
- MaxPool3D over NaN, -inf and signed zeros: oneDNN's rule is MaxPool's (NaN skipped, a
  window of -inf or NaN gives the lowest float, the first of 0.0 and -0.0 wins), which
  minigraph follows; the reference kernel's answer depends on Eigen's vector width.
- AvgPool3D over inf and the lowest float: oneDNN averages every cell (the reference kernel
  skips cells equal to the lowest float, its padding marker).
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

TF_ENV = {"TF_ENABLE_ONEDNN_OPTS": "1"}

rng = np.random.default_rng(3034)

f32, f64 = np.float32, np.float64
S1 = [1, 1, 1, 1, 1]
nan, inf = np.nan, np.inf
LOWEST = np.finfo(f32).min


def normal(shape, dtype=f32):
    return rng.standard_normal(shape).astype(dtype)


# pairs along the width, each pair one window: NaN first and last, -inf, signed zeros, the
# lowest float, inf
PAIRS = np.array(
    [nan, 1.0, 3.0, nan, -inf, -inf, nan, nan, -0.0, 0.0, 0.0, -0.0, LOWEST, 2.0, inf, -inf,
     LOWEST, LOWEST, 5.0, inf],
    f32,
).reshape(1, 1, 1, 20, 1)  # fmt: skip
SPECIAL = np.where(rng.random((1, 3, 4, 5, 2)) < 0.3, rng.choice(PAIRS.ravel(), (1, 3, 4, 5, 2)),
                   normal((1, 3, 4, 5, 2))).astype(f32)  # fmt: skip

CASES = [
    # dilated Conv3D
    case("Conv3D", name="Conv3D-dilated-SAME", input=normal((2, 6, 5, 7, 2)),
         filter=normal((2, 2, 3, 2, 3)), strides=S1, dilations=[1, 2, 2, 2, 1], padding="SAME"),
    case("Conv3D", name="Conv3D-dilated-VALID-strided", input=normal((1, 7, 6, 8, 3)),
         filter=normal((3, 2, 2, 3, 2)), strides=[1, 1, 2, 1, 1], dilations=[1, 2, 1, 3, 1],
         padding="VALID"),
    case("Conv3D", name="Conv3D-dilated-s2-SAME", input=normal((1, 5, 6, 5, 8)),
         filter=normal((2, 3, 2, 8, 4)), strides=[1, 2, 2, 2, 1], dilations=[1, 3, 2, 1, 1],
         padding="SAME"),
    # MaxPool3D and AvgPool3D over special values
    *[
        c
        for op in ["MaxPool3D", "AvgPool3D"]
        for c in [
            case(op, name=f"{op}-special-pairs", input=PAIRS, ksize=[1, 1, 1, 2, 1],
                 strides=[1, 1, 1, 2, 1], padding="VALID"),
            case(op, name=f"{op}-special-SAME", input=PAIRS[:, :, :, 2:9], ksize=[1, 1, 1, 2, 1],
                 strides=[1, 1, 1, 2, 1], padding="SAME"),
            case(op, name=f"{op}-special-volume", input=SPECIAL, ksize=[1, 2, 2, 3, 1],
                 strides=[1, 1, 2, 2, 1], padding="SAME"),
        ]
    ],
    case("MaxPool3D", name="MaxPool3D-all-minus-inf-SAME",
         input=np.full((1, 1, 2, 3, 1), -inf, f32), ksize=[1, 1, 2, 2, 1], strides=S1,
         padding="SAME"),
    case("MaxPool3D", name="MaxPool3D-all-nan-SAME", input=np.full((1, 2, 1, 3, 1), nan, f32),
         ksize=[1, 2, 1, 2, 1], strides=S1, padding="SAME"),
]  # fmt: skip
