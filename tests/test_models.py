"""Real models from TensorFlow 2.21, frozen, imported and run: issue 11's "Real models".

The GraphDefs, their inputs and TensorFlow's outputs are committed in tests/fixtures/graphs/
(written by tests/tf_oracle/make_graph_fixtures.py with TensorFlow, which these tests never
need). Each model's case in cases.json states the tolerance it is held to (``rtol``,
``atol``) and why (``why``); integer outputs must be equal. docs/tensorflow.md lists the same
models with the same tolerances.
"""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minigraph as mg

pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")

on_any_device = pytest.mark.usefixtures("any_device")

FIXTURES = Path(__file__).parent / "fixtures" / "graphs"
DOC = Path(__file__).resolve().parent.parent / "docs" / "tensorflow.md"
MODELS = {c["name"]: c for c in json.loads((FIXTURES / "cases.json").read_text()) if "rtol" in c}
NAMES = sorted(MODELS)


def _skip_if_missing(case):
    missing = sorted(op for op in case["ops"] if op not in mg.registered_ops())
    if missing:
        pytest.skip(f"minigraph lacks {', '.join(missing)}")


def _import(case, **kwargs):
    g = mg.Graph()
    with g.as_default():
        out = mg.import_graph_def(str(FIXTURES / case["file"]), **kwargs)
    return g, out


def _saved(case):
    saved = np.load(FIXTURES / f"{case['name']}.npz")
    feeds = {n: saved[f"feed/{n}"] for n in case["feeds"]}
    return feeds, [saved[f"fetch/{n}"] for n in case["fetches"]]


def _assert_close(case, got, want, what):
    assert got.dtype == want.dtype and got.shape == want.shape, what
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=case["rtol"], atol=case["atol"], err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def test_the_issue_models_are_all_there():
    # an MLP, a CNN with pooling and batch norm, a residual block, a text model with
    # embeddings, a transformer block; the sharded lookup + router and the segment graph
    assert {
        "keras_mlp",
        "keras_cnn",
        "keras_batchnorm",
        "keras_residual",
        "keras_text_embedding",
        "keras_transformer",
        "fn_sharded_moe",
        "fn_segments",
        "keras_depthwise",
        "keras_text_cnn",
        "keras_lstm_unrolled",
        "fn_fused_batchnorm",
        "keras_conv3d",
    } <= set(MODELS)
    ops = {name: set(c["ops"]) for name, c in MODELS.items()}
    assert {"Conv2D", "Relu", "AddV2", "Mean", "MatMul"} <= ops["keras_residual"]
    assert {"GatherV2", "Mean"} <= ops["keras_text_embedding"]
    assert {"Einsum", "Softmax", "SquaredDifference", "Rsqrt", "Erfc"} <= ops["keras_transformer"]
    assert {"DynamicPartition", "GatherV2", "DynamicStitch", "TopKV2", "Softmax"} <= ops[
        "fn_sharded_moe"
    ]
    assert {"UnsortedSegmentSum", "SegmentMean"} <= ops["fn_segments"]
    assert {"DepthwiseConv2dNative", "Relu6", "Pad", "Max"} <= ops["keras_depthwise"]
    assert {"FusedBatchNormV3"} <= ops["fn_fused_batchnorm"]
    assert {"Conv3D", "MaxPool3D", "AvgPool3D"} <= ops["keras_conv3d"]
    assert not {"While", "StatelessWhile"} & ops["keras_lstm_unrolled"]
    for case in MODELS.values():  # float32 models: within 1e-5, as issue 11 asks
        assert case["rtol"] <= 1e-5 and case["atol"] <= 1e-5 and case["why"], case["name"]


@on_any_device
@pytest.mark.parametrize("name", NAMES)
def test_model_equals_tensorflow_within_its_tolerance(name):
    case = MODELS[name]
    _skip_if_missing(case)
    g, _ = _import(case, name="")
    feeds, want = _saved(case)
    got = mg.Session(g).run(case["fetches"], feeds)
    for fetch, x, y in zip(case["fetches"], got, want):
        _assert_close(case, x, y, f"{name} {fetch}")


BATCHED = [n for n in NAMES if n != "fn_segments"]  # every row (id) computed on its own


@on_any_device
@pytest.mark.parametrize("name", BATCHED)
def test_rows_run_alone_or_in_another_batch_give_the_same_results(name):
    """The models were traced with a batch (or id) dimension of None: any batch size runs,
    an empty one included, and a row's result does not depend on the other rows."""
    case = MODELS[name]
    _skip_if_missing(case)
    g, _ = _import(case, name="")
    ((feed, value),) = _saved(case)[0].items()
    sess = mg.Session(g)
    full = sess.run(case["fetches"], {feed: value})
    n = len(value)
    picks = [[i] for i in range(n)] + [list(range(n - 1, -1, -1)), list(range(0, n, 2)), []]
    if name == "fn_sharded_moe":  # ids 5, 0, 11, 3, 3, 7, 10: these leave shards empty
        picks += [[1, 3, 4], [0, 2]]
    for rows in picks:
        part = sess.run(case["fetches"], {feed: value[rows]})
        for fetch, x, y in zip(case["fetches"], part, full):
            _assert_close(case, x, y[rows], f"{name} {fetch} rows {rows}")


@on_any_device
def test_sharded_lookup_and_router_equal_a_numpy_reference_on_new_ids():
    """Ids TensorFlow did not see (every id, repeats, one shard only) against NumPy: id i is
    row i // 3 of shard i % 3; the 2 best of 4 experts mix with softmax weights."""
    case = MODELS["fn_sharded_moe"]
    _skip_if_missing(case)
    g, _ = _import(case, name="")
    feeds, (_, tf_emb, _) = _saved(case)
    consts = [op.outputs[0] for op in g.get_operations() if op.type == "Const"]
    values = mg.Session(g).run(consts)
    (router,) = [v for v in values if v.shape == (3, 4)]
    (experts,) = [v for v in values if v.shape == (4, 3, 2)]
    tables = [v for v in values if v.shape == (4, 3)]
    shards = {}  # which committed constant is shard k, from TensorFlow's output
    for i, row in zip(feeds["ids:0"], tf_emb):
        (shards[i % 3],) = [k for k, t in enumerate(tables) if np.array_equal(t[i // 3], row)]
    assert sorted(shards) == [0, 1, 2]
    for ids in [np.arange(12)[::-1], np.array([4, 4, 1, 7, 10, 1]), np.array([9, 0, 6])]:
        ids = ids.astype(np.int32)
        mixed, emb, which = mg.Session(g).run(case["fetches"], {"ids:0": ids})
        want_emb = np.stack([tables[shards[i % 3]][i // 3] for i in ids])
        np.testing.assert_array_equal(emb, want_emb)
        logits = want_emb.astype(np.float64) @ router
        want_which = np.argsort(-logits, axis=1, kind="stable")[:, :2]
        np.testing.assert_array_equal(which, want_which)
        top = np.take_along_axis(logits, want_which, axis=1)
        gates = np.exp(top - top.max(1, keepdims=True))
        gates /= gates.sum(1, keepdims=True)
        want = np.einsum("nd,nkdh,nk->nh", want_emb, experts[want_which], gates)
        np.testing.assert_allclose(mixed, want, rtol=case["rtol"], atol=case["atol"])


@on_any_device
def test_model_imports_under_a_prefix_with_its_input_mapped():
    """As docs/tensorflow.md shows: our own placeholder in, TensorFlow's output name out."""
    case = MODELS["keras_text_embedding"]
    _skip_if_missing(case)
    feeds, (want,) = _saved(case)
    g = mg.Graph()
    with g.as_default():
        ids = mg.placeholder(mg.int32, shape=[None, 6], name="tokens")
        (probs,) = mg.import_graph_def(
            str(FIXTURES / case["file"]),
            input_map={"ids:0": ids},
            return_elements=["Identity:0"],
            name="text",
        )
    assert probs.name == "text/Identity:0" and probs.shape.as_list() == [None, 2]
    _assert_close(case, mg.Session(g).run(probs, {ids: feeds["ids:0"]}), want, "probs")


def test_docs_list_these_models_with_their_tolerances():
    text = DOC.read_text().split("### Models that are tested", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \|.*\| ([0-9e.-]+) \| ([0-9e.-]+) \|$", text, re.M)
    assert {r[0] for r in rows} == set(MODELS)
    for name, rtol, atol in rows:
        assert (float(rtol), float(atol)) == (MODELS[name]["rtol"], MODELS[name]["atol"]), name


def _tf_python():
    for python in (os.environ.get("MINIGRAPH_TF_PYTHON"), "/root/tfvenv/bin/python"):
        if python and shutil.which(python):
            return python
    return sys.executable if importlib.util.find_spec("tensorflow") else None


def _doc_block(containing):
    # After "```python" an info string may say what the block needs (tests/test_docs.py).
    parts = DOC.read_text().split("```python")[1:]
    blocks = [b.split("\n", 1)[1].split("```", 1)[0] for b in parts]
    (block,) = [b for b in blocks if containing in b]
    return block


def test_docs_freezing_recipe_runs_in_tensorflow_and_its_model_in_minigraph(tmp_path):
    """docs/tensorflow.md's recipe, run with TensorFlow as written; then its "Importing a
    GraphDef" example runs the frozen model, which equals Keras's output."""
    python = _tf_python()
    if python is None:
        pytest.skip("TensorFlow is not installed (set MINIGRAPH_TF_PYTHON to a Python with it)")
    script = (
        "import numpy as np\n"
        + _doc_block('"model.pb", as_text=False')
        + "x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)\n"
        + "np.savez('keras.npz', x=x, y=model(x, training=False).numpy())\n"
    )
    (tmp_path / "freeze.py").write_text(script)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.run(
        [python, "freeze.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "['x:0'] ['Identity:0']" in proc.stdout
    saved = np.load(tmp_path / "keras.npz")
    namespace = {"x_value": saved["x"]}
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        block = _doc_block('import_graph_def("model.pb"').replace(
            "np.ones((2, 8), np.float32)", "x_value"
        )
        exec(compile(block, str(DOC), "exec"), namespace)
    finally:
        os.chdir(cwd)
    g, x, probs = namespace["g"], namespace["x"], namespace["probs"]
    assert probs.name == "model/Identity:0"
    got = mg.Session(g).run(probs, {x: saved["x"]})
    np.testing.assert_allclose(got, saved["y"], rtol=1e-5, atol=1e-6)
