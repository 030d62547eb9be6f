"""Train a small perceptron with mg.train, as tf.compat.v1 graph-mode code does it.

Synthetic data: points in the plane labelled by which of three arcs they lie near. The
model (2 -> 32 -> 3, ReLU) is trained with Adam on mini-batches fed through placeholders;
the loss is printed every 50 steps, the weights are saved to a checkpoint (TensorFlow's
format, which tf.train.load_checkpoint reads) and restored into a new Session.
Run: python examples/train_mlp.py
"""

import os
import tempfile

import numpy as np

import minigraph as mg


def make_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    labels = rng.integers(0, 3, n)
    angle = rng.uniform(0, np.pi, n) + labels * 2 * np.pi / 3
    radius = 1 + 0.5 * labels + rng.normal(0, 0.1, n)
    points = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    return points.astype(np.float32), labels.astype(np.int64)


def dense(x: mg.Output, n_in: int, n_out: int, name: str, rng: np.random.Generator):
    with mg.name_scope(name):
        w = mg.Variable(
            rng.normal(0, np.sqrt(2 / n_in), (n_in, n_out)).astype(np.float32), name="w"
        )
        b = mg.Variable(np.zeros(n_out, np.float32), name="b")
    return mg.nn.bias_add(mg.matmul(x, w), b)


def main() -> None:
    rng = np.random.default_rng(0)
    train_x, train_y = make_data(rng, 2048)
    test_x, test_y = make_data(rng, 512)

    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, 2], name="x")
        y = mg.placeholder(mg.int64, [None], name="y")
        hidden = mg.nn.relu(dense(x, 2, 32, "hidden", rng))
        logits = dense(hidden, 32, 3, "logits", rng)
        loss = mg.reduce_mean(
            mg.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        )
        accuracy = mg.reduce_mean(mg.cast(mg.equal(mg.argmax(logits, 1), y), mg.float32))
        step = mg.train.get_or_create_global_step()
        train = mg.train.AdamOptimizer(0.02).minimize(loss, global_step=step)
        init = mg.global_variables_initializer()  # after minimize: covers Adam's slots
        saver = mg.train.Saver(max_to_keep=1)

    with tempfile.TemporaryDirectory() as folder:
        with mg.Session(g) as sess:
            sess.run(init)
            first = sess.run(loss, {x: train_x, y: train_y})
            for i in range(300):
                batch = rng.integers(0, len(train_x), 64)
                sess.run(train, {x: train_x[batch], y: train_y[batch]})
                if (i + 1) % 50 == 0:
                    value = sess.run(loss, {x: train_x, y: train_y})
                    print(f"step {sess.run(step):4d}  loss {value:.4f}")
            prefix = saver.save(sess, os.path.join(folder, "mlp"), global_step=step)
        print("saved", os.path.basename(prefix), [k for k, _ in mg.train.list_variables(prefix)])

        with mg.Session(g) as sess:  # a new Session: its values come from the checkpoint
            saver.restore(sess, mg.train.latest_checkpoint(folder))
            final, acc = sess.run([loss, accuracy], {x: test_x, y: test_y})
        print(f"restored: test loss {final:.4f} (from {first:.4f}), test accuracy {acc:.3f}")
    assert final < first / 3 and acc > 0.9


if __name__ == "__main__":
    main()
