"""Fine-tune the last layer of a frozen Keras CNN, with minigraph alone.

The model is the small Keras CNN that tests/tf_oracle/make_graph_fixtures.py froze with
TensorFlow (conv 3x3 -> relu -> max pool -> flatten -> dense 2), a GraphDef of constants.
``mg.graph_util.constants_to_variables`` turns the dense layer's kernel and bias back into
variables; the rest stays frozen. The labels come from a random "teacher" layer on the frozen
features, so the task is one the last layer can learn; a softmax cross-entropy loss,
``mg.gradients`` and plain gradient descent (``assign_sub``) train the two variables, and
the held-out loss and error fall.

Needs the tensorboard extra (GraphDef import). Run: python examples/finetune_keras.py
"""

from pathlib import Path

import numpy as np

import minigraph as mg

MODEL = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "graphs" / "keras_cnn.pb"
DENSE = "sequential_1_1/dense_2_1"
LAST_LAYER = [f"{DENSE}/Cast/ReadVariableOp/resource", f"{DENSE}/BiasAdd/ReadVariableOp/resource"]


FEATURES = "sequential_1_1/flatten_1/Reshape:0"


def synthetic_task(graph: mg.Graph, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random images, labelled by a random linear teacher on the frozen model's features."""
    rng = np.random.default_rng(seed)
    images = rng.random((n, 8, 8, 1), dtype=np.float32)
    features = mg.Session(graph).run(FEATURES, {"x:0": images})
    teacher = np.random.default_rng(42).standard_normal((features.shape[1], 2))
    scores = features @ teacher
    return images, (scores[:, 1] > scores[:, 0]).astype(np.int32)


def main() -> list[float]:
    frozen = mg.Graph()
    with frozen.as_default():
        mg.import_graph_def(str(MODEL), name="")
    graph = mg.graph_util.constants_to_variables(frozen, names=LAST_LAYER)
    kernel, bias = mg.trainable_variables(graph)
    with graph.as_default():
        logits = graph.get_tensor_by_name("Identity:0")
        labels = mg.placeholder(mg.int32, [None], name="labels")
        losses = mg.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        loss = mg.reduce_mean(losses)
        grad_kernel, grad_bias = mg.gradients(loss, [kernel, bias])
        train = [kernel.assign_sub(0.5 * grad_kernel), bias.assign_sub(0.5 * grad_bias)]
        init = mg.global_variables_initializer()

    train_images, train_labels = synthetic_task(frozen, 512, seed=0)
    test_images, test_labels = synthetic_task(frozen, 256, seed=1)
    with graph.as_default():
        wrong = mg.reduce_mean(
            mg.cast(mg.not_equal(mg.argmax(logits, 1, output_type=mg.int32), labels), mg.float32)
        )
    held_out = {"x:0": test_images, labels: test_labels}
    history = []
    with mg.Session(graph) as sess:
        sess.run(init)
        for step in range(201):
            batch = slice(64 * (step % 8), 64 * (step % 8 + 1))
            if step % 50 == 0:
                value, error = sess.run([loss, wrong], held_out)
                history.append(float(value))
                print(f"step {step:3d}: held-out loss {value:.4f}, error {error:.1%}")
            sess.run(train, {"x:0": train_images[batch], labels: train_labels[batch]})
    assert history[-1] < 0.7 * history[0], history  # the last layer learnt the task
    return history


if __name__ == "__main__":
    main()
