"""The ResourceApply* training ops: TensorFlow's recorded updates replayed step by step
(tests/fixtures/training/training_ops.npz, written by
tests/tf_oracle/make_optimizer_fixtures.py), its messages, build-time checks, copy-on-write
updates and concurrent updates."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

import minigraph as mg
from minigraph import config, errors, ops
from minigraph.scope import current_scope

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "training" / "training_ops.npz"
DATA = np.load(FIXTURE)
CASES = {c["name"]: c for c in json.loads(str(DATA["meta"]))}


def unpack(flat: np.ndarray, layout: list) -> dict[str, np.ndarray]:
    """The arrays a fixture packed into one (see make_optimizer_fixtures._pack)."""
    out, pos = {}, 0
    for key, shape in layout:
        n = int(np.prod(shape))
        out[key] = flat[pos : pos + n].reshape(shape)
        pos += n
    return out


def _tolerance(case: dict) -> float:
    """0: bit for bit. TensorFlow's float32 Adagrad (v1) uses an approximate rsqrt (the
    processor's estimate and a Newton step, in Eigen's vectorised path), and Eigen's complex
    square root is not NumPy's: a few ulp either way."""
    if case["dtype"].startswith("complex"):
        return 1e-6
    if case["op"] == "ResourceApplyAdagrad":
        return {"float32": 2e-6, "float16": 2e-3}.get(case["dtype"], 0)
    return 0


def _build(case: dict, arrays: dict[str, np.ndarray]):
    dtype = mg.as_dtype(case["dtype"])
    variables = {
        n: mg.Variable(arrays[f"init/{n}"], name=n, shape=mg.TensorShape(None))
        for n in case["variables"]
    }
    feeds = {t: mg.placeholder(dtype, name=t) for t in case["tensors"]}
    handles = [variables[n].handle for n in case["variables"]]
    apply = getattr(ops, case["op"])(
        current_scope(), *handles, *feeds.values(), **case["attrs"]
    ).operation
    reads = [variables[n].value() for n in case["variables"]]
    return apply, feeds, reads


@pytest.mark.parametrize("name", sorted(CASES))
def test_tensorflow_fixture(name, any_device):
    case = CASES[name]
    arrays = unpack(DATA[name], case["layout"])
    g = mg.Graph()
    with g.as_default():
        apply, feeds, reads = _build(case, arrays)
        init = mg.global_variables_initializer()
    tol = _tolerance(case)
    with mg.Session(g) as sess:
        sess.run(init)
        for step in range(case["steps"]):
            feed = {feeds[t]: arrays[f"{step}/in/{t}"] for t in case["tensors"]}
            if "error" in case:
                kind, message = case["error"]
                with pytest.raises(getattr(errors, kind)) as e:
                    sess.run(apply, feed)
                assert e.value.message == message
                assert e.value.node_name == apply.name
                return
            assert sess.run(apply, feed) is None
            for n, got in zip(case["variables"], sess.run(reads)):
                want = arrays[f"{step}/out/{n}"]
                assert got.dtype == want.dtype and got.shape == want.shape
                if tol:
                    np.testing.assert_allclose(got, want, rtol=tol, atol=0, err_msg=n)
                else:
                    assert got.tobytes() == want.tobytes(), (n, got, want)


def test_every_training_op_has_fixtures():
    assert {c["op"] for c in CASES.values()} == set(ops.training_ops.__all__)


# -- build time ---------------------------------------------------------------------------


def _momentum(var, accum, lr, grad, momentum=0.9, **attrs):
    return ops.ResourceApplyMomentum(current_scope(), var, accum, lr, grad, momentum, **attrs)


@pytest.mark.parametrize(
    "accum_shape, lr, grad, message",
    [
        ([3], 0.1, [1.0, 2.0], "Dimension 0 in both shapes must be equal, but are 2 and 3"),
        ([2], [0.1], [1.0, 2.0], "Shape must be rank 0 but is rank 1"),
        ([2], 0.1, [1.0, 2.0, 3.0], "Dimension 0 in both shapes must be equal, but are 2 and 3"),
        ([2], 0.1, [[1.0, 2.0]], "Shapes must be equal rank, but are 1 and 2"),
    ],
)
def test_shapes_known_at_build_time_are_checked_then(accum_shape, lr, grad, message):
    g = mg.Graph()
    with g.as_default():
        var = mg.Variable(np.float32([1, 2]), name="w")
        accum = mg.Variable(np.zeros(accum_shape, np.float32), name="accum")
        with pytest.raises(errors.InvalidArgumentError, match=message) as e:
            _momentum(var.handle, accum.handle, np.float32(lr), np.float32(grad))
    assert e.value.op_type == "ResourceApplyMomentum"


def test_integers_have_no_kernel_and_dtypes_must_agree():
    g = mg.Graph()
    with g.as_default():
        i = mg.Variable(np.int32([1, 2]), name="i")
        with pytest.raises(errors.InvalidArgumentError, match="No OpKernel was registered"):
            ops.ResourceApplyGradientDescent(current_scope(), i.handle, 1, [1, 1])
        d = mg.Variable(np.float64([1, 2]), name="d")
        with pytest.raises(errors.InvalidArgumentError, match="var is a variable of float64"):
            ops.ResourceApplyGradientDescent(current_scope(), d.handle, np.float32(1), [1, 1])


def test_an_uninitialised_slot_is_a_failed_precondition_naming_the_node():
    g = mg.Graph()
    with g.as_default():
        var = mg.Variable(np.float32([1, 2]), name="w")
        accum = mg.Variable(np.float32([0, 0]), name="w/Momentum")
        op = _momentum(var.handle, accum.handle, np.float32(0.1), np.float32([1, 1])).operation
    with mg.Session(g) as sess:
        sess.run(var.initializer)
        with pytest.raises(errors.FailedPreconditionError, match="variables: w/Momentum") as e:
            sess.run(op)
        assert e.value.node_name == op.name
        np.testing.assert_array_equal(sess.run(var), [1, 2])  # nothing was updated


# -- copy-on-write and atomic updates ---------------------------------------------------------


def test_a_read_before_the_update_keeps_what_it_read(any_device):
    g = mg.Graph()
    with g.as_default():
        var = mg.Variable(np.float64([1, 2]), name="w")
        before = var.value()
        with mg.control_dependencies([before]):
            op = ops.ResourceApplyGradientDescent(
                current_scope(), var.handle, np.float64(1), np.float64([10, 10])
            ).operation
        with mg.control_dependencies([op]):
            after = var.value()
        init = mg.global_variables_initializer()
    with mg.Session(g) as sess:
        sess.run(init)
        kept = sess.run(var)
        got_before, got_after = sess.run([before, after])
        np.testing.assert_array_equal(got_before, [1, 2])
        np.testing.assert_array_equal(got_after, [-9, -8])
        np.testing.assert_array_equal(kept, [1, 2])  # an earlier fetch is the caller's


def test_concurrent_updates_lose_none_and_crossed_slots_do_not_deadlock():
    g = mg.Graph()
    with g.as_default():
        a = mg.Variable(np.zeros(3), name="a")
        b = mg.Variable(np.zeros(3), name="b")
        one = np.float64(1)
        grad = np.ones(3)
        descend = ops.ResourceApplyGradientDescent(current_scope(), a.handle, one, grad)
        # two momentum ops whose var and accum are each other's: locks taken in one order
        ab = _momentum(a.handle, b.handle, np.float64(0.0), grad, np.float64(1.0)).operation
        ba = _momentum(b.handle, a.handle, np.float64(0.0), grad, np.float64(1.0)).operation
        init = mg.global_variables_initializer()
    sess = mg.Session(g)
    sess.run(init)

    def run(op, n):
        for _ in range(n):
            sess.run(op)

    threads = [threading.Thread(target=run, args=(descend.operation, 100)) for _ in range(4)]
    threads += [threading.Thread(target=run, args=(op, 100)) for op in (ab, ba)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    # lr 0 leaves each var as it is; momentum 1 adds the gradient to the accumulator: b gets
    # +100 from ab, a gets -400 from descend and +100 from ba, in whatever order.
    np.testing.assert_array_equal(sess.run(a), [-300.0] * 3)
    np.testing.assert_array_equal(sess.run(b), [100.0] * 3)
    sess.close()


def test_scalar_variables_stay_arrays(any_device):
    """NumPy arithmetic on 0-d arrays returns scalars; a stored value is always an array
    (ReadVariableOp's outputs are checked against their spec in tests)."""
    g = mg.Graph()
    with g.as_default():
        v = mg.Variable(np.float32(1.0), name="v")
        step = mg.Variable(np.int64(0), name="step")
        descend = ops.ResourceApplyGradientDescent(
            current_scope(), v.handle, np.float32(0.5), np.float32(2.0)
        ).operation
        bump = step.assign_add(np.int64(1), read_value=False)
        init = mg.global_variables_initializer()
    with mg.Session(g) as sess:
        sess.run(init)
        sess.run([descend, bump])
        assert sess.run(v) == 0.0 and sess.run(step) == 1


@pytest.mark.parametrize("jit", [False, None])  # NumPy's calls by blocks; the default
@pytest.mark.parametrize("nesterov", [False, True])
def test_a_large_adam_update_is_tensorflows_formula_bit_for_bit(nesterov, jit):
    """A variable of more elements than one block (the host runs the update block by block,
    or as one compiled loop with the jit extra): every element as TensorFlow's formula in
    TF's order, written out here."""
    rng = np.random.default_rng(5)
    n = 50_003  # not a multiple of the block
    var0, m0, v0, grad = (rng.standard_normal(n).astype(np.float32) for _ in range(4))
    v0 = np.abs(v0)
    lr, beta1, beta2, eps = np.float32(0.01), np.float32(0.9), np.float32(0.999), np.float32(1e-7)
    b1p, b2p = np.float32(0.81), np.float32(0.998)
    g = mg.Graph()
    with g.as_default():
        var, m, v = (mg.Variable(a, name=k) for a, k in ((var0, "w"), (m0, "m"), (v0, "v")))
        ops.ResourceApplyAdam(
            current_scope(),
            *(var.handle, m.handle, v.handle, b1p, b2p, lr, beta1, beta2, eps, grad),
            use_nesterov=nesterov,
        )
        update = g.get_operation_by_name("ResourceApplyAdam")
        init = mg.global_variables_initializer()
    config.set_jit(jit)
    try:
        with mg.Session(g) as sess:
            sess.run(init)
            sess.run(update)
            got = sess.run([var, m, v])
    finally:
        config.set_jit(None)
    alpha = lr * np.sqrt(np.float32(1) - b2p) / (np.float32(1) - b1p)
    m1 = m0 + (grad - m0) * (np.float32(1) - beta1)
    v1 = v0 + (grad * grad - v0) * (np.float32(1) - beta2)
    numerator = (grad * (np.float32(1) - beta1) + beta1 * m1) if nesterov else m1
    var1 = var0 - (numerator * alpha) / (np.sqrt(v1) + eps)
    for have, want in zip(got, [var1, m1, v1]):
        np.testing.assert_array_equal(have, want)
