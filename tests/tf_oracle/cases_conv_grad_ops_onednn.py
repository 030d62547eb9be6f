"""AvgPoolGrad with SAME windows larger than the input, run by TensorFlow 2.21's default
oneDNN CPU kernel (float32; see make_op_fixtures.py): family "conv_grad_ops_onednn".
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


CASES = [
    avg_grad([1, 1, 6, 1], [1, 1, 8, 1], [1, 1, 1, 1]),
    avg_grad([2, 6, 6, 2], [1, 8, 8, 1], [1, 1, 1, 1]),
    avg_grad([1, 5, 6, 3], [1, 7, 9, 1], [1, 2, 2, 1]),
    avg_grad([1, 3, 4, 1], [1, 6, 6, 1], [1, 1, 3, 1]),
]
