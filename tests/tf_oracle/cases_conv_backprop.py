"""The backprop convolutions run by TensorFlow 2.21's reference CPU kernels (see
make_op_fixtures.py): family "conv_backprop": Conv2DBackpropInput, Conv2DBackpropFilter,
DepthwiseConv2dNativeBackpropInput, DepthwiseConv2dNativeBackpropFilter, NHWC.

TF_ENV turns oneDNN off: the reference kernels check every argument with a message (the
oneDNN ones answer a bad shape with AbortedError "could not create a primitive
descriptor", or abort the process on 3 input_sizes or a negative one). What those kernels
refuse and oneDNN runs (NCHW, dilations, grouped filters, unequal depthwise strides) is in
cases_conv_backprop_onednn.py. Left out: depthwise dilations, which TF's reference kernel
ignores (minigraph applies them: checked against Conv2D's adjoint in
tests/test_conv_backprop_ops.py, as every case here is too), and the filter backprops whose
output TF leaves uninitialised (UNSET below; minigraph's are zeros, tested there too).
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

TF_ENV = {"TF_ENABLE_ONEDNN_OPTS": "0"}

rng = np.random.default_rng(2604)

f16, f32, f64, i32 = np.float16, np.float32, np.float64, np.int32
S1, S2 = [1, 1, 1, 1], [1, 2, 2, 1]
# Minigraph applies a depthwise op's dilations, so it checks them (TF ignores them).
_DILATIONS = "TF's reference depthwise kernels ignore dilations; minigraph applies them"


def normal(shape, dtype=f32):
    return rng.standard_normal(shape).astype(dtype)


def sizes(*dims):
    return np.array(dims, i32)


def bi(name, x_shape, w_shape, g_shape, strides=S1, padding="VALID", dtype=f32, **kw):
    """Conv2DBackpropInput: the input's shape, a filter and an out_backprop."""
    given = kw.pop("input_sizes") if "input_sizes" in kw else sizes(*x_shape)
    return case(
        "Conv2DBackpropInput",
        name=f"BI-{name}",
        input_sizes=given,
        filter=normal(w_shape, dtype),
        out_backprop=normal(g_shape, dtype),
        strides=strides,
        padding=padding,
        **kw,
    )


def bf(name, x_shape, w_shape, g_shape, strides=S1, padding="VALID", dtype=f32, **kw):
    """Conv2DBackpropFilter: an input, the filter's shape and an out_backprop."""
    given = kw.pop("filter_sizes") if "filter_sizes" in kw else sizes(*w_shape)
    return case(
        "Conv2DBackpropFilter",
        name=f"BF-{name}",
        input=normal(x_shape, dtype),
        filter_sizes=given,
        out_backprop=normal(g_shape, dtype),
        strides=strides,
        padding=padding,
        **kw,
    )


def dbi(name, x_shape, w_shape, g_shape, strides=S1, padding="VALID", dtype=f32, **kw):
    given = kw.pop("input_sizes") if "input_sizes" in kw else sizes(*x_shape)
    return case(
        "DepthwiseConv2dNativeBackpropInput",
        name=f"DBI-{name}",
        input_sizes=given,
        filter=normal(w_shape, dtype),
        out_backprop=normal(g_shape, dtype),
        strides=strides,
        padding=padding,
        **kw,
    )


def dbf(name, x_shape, w_shape, g_shape, strides=S1, padding="VALID", dtype=f32, **kw):
    given = kw.pop("filter_sizes") if "filter_sizes" in kw else sizes(*w_shape)
    return case(
        "DepthwiseConv2dNativeBackpropFilter",
        name=f"DBF-{name}",
        input=normal(x_shape, dtype),
        filter_sizes=given,
        out_backprop=normal(g_shape, dtype),
        strides=strides,
        padding=padding,
        **kw,
    )


# (name, input, filter, out_backprop, strides, padding, extra attrs): one geometry each,
# run by both Conv2D backprops.
GEOMETRIES = [
    ("valid", (2, 5, 6, 3), (3, 3, 3, 4), (2, 3, 4, 4), S1, "VALID", {}),
    ("same-s2-odd", (2, 7, 6, 2), (3, 3, 2, 5), (2, 4, 3, 5), S2, "SAME", {}),
    ("same-s2-k4", (1, 8, 8, 3), (4, 4, 3, 2), (1, 4, 4, 2), S2, "SAME", {}),
    ("valid-s2-unused-rows", (1, 6, 7, 2), (3, 3, 2, 3), (1, 2, 3, 3), S2, "VALID", {}),
    ("strides-3x2", (1, 7, 8, 2), (2, 3, 2, 2), (1, 2, 3, 2), [1, 3, 2, 1], "VALID", {}),
    ("explicit", (1, 5, 4, 2), (3, 2, 2, 3), (1, 3, 5, 3), [1, 2, 1, 1], "EXPLICIT",
     {"explicit_paddings": [0, 0, 1, 2, 2, 0, 0, 0]}),
    ("1x1-s2", (2, 5, 5, 4), (1, 1, 4, 3), (2, 3, 3, 3), S2, "VALID", {}),
    ("filter-larger-same", (1, 3, 3, 2), (5, 5, 2, 2), (1, 3, 3, 2), S1, "SAME", {}),
    ("one-in-channel", (2, 6, 6, 1), (3, 3, 1, 4), (2, 3, 3, 4), S2, "SAME", {}),
    ("one-out-channel", (2, 6, 6, 3), (3, 3, 3, 1), (2, 6, 6, 1), S1, "SAME", {}),
    ("keras-transpose", (2, 8, 8, 3), (3, 3, 3, 6), (2, 4, 4, 6), S2, "SAME", {}),
    ("empty-batch", (0, 5, 5, 2), (3, 3, 2, 4), (0, 3, 3, 4), S1, "VALID", {}),
    ("window-too-big", (1, 2, 2, 2), (3, 3, 2, 4), (1, 0, 0, 4), S1, "VALID", {}),
    ("no-out-channels", (1, 5, 5, 2), (3, 3, 2, 0), (1, 3, 3, 0), S1, "VALID", {}),
]  # fmt: skip

# (name, input, filter [kh, kw, in, multiplier], out_backprop, strides, padding, attrs)
DEPTHWISE = [
    ("valid", (2, 5, 6, 3), (3, 3, 3, 1), (2, 3, 4, 3), S1, "VALID", {}),
    ("mult3-same-s2", (1, 7, 6, 2), (3, 3, 2, 3), (1, 4, 3, 6), S2, "SAME", {}),
    ("explicit", (1, 5, 5, 2), (3, 3, 2, 2), (1, 4, 5, 4), S1, "EXPLICIT",
     {"explicit_paddings": [0, 0, 1, 0, 1, 1, 0, 0]}),
    ("k4-s2", (2, 8, 8, 4), (4, 4, 4, 1), (2, 4, 4, 4), S2, "SAME", {}),
    ("empty-batch", (0, 5, 5, 2), (3, 3, 2, 1), (0, 3, 3, 2), S1, "VALID", {}),
    ("window-too-big", (1, 2, 2, 2), (3, 3, 2, 1), (1, 0, 0, 2), S1, "VALID", {}),
]  # fmt: skip

# TF's filter backprops leave their output uninitialised for these (no out_backprop
# positions; the depthwise one for an empty batch too): minigraph's are zeros.
UNSET = ("empty-batch", "window-too-big")

CASES = [
    *[bi(n, x, w, g, s, p, **kw) for n, x, w, g, s, p, kw in GEOMETRIES],
    *[bf(n, x, w, g, s, p, **kw) for n, x, w, g, s, p, kw in GEOMETRIES if n not in UNSET[1:]],
    *[dbi(n, x, w, g, s, p, **kw) for n, x, w, g, s, p, kw in DEPTHWISE],
    *[dbf(n, x, w, g, s, p, **kw) for n, x, w, g, s, p, kw in DEPTHWISE if n not in UNSET],
    # dtypes
    bi("f64", (1, 5, 5, 2), (3, 3, 2, 3), (1, 3, 3, 3), dtype=f64),
    bi("f16", (1, 5, 5, 2), (3, 3, 2, 3), (1, 3, 3, 3), S2, "SAME", dtype=f16),
    case("Conv2DBackpropInput", name="BI-int32", input_sizes=sizes(1, 4, 4, 2),
         filter=rng.integers(-3, 4, (2, 2, 2, 3)).astype(i32),
         out_backprop=rng.integers(-3, 4, (1, 3, 3, 3)).astype(i32), strides=S1,
         padding="VALID"),
    bf("f64", (2, 5, 5, 2), (3, 3, 2, 3), (2, 3, 3, 3), dtype=f64),
    bf("f16", (1, 5, 5, 2), (3, 3, 2, 3), (1, 3, 3, 3), S2, "SAME", dtype=f16),
    case("Conv2DBackpropFilter", name="BF-int32-refused",
         input=np.ones((1, 4, 4, 2), i32), filter_sizes=sizes(2, 2, 2, 3),
         out_backprop=np.ones((1, 3, 3, 3), i32), strides=S1, padding="VALID"),
    dbi("f64", (1, 5, 5, 2), (3, 3, 2, 2), (1, 3, 3, 4), dtype=f64),
    dbi("f16", (1, 5, 5, 2), (3, 3, 2, 2), (1, 3, 3, 4), S2, "SAME", dtype=f16),
    dbf("f64", (2, 5, 5, 2), (3, 3, 2, 2), (2, 3, 3, 4), dtype=f64),
    dbf("f16", (1, 5, 5, 2), (3, 3, 2, 1), (1, 3, 3, 2), S2, "SAME", dtype=f16),
    # input_sizes of 2 values: the batch from out_backprop, the depth from the filter
    bi("sizes-hw", None, (3, 3, 2, 4), (2, 3, 3, 4), input_sizes=sizes(5, 5)),
    # Conv2DBackpropInput's errors
    bi("out-backprop-rank3", (1, 5, 5, 2), (3, 3, 2, 4), (3, 3, 4)),
    bi("sizes-rank2", None, (3, 3, 2, 4), (1, 3, 3, 4), input_sizes=sizes(1, 5, 5, 2)[None]),
    bi("sizes-3", None, (3, 3, 2, 4), (1, 3, 3, 4), input_sizes=sizes(5, 5, 2)),
    bi("sizes-0", None, (3, 3, 2, 4), (1, 3, 3, 4), input_sizes=sizes()),
    bi("sizes-negative", (1, -5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4)),
    bi("sizes-hw-negative", None, (3, 3, 2, 4), (1, 3, 3, 4), input_sizes=sizes(-1, 5)),
    bi("filter-rank3", (1, 5, 5, 2), (3, 3, 2), (1, 3, 3, 4)),
    bi("filter-rank5", (1, 5, 5, 2), (3, 3, 2, 4, 1), (1, 3, 3, 4)),
    bi("batch-mismatch", (2, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4)),
    bi("depth-mismatch", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 5)),
    bi("depth-not-divisible", (1, 5, 5, 3), (3, 3, 2, 4), (1, 3, 3, 4)),
    bi("filter-depth-0", (1, 5, 5, 2), (3, 3, 0, 4), (1, 3, 3, 4)),
    bi("rows-mismatch", (1, 6, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4)),
    bi("cols-mismatch", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 4, 4)),
    bi("same-s2-mismatch", (1, 5, 5, 2), (3, 3, 2, 4), (1, 2, 3, 4), S2, "SAME"),
    bi("negative-output", (1, 2, 2, 2), (5, 5, 2, 4), (1, 1, 1, 4)),
    bi("strides-3", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4), [1, 1, 1]),
    bi("strides-batch", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4), [2, 1, 1, 1]),
    bi("strides-depth", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4), [1, 1, 1, 2]),
    bi("stride-0", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4), [1, 0, 1, 1]),
    bi("dilations-3", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4), dilations=[1, 1, 1]),
    bi("dilations-batch", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4), dilations=[2, 1, 1, 1]),
    bi("explicit-4-values", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4), padding="EXPLICIT",
       explicit_paddings=[0, 0, 1, 1]),
    bi("explicit-negative", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4), padding="EXPLICIT",
       explicit_paddings=[0, 0, -1, 0, 0, 0, 0, 0]),
    bi("explicit-batch", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4), padding="EXPLICIT",
       explicit_paddings=[1, 0, 0, 0, 0, 0, 0, 0]),
    bi("explicit-not-explicit", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4),
       explicit_paddings=[0] * 8),
    # Conv2DBackpropFilter's errors
    bf("sizes-rank2", (1, 5, 5, 2), None, (1, 3, 3, 4), filter_sizes=sizes(3, 3, 2, 4)[None]),
    bf("sizes-3", (1, 5, 5, 2), None, (1, 3, 3, 4), filter_sizes=sizes(3, 3, 2)),
    bf("sizes-negative", (1, 5, 5, 2), (3, -3, 2, 4), (1, 3, 3, 4)),
    bf("input-rank3", (5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4)),
    bf("out-backprop-rank3", (1, 5, 5, 2), (3, 3, 2, 4), (3, 3, 4)),
    bf("batch-mismatch", (1, 5, 5, 2), (3, 3, 2, 4), (2, 3, 3, 4)),
    bf("depth-mismatch", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 5)),
    bf("depth-not-divisible", (1, 5, 5, 3), (3, 3, 2, 4), (1, 3, 3, 4)),
    bf("filter-depth-0", (1, 5, 5, 2), (3, 3, 0, 4), (1, 3, 3, 4)),
    bf("rows-mismatch", (1, 5, 5, 2), (3, 3, 2, 4), (1, 4, 3, 4)),
    bf("cols-mismatch", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 2, 4)),
    bf("negative-output", (1, 2, 2, 2), (5, 5, 2, 4), (1, 1, 1, 4)),
    bf("strides-batch", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4), [2, 1, 1, 1]),
    bf("stride-0", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4), [1, 1, 0, 1]),
    bf("dilations-3", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4), dilations=[1, 1, 1]),
    bf("dilations-depth", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4), dilations=[1, 1, 1, 2]),
    bf("explicit-4-values", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4), padding="EXPLICIT",
       explicit_paddings=[0, 0, 1, 1]),
    # the depthwise backprops' errors
    dbi("sizes-hw", None, (3, 3, 2, 3), (1, 3, 3, 6), input_sizes=sizes(5, 5)),
    dbi("sizes-negative", (1, -5, 5, 2), (3, 3, 2, 3), (1, 3, 3, 6)),
    dbi("sizes-rank2", None, (3, 3, 2, 3), (1, 3, 3, 6), input_sizes=sizes(1, 5, 5, 2)[None]),
    dbi("filter-rank3", (1, 5, 5, 2), (3, 3, 2), (1, 3, 3, 6)),
    dbi("out-backprop-rank3", (1, 5, 5, 2), (3, 3, 2, 3), (3, 3, 6)),
    dbi("batch-mismatch", (1, 5, 5, 2), (3, 3, 2, 3), (2, 3, 3, 6)),
    dbi("in-depth-mismatch", (1, 5, 5, 3), (3, 3, 2, 3), (1, 3, 3, 6)),
    dbi("out-depth-mismatch", (1, 5, 5, 2), (3, 3, 2, 3), (1, 3, 3, 5)),
    dbi("rows-mismatch", (1, 5, 5, 2), (3, 3, 2, 3), (1, 4, 3, 6)),
    dbi("cols-mismatch", (1, 5, 5, 2), (3, 3, 2, 3), (1, 3, 4, 6)),
    dbi("strides-3", (1, 5, 5, 2), (3, 3, 2, 3), (1, 3, 3, 6), [1, 1, 1]),
    dbi("strides-batch", (1, 5, 5, 2), (3, 3, 2, 3), (1, 3, 3, 6), [2, 1, 1, 1]),
    dbi("stride-0", (1, 5, 5, 2), (3, 3, 2, 3), (1, 3, 3, 6), [1, 0, 0, 1]),
    dbi("explicit-negative", (1, 5, 5, 2), (3, 3, 2, 3), (1, 3, 3, 6), padding="EXPLICIT",
        explicit_paddings=[0, 0, -1, 0, 0, 0, 0, 0]),
    dbi("dilations-3", (1, 5, 5, 2), (3, 3, 2, 3), (1, 3, 3, 6), dilations=[1, 1, 1],
        mg_error="InvalidArgumentError", why=_DILATIONS),
    dbf("sizes-3", (1, 5, 5, 2), None, (1, 3, 3, 6), filter_sizes=sizes(3, 3, 2)),
    dbf("sizes-negative", (1, 5, 5, 2), (3, -3, 2, 3), (1, 3, 3, 6)),
    dbf("sizes-rank2", (1, 5, 5, 2), None, (1, 3, 3, 6), filter_sizes=sizes(3, 3, 2, 3)[None]),
    dbf("input-rank3", (5, 5, 2), (3, 3, 2, 3), (1, 3, 3, 6)),
    dbf("batch-mismatch", (1, 5, 5, 2), (3, 3, 2, 3), (2, 3, 3, 6)),
    dbf("in-depth-mismatch", (1, 5, 5, 3), (3, 3, 2, 3), (1, 3, 3, 6)),
    dbf("multiplier-mismatch", (1, 5, 5, 2), (3, 3, 2, 2), (1, 3, 3, 6)),
    dbf("rows-mismatch", (1, 5, 5, 2), (3, 3, 2, 3), (1, 4, 3, 6)),
    dbf("strides-depth", (1, 5, 5, 2), (3, 3, 2, 3), (1, 3, 3, 6), [1, 1, 1, 2]),
    dbf("explicit-batch", (1, 5, 5, 2), (3, 3, 2, 3), (1, 3, 3, 6), padding="EXPLICIT",
        explicit_paddings=[1, 0, 0, 0, 0, 0, 0, 0]),
    dbf("dilations-batch", (1, 5, 5, 2), (3, 3, 2, 3), (1, 3, 3, 6), dilations=[2, 1, 1, 1],
        mg_error="InvalidArgumentError", why=_DILATIONS),
]  # fmt: skip
