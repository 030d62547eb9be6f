"""The basic ops against NumPy references computed in the test."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from op_helpers import run

import minigraph as mg
from minigraph import errors

pytestmark = pytest.mark.usefixtures("any_device")  # CPU and (simulated) GPU


A = np.arange(12, dtype=np.float32).reshape(3, 4)
B = np.linspace(-1, 1, 4).astype(np.float32)
IDX = np.array([[3, -2], [5, 7]], np.int32)
BOOL = np.array([True, False, True, False])
BOOL2 = np.array([True, True, False, False])


@pytest.mark.parametrize(
    "build, args, expected",
    [
        (lambda a, b: a + b, (A, B), A + B),
        (lambda a, b: a - b, (A, B), A - B),
        (lambda a, b: a * b, (A, B), A * B),
        (lambda a, b: a / b, (A, B), A / B),
        (lambda a: -a, (A,), -A),
        (lambda a: 1.0 - a, (A,), 1.0 - A),
        (lambda a: 2.0 / (a + 1.0), (A,), 2.0 / (A + 1.0)),
        (lambda a, b: mg.maximum(a, b), (A, B), np.maximum(A, B)),
        (lambda a, b: mg.minimum(a, b), (A, B), np.minimum(A, B)),
        (lambda a, b: a < b, (A, B), A < B),
        (lambda a, b: a <= b, (A, B), A <= B),
        (lambda a, b: a > b, (A, B), A > B),
        (lambda a, b: a >= b, (A, B), A >= B),
        (lambda a, b: mg.equal(a, b), (IDX, IDX.T), IDX == IDX.T),
        (lambda a, b: mg.not_equal(a, b), (IDX, IDX.T), IDX != IDX.T),
        (lambda a, b: a & b, (BOOL, BOOL2), BOOL & BOOL2),
        (lambda a, b: a | b, (BOOL, BOOL2), BOOL | BOOL2),
        (lambda a: ~a, (BOOL,), ~BOOL),
        (lambda a, b: mg.divide(a, b), (IDX, IDX.T), IDX / IDX.T),
        (lambda a: mg.cast(a, mg.int32), (B * 3,), (B * 3).astype(np.int32)),
        (lambda a: mg.cast(a, mg.bool), (IDX,), IDX.astype(bool)),
        (lambda a: mg.identity(a), (A,), A),
        (lambda a: mg.shape(a), (A,), np.array([3, 4], np.int32)),
        (lambda a: mg.shape(a, out_type=mg.int64), (A,), np.array([3, 4], np.int64)),
        (lambda a: mg.size(a), (A,), np.int32(12)),
        (lambda a: mg.rank(a), (A,), np.int32(2)),
        (lambda a: mg.reshape(a, [2, -1]), (A,), A.reshape(2, -1)),
        (lambda a: mg.reshape(a, mg.shape(mg.transpose(a))), (A,), A.reshape(4, 3)),
        (lambda a: mg.fill([2, 3], mg.constant(7, mg.int64)), (A,), np.full((2, 3), 7)),
        (lambda a: mg.zeros([2, 2], mg.int32), (A,), np.zeros((2, 2), np.int32)),
        (lambda a: mg.ones([3]), (A,), np.ones(3, np.float32)),
        (lambda a: mg.zeros_like(a), (A,), np.zeros_like(A)),
        (lambda a: mg.ones_like(a, dtype=mg.int64), (A,), np.ones((3, 4), np.int64)),
        (lambda a, b: mg.concat([a, a], 0), (A, B), np.concatenate([A, A], 0)),
        (lambda a, b: mg.concat([a, a * 2.0], -1), (A, B), np.concatenate([A, A * 2], -1)),
        (lambda a, b: mg.stack([b, b * 2.0], axis=1), (A, B), np.stack([B, B * 2], 1)),
        (lambda a: mg.stack([a, a], axis=-1), (A,), np.stack([A, A], -1)),
        (lambda a: mg.transpose(a), (A,), A.T),
        (
            lambda a: mg.transpose(mg.reshape(a, [2, 3, 2]), [1, 0, 2]),
            (A,),
            A.reshape(2, 3, 2).transpose(1, 0, 2),
        ),
        (lambda a: a[1], (A,), A[1]),
        (lambda a: a[-1, ::-2], (A,), A[-1, ::-2]),
        (lambda a: a[:, None, 1:3], (A,), A[:, None, 1:3]),
        (lambda a: a[..., 2], (A,), A[..., 2]),
        (lambda a: a[1:, ..., None], (A,), A[1:, ..., None]),
        (lambda a: a[5:], (A,), A[5:]),
        (lambda a: mg.gather(a, [2, 0, 2]), (A,), A[[2, 0, 2]]),
        (lambda a: mg.gather(a, [[3], [1]], axis=1), (A,), np.take(A, [[3], [1]], axis=1)),
        (lambda a: mg.gather(a, mg.constant([1], mg.int64), axis=-1), (A,), A[:, [1]]),
        (lambda a: mg.range(5), (A,), np.arange(5, dtype=np.int32)),
        (lambda a: mg.range(1, 10, 3), (A,), np.arange(1, 10, 3, dtype=np.int32)),
        (lambda a: mg.range(5, 0, -2), (A,), np.arange(5, 0, -2, dtype=np.int32)),
        (lambda a: mg.range(0.0, 1.0, 0.25), (A,), np.arange(0, 1, 0.25, dtype=np.float32)),
        (lambda a: mg.range(mg.size(a)), (A,), np.arange(12, dtype=np.int32)),
    ],
)
def test_op_values(build, args, expected):
    out = run(build, *args)
    assert out.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(out, expected)


def test_scalar_results_are_arrays():
    g = mg.Graph()
    with g.as_default():
        s = mg.constant(2.0) * 3.0
    out = mg.Session(g).run(s)
    assert isinstance(out, np.ndarray) and out.shape == () and out == 6.0


def test_integer_add_wraps():
    out = run(lambda a: a + 1, np.array([2**31 - 1], np.int32))
    assert out.tolist() == [-(2**31)]


@pytest.mark.parametrize(
    "build, args, message",
    [
        (lambda a: mg.reshape(a, mg.constant([5, -1]) * 1), (A,), None),
        (lambda a, b: a + b, (A, np.zeros(3, np.float32)), "Incompatible shapes: [3,4] vs. [3]"),
        (
            lambda a, i: mg.gather(a, i),
            (A, np.array([0, 3], np.int32)),
            "indices[1] = 3 is not in [0, 3)",
        ),
        (
            lambda a, i: mg.gather(a, i),
            (A, np.array([[0, -1]], np.int32)),
            "indices[0,1] = -1 is not in [0, 3)",
        ),
        (lambda a, d: mg.range(0, d, 0), (A, np.int32(3)), "Requires delta != 0"),
        (lambda a, d: mg.range(d, 0, 1), (A, np.int32(3)), "Requires start <= limit"),
        (lambda a, d: mg.fill(d, 1.0), (A, np.array([2, -1], np.int32)), "non-negative"),
        (
            lambda a, p: mg.transpose(a, p),
            (A, np.array([1, 1], np.int32)),
            "not a valid permutation",
        ),
    ],
)
def test_run_time_errors_name_the_node(build, args, message):
    g = mg.Graph()
    with g.as_default():
        phs = [mg.placeholder(mg.as_dtype(a.dtype)) for a in args]
        out = build(*phs)
    with pytest.raises(errors.InvalidArgumentError) as e:
        mg.Session(g).run(out, dict(zip(phs, args)))
    if message:
        assert message in str(e.value)
    assert e.value.node_name in str(e.value)


def test_reshape_run_time_mismatch():
    with pytest.raises(errors.InvalidArgumentError, match="12 values, but the requested shape"):
        g = mg.Graph()
        with g.as_default():
            x = mg.placeholder(mg.float32)
            y = mg.reshape(x, [5, -1])
        mg.Session(g).run(y, {x: A})


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
        elements=st.floats(-100, 100),
    ),
    st.sampled_from(["add", "subtract", "multiply", "maximum"]),
)
def test_broadcasting_binary_ops_match_numpy(x, op):
    y = np.float64(1.5) + np.zeros(x.shape[-1:], np.float64)
    out = run(lambda a, b: getattr(mg, op)(a, b), x, y)
    np.testing.assert_array_equal(out, getattr(np, op)(x, y))


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        np.int32,
        hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=5),
        elements=st.integers(-50, 50),
    ),
    st.data(),
)
def test_strided_slice_matches_numpy(x, data):
    key = []
    for n in x.shape:
        kind = data.draw(st.sampled_from(["int", "slice", "none"]))
        if kind == "int" and n > 0:
            key.append(data.draw(st.integers(-n, n - 1)))
        elif kind == "none":
            key.append(None)
            key.append(slice(None))
        else:
            step = data.draw(st.sampled_from([1, 2, -1, -3]))
            start = data.draw(st.none() | st.integers(-n - 2, n + 2))
            stop = data.draw(st.none() | st.integers(-n - 2, n + 2))
            key.append(slice(start, stop, step))
    key = tuple(key)
    out = run(lambda a: a[key], x)
    np.testing.assert_array_equal(out, x[key])


def test_strided_slice_fed_bounds_and_shapes_change_between_runs():
    """The kernel reuses its last index while the input shape and bounds stay the same:
    new bounds (the same array changed in place too) and new shapes are sliced anew, and
    an out-of-range index still fails after a good run."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.int32, [None, None])
        begin = mg.placeholder(mg.int32, [2])
        y = mg.strided_slice(x, begin, [100, 100], [1, 1], shrink_axis_mask=1)
    sess = mg.Session(g)
    a = np.arange(20, dtype=np.int32).reshape(4, 5)
    bounds = np.array([1, 2], np.int32)
    np.testing.assert_array_equal(sess.run(y, {x: a, begin: bounds}), a[1, 2:])
    np.testing.assert_array_equal(sess.run(y, {x: a, begin: bounds}), a[1, 2:])
    bounds[:] = [3, 0]  # the same array, new values
    np.testing.assert_array_equal(sess.run(y, {x: a, begin: bounds}), a[3, 0:])
    b = np.arange(6, dtype=np.int32).reshape(2, 3)
    np.testing.assert_array_equal(sess.run(y, {x: b, begin: [1, 1]}), b[1, 1:])
    with pytest.raises(errors.InvalidArgumentError, match="out of bounds"):
        sess.run(y, {x: b, begin: [3, 0]})


def test_bounds_check_catches_the_most_negative_index_under_a_huge_limit():
    from minigraph.ops.common import first_bad_index

    flat = np.array([5, -(2**31), 7], np.int32)  # as uint32: 2**31, below a 3e9 limit
    assert first_bad_index(flat, 3_000_000_000) == (1, -(2**31))
    assert first_bad_index(np.array([5, 7], np.int64), 8) is None
    assert first_bad_index(np.array([5, 8], np.int64), 8) == (1, 8)
