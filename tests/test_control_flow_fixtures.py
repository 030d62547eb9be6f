"""TensorFlow's control flow and functions, as TensorFlow 2.21 writes them.

tests/fixtures/control_flow/ holds frozen Keras RNNs, while loops, conds, cases, map_fn,
scan, TensorArrays and nested function calls (tests/tf_oracle/make_control_flow_fixtures.py),
each functional (``_fn``: While, If, Case, PartitionedCall and a function library) and
lowered (``_lowered``: TensorFlow 1's Switch, Merge, Enter, Exit...), with TensorFlow's
outputs. Each runs on the CPU, the (simulated) GPU and with the optimizer off; minigraph's
export of it imports again with the same results, and runs in TensorFlow where installed.
"""

import json
from pathlib import Path

import numpy as np
import pytest

import minigraph as mg

pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")

from test_graph_def import _tf_python, run_in_tensorflow  # noqa: E402

from minigraph.functionalize import LOOP_OPS  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "control_flow"
CASES = [
    c
    for c in json.loads((FIXTURES / "cases.json").read_text())
    if not c["name"].endswith("_bench") and "bench" not in c["name"]
]


def _missing(case: dict) -> list[str]:
    registered = set(mg.registered_ops()) | LOOP_OPS  # import makes TF1 loops While nodes
    functions = set(case.get("functions", []))
    ops = set(case["ops"]) | set(case.get("function_ops", []))
    return sorted(op for op in ops if op not in registered and op not in functions)


def _load(case: dict, graph_def=None) -> tuple[mg.Graph, dict, list]:
    missing = _missing(case)
    if missing:
        pytest.skip(f"minigraph lacks {', '.join(missing)}")
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(graph_def or str(FIXTURES / case["file"]), name="")
    saved = np.load(FIXTURES / f"{Path(case['file']).stem}.npz")
    feeds = {name: saved[f"feed/{name}"] for name in case["feeds"]}
    return g, feeds, [saved[f"fetch/{name}"] for name in case["fetches"]]


def _check(case: dict, values: list, wanted: list) -> None:
    for name, value, want in zip(case["fetches"], values, wanted):
        assert value.dtype == want.dtype and value.shape == want.shape, name
        np.testing.assert_allclose(
            value, want, rtol=case.get("rtol", 2e-5), atol=case.get("atol", 1e-6), err_msg=name
        )


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_runs_as_in_tensorflow(case):
    g, feeds, wanted = _load(case)
    _check(case, mg.Session(g).run(case["fetches"], feeds), wanted)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_fast_loop_gives_the_checked_loops_bits(case):
    """Bodies run by the executor's runner (no output checks: the fast loop, as a user's
    runs go) give what the checked loop gives, bit for bit."""
    g, feeds, _ = _load(case)
    checked = mg.Session(g).run(case["fetches"], feeds)
    mg.config.set_check_outputs(False)  # conftest turns it back on
    fast = mg.Session(g).run(case["fetches"], feeds)
    for name, a, b in zip(case["fetches"], checked, fast):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), name


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_export_imports_again_with_the_same_results(case):
    g, feeds, wanted = _load(case)
    exported = g.as_graph_def()
    assert {f.signature.name for f in exported.library.function} >= {
        fn.name for fn in g.library.values() if _called(g, fn.name)
    }
    again, _, _ = _load(case, exported)
    _check(case, mg.Session(again).run(case["fetches"], feeds), wanted)


def _called(g: mg.Graph, name: str) -> bool:
    """Whether a node of ``g`` itself calls function ``name``."""
    return any(f.name == name for n in g.nodes() for f in n.op_def.functions_in(n.attrs))


@pytest.fixture(scope="module")
def tf_export_results(tmp_path_factory):
    python = _tf_python()
    if python is None:
        pytest.skip("TensorFlow is not installed (set MINIGRAPH_TF_PYTHON to a Python with it)")
    d = tmp_path_factory.mktemp("tf_control_flow_export")
    cases, expected = [], {}
    for case in CASES:
        if _missing(case):
            continue
        g = mg.Graph()
        with g.as_default():
            mg.import_graph_def(str(FIXTURES / case["file"]), name="")
        mg.write_graph(g, d, f"{case['name']}.pb")
        saved = np.load(FIXTURES / f"{Path(case['file']).stem}.npz")
        np.savez(d / f"{case['name']}.feeds.npz", **{k: saved[f"feed/{k}"] for k in case["feeds"]})
        cases.append(
            {
                "op": case["name"],
                "file": str(d / f"{case['name']}.pb"),
                "feeds": str(d / f"{case['name']}.feeds.npz"),
                "fetches": case["fetches"],
            }
        )
        expected[case["name"]] = [saved[f"fetch/{k}"] for k in case["fetches"]]
    return d, run_in_tensorflow(python, d, cases), expected


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_export_runs_in_tensorflow(case, tf_export_results):
    d, status, expected = tf_export_results
    if case["name"] not in status:
        pytest.skip(f"minigraph lacks {', '.join(_missing(case))}")
    assert status[case["name"]] == "ok", status[case["name"]]
    got = np.load(d / f"{case['name']}.pb.out.npz")
    for i, want in enumerate(expected[case["name"]]):
        np.testing.assert_allclose(got[f"arr_{i}"], want, rtol=2e-5, atol=1e-6)


# -- a function library's errors ------------------------------------------------------------


def _graph_with_calls(functions: dict[str, str], call: str):
    """A GraphDef: Placeholder x, a PartitionedCall of ``call`` on it, and a library where
    each function passes its argument to a PartitionedCall of the function named (or, for
    "", returns it doubled)."""
    from minigraph.tf_proto import protos

    p = protos()
    gd = p.graph_pb2.GraphDef()
    f32 = p.types_pb2.DT_FLOAT
    gd.node.add(name="x", op="Placeholder").attr["dtype"].type = f32

    def call_node(nd, target: str, arg: str) -> None:
        nd.op = "PartitionedCall"
        nd.input.append(arg)
        nd.attr["Tin"].list.type.append(f32)
        nd.attr["Tout"].list.type.append(f32)
        nd.attr["f"].func.name = target

    call_node(gd.node.add(name="y"), call, "x")
    for name, callee in functions.items():
        fdef = gd.library.function.add()
        fdef.signature.name = name
        fdef.signature.input_arg.add(name="a", type=f32)
        fdef.signature.output_arg.add(name="out", type=f32)
        nd = fdef.node_def.add(name="n")
        if callee:
            call_node(nd, callee, "a")
            fdef.ret["out"] = "n:output:0"
        else:
            nd.op = "AddV2"
            nd.input.extend(["a", "a"])
            nd.attr["T"].type = f32
            fdef.ret["out"] = "n:z:0"
    return gd


def test_a_library_call_chain_runs():
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(_graph_with_calls({"outer": "inner", "inner": ""}, "outer"), name="")
    assert mg.Session(g).run("y:0", {"x:0": 2.5}) == 5.0
    assert set(g.library) == {"outer", "inner"}


def test_a_missing_or_recursive_function_is_an_error_naming_the_node():
    g = mg.Graph()
    with g.as_default():
        with pytest.raises(mg.errors.NotFoundError, match="'nowhere' is not in the GraphDef's"):
            mg.import_graph_def(_graph_with_calls({"outer": "nowhere"}, "outer"), name="")
        with pytest.raises(mg.errors.UnimplementedError, match="recursive: f -> g -> f") as e:
            mg.import_graph_def(_graph_with_calls({"f": "g", "g": "f"}, "f"), name="")
        assert e.value.node_name == "n"  # the body node of g that calls f again
        gd = _graph_with_calls({"ok": "", "bad": "nowhere"}, "ok")
        second = gd.node.add()
        second.CopyFrom(gd.node[1])
        second.name, second.attr["f"].func.name = "z", "bad"
        with pytest.raises(mg.errors.NotFoundError):  # "ok" is read, then "bad" fails
            mg.import_graph_def(gd)
    assert len(g) == 0 and g.library == {}  # nothing was added, "ok" neither
