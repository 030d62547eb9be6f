"""Backprop (transposed) convolutions: Conv2DBackpropInput, Conv2DBackpropFilter,
DepthwiseConv2dNativeBackpropInput, DepthwiseConv2dNativeBackpropFilter.

Conv2DBackpropInput is what Keras' Conv2DTranspose writes, and the four are the gradients
of Conv2D and DepthwiseConv2dNative. This module declares them, with TensorFlow's shape
functions and the checks of its reference CPU kernels (their messages), on conv_ops' window
geometry (conv_geometry.py); the arithmetic, a loop over the filter taps of matrix products
and strided views, is in conv_backprop_kernels.py. A depthwise filter is a grouped one
with one input channel a group.

Where minigraph does more than TensorFlow's reference CPU kernels (they refuse these; its
default oneDNN CPU kernels and its GPU kernels run them, and so does minigraph on every
device): NCHW, dilations, grouped filters, unequal depthwise strides.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from minigraph import errors
from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec, shape_from_value
from minigraph.kernel import KernelContext
from minigraph.ops.common import host_array
from minigraph.ops.conv_backprop_kernels import filter_grad, input_grad
from minigraph.ops.conv_geometry import (
    EXPLICIT_ATTR,
    FORMAT_ATTR,
    PADDING_ATTR,
    accumulator_dtype,
    check_explicit,
    from_nhwc,
    padding_attrs,
    same_pads,
    spatial_axes,
    spatial_list,
    to_nhwc,
    window_output_size,
)
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, merge_dim, with_rank
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS: tuple[str, ...] = ()
# tf.nn names (tf.compat.v1.nn for the backprops), re-exported by minigraph.ops.nn.
NN_BUILDERS = (
    "conv2d_backprop_input",
    "conv2d_backprop_filter",
    "conv2d_transpose",
    "depthwise_conv2d_native_backprop_input",
    "depthwise_conv2d_native_backprop_filter",
)

# TensorFlow's labels in its reference CPU kernels' messages.
_CONV_INPUT = "Conv2DCustomBackpropInput"
_CONV_FILTER = "Conv2DCustomBackpropFilter"
_DEPTHWISE_INPUT = "DepthwiseConv2DBackpropInput"
_DEPTHWISE_FILTER = "DepthwiseConv2DBackpropFilter"


def _fail(c: Any, message: str, error: type[errors.OpError] = errors.InvalidArgumentError) -> Any:
    """Raise ``error`` naming the node of ``c`` (an inference or a kernel context)."""
    raise error(message, c.node_name, c.op_type)


class Window(NamedTuple):
    """The checked attrs: the spatial axes then the channel axis ((h, w, c); (d, h, w, c)
    for the 3-D ops), spatial strides and dilations, explicit pads."""

    axes: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    explicit: list[tuple[int, int]]


def _window(c: Any, kind: str) -> Window:
    """The attrs after TensorFlow's kernel-construction checks, in its order. ``kind`` is
    "input" or "filter" (Conv2D's backprops) or "depthwise"."""
    attrs = c.attrs
    axes = spatial_axes(attrs["data_format"])
    strides, dilations = list(attrs["strides"]), list(attrs["dilations"])
    # Conv2DBackpropInput refuses batch/depth strides as Unimplemented, the others as invalid
    batch_depth = errors.UnimplementedError if kind == "input" else errors.InvalidArgumentError
    if len(strides) != 4:
        c.fail("Sliding window strides field must specify 4 dimensions")
    if strides[0] != 1 or strides[axes[2]] != 1:
        _fail(
            c,
            "Current implementation does not yet support strides in the batch and depth "
            "dimensions.",
            batch_depth,
        )
    if kind != "depthwise" and min(strides[axes[0]], strides[axes[1]]) <= 0:
        c.fail("Row and column strides should be larger than 0.")
    explicit = check_explicit(c.fail, attrs, axes) if kind != "input" else []
    if len(dilations) != 4:
        c.fail("Sliding window dilations field must specify 4 dimensions")
    if dilations[0] != 1 or dilations[axes[2]] != 1:
        _fail(
            c,
            "Current implementation does not yet support dilations in the batch and depth "
            "dimensions.",
            batch_depth,
        )
    if min(dilations[axes[0]], dilations[axes[1]]) <= 0:
        c.fail("Dilated rates should be larger than 0.")
    if kind == "input":
        explicit = check_explicit(c.fail, attrs, axes)
    return Window(
        axes,
        (strides[axes[0]], strides[axes[1]]),
        (dilations[axes[0]], dilations[axes[1]]),
        explicit,
    )


class Geometry(NamedTuple):
    """What the checks found: output sizes and (before, after) pads of the spatial dims,
    and the groups (input channels / the filter's in-depth; a depthwise filter has one
    input channel a group)."""

    outs: tuple[int, ...]
    pads: list[tuple[int, int]]
    groups: int


def _spatial(
    c: Any, win: Window, label: str, dims: Sequence[int], k: Sequence[int], out: Sequence[int]
) -> tuple[tuple[int, ...], list[tuple[int, int]]]:
    """Each spatial dim's output size (TensorFlow's GetWindowedOutputSizeVerbose) checked
    against out_backprop's, and its pads."""
    padding = c.attrs["padding"]
    outs, pads = [], []
    for i in range(len(win.strides)):
        dim, stride, dilation = win.axes[i], win.strides[i], win.dilations[i]
        if stride <= 0:  # only the depthwise ops get here with one (TF checks it here)
            c.fail(f"Stride must be > 0, but got {stride}")
        explicit = win.explicit[i] if padding == "EXPLICIT" else (0, 0)
        size = window_output_size(c.fail, dims[dim], k[i], stride, dilation, padding, explicit)
        assert size is not None  # known dims give a known size
        if out[dim] != size:
            if label.startswith("Depthwise"):
                what = ("rows", "cols")[i]
                c.fail(
                    f"{label}: Number of {what} of out_backprop doesn't match computed: "
                    f"actual = {out[dim]}, computed = {size}"
                )
            c.fail(
                f"{label}: Size of out_backprop doesn't match computed: actual = {out[dim]}, "
                f"computed = {size} spatial_dim: {dim} input: {dims[dim]} filter: {k[i]} "
                f"output: {out[dim]} stride: {stride} dilation: {dilation}"
            )
        same = padding == "SAME"
        outs.append(size)
        pads.append(same_pads(dims[dim], k[i], stride, dilation, size) if same else explicit)
    return tuple(outs), pads


def backprop_geometry(
    c: Any, label: str, win: Window, x: Sequence[int], w: Sequence[int], g: Sequence[int]
) -> Geometry:
    """TensorFlow's ConvBackpropComputeDimensionsV2 on the input, filter and out_backprop
    shapes (in the data format's order), with grouped filters allowed."""
    rank = len(win.axes) + 1
    for name, shape in (("input", x), ("filter", w), ("out_backprop", g)):
        if len(shape) != rank:
            c.fail(f"{label}: {name} must be {rank}-dimensional")
    depth = win.axes[-1]
    if x[0] != g[0]:
        c.fail(
            f"{label}: input and out_backprop must have the same batch size. Input batch: "
            f"{x[0]}, outbackprop batch: {g[0]}, batch_dim: 0"
        )
    if w[-2] <= 0:
        c.fail(f"{label}: filter depth must be strictly greated than zero")
    if x[depth] % w[-2]:
        c.fail(f"{label}: input depth must be evenly divisible by filter depth")
    if w[-1] != g[depth]:
        c.fail(f"{label}: filter and out_backprop must have the same out_depth")
    groups = x[depth] // w[-2]
    if groups > 1 and w[-1] % groups:  # Conv2D's message (conv_grouped.py)
        c.fail(f"output depth must be evenly divisible by number of groups: {w[-1]} vs {groups}")
    outs, pads = _spatial(c, win, label, x, w, g)
    return Geometry(outs, pads, max(groups, 1))


def _depthwise_geometry(
    c: Any, label: str, win: Window, x: Sequence[int], w: Sequence[int], g: Sequence[int]
) -> Geometry:
    """TensorFlow's EXTRACT_AND_VERIFY_DIMENSIONS of the depthwise backprops."""
    for name, shape in (("input", x), ("filter", w), ("out_backprop", g)):
        if len(shape) != 4:
            c.fail(f"{label}: {name} must be 4-dimensional")
    depth = win.axes[2]
    if x[0] != g[0]:
        c.fail(f"{label}: input and out_backprop must have the same batch size")
    if x[depth] != w[2]:
        c.fail(f"{label}: input and filter must have the same in_depth")
    if w[2] * w[3] != g[depth]:
        c.fail(f"{label}: depth_multiplier * in_depth not equal to out_depth")
    outs, pads = _spatial(c, win, label, x, w, g)
    return Geometry(outs, pads, max(w[2], 1))


def _known(*shapes: TensorShape) -> list[list[int]] | None:
    """The shapes as int lists, or None when any dim is unknown."""
    if not all(s.is_fully_defined() for s in shapes):
        return None
    return [[int(d) for d in s.as_list()] for s in shapes]  # type: ignore[union-attr]


def _sizes_shape(c: InferenceContext, sizes: TensorSpec) -> TensorShape:
    """A shape input read as TensorFlow's MakeShapeFromShapeTensor (a vector; -1 unknown)."""
    with_rank(sizes.shape, 1)
    return shape_from_value(c, sizes)


def nhwc_dims(dims: Sequence[Any], axes: tuple[int, ...]) -> list[Any]:
    """``dims`` channels-last: the batch, then ``axes`` (the spatial ones and the channel)."""
    return [dims[0], *(dims[a] for a in axes)]


def _in_format(dims: Sequence[Any], data_format: str) -> list[Any]:
    """[n, h, w, c] in the data format's order."""
    return [dims[0], dims[3], dims[1], dims[2]] if data_format == "NCHW" else list(dims)


# -- the kernels ----------------------------------------------------------------------------


def input_backprop(
    ctx: KernelContext, x_shape: list[int], w: Any, g: Any, geo: Geometry, win: Window,
    depthwise: bool,
) -> Any:  # fmt: skip
    """The input gradient in the data format's order; ``x_shape`` is in that order too."""
    xp, fmt = ctx.xp, ctx.attrs["data_format"]
    ctx.check_size(x_shape, g.dtype)
    if 0 in x_shape or g.size == 0:
        return xp.zeros(x_shape, g.dtype)
    acc = accumulator_dtype(g.dtype)
    if depthwise:  # as a grouped filter: one input channel a group
        *k, cin, cmul = w.shape
        w = w.reshape(*k, 1, cin * cmul)
    grads = to_nhwc(g, fmt).astype(acc, copy=False)
    nhwc = nhwc_dims(x_shape, win.axes)
    out = input_grad(ctx, grads, w.astype(acc, copy=False), nhwc, *geo, win.strides, win.dilations)
    out = out.astype(g.dtype, copy=False)
    return from_nhwc(xp, out, fmt)


def filter_backprop(
    ctx: KernelContext, x: Any, w_shape: list[int], g: Any, geo: Geometry, win: Window,
    depthwise: bool,
) -> Any:  # fmt: skip
    """The filter gradient, [kh, kw, in, out] (or [kh, kw, in, multiplier])."""
    xp, fmt = ctx.xp, ctx.attrs["data_format"]
    ctx.check_size(w_shape, x.dtype)
    if 0 in w_shape:
        return xp.empty(w_shape, x.dtype)
    if x.size == 0 or g.size == 0:
        return xp.zeros(w_shape, x.dtype)
    acc = accumulator_dtype(x.dtype)
    *k, cin, cmul = w_shape
    grouped = [*k, 1, cin * cmul] if depthwise else w_shape
    images = to_nhwc(x, fmt).astype(acc, copy=False)
    grads = to_nhwc(g, fmt).astype(acc, copy=False)
    out = filter_grad(ctx, images, grads, grouped, *geo, win.strides, win.dilations)
    return out.reshape(w_shape).astype(x.dtype, copy=False)


def _sizes(ctx: KernelContext, sizes: Any, name: str, label: str) -> list[int]:
    """A shape input's values after its kernel's checks (a vector; each dim >= 0 but in
    Conv2DBackpropInput, whose message depends on how many values there are)."""
    values = host_array(ctx, sizes)
    if values.ndim != 1:
        ctx.fail(f"{label}: {name} input must be 1-dim, not {values.ndim}")
    dims = [int(v) for v in values.tolist()]
    negative = [(i, d) for i, d in enumerate(dims) if d < 0]
    if negative and ctx.op_type.startswith("Depthwise"):
        ctx.fail(f"Dimension {negative[0][0]} of {name} must be >= 0")
    if negative and (ctx.op_type == "Conv2DBackpropFilter" or len(dims) == 4):
        ctx.fail(f"Dimension {negative[0][1]} must be >= 0")
    if negative and len(dims) == 2:
        ctx.fail(
            f"Conv2DBackpropInput: elements of input_sizes must be >= 0, not {dims[0]}x{dims[1]}"
        )
    return dims


# -- Conv2DBackpropInput ---------------------------------------------------------------------


def _conv2d_backprop_input_shape(
    c: InferenceContext, sizes: TensorSpec, w: TensorSpec, g: TensorSpec
) -> TensorShape:
    """TensorFlow's Conv2DBackpropInputShape, then the kernel's checks when all is known."""
    win = _window(c, "input")
    fmt = c.attrs["data_format"]
    gs, ws = with_rank(g.shape, 4), with_rank(w.shape, 4)
    g_nhwc = nhwc_dims(gs.as_list(), win.axes)
    merge_dim(g_nhwc[3], ws[3])
    given = _sizes_shape(c, sizes)
    if given.rank is None:
        given = with_rank(given, 4)
    if given.rank == 4:
        n, h, wd, depth = nhwc_dims(given.as_list(), win.axes)
        n = merge_dim(n, g_nhwc[0])
    elif given.rank == 2:
        (h, wd), n, depth = given.as_list(), g_nhwc[0], ws[2]
    else:
        c.fail(
            "Conv2DBackpropInput requires input_sizes to contain 4 values or 2 values, "
            f"but got: {given.rank}"
        )
    out = TensorShape(_in_format([n, h, wd, depth], fmt))
    known = _known(out, ws, gs)
    if known is not None:
        backprop_geometry(c, _CONV_INPUT, win, *known)
    return out


# Conv2DBackpropInput's and Conv2DBackpropFilter's attrs after T, as TensorFlow's OpDefs.
_CONV2D_BACKPROP_ATTRS = [
    "strides: list(int)",
    "use_cudnn_on_gpu: bool = True",
    PADDING_ATTR,
    EXPLICIT_ATTR,
    FORMAT_ATTR,
    "dilations: list(int) = [1, 1, 1, 1]",
]


CONV2D_BACKPROP_INPUT = define_op(
    "Conv2DBackpropInput",
    inputs=["input_sizes: int32", "filter: T", "out_backprop: T"],
    outputs=["output: T"],
    attrs=["T: {float16, float32, float64, int32}", *_CONV2D_BACKPROP_ATTRS],
    shape_fn=_conv2d_backprop_input_shape,
    host_inputs=["input_sizes"],
    doc="""
The gradient of Conv2D with respect to its input, which is also the transposed convolution
(Keras' Conv2DTranspose): each position of ``out_backprop`` ``[batch, out_height,
out_width, out_channels]`` spreads its values times ``filter`` ``[filter_height,
filter_width, in_channels, out_channels]`` back over the input window it came from.
``input_sizes`` is the input's shape, 4 values in the data format's order, or 2 (height
and width; the batch then comes from ``out_backprop`` and the depth from the filter).
``out_backprop`` must have the size Conv2D would give for that input, strides, dilations
and padding (``"SAME"``, ``"VALID"``, or ``"EXPLICIT"`` with ``explicit_paddings``),
else "Size of out_backprop doesn't match computed". ``use_cudnn_on_gpu`` is accepted and
ignored.

The filter's ``in_channels`` may divide the input's (grouped, as Conv2D). Where minigraph
does more than TensorFlow's reference CPU kernel: NCHW, dilations and grouped filters
(TensorFlow's default oneDNN CPU kernel and its GPU run them too).

Example: ``input_sizes=[1, 3, 3, 1]``, a 2x2 filter of ones, an out_backprop of ones
[1, 2, 2, 1], VALID, stride 1: ``[[1, 2, 1], [2, 4, 2], [1, 2, 1]]``.
""",
)


@register_kernel("Conv2DBackpropInput", "CPU", "GPU")
def _conv2d_backprop_input_kernel(ctx: KernelContext, sizes: Any, w: Any, g: Any) -> Any:
    win = _window(ctx, "input")
    fmt = ctx.attrs["data_format"]
    if g.ndim != 4:
        ctx.fail(f"input_sizes must be 4-dimensional, got: {g.ndim}")
    dims = _sizes(ctx, sizes, "input_sizes", "Conv2DBackpropInput")
    if len(dims) == 2:
        if w.ndim != 4:
            ctx.fail(f"{_CONV_INPUT}: filter must be 4-dimensional")
        g_nhwc = nhwc_dims(g.shape, win.axes)
        dims = _in_format([g_nhwc[0], *dims, w.shape[2]], fmt)
    elif len(dims) != 4:
        ctx.fail(
            "Conv2DBackpropInput requires input_sizes to contain 4 values or 2 values, "
            f"but got: {len(dims)}"
        )
    geo = backprop_geometry(ctx, _CONV_INPUT, win, dims, w.shape, g.shape)
    return input_backprop(ctx, dims, w, g, geo, win, depthwise=False)


# -- Conv2DBackpropFilter --------------------------------------------------------------------


def _conv2d_backprop_filter_shape(
    c: InferenceContext, x: TensorSpec, sizes: TensorSpec, g: TensorSpec
) -> TensorShape:
    win = _window(c, "filter")
    out = with_rank(_sizes_shape(c, sizes), 4)
    known = _known(x.shape, out, g.shape)
    if known is not None:
        _filter_geometry(c, win, *known)
    return out


def _filter_geometry(
    c: Any, win: Window, x: Sequence[int], w: Sequence[int], g: Sequence[int]
) -> Geometry:
    """Conv2DBackpropFilter's checks; an input of no channels fills no filter."""
    geo = backprop_geometry(c, _CONV_FILTER, win, x, w, g)
    if x[win.axes[2]] == 0:
        wanted = w[0] * w[1] * x[win.axes[2]] * w[3]
        c.fail(
            f"filter_size does not have enough elements, requested {wanted}, "
            f"got {w[0] * w[1] * w[2] * w[3]}"
        )
    return geo


CONV2D_BACKPROP_FILTER = define_op(
    "Conv2DBackpropFilter",
    inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
    outputs=["output: T"],
    attrs=["T: {float16, float32, float64}", *_CONV2D_BACKPROP_ATTRS],
    shape_fn=_conv2d_backprop_filter_shape,
    host_inputs=["filter_sizes"],
    doc="""
The gradient of Conv2D with respect to its filter: for each filter tap, the input window
it saw times ``out_backprop``, summed over the batch and the output positions.
``filter_sizes`` is the filter's shape, 4 values ``[filter_height, filter_width,
in_channels, out_channels]``; ``input``, ``out_backprop``, strides, dilations and padding
as Conv2DBackpropInput (and the same checks). ``use_cudnn_on_gpu`` is accepted and ignored.

Where minigraph does more than TensorFlow's reference CPU kernel: NCHW, dilations and
grouped filters (``in_channels`` dividing the input's; TensorFlow's default oneDNN CPU
kernel and its GPU run them too).

Example: an input of ones [1, 3, 3, 1], ``filter_sizes=[2, 2, 1, 1]``, an out_backprop of
ones [1, 2, 2, 1], VALID: every tap is 4.
""",
)


@register_kernel("Conv2DBackpropFilter", "CPU", "GPU")
def _conv2d_backprop_filter_kernel(ctx: KernelContext, x: Any, sizes: Any, g: Any) -> Any:
    win = _window(ctx, "filter")
    dims = _sizes(ctx, sizes, "filter_sizes", _CONV_FILTER)
    geo = _filter_geometry(ctx, win, x.shape, dims, g.shape)
    return filter_backprop(ctx, x, dims, g, geo, win, depthwise=False)


# -- DepthwiseConv2dNativeBackpropInput and DepthwiseConv2dNativeBackpropFilter --------------

_DEPTHWISE_ATTRS = [
    "T: {float16, float32, float64}",
    "strides: list(int)",
    PADDING_ATTR,
    EXPLICIT_ATTR,
    FORMAT_ATTR,
    "dilations: list(int) = [1, 1, 1, 1]",
]

_DEPTHWISE_DOC = """
Strides, dilations, padding and data formats as DepthwiseConv2dNative; ``out_backprop``
must have its size for that input ("Number of rows of out_backprop doesn't match
computed"). Where minigraph does more than TensorFlow's reference CPU kernel: NCHW and
unequal row and column strides (TensorFlow's oneDNN CPU kernel and its GPU run them too).
Dilations are applied, as in minigraph's DepthwiseConv2dNative (TensorFlow's reference CPU
kernel ignores them; its oneDNN kernel refuses them); so they are checked as Conv2D's.
"""


def _depthwise_backprop_input_shape(
    c: InferenceContext, sizes: TensorSpec, w: TensorSpec, g: TensorSpec
) -> TensorShape:
    win = _window(c, "depthwise")
    out = with_rank(_sizes_shape(c, sizes), 4)
    known = _known(out, w.shape, g.shape)
    if known is not None:
        _depthwise_geometry(c, _DEPTHWISE_INPUT, win, *known)
    return out


DEPTHWISE_CONV2D_NATIVE_BACKPROP_INPUT = define_op(
    "DepthwiseConv2dNativeBackpropInput",
    inputs=["input_sizes: int32", "filter: T", "out_backprop: T"],
    outputs=["output: T"],
    attrs=_DEPTHWISE_ATTRS,
    shape_fn=_depthwise_backprop_input_shape,
    host_inputs=["input_sizes"],
    doc="""
The gradient of DepthwiseConv2dNative with respect to its input: ``input_sizes`` is the
input's shape (4 values in the data format's order), ``filter`` is ``[filter_height,
filter_width, in_channels, channel_multiplier]`` and ``out_backprop`` has
``in_channels * channel_multiplier`` channels.
"""
    + _DEPTHWISE_DOC
    + """
Example: ``input_sizes=[1, 3, 3, 1]``, a 2x2x1x1 filter of ones, an out_backprop of ones
[1, 2, 2, 1], VALID: ``[[1, 2, 1], [2, 4, 2], [1, 2, 1]]``.
""",
)


@register_kernel("DepthwiseConv2dNativeBackpropInput", "CPU", "GPU")
def _depthwise_backprop_input_kernel(ctx: KernelContext, sizes: Any, w: Any, g: Any) -> Any:
    win = _window(ctx, "depthwise")
    dims = _sizes(ctx, sizes, "input_sizes", "Conv2DBackpropInput")
    geo = _depthwise_geometry(ctx, _DEPTHWISE_INPUT, win, dims, w.shape, g.shape)
    return input_backprop(ctx, dims, w, g, geo, win, depthwise=True)


def _depthwise_backprop_filter_shape(
    c: InferenceContext, x: TensorSpec, sizes: TensorSpec, g: TensorSpec
) -> TensorShape:
    win = _window(c, "depthwise")
    out = with_rank(_sizes_shape(c, sizes), 4)
    known = _known(x.shape, out, g.shape)
    if known is not None:
        _depthwise_geometry(c, _DEPTHWISE_FILTER, win, *known)
    return out


DEPTHWISE_CONV2D_NATIVE_BACKPROP_FILTER = define_op(
    "DepthwiseConv2dNativeBackpropFilter",
    inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
    outputs=["output: T"],
    attrs=_DEPTHWISE_ATTRS,
    shape_fn=_depthwise_backprop_filter_shape,
    host_inputs=["filter_sizes"],
    doc="""
The gradient of DepthwiseConv2dNative with respect to its filter: ``filter_sizes`` is the
filter's shape, ``[filter_height, filter_width, in_channels, channel_multiplier]``; tap
``(i, j)`` of filter ``q`` of channel ``k`` sums input channel ``k``'s window times
out_backprop channel ``k * channel_multiplier + q``.
"""
    + _DEPTHWISE_DOC
    + """
Example: an input of ones [1, 3, 3, 1], ``filter_sizes=[2, 2, 1, 1]``, an out_backprop of
ones [1, 2, 2, 1], VALID: every tap is 4.
""",
)


@register_kernel("DepthwiseConv2dNativeBackpropFilter", "CPU", "GPU")
def _depthwise_backprop_filter_kernel(ctx: KernelContext, x: Any, sizes: Any, g: Any) -> Any:
    win = _window(ctx, "depthwise")
    dims = _sizes(ctx, sizes, "filter_sizes", "Conv2DBackpropFilter")
    geo = _depthwise_geometry(ctx, _DEPTHWISE_FILTER, win, x.shape, dims, g.shape)
    return filter_backprop(ctx, x, dims, g, geo, win, depthwise=True)


Conv2DBackpropInput = make_wrapper_class(CONV2D_BACKPROP_INPUT)
Conv2DBackpropFilter = make_wrapper_class(CONV2D_BACKPROP_FILTER)
DepthwiseConv2dNativeBackpropInput = make_wrapper_class(DEPTHWISE_CONV2D_NATIVE_BACKPROP_INPUT)
DepthwiseConv2dNativeBackpropFilter = make_wrapper_class(DEPTHWISE_CONV2D_NATIVE_BACKPROP_FILTER)


# -- builders ----------------------------------------------------------------------------------

_P = inspect.Parameter


def _backprop_builder(
    op_def: Any, name: str, first: tuple[str, str], cudnn: bool, example: str
) -> Callable[..., Output]:
    """The tf.compat.v1.nn builder of one backprop op: its two first inputs (``first``),
    ``out_backprop``, then ``strides``/``dilations`` (an int, 2 or 4 values), ``padding``
    ("SAME", "VALID" or explicit pairs) and ``data_format``."""
    generated = make_builder(op_def, name)
    params = [*first, "out_backprop", "strides", "padding"]
    sig = inspect.Signature(
        [_P(p, _P.POSITIONAL_OR_KEYWORD) for p in params]
        + ([_P("use_cudnn_on_gpu", _P.POSITIONAL_OR_KEYWORD, default=True)] if cudnn else [])
        + [
            _P("data_format", _P.POSITIONAL_OR_KEYWORD, default="NHWC"),
            _P("dilations", _P.POSITIONAL_OR_KEYWORD, default=None),
            _P("name", _P.POSITIONAL_OR_KEYWORD, default=None),
        ]
    )

    def builder(*args: Any, **kwargs: Any) -> Output:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        a = dict(bound.arguments)
        fmt = a["data_format"]
        a["strides"] = spatial_list(a["strides"], fmt)
        a["dilations"] = spatial_list(a["dilations"], fmt)
        a.update(padding_attrs(a.pop("padding")))
        a["name"] = a["name"] or op_def.name
        return generated(**a)

    builder.__name__ = builder.__qualname__ = name
    builder.__signature__ = sig  # type: ignore[attr-defined]
    builder.__doc__ = f"{op_def.name}, as tf.compat.v1.nn.{name}.\n{example}"
    return builder


conv2d_backprop_input = _backprop_builder(
    CONV2D_BACKPROP_INPUT,
    "conv2d_backprop_input",
    ("input_sizes", "filter"),
    True,
    """
    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.nn.conv2d_backprop_input([1, 3, 3, 1], np.ones((2, 2, 1, 1), np.float32),
    ...                                     np.ones((1, 2, 2, 1), np.float32), 1, "VALID")
    >>> mg.Session(g).run(y)[0, :, :, 0]
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]], dtype=float32)
    """,
)
conv2d_backprop_filter = _backprop_builder(
    CONV2D_BACKPROP_FILTER,
    "conv2d_backprop_filter",
    ("input", "filter_sizes"),
    True,
    """
    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.nn.conv2d_backprop_filter(np.ones((1, 3, 3, 1), np.float32), [2, 2, 1, 1],
    ...                                      np.ones((1, 2, 2, 1), np.float32), 1, "VALID")
    >>> mg.Session(g).run(y)[:, :, 0, 0]
    array([[4., 4.],
           [4., 4.]], dtype=float32)
    """,
)
depthwise_conv2d_native_backprop_input = _backprop_builder(
    DEPTHWISE_CONV2D_NATIVE_BACKPROP_INPUT,
    "depthwise_conv2d_native_backprop_input",
    ("input_sizes", "filter"),
    False,
    """
    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.nn.depthwise_conv2d_native_backprop_input(
    ...         [1, 3, 3, 2], np.ones((2, 2, 2, 1)), np.ones((1, 2, 2, 2)), 1, "VALID")
    >>> mg.Session(g).run(y)[0, :, :, 1]
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]])
    """,
)
depthwise_conv2d_native_backprop_filter = _backprop_builder(
    DEPTHWISE_CONV2D_NATIVE_BACKPROP_FILTER,
    "depthwise_conv2d_native_backprop_filter",
    ("input", "filter_sizes"),
    False,
    """
    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.nn.depthwise_conv2d_native_backprop_filter(
    ...         np.ones((1, 3, 3, 2)), [2, 2, 2, 1], np.ones((1, 2, 2, 2)), 1, "VALID")
    >>> mg.Session(g).run(y)[:, :, 1, 0]
    array([[4., 4.],
           [4., 4.]])
    """,
)


def conv2d_transpose(
    input: Any,  # noqa: A002
    filters: Any,
    output_shape: Any,
    strides: Any,
    padding: Any = "SAME",
    data_format: str = "NHWC",
    dilations: Any = None,
    name: str | None = None,
) -> Output:
    """The transposed convolution, as tf.nn.conv2d_transpose: Conv2DBackpropInput of
    ``input`` (the out_backprop) with ``filters`` [kh, kw, out_channels, in_channels] to
    ``output_shape``.

    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.nn.conv2d_transpose(np.ones((1, 2, 2, 1), np.float32),
    ...                                np.ones((2, 2, 1, 1), np.float32), [1, 4, 4, 1], 2)
    >>> mg.Session(g).run(y)[0, :, :, 0]
    array([[1., 1., 1., 1.],
           [1., 1., 1., 1.],
           [1., 1., 1., 1.],
           [1., 1., 1., 1.]], dtype=float32)
    """
    return conv2d_backprop_input(
        output_shape,
        filters,
        input,
        strides,
        padding,
        data_format=data_format,
        dilations=dilations,
        name=name or "conv2d_transpose",
    )


__all__ = [
    "Conv2DBackpropInput",
    "Conv2DBackpropFilter",
    "DepthwiseConv2dNativeBackpropInput",
    "DepthwiseConv2dNativeBackpropFilter",
    *NN_BUILDERS,
]
