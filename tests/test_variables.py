"""mg.Variable and the resource-variable ops: values that live in a Session, assigns,
reads that keep what they read, errors, gradients through reads, and threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors


def test_a_variable_is_tensorflows_nodes():
    g = mg.Graph()
    with g.as_default():
        v = mg.Variable([1.0, 2.0], name="v")
        v2 = mg.Variable(3, name="v")
    assert v.name == "v:0" and v2.name == "v_1:0"
    assert v.dtype == mg.float32 and v.shape.as_list() == [2] and v2.dtype == mg.int32
    types = {n.name: n.type_string for n in g.nodes()}
    assert types["v"] == "VarHandleOp" and types["v/Assign"] == "AssignVariableOp"
    assert types["v/Initializer/initial_value"] == "Const"
    assert v.op.name == "v" and v.op.get_attr("shared_name") == "v"
    assert mg.global_variables(g) == [v, v2] and mg.trainable_variables(g) == [v, v2]


def test_initialise_read_and_update(any_device):
    g = mg.Graph()
    with g.as_default():
        v = mg.Variable(np.float64([1, 2, 3]), name="v")
        added = v.assign_add([10.0, 10.0, 10.0])
        subtracted = v.assign_sub([1.0, 1.0, 1.0])
        replaced = v.assign([7.0, 8.0, 9.0])
        init = mg.global_variables_initializer()
    with mg.Session(g) as sess:
        assert sess.run(init) is None
        np.testing.assert_array_equal(sess.run(v), [1, 2, 3])
        np.testing.assert_array_equal(sess.run(added), [11, 12, 13])
        np.testing.assert_array_equal(sess.run(subtracted), [10, 11, 12])
        np.testing.assert_array_equal(sess.run(v * 2.0), [20, 22, 24])
        np.testing.assert_array_equal(sess.run(replaced), [7, 8, 9])
        assert sess.run(v).dtype == np.float64


def test_reading_before_initialising_fails_and_names_the_read():
    g = mg.Graph()
    with g.as_default():
        v = mg.Variable(1.0, name="weights")
        read = v.value()
        ok = v.is_initialized()
    with mg.Session(g) as sess:
        assert not sess.run(ok)
        with pytest.raises(errors.FailedPreconditionError, match="variable weights") as e:
            sess.run(read)
        assert e.value.node_name == read.op.name
        sess.run(v.initializer)
        assert sess.run(ok) and sess.run(read) == 1.0


def test_each_session_has_its_own_values():
    g = mg.Graph()
    with g.as_default():
        v = mg.Variable(0, name="counter")
        bump = v.assign_add(1)
        init = mg.global_variables_initializer()
    a, b = mg.Session(g), mg.Session(g)
    a.run(init)
    b.run(init)
    for _ in range(3):
        a.run(bump)
    assert (a.run(v), b.run(v)) == (3, 0)
    a.close()
    c = mg.Session(g)
    with pytest.raises(errors.FailedPreconditionError):
        c.run(v)


def test_a_read_keeps_what_it_read_when_an_assign_follows_in_the_same_run():
    g = mg.Graph()
    with g.as_default():
        v = mg.Variable(np.arange(4.0), name="v")
        before = v.value()
        doubled = before * 2.0  # a reader that could have written into the value's buffer
        with mg.control_dependencies([doubled]):
            after = v.assign(-np.ones(4))
        init = mg.global_variables_initializer()
    with mg.Session(g) as sess:
        sess.run(init)
        b, d, a = sess.run([before, doubled, after])
        np.testing.assert_array_equal(b, np.arange(4.0))
        np.testing.assert_array_equal(d, np.arange(4.0) * 2)
        np.testing.assert_array_equal(a, -np.ones(4))


def test_kernels_never_write_into_a_variables_value():
    g = mg.Graph()
    with g.as_default():
        v = mg.Variable(np.ones(1000), name="v")
        y = mg.exp(mg.negative(v))  # unary chains run in place on buffers they own
        init = mg.global_variables_initializer()
    with mg.Session(g) as sess:
        sess.run(init)
        np.testing.assert_allclose(sess.run(y), np.exp(-np.ones(1000)))
        np.testing.assert_array_equal(sess.run(v), np.ones(1000))


def test_fetched_and_fed_arrays_are_not_the_variables():
    g = mg.Graph()
    with g.as_default():
        v = mg.Variable(np.zeros(3), name="v")
        x = mg.placeholder(mg.float64, [3], name="x")
        set_to_x = v.assign(x, read_value=False)
    fed = np.array([1.0, 2.0, 3.0])
    with mg.Session(g) as sess:
        sess.run(set_to_x, {x: fed})
        fed[:] = 99.0  # the caller's array is the caller's
        got = sess.run(v)
        got[:] = -1.0  # and so is a fetched one
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0, 3.0])


def test_assign_checks_shape_and_dtype():
    g = mg.Graph()
    with g.as_default():
        v = mg.Variable(np.zeros([2, 3], np.float32), name="v")
        with pytest.raises(ValueError, match="Shape mismatch"):
            v.assign(np.zeros([3, 2], np.float32))
        with pytest.raises(errors.InvalidArgumentError, match="requested dtype float32"):
            v.assign(mg.constant(np.zeros([2, 3], np.int32)))
        x = mg.placeholder(mg.float32, None, name="x")
        late = v.assign(x)
        anything = mg.Variable(np.zeros(2), shape=mg.TensorShape(None), name="anything")
        reshaped = anything.assign(mg.placeholder(mg.float64, None, name="y"))
        with pytest.raises(ValueError, match="not compatible"):
            mg.Variable(np.zeros(2), shape=[3])
    with mg.Session(g) as sess:
        sess.run(v.initializer)
        with pytest.raises(errors.InvalidArgumentError, match="wrong shape") as e:
            sess.run(late, {x: np.zeros([4], np.float32)})
        assert e.value.node_name == late.op.control_inputs[0].name
        sess.run(anything.initializer)
        assert sess.run(reshaped, {"y:0": np.ones([2, 2])}).shape == (2, 2)


def test_update_shapes_must_match_at_run_time():
    g = mg.Graph()
    with g.as_default():
        v = mg.Variable(np.zeros(2), shape=mg.TensorShape([None]), name="v")
        d = mg.placeholder(mg.float64, [None], name="d")
        add = v.assign_add(d)
    with mg.Session(g) as sess:
        sess.run(v.initializer)
        with pytest.raises(errors.InvalidArgumentError, match="shapes must be equal"):
            sess.run(add, {d: np.ones(3)})


def test_variables_read_like_tensors():
    g = mg.Graph()
    with g.as_default():
        v = mg.Variable(np.float32([[1, 2], [3, 4]]), name="v")
        outs = [v + 1.0, 1.0 - v, -v, v[1], np.float32(2) * v, mg.matmul(v, v)]
        init = mg.global_variables_initializer()
    with mg.Session(g) as sess:
        sess.run(init)
        got = sess.run(outs)
    m = np.float32([[1, 2], [3, 4]])
    for have, want in zip(got, [m + 1, 1 - m, -m, m[1], 2 * m, m @ m]):
        np.testing.assert_array_equal(have, want)


def test_trainable_false_and_initializer_subsets():
    g = mg.Graph()
    with g.as_default():
        w = mg.Variable(1.0, name="w")
        step = mg.Variable(0, name="step", trainable=False)
        only_w = mg.variables_initializer([w], name="init_w")
    assert mg.trainable_variables(g) == [w] and mg.global_variables(g) == [w, step]
    with mg.Session(g) as sess:
        sess.run(only_w)
        assert sess.run(w) == 1.0
        with pytest.raises(errors.FailedPreconditionError):
            sess.run(step)


def test_initial_value_may_be_a_callable_or_another_variable():
    g = mg.Graph()
    with g.as_default():
        a = mg.Variable(lambda: mg.fill([2], 3.0), name="a")
        b = mg.Variable(a.initial_value * 2.0, name="b")
        init = mg.global_variables_initializer()
    with mg.Session(g) as sess:
        sess.run(init)
        np.testing.assert_array_equal(sess.run([a, b]), [[3, 3], [6, 6]])


def test_gradients_reach_variables_through_every_read():
    g = mg.Graph()
    with g.as_default():
        w = mg.Variable(np.float64([1.0, -2.0]), name="w")
        x = mg.placeholder(mg.float64, [2], name="x")
        loss = w * x + w * w  # two reads of w
        (dw,) = mg.gradients(loss, w)
        (dx,) = mg.gradients(loss, x)
        init = mg.global_variables_initializer()
    xv = np.float64([3.0, 5.0])
    with mg.Session(g) as sess:
        sess.run(init)
        np.testing.assert_array_equal(sess.run(dw, {x: xv}), xv + 2 * np.float64([1, -2]))
        np.testing.assert_array_equal(sess.run(dx, {x: xv}), [1.0, -2.0])


def test_gradient_descent_with_assign_sub_fits_a_line():
    """A hand-written training loop: w -= lr * dloss/dw, against the same loop in NumPy."""
    rng = np.random.default_rng(0)
    xs = rng.standard_normal(32)
    ys = 2.0 * xs + 0.25
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [None], name="x")
        y = mg.placeholder(mg.float64, [None], name="y")
        w = mg.Variable(0.0, dtype=mg.float64, name="w")
        b = mg.Variable(0.0, dtype=mg.float64, name="b")
        err = w * x + b - y
        dw, db = mg.gradients(err * err, [w, b])  # of the sum of squares
        train = [w.assign_sub(dw * 0.01), b.assign_sub(db * 0.01)]
        init = mg.global_variables_initializer()
    w_ref, b_ref = 0.0, 0.0
    with mg.Session(g) as sess:
        sess.run(init)
        for _ in range(20):
            sess.run(train, {x: xs, y: ys})
            e = w_ref * xs + b_ref - ys
            w_ref, b_ref = w_ref - 0.01 * (2 * e @ xs), b_ref - 0.01 * (2 * e.sum())
        np.testing.assert_allclose(sess.run(w), w_ref, rtol=1e-12)
        np.testing.assert_allclose(sess.run(b), b_ref, rtol=1e-12)
        assert abs(sess.run(w) - 2.0) < 0.1


def test_concurrent_updates_are_not_lost():
    g = mg.Graph()
    with g.as_default():
        v = mg.Variable(0, name="count")
        bump = v.assign_add(1, read_value=False)
    sess = mg.Session(g)
    sess.run(v.initializer)

    def work():
        for _ in range(200):
            sess.run(bump)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sess.run(v) == 800


def test_loop_bodies_read_the_callers_variables():
    g = mg.Graph()
    with g.as_default():
        v = mg.Variable(2.0, name="v")
        _, total = mg.while_loop(
            lambda i, acc: i < 3, lambda i, acc: (i + 1, acc + v.value()), (0, 0.0)
        )
        init = mg.global_variables_initializer()
        set_to_5 = v.assign(5.0)
    with mg.Session(g) as sess:
        sess.run(init)
        assert sess.run(total) == 6.0
        sess.run(set_to_5)
        assert sess.run(total) == 15.0


def test_a_handle_shared_by_name_with_another_dtype_is_refused():
    g = mg.Graph()
    with g.as_default():
        a = mg.ops.VarHandleOp(mg.Scope._root(g), dtype=mg.float32, shape=[], shared_name="s")
        b = mg.ops.VarHandleOp(mg.Scope._root(g), dtype=mg.int32, shape=[], shared_name="s")
    with mg.Session(g) as sess:
        sess.run(a.resource)
        with pytest.raises(errors.InvalidArgumentError, match="created with float32"):
            sess.run(b.resource)


def test_a_variables_graph_round_trips_through_graph_def():
    g = mg.Graph()
    with g.as_default():
        v = mg.Variable(np.float32([1, 2]), name="v")
        out = mg.identity(v * 3.0, name="out")
        mg.global_variables_initializer()
    g2 = mg.Graph()
    with g2.as_default():
        mg.import_graph_def(g.as_graph_def(), name="")
    assert g2.get_operation_by_name("v").get_attr("shape") == mg.TensorShape([2])
    assert g2.get_tensor_by_name("ReadVariableOp:0").shape.as_list() == [2]
    with mg.Session(g2) as sess:
        sess.run("init")
        np.testing.assert_array_equal(sess.run(out.name), [3, 6])
