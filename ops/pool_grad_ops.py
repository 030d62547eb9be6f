"""The pooling gradient ops: MaxPoolGrad, AvgPoolGrad and MaxPoolGradGrad, what the
gradients of MaxPool, AvgPool and MaxPoolGrad build (conv_grad.py).

Declared with TensorFlow's OpDefs and the checks and messages of its CPU kernels
(maxpooling_op.cc, avgpooling_op.cc), on conv_ops' window geometry; the arithmetic is
pool_grad_kernels.py, shared with the 3-D ops. Which cell of a window gets a max pool's
gradient follows TensorFlow's CPU kernels exactly (ties, NaN): see ``max_taps``.

Where minigraph differs from TensorFlow's reference CPU kernels: NCHW runs on every device
(TensorFlow's CPU refuses it, as minigraph's MaxPool and AvgPool run it), and AvgPoolGrad
divides by each window's own cells inside the input also when a SAME window is larger
than the input (TensorFlow's reference kernel then spreads some windows over the wrong
cells; its default oneDNN kernel for float32 and minigraph agree with AvgPool's forward).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

from minigraph import errors
from minigraph.inference import InferenceContext, TensorSpec, shape_from_value
from minigraph.kernel import KernelContext
from minigraph.ops.common import host_array, shape_str
from minigraph.ops.conv_geometry import (
    EXPLICIT_ATTR,
    FORMAT_ATTR,
    PADDING_ATTR,
    from_nhwc,
    to_nhwc,
    window_geometry,
)
from minigraph.ops.conv_geometry import spatial_axes as _axes
from minigraph.ops.pool_grad_kernels import avg_pool_grad, max_pool_grad, max_pool_grad_grad
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, merge, with_rank
from minigraph.wrappers import make_wrapper_class

BUILDERS: tuple[str, ...] = ()  # gradient ops: built by mg.gradients, not by users

# TensorFlow's MaxPoolGrad types (bfloat16 aside, which minigraph lacks).
_MAX_TYPES = "{float32, float64, int32, uint8, int16, int8, int64, uint16, float16, uint32, uint64}"
_DEPTH = {
    "MaxPoolGrad": "MaxPoolingGrad is not yet supported on the depth dimension.",
    "MaxPoolGradGrad": "MaxPoolingGradGrad is not yet supported on the depth dimension.",
    "AvgPoolGrad": "Non-spatial pooling is not yet supported. Volunteers? :)",
}


class _Window(NamedTuple):
    """The checked attrs: (h, w, c) axes, spatial ksize and strides."""

    axes: tuple[int, int, int]
    k: list[int]
    s: list[int]


def _window(c: Any) -> _Window:
    """ksize and strides after TensorFlow's kernel checks, in its order (the lengths are
    the attrs' minimum 4, checked when the node is made)."""
    attrs = c.attrs
    axes = _axes(attrs["data_format"])
    ksize, strides = list(attrs["ksize"]), list(attrs["strides"])
    if len(ksize) != 4:
        c.fail("Sliding window ksize field must specify 4 dimensions")
    if len(strides) != 4:
        c.fail("Sliding window strides field must specify 4 dimensions")
    if ksize[0] != 1 or strides[0] != 1:
        raise errors.UnimplementedError(
            "Pooling is not yet supported on the batch dimension.", c.node_name, c.op_type
        )
    if ksize[axes[2]] != 1 or strides[axes[2]] != 1:
        raise errors.UnimplementedError(_DEPTH[c.op_type], c.node_name, c.op_type)
    if min(ksize) < 1:  # TF checks this in the forward ops only
        c.fail(
            "Sliding window ksize must be positive. The specified or inferred ksize is: "
            + ",".join(str(v) for v in ksize)
        )
    spatial = [strides[axes[0]], strides[axes[1]]]
    for stride in spatial:
        if stride <= 0:
            c.fail(f"Stride must be > 0, but got {stride}")
    return _Window(axes, [ksize[axes[0]], ksize[axes[1]]], spatial)


def _pooled(
    c: Any, win: _Window, x: Sequence[int]
) -> tuple[list[int], list[tuple[int, int]], list[int]]:
    """(output sizes, pads) of the spatial dims and MaxPool's output shape (in the data
    format's order) for an input of shape ``x``."""
    sizes, pads = window_geometry(c.fail, c.attrs, [x[win.axes[0]], x[win.axes[1]]], win.k, win.s,
                                  [1, 1])  # fmt: skip
    outs = cast(list[int], sizes)  # known dims give known sizes
    y = list(x)
    y[win.axes[0]], y[win.axes[1]] = outs
    return outs, pads, y


def _known(shape: TensorShape) -> list[int] | None:
    dims = shape.as_list() if shape.is_fully_defined() else None
    return None if dims is None else [int(d) for d in dims if d is not None]


def _check_like_forward(c: Any, win: _Window, x: Sequence[int], named: dict[str, Any]) -> Any:
    """Each of ``named`` (its shape, or None where unknown) must have MaxPool's output
    shape for an input of shape ``x``; returns (outs, pads)."""
    outs, pads, y = _pooled(c, win, x)
    for name, shape in named.items():
        if shape is not None and list(shape) != y:
            c.fail(f"Expected {name} shape to be {shape_str(y)}, but got {shape_str(shape)}")
    return outs, pads


def _in_nhwc(
    ctx: KernelContext, fn: Callable[..., Any], win: _Window, arrays: Sequence[Any], *args: Any
) -> Any:
    """``fn`` on channels-last views of ``arrays``, its result back in the data format."""
    fmt = ctx.attrs["data_format"]
    out = fn(ctx, *(to_nhwc(a, fmt) for a in arrays), *args, win.k, win.s)
    return from_nhwc(ctx.xp, out, fmt)


# -- MaxPoolGrad ------------------------------------------------------------------------


def _max_pool_grad_shape(
    c: InferenceContext, x: TensorSpec, y: TensorSpec, g: TensorSpec
) -> TensorShape:
    """TensorFlow's UnchangedShapeWithRank(4) of orig_input; the kernel's checks when every
    shape is known."""
    win = _window(c)
    known = [_known(s.shape) for s in (x, y, g)]
    if None not in known:  # the kernel's messages first, as running it would say
        _max_grad_checks(c, win, *known)  # type: ignore[misc]
    return with_rank(x.shape, 4)


def _max_grad_checks(c: Any, win: _Window, x: Any, y: Any, g: Any) -> Any:
    """MaxPoolingGradOp's checks, in its order; (outs, pads)."""
    for name, shape in (("tensor_in", x), ("tensor_out", y), ("out_backprop", g)):
        if len(shape) != 4:
            c.fail(f"{name} must be 4-dimensional")
    return _check_like_forward(c, win, x, {"orig_output": y, "grad": g})


MAX_POOL_GRAD = define_op(
    "MaxPoolGrad",
    inputs=["orig_input: T", "orig_output: T", "grad: T"],
    outputs=["output: T"],
    attrs=[
        "ksize: list(int) >= 4",
        "strides: list(int) >= 4",
        PADDING_ATTR,
        EXPLICIT_ATTR,
        FORMAT_ATTR,
        f"T: {_MAX_TYPES} = float32",
    ],
    shape_fn=_max_pool_grad_shape,
    doc="""
The gradient of MaxPool: each window's ``grad`` goes to the cell of ``orig_input`` that
TensorFlow's CPU kernel picks as the window's max, and gradients reaching one cell from
overlapping windows are summed. Attrs as MaxPool's; ``orig_output`` (MaxPool's output) and
``grad`` must have MaxPool's output shape ("Expected grad shape to be ...").

The pick, as TensorFlow's CPU: the window's first cell inside the input (scan order, row
by row), then each later cell strictly greater than the best so far. So the first of equal
maxima wins; a NaN first cell wins (a later NaN never does); padding never wins. Like
TensorFlow's CPU kernel it re-reads ``orig_input`` and uses ``orig_output`` only for its
shape. NCHW runs on every device (TensorFlow's CPU refuses it).

Example: ``orig_input`` ``[[1, 3], [3, 2]]`` (shape [1, 2, 2, 1]), ksize 2, VALID, and
``grad`` ``[[5]]`` give ``[[0, 5], [0, 0]]``: the first 3 takes it.
""",
)


@register_kernel("MaxPoolGrad", "CPU", "GPU")
def _max_pool_grad_kernel(ctx: KernelContext, x: Any, y: Any, g: Any) -> Any:
    win = _window(ctx)
    outs, pads = _max_grad_checks(ctx, win, x.shape, y.shape, g.shape)
    return _in_nhwc(ctx, max_pool_grad, win, (x, g), pads, outs)


# -- AvgPoolGrad ------------------------------------------------------------------------


def _avg_pool_grad_shape(c: InferenceContext, sizes: TensorSpec, g: TensorSpec) -> TensorShape:
    """TensorFlow's MakeShapeFromShapeTensor + WithRank 4; the kernel's checks when known."""
    win = _window(c)
    with_rank(sizes.shape, 1)
    if sizes.value is not None:  # the kernel's words
        if sizes.value.size != 4:
            c.fail("out_backprop must be 1-dimensional and 4 elements")
        for d in sizes.value.tolist():
            if d < 0:
                c.fail(f"Expected a non-negative size, got {d}")
    out = with_rank(shape_from_value(c, sizes), 4)
    x_dims, g_dims = _known(out), _known(g.shape)
    if x_dims is not None and g_dims is not None:
        _avg_grad_checks(c, win, x_dims, g_dims)
    return out


def _avg_grad_checks(c: Any, win: _Window, x: Sequence[int], g: Sequence[int]) -> Any:
    """AvgPoolingGradOp's checks after reading orig_input_shape; (outs, pads)."""
    if len(g) != 4:
        c.fail("out_backprop must be 4-dimensional")
    for d in x:
        if d < 0:
            c.fail(f"Expected a non-negative size, got {d}")
    return _check_like_forward(c, win, x, {"grad": g})


AVG_POOL_GRAD = define_op(
    "AvgPoolGrad",
    inputs=["orig_input_shape: int32", "grad: T"],
    outputs=["output: T"],
    attrs=[
        "ksize: list(int) >= 4",
        "strides: list(int) >= 4",
        "padding: {'SAME', 'VALID'}",
        FORMAT_ATTR,
        "T: {float16, float32, float64}",
    ],
    shape_fn=_avg_pool_grad_shape,
    host_inputs=["orig_input_shape"],
    doc="""
The gradient of AvgPool: each window's ``grad`` times ``1 / n``, with ``n`` the window's
cells inside the input (AvgPool's divisor), added to each of those cells. Attrs as
AvgPool's; ``orig_input_shape`` is the input's shape (4 values in the data format's
order) and ``grad`` must have AvgPool's output shape for it. Computed in ``T`` as
TensorFlow's CPU kernel, its sums in the same order.

Where minigraph differs from TensorFlow 2.21's reference CPU kernel: a wrong ``grad``
shape is InvalidArgumentError ("Expected grad shape to be ...", as newer TensorFlow; 2.21
reads past it), a SAME window larger than the input is divided by its own cells (the
reference kernel spreads it over the wrong cells; TensorFlow's default oneDNN kernel, for
float32, agrees with minigraph), and NCHW runs on every device.

Example: ``orig_input_shape=[1, 2, 2, 1]``, ksize 2, VALID, and ``grad`` ``[[4]]`` give
``[[1, 1], [1, 1]]``.
""",
)


@register_kernel("AvgPoolGrad", "CPU", "GPU")
def _avg_pool_grad_kernel(ctx: KernelContext, sizes: Any, g: Any) -> Any:
    win = _window(ctx)
    dims = host_array(ctx, sizes)
    if dims.ndim != 1 or dims.size != 4:
        ctx.fail("out_backprop must be 1-dimensional and 4 elements")
    x = [int(d) for d in dims.tolist()]
    outs, pads = _avg_grad_checks(ctx, win, x, g.shape)
    ctx.check_size(x, g.dtype)
    fmt = ctx.attrs["data_format"]
    nhwc = [x[0], x[win.axes[0]], x[win.axes[1]], x[win.axes[2]]]
    out = avg_pool_grad(ctx, nhwc, to_nhwc(g, fmt), pads, outs, win.k, win.s)
    return from_nhwc(ctx.xp, out, fmt)


# -- MaxPoolGradGrad --------------------------------------------------------------------


def _max_pool_grad_grad_shape(
    c: InferenceContext, x: TensorSpec, y: TensorSpec, g: TensorSpec
) -> TensorShape:
    """TensorFlow's: MaxPool's output shape for orig_input, merged with orig_output;
    grad merged with orig_input."""
    win = _window(c)
    known = [_known(s.shape) for s in (x, y, g)]
    if None not in known:  # the kernel's messages first, as running it would say
        _max_grad_grad_checks(c, win, *known)  # type: ignore[misc]
    xs = merge(with_rank(x.shape, 4), g.shape)
    dims = xs.as_list()
    outs, _ = window_geometry(c.fail, c.attrs, [dims[win.axes[0]], dims[win.axes[1]]], win.k,
                              win.s, [1, 1])  # fmt: skip
    pooled = list(dims)
    pooled[win.axes[0]], pooled[win.axes[1]] = outs
    return merge(TensorShape(pooled), y.shape)


def _max_grad_grad_checks(c: Any, win: _Window, x: Any, y: Any, g: Any) -> Any:
    """MaxPoolingGradGradOp's checks, in its order; (outs, pads)."""
    for name, shape in (("tensor_in", x), ("tensor_out", y), ("out_grad_backprop", g)):
        if len(shape) != 4:
            c.fail(f"{name} must be 4-dimensional")
    if list(g) != list(x):
        c.fail(f"Expected grad shape to be {shape_str(x)}, but got {shape_str(g)}")
    return _check_like_forward(c, win, x, {"orig_output": y})


MAX_POOL_GRAD_GRAD = define_op(
    "MaxPoolGradGrad",
    inputs=["orig_input: T", "orig_output: T", "grad: T"],
    outputs=["output: T"],
    attrs=[
        "ksize: list(int) >= 4",
        "strides: list(int) >= 4",
        "padding: {'SAME', 'VALID'}",
        FORMAT_ATTR,
        f"T: {_MAX_TYPES}",
    ],
    shape_fn=_max_pool_grad_grad_shape,
    doc="""
The gradient of MaxPoolGrad with respect to its ``grad``: for each window, ``grad``
(shaped as ``orig_input``) at the window's first cell, in scan order, equal to
``orig_output`` (MaxPool's output), as TensorFlow's CPU kernel; 0 where no cell equals it
(a window whose max is NaN, or only -inf). The result has MaxPool's output shape.
NCHW runs on every device (TensorFlow's CPU refuses it).

Example: ``orig_input`` ``[[1, 3], [3, 2]]``, ``orig_output`` ``[[3]]``, ksize 2, VALID, and
``grad`` ``[[10, 20], [30, 40]]`` give ``[[20]]``.
""",
)


@register_kernel("MaxPoolGradGrad", "CPU", "GPU")
def _max_pool_grad_grad_kernel(ctx: KernelContext, x: Any, y: Any, g: Any) -> Any:
    win = _window(ctx)
    outs, pads = _max_grad_grad_checks(ctx, win, x.shape, y.shape, g.shape)
    return _in_nhwc(ctx, max_pool_grad_grad, win, (x, y, g), pads, outs)


MaxPoolGrad = make_wrapper_class(MAX_POOL_GRAD)
AvgPoolGrad = make_wrapper_class(AVG_POOL_GRAD)
MaxPoolGradGrad = make_wrapper_class(MAX_POOL_GRAD_GRAD)

__all__ = ["MaxPoolGrad", "AvgPoolGrad", "MaxPoolGradGrad"]
