"""Gradients of the convolutions, pooling and batch norm (ops/conv_grad.py), computed by
TensorFlow 2.21: family "conv" of make_grad_fixtures.py: SAME, VALID and EXPLICIT padding,
strides, depthwise filters, and the backprop ops' own gradients (what second-order
gradients build). Left out, as TF's CPU kernels refuse their gradients
(tests/test_conv_grad.py checks them against finite differences and the adjoint identity
instead): NCHW, dilated and grouped Conv2D."""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(27)
f16, f32, f64, i32 = np.float16, np.float32, np.float64, np.int32
S1, S2 = [1, 1, 1, 1], [1, 2, 2, 1]


def normal(shape, dtype=f64):
    return rng.standard_normal(shape).astype(dtype)


def sizes(*dims):
    return np.array(dims, i32)


def conv(name, x, w, dtype=f64, **attrs):
    return case(
        "Conv2D", name=f"Conv2D {name}", input=normal(x, dtype), filter=normal(w, dtype), **attrs
    )


def depthwise(name, x, w, dtype=f64, **attrs):
    return case(
        "DepthwiseConv2dNative",
        name=f"Depthwise {name}",
        input=normal(x, dtype),
        filter=normal(w, dtype),
        **attrs,
    )


def backprop_input(op, x, w, g, dtype=f64, **attrs):
    return case(
        op, input_sizes=sizes(*x), filter=normal(w, dtype), out_backprop=normal(g, dtype), **attrs
    )


def backprop_filter(op, x, w, g, dtype=f64, **attrs):
    return case(
        op, input=normal(x, dtype), filter_sizes=sizes(*w), out_backprop=normal(g, dtype), **attrs
    )


def bn(name, shape, dtype=f32, **attrs):
    """FusedBatchNormV3 of an input of ``shape`` (its channels by data_format)."""
    channels = shape[1] if attrs.get("data_format", "NHWC").startswith("NC") else shape[-1]
    stats = channels if not attrs["is_training"] or "exponential_avg_factor" in attrs else 0
    return case("FusedBatchNormV3", name=f"FusedBatchNormV3 {name}", x=normal(shape, dtype),
                scale=normal([channels], f32), offset=normal([channels], f32),
                mean=normal([stats], f32), variance=np.abs(normal([stats], f32)) + 0.5,
                **attrs)  # fmt: skip


EXPLICIT = {"padding": "EXPLICIT"}
TIES = rng.integers(-2, 3, [1, 4, 4, 2]).astype(f64)


def max_pool_2x2(x):
    """MaxPool of ``x`` with a 2x2 window, stride 1, SAME (one pad row and column after)."""
    padded = np.pad(x, [(0, 0), (0, 1), (0, 1), (0, 0)], constant_values=-np.inf)
    h, w = x.shape[1:3]
    return np.max([padded[:, i : i + h, j : j + w] for i in (0, 1) for j in (0, 1)], axis=0)


CASES = [
    conv("VALID", [2, 5, 5, 2], [3, 3, 2, 3], strides=S1, padding="VALID"),
    conv("SAME stride 2", [2, 6, 5, 3], [3, 2, 3, 4], f32, strides=S2, padding="SAME"),
    conv(
        "EXPLICIT",
        [1, 4, 5, 2],
        [2, 3, 2, 2],
        strides=[1, 2, 1, 1],
        **EXPLICIT,
        explicit_paddings=[0, 0, 1, 2, 2, 0, 0, 0],
    ),
    conv("1x1", [3, 2, 2, 5], [1, 1, 5, 2], f32, strides=S1, padding="VALID"),
    conv("empty batch", [0, 4, 4, 2], [3, 3, 2, 2], strides=S1, padding="SAME"),
    conv("wrt filter", [2, 4, 4, 2], [2, 2, 2, 3], strides=S2, padding="VALID", wrt=["filter"]),
    backprop_input(
        "Conv2DBackpropInput", [2, 5, 6, 2], [3, 3, 2, 3], [2, 3, 3, 3], strides=S2, padding="SAME"
    ),
    backprop_input(
        "Conv2DBackpropInput",
        [1, 5, 5, 2],
        [2, 2, 2, 2],
        [1, 5, 4, 2],
        f32,
        strides=S1,
        **EXPLICIT,
        explicit_paddings=[0, 0, 1, 0, 0, 0, 0, 0],
    ),
    backprop_filter(
        "Conv2DBackpropFilter",
        [2, 5, 5, 2],
        [3, 3, 2, 3],
        [2, 3, 3, 3],
        strides=S1,
        padding="VALID",
    ),
    backprop_filter(
        "Conv2DBackpropFilter",
        [1, 6, 5, 3],
        [2, 3, 3, 2],
        [1, 3, 3, 2],
        f32,
        strides=S2,
        padding="SAME",
    ),
    depthwise("SAME", [2, 5, 5, 3], [3, 3, 3, 2], strides=S1, padding="SAME"),
    depthwise("VALID stride 2", [1, 6, 7, 2], [2, 3, 2, 1], f32, strides=S2, padding="VALID"),
    depthwise(
        "EXPLICIT",
        [1, 4, 4, 2],
        [3, 2, 2, 2],
        strides=S1,
        **EXPLICIT,
        explicit_paddings=[0, 0, 2, 1, 0, 1, 0, 0],
    ),
    backprop_input(
        "DepthwiseConv2dNativeBackpropInput",
        [2, 5, 5, 2],
        [3, 3, 2, 2],
        [2, 3, 3, 4],
        strides=S2,
        padding="SAME",
    ),
    backprop_filter(
        "DepthwiseConv2dNativeBackpropFilter",
        [2, 5, 4, 3],
        [2, 2, 3, 2],
        [2, 4, 3, 6],
        strides=S1,
        padding="VALID",
    ),
    # pooling: MaxPool's gradient goes to TF's pick of each window (ties to the first)
    case(
        "MaxPool",
        name="MaxPool ties SAME",
        input=rng.integers(-2, 3, [2, 5, 5, 3]).astype(f32),
        ksize=[1, 3, 3, 1],
        strides=S1,
        padding="SAME",
    ),  # fmt: skip
    case(
        "MaxPool",
        name="MaxPool VALID stride 2",
        input=normal([2, 6, 6, 2]),
        ksize=[1, 2, 2, 1],
        strides=S2,
        padding="VALID",
    ),  # fmt: skip
    case(
        "MaxPool",
        name="MaxPool EXPLICIT",
        input=normal([1, 4, 5, 2]),
        ksize=[1, 2, 3, 1],
        strides=[1, 1, 2, 1],
        padding="EXPLICIT",
        explicit_paddings=[0, 0, 1, 0, 1, 1, 0, 0],
    ),  # fmt: skip
    case(
        "AvgPool",
        name="AvgPool SAME",
        value=normal([2, 5, 5, 3]),
        ksize=[1, 3, 3, 1],
        strides=S2,
        padding="SAME",
    ),  # fmt: skip
    case(
        "AvgPool",
        name="AvgPool VALID float32",
        value=normal([1, 4, 6, 2], f32),
        ksize=[1, 2, 3, 1],
        strides=[1, 2, 1, 1],
        padding="VALID",
    ),  # fmt: skip
    # the pooling gradients' own gradients
    case(
        "MaxPoolGrad",
        name="MaxPoolGrad",
        orig_input=TIES,
        orig_output=max_pool_2x2(TIES),
        grad=normal([1, 4, 4, 2]),
        ksize=[1, 2, 2, 1],
        strides=S1,
        padding="SAME",
    ),  # fmt: skip
    case(
        "AvgPoolGrad",
        name="AvgPoolGrad",
        orig_input_shape=sizes(2, 5, 5, 2),
        grad=normal([2, 3, 3, 2]),
        ksize=[1, 3, 3, 1],
        strides=S2,
        padding="SAME",
    ),  # fmt: skip
    # batch norm: training reads the forward op's saved batch statistics, inference the
    # population mean and variance (NCHW through transposes); mean and variance get none.
    # 5-D inputs are left out: TF's CPU gives them a scalar reserve_space_3 (minigraph's is
    # empty, as its oneDNN kernel's for 4-D), which the fixture would weight by a scalar dy
    # (tests/test_conv_grad.py checks them against the 4-D ones).
    bn("training", [2, 3, 4, 3], is_training=True),
    bn("training NCHW", [2, 3, 3, 4], is_training=True, data_format="NCHW"),
    bn("training float16", [2, 2, 3, 3], f16, is_training=True, epsilon=0.01),
    bn("training moving averages", [3, 2, 2, 2], is_training=True, exponential_avg_factor=0.3),
    bn("inference", [2, 3, 3, 3], is_training=False),
    bn("inference NCHW", [2, 3, 2, 3], is_training=False, data_format="NCHW", epsilon=0.1),
]
