"""mg.saved_model.load: TensorFlow 2.21's SavedModels without TensorFlow.

tests/fixtures/saved_models/ holds a tf.Module with a tf.function signature, one with two
inputs, three outputs, a gathered variable and a loop reading a variable, and two Keras 3
``model.export`` directories (Dense/BatchNormalization, LSTM), with TensorFlow's outputs
(tests/tf_oracle/make_saved_model_fixtures.py). Each loads, matches TensorFlow on every
device, reports TensorFlow's signature, and exports a frozen graph TensorFlow runs; every
damaged file is an mg.errors error naming it; the tensor bundle reader is fuzzed.
"""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigraph as mg
from minigraph import tensor_bundle
from minigraph.cli import main

pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")

FIXTURES = Path(__file__).parent / "fixtures" / "saved_models"
CASES = json.loads((FIXTURES / "cases.json").read_text())
NAMES = [c["name"] for c in CASES]


def _arrays(name: str) -> tuple[dict, dict]:
    with np.load(FIXTURES / f"{name}.npz") as d:
        feeds = {k[5:]: d[k] for k in d.files if k.startswith("feed/")}
        fetches = {k[6:]: d[k] for k in d.files if k.startswith("fetch/")}
    return feeds, fetches


@pytest.fixture
def copy(tmp_path):
    """A writable copy of a fixture directory, to damage."""

    def make(name: str = "module_dense") -> Path:
        return Path(shutil.copytree(FIXTURES / name, tmp_path / name))

    return make


# -- what loads ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_fixture_matches_tensorflow(name, any_device):
    loaded = mg.saved_model.load(FIXTURES / name)
    feeds, expected = _arrays(name)
    got = loaded.signatures["serving_default"](**feeds)
    assert sorted(got) == sorted(expected)
    for key, want in expected.items():
        assert got[key].dtype == want.dtype and got[key].shape == want.shape, key
        if want.dtype.kind in "iub":
            np.testing.assert_array_equal(got[key], want)
        else:
            np.testing.assert_allclose(got[key], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", CASES, ids=NAMES)
def test_signature_metadata_is_tensorflows(case):
    sig = mg.saved_model.load(FIXTURES / case["name"], tags=["serve"]).signatures["serving_default"]
    for have, want in ((sig.inputs, case["inputs"]), (sig.outputs, case["outputs"])):
        assert sorted(have) == sorted(want)
        for key, spec in want.items():
            assert have[key].name == key
            assert have[key].dtype.name == spec["dtype"]
            assert have[key].shape.as_list() == spec["shape"]
            assert have[key].tensor.dtype.name == spec["dtype"]
    assert sig.structured_input_signature == ((), sig.inputs)


@pytest.mark.parametrize("name", NAMES)
def test_variables_are_frozen_into_constants(name):
    g = mg.saved_model.load(FIXTURES / name).graph
    graphs = [g, *(f.graph for f in g.library.values())]
    ops = {n.type_string for graph in graphs for n in graph.nodes()}
    assert not ops & {"VarHandleOp", "ReadVariableOp", "ResourceGather", "AssignVariableOp"}
    assert not any(
        x.dtype == mg.resource for graph in graphs for n in graph.nodes() for x in n.inputs
    )
    assert "Const" in {n.type_string for n in g.nodes()}


def test_keras_export_has_both_signatures_on_one_graph():
    loaded = mg.saved_model.load(FIXTURES / "keras_export")
    assert sorted(loaded.signatures) == ["serve", "serving_default"]
    feeds, expected = _arrays("keras_export")
    np.testing.assert_allclose(
        loaded.signatures["serve"](**feeds)["output_0"], expected["output_0"], rtol=1e-5
    )


def test_a_batch_of_one_and_of_none(any_device):
    sig = mg.saved_model.load(FIXTURES / "module_two_heads").signatures["serving_default"]
    feeds, expected = _arrays("module_two_heads")
    one = sig(features=feeds["features"][1:2], ids=feeds["ids"][1:2])
    np.testing.assert_allclose(one["mixed"], expected["mixed"][1:2], rtol=1e-5, atol=1e-6)
    empty = sig(features=feeds["features"][:0], ids=feeds["ids"][:0])
    assert empty["total"].shape == (0, 3)


def test_frozen_graph_exports_and_tensorflow_runs_it(tmp_path):
    from test_graph_def import _tf_python, run_in_tensorflow

    loaded = mg.saved_model.load(FIXTURES / "keras_lstm_export")
    path = mg.write_graph(loaded.graph, tmp_path, "frozen.pb")
    again = mg.Graph()
    with again.as_default():
        mg.import_graph_def(path, name="")
    sig = loaded.signatures["serving_default"]
    feeds, expected = _arrays("keras_lstm_export")
    x, y = sig.inputs["sequence"].tensor.name, sig.outputs["output_0"].tensor.name
    got = mg.Session(again).run(y, {x: feeds["sequence"]})
    np.testing.assert_allclose(got, expected["output_0"], rtol=1e-5, atol=1e-6)
    python = _tf_python()
    if python is None:
        pytest.skip("TensorFlow is not installed (set MINIGRAPH_TF_PYTHON to a Python with it)")
    np.savez(tmp_path / "feeds.npz", **{x: feeds["sequence"]})
    case = {"op": "lstm", "file": str(path), "feeds": str(tmp_path / "feeds.npz"), "fetches": [y]}
    assert run_in_tensorflow(python, tmp_path, [case]) == {"lstm": "ok"}
    with np.load(f"{path}.out.npz") as out:
        np.testing.assert_allclose(out["arr_0"], expected["output_0"], rtol=1e-5, atol=1e-6)


# -- feeds -------------------------------------------------------------------------------------

SIG_FEED_ERRORS = [
    ({"features": np.zeros((1, 4), np.float32), "idz": np.zeros(1, np.int32)}, "no input 'idz'"),
    ({"features": np.zeros((1, 4), np.float32)}, "needs input(s) ids"),
    ({"features": np.zeros((1, 4)), "ids": np.zeros(1, np.int32)}, "'features' must be float32"),
    ({"features": np.zeros((1, 4), np.float32), "ids": [0.5]}, "'ids' must be int32"),
    ({"features": np.zeros((1, 5), np.float32), "ids": [0]}, "'features' must have shape [?,4]"),
    ({"features": np.zeros(4, np.float32), "ids": [0]}, "'features' must have shape [?,4]"),
    ({"features": [["a"] * 4], "ids": [0]}, "'features' must be float32"),
]


@pytest.mark.parametrize("feeds, message", SIG_FEED_ERRORS)
def test_bad_feeds_name_the_input(feeds, message):
    sig = mg.saved_model.load(FIXTURES / "module_two_heads").signatures["serving_default"]
    with pytest.raises(mg.errors.InvalidArgumentError, match=None) as e:
        sig(**feeds)
    assert message in str(e.value)


def test_feeds_python_values_and_refuses_positional_inputs():
    sig = mg.saved_model.load(FIXTURES / "module_dense").signatures["serving_default"]
    feeds, expected = _arrays("module_dense")
    got = sig(x=feeds["x"].tolist())["output_0"]
    np.testing.assert_allclose(got, expected["output_0"], rtol=1e-6)
    with pytest.raises(mg.errors.InvalidArgumentError, match="by name"):
        sig(feeds["x"])


def test_out_of_range_ids_fail_at_run_naming_the_gather():
    sig = mg.saved_model.load(FIXTURES / "module_two_heads").signatures["serving_default"]
    with pytest.raises(mg.errors.InvalidArgumentError, match=r"indices.*not in \[0, 10\)"):
        sig(features=np.zeros((1, 4), np.float32), ids=np.array([10], np.int32))


# -- damaged directories -----------------------------------------------------------------------


def _cut(path: Path, keep: int) -> None:
    path.write_bytes(path.read_bytes()[:keep])


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x5A
    path.write_bytes(bytes(data))


def test_bad_directories(tmp_path, copy):
    with pytest.raises(mg.errors.NotFoundError, match="does not exist"):
        mg.saved_model.load(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(mg.errors.NotFoundError, match="saved_model.pb"):
        mg.saved_model.load(tmp_path / "empty")
    (tmp_path / "file").write_text("x")
    with pytest.raises(mg.errors.NotFoundError, match="not a directory"):
        mg.saved_model.load(tmp_path / "file")
    with pytest.raises(mg.errors.NotFoundError, match=r"no MetaGraphDef with tags \['train'\]"):
        mg.saved_model.load(FIXTURES / "module_dense", tags=("train",))
    assert mg.saved_model.load(FIXTURES / "module_dense", tags=None).tags == ("serve",)
    assert mg.saved_model.load(FIXTURES / "module_dense", tags="serve").tags == ("serve",)


@pytest.mark.parametrize("keep", [0, 1, 3, 10, 100, 1000, 5000, 10000, -20, -2])
def test_a_truncated_saved_model_pb_is_an_error_naming_it(copy, keep):
    d = copy("module_two_heads")
    pb = d / "saved_model.pb"
    _cut(pb, keep if keep >= 0 else pb.stat().st_size + keep)
    with pytest.raises(mg.errors.OpError) as e:
        mg.saved_model.load(d)
    assert isinstance(e.value, mg.errors.DataLossError | mg.errors.NotFoundError), e.value
    assert str(d) in str(e.value)


def test_a_garbled_saved_model_pb_is_an_error(copy):
    d = copy()
    (d / "saved_model.pb").write_bytes(b"\xff" * 64)
    with pytest.raises(mg.errors.DataLossError, match="saved_model.pb is not a valid SavedModel"):
        mg.saved_model.load(d)


def test_missing_or_damaged_variables(copy):
    d = copy()
    index = d / "variables" / "variables.index"
    shard = d / "variables" / "variables.data-00000-of-00001"
    saved_index, saved_shard = index.read_bytes(), shard.read_bytes()
    w = tensor_bundle.BundleReader(d / "variables" / "variables").entries[
        "w/.ATTRIBUTES/VARIABLE_VALUE"
    ]
    shard.unlink()
    with pytest.raises(mg.errors.NotFoundError, match="data-00000-of-00001"):
        mg.saved_model.load(d)
    shard.write_bytes(saved_shard[: w.offset + w.size - 1])
    with pytest.raises(mg.errors.DataLossError, match="truncated"):
        mg.saved_model.load(d)
    shard.write_bytes(saved_shard)
    _flip(shard, w.offset + 5)  # a byte of w
    with pytest.raises(mg.errors.DataLossError, match="checksum mismatch"):
        mg.saved_model.load(d)
    shard.write_bytes(saved_shard)
    _flip(index, 20)
    with pytest.raises(mg.errors.DataLossError, match="variables.index: corrupt table"):
        mg.saved_model.load(d)
    _cut(index, len(saved_index) - 1)
    with pytest.raises(mg.errors.DataLossError, match="variables.index"):
        mg.saved_model.load(d)
    index.unlink()
    with pytest.raises(mg.errors.NotFoundError, match="variables.index"):
        mg.saved_model.load(d)


# -- the tensor bundle reader ------------------------------------------------------------------


def test_crc32c_known_values_and_long_data():
    assert tensor_bundle.crc32c(b"") == 0
    assert tensor_bundle.crc32c(b"123456789") == 0xE3069283  # the standard check value
    data = np.random.default_rng(0).integers(0, 256, 70001, np.uint8).tobytes()
    slow = tensor_bundle._crc_register(data, 0xFFFFFFFF) ^ 0xFFFFFFFF
    assert tensor_bundle.crc32c(data) == slow  # the lane-parallel path


def test_bundle_reader_reads_every_variable():
    r = tensor_bundle.BundleReader(FIXTURES / "module_two_heads" / "variables" / "variables")
    assert r.num_shards == 1 and not r.big_endian
    assert "scale/.ATTRIBUTES/VARIABLE_VALUE" in r.keys()
    assert r.tensor("scale/.ATTRIBUTES/VARIABLE_VALUE") == np.float32(2.5)
    np.testing.assert_array_equal(r.tensor("offset/.ATTRIBUTES/VARIABLE_VALUE"), [3, 1, 4, 1])
    with pytest.raises(mg.errors.NotFoundError, match="Key nope not found"):
        r.tensor("nope")
    with pytest.raises(mg.errors.UnimplementedError, match="string"):
        r.tensor("_CHECKPOINTABLE_OBJECT_GRAPH")


INDEX = (FIXTURES / "keras_export" / "variables" / "variables.index").read_bytes()


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.integers(0, len(INDEX)).map(lambda n: INDEX[:n]),
        st.tuples(st.integers(0, len(INDEX) - 1), st.integers(1, 255)).map(
            lambda t: INDEX[: t[0]] + bytes([INDEX[t[0]] ^ t[1]]) + INDEX[t[0] + 1 :]
        ),
        st.binary(max_size=200),
        st.binary(max_size=200).map(lambda b: b + INDEX[-48:]),
    )
)
def test_fuzz_the_table_reader(data):
    try:
        rows = tensor_bundle.read_table(data, "fuzzed.index")
    except (mg.errors.DataLossError, mg.errors.UnimplementedError) as e:
        assert "fuzzed.index" in str(e)
        return
    assert all(isinstance(k, bytes) and isinstance(v, bytes) for k, v in rows)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, len(INDEX) - 1), st.integers(1, 255))
def test_fuzz_the_bundle_reader(tmp_path_factory, at, xor):
    d = tmp_path_factory.mktemp("bundle")
    src = FIXTURES / "keras_export" / "variables"
    shutil.copy(src / "variables.data-00000-of-00001", d / "variables.data-00000-of-00001")
    (d / "variables.index").write_bytes(INDEX[:at] + bytes([INDEX[at] ^ xor]) + INDEX[at + 1 :])
    try:
        r = tensor_bundle.BundleReader(d / "variables")
        for key in r.keys():
            r.tensor(key)
    except mg.errors.OpError:
        pass


# -- freezing ------------------------------------------------------------------------------------


def _graph_def(nodes):
    from google.protobuf import text_format

    from minigraph.tf_proto import protos

    p = protos()
    return p, text_format.Parse(nodes, p.graph_pb2.GraphDef())


VARS = """
node { name: "v" op: "VarHandleOp" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: 3 } dim { size: 2 } } } } }
node { name: "ids" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
"""


def test_freeze_main_graph_reads_and_gathers():
    from minigraph.freeze_variables import freeze

    p, gd = _graph_def(
        VARS
        + """
node { name: "r" op: "ReadVariableOp" input: "v" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "g" op: "ResourceGather" input: "v" input: "ids"
       attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "Tindices" value { type: DT_INT32 } } }
node { name: "s" op: "VariableShape" input: "v" attr { key: "out_type" value { type: DT_INT32 } } }
"""
    )
    value = np.arange(6, dtype=np.float32).reshape(3, 2)
    frozen = freeze(p, gd, {"v": value})
    assert [n.op for n in frozen.node] == [
        "Const",
        "Placeholder",
        "Identity",
        "GatherV2",
        "Shape",
        "Const",
    ]
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(frozen, name="")
    r, gathered, shape = mg.Session(g).run(["r:0", "g:0", "s:0"], {"ids:0": [2, 0]})
    np.testing.assert_array_equal(r, value)
    np.testing.assert_array_equal(gathered, value[[2, 0]])
    np.testing.assert_array_equal(shape, [3, 2])


@pytest.mark.parametrize(
    "use, error, message",
    [
        (
            'node { name: "a" op: "AssignVariableOp" input: "v" input: "c" '
            'attr { key: "dtype" value { type: DT_FLOAT } } }',
            mg.errors.UnimplementedError,
            "AssignVariableOp uses variable 'v'",
        ),
        (
            'node { name: "r" op: "ReadVariableOp" input: "v" '
            'attr { key: "dtype" value { type: DT_INT32 } } }',
            mg.errors.InvalidArgumentError,
            "reads variable 'v' as DT_INT32, but its saved value is DT_FLOAT",
        ),
    ],
)
def test_freeze_refuses_writes_and_wrong_reads(use, error, message):
    from minigraph.freeze_variables import freeze

    p, gd = _graph_def(VARS + use)
    with pytest.raises(error, match=message):
        freeze(p, gd, {"v": np.zeros((3, 2), np.float32)})


def test_a_variable_the_saver_does_not_restore_is_not_found(copy):
    d = copy()
    sm = mg.saved_model._saved_model_class()()
    sm.ParseFromString((d / "saved_model.pb").read_bytes())
    sm.meta_graphs[0].saver_def.restore_op_name = "nothing"
    (d / "saved_model.pb").write_bytes(sm.SerializeToString())
    with pytest.raises(mg.errors.NotFoundError, match="variable [wb] is not restored"):
        mg.saved_model.load(d)


# -- the command line ----------------------------------------------------------------------------


def test_cli_runs_a_saved_model_directory(tmp_path, capsys):
    d = FIXTURES / "module_two_heads"
    feeds, expected = _arrays("module_two_heads")
    np.save(tmp_path / "f.npy", feeds["features"])
    np.save(tmp_path / "i.npy", feeds["ids"])
    assert main(["inputs", str(d)]) == 0
    out = capsys.readouterr().out
    assert "features  serving_default_features:0  float32   [?,4]" in out
    assert "counts  StatefulPartitionedCall:0  int32" in out
    feed = ["--feed", f"features={tmp_path / 'f.npy'}", "--feed", f"ids={tmp_path / 'i.npy'}"]
    out_file = tmp_path / "out.npz"
    assert main(["run", str(d), *feed, "--out", str(out_file)]) == 0
    with np.load(out_file) as got:
        np.testing.assert_array_equal(got["StatefulPartitionedCall:0"], expected["counts"])
        np.testing.assert_allclose(got["StatefulPartitionedCall:2"], expected["total"], rtol=1e-5)
    capsys.readouterr()
    assert main(["run", str(d / "saved_model.pb"), *feed, "--fetch", "mixed"]) == 0
    assert capsys.readouterr().out.startswith("mixed (StatefulPartitionedCall:1): float32[5, 3]")
    assert main(["check", str(d)]) == 0
    out = capsys.readouterr().out
    assert "all " in out and "functions:" in out and "VarHandleOp" not in out
    assert main(["show", str(FIXTURES / "module_dense")]) == 0
    assert capsys.readouterr().out.startswith("digraph")


def test_cli_names_a_damaged_saved_model(copy, capsys):
    d = copy()
    (d / "variables" / "variables.index").unlink()
    assert main(["run", str(d)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "variables.index" in err[0]
