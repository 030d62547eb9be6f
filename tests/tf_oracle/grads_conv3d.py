"""Gradients of the 3-D convolution and pooling ops (ops/conv3d_grad.py), computed by
TensorFlow 2.21: family "conv3d" of make_grad_fixtures.py: Conv3D (VALID/SAME, strides,
dilations in float32, which TensorFlow's default oneDNN kernels run), its backprop ops' own
gradients, MaxPool3D (ties: TensorFlow's eager CPU kernel gives every equal max the
gradient), AvgPool3D and the pooling gradients' gradients. Left out, as TensorFlow's CPU
refuses them (tests/test_conv3d_grad.py checks them against finite differences): NCDHW,
dilations in float64 (the reference kernel's) and float64 pooling (no CPU kernel)."""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(333)
f32, f64, i32 = np.float32, np.float64, np.int32
S1, S2 = [1, 1, 1, 1, 1], [1, 2, 2, 2, 1]
K2 = [1, 2, 2, 2, 1]


def normal(shape, dtype=f64):
    return rng.standard_normal(shape).astype(dtype)


def ties(shape, dtype=f64):
    return rng.integers(-2, 3, shape).astype(dtype)


def sizes(*dims):
    return np.array(dims, i32)


def conv(name, x, w, dtype=f64, **attrs):
    return case(
        "Conv3D", name=f"Conv3D {name}", input=normal(x, dtype), filter=normal(w, dtype), **attrs
    )


def pool(op, name, x, **attrs):
    return case(op, name=f"{op} {name}", input=x, **attrs)


def max_pool3d(x):
    """MaxPool3D of ``x`` with a 2x2x2 window, stride 1, VALID."""
    d, h, w = (size - 1 for size in x.shape[1:4])
    taps = [x[:, i : i + d, j : j + h, k : k + w] for i in (0, 1) for j in (0, 1) for k in (0, 1)]
    return np.max(taps, axis=0)


TIES = ties([1, 3, 4, 3, 2], f32)

CASES = [
    conv("VALID", [2, 4, 4, 3, 2], [2, 3, 2, 2, 3], strides=S1, padding="VALID"),
    conv("SAME stride 2", [1, 5, 4, 5, 3], [3, 2, 3, 3, 2], f32, strides=S2, padding="SAME"),
    conv(
        "unequal strides", [1, 5, 6, 4, 2], [2, 2, 3, 2, 2], strides=[1, 2, 1, 3, 1], padding="SAME"
    ),
    conv(
        "dilated float32",
        [1, 5, 5, 4, 2],
        [2, 2, 2, 2, 3],
        f32,
        strides=S1,
        padding="SAME",
        dilations=[1, 2, 1, 2, 1],
    ),
    conv("empty batch", [0, 3, 3, 3, 2], [2, 2, 2, 2, 2], strides=S1, padding="SAME"),
    conv(
        "wrt filter", [2, 4, 4, 4, 2], [2, 2, 2, 2, 3], strides=S2, padding="VALID", wrt=["filter"]
    ),
    case(
        "Conv3DBackpropInputV2",
        name="Conv3DBackpropInputV2",
        input_sizes=sizes(2, 4, 5, 4, 2),
        filter=normal([2, 3, 2, 2, 3]),
        out_backprop=normal([2, 2, 3, 2, 3]),
        strides=S2,
        padding="SAME",
    ),
    case(
        "Conv3DBackpropFilterV2",
        name="Conv3DBackpropFilterV2",
        input=normal([2, 4, 4, 3, 2]),
        filter_sizes=sizes(2, 2, 2, 2, 3),
        out_backprop=normal([2, 3, 3, 2, 3]),
        strides=S1,
        padding="VALID",
    ),
    pool(
        "MaxPool3D", "ties VALID", ties([2, 3, 4, 3, 2], f32), ksize=K2, strides=S1, padding="VALID"
    ),
    pool(
        "MaxPool3D",
        "SAME stride 2",
        normal([1, 5, 4, 5, 2], f32),
        ksize=[1, 3, 2, 3, 1],
        strides=S2,
        padding="SAME",
    ),
    pool(
        "AvgPool3D",
        "SAME stride 2",
        normal([2, 5, 4, 5, 2], f32),
        ksize=[1, 3, 2, 3, 1],
        strides=S2,
        padding="SAME",
    ),
    pool(
        "AvgPool3D",
        "VALID float32",
        normal([1, 4, 4, 4, 3], f32),
        ksize=K2,
        strides=S1,
        padding="VALID",
    ),
    case(
        "MaxPool3DGrad",
        name="MaxPool3DGrad",
        orig_input=TIES,
        orig_output=max_pool3d(TIES),
        grad=normal([1, 2, 3, 2, 2], f32),
        ksize=K2,
        strides=S1,
        padding="VALID",
    ),
    case(
        "MaxPool3DGradGrad",
        name="MaxPool3DGradGrad",
        orig_input=TIES,
        orig_output=max_pool3d(TIES),
        grad=normal([1, 3, 4, 3, 2], f32),
        ksize=K2,
        strides=S1,
        padding="VALID",
    ),
    case(
        "AvgPool3DGrad",
        name="AvgPool3DGrad",
        orig_input_shape=sizes(2, 5, 4, 5, 2),
        grad=normal([2, 3, 2, 3, 2], f32),
        ksize=[1, 3, 2, 3, 1],
        strides=S2,
        padding="SAME",
    ),
]
