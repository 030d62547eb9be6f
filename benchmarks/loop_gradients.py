"""The gradient of a loop: the Keras LSTM and GRU benchmark graphs of
tests/fixtures/control_flow (a While over 32 steps), forward alone and forward plus the
gradient of sum(output) with respect to the input, in minigraph and in TensorFlow 2.21's
Session on the same GraphDef.

    python benchmarks/loop_gradients.py [--repeat 20] [--peers-python /path/to/python]

minigraph differentiates a loop by running it again with its iterations' inputs kept and
then a backward loop that recomputes each body (docs/training.md, "Control flow"), so its
training step runs the forward loop twice; TensorFlow keeps the body's intermediates
instead. TensorFlow runs in a subprocess (this file with ``--worker NAME``) under an
interpreter that has it. Printed: the median ms of each, per model.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

CASES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "control_flow"
MODELS = ("lstm_bench_fn", "gru_bench_fn")


def load(lib: Any, graph: Any, name: str, import_graph_def: Any, gradients: Any) -> tuple:
    """The model's input and output, the gradient of sum(output) w.r.t. the input, and the
    fed value, imported into ``graph``."""
    case = next(c for c in json.loads((CASES / "cases.json").read_text()) if c["name"] == name)
    with graph.as_default():
        import_graph_def(str(CASES / case["file"]), name="")
        x = graph.get_tensor_by_name(case["feeds"][0])
        y = graph.get_tensor_by_name(case["fetches"][0])
        (dx,) = gradients(lib.reduce_sum(y), x)
    value = np.load(CASES / f"{name}.npz")["feed/" + case["feeds"][0]]
    return x, y, dx, value


def median_ms(sess: Any, fetches: Any, feed: dict, repeat: int) -> float:
    """The median ms of ``sess.run(fetches, feed)`` after one warm-up run."""
    sess.run(fetches, feed)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sess.run(fetches, feed)
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def worker(name: str, repeat: int) -> None:
    """TensorFlow's side: print {"forward": ms, "gradient": ms} for one model."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    v1 = tf.compat.v1
    graph = tf.Graph()

    def import_graph_def(path: str, name: str) -> None:
        gd = v1.GraphDef()
        gd.ParseFromString(Path(path).read_bytes())
        tf.graph_util.import_graph_def(gd, name=name)

    x, y, dx, value = load(tf, graph, name, import_graph_def, tf.gradients)
    sess = v1.Session(graph=graph)
    feed = {x: value}
    times = {
        "forward": median_ms(sess, y, feed, repeat),
        "gradient": median_ms(sess, [y, dx], feed, repeat),
    }
    print(json.dumps(times), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument(  # the other benchmarks' name; --tf-python as it was first called
        "--peers-python", "--tf-python", dest="tf_python", help="an interpreter with TensorFlow"
    )
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.repeat)
        return
    import minigraph as mg

    print("median ms: forward | forward + gradient of sum(output) w.r.t. the input")
    for name in MODELS:
        graph = mg.Graph()
        x, y, dx, value = load(mg, graph, name, mg.import_graph_def, mg.gradients)
        sess = mg.Session(graph)
        feed = {x: value}
        forward = median_ms(sess, y, feed, args.repeat)
        gradient = median_ms(sess, [y, dx], feed, args.repeat)
        line = f"  {name:14s} {value.shape}  minigraph {forward:6.2f} | {gradient:6.2f}"
        if args.tf_python:
            command = [args.tf_python, __file__, "--worker", name, "--repeat", str(args.repeat)]
            out = subprocess.run(command, capture_output=True, text=True, check=False).stdout
            if out.strip():
                tf_times = json.loads(out.strip().splitlines()[-1])
                line += f"   TensorFlow {tf_times['forward']:6.2f} | {tf_times['gradient']:6.2f}"
            else:
                line += "   (TensorFlow did not run)"
        print(line)


if __name__ == "__main__":
    sys.exit(main())
