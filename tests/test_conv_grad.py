"""Gradients of the convolutions and pooling (ops/conv_grad.py) and the pooling gradient
ops (ops/pool_grad_ops.py).

TensorFlow's gradients are replayed from tests/fixtures/grads/conv.npz by
test_tf_grad_fixtures.py and the gradient ops' values from tests/fixtures/ops/
conv_grad_ops*.npz by test_tf_op_fixtures.py (within a tolerance). Here: every gradient
against central differences (mg.test.compute_gradient_error, float64), including what TF's
CPU refuses (NCHW, dilations, groups) and second order; the pooling gradient ops bit for
bit against TensorFlow's fixtures, with TF's messages; NCHW against NHWC; unknown shapes.
"""

import json
from pathlib import Path

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors
from minigraph.wrappers import apply_op

rng = np.random.default_rng(2027)
OPS_FIXTURES = Path(__file__).parent / "fixtures" / "ops"


def _gradient_error(build, shapes, wrt=0, values=None):
    """compute_gradient_error of ``build(*placeholders)`` with respect to input ``wrt``
    (float64; the other inputs fed with random values, or ``values``)."""
    values = values or [rng.standard_normal(s) for s in shapes]
    g = mg.Graph()
    with g.as_default():
        phs = [mg.placeholder(mg.float64, shape=s) for s in shapes]
        y = build(*phs)
        feeds = {p: v for i, (p, v) in enumerate(zip(phs, values)) if i != wrt}
        return mg.test.compute_gradient_error(
            phs[wrt], shapes[wrt], y, y.shape.as_list(), x_init_value=values[wrt],
            extra_feed_dict=feeds,
        )  # fmt: skip


def _op(op_type, inputs, **attrs):
    return apply_op(op_type, None, inputs, attrs).outputs[0]


def _conv_attrs(fmt, strides, dilations, padding, explicit=None):
    """4-entry attrs in ``fmt``'s order from (h, w) pairs."""

    def four(pair):
        return [1, 1, *pair] if fmt == "NCHW" else [1, *pair, 1]

    attrs = {"strides": four(strides), "dilations": four(dilations), "data_format": fmt}
    if explicit is None:
        return {**attrs, "padding": padding}
    flat = [0, 0, 0, 0, *explicit[0], *explicit[1]] if fmt == "NCHW" else [
        0, 0, *explicit[0], *explicit[1], 0, 0
    ]  # fmt: skip
    return {**attrs, "padding": "EXPLICIT", "explicit_paddings": flat}


def _nchw(shape):
    return [shape[0], shape[3], shape[1], shape[2]]


# (label, input NHWC, filter, strides, dilations, padding, explicit, format, depthwise)
CONVS = [
    ("valid", [1, 4, 5, 2], [3, 2, 2, 2], (1, 1), (1, 1), "VALID", None, "NHWC", False),
    ("same-s2", [2, 5, 4, 2], [3, 3, 2, 3], (2, 2), (1, 1), "SAME", None, "NHWC", False),
    (
        "explicit",
        [1, 3, 4, 2],
        [2, 3, 2, 2],
        (1, 2),
        (1, 1),
        None,
        [(1, 0), (2, 1)],
        "NHWC",
        False,
    ),  # fmt: skip
    ("dilated", [1, 5, 5, 1], [2, 2, 1, 2], (1, 1), (2, 2), "SAME", None, "NHWC", False),
    ("grouped", [1, 3, 3, 4], [2, 2, 2, 4], (1, 1), (1, 1), "SAME", None, "NHWC", False),
    ("nchw", [1, 4, 4, 2], [3, 3, 2, 2], (2, 1), (1, 1), "SAME", None, "NCHW", False),
    (
        "nchw-dilated-explicit",
        [1, 4, 5, 2],
        [2, 2, 2, 2],
        (1, 1),
        (1, 2),
        None,
        [(0, 1), (1, 1)],
        "NCHW",
        False,
    ),  # fmt: skip
    ("depthwise", [1, 4, 4, 2], [3, 3, 2, 2], (1, 1), (1, 1), "SAME", None, "NHWC", True),
    (
        "depthwise-s2-nchw",
        [1, 5, 4, 2],
        [2, 2, 2, 1],
        (2, 2),
        (1, 1),
        "VALID",
        None,
        "NCHW",
        True,
    ),  # fmt: skip
    (
        "depthwise-dilated",
        [1, 5, 5, 2],
        [2, 2, 2, 2],
        (1, 1),
        (2, 1),
        "SAME",
        None,
        "NHWC",
        True,
    ),  # fmt: skip
]


def _conv_case(case):
    _, x, w, s, d, padding, explicit, fmt, depthwise = case
    attrs = _conv_attrs(fmt, s, d, padding, explicit)
    op = "DepthwiseConv2dNative" if depthwise else "Conv2D"
    x_shape = _nchw(x) if fmt == "NCHW" else x

    def conv(a, b):
        return _op(op, [a, b], **attrs)

    return op, attrs, x_shape, w, conv


@pytest.mark.parametrize("case", CONVS, ids=[c[0] for c in CONVS])
@pytest.mark.parametrize("wrt", [0, 1], ids=["input", "filter"])
def test_convolution_gradients_match_finite_differences(case, wrt):
    _, _, x_shape, w, conv = _conv_case(case)
    assert _gradient_error(conv, [x_shape, w], wrt) < 1e-6


@pytest.mark.parametrize("case", CONVS, ids=[c[0] for c in CONVS])
@pytest.mark.parametrize("which", ["input", "filter"])
@pytest.mark.parametrize("wrt", [1, 2], ids=["second", "out_backprop"])
def test_backprop_gradients_match_finite_differences(case, which, wrt):
    """The backprop ops' own gradients (second order): with respect to the filter (or the
    input) and to out_backprop."""
    op, attrs, x_shape, w, conv = _conv_case(case)
    g = mg.Graph()
    with g.as_default():  # out_backprop's shape: the forward op's output shape
        y_shape = conv(np.zeros(x_shape), np.zeros(w)).shape.as_list()
    backprop = f"{op}BackpropInput" if which == "input" else f"{op}BackpropFilter"
    if which == "input":
        sizes = np.array(x_shape, np.int32)
        shapes = [w, w, y_shape]  # input 0 (the sizes) is a constant below

        def build(_, b, dy):
            return _op(backprop, [sizes, b, dy], **attrs)
    else:
        sizes = np.array(w, np.int32)
        shapes = [x_shape, x_shape, y_shape]

        def build(_, a, dy):
            return _op(backprop, [a, sizes, dy], **attrs)

    values = [rng.standard_normal(s) for s in shapes]
    assert _gradient_error(build, shapes, wrt, values) < 1e-6


def test_second_order_conv2d_gradient_walks_through_the_first():
    """d/dx of <dL/dw, v>: the gradient of a Conv2DBackpropFilter built by mg.gradients."""
    x0, w0 = rng.standard_normal([1, 4, 4, 2]), rng.standard_normal([2, 2, 2, 3])
    v = rng.standard_normal([2, 2, 2, 3])

    def build(x):
        y = mg.conv2d(x, mg.constant(w0), strides=1, padding="SAME")
        (dw,) = mg.gradients(y * y, [y.op.inputs[1]], grad_ys=np.ones([1, 4, 4, 3]))
        return mg.reduce_sum(dw * v)

    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [1, 4, 4, 2])
        y = mg.reshape(build(x), [1])
        err = mg.test.compute_gradient_error(x, [1, 4, 4, 2], y, [1], x_init_value=x0)
    assert err < 1e-6


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("case", CONVS, ids=[c[0] for c in CONVS])
def test_unknown_shapes_give_the_same_gradients(case):
    """Placeholders of unknown shape: the backprops' sizes come from Shape nodes."""
    _, _, x_shape, w, conv = _conv_case(case)
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


# -- pooling ------------------------------------------------------------------------------

# (label, input NHWC, ksize (h, w), strides (h, w), padding, explicit, format)
POOLS = [
    ("valid-s2", [2, 4, 4, 2], (2, 2), (2, 2), "VALID", None, "NHWC"),
    ("same-overlap", [1, 5, 4, 2], (3, 3), (1, 2), "SAME", None, "NHWC"),
    ("explicit", [1, 4, 3, 1], (2, 3), (1, 1), None, [(1, 1), (0, 2)], "NHWC"),
    ("nchw", [1, 5, 5, 2], (3, 2), (2, 1), "SAME", None, "NCHW"),
    ("larger-than-input", [1, 2, 3, 1], (4, 4), (1, 1), "SAME", None, "NHWC"),
]


def _pool_attrs(case):
    _, x, k, s, padding, explicit, fmt = case
    attrs = _conv_attrs(fmt, s, (1, 1), padding, explicit)
    attrs.pop("dilations")
    attrs["ksize"] = _conv_attrs(fmt, k, (1, 1), "VALID")["strides"]
    return attrs, (_nchw(x) if fmt == "NCHW" else x)


def _distinct(shape):
    """Values at least 0.01 apart (no ties, so MaxPool is differentiable at them)."""
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.01 - n * 0.005).reshape(shape)


@pytest.mark.parametrize("case", POOLS, ids=[c[0] for c in POOLS])
@pytest.mark.parametrize("op", ["MaxPool", "AvgPool"])
def test_pooling_gradients_match_finite_differences(case, op):
    attrs, x_shape = _pool_attrs(case)
    if op == "AvgPool" and attrs["padding"] == "EXPLICIT":
        pytest.skip("AvgPool takes SAME or VALID")
    err = _gradient_error(lambda x: _op(op, [x], **attrs), [x_shape], 0, [_distinct(x_shape)])
    assert err < 1e-6


@pytest.mark.parametrize("case", POOLS, ids=[c[0] for c in POOLS])
def test_pool_gradient_ops_gradients_match_finite_differences(case):
    """MaxPoolGrad (through MaxPoolGradGrad), MaxPoolGradGrad (through MaxPoolGrad) and
    AvgPoolGrad (through AvgPool), with respect to their gradient input."""
    attrs, x_shape = _pool_attrs(case)
    x0 = _distinct(x_shape)
    g = mg.Graph()
    with g.as_default():
        y = _op("MaxPool", [x0], **attrs)
        y0 = mg.Session(g).run(y)
    if attrs["padding"] != "EXPLICIT":
        grad_grad = {k: v for k, v in attrs.items() if k != "explicit_paddings"}
        err = _gradient_error(
            lambda gy: _op("MaxPoolGrad", [x0, y0, gy], **attrs), [list(y0.shape)]
        )
        assert err < 1e-6
        err = _gradient_error(
            lambda gx: _op("MaxPoolGradGrad", [x0, y0, gx], **grad_grad), [x_shape]
        )
        assert err < 1e-6
        sizes = np.array(x_shape, np.int32)
        err = _gradient_error(
            lambda gy: _op("AvgPoolGrad", [sizes, gy], **grad_grad), [list(y0.shape)]
        )
        assert err < 1e-6


# -- the pooling gradient ops against TensorFlow, bit for bit --------------------------------


def _fixture_cases(pattern):
    cases = []
    for path in sorted(OPS_FIXTURES.glob(pattern)):
        with np.load(path) as data:
            arrays = {k: data[k] for k in data.files}
        for i, meta in enumerate(json.loads(str(arrays.pop("meta")))):
            inputs = {k.split("/", 2)[2]: v for k, v in arrays.items() if k.startswith(f"{i}/in/")}
            out = arrays.get(f"{i}/out/0")
            cases.append((f"{path.stem}:{meta['name']}", meta, inputs, out))
    return cases


POOL_FIXTURES = _fixture_cases("conv_grad_ops.npz")  # TF's reference kernels (oneDNN's
# AvgPoolGrad in conv_grad_ops_onednn.npz sums in its own order: compared within tolerance)
POOL_OPS = ("MaxPoolGrad", "AvgPoolGrad", "MaxPoolGradGrad")  # (batch norm's sums are Eigen's)
VALUES = [
    c for c in POOL_FIXTURES
    if c[3] is not None and not c[1].get("mg_error") and c[1]["op"] in POOL_OPS
]  # fmt: skip


def _build(meta, inputs):
    op_def = mg.registered_ops()[meta["op"]]
    return _op(meta["op"], [inputs[a.name] for a in op_def.inputs], **meta["attrs"])


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize(
    "label,meta,inputs,want",
    VALUES,
    ids=[c[0] for c in VALUES],
)
def test_pool_gradient_ops_are_bit_identical_to_tensorflow(label, meta, inputs, want):
    """Same picks (ties, NaN, padding), same products, same order of sums."""
    g = mg.Graph()
    with g.as_default():
        out = _build(meta, inputs)
    got = mg.Session(g).run(out)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))


def _tf_message(meta):
    return meta["tf_message"].split("}} ", 1)[-1].split(" [Op:")[0]


ERRORS = [c for c in POOL_FIXTURES if c[1].get("tf_error") and "attr" not in c[1]["tf_message"]]


@pytest.mark.parametrize("known", [True, False], ids=["build", "run"])
@pytest.mark.parametrize(
    "label,meta,inputs,want", ERRORS, ids=[c[0] for c in ERRORS]
)  # fmt: skip
def test_pool_gradient_ops_give_tensorflows_messages(label, meta, inputs, want, known):
    """At build time when the shapes are known, else when run, with TF's class and words
    (its kernels')."""
    error = getattr(errors, meta["tf_error"])
    with pytest.raises(error) as e:
        g = mg.Graph()
        with g.as_default():
            op_def = mg.registered_ops()[meta["op"]]
            phs = {k: mg.placeholder(mg.as_dtype(v.dtype), v.shape if known else None)
                   for k, v in inputs.items()}  # fmt: skip
            out = _op(meta["op"], [phs[a.name] for a in op_def.inputs], **meta["attrs"])
        mg.Session(g).run(out, {phs[k]: v for k, v in inputs.items()})
    # at build time a rank is TF's shape function's message (as its graph mode says it)
    assert _tf_message(meta) in str(e.value) or (known and "Shape must be rank" in str(e.value))
    assert e.value.node_name


def _max_pool_grad_reference(x, grad, k, s):
    """TensorFlow's CPU rule, window by window (VALID, no padding): the first cell in scan
    order, then each later cell strictly greater, takes the window's gradient, added to a
    zeroed output (so -0.0 arrives as 0.0)."""
    out = np.zeros(x.shape, grad.dtype)
    n, oh, ow, c = grad.shape
    for b, i, j, ch in np.ndindex(n, oh, ow, c):
        cells = [(i * s[0] + a, j * s[1] + e) for a in range(k[0]) for e in range(k[1])]
        best = cells[0]
        for cell in cells[1:]:
            if x[b, cell[0], cell[1], ch] > x[b, best[0], best[1], ch]:
                best = cell
        out[b, best[0], best[1], ch] += grad[b, i, j, ch]
    return out


TILES = [  # (x shape, ksize, strides): windows that never overlap
    ((3, 6, 6, 4), (2, 2), (2, 2)),
    ((2, 7, 5, 3), (2, 2), (2, 2)),  # a last row and column in no window
    ((2, 9, 8, 2), (2, 3), (3, 4)),  # gaps between windows
    ((1, 4, 6, 5), (1, 1), (2, 3)),
    ((40, 32, 32, 16), (2, 2), (2, 2)),  # large enough to be cut into pieces for threads
]


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int32])
@pytest.mark.parametrize("shape,k,s", TILES, ids=[f"{t[0]}-{t[1]}-{t[2]}" for t in TILES])
def test_max_pool_grad_of_disjoint_windows_matches_tensorflows_rule(shape, k, s, dtype):
    """The disjoint-window path (2x2 stride 2 and the like) against a loop over the
    windows: NaN first or later, equal maxima, -0.0 and inf in the input and the gradient."""
    big = shape[0] > 3
    x = rng.integers(-3, 3, shape).astype(dtype)
    if dtype != np.int32:
        mark = rng.random(shape)
        x[mark < 0.1] = np.nan
        x[(mark >= 0.1) & (mark < 0.15)] = -np.inf
        x[(mark >= 0.15) & (mark < 0.25)] = -0.0
    outs = [(d - kk) // ss + 1 for d, kk, ss in zip(shape[1:3], k, s)]
    gshape = (shape[0], *outs, shape[3])
    grad = rng.integers(-5, 5, gshape).astype(dtype)
    if dtype != np.int32:
        mark = rng.random(gshape)
        grad[mark < 0.2] = -0.0
        if not big:  # non-finite gradients take the other way of spreading
            grad[(mark >= 0.2) & (mark < 0.25)] = np.inf
            grad[(mark >= 0.25) & (mark < 0.3)] = np.nan
    g = mg.Graph()
    with g.as_default():
        out = _op("MaxPoolGrad", [x, np.zeros(gshape, dtype), grad], ksize=[1, *k, 1],
                  strides=[1, *s, 1], padding="VALID")  # fmt: skip
    got = mg.Session(g).run(out)
    # the loop is slow: of a large batch (cut into pieces), its first and last images
    for images in [slice(0, 1), slice(-1, None)] if big else [slice(None)]:
        want = _max_pool_grad_reference(x[images], grad[images], k, s)
        assert got.dtype == want.dtype and got.shape == x.shape
        np.testing.assert_array_equal(got[images].view(f"u{got.itemsize}"),
                                      want.view(f"u{want.itemsize}"))  # fmt: skip


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("op", ["MaxPoolGrad", "MaxPoolGradGrad", "AvgPoolGrad"])
def test_nchw_pool_gradient_ops_equal_nhwc(op):
    """TensorFlow's CPU refuses NCHW; minigraph runs it as the transposed NHWC op."""
    x = rng.integers(-2, 3, [2, 5, 6, 3]).astype(np.float32)  # ties
    gx = rng.standard_normal(x.shape).astype(np.float32)
    gy = rng.standard_normal([2, 3, 6, 3]).astype(np.float32)  # MaxPool's output shape
    results = []
    for fmt in ("NHWC", "NCHW"):
        attrs, _ = _pool_attrs(("", [2, 5, 6, 3], (3, 2), (2, 1), "SAME", None, fmt))

        def layout(a, fmt=fmt):
            return np.ascontiguousarray(a.transpose(0, 3, 1, 2)) if fmt == "NCHW" else a

        g = mg.Graph()
        with g.as_default():
            y = _op("MaxPool", [layout(x)], **attrs)
            if op == "MaxPoolGrad":
                out = _op(op, [layout(x), y, layout(gy)], **attrs)
            elif op == "MaxPoolGradGrad":
                out = _op(op, [layout(x), y, layout(gx)], **attrs)
            else:
                out = _op(op, [np.array(layout(x).shape, np.int32), layout(gy)], **attrs)
        got = mg.Session(g).run(out)
        results.append(got.transpose(0, 2, 3, 1) if fmt == "NCHW" else got)
    np.testing.assert_array_equal(results[0], results[1])


# -- batch norm ---------------------------------------------------------------------------

BN_FORMATS = [("NHWC", [2, 3, 2, 3]), ("NCHW", [2, 3, 3, 2]), ("NDHWC", [2, 2, 1, 3, 2]),
              ("NCDHW", [1, 2, 3, 2, 2])]  # fmt: skip


def _bn_reference(x, scale, offset, fmt, eps, mean=None, var=None):
    """Batch norm in float64: y, and the statistics it used (the batch's when none given)."""
    axis = 1 if fmt.startswith("NC") else x.ndim - 1
    axes = tuple(i for i in range(x.ndim) if i != axis)
    shape = [1] * x.ndim
    shape[axis] = -1
    x = x.astype(np.float64)
    if mean is None:
        mean, var = x.mean(axes), x.var(axes)
    norm = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    return norm * scale.reshape(shape) + offset.reshape(shape), mean, var


def _bn_inputs(shape, fmt, dtype=np.float32):
    c = shape[1] if fmt.startswith("NC") else shape[-1]
    x = rng.standard_normal(shape).astype(dtype) * 2 + 1
    scale, offset = rng.standard_normal(c), rng.standard_normal(c)
    return x, scale.astype(np.float32), offset.astype(np.float32)


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("fmt,shape", BN_FORMATS, ids=[f[0] for f in BN_FORMATS])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("factor", [1.0, 0.25])
def test_fused_batch_norm_training_matches_reference(fmt, shape, dtype, factor):
    x, scale, offset = _bn_inputs(shape, fmt, dtype)
    c, eps = scale.size, 0.01
    old_mean, old_var = rng.standard_normal(c).astype(np.float32), np.ones(c, np.float32)
    g = mg.Graph()
    with g.as_default():
        attrs = {"epsilon": eps, "data_format": fmt, "exponential_avg_factor": factor}
        outs = apply_op("FusedBatchNormV3", None, [x, scale, offset, old_mean, old_var], attrs)
    y, running_mean, running_var, saved_mean, saved_var, r3 = mg.Session(g).run(outs.outputs)
    want, mean, var = _bn_reference(x, scale, offset, fmt, eps)
    n = x.size // c
    tol = 2e-3 if dtype == np.float16 else 2e-5
    assert y.dtype == dtype and r3.shape == (0,)
    np.testing.assert_allclose(y, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(saved_mean, mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(saved_var, var, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(running_mean, (1 - factor) * old_mean + factor * mean, 1e-5, 1e-6)
    unbiased = var * n / (n - 1)
    np.testing.assert_allclose(running_var, (1 - factor) * old_var + factor * unbiased, 1e-5)


def _bn_grad_reference(dy, x, scale, mean, var, eps, fmt, training):
    """FusedBatchNormGradV3's three gradients in float64, from the textbook formulas."""
    axis = 1 if fmt.startswith("NC") else x.ndim - 1
    axes = tuple(i for i in range(x.ndim) if i != axis)
    shape = [1] * x.ndim
    shape[axis] = -1
    dy, x = dy.astype(np.float64), x.astype(np.float64)
    xc = x - mean.reshape(shape)
    r = 1 / np.sqrt(var.astype(np.float64) + eps)
    d_offset = dy.sum(axes)
    d_scale = (dy * xc).sum(axes) * r
    if training:
        dx = (dy - dy.mean(axes, keepdims=True)
              - xc * (dy * xc).mean(axes, keepdims=True) * (r * r).reshape(shape))  # fmt: skip
        dx = dx * (scale * r).reshape(shape)
    else:
        dx = dy * (scale * r).reshape(shape)
    return dx, d_scale, d_offset


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("fmt,shape", BN_FORMATS, ids=[f[0] for f in BN_FORMATS])
@pytest.mark.parametrize("training", [True, False], ids=["training", "inference"])
def test_fused_batch_norm_grad_v3_matches_reference(fmt, shape, training):
    x, scale, _ = _bn_inputs(shape, fmt)
    dy = rng.standard_normal(shape).astype(np.float32)
    axis = 1 if fmt.startswith("NC") else x.ndim - 1
    axes = tuple(i for i in range(x.ndim) if i != axis)
    mean, var = x.mean(axes).astype(np.float32), x.var(axes).astype(np.float32)
    attrs = {"epsilon": 0.001, "data_format": fmt, "is_training": training}
    inputs = [dy, x, scale, mean, var, np.zeros(0, np.float32)]
    if not training and fmt.startswith("NC"):  # TF's kernel too; its gradient transposes
        with pytest.raises(errors.InvalidArgumentError, match="only support NHWC"):
            with mg.Graph().as_default():
                mg.Session().run(apply_op("FusedBatchNormGradV3", None, inputs, attrs).outputs)
        return
    g = mg.Graph()
    with g.as_default():
        outs = apply_op("FusedBatchNormGradV3", None, inputs, attrs).outputs
    dx, d_scale, d_offset, r4, r5 = mg.Session(g).run(outs)
    want = _bn_grad_reference(dy, x, scale, mean, var, 0.001, fmt, training)
    for got, ref in zip((dx, d_scale, d_offset), want):
        np.testing.assert_allclose(got, ref, rtol=2e-5, atol=2e-5)
    assert r4.shape == r5.shape == (0,)


@pytest.mark.parametrize("fmt,shape", BN_FORMATS, ids=[f[0] for f in BN_FORMATS])
@pytest.mark.parametrize("training", [True, False], ids=["training", "inference"])
def test_fused_batch_norm_gradients_match_finite_differences(fmt, shape, training):
    """mg.gradients of sum(y * w) against central differences of the float64 reference
    (FusedBatchNormV3 is float16/float32 only, so the reference is differenced)."""
    x, scale, offset = _bn_inputs(shape, fmt)
    c, eps = scale.size, 0.01
    mean, var = rng.standard_normal(c).astype(np.float32), rng.random(c).astype(np.float32) + 1
    w = rng.standard_normal(shape)
    g = mg.Graph()
    with g.as_default():
        xs, ss, os_ = mg.constant(x), mg.constant(scale), mg.constant(offset)
        y, _, _ = mg.nn.fused_batch_norm(xs, ss, os_, mean, var, eps, fmt, training)
        grads = mg.gradients(y, [xs, ss, os_], grad_ys=w.astype(np.float32))
    got = mg.Session(g).run(grads)

    def loss(xv, sv, ov):
        stats = {} if training else {"mean": mean.astype(np.float64), "var": var}
        return (_bn_reference(xv, sv, ov, fmt, np.float32(eps), **stats)[0] * w).sum()

    args = [x.astype(np.float64), scale.astype(np.float64), offset.astype(np.float64)]
    for k, grad in enumerate(got):
        numeric = np.zeros(args[k].shape)
        for i in range(args[k].size):
            up, down = [a.copy() for a in args], [a.copy() for a in args]
            up[k].flat[i] += 1e-4
            down[k].flat[i] -= 1e-4
            numeric.flat[i] = (loss(*up) - loss(*down)) / 2e-4
        np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-4)


def test_fused_batch_norm_5d_gradients_equal_4d():
    """NDHWC is NHWC with depth and height merged, for the forward op and its gradient."""
    x, scale, offset = _bn_inputs([2, 3, 2, 2, 3], "NDHWC")
    dy = rng.standard_normal(x.shape).astype(np.float32)
    results = []
    for fmt, shape in (("NDHWC", x.shape), ("NHWC", [2, 6, 2, 3])):
        g = mg.Graph()
        with g.as_default():
            xs = mg.constant(x.reshape(shape))
            y, _, _ = mg.nn.fused_batch_norm(xs, scale, offset, data_format=fmt)
            grads = mg.gradients(y, [xs], grad_ys=dy.reshape(shape))
        y0, dx = mg.Session(g).run([y, grads[0]])
        results.append((y0.reshape(x.shape), dx.reshape(x.shape)))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_fused_batch_norm_builder_and_errors():
    x, scale, offset = _bn_inputs([1, 2, 2, 3], "NHWC")
    with pytest.raises(ValueError, match="Both `mean` and `variance`"):
        with mg.Graph().as_default():
            mg.nn.fused_batch_norm(x, scale, offset, is_training=False)
    with pytest.raises(errors.InvalidArgumentError, match="When exponential_avg_factor != 1, mean"):
        with mg.Graph().as_default():
            mg.nn.fused_batch_norm(x, scale, offset, np.ones(2, np.float32), np.ones(3, np.float32),
                                   exponential_avg_factor=0.5, name="bn")  # fmt: skip
    # no gradient through the gradient op (TensorFlow registers none either)
    g = mg.Graph()
    with g.as_default():
        xs = mg.constant(x)
        y, _, _ = mg.nn.fused_batch_norm(xs, scale, offset)
        (dx,) = mg.gradients(y, [xs], grad_ys=np.ones_like(x))
        with pytest.raises(errors.NoGradientError, match="FusedBatchNormGradV3"):
            mg.gradients(dx, [xs], grad_ys=np.ones_like(x))
