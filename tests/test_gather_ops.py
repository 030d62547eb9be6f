"""GatherV2's batch_dims, gather_nd's batch_dims, OneHot, Where and Unique, against
TensorFlow's documented examples and NumPy references computed here."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from op_helpers import build_fails, fails, run, same

import minigraph as mg
from minigraph import errors, ops

pytestmark = pytest.mark.usefixtures("any_device")  # CPU and (simulated) GPU

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_, np.complex64]


# -- GatherV2 batch_dims ------------------------------------------------------------------------


def gather_reference(params, indices, axis, batch_dims):
    """tf.gather with batch_dims, written as the loop over batch elements its docs give."""
    if batch_dims == 0:
        return np.take(params, indices, axis=axis)
    shape = params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1 :]
    if len(params) == 0:
        return np.empty(shape, params.dtype)
    return np.stack(
        [
            gather_reference(p, i, axis - 1, batch_dims - 1)
            for p, i in zip(params, indices, strict=True)
        ]
    ).reshape(shape)


def test_gather_batch_dims_doc_examples():
    # tf.gather's documented batch_dims examples (values seen on TF 2.21).
    same(
        run(
            lambda p, i: mg.gather(p, i, batch_dims=1),
            np.array([[1, 2, 3], [4, 5, 6]], np.int32),
            np.array([[2, 0], [1, 1]], np.int32),
        ),
        np.array([[3, 1], [5, 5]], np.int32),
    )
    p = np.arange(24).reshape(2, 3, 4)
    same(
        run(lambda x, i: mg.gather(x, i, axis=2, batch_dims=1), p, np.array([[3, 0], [1, 1]])),
        np.array([[[3, 0], [7, 4], [11, 8]], [[13, 13], [17, 17], [21, 21]]]),
    )
    same(
        run(lambda x, i: mg.gather(x, i, axis=1, batch_dims=-1), p, np.array([[2, 0], [1, 1]])),
        np.array([[[8, 9, 10, 11], [0, 1, 2, 3]], [[16, 17, 18, 19], [16, 17, 18, 19]]]),
    )


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_gather_batch_dims_matches_reference(data):
    b = data.draw(st.integers(0, 2))
    batch = data.draw(st.lists(st.integers(0, 3), min_size=b, max_size=b))
    rest = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
    axis = data.draw(st.integers(b, b + len(rest) - 1))
    dtype = data.draw(st.sampled_from(DTYPES))
    params = data.draw(hnp.arrays(dtype, batch + rest))
    limit = params.shape[axis]
    inner = data.draw(st.lists(st.integers(0, 3), max_size=2))
    itype = data.draw(st.sampled_from([np.int32, np.int64]))
    if limit == 0 and np.prod(batch + inner, dtype=int):
        return  # no valid index
    indices = data.draw(
        hnp.arrays(itype, batch + inner, elements=st.integers(0, max(limit - 1, 0)))
    )
    want = gather_reference(params, indices, axis, b)
    neg_axis = data.draw(st.booleans())
    neg_b = data.draw(st.booleans()) and b < indices.ndim
    got = run(
        lambda p, i: mg.gather(
            p,
            i,
            axis=axis - params.ndim if neg_axis else axis,
            batch_dims=b - indices.ndim if neg_b else b,
        ),
        params,
        indices,
    )
    same(got, want)


def test_gather_batch_dims_errors():
    p, i = np.arange(6).reshape(2, 3), np.array([[2, 0], [1, 1]], np.int32)
    scope = mg.Scope.new_root_scope
    build_fails(
        lambda: ops.GatherV2(scope(), p, i, 0, batch_dims=1),
        r"batch_dims \(1\) must be less than or equal to axis \(0\)",
    )
    build_fails(
        lambda: ops.GatherV2(scope(), p, i, 1, batch_dims=3),
        r"Expected batch_dims in the range \[-2, 2\], but got 3",
    )
    build_fails(
        lambda: mg.gather(p, np.zeros((3, 2), np.int32), axis=1, batch_dims=1),
        r"params.shape\[0\]: 2 should be equal to indices.shape\[0\]: 3",
    )
    build_fails(
        lambda: mg.gather(p, [[0], [0]], axis=1, batch_dims=2),
        r"batch_dims \(2\) must be less than rank\(params\) \(2\)",
    )
    e = fails(
        lambda x, y: mg.gather(x, y, axis=1, batch_dims=1),
        p,
        np.array([[2, 0], [1, 5]], np.int32),
        match=r"indices\[1,1\] = 5 is not in \[0, 3\)",
    )
    assert e.op_type == "GatherV2"
    fails(
        lambda x, y: mg.gather(x, y, axis=1, batch_dims=1),
        p,
        np.zeros((3, 2), np.int32),
        match=r"params.shape\[0\]: 2 should be equal to indices.shape\[0\]: 3",
        known=False,
    )


@pytest.mark.parametrize("index_dtype", [np.int16, np.int32, np.int64])
def test_gather_takes_int16_int32_and_int64_indices(index_dtype):
    # TensorFlow's GatherV2 declares Tindices: {int16, int32, int64}.
    p = np.arange(12, dtype=np.float32).reshape(3, 4)
    i = np.array([[2, 0], [1, 1]], index_dtype)
    same(run(lambda x, y: mg.gather(x, y, axis=1), p, i), np.take(p, i, axis=1))
    same(
        run(lambda x, y: mg.gather(x, y, axis=1, batch_dims=1), p[:2], i),
        gather_reference(p[:2], i, 1, 1),
    )
    e = fails(lambda x, y: mg.gather(x, y), p, np.array([3], index_dtype), match=r"\[0, 3\)")
    assert e.op_type == "GatherV2"
    build_fails(lambda: mg.gather(p, np.array([0], np.uint8)), "int16, int32, int64")


def test_gather_with_an_unknown_axis_keeps_the_rank():
    """TensorFlow infers rank(params) + rank(indices) - 1 - batch_dims when the axis is
    fed; the batch dims are known too (the axis is at least batch_dims)."""
    p = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    i = np.array([[1, 0, 1], [0, 0, 1]], np.int32)
    g = mg.Graph()
    with g.as_default():
        axis = mg.placeholder(mg.int32, shape=[], name="axis")
        y = mg.gather(p, i, axis=axis)
        yb = mg.gather(p, i, axis=axis, batch_dims=1)
        yn = mg.gather(p, i, axis=axis, batch_dims=-1)
        unknown = mg.gather(mg.placeholder(mg.float32), i, axis=axis)
    assert y.shape.as_list() == [None] * 4
    assert yb.shape.as_list() == [2, None, None]
    assert yn.shape.rank == 3 - 1 + 2 - 1
    assert unknown.shape.rank is None
    sess = mg.Session(g)
    for a in (0, 1, 2):
        got = sess.run(y, {axis: a})
        same(got, np.take(p, i, axis=a))
        assert y.shape.is_compatible_with(got.shape)
    for a in (1, 2):
        same(sess.run(yb, {axis: a}), gather_reference(p, i, a, 1))
    build_fails(lambda: mg.gather(p, i, axis=mg.placeholder(mg.int32), batch_dims=3), "batch_dims")


def test_gather_batch_dims_none_is_zero():
    # tf.gather reads batch_dims=None as 0 (and the axis then defaults to 0).
    p = np.arange(6, dtype=np.int32).reshape(3, 2)
    i = np.array([2, 0], np.int32)
    same(run(lambda x, y: mg.gather(x, y, batch_dims=None), p, i), np.take(p, i, axis=0))
    same(run(lambda x, y: mg.gather(x, y, axis=1, batch_dims=None), p, i[1:]), p[:, [0]])


# -- gather_nd batch_dims ------------------------------------------------------------------------


def test_gather_nd_batch_dims_doc_examples():
    # tf.gather_nd's documented batch_dims examples (values seen on TF 2.21).
    same(
        run(
            lambda p, i: mg.gather_nd(p, i, batch_dims=1),
            np.array([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], np.int32),
            np.array([[1], [0]], np.int32),
        ),
        np.array([[2, 3], [4, 5]], np.int32),
    )
    same(
        run(
            lambda p, i: mg.gather_nd(p, i, batch_dims=1),
            np.arange(24).reshape(2, 3, 4),
            np.array([[[1, 2]], [[0, 3]]]),
        ),
        np.array([[6], [15]]),
    )


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_gather_nd_batch_dims_matches_reference(data):
    b = data.draw(st.integers(1, 2))
    batch = data.draw(st.lists(st.integers(1, 3), min_size=b, max_size=b))
    rest = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    params = data.draw(hnp.arrays(np.float32, batch + rest))
    depth = data.draw(st.integers(1, len(rest)))
    inner = data.draw(st.lists(st.integers(0, 2), max_size=2))
    rows = [
        data.draw(hnp.arrays(np.int32, batch + inner, elements=st.integers(0, rest[k] - 1)))
        for k in range(depth)
    ]
    indices = np.stack(rows, axis=-1)
    # Reference: for each batch element, index rows into its own slice.
    flat_p = params.reshape((-1,) + tuple(rest))
    flat_i = indices.reshape((flat_p.shape[0], -1, depth))
    want = np.stack([fp[tuple(fi.T)] for fp, fi in zip(flat_p, flat_i)])
    want = want.reshape(tuple(batch + inner) + tuple(rest[depth:]))
    got = run(lambda p, i: mg.gather_nd(p, i, batch_dims=b), params, indices)
    same(got, want)


def test_gather_nd_batch_dims_errors():
    p = np.arange(24).reshape(2, 3, 4)
    build_fails(
        lambda: mg.gather_nd(p, np.zeros((3, 1), np.int32), batch_dims=1),
        r"params.shape\[0\]: 2 should be equal to indices.shape\[0\]: 3",
    )
    build_fails(lambda: mg.gather_nd(p, np.zeros((2, 1), np.int32), batch_dims=2), "batch_dims = 2")
    fails(
        lambda x, i: mg.gather_nd(x, i, batch_dims=1),
        p,
        np.array([[1], [5]], np.int32),
        match=r"does not index into param shape",
    )


# -- OneHot -------------------------------------------------------------------------------------


def one_hot_reference(indices, depth, on, off, axis):
    out = np.where(indices[..., None] == np.arange(depth), on, off).astype(np.asarray(on).dtype)
    return np.moveaxis(out, -1, axis) if axis != -1 else out


def test_one_hot_doc_examples():
    # tf.one_hot's documented examples.
    same(
        run(lambda i: mg.one_hot(i, 3), np.array([0, 1, 2], np.int32)),
        np.eye(3, dtype=np.float32),
    )
    same(
        run(
            lambda i: mg.one_hot(i, 3, on_value=5.0, off_value=0.0, axis=-1),
            np.array([0, 2, -1, 1]),
        ),
        np.array([[5, 0, 0], [0, 0, 5], [0, 0, 0], [0, 5, 0]], np.float32),
    )
    same(
        run(lambda i: mg.one_hot(i, 3, 1.0, 0.0, axis=0), np.array([[0, 2], [1, -1]], np.int32)),
        np.array([[[1, 0], [0, 0]], [[0, 0], [1, 0]], [[0, 1], [0, 0]]], np.float32),
    )
    with mg.Graph().as_default():
        assert mg.one_hot([0, 2], 3, on_value=3).dtype == mg.int32
        assert mg.one_hot([0, 2], 3, dtype=mg.float64).dtype == mg.float64
        assert mg.one_hot([0, 2], 3, off_value=True).dtype == mg.bool
        assert mg.one_hot(mg.placeholder(mg.int64, [None, 2]), 4, axis=1).shape == [None, 4, 2]
        assert mg.one_hot([0, 1], mg.placeholder(mg.int32, [])).shape == [2, None]


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_one_hot_matches_reference(data):
    itype = data.draw(st.sampled_from([np.uint8, np.int8, np.int32, np.int64]))
    lo = 0 if itype == np.uint8 else -2
    indices = data.draw(
        hnp.arrays(
            itype,
            hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
            elements=st.integers(lo, 6),
        )
    )
    depth = data.draw(st.integers(0, 5))
    axis = data.draw(st.integers(-1, indices.ndim))
    dtype = data.draw(st.sampled_from(DTYPES))
    on, off = data.draw(hnp.arrays(dtype, (2,)))
    got = run(lambda i: mg.one_hot(i, depth, on, off, axis=axis), indices)
    same(got, one_hot_reference(indices, depth, on, off, axis))


def test_one_hot_errors():
    build_fails(lambda: mg.one_hot([0, 2], -1), "depth must be non-negative, got: -1")
    build_fails(
        lambda: mg.one_hot([0, 2], 3, axis=2),
        r"Expected axis to be -1 or between \[0, 2\).  But received: 2",
    )
    build_fails(lambda: mg.one_hot([0, 2], 3, on_value=2, off_value=0.0), "does not match dtype")
    build_fails(lambda: mg.one_hot([0, 2], [3]), "Shape must be rank 0 but is rank 1")
    fails(
        lambda i, d: mg.one_hot(i, d),
        np.array([0, 1], np.int32),
        np.int32(-3),
        match="depth must be non-negative, got: -3",
    )
    with pytest.raises(errors.ResourceExhaustedError) as e:
        run(lambda i, d: mg.one_hot(i, d), np.zeros(2**20, np.int32), np.int32(2**30))
    assert e.value.node_name


# -- Where ---------------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    x=st.sampled_from(DTYPES).flatmap(
        lambda d: hnp.arrays(d, hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=4))
    )
)
def test_where_matches_numpy(x):
    same(run(mg.where, x), np.argwhere(x).astype(np.int64))


def test_where_doc_examples_shapes_and_errors():
    same(
        run(mg.where, np.array([[True, False], [False, True]])),
        np.array([[0, 0], [1, 1]], np.int64),
    )
    same(run(mg.where, np.array([[1.5, 0], [np.nan, 1]])), np.array([[0, 0], [1, 0], [1, 1]]))
    same(run(mg.where, np.array([0, 3, 0, 1], np.int32)), np.array([[1], [3]], np.int64))
    assert run(mg.where, np.zeros((0, 3), bool)).shape == (0, 2)
    with mg.Graph().as_default():
        assert mg.where(mg.placeholder(mg.bool, [None, 3])).shape == [None, 2]
        assert mg.where(mg.placeholder(mg.bool)).shape == [None, None]
    build_fails(lambda: mg.where(True), "WhereOp : Unhandled input dimensions: 0")
    e = fails(mg.where, np.array(True), match="Unhandled input dimensions: 0", known=False)
    assert e.op_type == "Where"
    with pytest.raises(ValueError, match="both be non-None"):
        with mg.Graph().as_default():
            mg.where([True], x=[1])


# -- Unique ---------------------------------------------------------------------------------------


def unique_reference(x):
    y, idx = [], []
    for v in x.tolist():
        for k, u in enumerate(y):
            if u == v:  # NaN never equals, so each NaN is new; -0.0 == 0.0
                idx.append(k)
                break
        else:
            idx.append(len(y))
            y.append(v)
    return np.array(y, x.dtype).reshape(-1), idx


def test_unique_doc_examples():
    y, idx = run(mg.unique, np.array([1, 1, 2, 4, 4, 4, 7, 8, 8], np.int32))
    same(y, np.array([1, 2, 4, 7, 8], np.int32))
    same(idx, np.array([0, 0, 1, 2, 2, 2, 3, 4, 4], np.int32))
    y, idx = run(lambda x: mg.unique(x, out_idx=mg.int64), np.array([3.0, 1.0, 3.0]))
    same(y, np.array([3.0, 1.0]))
    same(idx, np.array([0, 1, 0], np.int64))
    # Seen on TF 2.21: every NaN is its own value; -0.0 and 0.0 are one, the first kept.
    y, idx = run(mg.unique, np.array([np.nan, 1.0, np.nan, -0.0, 0.0], np.float32))
    assert np.isnan(y[[0, 2]]).all() and y[1] == 1 and y[3] == 0 and np.signbit(y[3])
    same(idx, np.array([0, 1, 2, 3, 3], np.int32))
    y, idx = run(mg.unique, np.zeros(0, np.float32))
    assert y.shape == (0,) and idx.shape == (0,) and idx.dtype == np.int32


@settings(max_examples=40, deadline=None)
@given(
    x=st.sampled_from(DTYPES).flatmap(
        lambda d: hnp.arrays(
            d,
            st.integers(0, 30),
            elements=st.sampled_from([0, 1, 2, 3]).map(np.dtype(d).type)
            if np.dtype(d).kind in "iu"
            else None,
        )
    ),
    out_idx=st.sampled_from([mg.int32, mg.int64]),
)
def test_unique_matches_reference(x, out_idx):
    y, idx = run(lambda p: mg.unique(p, out_idx=out_idx), x)
    want_y, want_idx = unique_reference(x)
    assert y.dtype == x.dtype and idx.dtype == out_idx.as_numpy_dtype
    np.testing.assert_array_equal(y, want_y)  # NaNs compare equal here, position by position
    np.testing.assert_array_equal(idx, want_idx)


def test_unique_errors():
    build_fails(lambda: mg.unique([[1, 2]]), "Shape must be rank 1 but is rank 2")
    fails(mg.unique, np.array([[1, 2]], np.int32), match="unique expects a 1D vector.", known=False)
    build_fails(lambda: mg.unique([1, 2], out_idx=mg.int16), "not in the list of allowed values")
