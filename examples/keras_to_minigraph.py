"""Your own Keras model in minigraph: freeze it with TensorFlow once, run it without.

Two steps, as docs/tensorflow.md describes them:

1. ``freeze DIR``, with TensorFlow: build (or load) the Keras model, trace it with a named
   input and ``training=False``, freeze its variables into constants
   (convert_variables_to_constants_v2) and write DIR/model.pb, with an input and Keras's
   output for it in DIR/model.npz (``feed/x:0``, ``fetch/Identity:0``). Put your model in
   ``make_model``.
2. ``run DIR``, with minigraph alone (numpy, networkx and the tensorboard extra's protobuf
   classes): list the model's inputs and outputs, import it, run it and check that every
   output equals Keras's, within float32 round-off.

With no arguments it does both in a temporary directory. Without TensorFlow it says so and
runs step 2 on the Keras model that tests/tf_oracle/make_graph_fixtures.py froze by this
recipe (tests/fixtures/graphs/keras_mlp.pb). The freeze step does not import minigraph, so
it can run in an environment that has only TensorFlow.
Run: python examples/keras_to_minigraph.py [freeze DIR | run DIR]
"""

import argparse
import importlib.util
import shutil
import tempfile
from pathlib import Path

import numpy as np

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "graphs"


def make_model(tf):
    """Your model goes here: any Keras model with one input (train it, or load it with
    ``tf.keras.models.load_model("model.keras")``)."""
    return tf.keras.Sequential(
        [
            tf.keras.Input((8,)),
            tf.keras.layers.Dense(16, activation="relu"),
            tf.keras.layers.Dense(3, activation="softmax"),
        ]
    )


def freeze(directory: Path) -> None:
    """Step 1 (TensorFlow): model.pb, and model.npz with an input and Keras's output."""
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2,
    )

    model = make_model(tf)
    fn = tf.function(lambda x: model(x, training=False))
    spec = tf.TensorSpec([None, *model.input_shape[1:]], model.inputs[0].dtype, name="x")
    frozen = convert_variables_to_constants_v2(fn.get_concrete_function(spec))
    tf.io.write_graph(frozen.graph.as_graph_def(), str(directory), "model.pb", as_text=False)
    x = np.random.default_rng(0).standard_normal((4, *model.input_shape[1:])).astype("float32")
    ys = model(x, training=False)  # in the model's outputs order, as the frozen graph's
    ys = ys if isinstance(ys, (list, tuple)) else [ys]
    outputs = {f"fetch/{t.name}": np.asarray(y) for t, y in zip(frozen.outputs, ys)}
    np.savez(directory / "model.npz", **{"feed/x:0": x}, **outputs)
    names = [t.name for t in frozen.inputs], [t.name for t in frozen.outputs]
    print(f"froze the Keras model into {directory / 'model.pb'}: inputs, outputs {names}")


def run(directory: Path) -> None:
    """Step 2 (minigraph): import model.pb, run it on model.npz's input, compare."""
    import minigraph as mg

    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(str(directory / "model.pb"), name="")  # TensorFlow's names
    nx_graph = g.as_networkx()
    inputs = [n.name for n in g.nodes() if n.type_string == "Placeholder"]
    outputs = [  # what no node reads: the model's outputs
        n.name
        for n in g.nodes()
        if not nx_graph.out_degree(n.name) and n.type_string not in ("Const", "NoOp")
    ]
    print(f"{directory / 'model.pb'}: {len(list(g.nodes()))} nodes")
    for name in inputs:
        x = g.get_tensor_by_name(f"{name}:0")
        print(f"  input  {x.name}: {x.dtype.name} {x.shape}")
    for name in outputs:
        y = g.get_tensor_by_name(f"{name}:0")
        print(f"  output {y.name}: {y.dtype.name} {y.shape}")

    saved = np.load(directory / "model.npz")
    feeds = {k[len("feed/") :]: saved[k] for k in saved.files if k.startswith("feed/")}
    fetches = [k[len("fetch/") :] for k in saved.files if k.startswith("fetch/")]
    got = mg.Session(g).run(fetches, feeds)
    for name, value in zip(fetches, got):
        want = saved[f"fetch/{name}"]
        # float32 round-off: sums may add in another order than TensorFlow's
        np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-6, err_msg=name)
        print(
            f"  {name} equals Keras's output (largest difference {np.abs(value - want).max():.1e})"
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", nargs="?", choices=["freeze", "run"], help="default: both")
    parser.add_argument("dir", nargs="?", type=Path, help="where model.pb and model.npz go")
    args = parser.parse_args(argv)
    if args.step is not None:
        if args.dir is None:
            parser.error(f"{args.step} needs the directory")
        args.dir.mkdir(parents=True, exist_ok=True)
        if args.step == "freeze":
            freeze(args.dir)
        else:
            run(args.dir)
        return
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        if importlib.util.find_spec("tensorflow") is not None:
            freeze(directory)
        else:
            print(
                "TensorFlow is not installed, so the freezing step is skipped: running the "
                "Keras model that tests/tf_oracle/make_graph_fixtures.py froze by this recipe"
            )
            shutil.copy(FIXTURES / "keras_mlp.pb", directory / "model.pb")
            shutil.copy(FIXTURES / "keras_mlp.npz", directory / "model.npz")
        if importlib.util.find_spec("tensorboard") is None:
            print("this example needs the tensorboard extra: pip install 'minigraph[tensorboard]'")
            return
        run(directory)


if __name__ == "__main__":
    main()
