"""Kernels that keep what their last call worked out (a loop body's step sees the same shapes
and constant inputs every iteration): MatMul's plain small products, Split's view index,
a fused chain's small result shapes, TensorListSetItem's shape check. Each stays right when
the next call differs: another shape, another value in a fed array, a bad item."""

import numpy as np
import pytest

import minigraph as mg


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_matmul_gives_each_calls_product_as_shapes_change(transpose_a, transpose_b):
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float64, [None, None])
        b = mg.placeholder(mg.float64, [None, None])
        p = mg.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b)
    sess = mg.Session(g)
    rng = np.random.default_rng(0)
    for m, k, n in [(1, 4, 8), (1, 4, 8), (3, 4, 8), (1, 4, 8), (2, 5, 1), (300, 400, 500)]:
        x, y = rng.standard_normal((m, k)), rng.standard_normal((k, n))
        fx = x.T.copy() if transpose_a else x
        fy = y.T.copy() if transpose_b else y
        got = sess.run(p, {a: fx, b: fy})
        np.testing.assert_allclose(got, x @ y, rtol=1e-12, atol=1e-12)


def test_matmul_refuses_a_bad_pair_after_good_ones():
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float32, [None, None])
        b = mg.placeholder(mg.float32, [None, None])
        p = mg.matmul(a, b)
    sess = mg.Session(g)
    ok = {a: np.ones((1, 3), np.float32), b: np.ones((3, 2), np.float32)}
    sess.run(p, ok)
    sess.run(p, ok)
    with pytest.raises(mg.errors.InvalidArgumentError, match="Matrix size-incompatible"):
        sess.run(p, {a: np.ones((1, 3), np.float32), b: np.ones((4, 2), np.float32)})


def test_split_follows_a_fed_axis_that_changes_in_place():
    g = mg.Graph()
    with g.as_default():
        v = mg.placeholder(mg.float32, [None, None])
        axis = mg.placeholder(mg.int32, [])
        pieces = mg.split(v, 2, axis=axis)
    sess = mg.Session(g)
    value = np.arange(8, dtype=np.float32).reshape(2, 4)
    axis_value = np.array(1, np.int32)
    for _ in range(2):
        got = sess.run(pieces, {v: value, axis: axis_value})
        np.testing.assert_array_equal(got[0], value[:, :2])
        np.testing.assert_array_equal(got[1], value[:, 2:])
    axis_value[...] = 0  # the same (writeable) array, another value
    got = sess.run(pieces, {v: value, axis: axis_value})
    np.testing.assert_array_equal(got[0], value[:1])
    np.testing.assert_array_equal(got[1], value[1:])


def test_split_at_a_constant_axis_follows_the_value_shape():
    g = mg.Graph()
    with g.as_default():
        v = mg.placeholder(mg.float32, [None, None])
        pieces = mg.split(v, 4, axis=1)
    sess = mg.Session(g)
    for rows, cols in [(1, 8), (1, 8), (1, 12), (2, 4), (1, 8)]:
        value = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
        got = sess.run(pieces, {v: value})
        for piece, want in zip(got, np.split(value, 4, axis=1)):
            assert piece.shape == want.shape
            np.testing.assert_array_equal(piece, want)
    with pytest.raises(mg.errors.InvalidArgumentError, match="evenly divide"):
        sess.run(pieces, {v: np.ones((1, 6), np.float32)})


def test_a_fused_chain_gives_each_calls_result_as_shapes_change():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, None])
        y = mg.placeholder(mg.float32, [None, None])
        z = mg.sigmoid(x) * y + x
    sess = mg.Session(g)
    plan_ops = None
    rng = np.random.default_rng(1)
    for xs, ys in [((1, 4), (1, 4)), ((1, 4), (1, 4)), ((2, 4), (2, 4)), ((1, 4), (3, 4))]:
        a = rng.standard_normal(xs).astype(np.float32)
        b = rng.standard_normal(ys).astype(np.float32)
        got = sess.run(z, {x: a, y: b})
        want = (np.float32(1) / (np.float32(1) + np.exp(-a))) * b + a
        np.testing.assert_allclose(got, want, rtol=1e-6)
        plan_ops = plan_ops or sorted({s.op_type for p in sess._plans.values() for s in p.steps})
    assert "_FusedElementwise" in plan_ops  # the chain ran as one step


def test_list_set_item_refuses_an_item_of_another_shape_after_good_ones():
    from minigraph import ops

    g = mg.Graph()
    with g.as_default():
        item = mg.placeholder(mg.float32, [None])
        shape = np.array([2], np.int32)
        lst = ops.tensor_list_reserve(shape, 3, element_dtype=mg.float32)
        out = ops.tensor_list_set_item(lst, 1, item)
        read = ops.tensor_list_get_item(out, 1, shape, element_dtype=mg.float32)
    sess = mg.Session(g)
    for _ in range(2):
        np.testing.assert_array_equal(sess.run(read, {item: [1.0, 2.0]}), [1.0, 2.0])
    with pytest.raises(mg.errors.InvalidArgumentError, match="incompatible shape"):
        sess.run(read, {item: [1.0, 2.0, 3.0]})


def test_a_binary_op_gives_each_calls_result_as_shapes_change():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.int32, None)
        y = mg.placeholder(mg.int32, None)
        total = x + y
        quotient = mg.floordiv(x, y)
    sess = mg.Session(g)
    rng = np.random.default_rng(2)
    for xs, ys in [((), ()), ((), ()), ((1, 4), (4,)), ((1, 4), (4,)), ((3, 4), (4,)), ((), ())]:
        a = rng.integers(-9, 9, xs).astype(np.int32)
        b = rng.integers(1, 9, ys).astype(np.int32)
        got, q = sess.run([total, quotient], {x: a, y: b})
        assert isinstance(got, np.ndarray) and got.dtype == np.int32 and got.shape == (a + b).shape
        np.testing.assert_array_equal(got, a + b)
        np.testing.assert_array_equal(q, a // b)
    with pytest.raises(mg.errors.InvalidArgumentError, match="Integer division by zero"):
        sess.run(quotient, {x: np.int32(3), y: np.int32(0)})
