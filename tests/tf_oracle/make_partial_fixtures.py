"""Writes tests/fixtures/graphs/partial_*.pbtxt: TensorFlow graphs holding ops minigraph lacks.

Run by hand, with TensorFlow 2.21 in a scratch virtual environment (never a dependency of
minigraph), from the repository root::

    /tmp/tfvenv/bin/python tests/tf_oracle/make_partial_fixtures.py

EncodeJpeg and DecodeJpeg read and make strings, which minigraph has no dtype for, so they
stay unsupported. Both graphs compute ``y = relu(x) * 2`` (which minigraph runs) beside
``z = float(decode_jpeg(encode_jpeg(uint8(x)))) * 0.5`` (which needs the two ops):

- ``partial_jpeg.pbtxt``: a tf.compat.v1 graph written with ``_output_shapes`` (add_shapes),
  so DecodeJpeg's output shape is known to minigraph from the file;
- ``partial_fn.pbtxt``: a tf.function's graph whose z goes through a call of another
  tf.function (a PartitionedCall of a library function holding the two ops);
- ``../saved_models/partial_jpeg/``: a SavedModel of a tf.Module with a variable ``scale``
  (y = relu(x) * scale), whose ``serving_default`` signature returns y and z and whose
  ``relu`` signature returns y alone.

tests/test_partial_graphs.py computes y itself and has TensorFlow run minigraph's export.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "graphs"
SAVED = OUT.parent / "saved_models" / "partial_jpeg"
v1 = tf.compat.v1


def _jpeg_round_trip(x: tf.Tensor) -> tf.Tensor:
    image = tf.cast(tf.clip_by_value(x, 0.0, 255.0), tf.uint8, name="image")
    encoded = tf.io.encode_jpeg(image, name="encode")
    decoded = tf.io.decode_jpeg(encoded, channels=1, name="decode")
    return tf.cast(decoded, tf.float32, name="decoded") * 0.5


def v1_graph() -> None:
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [4, 4, 1], name="x")
        tf.identity(tf.nn.relu(x) * 2.0, name="y")
        tf.identity(_jpeg_round_trip(x), name="z")
    gd = g.as_graph_def(add_shapes=True)
    tf.io.write_graph(gd, str(OUT), "partial_jpeg.pbtxt", as_text=True)
    print(f"partial_jpeg.pbtxt: {sorted({n.op for n in gd.node})}")


def function_graph() -> None:
    @tf.function
    def round_trip(x: tf.Tensor) -> tf.Tensor:
        return _jpeg_round_trip(x)

    @tf.function(input_signature=[tf.TensorSpec([4, 4, 1], tf.float32, name="x")])
    def model(x: tf.Tensor) -> dict[str, tf.Tensor]:
        return {"y": tf.nn.relu(x) * 2.0, "z": round_trip(x)}

    gd = model.get_concrete_function().graph.as_graph_def()
    tf.io.write_graph(gd, str(OUT), "partial_fn.pbtxt", as_text=True)
    ops = sorted({n.op for n in gd.node} | {n.op for f in gd.library.function for n in f.node_def})
    print(f"partial_fn.pbtxt: {ops}")


class _Model(tf.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = tf.Variable(2.0, name="scale")

    @tf.function(input_signature=[tf.TensorSpec([4, 4, 1], tf.float32, name="x")])
    def serve(self, x: tf.Tensor) -> dict[str, tf.Tensor]:
        return {"y": tf.nn.relu(x) * self.scale, "z": _jpeg_round_trip(x)}

    @tf.function(input_signature=[tf.TensorSpec([4, 4, 1], tf.float32, name="x")])
    def relu(self, x: tf.Tensor) -> dict[str, tf.Tensor]:
        return {"y": tf.nn.relu(x) * self.scale}


def saved_model() -> None:
    model = _Model()
    if SAVED.exists():
        shutil.rmtree(SAVED)
    signatures = {"serving_default": model.serve, "relu": model.relu}
    tf.saved_model.save(model, str(SAVED), signatures=signatures)
    size = sum(p.stat().st_size for p in SAVED.rglob("*") if p.is_file())
    print(f"saved_models/partial_jpeg: {size} bytes")


def main() -> None:
    v1_graph()
    function_graph()
    saved_model()


if __name__ == "__main__":
    main()
