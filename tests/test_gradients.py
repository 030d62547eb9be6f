"""mg.gradients and AddSymbolicGradients: the backprop walk itself (aggregation, None for
unconnected or integer tensors, stop_gradients, errors, names), AddN and
BroadcastGradientArgs, and mg.test.compute_gradient. The gradient functions of each op
family are checked in test_<family>_grad.py."""

from __future__ import annotations

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors
from minigraph.registry import not_differentiable


def run(fetches, feeds=None, graph=None):
    with mg.Session(graph) as sess:
        return sess.run(fetches, feeds)


def test_gradient_of_a_polynomial():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [3], name="x")
        y = x * x * x - x * 2.0  # d/dx = 3x^2 - 2
        (dx,) = mg.gradients(y, x)
    xv = np.array([0.5, 1.0, -2.0])
    np.testing.assert_allclose(run(dx, {x: xv}, g), 3 * xv**2 - 2)


def test_paths_are_summed_and_broadcasts_reduced():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [3], name="x")
        w = mg.placeholder(mg.float32, [2, 1], name="w")
        y = x * w - x / w + x
        dx, dw = mg.gradients(y, [x, w])
    assert dx.shape.as_list() == [3] and dw.shape.as_list() == [2, 1]
    xv, wv = np.float32([1, 2, 3]), np.float32([[1], [2]])
    gx, gw = run([dx, dw], {x: xv, w: wv}, g)
    np.testing.assert_allclose(gx, (wv - 1 / wv + 1).sum() * np.ones(3))
    np.testing.assert_allclose(gw, (xv + xv / wv**2).sum(axis=1, keepdims=True))


def test_unknown_shapes_reduce_with_broadcast_gradient_args():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, None, name="x")
        b = mg.placeholder(mg.float64, [None], name="b")
        dx, db = mg.gradients(x * b, [x, b])
    xv, bv = np.ones((4, 3)), np.array([1.0, 2.0, 3.0])
    gx, gb = run([dx, db], {x: xv, b: bv}, g)
    np.testing.assert_array_equal(gx, np.broadcast_to(bv, (4, 3)))
    np.testing.assert_array_equal(gb, [4.0, 4.0, 4.0])


def test_grad_ys_weights_each_y():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [2], name="x")
        dx1, dx2 = mg.gradients([x * 3.0, x * 5.0], [x, x], grad_ys=[np.float32([1, 2]), None])
    np.testing.assert_array_equal(run(dx1, {x: np.float32([0, 0])}, g), [8, 11])
    np.testing.assert_array_equal(run(dx2, {x: np.float32([0, 0])}, g), [8, 11])


def test_unconnected_and_integer_xs_get_none():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [2], name="x")
        other = mg.placeholder(mg.float32, [2], name="other")
        k = mg.placeholder(mg.int32, [2], name="k")
        y = x * 2.0 + mg.cast(k, mg.float32)
        assert mg.gradients(y, [other, k]) == [None, None]


def test_stop_gradients_hold_tensors_constant():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [], name="x")
        a = x * 2.0
        y = a * x  # 2x^2
        (full,) = mg.gradients(y, x)
        (held,) = mg.gradients(y, x, stop_gradients=[a])  # a constant: d(a*x)/dx = a
    assert run([full, held], {x: 3.0}, g) == [12.0, 6.0]


def test_ops_without_gradient_are_named(cpu_only_op):
    opaque = cpu_only_op("_TestNoGradient", lambda ctx, x: x.copy())
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [3], name="x")
        y = opaque(x * 2.0) * 3.0
        with pytest.raises(errors.NoGradientError) as e:
            mg.gradients(y, x)
    assert isinstance(e.value, LookupError)
    assert "No gradient defined for operation" in str(e.value)
    assert "(op type: _TestNoGradient)" in str(e.value)


def test_not_differentiable_ops_stop_the_walk(cpu_only_op):
    stopped = cpu_only_op("_TestNotDifferentiable", lambda ctx, x: x.copy())
    not_differentiable("_TestNotDifferentiable")
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [3], name="x")
        y = stopped(x) * 3.0 + x
        (dx,) = mg.gradients(y, x)
        assert mg.gradients(stopped(x), x) == [None]
    np.testing.assert_array_equal(run(dx, {x: np.float32([1, 2, 3])}, g), [1, 1, 1])
    with pytest.raises(ValueError, match="already registered"):
        not_differentiable("_TestNotDifferentiable")


def test_gradient_ops_are_named_under_gradients():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [2], name="x")
        with mg.name_scope("layer"):
            y = mg.multiply(x, x, name="square")
        (dx,) = mg.gradients(y, x)
        (dx2,) = mg.gradients(y, x)
    assert dx.name.startswith("gradients/")
    assert dx2.name.startswith("gradients_1/")
    names = [n.name for n in g.nodes()]
    assert any(n.startswith("gradients/layer/square_grad/") for n in names)


def test_gradients_refuse_what_is_not_a_tensor():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [2], name="x")
        with pytest.raises(TypeError, match="xs must be tensors"):
            mg.gradients(x * 2.0, "x")
        with pytest.raises(ValueError, match="grad_ys"):
            mg.gradients([x, x], x, grad_ys=[None])


def test_add_symbolic_gradients_as_the_cpp_api():
    scope = mg.Scope.new_root_scope()
    x = mg.ops.Placeholder(scope.with_op_name("x"), dtype=mg.float64, shape=[2]).output
    y = mg.ops.Mul(scope, x, x).z
    unrelated = mg.ops.Placeholder(scope.with_op_name("u"), dtype=mg.float64, shape=[2]).output
    (dx,) = mg.ops.AddSymbolicGradients(scope, [y], [x])
    np.testing.assert_array_equal(run(dx, {x: np.array([1.0, 3.0])}, scope.graph), [2.0, 6.0])
    with pytest.raises(errors.InvalidArgumentError, match="unreachable from the output"):
        mg.ops.AddSymbolicGradients(scope, [y], [unrelated])
    with pytest.raises(errors.InvalidArgumentError, match="gradient input for each output"):
        mg.ops.AddSymbolicGradients(scope, [y], [x], [])


def test_add_n_sums_in_order_and_checks_shapes():
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float16, [None], name="a")
        s = mg.add_n([a, a, a])
        with pytest.raises(errors.InvalidArgumentError, match="Shapes of all inputs must match"):
            mg.add_n([np.zeros(2), np.zeros(3)])
    av = np.float16([2048, 1, 0.5])
    np.testing.assert_array_equal(run(s, {a: av}, g), (av + av) + av)
    with g.as_default():
        b = mg.placeholder(mg.float32, None, name="b")
        c = mg.placeholder(mg.float32, None, name="c")
        bad = mg.add_n([b, c])
    with pytest.raises(errors.InvalidArgumentError, match="same size and shape"):
        run(bad, {b: np.zeros(2, np.float32), c: np.zeros(3, np.float32)}, g)


@pytest.mark.parametrize(
    "s0, s1, r0, r1",
    [
        ([2, 3, 1], [3, 4], [2], [0]),
        ([5, 1, 3], [3], [1], [0, 1]),
        ([1, 1], [1], [0, 1], [0, 1]),
        ([4], [4], [], []),
        ([], [2, 2], [0, 1], []),
    ],
)
def test_broadcast_gradient_args(s0, s1, r0, r1):
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.int32, [None], name="a")
        b = mg.placeholder(mg.int32, [None], name="b")
        out = mg.broadcast_gradient_args(a, b)
        known = mg.broadcast_gradient_args(np.int32(s0).reshape(-1), np.int32(s1).reshape(-1))
    got = run(out, {a: np.int32(s0).reshape(-1), b: np.int32(s1).reshape(-1)}, g)
    assert [list(v) for v in got] == [r0, r1]
    assert [list(v) for v in run(known, graph=g)] == [r0, r1]


def test_broadcast_gradient_args_refuses_incompatible_shapes():
    g = mg.Graph()
    with g.as_default():
        with pytest.raises(errors.InvalidArgumentError, match=r"Incompatible shapes: \[2,3\]"):
            mg.broadcast_gradient_args([2, 3], [4])


def test_compute_gradient_matches_finite_differences():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [2, 3], name="x")
        w = mg.placeholder(mg.float64, [3], name="w")
        y = x * w / (w + 2.0)
    theoretical, numerical = mg.test.compute_gradient(
        x, [2, 3], y, [2, 3], extra_feed_dict={w: np.array([1.0, 2.0, 3.0])}
    )
    assert theoretical.shape == (6, 6)
    np.testing.assert_allclose(theoretical, np.diag(np.tile([1 / 3, 2 / 4, 3 / 5], 2)))
    np.testing.assert_allclose(numerical, theoretical, atol=1e-6)
    err = mg.test.compute_gradient_error(
        [x, w], [[2, 3], [3]], y, [2, 3], x_init_value=[np.ones((2, 3)), np.ones(3)]
    )
    assert err < 1e-6  # central differences with delta 1e-3 in float64


@pytest.mark.parametrize(
    "shape, axes, fed",
    [
        ([None, 3], [0], [4, 3]),
        ([None, 2, None], [0, 1, 2], [2, 2, 3]),
        ([4, None], [-1, 0], [4, 5]),
    ],
)
def test_mean_over_partly_known_dims_divides_by_the_run_time_count(shape, axes, fed):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, shape, name="x")
        (dx,) = mg.gradients(mg.reduce_mean(x, axes), x)
    value = np.arange(float(np.prod(fed))).reshape(fed)
    count = np.prod([fed[a] for a in axes])
    np.testing.assert_array_equal(run(dx, {x: value}, g), np.full(fed, 1 / count))


def test_a_training_step_plans_no_more_steps_than_tensorflow_after_grappler():
    """The MLP of benchmarks/training.py (784-256-10, ReLU, mean sparse softmax cross-entropy,
    Adam): TensorFlow 2.21's partition graph after Grappler has 62 nodes besides feeds and
    fetches (benchmarks/training.py prints it); minigraph's plan after its optimizer has no
    more steps."""
    rng = np.random.default_rng(0)
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, 784], name="x")
        y = mg.placeholder(mg.int64, [None], name="y")
        h = x
        for i, (n_in, n_out) in enumerate([(784, 256), (256, 10)]):
            w = mg.Variable(rng.standard_normal((n_in, n_out)).astype(np.float32), name=f"w{i}")
            b = mg.Variable(np.zeros(n_out, np.float32), name=f"b{i}")
            h = mg.nn.bias_add(mg.matmul(h, w), b)
            h = mg.nn.relu(h) if i == 0 else h
        loss = mg.reduce_mean(mg.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
        train = mg.train.AdamOptimizer(1e-3).minimize(loss)
        init = mg.global_variables_initializer()
    feed = {x: rng.random((8, 784), np.float32), y: rng.integers(0, 10, 8)}
    with mg.Session(g) as sess:
        sess.run(init)
        meta = mg.RunMetadata()
        sess.run(train, feed, options=mg.RunOptions(trace=True), run_metadata=meta)
    assert len(meta.step_timings) <= 62, [t[0] for t in meta.step_timings]
