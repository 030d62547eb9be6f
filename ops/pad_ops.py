"""Padding: Pad, PadV2 (a constant around a tensor) and MirrorPad (REFLECT, SYMMETRIC).

Each op stands in one block: declaration, shape function, kernel, builder.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import INDEX_TYPES, host_array, pad_into, shape_str
from minigraph.ops.shape_ops import index_value
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, unknown_shape, with_rank
from minigraph.wrappers import as_output, convert_to_output, make_builder, make_wrapper_class

BUILDERS = ("pad",)


def check_paddings(
    fail: Any, x_shape: tuple, p_shape: tuple, p: np.ndarray | None, mode: str | None
) -> None:
    """The checks of TensorFlow's Pad and MirrorPad kernels, in order. ``x_shape`` may hold
    None (unknown dims); ``p`` is None when the paddings' values are unknown."""
    if len(p_shape) != 2 or p_shape[1] != 2:
        fail(f"paddings must be a matrix with 2 columns: {shape_str(p_shape)}")
    if p_shape[0] != len(x_shape):
        fail(
            "The first dimension of paddings must be the rank of inputs"
            f"{shape_str(p_shape)} {shape_str([-1 if d is None else d for d in x_shape])}"
        )
    if p is None:
        return
    for (before, after), d in zip(p.tolist(), x_shape):
        if before < 0 or after < 0:
            word = "Paddings" if mode is None else "paddings"
            fail(f"{word} must be non-negative: {before} {after}")
        if d is None or mode is None:
            continue
        if mode == "REFLECT" and (before >= d or after >= d):
            fail(
                f"paddings must be less than the dimension size: {before}, {after} not less "
                f"than {d}"
            )
        if mode == "SYMMETRIC" and (before > d or after > d):
            fail(
                f"paddings must be no greater than the dimension size: {before}, {after} "
                f"greater than {d}"
            )


def _pad_shape(c: InferenceContext, x: TensorSpec, paddings: TensorSpec, *rest: Any) -> Any:
    p_shape = with_rank(paddings.shape, 2)
    if len(rest) and rest[0].shape.rank not in (None, 0):
        c.fail(f"constant_values must be a scalar. Found: {rest[0].shape}")
    n = p_shape[0] if p_shape[0] is not None else x.shape.rank
    if n is None:
        return unknown_shape()
    dims = x.shape.dims if x.shape.rank is not None else (None,) * n
    if p_shape[0] is not None and p_shape[1] is not None:
        check_paddings(c.fail, dims, p_shape.dims, paddings.value, c.attrs.get("mode"))
    if paddings.value is None:
        return unknown_shape(n)
    return TensorShape(
        [None if d is None else d + int(a) + int(b) for d, (a, b) in zip(dims, paddings.value)]
    )


def _pad_kernel(ctx: KernelContext, x: Any, paddings: Any, constant_values: Any = None) -> Any:
    p = host_array(ctx, paddings)
    mode = ctx.attrs.get("mode")
    check_paddings(ctx.fail, x.shape, p.shape, p, mode)
    if constant_values is not None and constant_values.ndim != 0:
        ctx.fail(f"constant_values must be a scalar. Found: {shape_str(constant_values.shape)}")
    pairs = [(int(a), int(b)) for a, b in p.tolist()]
    shape = [d + a + b for d, (a, b) in zip(x.shape, pairs)]
    if mode is not None:
        ctx.check_size(shape, x.dtype)
        return ctx.xp.pad(x, pairs, mode=mode.lower()) if pairs else x.copy()
    out = ctx.allocate(shape, x.dtype)
    pad_into(ctx, out, x, pairs, 0 if constant_values is None else constant_values)
    return out


_DOC = (
    "``input`` with ``paddings[i, 0]`` values before and ``paddings[i, 1]`` after it in "
    "each dimension ``i``; ``paddings`` is an integer matrix of shape ``[rank, 2]``."
)
PAD = define_op(
    "Pad",
    inputs=["input: T", "paddings: Tpaddings"],
    outputs=["output: T"],
    attrs=["T: type", f"Tpaddings: {INDEX_TYPES} = int32"],
    shape_fn=_pad_shape,
    host_inputs=["paddings"],
    doc=_DOC + " The padding is zeros.",
)
PAD_V2 = define_op(
    "PadV2",
    inputs=["input: T", "paddings: Tpaddings", "constant_values: T"],
    outputs=["output: T"],
    attrs=["T: type", f"Tpaddings: {INDEX_TYPES} = int32"],
    shape_fn=_pad_shape,
    host_inputs=["paddings"],
    doc=_DOC + " The padding is the scalar ``constant_values``.",
)
MIRROR_PAD = define_op(
    "MirrorPad",
    inputs=["input: T", "paddings: Tpaddings"],
    outputs=["output: T"],
    attrs=["T: type", f"Tpaddings: {INDEX_TYPES} = int32", "mode: {'REFLECT', 'SYMMETRIC'}"],
    shape_fn=_pad_shape,
    host_inputs=["paddings"],
    doc=_DOC + " The padding mirrors ``input``: REFLECT leaves out the edge (each padding "
    "less than its dimension), SYMMETRIC repeats it (each padding at most its dimension).",
)
for _op in ("Pad", "PadV2", "MirrorPad"):
    register_kernel(_op, "CPU", "GPU")(_pad_kernel)

Pad = make_wrapper_class(PAD)
PadV2 = make_wrapper_class(PAD_V2)
MirrorPad = make_wrapper_class(MIRROR_PAD)
_pad = make_builder(PAD, "pad")
_pad_v2 = make_builder(PAD_V2, "pad_v2")
_mirror_pad = make_builder(MIRROR_PAD, "mirror_pad")


def pad(
    tensor: Any,
    paddings: Any,
    mode: str = "CONSTANT",
    name: str | None = None,
    constant_values: Any = 0,
) -> Output:
    """Pads ``tensor`` as ``tf.pad``: Pad for zeros, PadV2 for another constant, MirrorPad
    for ``mode`` REFLECT or SYMMETRIC (case-insensitive).

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     t = [[1, 2, 3], [4, 5, 6]]
    ...     y = mg.pad(t, [[1, 1], [2, 2]], "REFLECT")
    >>> mg.Session(g).run(y)
    array([[6, 5, 4, 5, 6, 5, 4],
           [3, 2, 1, 2, 3, 2, 1],
           [6, 5, 4, 5, 6, 5, 4],
           [3, 2, 1, 2, 3, 2, 1]], dtype=int32)
    """
    m = mode.upper()
    paddings = index_value(paddings)
    if m in ("REFLECT", "SYMMETRIC"):
        return _mirror_pad(tensor, paddings, mode=m, name=name or "MirrorPad")
    if m != "CONSTANT":
        raise ValueError(
            'Value of argument `mode` expected to be one of "CONSTANT", "REFLECT", or '
            f'"SYMMETRIC". Received `mode` = {mode}'
        )
    if as_output(constant_values) is None and np.ndim(constant_values) == 0:
        if constant_values == 0:
            return _pad(tensor, paddings, name=name or "Pad")
    x = convert_to_output(tensor)
    if as_output(constant_values) is None:
        constant_values = convert_to_output(constant_values, x.dtype, name="constant_values")
    return _pad_v2(x, paddings, constant_values, name=name or "PadV2")


__all__ = ["Pad", "PadV2", "MirrorPad", *BUILDERS]
