"""Keras applications end to end, in minigraph and in TensorFlow in the same run.

ImageNet models of ``keras.applications`` (random weights) and two text models of Keras
layers, frozen by TensorFlow into GraphDefs:

    python benchmarks/applications.py --peers-python /path/to/tf/venv/bin/python
        [--batch 1 --batch 8] [--rounds 10] [--only ResNet50] [--cache DIR] [--json PATH]
    python benchmarks/applications.py --under-load [--load-model ResNet50] [--load-batch 1]

The models (MODELS): ResNet50, MobileNetV2, MobileNetV3Small, EfficientNetV2B0,
DenseNet121, InceptionV3, Xception, VGG16 and ConvNeXtTiny at 160 px, EfficientNetB0 and
NASNetMobile at 224; a 2-layer Transformer encoder (128 tokens, width 256, 4 heads, exact
GELU) and the Conv1D text classifier of Keras' text_classification_from_scratch example
(500 tokens), both fed token ids.

Nothing large is committed: this file builds the models at benchmark time, run with
``--build`` by an interpreter that has TensorFlow (``--peers-python``, default this one if
it can import tensorflow), into ``--cache`` (default minigraph-applications in the
system's temp dir), where a model is rebuilt only when its files are missing. Each is made
with weights=None under a fixed seed; its batch normalization is calibrated (every
BatchNormalization's momentum set to 0, Dropout's rate to 0, and the model called once
with training=True on a random batch, so the moving statistics are real batch statistics
and activations neither explode nor vanish); then it is frozen as docs/tensorflow.md says
(``tf.function(lambda x: model(x, training=False))``, a ``[None, ...]`` TensorSpec named
x, convert_variables_to_constants_v2, ``tf.io.write_graph`` as binary), and saved with
another random input of batch 8 and Keras' output for it.

Each model is imported (mg.import_graph_def) and fed that input, tiled or cut to each
batch. "first run": seconds from the start of minigraph's import (reading the file) to the
end of its first Session.run, planning included; minigraph's alone (TensorFlow's worker
reports no such figure). minigraph's output is checked against Keras' and against each
TensorFlow mode's: the largest absolute difference, and that over the reference's largest
magnitude (the relative difference), flagged MISMATCH above TOLERANCE. TensorFlow runs the
same GraphDef in a worker process (benchmarks/peers.py: ``Session.run`` with Grappler, and
the graph as a concrete function, what a ``tf.function`` runs), timed in interleaved rounds
with minigraph (timing.interleaved_seconds), each contender one call a round (``--calls``).
"mg / best TF" is the median over the rounds of minigraph's time over TensorFlow's faster
mode; its geometric mean over the models at each batch ends the table.

``--under-load`` times one model instead (``--load-model``, ``--load-batch``): quiet, then
with a child process spinning on core 0 (benchmarks/under_load.py's ``busy_core``);
minigraph and both TensorFlow modes, median and 90th percentile ms, and each busy median
over its quiet one.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import peers
from timing import interleaved_seconds, median_ratio, timer

# Input side: pixels for the images (the issue's table: 224 where the model is made for
# it), tokens for the text models.
IMAGE_MODELS = {
    "ResNet50": 160,
    "MobileNetV2": 160,
    "MobileNetV3Small": 160,
    "EfficientNetB0": 224,
    "EfficientNetV2B0": 160,
    "DenseNet121": 160,
    "InceptionV3": 160,
    "Xception": 160,
    "NASNetMobile": 224,
    "VGG16": 160,
    "ConvNeXtTiny": 160,
}
TEXT_MODELS = {"TransformerEncoder": 128, "Conv1DText": 500}
MODELS = {**IMAGE_MODELS, **TEXT_MODELS}
VOCABULARY = {"TransformerEncoder": 8000, "Conv1DText": 20000}
STORED_BATCH = 8
# float32 rounds each op to 6e-8 relative; a hundred layers summing in another order (im2col
# products against oneDNN's) left 1e-7 to 1e-4 of the output's scale (ResNet50: 9e-5). A
# wrong kernel moves it by far more than 1e-3.
TOLERANCE = 1e-3
MODES = {"minigraph": "mg", "session": "TF Session", "function": "tf.function"}


def _files(cache: Path, name: str) -> tuple[Path, Path]:
    """The model's frozen GraphDef and its .npz (input ``x``, Keras' output ``y``)."""
    stem = f"{name}-{MODELS[name]}"
    return cache / f"{stem}.pb", cache / f"{stem}.npz"


# -- building (runs under the TensorFlow interpreter) -----------------------------------


def build(names: list[str], cache: Path) -> None:
    """Make, calibrate and freeze each model into ``cache``; a model that fails is said
    and skipped."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    cache.mkdir(parents=True, exist_ok=True)
    for name in names:
        t0 = time.perf_counter()
        try:
            _build_one(tf, name, cache)
        except Exception as e:  # noqa: BLE001 - said, and the other models still built
            print(f"could not build {name}: {type(e).__name__}: {e}", flush=True)
        else:
            print(f"built {name} in {time.perf_counter() - t0:.1f} s", flush=True)
        tf.keras.backend.clear_session()


def _build_one(tf: Any, name: str, cache: Path) -> None:
    """The model's files, written whole or not at all (a build cut short leaves the model
    missing, so the next run builds it)."""
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2,
    )

    tf.keras.utils.set_random_seed(0)
    model, spec = _keras_model(tf, name)
    rng = np.random.default_rng(0)
    _calibrate(tf.keras, model, _random_input(rng, name))
    x = _random_input(rng, name)
    want = model(x, training=False).numpy()
    fn = tf.function(lambda v: model(v, training=False))
    frozen = convert_variables_to_constants_v2(fn.get_concrete_function(spec))
    pb, npz = _files(cache, name)
    tmp = f"{npz.stem}.tmp"
    tf.io.write_graph(frozen.graph.as_graph_def(), str(cache), f"{tmp}.pb", as_text=False)
    np.savez(cache / f"{tmp}.npz", x=x, y=want)
    os.replace(cache / f"{tmp}.npz", npz)
    os.replace(cache / f"{tmp}.pb", pb)


def _random_input(rng: np.random.Generator, name: str) -> np.ndarray:
    """A batch of images of 0-255 values (the models rescale them themselves, or their
    first batch normalization does), or of token ids."""
    n = MODELS[name]
    if name in TEXT_MODELS:
        return rng.integers(0, VOCABULARY[name], (STORED_BATCH, n)).astype(np.int32)
    return rng.uniform(0, 255, (STORED_BATCH, n, n, 3)).astype(np.float32)


def _keras_model(tf: Any, name: str) -> tuple[Any, Any]:
    """The Keras model and the TensorSpec its frozen graph is fed by (``x``)."""
    keras, layers, n = tf.keras, tf.keras.layers, MODELS[name]
    if name in IMAGE_MODELS:
        model = getattr(keras.applications, name)(weights=None, input_shape=(n, n, 3))
        return model, tf.TensorSpec([None, n, n, 3], tf.float32, name="x")
    tokens = keras.Input((n,), dtype="int32")
    if name == "TransformerEncoder":
        width = 256

        class PositionEmbedding(layers.Layer):
            """A learned vector per position, added to the token embeddings."""

            def build(self, shape: Any) -> None:
                self.table = self.add_weight(shape=shape[1:], initializer="random_normal")

            def call(self, h: Any) -> Any:
                return h + self.table

        h = PositionEmbedding()(layers.Embedding(VOCABULARY[name], width)(tokens))
        for _ in range(2):
            attended = layers.MultiHeadAttention(4, width // 4)(h, h)
            h = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([h, attended]))
            f = layers.Dense(4 * width, activation="gelu")(h)
            h = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([h, layers.Dense(width)(f)]))
        out = layers.Dense(2)(layers.GlobalAveragePooling1D()(h))
    else:  # Keras' text_classification_from_scratch example
        h = layers.Dropout(0.5)(layers.Embedding(VOCABULARY[name], 128)(tokens))
        h = layers.Conv1D(128, 7, padding="valid", activation="relu", strides=3)(h)
        h = layers.Conv1D(128, 7, padding="valid", activation="relu", strides=3)(h)
        h = layers.Dense(128, activation="relu")(layers.GlobalMaxPooling1D()(h))
        out = layers.Dense(1, activation="sigmoid")(layers.Dropout(0.5)(h))
    return keras.Model(tokens, out), tf.TensorSpec([None, n], tf.int32, name="x")


def _calibrate(keras: Any, model: Any, batch: np.ndarray) -> None:
    """Moving statistics that are one random batch's own, so that random weights give
    activations of a sane scale through a hundred layers."""
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            layer.momentum = 0.0
        elif isinstance(layer, keras.layers.Dropout):
            layer.rate = 0.0
    model(batch, training=True)


# -- timing (runs under minigraph's interpreter) ----------------------------------------


def _tf_python(python: str | None) -> str | None:
    """The interpreter that builds the models: peers' rule (this one, if it can)."""
    if python is None and importlib.util.find_spec("tensorflow") is not None:
        return sys.executable
    return python


def ensure_built(names: list[str], cache: Path, python: str | None) -> list[str]:
    """The models of ``names`` that are in ``cache``, after building those that were not."""
    missing = [n for n in names if not all(p.exists() for p in _files(cache, n))]
    python = _tf_python(python)
    if missing and python is None:
        print(f"not built, no TensorFlow to build them (pass --peers-python): {missing}")
    elif missing:
        print(f"building {len(missing)} models with {python} into {cache}", flush=True)
        only = [f"--only={n}" for n in missing]
        command = [python, os.path.abspath(__file__), "--build", "--cache", str(cache), *only]
        if subprocess.run(command).returncode != 0:
            print("the build failed (its output is above)")
    return [n for n in names if all(p.exists() for p in _files(cache, n))]


def _tiled(a: np.ndarray, batch: int) -> np.ndarray:
    return np.concatenate([a] * -(-batch // a.shape[0]))[:batch]


def first_run(pb: Path, value: np.ndarray) -> tuple[Any, Any, Any, np.ndarray, float]:
    """Import ``pb`` into a new graph and run it once on ``value``: the session, the input
    and output tensors, the output, and the seconds all of that took."""
    import minigraph as mg

    t0 = time.perf_counter()
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(str(pb), name="")
    x, y = g.get_tensor_by_name("x:0"), g.get_tensor_by_name("Identity:0")
    sess = mg.Session(g)
    out = sess.run(y, {x: value})
    return sess, x, y, out, time.perf_counter() - t0


def difference(got: np.ndarray, references: dict[str, np.ndarray]) -> dict[str, Any]:
    """The largest absolute and relative (over the reference's largest magnitude)
    differences from any of the references, which one that was, and whether it is within
    TOLERANCE (NaN never is)."""
    found = []
    for name, want in references.items():
        if got.shape != want.shape:
            found.append((np.inf, np.inf, name))
            continue
        abs_diff = float(np.max(np.abs(got.astype(np.float64) - want)))
        scale = max(float(np.max(np.abs(want))), float(np.finfo(np.float32).tiny))
        found.append((abs_diff, abs_diff / scale, name))
    abs_diff, rel, name = max(found, key=lambda f: (bool(np.isnan(f[1])), f[1]))
    return {"max_abs_diff": abs_diff, "max_rel_diff": rel, "against": name, "ok": rel <= TOLERANCE}


def _prepared(tf: peers.TFPeer | None, sess: Any, y: Any, feeds: dict) -> Any:
    """TensorFlow's worker ready on the graph of ``sess`` (None without TensorFlow, or
    if it fails there, saying why)."""
    if tf is None:
        return None
    try:
        return tf.prepare(sess.graph, feeds, [y])
    except RuntimeError as e:
        print(f"  TensorFlow: {e}")
        return None


def time_model(name: str, batch: int, cache: Path, tf: peers.TFPeer | None, args: Any) -> dict:
    """One row of the table."""
    import minigraph as mg

    pb, npz = _files(cache, name)
    with np.load(npz) as z:
        value, keras_out = peers.aligned(_tiled(z["x"], batch)), _tiled(z["y"], batch)
    row: dict[str, Any] = {"model": name, "input": _input_label(name), "batch": batch}
    try:
        sess, x, y, got, row["first_run_s"] = first_run(pb, value)
    except mg.errors.OpError as e:
        row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0]}"
        return row
    feeds = {x: value}
    contenders = [timer("minigraph", lambda: sess.run(y, feeds), args.calls)]
    references = {"Keras": keras_out}
    peer = _prepared(tf, sess, y, feeds)
    if peer is not None:
        references.update({f"TF {mode}": values[0] for mode, values in peer.outputs.items()})
        peer.outputs.clear()
        contenders.append(lambda: peer.time(args.calls))
    row.update(difference(got, references))
    del got
    for contender in contenders:  # a warm-up call each
        contender()
    t = interleaved_seconds(args.rounds, contenders, f"{name} batch {batch}")
    if peer is not None:
        peer.release()
        best = [min(r) for r in zip(t["session"], t["function"])]
        row["mg_over_best_tf"] = median_ratio(t["minigraph"], best)
    row.update({f"{mode}_ms": float(np.median(s)) * 1e3 for mode, s in t.items()})
    return row


def _input_label(name: str) -> str:
    return f"{MODELS[name]} tokens" if name in TEXT_MODELS else str(MODELS[name])


def _ms(row: dict, key: str) -> str:
    return f"{row[key]:.2f}" if key in row else "-"


def table_line(row: dict) -> str:
    """The row as a line of the markdown table."""
    head = f"| {row['model']} | {row['input']} | {row['batch']} |"
    if "error" in row:
        return f"{head} {row['error']} |"
    diff = f"{row['max_abs_diff']:.1e} | {row['max_rel_diff']:.1e}"
    if not row["ok"]:
        diff += f" MISMATCH ({row['against']})"
    ratio = f"{row['mg_over_best_tf']:.2f}" if "mg_over_best_tf" in row else "-"
    cells = [_ms(row, f"{m}_ms") for m in MODES] + [ratio, f"{row['first_run_s']:.2f} s", diff]
    return f"{head} {' | '.join(cells)} |"


def table(names: list[str], cache: Path, tf: peers.TFPeer | None, args: Any) -> list[dict]:
    """Time each model at each batch, printing the table as it goes and the geometric
    means of mg / best TF at the end."""
    print(
        "| model | px | batch | mg ms | TF Session ms | tf.function ms | mg / best TF "
        "| first run (mg) | max abs diff | max rel diff |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for name in names:
        for batch in args.batch:
            rows.append(time_model(name, batch, cache, tf, args))
            print(table_line(rows[-1]), flush=True)
    for batch in args.batch:
        ratios = [
            r["mg_over_best_tf"] for r in rows if r["batch"] == batch and "mg_over_best_tf" in r
        ]
        if ratios:
            mean = float(np.exp(np.mean(np.log(ratios))))
            print(
                f"geometric mean of mg / best TF, batch {batch}: {mean:.2f} ({len(ratios)} models)"
            )
    return rows


def under_load(name: str, batch: int, cache: Path, tf: peers.TFPeer | None, args: Any) -> list:
    """One model quiet and with a busy core: median and 90th percentile ms a contender."""
    from under_load import busy_core

    pb, npz = _files(cache, name)
    with np.load(npz) as z:
        value = peers.aligned(_tiled(z["x"], batch))
    sess, x, y, _, _ = first_run(pb, value)
    feeds = {x: value}
    contenders = [timer("minigraph", lambda: sess.run(y, feeds))]
    peer = _prepared(tf, sess, y, feeds)
    if peer is not None:
        peer.outputs.clear()
        contenders.append(peer.time)
    for contender in contenders:  # a warm-up call each
        contender()
    print("| model | batch | load | contender | median ms | p90 ms | x quiet |")
    print("|---|---|---|---|---|---|---|")
    rows: list[dict] = []
    quiet: dict[str, float] = {}
    for load in ("quiet", "busy"):
        with busy_core(0) if load == "busy" else contextlib.nullcontext(True) as started:
            if not started:
                print(f"| {name} | {batch} | {load} | (the busy process did not start) |")
                continue
            t = interleaved_seconds(args.rounds, contenders, f"{name} {load}")
        for mode, seconds in t.items():
            med, p90 = np.median(seconds) * 1e3, np.percentile(seconds, 90) * 1e3
            quiet.setdefault(mode, med)
            rows.append(
                {
                    "model": name,
                    "batch": batch,
                    "load": load,
                    "contender": mode,
                    "median_ms": med,
                    "p90_ms": p90,
                    "over_quiet": med / quiet[mode],
                }
            )
            print(
                f"| {name} | {batch} | {load} | {MODES[mode]} | {med:.2f} | {p90:.2f} "
                f"| {med / quiet[mode]:.2f} |",
                flush=True,
            )
    if peer is not None:
        peer.release()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, action="append", help="default: 1 and 8")
    parser.add_argument("--rounds", type=int, help="default: 10, or 40 with --under-load")
    parser.add_argument("--calls", type=int, default=1, help="calls a contender a round")
    parser.add_argument(
        "--only",
        action="append",
        choices=list(MODELS),
        metavar="NAME",
        help=f"a model to run (repeatable; default all): {', '.join(MODELS)}",
    )
    parser.add_argument(
        "--peers-python",
        default=None,
        help="an interpreter that can import tensorflow, to build the models and time "
        "TensorFlow (default: this one, if it can)",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(tempfile.gettempdir()) / "minigraph-applications",
        help="where the frozen models are kept (default: %(default)s)",
    )
    parser.add_argument(
        "--under-load", action="store_true", help="time --load-model quiet and busy instead"
    )
    parser.add_argument(
        "--load-model",
        choices=list(MODELS),
        default="ResNet50",
        metavar="NAME",
        help="the model --under-load times (default: %(default)s)",
    )
    parser.add_argument("--load-batch", type=int, default=1, help="its batch (default: 1)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the results here")
    parser.add_argument("--build", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    names = list(dict.fromkeys(args.only or MODELS))
    if args.build:
        build(names, args.cache)
        return
    if args.under_load:
        names = [args.load_model]
    args.batch = args.batch or [1, 8]
    args.rounds = args.rounds or (40 if args.under_load else 10)
    names = ensure_built(names, args.cache, args.peers_python)
    loads = " ".join(f"{a:.2f}" for a in os.getloadavg())
    print(f"load average {loads}, {os.cpu_count()} cores")
    tf = peers.TFPeer.start(args.peers_python)
    results: dict[str, Any] = {"tensorflow": tf.version if tf else None, "rounds": args.rounds}
    try:
        if args.under_load:
            if names:
                results["under_load"] = under_load(names[0], args.load_batch, args.cache, tf, args)
        else:
            results["rows"] = table(names, args.cache, tf, args)
    finally:
        if tf is not None:
            tf.close()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
