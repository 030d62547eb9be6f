"""One training step (softmax cross-entropy, Adam) of a perceptron (784-256-10, ReLU) or a
small CNN (conv 3x3x16 + ReLU + 2x2 max pool + dense 10 on 28x28x1), as mg.train builds it
and as TensorFlow 2.21 runs it: tf.compat.v1.train in graph mode (a Session) and the same
step as a tf.function (GradientTape and ResourceApplyAdam, the update AdamOptimizer makes).

    python benchmarks/training.py [--model mlp|cnn] [--batch 128] [--rounds 30]
                                  [--peers-python /path/to/python]

A step is ``Session.run(train_op, feed_dict={x: batch, y: labels})``: the forward pass,
the gradients and one ResourceApplyAdam per variable (4), with fixed fed arrays. TensorFlow
runs in a worker process (this file with ``--worker``, under an interpreter that has it:
``--peers-python``, default this one if it can) that builds the same model from the same
initial values and times its steps when asked, so the two are timed in interleaved rounds
(timing.interleaved_seconds), each the median of CALLS steps in a row. Printed: the median
ms of a step for each and the median over rounds of minigraph's time over TensorFlow's; and
the loss after the timed steps on each side (the same data, so they should be close); and
how many steps a training step runs: minigraph's plan after its optimizer, against the
nodes of TensorFlow's partition graphs after Grappler (feeds and fetches aside).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from typing import Any

import numpy as np

CALLS = 5
SIZES = (784, 256, 10)
CNN = {"image": 28, "filters": 16, "classes": 10}


def initial_values(batch: int, model: str = "mlp") -> dict[str, np.ndarray]:
    """Weights (Glorot-scaled normals), zero biases, one fixed batch and its labels."""
    rng = np.random.default_rng(0)
    if model == "cnn":
        side, f, k = CNN["image"], CNN["filters"], CNN["classes"]
        shapes = {"w0": (3, 3, 1, f), "b0": (f,), "w1": ((side // 2) ** 2 * f, k), "b1": (k,)}
        values = {"x": rng.random((batch, side, side, 1), np.float32)}
    else:
        shapes = {}
        for i, (n_in, n_out) in enumerate(zip(SIZES, SIZES[1:])):
            shapes[f"w{i}"], shapes[f"b{i}"] = (n_in, n_out), (n_out,)
        values = {"x": rng.random((batch, SIZES[0]), np.float32)}
    values["y"] = rng.integers(0, 10, batch).astype(np.int64)
    for name, shape in shapes.items():
        if name.startswith("w"):
            scale = np.sqrt(2.0 / (np.prod(shape[:-1]) + shape[-1]))
            values[name] = (rng.standard_normal(shape) * scale).astype(np.float32)
        else:
            values[name] = np.zeros(shape, np.float32)
    return values


def logits(lib: Any, x: Any, params: dict[str, Any], model: str) -> Any:
    """The model's logits in ``lib`` (minigraph or TensorFlow) from ``params`` w0, b0, w1, b1."""
    if model == "cnn":
        h = lib.nn.bias_add(lib.nn.conv2d(x, params["w0"], [1, 1, 1, 1], "SAME"), params["b0"])
        h = lib.nn.max_pool(lib.nn.relu(h), [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        h = lib.reshape(h, [-1, (CNN["image"] // 2) ** 2 * CNN["filters"]])
        return lib.nn.bias_add(lib.matmul(h, params["w1"]), params["b1"])
    h = lib.nn.relu(lib.nn.bias_add(lib.matmul(x, params["w0"]), params["b0"]))
    return lib.nn.bias_add(lib.matmul(h, params["w1"]), params["b1"])


def build(
    lib: Any, values: dict[str, np.ndarray], v1: Any, model: str = "mlp"
) -> tuple[Any, Any, Any, Any, Any]:
    """The model in ``lib`` (minigraph, or TensorFlow with ``v1`` its compat.v1): x and y
    placeholders, the loss, the train op and the initializer."""
    x = v1.placeholder(lib.float32, [None, *values["x"].shape[1:]], name="x")
    y = v1.placeholder(lib.int64, [None], name="y")
    params = {n: v1.Variable(values[n], name=n) for n in ("w0", "b0", "w1", "b1")}
    out = logits(lib, x, params, model)
    losses = lib.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=out)
    loss = lib.reduce_mean(losses)
    train = v1.train.AdamOptimizer(1e-3).minimize(loss)
    return x, y, loss, train, v1.global_variables_initializer()


def tf_function_step(tf: Any, values: dict[str, np.ndarray], model: str) -> Any:
    """The same step as a tf.function: the gradients by GradientTape, then one
    ResourceApplyAdam a variable and the beta powers' update, as AdamOptimizer builds it."""
    params = {n: tf.Variable(values[n], name=n) for n in ("w0", "b0", "w1", "b1")}
    slots = {
        n: (tf.Variable(tf.zeros_like(p)), tf.Variable(tf.zeros_like(p))) for n, p in params.items()
    }
    powers = tf.Variable(0.9), tf.Variable(0.999)
    x, y = tf.constant(values["x"]), tf.constant(values["y"])

    @tf.function
    def step() -> None:
        with tf.GradientTape() as tape:
            out = logits(tf, x, params, model)
            losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=out)
            loss = tf.reduce_mean(losses)
        grads = tape.gradient(loss, list(params.values()))
        for (name, p), g in zip(params.items(), grads):
            m, v = slots[name]
            tf.raw_ops.ResourceApplyAdam(
                var=p.handle, m=m.handle, v=v.handle, beta1_power=powers[0], beta2_power=powers[1],
                lr=1e-3, beta1=0.9, beta2=0.999, epsilon=1e-8, grad=g,
            )  # fmt: skip
        powers[0].assign(powers[0] * 0.9)
        powers[1].assign(powers[1] * 0.999)

    return step


def worker(batch: int, model: str) -> None:
    """TensorFlow's side: build, warm up, then answer {"repeat": n} (and "fn": true for the
    tf.function) with the median seconds of n steps in a row, {"loss": true} with the loss,
    until stdin closes."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import tensorflow as tf
    except ImportError as e:
        print(json.dumps({"error": str(e)}), flush=True)
        return
    values = initial_values(batch, model)
    g = tf.Graph()
    with g.as_default():
        v1 = tf.compat.v1
        x, y, loss, train, init = build(tf, values, _TFCompat(v1), model)
        sess = v1.Session(graph=g)
        sess.run(init)
    feed = {x: values["x"], y: values["y"]}
    sess.run(train, feed)
    options = v1.RunOptions(output_partition_graphs=True)
    meta = v1.RunMetadata()
    sess.run(train, feed, options=options, run_metadata=meta)
    plumbing = {"_Arg", "_Retval", "_Send", "_Recv", "_HostSend", "_HostRecv"}
    nodes = sum(n.op not in plumbing for pg in meta.partition_graphs for n in pg.node)
    fn_step = tf_function_step(tf, values, model)
    fn_step()
    print(json.dumps({"version": tf.__version__, "nodes": nodes}), flush=True)
    import time

    for line in sys.stdin:
        ask = json.loads(line)
        if "loss" in ask:
            print(json.dumps({"loss": float(sess.run(loss, feed))}), flush=True)
            continue
        run = fn_step if ask.get("fn") else (lambda: sess.run(train, feed))
        times = []
        for _ in range(ask["repeat"]):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
        print(json.dumps({"seconds": float(np.median(times))}), flush=True)


class _TFCompat:
    """tf.compat.v1 with resource variables, so that both sides build the same ops."""

    def __init__(self, v1: Any) -> None:
        self._v1 = v1

    def __getattr__(self, name: str) -> Any:
        return getattr(self._v1, name)

    def Variable(self, value: Any, name: str) -> Any:  # noqa: N802  (tf's name)
        return self._v1.Variable(value, name=name, use_resource=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=("mlp", "cnn"), default="mlp")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument(  # the other benchmarks' name; --tf-python as it was first called
        "--peers-python", "--tf-python", dest="tf_python", help="an interpreter with TensorFlow"
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.batch, args.model)
        return

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from timing import interleaved_seconds, median_ratio, timer

    import minigraph as mg

    values = initial_values(args.batch, args.model)
    g = mg.Graph()
    with g.as_default():
        x, y, loss, train, init = build(mg, values, mg_v1(), args.model)
    sess = mg.Session(g)
    sess.run(init)
    feed = {x: values["x"], y: values["y"]}
    sess.run(train, feed)
    meta = mg.RunMetadata()
    sess.run(train, feed, options=mg.RunOptions(trace=True), run_metadata=meta)
    steps = len(meta.step_timings)
    contenders = [timer("minigraph", lambda: sess.run(train, feed), CALLS)]

    proc = start_worker(args.tf_python, args.batch, args.model)
    if proc is not None:

        def tensorflow(name: str, fn: bool) -> Any:
            def ask() -> dict[str, float]:
                proc.stdin.write(json.dumps({"repeat": CALLS, "fn": fn}) + "\n")
                proc.stdin.flush()
                return {name: json.loads(proc.stdout.readline())["seconds"]}

            return ask

        contenders += [tensorflow("tensorflow", False), tensorflow("tf.function", True)]
    times = interleaved_seconds(args.rounds, contenders, "training steps")
    what = f"MLP {'-'.join(map(str, SIZES))}" if args.model == "mlp" else "CNN"
    print(f"{what}, batch {args.batch}, Adam: median ms a step")
    for name, seconds in times.items():
        print(f"  {name:11s} {1e3 * float(np.median(seconds)):8.3f}")
    print(f"  loss after the timed steps: minigraph {float(sess.run(loss, feed)):.5f}", end="")
    if proc is not None:
        ratio = median_ratio(times["minigraph"], times["tensorflow"])
        ratio_fn = median_ratio(times["minigraph"], times["tf.function"])
        proc.stdin.write(json.dumps({"loss": True}) + "\n")
        proc.stdin.flush()
        print(f", TensorFlow {json.loads(proc.stdout.readline())['loss']:.5f}")
        print(f"  minigraph / TensorFlow Session (median over rounds): {ratio:.2f}")
        print(f"  minigraph / tf.function (median over rounds): {ratio_fn:.2f}")
        print(
            f"  steps a training step runs: minigraph {steps} (after its optimizer), "
            f"TensorFlow {proc.graph_nodes} nodes (after Grappler, feeds and fetches aside)"
        )
        proc.stdin.close()
        proc.wait()
    else:
        print(f"\n  steps a training step runs: minigraph {steps} (after its optimizer)")


def mg_v1() -> Any:
    """minigraph under the names the model uses from tf.compat.v1."""
    import types

    import minigraph as mg

    return types.SimpleNamespace(
        placeholder=mg.placeholder,
        Variable=lambda value, name: mg.Variable(value, name=name),
        train=mg.train,
        global_variables_initializer=mg.global_variables_initializer,
    )


def start_worker(python: str | None, batch: int, model: str) -> subprocess.Popen | None:
    """TensorFlow's worker, or None after saying why it is skipped."""
    if python is None:
        if importlib.util.find_spec("tensorflow") is None:
            print("TensorFlow is not importable here (pass --peers-python); timing minigraph only")
            return None
        python = sys.executable
    proc = subprocess.Popen(
        [python, os.path.abspath(__file__), "--worker", "--batch", str(batch), "--model", model],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    hello = json.loads(proc.stdout.readline() or "{}")
    if "version" not in hello:
        print(f"{python} cannot run TensorFlow ({hello.get('error', 'no reply')})")
        proc.wait()
        return None
    print(f"TensorFlow {hello['version']} in {python}")
    proc.graph_nodes = hello["nodes"]  # type: ignore[attr-defined]
    return proc


if __name__ == "__main__":
    main()
