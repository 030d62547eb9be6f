"""RandomUniform, RandomStandardNormal, TruncatedNormal and RandomUniformInt.

minigraph draws other bits than TensorFlow (ops/random_ops.py), so the values are judged
by their distribution: fixed seeds, 200,000 draws, and each statistic within 5 standard
errors of its exact value (the standard error worked out from the distribution's moments
and the sample size). TensorFlow's shapes and error messages are in
tests/fixtures/ops/random.npz (tests/tf_oracle/cases_random.py)."""

import math
import threading

import numpy as np
import pytest
from op_helpers import build_fails, fails

import minigraph as mg
from minigraph import errors
from minigraph.scope import current_scope

N = 200_000
K = 5  # standard errors allowed


def _draw(build, device=None, runs=1):
    """``runs`` runs of ``build()`` in one new Session; the list of values."""
    g = mg.Graph()
    with g.as_default():
        out = build()
    sess = mg.Session(g, device)
    return [sess.run(out) for _ in range(runs)]


def _near(value, expected, se, what):
    assert abs(value - expected) <= K * se, f"{what}: {value} vs {expected} (SE {se:.3g})"


def _fraction(x, expected, what):
    """A fraction of the draws, against its probability (binomial standard error)."""
    _near(float(np.mean(x)), expected, math.sqrt(expected * (1 - expected) / x.size), what)


def _moments(x, mean, var, mu4):
    """Sample mean and variance against the exact ones: SE sqrt(var / n) and
    sqrt((mu4 - var**2) / n), mu4 the fourth central moment."""
    x = x.astype(np.float64)
    _near(x.mean(), mean, math.sqrt(var / x.size), "mean")
    _near(x.var(), var, math.sqrt((mu4 - var**2) / x.size), "variance")


def _phi(x):
    return math.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def _cdf(x):
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


# -- distributions -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [mg.float16, mg.float32, mg.float64])
def test_uniform_is_uniform_on_0_1(dtype):
    (x,) = _draw(lambda: mg.random_uniform([N], dtype=dtype, seed=11))
    assert x.dtype == dtype.np and x.shape == (N,)
    assert x.min() >= 0 and x.max() < 1
    step = 2.0**-11 if dtype == mg.float16 else 0.0  # float16: k / 2048, k = 0..2047
    _moments(x, 0.5 - step / 2, 1 / 12, 1 / 80)
    for q in (0.1, 0.25, 0.5, 0.9):
        _fraction(x < q, q, f"P(x < {q})")
    assert len(np.unique(x)) > (2000 if dtype == mg.float16 else N * 0.99)


@pytest.mark.parametrize("dtype", [mg.float16, mg.float32, mg.float64])
def test_standard_normal(dtype):
    (x,) = _draw(lambda: mg.random_normal([400, 500], dtype=dtype, seed=12))
    assert x.dtype == dtype.np and x.shape == (400, 500)
    _moments(x, 0.0, 1.0, 3.0)
    _fraction(np.abs(x) < 1, math.erf(1 / math.sqrt(2)), "P(|x| < 1)")
    _fraction(x < -2, _cdf(-2), "P(x < -2)")
    _fraction(np.abs(x) > 3, math.erfc(3 / math.sqrt(2)), "P(|x| > 3)")


@pytest.mark.parametrize("dtype", [mg.float16, mg.float32, mg.float64])
def test_truncated_normal_is_drawn_again_beyond_two_not_clipped(dtype):
    (x,) = _draw(lambda: mg.truncated_normal([N], dtype=dtype, seed=13))
    assert x.dtype == dtype.np
    assert np.abs(x).max() < 2  # strictly, as TensorFlow's |x| < 2 (also after rounding)
    z = math.erf(math.sqrt(2))  # P(|x| < 2) of the standard normal
    var = 1 - 4 * _phi(2) / z
    mu4 = 3 - 2 * 2 * (4 + 3) * _phi(2) / z
    _moments(x, 0.0, var, mu4)
    # Clipping would pile 4.6% at exactly +-2; drawing again keeps the normal's shape.
    _fraction(np.abs(x) >= 1.9, 2 * (_cdf(2) - _cdf(1.9)) / z, "P(1.9 <= |x| < 2)")
    _fraction(np.abs(x) < 1, math.erf(1 / math.sqrt(2)) / z, "P(|x| < 1)")


def test_uniform_int_counts_each_value_alike():
    (x,) = _draw(lambda: mg.random_uniform([N], -3, 5, dtype=mg.int32, seed=14))
    assert x.dtype == np.int32 and x.min() == -3 and x.max() == 4
    counts = np.bincount(x + 3, minlength=8)
    p = 1 / 8
    for v, c in enumerate(counts):
        _near(c, N * p, math.sqrt(N * p * (1 - p)), f"count of {v - 3}")


@pytest.mark.parametrize(
    "dtype,lo,hi",
    [(mg.int64, -(2**62), 2**62), (mg.int32, -(2**31), 2**31 - 1), (mg.int64, 7, 8)],
)
def test_uniform_int_wide_and_narrow_ranges(dtype, lo, hi):
    (x,) = _draw(lambda: mg.random_uniform([N], lo, hi, dtype=dtype, seed=15))
    assert x.dtype == dtype.np and x.min() >= lo and x.max() < hi
    width = hi - lo
    if width > 1:
        u = (x.astype(np.float64) - lo) / width  # about uniform on [0, 1)
        _moments(u, 0.5, 1 / 12, 1 / 80)


def test_builders_scale_and_shift_as_tensorflows():
    u, n, t = _draw(
        lambda: [
            mg.random_uniform([N], -2.0, 6.0, seed=1),
            mg.random_normal([N], mean=3.0, stddev=0.5, seed=2),
            mg.truncated_normal([N], mean=-1.0, stddev=4.0, dtype=mg.float64, seed=3),
        ]
    )[0]
    assert u.min() >= -2 and u.max() < 6
    _moments(u, 2.0, 64 / 12, 8**4 / 80)
    _moments(n, 3.0, 0.25, 3 * 0.5**4)
    assert t.dtype == np.float64 and np.abs(t + 1).max() < 8
    (scaled,) = _draw(lambda: mg.random_uniform([4], maxval=10.0, seed=1))
    (unit,) = _draw(lambda: mg.random_uniform([4], seed=1))
    np.testing.assert_array_equal(scaled, unit * np.float32(10))


# -- seeds ---------------------------------------------------------------------------------


def test_builders_set_seeds_as_tf_compat_v1_without_a_graph_seed():
    g = mg.Graph()
    with g.as_default():
        mg.random_uniform([2], seed=5, name="a")
        mg.random_normal([2], seed=0, name="b")
        mg.truncated_normal([2], name="c")
        mg.random_uniform([2], 0, 4, mg.int64, seed=2**31 + 1, name="d")
    seeds = {
        n.name: (n.attrs["seed"], n.attrs["seed2"])
        for n in g.nodes()
        if n.type_string.startswith(("Random", "Truncated"))
    }
    assert seeds == {
        "a/RandomUniform": (87654321, 5),
        "b/RandomStandardNormal": (87654321, 0),
        "c/TruncatedNormal": (0, 0),
        "d/RandomUniformInt": (87654321, 2),  # op seeds are taken mod 2**31 - 1
    }


@pytest.mark.parametrize(
    "build",
    [
        lambda: mg.random_uniform([3, 2], seed=1),
        lambda: mg.random_normal([5], seed=2, dtype=mg.float16),
        lambda: mg.truncated_normal([7], seed=3),
        lambda: mg.random_uniform([6], 0, 1000, mg.int64, seed=4),
    ],
    ids=["uniform", "normal", "truncated", "int"],
)
def test_a_seed_gives_a_sequence_that_each_new_session_repeats(build):
    first = _draw(build, runs=3)
    again = _draw(build, runs=3)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], first[1]) and not np.array_equal(first[1], first[2])


def test_every_device_draws_the_same_values(monkeypatch):
    def build():
        return [
            mg.random_uniform([4, 3], -1.0, 1.0, seed=7),
            mg.random_normal([5], seed=8),
            mg.truncated_normal([300], seed=9),
            mg.random_uniform([6], 0, 9, mg.int32, seed=10),
        ]

    cpu = _draw(build, runs=2)
    off = mg.ConfigProto(graph_options=mg.GraphOptions(optimizer_options=mg.OptimizerOptions.off()))
    g = mg.Graph()
    with g.as_default():
        out = build()
    unoptimized = mg.Session(g, config=off)
    monkeypatch.setattr(mg.config, "simulated_gpu", lambda: True)
    gpu = _draw(build, "/gpu:0", runs=2)
    for run in range(2):
        plain = unoptimized.run(out)
        for a, b, c in zip(cpu[run], gpu[run], plain):
            assert a.dtype == b.dtype == c.dtype
            np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(a, c)


def test_different_seeds_differ_and_equal_seeds_agree():
    a, b, c, d = _draw(
        lambda: [
            mg.random_uniform([8], seed=1),
            mg.random_uniform([8], seed=2),
            mg.random_uniform([8], seed=1),
            mg.ops.RandomUniform(current_scope(), [8], mg.float32, seed2=1).output,
        ]
    )[0]
    assert not np.array_equal(a, b) and not np.array_equal(a, d)
    np.testing.assert_array_equal(a, c)  # as TensorFlow: equal (seed, seed2), equal values


def test_no_seed_is_nondeterministic_and_never_merged_or_folded():
    def build():
        return [mg.random_uniform([16]), mg.random_uniform([16]), mg.random_uniform([2]) + 1.0]

    (a, b, c), (a2, _, c2) = _draw(build, runs=2)
    (a3, _, _) = _draw(build)[0]
    assert not np.array_equal(a, b)  # two equal nodes: not merged into one
    assert not np.array_equal(a, a2) and not np.array_equal(a, a3)
    assert not np.array_equal(c, c2)  # not folded into a constant
    with mg.Graph().as_default():
        x = mg.random_uniform([2], seed=1)
        assert x.op.node.op_def.is_stateful and x.shape.as_list() == [2]


def test_a_loop_body_draws_anew_each_iteration():
    def build():
        def body(i, acc):
            return i + 1, acc + mg.random_uniform([3], seed=5)

        _, total = mg.while_loop(lambda i, acc: i < 4, body, [0, mg.zeros([3])])
        return [total, mg.random_uniform([3], seed=5)]

    (total, first), (total2, _) = _draw(build, runs=2)
    assert not np.allclose(total, 4 * first)  # four different draws, not one four times
    assert np.all((total >= 0) & (total < 4))
    assert not np.array_equal(total, total2)
    np.testing.assert_array_equal(_draw(build)[0][0], total)


def test_concurrent_first_runs_share_one_sequence():
    g = mg.Graph()
    with g.as_default():
        x = mg.random_uniform([1000], seed=3)
    want = [v.tobytes() for v in _draw(lambda: mg.random_uniform([1000], seed=3), runs=8)]
    sess = mg.Session(g)
    got = []
    threads = [threading.Thread(target=lambda: got.append(sess.run(x).tobytes())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == sorted(want)


def test_a_random_plan_is_never_captured_in_a_cuda_graph(monkeypatch):
    monkeypatch.setattr(mg.config, "simulated_gpu", lambda: True)
    before = mg.config.cuda_graphs()
    mg.config.set_check_outputs(False)  # the fast loop, where plans are captured
    mg.config.set_cuda_graphs(True)
    try:
        g = mg.Graph()
        with g.as_default():
            y = mg.random_normal([4], seed=1) * 2.0
        sess = mg.Session(g, "/gpu:0")
        values = [sess.run(y).tobytes() for _ in range(6)]
        (plan,) = sess._plans.values()
        assert sess._executor.cuda_graphs(plan) is None
        assert len(set(values)) == 6
    finally:
        mg.config.set_cuda_graphs(before)


# -- shapes and errors -----------------------------------------------------------------------


def test_shapes_at_build_time():
    with mg.Graph().as_default():
        n = mg.placeholder(mg.int32, [])
        assert mg.random_uniform([2, 3]).shape.as_list() == [2, 3]
        # a shape tensor's length only, when its values are not all known (as Reshape, Fill)
        assert mg.random_normal(mg.stack([n, 4])).shape.as_list() == [None, None]
        assert mg.truncated_normal(mg.placeholder(mg.int64, [3])).shape.as_list() == [None] * 3
        assert mg.random_uniform(mg.placeholder(mg.int32)).shape.rank is None
        x = mg.placeholder(mg.float32, [None, 5])
        assert mg.random_uniform(mg.shape(x), 0, 3, mg.int64).shape.as_list() == [None, None]
        assert mg.random_uniform([0, 3], 5, 5, mg.int32).shape.as_list() == [0, 3]


def test_build_time_errors():
    build_fails(lambda: mg.random_uniform([2, -1]), "Dimension -1 must be >= 0")
    build_fails(lambda: mg.random_normal([[2, 1]]), "Shape must be rank 1 but is rank 2")
    build_fails(lambda: mg.truncated_normal([2, -3]), "Invalid value in tensor used for shape: -3")
    build_fails(
        lambda: mg.random_uniform([2**40, 2**40]),
        r"Shape \[1099511627776,1099511627776\] would have more than 2\*\*63 - 1 elements",
    )
    build_fails(lambda: mg.random_uniform([2], 5, 5, mg.int32), "Need minval < maxval, got 5 >= 5")
    build_fails(
        lambda: mg.random_uniform([2], [1], 5, mg.int32),
        r"minval must be a scalar; got a tensor of shape \[1\]",
    )
    build_fails(
        lambda: mg.random_uniform([2], 1, mg.placeholder(mg.int64, [None]), mg.int64),
        r"maxval must be a scalar; got a tensor of shape \[\?\]",
    )
    build_fails(lambda: mg.random_uniform([2], dtype=mg.int32), "Must specify maxval for integer")
    build_fails(lambda: mg.random_normal([2], dtype=mg.int32), "Argument `dtype` got invalid")
    build_fails(lambda: mg.random_uniform([2], dtype=mg.uint8), "Argument `dtype` got invalid")
    build_fails(lambda: mg.truncated_normal([2], seed=1.5), "seed must be an int")
    with pytest.raises(errors.InvalidArgumentError, match="not in the list of allowed"):
        with mg.Graph().as_default():
            mg.ops.RandomUniform(current_scope(), [2], mg.int32)


def test_run_time_errors_name_the_node():
    shape = np.array([2, -1], np.int32)
    fails(mg.random_uniform, shape, match="Dimension -1 must be >= 0", known=False)
    fails(
        mg.random_normal,
        np.array([[2, 1]], np.int64),
        match=r"shape must be a vector of \{int32,int64\}, got shape \[1,2\]",
        known=False,
    )
    fails(
        lambda s: mg.truncated_normal(s),
        np.array([2**40, 2**40, -1], np.int64),
        match="would have more than 2",
        known=False,
    )
    lo, hi = np.array(7, np.int64), np.array(-5, np.int64)
    fails(
        lambda s, a, b: mg.random_uniform(s, a, b, mg.int64),
        np.array([2], np.int32),
        lo,
        hi,
        match="Need minval < maxval, got 7 >= -5",
        known=False,
    )
    e = fails(
        lambda s, a, b: mg.random_uniform(s, a, b, mg.int32, name="r"),
        np.array([2], np.int32),
        np.array([1], np.int32),
        np.array(5, np.int32),
        match=r"minval must be 0-D, got shape \[1\]",
        known=False,
    )
    assert e.node_name == "r/RandomUniformInt"
    # an empty output needs no valid range, as in TensorFlow
    (empty,) = _draw(lambda: mg.random_uniform(np.array([0], np.int32), 5, 5, mg.int32))
    assert empty.shape == (0,) and empty.dtype == np.int32


def test_too_large_an_output_is_refused_before_drawing():
    g = mg.Graph()
    with g.as_default():
        x = mg.random_normal(mg.placeholder(mg.int64, [2], name="s"), seed=1)
    with pytest.raises(errors.ResourceExhaustedError) as e:
        mg.Session(g, max_tensor_bytes=1 << 20).run(x, {"s:0": np.array([1024, 1024])})
    assert e.value.node_name.endswith("RandomStandardNormal")


@pytest.mark.parametrize("dtype", [mg.float16, mg.float32, mg.float64])
def test_a_scalar_shape_gives_a_0d_array(dtype):
    """NumPy's generators return a scalar for shape (): the kernel still returns an array
    (found by the op fuzzer for float16 RandomUniform)."""
    g = mg.Graph()
    with g.as_default():
        outs = [
            mg.random_uniform([], dtype=dtype, seed=1),
            mg.random_normal([], dtype=dtype, seed=1),
            mg.truncated_normal([], dtype=dtype, seed=1),
        ]
    for value in mg.Session(g).run(outs):
        assert isinstance(value, np.ndarray) and value.shape == () and value.dtype == dtype.np
