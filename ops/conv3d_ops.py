"""3-D convolution and pooling: Conv3D, MaxPool3D, AvgPool3D.

Volumes are ``[batch, depth, height, width, channels]`` (NDHWC) or NCDHW. The window
geometry and the kernels are the 2-D ops' own, over three spatial dims (conv_geometry.py,
conv_kernels.py): the volume padded once, a loop over the window's taps, im2col for few
channels. The checks and messages are TensorFlow 2.21's: its shape functions' at build
time, its reference CPU kernels' (conv_ops_3d.cc, pooling_ops_3d.cc) at run time.

Devices, as TensorFlow: its CPU kernels refuse NCDHW and grouped filters (the filter's
in-depth dividing the input's), and so do minigraph's CPU kernels, with the same message;
its GPU runs both, and so does minigraph's (NCDHW as NDHWC between two transposes).
Dilations run on every device (TensorFlow's default oneDNN CPU kernel and its GPU run them;
only its reference CPU kernel refuses them). float16 pooling and float64 AvgPool3D, which
the ops declare but TensorFlow's CPU has no kernel for, run on every device.
"""

from __future__ import annotations

from typing import Any, cast

from minigraph import errors
from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.conv_geometry import (
    accumulator_dtype,
    channels_first,
    from_nhwc,
    pad_image,
    pool_builder,
    spatial_list,
    to_nhwc,
    window_geometry,
)
from minigraph.ops.conv_grouped import conv_shape_depth, grouped_conv
from minigraph.ops.conv_kernels import convolve, window_max, window_mean
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, with_rank
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS: tuple[str, ...] = ()
# tf.compat.v1.nn names, re-exported by minigraph.ops.nn
NN_BUILDERS = ("conv3d", "max_pool3d", "avg_pool3d")

_PADDING = "padding: {'SAME', 'VALID'}"
_FORMAT = "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'"


def _spatial(values: Any, data_format: str) -> list[Any]:
    """The depth, height and width entries of a 5-entry list (or dims) in this format."""
    return list(values[2:] if channels_first(data_format) else values[1:4])


def _in_format(n: Any, spatial: list[Any], c: Any, data_format: str) -> list[Any]:
    return [n, c, *spatial] if channels_first(data_format) else [n, *spatial, c]


def _batch_and_depth(values: Any, data_format: str) -> tuple[Any, Any]:
    return values[0], values[1 if channels_first(data_format) else 4]


def _check_positive_strides(fail: Any, strides: list[int]) -> None:
    for s in strides:
        if s <= 0:
            fail(f"Stride must be > 0, but got {s}")


def on_cpu(ctx: KernelContext) -> bool:
    return ctx.device.partition(":")[0] == "CPU"


# -- Conv3D --------------------------------------------------------------------------------


def _conv3d_attrs(fail: Any, attrs: dict) -> tuple[list[int], list[int]]:
    """The spatial strides and dilations, after Conv3DShape's and Conv3DOp's checks."""
    fmt, strides, dilations = attrs["data_format"], attrs["strides"], attrs["dilations"]
    if len(strides) != 5:
        fail(f"Conv3D requires the stride attribute to contain 5 values, but got: {len(strides)}")
    if len(dilations) != 5:
        fail(
            f"Conv3D requires the dilation attribute to contain 5 values, but got: {len(dilations)}"
        )
    if _batch_and_depth(strides, fmt) != (1, 1):
        fail(
            "Current implementation does not yet support strides in the batch and depth dimensions."
        )
    if _batch_and_depth(dilations, fmt) != (1, 1):
        fail(
            "Current implementation does not yet support dilation rates in the batch and "
            "depth dimensions."
        )
    s, d = _spatial(strides, fmt), _spatial(dilations, fmt)
    _check_positive_strides(fail, s)
    for rate in d:
        if rate < 1:
            fail(f"Dilation rate must be >= 1, but got {rate}")
    return s, d


def _conv3d_shape(c: InferenceContext, x: TensorSpec, w: TensorSpec) -> TensorShape:
    fmt = c.attrs["data_format"]
    xs, ws = with_rank(x.shape, 5), with_rank(w.shape, 5)
    s, d = _conv3d_attrs(c.fail, c.attrs)
    n, in_depth = _batch_and_depth(xs, fmt)
    conv_shape_depth(c, in_depth, ws, depthwise=False)  # grouped filters build (for a GPU)
    outs, _ = window_geometry(c.fail, c.attrs, _spatial(xs, fmt), ws[:3], s, d)
    return TensorShape(_in_format(n, outs, ws[4], fmt))


def _conv3d_groups(ctx: KernelContext, in_depth: int, w: Any) -> int:
    """How many groups, after Conv3DOp's checks of the filter (TensorFlow's messages); the
    CPU takes one group only (checked once the output is known not to be empty)."""
    filter_depth, out_depth = w.shape[3], w.shape[4]
    if filter_depth == 0:
        ctx.fail("filter_depth must be non-zero")
    if in_depth % filter_depth:
        ctx.fail(
            f"Input depth must be evenly divisible by filter depth: {in_depth} vs {filter_depth}"
        )
    if w.size == 0:
        ctx.fail("filter must not have zero elements (i.e. all dimensions must be non-zero)")
    groups = in_depth // filter_depth
    if groups == 0:  # an input without channels: no device convolves it
        _one_group_only(ctx, filter_depth, in_depth)
    if out_depth % groups:
        ctx.fail(
            f"Depth of output ({out_depth}) is not a multiple of the number of groups ({groups})"
        )
    return groups


def _one_group_only(ctx: KernelContext, filter_depth: int, in_depth: int) -> None:
    ctx.fail(
        f"Number of channels in filter ({filter_depth}) must match last dimension of input "
        f"({in_depth})"
    )


CONV3D = define_op(
    "Conv3D",
    inputs=["input: T", "filter: T"],
    outputs=["output: T"],
    attrs=[
        "T: {float16, float32, float64}",
        "strides: list(int) >= 5",
        _PADDING,
        _FORMAT,
        "dilations: list(int) = [1, 1, 1, 1, 1]",
    ],
    shape_fn=_conv3d_shape,
    doc="""
3-D convolution (cross-correlation, as TensorFlow) of ``input``
``[batch, in_depth, in_height, in_width, in_channels]`` (NDHWC; NCDHW puts the channels
second) with a ``filter`` ``[filter_depth, filter_height, filter_width, in_channels,
out_channels]``.

``strides`` and ``dilations`` have 5 entries in the data format's order (batch and channel
entries must be 1). ``padding="VALID"`` uses only full windows, ``"SAME"`` pads with zeros
(the extra cell at the end) so that each output dim is ``ceil(in / stride)``. float16 is
summed in float32 and rounded once.

On the CPU, as TensorFlow's: NCDHW is refused ("CPU implementation of Conv3D currently only
supports the NHWC tensor format.", InvalidArgumentError), and so is a filter whose
in_channels divide the input's without equalling them (grouped: "Number of channels in
filter (2) must match last dimension of input (4)"); a GPU runs both. Dilations run
everywhere (TensorFlow's reference CPU kernel refuses them; its default oneDNN kernel does
not). A filter with a zero dim is refused ("filter must not have zero elements").

Example: a 3x3x3 volume of ones and a 2x2x2 filter of ones, VALID, give 8 everywhere in a
2x2x2 output.
""",
)


@register_kernel("Conv3D", "CPU", "GPU")
def _conv3d_kernel(ctx: KernelContext, x: Any, w: Any) -> Any:
    xp, attrs = ctx.xp, ctx.attrs
    fmt = attrs["data_format"]
    if x.ndim != 5:
        ctx.fail(f"input must be 5-dimensional, got {list(x.shape)}")
    if w.ndim != 5:
        ctx.fail(f"filter must be 5-dimensional, got {list(w.shape)}")
    s, d = _conv3d_attrs(ctx.fail, attrs)
    groups = _conv3d_groups(ctx, _batch_and_depth(x.shape, fmt)[1], w)
    x = to_nhwc(x, fmt)
    n, *spatial, cin = x.shape
    *k, _, cout = w.shape
    sizes, pads = window_geometry(ctx.fail, attrs, spatial, k, s, d)
    outs = cast(list[int], sizes)  # concrete dims give concrete sizes
    ctx.check_size((n, *outs, cout), x.dtype)
    if n * cout * outs[0] * outs[1] * outs[2] == 0:  # TensorFlow returns before launching
        return from_nhwc(xp, xp.zeros((n, *outs, cout), x.dtype), fmt)
    if on_cpu(ctx) and channels_first(fmt):
        ctx.fail("CPU implementation of Conv3D currently only supports the NHWC tensor format.")
    if on_cpu(ctx) and groups > 1:
        _one_group_only(ctx, w.shape[3], cin)
    acc = accumulator_dtype(x.dtype)
    xpad = pad_image(xp, x, pads, dtype=acc)
    wacc = w.astype(acc, copy=False)
    if groups > 1:
        out = grouped_conv(ctx, xpad, wacc, outs, s, d, groups)
    else:
        out = convolve(ctx, xpad, wacc, outs, s, d)
    out = out.reshape(n, *outs, cout).astype(x.dtype, copy=False)
    return from_nhwc(xp, out, fmt)


Conv3D = make_wrapper_class(CONV3D)
_conv3d = make_builder(CONV3D, "conv3d")


def conv3d(
    input: Any,  # noqa: A002
    filter: Any = None,  # noqa: A002
    strides: Any = None,
    padding: Any = None,
    data_format: str = "NDHWC",
    dilations: Any = None,
    name: str | None = None,
    filters: Any = None,
) -> Output:
    """3-D convolution of ``input`` with ``filter`` [kd, kh, kw, in, out], as
    tf.compat.v1.nn.conv3d.

    ``strides``/``dilations``: an int, 3 values (depth, height, width) or 5; ``padding``:
    "SAME" or "VALID"; ``filters`` is ``filter``'s TF 2 name.

    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.nn.conv3d(np.ones((1, 3, 3, 3, 1), np.float32),
    ...                      np.ones((2, 2, 2, 1, 1), np.float32), strides=1, padding="VALID")
    >>> mg.Session(g).run(y)[0, :, :, :, 0]
    array([[[8., 8.],
            [8., 8.]],
    <BLANKLINE>
           [[8., 8.],
            [8., 8.]]], dtype=float32)
    """
    return _conv3d(
        input,
        filters if filter is None else filter,
        strides=spatial_list(strides, data_format),
        padding=padding,
        data_format=data_format,
        dilations=spatial_list(dilations, data_format),
        name=name or "Conv3D",
    )


# -- MaxPool3D and AvgPool3D ---------------------------------------------------------------


def pool3d_attrs(c: Any, fail: Any, attrs: dict) -> tuple[list[int], list[int]]:
    """Spatial (ksize, strides), after Pool3DShape's and Pooling3DOp's checks."""
    fmt, ksize, strides = attrs["data_format"], attrs["ksize"], attrs["strides"]
    if len(ksize) != 5:
        fail(f"Pool3D requires the ksize attribute to contain 5 values, but got: {len(ksize)}")
    if len(strides) != 5:
        fail(
            f"Pool3D ops require the stride attribute to contain 5 values, but got: {len(strides)}"
        )
    if min(ksize) <= 0:
        fail("Sliding window ksize field must have non-negative dimensions")
    for where, index in (("batch", 0), ("depth", 1 if channels_first(fmt) else 4)):
        if ksize[index] != 1 or strides[index] != 1:
            raise errors.UnimplementedError(
                f"Pooling is not yet supported on the {where} dimension.", c.node_name, c.op_type
            )
    s = _spatial(strides, fmt)
    _check_positive_strides(fail, s)
    return _spatial(ksize, fmt), s


def _pool3d_shape(c: InferenceContext, x: TensorSpec) -> TensorShape:
    fmt = c.attrs["data_format"]
    xs = with_rank(x.shape, 5)
    k, s = pool3d_attrs(c, c.fail, c.attrs)
    outs, _ = window_geometry(c.fail, c.attrs, _spatial(xs, fmt), k, s, [1, 1, 1])
    n, channels = _batch_and_depth(xs, fmt)
    return TensorShape(_in_format(n, outs, channels, fmt))


def _pool3d_kernel(ctx: KernelContext, x: Any, average: bool) -> Any:
    xp, attrs = ctx.xp, ctx.attrs
    fmt = attrs["data_format"]
    k, s = pool3d_attrs(ctx, ctx.fail, attrs)
    if on_cpu(ctx) and channels_first(fmt):
        ctx.fail("Default Pooling3DOp only supports NDHWC on device type CPU")
    if x.ndim != 5:
        ctx.fail(f"tensor_in must be 5-dimensional, got {list(x.shape)}")
    x = to_nhwc(x, fmt)
    n, *spatial, channels = x.shape
    sizes, pads = window_geometry(ctx.fail, attrs, spatial, k, s, [1, 1, 1])
    outs = cast(list[int], sizes)  # concrete dims give concrete sizes
    ctx.check_size((n, *outs, channels), x.dtype)
    pool = window_mean if average else window_max
    return from_nhwc(xp, pool(xp, x, pads, outs, k, s), fmt)


_POOL3D_DOC = """
``ksize`` and ``strides`` have 5 entries in the data format's order; pooling spans depth,
height and width only (batch or channel entries other than 1 are UnimplementedError, as
TensorFlow's "Pooling is not yet supported on the depth dimension."). ``padding``: "SAME"
or "VALID" (a VALID window larger than the input gives an empty output, as TensorFlow's
kernel). NCDHW is refused on the CPU, as TensorFlow's ("Default Pooling3DOp only supports
NDHWC on device type CPU"), and runs on a GPU.
"""

MAX_POOL3D = define_op(
    "MaxPool3D",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=[
        "ksize: list(int) >= 5",
        "strides: list(int) >= 5",
        _PADDING,
        _FORMAT,
        "T: {float16, float32}",
    ],
    shape_fn=_pool3d_shape,
    doc="""
Max pooling over 3-D windows of ``input`` (NDHWC, or NCDHW), by MaxPool's rule (as
TensorFlow's default CPU kernel): NaN cells are skipped, a window of only -inf or NaN gives
the dtype's lowest finite value, and SAME padding never wins. float16 runs on every device
(TensorFlow's CPU has no float16 kernel; its GPU has).
"""
    + _POOL3D_DOC
    + """
Example: the volume 0..7 (shape [1, 2, 2, 2, 1]) with ksize 2 and VALID padding gives
``[[[[[7]]]]]``.
""",
)


@register_kernel("MaxPool3D", "CPU", "GPU")
def _max_pool3d_kernel(ctx: KernelContext, x: Any) -> Any:
    return _pool3d_kernel(ctx, x, average=False)


AVG_POOL3D = define_op(
    "AvgPool3D",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=[
        "ksize: list(int) >= 5",
        "strides: list(int) >= 5",
        _PADDING,
        _FORMAT,
        "T: {float16, float32, float64}",
    ],
    shape_fn=_pool3d_shape,
    doc="""
Average pooling over 3-D windows of ``input`` (NDHWC, or NCDHW). With SAME padding each
window is divided by the number of its cells inside the input, not by the window size (as
TensorFlow). float16 is summed in float32; float16 and float64 run on every device
(TensorFlow's CPU has no kernel for them).
"""
    + _POOL3D_DOC
    + """
Example: a [1, 1, 1, 3, 1] volume ``[0, 1, 2]`` with ksize 2 along the width, stride 2 and
SAME padding gives ``[0.5, 2]``.
""",
)


@register_kernel("AvgPool3D", "CPU", "GPU")
def _avg_pool3d_kernel(ctx: KernelContext, x: Any) -> Any:
    return _pool3d_kernel(ctx, x, average=True)


MaxPool3D = make_wrapper_class(MAX_POOL3D)
AvgPool3D = make_wrapper_class(AVG_POOL3D)

max_pool3d = pool_builder(
    MAX_POOL3D,
    "max_pool3d",
    """
    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.nn.max_pool3d(np.arange(8.0).reshape(1, 2, 2, 2, 1), 2, 1, "VALID")
    >>> mg.Session(g).run(y).ravel()
    array([7.])
    """,
    data_format="NDHWC",
)
avg_pool3d = pool_builder(
    AVG_POOL3D,
    "avg_pool3d",
    """
    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.nn.avg_pool3d(np.arange(3.0).reshape(1, 1, 1, 3, 1), [1, 1, 2], 2, "SAME")
    >>> mg.Session(g).run(y).ravel()
    array([0.5, 2. ])
    """,
    data_format="NDHWC",
)


__all__ = ["Conv3D", "MaxPool3D", "AvgPool3D", *NN_BUILDERS]
