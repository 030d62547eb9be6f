"""Conv3D, MaxPool3D and AvgPool3D run by TensorFlow 2.21's reference CPU kernels (see
make_op_fixtures.py): family "conv3d". TF_ENV turns oneDNN off: its 3-D kernels answer bad
ranks and empty inputs wrongly (a rank-4 Conv3D input gives a result, an empty batch gives
the input's channel count, a rank-4 MaxPool3D aborts the process), the reference kernels
check each with a message. Values, strides, SAME/VALID, float16/32/64 convolutions, empty
dims, bad ranks and attrs.

In cases_conv3d_onednn.py (TensorFlow's default kernels): dilations (the reference CPU
kernel refuses them, oneDNN and the GPU run them) and MaxPool3D/AvgPool3D over NaN, inf and
the lowest float (the reference kernels' answers there depend on Eigen's vector width and
skip the lowest float in averages). Left out, tested in test_conv3d_ops.py: NCDHW and
grouped filters (TensorFlow's CPU refuses them, its GPU runs them, and so do minigraph's),
float16 pooling and float64 AvgPool3D (no TensorFlow CPU kernel: NotFoundError; minigraph
runs them).
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

TF_ENV = {"TF_ENABLE_ONEDNN_OPTS": "0"}

rng = np.random.default_rng(3033)

f16, f32, f64, i32 = np.float16, np.float32, np.float64, np.int32
S1 = [1, 1, 1, 1, 1]
K2, S2 = [1, 2, 2, 2, 1], [1, 2, 2, 2, 1]


def normal(shape, dtype=f32):
    return rng.standard_normal(shape).astype(dtype)


VOLUME = normal((2, 4, 5, 6, 3))
SMALL = normal((1, 4, 4, 4, 2))
FILTER = normal((2, 2, 2, 2, 3))

CASES = [
    # Conv3D values: SAME and VALID, strides, odd sizes, both kernel paths, dtypes
    case("Conv3D", input=VOLUME, filter=normal((2, 3, 2, 3, 4)), strides=S1, padding="SAME"),
    case("Conv3D", name="Conv3D-VALID-strided", input=normal((1, 5, 6, 7, 2)),
         filter=normal((3, 2, 2, 2, 3)), strides=[1, 2, 1, 3, 1], padding="VALID"),
    case("Conv3D", name="Conv3D-SAME-s2-odd", input=normal((1, 5, 4, 7, 2)),
         filter=normal((3, 3, 3, 2, 2)), strides=S2, padding="SAME"),
    case("Conv3D", name="Conv3D-SAME-filter-larger", input=normal((1, 2, 3, 2, 1)),
         filter=normal((3, 4, 3, 1, 2)), strides=S1, padding="SAME"),
    case("Conv3D", name="Conv3D-8-channels", input=normal((2, 3, 4, 5, 8)),
         filter=normal((2, 2, 2, 8, 3)), strides=S1, padding="SAME"),
    case("Conv3D", name="Conv3D-1x1x1-s2", input=normal((1, 5, 5, 5, 5)),
         filter=normal((1, 1, 1, 5, 4)), strides=S2, padding="VALID"),
    case("Conv3D", name="Conv3D-f64", input=SMALL.astype(f64), filter=normal((2, 2, 2, 2, 5), f64),
         strides=S1, padding="SAME"),
    case("Conv3D", name="Conv3D-f16", input=normal((1, 3, 4, 3, 2), f16),
         filter=normal((2, 2, 2, 2, 2), f16), strides=S1, padding="VALID", rtol=5e-3, atol=5e-3),
    # Conv3D empty dims
    case("Conv3D", name="Conv3D-window-larger-VALID", input=SMALL,
         filter=normal((5, 2, 2, 2, 3)), strides=S1, padding="VALID"),
    case("Conv3D", name="Conv3D-window-larger-VALID-s2", input=SMALL,
         filter=normal((5, 2, 2, 2, 3)), strides=S2, padding="VALID"),
    case("Conv3D", name="Conv3D-empty-batch", input=normal((0, 4, 4, 4, 2)), filter=FILTER,
         strides=S1, padding="SAME"),
    case("Conv3D", name="Conv3D-empty-depth-SAME", input=normal((1, 0, 4, 4, 2)), filter=FILTER,
         strides=S1, padding="SAME"),
    case("Conv3D", name="Conv3D-empty-depth-VALID", input=normal((1, 0, 4, 4, 2)), filter=FILTER,
         strides=S1, padding="VALID"),
    case("Conv3D", name="Conv3D-no-in-channels", input=normal((1, 4, 4, 4, 0)),
         filter=normal((2, 2, 2, 0, 3)), strides=S1, padding="SAME"),
    case("Conv3D", name="Conv3D-no-out-channels", input=SMALL, filter=normal((2, 2, 2, 2, 0)),
         strides=S1, padding="SAME"),
    case("Conv3D", name="Conv3D-empty-filter-depth", input=SMALL, filter=normal((0, 2, 2, 2, 3)),
         strides=S1, padding="SAME"),
    # Conv3D errors
    case("Conv3D", name="Conv3D-rank4-input", input=normal((4, 4, 4, 2)), filter=FILTER,
         strides=S1, padding="SAME"),
    case("Conv3D", name="Conv3D-rank6-input", input=normal((1, 1, 4, 4, 4, 2)), filter=FILTER,
         strides=S1, padding="SAME"),
    case("Conv3D", name="Conv3D-rank4-filter", input=SMALL, filter=normal((2, 2, 2, 2)),
         strides=S1, padding="SAME"),
    case("Conv3D", name="Conv3D-depth-mismatch", input=SMALL, filter=normal((2, 2, 2, 3, 3)),
         strides=S1, padding="SAME"),
    case("Conv3D", name="Conv3D-strides-batch", input=SMALL, filter=FILTER,
         strides=[2, 1, 1, 1, 1], padding="SAME"),
    case("Conv3D", name="Conv3D-strides-channel", input=SMALL, filter=FILTER,
         strides=[1, 1, 1, 1, 2], padding="SAME"),
    case("Conv3D", name="Conv3D-stride-0", input=SMALL, filter=FILTER, strides=[1, 0, 1, 1, 1],
         padding="SAME"),
    case("Conv3D", name="Conv3D-stride-negative", input=SMALL, filter=FILTER,
         strides=[1, 1, -1, 1, 1], padding="VALID"),
    case("Conv3D", name="Conv3D-6-strides", input=SMALL, filter=FILTER, strides=[1] * 6,
         padding="SAME"),
    case("Conv3D", name="Conv3D-4-dilations", input=SMALL, filter=FILTER, strides=S1,
         dilations=[1, 1, 1, 1], padding="SAME"),
    case("Conv3D", name="Conv3D-dilation-channel", input=SMALL, filter=FILTER, strides=S1,
         dilations=[1, 1, 1, 1, 2], padding="SAME"),
    case("Conv3D", name="Conv3D-dilation-0", input=SMALL, filter=FILTER, strides=S1,
         dilations=[1, 0, 1, 1, 1], padding="SAME"),
    case("Conv3D", name="Conv3D-int32", input=np.ones((1, 2, 2, 2, 1), i32),
         filter=np.ones((1, 1, 1, 1, 1), i32), strides=S1, padding="SAME"),
    case("Conv3D", name="Conv3D-EXPLICIT", input=SMALL, filter=FILTER, strides=S1,
         padding="EXPLICIT"),
    case("Conv3D", name="Conv3D-NHWC", input=SMALL, filter=FILTER, strides=S1, padding="SAME",
         data_format="NHWC"),
    # MaxPool3D and AvgPool3D values: windows, strides, SAME windows cut by the border
    *[
        c
        for op in ["MaxPool3D", "AvgPool3D"]
        for c in [
            case(op, name=f"{op}-VALID", input=VOLUME, ksize=K2, strides=S2, padding="VALID"),
            case(op, name=f"{op}-SAME", input=normal((1, 5, 4, 7, 2)), ksize=[1, 3, 2, 3, 1],
                 strides=[1, 2, 1, 2, 1], padding="SAME"),
            case(op, name=f"{op}-SAME-overlapping", input=normal((2, 3, 4, 3, 3)),
                 ksize=[1, 2, 3, 2, 1], strides=S1, padding="SAME"),
            case(op, name=f"{op}-window-larger-SAME", input=normal((1, 2, 2, 2, 1)),
                 ksize=[1, 3, 3, 3, 1], strides=S1, padding="SAME"),
            case(op, name=f"{op}-window-larger-VALID", input=SMALL, ksize=[1, 5, 2, 2, 1],
                 strides=S1, padding="VALID"),
            case(op, name=f"{op}-window-larger-VALID-s2", input=SMALL, ksize=[1, 5, 2, 2, 1],
                 strides=S2, padding="VALID"),
            case(op, name=f"{op}-empty-batch", input=normal((0, 4, 4, 4, 2)), ksize=K2,
                 strides=S1, padding="SAME"),
            case(op, name=f"{op}-empty-depth", input=normal((1, 0, 4, 4, 2)), ksize=K2,
                 strides=S1, padding="SAME"),
            case(op, name=f"{op}-no-channels", input=normal((1, 4, 4, 4, 0)), ksize=K2,
                 strides=S1, padding="SAME"),
            case(op, name=f"{op}-rank4", input=normal((4, 4, 4, 2)), ksize=K2, strides=S1,
                 padding="SAME"),
            case(op, name=f"{op}-rank6", input=normal((1, 1, 4, 4, 4, 2)), ksize=K2,
                 strides=S1, padding="SAME"),
            case(op, name=f"{op}-ksize-batch", input=SMALL, ksize=[2, 2, 2, 2, 1], strides=S1,
                 padding="SAME"),
            case(op, name=f"{op}-ksize-channel", input=SMALL, ksize=[1, 2, 2, 2, 2], strides=S1,
                 padding="SAME"),
            case(op, name=f"{op}-stride-channel", input=SMALL, ksize=K2,
                 strides=[1, 1, 1, 1, 2], padding="SAME"),
            case(op, name=f"{op}-stride-batch", input=SMALL, ksize=K2, strides=[2, 1, 1, 1, 1],
                 padding="SAME"),
            case(op, name=f"{op}-ksize-0", input=SMALL, ksize=[1, 0, 2, 2, 1], strides=S1,
                 padding="SAME"),
            case(op, name=f"{op}-stride-0", input=SMALL, ksize=K2, strides=[1, 1, 0, 1, 1],
                 padding="SAME"),
            case(op, name=f"{op}-6-ksize", input=SMALL, ksize=[1] * 6, strides=S1,
                 padding="SAME"),
            case(op, name=f"{op}-6-strides", input=SMALL, ksize=K2, strides=[1] * 6,
                 padding="SAME"),
            case(op, name=f"{op}-EXPLICIT", input=SMALL, ksize=K2, strides=S1,
                 padding="EXPLICIT"),
        ]
    ],
    case("MaxPool3D", name="MaxPool3D-f64", input=SMALL.astype(f64), ksize=K2, strides=S1,
         padding="SAME"),
    case("AvgPool3D", name="AvgPool3D-int32", input=np.ones((1, 2, 2, 2, 1), i32), ksize=K2,
         strides=S1, padding="SAME"),
]  # fmt: skip
