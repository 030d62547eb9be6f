"""Split, SplitV, Unpack, Tile, ReverseV2 and the padding ops (Pad, PadV2, MirrorPad), against
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

DTYPES = [np.float32, np.float64, np.float16, np.int32, np.int64, np.int8, np.bool_, np.complex128]


def arrays(min_dims=0, max_dims=4, max_side=4):
    return st.sampled_from(DTYPES).flatmap(
        lambda d: hnp.arrays(
            d,
            hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=max_side),
            elements=hnp.from_dtype(np.dtype(d), allow_nan=True, allow_infinity=True)
            if np.dtype(d).kind in "fc"
            else None,
        )
    )


X = np.arange(6, dtype=np.float32).reshape(2, 3)


# -- Split, SplitV -----------------------------------------------------------------------------


def test_split_doc_examples():
    # tf.split's documented example: a [5, 30] tensor.
    x = np.arange(150, dtype=np.float32).reshape(5, 30)
    parts = run(lambda p: mg.split(p, [4, 15, 11], 1), x)
    assert [p.shape for p in parts] == [(5, 4), (5, 15), (5, 11)]
    for got, want in zip(parts, np.split(x, [4, 19], 1)):
        same(got, want)
    parts = run(lambda p: mg.split(p, 3, 1), x)
    assert [p.shape for p in parts] == [(5, 10)] * 3
    parts = run(lambda p: mg.split(p, [1, -1], axis=1), X)
    same(parts[1], X[:, 1:])


@settings(max_examples=30, deadline=None)
@given(x=arrays(min_dims=1), data=st.data())
def test_split_matches_numpy(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    d = x.shape[axis]
    if data.draw(st.booleans()) and d:
        n = data.draw(st.sampled_from([k for k in range(1, d + 1) if d % k == 0]))
        got = run(lambda p: mg.split(p, n, axis), x)
        want = np.split(x, n, axis)
    else:
        cuts = sorted(data.draw(st.lists(st.integers(0, d), max_size=3)))
        sizes = np.diff([0, *cuts, d]).tolist()
        want = np.split(x, cuts, axis)
        if data.draw(st.booleans()):
            sizes[data.draw(st.integers(0, len(sizes) - 1))] = -1
        dt = data.draw(st.sampled_from([np.int32, np.int64]))
        got = run(lambda p: mg.split(p, np.array(sizes, dt), axis), x)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        same(a, b)


def test_split_pieces_are_independent_buffers():
    """Split's pieces are views of its value: consumers that may overwrite their input (of
    4096 elements or more) must not clobber the value or each other, and a piece read
    once, of a value nothing else reads, may be written in place."""
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.float32, [64, 128])
        v = p * 1.0
        a, b = mg.split(v, 2)
        c, d = mg.split(v, [1, -1])
        e, f = mg.split(v, 2, axis=1)
        outs = [a + 1.0, b + 1.0, c + 1.0, d + 1.0, e + 1.0, f + 1.0, v + 0.0]
        # pieces whose values have no other reader: a view (axis 0), a copy (many rows)
        alone = [mg.split(p * 2.0, 2)[1] + 1.0, mg.split(p * 3.0, 2, axis=1)[1] + 1.0]
    x = np.arange(64 * 128, dtype=np.float32).reshape(64, 128)
    keep = x.copy()
    got = mg.Session(g).run([*outs, *alone], {p: x})
    wants = [x[:32] + 1, x[32:] + 1, x[:1] + 1, x[1:] + 1, x[:, :64] + 1, x[:, 64:] + 1, x]
    for o, w in zip(got, [*wants, x[32:] * 2 + 1, x[:, 64:] * 3 + 1]):
        same(o, w)
    same(x, keep)


def test_split_shapes_and_errors():
    with mg.Graph().as_default():
        x = mg.placeholder(mg.float32, [None, 6])
        assert [o.shape for o in mg.split(x, 3, 1)] == [mg.TensorShape([None, 2])] * 3
        assert [o.shape for o in mg.split(x, [2, -1], 1)] == [[None, 2], [None, 4]]
        n = mg.placeholder(mg.int32, [])
        assert [o.shape for o in mg.split(x, 2, n)] == [mg.TensorShape([None, None])] * 2
        sizes = mg.placeholder(mg.int32, [3])
        assert [o.shape for o in mg.split(x, sizes, 1)] == [[None, None]] * 3
    build_fails(lambda: mg.split(X, 2, axis=1), "evenly divisible by 2 but is 3")
    build_fails(
        lambda: mg.split(X, 3, axis=3), r"given by scalar input 3 must be in range \[-2, 2\)"
    )
    build_fails(lambda: mg.split(X, [1, 1], 1), "Determined shape must either match.*Got: 2")
    build_fails(lambda: mg.split(X, [-1, -1], 1), "There can only be one -1 in the input")
    build_fails(lambda: mg.split(X, [4, -1], 1), "Got: 4")
    build_fails(lambda: mg.split(X, [-2, 5], 1), "Split size at index 0 must be >= 0. Got: -2")
    fails(
        lambda p: mg.split(p, 2, axis=1),
        X,
        match=r"evenly divide the split dimension, but got split_dim 1 \(size = 3\)",
        known=False,
    )
    fails(lambda p: mg.split(p, 3, axis=2), X, match=r"-input rank\(-2\) <= split_dim", known=False)
    e = fails(lambda p: mg.split(p, [4, -1], 1), X, match="Got: 4", known=False)
    assert e.op_type == "SplitV"


# -- Unpack ---------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(x=arrays(min_dims=1), data=st.data())
def test_unstack_matches_numpy(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    got = run(lambda p: mg.unstack(p, axis=axis), x)
    want = list(np.moveaxis(x, axis, 0))
    assert len(got) == len(want)
    for a, b in zip(got, want):
        same(a, b)


def test_unstacked_scalars_feed_ops_that_read_them_on_the_host():
    # TensorFlow's batch gather_nd: Range(0, unstack(shape(indices)[:1])[0]). Unpack of a
    # vector once gave NumPy scalars, which Range's host read took for device arrays.
    x = np.zeros((4, 3), np.float32)
    got = run(lambda p: mg.range(0, mg.unstack(mg.shape(p)[:1])[0]), x)
    same(got, np.arange(4, dtype=np.int32))
    (piece,) = run(lambda p: mg.unstack(p), np.array([7], np.int64))
    assert isinstance(piece, np.ndarray) and piece.shape == () and piece == 7


def test_unstack_doc_example_and_errors():
    got = run(lambda p: mg.unstack(p), np.array([[1, 2, 3], [4, 5, 6]], np.int32))
    same(got[0], np.array([1, 2, 3], np.int32))
    same(got[1], np.array([4, 5, 6], np.int32))
    got = run(lambda p: mg.unstack(p, num=3, axis=1), X)
    assert [g.tolist() for g in got] == [[0, 3], [1, 4], [2, 5]]
    with mg.Graph().as_default():
        assert mg.unstack(mg.zeros([0, 2])) == []
        with pytest.raises(ValueError, match="Cannot infer argument `num`"):
            mg.unstack(mg.placeholder(mg.float32, [None, 2]))
    build_fails(
        lambda: ops.Unpack(mg.Scope.new_root_scope(), X, num=2, axis=1), "must be 2 but is 3"
    )
    build_fails(
        lambda: ops.Unpack(mg.Scope.new_root_scope(), X, num=2, axis=2),
        r"axis = 2 not in \[-2, 2\)",
    )
    fails(
        lambda p: mg.unstack(p, num=2, axis=1),
        X,
        match=r"Input shape axis 1 must equal 2, got shape \[2,3\]",
        known=False,
    )


# -- Tile --------------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(x=arrays(max_dims=3, max_side=3), data=st.data())
def test_tile_matches_numpy(x, data):
    mult = data.draw(st.lists(st.integers(0, 3), min_size=x.ndim, max_size=x.ndim))
    dt = data.draw(st.sampled_from([np.int32, np.int64]))
    want = np.tile(x, mult) if x.ndim else x
    same(run(lambda p: mg.tile(p, np.array(mult, dt)), x), want)


def test_tile_doc_example_shapes_and_errors():
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    same(
        run(lambda p: mg.tile(p, [1, 2]), a),
        np.array([[1, 2, 3, 1, 2, 3], [4, 5, 6, 4, 5, 6]], np.int32),
    )
    same(run(lambda p: mg.tile(p, [2, 1]), a), np.concatenate([a, a]))
    with mg.Graph().as_default():
        x = mg.placeholder(mg.float32, [None, 3])
        assert mg.tile(x, [2, 2]).shape == [None, 6]
        assert mg.tile(x, mg.placeholder(mg.int32, [2])).shape == [None, None]
    build_fails(lambda: mg.tile(X, [2]), "Shape must be rank 1 but is rank 2")
    build_fails(lambda: mg.tile(X, [-1, 1]), r"Expected multiples\[0\] >= 0, but got -1")
    fails(
        lambda p, m: mg.tile(p, m),
        X,
        np.array([2], np.int32),
        match="vector of length 2 but got length 1",
        known=False,
    )
    fails(lambda p, m: mg.tile(p, m), X, np.array([1, -3], np.int32), match=r"multiples\[1\] >= 0")
    with pytest.raises(errors.ResourceExhaustedError) as e:
        run(lambda p, m: mg.tile(p, m), X, np.array([2**40, 2**30], np.int64))
    assert e.value.node_name


# -- ReverseV2 ------------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(x=arrays(min_dims=1), data=st.data())
def test_reverse_matches_numpy(x, data):
    axes = data.draw(st.lists(st.integers(0, x.ndim - 1), unique=True))
    axes = [a - x.ndim if data.draw(st.booleans()) else a for a in axes]
    want = np.flip(x, axes) if axes else x
    same(run(lambda p: mg.reverse(p, np.array(axes, np.int32)), x), want)


def test_reverse_doc_example_and_errors():
    t = np.arange(24, dtype=np.int32).reshape(1, 2, 3, 4)
    same(run(lambda p: mg.reverse(p, [3]), t), t[:, :, :, ::-1])
    same(run(lambda p: mg.reverse(p, [1]), t), t[:, ::-1])
    same(run(lambda p: mg.reverse(p, [-1, 2]), t), t[:, :, ::-1, ::-1])
    build_fails(lambda: mg.reverse(X, [1, -1]), "axis 1 specified more than once")
    build_fails(lambda: mg.reverse(X, [2]), r"'axis'\[0\] = 2 is out of valid range \[0, 1")
    fails(
        lambda p, a: mg.reverse(p, a),
        X,
        np.array([-3], np.int32),
        match="out of valid range",
        known=False,
    )


# -- Pad, PadV2, MirrorPad -----------------------------------------------------------------------


def test_pad_doc_examples():
    # tf.pad's documented examples.
    t = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    p = [[1, 1], [2, 2]]
    same(
        run(lambda x: mg.pad(x, p), t),
        np.array([[0] * 7, [0, 0, 1, 2, 3, 0, 0], [0, 0, 4, 5, 6, 0, 0], [0] * 7], np.int32),
    )
    same(
        run(lambda x: mg.pad(x, p, "REFLECT"), t),
        np.array([[6, 5, 4, 5, 6, 5, 4], [3, 2, 1, 2, 3, 2, 1]] * 2, np.int32),
    )
    same(
        run(lambda x: mg.pad(x, p, "SYMMETRIC"), t),
        np.array(
            [
                [2, 1, 1, 2, 3, 3, 2],
                [2, 1, 1, 2, 3, 3, 2],
                [5, 4, 4, 5, 6, 6, 5],
                [5, 4, 4, 5, 6, 6, 5],
            ],
            np.int32,
        ),
    )
    g = mg.Graph()
    with g.as_default():
        kinds = [
            mg.pad(t, p).op.type,
            mg.pad(t, p, constant_values=7).op.type,
            mg.pad(t, p, mode="reflect").op.type,
        ]
    assert kinds == ["Pad", "PadV2", "MirrorPad"]


@settings(max_examples=40, deadline=None)
@given(x=arrays(max_dims=3), data=st.data())
def test_pad_matches_numpy(x, data):
    mode = data.draw(st.sampled_from(["CONSTANT", "REFLECT", "SYMMETRIC"]))
    limit = {"CONSTANT": lambda d: 3, "REFLECT": lambda d: d - 1, "SYMMETRIC": lambda d: d}[mode]
    if any(limit(d) < 0 for d in x.shape):
        return  # REFLECT cannot pad an empty dimension (checked in the error tests)
    pads = [[data.draw(st.integers(0, min(3, limit(d)))) for _ in range(2)] for d in x.shape]
    dt = data.draw(st.sampled_from([np.int32, np.int64]))
    paddings = np.array(pads, dt).reshape(x.ndim, 2)
    if mode == "CONSTANT":
        cv = x.reshape(-1)[0] if x.size and data.draw(st.booleans()) else np.zeros((), x.dtype)
        want = np.pad(x, pads, constant_values=cv) if x.ndim else x
        got = run(lambda p, c: mg.pad(p, paddings, constant_values=c), x, np.asarray(cv))
    else:
        want = np.pad(x, pads, mode=mode.lower()) if x.ndim else x
        got = run(lambda p: mg.pad(p, paddings, mode), x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("constant", [None, 7.5])
def test_a_large_pad_fills_its_border_and_copies_the_rest(constant):
    """Outputs of 64K elements or more fill only their border (every side, each dim):
    np.pad's result, zeros or the constant."""
    x = np.arange(3 * 130 * 170 * 2, dtype=np.float32).reshape(3, 130, 170, 2)
    pads = [[1, 0], [0, 3], [2, 1], [1, 2]]
    want = np.pad(x, pads, constant_values=0 if constant is None else constant)
    if constant is None:
        got = run(lambda p: mg.pad(p, pads), x)
    else:
        got = run(lambda p: mg.pad(p, pads, constant_values=constant), x)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_pad_shapes_and_errors():
    with mg.Graph().as_default():
        x = mg.placeholder(mg.float32, [None, 3])
        assert mg.pad(x, [[1, 2], [0, 1]]).shape == [None, 4]
        assert mg.pad(x, mg.placeholder(mg.int32, [2, 2])).shape == [None, None]
        assert mg.pad(mg.placeholder(mg.float32), [[1, 2]]).shape == [None]
    build_fails(lambda: mg.pad(X, [[-1, 0], [0, 2]]), "Paddings must be non-negative: -1 0")
    build_fails(
        lambda: mg.pad(X, [[1, 0]]),
        r"first dimension of paddings must be the rank of inputs\[1,2\] \[2,3\]",
    )
    build_fails(lambda: mg.pad(X, [[1, 0, 1], [1, 1, 1]]), r"a matrix with 2 columns: \[2,3\]")
    build_fails(
        lambda: mg.pad(X, [[2, 0], [0, 0]], "REFLECT"),
        "must be less than the dimension size: 2, 0 not less than 2",
    )
    build_fails(
        lambda: mg.pad(X, [[3, 0], [0, 0]], "SYMMETRIC"),
        "no greater than the dimension size: 3, 0 greater than 2",
    )
    build_fails(
        lambda: mg.pad(X, [[-1, 0], [0, 0]], "SYMMETRIC"), "paddings must be non-negative: -1 0"
    )
    with pytest.raises(ValueError, match="expected to be one of"):
        with mg.Graph().as_default():
            mg.pad(X, [[0, 0], [0, 0]], "WRAP")
    fails(
        lambda x, p: mg.pad(x, p),
        X,
        np.array([[-1, 0], [0, 2]], np.int32),
        match="Paddings must be non-negative",
        known=False,
    )
    fails(
        lambda x, p: mg.pad(x, p, "REFLECT"),
        X,
        np.array([[0, 0], [0, 3]], np.int32),
        match="0, 3 not less than 3",
        known=False,
    )
    fails(
        lambda x, c: mg.pad(x, [[0, 0], [0, 1]], constant_values=c),
        X,
        np.array([9.0], np.float32),
        match=r"constant_values must be a scalar. Found: \[1\]",
        known=False,
    )
    with pytest.raises(errors.ResourceExhaustedError) as e:
        run(lambda x, p: mg.pad(x, p), X, np.array([[2**40, 0], [2**30, 0]], np.int64))
    assert e.value.node_name
