"""mg.train's optimizers against TensorFlow 2.21's tf.compat.v1.train ones: a linear
regression and a 2-layer perceptron trained a few steps by each (recorded by
tests/tf_oracle/make_optimizer_fixtures.py in tests/fixtures/training/optimizers.npz), the
graph's variable names, slots, the global step, hyperparameter tensors and the errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "training" / "optimizers.npz"
DATA = np.load(FIXTURE)
META = json.loads(str(DATA["meta"]))
CASES = {c["name"]: c for c in META["cases"]}


def unpack(flat: np.ndarray, layout: list) -> dict[str, np.ndarray]:
    out, pos = {}, 0
    for key, shape in layout:
        n = int(np.prod(shape))
        out[key] = flat[pos : pos + n].reshape(shape)
        pos += n
    return out


def _model(case: dict) -> tuple[dict, mg.Output]:
    prefix = f"{case['model']}_{case['dtype']}/"
    data = {k[len(prefix) :]: DATA[k] for k in DATA.files if k.startswith(prefix)}
    params = {p: mg.Variable(data[p], name=p) for p in case["params"]}
    x = mg.constant(data["x"], name="x")
    if case["model"] == "linreg":
        pred = mg.matmul(x, params["w"]) + params["b"]
        return params, mg.reduce_mean(mg.square(pred - mg.constant(data["y"], name="y")))
    hidden = mg.nn.relu(mg.nn.bias_add(mg.matmul(x, params["w1"]), params["b1"]))
    logits = mg.nn.bias_add(mg.matmul(hidden, params["w2"]), params["b2"])
    losses = mg.nn.sparse_softmax_cross_entropy_with_logits(
        labels=mg.constant(data["labels"]), logits=logits
    )
    return params, mg.reduce_mean(losses)


@pytest.mark.parametrize("name", sorted(CASES))
def test_training_matches_tensorflow(name, any_device):
    case = CASES[name]
    want = unpack(DATA[f"{name}/values"], case["layout"])
    g = mg.Graph()
    with g.as_default():
        _, loss = _model(case)
        step = mg.train.get_or_create_global_step()
        train = getattr(mg.train, case["optimizer"])(**case["kwargs"]).minimize(
            loss, global_step=step
        )
        init = mg.global_variables_initializer()
    variables = {v.op.name: v for v in mg.global_variables(g)}
    assert list(variables) == case["variables"]  # slots named and ordered as TensorFlow's
    assert [train.name, train.type] == case["train_op"]
    # float64 differs from TensorFlow only by the gradients' summation order (MatMul, Sum)
    tol = {"float64": (1e-12, 1e-14), "float32": (1e-4, 1e-6)}[case["dtype"]]
    with mg.Session(g) as sess:
        sess.run(init)
        for s in range(META["steps"] + 1):
            got_loss = sess.run(loss)
            np.testing.assert_allclose(got_loss, DATA[f"{name}/loss"][s], rtol=tol[0])
            assert sess.run(step) == case["global_step"][s]
            for key, value in want.items():
                if key.startswith(f"{s}/"):
                    got = sess.run(variables[key.split("/", 1)[1]])
                    # (the fixture packs Adam's float32 beta powers with float64 values)
                    assert got.dtype == value.dtype or key.endswith("_power")
                    np.testing.assert_allclose(got, value, rtol=tol[0], atol=tol[1], err_msg=key)
            if s < META["steps"]:
                assert sess.run(train) is None


def test_every_optimizer_is_in_the_fixtures():
    assert {c["optimizer"] for c in CASES.values()} == {
        "GradientDescentOptimizer",
        "MomentumOptimizer",
        "AdamOptimizer",
        "RMSPropOptimizer",
        "AdagradOptimizer",
    }


# -- slots, names and the global step -------------------------------------------------------


def _quadratic(dtype=np.float32):
    w = mg.Variable(np.array([1.0, -2.0], dtype), name="w")
    b = mg.Variable(np.array(0.5, dtype), name="b")
    return w, b, mg.reduce_sum(mg.square(w - 3.0)) + b * b


def test_slots_are_non_trainable_global_variables_named_after_their_variable():
    g = mg.Graph()
    with g.as_default():
        w, b, loss = _quadratic()
        opt = mg.train.AdamOptimizer(0.1)
        train = opt.minimize(loss)
        made = [v.op.name for v in opt.variables()]  # those of the default graph
    assert opt.variables() == []  # outside it
    assert train.name == "Adam" and train.type == "NoOp"
    assert opt.get_slot_names() == ["m", "v"]
    assert opt.get_slot(w, "m").op.name == "w/Adam" and opt.get_slot(w, "v").op.name == "w/Adam_1"
    assert opt.get_slot(w, "momentum") is None
    assert made == [
        "b/Adam",
        "b/Adam_1",
        "beta1_power",
        "beta2_power",
        "w/Adam",
        "w/Adam_1",
    ]
    assert mg.trainable_variables(g) == [w, b]
    assert not any(opt.get_slot(v, s).trainable for v in (w, b) for s in ("m", "v"))
    assert opt.get_slot(w, "m").shape.as_list() == [2]
    power = g.get_operation_by_name("beta1_power")
    assert power.get_attr("dtype") == mg.float32  # as TensorFlow's
    kinds = {n.name: n.type_string for n in g.nodes()}
    assert kinds["Adam/update_w/ResourceApplyAdam"] == "ResourceApplyAdam"
    assert kinds["Adam/learning_rate"] == "Const"


def test_rmsprop_starts_its_mean_square_at_one_and_adagrad_at_its_initial_value():
    g = mg.Graph()
    with g.as_default():
        w, b, loss = _quadratic(np.float64)
        rms = mg.train.RMSPropOptimizer(0.1, centered=True)
        rms.minimize(loss, var_list=[w])
        ada = mg.train.AdagradOptimizer(0.1, initial_accumulator_value=0.25)
        ada.minimize(loss, var_list=[b])
        init = mg.global_variables_initializer()
    assert [rms.get_slot(w, s).op.name for s in ("rms", "mg", "momentum")] == [
        "w/RMSProp",
        "w/RMSProp_1",
        "w/RMSProp_2",
    ]
    with mg.Session(g) as sess:
        sess.run(init)
        np.testing.assert_array_equal(sess.run(rms.get_slot(w, "rms")), [1.0, 1.0])
        np.testing.assert_array_equal(sess.run(rms.get_slot(w, "mg")), [0.0, 0.0])
        assert sess.run(ada.get_slot(b, "accumulator")) == 0.25
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
        mg.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)


def test_global_step_is_incremented_after_the_update(any_device):
    g = mg.Graph()
    with g.as_default():
        w, _, loss = _quadratic()
        step = mg.train.create_global_step()
        assert mg.train.get_or_create_global_step() is step
        assert mg.train.get_global_step() is step and step.dtype == mg.int64
        with pytest.raises(ValueError, match='"global_step" already exists'):
            mg.train.create_global_step()
        train = mg.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=step)
        init = mg.global_variables_initializer()
    assert train.name == "GradientDescent" and train.type == "AssignAddVariableOp"
    assert g.get_operation_by_name("GradientDescent/update").type == "NoOp"
    assert g.get_collection("train_op") == [train]
    with mg.Session(g) as sess:
        sess.run(init)
        for i in range(1, 4):
            sess.run(train)
            assert sess.run(step) == i
        np.testing.assert_allclose(sess.run(w), [3.0, 3.0])  # lr 0.5 on (w - 3)^2: one step


def test_learning_rates_may_be_tensors_or_callables(any_device):
    g = mg.Graph()
    with g.as_default():
        w, _, loss = _quadratic(np.float64)
        lr = mg.placeholder(mg.float64, [], name="lr")
        train = mg.train.MomentumOptimizer(lr, momentum=lambda: 0.0).minimize(loss, var_list=[w])
        init = mg.global_variables_initializer()
    with mg.Session(g) as sess:
        sess.run(init)
        sess.run(train, {lr: 0.25})  # w -= 0.25 * 2 (w - 3)
        np.testing.assert_array_equal(sess.run(w), [2.0, 0.5])
        sess.run(train, {lr: 0.0})
        np.testing.assert_array_equal(sess.run(w), [2.0, 0.5])


def test_a_python_learning_rate_is_float32_cast_to_a_float64_variable():
    g = mg.Graph()
    with g.as_default():
        v = mg.Variable(np.float64([0.0]), name="v")
        train = mg.train.GradientDescentOptimizer(0.1).minimize(mg.reduce_sum(-v))
        init = mg.global_variables_initializer()
    with mg.Session(g) as sess:
        sess.run(init)
        sess.run(train)
        assert sess.run(v)[0] == np.float64(np.float32(0.1))  # as TensorFlow


def test_apply_gradients_skips_none_and_refuses_all_none():
    g = mg.Graph()
    with g.as_default():
        w, b, loss = _quadratic()
        unused = mg.Variable(np.float32(1.0), name="unused")
        opt = mg.train.GradientDescentOptimizer(0.1)
        pairs = opt.compute_gradients(loss)
        assert [v for _, v in pairs] == [w, b, unused] and pairs[2][0] is None
        train = opt.apply_gradients(pairs, name="step")
        assert train.name == "step"
        assert opt.get_slot_names() == []
        with pytest.raises(ValueError, match="No gradients provided for any variable"):
            opt.apply_gradients([(None, w)])
        with pytest.raises(ValueError, match="No gradients provided for any variable, check"):
            opt.minimize(mg.reduce_sum(mg.constant([1.0])), var_list=[w])
        with pytest.raises(ValueError, match="No variables provided"):
            opt.apply_gradients([])
        with pytest.raises(TypeError, match="unsupported type"):
            opt.apply_gradients([(mg.constant([1.0, 1.0]), mg.constant([1.0, 2.0]))])
        with pytest.raises(ValueError, match="Invalid type int32"):
            opt.minimize(mg.constant(1))
        init = mg.global_variables_initializer()
    with mg.Session(g) as sess:
        sess.run(init)
        sess.run(train)
        assert sess.run(unused) == 1.0


def test_no_variables_to_optimize():
    g = mg.Graph()
    with g.as_default():
        with pytest.raises(ValueError, match="No variables to optimize"):
            mg.train.AdamOptimizer().minimize(mg.constant(1.0))


def test_gate_graph_and_grad_loss_and_callable_loss():
    g = mg.Graph()
    with g.as_default():
        w, _, loss = _quadratic()
        opt = mg.train.GradientDescentOptimizer(0.25)
        pairs = opt.compute_gradients(
            lambda: loss, var_list=[w], gate_gradients=opt.GATE_GRAPH, grad_loss=2.0
        )
        with pytest.raises(ValueError, match="gate_gradients must be one of"):
            opt.compute_gradients(loss, gate_gradients=7)
    with mg.Session(g) as sess:
        sess.run(w.initializer)
        np.testing.assert_array_equal(sess.run(pairs[0][0]), [-8.0, -20.0])  # 2 * 2 (w - 3)


def test_an_uninitialised_slot_names_it():
    g = mg.Graph()
    with g.as_default():
        w, b, loss = _quadratic()
        train = mg.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    with mg.Session(g) as sess:
        sess.run([w.initializer, b.initializer])  # the slots were made after: not initialised
        with pytest.raises(errors.FailedPreconditionError, match="w/Momentum"):
            sess.run(train)


def test_slots_live_on_their_variables_device():
    g = mg.Graph()
    with g.as_default():
        with mg.device("/cpu:0"):
            w = mg.Variable(np.float32([1.0]), name="w")
        opt = mg.train.AdamOptimizer()
        opt.minimize(mg.reduce_sum(w * w))
    assert "CPU" in opt.get_slot(w, "m").op.node.requested_device.upper()
    assert "CPU" in g.get_operation_by_name("beta1_power").node.requested_device.upper()
    assert (
        "CPU"
        in g.get_operation_by_name("Adam/update_w/ResourceApplyAdam").node.requested_device.upper()
    )


def test_two_optimizers_on_one_variable_get_their_own_slots():
    g = mg.Graph()
    with g.as_default():
        w, _, loss = _quadratic()
        a, b = mg.train.AdamOptimizer(), mg.train.AdamOptimizer()
        a.minimize(loss, var_list=[w])
        b.minimize(loss, var_list=[w])
        made = [v.op.name for v in b.variables()]
    assert a.get_slot(w, "m").op.name == "w/Adam" and b.get_slot(w, "m").op.name == "w/Adam_2"
    assert made == ["beta1_power_1", "beta2_power_1", "w/Adam_2", "w/Adam_3"]
