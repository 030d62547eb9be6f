"""TensorFlow 1's reference variables (VariableV2, Assign, AssignAdd, AssignSub,
IsVariableInitialized) imported as resource variables (minigraph.ref_variables), against
what TensorFlow 2.21 computed with the same graph
(tests/tf_oracle/make_ref_variable_fixtures.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors

pytest.importorskip("tensorboard", reason="GraphDef import needs the tensorboard extra")

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "graphs"
EXPECTED = dict(np.load(FIXTURES / "tf1_ref_variables.npz"))
FEEDS = {k[len("feed/") :]: v for k, v in EXPECTED.items() if k.startswith("feed/")}


def _imported():
    g = mg.Graph()
    with g.as_default():
        # sgd_step's ApplyGradientDescent runs once minigraph has ResourceApplyGradientDescent
        mg.import_graph_def(str(FIXTURES / "tf1_ref_variables.pb"), name="", allow_unsupported=True)
    return g


def test_the_variables_become_resource_variables():
    g = _imported()
    types = {n.name: n.type_string for n in g.nodes()}
    assert types["w/resource"] == "VarHandleOp"
    assert g.get_operation_by_name("w/resource").get_attr("shared_name") == "w"
    assert types["w"] == "ReadVariableOp"  # fetching w:0 gives its value, as in TF1
    assert types["step_w"] == "ReadVariableOp" and types["step_w/update"] == "AssignSubVariableOp"
    assert types["bump/update"] == "AssignAddVariableOp"
    assert types["sgd_step/update_w/ApplyGradientDescent/update"] == (
        "ResourceApplyGradientDescent"
    )
    assert not {"VariableV2", "Assign", "AssignAdd", "AssignSub"} & set(types.values())
    assert g.get_tensor_by_name("w:0").shape.as_list() == [3, 1]


@pytest.mark.parametrize("way", ["manual_step", "sgd_step"])  # assign_sub, ApplyGradientDescent
def test_training_steps_match_tensorflow(any_device, way):
    g = _imported()
    with mg.Session(g) as sess:
        assert sess.run("w_ready:0") == EXPECTED[f"{way}/ready_before"]
        with pytest.raises(errors.FailedPreconditionError, match="variable w"):
            sess.run("w:0")
        sess.run("init")
        assert sess.run("w_ready:0")
        for step in range(3):
            sess.run(way, FEEDS)
            for v in ("w", "b", "count"):
                want = EXPECTED[f"{way}/{step}/{v}"]
                got = sess.run(f"{v}:0")
                assert got.dtype == want.dtype
                np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"{v} after {step}")
        np.testing.assert_allclose(sess.run("loss:0", FEEDS), EXPECTED[f"{way}/loss"], rtol=1e-6)


def _graph_def(text):
    from google.protobuf import text_format
    from tensorboard.compat.proto import graph_pb2

    return text_format.Parse(text, graph_pb2.GraphDef())


def _float(key):
    return f'attr {{ key: "{key}" value {{ type: DT_FLOAT }} }}'


SCALAR = 'attr { key: "shape" value { shape { } } }'
VALUE = 'attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: %s } } }'


def test_each_reader_reads_when_it_runs():
    """A reader placed after an assign (a control input) sees the new value; one placed
    nowhere in particular still reads the variable: each gets a read of its own."""
    gd = _graph_def(
        f'node {{ name: "v" op: "VariableV2" {_float("dtype")} {SCALAR} }}'
        f'node {{ name: "one" op: "Const" {_float("dtype")} {VALUE % 1.0} }}'
        f'node {{ name: "five" op: "Const" {_float("dtype")} {VALUE % 5.0} }}'
        f'node {{ name: "init" op: "Assign" input: "v" input: "one" {_float("T")} }}'
        f'node {{ name: "set" op: "Assign" input: "v" input: "five" {_float("T")} }}'
        f'node {{ name: "before" op: "Identity" input: "v" input: "^init" {_float("T")} }}'
        f'node {{ name: "after" op: "Identity" input: "v" input: "^set" {_float("T")} }}'
        f'node {{ name: "ok" op: "IsVariableInitialized" input: "v" {_float("dtype")} }}'
    )
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(gd, name="tf1")
    with mg.Session(g) as sess:
        assert not sess.run("tf1/ok:0")
        assert sess.run("tf1/before:0") == 1.0
        assert sess.run("tf1/after:0") == 5.0
        assert sess.run("tf1/set:0") == 5.0  # an Assign's output is the new value
        assert sess.run("tf1/ok:0")


def test_check_counts_them_as_supported(tmp_path, capsys):
    from minigraph.cli import main

    assert main(["check", str(FIXTURES / "tf1_ref_variables.pb")]) == 0
    rows = {line.split()[0]: line.split()[1:3] for line in capsys.readouterr().out.splitlines()}
    ref_ops = ("VariableV2", "Assign", "AssignAdd", "AssignSub", "IsVariableInitialized")
    for op in (*ref_ops, "ApplyGradientDescent"):
        assert rows[op][1] == "yes", op


def test_imported_variables_save_restore_and_train_through_from_handle(tmp_path):
    """An imported graph's variables (no mg.Variable made them) get their values from a
    checkpoint: Variable.from_handle names them by their shared names, as TF keys them."""
    g = _imported()
    handles = [g.get_tensor_by_name(f"{v}/resource:0") for v in ("w", "b", "count")]
    variables = [mg.Variable.from_handle(h) for h in handles]
    assert [v.name for v in variables] == ["w:0", "b:0", "count:0"]
    assert variables[0].shape.as_list() == [3, 1] and variables[2].dtype == mg.int32
    with g.as_default():
        saver = mg.train.Saver(variables)
        with pytest.raises(ValueError, match="no initializer"):
            mg.variables_initializer(variables)
    with mg.Session(g) as sess:
        sess.run("init")
        sess.run("manual_step", FEEDS)
        path = saver.save(sess, str(tmp_path / "model"))
        trained = sess.run(["w:0", "b:0", "count:0"])
    with mg.Session(g) as fresh:
        saver.restore(fresh, path)
        for got, want in zip(fresh.run(["w:0", "b:0", "count:0"]), trained):
            np.testing.assert_array_equal(got, want)
        fresh.run("manual_step", FEEDS)  # the restored values train on
        np.testing.assert_allclose(fresh.run("w:0"), EXPECTED["manual_step/1/w"], rtol=1e-6)
    with pytest.raises(TypeError, match="VarHandleOp"):
        mg.Variable.from_handle(g.get_tensor_by_name("w:0"))
