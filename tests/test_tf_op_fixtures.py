"""Every op case TensorFlow 2.21 ran (tests/fixtures/ops/*.npz), replayed through minigraph.

The fixtures are written by tests/tf_oracle/make_op_fixtures.py with TensorFlow installed;
this test needs no TensorFlow. Each case runs twice: with its inputs as constants (so shape
inference may already decide it) and fed through placeholders of the inputs' shapes (so only
the kernels see the values). Outputs must have TF's dtype and shape, and equal values:
exactly for integers and bools, within a per-dtype tolerance for floats (NaN where TF has
NaN). Where TF raises, minigraph raises the mg.errors class of the same name.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors
from minigraph.wrappers import apply_op

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "ops"

# (rtol, atol) per float dtype: TF's kernels and NumPy's may sum in different orders.
TOLERANCE = {
    np.dtype(np.float16): (2e-3, 2e-3),
    np.dtype(np.float32): (2e-5, 1e-6),
    np.dtype(np.float64): (1e-12, 1e-14),
    np.dtype(np.complex64): (2e-5, 1e-6),
    np.dtype(np.complex128): (1e-12, 1e-14),
}


def load_cases(directory: Path) -> list[tuple[str, dict, dict]]:
    """(label, meta, arrays) of every case of the fixture files in ``directory`` (the op
    fixtures here, the gradient fixtures of test_tf_grad_fixtures.py): each file's meta is
    a JSON list, its arrays ``<case>/...``."""
    cases = []
    for path in sorted(directory.glob("*.npz")):
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        for i, meta in enumerate(json.loads(str(arrays.pop("meta")))):
            own = {k[len(f"{i}/") :]: v for k, v in arrays.items() if k.startswith(f"{i}/")}
            label = meta["name"] or meta["op"]
            cases.append((f"{path.stem}:{i}:{label}", meta, own))
    return cases


CASES = load_cases(FIXTURES)


def attr_value(value):
    if isinstance(value, dict) and "dtype" in value:
        return mg.as_dtype(value["dtype"])
    if isinstance(value, dict) and "float" in value:
        return float(value["float"])
    if isinstance(value, list):
        return [attr_value(v) for v in value]
    return value


def _inputs(op_def, meta, arrays, fed):
    """The op's inputs in declaration order: arrays, or placeholders with their feeds."""
    unknown = set(meta["inputs"]) - {a.name for a in op_def.inputs}
    assert not unknown, f"TF's inputs {sorted(unknown)} are not in minigraph's {op_def.signature()}"
    feeds = {}

    def value(key):
        v = arrays[f"in/{key}"]
        if not fed:
            return v
        p = mg.placeholder(mg.as_dtype(v.dtype), shape=v.shape)
        feeds[p] = v
        return p

    out = []
    for arg in op_def.inputs:
        n = meta["inputs"][arg.name]
        out.append(value(arg.name) if n is None else [value(f"{arg.name}/{k}") for k in range(n)])
    return out, feeds


def _expect_error(meta):
    if meta.get("mg_error"):
        return (getattr(errors, meta["mg_error"]),)
    name = meta.get("tf_error")
    if name is None:
        return None
    if name in ("TypeError", "ValueError"):  # raised by TF's Python layer before the kernel
        return (errors.InvalidArgumentError, TypeError, ValueError)
    return (getattr(errors, name),)


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("fed", [False, True], ids=["const", "fed"])
@pytest.mark.parametrize("label,meta,arrays", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow(label, meta, arrays, fed):
    op_def = mg.registered_ops().get(meta["op"])
    assert op_def is not None, f"minigraph has no op {meta['op']}"
    attrs = {k: attr_value(v) for k, v in meta["attrs"].items()}
    expected_error = _expect_error(meta)
    g = mg.Graph()
    try:
        with g.as_default():
            inputs, feeds = _inputs(op_def, meta, arrays, fed)
            op = apply_op(meta["op"], None, inputs, attrs)
        results = mg.Session(g).run(op.outputs, feed_dict=feeds)
    except Exception as e:
        if expected_error is None or not isinstance(e, expected_error):
            raise
        if isinstance(e, errors.OpError):
            assert e.node_name, f"{type(e).__name__} names no node: {e}"
        return
    assert expected_error is None, (
        f"TF raised {meta.get('tf_error') or meta.get('mg_error')} "
        f"({meta.get('tf_message') or meta.get('why')}); minigraph returned {results}"
    )
    assert len(results) == meta["n_outputs"]
    for k, got in enumerate(results):
        want = arrays[f"out/{k}"]
        assert got.dtype == want.dtype, f"output {k}: dtype {got.dtype}, TF {want.dtype}"
        assert got.shape == want.shape, f"output {k}: shape {got.shape}, TF {want.shape}"
        if want.dtype.kind in "fc":
            rtol, atol = TOLERANCE[want.dtype]
            rtol = meta["rtol"] if meta["rtol"] is not None else rtol
            atol = meta["atol"] if meta["atol"] is not None else atol
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"output {k}")
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"output {k}")
