"""Conv2D, DepthwiseConv2dNative, MaxPool and AvgPool against direct (loop) references
written here, in NHWC and NCHW, with VALID, SAME and EXPLICIT padding."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigraph as mg
from minigraph import errors

pytestmark = pytest.mark.usefixtures("any_device")  # CPU and (simulated) GPU


def reference_conv2d(x, w, strides, padding, dilations):
    """Direct NHWC cross-correlation, one output element at a time."""
    n, h, wd, cin = x.shape
    kh, kw, _, cout = w.shape
    (sh, sw), (dh, dw) = strides, dilations
    ekh, ekw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    if padding == "VALID":
        oh, ow = (h - ekh) // sh + 1, (wd - ekw) // sw + 1
        top = left = 0
    else:
        oh, ow = -(-h // sh), -(-wd // sw)
        top = max((oh - 1) * sh + ekh - h, 0) // 2
        left = max((ow - 1) * sw + ekw - wd, 0) // 2
    out = np.zeros((n, oh, ow, cout), np.float64)
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                for a in range(kh):
                    for c in range(kw):
                        r, q = i * sh + a * dh - top, j * sw + c * dw - left
                        if 0 <= r < h and 0 <= q < wd:
                            out[b, i, j] += x[b, r, q] @ w[a, c]
    return out


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 2),
    st.integers(1, 7),
    st.integers(1, 7),
    st.integers(1, 5),  # float64: up to 2 channels the im2col path, from 3 a product per tap
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(1, 3),
    st.sampled_from(["SAME", "VALID"]),
    st.integers(1, 2),
    st.integers(1, 2),
    st.integers(1, 2),
    st.integers(1, 2),
)
def test_conv2d_matches_reference(n, h, w, cin, cout, kh, kw, padding, sh, sw, dh, dw):
    if padding == "VALID" and (h < (kh - 1) * dh + 1 or w < (kw - 1) * dw + 1):
        return  # an empty or invalid output: covered by test_conv2d_errors
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, h, w, cin))
    f = rng.standard_normal((kh, kw, cin, cout))
    g = mg.Graph()
    with g.as_default():
        y = mg.conv2d(x, f, strides=[1, sh, sw, 1], padding=padding, dilations=[dh, dw])
    out = mg.Session(g).run(y)
    np.testing.assert_allclose(
        out, reference_conv2d(x, f, (sh, sw), padding, (dh, dw)), rtol=1e-10, atol=1e-10
    )


def test_conv2d_shapes_and_dtypes():
    with mg.Graph().as_default():
        x = mg.placeholder(mg.float32, shape=[None, 10, None, 3])
        f = mg.placeholder(mg.float32, shape=[3, 3, 3, 8])
        assert mg.conv2d(x, f, 2, "SAME").shape == mg.TensorShape([None, 5, None, 8])
        assert mg.conv2d(x, f, 1, "VALID", dilations=2).shape == mg.TensorShape([None, 6, None, 8])
    g = mg.Graph()
    with g.as_default():
        y = mg.conv2d(
            np.ones((1, 2, 2, 1), np.float16), np.ones((1, 1, 1, 1), np.float16), 1, "VALID"
        )
    assert mg.Session(g).run(y).dtype == np.float16


@pytest.mark.parametrize(
    "x_shape, f_shape, kwargs, message",
    [
        (
            [1, 1, 1, 1],
            [3, 3, 1, 1],
            dict(strides=1, padding="VALID"),
            "Computed output size would be negative",
        ),
        (
            [1, 4, 4, 2],
            [1, 1, 3, 1],
            dict(strides=1, padding="SAME"),
            r"Depth of input \(2\) is not a multiple of input depth of filter \(3\)",
        ),
        (
            [1, 4, 4, 1],
            [1, 1, 1, 1],
            dict(strides=[2, 1, 1, 1], padding="SAME"),
            "strides in the batch and depth",
        ),
        (
            [1, 4, 4, 1],
            [1, 1, 1, 1],
            dict(strides=1, padding="FULL"),
            "not in the list of allowed values",
        ),
        ([4, 4, 1], [1, 1, 1, 1], dict(strides=1, padding="SAME"), "must be rank 4"),
    ],
)
def test_conv2d_errors(x_shape, f_shape, kwargs, message):
    with mg.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match=message) as e:
            mg.conv2d(np.ones(x_shape, np.float32), np.ones(f_shape, np.float32), **kwargs)
    assert "Conv2D" in str(e.value)


# -- more Conv2D: explicit padding, NCHW, int32 ----------------------------------------------


def _padded_ref(x, pads, fill=0.0):
    return np.pad(x, ((0, 0), pads[0], pads[1], (0, 0)), constant_values=fill)


def test_conv2d_explicit_padding_equals_padding_then_valid():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 5, 3))
    f = rng.standard_normal((2, 3, 3, 2))
    pads = [[0, 0], [1, 2], [0, 3], [0, 0]]
    g = mg.Graph()
    with g.as_default():
        y = mg.nn.conv2d(x, f, strides=[1, 2, 1, 1], padding=pads)
    assert y.op.node.attrs["padding"] == "EXPLICIT"
    assert list(y.op.node.attrs["explicit_paddings"]) == [0, 0, 1, 2, 0, 3, 0, 0]
    want = reference_conv2d(_padded_ref(x, [(1, 2), (0, 3)]), f, (2, 1), "VALID", (1, 1))
    np.testing.assert_allclose(mg.Session(g).run(y), want, rtol=1e-10, atol=1e-10)


def test_conv2d_tf_explicit_example():
    # TF 2.21: ones [1,3,3,1] * ones [2,2,1,1], explicit [0,0,1,0,0,2,0,0].
    g = mg.Graph()
    with g.as_default():
        y = mg.nn.conv2d(
            np.ones((1, 3, 3, 1), np.float32),
            np.ones((2, 2, 1, 1), np.float32),
            strides=1,
            padding=[[0, 0], [1, 0], [0, 2], [0, 0]],
        )
    want = [[2, 2, 1, 0], [4, 4, 2, 0], [4, 4, 2, 0]]
    np.testing.assert_array_equal(mg.Session(g).run(y)[0, :, :, 0], want)


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(["SAME", "VALID"]),
    st.integers(1, 2),
    st.integers(1, 2),
    # 24 bytes a pixel: a product per tap; 16 and 4: one product of gathered patches.
    st.sampled_from([(3, np.float64), (4, np.float32), (1, np.float32)]),
)
def test_conv2d_nchw_is_transposed_nhwc(padding, stride, dilation, channels):
    cin, dtype = channels
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 6, 5, cin)).astype(dtype)
    f = rng.standard_normal((2, 2, cin, 4)).astype(dtype)
    g = mg.Graph()
    with g.as_default():
        a = mg.conv2d(x, f, stride, padding, dilations=dilation)
        # Fed in C order: seen as NHWC, its channels are not adjacent.
        p = mg.placeholder(mg.as_dtype(dtype), shape=[2, cin, 6, 5])
        b = mg.conv2d(p, f, stride, padding, data_format="NCHW", dilations=dilation)
    ra, rb = mg.Session(g).run([a, b], {p: np.ascontiguousarray(x.transpose(0, 3, 1, 2))})
    tol = 1e-12 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(rb, ra.transpose(0, 3, 1, 2), rtol=tol, atol=tol)
    assert b.shape.as_list() == list(rb.shape)


def test_conv2d_int32_and_use_cudnn_attr():
    g = mg.Graph()
    with g.as_default():
        y = mg.nn.conv2d(np.ones((1, 3, 3, 1), np.int32), np.ones((2, 2, 1, 1), np.int32),
                         strides=1, padding="VALID", use_cudnn_on_gpu=False)  # fmt: skip
    out = mg.Session(g).run(y)
    assert out.dtype == np.int32 and (out == 4).all()
    assert y.op.node.attrs["use_cudnn_on_gpu"] is False


@pytest.mark.parametrize(
    "attrs, message",
    [
        (dict(padding="VALID", explicit_paddings=[0, 0, 1, 0, 0, 2, 0, 0]), "must be empty"),
        (dict(padding="EXPLICIT", explicit_paddings=[0, 0, 1, 0]), "must contain 8 values"),
        (dict(padding="EXPLICIT", explicit_paddings=[0, 0, -1, 0, 0, 0, 0, 0]), "nonnegative"),
        (dict(padding="EXPLICIT", explicit_paddings=[0, 0, 0, 0, 0, 0, 1, 0]), "batch or depth"),
    ],
)
def test_conv_explicit_padding_errors(attrs, message):
    for op in (mg.ops.Conv2D, mg.ops.DepthwiseConv2dNative):
        root = mg.Scope.new_root_scope()
        x = mg.ops.Const(root, np.ones((1, 3, 3, 1), np.float32))
        w = mg.ops.Const(root, np.ones((2, 2, 1, 1), np.float32))
        with pytest.raises(errors.InvalidArgumentError, match=message) as e:
            op(root.with_op_name("c"), x, w, strides=[1, 1, 1, 1], **attrs)
        assert e.value.node_name == "c"


# -- DepthwiseConv2dNative -------------------------------------------------------------------


def reference_depthwise(x, w, strides, pads, dilations):
    """Each channel k with its filters w[:, :, k, q] -> output channel k * mult + q."""
    xp_ = _padded_ref(x, pads)
    n, cin = x.shape[0], x.shape[3]
    kh, kw, _, mult = w.shape
    out = []
    for k in range(cin):
        for q in range(mult):
            one = reference_conv2d(
                xp_[..., k : k + 1], w[:, :, k : k + 1, q : q + 1], strides, "VALID", dilations
            )
            out.append(one[..., 0])
    return np.stack(out, axis=-1).reshape(n, *out[0].shape[1:], cin * mult)


def _same_pads(size, k, s, d):
    out = -(-size // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    return (total // 2, total - total // 2)


@settings(max_examples=30, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(1, 6),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(1, 3),
    st.sampled_from(["SAME", "VALID"]),
    st.integers(1, 2),
    st.integers(1, 2),
    st.sampled_from(["NHWC", "NCHW"]),
    st.sampled_from([np.float32, np.float64]),
)
def test_depthwise_matches_reference(h, w, cin, mult, k, padding, s, d, fmt, dtype):
    if padding == "VALID" and min(h, w) < (k - 1) * d + 1:
        return
    rng = np.random.default_rng(h * 100 + w)
    x = rng.standard_normal((2, h, w, cin)).astype(dtype)
    f = rng.standard_normal((k, k, cin, mult)).astype(dtype)
    pads = [_same_pads(h, k, s, d), _same_pads(w, k, s, d)] if padding == "SAME" else [(0, 0)] * 2
    want = reference_depthwise(x.astype(np.float64), f.astype(np.float64), (s, s), pads, (d, d))
    g = mg.Graph()
    xin = np.ascontiguousarray(x.transpose(0, 3, 1, 2)) if fmt == "NCHW" else x
    with g.as_default():
        p = mg.placeholder(mg.as_dtype(dtype), shape=xin.shape)  # NCHW fed in C order
        y = mg.nn.depthwise_conv2d_native(p, f, s, padding, data_format=fmt, dilations=d)
    out = mg.Session(g).run(y, {p: xin})
    if fmt == "NCHW":
        out = out.transpose(0, 2, 3, 1)
    assert out.dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol)


def test_depthwise_tf_example_and_shape():
    g = mg.Graph()
    with g.as_default():
        y = mg.nn.depthwise_conv2d_native(
            np.ones((1, 3, 3, 2), np.float32), np.ones((2, 2, 2, 3), np.float32), 1, "VALID"
        )
        p = mg.placeholder(mg.float32, [None, 8, None, 4])
        z = mg.nn.depthwise_conv2d_native(p, np.ones((3, 3, 4, 2), np.float32), 2, "SAME")
    assert y.shape.as_list() == [1, 2, 2, 6]
    assert z.shape.as_list() == [None, 4, None, 8]
    np.testing.assert_array_equal(mg.Session(g).run(y), np.full((1, 2, 2, 6), 4, np.float32))


def test_depthwise_channel_mismatch_names_the_node():
    with mg.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match="Dimensions must be equal") as e:
            mg.nn.depthwise_conv2d_native(
                np.ones((1, 3, 3, 2), np.float32), np.ones((2, 2, 3, 1), np.float32), 1, "VALID",
                name="dw",
            )  # fmt: skip
    assert e.value.node_name == "dw"


# -- MaxPool, AvgPool ------------------------------------------------------------------------


def reference_pool(x, k, s, padding, average):
    """One output cell at a time over the in-bounds cells of its window (TF's rules)."""
    n, h, w, c = x.shape
    if padding == "SAME":
        oh, ow = -(-h // s[0]), -(-w // s[1])
        top, left = _same_pads(h, k[0], s[0], 1)[0], _same_pads(w, k[1], s[1], 1)[0]
    else:
        oh, ow = (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1
        top = left = 0
    out = np.zeros((n, oh, ow, c), np.float64 if average else x.dtype)
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * s[0] - top, j * s[1] - left
            cells = x[:, max(r0, 0) : r0 + k[0], max(c0, 0) : c0 + k[1], :].reshape(n, -1, c)
            if average:
                out[:, i, j] = cells.astype(np.float64).mean(axis=1)
            else:
                info = np.finfo(x.dtype) if x.dtype.kind == "f" else np.iinfo(x.dtype)
                best = np.full((n, c), info.min, x.dtype)
                for t in range(cells.shape[1]):
                    best = np.where(cells[:, t] > best, cells[:, t], best)
                out[:, i, j] = best
    return out


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 7),
    st.integers(1, 7),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(1, 3),
    st.sampled_from(["SAME", "VALID"]),
    st.sampled_from(["NHWC", "NCHW"]),
    st.sampled_from([np.float16, np.float32, np.float64, np.int32, np.uint8, np.int64]),
    st.booleans(),
)
def test_pools_match_reference(h, w, kh, kw, sh, sw, padding, fmt, dtype, average):
    if padding == "VALID" and (h < kh or w < kw):
        return
    if average and np.dtype(dtype).kind != "f":
        return
    rng = np.random.default_rng(h * 10 + w)
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal((2, h, w, 3)).astype(dtype)
        x.flat[::5] = np.nan if not average else x.flat[::5]
        x.flat[1::7] = -np.inf if not average else x.flat[1::7]
    else:
        x = rng.integers(0, 100, (2, h, w, 3)).astype(dtype)
    pool = mg.nn.avg_pool if average else mg.nn.max_pool
    g = mg.Graph()
    with g.as_default():
        y = pool(x.transpose(0, 3, 1, 2) if fmt == "NCHW" else x, [kh, kw], [sh, sw], padding,
                 data_format=fmt)  # fmt: skip
    out = mg.Session(g).run(y)
    if fmt == "NCHW":
        out = out.transpose(0, 2, 3, 1)
    want = reference_pool(x, (kh, kw), (sh, sw), padding, average)
    assert out.dtype == dtype and out.shape == want.shape
    if average:
        tol = 2e-3 if dtype == np.float16 else 1e-6
        np.testing.assert_allclose(out.astype(np.float64), want, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.uint8])
@pytest.mark.parametrize(
    "shape,k,s",
    [
        ((3, 6, 6, 4), (2, 2), (2, 2)),
        ((2, 7, 5, 3), (2, 2), (2, 2)),
        ((2, 9, 8, 2), (2, 3), (3, 4)),
    ],
    ids=["tiled", "last-row-and-column-left-out", "gaps"],
)
def test_max_pool_of_disjoint_windows_matches_reference(shape, k, s, dtype):
    """Windows that never overlap (VALID, ksize <= strides; what MaxPoolGrad's own path
    takes): NaN skipped, a window of NaN and -inf the lowest value, equal maxima."""
    rng = np.random.default_rng(11)
    x = rng.integers(0, 4, shape).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[rng.random(shape) < 0.3] = np.nan
        x[rng.random(shape) < 0.2] = -np.inf
        x[0, :2, :2] = np.nan  # a window of NaN alone
    g = mg.Graph()
    with g.as_default():
        y = mg.nn.max_pool(x, list(k), list(s), "VALID")
    out = mg.Session(g).run(y)
    want = reference_pool(x, k, s, "VALID", False)
    assert out.dtype == want.dtype and out.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.uint8])
@pytest.mark.parametrize(
    "shape,k,s,padding",
    [
        ((2, 9, 11, 16), (3, 3), (2, 2), "SAME"),
        ((2, 8, 8, 40), (2, 2), (2, 2), "VALID"),
        ((1, 7, 7, 16), (7, 7), (1, 1), "VALID"),
        ((2, 6, 5, 36), (1, 3), (1, 2), "SAME"),
        ((2, 5, 5, 32), (1, 1), (2, 2), "VALID"),
    ],
)
def test_max_pool_of_wide_pixels_matches_reference(shape, k, s, padding, dtype):
    """Pixels of 32 bytes or more pool one spatial axis at a time: NaN skipped, a window of
    NaN and -inf (or padding alone) the lowest value, as the reference's window scan."""
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(0, 50, shape).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[rng.random(shape) < 0.3] = np.nan
        x[rng.random(shape) < 0.2] = -np.inf
        x[rng.random(shape) < 0.05] = np.inf
        x[0, :2, :3] = np.nan
    g = mg.Graph()
    with g.as_default():
        y = mg.nn.max_pool(x, list(k), list(s), padding)
    out = mg.Session(g).run(y)
    want = reference_pool(x, k, s, padding, False)
    assert out.dtype == want.dtype and out.tobytes() == want.tobytes()


def test_max_pool_of_a_large_padded_image_matches_reference():
    """A padded image of 1 MB or more is a pooled buffer with only its border filled."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 151, 149, 8)).astype(np.float32) - 3  # 1.4 MB once padded
    x[0, 0, 0] = np.nan
    g = mg.Graph()
    with g.as_default():
        y = mg.nn.max_pool(x, [3, 3], [2, 2], "SAME")
        z = mg.nn.max_pool(x, [4, 2], [1, 3], "SAME")
    got = mg.Session(g).run([y, z])
    for out, (k, s) in zip(got, [((3, 3), (2, 2)), ((4, 2), (1, 3))]):
        assert out.tobytes() == reference_pool(x, k, s, "SAME", False).tobytes()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("negative_zero", [True, False])
def test_max_pool_keeps_the_first_of_equal_zeros_and_skips_nan(dtype, negative_zero):
    # "Take a cell only if it is greater": of 0.0 and -0.0 the first in the window wins.
    rng = np.random.default_rng(5)
    x = rng.choice(np.array([0.0, -0.0, 1.0, -1.0, np.nan, -np.inf], dtype), (3, 8, 8, 4))
    if not negative_zero:
        x[x == 0] = 0.0
    g = mg.Graph()
    with g.as_default():
        y = mg.nn.max_pool(x, [2, 3], [2, 1], "SAME")
    out = mg.Session(g).run(y)
    want = reference_pool(x, (2, 3), (2, 1), "SAME", False)
    assert out.tobytes() == want.tobytes()


def test_pool_tf_examples():
    g = mg.Graph()
    with g.as_default():
        a = mg.nn.avg_pool(np.arange(9, dtype=np.float32).reshape(1, 3, 3, 1), 2, 2, "SAME")
        m = mg.nn.max_pool(np.full((1, 2, 2, 1), -np.inf, np.float32), 2, 1, "VALID")
        n = mg.nn.max_pool(
            np.array([np.nan, 1, np.nan, np.nan], np.float32).reshape(1, 2, 2, 1), [1, 2], 1,
            "VALID",
        )  # fmt: skip
        e = mg.nn.max_pool(
            np.arange(4, dtype=np.float32).reshape(1, 2, 2, 1),
            2,
            1,
            [[0, 0], [1, 0], [0, 1], [0, 0]],
        )
        z = mg.nn.max_pool(np.ones((1, 2, 2, 1), np.float32), 3, 2, "VALID")
    ra, rm, rn, re, rz = mg.Session(g).run([a, m, n, e, z])
    np.testing.assert_array_equal(ra[0, :, :, 0], [[2, 3.5], [6.5, 8]])
    assert rm.item() == np.finfo(np.float32).min  # TF 2.21: lowest float, not -inf
    np.testing.assert_array_equal(rn.reshape(-1), [1, np.finfo(np.float32).min])
    np.testing.assert_array_equal(re[0, :, :, 0], [[1, 1], [3, 3]])
    assert rz.shape == (1, 0, 0, 1)  # TF: an empty result, no error


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(ksize=[1, 3, 3, 1], strides=1, padding="VALID"), errors.InvalidArgumentError,
         "Computed output size would be negative: -1"),
        (dict(ksize=[2, 1, 1, 1], strides=1, padding="VALID"), errors.UnimplementedError,
         "not yet supported on the batch dimension"),
        (dict(ksize=[1, 1, 1, 2], strides=[1, 1, 1, 2], padding="VALID"),
         errors.UnimplementedError, "depth"),
        (dict(ksize=[1, 0, 1, 1], strides=1, padding="VALID"), errors.InvalidArgumentError,
         "ksize must be positive"),
        (dict(ksize=[1, 1, 1], strides=1, padding="VALID"), errors.InvalidArgumentError,
         "ksize field must specify 4 dimensions"),
        (dict(ksize=1, strides=[1, 1, 1], padding="VALID"), errors.InvalidArgumentError,
         "stride field must specify 4 dimensions"),
    ],
)  # fmt: skip
def test_pool_errors(kwargs, error, message):
    for pool in (mg.nn.max_pool, mg.nn.avg_pool):
        with mg.Graph().as_default():
            with pytest.raises(error, match=message) as e:
                pool(np.ones((1, 1, 1, 1), np.float32), name="p", **kwargs)
        assert e.value.node_name == "p"


def test_pool_dtype_and_rank_errors():
    with mg.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match="not in the list"):
            mg.nn.avg_pool(np.ones((1, 2, 2, 1), np.int32), 1, 1, "VALID")
        with pytest.raises(errors.InvalidArgumentError, match="must be rank 4"):
            mg.nn.max_pool(np.ones((2, 2, 1), np.float32), 1, 1, "VALID")


def test_pool_runtime_shape_check_on_fed_input():
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.float32, [None, None, None, None])
        y = mg.nn.max_pool(p, 3, 1, "VALID", name="late")
    with pytest.raises(errors.InvalidArgumentError, match="negative") as e:
        mg.Session(g).run(y, {p: np.ones((1, 1, 1, 1), np.float32)})
    assert e.value.node_name == "late"


@pytest.mark.parametrize(
    "build",
    [
        lambda p: mg.conv2d(p, np.ones((5, 1, 2, 3), np.float32), [1, 2, 1, 1], "VALID"),
        lambda p: mg.conv2d(p, np.ones((5, 1, 1, 4), np.float32), [1, 2, 1, 1], "VALID"),
        lambda p: mg.nn.depthwise_conv2d_native(p, np.ones((5, 1, 2, 1), np.float32), 2, "VALID"),
        lambda p: mg.nn.max_pool(p, [1, 5, 1, 1], [1, 2, 1, 1], "VALID"),
        lambda p: mg.nn.avg_pool(p, [1, 5, 1, 1], [1, 2, 1, 1], "VALID"),
    ],
)
def test_a_window_larger_than_the_input_with_stride_gives_an_empty_output(build):
    # (4 - 5 + 2) // 2 = 0 rows: each tap's strided slice must be empty too (it once read
    # rows 0:-1:2, two of them, and the kernel failed to broadcast them into none)
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.float32, None)
        y = build(p)
    out = mg.Session(g).run(y, {p: np.ones((1, 4, 4, 2), np.float32)})
    assert out.shape[:2] == (1, 0) and out.size == 0


@pytest.mark.parametrize("cin", [1, 3, 4, 5])
@pytest.mark.parametrize("strides, dilations", [(1, 1), ((2, 1), (1, 1)), ((1, 1), (2, 1)), (2, 2)])
def test_conv2d_patches_by_filter_row_equal_patches_by_tap(monkeypatch, cin, strides, dilations):
    # Where a filter row's taps are adjacent pixels, im2col copies the row as one item; the
    # patches, and so the products, are bitwise those of a copy per tap.
    from minigraph.ops import conv_kernels

    rng = np.random.default_rng(cin)
    x = rng.standard_normal((3, 9, 7, cin)).astype(np.float32)
    f = rng.standard_normal((3, 2, cin, 2)).astype(np.float32)

    def run_conv():
        g = mg.Graph()
        with g.as_default():
            p = mg.placeholder(mg.float32, shape=x.shape)
            y = mg.conv2d(p, f, strides, "SAME", dilations=dilations)
        return mg.Session(g).run(y, {p: x})

    rows = run_conv()
    monkeypatch.setattr(conv_kernels, "gather_filter_rows", lambda *args: False)
    taps = run_conv()
    assert rows.tobytes() == taps.tobytes()
    s, d = np.broadcast_to(strides, 2), np.broadcast_to(dilations, 2)
    want = reference_conv2d(x.astype(np.float64), f.astype(np.float64), s, "SAME", d)
    np.testing.assert_allclose(rows, want, rtol=1e-5, atol=1e-5)


def _run_depthwise(x, f, strides, padding, fmt="NHWC", dilations=1):
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.as_dtype(x.dtype), shape=x.shape)
        y = mg.nn.depthwise_conv2d_native(
            p, f, strides, padding, data_format=fmt, dilations=dilations
        )
    return mg.Session(g).run(y, {p: x})


@pytest.mark.parametrize("piece_bytes", [1, 1 << 20])
@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("strides, dilations", [(1, 1), ((2, 1), 1), ((1, 2), 1), (2, 2), (1, 2)])
def test_depthwise_by_rows_equals_whole_image_taps(
    monkeypatch, piece_bytes, fmt, padding, strides, dilations
):
    # Long output rows (ow * channels >= 256) take depthwise_by_rows: pieces of output rows
    # (or of whole images) that read the input in place: one einsum over whole output rows
    # where the column stride is 1, else (24 channels) a multiply and an add a tap over
    # strided views. Its sums are bitwise those of the whole-image path and match the
    # reference.
    from minigraph.ops import conv_kernels

    rng = np.random.default_rng(7)
    x = rng.standard_normal((6, 9, 22, 24)).astype(np.float32)  # pieces of several images
    f = rng.standard_normal((3, 3, 24, 1)).astype(np.float32)
    xin = np.ascontiguousarray(x.transpose(0, 3, 1, 2)) if fmt == "NCHW" else x
    monkeypatch.setattr(conv_kernels, "_DEPTHWISE_ROWS_BYTES", piece_bytes)
    rows = _run_depthwise(xin, f, strides, padding, fmt, dilations)
    monkeypatch.setattr(conv_kernels, "_DEPTHWISE_MIN_ROW", 1 << 30)
    whole = _run_depthwise(xin, f, strides, padding, fmt, dilations)
    assert rows.tobytes() == whole.tobytes()
    if fmt == "NCHW":
        rows = rows.transpose(0, 2, 3, 1)
    s, d = np.broadcast_to(strides, 2), np.broadcast_to(dilations, 2)
    pads = (
        [_same_pads(9, 3, s[0], d[0]), _same_pads(22, 3, s[1], d[1])]
        if padding == "SAME"
        else [(0, 0)] * 2
    )
    want = reference_depthwise(x.astype(np.float64), f.astype(np.float64), s, pads, d)
    np.testing.assert_allclose(rows, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("strides, dilations", [(1, 1), (2, 1), ((1, 2), (2, 1))])
def test_depthwise_by_rows_of_larger_filters_equals_whole_image_taps(
    monkeypatch, fmt, strides, dilations
):
    # 40 channels: depthwise_by_rows sums each piece in one einsum. 5x7 filters, NaN, inf
    # and signed zeros among the values: the same bits as the whole-image path but for a
    # NaN's payload.
    from minigraph.ops import conv_kernels

    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 15, 17, 40)).astype(np.float32)
    x.flat[::97] = np.nan
    x.flat[1::89] = np.inf
    x.flat[2::83] = -0.0
    f = rng.standard_normal((5, 7, 40, 1)).astype(np.float32)
    f.flat[::11] = -0.0
    xin = np.ascontiguousarray(x.transpose(0, 3, 1, 2)) if fmt == "NCHW" else x
    monkeypatch.setattr(conv_kernels, "_DEPTHWISE_ROWS_BYTES", 1 << 12)
    rows = _run_depthwise(xin, f, strides, "SAME", fmt, dilations)
    monkeypatch.setattr(conv_kernels, "_DEPTHWISE_MIN_ROW", 1 << 30)
    whole = _run_depthwise(xin, f, strides, "SAME", fmt, dilations)
    nan = np.isnan(rows) & np.isnan(whole)
    assert nan.any() and rows.shape == whole.shape
    assert (rows.view(np.uint32) == whole.view(np.uint32))[~nan].all()


@pytest.mark.parametrize("patch_bytes", [1, 1 << 22])
@pytest.mark.parametrize("strides, kernel", [(1, 3), (2, 3), (2, 1), (1, 1)])
def test_conv2d_pieces_of_rows_equal_whole_images(monkeypatch, patch_bytes, strides, kernel):
    # Conv2D cuts its output into pieces of whole images or of one image's output rows
    # (about PATCH_BYTES of patches each); every cut gives the same bits, and the reference.
    from minigraph.ops import conv_kernels

    rng = np.random.default_rng(kernel)
    x = rng.standard_normal((3, 11, 10, 40)).astype(np.float32)
    f = rng.standard_normal((kernel, kernel, 40, 24)).astype(np.float32)

    def run_conv():
        g = mg.Graph()
        with g.as_default():
            p = mg.placeholder(mg.float32, shape=x.shape)
            y = mg.conv2d(p, f, strides, "SAME")
        return mg.Session(g).run(y, {p: x})

    monkeypatch.setattr(conv_kernels, "PATCH_BYTES", patch_bytes)
    got = run_conv()
    s = np.broadcast_to(strides, 2)
    want = reference_conv2d(x.astype(np.float64), f.astype(np.float64), s, "SAME", (1, 1))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    monkeypatch.setattr(conv_kernels, "PATCH_BYTES", 1 << 30)
    assert got.tobytes() == run_conv().tobytes()


@pytest.mark.parametrize("kernel", [1, 3])
def test_conv2d_with_more_filter_columns_than_patch_rows(kernel):
    # A late layer at batch 1 (fewer output pixels than output channels): one piece whose
    # product splits the filter's columns over the threads.
    rng = np.random.default_rng(kernel)
    x = rng.standard_normal((1, 3, 4, 64)).astype(np.float32)
    f = rng.standard_normal((kernel, kernel, 64, 96)).astype(np.float32)
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.float32, shape=x.shape)
        y = mg.conv2d(p, f, 1, "SAME")
    got = mg.Session(g).run(y, {p: x})
    want = reference_conv2d(x.astype(np.float64), f.astype(np.float64), (1, 1), "SAME", (1, 1))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
