"""Partial graphs: import_graph_def(allow_unsupported=True) keeps nodes of ops minigraph lacks.

Hand-written GraphDefs use made-up op types (never to be registered); the TensorFlow
fixtures (tests/tf_oracle/make_partial_fixtures.py) use EncodeJpeg and DecodeJpeg, which
work on strings, a dtype minigraph has not got.
"""

import json

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors

pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")

from google.protobuf import text_format  # noqa: E402
from tensorboard.compat.proto import graph_pb2  # noqa: E402
from test_graph_def import FIXTURES, _tf_python, run_in_tensorflow  # noqa: E402

from minigraph.cli import main  # noqa: E402
from minigraph.graph_files import unsupported_kind  # noqa: E402
from minigraph.opaque import UNKNOWN, is_opaque, unsupported_needed  # noqa: E402

SAVED = FIXTURES.parent / "saved_models" / "partial_jpeg"


def _float(key):
    return f'attr {{ key: "{key}" value {{ type: DT_FLOAT }} }}'


PLACEHOLDER = (
    'node { name: "x" op: "Placeholder" ' + _float("dtype") + " "
    'attr { key: "shape" value { shape { dim { size: -1 } dim { size: 3 } } } } }'
)
TWO = (
    'node { name: "two" op: "Const" ' + _float("dtype") + " "
    'attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }'
)
# fancy: a made-up op with a T attr and _output_shapes; y needs it, z does not; s has three
# outputs (its consumer reads s:2 as int32, through Cast's SrcT); lone: nothing reads it.
GRAPH = (
    PLACEHOLDER + TWO + 'node { name: "fancy" op: "FancyNorm" input: "x" ' + _float("T") + " "
    'attr { key: "eps" value { f: 0.001 } } '
    'attr { key: "_output_shapes" value { list { shape { dim { size: -1 } dim { size: 3 } } } } } }'
    'node { name: "y" op: "Mul" input: "fancy" input: "two" ' + _float("T") + " }"
    'node { name: "z" op: "Mul" input: "x" input: "two" ' + _float("T") + " }"
    'node { name: "s" op: "SplitThing" input: "x" input: "^two" device: "/device:CPU:0" }'
    'node { name: "c" op: "Cast" input: "s:2" attr { key: "SrcT" value { type: DT_INT32 } } '
    'attr { key: "DstT" value { type: DT_FLOAT } } attr { key: "Truncate" value { b: false } } }'
    'node { name: "lone" op: "FancyNorm" input: "z" attr { key: "T" value { type: DT_DOUBLE } } }'
)
X = np.arange(6, dtype=np.float32).reshape(2, 3)


def _gd(text):
    return text_format.Parse(text, graph_pb2.GraphDef())


def _import(text=GRAPH, **kwargs):
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(_gd(text), name="", allow_unsupported=True, **kwargs)
    return g


def _spec(g, name):
    return _spec_of(g.node(name))


# -- import: with and without the flag -------------------------------------------------------


def test_without_the_flag_the_import_is_refused_as_before():
    g = mg.Graph()
    with g.as_default(), pytest.raises(errors.UnimplementedError) as e:
        mg.import_graph_def(_gd(GRAPH), name="")
    msg = e.value.message
    assert "FancyNorm (e.g. node 'fancy'" in msg and "SplitThing (e.g. node 's'" in msg
    assert msg.count("FancyNorm") == 1  # each op type once, though two nodes have it
    assert "allow_unsupported=True" in msg and "--allow-unsupported" in msg
    assert len(g) == 0


def test_kept_nodes_keep_op_type_inputs_and_device():
    g = _import()
    fancy = g.get_operation_by_name("fancy")
    assert fancy.type == "FancyNorm" and [x.name for x in fancy.inputs] == ["x:0"]
    s = g.get_operation_by_name("s")
    assert [c.name for c in s.control_inputs] == ["two"] and s.device == "/device:CPU:0"
    assert is_opaque(fancy.node.op_def) and not is_opaque(g.node("y").op_def)
    # the kept op types stay out of the registry: the next import without the flag refuses
    assert "FancyNorm" not in mg.registered_ops()
    with mg.Graph().as_default(), pytest.raises(errors.UnimplementedError, match="FancyNorm"):
        mg.import_graph_def(_gd(GRAPH), name="")


def test_shapes_and_dtypes_from_what_the_graph_def_says():
    g = _import()
    assert _spec(g, "fancy") == [("float32", [None, 3])]  # _output_shapes, and y's T
    assert _spec(g, "y") == [("float32", [None, 3])]  # downstream infers from it
    # s:2 is int32 (what Cast's SrcT says of it); s:0 and s:1 nothing types
    assert _spec(g, "s") == [("unknown", None), ("unknown", None), ("int32", None)]
    assert g.node("s").output_specs[0].dtype is UNKNOWN
    assert _spec(g, "c") == [("float32", None)]
    assert _spec(g, "lone") == [("float64", None)]  # one output, typed by its T attr


@pytest.mark.parametrize(
    "attrs, expected",
    [
        ('attr { key: "out_type" value { type: DT_INT64 } } ' + _float("T"), ["int64"]),
        ('attr { key: "dtype" value { type: DT_INT8 } }', ["int8"]),
        ('attr { key: "Tout" value { list { type: DT_INT32 type: DT_BOOL } } }', ["int32", "bool"]),
        ('attr { key: "T" value { type: DT_STRING } }', ["unknown"]),  # no such dtype here
        ("", ["unknown"]),
    ],
)
def test_output_dtypes_from_attrs(attrs, expected):
    g = _import(PLACEHOLDER + f'node {{ name: "k" op: "MadeUp" input: "x" {attrs} }}')
    assert [dt for dt, _ in _spec(g, "k")] == expected


def test_output_count_from_return_elements_and_input_map():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [4], name="outer")
        (out,) = mg.import_graph_def(
            _gd(GRAPH),
            input_map={"x:0": x},
            return_elements=["s:4"],
            name="m",
            allow_unsupported=True,
        )
    assert out.name == "m/s:4" and g.node("m/s").num_outputs == 5
    assert [i.name for i in g.node("m/fancy").inputs] == ["outer:0"]
    assert mg.Session(g).run("m/z:0", {x: np.ones(4, np.float32)}).tolist() == [2.0] * 4


def test_minigraphs_own_internal_ops_are_refused_even_with_the_flag():
    internal = next(n for n in mg.registered_ops() if n.startswith("_") and n != "_SwitchN")
    g = mg.Graph()
    with g.as_default(), pytest.raises(errors.UnimplementedError, match=internal):
        mg.import_graph_def(
            _gd(PLACEHOLDER + f'node {{ name: "i" op: "{internal}" input: "x" }}'),
            allow_unsupported=True,
        )
    assert len(g) == 0


@pytest.mark.parametrize("op", ["", "9Lives", "Bad Op", "a:b"])
def test_an_op_type_name_tensorflow_could_not_have_is_refused(op):
    text = PLACEHOLDER + f'node {{ name: "k" op: "{op}" input: "x" }}'
    with mg.Graph().as_default(), pytest.raises(errors.InvalidArgumentError) as e:
        mg.import_graph_def(_gd(text), allow_unsupported=True)
    assert "invalid op type name" in e.value.message and e.value.node_name == "import/k"


def test_a_failed_import_takes_back_the_kept_nodes():
    bad = GRAPH + 'node { name: "r" op: "Reshape" input: "z" input: "two" }'
    g = mg.Graph()
    with g.as_default():
        mg.constant(1.0, name="c0")
        with pytest.raises(errors.InvalidArgumentError):
            mg.import_graph_def(_gd(bad), name="", allow_unsupported=True)
    assert [n.name for n in g.nodes()] == ["c0"]


def test_an_output_index_past_any_op_is_refused():
    text = PLACEHOLDER + 'node { name: "k" op: "MadeUp" input: "x" }'
    text += 'node { name: "n" op: "Neg" input: "k:99999999" ' + _float("T") + " }"
    with mg.Graph().as_default(), pytest.raises(errors.InvalidArgumentError, match="at most"):
        mg.import_graph_def(_gd(text), allow_unsupported=True)


def test_a_kept_node_is_never_folded():
    text = (
        TWO
        + 'node { name: "k" op: "MadeUp" input: "two" attr { key: "T" value { type: DT_INT32 } } }'
    )
    text = text.replace("DT_FLOAT", "DT_INT32").replace("float_val", "int_val")
    g = _import(text)
    assert g.node("two").output_specs[0].value is not None  # a constant: known
    assert g.node("k").output_specs[0].value is None  # never computed while building
    assert g.node("k").op_def.is_stateful and not g.node("k").op_def.kernels


# -- runs -------------------------------------------------------------------------------------


def test_runs_that_do_not_need_a_kept_node_work(any_device):
    g = _import()
    sess = mg.Session(g)
    np.testing.assert_array_equal(sess.run("z:0", {"x:0": X}), X * 2)
    # feeding a kept node's output runs past it
    fed = np.full((2, 3), 5.0, np.float32)
    np.testing.assert_array_equal(sess.run("y:0", {"fancy:0": fed}), fed * 2)
    np.testing.assert_array_equal(sess.run("c:0", {"s:2": np.int32([1, 2])}), [1.0, 2.0])


def test_a_run_that_needs_a_kept_node_names_it(any_device):
    sess = mg.Session(_import())
    with pytest.raises(errors.UnimplementedError) as e:
        sess.run(["z:0", "y:0"], {"x:0": X})
    assert e.value.node_name == "fancy" and e.value.op_type == "FancyNorm"
    kind, hint = unsupported_kind("FancyNorm")  # the words `minigraph check` uses
    assert "op FancyNorm is not supported by minigraph" in str(e.value)
    assert f"({kind})" in str(e.value) and hint in str(e.value)
    assert "[node 'fancy' (FancyNorm)]" in str(e.value)
    with pytest.raises(errors.UnimplementedError, match="node 's'"):
        sess.run("c:0", {"x:0": X})
    # the session stays usable
    np.testing.assert_array_equal(sess.run("z:0", {"x:0": X}), X * 2)


def test_the_error_gives_checks_hint_for_each_kind_of_op():
    # a TF1 temporary variable (minigraph runs resource variables and imports VariableV2)
    text = 'node { name: "h" op: "TemporaryVariable" ' + _float("dtype") + " }"
    text += 'node { name: "r" op: "Identity" input: "h" ' + _float("T") + " }"
    g = _import(text)
    assert _spec(g, "r") == [("float32", None)]
    with pytest.raises(errors.UnimplementedError) as e:
        mg.Session(g).run("r:0")
    assert e.value.node_name == "h" and "(variable)" in str(e.value)
    assert unsupported_kind("TemporaryVariable")[1] in str(e.value)


# -- export ---------------------------------------------------------------------------------


def test_export_writes_kept_nodes_back_unchanged():
    original = _gd(GRAPH)
    out = _import().as_graph_def()
    kept = {n.name: n for n in out.node}
    for nd in original.node:
        if nd.op in ("FancyNorm", "SplitThing"):
            assert kept[nd.name] == nd, nd.name
    again = mg.Graph()
    with again.as_default():
        mg.import_graph_def(out, name="", allow_unsupported=True)
    assert again.to_json() == _import().to_json()


def test_export_with_a_prefix_renames_the_inputs():
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(_gd(GRAPH), name="m", allow_unsupported=True)
    nd = next(n for n in g.as_graph_def().node if n.name == "m/s")
    assert list(nd.input) == ["m/x", "^m/two"] and nd.op == "SplitThing"


# -- function bodies --------------------------------------------------------------------------

# body_fn's node u (a made-up op) has outputs named by two output args, y and idx: v reads
# u:y:0 (a float, by Neg's T), the function returns u:idx:0 (int32, by its signature).
LIBRARY = """
library {
  function {
    signature {
      name: "body_fn"
      input_arg { name: "a" type: DT_FLOAT }
      output_arg { name: "out" type: DT_INT32 }
      output_arg { name: "side" type: DT_FLOAT }
    }
    node_def { name: "u" op: "MadeUpUnique" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
    node_def { name: "v" op: "Neg" input: "u:y:0" attr { key: "T" value { type: DT_FLOAT } } }
    ret { key: "out" value: "u:idx:0" }
    ret { key: "side" value: "v:y:0" }
  }
  function {
    signature {
      name: "helper" input_arg { name: "a" type: DT_FLOAT } output_arg { name: "b" type: DT_FLOAT }
    }
    node_def { name: "n" op: "Neg" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
    ret { key: "b" value: "n:y:0" }
  }
}
"""
CALLS = (
    PLACEHOLDER
    + 'node { name: "call" op: "body_fn" input: "x" }'
    + 'node { name: "after" op: "Cast" input: "call" attr { key: "SrcT" value { type: DT_INT32 } } '
    'attr { key: "DstT" value { type: DT_FLOAT } } attr { key: "Truncate" value { b: false } } }'
    + 'node { name: "mapped" op: "MadeUpMap" input: "x" '
    'attr { key: "f" value { func { name: "helper" } } } }'
    + 'node { name: "z" op: "Neg" input: "x" '
    + _float("T")
    + " }"
    + LIBRARY
)


def test_function_bodies_keep_unsupported_nodes_with_the_flag():
    with mg.Graph().as_default(), pytest.raises(errors.UnimplementedError, match="MadeUpUnique"):
        mg.import_graph_def(_gd(CALLS))
    g = _import(CALLS)
    body = g.library["body_fn"].graph
    assert _spec_of(body.node("u")) == [("float32", None), ("int32", None)]
    assert g.library["body_fn"].output_dtypes == [mg.int32, mg.float32]
    assert _spec(g, "after") == [("float32", None)]
    sess = mg.Session(g)
    np.testing.assert_array_equal(sess.run("z:0", {"x:0": X}), -X)
    with pytest.raises(errors.UnimplementedError) as e:
        sess.run("after:0", {"x:0": X})
    assert e.value.node_name == "u" and e.value.op_type == "MadeUpUnique"
    # what `minigraph check` says: the call's result needs u, inside body_fn; z needs nothing
    after, z = g.get_tensor_by_name("after:0"), g.get_tensor_by_name("z:0")
    needed = unsupported_needed([after, z])
    assert [(n.name, fn) for n, fn in needed[0]] == [("u", "body_fn")] and needed[1] == []


def _spec_of(node):
    return [
        (s.dtype.name, s.shape.as_list() if s.shape.rank is not None else None)
        for s in node.output_specs
    ]


def test_a_call_by_function_name_with_inputs_runs():
    # (needed by the calls above: a node named by its function took no inputs before)
    text = PLACEHOLDER + 'node { name: "neg" op: "helper" input: "x" }' + LIBRARY
    text = text.replace('op: "MadeUpUnique"', 'op: "Neg"').replace('"u:idx:0"', '"u:y:0"')
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(_gd(text.replace("DT_INT32", "DT_FLOAT")), name="")
    np.testing.assert_array_equal(mg.Session(g).run("neg:0", {"x:0": X}), -X)


def test_function_bodies_export_back_unchanged():
    original = _gd(CALLS)
    out = _import(CALLS).as_graph_def()
    functions = {f.signature.name: f for f in out.library.function}
    assert set(functions) == {"body_fn", "helper"}  # helper: named by a kept node's func attr
    body = functions["body_fn"]
    u = next(n for n in body.node_def if n.name == "u")
    v = next(n for n in body.node_def if n.name == "v")
    assert u == original.library.function[0].node_def[0]
    assert list(v.input) == ["u:y:0"] and body.ret["out"] == "u:idx:0"
    mapped = next(n for n in out.node if n.name == "mapped")
    assert mapped == next(n for n in original.node if n.name == "mapped")


# -- the JSON graph format --------------------------------------------------------------------


def test_json_round_trip_keeps_kept_nodes(tmp_path):
    g = _import()
    text = g.to_json()
    doc = json.loads(text)
    fancy = next(n for n in doc["nodes"] if n["name"] == "fancy")
    assert "attrs" not in fancy and fancy["unsupported"]["output_types"] == ["float32"]
    back = mg.Graph.from_json(text)
    assert back.to_json() == text
    assert back.as_graph_def() == g.as_graph_def()
    np.testing.assert_array_equal(mg.Session(back).run("z:0", {"x:0": X}), X * 2)
    with pytest.raises(errors.UnimplementedError, match="node 'fancy'"):
        mg.Session(back).run("y:0", {"x:0": X})


def test_json_refuses_a_graph_whose_kept_node_names_functions():
    with pytest.raises(errors.UnimplementedError, match="no function bodies"):
        _import(CALLS).to_json()


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda n: n.update(op="Neg"), "is supported"),
        (lambda n: n.update(op="no good"), "invalid op type name"),
        (lambda n: n.update(attrs={}), 'no "attrs"'),
        (lambda n: n["unsupported"].pop("node_attrs"), "must hold"),
        (lambda n: n["unsupported"].update(output_types=["float99"]), "float99"),
        (lambda n: n["unsupported"].update(output_types=[]), "1 to"),
        (lambda n: n["unsupported"].update(output_shapes=[]), "0 shapes for 1"),
        (lambda n: n["unsupported"].update(output_shapes=[[-2]]), "non-negative"),
        (lambda n: n["unsupported"].update(output_args=["a", "b"]), "2 names for 1"),
        (lambda n: n["unsupported"].update(node_attrs="not base64!"), "not base64"),
    ],
)
def test_json_refuses_bad_kept_nodes(change, message):
    doc = json.loads(_import().to_json())
    change(next(n for n in doc["nodes"] if n["name"] == "fancy"))
    with pytest.raises(errors.InvalidArgumentError, match=message):
        mg.Graph.from_json(json.dumps(doc))


# -- TensorFlow's graphs and SavedModel --------------------------------------------------------


def _load(name):
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(str(FIXTURES / name), name="", allow_unsupported=True)
    return g


def test_tensorflow_graph_with_jpeg_ops(any_device):
    g = _load("partial_jpeg.pbtxt")
    assert _spec(g, "encode") == [("unknown", [])]  # a string: minigraph has no such dtype
    assert _spec(g, "decode") == [("uint8", [None, None, 1])]  # _output_shapes, Cast's SrcT
    assert _spec(g, "z") == [("float32", [None, None, 1])]
    sess = mg.Session(g)
    x = np.linspace(-100, 300, 16, dtype=np.float32).reshape(4, 4, 1)
    np.testing.assert_array_equal(sess.run("y:0", {"x:0": x}), np.maximum(x, 0) * 2)
    with pytest.raises(errors.UnimplementedError, match="node 'encode'"):
        sess.run("z:0", {"x:0": x})
    pixels = np.arange(12, dtype=np.uint8).reshape(3, 4, 1)
    np.testing.assert_array_equal(sess.run("z:0", {"decode:0": pixels}), pixels * 0.5)


def test_tensorflow_function_graph(any_device):
    g = _load("partial_fn.pbtxt")
    sess = mg.Session(g)
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4, 1)
    np.testing.assert_array_equal(sess.run("Identity:0", {"x:0": x}), np.maximum(x, 0) * 2)
    with pytest.raises(errors.UnimplementedError) as e:
        sess.run("Identity_1:0", {"x:0": x})
    assert e.value.node_name == "encode" and e.value.op_type == "EncodeJpeg"


def test_tensorflow_runs_the_export(tmp_path):
    python = _tf_python()
    if python is None:
        pytest.skip("TensorFlow is not installed (set MINIGRAPH_TF_PYTHON to a Python with it)")
    x = np.linspace(0, 255, 16, dtype=np.float32).reshape(4, 4, 1)
    np.savez(tmp_path / "feeds.npz", **{"x:0": x})
    cases = []
    for name, fetches in [
        ("partial_jpeg.pbtxt", ["y:0", "z:0"]),
        ("partial_fn.pbtxt", ["Identity:0", "Identity_1:0"]),
    ]:
        mg.write_graph(_load(name), tmp_path, f"{name}.pb")
        for which, path in [("tf", FIXTURES / name), ("mg", tmp_path / f"{name}.pb")]:
            case = {"op": f"{which}:{name}", "feeds": str(tmp_path / "feeds.npz")}
            if which == "tf":  # the runner reads binary GraphDefs
                gd = text_format.Parse(path.read_text(), graph_pb2.GraphDef())
                path = tmp_path / f"{name}.tf.pb"
                path.write_bytes(gd.SerializeToString())
            cases.append({**case, "file": str(path), "fetches": fetches})
    status = run_in_tensorflow(python, tmp_path, cases)
    assert set(status.values()) == {"ok"}, status
    for name in ("partial_jpeg.pbtxt", "partial_fn.pbtxt"):
        ours = np.load(tmp_path / f"{name}.pb.out.npz")
        theirs = np.load(tmp_path / f"{name}.tf.pb.out.npz")
        for key in theirs.files:
            np.testing.assert_array_equal(ours[key], theirs[key])


def test_saved_model_with_an_unsupported_op():
    with pytest.raises(errors.UnimplementedError, match="allow_unsupported=True"):
        mg.saved_model.load(SAVED)
    loaded = mg.saved_model.load(SAVED, allow_unsupported=True)
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4, 1)
    result = loaded.signatures["relu"](x=x)
    np.testing.assert_array_equal(result["y"], np.maximum(x, 0) * 2)
    # serving_default's one call computes y and z: it needs the JPEG ops for either
    with pytest.raises(errors.UnimplementedError, match="EncodeJpeg"):
        loaded.signatures["serving_default"](x=x)


# -- the command line -------------------------------------------------------------------------


def test_check_says_which_fetches_run(capsys):
    assert main(["check", str(FIXTURES / "partial_jpeg.pbtxt")]) == 1
    out = capsys.readouterr().out.splitlines()
    at = out.index("fetches (the nodes no other node reads) with --allow-unsupported:")
    assert [line.split() for line in out[at + 1 :]] == [
        ["y:0", "runnable"],
        ["z:0", "needs", "DecodeJpeg", "(node", "'decode'),", "EncodeJpeg", "(node", "'encode')"],
    ]


def test_check_on_a_saved_model_names_the_signature_outputs(capsys):
    assert main(["check", str(SAVED)]) == 1
    out = capsys.readouterr().out
    assert "fetches (signature serving_default's outputs) with --allow-unsupported:" in out
    lines = [line for line in out.splitlines() if line.startswith(("  y (", "  z ("))]
    assert len(lines) == 2 and all("needs DecodeJpeg" in line for line in lines)


def test_run_needs_the_flag_and_then_fails_only_for_what_needs_the_op(tmp_path, capsys):
    path = str(FIXTURES / "partial_jpeg.pbtxt")
    np.save(tmp_path / "x.npy", np.ones((4, 4, 1), np.float32))
    feed = ["--feed", f"x={tmp_path / 'x.npy'}"]
    assert main(["run", path, *feed, "--fetch", "y"]) == 1
    assert "--allow-unsupported" in capsys.readouterr().err
    assert main(["run", path, *feed, "--fetch", "y", "--allow-unsupported"]) == 0
    assert "y:0: float32[4, 4, 1]" in capsys.readouterr().out
    assert main(["run", path, *feed, "--allow-unsupported"]) == 1  # fetches y and z
    said, err = capsys.readouterr().err.splitlines()
    assert said.startswith("minigraph: no --fetch given: fetching y:0, z:0")
    assert err.startswith("minigraph: error: op EncodeJpeg is not supported by minigraph")
    assert err.endswith("[node 'encode' (EncodeJpeg)]")


def test_commands_on_a_json_graph_with_kept_nodes(tmp_path, capsys):
    path = tmp_path / "g.json"
    path.write_text(_import().to_json())
    np.save(tmp_path / "x.npy", X)
    assert main(["run", str(path), "--feed", f"x={tmp_path / 'x.npy'}", "--fetch", "z"]) == 0
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "FancyNorm" in out and "  z:0" not in out  # z is read by lone, no output
    fetch_lines = out[out.index("fetches (") :].splitlines()[1:]
    assert ["c:0", "needs", "SplitThing", "(node", "'s')"] in [ln.split() for ln in fetch_lines]
    assert main(["show", str(path)]) == 0
    assert '"fancy" [label="fancy\\nFancyNorm"]' in capsys.readouterr().out
