"""Conv3D, MaxPool3D and AvgPool3D against direct (loop) references written here, in NDHWC
and NCDHW, with TensorFlow's shape-function and kernel messages. TensorFlow's own answers
are in tests/fixtures/ops/conv3d.npz and conv3d_onednn.npz (tests/tf_oracle/cases_conv3d*.py)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import build_fails, fails, run

import minigraph as mg
from minigraph import errors
from minigraph.wrappers import apply_op

rng = np.random.default_rng(3)
on_any_device = pytest.mark.usefixtures("any_device")  # CPU, (simulated) GPU, unoptimized


def _geometry(size, k, stride, dilation, padding):
    """Output size and the padding before, for one dim (TensorFlow's rule, written out)."""
    effective = (k - 1) * dilation + 1
    if padding == "VALID":
        return max((size - effective) // stride + 1, 0), 0
    out = -(-size // stride)
    return out, max((out - 1) * stride + effective - size, 0) // 2


def reference_conv3d(x, w, strides, padding, dilations):
    """Direct NDHWC cross-correlation in float64, one output position at a time."""
    n, *spatial, _ = x.shape
    *k, _, cout = w.shape
    geo = [_geometry(*a, padding) for a in zip(spatial, k, strides, dilations)]
    outs = [o for o, _ in geo]
    out = np.zeros((n, *outs, cout))
    for pos in itertools.product(*(range(o) for o in outs)):
        for tap in itertools.product(*(range(kk) for kk in k)):
            src = [p * s + t * d - before for p, s, t, d, (_, before) in
                   zip(pos, strides, tap, dilations, geo)]  # fmt: skip
            if all(0 <= c < m for c, m in zip(src, spatial)):
                out[(slice(None), *pos)] += x[(slice(None), *src)].astype(np.float64) @ w[tap]
    return out


def reference_pool3d(x, k, strides, padding, average):
    """Direct NDHWC pooling: the mean over a window's cells inside the input, or the largest
    non-NaN one (the lowest float when there is none)."""
    n, *spatial, c = x.shape
    geo = [_geometry(*a, 1, padding) for a in zip(spatial, k, strides)]
    out = np.zeros((n, *(o for o, _ in geo), c), x.dtype)
    lowest = np.finfo(x.dtype).min
    for pos in itertools.product(*(range(o) for o, _ in geo)):
        ranges = []
        for p, s, kk, m, (_, before) in zip(pos, strides, k, spatial, geo):
            start = p * s - before
            ranges.append(slice(max(start, 0), min(start + kk, m)))
        cells = x[(slice(None), *ranges)].reshape(n, -1, c).astype(np.float64)
        if average:
            out[(slice(None), *pos)] = cells.mean(axis=1)
        else:
            cells = np.where(np.isnan(cells), -np.inf, cells).max(axis=1)
            out[(slice(None), *pos)] = np.maximum(cells, lowest)
    return out


def _ncdhw(a):
    return np.ascontiguousarray(a.transpose(0, 4, 1, 2, 3))


def _on_gpu(monkeypatch):
    """Every Session on the (simulated, where there is no GPU) "/gpu:0"."""
    from minigraph.devices import gpu_unavailable_reason

    if gpu_unavailable_reason() is not None:
        monkeypatch.setattr(mg.config, "simulated_gpu", lambda: True)
    init = mg.Session.__init__

    def on_gpu(self, graph=None, device=None, **kwargs):
        init(self, graph, "/gpu:0", **kwargs)

    monkeypatch.setattr(mg.Session, "__init__", on_gpu)


# -- Conv3D ------------------------------------------------------------------------------


@on_any_device
@settings(max_examples=30, deadline=None)
@given(
    st.tuples(st.integers(1, 5), st.integers(1, 5), st.integers(1, 5)),
    st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)),
    st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)),
    st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 2)),
    st.sampled_from(["SAME", "VALID"]),
    # float64: up to 2 channels im2col, from 3 a product per tap; float32 up to 4 im2col
    st.sampled_from([(1, np.float64), (2, np.float64), (5, np.float64), (3, np.float32)]),
    st.integers(1, 3),
)
def test_conv3d_matches_reference(spatial, k, strides, dilations, padding, channels, cout):
    cin, dtype = channels
    x = rng.standard_normal((2, *spatial, cin)).astype(dtype)
    w = rng.standard_normal((*k, cin, cout)).astype(dtype)
    valid = all(m >= (kk - 1) * d + 1 for m, kk, d in zip(spatial, k, dilations))
    if padding == "VALID" and not valid:
        return  # an empty output (or a negative one): TensorFlow's cases in conv3d.npz
    got = run(lambda a: mg.nn.conv3d(a, w, strides, padding, dilations=dilations), x)
    tol = 1e-10 if dtype == np.float64 else 1e-5
    want = reference_conv3d(x, w, strides, padding, dilations)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@on_any_device
def test_conv3d_float16_sums_in_float32():
    x = rng.standard_normal((1, 3, 4, 3, 3)).astype(np.float16)
    w = rng.standard_normal((2, 2, 2, 3, 2)).astype(np.float16)
    got = run(lambda a: mg.nn.conv3d(a, w, 1, "SAME"), x)
    want = reference_conv3d(x.astype(np.float32), w.astype(np.float32), (1,) * 3, "SAME", (1,) * 3)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want.astype(np.float32).astype(np.float16))


def test_conv3d_shapes():
    with mg.Graph().as_default():
        x = mg.placeholder(mg.float32, [None, 5, None, 7, 2])
        w = mg.placeholder(mg.float32, [2, None, 2, 2, 3])
        y = mg.nn.conv3d(x, w, [1, 2, 1, 3, 1], "VALID")
        assert y.shape.as_list() == [None, 2, None, 2, 3]
        assert mg.nn.conv3d(x, w, 2, "SAME").shape.as_list() == [None, 3, None, 4, 3]
        u = mg.placeholder(mg.float32, None)
        assert mg.nn.conv3d(u, w, 1, "SAME").shape.as_list() == [None] * 4 + [3]
        # NCDHW: channels second; strides and dilations in the format's order
        xc = mg.placeholder(mg.float32, [1, 2, 5, 6, 7])
        y = mg.nn.conv3d(xc, w, [1, 1, 2, 1, 3], "SAME", data_format="NCDHW")
        assert y.shape.as_list() == [1, 3, 3, 6, 3]
        assert y.op.node.attrs["strides"] == (1, 1, 2, 1, 3)
        z = mg.nn.conv3d(xc, filters=np.ones((2, 3, 2, 2, 4), np.float32), strides=1,
                         padding="VALID", data_format="NCDHW", dilations=[1, 2, 1])  # fmt: skip
        assert z.shape.as_list() == [1, 4, 4, 2, 6]
        assert z.op.node.attrs["dilations"] == (1, 1, 1, 2, 1) and z.op.name == "Conv3D_4"


@pytest.mark.parametrize(
    "x_shape, w_shape, kwargs, message",
    [
        ([4, 4, 4, 2], [2, 2, 2, 2, 3], {}, "Shape must be rank 5 but is rank 4"),
        ([1, 4, 4, 4, 2], [2, 2, 2, 3], {}, "Shape must be rank 5 but is rank 4"),
        ([1, 4, 4, 4, 2], [2, 2, 2, 2, 3], dict(strides=[1] * 6),
         "Conv3D requires the stride attribute to contain 5 values, but got: 6"),
        ([1, 4, 4, 4, 2], [2, 2, 2, 2, 3], dict(dilations=[1] * 4),
         "Conv3D requires the dilation attribute to contain 5 values, but got: 4"),
        ([1, 4, 4, 4, 2], [2, 2, 2, 2, 3], dict(strides=[2, 1, 1, 1, 1]),
         "does not yet support strides in the batch and depth dimensions"),
        ([1, 4, 4, 4, 2], [2, 2, 2, 2, 3], dict(dilations=[1, 1, 1, 1, 2]),
         "does not yet support dilation rates in the batch and depth dimensions"),
        ([1, 4, 4, 4, 2], [2, 2, 2, 2, 3], dict(strides=[1, 1, 0, 1, 1]),
         "Stride must be > 0, but got 0"),
        ([1, 4, 4, 4, 2], [2, 2, 2, 2, 3], dict(dilations=[1, 1, 1, -1, 1]),
         "Dilation rate must be >= 1, but got -1"),
        ([1, 4, 4, 4, 2], [2, 2, 2, 3, 3], {},
         r"Depth of input \(2\) is not a multiple of input depth of filter \(3\)"),
        ([1, 4, 4, 4, 0], [2, 2, 2, 0, 3], {}, "Depth of filter must not be 0"),
        ([1, 4, 4, 4, 4], [2, 2, 2, 2, 3], {},
         r"Depth of output \(3\) is not a multiple of the number of groups \(2\)"),
        ([1, 0, 4, 4, 2], [2, 2, 2, 2, 3], dict(padding="VALID"),
         r"Computed output size would be negative: -1 \[input_size: 0, effective_filter_size: 2"),
        ([1, 4, 4, 4, 2], [2, 2, 2, 2, 3], dict(data_format="NHWC"),
         "not in the list of allowed values"),
    ],
)  # fmt: skip
def test_conv3d_build_errors(x_shape, w_shape, kwargs, message):
    attrs = {"strides": [1] * 5, "padding": "SAME", **kwargs}
    x, w = np.ones(x_shape, np.float32), np.ones(w_shape, np.float32)
    e = build_fails(lambda: apply_op("Conv3D", None, [x, w], attrs), message)
    assert e.op_type == "Conv3D"


@on_any_device
@pytest.mark.parametrize(
    "x, w, message",
    [
        (np.ones((4, 4, 4, 2)), np.ones((2, 2, 2, 2, 3)), r"input must be 5-dimensional, got \[4"),
        (np.ones((1, 4, 4, 4, 2)), np.ones((2, 2, 2, 2)), "filter must be 5-dimensional"),
        (np.ones((1, 4, 4, 4, 2)), np.ones((2, 2, 2, 3, 3)),
         "Input depth must be evenly divisible by filter depth: 2 vs 3"),
        (np.ones((1, 4, 4, 4, 0)), np.ones((2, 2, 2, 0, 3)), "filter_depth must be non-zero"),
        (np.ones((1, 4, 4, 4, 2)), np.ones((2, 2, 2, 2, 0)), "filter must not have zero elements"),
        (np.ones((1, 4, 4, 4, 0)), np.ones((2, 2, 2, 2, 3)),
         r"Number of channels in filter \(2\) must match last dimension of input \(0\)"),
        (np.ones((1, 4, 4, 4, 4)), np.ones((2, 2, 2, 2, 3)),
         r"Depth of output \(3\) is not a multiple of the number of groups \(2\)"),
    ],
)  # fmt: skip
def test_conv3d_run_errors_with_unknown_shapes(x, w, message):
    x, w = x.astype(np.float32), w.astype(np.float32)
    fails(lambda a, b: mg.nn.conv3d(a, b, 1, "SAME"), x, w, match=message, known=False)


@pytest.mark.parametrize("with_filter", [False, True])
def test_conv3d_ncdhw_is_refused_on_the_cpu_and_runs_on_a_gpu(monkeypatch, with_filter):
    x = rng.standard_normal((2, 4, 5, 3, 3)).astype(np.float32)  # NDHWC
    w = rng.standard_normal((2, 3, 2, 3, 4)).astype(np.float32)
    strides, dilations = [1, 2, 1, 2, 1], [1, 1, 2, 1, 1]
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.float32, [2, 3, 4, 5, 3])  # fed NCDHW in C order
        f = mg.placeholder(mg.float32, w.shape) if with_filter else w
        y = mg.nn.conv3d(p, f, [1, 1, 2, 1, 2], "SAME", "NCDHW", [1, 1, 1, 2, 1], name="c3")
    feeds = {p: _ncdhw(x), **({f: w} if with_filter else {})}
    with pytest.raises(errors.InvalidArgumentError, match="only supports the NHWC") as e:
        mg.Session(g).run(y, feeds)
    assert e.value.node_name == "c3"
    _on_gpu(monkeypatch)
    got = mg.Session(g).run(y, feeds)
    want = reference_conv3d(x, w, strides[1:4], "SAME", dilations[1:4])
    np.testing.assert_allclose(got, _ncdhw(want), rtol=1e-5, atol=1e-5)
    assert list(got.shape) == y.shape.as_list()


def test_conv3d_ncdhw_with_an_empty_output_runs_on_the_cpu():
    # TensorFlow's Conv3D returns an empty output before it would refuse the format
    w = np.ones((2, 2, 2, 3, 4), np.float32)
    x = np.ones((0, 3, 4, 4, 4), np.float32)
    got = run(lambda a: mg.nn.conv3d(a, w, 1, "SAME", data_format="NCDHW"), x)
    assert got.shape == (0, 4, 4, 4, 4)


def _grouped_reference(x, w, strides, padding):
    groups = x.shape[-1] // w.shape[3]
    ci, co = w.shape[3], w.shape[4] // groups
    parts = [
        reference_conv3d(
            x[..., g * ci : (g + 1) * ci],
            w[..., g * co : (g + 1) * co],
            strides,
            padding,
            (1, 1, 1),
        )  # fmt: skip
        for g in range(groups)
    ]
    return np.concatenate(parts, axis=-1)


@pytest.mark.parametrize("ci, cout", [(1, 4), (1, 8), (2, 6), (2, 2)])
def test_grouped_conv3d_is_refused_on_the_cpu_and_runs_on_a_gpu(monkeypatch, ci, cout):
    x = rng.standard_normal((2, 4, 3, 5, 4)).astype(np.float32)
    w = rng.standard_normal((2, 2, 3, ci, cout)).astype(np.float32)
    build = lambda a: mg.nn.conv3d(a, w, [1, 1, 2, 1, 1], "SAME")  # noqa: E731
    fails(build, x, match=rf"Number of channels in filter \({ci}\) must match last dimension")
    _on_gpu(monkeypatch)
    got = run(build, x)
    np.testing.assert_allclose(
        got, _grouped_reference(x, w, (1, 2, 1), "SAME"), rtol=1e-5, atol=1e-5
    )


# -- MaxPool3D and AvgPool3D ------------------------------------------------------------


@on_any_device
@settings(max_examples=30, deadline=None)
@given(
    st.tuples(st.integers(1, 5), st.integers(1, 5), st.integers(1, 5)),
    st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)),
    st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)),
    st.sampled_from(["SAME", "VALID"]),
    st.sampled_from([(np.float32, 1), (np.float32, 5), (np.float16, 3), (np.float64, 2)]),
    st.booleans(),
)
def test_pool3d_matches_reference(spatial, k, strides, padding, kind, average):
    dtype, channels = kind
    if dtype == np.float64 and not average:
        return  # MaxPool3D takes float16 and float32 only (as TensorFlow)
    if padding == "VALID" and any(m < kk for m, kk in zip(spatial, k)):
        return  # an empty output (or a negative one): TensorFlow's cases in conv3d.npz
    x = rng.standard_normal((2, *spatial, channels)).astype(dtype)
    x[rng.random(x.shape) < 0.1] = np.nan if not average else 0
    pool = mg.nn.avg_pool3d if average else mg.nn.max_pool3d
    got = run(lambda a: pool(a, k, strides, padding), x)
    want = reference_pool3d(x, k, strides, padding, average)
    assert got.dtype == dtype and got.shape == want.shape
    tol = {np.float16: 1e-3, np.float32: 1e-6, np.float64: 1e-12}[dtype]
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("average", [False, True])
def test_pool3d_ncdhw_is_refused_on_the_cpu_and_runs_on_a_gpu(monkeypatch, average):
    x = rng.standard_normal((2, 5, 4, 3, 3)).astype(np.float32)
    pool = mg.nn.avg_pool3d if average else mg.nn.max_pool3d
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.float32, [2, 3, 5, 4, 3])
        y = pool(p, [1, 1, 3, 2, 2], [1, 1, 2, 1, 2], "SAME", data_format="NCDHW", name="pool")
    assert y.shape.as_list() == [2, 3, 3, 4, 2]
    with pytest.raises(errors.InvalidArgumentError, match="only supports NDHWC on device type CPU"):
        mg.Session(g).run(y, {p: _ncdhw(x)})
    _on_gpu(monkeypatch)
    got = mg.Session(g).run(y, {p: _ncdhw(x)})
    want = reference_pool3d(x, (3, 2, 2), (2, 1, 2), "SAME", average)
    np.testing.assert_allclose(got, _ncdhw(want), rtol=1e-6, atol=1e-6)


def test_pool3d_shapes():
    with mg.Graph().as_default():
        x = mg.placeholder(mg.float32, [None, 5, None, 7, None])
        assert mg.nn.max_pool3d(x, [2, 3, 1], [2, 1, 3], "VALID").shape.as_list() == [
            None, 2, None, 3, None
        ]  # fmt: skip
        assert mg.nn.avg_pool3d(x, 2, 2, "SAME").shape.as_list() == [None, 3, None, 4, None]
        y = mg.nn.avg_pool3d(input=x, ksize=[1, 2, 2, 2, 1], strides=1, padding="SAME")
        assert y.op.node.attrs["ksize"] == (1, 2, 2, 2, 1) and y.op.type == "AvgPool3D"


@pytest.mark.parametrize("op", ["MaxPool3D", "AvgPool3D"])
@pytest.mark.parametrize(
    "x_shape, attrs, message",
    [
        ([4, 4, 4, 2], {}, "Shape must be rank 5 but is rank 4"),
        ([1, 4, 4, 4, 2], dict(ksize=[1] * 6),
         "Pool3D requires the ksize attribute to contain 5 values, but got: 6"),
        ([1, 4, 4, 4, 2], dict(strides=[1] * 4),
         "Pool3D ops require the stride attribute to contain 5 values, but got: 4"),
        ([1, 4, 4, 4, 2], dict(ksize=[1, 2, 0, 2, 1]),
         "Sliding window ksize field must have non-negative dimensions"),
        ([1, 4, 4, 4, 2], dict(strides=[1, 1, 1, -2, 1]), "Stride must be > 0, but got -2"),
    ],
)  # fmt: skip
def test_pool3d_build_errors(op, x_shape, attrs, message):
    attrs = {"ksize": [1, 2, 2, 2, 1], "strides": [1] * 5, "padding": "SAME", **attrs}
    x = np.ones(x_shape, np.float32)
    e = build_fails(lambda: apply_op(op, None, [x], attrs), message)
    assert e.op_type == op


@pytest.mark.parametrize("op", ["MaxPool3D", "AvgPool3D"])
@pytest.mark.parametrize(
    "attrs, where",
    [
        (dict(ksize=[2, 1, 1, 1, 1]), "batch"),
        (dict(strides=[1, 1, 1, 1, 2]), "depth"),
        (dict(ksize=[1, 2, 1, 1, 1], data_format="NCDHW"), "depth"),
    ],
)
def test_pool3d_over_batch_or_channels_is_unimplemented(op, attrs, where):
    attrs = {"ksize": [1, 1, 1, 1, 1], "strides": [1] * 5, "padding": "SAME", **attrs}
    with pytest.raises(errors.UnimplementedError, match=f"not yet supported on the {where}") as e:
        with mg.Graph().as_default():
            apply_op(op, None, [np.ones((1, 2, 2, 2, 2), np.float32)], attrs)
    assert e.value.node_name == op


@on_any_device
@pytest.mark.parametrize("pool", [mg.nn.max_pool3d, mg.nn.avg_pool3d])
def test_pool3d_rank_checked_at_run_time(pool):
    fails(lambda a: pool(a, 1, 1, "SAME"), np.ones((2, 2, 2, 2), np.float32),
          match=r"tensor_in must be 5-dimensional, got \[2, 2, 2, 2\]", known=False)  # fmt: skip


@on_any_device
def test_avg_pool3d_divides_by_the_cells_inside_the_input():
    # a 3x3x3 volume of ones but for a 27 in its corner, 2x2x2 windows, stride 2, SAME: the
    # corner window holds 8 cells, the last ones along each dim 4, 2 or 1 (27 / 8 = 3.375)
    x = np.ones((1, 3, 3, 3, 1), np.float32)
    x[0, 0, 0, 0, 0] = 27.0
    got = run(lambda a: mg.nn.avg_pool3d(a, 2, 2, "SAME"), x)[0, ..., 0]
    want = np.ones((2, 2, 2), np.float32)
    want[0, 0, 0] = (27.0 + 7) / 8
    np.testing.assert_array_equal(got, want)


@on_any_device
def test_max_pool3d_special_values():
    # TensorFlow's rule (as its default CPU kernel): NaN never wins, a window of only -inf
    # or NaN gives the lowest float, the first of 0.0 and -0.0 wins
    pairs = np.array([np.nan, 1.0, -np.inf, -np.inf, np.nan, np.nan, -0.0, 0.0, 0.0, -0.0],
                     np.float32).reshape(1, 1, 1, 10, 1)  # fmt: skip
    got = run(lambda a: mg.nn.max_pool3d(a, [1, 1, 2], [1, 1, 2], "VALID"), pairs).ravel()
    lowest = np.finfo(np.float32).min
    np.testing.assert_array_equal(got, [1.0, lowest, lowest, -0.0, 0.0])
    assert np.signbit(got).tolist() == [False, True, True, True, False]


def test_builders_are_in_mg_nn_and_ops():
    assert mg.nn.conv3d.__doc__ and "tf.compat.v1.nn.max_pool3d" in mg.nn.max_pool3d.__doc__
    assert {"Conv3D", "MaxPool3D", "AvgPool3D"} <= set(mg.registered_ops())
    for op in ("Conv3D", "MaxPool3D", "AvgPool3D"):
        assert mg.registered_ops()[op].kernel_devices == {"CPU", "GPU"}
        assert getattr(mg.ops, op).__name__ == op
