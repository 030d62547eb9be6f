"""The convolution layers' gradient ops on Keras-sized batches, against TensorFlow.

    python benchmarks/grad_ops.py [--repeat 7] [--only MaxPoolGrad]
        [--peers-python /path/to/tf/venv/bin/python]

Cases: MaxPoolGrad of a Keras MaxPooling2D (2x2, stride 2) and of a ResNet stem (3x3,
stride 2, SAME), AvgPoolGrad, and FusedBatchNormGradV3 in training (a BatchNormalization
layer's backward pass), float32 NHWC on [32, 56, 56, 64] (a ResNet stage). Each op runs
fed from placeholders (nothing folded); TensorFlow runs the same GraphDef in a worker
process (benchmarks/peers.py: tf.compat.v1.Session and a concrete function, its default
oneDNN CPU kernels), interleaved with minigraph (timing.interleaved_seconds). Reported:
median milliseconds, and minigraph over the best TF mode (median of per-round ratios).
TF's outputs are checked against minigraph's within 1e-3 (TF's float32 sums of 100,352
values a channel drift by 5e-4 relative in batch norm's scale gradient; minigraph's, summed
in two levels, by 4e-7).

Measured on this project's 2-core VM (TF 2.21, its default oneDNN kernels, --repeat 9,
other work running; mg/best is minigraph over the faster TF mode):

    case                             minigraph ms TF sess ms  tf.fn ms  mg/best
    MaxPoolGrad 2x2/2 VALID                  31.0       39.0      57.7     0.80
    MaxPoolGrad 3x3/2 SAME                   52.4       63.5      83.7     0.82
    AvgPoolGrad 3x3/2 SAME                   18.9        7.8      15.8     2.44
    FusedBatchNormGradV3 training            28.8       12.0      27.4     2.45
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np
import peers
from timing import interleaved_seconds, median_ratio, timer

import minigraph as mg
from minigraph.wrappers import apply_op

SHAPE = (32, 56, 56, 64)


def _max_pool_grad(k: int, padding: str) -> Callable[[], tuple[Any, dict]]:
    def build() -> tuple[Any, dict]:
        rng = np.random.default_rng(0)
        x = rng.standard_normal(SHAPE, np.float32)
        attrs = {"ksize": [1, k, k, 1], "strides": [1, 2, 2, 1], "padding": padding}
        g = mg.Graph()
        with g.as_default():
            y = mg.Session(g).run(apply_op("MaxPool", None, [x], attrs).outputs[0])
        dy = rng.standard_normal(y.shape, np.float32)
        phs = [mg.placeholder(mg.float32, a.shape) for a in (x, y, dy)]
        out = apply_op("MaxPoolGrad", None, phs, attrs).outputs[0]
        return out, dict(zip(phs, (x, y, dy)))

    return build


def _avg_pool_grad() -> tuple[Any, dict]:
    dy = np.random.default_rng(1).standard_normal((32, 28, 28, 64), np.float32)
    ph = mg.placeholder(mg.float32, dy.shape)
    attrs = {"ksize": [1, 3, 3, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}
    out = apply_op("AvgPoolGrad", None, [np.array(SHAPE, np.int32), ph], attrs).outputs[0]
    return out, {ph: dy}


def _batch_norm_grad() -> tuple[Any, dict]:
    rng = np.random.default_rng(2)
    x = rng.standard_normal(SHAPE, np.float32)
    dy = rng.standard_normal(SHAPE, np.float32)
    scale = rng.standard_normal(SHAPE[-1]).astype(np.float32)
    mean, var = x.mean((0, 1, 2)), x.var((0, 1, 2))
    values = [dy, x, scale, mean, var]
    phs = [mg.placeholder(mg.float32, a.shape) for a in values]
    attrs = {"epsilon": 0.001, "is_training": True}
    inputs = [*phs, np.zeros(0, np.float32)]
    outs = apply_op("FusedBatchNormGradV3", None, inputs, attrs).outputs[:3]
    return outs, dict(zip(phs, values))


CASES = {
    "MaxPoolGrad 2x2/2 VALID": _max_pool_grad(2, "VALID"),
    "MaxPoolGrad 3x3/2 SAME": _max_pool_grad(3, "SAME"),
    "AvgPoolGrad 3x3/2 SAME": _avg_pool_grad,
    "FusedBatchNormGradV3 training": _batch_norm_grad,
}


def _check(name: str, got: Any, want: Any) -> None:
    for a, b in zip(got if isinstance(got, list) else [got], want):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-3, err_msg=name)  # TF: float32 sums


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    parser.add_argument("--peers-python", default=None, help="a Python that has TensorFlow")
    args = parser.parse_args()
    tf = peers.TFPeer.start(args.peers_python)
    head = f"{'case':<32} {'minigraph ms':>12}"
    if tf is not None:
        head += f" {'TF sess ms':>10} {'tf.fn ms':>9} {'mg/best':>8}"
    print(f"input {list(SHAPE)} float32\n{head}", flush=True)
    for name, build in CASES.items():
        if args.only not in name:
            continue
        g = mg.Graph()
        with g.as_default():
            fetch, feeds = build()
        feeds = {k: peers.aligned(v) for k, v in feeds.items()}
        sess = mg.Session(g)
        result = sess.run(fetch, feeds)
        contenders = [timer("minigraph", lambda s=sess, f=fetch, d=feeds: s.run(f, d))]
        peer = None
        if tf is not None:
            peer = tf.prepare(g, feeds, fetch if isinstance(fetch, list) else [fetch])
            for mode, values in peer.outputs.items():
                _check(f"{name} (TF {mode})", result, values)
            peer.outputs.clear()
            contenders.append(peer.time)
        t = interleaved_seconds(args.repeat, contenders, name)
        if peer is not None:
            peer.release()
        med = {k: float(np.median(v)) * 1e3 for k, v in t.items()}
        line = f"{name:<32} {med['minigraph']:>12.1f}"
        if peer is not None:
            best = [min(r) for r in zip(t["session"], t["function"])]
            line += f" {med['session']:>10.1f} {med['function']:>9.1f}"
            line += f" {median_ratio(t['minigraph'], best):>8.2f}"
        print(line, flush=True)
    if tf is not None:
        tf.close()


if __name__ == "__main__":
    main()
