"""The 3-D pooling gradient ops: MaxPool3DGrad, AvgPool3DGrad and MaxPool3DGradGrad, what
the gradients of MaxPool3D, AvgPool3D and MaxPool3DGrad build (conv3d_grad.py).

Declared with TensorFlow 2.21's OpDefs and the checks and messages of its CPU kernels
(pooling_ops_3d.cc), on MaxPool3D's attr checks and window geometry (conv3d_ops.py,
conv_geometry.py); the arithmetic is the 2-D ops' (pool_grad_kernels.py), over three
spatial dims. One difference from 2-D, as TensorFlow's CPU kernels: MaxPool3DGrad gives a
window's gradient to every cell equal to its max (MaxPoolGrad to the first only), while
MaxPool3DGradGrad reads the first equal cell, as MaxPoolGradGrad.

Devices, as MaxPool3D's: NCDHW is refused on the CPU with TensorFlow's message and runs on
a GPU; float16 (and float64 for AvgPool3DGrad and MaxPool3DGradGrad), which the OpDefs
allow but TensorFlow's CPU has no kernel for, run on every device. Where minigraph is
stricter than TensorFlow 2.21: AvgPool3DGrad refuses a ``grad`` whose shape is not
AvgPool3D's output shape ("Expected grad shape to be ..."; TensorFlow 2.21 reads past it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from minigraph.inference import InferenceContext, TensorSpec, shape_from_value
from minigraph.kernel import KernelContext
from minigraph.ops.common import host_array, shape_str
from minigraph.ops.conv3d_ops import on_cpu, pool3d_attrs
from minigraph.ops.conv_geometry import channels_first, from_nhwc, to_nhwc, window_geometry
from minigraph.ops.pool_grad_kernels import (
    avg_pool_grad,
    max_pool_grad_all_equal,
    max_pool_grad_grad,
)
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, merge, with_rank
from minigraph.wrappers import make_wrapper_class

BUILDERS: tuple[str, ...] = ()  # gradient ops: built by mg.gradients, not by users

_WINDOW_ATTRS = [
    "ksize: list(int) >= 5",
    "strides: list(int) >= 5",
    "padding: {'SAME', 'VALID'}",
    "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'",
]
# TensorFlow's kernel names in its NCDHW-on-CPU messages
_LABEL = {
    "MaxPool3DGrad": "MaxPooling3dGradOp",
    "AvgPool3DGrad": "AvgPooling3dGradOp",
    "MaxPool3DGradGrad": "MaxPooling3dGradGradOp",
}


def _axes(data_format: str) -> tuple[int, int, int, int]:
    """(depth, height, width, channel) axes of a 5-D tensor in this format."""
    return (2, 3, 4, 1) if channels_first(data_format) else (1, 2, 3, 4)


def _pooled(c: Any, x: Sequence[Any]) -> tuple[list[Any], list[tuple[int, int]], list[Any]]:
    """(output sizes, pads) of the spatial dims and MaxPool3D's output shape (in the data
    format's order) for an input of shape ``x``."""
    k, s = pool3d_attrs(c, c.fail, c.attrs)
    axes = _axes(c.attrs["data_format"])
    outs, pads = window_geometry(c.fail, c.attrs, [x[a] for a in axes[:3]], k, s, [1, 1, 1])
    y = list(x)
    for a, size in zip(axes[:3], outs):
        y[a] = size
    return outs, pads, y


def _check_ranks(c: Any, named: dict[str, Sequence[int]]) -> None:
    for name, shape in named.items():
        if len(shape) != 5:
            c.fail(f"{name} must be 5-dimensional")


def _check_like_forward(c: Any, x: Sequence[int], named: dict[str, Sequence[int]]) -> Any:
    """Each of ``named`` must have MaxPool3D's output shape for an input of shape ``x``;
    returns (outs, pads)."""
    outs, pads, y = _pooled(c, x)
    for name, shape in named.items():
        if list(shape) != y:
            c.fail(f"Expected {name} shape to be {shape_str(y)}, but got {shape_str(shape)}")
    return outs, pads


def _known(*specs: TensorSpec) -> list[list[int]] | None:
    if not all(spec.shape.is_fully_defined() for spec in specs):
        return None
    return [[int(d) for d in spec.shape.as_list()] for spec in specs]  # type: ignore[union-attr]


def _run(ctx: KernelContext, fn: Callable[..., Any], arrays: Sequence[Any], *args: Any) -> Any:
    """``fn`` on channels-last views of ``arrays``, its result back in the data format;
    NCDHW refused on the CPU first, as TensorFlow."""
    fmt = ctx.attrs["data_format"]
    if on_cpu(ctx) and channels_first(fmt):
        ctx.fail(f"Default {_LABEL[ctx.op_type]} only supports NDHWC on device type CPU")
    k, s = pool3d_attrs(ctx, ctx.fail, ctx.attrs)
    out = fn(ctx, *(to_nhwc(a, fmt) for a in arrays), *args, k, s)
    return from_nhwc(ctx.xp, out, fmt)


# -- MaxPool3DGrad ------------------------------------------------------------------------


def _max_pool3d_grad_shape(
    c: InferenceContext, x: TensorSpec, y: TensorSpec, g: TensorSpec
) -> TensorShape:
    """TensorFlow's UnchangedShapeWithRank(5) of orig_input; the kernel's checks when every
    shape is known."""
    pool3d_attrs(c, c.fail, c.attrs)
    known = _known(x, y, g)
    if known is not None:
        _max_grad_checks(c, *known)
    return with_rank(x.shape, 5)


def _max_grad_checks(c: Any, x: Any, y: Any, g: Any) -> Any:
    _check_ranks(c, {"tensor_in": x, "tensor_out": y, "out_backprop": g})
    return _check_like_forward(c, x, {"orig_output": y, "grad": g})


MAX_POOL3D_GRAD = define_op(
    "MaxPool3DGrad",
    inputs=["orig_input: TInput", "orig_output: TInput", "grad: T"],
    outputs=["output: T"],
    attrs=[
        *_WINDOW_ATTRS,
        "T: {float16, float32} = float32",
        "TInput: {float16, float32} = float32",
    ],
    shape_fn=_max_pool3d_grad_shape,
    doc="""
The gradient of MaxPool3D: each window's ``grad`` goes to every cell of ``orig_input``
inside the input that equals ``orig_output`` (MaxPool3D's output), as TensorFlow's CPU
kernel (so equal maxima each get it, unlike MaxPoolGrad's first-only rule, and a NaN max
gives nothing); gradients reaching one cell from overlapping windows are summed. Attrs as
MaxPool3D's; ``orig_output`` and ``grad`` must have MaxPool3D's output shape ("Expected
grad shape to be ..."). The output has ``grad``'s dtype ``T``; the inputs ``TInput``.
NCDHW is refused on the CPU ("Default MaxPooling3dGradOp only supports NDHWC on device
type CPU") and runs on a GPU.

Example: ``orig_input`` with two 1s among zeros in one 2x2x2 window, ``orig_output``
``[[[[1]]]]`` and ``grad`` 5: both 1s get 5.
""",
)


@register_kernel("MaxPool3DGrad", "CPU", "GPU")
def _max_pool3d_grad_kernel(ctx: KernelContext, x: Any, y: Any, g: Any) -> Any:
    outs, pads = _max_grad_checks(ctx, x.shape, y.shape, g.shape)
    return _run(ctx, max_pool_grad_all_equal, (x, y, g), pads, outs)


# -- AvgPool3DGrad ------------------------------------------------------------------------


def _avg_pool3d_grad_shape(c: InferenceContext, sizes: TensorSpec, g: TensorSpec) -> TensorShape:
    """TensorFlow's MakeShapeFromShapeTensor + WithRank 5; the kernel's checks when known."""
    pool3d_attrs(c, c.fail, c.attrs)
    with_rank(sizes.shape, 1)
    if sizes.value is not None and sizes.value.size != 5:
        c.fail("tensor_in must be 1-dimensional and 5 elements")
    out = with_rank(shape_from_value(c, sizes), 5)
    if out.is_fully_defined() and g.shape.is_fully_defined():
        x_dims = [int(d) for d in out.as_list()]  # type: ignore[union-attr]
        _avg_grad_checks(c, x_dims, [int(d) for d in g.shape.as_list()])  # type: ignore[union-attr]
    return out


def _avg_grad_checks(c: Any, x: Sequence[int], g: Sequence[int]) -> Any:
    """AvgPooling3dGradOp's checks after reading orig_input_shape; (outs, pads)."""
    _check_ranks(c, {"out_backprop": g})
    for d in x:
        if d < 0:
            c.fail(f"Expected a non-negative size, got {d}")
    return _check_like_forward(c, x, {"grad": g})


AVG_POOL3D_GRAD = define_op(
    "AvgPool3DGrad",
    inputs=["orig_input_shape: int32", "grad: T"],
    outputs=["output: T"],
    attrs=[*_WINDOW_ATTRS, "T: {float16, float32, float64}"],
    shape_fn=_avg_pool3d_grad_shape,
    host_inputs=["orig_input_shape"],
    doc="""
The gradient of AvgPool3D: each window's ``grad`` times ``1 / n``, with ``n`` the window's
cells inside the input (AvgPool3D's divisor), added to each of those cells. Attrs as
AvgPool3D's; ``orig_input_shape`` is the input's shape (5 values in the data format's
order, else "tensor_in must be 1-dimensional and 5 elements") and ``grad`` must have
AvgPool3D's output shape for it (minigraph checks this; TensorFlow 2.21 does not). NCDHW is
refused on the CPU ("Default AvgPooling3dGradOp only supports NDHWC on device type CPU")
and runs on a GPU; float16 and float64 run on every device.

Example: ``orig_input_shape=[1, 2, 2, 2, 1]``, ksize 2, VALID, and ``grad`` ``[[[[8]]]]``
give 1 in every cell.
""",
)


@register_kernel("AvgPool3DGrad", "CPU", "GPU")
def _avg_pool3d_grad_kernel(ctx: KernelContext, sizes: Any, g: Any) -> Any:
    pool3d_attrs(ctx, ctx.fail, ctx.attrs)
    dims = host_array(ctx, sizes)
    if dims.ndim != 1 or dims.size != 5:
        ctx.fail("tensor_in must be 1-dimensional and 5 elements")
    x = [int(d) for d in dims.tolist()]
    outs, pads = _avg_grad_checks(ctx, x, g.shape)
    ctx.check_size(x, g.dtype)
    axes = _axes(ctx.attrs["data_format"])
    nhwc = [x[0], *(x[a] for a in axes)]

    def grad_of(ctx: KernelContext, grad: Any, pads: Any, outs: Any, k: Any, s: Any) -> Any:
        return avg_pool_grad(ctx, nhwc, grad, pads, outs, k, s)

    return _run(ctx, grad_of, (g,), pads, cast(list[int], outs))


# -- MaxPool3DGradGrad --------------------------------------------------------------------


def _max_pool3d_grad_grad_shape(
    c: InferenceContext, x: TensorSpec, y: TensorSpec, g: TensorSpec
) -> TensorShape:
    """TensorFlow's: MaxPool3D's output shape for orig_input merged with orig_output;
    grad merged with orig_input."""
    known = _known(x, y, g)
    if known is not None:
        _max_grad_grad_checks(c, *known)
    xs = merge(with_rank(x.shape, 5), g.shape)
    _, _, pooled = _pooled(c, xs.as_list())
    return merge(TensorShape(pooled), y.shape)


def _max_grad_grad_checks(c: Any, x: Any, y: Any, g: Any) -> Any:
    _check_ranks(c, {"tensor_in": x, "tensor_out": y, "out_backprop": g})
    if list(g) != list(x):
        c.fail(f"Expected grad shape to be {shape_str(x)}, but got {shape_str(g)}")
    return _check_like_forward(c, x, {"orig_output": y})


MAX_POOL3D_GRAD_GRAD = define_op(
    "MaxPool3DGradGrad",
    inputs=["orig_input: T", "orig_output: T", "grad: T"],
    outputs=["output: T"],
    attrs=[
        *_WINDOW_ATTRS,
        "T: {float32, float64, int32, uint8, int16, int8, int64, uint16, float16, uint32, uint64}",
    ],
    shape_fn=_max_pool3d_grad_grad_shape,
    doc="""
The gradient of MaxPool3DGrad with respect to its ``grad``: for each window, ``grad``
(shaped as ``orig_input``) at the window's first cell, in scan order, equal to
``orig_output`` (MaxPool3D's output), as TensorFlow's CPU kernel; 0 where no cell equals
it. The result has MaxPool3D's output shape. NCDHW is refused on the CPU ("Default
MaxPooling3dGradGradOp only supports NDHWC on device type CPU") and runs on a GPU.

Example: ``orig_input`` with two 1s among zeros in one 2x2x2 window, ``orig_output``
``[[[[1]]]]``: the result is ``grad`` at the first 1.
""",
)


@register_kernel("MaxPool3DGradGrad", "CPU", "GPU")
def _max_pool3d_grad_grad_kernel(ctx: KernelContext, x: Any, y: Any, g: Any) -> Any:
    outs, pads = _max_grad_grad_checks(ctx, x.shape, y.shape, g.shape)
    return _run(ctx, max_pool_grad_grad, (x, y, g), pads, outs)


MaxPool3DGrad = make_wrapper_class(MAX_POOL3D_GRAD)
AvgPool3DGrad = make_wrapper_class(AVG_POOL3D_GRAD)
MaxPool3DGradGrad = make_wrapper_class(MAX_POOL3D_GRAD_GRAD)

__all__ = ["MaxPool3DGrad", "AvgPool3DGrad", "MaxPool3DGradGrad"]
