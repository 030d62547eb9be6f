"""The gradients TensorFlow 2.21 computed (tests/fixtures/grads/*.npz), replayed through
``mg.gradients``.

The fixtures are written by tests/tf_oracle/make_grad_fixtures.py with TensorFlow
installed; this test needs no TensorFlow. Each case builds the op, weights each float
output by TF's recorded ``dy`` (``grad_ys``) and asks for the gradients of the inputs TF
differentiated: once with the inputs as constants (every shape known while building, so
broadcast reductions are constants) and once fed through placeholders of unknown shape
(the reductions come from Shape and BroadcastGradientArgs nodes). Every gradient must have
TF's dtype, shape and values within a per-dtype tolerance, and None where TF has None.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_tf_op_fixtures import attr_value, load_cases  # noqa: E402

import minigraph as mg
from minigraph.wrappers import apply_op

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "grads"

# (rtol, atol) per dtype: the formulas are TF's, the kernels may round differently.
TOLERANCE = {
    np.dtype(np.float16): (5e-3, 5e-3),
    np.dtype(np.float32): (1e-5, 1e-6),
    np.dtype(np.float64): (1e-10, 1e-12),
    np.dtype(np.complex64): (1e-5, 1e-6),
    np.dtype(np.complex128): (1e-10, 1e-12),
}


CASES = load_cases(FIXTURES)


def _build(meta, arrays, fed):
    """The op on its inputs (constants, or placeholders of unknown shape), the tensors by
    the fixture's keys, and the feeds."""
    op_def = mg.registered_ops()[meta["op"]]
    tensors, feeds = {}, {}

    def tensor(key):
        v = arrays[f"in/{key}"]
        # An input whose size TF's shape function needs is fed with its shape known.
        known = list(v.shape) if key in meta.get("known_shape", ()) else None
        t = mg.placeholder(mg.as_dtype(v.dtype), known) if fed else mg.constant(v)
        feeds.update({t: v} if fed else {})
        tensors[key] = t
        return t

    inputs = []
    for arg in op_def.inputs:
        n = meta["inputs"][arg.name]
        keys = [arg.name] if n is None else [f"{arg.name}/{k}" for k in range(n)]
        made = [tensor(k) for k in keys]
        inputs.append(made[0] if n is None else made)
    attrs = {k: attr_value(v) for k, v in meta["attrs"].items()}
    return apply_op(meta["op"], None, inputs, attrs), tensors, feeds


def test_fixtures_are_there():
    assert CASES, f"no gradient fixtures under {FIXTURES}"


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("fed", [False, True], ids=["const", "fed"])
@pytest.mark.parametrize("label,meta,arrays", CASES, ids=[c[0] for c in CASES])
def test_gradient_matches_tensorflow(label, meta, arrays, fed):
    g = mg.Graph()
    with g.as_default():
        op, tensors, feeds = _build(meta, arrays, fed)
        ys = [op.outputs[k] for k in meta["dy"]]
        dys = [arrays[f"dy/{k}"] for k in meta["dy"]]
        xs = [tensors[key] for key in meta["wrt"]]
        grads = mg.gradients(ys, xs, grad_ys=dys)
    for key, grad in zip(meta["wrt"], grads):
        if key in meta["none"]:
            assert grad is None, f"TF has no gradient for {key}; minigraph built {grad}"
        else:
            assert grad is not None, f"no gradient for {key}; TF has one"
    wanted = [(key, grad) for key, grad in zip(meta["wrt"], grads) if grad is not None]
    results = mg.Session(g).run([grad for _, grad in wanted], feed_dict=feeds)
    for (key, _), got in zip(wanted, results):
        want = arrays[f"grad/{key}"]
        assert got.dtype == want.dtype, f"d/d{key}: dtype {got.dtype}, TF {want.dtype}"
        assert got.shape == want.shape, f"d/d{key}: shape {got.shape}, TF {want.shape}"
        rtol, atol = TOLERANCE[want.dtype]
        rtol = meta["rtol"] if meta["rtol"] is not None else rtol
        atol = meta["atol"] if meta["atol"] is not None else atol
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"d/d{key}")
