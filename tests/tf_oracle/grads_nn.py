"""Gradients of the neural-network ops (ops/nn_grad.py), computed by TensorFlow 2.21: family
"nn" of make_grad_fixtures.py. The activations' gradient ops (ReluGrad...) and BiasAddGrad
are differentiated too: their gradients are the second derivatives. Values keep clear of
the kinks (0, and 6 for Relu6), where a finite difference and a gradient part ways.

SoftmaxCrossEntropyWithLogits is differentiated with respect to its features only:
TensorFlow's gradient for its labels drops the gradient of the backprop output (which every
case here weights), and minigraph's keeps it (see ops/nn_grad.py; tests/test_nn_grad.py
checks it by finite differences).
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(11)
f16, f32, f64 = np.float16, np.float32, np.float64


def normal(shape, dtype=f64, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(dtype)


def away(shape, dtype=f64, kinks=(0.0,)):
    """Normal values, moved at least 0.1 away from each kink."""
    x = np.asarray(3 * rng.standard_normal(shape))
    for k in kinks:
        near = np.abs(x - k) < 0.1
        x[near] = k + np.where(x[near] < k, -0.5, 0.5)
    return x.astype(dtype)


def probabilities(shape, dtype=f64):
    p = rng.random(shape)
    return (p / p.sum(axis=-1, keepdims=True)).astype(dtype)


ACTIVATIONS = ["Relu", "Elu", "Selu", "Softplus"]
# (grad op, its second input: the forward op's features or outputs)
GRAD_OPS = [
    ("ReluGrad", "features"),
    ("Relu6Grad", "features"),
    ("EluGrad", "outputs"),
    ("SeluGrad", "outputs"),
    ("SoftplusGrad", "features"),
]

CASES = [
    *[case(op, features=away([2, 3], dt)) for op in ACTIVATIONS for dt in (f32, f64)],
    case("Relu", name="Relu float16", features=away([4], f16)),
    case("Relu", name="Relu empty", features=away([0, 3])),
    case("Relu", name="Relu scalar", features=away([])),
    case("Elu", name="Elu 3-D", features=away([2, 2, 2])),
    case("Relu6", features=away([3, 4], f32, kinks=(0.0, 6.0))),
    case("Relu6", features=away([2, 5], f64, kinks=(0.0, 6.0))),
    case("LeakyRelu", features=away([2, 3], f32), alpha=0.3),
    case("LeakyRelu", name="LeakyRelu default alpha", features=away([5])),
    *[
        case(op, gradients=normal([2, 3], dt), **{second: away([2, 3], dt, kinks=(0.0, 6.0))})
        for op, second in GRAD_OPS
        for dt in (f32, f64)
    ],
    case("LeakyReluGrad", gradients=normal([2, 3]), features=away([2, 3]), alpha=0.1),
    case(
        "LeakyReluGrad",
        name="LeakyReluGrad f32",
        gradients=normal([4], f32),
        features=away([4], f32),
    ),
    case("EluGrad", name="EluGrad empty", gradients=normal([0, 2]), outputs=away([0, 2])),
    # BiasAdd and BiasAddGrad
    case("BiasAdd", value=normal([3, 4], f32), bias=normal([4], f32)),
    case("BiasAdd", name="BiasAdd 4-D", value=normal([2, 2, 3, 4]), bias=normal([4])),
    case(
        "BiasAdd",
        name="BiasAdd NCHW",
        value=normal([2, 3, 2, 2]),
        bias=normal([3]),
        data_format="NCHW",
    ),
    case(
        "BiasAdd",
        name="BiasAdd NCHW 3-D",
        value=normal([2, 3, 4], f32),
        bias=normal([3], f32),
        data_format="NCHW",
    ),
    case("BiasAdd", name="BiasAdd empty batch", value=normal([0, 3]), bias=normal([3])),
    case("BiasAddGrad", out_backprop=normal([3, 4], f32)),
    case("BiasAddGrad", name="BiasAddGrad 4-D", out_backprop=normal([2, 2, 3, 4])),
    case(
        "BiasAddGrad",
        name="BiasAddGrad NCHW",
        out_backprop=normal([2, 3, 2, 2]),
        data_format="NCHW",
    ),
    case(
        "BiasAddGrad",
        name="BiasAddGrad NCHW 3-D",
        out_backprop=normal([2, 3, 4], f32),
        data_format="NCHW",
    ),
    # Softmax, LogSoftmax
    *[case(op, logits=normal([3, 4], dt)) for op in ("Softmax", "LogSoftmax") for dt in (f32, f64)],
    case("Softmax", name="Softmax 1-D", logits=normal([5])),
    case("Softmax", name="Softmax 3-D", logits=normal([2, 2, 3])),
    case("Softmax", name="Softmax float16", logits=normal([2, 3], f16)),
    case("LogSoftmax", name="LogSoftmax 3-D", logits=normal([2, 3, 2], f32)),
    case("LogSoftmax", name="LogSoftmax empty", logits=normal([0, 3])),
    # losses
    case("L2Loss", t=normal([3, 4], f32)),
    case("L2Loss", name="L2Loss 3-D", t=normal([2, 2, 3])),
    case("L2Loss", name="L2Loss scalar", t=normal([])),
    case("L2Loss", name="L2Loss empty", t=normal([0, 2])),
    case(
        "SoftmaxCrossEntropyWithLogits",
        features=normal([3, 4], f32),
        labels=probabilities([3, 4], f32),
        wrt=["features"],
    ),
    case(
        "SoftmaxCrossEntropyWithLogits",
        name="SoftmaxCrossEntropyWithLogits f64",
        features=normal([2, 5]),
        labels=probabilities([2, 5]),
        wrt=["features"],
    ),
    case(
        "SparseSoftmaxCrossEntropyWithLogits",
        features=normal([4, 3], f32),
        labels=np.array([0, 2, 1, 2], np.int64),
    ),
    case(
        "SparseSoftmaxCrossEntropyWithLogits",
        name="SparseSoftmaxCrossEntropyWithLogits int32",
        features=normal([3, 5]),
        labels=np.array([4, 0, 1], np.int32),
    ),
]
