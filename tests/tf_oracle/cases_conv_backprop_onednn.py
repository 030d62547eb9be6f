"""The backprop convolutions that TensorFlow 2.21's reference CPU kernels refuse and its
default oneDNN CPU kernels (float32) run, as its GPU kernels do (see make_op_fixtures.py):
family "conv_backprop_onednn": NCHW, dilations, grouped filters, unequal depthwise strides.
Minigraph runs all of them on every device. TF_ENV turns oneDNN on (TensorFlow's default on
x86 Linux) whatever the environment. Left out: depthwise dilations (oneDNN refuses them with
AbortedError, the reference kernel ignores them) and shapes that do not fit (oneDNN answers
AbortedError "could not create a primitive descriptor"; the reference kernels' messages are
in cases_conv_backprop.py), and NCHW with EXPLICIT padding, which oneDNN hands to the
reference kernel, which refuses NCHW (tests/test_conv_backprop_ops.py checks it against
Conv2D's adjoint).
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

TF_ENV = {"TF_ENABLE_ONEDNN_OPTS": "1"}

rng = np.random.default_rng(2605)

f32, i32 = np.float32, np.int32
S1, S2 = [1, 1, 1, 1], [1, 2, 2, 1]
NCHW_S1, NCHW_S2 = [1, 1, 1, 1], [1, 1, 2, 2]
D2 = [1, 2, 2, 1]


def normal(shape):
    return rng.standard_normal(shape).astype(f32)


def sizes(*dims):
    return np.array(dims, i32)


def bi(name, x_shape, w_shape, g_shape, strides=S1, padding="VALID", **kw):
    given = kw.pop("input_sizes") if "input_sizes" in kw else sizes(*x_shape)
    return case(
        "Conv2DBackpropInput",
        name=f"BI-{name}",
        input_sizes=given,
        filter=normal(w_shape),
        out_backprop=normal(g_shape),
        strides=strides,
        padding=padding,
        **kw,
    )


def bf(name, x_shape, w_shape, g_shape, strides=S1, padding="VALID", **kw):
    return case(
        "Conv2DBackpropFilter",
        name=f"BF-{name}",
        input=normal(x_shape),
        filter_sizes=sizes(*w_shape),
        out_backprop=normal(g_shape),
        strides=strides,
        padding=padding,
        **kw,
    )


def dbi(name, x_shape, w_shape, g_shape, strides=S1, padding="VALID", **kw):
    return case(
        "DepthwiseConv2dNativeBackpropInput",
        name=f"DBI-{name}",
        input_sizes=sizes(*x_shape),
        filter=normal(w_shape),
        out_backprop=normal(g_shape),
        strides=strides,
        padding=padding,
        **kw,
    )


def dbf(name, x_shape, w_shape, g_shape, strides=S1, padding="VALID", **kw):
    return case(
        "DepthwiseConv2dNativeBackpropFilter",
        name=f"DBF-{name}",
        input=normal(x_shape),
        filter_sizes=sizes(*w_shape),
        out_backprop=normal(g_shape),
        strides=strides,
        padding=padding,
        **kw,
    )


NCHW = {"data_format": "NCHW"}

CASES = [
    # NCHW: shapes and strides in the format's order
    bi("nchw", (2, 3, 5, 6), (3, 3, 3, 4), (2, 4, 3, 4), **NCHW),
    bi("nchw-same-s2", (1, 2, 7, 6), (3, 3, 2, 5), (1, 5, 4, 3), NCHW_S2, "SAME", **NCHW),
    bi("nchw-sizes-hw", None, (3, 3, 2, 4), (2, 4, 3, 3), input_sizes=sizes(5, 5), **NCHW),
    bf("nchw", (2, 3, 5, 6), (3, 3, 3, 4), (2, 4, 3, 4), **NCHW),
    bf("nchw-same-s2", (1, 2, 7, 6), (3, 3, 2, 5), (1, 5, 4, 3), NCHW_S2, "SAME", **NCHW),
    dbi("nchw", (1, 2, 5, 5), (3, 3, 2, 3), (1, 6, 3, 3), **NCHW),
    dbf("nchw", (2, 3, 6, 5), (3, 3, 3, 2), (2, 6, 3, 3), NCHW_S2, "SAME", **NCHW),
    # dilations
    bi("dilated", (1, 6, 7, 2), (2, 3, 2, 4), (1, 4, 3, 4), dilations=D2),
    bi("dilated-same-s2", (2, 7, 7, 3), (3, 3, 3, 2), (2, 4, 4, 2), S2, "SAME", dilations=D2),
    bi("dilated-2x1", (1, 6, 6, 2), (3, 2, 2, 3), (1, 2, 5, 3), dilations=[1, 2, 1, 1]),
    bf("dilated", (1, 6, 7, 2), (2, 3, 2, 4), (1, 4, 3, 4), dilations=D2),
    bf("dilated-same-s2", (2, 7, 7, 3), (3, 3, 3, 2), (2, 4, 4, 2), S2, "SAME", dilations=D2),
    bi("dilation-0", (1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4), dilations=[1, 0, 1, 1]),
    # grouped filters: the filter's in-depth divides the input's
    bi("groups2", (1, 5, 5, 4), (3, 3, 2, 4), (1, 3, 3, 4)),
    bi("groups3-same-s2", (2, 6, 5, 6), (3, 3, 2, 9), (2, 3, 3, 9), S2, "SAME"),
    bi("groups-depthwise", (1, 6, 6, 4), (3, 3, 1, 8), (1, 6, 6, 8), S1, "SAME"),
    bf("groups2", (1, 5, 5, 4), (3, 3, 2, 4), (1, 3, 3, 4)),
    bf("groups3-same-s2", (2, 6, 5, 6), (3, 3, 2, 9), (2, 3, 3, 9), S2, "SAME"),
    bf("groups-depthwise", (1, 6, 6, 4), (3, 3, 1, 8), (1, 6, 6, 8), S1, "SAME"),
    # unequal depthwise strides
    dbi("strides-1x2", (1, 5, 6, 2), (3, 3, 2, 3), (1, 3, 2, 6), [1, 1, 2, 1]),
    dbf("strides-2x1", (2, 6, 5, 3), (3, 2, 3, 1), (2, 3, 5, 3), [1, 2, 1, 1], "SAME"),
]  # fmt: skip
