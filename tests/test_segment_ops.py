"""Segment reductions (Segment*, UnsortedSegment*, SparseSegment*) against TensorFlow's
documented examples and against loop references written here (TensorFlow's fold rules:
rows in order, a Max/Min row replacing the value so far unless it is smaller/larger)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigraph as mg
from minigraph import errors

pytestmark = pytest.mark.usefixtures("any_device")  # CPU and (simulated) GPU


def run(build, *inputs, feed=True):
    """Build ``build(*inputs)`` with placeholders for the array inputs (or constants) and run."""
    g = mg.Graph()
    feeds = {}
    with g.as_default():
        args = []
        for x in inputs:
            if feed and isinstance(x, np.ndarray):
                p = mg.placeholder(mg.as_dtype(x.dtype), shape=x.shape)
                feeds[p] = x
                args.append(p)
            else:
                args.append(x)
        y = build(*args)
    return mg.Session(g).run(y, feed_dict=feeds)


# -- TensorFlow's documented examples --------------------------------------------------------

C = [[1, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]]


@pytest.mark.parametrize(
    "builder,expected",
    [
        (mg.segment_sum, [[5, 5, 5, 5], [5, 6, 7, 8]]),
        (mg.segment_mean, [[2, 2, 2, 2], [5, 6, 7, 8]]),
        (mg.segment_max, [[4, 3, 3, 4], [5, 6, 7, 8]]),
        (mg.segment_min, [[1, 2, 2, 1], [5, 6, 7, 8]]),
        (mg.segment_prod, [[4, 6, 6, 4], [5, 6, 7, 8]]),
    ],
)
def test_segment_doc_examples(builder, expected):
    out = run(builder, np.array(C, np.int32), np.array([0, 0, 1], np.int32))
    np.testing.assert_array_equal(out, expected)
    assert out.dtype == np.int32


def test_segment_doc_float_examples():
    # tf.math.segment_sum / segment_max docs: 1-D data with a gap.
    data = np.array([5.0, 1.0, 7.0, 2.0, 3.0, 4.0], np.float32)
    ids = np.array([0, 0, 0, 1, 2, 2], np.int32)
    np.testing.assert_array_equal(run(mg.segment_sum, data, ids), [13, 2, 7])
    np.testing.assert_array_equal(run(mg.segment_max, data, ids), [7, 2, 4])
    np.testing.assert_allclose(run(mg.segment_mean, data, ids), [13 / 3, 2, 3.5], rtol=1e-6)
    # Empty segments get 0 (1 for Prod), not -inf: TensorFlow's sorted kernels.
    gaps = np.array([0, 0, 3, 3], np.int32)
    x = np.array([1.0, 2, 3, 4], np.float32)
    np.testing.assert_array_equal(run(mg.segment_max, x, gaps), [2, 0, 0, 4])
    np.testing.assert_array_equal(run(mg.segment_prod, x, gaps), [2, 1, 1, 12])


@pytest.mark.parametrize(
    "builder,expected",
    [
        (mg.unsorted_segment_sum, [[5, 5, 5, 5], [5, 6, 7, 8]]),
        (mg.unsorted_segment_max, [[4, 3, 3, 4], [5, 6, 7, 8]]),
        (mg.unsorted_segment_min, [[1, 2, 2, 1], [5, 6, 7, 8]]),
        (mg.unsorted_segment_prod, [[4, 6, 6, 4], [5, 6, 7, 8]]),
    ],
)
def test_unsorted_segment_doc_examples(builder, expected):
    c = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [4, 3, 2, 1]], np.int32)
    out = run(lambda d, i: builder(d, i, num_segments=2), c, np.array([0, 1, 0], np.int32))
    np.testing.assert_array_equal(out, expected)


def test_unsorted_segment_identities_and_negative_ids():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    ids = np.array([0, -1, 2], np.int32)  # -1 is dropped, as TensorFlow documents
    lo, hi = np.finfo(np.float32).min, np.finfo(np.float32).max
    np.testing.assert_array_equal(run(mg.unsorted_segment_sum, x, ids, 4), [1, 0, 3, 0])
    np.testing.assert_array_equal(run(mg.unsorted_segment_prod, x, ids, 4), [1, 1, 3, 1])
    np.testing.assert_array_equal(run(mg.unsorted_segment_max, x, ids, 4), [1, lo, 3, lo])
    np.testing.assert_array_equal(run(mg.unsorted_segment_min, x, ids, 4), [1, hi, 3, hi])
    ints = np.array([5, 6], np.int8)
    np.testing.assert_array_equal(
        run(mg.unsorted_segment_max, ints, np.array([0, 0], np.int32), 2), [6, -128]
    )
    # A segment of only -inf gives the lowest float: the fold starts there (TF 2.21).
    inf = np.array([-np.inf, np.inf], np.float32)
    one = np.array([0, 1], np.int32)
    np.testing.assert_array_equal(run(mg.unsorted_segment_max, inf, one, 2), [lo, np.inf])
    np.testing.assert_array_equal(run(mg.unsorted_segment_min, inf, one, 2), [-np.inf, hi])


def test_sparse_segment_doc_examples():
    c = np.array([[1, 2, 3, 4], [-1, -2, -3, -4], [5, 6, 7, 8]], np.float32)
    i32 = lambda *v: np.array(v, np.int32)  # noqa: E731
    np.testing.assert_array_equal(run(mg.sparse_segment_sum, c, i32(0, 1), i32(0, 0)), [[0] * 4])
    np.testing.assert_array_equal(
        run(mg.sparse_segment_sum, c, i32(0, 1), i32(0, 1)), [[1, 2, 3, 4], [-1, -2, -3, -4]]
    )
    np.testing.assert_array_equal(
        run(mg.sparse_segment_sum, c, i32(0, 2), i32(0, 0)), [[6, 8, 10, 12]]
    )
    with_ns = run(lambda d, i, s: mg.sparse_segment_sum(d, i, s, num_segments=4), c,
                  i32(0, 1), i32(0, 2))  # fmt: skip
    np.testing.assert_array_equal(with_ns, [[1, 2, 3, 4], [0] * 4, [-1, -2, -3, -4], [0] * 4])
    np.testing.assert_array_equal(
        run(mg.sparse_segment_mean, c, i32(0, 1, 2), i32(0, 0, 1)), [[0] * 4, [5, 6, 7, 8]]
    )
    np.testing.assert_allclose(
        run(mg.sparse_segment_sqrt_n, c, i32(0, 2), i32(0, 0)),
        [[6 / math.sqrt(2), 8 / math.sqrt(2), 10 / math.sqrt(2), 12 / math.sqrt(2)]],
        rtol=1e-6,
    )


def test_sparse_builder_picks_with_num_segments():
    g = mg.Graph()
    with g.as_default():
        a = mg.sparse_segment_mean([[1.0, 2.0]], [0], [0])
        b = mg.sparse_segment_mean([[1.0, 2.0]], [0], [0], num_segments=3, name="m")
    assert a.op.type == "SparseSegmentMean"
    assert b.op.type == "SparseSegmentMeanWithNumSegments" and b.op.name == "m"
    assert b.shape == mg.TensorShape([3, 2])


# -- NaN, signed zeros, integer means ----------------------------------------------------------


def test_max_min_nan_and_zero_order():
    x = np.array([1, np.nan, np.nan, 1], np.float32)
    ids = np.array([0, 0, 1, 1], np.int32)
    for builder in (mg.segment_max, mg.segment_min):
        np.testing.assert_array_equal(run(builder, x, ids), [np.nan, 1])
    for builder in (mg.unsorted_segment_max, mg.unsorted_segment_min):
        np.testing.assert_array_equal(run(builder, x, ids, 2), [np.nan, 1])
    z = np.array([0.0, -0.0, -0.0, 0.0], np.float32)  # of 0.0 and -0.0 the later wins
    for builder in (mg.segment_max, mg.segment_min):
        assert np.signbit(run(builder, z, ids)).tolist() == [True, False]


def test_integer_mean_truncates():
    x = np.array([-7, 0, 5, -3, -4, 7], np.int32)
    ids = np.array([0, 0, 1, 2, 2, 2], np.int32)
    np.testing.assert_array_equal(run(mg.segment_mean, x, ids), [-3, 5, 0])


# -- Property tests against loop references -----------------------------------------------------


def fold(rows, ufunc, start=None):
    """TensorFlow's CPU fold of ``rows`` (a list of arrays) in order, from ``start``."""
    acc = start
    for r in rows:
        if acc is None:
            acc = r.copy()
        elif ufunc == "maximum":
            acc = np.where(r < acc, acc, r)
        elif ufunc == "minimum":
            acc = np.where(r > acc, acc, r)
        else:
            acc = getattr(np, ufunc)(acc, r)
    return acc


OPS = {"sum": "add", "mean": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}
DTYPES = [np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8, np.complex64]


def values(rng, shape, dtype, special):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -5, 6, shape).astype(dtype)
    x = rng.uniform(-2, 2, shape)
    if dtype.kind == "c":
        x = x + 1j * rng.uniform(-2, 2, shape)
    x = x.astype(dtype)
    if special and dtype.kind == "f" and x.size:
        flat = x.reshape(-1)
        picks = rng.integers(0, x.size, 3)
        flat[picks] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0], 3)
    return x


def check_close(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind in "fc":
        tol = {2: 1e-2, 4: 1e-5, 8: 1e-12}[np.dtype(want.real.dtype).itemsize]
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(sorted(OPS)),
    st.sampled_from(DTYPES),
    st.integers(0, 12),
    st.lists(st.integers(0, 3), min_size=0, max_size=2),
    st.integers(0, 2**32 - 1),
    st.booleans(),
)
def test_segment_matches_reference(kind, dtype, n, inner, seed, special):
    if kind in ("max", "min") and np.dtype(dtype).kind == "c":
        return
    rng = np.random.default_rng(seed)
    data = values(rng, (n, *inner), dtype, special)
    ids = np.sort(rng.integers(0, 5, n)).astype(rng.choice([np.int32, np.int64]))
    rows = int(ids[-1]) + 1 if n else 0
    want = np.full((rows, *inner), 1 if kind == "prod" else 0, dtype)
    with np.errstate(all="ignore"):
        for s in range(rows):
            members = [data[j] for j in range(n) if ids[j] == s]
            if not members:
                continue
            r = fold(members, OPS[kind])
            if kind == "mean":
                count = len(members)
                if np.dtype(dtype).kind in "iu":
                    r = np.trunc(r.astype(np.float64) / count).astype(dtype)
                else:
                    r = (r / np.array(count, dtype)).astype(dtype)
            want[s] = r
    got = run(getattr(mg, f"segment_{kind}"), data, ids)
    check_close(got, want)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["sum", "prod", "max", "min"]),
    st.sampled_from(DTYPES),
    st.lists(st.integers(0, 4), min_size=0, max_size=2),
    st.lists(st.integers(0, 3), min_size=0, max_size=2),
    st.integers(0, 5),
    st.integers(0, 2**32 - 1),
    st.booleans(),
)
def test_unsorted_segment_matches_reference(kind, dtype, outer, inner, n_seg, seed, special):
    if kind in ("max", "min") and np.dtype(dtype).kind == "c":
        return
    rng = np.random.default_rng(seed)
    data = values(rng, (*outer, *inner), dtype, special)
    ids = rng.integers(-1, max(n_seg, 1), outer).astype(rng.choice([np.int32, np.int64]))
    if n_seg == 0:
        ids = np.minimum(ids, -1)  # every id dropped: nothing can be out of range
    flat_ids, flat_data = ids.reshape(-1), data.reshape((ids.size, *inner))
    dt = np.dtype(dtype)
    if kind in ("max", "min"):
        info = np.finfo(dt) if dt.kind == "f" else np.iinfo(dt)
        init = info.min if kind == "max" else info.max
    else:
        init = 0 if kind == "sum" else 1
    want = np.full((n_seg, *inner), init, dtype)
    with np.errstate(all="ignore"):
        for s in range(n_seg):
            members = [flat_data[j] for j in range(flat_ids.size) if flat_ids[j] == s]
            want[s] = fold(members, OPS[kind], start=np.full(inner, init, dtype))
    builder = getattr(mg, f"unsorted_segment_{kind}")
    got = run(lambda d, i: builder(d, i, np.int32(n_seg)), data, ids)
    check_close(got, want)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["sum", "mean", "sqrt_n"]),
    st.sampled_from([np.float32, np.float64, np.float16, np.int32]),
    st.integers(1, 6),
    st.integers(0, 40),
    st.lists(st.integers(0, 3), min_size=0, max_size=2),
    st.integers(0, 2**32 - 1),
    st.booleans(),
)
def test_sparse_segment_matches_reference(kind, dtype, n_rows, n, inner, seed, with_ns):
    if kind != "sum" and dtype == np.int32:
        return
    rng = np.random.default_rng(seed)
    data = values(rng, (n_rows, *inner), dtype, special=False)
    indices = rng.integers(0, n_rows, n).astype(np.int32)
    ids = np.sort(rng.integers(0, 4, n)).astype(np.int64)
    rows = (int(ids[-1]) + 1 if n else 0) + (2 if with_ns else 0)
    acc = np.float32 if dtype == np.float16 else dtype
    want = np.zeros((rows, *inner), acc)
    for s in range(rows):
        members = [data[indices[j]].astype(acc) for j in range(n) if ids[j] == s]
        if members:
            total = fold(members, "add")
            scale = {"sum": 1, "mean": len(members), "sqrt_n": math.sqrt(len(members))}[kind]
            want[s] = total / np.array(scale, acc) if kind != "sum" else total
    want = want.astype(dtype)
    builder = getattr(mg, f"sparse_segment_{kind}")
    if with_ns:
        got = run(lambda d, i, s: builder(d, i, s, num_segments=rows), data, indices, ids)
    else:
        got = run(builder, data, indices, ids)
    check_close(got, want)


def test_long_segments_keep_tensorflow_block_order():
    # 8-row blocks summed on their own (TF's CPU order): sums of 1e8 and 1s show the order.
    data = np.array([[1e8], [1.0]], np.float32)
    indices = np.array([0] + [1] * 16, np.int32)
    ids = np.zeros(17, np.int32)
    got = run(mg.sparse_segment_sum, data, indices, ids)
    # First 9 rows: 1e8 + 8 ones (each lost to rounding), then a block of 8 ones = 8.
    np.testing.assert_array_equal(got, [[np.float32(1e8) + np.float32(8)]])


# -- Shapes -------------------------------------------------------------------------------------


def test_shape_inference():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None, 3, 2])
        i = mg.placeholder(mg.int32, shape=[None])
        assert mg.segment_sum(x, i).shape == mg.TensorShape([None, 3, 2])
        assert mg.segment_max(x, [0, 0, 2, 2]).shape == mg.TensorShape([3, 3, 2])
        assert mg.unsorted_segment_sum(x, i, 7).shape == mg.TensorShape([7, 3, 2])
        i2 = mg.placeholder(mg.int64, shape=[None, 3])
        assert mg.unsorted_segment_min(x, i2, 4).shape == mg.TensorShape([4, 2])
        n = mg.placeholder(mg.int32, shape=[])
        assert mg.unsorted_segment_prod(x, i, n).shape == mg.TensorShape([None, 3, 2])
        u = mg.placeholder(mg.int32)
        assert mg.unsorted_segment_sum(x, u, 4).shape == mg.TensorShape(None)
        assert mg.sparse_segment_sum(x, i, i).shape == mg.TensorShape([None, 3, 2])
        assert mg.sparse_segment_sqrt_n(x, [0, 1], [0, 4]).shape == mg.TensorShape([5, 3, 2])
        unknown = mg.placeholder(mg.float32)
        assert mg.segment_mean(unknown, i).shape == mg.TensorShape(None)


# -- Errors -------------------------------------------------------------------------------------

F = np.float32
ERRORS = [
    (mg.segment_sum, (np.float32(1), [0]), "input must be at least rank 1|at least rank 1"),
    (mg.segment_sum, (np.ones(4, F), [[0, 0, 1, 1]]), "rank 1|should be a vector"),
    (mg.segment_mean, (np.ones(4, F), [0, 0, 1]), "must be equal|same size as dimension 0"),
    (mg.segment_max, (np.ones(4, F), [0, 2, 1, 3]), "segment ids are not increasing"),
    (mg.segment_min, (np.ones(4, F), [-1, 0, 0, 1]), "Segment id -1 out of range [0, 2)"),
    (mg.segment_prod, (np.ones(2, F), [-3, -3]), "segment ids must be >= 0"),
    (mg.segment_sum, (np.ones(4, F), [0, 5, 6, 2]), "Segment id 5 out of range [0, 3)"),
    (mg.segment_sum, (np.ones(2, np.bool_), [0, 0]), "not in the list of allowed values"),
    (mg.segment_max, (np.ones(2, np.complex64), [0, 0]), "not in the list of allowed values"),
    (mg.unsorted_segment_sum, (np.ones(3, F), [0, 2, 1], 2), "segment_ids[1] = 2 is out of range"),
    (mg.unsorted_segment_max, (np.ones((2, 2), F), [[0, 1], [7, 1]], 2), "segment_ids[1,0] = 7"),
    (mg.unsorted_segment_min, (np.ones(3, F), [0, 0, 1], -1), "must be non-negative|negative"),
    (mg.unsorted_segment_prod, (np.ones(3, F), [0, 0, 1], [2]), "rank 0|should be a scalar"),
    (mg.unsorted_segment_sum, (np.ones(2, F), [0, 1, 1], 3), "does not start with|must be equal"),
    (mg.unsorted_segment_prod, (np.ones(2, F), np.array([0, 1], np.int16), 3), "allowed values"),
    (mg.sparse_segment_sum, (np.ones((3, 2), F), [0, 3], [0, 0]), "indices[1] == 3 out of range"),
    (mg.sparse_segment_mean, (np.ones((3, 2), F), [0, -1], [0, 0]), "indices[1] == -1"),
    (mg.sparse_segment_sqrt_n, (np.ones((3, 2), F), [0, 3, 2], [1, 1, 0]), "not increasing"),
    (mg.sparse_segment_sum, (np.ones((3, 2), F), [0, 0, 0], [0, 0]), "must be equal|same size"),
    (mg.sparse_segment_sum, (np.ones((3, 2), F), [[0, 0]], [[0, 0]]), "rank 1|should be a vector"),
    (mg.sparse_segment_mean, (np.ones((3, 2), np.int32), [0], [0]), "allowed values"),
]


@pytest.mark.parametrize("feed", [False, True], ids=["const", "fed"])
@pytest.mark.parametrize("builder,args,message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors_name_the_node(builder, args, message, feed):
    args = tuple(np.asarray(a) if isinstance(a, list) else a for a in args)
    with pytest.raises(errors.InvalidArgumentError) as info:
        run(lambda *a: builder(*a, name="seg"), *args, feed=feed)
    assert info.value.node_name.startswith("seg")
    assert any(m in str(info.value) for m in message.split("|")), str(info.value)


def test_with_num_segments_too_few():
    with pytest.raises(errors.InvalidArgumentError, match="segment ids must be < num_segments"):
        run(lambda d, i, s: mg.sparse_segment_sum(d, i, s, num_segments=2, name="seg"),
            np.ones((3, 2), F), np.array([0, 1], np.int32), np.array([0, 2], np.int32))  # fmt: skip


def test_huge_num_segments_is_resource_exhausted():
    n = np.int64(2**40)
    with pytest.raises(errors.ResourceExhaustedError) as info:
        run(lambda d, i, k: mg.unsorted_segment_sum(d, i, k, name="big"),
            np.ones(2, F), np.array([0, 1], np.int64), n)  # fmt: skip
    assert info.value.node_name == "big"


@pytest.mark.parametrize("feed", [False, True])
@pytest.mark.parametrize("builder", [mg.sparse_segment_sum, mg.sparse_segment_mean])
def test_sparse_output_overflow_is_reported_before_a_bad_index(builder, feed):
    # TensorFlow's testSegmentsInvalid8: the output [2**62, 4] overflows int64 before the
    # bad index 2**62 - 1 is read ("Encountered overflow when multiplying"); past int64 is
    # a ResourceExhaustedError here (semantics.md, huge outputs), in TensorFlow's words.
    big = np.array([2**62 - 1], np.int64)
    with pytest.raises(errors.ResourceExhaustedError) as info:
        run(lambda d, i, s: builder(d, i, s, name="seg"), np.ones((10, 4), F), big, big,
            feed=feed)  # fmt: skip
    assert "Encountered overflow when multiplying 4611686018427387904 with 4" in str(info.value)
    assert info.value.node_name == "seg"
    # Under the cap but too large to allocate, also before the index.
    ids = np.array([2**40], np.int64)
    with pytest.raises(errors.ResourceExhaustedError, match="OOM when allocating"):
        run(lambda d, i, s: builder(d, i, s), np.ones((10, 4), F), big, ids, feed=True)
    # A bad index with an output that fits is still the index's error.
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[0\] == 10 out of range"):
        run(builder, np.ones((10, 4), F), np.array([10], np.int64), ids - 2**40 + 3, feed=feed)


def test_inputs_are_not_mutated():
    data = np.arange(12.0, dtype=np.float32).reshape(6, 2)
    ids = np.array([3, 0, 3, -1, 1, 0], np.int32)
    before = data.copy(), ids.copy()
    for builder in (mg.unsorted_segment_max, mg.unsorted_segment_sum):
        run(builder, data, ids, np.int32(4))
    run(mg.segment_min, data, np.sort(np.abs(ids)))
    np.testing.assert_array_equal(data, before[0])
    np.testing.assert_array_equal(ids, before[1])


def test_chunked_cpu_folds_keep_row_order(monkeypatch):
    from minigraph.ops import segment_reduce

    rng = np.random.default_rng(3)
    data = rng.standard_normal((40, 3)).astype(np.float32)
    ids = np.sort(rng.integers(0, 4, 40)).astype(np.int32)
    whole = run(mg.segment_sum, data, ids), run(mg.sparse_segment_sum, data, np.arange(40), ids)
    monkeypatch.setattr(segment_reduce, "_AT_CHUNK", 4)  # a couple of rows per ufunc.at call
    chunked = run(mg.segment_sum, data, ids), run(mg.sparse_segment_sum, data, np.arange(40), ids)
    for a, b in zip(whole, chunked):
        np.testing.assert_array_equal(a, b)


def test_float_sums_are_deterministic():
    rng = np.random.default_rng(5)
    data = rng.standard_normal((3000, 2)).astype(np.float32) * 1e3
    ids = rng.integers(0, 7, 3000).astype(np.int32)
    first = run(mg.unsorted_segment_sum, data, ids, np.int32(7))
    for _ in range(3):
        assert run(mg.unsorted_segment_sum, data, ids, np.int32(7)).tobytes() == first.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64])
def test_max_min_sorting_fallback_matches_atomics(monkeypatch, dtype):
    # Where CuPy has no atomic for a dtype or size, Max/Min fold by sorting instead.
    from minigraph.ops import segment_reduce

    rng = np.random.default_rng(7)
    data = values(rng, (30, 3), dtype, special=True)
    if np.dtype(dtype).kind == "f":
        data[rng.random(data.shape) < 0.2] = rng.choice([np.nan, 0.0, -0.0], 1)
    ids = rng.integers(-1, 5, 30).astype(np.int32)
    sorted_ids = np.sort(np.abs(ids))
    builds = [
        (mg.unsorted_segment_max, (data, ids, np.int32(6))),
        (mg.unsorted_segment_min, (data, ids, np.int32(6))),
        (mg.segment_max, (data, sorted_ids)),
        (mg.segment_min, (data, sorted_ids)),
    ]
    atomics = [run(b, *a) for b, a in builds]
    monkeypatch.setattr(segment_reduce, "_extremum_at", lambda *a: None)
    for (b, a), want in zip(builds, atomics):
        got = run(b, *a)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
