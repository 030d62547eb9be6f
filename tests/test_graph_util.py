"""mg.graph_util: freezing a Session's variables into constants, turning a frozen graph's
weights back into variables (fine-tuning), and pruning a GraphDef."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors

pytest.importorskip("tensorboard", reason="graph_util works on GraphDefs: the tensorboard extra")

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "graphs"


def _trained():
    """A graph with two variables, one updated by a run, and a Session holding them."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, 2], name="x")
        w = mg.Variable(np.float32([[1, 2], [3, 4]]), name="w")
        b = mg.Variable(np.float32([0.5, -0.5]), name="b")
        y = mg.identity(mg.matmul(x, w) + b, name="y")
        bump = b.assign_add([1.0, 1.0], name="bump")
        init = mg.global_variables_initializer()
    sess = mg.Session(g)
    sess.run(init)
    sess.run(bump)
    return g, sess, y


def test_convert_variables_to_constants_freezes_the_sessions_values():
    g, sess, y = _trained()
    frozen = mg.graph_util.convert_variables_to_constants(sess, g.as_graph_def(), ["y"])
    ops = {n.name: n.op for n in frozen.node}
    assert ops["w"] == "Const" and ops["b"] == "Const"
    assert "bump" not in ops and "init" not in ops  # pruned to what y needs
    assert not {"VarHandleOp", "ReadVariableOp", "AssignVariableOp"} & set(ops.values())
    g2 = mg.Graph()
    with g2.as_default():
        mg.import_graph_def(frozen, name="")
    xv = np.float32([[1, 0], [0, 1]])
    want = sess.run(y, {"x:0": xv})
    np.testing.assert_array_equal(mg.Session(g2).run("y:0", {"x:0": xv}), want)
    np.testing.assert_array_equal(want, [[2.5, 2.5], [4.5, 4.5]])  # b after the bump


def test_convert_variables_to_constants_lists_and_errors():
    g, sess, _ = _trained()
    gd = g.as_graph_def()
    only_w = mg.graph_util.convert_variables_to_constants(
        sess, gd, ["y"], variable_names_whitelist=["w"]
    )
    assert {n.name: n.op for n in only_w.node}["b"] == "VarHandleOp"
    not_b = mg.graph_util.convert_variables_to_constants(
        sess, gd, ["y"], variable_names_blacklist=["b"]
    )
    assert {n.name: n.op for n in not_b.node}["b"] == "VarHandleOp"
    with pytest.raises(errors.NotFoundError, match="nope is not in graph"):
        mg.graph_util.convert_variables_to_constants(sess, gd, ["nope"])
    with pytest.raises(errors.UnimplementedError):  # an assign cannot be frozen
        mg.graph_util.convert_variables_to_constants(sess, gd, ["bump"])
    fresh = mg.Session(g)
    with pytest.raises(errors.FailedPreconditionError, match="variable w") as e:
        mg.graph_util.convert_variables_to_constants(fresh, gd, ["y"])
    assert e.value.node_name == "w"


def test_extract_sub_graph_keeps_what_the_nodes_need():
    g, _, _ = _trained()
    sub = mg.graph_util.extract_sub_graph(g.as_graph_def(), ["bump"])
    names = {n.name for n in sub.node}
    assert "bump" in names and "b" in names and "w" not in names and "y" not in names


def _keras_mlp():
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(str(FIXTURES / "keras_mlp.pb"), name="")
    return g


def test_constants_to_variables_keeps_the_models_results():
    g = _keras_mlp()
    data = np.load(FIXTURES / "keras_mlp.npz")
    feed = {k[len("feed/") :]: v for k, v in data.items() if k.startswith("feed/")}
    fetch = [k[len("fetch/") :] for k in data if k.startswith("fetch/")]
    tuned = mg.graph_util.constants_to_variables(g)
    variables = mg.trainable_variables(tuned)
    weights = [
        n.name
        for n in g.nodes()
        if n.type_string == "Const"
        and n.output_specs[0].dtype == mg.float32
        and (n.output_specs[0].shape.num_elements() or 0) > 1
    ]
    assert [v.name for v in variables] == [f"{w}:0" for w in weights] and weights
    assert all(tuned.node(w).type_string == "VarHandleOp" for w in weights)
    with tuned.as_default():
        init = mg.global_variables_initializer()
    with mg.Session(tuned) as sess:
        sess.run(init)
        got = sess.run(fetch, feed)
    want = mg.Session(g).run(fetch, feed)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert not mg.trainable_variables(g)  # the original graph is left as it was


def test_constants_to_variables_by_name_and_gradients_reach_them():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [3], name="x")
        scale = mg.constant(np.float64([1, 2, 3]), name="scale")
        shift = mg.constant(np.float64([0, 0, 1]), name="shift")
        mg.identity(x * scale + shift, name="y")
    tuned = mg.graph_util.constants_to_variables(g, names=["shift"])
    (shift_var,) = mg.trainable_variables(tuned)
    assert shift_var.name == "shift:0" and tuned.node("scale").type_string == "Const"
    with tuned.as_default():
        y = tuned.get_tensor_by_name("y:0")
        (grad,) = mg.gradients(y * y, shift_var)
        step = shift_var.assign_sub(0.25 * grad)
        init = mg.global_variables_initializer()
    xv = np.float64([1, 1, 1])
    with mg.Session(tuned) as sess:
        sess.run(init)
        feed = {"x:0": xv}
        np.testing.assert_array_equal(sess.run(grad, feed), 2 * (xv * [1, 2, 3] + [0, 0, 1]))
        sess.run(step, feed)
        np.testing.assert_array_equal(sess.run(shift_var), [-0.5, -1.0, -1.0])
    for bad, message in (("nope", "not in the graph"), ("x", "not a Const")):
        with pytest.raises(errors.InvalidArgumentError, match=message):
            mg.graph_util.constants_to_variables(g, names=[bad])
