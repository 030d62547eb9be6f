"""Run a frozen Keras model (a TensorFlow GraphDef) with minigraph, without TensorFlow.

The model is a small Keras CNN (Conv2D, MaxPool, Dense) that TensorFlow 2.21 froze with
convert_variables_to_constants_v2 (tests/tf_oracle/make_graph_fixtures.py); next to it is
TensorFlow's output for a committed input. This script lists the model's op types, imports
it under a name of our choosing with our own placeholder as its input, runs it on NumPy and
checks the result against TensorFlow's. It also writes the graph back out as a GraphDef.
Needs the tensorboard extra: pip install 'minigraph[tensorboard]'.
Run: python examples/tensorflow_graph.py
"""

import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

import minigraph as mg

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "graphs"


def main() -> None:
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        print("this example needs the tensorboard extra: pip install 'minigraph[tensorboard]'")
        return
    model = FIXTURES / "keras_cnn.pb"
    saved = np.load(FIXTURES / "keras_cnn.npz")
    images, expected = saved["feed/x:0"], saved["fetch/Identity:0"]

    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None, 8, 8, 1], name="images")
        (logits,) = mg.import_graph_def(
            str(model), input_map={"x:0": x}, return_elements=["Identity:0"], name="cnn"
        )
    ops = Counter(n.type_string for n in g.nodes() if n.name.startswith("cnn/"))
    print(f"imported {sum(ops.values())} nodes from {model.name}:", dict(sorted(ops.items())))
    print(f"logits: {logits.name}, shape {logits.shape}")

    result = mg.Session(g).run(logits, {x: images})
    print("minigraph:  ", np.array2string(result, precision=5))
    print("TensorFlow: ", np.array2string(expected, precision=5))
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-6)
    print("matches TensorFlow's output")

    with tempfile.TemporaryDirectory() as logdir:
        path = mg.write_graph(g, logdir, "cnn_in_minigraph.pbtxt", as_text=True)
        print(f"wrote the graph back as a GraphDef ({Path(path).stat().st_size} bytes of text)")


if __name__ == "__main__":
    main()
