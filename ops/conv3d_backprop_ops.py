"""The 3-D backprop convolutions, Conv3D's gradients: Conv3DBackpropInputV2 and
Conv3DBackpropFilterV2 (conv3d_grad.py builds them).

Declared with TensorFlow 2.21's OpDefs, its shape functions and the checks and messages of
its reference CPU kernels (conv_grad_ops_3d.cc), on the 2-D backprops' geometry and
arithmetic (conv_backprop_ops.py, conv_backprop_kernels.py), which take any number of
spatial dims.

Devices, as Conv3D's (conv3d_ops.py): NCDHW and grouped filters (the filter's in-depth
dividing the input's) are refused on the CPU with TensorFlow's messages and run on a GPU,
so a GPU differentiates what its Conv3D runs; dilations run on every device (TensorFlow's
reference CPU kernel refuses them, its default oneDNN kernel and its GPU run them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from minigraph.inference import InferenceContext, TensorSpec, shape_from_value
from minigraph.kernel import KernelContext
from minigraph.ops.common import host_array, shape_str
from minigraph.ops.conv3d_ops import on_cpu
from minigraph.ops.conv_backprop_ops import (
    Geometry,
    Window,
    backprop_geometry,
    filter_backprop,
    input_backprop,
)
from minigraph.ops.conv_geometry import channels_first
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, with_rank
from minigraph.wrappers import make_wrapper_class

BUILDERS: tuple[str, ...] = ()  # gradient ops: built by mg.gradients, not by users

_ATTRS = [
    "T: {float16, float32, float64}",
    "strides: list(int) >= 5",
    "padding: {'SAME', 'VALID'}",
    "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'",
    "dilations: list(int) = [1, 1, 1, 1, 1]",
]


def _window(c: Any) -> Window:
    """The attrs after TensorFlow's kernel-construction checks, in its order."""
    fmt = c.attrs["data_format"]
    strides, dilations = list(c.attrs["strides"]), list(c.attrs["dilations"])
    if len(strides) != 5:
        c.fail("Sliding window strides field must specify 5 dimensions")
    if len(dilations) != 5:
        c.fail("Sliding window dilations field must specify 5 dimensions")
    axes = (2, 3, 4, 1) if channels_first(fmt) else (1, 2, 3, 4)
    if strides[0] != 1 or strides[axes[3]] != 1:
        c.fail(
            "Current implementation does not yet support strides in the batch and depth dimensions."
        )
    if dilations[0] != 1 or dilations[axes[3]] != 1:
        c.fail(
            "Current implementation does not yet support dilation rates in the batch and "
            "depth dimensions."
        )
    s = tuple(strides[a] for a in axes[:3])
    d = tuple(dilations[a] for a in axes[:3])
    for stride in s:
        if stride <= 0:
            c.fail(f"Stride must be > 0, but got {stride}")
    for rate in d:
        if rate < 1:  # Conv3D's message (TensorFlow's reference CPU refuses every rate > 1)
            c.fail(f"Dilation rate must be >= 1, but got {rate}")
    return Window(axes, s, d, [(0, 0)] * 3)


def _geometry(
    c: Any, label: str, win: Window, x: Sequence[int], w: Sequence[int], g: Sequence[int],
    grouped: bool,
) -> Geometry:  # fmt: skip
    """The kernels' checks of the three shapes (in the data format's order), then
    TensorFlow's ConvBackpropComputeDimensions over three spatial dims. A filter whose
    in-depth divides the input's is refused unless ``grouped`` (a GPU's kernel, or the
    shape function, which does not know the device)."""
    for name, shape in (("input", x), ("filter_sizes", w), ("out_backprop", g)):
        if len(shape) != 5:
            c.fail(f"{name} tensor must have 5 dimensions")
    depth = win.axes[3]
    if x[depth] != w[3] and not (grouped and w[3] > 0 and x[depth] % w[3] == 0):
        c.fail(
            "input and filter_sizes must have the same number of channels. "
            f"Got {x[depth]} for input and {w[3]} for filter_sizes"
        )
    if g[depth] != w[4]:
        c.fail(
            "out_backprop and filter_sizes must have the same number of channels. "
            f"Got {g[depth]} for out_backprop and {w[4]} for filter_sizes"
        )
    return backprop_geometry(c, label, win, x, w, g)


def _known(*shapes: TensorShape) -> list[list[int]] | None:
    if not all(s.is_fully_defined() for s in shapes):
        return None
    return [[int(d) for d in s.as_list()] for s in shapes]  # type: ignore[union-attr]


def _sizes_shape(c: InferenceContext, sizes: TensorSpec) -> TensorShape:
    """The shape a sizes input gives (TensorFlow's MakeShapeFromShapeTensor), rank 5."""
    with_rank(sizes.shape, 1)
    return with_rank(shape_from_value(c, sizes), 5)


def _sizes(ctx: KernelContext, sizes: Any) -> list[int]:
    """A sizes input's values, after TensorFlow's MakeShape checks."""
    values = host_array(ctx, sizes)
    if values.ndim != 1:
        ctx.fail(f"shape must be a vector of {{int32,int64}}, got shape {shape_str(values.shape)}")
    dims = [int(v) for v in values.tolist()]
    for d in dims:
        if d < 0:
            ctx.fail(f"Dimension {d} must be >= 0")
    return dims


def _check_format(ctx: KernelContext) -> None:
    if on_cpu(ctx) and channels_first(ctx.attrs["data_format"]):
        ctx.fail(f"{ctx.op_type[:-2]}OpV2 only supports NDHWC on the CPU.")


# -- Conv3DBackpropInputV2 ------------------------------------------------------------------

_INPUT = "Conv3DBackpropInputOp"


def _conv3d_backprop_input_shape(
    c: InferenceContext, sizes: TensorSpec, w: TensorSpec, g: TensorSpec
) -> TensorShape:
    """TensorFlow's: input_sizes' values, rank 5; the kernel's checks when all is known."""
    win = _window(c)
    out = _sizes_shape(c, sizes)
    known = _known(out, w.shape, g.shape)
    if known is not None:
        _geometry(c, _INPUT, win, *known, grouped=True)
    return out


CONV3D_BACKPROP_INPUT_V2 = define_op(
    "Conv3DBackpropInputV2",
    inputs=["input_sizes: Tshape", "filter: T", "out_backprop: T"],
    outputs=["output: T"],
    attrs=[*_ATTRS, "Tshape: {int32, int64} = int32"],
    shape_fn=_conv3d_backprop_input_shape,
    host_inputs=["input_sizes"],
    doc="""
The gradient of Conv3D with respect to its input (the 3-D transposed convolution): each
position of ``out_backprop`` ``[batch, out_depth, out_height, out_width, out_channels]``
spreads its values times ``filter`` ``[filter_depth, filter_height, filter_width,
in_channels, out_channels]`` back over the input window it came from. ``input_sizes`` is
the input's shape (5 values in the data format's order, int32 or int64); ``out_backprop``
must have the size Conv3D gives for it ("Size of out_backprop doesn't match computed").
Strides, dilations, padding and data formats as Conv3D's; float16 is summed in float32.

As Conv3D's kernels: NCDHW is refused on the CPU ("Conv3DBackpropInputOpV2 only supports
NDHWC on the CPU.") and so is a filter whose in_channels divide the input's without
equalling them (grouped: "input and filter_sizes must have the same number of channels");
a GPU runs both. Dilations run on every device (TensorFlow's reference CPU kernel refuses
them, its default oneDNN kernel runs them).

Example: ``input_sizes=[1, 3, 3, 3, 1]``, a 2x2x2 filter of ones and an out_backprop of
ones [1, 2, 2, 2, 1], VALID: the corners get 1, the centre 8.
""",
)


@register_kernel("Conv3DBackpropInputV2", "CPU", "GPU")
def _conv3d_backprop_input_v2_kernel(ctx: KernelContext, sizes: Any, w: Any, g: Any) -> Any:
    win = _window(ctx)
    _check_format(ctx)
    dims = _sizes(ctx, sizes)
    geo = _geometry(ctx, _INPUT, win, dims, w.shape, g.shape, grouped=not on_cpu(ctx))
    return input_backprop(ctx, dims, w, g, geo, win, depthwise=False)


# -- Conv3DBackpropFilterV2 -----------------------------------------------------------------

_FILTER = "Conv3DBackpropFilterOp"


def _conv3d_backprop_filter_shape(
    c: InferenceContext, x: TensorSpec, sizes: TensorSpec, g: TensorSpec
) -> TensorShape:
    """TensorFlow's: filter_sizes' values, rank 5; the kernel's checks when all is known."""
    win = _window(c)
    out = _sizes_shape(c, sizes)
    known = _known(x.shape, out, g.shape)
    if known is not None:
        _geometry(c, _FILTER, win, *known, grouped=True)
    return out


CONV3D_BACKPROP_FILTER_V2 = define_op(
    "Conv3DBackpropFilterV2",
    inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
    outputs=["output: T"],
    attrs=_ATTRS,
    shape_fn=_conv3d_backprop_filter_shape,
    host_inputs=["filter_sizes"],
    doc="""
The gradient of Conv3D with respect to its filter: for each filter tap, the input window
it saw times ``out_backprop``, summed over the batch and the output positions.
``filter_sizes`` is the filter's shape, ``[filter_depth, filter_height, filter_width,
in_channels, out_channels]``; ``input``, ``out_backprop``, attrs, checks and devices as
Conv3DBackpropInputV2's.

Example: an input of ones [1, 3, 3, 3, 1], ``filter_sizes=[2, 2, 2, 1, 1]`` and an
out_backprop of ones [1, 2, 2, 2, 1], VALID: every tap is 8.
""",
)


@register_kernel("Conv3DBackpropFilterV2", "CPU", "GPU")
def _conv3d_backprop_filter_v2_kernel(ctx: KernelContext, x: Any, sizes: Any, g: Any) -> Any:
    win = _window(ctx)
    _check_format(ctx)
    dims = _sizes(ctx, sizes)
    geo = _geometry(ctx, _FILTER, win, x.shape, dims, g.shape, grouped=not on_cpu(ctx))
    return filter_backprop(ctx, x, dims, g, geo, win, depthwise=False)


Conv3DBackpropInputV2 = make_wrapper_class(CONV3D_BACKPROP_INPUT_V2)
Conv3DBackpropFilterV2 = make_wrapper_class(CONV3D_BACKPROP_FILTER_V2)

__all__ = ["Conv3DBackpropInputV2", "Conv3DBackpropFilterV2"]
