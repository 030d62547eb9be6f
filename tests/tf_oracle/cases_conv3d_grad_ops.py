"""The 3-D gradient ops run by TensorFlow 2.21's reference CPU kernels (see
make_op_fixtures.py): family "conv3d_grad_ops": Conv3DBackpropInputV2 and
Conv3DBackpropFilterV2 (VALID/SAME, strides, int64 input_sizes, float16/32/64, empty dims,
and the kernels' messages), MaxPool3DGrad (every cell equal to the window's max gets the
gradient), AvgPool3DGrad and MaxPool3DGradGrad, and their errors. float16 pooling
gradients and a float64 MaxPool3DGradGrad have no TensorFlow CPU kernel (NotFoundError);
minigraph runs them (tested against float32 in tests/test_conv3d_grad.py).

TF_ENV turns oneDNN off: the reference kernels check every argument with a message (oneDNN
aborts on some). Left out, tested in tests/test_conv3d_grad.py against Conv3D's adjoint and
finite differences: NCDHW and grouped filters (TensorFlow's CPU refuses them, as minigraph's;
a GPU runs them) and
dilations (the reference CPU kernel refuses them; tests/fixtures/grads/conv3d.npz has
oneDNN's dilated gradients).
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

TF_ENV = {"TF_ENABLE_ONEDNN_OPTS": "0"}

rng = np.random.default_rng(3303)
f16, f32, f64, i32, i64 = np.float16, np.float32, np.float64, np.int32, np.int64
S1, S2 = [1, 1, 1, 1, 1], [1, 2, 2, 2, 1]
K2 = [1, 2, 2, 2, 1]


def normal(shape, dtype=f32):
    return rng.standard_normal(shape).astype(dtype)


def ties(shape, dtype=f32):
    """Small integers: windows with equal maxima."""
    return rng.integers(-2, 3, shape).astype(dtype)


def sizes(*dims, dtype=i32):
    return np.array(dims, dtype)


def bi(name, x, w, g, dtype=f32, strides=S1, padding="VALID", **kw):
    given = kw.pop("input_sizes") if "input_sizes" in kw else sizes(*x)
    return case(
        "Conv3DBackpropInputV2",
        name=f"BI3 {name}",
        input_sizes=given,
        filter=normal(w, dtype),
        out_backprop=normal(g, dtype),
        strides=strides,
        padding=padding,
        **kw,
    )


def bf(name, x, w, g, dtype=f32, strides=S1, padding="VALID", **kw):
    given = kw.pop("filter_sizes") if "filter_sizes" in kw else sizes(*w)
    return case(
        "Conv3DBackpropFilterV2",
        name=f"BF3 {name}",
        input=normal(x, dtype),
        filter_sizes=given,
        out_backprop=normal(g, dtype),
        strides=strides,
        padding=padding,
        **kw,
    )


def pooled(x, ksize, strides, padding):
    """MaxPool3D's output for ``x`` (no NaN here): a loop over windows."""
    n, *dims, c = x.shape
    k, s = ksize[1:4], strides[1:4]
    if padding == "VALID":
        out = [(size - kk) // ss + 1 for size, kk, ss in zip(dims, k, s)]
        before = [0, 0, 0]
    else:
        out = [-(-size // ss) for size, ss in zip(dims, s)]
        total = [max((o - 1) * ss + kk - size, 0) for o, ss, kk, size in zip(out, s, k, dims)]
        before = [t // 2 for t in total]
    y = np.empty((n, *out, c), x.dtype)
    for index in np.ndindex(*out):
        start = [i * ss - b for i, ss, b in zip(index, s, before)]
        window = tuple(slice(max(a, 0), a + kk) for a, kk in zip(start, k))
        y[(slice(None), *index)] = x[(slice(None), *window)].max(axis=(1, 2, 3))
    return y


def max_grad(name, x, ksize, strides, padding, **kw):
    y = pooled(x, ksize, strides, padding)
    return case(
        "MaxPool3DGrad",
        name=f"MaxPool3DGrad {name}",
        orig_input=x,
        orig_output=y,
        grad=kw.pop("grad", ties(y.shape, x.dtype) * 3 + 1),
        ksize=ksize,
        strides=strides,
        padding=padding,
        **kw,
    )


def grad_grad(name, x, ksize, strides, padding, **kw):
    y = pooled(x, ksize, strides, padding)
    return case(
        "MaxPool3DGradGrad",
        name=f"MaxPool3DGradGrad {name}",
        orig_input=x,
        orig_output=y,
        grad=kw.pop("grad", normal(x.shape, x.dtype)),
        ksize=ksize,
        strides=strides,
        padding=padding,
        **kw,
    )


def avg_grad(name, x, g, ksize, strides, padding, dtype=f32, **kw):
    given = kw.pop("orig_input_shape") if "orig_input_shape" in kw else sizes(*x)
    return case(
        "AvgPool3DGrad",
        name=f"AvgPool3DGrad {name}",
        orig_input_shape=given,
        grad=normal(g, dtype),
        ksize=ksize,
        strides=strides,
        padding=padding,
        **kw,
    )


CASES = [
    # Conv3DBackpropInputV2
    bi("VALID", [2, 4, 5, 4, 2], [2, 3, 2, 2, 3], [2, 3, 3, 3, 3]),
    bi(
        "SAME stride 2",
        [1, 5, 4, 6, 3],
        [3, 2, 3, 3, 2],
        [1, 3, 2, 3, 2],
        strides=S2,
        padding="SAME",
    ),
    bi(
        "unequal strides",
        [1, 6, 5, 5, 2],
        [2, 2, 3, 2, 2],
        [1, 3, 4, 1, 2],
        strides=[1, 2, 1, 3, 1],
    ),
    bi("float64", [1, 3, 4, 3, 2], [2, 2, 2, 2, 4], [1, 3, 4, 3, 4], f64, padding="SAME"),
    bi("float16", [1, 3, 3, 3, 2], [2, 2, 2, 2, 2], [1, 2, 2, 2, 2], f16, rtol=1e-2, atol=1e-2),
    bi(
        "int64 sizes",
        [1, 3, 3, 3, 1],
        [2, 2, 2, 1, 1],
        [1, 2, 2, 2, 1],
        input_sizes=sizes(1, 3, 3, 3, 1, dtype=i64),
    ),
    bi("1x1x1 filter", [2, 2, 3, 2, 4], [1, 1, 1, 4, 3], [2, 2, 3, 2, 3]),
    bi("empty batch", [0, 3, 3, 3, 2], [2, 2, 2, 2, 2], [0, 2, 2, 2, 2]),
    bi("wrong out size", [1, 4, 4, 4, 2], [2, 2, 2, 2, 3], [1, 2, 3, 3, 3]),
    bi("batch mismatch", [2, 3, 3, 3, 2], [2, 2, 2, 2, 2], [1, 2, 2, 2, 2]),
    bi("in channels", [1, 3, 3, 3, 3], [2, 2, 2, 2, 2], [1, 2, 2, 2, 2]),
    bi("out channels", [1, 3, 3, 3, 2], [2, 2, 2, 2, 3], [1, 2, 2, 2, 2]),
    bi("4 sizes", [1, 3, 3, 2], [2, 2, 2, 2, 2], [1, 2, 2, 2, 2], input_sizes=sizes(1, 3, 3, 2)),
    bi(
        "negative size",
        [1, 3, 3, 3, 2],
        [2, 2, 2, 2, 2],
        [1, 2, 2, 2, 2],
        input_sizes=sizes(1, -3, 3, 3, 2),
    ),
    bi(
        "sizes matrix",
        [1, 3, 3, 3, 2],
        [2, 2, 2, 2, 2],
        [1, 2, 2, 2, 2],
        input_sizes=np.array([[1, 3, 3, 3, 2]], i32),
    ),
    bi("rank-4 filter", [1, 3, 3, 3, 2], [2, 2, 2, 2], [1, 2, 2, 2, 2]),
    bi(
        "channel stride", [1, 3, 3, 3, 2], [2, 2, 2, 2, 2], [1, 2, 2, 2, 2], strides=[1, 1, 1, 1, 2]
    ),
    bi("zero stride", [1, 3, 3, 3, 2], [2, 2, 2, 2, 2], [1, 2, 2, 2, 2], strides=[1, 0, 1, 1, 1]),
    bi("6 strides", [1, 3, 3, 3, 2], [2, 2, 2, 2, 2], [1, 2, 2, 2, 2], strides=[1] * 6),
    bi(
        "channel dilation",
        [1, 3, 3, 3, 2],
        [2, 2, 2, 2, 2],
        [1, 2, 2, 2, 2],
        dilations=[1, 1, 1, 1, 2],
    ),
    # Conv3DBackpropFilterV2
    bf("VALID", [2, 4, 5, 4, 2], [2, 3, 2, 2, 3], [2, 3, 3, 3, 3]),
    bf(
        "SAME stride 2",
        [1, 5, 4, 6, 3],
        [3, 2, 3, 3, 2],
        [1, 3, 2, 3, 2],
        strides=S2,
        padding="SAME",
    ),
    bf(
        "float64 many channels",
        [2, 3, 4, 3, 5],
        [2, 2, 2, 5, 4],
        [2, 3, 4, 3, 4],
        f64,
        padding="SAME",
    ),
    bf("float16", [1, 3, 3, 3, 2], [2, 2, 2, 2, 2], [1, 2, 2, 2, 2], f16, rtol=1e-2, atol=1e-2),
    bf("empty batch", [0, 3, 3, 3, 2], [2, 2, 2, 2, 2], [0, 2, 2, 2, 2]),
    bf("wrong out size", [1, 4, 4, 4, 2], [2, 2, 2, 2, 3], [1, 3, 3, 2, 3]),
    bf("rank-4 input", [3, 3, 3, 2], [2, 2, 2, 2, 2], [1, 2, 2, 2, 2]),
    bf("4 filter sizes", [1, 3, 3, 3, 2], [2, 2, 2, 2], [1, 2, 2, 2, 2]),
    bf("in channels", [1, 3, 3, 3, 3], [2, 2, 2, 2, 2], [1, 2, 2, 2, 2]),
    # MaxPool3DGrad: every cell equal to the window's max gets its gradient (ties)
    max_grad("ties VALID", ties([2, 3, 4, 3, 2]), K2, S1, "VALID"),
    max_grad("ties SAME stride 2", ties([1, 5, 4, 5, 2]), [1, 3, 3, 2, 1], S2, "SAME"),
    max_grad("normal", normal([2, 4, 4, 4, 3]), K2, S2, "VALID"),
    max_grad("wrong output", ties([1, 3, 3, 3, 1]), K2, S1, "VALID", grad=normal([1, 3, 3, 3, 1])),
    max_grad("channel ksize", ties([1, 3, 3, 3, 2]), [1, 1, 1, 1, 2], S1, "VALID"),
    # AvgPool3DGrad
    avg_grad("VALID", [2, 4, 5, 4, 2], [2, 3, 4, 3, 2], K2, S1, "VALID"),
    avg_grad("SAME stride 2", [1, 5, 4, 5, 3], [1, 3, 2, 3, 3], [1, 3, 2, 3, 1], S2, "SAME"),
    avg_grad(
        "4 values",
        [1, 3, 3, 2],
        [1, 2, 2, 2, 2],
        K2,
        S1,
        "VALID",
        orig_input_shape=sizes(1, 3, 3, 2),
    ),
    # MaxPool3DGradGrad
    grad_grad("ties VALID", ties([2, 3, 4, 3, 2]), K2, S1, "VALID"),
    grad_grad("ties SAME stride 2", ties([1, 5, 4, 5, 2]), [1, 3, 3, 2, 1], S2, "SAME"),
    grad_grad("normal", normal([1, 4, 4, 4, 2]), K2, S2, "VALID"),
    grad_grad("wrong grad", ties([1, 3, 3, 3, 1]), K2, S1, "VALID", grad=normal([1, 2, 2, 2, 1])),
]
