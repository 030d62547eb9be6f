"""Shape ops of issue 11 (Slice, ExpandDims, Squeeze, BroadcastTo) and the identity-like array
ops (IdentityN, StopGradient, PreventGradient, Snapshot, NoOp, Cast's Truncate), against
TensorFlow's documented examples and NumPy references computed here."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from op_helpers import fails, run, same

import minigraph as mg
from minigraph import errors, ops
from minigraph.wrappers import apply_op

pytestmark = pytest.mark.usefixtures("any_device")  # CPU and (simulated) GPU

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_, np.complex64]


def const_fails(build, match):
    """``build()`` on constants fails while the graph is built (shapes prove it wrong)."""
    with pytest.raises(errors.InvalidArgumentError, match=match) as e:
        with mg.Graph().as_default():
            build()
    assert e.value.node_name
    return e.value


def arrays(dtype=None, min_dims=0, max_dims=4, max_side=4):
    dt = st.sampled_from(DTYPES) if dtype is None else st.just(dtype)
    return dt.flatmap(
        lambda d: hnp.arrays(
            d,
            hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=max_side),
            elements=hnp.from_dtype(np.dtype(d), allow_nan=True, allow_infinity=True)
            if np.dtype(d).kind in "fc"
            else None,
        )
    )


X = np.arange(6, dtype=np.float32).reshape(2, 3)


# -- Slice -------------------------------------------------------------------------------


def test_slice_doc_examples():
    # tf.slice's documented example.
    t = np.array([[[1, 1, 1], [2, 2, 2]], [[3, 3, 3], [4, 4, 4]], [[5, 5, 5], [6, 6, 6]]], np.int32)
    same(run(lambda x: mg.slice(x, [1, 0, 0], [1, 1, 3]), t), np.array([[[3, 3, 3]]], np.int32))
    same(
        run(lambda x: mg.slice(x, [1, 0, 0], [1, 2, 3]), t),
        np.array([[[3, 3, 3], [4, 4, 4]]], np.int32),
    )
    same(
        run(lambda x: mg.slice(x, [1, 0, 0], [2, 1, 3]), t),
        np.array([[[3, 3, 3]], [[5, 5, 5]]], np.int32),
    )


@settings(max_examples=30, deadline=None)
@given(x=arrays(min_dims=1), data=st.data())
def test_slice_matches_numpy(x, data):
    begin, size = [], []
    for d in x.shape:
        b = data.draw(st.integers(0, d))
        s = data.draw(st.one_of(st.just(-1), st.integers(0, d - b)))
        begin.append(b)
        size.append(s)
    want = x[tuple(slice(b, None if s == -1 else b + s) for b, s in zip(begin, size))]
    dt = data.draw(st.sampled_from([np.int32, np.int64]))
    got = run(lambda p: mg.slice(p, np.array(begin, dt), np.array(size, dt)), x)
    same(got, want)


def test_slice_shape_inference():
    with mg.Graph().as_default():
        x = mg.placeholder(mg.float32, [None, 4])
        assert mg.slice(x, [0, 1], [2, -1]).shape == mg.TensorShape([2, 3])
        assert mg.slice(x, [1, 1], [-1, 2]).shape == mg.TensorShape([None, 2])
        b = mg.placeholder(mg.int32, [2])
        assert mg.slice(x, b, [1, -1]).shape == mg.TensorShape([1, None])
        assert mg.slice(mg.placeholder(mg.float32), b, [1, 2]).shape == mg.TensorShape([1, 2])


def test_slice_errors():
    const_fails(lambda: mg.slice(X, [0, 1], [1, 3]), r"Expected size\[1\] in \[0, 2\], but got 3")
    const_fails(
        lambda: mg.slice(X, [-1, 1], [1, 1]), r"Expected begin\[0\] in \[0, 2\], but got -1"
    )
    const_fails(lambda: mg.slice(X, [0], [1]), "1-D tensors of size 2, but got shapes")
    fails(
        lambda x: mg.slice(x, [0, 0], [1, -2]),
        X,
        match=r"Expected size\[1\] in \[0, 3\]",
        shapes=[None],
    )
    e = fails(
        lambda x: mg.slice(x, [3, 0], [0, 1]), X, match=r"begin\[0\] in \[0, 2\]", shapes=[None]
    )
    assert e.op_type == "Slice"


# -- ExpandDims ----------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(x=arrays(), data=st.data())
def test_expand_dims_matches_numpy(x, data):
    axis = data.draw(st.integers(-x.ndim - 1, x.ndim))
    as_vector = data.draw(st.booleans())
    a = np.array([axis] if as_vector else axis, data.draw(st.sampled_from([np.int32, np.int64])))
    same(run(lambda p: mg.expand_dims(p, a), x), np.expand_dims(x, axis))


def test_expand_dims_doc_examples_and_errors():
    image = np.zeros((10, 10, 3), np.float32)
    for axis, shape in [(0, [1, 10, 10, 3]), (1, [10, 1, 10, 3]), (-1, [10, 10, 3, 1])]:
        with mg.Graph().as_default():
            assert mg.expand_dims(image, axis).shape == mg.TensorShape(shape)
    const_fails(lambda: mg.expand_dims(X, 3), r"dim 3 not in the interval \[-3, 2\]")
    const_fails(lambda: mg.expand_dims(X, [1, 2]), "must be a tensor with a single value")
    e = fails(
        lambda x, a: mg.expand_dims(x, a),
        X,
        np.int32(-4),
        match="Tried to expand dim index -4 for tensor with 2 dimensions",
    )
    assert e.op_type == "ExpandDims"


# -- Squeeze ----------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(x=arrays(max_dims=5, max_side=3), data=st.data())
def test_squeeze_matches_numpy(x, data):
    ones = [i for i, d in enumerate(x.shape) if d == 1]
    axes = data.draw(st.lists(st.sampled_from(ones), unique=True)) if ones else []
    axes = [a - x.ndim if data.draw(st.booleans()) else a for a in axes]
    want = np.squeeze(x, tuple(axes)) if axes else np.squeeze(x)
    same(run(lambda p: mg.squeeze(p, axes or None), x), want)


def test_squeeze_doc_examples_shapes_and_errors():
    t = np.zeros((1, 2, 1, 3, 1, 1), np.float32)
    assert run(lambda p: mg.squeeze(p), t).shape == (2, 3)
    assert run(lambda p: mg.squeeze(p, [2, 4]), t).shape == (1, 2, 3, 1)
    assert run(lambda p: mg.squeeze(p, squeeze_dims=[0]), t).shape == (2, 1, 3, 1, 1)
    with mg.Graph().as_default():
        assert mg.squeeze(mg.placeholder(mg.float32, [None, 1, 3])).shape.rank is None
        assert mg.squeeze(mg.placeholder(mg.float32, [None, 1, 3]), [0]).shape == [1, 3]
        assert mg.squeeze(mg.placeholder(mg.float32, [2, 1, 3])).shape == [2, 3]
        assert ops.Squeeze(mg.Scope.new_root_scope(), X[None], squeeze_dims=[0]).output.shape == [
            2,
            3,
        ]
    const_fails(
        lambda: mg.squeeze(X, [0]), r"Can not squeeze dim\[0\], expected a dimension of 1, got 2"
    )
    const_fails(lambda: mg.squeeze(X, [5]), r"squeeze_dims\[0\] not in \[-2,2\)")
    fails(lambda x: mg.squeeze(x, [1]), X, match=r"Can not squeeze dim\[1\]", shapes=[None])
    fails(lambda x: mg.squeeze(x, [2]), X, match="Tried to squeeze dim index 2", shapes=[None])


# -- BroadcastTo ---------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(x=arrays(max_dims=3, max_side=3), data=st.data())
def test_broadcast_to_matches_numpy(x, data):
    lead = data.draw(st.lists(st.integers(0, 3), max_size=2))
    shape = lead + [data.draw(st.integers(0, 3)) if d == 1 else d for d in x.shape]
    same(run(lambda p: mg.broadcast_to(p, shape), x), np.broadcast_to(x, shape))


def test_broadcast_to_doc_example_and_errors():
    same(
        run(lambda p: mg.broadcast_to(p, [3, 3]), np.array([1, 2, 3], np.int32)),
        np.array([[1, 2, 3]] * 3, np.int32),
    )
    const_fails(
        lambda: mg.broadcast_to([1, 2, 3], [2, 2]), "Dimensions must be equal, but are 3 and 2"
    )
    const_fails(lambda: mg.broadcast_to(X, [3]), "at most rank 1 but is rank 2")
    const_fails(lambda: mg.broadcast_to([1], [-2, 1]), "Invalid value in tensor used for shape: -2")
    a3 = np.arange(3, dtype=np.int32)
    fails(
        lambda p, s: mg.broadcast_to(p, s),
        a3,
        np.array([2, 2], np.int32),
        match=r"Incompatible shapes: \[3\] vs. \[2,2\]",
    )
    fails(
        lambda p, s: mg.broadcast_to(p, s),
        X,
        np.array([3], np.int32),
        match=r"Rank of input \(2\)",
        shapes=[None, None],
    )
    fails(
        lambda p, s: mg.broadcast_to(p, s),
        a3,
        np.array([-1, 3], np.int32),
        match="Dimension -1 must be >= 0",
    )


def test_broadcast_to_checks_size_before_allocating():
    with pytest.raises(errors.ResourceExhaustedError) as e:
        run(
            lambda p, s: mg.broadcast_to(p, s),
            np.ones(1, np.float32),
            np.array([2**40, 2**30], np.int64),
        )
    assert e.value.node_name


# -- IdentityN, StopGradient, PreventGradient, Snapshot, NoOp ----------------------------------


def test_identity_like_ops_return_their_inputs():
    y = (X * 2).astype(np.int64)  # IdentityN's inputs may each have their own dtype
    a, b = run(lambda p, q: mg.identity_n([p, q]), X, y)
    same(a, X)
    same(b, y)
    same(run(mg.stop_gradient, X), X)
    root = mg.Scope.new_root_scope()
    x = ops.Const(root, X)
    pg = ops.PreventGradient(root, x, message="no gradient here")
    snap = ops.Snapshot(root, x)
    assert pg.operation.node.attrs["message"] == "no gradient here"
    got = mg.ClientSession(root).run([pg.output, snap.output])
    same(got[0], X)
    same(got[1], X)


def test_identity_n_outputs_do_not_alias_each_other():
    # Consumers that overwrite their input buffers must not see each other's writes.
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.float32, [2, 3])
        q = p + 1.0
        a, b = mg.identity_n([q, q * 2.0])
        outs = [a + 1.0, b + 1.0, q * 2.0 + 1.0]
    got = mg.Session(g).run(outs, {p: X})
    same(got[0], X + 2)
    same(got[1], (X + 1) * 2 + 1)
    same(got[2], (X + 1) * 2 + 1)


def test_identity_n_inputs_are_not_overwritten_by_other_consumers():
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.float32, [2, 3])
        q = p + 1.0
        doubled = q * 2.0  # may run first, and may write in place into q's buffer
        a, b = mg.identity_n([p * 1.0, q])
    for fetch in ([doubled, b], [b, doubled]):
        got = dict(zip(("x", "y"), mg.Session(g).run(fetch, {p: X})))
        same(got["x" if fetch[0] is b else "y"], X + 1)


def test_no_op_runs_its_control_inputs():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [2])
        with mg.control_dependencies([mg.identity(x)]):
            done = mg.no_op(name="done")
    assert done.name == "done" and done.type == "NoOp" and done.num_outputs == 0
    assert mg.Session(g).run(done, {x: np.ones(2, np.float32)}) is None
    with pytest.raises(errors.InvalidArgumentError, match="must feed a value"):
        mg.Session(g).run(done)


# -- Cast's Truncate -------------------------------------------------------------------------


def _truncated(x, dst):
    """Reference: zero the source mantissa bits ``dst`` has no room for, then cast."""
    bits = {2: 10, 4: 23, 8: 52}
    src_bits, dst_bits = bits[x.dtype.itemsize], bits[np.dtype(dst).itemsize]
    u = np.dtype(f"u{x.dtype.itemsize}")
    keep = ~u.type((1 << (src_bits - dst_bits)) - 1)
    cut = np.asarray(x.view(u) & keep).view(x.dtype)
    cut = np.where(np.isnan(x), x, cut)
    with np.errstate(over="ignore"):
        return cut.astype(dst)


@settings(max_examples=30, deadline=None)
@given(
    data=st.data(),
    pair=st.sampled_from(
        [(np.float32, np.float16), (np.float64, np.float32), (np.float64, np.float16)]
    ),
)
def test_cast_truncate_rounds_toward_zero(data, pair):
    src, dst = pair
    shape = hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=5)
    x = data.draw(hnp.arrays(src, shape, elements=hnp.from_dtype(np.dtype(src))))
    if data.draw(st.booleans()) and x.ndim == 2:
        x = x.T  # not C-contiguous
    got = run(lambda p: apply_op("Cast", None, [p], {"DstT": dst, "Truncate": True}).output(0), x)
    want = _truncated(x, dst)
    u = f"u{np.dtype(dst).itemsize}"
    assert got.dtype == want.dtype
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(u), want[~nan].view(u))


def test_cast_truncate_values_seen_on_tensorflow():
    # TF 2.21: float64 1/3 -> float32 with Truncate is 0x3eaaaaaa, without it 0x3eaaaaab.
    x = np.array([1 / 3, -1 / 3, 1 + 2**-24 + 2**-30])
    root = mg.Scope.new_root_scope()
    c = ops.Const(root, x)
    tr = ops.Cast(root, c, DstT=mg.float32, Truncate=True)
    rn = ops.Cast(root, c, DstT=mg.float32)
    got_t, got_r = mg.ClientSession(root).run([tr.y, rn.y])
    assert got_t.view(np.uint32).tolist() == [1051372202, 3198855850, 1065353216]
    assert got_r.view(np.uint32).tolist() == [1051372203, 3198855851, 1065353217]
    # complex128 -> complex64 truncates both parts; ints and float-to-int casts are unchanged.
    cc = ops.Cast(
        root, ops.Const(root, np.array([1 / 3 + 1j / 3])), DstT=mg.complex64, Truncate=True
    )
    ci = ops.Cast(
        root, ops.Const(root, np.array([1.7, -1.7], np.float32)), DstT=mg.int32, Truncate=True
    )
    got_c, got_i = mg.ClientSession(root).run([cc.y, ci.y])
    assert got_c.view(np.uint32).tolist() == [1051372202, 1051372202]
    same(got_i, np.array([1, -1], np.int32))


def test_cast_of_complex_to_real_keeps_the_real_part_without_a_warning():
    # TF 2.21: tf.cast([1+2j, -3.5-1j, 1j, 0], int32 / float64 / bool) gives
    # [1, -3, 0, 0], [1, -3.5, 0, 0] and [True, True, False, False] (the bool of the real part).
    x = np.array([1 + 2j, -3.5 - 1j, 1j, 0], np.complex64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = run(lambda p: [mg.cast(p, t) for t in (mg.int32, mg.float64, mg.bool)], x)
    np.testing.assert_array_equal(got[0], np.array([1, -3, 0, 0], np.int32))
    np.testing.assert_array_equal(got[1], [1, -3.5, 0, 0])
    np.testing.assert_array_equal(got[2], [True, True, False, False])
