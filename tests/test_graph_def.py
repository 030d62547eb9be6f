"""TensorFlow GraphDefs: TF's fixture graphs, round trips, export to TF, and broken GraphDefs."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigraph as mg
from minigraph import errors

pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")

from google.protobuf import text_format  # noqa: E402
from tensorboard.compat.proto import graph_pb2, tensor_pb2, types_pb2  # noqa: E402
from test_graph_io import OP_EXAMPLES, _feeds  # noqa: E402

from minigraph.graph_def import TF_ONLY_ATTR_DEFAULTS  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "graphs"
CASES = json.loads((FIXTURES / "cases.json").read_text())
TF_OP_DEFS = json.loads((FIXTURES / "tf_op_defs.json").read_text())


def _missing_ops(ops):
    registered = mg.registered_ops()
    return sorted(op for op in ops if op not in registered)


# -- TensorFlow's graphs, run by minigraph ---------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_tensorflow_fixture_runs_as_in_tensorflow(case):
    missing = _missing_ops(case["ops"])
    if missing:
        pytest.skip(f"minigraph lacks {', '.join(missing)}")
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(str(FIXTURES / case["file"]), name="")
    saved = np.load(FIXTURES / f"{case['name']}.npz")
    feeds = {name: saved[f"feed/{name}"] for name in case["feeds"]}
    values = mg.Session(g).run(case["fetches"], feeds)
    for name, value in zip(case["fetches"], values):
        want = saved[f"fetch/{name}"]
        assert value.dtype == want.dtype and value.shape == want.shape, name
        np.testing.assert_allclose(value, want, rtol=2e-5, atol=1e-6, err_msg=name)


def test_fixture_with_prefix_input_map_and_return_elements():
    saved = np.load(FIXTURES / "partition_stitch.npz")
    if _missing_ops(["AddV2"]):
        case = "space_to_batch_nd"
        saved = np.load(FIXTURES / f"{case}.npz")
        path, fetch = FIXTURES / f"{case}.pb", "y:0"
    else:
        path, fetch = FIXTURES / "partition_stitch.pbtxt", "y:0"
    x_value = saved["feed/x:0"]
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=x_value.shape, name="outer_x")
        y, op = mg.import_graph_def(
            str(path), input_map={"x:0": x}, return_elements=[fetch, "y"], name="m"
        )
        y2 = mg.import_graph_def(str(path), input_map={"x": x}, return_elements=["y:0"])[0]
    assert y.name == "m/y:0" and op.name == "m/y" and isinstance(op, mg.Operation)
    assert y2.name == "import/y:0"
    assert "m/x" in g  # the mapped placeholder is imported, but unused
    a, b = mg.Session(g).run([y, y2], {x: x_value})
    np.testing.assert_allclose(a, saved[f"fetch/{fetch}"])
    np.testing.assert_allclose(b, saved[f"fetch/{fetch}"])
    with g.as_default():
        again = mg.import_graph_def(str(path), return_elements=["y:0"], name="m")[0]
    assert again.name == "m_1/y:0"


def test_committed_unsupported_graph_lists_every_missing_op():
    gd = graph_pb2.GraphDef()
    gd.ParseFromString((FIXTURES / "unsupported.pb").read_bytes())
    missing = {n.op for n in gd.node if n.op not in mg.registered_ops()}
    g = mg.Graph()
    with g.as_default(), pytest.raises(errors.UnimplementedError) as e:
        mg.import_graph_def(str(FIXTURES / "unsupported.pb"))
    for op in missing:
        assert f"{op} (e.g. node '" in e.value.message
    assert "StringLength" in e.value.message and "StatelessWhile" not in e.value.message
    assert len(g) == 0


# -- round trips and export ----------------------------------------------------------------


def _example_graph(op):
    g = mg.Graph()
    with g.as_default(), mg.device("/cpu:0"):
        a = mg.constant(1.0, name="a")
        with mg.control_dependencies([a]):
            out = OP_EXAMPLES[op]()
    return g, out if isinstance(out, list) else [out]


@pytest.mark.parametrize("op", sorted(OP_EXAMPLES))
def test_round_trip_keeps_nodes_attrs_and_results(op):
    g, outs = _example_graph(op)
    gd = g.as_graph_def()
    assert gd.versions.producer > 0
    g2 = mg.Graph()
    with g2.as_default():
        mg.import_graph_def(gd, name="")
    assert g2.to_json() == g.to_json()  # every node, input, device and attr
    names = [o.name for o in outs]
    for x, y in zip(mg.Session(g).run(names, _feeds(g)), mg.Session(g2).run(names, _feeds(g2))):
        if x is None:  # an Operation run for effect (NoOp)
            assert y is None
            continue
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes()
    # and through the text format
    g3 = mg.Graph()
    with g3.as_default():
        mg.import_graph_def(
            text_format.Parse(text_format.MessageToString(gd), graph_pb2.GraphDef()), name=""
        )
    assert g3.to_json() == g.to_json()


TF_RUNNER = textwrap.dedent(
    """
    import json, os, sys
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import numpy as np
    import tensorflow as tf
    out = {}
    for case in json.load(open(sys.argv[1])):
        gd = tf.compat.v1.GraphDef()
        gd.ParseFromString(open(case["file"], "rb").read())
        g = tf.Graph()
        try:
            with g.as_default():
                tf.graph_util.import_graph_def(gd, name="")
            feeds = dict(np.load(case["feeds"]))
            with tf.compat.v1.Session(graph=g) as sess:
                fd = {g.get_tensor_by_name(k): v for k, v in feeds.items()}
                values = sess.run(case["fetches"], fd)
            np.savez(case["file"] + ".out.npz", *[v for v in values if v is not None])
            out[case["op"]] = "ok"
        except Exception as e:
            out[case["op"]] = f"{type(e).__name__}: {e}"[:2000]
    json.dump(out, open(sys.argv[2], "w"))
    """
)


def _tf_python():
    """A Python with TensorFlow: this one, MINIGRAPH_TF_PYTHON, or /root/tfvenv's; else None."""
    try:
        import tensorflow  # noqa: F401

        return sys.executable
    except ImportError:
        pass
    for cand in (os.environ.get("MINIGRAPH_TF_PYTHON"), "/root/tfvenv/bin/python"):
        if cand and shutil.which(cand):
            return cand
    return None


def run_in_tensorflow(python: str, d: Path, cases: list[dict]) -> dict:
    """Run ``cases`` (GraphDef file, feeds .npz, fetches) in TensorFlow's Python ``python``,
    in folder ``d``; each case's status ("ok" or the error), its outputs in ``<file>.out.npz``."""
    (d / "cases.json").write_text(json.dumps(cases))
    (d / "run.py").write_text(TF_RUNNER)
    proc = subprocess.run(
        [python, str(d / "run.py"), str(d / "cases.json"), str(d / "status.json")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode:
        pytest.fail(f"the TensorFlow runner failed:\n{proc.stderr[-3000:]}")
    return json.loads((d / "status.json").read_text())


@pytest.fixture(scope="module")
def tf_results(tmp_path_factory):
    python = _tf_python()
    if python is None:
        pytest.skip("TensorFlow is not installed (set MINIGRAPH_TF_PYTHON to a Python with it)")
    d = tmp_path_factory.mktemp("tf_export")
    cases, expected = [], {}
    for op in sorted(OP_EXAMPLES):
        g, outs = _example_graph(op)
        names = [o.name for o in outs]
        mg.write_graph(g, d, f"{op}.pb")
        feeds = _feeds(g)
        np.savez(d / f"{op}.feeds.npz", **feeds)
        cases.append(
            {
                "op": op,
                "file": str(d / f"{op}.pb"),
                "feeds": str(d / f"{op}.feeds.npz"),
                "fetches": names,
            }
        )
        expected[op] = mg.Session(g).run(names, feeds)
    for case in CASES:  # TF's own graphs, through minigraph and back
        if _missing_ops(case["ops"]):
            continue
        g = mg.Graph()
        with g.as_default():
            mg.import_graph_def(str(FIXTURES / case["file"]), name="")
        key = f"fixture_{case['name']}"
        mg.write_graph(g, d, f"{key}.pb")
        saved = np.load(FIXTURES / f"{case['name']}.npz")
        np.savez(d / f"{key}.feeds.npz", **{k: saved[f"feed/{k}"] for k in case["feeds"]})
        cases.append(
            {
                "op": key,
                "file": str(d / f"{key}.pb"),
                "feeds": str(d / f"{key}.feeds.npz"),
                "fetches": case["fetches"],
            }
        )
        expected[key] = [saved[f"fetch/{k}"] for k in case["fetches"]]
    return d, run_in_tensorflow(python, d, cases), expected


@pytest.mark.parametrize("op", sorted(OP_EXAMPLES) + [f"fixture_{c['name']}" for c in CASES])
def test_export_runs_in_tensorflow_with_the_same_results(op, tf_results):
    d, status, expected = tf_results
    if op not in status:
        pytest.skip(f"{op}: minigraph lacks some of its ops")
    assert status[op] == "ok", status[op]
    got = np.load(d / f"{op}.pb.out.npz")
    for i, want in enumerate(w for w in expected[op] if w is not None):  # None: an Operation
        value = got[f"arr_{i}"]
        assert value.dtype == want.dtype and value.shape == want.shape
        np.testing.assert_allclose(value, want, rtol=2e-5, atol=1e-6, equal_nan=True)


def test_write_graph_binary_and_text(tmp_path):
    g, _ = _example_graph("Conv2D")
    pb = mg.write_graph(g, tmp_path / "logs", "g.pb")
    txt = mg.write_graph(g, tmp_path / "logs", "g.pbtxt", as_text=True)
    assert pb == str(tmp_path / "logs" / "g.pb") and Path(txt).read_text().startswith("node {")
    for path in (pb, txt):
        g2 = mg.Graph()
        with g2.as_default():
            mg.import_graph_def(path, name="")
        assert g2.to_json() == g.to_json()
    assert mg.write_graph(g.as_graph_def(), tmp_path, "again.pb")


def test_failed_export_of_a_minigraph_only_op_names_it():
    g = mg.Graph()
    with g.as_default():
        x = mg.constant([1.0])
    op = mg.registered_ops().get("_Copy")
    if op is None:
        pytest.skip("no minigraph-only op registered")
    g.create_node(op, "copy", [x], {"T": mg.float32}) if [a.name for a in op.attrs] == [
        "T"
    ] else None
    if "copy" not in g:
        pytest.skip("_Copy's attrs changed")
    with pytest.raises(errors.UnimplementedError, match="exists only in minigraph") as e:
        g.as_graph_def()
    assert e.value.node_name == "copy"


# -- TensorProto encodings --------------------------------------------------------------


def _const_graph(tensor_text, dtype):
    return text_format.Parse(
        f'node {{ name: "c" op: "Const" attr {{ key: "dtype" value {{ type: {dtype} }} }} '
        f'attr {{ key: "value" value {{ tensor {{ {tensor_text} }} }} }} }}',
        graph_pb2.GraphDef(),
    )


def _value_of(gd):
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(gd, name="")
    return mg.Session(g).run("c:0")


SHAPE_2x3 = "tensor_shape { dim { size: 2 } dim { size: 3 } }"


@pytest.mark.parametrize(
    "tensor, dtype, expected",
    [
        (
            f"dtype: DT_FLOAT {SHAPE_2x3} float_val: 1.5",
            "DT_FLOAT",
            np.full((2, 3), 1.5, np.float32),
        ),
        (
            f"dtype: DT_FLOAT {SHAPE_2x3} float_val: [1, 2, 3]",
            "DT_FLOAT",
            np.array([[1, 2, 3], [3, 3, 3]], np.float32),
        ),
        (f"dtype: DT_INT32 {SHAPE_2x3}", "DT_INT32", np.zeros((2, 3), np.int32)),
        (
            "dtype: DT_INT64 tensor_shape { dim { size: 2 } } int64_val: [-9000000000, 7]",
            "DT_INT64",
            np.array([-9000000000, 7]),
        ),
        (
            "dtype: DT_BOOL tensor_shape { dim { size: 3 } } bool_val: [true, false]",
            "DT_BOOL",
            np.array([True, False, False]),
        ),
        (
            "dtype: DT_HALF tensor_shape { dim { size: 2 } } half_val: [15360, 48128]",
            "DT_HALF",
            np.array([1.0, -1.0], np.float16),
        ),
        ("dtype: DT_DOUBLE tensor_shape { } double_val: 0.25", "DT_DOUBLE", np.float64(0.25)),
        (
            "dtype: DT_UINT8 tensor_shape { dim { size: 2 } } int_val: [255, 1]",
            "DT_UINT8",
            np.array([255, 1], np.uint8),
        ),
        (
            "dtype: DT_UINT64 tensor_shape { dim { size: 1 } } uint64_val: 18446744073709551615",
            "DT_UINT64",
            np.array([2**64 - 1], np.uint64),
        ),
        (
            "dtype: DT_COMPLEX64 tensor_shape { dim { size: 2 } } scomplex_val: [1, 2]",
            "DT_COMPLEX64",
            np.array([1 + 2j, 1 + 2j], np.complex64),
        ),
        (
            "dtype: DT_COMPLEX128 tensor_shape { dim { size: 2 } } dcomplex_val: [1, 2, 3, -4]",
            "DT_COMPLEX128",
            np.array([1 + 2j, 3 - 4j]),
        ),
        (
            "dtype: DT_INT16 tensor_shape { dim { size: 2 } } "
            'tensor_content: "\\001\\000\\377\\377"',
            "DT_INT16",
            np.array([1, -1], np.int16),
        ),
        (
            "dtype: DT_FLOAT tensor_shape { dim { size: 0 } dim { size: 3 } }",
            "DT_FLOAT",
            np.zeros((0, 3), np.float32),
        ),
    ],
)
def test_tensor_proto_encodings(tensor, dtype, expected):
    value = _value_of(_const_graph(tensor, dtype))
    assert value.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(value, expected)


@pytest.mark.parametrize(
    "tensor, dtype, message",
    [
        (
            "dtype: DT_STRING tensor_shape { } string_val: 'a'",
            "DT_STRING",
            r"DT_STRING \(7\) is not supported",
        ),
        (
            "dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: [1, 2, 3]",
            "DT_FLOAT",
            "has 3 values",
        ),
        (
            "dtype: DT_FLOAT tensor_shape { dim { size: 2 } } tensor_content: 'abc'",
            "DT_FLOAT",
            "has 3 bytes",
        ),
        ("dtype: DT_FLOAT tensor_shape { dim { size: -1 } }", "DT_FLOAT", "fully known shape"),
        (
            "dtype: DT_FLOAT tensor_shape { dim { size: 1 } } int_val: 1",
            "DT_FLOAT",
            "expected float_val",
        ),
        ("dtype: DT_INT32 tensor_shape { } int_val: 1", "DT_FLOAT", "does not match"),
    ],
)
def test_bad_tensor_protos(tensor, dtype, message):
    with mg.Graph().as_default(), pytest.raises(errors.InvalidArgumentError, match=message) as e:
        mg.import_graph_def(_const_graph(tensor, dtype), name="")
    assert e.value.node_name == "c"


# -- bad GraphDefs --------------------------------------------------------------------


def _gd(text):
    return text_format.Parse(text, graph_pb2.GraphDef())


PH = 'node {{ name: "{0}" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} }}'
ADD = (
    'node {{ name: "{0}" op: "Identity" input: "{1}" '
    'attr {{ key: "T" value {{ type: DT_FLOAT }} }} }}'
)


@pytest.mark.parametrize(
    "text, node, message",
    [
        (PH.format("x") + ADD.format("y", "nope:0"), "y", "input 'nope:0' names no node"),
        (
            ADD.format("a", "b") + ADD.format("b", "c") + ADD.format("c", "a"),
            "a",
            "cycle: a -> c -> b -> a",
        ),
        (PH.format("x") + PH.format("x"), "x", "duplicate node name"),
        (PH.format("x") + ADD.format("y", "x:3"), "y", "has 1 outputs, there is no output 3"),
        (
            PH.format("x") + ADD.format("y", "^x"),
            "y",
            "takes 1 data inputs here, the NodeDef lists 0",
        ),
        (
            'node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }'
            + ADD.format("y", "x"),
            "y",
            "attr 'T' is float32 but the inputs give int32",
        ),
        (
            'node { name: "x" op: "Placeholder" attr { key: "dtype" value { i: 1 } } }',
            "x",
            r"attr 'dtype' must be a type \(AttrValue.type\), got AttrValue.i",
        ),
        (
            'node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: 99 } } }',
            "x",
            "unknown DataType enum 99",
        ),
        (
            'node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } '
            'attr { key: "shape" value { shape { dim { size: -5 } } } } }',
            "x",
            "dimension -5 is invalid",
        ),
        (
            'node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } '
            'attr { key: "color" value { s: "red" } } }',
            "x",
            "no attr named 'color'",
        ),
        (
            'node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } '
            'attr { key: "f" value { func { name: "g" } } } }',
            "x",
            "is a function",
        ),
        (
            PH.format("x") + 'node { name: "y" op: "Identity" input: "x" device: "/tpu:0" '
            'attr { key: "T" value { type: DT_FLOAT } } }',
            "y",
            "device '/tpu:0'",
        ),
        ('node { name: "x" op: "Placeholder" }', "x", "requires a value for attr 'dtype'"),
        (
            'node { name: "x:1" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }',
            "x:1",
            "invalid node name",
        ),
    ],
)
def test_bad_graph_defs_name_the_node(text, node, message):
    g = mg.Graph()
    with g.as_default():
        mg.constant(1.0, name="before")
        with pytest.raises(errors.InvalidArgumentError, match=message) as e:
            mg.import_graph_def(_gd(text), name="")
    assert e.value.node_name == node
    assert [n.name for n in g.nodes()] == ["before"]


def test_float_attrs_round_trip_through_float32():
    if "LeakyRelu" not in mg.registered_ops():
        pytest.skip("needs LeakyRelu")
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, name="x")
        mg.ops.LeakyRelu(mg.Scope(g).with_op_name("y"), x, alpha=0.1)
    av = g.as_graph_def().node[1].attr["alpha"]
    assert av.WhichOneof("value") == "f"
    g2 = mg.Graph()
    with g2.as_default():
        mg.import_graph_def(g.as_graph_def(), name="")
    assert g2.node("y").attrs["alpha"] == 0.1
    assert g2.to_json() == g.to_json()


def test_tf_only_attr_at_its_default_is_accepted_else_refused(monkeypatch):
    monkeypatch.setitem(TF_ONLY_ATTR_DEFAULTS, "tf_only", True)
    monkeypatch.setitem(TF_ONLY_ATTR_DEFAULTS, "tf_list", [])
    node = (
        'node {{ name: "y" op: "Identity" input: "x" '
        'attr {{ key: "T" value {{ type: DT_FLOAT }} }} '
        'attr {{ key: "tf_only" value {{ b: {0} }} }} '
        'attr {{ key: "tf_list" value {{ list {{ }} }} }} '
        'attr {{ key: "_output_shapes" value {{ list {{ shape {{ unknown_rank: true }} }} }} }} }}'
    )
    with mg.Graph().as_default():
        mg.import_graph_def(_gd(PH.format("x") + node.format("true")))
    with mg.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match="no attr named 'tf_only'") as e:
            mg.import_graph_def(_gd(PH.format("x") + node.format("false")))
    assert e.value.node_name == "import/y"


def test_truncated_and_garbage_bytes():
    g, _ = _example_graph("Conv2D")
    data = g.as_graph_def().SerializeToString()
    for bad in (data[: len(data) // 2 + 1], b"\xff\xff\xff", b"\x0a\x80"):
        with mg.Graph().as_default(), pytest.raises(errors.InvalidArgumentError, match="valid"):
            mg.import_graph_def(bad)


def test_bad_text_file_and_missing_file(tmp_path):
    (tmp_path / "g.pbtxt").write_text("node { name: ")
    with mg.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match="not a valid text GraphDef"):
            mg.import_graph_def(str(tmp_path / "g.pbtxt"))
        with pytest.raises(errors.NotFoundError, match="cannot read GraphDef file"):
            mg.import_graph_def(tmp_path / "nope.pb")
        with pytest.raises(errors.InvalidArgumentError, match="graph_def must be.*got int"):
            mg.import_graph_def(42)


def test_unsupported_ops_are_all_listed_and_nothing_is_added():
    text = (
        PH.format("x")
        + 'node { name: "a1" op: "NoSuchOpA" input: "x" }'
        + 'node { name: "b1" op: "NoSuchOpB" input: "a1" }'
        + 'node { name: "a2" op: "NoSuchOpA" input: "b1" }'
        + 'node { name: "loop" op: "RefNextIteration" input: "x" }'
    )
    g = mg.Graph()
    with g.as_default(), pytest.raises(errors.UnimplementedError) as e:
        mg.import_graph_def(_gd(text))
    msg = e.value.message
    for op, node in [("NoSuchOpA", "a1"), ("NoSuchOpB", "b1"), ("RefNextIteration", "loop")]:
        assert f"{op} (e.g. node '{node}'" in msg
    assert "a2" not in msg and e.value.node_name == "a1"
    assert len(g) == 0
    with g.as_default():
        assert mg.constant(1.0, name="import").name == "import:0"  # no name was taken


def test_failed_import_leaves_the_graph_as_it_was():
    g = mg.Graph()
    with g.as_default():
        mg.constant(1.0, name="c")
        before, version = g.to_json(), g.version
        # the third node fails shape inference, after two were created
        text = (
            PH.format("x")
            + ADD.format("y", "x")
            + 'node { name: "r" op: "Reshape" input: "y" input: "s" '
            'attr { key: "T" value { type: DT_FLOAT } } }'
            + 'node { name: "s" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } '
            'attr { key: "value" value { tensor { dtype: DT_INT32 '
            "tensor_shape { dim { size: 2 } dim { size: 2 } } } } } }"
        )
        with pytest.raises(errors.InvalidArgumentError) as e:
            mg.import_graph_def(_gd(text), name="m")
        assert e.value.node_name == "m/r"
        assert g.to_json() == before and g.version > version
        assert mg.identity(1.0, name="m").name == "m:0"
        out = mg.import_graph_def(
            _gd(PH.format("x") + ADD.format("y", "x")), return_elements=["y:0"], name="m"
        )
    assert out[0].name == "m_1/y:0"


def test_nodes_in_any_order_and_control_inputs():
    text = (
        ADD.format("z", "y") + 'node { name: "y" op: "Identity" input: "x" input: "^w" '
        'attr { key: "T" value { type: DT_FLOAT } } }' + PH.format("w") + PH.format("x")
    )
    g = mg.Graph()
    with g.as_default():
        c = mg.constant(0.0, name="c0")
        mg.import_graph_def(_gd(text), name="imp")
        mg.import_graph_def(_gd(text), name="mapped", input_map={"^w": c.op})
    with g.as_default(), mg.control_dependencies([c]):
        mg.import_graph_def(_gd(text), name="dep")
    assert [n.name for n in g.node("dep/x").control_inputs] == ["c0"]
    assert [n.name for n in g.node("dep/y").control_inputs] == ["dep/w"]
    assert [n.name for n in g.node("imp/y").control_inputs] == ["imp/w"]
    assert [n.name for n in g.node("mapped/y").control_inputs] == ["c0"]
    assert mg.Session(g).run("mapped/z:0", {"mapped/x:0": np.float32(3)}) == 3


def test_input_map_and_return_element_errors():
    gd = _gd(PH.format("x") + ADD.format("y", "x"))
    with mg.Graph().as_default():
        other = mg.constant(1, name="i")
        with pytest.raises(errors.InvalidArgumentError, match="not found in graph_def"):
            mg.import_graph_def(gd, input_map={"q:0": other})
        with pytest.raises(errors.InvalidArgumentError, match="return_element 'q:0'"):
            mg.import_graph_def(gd, return_elements=["q:0"])
        with pytest.raises(
            errors.InvalidArgumentError, match="attr 'T' is float32 but the inputs give int32"
        ):
            mg.import_graph_def(gd, input_map={"x:0": other})
        with pytest.raises(TypeError, match="must be an Output"):
            mg.import_graph_def(gd, input_map={"x:0": 3})
    assert mg.import_graph_def.__doc__


# -- TensorFlow's op definitions agree with minigraph's -----------------------------------


def _tf_default(d):
    ((kind, value),) = d.items()
    if kind == "type":
        return mg.as_dtype(value)
    if kind == "shape":
        return mg.TensorShape(value)
    if kind == "list":
        return tuple(value)
    return value


PUBLIC_OPS = sorted(n for n in mg.registered_ops() if not n.startswith("_"))


@pytest.mark.parametrize("op", PUBLIC_OPS)
def test_declaration_agrees_with_tensorflow_op_def(op):
    if op not in TF_OP_DEFS:
        pytest.skip(
            f"{op} is not in tf_op_defs.json yet: re-run tests/tf_oracle/make_graph_fixtures.py"
        )
    tf = TF_OP_DEFS[op]
    assert tf is not None, f"TensorFlow has no op named {op}"
    mine = mg.registered_ops()[op]
    assert [a.name for a in mine.inputs] == tf["inputs"]
    assert [a.name for a in mine.outputs] == tf["outputs"]
    tf_attrs = {a["name"]: a for a in tf["attrs"]}
    assert sorted(a.name for a in mine.attrs if a.name not in tf_attrs) == [], "attrs TF lacks"
    for a in mine.attrs:
        t = tf_attrs[a.name]
        assert a.kind == t["type"], a.name
        if t["default"] is not None and a.name not in mine.inferred_attrs():
            assert a.has_default, f"TF gives {a.name} a default"
            want = _tf_default(t["default"])
            got = tuple(a.default) if isinstance(a.default, list) else a.default
            if a.kind == "float":  # TF keeps float attrs as float32
                got, want = np.float32(got), np.float32(want)
            assert got == want, a.name
    for name, t in tf_attrs.items():
        if name not in {a.name for a in mine.attrs}:
            assert t["default"] is not None, f"TF attr {name} has no default"
            assert name in TF_ONLY_ATTR_DEFAULTS, f"add {name} to TF_ONLY_ATTR_DEFAULTS"
            ((_, value),) = t["default"].items()
            assert TF_ONLY_ATTR_DEFAULTS[name] == value, name


# -- the extra --------------------------------------------------------------------------


def test_import_minigraph_does_not_import_tensorboard():
    code = (
        "import sys, minigraph; "
        "print('tensorboard' in sys.modules, 'google.protobuf' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_without_tensorboard_the_error_names_the_extra(monkeypatch):
    for mod in list(sys.modules):
        if mod.startswith("tensorboard"):
            monkeypatch.delitem(sys.modules, mod)
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    g, _ = _example_graph("Identity")
    for call in (
        g.as_graph_def,
        lambda: mg.import_graph_def(b""),
        lambda: mg.summary.FileWriter("x"),
    ):
        with pytest.raises(
            ImportError,
            match=r"requires the 'tensorboard' extra: pip install 'minigraph\[tensorboard\]'",
        ):
            call()


# -- TensorProto decoding against an independent encoder ---------------------------------

_ENCODINGS = {  # numpy dtype -> (DataType name, typed field, encode one value)
    "float16": ("DT_HALF", "half_val", lambda v: int(np.float16(v).view(np.uint16))),
    "float32": ("DT_FLOAT", "float_val", float),
    "float64": ("DT_DOUBLE", "double_val", float),
    "int8": ("DT_INT8", "int_val", int),
    "uint16": ("DT_UINT16", "int_val", int),
    "int32": ("DT_INT32", "int_val", int),
    "int64": ("DT_INT64", "int64_val", int),
    "uint32": ("DT_UINT32", "uint32_val", int),
    "bool": ("DT_BOOL", "bool_val", bool),
    "complex64": ("DT_COMPLEX64", "scomplex_val", None),
}


@settings(max_examples=40, deadline=None)
@given(
    dtype=st.sampled_from(sorted(_ENCODINGS)),
    shape=st.lists(st.integers(0, 4), max_size=3),
    seed=st.integers(0, 2**31),
    encoding=st.sampled_from(["content", "values", "shortened"]),
)
def test_tensor_proto_decoding_matches_numpy(dtype, shape, seed, encoding):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    raw = rng.integers(-100, 100, size=n * 2).astype(np.float64) / 4
    if dtype == "complex64":
        arr = (raw[:n] + 1j * raw[n:]).astype(np.complex64)
    elif dtype == "bool":
        arr = raw[:n] > 0
    elif dtype.startswith("uint"):
        arr = np.abs(raw[:n]).astype(dtype)
    else:
        arr = raw[:n].astype(dtype)
    if encoding == "shortened" and n:
        cut = int(rng.integers(0, n))  # values after `cut` repeat the last written one
        arr[cut:] = arr[cut]
        written = arr[: cut + 1]
    else:
        written = arr
    arr = arr.reshape(shape)
    enum, field, enc = _ENCODINGS[dtype]
    proto = tensor_pb2.TensorProto(dtype=types_pb2.DataType.Value(enum))
    for d in shape:
        proto.tensor_shape.dim.add(size=d)
    if encoding == "content":
        proto.tensor_content = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
    elif dtype == "complex64":
        getattr(proto, field).extend(float(x) for v in written for x in (v.real, v.imag))
    else:
        getattr(proto, field).extend(enc(v) for v in written)
    gd = graph_pb2.GraphDef()
    node = gd.node.add(name="c", op="Const")
    node.attr["dtype"].type = proto.dtype
    node.attr["value"].tensor.CopyFrom(proto)
    value = _value_of(gd)
    assert value.dtype == arr.dtype and value.shape == arr.shape
    np.testing.assert_array_equal(value, arr)
