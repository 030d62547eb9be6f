"""The backprop convolutions against Conv2D's adjoint, TensorFlow's messages and shape rules.

TensorFlow's values are in tests/fixtures/ops/conv_backprop*.npz (replayed by
test_tf_op_fixtures.py). Here, as a reference independent of TensorFlow and of the kernels:
Conv2DBackpropInput and Conv2DBackpropFilter (and the depthwise pair) are the adjoints of
Conv2D (DepthwiseConv2dNative), so for random x, w and g,
``<conv(x, w), g> == <x, backprop_input(g)> == <w, backprop_filter(x, g)>``, on every
geometry (strides, SAME/VALID/EXPLICIT, dilations, NCHW, groups) and device.
"""

import json
from pathlib import Path

import numpy as np
import pytest
from op_helpers import build_fails, run

import minigraph as mg
from minigraph import errors
from minigraph.wrappers import apply_op

rng = np.random.default_rng(26)
FIXTURES = Path(__file__).parent / "fixtures" / "ops"


# (label, input NHWC, filter, strides (h, w), dilations (h, w), padding, explicit pads of
# (h, w), data format, depthwise)
GEOMETRIES = [
    ("valid", (2, 5, 6, 3), (3, 3, 3, 4), (1, 1), (1, 1), "VALID", None, "NHWC", False),
    ("same-s2-odd", (2, 7, 6, 2), (3, 3, 2, 5), (2, 2), (1, 1), "SAME", None, "NHWC", False),
    ("valid-s2-unused", (1, 6, 7, 2), (3, 3, 2, 3), (2, 2), (1, 1), "VALID", None, "NHWC", False),
    ("strides-3x2", (1, 7, 8, 2), (2, 3, 2, 2), (3, 2), (1, 1), "VALID", None, "NHWC", False),
    ("explicit", (1, 5, 4, 2), (3, 2, 2, 3), (2, 1), (1, 1), "EXPLICIT", [(1, 2), (2, 0)],
     "NHWC", False),
    ("dilated", (1, 8, 9, 2), (2, 3, 2, 4), (1, 2), (2, 3), "VALID", None, "NHWC", False),
    ("dilated-same", (2, 7, 7, 3), (3, 3, 3, 2), (2, 2), (2, 2), "SAME", None, "NHWC", False),
    ("filter-larger", (1, 3, 3, 2), (5, 5, 2, 2), (1, 1), (1, 1), "SAME", None, "NHWC", False),
    ("1x1-s2", (2, 5, 5, 4), (1, 1, 4, 3), (2, 2), (1, 1), "VALID", None, "NHWC", False),
    ("one-in-channel", (2, 6, 6, 1), (3, 3, 1, 4), (2, 2), (1, 1), "SAME", None, "NHWC", False),
    ("groups2", (1, 5, 5, 4), (3, 3, 2, 4), (1, 1), (1, 1), "VALID", None, "NHWC", False),
    ("groups3-s2", (2, 6, 5, 6), (3, 3, 2, 9), (2, 2), (1, 1), "SAME", None, "NHWC", False),
    ("groups-depthwise", (1, 6, 6, 4), (3, 3, 1, 8), (1, 1), (2, 1), "SAME", None, "NHWC",
     False),
    ("nchw", (2, 5, 6, 3), (3, 3, 3, 4), (2, 1), (1, 1), "SAME", None, "NCHW", False),
    ("nchw-explicit-dilated", (1, 5, 4, 2), (3, 2, 2, 3), (1, 1), (2, 1), "EXPLICIT",
     [(1, 2), (1, 1)], "NCHW", False),
    ("nchw-groups2", (1, 5, 5, 4), (3, 3, 2, 4), (2, 2), (1, 1), "SAME", None, "NCHW", False),
    ("dw-valid", (2, 5, 6, 3), (3, 3, 3, 1), (1, 1), (1, 1), "VALID", None, "NHWC", True),
    ("dw-mult3-s2", (1, 7, 6, 2), (3, 3, 2, 3), (2, 2), (1, 1), "SAME", None, "NHWC", True),
    ("dw-dilated", (1, 8, 8, 2), (2, 3, 2, 2), (1, 1), (3, 2), "VALID", None, "NHWC", True),
    ("dw-strides-1x2", (1, 5, 6, 2), (3, 3, 2, 3), (1, 2), (1, 1), "VALID", None, "NHWC", True),
    ("dw-explicit", (1, 5, 5, 2), (3, 3, 2, 2), (1, 1), (1, 1), "EXPLICIT", [(1, 0), (1, 1)],
     "NHWC", True),
    ("dw-nchw", (2, 6, 5, 3), (3, 3, 3, 2), (2, 1), (1, 2), "SAME", None, "NCHW", True),
]  # fmt: skip


def _attrs(strides, dilations, padding, explicit, fmt):
    def four(hw):
        return [1, 1, *hw] if fmt == "NCHW" else [1, *hw, 1]

    attrs = {"strides": four(strides), "dilations": four(dilations), "padding": padding}
    attrs["data_format"] = fmt
    if explicit:
        pairs = [(0, 0), (0, 0), *explicit] if fmt == "NCHW" else [(0, 0), *explicit, (0, 0)]
        attrs["explicit_paddings"] = [p for pair in pairs for p in pair]
    return attrs


def _op(op, inputs, attrs):
    return apply_op(op, None, inputs, attrs).output(0)


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("geometry", GEOMETRIES, ids=[g[0] for g in GEOMETRIES])
def test_backprops_are_the_adjoints_of_the_convolution(geometry):
    _, x_shape, w_shape, strides, dilations, padding, explicit, fmt, depthwise = geometry
    attrs = _attrs(strides, dilations, padding, explicit, fmt)
    x = rng.standard_normal(x_shape)
    if fmt == "NCHW":
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    w = rng.standard_normal(w_shape)
    forward = "DepthwiseConv2dNative" if depthwise else "Conv2D"
    backprop = "DepthwiseConv2dNativeBackprop" if depthwise else "Conv2DBackprop"
    g = mg.Graph()
    with g.as_default():
        y = _op(forward, [x, w], attrs)
        dy = rng.standard_normal(y.shape.as_list())
        dx = _op(f"{backprop}Input", [np.array(x.shape, np.int32), w, dy], attrs)
        dw = _op(f"{backprop}Filter", [x, np.array(w.shape, np.int32), dy], attrs)
        assert dx.shape.as_list() == list(x.shape) and dw.shape.as_list() == list(w.shape)
    y_value, dx_value, dw_value = mg.Session(g).run([y, dx, dw])
    inner = np.vdot(y_value, dy)
    np.testing.assert_allclose(np.vdot(x, dx_value), inner, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(np.vdot(w, dw_value), inner, rtol=1e-11, atol=1e-11)


def _backprop_input(x_shape, w, dy, attrs):
    return _op("Conv2DBackpropInput", [np.array(x_shape, np.int32), w, dy], attrs)


@pytest.mark.usefixtures("any_device")
def test_float16_and_int32_are_accumulated_and_cast_back():
    x_shape, w = (1, 6, 6, 2), rng.standard_normal((3, 3, 2, 3)).astype(np.float16)
    dy = rng.standard_normal((1, 3, 3, 3)).astype(np.float16)
    w_int, dy_int = np.int32(w * 4), np.int32(dy * 4)
    attrs = _attrs((2, 2), (1, 1), "SAME", None, "NHWC")
    g = mg.Graph()
    with g.as_default():
        outs = [
            _backprop_input(x_shape, w, dy, attrs),
            _backprop_input(x_shape, np.float64(w), np.float64(dy), attrs),
            _backprop_input(x_shape, w_int, dy_int, attrs),
            _backprop_input(x_shape, np.float64(w_int), np.float64(dy_int), attrs),
        ]
    half, exact, ints, exact_ints = mg.Session(g).run(outs)
    assert half.dtype == np.float16 and ints.dtype == np.int32
    np.testing.assert_allclose(half, exact, rtol=2e-3, atol=2e-3)
    np.testing.assert_array_equal(ints, exact_ints)


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize(
    "op,x_shape,sizes,dy_shape",
    [
        ("Conv2DBackpropFilter", (1, 2, 2, 2), [3, 3, 2, 4], (1, 0, 0, 4)),
        ("DepthwiseConv2dNativeBackpropFilter", (1, 2, 2, 2), [3, 3, 2, 1], (1, 0, 0, 2)),
        ("DepthwiseConv2dNativeBackpropFilter", (0, 5, 5, 2), [3, 3, 2, 1], (0, 3, 3, 2)),
    ],
)
def test_filter_gradient_with_no_positions_is_zeros(op, x_shape, sizes, dy_shape):
    """TensorFlow leaves these outputs uninitialised (cases_conv_backprop.UNSET)."""
    attrs = _attrs((1, 1), (1, 1), "VALID", None, "NHWC")
    sizes_array = np.array(sizes, np.int32)
    out = run(
        lambda x, dy: _op(op, [x, sizes_array, dy], attrs),
        np.ones(x_shape, np.float32),
        np.ones(dy_shape, np.float32),
    )
    np.testing.assert_array_equal(out, np.zeros(sizes, np.float32))


# -- TensorFlow's messages ----------------------------------------------------------------


def _error_cases():
    cases = []
    for path in sorted(FIXTURES.glob("conv_backprop*.npz")):
        with np.load(path) as data:
            arrays = {k: data[k] for k in data.files}
        for i, meta in enumerate(json.loads(str(arrays.pop("meta")))):
            message = meta.get("tf_message", "")
            if not message or message.startswith("Value for attr"):  # TF's Python layer
                continue
            message = message.split("}} ", 1)[-1].split(" [Op:")[0]
            inputs = {k.split("/")[2]: v for k, v in arrays.items() if k.startswith(f"{i}/in/")}
            cases.append((meta["name"], meta["op"], meta["tf_error"], message, inputs, meta))
    return cases


ERROR_CASES = _error_cases()


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_kernel_errors_are_tensorflows(case):
    """Fed through placeholders of unknown shape, each bad case reaches the kernel (or, for
    a bad attr, fails as the node is built), with TensorFlow's error class and message."""
    _, op, error, message, inputs, meta = case
    op_def = mg.registered_ops()[op]
    g = mg.Graph()
    with pytest.raises(getattr(errors, error)) as e:
        with g.as_default():
            feeds = {
                mg.placeholder(mg.as_dtype(inputs[a.name].dtype), name=a.name): inputs[a.name]
                for a in op_def.inputs
            }
            out = _op(op, list(feeds), meta["attrs"])
        mg.Session(g).run(out, feeds)
    assert message in str(e.value) and e.value.node_name == op


def test_the_error_cases_cover_every_check():
    assert len(ERROR_CASES) >= 60
    assert {c[1] for c in ERROR_CASES} == {
        "Conv2DBackpropInput",
        "Conv2DBackpropFilter",
        "DepthwiseConv2dNativeBackpropInput",
        "DepthwiseConv2dNativeBackpropFilter",
    }


def test_checks_tensorflows_reference_kernels_skip():
    """Groups that do not divide the output depth (TF's oneDNN kernel answers AbortedError);
    an input of no channels for a filter (TF: 'filter_size does not have enough elements');
    depthwise dilations, which TF's reference kernel ignores and minigraph applies."""
    attrs = _attrs((1, 1), (1, 1), "VALID", None, "NHWC")
    build_fails(
        lambda: _op(
            "Conv2DBackpropInput",
            [np.array([1, 5, 5, 4], np.int32), np.ones((3, 3, 2, 5)), np.ones((1, 3, 3, 5))],
            attrs,
        ),
        "output depth must be evenly divisible by number of groups: 5 vs 2",
    )
    build_fails(
        lambda: _op(
            "Conv2DBackpropFilter",
            [np.ones((1, 5, 5, 0)), np.array([3, 3, 2, 4], np.int32), np.ones((1, 3, 3, 4))],
            attrs,
        ),
        "filter_size does not have enough elements, requested 0, got 72",
    )
    dilated = _attrs((1, 1), (2, 2), "VALID", None, "NHWC")
    build_fails(  # TF computes 3x3 positions, as without dilations
        lambda: _op(
            "DepthwiseConv2dNativeBackpropInput",
            [np.array([1, 5, 5, 2], np.int32), np.ones((3, 3, 2, 1)), np.ones((1, 3, 3, 2))],
            dilated,
        ),
        "Number of rows of out_backprop doesn't match computed: actual = 3, computed = 1",
    )


# -- shape functions ------------------------------------------------------------------------


def test_conv2d_backprop_input_shape_function_is_tensorflows():
    """Conv2DBackpropInputShape: the batch from out_backprop, 2 sizes take the filter's depth;
    messages as TF 2.21's graph mode."""
    attrs = _attrs((1, 1), (1, 1), "VALID", None, "NHWC")
    w, dy = np.ones((3, 3, 2, 4), np.float32), np.ones((1, 3, 3, 4), np.float32)
    with mg.Graph().as_default():
        sizes = [
            mg.placeholder(mg.int32, [2]),
            mg.placeholder(mg.int32, [None]),
            mg.placeholder(mg.int32),
            np.array([1, -1, 5, 2], np.int32),
        ]
        shapes = [_op("Conv2DBackpropInput", [s, w, dy], attrs).shape.as_list() for s in sizes]
        assert shapes == [
            [1, None, None, 2],
            [1, None, None, None],
            [1, None, None, None],
            [1, None, 5, 2],
        ]
        nchw = _attrs((1, 1), (1, 1), "VALID", None, "NCHW")
        out = _op("Conv2DBackpropInput", [sizes[0], w, np.ones((1, 4, 3, 3), np.float32)], nchw)
        assert out.shape.as_list() == [1, 2, None, None]
    for sizes, g_shape, match in [
        (
            [5, 5, 2],
            (1, 3, 3, 4),
            "requires input_sizes to contain 4 values or 2 values, but got: 3",
        ),
        ([[1, 5, 5, 2]], (1, 3, 3, 4), "Shape must be rank 1 but is rank 2"),
        ([2, 5, 5, 2], (1, 3, 3, 4), "Dimensions must be equal, but are 2 and 1"),
        ([1, 5, 5, 2], (1, 3, 3, 5), "Dimensions must be equal, but are 5 and 4"),
        ([1, -5, 5, 2], (1, 3, 3, 4), "Invalid value in tensor used for shape: -5"),
        ([1, 5, 5, 2], (3, 3, 4), "Shape must be rank 4 but is rank 3"),
        # all known: the kernel's checks at build time
        (
            [1, 6, 5, 2],
            (1, 3, 3, 4),
            "Size of out_backprop doesn't match computed: actual = 3, computed = 4 spatial_dim: 1",
        ),
    ]:
        build_fails(
            lambda sizes=sizes, g_shape=g_shape: _op(
                "Conv2DBackpropInput", [np.array(sizes, np.int32), w, np.ones(g_shape)], attrs
            ),
            match,
        )


def test_other_shape_functions_are_tensorflows():
    attrs = _attrs((1, 1), (1, 1), "VALID", None, "NHWC")
    x, dy = np.ones((1, 5, 5, 2), np.float32), np.ones((1, 3, 3, 6), np.float32)
    with mg.Graph().as_default():
        for op in ("Conv2DBackpropFilter", "DepthwiseConv2dNativeBackpropFilter"):
            out = _op(op, [x, mg.placeholder(mg.int32), dy], attrs)
            assert out.shape.as_list() == [None] * 4
        out = _op(
            "DepthwiseConv2dNativeBackpropInput",
            [mg.placeholder(mg.int32, [4]), np.ones((3, 3, 2, 3)), dy],
            attrs,
        )
        assert out.shape.as_list() == [None] * 4
    for op, sizes, match in [
        ("Conv2DBackpropFilter", [3, 3, 2], "Shape must be rank 4 but is rank 3"),
        ("Conv2DBackpropFilter", [3, -3, 2, 6], "Invalid value in tensor used for shape: -3"),
        ("Conv2DBackpropFilter", [[3, 3, 2, 6]], "Shape must be rank 1 but is rank 2"),
        ("DepthwiseConv2dNativeBackpropFilter", [3, 3, 2], "Shape must be rank 4 but is rank 3"),
        (
            "DepthwiseConv2dNativeBackpropFilter",
            [3, 3, 2, 2],
            "depth_multiplier \\* in_depth not equal to out_depth",
        ),
    ]:
        build_fails(
            lambda op=op, sizes=sizes: _op(op, [x, np.array(sizes, np.int32), dy], attrs), match
        )
    build_fails(
        lambda: _op(
            "DepthwiseConv2dNativeBackpropInput",
            [np.array([5, 5], np.int32), np.ones((3, 3, 2, 3)), dy],
            attrs,
        ),
        "Shape must be rank 4 but is rank 2",
    )


def test_attrs_are_checked_when_built():
    w, dy, sizes = np.ones((3, 3, 2, 4)), np.ones((1, 3, 3, 4)), np.array([1, 5, 5, 2], np.int32)
    for attrs, error, match in [
        ({"strides": [2, 1, 1, 1]}, errors.UnimplementedError, "strides in the batch and depth"),
        ({"dilations": [1, 0, 1, 1]}, errors.InvalidArgumentError, "Dilated rates should be"),
        (
            {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1]},
            errors.InvalidArgumentError,
            "must contain 8 values, but got: 3",
        ),
    ]:
        full = {**_attrs((1, 1), (1, 1), "VALID", None, "NHWC"), **attrs}
        with pytest.raises(error, match=match), mg.Graph().as_default():
            _op("Conv2DBackpropInput", [sizes, w, dy], full)


def test_huge_input_sizes_are_refused_before_allocating():
    attrs = _attrs((1 << 30, 1 << 30), (1, 1), "SAME", None, "NHWC")
    sizes = np.array([1, 1 << 30, 1 << 30, 1], np.int32)
    with pytest.raises(errors.ResourceExhaustedError, match="OOM when allocating"):
        run(
            lambda s: _op(
                "Conv2DBackpropInput", [s, np.ones((3, 3, 1, 1)), np.ones((1, 1, 1, 1))], attrs
            ),
            sizes,
        )


# -- builders -------------------------------------------------------------------------------


@pytest.mark.usefixtures("any_device")
def test_builders_take_tf_nn_arguments_and_leave_inputs_alone():
    x = rng.standard_normal((2, 6, 6, 3)).astype(np.float32)
    w = rng.standard_normal((3, 3, 4, 3)).astype(np.float32)  # conv2d_transpose: [.., out, in]
    dy = rng.standard_normal((2, 3, 3, 4)).astype(np.float32)
    kept = [a.copy() for a in (x, w, dy)]
    g = mg.Graph()
    with g.as_default():
        y = mg.nn.conv2d(x, w.transpose(0, 1, 3, 2), strides=2, padding="SAME")
        t = mg.nn.conv2d_transpose(dy, w.transpose(0, 1, 3, 2), [2, 6, 6, 3], strides=[2, 2])
        t1 = mg.nn.conv2d_backprop_input([2, 6, 6, 3], w.transpose(0, 1, 3, 2), dy, 2, "SAME")
        f = mg.nn.conv2d_backprop_filter(x, [3, 3, 3, 4], dy, [1, 2, 2, 1], "SAME")
        p = mg.nn.conv2d_backprop_input(
            [6, 6], w.transpose(0, 1, 3, 2), dy, 2, [[0, 0], [0, 1], [0, 1], [0, 0]]
        )
        assert t.op.type == "Conv2DBackpropInput" and t.op.name == "conv2d_transpose"
    y_v, t_v, t1_v, f_v, p_v = mg.Session(g).run([y, t, t1, f, p])
    np.testing.assert_array_equal(t_v, t1_v)
    np.testing.assert_array_equal(t_v, p_v)  # SAME here pads one cell after, as these pairs
    inner = np.vdot(y_v.astype(np.float64), dy)
    np.testing.assert_allclose(np.vdot(x.astype(np.float64), t_v), inner, rtol=1e-5)
    np.testing.assert_allclose(
        np.vdot(w.transpose(0, 1, 3, 2).astype(np.float64), f_v), inner, rtol=1e-5
    )
    for a, b in zip((x, w, dy), kept):
        np.testing.assert_array_equal(a, b)
