"""SpaceToDepth, DepthToSpace, grouped Conv2D and the resize ops (bilinear, nearest, bicubic)
against small references of their own (TensorFlow's answers are in tests/fixtures/ops/image.npz)."""

import math

import numpy as np
import pytest
from op_helpers import build_fails, fails, run

import minigraph as mg

rng = np.random.default_rng(11)


def _space_to_depth_reference(x, b):
    n, h, w, c = x.shape
    out = np.empty((n, h // b, w // b, c * b * b), x.dtype)
    for i in range(h):
        for j in range(w):
            out[:, i // b, j // b, ((i % b) * b + j % b) * c : ((i % b) * b + j % b + 1) * c] = x[
                :, i, j
            ]
    return out


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("b", [2, 3])
def test_space_to_depth_and_back(b):
    x = rng.integers(0, 100, (2, 3 * b, 2 * b, 3)).astype(np.int32)
    y = run(lambda t: mg.space_to_depth(t, b), x)
    np.testing.assert_array_equal(y, _space_to_depth_reference(x, b))
    np.testing.assert_array_equal(run(lambda t: mg.depth_to_space(t, b), y), x)


def test_space_to_depth_shapes_and_errors():
    with mg.Graph().as_default():
        x = mg.placeholder(mg.float32, [None, 4, None, 3])
        assert mg.space_to_depth(x, 2).shape.as_list() == [None, 2, None, 12]
        assert mg.depth_to_space(mg.placeholder(mg.float32, [1, 2, 3, 8]), 2).shape.as_list() == [
            1,
            4,
            6,
            2,
        ]
    build_fails(
        lambda: mg.space_to_depth(np.zeros((1, 4, 5, 1)), 2),
        "Dimension size must be evenly divisible by 2 but is 5",
    )
    fails(
        lambda t: mg.space_to_depth(t, 2),
        np.zeros((1, 4, 5, 1)),
        match="Image width 5 and height 4 should be divisible by block_size: 2",
        known=False,
    )
    fails(
        lambda t: mg.depth_to_space(t, 2),
        np.zeros((1, 2, 2, 6)),
        match="Input depth dimension 6 should be divisible by: 4",
        known=False,
    )


def test_nchw_is_refused_on_the_cpu_and_runs_on_a_gpu(monkeypatch):
    x = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)  # NCHW
    g = mg.Graph()
    with g.as_default():
        y = mg.space_to_depth(x, 2, data_format="NCHW", name="s2d")
        z = mg.depth_to_space(y, 2, data_format="NCHW")
    with pytest.raises(mg.errors.NotFoundError, match="NHWC only") as e:
        mg.Session(g).run(y)
    assert e.value.node_name == "s2d"
    monkeypatch.setattr(mg.config, "simulated_gpu", lambda: True)
    got_y, got_z = mg.Session(g, "/gpu:0").run([y, z])
    want = _space_to_depth_reference(x.transpose(0, 2, 3, 1), 2).transpose(0, 3, 1, 2)
    np.testing.assert_array_equal(got_y, want)
    np.testing.assert_array_equal(got_z, x)


# -- grouped Conv2D ----------------------------------------------------------------------


def _grouped_reference(x, w):
    """VALID, stride 1: each group by direct sums over its own channels."""
    n, h, wd, cin = x.shape
    kh, kw, ci, cout = w.shape
    groups = cin // ci
    co = cout // groups
    out = np.zeros((n, h - kh + 1, wd - kw + 1, cout))
    for g in range(groups):
        xs = x[..., g * ci : (g + 1) * ci].astype(np.float64)
        for i in range(kh):
            for j in range(kw):
                window = xs[:, i : i + out.shape[1], j : j + out.shape[2]]
                out[..., g * co : (g + 1) * co] += window @ w[i, j, :, g * co : (g + 1) * co]
    return out


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("ci,cout", [(1, 6), (1, 12), (2, 9), (3, 4), (6, 4)])
def test_grouped_conv2d_matches_per_group_sums(ci, cout):
    x = rng.standard_normal((2, 6, 5, 6)).astype(np.float32)
    w = rng.standard_normal((3, 2, ci, cout)).astype(np.float32)
    got = run(lambda a, b: mg.conv2d(a, b, 1, "VALID"), x, w)
    np.testing.assert_allclose(got, _grouped_reference(x, w), rtol=1e-5, atol=1e-5)


def test_grouped_conv2d_errors():
    build_fails(
        lambda: mg.conv2d(
            np.zeros((1, 4, 4, 5), np.float32), np.zeros((2, 2, 2, 4), np.float32), 1, "VALID"
        ),  # fmt: skip
        r"Depth of input \(5\) is not a multiple of input depth of filter \(2\)",
    )
    build_fails(
        lambda: mg.conv2d(
            np.zeros((1, 4, 4, 4), np.float32), np.zeros((2, 2, 2, 3), np.float32), 1, "VALID"
        ),  # fmt: skip
        r"Depth of output \(3\) is not a multiple of the number of groups \(2\)",
    )
    fails(
        lambda a, b: mg.conv2d(a, b, 1, "VALID"),
        np.zeros((1, 4, 4, 4), np.float32),
        np.zeros((2, 2, 2, 3), np.float32),
        match="output depth must be evenly divisible by number of groups: 3 vs 2",
        known=False,
    )


# -- ResizeBilinear, ResizeNearestNeighbor -----------------------------------------------


def _source(i, scale, half, shift):
    f = np.float32
    if not half:
        return f(i) * scale
    v = (f(i) + f(0.5)) * scale
    return v - f(0.5) if shift else v


def _scale_of(n_in, n_out, corners):
    if corners and n_out > 1:
        return np.float32(n_in - 1) / np.float32(n_out - 1)
    return np.float32(n_in) / np.float32(n_out)


def _bilinear_reference(x, oh, ow, corners, half):
    """TensorFlow's CPU loop, one output pixel at a time, in float32."""
    n, h, w, c = x.shape
    out = np.empty((n, oh, ow, c), np.float32)
    sh, sw = _scale_of(h, oh, corners), _scale_of(w, ow, corners)
    for y in range(oh):
        v = _source(y, sh, half, True)
        y0, y1, ly = max(math.floor(v), 0), min(math.ceil(v), h - 1), v - np.float32(math.floor(v))
        for xx in range(ow):
            u = _source(xx, sw, half, True)
            x0, x1 = max(math.floor(u), 0), min(math.ceil(u), w - 1)
            lx = u - np.float32(math.floor(u))
            tl, tr = x[:, y0, x0].astype(np.float32), x[:, y0, x1].astype(np.float32)
            bl, br = x[:, y1, x0].astype(np.float32), x[:, y1, x1].astype(np.float32)
            top, bottom = tl + (tr - tl) * lx, bl + (br - bl) * lx
            out[:, y, xx] = top + (bottom - top) * ly
    return out


def _nearest_reference(x, oh, ow, corners, half):
    n, h, w, c = x.shape
    sh, sw = _scale_of(h, oh, corners), _scale_of(w, ow, corners)

    def index(i, scale, size):
        v = float(_source(i, scale, half, False))
        k = math.floor(v + 0.5) if corners else math.floor(v)  # roundf: v >= 0
        return max(min(k, size - 1), 0)

    rows = [index(i, sh, h) for i in range(oh)]
    cols = [index(j, sw, w) for j in range(ow)]
    return x[:, rows][:, :, cols]


MODES = [(False, False), (True, False), (False, True)]


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("corners,half", MODES)
@pytest.mark.parametrize("size", [(7, 3), (2, 9), (1, 1)])
def test_resize_matches_tensorflows_loops(corners, half, size):
    x = rng.standard_normal((2, 4, 5, 3)).astype(np.float32)

    def bilinear(t):
        return mg.resize_bilinear(t, size, align_corners=corners, half_pixel_centers=half)

    def nearest(t):
        return mg.resize_nearest_neighbor(t, size, align_corners=corners, half_pixel_centers=half)

    got = run(bilinear, x)
    assert got.tobytes() == _bilinear_reference(x, *size, corners, half).tobytes()
    ints = (x * 10).astype(np.int16)
    want = _nearest_reference(ints, *size, corners, half)
    np.testing.assert_array_equal(run(nearest, ints), want)


def test_resize_shapes_and_errors():
    with mg.Graph().as_default():
        x = mg.placeholder(mg.uint8, [None, 4, 4, 3])
        y = mg.resize_bilinear(x, [8, 2])
        assert y.shape.as_list() == [None, 8, 2, 3] and y.dtype == mg.float32
        size = mg.placeholder(mg.int32, [2])
        assert mg.resize_nearest_neighbor(x, size).shape.as_list() == [None, None, None, 3]
    build_fails(
        lambda: mg.resize_bilinear(np.zeros((1, 2, 2, 1)), [3, 3], True, half_pixel_centers=True),
        "If half_pixel_centers is True, align_corners must be False",
    )
    fails(
        lambda t, s: mg.resize_bilinear(t, s),
        np.zeros((1, 2, 2, 1), np.float32),
        np.array([0, 3], np.int32),
        match="output dimensions must be positive",
    )
    fails(
        lambda t, s: mg.resize_nearest_neighbor(t, s),
        np.zeros((1, 0, 2, 1), np.float32),
        np.array([3, 3], np.int32),
        match="input image must be of non-zero size",
    )


# -- ResizeBicubic ---------------------------------------------------------------------------


def _keys(a, t):
    """Keys' cubic convolution kernel at distance t (in double, as TF's table)."""
    t = abs(t)
    if t <= 1:
        return ((a + 2) * t - (a + 3)) * t * t + 1
    return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a


def _bicubic_taps(i, scale, size, half):
    """One output index's four (index, weight) taps, as TF's GetWeightsAndIndices."""
    f = np.float32
    v = _source(i, scale, half, True)
    base = math.floor(v)
    offset = int(np.rint((v - f(base)) * f(1024)))  # lrintf: ties to even
    a = -0.5 if half else -0.75
    weights = [f(_keys(a, 1 + offset / 1024)), f(_keys(a, offset / 1024)),
               f(_keys(a, 1 - offset / 1024)), f(_keys(a, 2 - offset / 1024))]  # fmt: skip
    taps = [base - 1, base, base + 1, base + 2]
    index = [min(max(t, 0), size - 1) for t in taps]
    if half:
        weights = [w if k == t else f(0) for w, k, t in zip(weights, index, taps)]
        total = ((weights[0] + weights[1]) + weights[2]) + weights[3]
        if abs(total) >= f(1000) * np.finfo(f).tiny:
            weights = [w * (f(1) / total) for w in weights]
    return index, weights


def _bicubic_reference(x, oh, ow, corners, half):
    """TensorFlow's CPU loop, one output pixel at a time: four rows blended for each of the
    four columns, then the columns, in float32."""
    n, h, w, c = x.shape
    out = np.empty((n, oh, ow, c), np.float32)
    sh, sw = _scale_of(h, oh, corners), _scale_of(w, ow, corners)
    xf = x.astype(np.float32)
    for y in range(oh):
        rows, wy = _bicubic_taps(y, sh, h, half)
        for xx in range(ow):
            cols, wx = _bicubic_taps(xx, sw, w, half)
            column = []
            for col in cols:
                v = [xf[:, r, col] for r in rows]
                column.append(((v[0] * wy[0] + v[1] * wy[1]) + v[2] * wy[2]) + v[3] * wy[3])
            out[:, y, xx] = ((column[0] * wx[0] + column[1] * wx[1]) + column[2] * wx[2]) + (
                column[3] * wx[3]
            )
    return out


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("corners,half", MODES)
@pytest.mark.parametrize("size", [(7, 3), (2, 9), (1, 1), (4, 5)])
def test_resize_bicubic_matches_tensorflows_loop(corners, half, size):
    x = rng.standard_normal((2, 4, 5, 3)).astype(np.float32)

    def bicubic(t):
        return mg.resize_bicubic(t, size, align_corners=corners, half_pixel_centers=half)

    got = run(bicubic, x)
    assert got.tobytes() == _bicubic_reference(x, *size, corners, half).tobytes()
    ints = rng.integers(-1000, 1000, (1, 3, 2, 2)).astype(np.int16)
    want = _bicubic_reference(ints, *size, corners, half)
    assert run(bicubic, ints).tobytes() == want.tobytes()


def test_resize_bicubic_keys_weights_sum_to_one_and_reproduce_a_ramp():
    """Keys' kernel (half-pixel centres) reproduces linear data away from the borders."""
    ramp = np.arange(16, dtype=np.float32).reshape(1, 1, 16, 1)
    got = run(lambda t: mg.resize_bicubic(t, [1, 32], half_pixel_centers=True), ramp)
    centres = (np.arange(32) + 0.5) / 2 - 0.5
    np.testing.assert_allclose(got[0, 0, 4:-4, 0], centres[4:-4], atol=2e-3)


def test_resize_bicubic_shapes_and_errors():
    with mg.Graph().as_default():
        x = mg.placeholder(mg.int8, [None, 4, 4, 3])
        y = mg.resize_bicubic(x, [8, 2])
        assert y.shape.as_list() == [None, 8, 2, 3] and y.dtype == mg.float32
    build_fails(
        lambda: mg.resize_bicubic(np.zeros((1, 2, 2, 1)), [3, 3], True, half_pixel_centers=True),
        "If half_pixel_centers is True, align_corners must be False",
    )
    fails(
        lambda t, s: mg.resize_bicubic(t, s),
        np.zeros((1, 2, 2, 1), np.float32),
        np.array([3, -1], np.int32),
        match="output dimensions must be positive",
    )
    fails(
        lambda t, s: mg.resize_bicubic(t, s),
        np.zeros((2, 2, 1), np.float32),
        np.array([3, 3], np.int32),
        match=r"input must be 4-dimensional\[2,2,1\]",
        known=False,
    )
