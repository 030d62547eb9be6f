"""The gradients of the math and selection ops (ops/math_grad.py) and the gradient ops
they use (ops/math_grad_ops.py: TanhGrad, SigmoidGrad, SqrtGrad, RsqrtGrad,
ReciprocalGrad) and Conj (ops/complex_ops.py).

Real gradients are checked against central differences (mg.test.compute_gradient_error,
float64, known and unknown shapes); complex ones against TensorFlow's convention
``dx = dy * conj(f'(x))`` with ``f'`` from complex differences of the forward op; the ops
TensorFlow does not differentiate give None (or zeros, or an error) as TensorFlow's.
TensorFlow's own values are replayed by test_tf_grad_fixtures.py (grads_math.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors

ERROR = 1e-6  # largest |theoretical - numerical| Jacobian entry, float64
DELTA = 1e-5  # central differences: truncation ~ DELTA**2, rounding ~ 1e-16 / DELTA
rng = np.random.default_rng(27)


def _scope():
    from minigraph.scope import current_scope

    return current_scope()


def gradient_error(fn, values, unknown=False, extra=None):
    """compute_gradient_error of ``fn(*xs)`` with respect to every x, each a float64
    placeholder (of unknown shape when ``unknown``) fed ``values``."""
    g = mg.Graph()
    with g.as_default():
        xs = [mg.placeholder(mg.float64, None if unknown else np.shape(v)) for v in values]
        y = fn(*xs)
    with mg.Session(g) as sess:
        y_shape = sess.run(y, {**dict(zip(xs, values)), **(extra or {})}).shape
    with g.as_default():
        return mg.test.compute_gradient_error(
            xs,
            [np.shape(v) for v in values],
            y,
            y_shape,
            x_init_value=list(values),
            delta=DELTA,
            extra_feed_dict=extra,
        )


def uniform(shape, lo=-1.5, hi=1.5):
    return rng.uniform(lo, hi, shape)


def away_from_integers(shape):
    return rng.integers(-3, 3, shape) + rng.uniform(0.2, 0.8, shape)


UNARY = {
    "Neg": (mg.negative, uniform),
    "Abs": (mg.abs, lambda s: np.sign(uniform(s)) * rng.uniform(0.2, 1.5, s)),
    "Square": (mg.square, uniform),
    "Sqrt": (mg.sqrt, lambda s: uniform(s, 0.5, 2.0)),
    "Rsqrt": (mg.rsqrt, lambda s: uniform(s, 0.5, 2.0)),
    "Reciprocal": (mg.reciprocal, lambda s: uniform(s, 0.5, 2.0)),
    "Exp": (mg.exp, uniform),
    "Expm1": (mg.expm1, uniform),
    "Log": (mg.log, lambda s: uniform(s, 0.5, 2.0)),
    "Log1p": (mg.log1p, lambda s: uniform(s, -0.5, 2.0)),
    "Sin": (mg.sin, uniform),
    "Cos": (mg.cos, uniform),
    "Tanh": (mg.tanh, uniform),
    "Sigmoid": (mg.sigmoid, uniform),
    "Erf": (mg.erf, uniform),
    "Erfc": (mg.erfc, uniform),
    "Sign": (mg.sign, lambda s: np.sign(uniform(s)) * rng.uniform(0.2, 1.5, s)),
}


@pytest.mark.parametrize("unknown", [False, True], ids=["static", "unknown"])
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_gradients_match_finite_differences(op, unknown):
    fn, values = UNARY[op]
    assert gradient_error(fn, [values((2, 3))], unknown) < ERROR
    assert gradient_error(fn, [values(())], unknown) < ERROR  # a scalar


BINARY = {
    "AddV2": (mg.add, uniform, uniform),
    "Sub": (mg.subtract, uniform, uniform),
    "Mul": (mg.multiply, uniform, uniform),
    "RealDiv": (mg.divide, uniform, lambda s: uniform(s, 0.5, 2.0)),
    "Div": (lambda x, y: mg.ops.Div(_scope(), x, y).z, uniform, lambda s: uniform(s, 0.5, 2.0)),
    "DivNoNan": (mg.div_no_nan, uniform, lambda s: uniform(s, 0.5, 2.0)),
    "FloorMod": (mg.floormod, away_from_integers, lambda s: np.full(s, 1.0)),
    "Pow": (mg.pow, lambda s: uniform(s, 0.5, 2.0), uniform),
    "SquaredDifference": (mg.squared_difference, uniform, uniform),
    "Atan2": (mg.atan2, uniform, lambda s: uniform(s, 0.5, 2.0)),
}


@pytest.mark.parametrize("unknown", [False, True], ids=["static", "unknown"])
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_gradients_reduce_broadcasts(op, unknown):
    fn, x_values, y_values = BINARY[op]
    for x_shape, y_shape in [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2,))]:
        err = gradient_error(fn, [x_values(x_shape), y_values(y_shape)], unknown)
        assert err < ERROR, (x_shape, y_shape)


@pytest.mark.parametrize("fn", [mg.maximum, mg.minimum], ids=["Maximum", "Minimum"])
def test_maximum_and_minimum_send_the_gradient_to_the_chosen_side(fn):
    x, y = uniform((2, 3)), uniform((3,))  # no ties: the differences are defined
    assert gradient_error(fn, [x, y]) < ERROR
    assert gradient_error(fn, [x, y], unknown=True) < ERROR
    g = mg.Graph()
    with g.as_default():
        a, b = mg.constant([1.0, 2.0, 3.0]), mg.constant([1.0, 0.0, 5.0])
        da, db = mg.gradients(fn(a, b), [a, b])
    # a tie goes to x, as TensorFlow's >= and <=
    want_a = [1.0, 1.0, 0.0] if fn is mg.maximum else [1.0, 0.0, 1.0]
    got_a, got_b = mg.Session(g).run([da, db])
    np.testing.assert_array_equal(got_a, want_a)
    np.testing.assert_array_equal(got_b, 1.0 - np.array(want_a))


def test_selection_gradients():
    cond = np.array([[True, False, True], [False, True, False]])
    t, e = uniform((2, 3)), uniform((2, 3))

    def select(x, y):
        return mg.select(cond, x, y)

    def select_rows(x, y):
        return mg.select(np.array([False, True]), x, y)

    def where_v2(x, y):
        return mg.where_v2(cond, x, y)

    assert gradient_error(select, [t, e]) < ERROR
    assert gradient_error(select_rows, [t, e], unknown=True) < ERROR
    assert gradient_error(where_v2, [uniform((3,)), uniform((2, 1))]) < ERROR
    assert gradient_error(where_v2, [uniform(()), uniform((2, 3))], unknown=True) < ERROR


@pytest.mark.parametrize("unknown", [False, True], ids=["static", "unknown"])
def test_clip_by_value_gradient_goes_to_the_clipping_bound(unknown):
    t = np.array([[-2.0, -0.7, 0.1], [0.6, 2.5, -0.2]])  # none on a bound
    assert gradient_error(mg.clip_by_value, [t, np.float64(-1.0), np.float64(0.5)], unknown) < (
        ERROR
    )
    hi = np.array([[0.5, 0.5, 0.5], [0.3, 1.0, 0.9]])
    assert gradient_error(mg.clip_by_value, [t, np.full((2, 3), -0.5), hi]) < ERROR
    g = mg.Graph()
    with g.as_default():
        x, lo, hi = mg.constant([-2.0, 0.0, 3.0]), mg.constant(-1.0), mg.constant(1.0)
        grads = mg.gradients(mg.clip_by_value(x, lo, hi), [x, lo, hi])
    dx, dlo, dhi = mg.Session(g).run(grads)
    np.testing.assert_array_equal(dx, [0.0, 1.0, 0.0])
    assert (dlo, dhi) == (1.0, 1.0)


# -- second derivatives: the gradient ops' gradients ------------------------------------------

GRAD_OPS = {
    "TanhGrad": (mg.tanh, mg.ops.TanhGrad),
    "SigmoidGrad": (mg.sigmoid, mg.ops.SigmoidGrad),
    "SqrtGrad": (mg.sqrt, mg.ops.SqrtGrad),
    "RsqrtGrad": (mg.rsqrt, mg.ops.RsqrtGrad),
    "ReciprocalGrad": (mg.reciprocal, mg.ops.ReciprocalGrad),
}


@pytest.mark.parametrize("op", sorted(GRAD_OPS))
def test_gradient_ops_are_used_and_differentiable(op):
    forward, wrapper = GRAD_OPS[op]
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [3])
        (dx,) = mg.gradients(forward(x), x)
    assert dx.op.type == op  # built as TensorFlow builds it

    def second(x):
        (d,) = mg.gradients(forward(x) * x, x)
        return d

    def direct(y, dy):
        return wrapper(_scope(), y, dy).z

    positive = uniform((3,), 0.5, 2.0)
    assert gradient_error(second, [positive]) < ERROR
    assert gradient_error(direct, [positive, uniform((3,))]) < ERROR
    assert gradient_error(direct, [positive, uniform((3,))], unknown=True) < ERROR


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize(
    "op, reference",
    [
        ("TanhGrad", lambda y, dy: dy * (1 - y * y)),
        ("SigmoidGrad", lambda y, dy: dy * y * (1 - y)),
        ("SqrtGrad", lambda y, dy: np.where(dy == 0, 0, 0.5 * dy / np.conj(y))),
        ("RsqrtGrad", lambda y, dy: np.where(dy == 0, 0, -0.5 * dy * np.conj(y) ** 3)),
        ("ReciprocalGrad", lambda y, dy: np.where(dy == 0, 0, -dy * np.conj(y) ** 2)),
    ],
)
def test_gradient_op_kernels(op, reference):
    y = np.array([[0.5, 2.0, 0.0], [np.inf, -1.5, 3.0]])
    dy = np.array([[1.5, -2.0, 0.0], [0.0, 1.0, 0.25]])
    yc = (y + 0.5j).astype(np.complex64)
    g = mg.Graph()
    with g.as_default(), np.errstate(all="ignore"):
        wrapper = getattr(mg.ops, op)
        z = wrapper(_scope(), y, dy).z
        zc = wrapper(_scope(), yc, dy.astype(np.complex64)).z
        flat = wrapper(_scope(), y, dy.reshape(-1)).z
        assert z.shape.as_list() == [2, 3] and flat.shape.as_list() == [2, 3]
        ok = np.isfinite(reference(y, dy)) | (dy == 0)
        got, got_c, got_flat = mg.Session(g).run([z, zc, flat])
        np.testing.assert_allclose(got[ok], reference(y, dy)[ok], rtol=1e-15)
        np.testing.assert_allclose(got_c, reference(yc, dy.astype(np.complex64)), rtol=1e-6)
        np.testing.assert_array_equal(got_flat, got)


def test_gradient_op_sizes_must_agree():
    g = mg.Graph()
    with g.as_default():
        y = mg.placeholder(mg.float32, None)
        dy = mg.placeholder(mg.float32, None)
        z = mg.ops.SqrtGrad(_scope(), y, dy).z
        static = mg.ops.TanhGrad(_scope(), np.ones((2, 3), np.float32), np.ones(4, np.float32))
        assert static.z.shape.as_list() == [2, 3]  # TensorFlow's: y's shape, dy unchecked
    with pytest.raises(errors.InvalidArgumentError, match="same number of elements, got 6 and 3"):
        mg.Session(g).run(z, {y: np.ones((2, 3), np.float32), dy: np.ones(3, np.float32)})
    with pytest.raises(errors.InvalidArgumentError, match="got 6 and 4"):
        mg.Session(g).run(static.z)


# -- complex gradients: dy * conj(f'(x)) ------------------------------------------------------

HOLOMORPHIC = {
    "Mul": lambda x: x * np.complex128(0.5 - 1.5j),
    "RealDiv": lambda x: mg.divide(np.complex128(2 + 1j), x),
    "DivNoNan": lambda x: mg.div_no_nan(x, np.complex128(1 - 2j)),
    "Square": mg.square,
    "Exp": mg.exp,
    "Expm1": mg.expm1,
    "Log": mg.log,
    "Log1p": mg.log1p,
    "Sin": mg.sin,
    "Cos": mg.cos,
    "Tanh": mg.tanh,
    "Sigmoid": mg.sigmoid,
    "Sqrt": mg.sqrt,
    "Rsqrt": mg.rsqrt,
    "Reciprocal": mg.reciprocal,
    "Pow": lambda x: mg.pow(x, np.complex128(1.5 + 0.5j)),
    "PowExponent": lambda x: mg.pow(np.complex128(1.2 - 0.3j), x),
    "Prod": lambda x: mg.reduce_prod(x, 0, keepdims=True) * mg.ones_like(x),
}


@pytest.mark.parametrize("op", sorted(HOLOMORPHIC))
def test_complex_gradients_take_the_conjugate(op):
    fn = HOLOMORPHIC[op]
    x0 = np.array([0.8 + 0.3j, 1.1 - 0.6j, 0.5 + 0.9j])
    dy = np.array([1.0 - 0.5j, -0.3 + 2.0j, 0.7 + 0.1j])
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.complex128, [3])
        y = fn(x)
        (dx,) = mg.gradients(y, x, grad_ys=dy)
    with mg.Session(g) as sess:
        got = sess.run(dx, {x: x0})
        h = 1e-6
        # f'(x) by complex central differences, one element at a time; y_i may depend on
        # every x_j (Prod): dx_j = sum_i dy_i * conj(df_i / dx_j).
        want = np.zeros(3, complex)
        for j in range(3):
            step = np.zeros(3, complex)
            step[j] = h
            df = (sess.run(y, {x: x0 + step}) - sess.run(y, {x: x0 - step})) / (2 * h)
            want[j] = np.sum(dy * np.conj(df))
    np.testing.assert_allclose(got, want, rtol=1e-7)


def test_conj_gradient_and_builder():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.complex64, [2])
        y = mg.conj(x)
        (dx,) = mg.gradients(y, x, grad_ys=np.complex64([1 + 2j, -3j]))
        real = mg.constant([1.0, 2.0])
        assert mg.conj(real) is real  # as tf.math.conj: no op for real tensors
        assert mg.conj(mg.constant([1, 2])).op.type == "Const"
        with pytest.raises(TypeError, match="numeric"):
            mg.conj(mg.constant([True]))
    assert y.op.type == "Conj" and y.shape.as_list() == [2]
    np.testing.assert_array_equal(
        mg.Session(g).run(dx, {x: np.complex64([1, 1])}), np.complex64([1 - 2j, 3j])
    )


# -- what TensorFlow does not differentiate -----------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        mg.floor,
        mg.ceil,
        mg.round,
        mg.rint,
        lambda x: mg.floordiv(x, 2.0),
        lambda x: mg.truncatediv(x, 2.0),
    ],
    ids=["Floor", "Ceil", "Round", "Rint", "FloorDiv", "TruncateDiv"],
)
def test_rounding_ops_have_no_gradient(fn):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [3])
        assert mg.gradients(fn(x), x) == [None]
        (dx,) = mg.gradients(fn(x) + x * 2.0, x)  # the other path still counts
    np.testing.assert_array_equal(mg.Session(g).run(dx, {x: np.zeros(3, np.float32)}), [2, 2, 2])


def test_comparisons_and_logical_ops_stop_gradients():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [3])
        for y in [
            x > 0.0,
            mg.equal(x, 1.0),
            mg.not_equal(x, 1.0),
            mg.less_equal(x, 0.0),
            mg.greater_equal(x, 0.0),
            x < 0.0,
        ]:
            assert mg.gradients(y, x) == [None]
            assert mg.gradients(mg.logical_not(y) & (y | y), x) == [None]


def test_sign_gradient_is_zeros_not_none():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [2])
        (dx,) = mg.gradients(mg.sign(x), x)
    assert dx is not None
    np.testing.assert_array_equal(mg.Session(g).run(dx, {x: [1.0, -2.0]}), [0.0, 0.0])


@pytest.mark.parametrize(
    "fn",
    [mg.is_nan, mg.is_inf, mg.is_finite, lambda x: mg.truncatemod(x, 2.0)],
    ids=["IsNan", "IsInf", "IsFinite", "TruncateMod"],
)
def test_ops_tensorflow_has_no_gradient_for_are_errors(fn):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [3])
        with pytest.raises(errors.NoGradientError, match="No gradient defined"):
            mg.gradients(fn(x), x)
        # a bool result used only as a condition is never differentiated (as in TF)
        y = mg.where_v2(mg.is_nan(x), mg.zeros_like(x), x)
        (dx,) = mg.gradients(y, x)
    np.testing.assert_array_equal(mg.Session(g).run(dx, {x: np.float32([np.nan, 1, 2])}), [0, 1, 1])


def test_random_ops_are_not_differentiable():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [])
        n = mg.cast(mg.abs(x), mg.int32) + 2
        draws = [
            mg.random_uniform([n], seed=1),
            mg.random_normal([n], seed=2),
            mg.truncated_normal([n], seed=3),
            mg.random_uniform([n], maxval=n + 5, dtype=mg.int32, seed=4),
        ]
        for d in draws:
            assert mg.gradients(d, x) == [None]
        types = {n.type_string for n in g.nodes()}
        assert {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"} <= types
        assert "RandomUniformInt" in types
        (dx,) = mg.gradients(draws[0] * x, x)  # the draw is a constant factor
    assert dx is not None
