"""TensorFlow 1 control flow: conditionals run by dead tensors, loops rewritten into While.

Conditionals are built here with the Switch and Merge classes and checked against what
TensorFlow's executor does (a dead branch is skipped, a control input from a skipped node
kills its reader, a Merge forwards its first live input, a dead fetch is an error). Loops
are GraphDefs: a small one written here, and the committed fixtures of
tests/fixtures/control_flow (tf1_* written by tf.compat.v1, *_lowered by freezing with
lower_control_flow=True), whose rewrite runs in minigraph and, where TensorFlow is
installed, in TensorFlow itself, with TensorFlow's outputs.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import minigraph as mg
from minigraph import ops
from minigraph.devices import DeviceSpec
from minigraph.ops.switch_merge_ops import SwitchN
from minigraph.plan import build_plan
from minigraph.scope import current_scope

FIXTURES = Path(__file__).parent / "fixtures" / "control_flow"
TF1_CASES = [
    c
    for c in json.loads((FIXTURES / "cases.json").read_text())
    if (c["name"].startswith("tf1_") or c["name"].endswith("_lowered")) and "bench" not in c["name"]
]


def _switch(x, pred, name="Switch"):
    s = ops.Switch(current_scope().with_op_name(name), x, pred)
    return s.output_false, s.output_true


def _merge(xs, name="Merge"):
    m = ops.Merge(current_scope().with_op_name(name), xs)
    return m.output, m.value_index


def _cond_graph():
    """y = -x if p else 2x, TF1 style: each branch reads the data through its own Switch."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None], name="x")
        p = mg.placeholder(mg.bool, [], name="p")
        f, t = _switch(x, p)
        y, index = _merge([mg.negative(f, name="neg"), mg.multiply(t, 2.0, name="twice")])
    return g, x, p, y, index


X = np.array([1.0, -2.0, 3.0], np.float32)


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("pred", [True, False])
def test_switch_and_merge_run_the_taken_branch(pred):
    g, x, p, y, index = _cond_graph()
    value, i = mg.Session(g).run([y, index], {x: X, p: pred})
    np.testing.assert_array_equal(value, 2 * X if pred else -X)
    assert i == (1 if pred else 0) and i.dtype == np.int32


@pytest.mark.usefixtures("any_device")
def test_a_dead_fetch_is_an_error_naming_its_node():
    g, x, p, _, _ = _cond_graph()
    twice = g.get_tensor_by_name("twice:0")
    sess = mg.Session(g)
    with pytest.raises(mg.errors.InvalidArgumentError, match="Retval.1. does not have value") as e:
        sess.run([x, twice], {x: X, p: False})
    assert e.value.node_name == "twice"
    np.testing.assert_array_equal(sess.run(twice, {x: X, p: True}), 2 * X)


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("a, b", [(True, True), (True, False), (False, True), (False, False)])
def test_nested_conds(a, b):
    """if a: (x + 1 if b else x - 1) else 10x, the inner cond inside the outer true branch."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [3], name="x")
        pa = mg.placeholder(mg.bool, [], name="a")
        pb = mg.placeholder(mg.bool, [], name="b")
        outer_f, outer_t = _switch(x, pa, "outer")
        pb_t = _switch(pb, pa, "outer_b")[1]
        inner_f, inner_t = _switch(outer_t, pb_t, "inner")
        inner, _ = _merge([inner_f - 1.0, inner_t + 1.0], "inner_merge")
        y, _ = _merge([outer_f * 10.0, inner], "outer_merge")
    want = (X + 1 if b else X - 1) if a else 10 * X
    np.testing.assert_allclose(mg.Session(g).run(y, {x: X, pa: a, pb: b}), want)


def _pivots(p):
    """TF1's pivots: Identities of each output of Switch(p, p), on which a branch's
    constants hang as control inputs."""
    f, t = _switch(p, p, "pivot_switch")
    return mg.identity(f, name="switch_f"), mg.identity(t, name="switch_t")


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("pred", [True, False])
def test_a_branch_of_constants_runs_by_its_control_input(pred):
    """Branches whose only link to the Switch is a control edge: the same constant on
    both sides (so no pass may merge them), and sums of constants (which no pass may
    fold into a constant that is always live)."""
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.bool, [], name="p")
        switch_f, switch_t = _pivots(p)
        values = {}
        for side, pivot in (("f", switch_f), ("t", switch_t)):
            with mg.control_dependencies([pivot.op]):
                one = mg.constant(1.0, name=f"one_{side}")
                two = mg.constant(2.0 if side == "t" else 5.0, name=f"two_{side}")
            values[side] = (mg.identity(one, name=f"same_{side}"), one + two)
        same, same_index = _merge([values["t"][0], values["f"][0]], "same")
        total, total_index = _merge([values["t"][1], values["f"][1]], "total")
    got = mg.Session(g).run([same, same_index, total, total_index], {p: pred})
    assert got[0] == 1.0 and got[1] == (0 if pred else 1)
    assert got[2] == (3.0 if pred else 6.0) and got[3] == (0 if pred else 1)


@pytest.mark.usefixtures("any_device")
def test_a_control_input_from_a_switch_that_ran_is_live():
    """As TensorFlow: a control edge from a Switch is live whatever branch it took; one
    from a node on the untaken side is dead."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [], name="x")
        p = mg.placeholder(mg.bool, [], name="p")
        f, t = _switch(x, p)
        with mg.control_dependencies([f.op]):
            live = mg.constant(1.0, name="live")
        with mg.control_dependencies([mg.identity(t, name="dead_pivot").op]):
            dead = mg.constant(2.0, name="dead")
        first_live, index = _merge([dead, live])
    sess = mg.Session(g)
    assert sess.run([first_live, index], {x: 0.0, p: False}) == [1.0, 1]
    with pytest.raises(mg.errors.InvalidArgumentError, match="does not have value"):
        sess.run(dead, {x: 0.0, p: False})


@pytest.mark.usefixtures("any_device")
def test_merge_of_live_inputs_takes_the_first_and_of_dead_ones_is_dead():
    """Two live inputs: the first in input order, as TensorFlow's Merge kernel takes when
    both are there (its executor may run a Merge on whichever arrives first)."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [3], name="x")
        p = mg.placeholder(mg.bool, [], name="p")
        both, index = _merge([x + 1.0, mg.constant(np.zeros(3, np.float32))])
        f, t = _switch(x, p)
        all_dead, _ = _merge([t * 2.0, t * 3.0], "all_dead")
    sess = mg.Session(g)
    value, i = sess.run([both, index], {x: X, p: False})
    np.testing.assert_array_equal(value, X + 1)
    assert i == 0
    with pytest.raises(mg.errors.InvalidArgumentError, match="does not have value"):
        sess.run(all_dead, {x: X, p: False})


@pytest.mark.usefixtures("any_device")
def test_a_merged_constant_is_never_written_in_place():
    """A Merge's output is one of its inputs: a reader that may write its input in place
    must not write into the constant it forwards, run after run."""
    c = np.arange(4, dtype=np.float32)
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.bool, [], name="p")
        x = mg.placeholder(mg.float32, [4], name="x")
        f, t = _switch(x, p)
        m, _ = _merge([mg.constant(c), t])
        y = mg.sqrt((m + 1.0) * 2.0)
    sess = mg.Session(g)
    for _ in range(3):
        np.testing.assert_allclose(sess.run(y, {p: False, x: c}), np.sqrt((c + 1) * 2))


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("index, branch", [(0, 0), (1, 1), (2, 2), (7, 2), (-1, 2)])
def test_switch_n_takes_the_last_output_out_of_range(index, branch):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [3], name="x")
        i = mg.placeholder(mg.int32, [], name="i")
        outs = SwitchN(current_scope().with_op_name("case"), x, i, num_outs=3).outputs
        y, which = _merge([outs[0] + 1.0, outs[1] * 2.0, -outs[2]])
    value, taken = mg.Session(g).run([y, which], {x: X, i: index})
    np.testing.assert_array_equal(value, [X + 1, X * 2, -X][branch])
    assert taken == branch


def test_switch_predicate_must_be_a_scalar():
    with mg.Graph().as_default():
        x = mg.placeholder(mg.float32, [3])
        with pytest.raises(mg.errors.InvalidArgumentError, match="rank"):
            _switch(x, mg.placeholder(mg.bool, [2]))
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [3], name="x")
        p = mg.placeholder(mg.bool, None, name="p")
        _, t = _switch(x, p, name="sw")
    with pytest.raises(mg.errors.InvalidArgumentError, match="must be a scalar") as e:
        mg.Session(g).run(t, {x: X, p: [True]})
    assert e.value.node_name == "sw"


def test_only_plans_with_a_switch_run_dead_aware():
    g, x, p, y, _ = _cond_graph()
    with g.as_default():
        z = mg.multiply(x, 3.0)
    cpu = DeviceSpec(device_type="CPU")
    assert build_plan([y.op.outputs[0]], [], [x, p], cpu).dead_aware
    plain = build_plan([z], [], [x], cpu)
    assert not plain.dead_aware
    assert all(not s.control_inputs and s.control_output is None for s in plain.steps)


# -- loops: the GraphDef rewrite ---------------------------------------------------------

# y = x * 2**n by a TF1 loop: i from 0 while i < n (an invariant), x doubled each time.
COUNTER_LOOP = """
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "n" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "shape" value { shape { } } } }
node { name: "zero" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
node { name: "w/Enter" op: "Enter" input: "zero" attr { key: "T" value { type: DT_INT32 } }
       attr { key: "frame_name" value { s: "w" } }
       attr { key: "parallel_iterations" value { i: 3 } } }
node { name: "w/Enter_1" op: "Enter" input: "x" attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "frame_name" value { s: "w" } } }
node { name: "w/Enter_n" op: "Enter" input: "n" attr { key: "T" value { type: DT_INT32 } }
       attr { key: "frame_name" value { s: "w" } } attr { key: "is_constant" value { b: true } } }
node { name: "w/Merge" op: "Merge" input: "w/Enter" input: "w/NextIteration"
       attr { key: "T" value { type: DT_INT32 } } attr { key: "N" value { i: 2 } } }
node { name: "w/Merge_1" op: "Merge" input: "w/Enter_1" input: "w/NextIteration_1"
       attr { key: "T" value { type: DT_FLOAT } } attr { key: "N" value { i: 2 } } }
node { name: "w/Less" op: "Less" input: "w/Merge" input: "w/Enter_n"
       attr { key: "T" value { type: DT_INT32 } } }
node { name: "w/LoopCond" op: "LoopCond" input: "w/Less" }
node { name: "w/Switch" op: "Switch" input: "w/Merge" input: "w/LoopCond"
       attr { key: "T" value { type: DT_INT32 } } }
node { name: "w/Switch_1" op: "Switch" input: "w/Merge_1" input: "w/LoopCond"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "w/Identity" op: "Identity" input: "w/Switch:1"
       attr { key: "T" value { type: DT_INT32 } } }
node { name: "w/Identity_1" op: "Identity" input: "w/Switch_1:1"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "w/one" op: "Const" input: "^w/Identity" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
node { name: "w/add" op: "AddV2" input: "w/Identity" input: "w/one"
       attr { key: "T" value { type: DT_INT32 } } }
node { name: "w/double" op: "AddV2" input: "w/Identity_1" input: "w/Identity_1"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "w/NextIteration" op: "NextIteration" input: "w/add"
       attr { key: "T" value { type: DT_INT32 } } }
node { name: "w/NextIteration_1" op: "NextIteration" input: "w/double"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "w/Exit" op: "Exit" input: "w/Switch" attr { key: "T" value { type: DT_INT32 } } }
node { name: "w/Exit_1" op: "Exit" input: "w/Switch_1" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "y" op: "Identity" input: "w/Exit_1" attr { key: "T" value { type: DT_FLOAT } } }
"""


def _graph_def(text):
    from google.protobuf import text_format

    from minigraph.tf_proto import protos

    return text_format.Parse(text, protos().graph_pb2.GraphDef())


def _fixture(name):
    from minigraph.tf_proto import protos

    gd = protos().graph_pb2.GraphDef()
    gd.ParseFromString((FIXTURES / f"{name}.pb").read_bytes())
    return gd


def test_rewrite_makes_one_while_with_cond_and_body_functions():
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    from minigraph.functionalize import LOOP_OPS, functionalize_loops

    gd = _graph_def(COUNTER_LOOP)
    out = functionalize_loops(gd)
    assert len(gd.node) == 22  # the input is left as it was
    by_name = {n.name: n for n in out.node}
    assert not {n.op for n in out.node} & (LOOP_OPS | {"Merge", "Switch"})
    loop = by_name["w/LoopCond"]  # the While takes the LoopCond's name
    assert loop.op == "While" and list(loop.input) == ["zero", "x", "n"]
    assert [t for t in loop.attr["T"].list.type] == [3, 1, 3]  # DT_INT32, DT_FLOAT, DT_INT32
    assert loop.attr["parallel_iterations"].i == 3
    assert all(s.unknown_rank for s in loop.attr["output_shapes"].list.shape)
    assert [by_name[e].op for e in ("w/Exit", "w/Exit_1")] == ["Identity", "Identity"]
    assert list(by_name["w/Exit_1"].input) == ["w/LoopCond:1"]
    functions = {f.signature.name: f for f in out.library.function}
    cond, body = functions[loop.attr["cond"].func.name], functions[loop.attr["body"].func.name]
    assert [a.name for a in cond.signature.input_arg] == [a.name for a in body.signature.input_arg]
    assert {n.name for n in cond.node_def} == {"w/Less"}
    assert cond.ret["cond"] == "w/Less:z:0"
    assert {n.name for n in body.node_def} == {
        "w/Identity",
        "w/Identity_1",
        "w/one",
        "w/add",
        "w/double",
    }
    outs = [body.ret[a.name] for a in body.signature.output_arg]
    assert outs == ["w/add:z:0", "w/double:z:0", body.signature.input_arg[2].name]  # n passes
    one = next(n for n in body.node_def if n.name == "w/one")
    assert list(one.input) == ["^w/Identity"]


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("n", [0, 1, 3])
def test_imported_loop_runs(n):
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(_graph_def(COUNTER_LOOP), name="")
    y, i = mg.Session(g).run(["y:0", "w/Exit:0"], {"x:0": X, "n:0": np.int32(n)})
    np.testing.assert_array_equal(y, X * 2.0**n)
    assert i == n


def test_rewrite_of_nested_loops_goes_innermost_first():
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    from minigraph.functionalize import functionalize_loops

    out = functionalize_loops(_fixture("tf1_nested_while"))
    top = [n for n in out.node if n.op == "While"]
    assert len(top) == 1 and len(out.library.function) == 4
    body = next(
        f for f in out.library.function if f.signature.name == top[0].attr["body"].func.name
    )
    inner = [n for n in body.node_def if n.op == "While"]
    assert len(inner) == 1
    assert {inner[0].attr["cond"].func.name, inner[0].attr["body"].func.name} <= {
        f.signature.name for f in out.library.function
    }


def test_rewrite_keeps_tensor_arrays_and_conds_in_the_body():
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    from minigraph.functionalize import functionalize_loops

    out = functionalize_loops(_fixture("tf1_tensor_array"))
    loop = next(n for n in out.node if n.op == "While")
    # The TensorArrays' handles are invariants (resources), their flows loop variables.
    assert 20 in loop.attr["T"].list.type  # DT_RESOURCE
    body = next(f for f in out.library.function if f.signature.name == loop.attr["body"].func.name)
    assert {"TensorArrayReadV3", "TensorArrayWriteV3"} <= {n.op for n in body.node_def}
    out = functionalize_loops(_fixture("cond_in_loop_lowered"))
    loop = next(n for n in out.node if n.op == "While")
    body = next(f for f in out.library.function if f.signature.name == loop.attr["body"].func.name)
    assert {"Switch", "Merge"} <= {n.op for n in body.node_def}


@pytest.mark.parametrize(
    "edit, node, message",
    [
        (
            lambda t: t.replace('input: "w/Enter" input: "w/NextIteration"', 'input: "w/Enter"'),
            "w/Merge",
            "NextIteration",
        ),  # fmt: skip
        (
            lambda t: t.replace(
                'input: "w/Merge" input: "w/LoopCond"', 'input: "w/Merge" input: "w/Less"'
            ),
            "w/Switch",
            "LoopCond",
        ),  # fmt: skip
    ],
)
def test_a_loop_of_another_shape_is_refused_naming_the_node(edit, node, message):
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    g = mg.Graph()
    with g.as_default(), pytest.raises(mg.errors.UnimplementedError, match=message) as e:
        mg.import_graph_def(_graph_def(edit(COUNTER_LOOP)), name="")
    assert e.value.node_name == node and len(g) == 0


def test_check_lists_tf1_control_flow_as_supported():
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    from minigraph.graph_def import op_support, unsupported_reason

    for case in ("tf1_while", "tf1_cond", "keras_lstm_lowered", "case_branches_0_lowered"):
        rows = op_support(str(FIXTURES / f"{case}.pb"))
        assert all(ok for _, _, ok, _ in rows), [r for r in rows if not r[2]]
    assert "unroll" not in (unsupported_reason("RefSwitch") or "")


# -- the fixtures, end to end ------------------------------------------------------------


def _fixture_feeds(case):
    saved = np.load(FIXTURES / f"{case['name']}.npz")
    feeds = {name: saved[f"feed/{name}"] for name in case["feeds"]}
    return feeds, [saved[f"fetch/{name}"] for name in case["fetches"]]


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("case", TF1_CASES, ids=[c["name"] for c in TF1_CASES])
def test_tf1_and_lowered_fixtures_run_as_in_tensorflow(case):
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(str(FIXTURES / case["file"]), name="")
    feeds, wanted = _fixture_feeds(case)
    for name, value, want in zip(
        case["fetches"], mg.Session(g).run(case["fetches"], feeds), wanted
    ):
        assert value.dtype == want.dtype and value.shape == want.shape, name
        np.testing.assert_allclose(value, want, rtol=2e-5, atol=1e-6, err_msg=name)


def test_unused_control_flow_inputs_need_no_feed():
    """Freezing with lower_control_flow=True leaves Placeholders that nothing reads (one per
    input of each lowered function); a run that does not need them does not ask for them."""
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(str(FIXTURES / "keras_lstm_lowered.pb"), name="")
    unused = [n for n in g.nodes() if n.name.startswith("unused_control_flow_input")]
    assert unused and all(n.type_string == "Placeholder" for n in unused)
    assert not any(g.as_networkx().out_degree(n.name) for n in unused)
    case = next(c for c in TF1_CASES if c["name"] == "keras_lstm_lowered")
    feeds, wanted = _fixture_feeds(case)
    np.testing.assert_allclose(mg.Session(g).run(case["fetches"][0], feeds), wanted[0], rtol=2e-5)


def test_rewrite_runs_in_tensorflow_with_its_outputs(tmp_path):
    """The oracle for the rewrite itself: TensorFlow runs the rewritten GraphDefs (its
    functional While) and gives the outputs it gave for the TF1 graphs."""
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    from test_graph_def import TF_RUNNER, _tf_python

    from minigraph.functionalize import functionalize_loops

    python = _tf_python()
    if python is None:
        pytest.skip("TensorFlow is not installed (set MINIGRAPH_TF_PYTHON to a Python with it)")
    jobs, wanted = [], {}
    for case in TF1_CASES:
        name = case["name"]
        (tmp_path / f"{name}.pb").write_bytes(
            functionalize_loops(_fixture(name)).SerializeToString()
        )
        feeds, wanted[name] = _fixture_feeds(case)
        np.savez(tmp_path / f"{name}.feeds.npz", **feeds)
        jobs.append(
            {
                "op": name,
                "file": str(tmp_path / f"{name}.pb"),
                "feeds": str(tmp_path / f"{name}.feeds.npz"),
                "fetches": case["fetches"],
            }
        )
    (tmp_path / "run.py").write_text(TF_RUNNER)
    (tmp_path / "jobs.json").write_text(json.dumps(jobs))
    subprocess.run(
        [python, str(tmp_path / "run.py"), str(tmp_path / "jobs.json"), str(tmp_path / "out.json")],
        check=True,
        timeout=600,
    )
    status = json.loads((tmp_path / "out.json").read_text())
    assert {k: v for k, v in status.items() if v != "ok"} == {}
    for name, want in wanted.items():
        got = np.load(tmp_path / f"{name}.pb.out.npz")
        for k, w in enumerate(want):
            np.testing.assert_allclose(got[f"arr_{k}"], w, rtol=2e-5, atol=1e-6, err_msg=name)
