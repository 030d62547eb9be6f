"""Writes tests/fixtures/training/mlp.npz: what users train first, a 2-layer perceptron,
and the gradients TensorFlow 2.21's graph mode gives it.

Run by hand, with TensorFlow 2.21 in a scratch virtual environment (never a dependency of
minigraph), from the repository root::

    /tmp/tfvenv/bin/python tests/tf_oracle/make_training_fixtures.py

The model, in tf.compat.v1 graph mode: ``logits = bias_add(relu(bias_add(x @ w1, b1)) @ w2,
b2)``, ``loss = reduce_mean(sparse_softmax_cross_entropy_with_logits(labels, logits))``,
and ``tf.compat.v1.gradients(loss, [w1, b1, w2, b2, x])``, in float32 and float64. Stored
per dtype: the inputs, the loss, the five gradients, and the op types of TensorFlow's
gradient graph (``<dtype>/grad_ops``, a JSON list). tests/test_nn_grad.py builds the same
model with minigraph and compares.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "training"
v1 = tf.compat.v1
PARAMS = ["w1", "b1", "w2", "b2", "x"]


def mlp(dtype: type, rng: np.random.Generator) -> dict[str, np.ndarray]:
    batch, features, hidden, classes = 6, 4, 5, 3
    values = {
        "x": rng.standard_normal((batch, features)),
        "w1": rng.standard_normal((features, hidden)) / 2,
        "b1": rng.standard_normal(hidden) / 4,
        "w2": rng.standard_normal((hidden, classes)) / 2,
        "b2": rng.standard_normal(classes) / 4,
    }
    values = {k: v.astype(dtype) for k, v in values.items()}
    values["labels"] = rng.integers(0, classes, batch).astype(np.int64)
    g = tf.Graph()
    with g.as_default():
        t = {k: tf.constant(v, name=k) for k, v in values.items()}
        hidden_out = tf.nn.relu(tf.nn.bias_add(tf.matmul(t["x"], t["w1"]), t["b1"]))
        logits = tf.nn.bias_add(tf.matmul(hidden_out, t["w2"]), t["b2"])
        losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=t["labels"], logits=logits)
        loss = tf.reduce_mean(losses)
        before = {op.name for op in g.get_operations()}
        grads = v1.gradients(loss, [t[k] for k in PARAMS])
        grad_ops = sorted(op.type for op in g.get_operations() if op.name not in before)
        with v1.Session(graph=g) as sess:
            loss_value, grad_values = sess.run([loss, grads])
    name = np.dtype(dtype).name
    out = {f"{name}/in/{k}": v for k, v in values.items()}
    out[f"{name}/loss"] = np.asarray(loss_value)
    out.update({f"{name}/grad/{k}": v for k, v in zip(PARAMS, grad_values)})
    out[f"{name}/grad_ops"] = np.array(json.dumps(grad_ops))
    return out


def main() -> None:
    rng = np.random.default_rng(2027)
    arrays: dict[str, np.ndarray] = {}
    for dtype in (np.float32, np.float64):
        arrays.update(mlp(dtype, rng))
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "mlp.npz"
    np.savez_compressed(path, **arrays)
    print(f"{path}: {len(arrays)} arrays, {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
