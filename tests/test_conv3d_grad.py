"""Gradients of the 3-D convolution and pooling ops (ops/conv3d_grad.py) and the 3-D
gradient ops (ops/conv3d_backprop_ops.py, ops/pool3d_grad_ops.py).

TensorFlow's gradients are replayed from tests/fixtures/grads/conv3d.npz by
test_tf_grad_fixtures.py and the gradient ops' values and messages from
tests/fixtures/ops/conv3d_grad_ops.npz by test_tf_op_fixtures.py. Here: every gradient
against central differences (mg.test.compute_gradient_error; float64, or float32 where the
op has no float64), including what TensorFlow's CPU refuses (NCDHW on the simulated GPU,
float64 dilations) and second order; MaxPool3DGrad against a loop written here; NCDHW
against NDHWC; unknown shapes; the CPU's refusals.
"""

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors
from minigraph.wrappers import apply_op

rng = np.random.default_rng(3327)


@pytest.fixture
def on_gpu(monkeypatch):
    """Every Session on the (simulated, where there is no GPU) "/gpu:0"."""
    from minigraph.devices import gpu_unavailable_reason

    if gpu_unavailable_reason() is not None:
        monkeypatch.setattr(mg.config, "simulated_gpu", lambda: True)
    init = mg.Session.__init__

    def gpu_session(self, graph=None, device=None, **kwargs):
        init(self, graph, "/gpu:0", **kwargs)

    monkeypatch.setattr(mg.Session, "__init__", gpu_session)


def _op(op_type, inputs, **attrs):
    return apply_op(op_type, None, inputs, attrs).outputs[0]


def _gradient_error(build, shapes, wrt=0, values=None, dtype=mg.float64):
    """compute_gradient_error of ``build(*placeholders)`` with respect to input ``wrt``
    (the other inputs fed with random values, or ``values``)."""
    values = values or [rng.standard_normal(s) for s in shapes]
    g = mg.Graph()
    with g.as_default():
        phs = [mg.placeholder(dtype, shape=s) for s in shapes]
        y = build(*phs)
        feeds = {p: v for i, (p, v) in enumerate(zip(phs, values)) if i != wrt}
        return mg.test.compute_gradient_error(
            phs[wrt], shapes[wrt], y, y.shape.as_list(), x_init_value=values[wrt],
            extra_feed_dict=feeds,
        )  # fmt: skip


def _five(fmt, spatial):
    return [1, 1, *spatial] if fmt == "NCDHW" else [1, *spatial, 1]


def _ncdhw(shape):
    return [shape[0], shape[4], *shape[1:4]]


# -- Conv3D and its backprops ------------------------------------------------------------

# (label, input NDHWC, filter, strides, dilations, padding, format)
CONVS = [
    ("valid", [2, 4, 3, 4, 2], [2, 2, 3, 2, 3], (1, 1, 1), (1, 1, 1), "VALID", "NDHWC"),
    ("same-s2", [1, 5, 4, 5, 2], [3, 2, 2, 2, 2], (2, 1, 2), (1, 1, 1), "SAME", "NDHWC"),
    ("dilated", [1, 5, 4, 5, 1], [2, 2, 2, 1, 2], (1, 1, 1), (2, 1, 2), "SAME", "NDHWC"),
    ("ncdhw", [1, 4, 4, 3, 2], [2, 3, 2, 2, 2], (1, 2, 1), (1, 1, 1), "SAME", "NCDHW"),
    ("ncdhw-dilated", [1, 5, 3, 4, 2], [2, 2, 2, 2, 1], (1, 1, 1), (2, 1, 1), "VALID", "NCDHW"),
    ("grouped", [1, 3, 4, 3, 4], [2, 2, 2, 2, 4], (1, 2, 1), (1, 1, 1), "SAME", "NDHWC"),
]


def _conv_case(case):
    _, x, w, s, d, padding, fmt = case
    attrs = {"strides": _five(fmt, s), "dilations": _five(fmt, d), "padding": padding}
    attrs["data_format"] = fmt
    x_shape = _ncdhw(x) if fmt == "NCDHW" else x

    def conv(a, b):
        return _op("Conv3D", [a, b], **attrs)

    return attrs, x_shape, w, conv


def _device(case, request):
    """NCDHW and grouped filters run on a GPU only (as TensorFlow's CPU refuses them)."""
    if case[-1] == "NCDHW" or case[0] == "grouped":
        request.getfixturevalue("on_gpu")


@pytest.mark.parametrize("case", CONVS, ids=[c[0] for c in CONVS])
@pytest.mark.parametrize("wrt", [0, 1], ids=["input", "filter"])
def test_conv3d_gradients_match_finite_differences(case, wrt, request):
    _device(case, request)
    _, x_shape, w, conv = _conv_case(case)
    assert _gradient_error(conv, [x_shape, w], wrt) < 1e-6


@pytest.mark.parametrize("case", CONVS, ids=[c[0] for c in CONVS])
@pytest.mark.parametrize("which", ["Input", "Filter"])
@pytest.mark.parametrize("wrt", [1, 2], ids=["second", "out_backprop"])
def test_backprop_gradients_match_finite_differences(case, which, wrt, request):
    """The backprop ops' own gradients (second order): with respect to the filter (or the
    input) and to out_backprop."""
    _device(case, request)
    attrs, x_shape, w, conv = _conv_case(case)
    g = mg.Graph()
    with g.as_default():
        y_shape = conv(np.zeros(x_shape), np.zeros(w)).shape.as_list()
    op = f"Conv3DBackprop{which}V2"
    if which == "Input":
        sizes, shapes = np.array(x_shape, np.int32), [w, w, y_shape]

        def build(_, b, dy):
            return _op(op, [sizes, b, dy], **attrs)
    else:
        sizes, shapes = np.array(w, np.int32), [x_shape, x_shape, y_shape]

        def build(_, a, dy):
            return _op(op, [a, sizes, dy], **attrs)

    assert _gradient_error(build, shapes, wrt) < 1e-6


def test_backprops_are_conv3ds_adjoints():
    """<conv3d(x, w), dy> = <x, input backprop(dy)> = <w, filter backprop(dy)>."""
    x, w = rng.standard_normal([2, 5, 4, 6, 3]), rng.standard_normal([3, 2, 3, 3, 2])
    attrs = {"strides": [1, 2, 1, 2, 1], "padding": "SAME", "dilations": [1, 1, 2, 1, 1]}
    g = mg.Graph()
    with g.as_default():
        y = _op("Conv3D", [x, w], **attrs)
        dy = rng.standard_normal(y.shape.as_list())
        dx = _op("Conv3DBackpropInputV2", [np.array(x.shape, np.int64), w, dy], **attrs)
        dw = _op("Conv3DBackpropFilterV2", [x, np.array(w.shape, np.int32), dy], **attrs)
    y_, dx_, dw_ = mg.Session(g).run([y, dx, dw])
    assert np.vdot(y_, dy) == pytest.approx(np.vdot(x, dx_), rel=1e-12)
    assert np.vdot(y_, dy) == pytest.approx(np.vdot(w, dw_), rel=1e-12)


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("case", CONVS[:3], ids=[c[0] for c in CONVS[:3]])
def test_unknown_shapes_give_the_same_gradients(case):
    """Placeholders of unknown shape: the backprops' sizes come from Shape nodes."""
    _, x_shape, w, conv = _conv_case(case)
    x0, w0 = rng.standard_normal(x_shape), rng.standard_normal(w)
    results = []
    for known in (True, False):
        g = mg.Graph()
        with g.as_default():
            x = mg.placeholder(mg.float64, x_shape if known else None)
            f = mg.placeholder(mg.float64, w if known else None)
            y = conv(x, f)
            grads = mg.gradients(mg.reduce_sum(y * y), [x, f])
        results.append(mg.Session(g).run(grads, {x: x0, f: w0}))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def _run_backprops(fmt, x, w, dy, attrs):
    g = mg.Graph()
    with g.as_default():
        dx = _op("Conv3DBackpropInputV2", [np.array(x.shape, np.int32), w, dy], **attrs,
                 data_format=fmt)  # fmt: skip
        dw = _op("Conv3DBackpropFilterV2", [x, np.array(w.shape, np.int32), dy], **attrs,
                 data_format=fmt)  # fmt: skip
    return mg.Session(g).run([dx, dw])


def test_ncdhw_backprops_are_refused_on_the_cpu_and_equal_ndhwc_on_a_gpu(monkeypatch):
    x, w = rng.standard_normal([1, 4, 5, 4, 2]), rng.standard_normal([2, 2, 3, 2, 3])
    dy = rng.standard_normal([1, 2, 5, 2, 3])
    strides = {"NDHWC": [1, 2, 1, 2, 1], "NCDHW": [1, 1, 2, 1, 2]}
    want = _run_backprops("NDHWC", x, w, dy, {"strides": strides["NDHWC"], "padding": "SAME"})
    xc, dyc = x.transpose(0, 4, 1, 2, 3), dy.transpose(0, 4, 1, 2, 3)
    attrs = {"strides": strides["NCDHW"], "padding": "SAME"}
    with pytest.raises(errors.InvalidArgumentError, match="Conv3DBackpropInputOpV2 only supports"):
        _run_backprops("NCDHW", xc, w, dyc, attrs)
    from minigraph.devices import gpu_unavailable_reason

    if gpu_unavailable_reason() is not None:
        monkeypatch.setattr(mg.config, "simulated_gpu", lambda: True)
    init = mg.Session.__init__
    monkeypatch.setattr(mg.Session, "__init__", lambda s, g=None, **k: init(s, g, "/gpu:0"))
    dx, dw = _run_backprops("NCDHW", xc, w, dyc, attrs)
    np.testing.assert_allclose(dx.transpose(0, 2, 3, 4, 1), want[0], rtol=1e-12)
    np.testing.assert_allclose(dw, want[1], rtol=1e-12)


def test_backprop_errors_at_build_time():
    """TensorFlow's kernel messages, at build when the shapes are known (a grouped filter
    builds, for a GPU)."""
    w, dy = np.zeros([2, 2, 2, 2, 2]), np.zeros([1, 2, 2, 2, 2])
    g = mg.Graph()
    with g.as_default():
        with pytest.raises(errors.InvalidArgumentError, match="same number of channels. Got 3"):
            _op("Conv3DBackpropInputV2", [np.array([1, 3, 3, 3, 3], np.int32), w, dy],
                strides=[1] * 5, padding="VALID")  # fmt: skip
        with pytest.raises(errors.InvalidArgumentError, match="Size of out_backprop doesn't"):
            _op("Conv3DBackpropFilterV2", [np.zeros([1, 4, 3, 3, 2]), np.array(w.shape), dy],
                strides=[1] * 5, padding="VALID")  # fmt: skip
        with pytest.raises(errors.InvalidArgumentError, match="Dilation rate must be >= 1"):
            _op("Conv3DBackpropFilterV2", [np.zeros([1, 3, 3, 3, 2]), np.array(w.shape), dy],
                strides=[1] * 5, padding="VALID", dilations=[1, 0, 1, 1, 1])  # fmt: skip


# -- pooling ------------------------------------------------------------------------------

# (label, input NDHWC, ksize, strides, padding, format)
POOLS = [
    ("valid-s2", [2, 4, 4, 4, 2], (2, 2, 2), (2, 2, 2), "VALID", "NDHWC"),
    ("same-overlap", [1, 4, 5, 3, 2], (3, 2, 3), (1, 2, 1), "SAME", "NDHWC"),
    ("larger-than-input", [1, 2, 3, 2, 1], (3, 4, 3), (1, 1, 1), "SAME", "NDHWC"),
    ("ncdhw", [1, 4, 3, 5, 2], (2, 3, 2), (2, 1, 2), "SAME", "NCDHW"),
]


def _pool_case(case):
    _, x, k, s, padding, fmt = case
    attrs = {"ksize": _five(fmt, k), "strides": _five(fmt, s), "padding": padding}
    attrs["data_format"] = fmt
    return attrs, (_ncdhw(x) if fmt == "NCDHW" else x)


def _distinct(shape):
    """Values at least 0.01 apart (no ties, so MaxPool3D is differentiable at them)."""
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.01 - n * 0.005).reshape(shape)


@pytest.mark.parametrize("case", POOLS, ids=[c[0] for c in POOLS])
def test_avg_pool3d_gradients_match_finite_differences(case, request):
    _device(case, request)
    attrs, x = _pool_case(case)
    assert _gradient_error(lambda a: _op("AvgPool3D", [a], **attrs), [x]) < 1e-6
    y_shape = _op_shape("AvgPool3D", x, attrs)
    sizes = np.array(x, np.int32)
    err = _gradient_error(lambda dy: _op("AvgPool3DGrad", [sizes, dy], **attrs), [y_shape])
    assert err < 1e-6


def _op_shape(op, x, attrs):
    g = mg.Graph()
    with g.as_default():
        return _op(op, [np.zeros(x, np.float32)], **attrs).shape.as_list()


@pytest.mark.parametrize("case", POOLS, ids=[c[0] for c in POOLS])
def test_max_pool3d_gradients_match_finite_differences(case, request):
    """float32 (MaxPool3D and MaxPool3DGrad have no float64, so the gradient of a float64
    MaxPool3DGradGrad cannot be built, as in TensorFlow): MaxPool3D's gradient, and
    MaxPool3DGrad's and MaxPool3DGradGrad's with respect to their grad (linear)."""
    _device(case, request)
    attrs, x = _pool_case(case)
    x0 = _distinct(x).astype(np.float32)
    err = _gradient_error(lambda a: _op("MaxPool3D", [a], **attrs), [x], values=[x0],
                          dtype=mg.float32)  # fmt: skip
    assert err < 1e-3
    y_shape = _op_shape("MaxPool3D", x, attrs)
    g = mg.Graph()
    with g.as_default():
        y0 = mg.Session(g).run(_op("MaxPool3D", [x0], **attrs))
    values = [x0, y0, rng.standard_normal(y_shape).astype(np.float32)]
    err = _gradient_error(lambda a, b, dy: _op("MaxPool3DGrad", [a, b, dy], **attrs),
                          [x, y_shape, y_shape], 2, values, mg.float32)  # fmt: skip
    assert err < 1e-3
    values = [x0, y0, rng.standard_normal(x).astype(np.float32)]  # its gradient: float32
    err = _gradient_error(lambda a, b, dy: _op("MaxPool3DGradGrad", [a, b, dy], **attrs),
                          [x, y_shape, x], 2, values, mg.float32)  # fmt: skip
    assert err < 1e-3


def _max_pool3d_grad_reference(x, y, grad, k, s):
    """MaxPool3DGrad by TensorFlow's CPU rule, VALID: a loop over windows, each giving its
    gradient to every cell equal to its max."""
    out = np.zeros_like(x)
    for index in np.ndindex(*y.shape[:4]):
        n, *pos = index
        window = tuple(slice(p * ss, p * ss + kk) for p, ss, kk in zip(pos, s, k))
        cells = x[(n, *window)]
        out[(n, *window)] += np.where(cells == y[index], grad[index], 0)
    return out


@pytest.mark.usefixtures("any_device")
def test_max_pool3d_grad_gives_every_equal_max_the_gradient():
    x = rng.integers(-2, 3, [2, 4, 5, 4, 3]).astype(np.float32)  # many ties
    attrs = {"ksize": [1, 2, 3, 2, 1], "strides": [1, 1, 2, 1, 1], "padding": "VALID"}
    g = mg.Graph()
    with g.as_default():
        y = _op("MaxPool3D", [x], **attrs)
        dy = rng.standard_normal(y.shape.as_list()).astype(np.float32)
        dx = _op("MaxPool3DGrad", [x, y, dy], **attrs)
        half = _op("MaxPool3DGrad", [x.astype(np.float16), mg.cast(y, mg.float16), dy], **attrs)
    y_, dx_, half_ = mg.Session(g).run([y, dx, half])
    np.testing.assert_allclose(dx_, _max_pool3d_grad_reference(x, y_, dy, (2, 3, 2), (1, 2, 1)),
                               rtol=1e-6)  # fmt: skip
    assert half_.dtype == np.float32  # T (grad's dtype), not TInput
    np.testing.assert_array_equal(half_, dx_)


@pytest.mark.parametrize("op", ["MaxPool3DGrad", "AvgPool3DGrad", "MaxPool3DGradGrad"])
def test_ncdhw_pool_gradient_ops_are_refused_on_the_cpu_and_equal_ndhwc_on_a_gpu(op, request):
    x = rng.integers(-2, 3, [1, 4, 3, 5, 2]).astype(np.float32)
    spatial = {"ksize": (2, 2, 3), "strides": (1, 2, 1)}

    def run(fmt, values):
        attrs = {key: _five(fmt, v) for key, v in spatial.items()}
        g = mg.Graph()
        with g.as_default():
            out = _op(op, values(attrs, fmt), **attrs, padding="SAME", data_format=fmt)
        return mg.Session(g).run(out)

    def inputs(attrs, fmt):
        xf = x.transpose(0, 4, 1, 2, 3) if fmt == "NCDHW" else x
        y = _op("MaxPool3D", [xf], **attrs, padding="SAME", data_format=fmt)
        if op == "AvgPool3DGrad":
            return [np.array(xf.shape, np.int32), y * 3.0]
        return [xf, y, y * 3.0 if op == "MaxPool3DGrad" else xf * 2.0]

    want = run("NDHWC", inputs)
    with pytest.raises(errors.InvalidArgumentError, match="only supports NDHWC on device type"):
        run("NCDHW", inputs)
    request.getfixturevalue("on_gpu")
    got = run("NCDHW", inputs)
    np.testing.assert_array_equal(got.transpose(0, 2, 3, 4, 1), want)


def test_pool3d_gradients_of_unknown_shapes():
    """Placeholders of unknown shape: AvgPool3DGrad's shape comes from a Shape node."""
    x0 = _distinct([2, 4, 3, 4, 2]).astype(np.float32)
    attrs = {"ksize": [1, 2, 2, 2, 1], "strides": [1, 2, 1, 2, 1], "padding": "SAME"}
    results = []
    for known in (True, False):
        g = mg.Graph()
        with g.as_default():
            x = mg.placeholder(mg.float32, x0.shape if known else None)
            y = _op("MaxPool3D", [x], **attrs) + _op("AvgPool3D", [x], **attrs)
            grads = mg.gradients(mg.reduce_sum(y * y), [x])
        results.append(mg.Session(g).run(grads, {x: x0}))
    np.testing.assert_array_equal(results[0][0], results[1][0])


def test_grouped_backprops_are_refused_on_the_cpu(monkeypatch):
    """As TensorFlow's CPU kernels (and Conv3D's); the GPU runs them (the finite-difference
    tests above)."""
    w, dy = rng.standard_normal([2, 2, 2, 2, 4]), rng.standard_normal([1, 2, 2, 2, 4])
    g = mg.Graph()
    with g.as_default():
        dx = _op("Conv3DBackpropInputV2", [np.array([1, 3, 3, 3, 4], np.int32), w, dy],
                 strides=[1] * 5, padding="VALID")  # fmt: skip
    message = "input and filter_sizes must have the same number of channels. Got 4 for input"
    with pytest.raises(errors.InvalidArgumentError, match=message):
        mg.Session(g).run(dx)
