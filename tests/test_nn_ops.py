"""Conv2D against a direct (loop) reference written here."""

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
    st.integers(1, 3),
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
        ([1, 4, 4, 2], [1, 1, 3, 1], dict(strides=1, padding="SAME"), "Dimensions must be equal"),
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
