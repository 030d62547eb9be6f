"""Writes tests/fixtures/grads_control/: TensorFlow 2.21's gradients through function calls,
conds, cases, TensorLists and while loops, for tests/test_control_flow_grad.py.

Run by hand with TensorFlow 2.21 in a scratch virtual environment (never a dependency of
minigraph), from the repository root::

    /tmp/tfvenv/bin/python tests/tf_oracle/make_control_flow_grad_fixtures.py

Two kinds of case:

- *built*: a small model written here in TensorFlow's graph mode (tf.compat.v1 with control
  flow v2: While, If, Case, the TensorList ops) and in the test with minigraph's builders,
  the same model op for op. ``<name>.npz`` holds its inputs ``x/<input>``, its loss ``y``
  and ``tf.gradients(y, input)`` as ``dx/<input>`` for each float input (absent where
  TensorFlow's gradient is None). ``call`` also writes ``call.pb``: a graph calling a
  tf.function (PartitionedCall), which the test imports.
- *imported*: each tf.function and Keras case of tests/fixtures/control_flow/ (frozen
  GraphDefs with While, If, Case, PartitionedCall and TensorLists; the ``_lowered`` ones
  hold TF1 loops) imported into TensorFlow again, with the gradient of the sum of its float
  outputs with respect to its float inputs at the recorded feeds: ``imported_<name>.npz``
  holds ``dx/<feed>``. Each runs in a process of its own (TensorFlow keeps the functions a
  gradient rewrites in one process-wide library, where two cases' names collide).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
from tensorflow.python.ops import list_ops  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "fixtures" / "grads_control"
CONTROL_FLOW = HERE.parent / "fixtures" / "control_flow"
v1 = tf.compat.v1
f64 = tf.float64


def weights(*shape: int) -> np.ndarray:
    """Fixed weights of a loss ``sum(weights * y)``: every element of y matters differently."""
    return np.linspace(-1.0, 1.0, int(np.prod(shape))).reshape(shape)


def record(name: str, build: Callable[..., Any], inputs: dict[str, np.ndarray]) -> None:
    """Run ``build(**placeholders)`` (a scalar loss) and its gradients; write ``name.npz``."""
    g = tf.Graph()
    with g.as_default():
        ph = {k: v1.placeholder(tf.as_dtype(v.dtype), v.shape, name=k) for k, v in inputs.items()}
        loss = build(**ph)
        floats = [k for k, v in inputs.items() if v.dtype.kind == "f"]
        grads = tf.gradients(loss, [ph[k] for k in floats])
        with v1.Session(graph=g) as sess:
            feed = {ph[k]: v for k, v in inputs.items()}
            y = sess.run(loss, feed)
            got = {k: sess.run(d, feed) for k, d in zip(floats, grads) if d is not None}
    arrays = {f"x/{k}": v for k, v in inputs.items()}
    arrays.update({f"dx/{k}": v for k, v in got.items()})
    np.savez(OUT / f"{name}.npz", y=np.asarray(y), **arrays)
    print(name, "y", y, "grads", sorted(got))


# -- calls, conds, cases --------------------------------------------------------------------

rng = np.random.default_rng(27)
X = rng.uniform(-1, 1, (3, 4))
W = rng.uniform(-1, 1, (4, 2))


def cond_model(x: Any, w: Any, pred: Any) -> Any:
    y = tf.cond(pred, lambda: tf.tanh(tf.matmul(x, w)), lambda: x[:, :2] * 3.0 - 1.0)
    return tf.reduce_sum(y * weights(3, 2))


def case_model(x: Any, w: Any, index: Any) -> Any:
    y = tf.switch_case(
        index,
        [
            lambda: tf.matmul(tf.sin(x), w),
            lambda: tf.nn.relu(tf.matmul(x, w)) * 2.0,
            lambda: x[:, 1:3] * 2.0,
        ],
    )
    return tf.reduce_sum(y * weights(3, 2))


def write_call_case() -> None:
    """A graph that calls a tf.function (which calls another): PartitionedCall nodes.
    The GraphDef (forward only) is call.pb; the test imports it."""

    @tf.function
    def inner(a: Any) -> Any:
        return tf.sin(a) * a

    @tf.function
    def outer(x: Any, w: Any) -> Any:
        return tf.tanh(tf.matmul(inner(x), w)), tf.reduce_sum(x * x)

    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(f64, [3, 4], name="x")
        w = v1.placeholder(f64, [4, 2], name="w")
        a, b = outer(x, w)
        loss = tf.identity(tf.reduce_sum(a * weights(3, 2)) + b, name="loss")
        (OUT / "call.pb").write_bytes(g.as_graph_def().SerializeToString(deterministic=True))
        dx, dw = tf.gradients(loss, [x, w])
        with v1.Session(graph=g) as sess:
            y, gx, gw = sess.run([loss, dx, dw], {x: X, w: W})
    np.savez(OUT / "call.npz", y=y, **{"x/x": X, "x/w": W, "dx/x": gx, "dx/w": gw})
    print("call", "y", y)


# -- TensorLists (tf.TensorArray in graph mode, and the list ops themselves) ------------------

XL = rng.uniform(-1, 1, (4, 3))
VL = rng.uniform(-1, 1, (2, 3))


def tensor_array_model(x: Any, v: Any) -> Any:
    """TensorListFromTensor, ScatterIntoExistingList, GetItem, Gather and Stack."""
    ta = tf.TensorArray(f64, size=4).unstack(x)
    ta = ta.scatter([1, 3], v * 2.0)
    read = ta.read(0) * ta.read(3)
    gathered = ta.gather([2, 1])
    return (
        tf.reduce_sum(read * weights(3))
        + tf.reduce_sum(gathered * weights(2, 3))
        + tf.reduce_sum(ta.stack() * weights(4, 3))
    )


def tensor_array_write_model(x: Any, v: Any) -> Any:
    """TensorListReserve and SetItem (an element written twice: the first write gets
    zeros), and a dynamic TensorArray grown by a write (resize_if_index_out_of_bounds)."""
    ta = tf.TensorArray(f64, size=3).write(0, x[0] * 2.0).write(1, v[0]).write(1, x[1])
    grown = tf.TensorArray(f64, size=1, dynamic_size=True).write(0, v[1]).write(2, tf.sin(x[2]))
    return tf.reduce_sum(ta.stack() * weights(3, 3)) + tf.reduce_sum(grown.stack() * weights(3, 3))


def tensor_array_split_model(x: Any) -> Any:
    """TensorListSplit and TensorListConcatV2."""
    ta = tf.TensorArray(f64, size=2, infer_shape=False).split(x * x, [1, 3])
    return tf.reduce_sum(ta.concat() * weights(4, 3)) + tf.reduce_sum(ta.read(1) * weights(3, 3))


def tensor_list_model(x: Any, v: Any) -> Any:
    """TensorListPushBack, PopBack and Resize."""
    lst = list_ops.tensor_list_from_tensor(x, element_shape=[3])
    lst = list_ops.tensor_list_push_back(lst, v[0] * 2.0)
    lst, last = list_ops.tensor_list_pop_back(lst, element_dtype=f64)
    lst = list_ops.tensor_list_push_back(lst, tf.sin(v[1]))
    cut = list_ops.tensor_list_resize(lst, 3)
    stacked = list_ops.tensor_list_stack(lst, element_dtype=f64, element_shape=[3])
    kept = list_ops.tensor_list_stack(cut, element_dtype=f64, element_shape=[3])
    return (
        tf.reduce_sum(last * last * weights(3))
        + tf.reduce_sum(stacked * weights(5, 3))
        + tf.reduce_sum(kept * weights(3, 3))
    )


# -- while loops ----------------------------------------------------------------------------

T, B, D, H = 4, 2, 3, 5
RNN_INPUTS = {
    "xs": rng.uniform(-1, 1, (T, B, D)),
    "w": rng.uniform(-0.6, 0.6, (D, H)),
    "u": rng.uniform(-0.6, 0.6, (H, H)),
    "h0": rng.uniform(-1, 1, (B, H)),
}


def rnn_model(xs: Any, w: Any, u: Any, h0: Any) -> Any:
    """h = tanh(x_t w + h u) over a TensorArray of inputs, each h written to another."""
    inputs = tf.TensorArray(f64, size=T).unstack(xs)

    def body(t: Any, h: Any, out: Any) -> Any:
        h = tf.tanh(tf.matmul(inputs.read(t), w) + tf.matmul(h, u))
        return t + 1, h, out.write(t, h)

    _, last, out = tf.while_loop(
        lambda t, h, out: t < T, body, [0, h0, tf.TensorArray(f64, size=T)]
    )
    return tf.reduce_sum(out.stack() * weights(T, B, H)) + tf.reduce_sum(last * last)


XW = rng.uniform(0.5, 1.0, (3,))
WW = rng.uniform(0.1, 0.3, (3,))


def data_dependent_model(x: Any, w: Any) -> Any:
    """As many iterations as it takes the norm to pass a bound (5 here)."""
    (y,) = tf.while_loop(lambda a: tf.reduce_sum(a * a) < 50.0, lambda a: [a * 1.5 + w], [x])
    return tf.reduce_sum(y * weights(3))


def cond_in_loop_model(x: Any, w: Any) -> Any:
    def body(i: Any, a: Any) -> Any:
        a = tf.cond(tf.equal(i % 2, 0), lambda: tf.sin(a) * w, lambda: a * a + w)
        return i + 1, a

    return tf.reduce_sum(tf.while_loop(lambda i, a: i < 5, body, [0, x])[1] * weights(3))


def nested_loops_model(x: Any, w: Any) -> Any:
    def outer(i: Any, a: Any) -> Any:
        inner = tf.while_loop(lambda j, b: j < 3, lambda j, b: (j + 1, tf.tanh(b * w + a)), [0, a])
        return i + 1, inner[1]

    return tf.reduce_sum(tf.while_loop(lambda i, a: i < 2, outer, [0, x])[1] * weights(3))


def maximum_iterations_model(x: Any, w: Any) -> Any:
    """The cond allows 10 iterations; maximum_iterations stops after 4."""
    _, y = tf.while_loop(
        lambda i, a: i < 10, lambda i, a: (i + 1, tf.sin(a) + w), [0, x], maximum_iterations=4
    )
    return tf.reduce_sum(y * weights(3))


def built_cases() -> None:
    record("while_rnn", rnn_model, RNN_INPUTS)
    record("while_data_dependent", data_dependent_model, {"x": XW, "w": WW})
    record("while_cond_in_loop", cond_in_loop_model, {"x": XW, "w": WW})
    record("while_nested", nested_loops_model, {"x": XW, "w": WW})
    record("while_maximum_iterations", maximum_iterations_model, {"x": XW, "w": WW})
    record("tensor_array", tensor_array_model, {"x": XL, "v": VL})
    record("tensor_array_write", tensor_array_write_model, {"x": XL, "v": VL})
    record("tensor_array_split", tensor_array_split_model, {"x": XL})
    record("tensor_list", tensor_list_model, {"x": XL, "v": VL})
    for pred in (True, False):
        record(f"cond_{str(pred).lower()}", cond_model, {"x": X, "w": W, "pred": np.array(pred)})
    for index in (0, 1, 2, 7):  # 7: out of range, the last branch
        record(f"case_{index}", case_model, {"x": X, "w": W, "index": np.int32(index)})


# -- imported graphs --------------------------------------------------------------------


def imported_case(name: str) -> None:
    """TensorFlow's gradient of the sum of fixture ``name``'s float outputs with respect to
    its float inputs, at its recorded feeds (run in a process of its own)."""
    cases = json.loads((CONTROL_FLOW / "cases.json").read_text())
    case = next(c for c in cases if c["name"] == name)
    graph_def = v1.GraphDef()
    graph_def.ParseFromString((CONTROL_FLOW / case["file"]).read_bytes())
    saved = np.load(CONTROL_FLOW / f"{name}.npz")
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
        feeds = {f: g.get_tensor_by_name(f) for f in case["feeds"]}
        xs = [f for f in case["feeds"] if feeds[f].dtype.is_floating]
        ys = [g.get_tensor_by_name(f) for f in case["fetches"]]
        loss = tf.add_n([tf.reduce_sum(y) for y in ys if y.dtype.is_floating])
        grads = tf.gradients(loss, [feeds[f] for f in xs])
        with v1.Session(graph=g) as sess:
            values = sess.run(grads, {feeds[f]: saved[f"feed/{f}"] for f in case["feeds"]})
    np.savez(OUT / f"imported_{name}.npz", **{f"dx/{f}": v for f, v in zip(xs, values)})


def imported_cases() -> None:
    """Each tf.function and Keras case TensorFlow can differentiate; each in a process."""
    for case in json.loads((CONTROL_FLOW / "cases.json").read_text()):
        if case["kind"] not in ("keras", "tf.function"):
            continue
        name = case["name"]
        run = subprocess.run(
            [sys.executable, __file__, "--imported", name], capture_output=True, text=True
        )
        last = run.stderr.strip().splitlines()[-1:] if run.returncode else ["ok"]
        print(f"imported_{name}", last[0][:160])


def main() -> None:
    if sys.argv[1:2] == ["--imported"]:
        imported_case(sys.argv[2])
        return
    OUT.mkdir(parents=True, exist_ok=True)
    write_call_case()  # first: its functions' names carry TensorFlow's process-wide counters
    built_cases()
    imported_cases()


if __name__ == "__main__":
    main()
