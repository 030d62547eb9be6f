"""Reductions (Sum, Mean, Prod, Max, Min, Any, All), ArgMax/ArgMin and Cumsum/Cumprod:
TensorFlow's documented examples, property tests against NumPy references written here,
shape inference, and errors.

Float tolerances, per dtype (the kernels sum in another order than the references, which
sum in float64 or exactly): a reduction of n terms may differ from the exact result by
``EPS[dtype] * (n + 1) * sum(|terms|)``; a mean by that over n. Integers are exact
(wrapping in their dtype where TensorFlow wraps).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigraph as mg
from minigraph import errors
from minigraph.ops import common, reduction_ops

pytestmark = pytest.mark.usefixtures("any_device")  # CPU and (simulated) GPU

EPS = {np.float16: 2**-10, np.float32: 2**-23, np.float64: 2**-52}
EPS[np.complex64] = EPS[np.float32]
EPS[np.complex128] = EPS[np.float64]

INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float16, np.float32, np.float64]
COMPLEX = [np.complex64, np.complex128]


def run(fetches, feed=None, graph=None):
    return mg.Session(graph).run(fetches, feed_dict=feed)


def build_and_run(fn):
    """Builds ``fn()`` in a new graph and runs what it returns."""
    g = mg.Graph()
    with g.as_default():
        out = fn()
    return mg.Session(g).run(out)


# -- TensorFlow's documented examples (tf.math.* docstrings, values checked with TF) ------


def test_reduce_sum_doc_examples():
    x = np.ones((2, 3), np.int32)
    got = build_and_run(
        lambda: [
            mg.reduce_sum(x),
            mg.reduce_sum(x, 0),
            mg.reduce_sum(x, 1),
            mg.reduce_sum(x, 1, keepdims=True),
            mg.reduce_sum(x, [0, 1]),
        ]
    )
    np.testing.assert_array_equal(got[0], 6)
    np.testing.assert_array_equal(got[1], [2, 2, 2])
    np.testing.assert_array_equal(got[2], [3, 3])
    np.testing.assert_array_equal(got[3], [[3], [3]])
    np.testing.assert_array_equal(got[4], 6)
    assert got[0].dtype == np.int32 and got[0].shape == ()


def test_reduce_mean_doc_examples():
    x = np.array([[1.0, 1.0], [2.0, 2.0]], np.float32)
    got = build_and_run(
        lambda: [
            mg.reduce_mean(x),
            mg.reduce_mean(x, 0),
            mg.reduce_mean(x, 1),
            mg.reduce_mean(mg.constant([1, 0, 1, 0])),  # integer mean: 0, as the doc warns
        ]
    )
    np.testing.assert_array_equal(got[0], 1.5)
    np.testing.assert_array_equal(got[1], [1.5, 1.5])
    np.testing.assert_array_equal(got[2], [1.0, 2.0])
    assert got[3] == 0 and got[3].dtype == np.int32


def test_reduce_max_min_prod_any_all_doc_examples():
    nan, inf = float("nan"), float("inf")
    got = build_and_run(
        lambda: [
            mg.reduce_max([5, 1, 2, 4]),
            mg.reduce_max([-5, -1, -2, -4]),
            mg.reduce_max([4.0, nan]),
            mg.reduce_max([nan, nan]),
            mg.reduce_max([-inf, inf]),
            mg.reduce_min([-5, -1, -2, -4]),
            mg.reduce_min([[1, 2], [3, 4]]),
            mg.reduce_prod([[1.0, 2.0], [3.0, 4.0]]),
            mg.reduce_prod([[1.0, 2.0], [3.0, 4.0]], 0),
            mg.reduce_prod([[1.0, 2.0], [3.0, 4.0]], 1),
            mg.reduce_any([[True, True], [False, False]]),
            mg.reduce_any([[True, True], [False, False]], 0),
            mg.reduce_any([[True, True], [False, False]], 1),
            mg.reduce_all([[True, True], [False, False]]),
            mg.reduce_all([[True, True], [False, False]], 0),
            mg.reduce_all([[True, True], [False, False]], 1),
        ]
    )
    expected = [5, -1, nan, nan, inf, -5, 1, 24.0, [3.0, 8.0], [2.0, 12.0]]
    expected += [True, [True, True], [True, False], False, [False, False], [True, False]]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


def test_argmax_argmin_doc_examples():
    b = [[2, 20, 30, 3, 6], [3, 11, 16, 1, 8], [14, 45, 23, 5, 27]]
    got = build_and_run(
        lambda: [
            mg.argmax([2, 20, 30, 3, 6]),
            mg.argmax(b, 0),
            mg.argmax(b, 1),
            mg.argmin(b, 0),
            mg.argmin(b, 1),
            mg.argmin([1, 10, 26.9, 2.8, 166.32, 62.3]),
            mg.argmax(b, dimension=1, output_type=mg.int32),
        ]
    )
    expected = [2, [2, 2, 0, 2, 2], [2, 2, 1], [0, 1, 1, 1, 0], [0, 3, 3], 0, [2, 2, 1]]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    assert got[0].dtype == np.int64 and got[-1].dtype == np.int32


def test_cumsum_cumprod_doc_examples():
    x = [[2, 4, 6, 8], [1, 3, 5, 7]]
    v = [2, 4, 6, 8]
    got = build_and_run(
        lambda: [
            mg.cumsum(x, 0),
            mg.cumsum(x, 1),
            mg.cumsum(v, exclusive=True, reverse=True),
            mg.cumprod(v),
            mg.cumprod(v, exclusive=True),
            mg.cumprod(v, reverse=True),
            mg.cumprod(v, exclusive=True, reverse=True),
        ]
    )
    expected = [
        [[2, 4, 6, 8], [3, 7, 11, 15]],
        [[2, 6, 12, 20], [1, 4, 9, 16]],
        [18, 14, 8, 0],
        [2, 8, 48, 384],
        [1, 2, 8, 48],
        [384, 192, 48, 8],
        [192, 48, 8, 1],
    ]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


# -- TensorFlow 2.21's results beyond the docs (checked with TF on the CPU) ---------------


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_empty_reductions_give_identities(dtype):
    e = np.zeros((0, 3), dtype)
    got = build_and_run(
        lambda: (
            [f(e, 0) for f in (mg.reduce_sum, mg.reduce_prod, mg.reduce_max, mg.reduce_min)]
            + [mg.reduce_mean(e, 0), mg.reduce_sum(e, 1)]
        )
    )
    if np.dtype(dtype).kind == "f":
        lo, hi, mean = -np.inf, np.inf, np.nan
    else:
        lo, hi, mean = np.iinfo(dtype).min, np.iinfo(dtype).max, 0
    for g, e_ in zip(got, [0, 1, lo, hi, mean]):
        assert g.dtype == dtype and g.shape == (3,)
        np.testing.assert_array_equal(g, np.full(3, e_, dtype))
    assert got[-1].shape == (0,)


def test_empty_logical_and_complex_reductions():
    b = np.zeros((2, 0), bool)
    c = np.zeros((0,), np.complex64)
    got = build_and_run(
        lambda: [
            mg.reduce_any(b, 1),
            mg.reduce_all(b, 1),
            mg.reduce_mean(c),
            mg.reduce_sum(c),
            mg.reduce_prod(c),
        ]
    )
    np.testing.assert_array_equal(got[0], [False, False])
    np.testing.assert_array_equal(got[1], [True, True])
    assert got[2] == 0 and got[3] == 0 and got[4] == 1  # TF's complex empty mean is 0


def test_integer_mean_truncates_and_sums_wide():
    got = build_and_run(
        lambda: [
            mg.reduce_mean(np.array([-1, -2], np.int32)),
            mg.reduce_mean(np.array([-7, 0, 0], np.int16)),
            mg.reduce_mean(np.array([1, 2], np.int32)),
            mg.reduce_mean(np.array([100, 100], np.int8)),  # no int8 overflow
            mg.reduce_mean(np.array([200, 200, 200], np.uint8)),
            mg.reduce_mean(np.array([2**31 - 1] * 2, np.int32)),
            mg.reduce_mean(np.array([2**62] * 3, np.int64)),  # int64 itself wraps
            mg.reduce_mean(np.array([2**63] * 3, np.uint64)),
        ]
    )
    expected = [-1, -2, 1, 100, 200, 2**31 - 1, -1537228672809129301, 3074457345618258602]
    for g, e in zip(got, expected):
        assert int(g) == e


def test_integer_sums_and_products_wrap():
    got = build_and_run(
        lambda: [
            mg.reduce_sum(np.array([100, 100], np.int8)),
            mg.reduce_prod(np.array([100, 100, 3], np.int8)),
            mg.cumprod(np.array([100, 100, 100], np.int8)),
        ]
    )
    assert got[0] == -56 and got[1] == 48
    np.testing.assert_array_equal(got[2], np.array([100, 16, 64], np.int8))


def test_max_min_propagate_nan():
    x = np.array([[1.0, np.nan, 3.0], [np.nan, 1.0, 2.0], [1.0, 2.0, 3.0]], np.float32)
    got = build_and_run(lambda: [mg.reduce_max(x, 1), mg.reduce_min(x, 1), mg.reduce_max(x, 0)])
    np.testing.assert_array_equal(got[0], [np.nan, np.nan, 3.0])
    np.testing.assert_array_equal(got[1], [np.nan, np.nan, 1.0])
    np.testing.assert_array_equal(got[2], [np.nan, np.nan, 3.0])


def test_argmax_argmin_skip_nan_and_take_the_first_tie():
    nan, inf = np.nan, np.inf
    rows = [
        [1.0, nan, 3.0],
        [nan, 1.0, 0.0],
        [nan, nan, nan],
        [-inf, nan, -inf],
        [1.0, 3.0, 3.0],
        [-0.0, 0.0, -0.0],
    ]
    x = np.array(rows, np.float16)
    got = build_and_run(lambda: [mg.argmax(x, 1), mg.argmin(x, 1)])
    np.testing.assert_array_equal(got[0], [2, 1, 0, 0, 1, 0])
    np.testing.assert_array_equal(got[1], [0, 2, 0, 0, 0, 0])
    b = build_and_run(lambda: [mg.argmax([False, True, True]), mg.argmin([True, False, False])])
    assert b == [1, 1]


def test_argmax_int16_output_wraps():
    x = np.arange(40000.0)
    got = build_and_run(lambda: mg.argmax(x, output_type=mg.int16))
    assert got.dtype == np.int16 and got == np.int16(-25537)


# -- property tests against NumPy references ------------------------------------------


def _wrap(values, dtype):
    """Python ints, reduced modulo 2**bits into ``dtype``'s range (TF's wrapping)."""
    info = np.iinfo(dtype)
    span = 1 << info.bits
    out = np.vectorize(lambda v: ((int(v) - info.min) % span) + info.min, otypes=[object])(values)
    return np.array(out.tolist(), dtype).reshape(np.shape(values))


def _trunc_div(s, n):
    return -(-s // n) if s < 0 else s // n


def reference_reduce(op, x, axes, keep):
    """The expected result, computed exactly (ints) or in float64/complex128."""
    axes = tuple(sorted({a % x.ndim for a in axes})) if x.ndim else ()
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    kind = x.dtype.kind

    def red(fn, arr, **kw):
        with np.errstate(all="ignore"):  # inf - inf is NaN, as in the op
            return fn(arr, axis=axes, keepdims=keep, **kw) if axes else arr.copy()

    if op in ("Any", "All"):
        return red(np.logical_or.reduce if op == "Any" else np.logical_and.reduce, x)
    if op in ("Max", "Min"):
        if kind == "f":
            init = -np.inf if op == "Max" else np.inf
        else:
            info = np.iinfo(x.dtype)
            init = info.min if op == "Max" else info.max
        fn = np.maximum.reduce if op == "Max" else np.minimum.reduce
        return red(fn, x, initial=init)
    if kind in "iu":
        exact = x.astype(object)
        if op == "Prod":
            return _wrap(red(np.multiply.reduce, exact, initial=1), x.dtype)
        s = red(np.add.reduce, exact, initial=0)
        if op == "Sum":
            return _wrap(s, x.dtype)
        if n == 0:
            return np.zeros(np.shape(s), x.dtype)
        if x.dtype.itemsize == 8:  # int64 and uint64 sum in their own dtype: they wrap
            s = _wrap(s, x.dtype).astype(object)
        q = np.vectorize(lambda v: _trunc_div(int(v), n), otypes=[object])(s)
        return np.array(q.tolist(), x.dtype).reshape(np.shape(s))
    wide = np.complex128 if kind == "c" else np.float64
    xw = x.astype(wide)
    if op == "Prod":
        return red(np.multiply.reduce, xw, initial=1)
    s = red(np.add.reduce, xw, initial=0)
    if op == "Sum":
        return s
    if n == 0:
        return np.full(np.shape(s), np.nan if kind == "f" else 0, wide)
    return s / n


def assert_close_sum(got, ref, x, axes, keep, op, dtype):
    """Float results: within EPS[dtype] * (n + 1) * sum(|terms|) (over n for a mean)."""
    if np.dtype(dtype).kind not in "fc" or op not in ("Sum", "Mean", "Prod"):
        np.testing.assert_array_equal(got, ref)
        return
    assert got.shape == np.shape(ref)
    with np.errstate(over="ignore"):  # a product past the dtype's range casts to inf
        ref = np.asarray(ref).astype(got.dtype).astype(ref.dtype if hasattr(ref, "dtype") else None)
    finite = np.isfinite(ref)
    if op == "Prod":
        # Where a partial product may leave the dtype's range (the factors' magnitudes, each
        # taken as at least 1, multiply past its largest value), the order of the products
        # decides between inf, NaN (a complex inf * z: inf - inf) and a finite value: any of
        # them is right. Elsewhere no order overflows, and the result must match.
        magnitudes = np.maximum(np.abs(x).astype(np.float64), 1)
        with np.errstate(over="ignore"):
            safe = reference_reduce("Prod", magnitudes, axes, keep) <= np.finfo(dtype).max
        safe = np.asarray(safe)
        np.testing.assert_array_equal(got[safe & ~finite], ref[safe & ~finite])
        checked = safe & finite
        np.testing.assert_allclose(got[checked], ref[checked], rtol=EPS[dtype] * (x.size + 2) * 4)
        return
    np.testing.assert_array_equal(got[~finite], ref[~finite])
    bound = reference_reduce("Sum", np.abs(x).astype(np.float64), axes, keep)
    n = int(np.prod([x.shape[a] for a in {a % x.ndim for a in axes}])) if x.ndim else 1
    if op == "Mean":
        bound = bound / max(n, 1)
    bound = EPS[dtype] * (n + 1) * np.asarray(bound) + np.finfo(np.float16).tiny
    assert np.all(np.abs(got[finite] - ref[finite]) <= bound[finite])


@st.composite
def reduction_case(draw, op):
    rank = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))
    if op in ("Any", "All"):
        dtype = np.bool_
    elif op in ("Max", "Min"):
        dtype = draw(st.sampled_from(FLOATS + INTS))
    else:
        dtype = draw(st.sampled_from(FLOATS + INTS + COMPLEX))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = np.dtype(dtype).kind
    if kind == "b":
        x = rng.random(shape) < draw(st.floats(0, 1))
    elif kind in "iu":
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    else:
        scale = 2.0 if op == "Prod" else 100.0
        x = (rng.standard_normal(shape) * scale).astype(dtype)
        if kind == "c":
            x = x + 1j * (rng.standard_normal(shape) * scale).astype(dtype)
        elif draw(st.booleans()) and x.size:
            special = rng.choice([np.nan, np.inf, -np.inf], size=shape)
            x = np.where(rng.random(shape) < 0.2, special, x).astype(dtype)
    if rank:
        axes = draw(st.lists(st.integers(0, rank - 1), unique=True, max_size=rank))
        axes = [a - rank if draw(st.booleans()) else a for a in axes]
    else:
        axes = []
    keep = draw(st.booleans())
    scalar_axis = len(axes) == 1 and draw(st.booleans())
    tidx = draw(st.sampled_from([np.int32, np.int64]))
    axis_value = np.array(axes[0] if scalar_axis else axes, tidx)
    return x, axes, axis_value, keep


OPS = {
    "Sum": mg.reduce_sum,
    "Mean": mg.reduce_mean,
    "Prod": mg.reduce_prod,
    "Max": mg.reduce_max,
    "Min": mg.reduce_min,
    "Any": mg.reduce_any,
    "All": mg.reduce_all,
}


@pytest.mark.parametrize("path", ["in place", "moved", "folded"])
@pytest.mark.parametrize("op", list(OPS))
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_reductions_match_reference(monkeypatch, op, path, data):
    # "moved": inputs of any size whose kept trailing run is short are copied with the
    # reduced axes last (by default only inputs of 4096 elements or more). "folded": a
    # reduction over one short axis into any number of results is a fold of its slices (by
    # default only into 64 results per element of the axis or more).
    if path == "moved":
        monkeypatch.setattr(reduction_ops, "_MOVE_MIN_SIZE", 0)
    if path == "folded":
        monkeypatch.setattr(common, "_FOLD_MIN_RESULTS", 0)
    x, axes, axis_value, keep = data.draw(reduction_case(op))
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.as_dtype(x.dtype), shape=x.shape)
        y = OPS[op](p, axis_value, keepdims=keep)
        # The same graph with the axes unknown until run time: the kernel checks them.
        a = mg.placeholder(mg.as_dtype(axis_value.dtype), shape=axis_value.shape)
        z = OPS[op](p, a, keepdims=keep)
    assert y.op.type == op and y.dtype == mg.as_dtype(x.dtype)
    got, got_z = mg.Session(g).run([y, z], feed_dict={p: x, a: axis_value})
    ref = reference_reduce(op, x, axes, keep)
    assert got.shape == np.shape(ref) == tuple(y.shape.as_list())
    assert got.dtype == x.dtype
    assert_close_sum(got, ref, x, axes, keep, op, x.dtype.type)
    np.testing.assert_array_equal(got_z, got)


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize(
    "shape, axes",
    [
        ((64, 8, 8, 4), [1, 2]),
        ((5000, 3), [0]),
        ((40, 30, 2, 5), [0, 2]),
        ((10240, 5), [1]),  # a softmax's keys, folded
        ((1024, 5, 8), [1]),  # Keras's 1-D global pooling, folded
        ((1024, 5, 16), [-1]),  # a layer norm's features, folded
    ],
)
@pytest.mark.parametrize("op", ["Mean", "Max", "Sum"])
def test_global_pooling_and_column_reductions_at_full_size(op, shape, axes, keep):
    # Keras's global pooling (a reduction over [1, 2] of NHWC) and a reduction over the rows
    # of a few columns: large enough for the copy with the reduced axes last.
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    x[0, 0] = np.nan  # Max propagates it; the sums too
    got = build_and_run(lambda: OPS[op](x, axes, keepdims=keep))
    assert_close_sum(got, reference_reduce(op, x, axes, keep), x, axes, keep, op, np.float32)


def reference_arg(x, axis, is_max):
    """TensorFlow's scan: start at (index 0, the lowest finite value) for ArgMax (highest
    for ArgMin) and move on a strictly larger (smaller) value only, so NaN never wins and
    a row of NaN and -inf gives index 0."""
    moved = np.moveaxis(x, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    if x.dtype.kind == "f":
        info = np.finfo(x.dtype)
        start = float(info.min if is_max else info.max)
    elif x.dtype.kind == "b":
        start = False if is_max else True
    else:
        info = np.iinfo(x.dtype)
        start = int(info.min if is_max else info.max)
    out = []
    for row in rows:
        best, best_value = 0, start
        for i, v in enumerate(row.tolist()):
            if v > best_value if is_max else v < best_value:
                best, best_value = i, v
        out.append(best)
    return np.array(out, np.int64).reshape(moved.shape[:-1])


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=4),
    st.sampled_from(FLOATS + INTS + [np.bool_]),
    st.integers(0, 2**32 - 1),
    st.booleans(),
    st.sampled_from([mg.int32, mg.int64]),
    st.data(),
)
def test_argmax_argmin_match_reference(shape, dtype, seed, is_max, out_type, data):
    rng = np.random.default_rng(seed)
    kind = np.dtype(dtype).kind
    if kind == "b":
        x = rng.random(shape) < 0.5
    elif kind in "iu":
        x = rng.integers(0, 4, shape).astype(dtype)  # few values: many ties
    else:
        x = rng.integers(-3, 3, shape).astype(dtype)
        special = rng.choice([np.nan, np.inf, -np.inf], size=shape)
        x = np.where(rng.random(shape) < 0.3, special, x).astype(dtype)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    fn = mg.argmax if is_max else mg.argmin
    got = build_and_run(lambda: fn(x, axis, output_type=out_type))
    assert got.dtype == out_type.as_numpy_dtype
    np.testing.assert_array_equal(got, reference_arg(x, axis, is_max))


def reference_scan(x, axis, exclusive, reverse, is_sum):
    """Running sums/products along ``axis`` in float64 or exactly (ints, wrapped)."""
    kind = x.dtype.kind
    xw = x.astype(object) if kind in "iu" else x.astype(np.complex128 if kind == "c" else "f8")
    xw = np.moveaxis(xw, axis, 0)
    if reverse:
        xw = xw[::-1]
    acc = np.full(xw.shape[1:], 0 if is_sum else 1, xw.dtype)
    out = np.empty_like(xw)
    for i in range(xw.shape[0]):
        if exclusive:
            out[i] = acc
        acc = acc + xw[i] if is_sum else acc * xw[i]
        if not exclusive:
            out[i] = acc
    if reverse:
        out = out[::-1]
    out = np.moveaxis(out, 0, axis)
    return _wrap(out, x.dtype) if kind in "iu" else out


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 4), min_size=1, max_size=3),
    st.sampled_from(FLOATS + INTS + COMPLEX),
    st.integers(0, 2**32 - 1),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.sampled_from([np.int32, np.int64]),
    st.data(),
)
def test_cumsum_cumprod_match_reference(shape, dtype, seed, is_sum, exclusive, reverse, tidx, data):
    rng = np.random.default_rng(seed)
    kind = np.dtype(dtype).kind
    if kind in "iu":
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    else:
        # Small integers and powers of two: every partial result is exact in float16.
        x = rng.choice([-2.0, -1.0, 0.5, 1.0, 2.0, 3.0], size=shape).astype(dtype)
        if kind == "c":
            x = x + 1j * rng.choice([-1.0, 0.0, 1.0], size=shape).astype(dtype)
        elif data.draw(st.booleans()):
            special = rng.choice([np.nan, np.inf, -np.inf], size=shape)
            x = np.where(rng.random(shape) < 0.2, special, x).astype(dtype)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    fn = mg.cumsum if is_sum else mg.cumprod
    got = build_and_run(lambda: fn(x, tidx(axis), exclusive=exclusive, reverse=reverse))
    ref = reference_scan(x, axis, exclusive, reverse, is_sum)
    assert got.dtype == x.dtype and got.shape == x.shape
    if kind in "iu":
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(got, ref.astype(x.dtype), rtol=EPS[dtype], atol=0)


# -- shape inference -------------------------------------------------------------------


@pytest.mark.parametrize(
    "in_shape, axes, keep, expected",
    [
        ([2, None, 4], [1, -1], False, [2]),
        ([2, None, 4], [1, -1], True, [2, 1, 1]),
        ([2, None, 4], 0, False, [None, 4]),
        ([2, None, 4], [], False, [2, None, 4]),
        ([2, None, 4], [None], False, [None, None]),  # one unknown axis: rank known
        ([2, None, 4], [None, None], False, [None]),
        ([2, None, 4], [None, None], True, [None, None, None]),
        ([2, None, 4], "scalar", False, [None, None]),
        ([2, None, 4], "vector", False, None),
        ([2, None, 4], "vector", True, [None, None, None]),
        (None, [0], False, None),
        (None, [0], True, None),
        ([], [], False, []),
    ],
)
def test_reduction_shapes(in_shape, axes, keep, expected):
    with mg.Graph().as_default():
        x = mg.placeholder(mg.float32, shape=in_shape)
        if axes == "scalar":
            a = mg.placeholder(mg.int32, shape=[])
        elif axes == "vector":
            a = mg.placeholder(mg.int32, shape=[None])
        elif axes and axes[0] is None:
            a = mg.placeholder(mg.int32, shape=[len(axes)])
        else:
            a = np.array(axes, np.int32)
        y = mg.reduce_sum(x, a, keepdims=keep)
    assert y.shape == mg.TensorShape(expected)


def test_arg_and_scan_shapes():
    with mg.Graph().as_default():
        x = mg.placeholder(mg.float32, shape=[2, None, 4])
        d = mg.placeholder(mg.int32, shape=[])
        assert mg.argmax(x, -1).shape == mg.TensorShape([2, None])
        assert mg.argmin(x, d).shape == mg.TensorShape([None, None])
        assert mg.argmax(mg.placeholder(mg.float32, shape=[5]), d).shape == mg.TensorShape([])
        assert mg.argmax(mg.placeholder(mg.float32), 0).shape == mg.TensorShape(None)
        assert mg.cumsum(x, d).shape == mg.TensorShape([2, None, 4])
        assert mg.cumprod(x, 2, reverse=True).shape == mg.TensorShape([2, None, 4])


def test_all_axes_of_an_unknown_rank_input():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64)
        y = mg.reduce_sum(x)
        z = mg.reduce_max(x, keepdims=True)
    v = np.arange(24.0).reshape(2, 3, 4)
    got = run([y, z], {x: v}, g)
    assert got[0] == v.sum() and got[1].shape == (1, 1, 1) and got[1].item() == 23.0


def test_no_axes_copies_and_inputs_are_not_mutated():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[2, 3])
        ys = [mg.reduce_sum(x, []), mg.reduce_max(x, [], keepdims=True)]
        zs = [mg.cumsum(x, 1, exclusive=True, reverse=True), mg.cumprod(x, 0, reverse=True)]
    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    before = v.copy()
    got = run(ys + zs, {x: v}, g)
    np.testing.assert_array_equal(v, before)
    for r in got[:2]:
        np.testing.assert_array_equal(r, v)
        assert not np.shares_memory(r, v)


def test_builder_names_and_deprecated_arguments():
    with mg.Graph().as_default():
        x = mg.constant([[1, 2]])
        assert mg.reduce_sum(x).op.name == "Sum"
        assert mg.reduce_mean(x, name="m").op.name == "m"
        assert mg.argmax(x).op.name == "ArgMax" and mg.cumsum(x).op.name == "Cumsum"
        y = mg.reduce_sum(x, reduction_indices=1, keep_dims=True)
        assert y.shape == mg.TensorShape([1, 1]) and y.op.node.attrs["keep_dims"] is True
        assert mg.argmax(x, dimension=1).shape == mg.TensorShape([1])
        with pytest.raises(ValueError, match="Cannot specify both 'reduction_indices' and"):
            mg.reduce_sum(x, axis=1, reduction_indices=1)
        with pytest.raises(ValueError, match="Cannot specify both 'keep_dims' and"):
            mg.reduce_sum(x, keepdims=True, keep_dims=True)
    root = mg.Scope.new_root_scope()
    s = mg.ops.Sum(root, mg.ops.Const(root, [[1, 2]]), 0, keep_dims=True)
    assert s.output.shape == mg.TensorShape([1, 2])


def test_class_wrappers():
    root = mg.Scope.new_root_scope()
    x = mg.ops.Const(root, [[1.0, 5.0], [3.0, 2.0]])
    am = mg.ops.ArgMax(root, x, 1, output_type=mg.int32)
    cs = mg.ops.Cumsum(root.with_op_name("cs"), x, 0, exclusive=True)
    an = mg.ops.Any(root, mg.ops.Const(root, [True, False]), 0)
    got = mg.ClientSession(root).run([am.output, cs.out, an.output])
    np.testing.assert_array_equal(got[0], [1, 0])
    np.testing.assert_array_equal(got[1], [[0.0, 0.0], [1.0, 5.0]])
    assert got[2] == True  # noqa: E712


# -- errors ----------------------------------------------------------------------------


def _raises(fn, message, error=errors.InvalidArgumentError, node=None):
    with pytest.raises(error, match=message) as e:
        fn()
    if node is not None:
        assert e.value.node_name == node
    return e.value


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: mg.reduce_sum(np.ones(2, bool), name="n"), "attr 'T' of bool"),
        (lambda: mg.reduce_max(np.ones(2, np.complex64), name="n"), "attr 'T' of complex64"),
        (lambda: mg.reduce_any(np.ones(2, np.float32), name="n"), "float32"),
        (lambda: mg.cumsum(np.ones(2, bool), name="n"), "attr 'T' of bool"),
        (lambda: mg.argmax(np.ones(2, np.complex64), name="n"), "attr 'T' of complex64"),
        (lambda: mg.argmin(np.ones(2), output_type=mg.int16, name="n"), "output_type"),
        (lambda: mg.reduce_sum(np.ones(2), np.array([0.0]), name="n"), "Tidx"),
        (
            lambda: mg.reduce_sum(np.ones((2, 3)), [2], name="n"),
            r"Invalid reduction dimension \(2 for input with 2 dimension\(s\)",
        ),
        (
            lambda: mg.reduce_mean(np.ones((2, 3)), -3, name="n"),
            r"Invalid reduction dimension \(-3 for input with 2 dimension\(s\)",
        ),
        (
            lambda: mg.reduce_prod(np.float32(1), 0, name="n"),
            r"Invalid reduction dimension \(0 for input with 0 dimension\(s\)",
        ),
        (
            lambda: mg.reduce_sum(np.ones((2, 3)), [1, -1], name="n"),
            "Invalid reduction arguments: Axes contains duplicate dimension: 1",
        ),
        (
            lambda: mg.reduce_all(np.ones((2, 3), bool), [[0]], name="n"),
            "Shape must be at most rank 1 but is rank 2",
        ),
        (
            lambda: mg.argmax(np.ones((2, 3)), 2, name="n"),
            r"Expected dimension in the range \[-2, 2\), but got 2",
        ),
        (
            lambda: mg.argmin(np.float32(1), 0, name="n"),
            r"Expected dimension in the range \[0, 0\), but got 0",
        ),
        (
            lambda: mg.argmax(np.ones((0, 3)), 0, name="n"),
            r"Reduction axis 0 is empty in shape \[0,3\]",
        ),
        (lambda: mg.argmax(np.ones((2, 3)), [0], name="n"), "Shape must be rank 0 but is rank 1"),
        (
            lambda: mg.cumsum(np.ones((2, 3)), 2, name="n"),
            r"ScanOp: Expected scan axis in the range \[-2, 2\), but got 2",
        ),
        (
            lambda: mg.cumprod(np.ones((2, 3)), -3, name="n"),
            r"ScanOp: Expected scan axis in the range \[-2, 2\), but got -1",  # TF's value
        ),
        (lambda: mg.cumsum(np.ones((2, 3)), [0], name="n"), r"ScanOp: axis must be a scalar"),
        (
            lambda: mg.cumsum(np.float32(1), 0, name="n"),
            r"ScanOp: Expected scan axis in the range \[0, 0\), but got 0",
        ),
    ],
)
def test_build_time_errors_name_the_node(build, message):
    with mg.Graph().as_default():
        _raises(build, message, node="n")


@pytest.mark.parametrize(
    "fn, x, axis, message",
    [
        (mg.reduce_sum, np.ones((2, 3)), [0, 5], r"Invalid reduction dimension \(5 for input"),
        (mg.reduce_max, np.ones((2, 3)), [0, 0, 5], "Axes contains duplicate dimension: 0"),
        (mg.reduce_mean, np.ones((2, 3)), [1, -1], "Axes contains duplicate dimension: 1"),
        (mg.argmax, np.ones((2, 3)), -3, r"Expected dimension in the range \[-2, 2\), but got -3"),
        (mg.argmin, np.ones((2, 0)), -1, r"Reduction axis -1 is empty in shape \[2,0\]"),
        (
            mg.argmax,
            np.ones((2, 3)),
            [1],
            r"dim must be a scalar, but received tensor of shape: \[1\]",
        ),
        (mg.cumsum, np.ones((2, 3)), [1], r"ScanOp: axis must be a scalar, not \[1\]"),
        (
            mg.cumprod,
            np.ones(3),
            1,
            r"ScanOp: Expected scan axis in the range \[-1, 1\), but got 1",
        ),
    ],
)
def test_run_time_errors_name_the_node(fn, x, axis, message):
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.float64)  # unknown rank: nothing to check at build time
        a = mg.placeholder(mg.int32)
        y = fn(p, a, name="n")
    with mg.Session(g) as sess:
        _raises(lambda: sess.run(y, {p: x, a: np.array(axis, np.int32)}), message, node="n")


@pytest.mark.parametrize("rows", [1, 4096])  # 4096 rows of 4: a fold over the short axis
def test_float16_sums_over_a_short_axis_accumulate_in_float32(rows):
    # 2048 + 1 + 1 + 1 is 2048 added in float16 (its spacing there is 2), 2051 in float32,
    # which rounds to 2052: docs/semantics.md, float16 Sum/Mean accumulate in float32.
    x = np.tile(np.array([2048, 1, 1, 1], np.float16), (rows, 1))
    got = build_and_run(lambda: [mg.reduce_sum(x, 1), mg.reduce_mean(x, 1)])
    np.testing.assert_array_equal(got[0], np.full(rows, 2052, np.float16))
    np.testing.assert_array_equal(got[1], np.full(rows, np.float16(2051 / 4), np.float16))
