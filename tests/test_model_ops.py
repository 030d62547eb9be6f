"""PlaceholderWithDefault, Atan2 and ScatterNdNonAliasingAdd against small references of
their own (TensorFlow's answers are in tests/fixtures/ops/model_ops.npz)."""

import math

import numpy as np
import pytest
from op_helpers import build_fails, fails, run

import minigraph as mg

pytestmark = pytest.mark.usefixtures("any_device")


# -- PlaceholderWithDefault -------------------------------------------------------------


def test_placeholder_with_default_gives_the_default_or_the_feed():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder_with_default(np.float32([1, 2]), shape=[None], name="x")
        y = x * 2.0
    assert x.shape.as_list() == [None] and x.op.type == "PlaceholderWithDefault"
    s = mg.Session(g)
    np.testing.assert_array_equal(s.run(y), [2, 4])
    np.testing.assert_array_equal(s.run(y, {"x:0": np.float32([1, 2, 3])}), [2, 4, 6])
    np.testing.assert_array_equal(s.run(y), [2, 4])  # a feed changes only its own run


def test_placeholder_with_default_is_never_folded():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder_with_default(np.int32([2, 3]), shape=[2], name="x")
        n = mg.reduce_prod(x)
    assert n.node.output_specs[0].value is None  # a feed may change it: no build-time value
    s = mg.Session(g)
    assert s.run(n) == 6 and s.run(n, {x: np.int32([4, 5])}) == 20


def test_placeholder_with_default_shape_must_agree():
    build_fails(
        lambda: mg.placeholder_with_default(np.zeros((2, 3), np.float32), shape=[3, 3]),
        "Dimension 0 in both shapes must be equal",
    )
    build_fails(
        lambda: mg.placeholder_with_default(np.zeros((2, 3), np.float32), shape=[6]),
        "must be equal rank",
    )


def test_placeholder_with_default_feed_must_fit_its_shape():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder_with_default(np.float32([1, 2]), shape=[2])
    with pytest.raises((mg.errors.InvalidArgumentError, ValueError)):
        mg.Session(g).run(x, {x: np.float32([1, 2, 3])})


# -- Atan2 -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_atan2_matches_c(dtype):
    vals = [0.0, -0.0, 1.0, -1.0, 3.5, -1e-3, math.inf, -math.inf]
    y = np.array(vals, dtype)[:, None]
    x = np.array(vals, dtype)[None, :]
    got = run(mg.atan2, y, x)
    want = np.array([[math.atan2(float(a), float(b)) for b in x[0]] for a in y[:, 0]])
    assert got.dtype == dtype and got.shape == (8, 8)
    tol = {np.float16: 1e-3, np.float32: 1e-6, np.float64: 1e-15}[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=0)
    assert np.array_equal(np.signbit(got), np.signbit(want))  # signed zeros and pi


def test_atan2_nan_and_errors():
    got = run(mg.atan2, np.float32([np.nan, 1.0]), np.float32([1.0, np.nan]))
    assert np.isnan(got).all()
    fails(mg.atan2, np.zeros(3, np.float32), np.zeros(2, np.float32), match="Incompatible shapes",
          known=False)  # fmt: skip
    with pytest.raises((mg.errors.InvalidArgumentError, TypeError)):
        with mg.Graph().as_default():
            mg.atan2(np.int32([1]), np.int32([1]))


# -- ScatterNdNonAliasingAdd -----------------------------------------------------------


def _reference(x, indices, updates):
    out = x.copy()
    k = indices.shape[-1]
    rows = indices.reshape(-1, k)
    upd = updates.reshape(rows.shape[0], *x.shape[k:])
    for r, u in zip(rows, upd):  # the reference may loop: it is not the kernel
        out[tuple(r)] += u
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128])
def test_scatter_nd_non_aliasing_add_matches_a_loop(dtype):
    rng = np.random.default_rng(5)
    x = rng.integers(-9, 9, (5, 4, 3)).astype(dtype)
    indices = rng.integers(0, 4, (6, 2, 2)).astype(np.int32)
    updates = rng.integers(-9, 9, (6, 2, 3)).astype(dtype)
    got = run(mg.scatter_nd_non_aliasing_add, x, indices, updates)
    np.testing.assert_array_equal(got, _reference(x, indices, updates))


def test_scatter_nd_non_aliasing_add_leaves_its_input_alone():
    x = np.arange(6.0).reshape(3, 2)
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.float64, [3, 2])
        a = mg.scatter_nd_non_aliasing_add(p, [[1]], [[10.0, 10.0]])
        b = p + 0.0
    got_a, got_b = mg.Session(g).run([a, b], {p: x})
    np.testing.assert_array_equal(got_a, [[0, 1], [12, 13], [4, 5]])
    np.testing.assert_array_equal(got_b, np.arange(6.0).reshape(3, 2))


def test_scatter_nd_non_aliasing_add_errors_name_the_node():
    e = fails(
        mg.scatter_nd_non_aliasing_add,
        np.zeros(4, np.float32),
        np.array([[1], [4]], np.int32),
        np.ones(2, np.float32),
        match=r"indices\[1\] = \[4\] does not index into shape \[4\]",
        known=False,
    )
    assert e.op_type == "ScatterNdNonAliasingAdd"
    build_fails(
        lambda: mg.scatter_nd_non_aliasing_add(np.zeros((4, 2)), [[1], [2]], np.ones((2, 3))),
        r"Dimensions \[1,2\) of input\[shape=\[4,2\]\] = \[2\] must match",
    )
    got = run(
        lambda x, i, u: mg.scatter_nd_non_aliasing_add(x, i, u, bad_indices_policy="IGNORE"),
        np.zeros(4, np.float32),
        np.array([[1], [4]], np.int32),
        np.ones(2, np.float32),
    )
    np.testing.assert_array_equal(got, [0, 1, 0, 0])


def test_scatter_nd_non_aliasing_add_rank1_indices_as_tensorflows_kernel():
    """Shapes known: refused by the shape function (TF's graph mode too); unknown: the kernel
    scatters the first index only, as TensorFlow's."""
    g = mg.Graph()
    with g.as_default():
        x, i, u = (mg.placeholder(dt) for dt in (mg.float32, mg.int32, mg.float32))
        y = mg.scatter_nd_non_aliasing_add(x, i, u)
    got = mg.Session(g).run(y, {x: np.zeros(3, np.float32), i: [2, 1], u: [1.0, 2.0]})
    np.testing.assert_array_equal(got, [0, 0, 1])
