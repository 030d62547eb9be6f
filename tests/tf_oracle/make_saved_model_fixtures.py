"""Writes tests/fixtures/saved_models/: small TensorFlow SavedModels, inputs and TF's outputs.

Run by hand, with TensorFlow 2.21 in a scratch virtual environment (never a dependency of
minigraph), from the repository root::

    python3 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu==2.21.0
    /tmp/tfvenv/bin/python tests/tf_oracle/make_saved_model_fixtures.py [OUT_DIR]

Each case is a SavedModel directory ``<name>/`` (``saved_model.pb`` and ``variables/``)
beside ``<name>.npz`` holding ``feed/<input>`` (the serving signature's inputs) and
``fetch/<output>`` (what TensorFlow's ``signatures["serving_default"]`` returns for them).
``cases.json`` lists each case with its signature (names, dtypes, shapes) as TensorFlow
reports it. The models are tiny: the whole set stays well under 1 MB.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

OUT = (
    Path(sys.argv[1])
    if len(sys.argv) > 1
    else Path(__file__).resolve().parent.parent / "fixtures" / "saved_models"
)
CASES: list[dict[str, Any]] = []
rng = np.random.default_rng(26)
keras.utils.set_random_seed(26)  # the Keras models' initial weights, made the same each run


def _spec(t: Any) -> dict[str, Any]:
    return {"dtype": t.dtype.name, "shape": None if t.shape.rank is None else t.shape.as_list()}


def _record(name: str, feeds: dict[str, np.ndarray], **extra: Any) -> None:
    """Load ``OUT/name`` back in TensorFlow, run its serving signature, save the arrays."""
    loaded = tf.saved_model.load(str(OUT / name))
    fn = loaded.signatures["serving_default"]
    results = fn(**{k: tf.constant(v) for k, v in feeds.items()})
    arrays = {f"feed/{k}": v for k, v in feeds.items()}
    arrays.update({f"fetch/{k}": v.numpy() for k, v in results.items()})
    np.savez_compressed(OUT / f"{name}.npz", **arrays)
    inputs = fn.structured_input_signature[1]
    CASES.append(
        {
            "name": name,
            "inputs": {k: _spec(v) for k, v in sorted(inputs.items())},
            "outputs": {k: _spec(v) for k, v in sorted(fn.structured_outputs.items())},
            **extra,
        }
    )
    size = sum(f.stat().st_size for f in (OUT / name).rglob("*") if f.is_file())
    print(f"{name}: {size} bytes, outputs {sorted(results)}")


class Dense(tf.Module):
    """A variable-backed affine map, one output (TensorFlow names it ``output_0``)."""

    def __init__(self) -> None:
        super().__init__()
        self.w = tf.Variable(rng.normal(size=(3, 2)).astype(np.float32), name="w")
        self.b = tf.Variable(np.array([0.5, -1.0], np.float32), name="b")
        self.unused = tf.Variable(np.zeros(4, np.float64), name="unused")

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
    def __call__(self, x: Any) -> Any:
        return tf.nn.relu(tf.matmul(x, self.w) + self.b)


def module_dense() -> None:
    m = Dense()
    tf.saved_model.save(m, str(OUT / "module_dense"))
    _record("module_dense", {"x": rng.normal(size=(4, 3)).astype(np.float32)})


class TwoHeads(tf.Module):
    """Two named inputs (float and int), two named outputs, a variable read twice, an int
    variable, a nested sub-module and a loop over a variable (resource in a While)."""

    def __init__(self) -> None:
        super().__init__()
        self.table = tf.Variable(rng.normal(size=(10, 4)).astype(np.float32), name="table")
        self.scale = tf.Variable(2.5, name="scale")
        self.offset = tf.Variable(np.array([3, 1, 4, 1], np.int32), name="offset")
        self.inner = tf.Module()
        self.inner.proj = tf.Variable(rng.normal(size=(4, 3)).astype(np.float32), name="proj")

    @tf.function(
        input_signature=[
            tf.TensorSpec([None, 4], tf.float32, name="features"),
            tf.TensorSpec([None], tf.int32, name="ids"),
        ]
    )
    def serve(self, features: Any, ids: Any) -> Any:
        rows = tf.gather(self.table, ids) * self.scale
        mixed = tf.matmul(rows + features, self.inner.proj)
        total = tf.zeros_like(mixed)
        for _ in tf.range(3):  # a While whose body reads self.scale
            total = total + mixed * self.scale
        return {"mixed": mixed, "counts": ids + self.offset[0], "total": total}


def module_two_heads() -> None:
    m = TwoHeads()
    tf.saved_model.save(m, str(OUT / "module_two_heads"), signatures={"serving_default": m.serve})
    _record(
        "module_two_heads",
        {
            "features": rng.normal(size=(5, 4)).astype(np.float32),
            "ids": np.array([0, 3, 9, 3, 1], np.int32),
        },
    )


def keras_export() -> None:
    inputs = keras.Input((6,), name="pixels")
    h = keras.layers.Dense(8, activation="relu")(inputs)
    h = keras.layers.BatchNormalization()(h)
    outputs = keras.layers.Dense(3, activation="softmax")(h)
    model = keras.Model(inputs, outputs)
    bn = model.layers[2]
    bn.moving_mean.assign(rng.normal(size=8).astype(np.float32))
    bn.moving_variance.assign(rng.uniform(0.5, 2.0, size=8).astype(np.float32))
    model.export(str(OUT / "keras_export"), verbose=False)
    _record("keras_export", {"pixels": rng.normal(size=(3, 6)).astype(np.float32)})


def keras_lstm_export() -> None:
    inputs = keras.Input((5, 2), name="sequence")
    h = keras.layers.LSTM(4)(inputs)
    outputs = keras.layers.Dense(1)(h)
    model = keras.Model(inputs, outputs)
    model.export(str(OUT / "keras_lstm_export"), verbose=False)
    _record("keras_lstm_export", {"sequence": rng.normal(size=(2, 5, 2)).astype(np.float32)})


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    for case in (module_dense, module_two_heads, keras_export, keras_lstm_export):
        case()
    (OUT / "cases.json").write_text(json.dumps(CASES, indent=1) + "\n")
    total = sum(f.stat().st_size for f in OUT.rglob("*") if f.is_file())
    print(f"{len(CASES)} SavedModels, {total} bytes in all")


if __name__ == "__main__":
    main()
