"""Convolution and pooling: Conv2D, DepthwiseConv2dNative, MaxPool, AvgPool.

All four share one window geometry (conv_geometry.py: TensorFlow's GetWindowedOutputSize for
VALID, SAME and EXPLICIT padding) and pad the image once. Conv2D is matrix products
(conv_kernels.py: im2col patches times the filter, a 1x1 filter with no copy; on the host,
3x3 stride-1 filters with enough channels by Winograd's F(2x2, 3x3), conv_winograd.py);
the depthwise convolution and the pools loop over the window's taps, each a strided slice
of the image (a loop over filter taps, never over elements). NCHW runs as NHWC between two
transposes; TensorFlow's CPU refuses NCHW for these four ops (its GPU runs them), minigraph
runs it on every device.
"""

from __future__ import annotations

from typing import Any, cast

from minigraph import errors
from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops import pool_jit
from minigraph.ops.conv_geometry import (
    EXPLICIT_ATTR,
    FORMAT_ATTR,
    PADDING_ATTR,
    accumulator_dtype,
    check_four,
    from_nhwc,
    pad_image,
    padding_attrs,
    pool_builder,
    spatial_axes,
    spatial_list,
    to_nhwc,
    window_geometry,
)
from minigraph.ops.conv_grouped import conv_groups, conv_shape_depth, grouped_conv
from minigraph.ops.conv_kernels import convolve, depthwise_conv, window_max, window_mean
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, with_rank
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = ("conv2d",)
# tf.nn names, re-exported by minigraph.ops.nn (conv2d is also top-level, as tf.compat.v1).
NN_BUILDERS = ("conv2d", "depthwise_conv2d_native", "max_pool", "avg_pool")

# -- Conv2D and DepthwiseConv2dNative ------------------------------------------------------


def _conv_shape(c: InferenceContext, x: TensorSpec, w: TensorSpec, depthwise: bool) -> TensorShape:
    fmt = c.attrs["data_format"]
    axes = spatial_axes(fmt)
    strides, dilations = c.attrs["strides"], c.attrs["dilations"]
    check_four(c.fail, "strides", strides, axes, "strides")
    check_four(c.fail, "dilations", dilations, axes, "dilations")
    xs, ws = with_rank(x.shape, 4), with_rank(w.shape, 4)
    cin = conv_shape_depth(c, xs[axes[2]], ws, depthwise)  # Conv2D may be grouped
    outs, _ = window_geometry(
        c.fail,
        c.attrs,
        [xs[axes[0]], xs[axes[1]]],
        [ws[0], ws[1]],
        [strides[axes[0]], strides[axes[1]]],
        [dilations[axes[0]], dilations[axes[1]]],
    )
    if depthwise:
        cout = None if cin is None or ws[3] is None else cin * ws[3]
    else:
        cout = ws[3]
    dims = [xs[0], *outs, cout]
    return TensorShape([dims[0], dims[3], dims[1], dims[2]] if fmt == "NCHW" else dims)


def _conv_kernel(ctx: KernelContext, x: Any, w: Any, depthwise: bool) -> Any:
    xp, attrs = ctx.xp, ctx.attrs
    fmt = attrs["data_format"]
    axes = spatial_axes(fmt)
    if x.ndim != 4 or w.ndim != 4:
        ctx.fail(f"input and filter must be 4-D, got {list(x.shape)} and {list(w.shape)}")
    groups = conv_groups(ctx, x.shape[axes[2]], w.shape, depthwise)
    x = to_nhwc(x, fmt)
    n, h, wd, cin = x.shape
    kh, kw, _, cmul = w.shape
    s = [attrs["strides"][axes[0]], attrs["strides"][axes[1]]]
    d = [attrs["dilations"][axes[0]], attrs["dilations"][axes[1]]]
    sizes, pads = window_geometry(ctx.fail, attrs, [h, wd], [kh, kw], s, d)
    outs = cast(list[int], sizes)  # concrete dims give concrete sizes
    cout = cin * cmul if depthwise else cmul
    ctx.check_size((n, outs[0], outs[1], cout), x.dtype)
    acc = accumulator_dtype(x.dtype)
    xpad = pad_image(xp, x, pads, dtype=acc)
    wacc = w.astype(acc, copy=False)
    if depthwise:
        out = depthwise_conv(ctx, xpad, wacc, outs, s, d)
    elif groups > 1:  # the filter's in_channels divide the input's (conv_grouped.py)
        out = grouped_conv(ctx, xpad, wacc, outs, s, d, groups)
    else:
        out = convolve(ctx, xpad, wacc, outs, s, d)
    out = out.reshape(n, outs[0], outs[1], cout).astype(x.dtype, copy=False)
    return from_nhwc(xp, out, fmt)


CONV2D = define_op(
    "Conv2D",
    inputs=["input: T", "filter: T"],
    outputs=["output: T"],
    attrs=[
        "T: {float16, float32, float64, int32}",
        "strides: list(int)",
        "use_cudnn_on_gpu: bool = True",
        PADDING_ATTR,
        EXPLICIT_ATTR,
        FORMAT_ATTR,
        "dilations: list(int) = [1, 1, 1, 1]",
    ],
    shape_fn=lambda c, x, w: _conv_shape(c, x, w, depthwise=False),
    doc="""
2-D convolution (cross-correlation, as TensorFlow) of ``input`` of shape
``[batch, height, width, in_channels]`` (NHWC; ``[batch, in_channels, height, width]``
with ``data_format="NCHW"``) with a ``filter`` of shape
``[filter_height, filter_width, in_channels, out_channels]``.

``strides`` and ``dilations`` have 4 entries in the data format's order (batch and channel
entries must be 1). ``padding="VALID"`` uses only full windows: an output dim is
``ceil((in - (k - 1) * dilation) / stride)``; ``"SAME"`` pads with zeros (the extra one at
the end) so that it is ``ceil(in / stride)``; ``"EXPLICIT"`` pads by ``explicit_paddings``
(8 values, a (before, after) pair per dim in the data format's order; batch and channel
pairs must be 0). ``use_cudnn_on_gpu`` is accepted and ignored.

NCHW: TensorFlow's CPU refuses it ("only supports the NHWC tensor format on the CPU");
minigraph runs it on every device (as a transposed NHWC convolution).

Errors: the filter's ``in_channels`` must divide the input's (grouped, as Keras' ``groups``);
a VALID window larger than the input gives "Computed output size would be negative".

Example: a 3x3 input of ones and a 2x2 filter of ones, VALID, stride 1, gives 4 everywhere
in a 2x2 output.
""",
)


@register_kernel("Conv2D", "CPU", "GPU")
def _conv2d_kernel(ctx: KernelContext, x: Any, w: Any) -> Any:
    return _conv_kernel(ctx, x, w, depthwise=False)


DEPTHWISE_CONV2D_NATIVE = define_op(
    "DepthwiseConv2dNative",
    inputs=["input: T", "filter: T"],
    outputs=["output: T"],
    attrs=[
        "T: {float16, float32, float64}",
        "strides: list(int)",
        PADDING_ATTR,
        EXPLICIT_ATTR,
        FORMAT_ATTR,
        "dilations: list(int) = [1, 1, 1, 1]",
    ],
    shape_fn=lambda c, x, w: _conv_shape(c, x, w, depthwise=True),
    doc="""
Depthwise 2-D convolution: each input channel ``k`` is convolved with its own
``channel_multiplier`` filters ``filter[:, :, k, :]`` (``filter`` is
``[filter_height, filter_width, in_channels, channel_multiplier]``); output channel
``k * channel_multiplier + q`` is input channel ``k`` with filter ``q``, so the output has
``in_channels * channel_multiplier`` channels. Strides, dilations, padding and data formats
as Conv2D.

Where minigraph does more than TensorFlow's CPU kernel: dilations other than 1, unequal row
and column strides, and NCHW (TensorFlow's CPU refuses all three; its GPU runs them).

Example: a 3x3 image of ones with 2 channels and a 2x2 filter of ones with multiplier 3
gives a [1, 2, 2, 6] output of 4s.
""",
)


@register_kernel("DepthwiseConv2dNative", "CPU", "GPU")
def _depthwise_conv2d_native_kernel(ctx: KernelContext, x: Any, w: Any) -> Any:
    return _conv_kernel(ctx, x, w, depthwise=True)


Conv2D = make_wrapper_class(CONV2D)
DepthwiseConv2dNative = make_wrapper_class(DEPTHWISE_CONV2D_NATIVE)
_conv2d = make_builder(CONV2D, "conv2d")
_depthwise_conv2d_native = make_builder(DEPTHWISE_CONV2D_NATIVE, "depthwise_conv2d_native")


def conv2d(
    input: Any,  # noqa: A002
    filter: Any = None,  # noqa: A002
    strides: Any = None,
    padding: Any = None,
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = None,
    name: str | None = None,
    filters: Any = None,
) -> Output:
    """2-D convolution of ``input`` with ``filter`` [kh, kw, in, out], as tf.compat.v1.nn.conv2d.

    ``strides``/``dilations``: an int, or 1, 2 or 4 values; ``padding``: "SAME", "VALID" or
    explicit pairs ``[[0, 0], [top, bottom], [left, right], [0, 0]]``; ``filters`` is
    ``filter``'s TF 2 name.

    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.conv2d(np.ones((1, 3, 3, 1), np.float32), np.ones((2, 2, 1, 1), np.float32),
    ...                   strides=1, padding="VALID")
    >>> mg.Session(g).run(y)[0, :, :, 0]
    array([[4., 4.],
           [4., 4.]], dtype=float32)
    """
    return _conv2d(
        input,
        filters if filter is None else filter,
        strides=spatial_list(strides, data_format),
        use_cudnn_on_gpu=use_cudnn_on_gpu,
        dilations=spatial_list(dilations, data_format),
        data_format=data_format,
        name=name or "Conv2D",
        **padding_attrs(padding),
    )


def depthwise_conv2d_native(
    input: Any,  # noqa: A002
    filter: Any,  # noqa: A002
    strides: Any,
    padding: Any,
    data_format: str = "NHWC",
    dilations: Any = None,
    name: str | None = None,
) -> Output:
    """Depthwise 2-D convolution, as tf.compat.v1.nn.depthwise_conv2d_native.

    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.nn.depthwise_conv2d_native(np.ones((1, 3, 3, 2), np.float32),
    ...                                       np.ones((2, 2, 2, 3), np.float32),
    ...                                       strides=[1, 1, 1, 1], padding="VALID")
    >>> mg.Session(g).run(y).shape
    (1, 2, 2, 6)
    """
    return _depthwise_conv2d_native(
        input,
        filter,
        strides=spatial_list(strides, data_format),
        dilations=spatial_list(dilations, data_format),
        data_format=data_format,
        name=name or "DepthwiseConv2dNative",
        **padding_attrs(padding),
    )


# -- MaxPool and AvgPool -------------------------------------------------------------------


def _pool_attrs(c: Any, attrs: dict, fail: Any) -> tuple[list[int], list[int]]:
    """Spatial (ksize, strides) after TensorFlow's checks."""
    axes = spatial_axes(attrs["data_format"])
    ksize, strides = attrs["ksize"], attrs["strides"]
    if len(ksize) != 4:
        fail("Sliding window ksize field must specify 4 dimensions")
    if len(strides) != 4:
        fail("Sliding window stride field must specify 4 dimensions")
    if min(ksize) < 1:
        fail(
            "Sliding window ksize must be positive. The specified or inferred ksize is: "
            + ",".join(str(k) for k in ksize)
        )
    if min(strides) < 1:
        fail(f"Sliding window stride must be positive, got {list(strides)}")
    if ksize[0] != 1 or strides[0] != 1:
        raise errors.UnimplementedError(
            "Pooling is not yet supported on the batch dimension.", c.node_name, c.op_type
        )
    if ksize[axes[2]] != 1 or strides[axes[2]] != 1:
        raise errors.UnimplementedError(
            "minigraph does not pool across the depth dimension (ksize and strides must be 1 "
            "there)",
            c.node_name,
            c.op_type,
        )
    return [ksize[axes[0]], ksize[axes[1]]], [strides[axes[0]], strides[axes[1]]]


def _pool_shape(c: InferenceContext, x: TensorSpec) -> TensorShape:
    fmt = c.attrs["data_format"]
    axes = spatial_axes(fmt)
    k, s = _pool_attrs(c, c.attrs, c.fail)
    xs = with_rank(x.shape, 4)
    outs, _ = window_geometry(c.fail, c.attrs, [xs[axes[0]], xs[axes[1]]], k, s, [1, 1])
    dims = [xs[0], *outs, xs[axes[2]]]
    return TensorShape([dims[0], dims[3], dims[1], dims[2]] if fmt == "NCHW" else dims)


def _pool_kernel(ctx: KernelContext, x: Any, average: bool) -> Any:
    xp, attrs = ctx.xp, ctx.attrs
    fmt = attrs["data_format"]
    k, s = _pool_attrs(ctx, attrs, ctx.fail)
    if x.ndim != 4:
        ctx.fail(f"input must be 4-dimensional, got {list(x.shape)}")
    x = to_nhwc(x, fmt)
    n, h, wd, ch = x.shape
    sizes, pads = window_geometry(ctx.fail, attrs, [h, wd], k, s, [1, 1])
    outs = cast(list[int], sizes)  # concrete dims give concrete sizes
    ctx.check_size((n, outs[0], outs[1], ch), x.dtype)
    out = (pool_jit.avg_pool if average else pool_jit.max_pool)(ctx, x, pads, outs, k, s)
    if out is None:
        out = (window_mean if average else window_max)(xp, x, pads, outs, k, s)
    return from_nhwc(xp, out, fmt)


_POOL_DOC = """
``ksize`` and ``strides`` have 4 entries in the data format's order; pooling spans height
and width only (batch entries other than 1 are UnimplementedError, as TensorFlow; depth
pooling too, which TensorFlow's MaxPool does). ``padding`` as Conv2D.
NCHW: TensorFlow's CPU refuses it ("only supports NHWC on device type CPU"); minigraph runs
it on every device.
"""

MAX_POOL = define_op(
    "MaxPool",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=[
        "T: {float16, float32, float64, int8, int16, int32, int64, uint8, uint16} = float32",
        "ksize: list(int) >= 4",
        "strides: list(int) >= 4",
        PADDING_ATTR,
        EXPLICIT_ATTR,
        FORMAT_ATTR,
    ],
    shape_fn=_pool_shape,
    doc="""
Max pooling over windows of ``input`` (NHWC, or NCHW).

As TensorFlow: NaN cells are skipped (a window is the largest non-NaN value), and a window
of only -inf or NaN gives the dtype's lowest finite value. SAME and EXPLICIT padding cells
never win.
"""
    + _POOL_DOC
    + """
Example: the image ``[[1, 2], [3, 4]]`` (shape [1, 2, 2, 1]) with ksize 2, stride 1 and
VALID padding gives ``[[4]]``.
""",
)


@register_kernel("MaxPool", "CPU", "GPU")
def _max_pool_kernel(ctx: KernelContext, x: Any) -> Any:
    return _pool_kernel(ctx, x, average=False)


AVG_POOL = define_op(
    "AvgPool",
    inputs=["value: T"],
    outputs=["output: T"],
    attrs=[
        "T: {float16, float32, float64}",
        "ksize: list(int) >= 4",
        "strides: list(int) >= 4",
        "padding: {'SAME', 'VALID'}",
        FORMAT_ATTR,
    ],
    shape_fn=_pool_shape,
    doc="""
Average pooling over windows of ``value`` (NHWC, or NCHW). With SAME padding each window is
divided by the number of its cells inside the input, not by the window size (as TensorFlow).
"""
    + _POOL_DOC
    + """
Example: a 3x3 image 0..8 with ksize 2, stride 2, SAME gives ``[[2, 3.5], [6.5, 8]]``.
""",
)


@register_kernel("AvgPool", "CPU", "GPU")
def _avg_pool_kernel(ctx: KernelContext, x: Any) -> Any:
    return _pool_kernel(ctx, x, average=True)


MaxPool = make_wrapper_class(MAX_POOL)
AvgPool = make_wrapper_class(AVG_POOL)


max_pool = pool_builder(
    MAX_POOL,
    "max_pool",
    """
    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.nn.max_pool(np.arange(9.0).reshape(1, 3, 3, 1), 2, 1, "VALID")
    >>> mg.Session(g).run(y)[0, :, :, 0]
    array([[4., 5.],
           [7., 8.]])
    """,
)
avg_pool = pool_builder(
    AVG_POOL,
    "avg_pool",
    """
    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.nn.avg_pool(np.arange(9.0).reshape(1, 3, 3, 1), 2, 2, "SAME")
    >>> mg.Session(g).run(y)[0, :, :, 0]
    array([[2. , 3.5],
           [6.5, 8. ]])
    """,
)


__all__ = ["Conv2D", "DepthwiseConv2dNative", "MaxPool", "AvgPool", *NN_BUILDERS]
