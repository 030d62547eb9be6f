"""AvgPoolGrad with SAME windows larger than the input and FusedBatchNormV3 in training,
run by TensorFlow 2.21's default oneDNN CPU kernels (float32; see make_op_fixtures.py):
family "conv_grad_ops_onednn".
TensorFlow's reference kernel spreads some of these windows over the wrong cells (its
GetBroadcastSize takes min(input, ksize) cells from 0 for a window that starts in the
padding); oneDNN divides each window by its cells inside the input, as AvgPool's forward
does and minigraph does. TF_ENV turns oneDNN on whatever the environment.
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

TF_ENV = {"TF_ENABLE_ONEDNN_OPTS": "1"}

rng = np.random.default_rng(2728)


def avg_grad(shape, ksize, strides):
    n, h, w, c = shape
    out = [n, -(-h // strides[1]), -(-w // strides[2]), c]
    return case("AvgPoolGrad", name=f"AvgPoolGrad {shape} ksize {ksize[1:3]} SAME",
                orig_input_shape=np.array(shape, np.int32),
                grad=rng.standard_normal(out).astype(np.float32), ksize=ksize, strides=strides,
                padding="SAME")  # fmt: skip


def bn(name, shape, stats=None, **attrs):
    """FusedBatchNormV3 in training: the forward op whose reserve spaces FusedBatchNormGradV3
    reads (oneDNN's reserve_space_3 is empty, as minigraph's; the reference kernel's is a
    scalar)."""
    channels = shape[1] if attrs.get("data_format", "NHWC").startswith("NC") else shape[-1]
    if stats is None:
        stats = channels if "exponential_avg_factor" in attrs else 0
    return case("FusedBatchNormV3", name=f"FusedBatchNormV3 {name}",
                x=rng.standard_normal(shape).astype(np.float32),
                scale=rng.standard_normal(channels).astype(np.float32),
                offset=rng.standard_normal(channels).astype(np.float32),
                mean=rng.standard_normal(stats).astype(np.float32),
                variance=rng.random(stats).astype(np.float32) + 0.5, is_training=True,
                **attrs)  # fmt: skip


CASES = [
    avg_grad([1, 1, 6, 1], [1, 1, 8, 1], [1, 1, 1, 1]),
    avg_grad([2, 6, 6, 2], [1, 8, 8, 1], [1, 1, 1, 1]),
    avg_grad([1, 5, 6, 3], [1, 7, 9, 1], [1, 2, 2, 1]),
    avg_grad([1, 3, 4, 1], [1, 6, 6, 1], [1, 1, 3, 1]),
    bn("training", [2, 3, 4, 3]),
    bn("training NCHW", [2, 3, 2, 3], data_format="NCHW", epsilon=0.01),
    bn("training moving averages", [3, 2, 2, 2], exponential_avg_factor=0.25),
    bn("training one value a channel", [1, 1, 1, 3]),
    bn("training empty", [0, 2, 2, 3]),
    bn(
        "training mean of 3 for 2 channels", [1, 2, 2, 2], exponential_avg_factor=0.5, stats=3
    ),  # fmt: skip
]
