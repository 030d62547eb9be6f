"""Writes tests/fixtures/control_flow/: TensorFlow graphs with loops, conditionals and calls.

Run by hand, with TensorFlow 2.21 in a scratch virtual environment (never a dependency of
minigraph), from the repository root::

    python3 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu==2.21.0
    /tmp/tfvenv/bin/python tests/tf_oracle/make_control_flow_fixtures.py

The files have tests/fixtures/graphs/'s formats: for each case ``<name>.pb`` (a binary
GraphDef) and ``<name>.npz`` holding ``feed/<tensor>`` (the inputs) and ``fetch/<tensor>``
(TensorFlow's outputs for them, from a TF1 Session running the saved GraphDef), listed in
``cases.json`` with the op types of the top-level nodes (``ops``), of the function library's
bodies (``function_ops``) and the library's function names (``functions``).

Each ``tf.function`` or Keras case is frozen twice with ``convert_variables_to_constants_v2``:
``<name>_fn`` with ``lower_control_flow=False`` keeps the functional ops (While, If, Case,
PartitionedCall ...) and their function library; ``<name>_lowered`` with
``lower_control_flow=True`` has TF1's dataflow ops (Enter, Exit, Switch, Merge,
NextIteration, LoopCond) instead. The ``tf1_*`` cases are graph-mode graphs built with
control flow v1 (switched off again right after), and so are lowered to begin with.
``*_bench`` cases are bigger, for benchmarks only.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import attr_value_pb2  # noqa: E402
from tensorflow.python.framework.convert_to_constants import (  # noqa: E402
    convert_variables_to_constants_v2,
)

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "control_flow"
v1 = tf.compat.v1
keras = tf.keras
CASES: list[dict[str, Any]] = []
# float32 loops of small matmuls, sigmoids and tanh: sums in another order
TOL = {"rtol": 1e-5, "atol": 1e-5}


def _f32(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _random_biases(model: Any, rng: np.random.Generator) -> None:
    """Keras starts biases at 0 (1 for an LSTM's forget gate): make them matter."""
    for w in model.weights:
        if "bias" in w.path:
            w.assign(w.numpy() + rng.uniform(-0.5, 0.5, w.shape).astype(np.float32))


def _canonical(graph_def: Any, first: list[str]) -> Any:
    """The same graph with its nodes, functions and function names in a fixed order.

    Grappler lists nodes and functions in no fixed order, and function names carry
    TensorFlow's process-wide counters (``cond_true_8217``); so that re-running the script
    rewrites the same bytes, nodes are sorted by name (the Placeholders ``first``, in the
    inputs' order), functions are renamed ``<name without numbers>_<k>`` with k in the order
    they are first referenced, and listed in that order.
    """
    gd = type(graph_def)()
    gd.CopyFrom(graph_def)
    rank = {name: i for i, name in enumerate(first)}
    nodes = sorted(gd.node, key=lambda n: (rank.get(n.name, len(rank)), n.name))
    library = {f.signature.name: f for f in gd.library.function}
    renamed: dict[str, str] = {}

    def visit_attr(value: Any) -> None:
        funcs = [value.func] if value.HasField("func") else []
        funcs += list(value.list.func) if value.HasField("list") else []
        for func in funcs:
            if func.name in library and func.name not in renamed:
                stem = re.sub(r"_?\d+", "", func.name).strip("_")
                renamed[func.name] = f"{stem}_{len(renamed)}"
                for n in sorted(library[func.name].node_def, key=lambda n: n.name):
                    visit_node(n)
            for key in sorted(func.attr):
                visit_attr(func.attr[key])

    def visit_node(node: Any) -> None:
        for key in sorted(node.attr):
            visit_attr(node.attr[key])

    for n in nodes:
        visit_node(n)
    assert set(renamed) == set(library), "functions no node calls"

    def rename_attr(value: Any) -> None:
        funcs = [value.func] if value.HasField("func") else []
        funcs += list(value.list.func) if value.HasField("list") else []
        for func in funcs:
            func.name = renamed.get(func.name, func.name)
            for key in func.attr:
                rename_attr(func.attr[key])

    for n in nodes:
        for key in n.attr:
            rename_attr(n.attr[key])
    functions = [library[old] for old in renamed]  # in the order they were first referenced
    for f in functions:
        f.signature.name = renamed[f.signature.name]
        # an unused captured input is named after its function: while_cond_9738___redundant...
        args = {}
        for arg in f.signature.input_arg:
            new = re.sub(r"_\d+(___redundant_placeholder\d+)$", r"\1", arg.name)
            if new != arg.name and new not in {a.name for a in f.signature.input_arg}:
                args[arg.name], arg.name = new, new
        for n in f.node_def:
            for i, source in enumerate(n.input):
                head, sep, tail = source.lstrip("^").partition(":")
                if head in args:
                    n.input[i] = ("^" if source.startswith("^") else "") + args[head] + sep + tail
        body = sorted(f.node_def, key=lambda n: n.name)
        del f.node_def[:]
        f.node_def.extend(body)
        for n in f.node_def:
            for key in n.attr:
                rename_attr(n.attr[key])
    assert not gd.library.gradient, "gradient functions are not renamed"
    del gd.node[:]
    gd.node.extend(nodes)
    del gd.library.function[:]
    gd.library.function.extend(functions)
    return gd


def _save(
    name: str,
    graph_def: Any,
    feeds: dict[str, np.ndarray],
    fetches: list[str],
    kind: str,
    **extra: Any,
) -> None:
    """Run ``graph_def`` in a TF1 Session on ``feeds`` and save graph, inputs and outputs."""
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    with v1.Session(graph=g) as sess:
        values = sess.run(fetches, {g.get_tensor_by_name(k): v for k, v in feeds.items()})
    # deterministic: attr maps in a fixed order
    (OUT / f"{name}.pb").write_bytes(graph_def.SerializeToString(deterministic=True))
    arrays = {f"feed/{k}": v for k, v in feeds.items()}
    arrays.update({f"fetch/{k}": np.asarray(v) for k, v in zip(fetches, values)})
    np.savez_compressed(OUT / f"{name}.npz", **arrays)
    ops = sorted({n.op for n in graph_def.node})
    library = graph_def.library.function
    function_ops = sorted({n.op for f in library for n in f.node_def})
    read = {i.lstrip("^").split(":")[0] for n in graph_def.node for i in n.input}
    orphans = [
        n.name
        for n in graph_def.node
        if n.op == "Placeholder" and n.name not in read and f"{n.name}:0" not in feeds
    ]
    if orphans:
        note = (
            f"{len(orphans)} Placeholders named unused_control_flow_input* (some of dtype "
            "variant, some of unknown rank) that nothing reads: left over from "
            "convert_variables_to_constants_v2 lifting the lowered loops; their number "
            "and dtypes vary from run to run"
        )
        extra["note"] = extra["note"] + "; " + note if "note" in extra else note
    CASES.append(
        {
            "name": name,
            "file": name + ".pb",
            "feeds": list(feeds),
            "fetches": fetches,
            "kind": kind,
            "ops": ops,
            "function_ops": function_ops,
            "functions": sorted(f.signature.name for f in library),
            **extra,
        }
    )
    size = len(graph_def.SerializeToString())
    print(f"{name}.pb: {len(graph_def.node)} nodes, {size} bytes, ops {ops}")
    if function_ops:
        print(f"  in functions {function_ops}")


def _frozen(
    name: str,
    fn: Callable[..., Any],
    specs: list[tf.TensorSpec],
    feeds: list[np.ndarray],
    kind: str = "tf.function",
    notes: dict[str, str] | None = None,
    **extra: Any,
) -> None:
    """``fn`` traced for ``specs`` and frozen twice: ``<name>_fn`` keeps the functional
    control flow ops, ``<name>_lowered`` has them lowered to Switch/Merge/Enter/Exit."""
    for variant, lower in (("fn", False), ("lowered", True)):
        concrete = tf.function(fn).get_concrete_function(*specs)
        if not lower:
            # the converter marks If and While "_lower_using_switch_merge: false" but not
            # Case, which grappler would lower to Switch/Merge (_SwitchN): mark it here
            for op in concrete.graph.get_operations():
                if op.type in ("Case", "StatelessCase"):
                    op._set_attr("_lower_using_switch_merge", attr_value_pb2.AttrValue(b=False))
        frozen = convert_variables_to_constants_v2(concrete, lower_control_flow=lower)
        gd = frozen.graph.as_graph_def()
        ins = [t.name for t in frozen.inputs if t.dtype != tf.resource]
        gd = _canonical(gd, [t.split(":")[0] for t in ins])
        outs = [t.name for t in frozen.outputs]
        note = (notes or {}).get(variant)
        _save(
            f"{name}_{variant}",
            gd,
            dict(zip(ins, feeds)),
            outs,
            kind,
            variant=variant,
            **({"note": note} if note else {}),
            **extra,
        )


@contextlib.contextmanager
def _control_flow_v1() -> Iterator[None]:
    """TF1's control flow (Enter/Exit/Switch/Merge, TensorArrayV3) while building a graph.

    The switch is global in TensorFlow; it is turned back on at the end."""
    v1.disable_control_flow_v2()
    try:
        yield
    finally:
        v1.enable_control_flow_v2()


def _tf1(name: str, build: Callable[[], Any], feeds: dict[str, np.ndarray], **extra: Any) -> None:
    """A tf.compat.v1 graph-mode graph with control flow v1: ``build()`` returns the fetches."""
    g = tf.Graph()
    with g.as_default(), _control_flow_v1():
        outs = build()
    outs = outs if isinstance(outs, list | tuple) else [outs]
    gd = _canonical(g.as_graph_def(), [])
    _save(name, gd, feeds, [t.name for t in outs], "graph-mode-v1", variant="tf1", **extra)


def keras_rnns() -> None:
    rng = np.random.default_rng(20)
    layers = keras.layers
    x = _f32(rng, 3, 5, 4)  # batch 3, 5 steps, 4 features
    spec = [tf.TensorSpec([None, 5, 4], tf.float32, name="x")]

    def model(seed: int, layer: Callable[[], Any], mask: bool = False) -> Any:
        keras.utils.set_random_seed(seed)  # before the layers are made: they draw seeds
        body = [layers.Masking(mask_value=0.0)] if mask else []
        m = keras.Sequential([keras.Input((5, 4)), *body, layer()])
        _random_biases(m, rng)
        return m

    why = "five steps of small float32 matmuls, sigmoids and tanh"
    lstm = model(21, lambda: layers.LSTM(8))
    _frozen("keras_lstm", lambda x: lstm(x), spec, [x], kind="keras", why=why, **TOL)
    gru = model(22, lambda: layers.GRU(8))
    _frozen("keras_gru", lambda x: gru(x), spec, [x], kind="keras", why=why, **TOL)
    bilstm = model(23, lambda: layers.Bidirectional(layers.LSTM(8, return_sequences=True)))
    _frozen("keras_bilstm", lambda x: bilstm(x), spec, [x], kind="keras", why=why, **TOL)
    rnn_seq = model(24, lambda: layers.SimpleRNN(8, return_sequences=True))
    _frozen("keras_simplernn_seq", lambda x: rnn_seq(x), spec, [x], kind="keras", why=why, **TOL)
    rnn_last = model(25, lambda: layers.SimpleRNN(8))
    _frozen("keras_simplernn_last", lambda x: rnn_last(x), spec, [x], kind="keras", why=why, **TOL)
    masked = model(26, lambda: layers.LSTM(8), mask=True)
    xm = x.copy()
    xm[0, 3:] = 0.0  # trailing all-zero steps: masked, the state is carried over
    xm[2, 4:] = 0.0
    _frozen(
        "keras_masking_lstm",
        lambda x: masked(x),
        spec,
        [xm],
        kind="keras",
        why=why + "; rows 0 and 2 end in masked steps",
        **TOL,
    )


def loops_and_conds() -> None:
    rng = np.random.default_rng(30)
    w = tf.constant(_f32(rng, 4, 4) * 0.5)

    def halve(x):
        # halve until every |x| < 1: the trip count depends on the values
        def cond(n, x):
            return tf.reduce_max(tf.abs(x)) >= 1.0

        def body(n, x):
            return n + 1, x * 0.5

        return tf.while_loop(cond, body, [tf.constant(0), x])

    _frozen(
        "while_data_dependent",
        halve,
        [tf.TensorSpec([None], tf.float32, name="x")],
        [np.array([3.5, -37.25, 0.5, 12.0], np.float32)],
        why="halvings are exact; 6 iterations",
        rtol=0.0,
        atol=0.0,
    )

    def branches(x):
        return tf.cond(
            tf.reduce_sum(x) > 0.0,
            lambda: tf.matmul(x, w),
            lambda: tf.tanh(x - tf.reduce_sum(x, axis=1, keepdims=True)),
        )

    spec = [tf.TensorSpec([None, 4], tf.float32, name="x")]
    x = _f32(rng, 3, 4)
    pos = np.abs(x)
    _frozen("cond_true", branches, spec, [pos], why="a 4-term matmul (the true branch)", **TOL)
    _frozen(
        "cond_false",
        branches,
        spec,
        [-pos],
        why="the same graph as cond_true, fed so the false branch (sum, tanh) runs",
        **TOL,
    )

    def nested(x):
        def outer_body(i, acc):
            def inner_body(j, acc):
                return j + 1, tf.tanh(tf.matmul(acc, w) + x * tf.cast(i + j, tf.float32))

            _, acc = tf.while_loop(lambda j, acc: j < i + 2, inner_body, [0, acc])
            return i + 1, acc

        return tf.while_loop(lambda i, acc: i < 3, outer_body, [0, x])[1]

    _frozen("nested_loops", nested, spec, [x], why="9 steps of 4-term matmuls and tanh", **TOL)

    def loop_in_cond(x):
        def loop():
            return tf.while_loop(
                lambda i, y: i < 4, lambda i, y: (i + 1, tf.tanh(tf.matmul(y, w))), [0, x]
            )[1]

        return tf.cond(tf.reduce_sum(x) > 0.0, loop, lambda: -x)

    _frozen(
        "loop_in_cond",
        loop_in_cond,
        spec,
        [pos],
        why="fed so the branch with the loop runs: 4 steps of a 4-term matmul and tanh",
        **TOL,
    )

    def cond_in_loop(x):
        def body(i, y):
            y = tf.cond(tf.equal(i % 2, 0), lambda: tf.matmul(y, w), lambda: tf.sin(y) - 1.0)
            return i + 1, y

        return tf.while_loop(lambda i, y: i < 5, body, [0, x])

    _frozen(
        "cond_in_loop",
        cond_in_loop,
        spec,
        [x],
        why="both branches run, alternately: 3 matmuls and 2 sines",
        **TOL,
    )

    def switch(i, x):
        return tf.switch_case(
            i,
            [
                lambda: x * 2.0 + 1.0,
                lambda: tf.matmul(x, w),
                lambda: tf.nn.relu(x) - tf.reduce_mean(x),
            ],
        )

    specs = [tf.TensorSpec([], tf.int32, name="i"), spec[0]]
    notes = {
        "fn": "convert_variables_to_constants_v2(lower_control_flow=False) marks If and While "
        "_lower_using_switch_merge=false but not Case: this script marks the Case node "
        "itself before freezing, else grappler lowers it as in the _lowered variant",
        "lowered": "Case is lowered to _SwitchN (TensorFlow's internal N-way Switch, "
        "num_outs=3, fed the clamped branch index) and Merge",
    }
    for index, label in ((0, "0"), (1, "1"), (7, "default")):
        _frozen(
            f"case_branches_{label}",
            switch,
            specs,
            [np.int32(index), x],
            notes=notes,
            why=f"index {index}: "
            + (
                "branch 0"
                if index == 0
                else "branch 1"
                if index == 1
                else "out of range: the last branch"
            ),
            **TOL,
        )


def functional_ops() -> None:
    rng = np.random.default_rng(40)
    x = _f32(rng, 3, 4)
    spec = [tf.TensorSpec([None, 4], tf.float32, name="x")]

    _frozen(
        "map_fn",
        lambda x: tf.map_fn(lambda r: tf.tanh(r) * tf.reduce_sum(r * r), x),
        spec,
        [x],
        why="a row's tanh times its sum of squares",
        **TOL,
    )
    _frozen(
        "scan",
        lambda x: tf.scan(lambda a, r: a * 0.5 + r, x),
        spec,
        [x],
        why="a cumulative decayed sum over rows",
        **TOL,
    )

    def ta_write(x):
        n = tf.shape(x)[0]
        ta = tf.TensorArray(tf.float32, size=n)

        def body(i, ta):
            return i + 1, ta.write(i, tf.reduce_sum(x[: i + 1], axis=0) * tf.cast(i, tf.float32))

        return tf.while_loop(lambda i, ta: i < n, body, [0, ta])[1].stack()

    _frozen("tensor_array", ta_write, spec, [x], why="prefix sums of rows, scaled", **TOL)

    def ta_read(x):
        ta = tf.TensorArray(tf.float32, size=tf.shape(x)[0]).unstack(x)

        def body(i, acc):
            return i + 1, tf.tanh(acc + ta.read(i))

        return tf.while_loop(lambda i, acc: i < ta.size(), body, [0, tf.zeros([4])])[1]

    _frozen("tensor_array_unstack", ta_read, spec, [x], why="a tanh recurrence over rows", **TOL)

    def ta_dynamic(x):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)

        def body(i, y, ta):
            return i + 1, y * 0.5, ta.write(i, y)

        n, _, ta = tf.while_loop(lambda i, y, ta: tf.reduce_max(tf.abs(y)) >= 1.0, body, [0, x, ta])
        return n, ta.stack()

    _frozen(
        "tensor_array_dynamic",
        ta_dynamic,
        [tf.TensorSpec([None], tf.float32, name="x")],
        [np.array([3.5, -9.0, 0.25], np.float32)],
        why="halvings are exact; the array grows to 4 elements",
        rtol=0.0,
        atol=0.0,
    )


def calls() -> None:
    rng = np.random.default_rng(50)
    w = tf.Variable(_f32(rng, 4, 4) * 0.5)
    noinline = {"_noinline": True}

    @tf.function(experimental_attributes=noinline)
    def leaf(x):  # reads a variable: called with StatefulPartitionedCall
        return tf.tanh(tf.matmul(x, w))

    @tf.function(experimental_attributes=noinline)
    def pure(x):  # no variable: called with PartitionedCall
        return tf.nn.relu(x) * 2.0 - 1.0

    @tf.function(experimental_attributes=noinline)
    def middle(x):
        return leaf(x) + pure(x)

    def outer(x):
        return middle(x) * 0.5 + leaf(x + 1.0), pure(x)

    _frozen(
        "partitioned_call",
        outer,
        [tf.TensorSpec([None, 4], tf.float32, name="x")],
        [_f32(rng, 3, 4)],
        notes={
            "lowered": "lowering keeps the calls of _noinline functions (only If, While "
            "and Case are lowered)",
        },
        why="4-term matmuls and tanh",
        **TOL,
    )


def tf1_graphs() -> None:
    rng = np.random.default_rng(60)
    ph = v1.placeholder
    x = _f32(rng, 3, 4)
    w_value = _f32(rng, 4, 4) * 0.5

    def while_loop():
        xs = ph(tf.float32, [None, 4], name="x")
        w = tf.constant(w_value)
        _, y = v1.while_loop(
            lambda i, y: i < 4, lambda i, y: (i + 1, tf.tanh(tf.matmul(y, w) + xs)), [0, xs]
        )
        return tf.identity(y, name="y")

    _tf1("tf1_while", while_loop, {"x:0": x}, why="4 steps of a 4-term matmul and tanh", **TOL)

    def cond():
        xs = ph(tf.float32, [None, 4], name="x")
        w = tf.constant(w_value)
        pred = tf.reduce_sum(xs) > 0.0

        def branches(p, name):
            return v1.cond(
                p,
                lambda: tf.matmul(xs, w),
                lambda: tf.tanh(xs - tf.reduce_sum(xs, axis=1, keepdims=True)),
                name=name,
            )

        # the same cond twice, on a predicate and its negation: both branches run
        return [
            tf.identity(branches(pred, "c1"), name="y_true"),
            tf.identity(branches(tf.logical_not(pred), "c2"), name="y_false"),
        ]

    _tf1("tf1_cond", cond, {"x:0": np.abs(x)}, why="a matmul, and a sum and tanh", **TOL)

    def nested():
        xs = ph(tf.float32, [None, 4], name="x")
        w = tf.constant(w_value)

        def outer_body(i, acc):
            def inner_body(j, acc):
                return j + 1, tf.tanh(tf.matmul(acc, w) + xs * tf.cast(i + j, tf.float32))

            _, acc = v1.while_loop(lambda j, acc: j < i + 2, inner_body, [0, acc])
            return i + 1, acc

        return tf.identity(v1.while_loop(lambda i, acc: i < 3, outer_body, [0, xs])[1], name="y")

    _tf1("tf1_nested_while", nested, {"x:0": x}, why="9 steps of 4-term matmuls and tanh", **TOL)

    def tensor_array():
        xs = ph(tf.float32, [None, 4], name="x")
        n = tf.shape(xs)[0]
        inputs = tf.TensorArray(tf.float32, size=n).unstack(xs)
        outputs = tf.TensorArray(tf.float32, size=n)

        def body(i, acc, out):
            acc = tf.tanh(acc + inputs.read(i))
            return i + 1, acc, out.write(i, acc * 2.0)

        _, acc, outputs = v1.while_loop(
            lambda i, acc, out: i < n, body, [0, tf.zeros([4]), outputs]
        )
        return [tf.identity(acc, name="last"), tf.identity(outputs.stack(), name="all")]

    _tf1(
        "tf1_tensor_array",
        tensor_array,
        {"x:0": x},
        why="a tanh recurrence over rows, read from and written to TensorArrayV3s",
        **TOL,
    )

    def while_in_cond():
        xs = ph(tf.float32, [None, 4], name="x")
        w = tf.constant(w_value)

        def loop():
            return v1.while_loop(
                lambda i, y: i < 3, lambda i, y: (i + 1, tf.tanh(tf.matmul(y, w))), [0, xs]
            )[1]

        return tf.identity(v1.cond(tf.reduce_sum(xs) > 0.0, loop, lambda: -xs), name="y")

    _tf1(
        "tf1_while_in_cond",
        while_in_cond,
        {"x:0": np.abs(x)},
        why="fed so the branch with the loop runs: 3 steps of a matmul and tanh",
        **TOL,
    )


def benchmarks() -> None:
    """Bigger recurrent models for benchmarks/ (batch dimension None: one graph serves batch
    1 and 64); the npz feeds batch 2."""
    rng = np.random.default_rng(70)
    layers = keras.layers
    x = _f32(rng, 2, 32, 16)
    spec = [tf.TensorSpec([None, 32, 16], tf.float32, name="x")]
    why = "32 steps of 80-term float32 matmuls, sigmoids and tanh"
    keras.utils.set_random_seed(71)
    lstm = keras.Sequential([keras.Input((32, 16)), layers.LSTM(64)])
    _random_biases(lstm, rng)
    _frozen(
        "lstm_bench", lambda x: lstm(x), spec, [x], kind="benchmark", why=why, rtol=1e-4, atol=1e-5
    )
    keras.utils.set_random_seed(72)
    gru = keras.Sequential([keras.Input((32, 16)), layers.GRU(64)])
    _random_biases(gru, rng)
    _frozen(
        "gru_bench", lambda x: gru(x), spec, [x], kind="benchmark", why=why, rtol=1e-4, atol=1e-5
    )


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    keras_rnns()
    loops_and_conds()
    functional_ops()
    calls()
    tf1_graphs()
    benchmarks()
    (OUT / "cases.json").write_text(json.dumps(CASES, indent=1) + "\n")
    readme()


def readme() -> None:
    rows = [
        f"| {c['name']} | {c['kind']} | {' '.join(c['ops'])} | {' '.join(c['function_ops'])} |"
        for c in CASES
    ]
    text = (
        """# Control flow and function fixtures

Written by `tests/tf_oracle/make_control_flow_fixtures.py` (TensorFlow 2.21, CPU, in a scratch
virtual environment; TensorFlow is never a dependency of minigraph), from the repository root:
`/tmp/tfvenv/bin/python tests/tf_oracle/make_control_flow_fixtures.py`. Each case is
`<name>.pb` (a binary GraphDef) and `<name>.npz` (`feed/<tensor>` inputs, `fetch/<tensor>`
TensorFlow's outputs from a TF1 Session running that GraphDef), listed in `cases.json` with
the op types of its top-level nodes (`ops`) and of its function library's bodies
(`function_ops`), its functions, tolerances and notes. `*_fn` cases are tf.functions or Keras
models frozen with `convert_variables_to_constants_v2(lower_control_flow=False)`: functional
While/If/Case/PartitionedCall nodes and a function library. `*_lowered` are the same frozen
with `lower_control_flow=True`: TF1 dataflow control flow (Enter, Exit, Switch, Merge,
NextIteration, LoopCond). `tf1_*` are graph-mode graphs built with control flow v1.
`*_bench` are bigger, for benchmarks only. The script sorts nodes and functions and renames
functions without TensorFlow's process-wide counters, so that most files come out the same
on every run; the `_lowered` loops (see their notes) and `partitioned_call` (its frozen
variable is a Const named by a counter) do not.

| case | kind | top-level ops | ops in functions |
|---|---|---|---|
"""
        + "\n".join(rows)
        + "\n"
    )
    (OUT / "README.md").write_text(text)


if __name__ == "__main__":
    main()
