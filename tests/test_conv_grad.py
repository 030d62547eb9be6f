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
VALUES = [c for c in POOL_FIXTURES if c[3] is not None and not c[1].get("mg_error")]


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
