"""SpaceToDepth and DepthToSpace: blocks of pixels moved into channels and back.

Each kernel is one reshape, one transpose and one copy (``[n, h/b, b, w/b, b, c]`` with the
two block axes moved next to the channels), written once against ``xp``. TensorFlow's CPU
kernels take NHWC only (it has no CPU kernel for NCHW: NotFoundError); its GPU runs NCHW as
well, and so does minigraph's, as NHWC between two transposes. NCHW_VECT_C is for qint8,
which minigraph lacks.
"""

from __future__ import annotations

from typing import Any

from minigraph import errors
from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, with_rank
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = ("space_to_depth", "depth_to_space")

_ATTRS = [
    "T: type",
    "block_size: int >= 2",
    "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'",
]


def _divide(c: InferenceContext, d: int | None, by: int) -> int | None:
    """InferenceContext::Divide with evenly_divisible."""
    if d is None:
        return None
    if d % by:
        c.fail(f"Dimension size must be evenly divisible by {by} but is {d}")
    return d // by


def _dims(c: InferenceContext, x: TensorSpec) -> tuple[list[int | None], bool]:
    """[n, h, w, c] of the input whatever its format, and whether it is NCHW."""
    fmt = c.attrs["data_format"]
    if fmt == "NCHW_VECT_C":
        c.fail("qint8 should be used with data_format NCHW_VECT_C.")
    dims = with_rank(x.shape, 4).dims
    assert dims is not None  # with_rank gives a known rank
    if fmt == "NCHW":
        return [dims[0], dims[2], dims[3], dims[1]], True
    return list(dims), False


def _result(dims: list[int | None], nchw: bool) -> TensorShape:
    return TensorShape([dims[0], dims[3], dims[1], dims[2]] if nchw else dims)


def _check_device(ctx: KernelContext) -> None:
    fmt = ctx.attrs["data_format"]
    if fmt != "NHWC" and ctx.device.partition(":")[0] == "CPU":
        raise errors.NotFoundError(
            f"No registered kernel for {ctx.op_type} on CPU with data_format {fmt}: "
            "TensorFlow's CPU kernels take NHWC only (a GPU runs NCHW)",
            ctx.node_name,
            ctx.op_type,
        )
    if fmt == "NCHW_VECT_C":
        ctx.fail("qint8 should be used with data_format NCHW_VECT_C.")


def _rearranged(ctx: KernelContext, x: Any, split: tuple[int, ...], out: tuple[int, ...]) -> Any:
    """``x`` (NHWC, or NCHW seen as NHWC) reshaped to ``split``, its axes 2 and 3 swapped
    (the block's row next to its column), copied once into ``out``."""
    xp = ctx.xp
    nchw = ctx.attrs["data_format"] == "NCHW"
    if nchw:
        x = x.transpose(0, 2, 3, 1)
    ctx.check_size(out, x.dtype)
    y = xp.ascontiguousarray(x).reshape(split).transpose(0, 1, 3, 2, 4, 5).reshape(out)
    return xp.ascontiguousarray(y.transpose(0, 3, 1, 2) if nchw else y)


# -- SpaceToDepth ----------------------------------------------------------------------


def _space_to_depth_shape(c: InferenceContext, x: TensorSpec) -> TensorShape:
    (n, h, w, d), nchw = _dims(c, x)
    b = c.attrs["block_size"]
    out = [n, _divide(c, h, b), _divide(c, w, b), None if d is None else d * b * b]
    return _result(out, nchw)


SPACE_TO_DEPTH = define_op(
    "SpaceToDepth",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=_ATTRS,
    shape_fn=_space_to_depth_shape,
    doc="""
Moves each ``block_size`` x ``block_size`` block of pixels into the channels: NHWC
``[n, h, w, c]`` becomes ``[n, h / b, w / b, c * b * b]``, output channel
``(i * b + j) * c + k`` holding channel ``k`` of the block's pixel ``(i, j)``. Height and
width must be multiples of ``block_size`` ("Image width 5 and height 4 should be divisible
by block_size: 2"; at build time "Dimension size must be evenly divisible by 2 but is 5").

``data_format="NCHW"``: refused on the CPU with NotFoundError, as TensorFlow (no CPU kernel);
run on a GPU. NCHW_VECT_C needs qint8, which minigraph lacks: InvalidArgumentError.

Example: ``[[1, 2], [3, 4]]`` as a [1, 2, 2, 1] image with block 2 gives ``[[[[1, 2, 3, 4]]]]``.
""",
)


@register_kernel("SpaceToDepth", "CPU", "GPU")
def _space_to_depth_kernel(ctx: KernelContext, x: Any) -> Any:
    _check_device(ctx)
    if x.ndim != 4:
        ctx.fail(f"Input rank should be 4 instead of {x.ndim}")
    nchw = ctx.attrs["data_format"] == "NCHW"
    n, h, w, d = (x.shape[0], x.shape[2], x.shape[3], x.shape[1]) if nchw else x.shape
    b = ctx.attrs["block_size"]
    if w % b or h % b:
        ctx.fail(f"Image width {w} and height {h} should be divisible by block_size: {b}")
    return _rearranged(ctx, x, (n, h // b, b, w // b, b, d), (n, h // b, w // b, d * b * b))


SpaceToDepth = make_wrapper_class(SPACE_TO_DEPTH)
_space_to_depth = make_builder(SPACE_TO_DEPTH, "space_to_depth")


def space_to_depth(
    input: Any,  # noqa: A002
    block_size: int,
    name: str | None = None,
    data_format: str = "NHWC",
) -> Output:
    """Blocks of pixels into channels, as tf.compat.v1.space_to_depth.

    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.space_to_depth(np.arange(1, 5).reshape(1, 2, 2, 1), 2)
    >>> mg.Session(g).run(y)
    array([[[[1, 2, 3, 4]]]])
    """
    return _space_to_depth(
        input, block_size=block_size, data_format=data_format, name=name or "SpaceToDepth"
    )


# -- DepthToSpace ----------------------------------------------------------------------


def _depth_to_space_shape(c: InferenceContext, x: TensorSpec) -> TensorShape:
    (n, h, w, d), nchw = _dims(c, x)
    b = c.attrs["block_size"]
    out = [n, None if h is None else h * b, None if w is None else w * b, _divide(c, d, b * b)]
    return _result(out, nchw)


DEPTH_TO_SPACE = define_op(
    "DepthToSpace",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=_ATTRS,
    shape_fn=_depth_to_space_shape,
    doc="""
The inverse of SpaceToDepth: NHWC ``[n, h, w, c]`` becomes ``[n, h * b, w * b, c / (b * b)]``,
pixel ``(i, j)`` of each output block taking channels ``(i * b + j) * c' ...`` of the input
pixel. The depth must be a multiple of ``block_size ** 2`` ("Input depth dimension 6 should
be divisible by: 4"). Data formats as SpaceToDepth.

Example: ``[[[[1, 2, 3, 4]]]]`` with block 2 gives the [1, 2, 2, 1] image ``[[1, 2], [3, 4]]``.
""",
)


@register_kernel("DepthToSpace", "CPU", "GPU")
def _depth_to_space_kernel(ctx: KernelContext, x: Any) -> Any:
    _check_device(ctx)
    if x.ndim != 4:
        ctx.fail(f"Input rank should be 4 instead of {x.ndim}")
    nchw = ctx.attrs["data_format"] == "NCHW"
    n, h, w, d = (x.shape[0], x.shape[2], x.shape[3], x.shape[1]) if nchw else x.shape
    b = ctx.attrs["block_size"]
    if d % (b * b):
        ctx.fail(f"Input depth dimension {d} should be divisible by: {b * b}")
    c = d // (b * b)
    return _rearranged(ctx, x, (n, h, w, b, b, c), (n, h * b, w * b, c))


DepthToSpace = make_wrapper_class(DEPTH_TO_SPACE)
_depth_to_space = make_builder(DEPTH_TO_SPACE, "depth_to_space")


def depth_to_space(
    input: Any,  # noqa: A002
    block_size: int,
    name: str | None = None,
    data_format: str = "NHWC",
) -> Output:
    """Channels into blocks of pixels, as tf.compat.v1.depth_to_space.

    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.depth_to_space(np.arange(1, 5).reshape(1, 1, 1, 4), 2)
    >>> mg.Session(g).run(y)[0, :, :, 0]
    array([[1, 2],
           [3, 4]])
    """
    return _depth_to_space(
        input, block_size=block_size, data_format=data_format, name=name or "DepthToSpace"
    )


__all__ = ["SpaceToDepth", "DepthToSpace", *BUILDERS]
