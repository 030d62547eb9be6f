"""The gradients of the reductions and scans (ops/reduction_grad.py): Sum, Mean, Prod,
Max, Min, Cumsum and Cumprod against central differences (float64), with axes that are
constants (a Reshape and a Tile by constants), fed at run time, or on inputs of unknown
shape (the kept-dims shape computed in the graph); ArgMax, ArgMin, Any and All stop
gradients. TensorFlow's own values are replayed by test_tf_grad_fixtures.py
(grads_reductions.py)."""

from __future__ import annotations

import numpy as np
import pytest

import minigraph as mg

ERROR = 1e-6
DELTA = 1e-5
rng = np.random.default_rng(2727)


def gradient_error(fn, x_value, unknown=False, axis=None):
    """compute_gradient_error of ``fn(x)`` (or ``fn(x, axis)`` with ``axis`` fed to an
    int32 placeholder of unknown shape), x a float64 placeholder fed ``x_value``."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, None if unknown else x_value.shape)
        extra = {}
        if axis is None:
            y = fn(x)
        else:
            a = mg.placeholder(mg.int32, None)
            extra = {a: np.asarray(axis, np.int32)}
            y = fn(x, a)
    with mg.Session(g) as sess:
        y_shape = sess.run(y, {x: x_value, **extra}).shape
    with g.as_default():
        return mg.test.compute_gradient_error(
            x,
            x_value.shape,
            y,
            y_shape,
            x_init_value=x_value,
            delta=DELTA,
            extra_feed_dict=extra,
        )


REDUCTIONS = {
    "Sum": mg.reduce_sum,
    "Mean": mg.reduce_mean,
    "Prod": mg.reduce_prod,
    "Max": mg.reduce_max,
    "Min": mg.reduce_min,
}
AXES = [None, 1, -1, [0, 2], [2, 0], [0, 1, 2], []]


@pytest.mark.parametrize("keepdims", [False, True], ids=["drop", "keep"])
@pytest.mark.parametrize("op", sorted(REDUCTIONS))
def test_reduction_gradients(op, keepdims):
    fn = REDUCTIONS[op]
    x = rng.permutation(24).reshape(2, 3, 4) / 10.0 + 0.5  # distinct: Max/Min have no ties
    for axis in AXES:

        def reduce(t, axis=axis):
            return fn(t, axis, keepdims=keepdims)

        def reduce_fed(t, a):
            return fn(t, a, keepdims=keepdims)

        for unknown in (False, True):
            assert gradient_error(reduce, x, unknown) < ERROR, (axis, unknown)
        if axis is not None:
            assert gradient_error(reduce_fed, x, True, axis=axis) < ERROR, axis
    assert gradient_error(lambda t: fn(t, keepdims=keepdims), np.array(1.5)) < ERROR  # scalar


def test_prod_gradient_with_zeros():
    """The product of the others: no division, so zeros in the input are fine."""
    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 1.5], [1.0, -2.0, 0.5]])
    for axis in (0, 1, [0, 1]):
        assert gradient_error(lambda t, axis=axis: mg.reduce_prod(t, axis), x) < ERROR
    assert gradient_error(mg.reduce_prod, x, True, axis=1) < ERROR
    g = mg.Graph()
    with g.as_default():
        t = mg.constant(x)
        (dx,) = mg.gradients(mg.reduce_prod(t, 1), t)
    np.testing.assert_array_equal(
        mg.Session(g).run(dx), [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [-1.0, 0.5, -2.0]]
    )


@pytest.mark.parametrize("fn", [mg.reduce_max, mg.reduce_min], ids=["Max", "Min"])
def test_extreme_ties_share_the_gradient(fn):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, None)
        (dx,) = mg.gradients(fn(x, 1), x, grad_ys=np.float32([6.0, 3.0]))
    got = mg.Session(g).run(dx, {x: np.float32([[1, 2, 2, 1], [5, 5, 5, 5]])})
    want = [[0, 3, 3, 0], [0.75] * 4] if fn is mg.reduce_max else [[3, 0, 0, 3], [0.75] * 4]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("fn", [mg.cumsum, mg.cumprod], ids=["Cumsum", "Cumprod"])
def test_scan_gradients(fn, exclusive, reverse):
    x = rng.uniform(0.5, 1.5, (2, 3, 4))
    for axis in (0, 1, -1):

        def scan(t, axis=axis):
            return fn(t, axis, exclusive=exclusive, reverse=reverse)

        assert gradient_error(scan, x) < ERROR
        assert gradient_error(scan, x, unknown=True) < ERROR

    def scan_fed(t, a):
        return fn(t, a, exclusive=exclusive, reverse=reverse)

    assert gradient_error(scan_fed, x, True, axis=-2) < ERROR


def test_static_shapes_give_constant_reductions():
    """Known shapes and axes: TensorFlow's fast path (Reshape + Tile by constants), no
    Shape or DynamicStitch in the gradient graph."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [2, 3, 4])
        grads = mg.gradients(
            [mg.reduce_sum(x, [0, 2]), mg.reduce_mean(x, 1), mg.reduce_prod(x, -1)], x
        )
    types = {n.type_string for n in g.nodes() if n.name.startswith("gradients/")}
    assert "Tile" in types and not types & {"Shape", "DynamicStitch"}
    assert grads[0].shape.as_list() == [2, 3, 4]


def test_arg_and_bool_reductions_stop_gradients():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [2, 3])
        for y in [
            mg.argmax(x, 1),
            mg.argmin(x, 0),
            mg.reduce_any(x > 0.0),
            mg.reduce_all(x > 0.0, 1),
        ]:
            assert mg.gradients(y, x) == [None]
        (dx,) = mg.gradients(mg.cast(mg.argmax(x, 1), mg.float32) + mg.reduce_sum(x, 1), x)
    np.testing.assert_array_equal(mg.Session(g).run(dx, {x: np.zeros((2, 3), np.float32)}), 1.0)
