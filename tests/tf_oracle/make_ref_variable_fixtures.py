"""Writes tests/fixtures/graphs/tf1_ref_variables.pb and .npz: a TensorFlow 1 graph with
reference variables (``VariableV2``, ``Assign``, ``AssignAdd``, ``AssignSub``,
``IsVariableInitialized``, ``ApplyGradientDescent``) and what TensorFlow computes with it.

Run by hand with TensorFlow 2.21 in a scratch virtual environment (never a dependency):
    /tmp/tfvenv/bin/python tests/tf_oracle/make_ref_variable_fixtures.py

The graph fits y = x @ w + b by least squares two ways: ``manual_step`` (tf.gradients, then
``assign_sub`` of each variable) and ``sgd_step`` (GradientDescentOptimizer, whose update is
ApplyGradientDescent); ``count`` is bumped by ``AssignAdd`` in both. The npz holds the feeds
and, per step of each way run from ``init`` in a fresh Session, the variables' values.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tensorflow as tf

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "graphs"
STEPS = 3


def build() -> tf.Graph:
    tf1 = tf.compat.v1
    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [None, 3], name="x")
        t = tf1.placeholder(tf.float32, [None, 1], name="t")
        w = tf1.Variable(np.float32([[0.5], [-0.25], [1.0]]), name="w", use_resource=False)
        b = tf1.Variable(np.float32([0.1]), name="b", use_resource=False)
        count = tf1.Variable(0, name="count", use_resource=False)
        y = tf.add(tf.matmul(x, w), b, name="y")
        loss = tf.reduce_mean(tf.square(y - t), name="loss")
        gw, gb = tf1.gradients(loss, [w, b])
        bump = tf1.assign_add(count, 1, name="bump")
        with tf.control_dependencies([bump]):
            tf.group(
                tf1.assign_sub(w, 0.1 * gw, name="step_w"),
                tf1.assign_sub(b, 0.1 * gb, name="step_b"),
                name="manual_step",
            )
        with tf.control_dependencies([bump]):
            tf1.train.GradientDescentOptimizer(0.1).minimize(loss, name="sgd_step")
        tf.identity(tf1.is_variable_initialized(w), name="w_ready")
        tf1.global_variables_initializer()  # "init"
    return g


def main() -> None:
    g = build()
    rng = np.random.default_rng(3)
    feeds = {"x:0": rng.standard_normal((8, 3)).astype(np.float32),
             "t:0": rng.standard_normal((8, 1)).astype(np.float32)}  # fmt: skip
    arrays = {f"feed/{k}": v for k, v in feeds.items()}
    for way in ("manual_step", "sgd_step"):
        with tf.compat.v1.Session(graph=g) as sess:
            arrays[f"{way}/ready_before"] = np.array(sess.run("w_ready:0"))
            sess.run("init")
            for step in range(STEPS):
                sess.run(way, feeds)
                for v in ("w", "b", "count"):
                    arrays[f"{way}/{step}/{v}"] = sess.run(f"{v}:0")
            arrays[f"{way}/loss"] = sess.run("loss:0", feeds)
    (OUT / "tf1_ref_variables.pb").write_bytes(g.as_graph_def().SerializeToString())
    np.savez_compressed(OUT / "tf1_ref_variables.npz", **arrays)
    print(sorted({n.op for n in g.as_graph_def().node}))


if __name__ == "__main__":
    main()
