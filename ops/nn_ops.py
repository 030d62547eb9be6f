"""Neural-network ops: Conv2D (NHWC), enough for atrous convolution examples."""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, merge_dim, with_rank
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = ("conv2d",)


# -- Conv2D -------------------------------------------------------------------------------


def _conv_output_size(
    fail: Any, size: int | None, k: int | None, stride: int, dilation: int, padding: str
) -> int | None:
    """Output length of one spatial dim, TensorFlow's GetWindowedOutputSize."""
    if size is None:
        return None
    if padding == "SAME":
        return -(-size // stride)
    if k is None:
        return None
    effective = (k - 1) * dilation + 1
    num = size - effective + stride
    out = num // stride if num >= 0 else -(-num // stride)  # C's truncating division
    if out < 0:
        fail(
            f"Computed output size would be negative: {out} [input_size: {size}, "
            f"effective_filter_size: {effective}, stride: {stride}]"
        )
    return out


def _check_conv_attrs(fail: Any, strides: tuple, dilations: tuple) -> None:
    if len(strides) != 4:
        fail(f"Sliding window strides field must specify 4 dimensions, got {len(strides)}")
    if len(dilations) != 4:
        fail(f"Sliding window dilations field must specify 4 dimensions, got {len(dilations)}")
    if strides[0] != 1 or strides[3] != 1:
        fail(
            "Current implementation does not yet support strides in the batch and depth dimensions."
        )
    if dilations[0] != 1 or dilations[3] != 1:
        fail(
            "Current implementation does not yet support dilations in the batch and depth "
            "dimensions."
        )
    if min(strides) < 1 or min(dilations) < 1:
        fail(f"strides and dilations must be positive, got {list(strides)} and {list(dilations)}")


def _conv2d_shape(c: InferenceContext, x: TensorSpec, w: TensorSpec) -> TensorShape:
    strides, dilations = c.attrs["strides"], c.attrs["dilations"]
    _check_conv_attrs(c.fail, strides, dilations)
    xs, ws = with_rank(x.shape, 4), with_rank(w.shape, 4)
    merge_dim(xs.dims[3], ws.dims[2])
    dims = [xs.dims[0]]
    for i in (1, 2):
        dims.append(
            _conv_output_size(
                c.fail, xs.dims[i], ws.dims[i - 1], strides[i], dilations[i], c.attrs["padding"]
            )
        )
    return TensorShape(dims + [ws.dims[3]])


CONV2D = define_op(
    "Conv2D",
    inputs=["input: T", "filter: T"],
    outputs=["output: T"],
    attrs=[
        "T: {float16, float32, float64}",
        "strides: list(int)",
        "padding: {'SAME', 'VALID'}",
        "dilations: list(int) = [1, 1, 1, 1]",
        "data_format: {'NHWC'} = 'NHWC'",
    ],
    shape_fn=_conv2d_shape,
    doc="""
2-D convolution (cross-correlation, as TensorFlow) of an NHWC ``input`` of shape
``[batch, height, width, in_channels]`` with a ``filter`` of shape
``[filter_height, filter_width, in_channels, out_channels]``.

``strides`` and ``dilations`` have 4 entries (batch and channel entries must be 1).
``padding="VALID"`` uses only full windows: an output dim is
``ceil((in - (k - 1) * dilation) / stride)``; ``"SAME"`` pads with zeros (the extra one at
the end) so that it is ``ceil(in / stride)``.

Errors: the input channels must equal the filter's ``in_channels``; a VALID window larger
than the input gives "Computed output size would be negative".

Example: a 3x3 input of ones and a 2x2 filter of ones, VALID, stride 1, gives 4 everywhere
in a 2x2 output.
""",
)


@register_kernel("Conv2D", "CPU", "GPU")
def _conv2d_kernel(ctx: KernelContext, x: Any, w: Any) -> Any:
    xp = ctx.xp
    strides, dilations = ctx.attrs["strides"], ctx.attrs["dilations"]
    if x.ndim != 4 or w.ndim != 4:
        ctx.fail(f"input and filter must be 4-D, got {list(x.shape)} and {list(w.shape)}")
    if x.shape[3] != w.shape[2]:
        ctx.fail(f"input depth must equal filter depth: {x.shape[3]} vs {w.shape[2]}")
    n, h, wd, _ = x.shape
    kh, kw, _, cout = w.shape
    (sh, sw), (dh, dw) = strides[1:3], dilations[1:3]
    oh = _conv_output_size(ctx.fail, h, kh, sh, dh, ctx.attrs["padding"])
    ow = _conv_output_size(ctx.fail, wd, kw, sw, dw, ctx.attrs["padding"])
    pads = []
    for size, k, s, d, o in ((h, kh, sh, dh, oh), (wd, kw, sw, dw, ow)):
        total = max((o - 1) * s + (k - 1) * d + 1 - size, 0)
        pads.append((total // 2, total - total // 2))
    ctx.check_size((n, oh, ow, cout), x.dtype)
    acc_dtype = np.float32 if x.dtype == np.float16 else x.dtype
    xpad = xp.pad(x, ((0, 0), pads[0], pads[1], (0, 0))).astype(acc_dtype, copy=False)
    wacc = w.astype(acc_dtype, copy=False)
    out = xp.zeros((n, oh, ow, cout), acc_dtype)
    # One matmul per filter tap: [n, oh, ow, cin] @ [cin, cout], vectorised over the image.
    for i in range(kh):
        for j in range(kw):
            window = xpad[
                :,
                i * dh : i * dh + (oh - 1) * sh + 1 : sh,
                j * dw : j * dw + (ow - 1) * sw + 1 : sw,
                :,
            ]
            out += window @ wacc[i, j]
    return out.astype(x.dtype, copy=False)


Conv2D = make_wrapper_class(CONV2D)
_conv2d = make_builder(CONV2D, "conv2d")


def _four(value: Any) -> list[int]:
    """TensorFlow 2 accepts an int, or 1, 2 or 4 values, for strides and dilations."""
    if value is None:
        return [1, 1, 1, 1]
    vals = [int(value)] if np.isscalar(value) else [int(v) for v in value]
    if len(vals) == 1:
        return [1, vals[0], vals[0], 1]
    if len(vals) == 2:
        return [1, *vals, 1]
    return vals


def conv2d(
    input: Any,
    filters: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",  # noqa: A002
    dilations: Any = None,
    name: str | None = None,
) -> Output:
    """2-D convolution of NHWC ``input`` with ``filters`` [kh, kw, in, out], as tf.nn.conv2d.

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
        filters,
        strides=_four(strides),
        padding=padding,
        dilations=_four(dilations),
        data_format=data_format,
        name=name or "Conv2D",
    )


__all__ = ["Conv2D", *BUILDERS]
