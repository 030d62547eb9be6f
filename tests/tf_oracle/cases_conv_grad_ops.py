"""The pooling and batch norm gradient ops run by TensorFlow 2.21's reference CPU kernels
(see make_op_fixtures.py): family "conv_grad_ops": MaxPoolGrad, AvgPoolGrad,
MaxPoolGradGrad (NHWC, with their ties, NaN, -inf and padding cells) and
FusedBatchNormGradV3, and their errors.

TF_ENV turns oneDNN off: the reference kernels check every argument with a message
(oneDNN's AvgPoolGrad aborts the process on an orig_input_shape of 3 values, its
FusedBatchNormGradV3 gives scalar reserve_space_4/5 where the OpDef says [0]). Left out:
NCHW (TF's CPU refuses it, minigraph runs it: tests/test_conv_grad.py checks it against
NHWC) and AvgPoolGrad with a SAME window larger than the input, where the reference kernel
spreads some windows over the wrong cells (cases_conv_grad_ops_onednn.py has TF's default
oneDNN kernel's answer, which minigraph gives).
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

TF_ENV = {"TF_ENABLE_ONEDNN_OPTS": "0"}

rng = np.random.default_rng(2727)
f16, f32, f64, i32 = np.float16, np.float32, np.float64, np.int32
S1, S2 = [1, 1, 1, 1], [1, 2, 2, 1]
K2, K3 = [1, 2, 2, 1], [1, 3, 3, 1]
NEWER = (
    "TF 2.21's reference kernel reads past a wrong grad shape; newer TF refuses it, as minigraph"
)
KSIZE0 = "TF checks ksize > 0 in the forward pooling ops only; minigraph in the gradients too"


def normal(shape, dtype=f32):
    return rng.standard_normal(shape).astype(dtype)


def ties(shape, dtype=f32):
    """Small integers: windows with equal maxima, sums of overlapping windows."""
    return rng.integers(-2, 3, shape).astype(dtype)


def pooled(x, ksize, strides, padding, **attrs):
    """MaxPool's output for ``x``, as TensorFlow computes it (NaN skipped, a window of
    -inf and NaN the lowest value): a loop over windows."""
    n, h, w, c = x.shape
    k, s = ksize[1:3], strides[1:3]
    if padding == "VALID":
        out = [(size - kk) // ss + 1 for size, kk, ss in zip((h, w), k, s)]
        before = [0, 0]
    elif padding == "SAME":
        out = [-(-size // ss) for size, ss in zip((h, w), s)]
        total = [max((o - 1) * ss + kk - size, 0) for o, ss, kk, size in zip(out, s, k, (h, w))]
        before = [t // 2 for t in total]
    else:
        pads = attrs["explicit_paddings"]
        before = [pads[2], pads[4]]
        out = [
            (size + pads[2 + 2 * i] + pads[3 + 2 * i] - kk) // ss + 1
            for i, (size, kk, ss) in enumerate(zip((h, w), k, s))
        ]
    lowest = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    y = np.full((n, *out, c), lowest, x.dtype)
    for i in range(out[0]):
        for j in range(out[1]):
            r0, c0 = i * s[0] - before[0], j * s[1] - before[1]
            win = x[:, max(r0, 0) : r0 + k[0], max(c0, 0) : c0 + k[1], :]
            for cell in np.moveaxis(win.reshape(n, win.shape[1] * win.shape[2], c), 1, 0):
                y[:, i, j] = np.where(cell > y[:, i, j], cell, y[:, i, j])
    return y


def max_grad(name, x, ksize, strides, padding, dtype=None, **attrs):
    x = x if dtype is None else x.astype(dtype)
    y = pooled(x, ksize, strides, padding, **attrs)
    return case("MaxPoolGrad", name=f"MaxPoolGrad {name}", orig_input=x, orig_output=y,
                grad=ties(y.shape, x.dtype) * 3 + 1, ksize=ksize, strides=strides,
                padding=padding, **attrs)  # fmt: skip


def grad_grad(name, x, ksize, strides, padding, dtype=None):
    x = x if dtype is None else x.astype(dtype)
    y = pooled(x, ksize, strides, padding)
    g = normal(x.shape, x.dtype)
    return case("MaxPoolGradGrad", name=f"MaxPoolGradGrad {name}", orig_input=x, orig_output=y,
                grad=g, ksize=ksize, strides=strides, padding=padding)  # fmt: skip


def avg_grad(name, shape, grad_shape, ksize, strides, padding, dtype=f32, **kw):
    return case("AvgPoolGrad", name=f"AvgPoolGrad {name}", orig_input_shape=np.array(shape, i32),
                grad=normal(grad_shape, dtype), ksize=ksize, strides=strides, padding=padding,
                **kw)  # fmt: skip


def bn_grad(name, shape, dtype=f32, dy_shape=None, scale=None, saved=None, **attrs):
    """FusedBatchNormGradV3 of an input of ``shape`` with its batch statistics as the
    saved ones (channels by data_format), in training unless ``is_training=False``."""
    fmt = attrs.get("data_format", "NHWC")
    axis = 1 if fmt.startswith("NC") else len(shape) - 1
    x = normal(shape, dtype)
    axes = tuple(i for i in range(len(shape)) if i != axis)
    mean = x.astype(f32).mean(axes) if x.size else np.zeros(shape[axis], f32)
    var = x.astype(f32).var(axes) if x.size else np.ones(shape[axis], f32)
    return case("FusedBatchNormGradV3", name=f"FusedBatchNormGradV3 {name}",
                y_backprop=normal(dy_shape or shape, dtype), x=x,
                scale=normal([shape[axis]]) if scale is None else scale,
                reserve_space_1=mean if saved is None else saved, reserve_space_2=var,
                reserve_space_3=np.zeros(0, f32), **attrs)  # fmt: skip


NAN_IMAGE = np.array(
    [[1, 3, 3, 2], [np.nan, 5, 5, 0], [np.nan, np.nan, 2, 2], [-np.inf, -np.inf, 1, np.nan]],
    f32,
).reshape(1, 4, 4, 1)

CASES = [
    # MaxPoolGrad: which cell takes a window's gradient, and sums over overlapping windows
    max_grad("NaN and ties VALID", NAN_IMAGE, K2, S1, "VALID"),
    max_grad("NaN and ties SAME", NAN_IMAGE, K2, S1, "SAME"),
    max_grad("NaN and ties stride 2 SAME", NAN_IMAGE, K3, S2, "SAME"),
    max_grad("ties 3x3 SAME", ties([2, 5, 6, 3]), K3, S1, "SAME"),
    max_grad("ties 3x3 stride 2 VALID", ties([2, 7, 7, 2], f64), K3, S2, "VALID"),
    max_grad("2x2 stride 2", normal([2, 6, 6, 4], f64), K2, S2, "VALID"),
    max_grad("odd SAME", normal([1, 5, 7, 3]), [1, 3, 2, 1], [1, 2, 3, 1], "SAME"),
    max_grad(
        "EXPLICIT",
        ties([1, 4, 5, 2]),
        K3,
        S1,
        "EXPLICIT",
        explicit_paddings=[0, 0, 1, 2, 2, 0, 0, 0],
    ),  # fmt: skip
    max_grad("float16 overlapping sums", normal([1, 6, 6, 2]), K3, S1, "SAME", f16),
    max_grad("int32", ties([1, 4, 4, 2]), K3, S1, "SAME", i32),
    max_grad("-inf windows", np.full([1, 3, 3, 1], -np.inf, f32), K2, S1, "SAME"),
    max_grad("empty batch", normal([0, 4, 4, 2]), K2, S2, "VALID"),
    max_grad("window larger than the image", normal([1, 2, 3, 1]), [1, 4, 4, 1], S1, "SAME"),
    case(
        "MaxPoolGrad",
        name="MaxPoolGrad rank 3",
        orig_input=normal([4, 4, 1]),
        orig_output=normal([1, 2, 2, 1]),
        grad=normal([1, 2, 2, 1]),
        ksize=K2,
        strides=S2,
        padding="VALID",
    ),  # fmt: skip
    case(
        "MaxPoolGrad",
        name="MaxPoolGrad grad rank 3",
        orig_input=normal([1, 4, 4, 1]),
        orig_output=normal([1, 2, 2, 1]),
        grad=normal([2, 2, 1]),
        ksize=K2,
        strides=S2,
        padding="VALID",
    ),  # fmt: skip
    case(
        "MaxPoolGrad",
        name="MaxPoolGrad wrong orig_output",
        orig_input=normal([1, 4, 4, 1]),
        orig_output=normal([1, 3, 3, 1]),
        grad=normal([1, 2, 2, 1]),
        ksize=K2,
        strides=S2,
        padding="VALID",
    ),  # fmt: skip
    case(
        "MaxPoolGrad",
        name="MaxPoolGrad wrong grad",
        orig_input=normal([1, 4, 4, 1]),
        orig_output=normal([1, 2, 2, 1]),
        grad=normal([1, 2, 3, 1]),
        ksize=K2,
        strides=S2,
        padding="VALID",
    ),  # fmt: skip
    case(
        "MaxPoolGrad",
        name="MaxPoolGrad batch window",
        orig_input=normal([2, 4, 4, 1]),
        orig_output=normal([1, 2, 2, 1]),
        grad=normal([1, 2, 2, 1]),
        ksize=[2, 2, 2, 1],
        strides=S2,
        padding="VALID",
    ),  # fmt: skip
    case(
        "MaxPoolGrad",
        name="MaxPoolGrad depth window",
        orig_input=normal([1, 4, 4, 2]),
        orig_output=normal([1, 2, 2, 1]),
        grad=normal([1, 2, 2, 1]),
        ksize=[1, 2, 2, 2],
        strides=S2,
        padding="VALID",
    ),  # fmt: skip
    case(
        "MaxPoolGrad",
        name="MaxPoolGrad stride 0",
        orig_input=normal([1, 4, 4, 1]),
        orig_output=normal([1, 2, 2, 1]),
        grad=normal([1, 2, 2, 1]),
        ksize=K2,
        strides=[1, 0, 2, 1],
        padding="VALID",
    ),  # fmt: skip
    case(
        "MaxPoolGrad",
        name="MaxPoolGrad explicit_paddings of 4",
        orig_input=normal([1, 4, 4, 1]),
        orig_output=normal([1, 2, 2, 1]),
        grad=normal([1, 2, 2, 1]),
        ksize=K2,
        strides=S2,
        padding="EXPLICIT",
        explicit_paddings=[0, 0, 1, 1],
    ),  # fmt: skip
    # AvgPoolGrad: each window's share over its cells inside the input
    avg_grad("VALID", [2, 4, 4, 3], [2, 2, 2, 3], K2, S2, "VALID", f64),
    avg_grad("SAME overlapping", [1, 5, 6, 2], [1, 5, 6, 2], K3, S1, "SAME"),
    avg_grad("SAME stride 2", [2, 5, 5, 2], [2, 3, 3, 2], K3, S2, "SAME", f64),
    avg_grad("odd window", [1, 6, 7, 1], [1, 3, 3, 1], [1, 3, 2, 1], [1, 2, 3, 1], "SAME"),
    avg_grad("float16", [1, 4, 4, 2], [1, 4, 4, 2], K3, S1, "SAME", f16),
    avg_grad("empty", [0, 4, 4, 2], [0, 2, 2, 2], K2, S2, "VALID"),
    avg_grad("3 sizes", [1, 4, 4], [1, 2, 2, 1], K2, S2, "VALID"),
    avg_grad("grad rank 3", [1, 4, 4, 1], [2, 2, 1], K2, S2, "VALID"),
    avg_grad("negative size", [1, -4, 4, 1], [1, 2, 2, 1], K2, S2, "VALID"),
    avg_grad("batch window", [2, 4, 4, 1], [1, 2, 2, 1], [2, 2, 2, 1], S2, "VALID"),
    avg_grad("depth window", [1, 4, 4, 2], [1, 2, 2, 1], [1, 2, 2, 2], S2, "VALID"),
    avg_grad("stride 0", [1, 4, 4, 1], [1, 2, 2, 1], K2, [1, 0, 2, 1], "VALID"),
    avg_grad(
        "wrong grad",
        [1, 4, 4, 1],
        [1, 3, 3, 1],
        K2,
        S2,
        "VALID",
        mg_error="InvalidArgumentError",
        why=NEWER,
    ),  # fmt: skip
    avg_grad(
        "ksize 0",
        [1, 4, 4, 1],
        [1, 3, 3, 1],
        [1, 0, 2, 1],
        S2,
        "VALID",
        mg_error="InvalidArgumentError",
        why=KSIZE0,
    ),  # fmt: skip
    # MaxPoolGradGrad: grad at each window's first cell equal to its max
    grad_grad("NaN and ties VALID", NAN_IMAGE, K2, S1, "VALID"),
    grad_grad("NaN and ties SAME", NAN_IMAGE, K2, S1, "SAME"),
    grad_grad("ties stride 2 SAME", ties([2, 5, 5, 3], f64), K3, S2, "SAME"),
    grad_grad("int32", ties([1, 4, 4, 2]), K2, S1, "VALID", i32),
    grad_grad("float16", normal([1, 4, 5, 2]), K3, S2, "SAME", f16),
    case(
        "MaxPoolGradGrad",
        name="MaxPoolGradGrad wrong grad",
        orig_input=normal([1, 4, 4, 1]),
        orig_output=normal([1, 2, 2, 1]),
        grad=normal([1, 3, 4, 1]),
        ksize=K2,
        strides=S2,
        padding="VALID",
    ),  # fmt: skip
    case(
        "MaxPoolGradGrad",
        name="MaxPoolGradGrad wrong orig_output",
        orig_input=normal([1, 4, 4, 1]),
        orig_output=normal([1, 2, 1, 1]),
        grad=normal([1, 4, 4, 1]),
        ksize=K2,
        strides=S2,
        padding="VALID",
    ),  # fmt: skip
    case(
        "MaxPoolGradGrad",
        name="MaxPoolGradGrad grad rank 3",
        orig_input=normal([1, 4, 4, 1]),
        orig_output=normal([1, 2, 2, 1]),
        grad=normal([4, 4, 1]),
        ksize=K2,
        strides=S2,
        padding="VALID",
    ),  # fmt: skip
    case(
        "MaxPoolGradGrad",
        name="MaxPoolGradGrad depth window",
        orig_input=normal([1, 4, 4, 2]),
        orig_output=normal([1, 2, 2, 1]),
        grad=normal([1, 4, 4, 2]),
        ksize=[1, 2, 2, 2],
        strides=S2,
        padding="VALID",
    ),  # fmt: skip
    # FusedBatchNormGradV3: the saved batch statistics (training) or the population ones
    bn_grad("training", [2, 3, 4, 3]),
    bn_grad("training NCHW", [2, 3, 3, 4], data_format="NCHW"),
    bn_grad("training NDHWC", [2, 2, 3, 2, 3], data_format="NDHWC"),
    bn_grad("training NCDHW", [1, 3, 2, 2, 2], data_format="NCDHW"),
    bn_grad("training float16", [2, 2, 3, 4], f16, epsilon=0.01),
    bn_grad("inference", [2, 3, 3, 3], is_training=False, epsilon=0.1),
    bn_grad("inference NDHWC", [1, 2, 3, 2, 2], is_training=False, data_format="NDHWC"),
    bn_grad("inference NCHW", [1, 3, 2, 2], is_training=False, data_format="NCHW"),
    bn_grad("empty", [0, 3, 3, 2]),
    bn_grad("one value a channel", [1, 1, 1, 3]),
    bn_grad("x and y_backprop differ", [2, 3, 3, 2], dy_shape=[2, 3, 2, 2]),
    bn_grad("rank 3", [2, 3, 2], dy_shape=[2, 3, 2]),
    bn_grad("scale of 3", [1, 2, 2, 2], scale=normal([3])),
    bn_grad("reserve_space_1 of 3", [1, 2, 2, 2], saved=normal([3])),
    bn_grad("scale rank 2", [1, 2, 2, 2], scale=normal([1, 2])),
]
