"""Gradients of the joining, slicing and padding ops (slice_ops.py, pad_ops.py) and of
their gradient ops (array_grad_ops.py), one block per op, with TensorFlow's formulas
(tensorflow/python/ops/array_grad.py).

A join's gradient is split back into its pieces and a split's is joined; a slice's is
scattered into zeros of the input's shape (StridedSliceGrad, or padding for Pad's slice)
and a padded tensor's gradient is sliced out (MirrorPadGrad adds the mirrored borders
back first). Sizes that shape inference knows become constants; unknown ones are read at
run time with Shape nodes, so every gradient also works on placeholders of unknown shape.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph.graph import Operation, Output
from minigraph.ops.array_grad_ops import mirror_pad_grad, strided_slice_grad
from minigraph.ops.array_ops import cast
from minigraph.ops.array_ops import range as range_op
from minigraph.ops.gather_ops import gather
from minigraph.ops.grad_util import static_dims
from minigraph.ops.math_ops import floormod
from minigraph.ops.pad_ops import pad
from minigraph.ops.reduction_ops import reduce_sum
from minigraph.ops.shape_ops import rank, reshape, shape, size, transpose
from minigraph.ops.shape_ops import slice as slice_op
from minigraph.ops.slice_ops import concat, reverse, split, stack, unstack
from minigraph.ops.strided_slice_ops import strided_slice
from minigraph.registry import register_gradient

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


# -- ConcatV2, Pack, Unpack, Split, SplitV ---------------------------------------------


@register_gradient("ConcatV2")
def _concat_grad(op: Operation, grad: Output) -> list[Any]:
    """The gradient split along the axis into pieces the sizes of the inputs (constant
    sizes when shape inference knows them, else each input's Shape read at run time)."""
    values, axis = op.inputs[:-1], op.inputs[-1]
    known_rank = next((v.shape.rank for v in values if v.shape.rank is not None), None)
    a = axis.spec.value
    if a is not None and known_rank is not None:
        k = int(a) % known_rank
        dims = [v.shape.dims[k] for v in values]  # type: ignore[index]
        if all(d is not None for d in dims):
            return [*split(grad, np.array(dims, np.int32), np.int32(k)), None]
    r = np.int32(known_rank) if known_rank is not None else rank(values[0])
    k_out = floormod(cast(axis, np.int32), r)
    sizes = stack([gather(shape(v), k_out) for v in values])
    return [*split(grad, sizes, k_out, num=len(values)), None]


@register_gradient("Pack")
def _pack_grad(op: Operation, grad: Output) -> list[Any]:
    return unstack(grad, num=op.get_attr("N"), axis=op.get_attr("axis"))


@register_gradient("Unpack")
def _unpack_grad(op: Operation, *grads: Output) -> list[Any]:
    return [stack(list(grads), axis=op.get_attr("axis"))]


@register_gradient("Split")
def _split_grad(op: Operation, *grads: Output) -> list[Any]:
    return [None, concat(list(grads), op.inputs[0])]


@register_gradient("SplitV")
def _split_v_grad(op: Operation, *grads: Output) -> list[Any]:
    return [concat(list(grads), op.inputs[2]), None, None]


# -- ReverseV2, Tile -------------------------------------------------------------------


@register_gradient("ReverseV2")
def _reverse_grad(op: Operation, grad: Output) -> list[Any]:
    return [reverse(grad, op.inputs[1]), None]


@register_gradient("Tile")
def _tile_grad(op: Operation, grad: Output) -> list[Any]:
    """Each copy's gradient summed: the gradient reshaped to interleaved
    ``[multiples[0], dims[0], multiples[1], dims[1], ...]`` and summed over the even axes."""
    x, multiples = op.inputs
    xd, m = static_dims(x), multiples.spec.value
    if xd is not None and m is not None:
        split = np.stack([m, np.array(xd, m.dtype)], axis=1).reshape(-1)
        axes = np.arange(0, split.size, 2, dtype=np.int32)
        return [reduce_sum(reshape(grad, split), axes), None]
    dims = shape(x, out_type=multiples.dtype)
    split_t = reshape(transpose(stack([multiples, dims])), np.array([-1], np.int32))
    axes_t = range_op(0, size(split_t), 2)
    return [reduce_sum(reshape(grad, split_t), axes_t), None]


# -- StridedSlice, StridedSliceGrad ----------------------------------------------------


@register_gradient("StridedSlice")
def _strided_slice_grad(op: Operation, grad: Output) -> list[Any]:
    """The gradient written into zeros of the input's shape where the slice read
    (StridedSliceGrad, with the forward op's begin/end/strides and masks)."""
    x, begin, end, strides = op.inputs
    xd = static_dims(x)
    dims = np.array(xd, begin.dtype.np) if xd is not None else shape(x, out_type=begin.dtype)
    masks = {k: op.get_attr(k) for k in _MASKS}
    return [strided_slice_grad(dims, begin, end, strides, grad, **masks), None, None, None]


@register_gradient("StridedSliceGrad")
def _strided_slice_grad_grad(op: Operation, grad: Output) -> list[Any]:
    """StridedSliceGrad is linear in ``dy``: its gradient is the same slice of ``grad``."""
    _, begin, end, strides, _ = op.inputs
    masks = {k: op.get_attr(k) for k in _MASKS}
    return [None, None, None, None, strided_slice(grad, begin, end, strides, **masks)]


# -- Pad, PadV2, MirrorPad, MirrorPadGrad ----------------------------------------------


@register_gradient("Pad")
@register_gradient("PadV2")
def _pad_grad(op: Operation, grad: Output) -> list[Any]:
    """The input's part of the gradient: sliced from ``paddings[:, 0]``, the input's shape
    long. PadV2's constant gets none (as in TensorFlow)."""
    x, paddings = op.inputs[0], op.inputs[1]
    xd, p = static_dims(x), paddings.spec.value
    if xd is not None and p is not None:
        x_grad = slice_op(grad, p[:, 0].copy(), np.array(xd, p.dtype))
    else:
        before = slice_op(paddings, np.array([0, 0], np.int32), np.array([-1, 1], np.int32))
        begin = reshape(before, np.array([-1], np.int32))
        x_grad = slice_op(grad, begin, shape(x, out_type=paddings.dtype))
    return [x_grad, *[None] * (op.num_inputs - 1)]


@register_gradient("MirrorPad")
def _mirror_pad_grad(op: Operation, grad: Output) -> list[Any]:
    return [mirror_pad_grad(grad, op.inputs[1], mode=op.get_attr("mode")), None]


@register_gradient("MirrorPadGrad")
def _mirror_pad_grad_grad(op: Operation, grad: Output) -> list[Any]:
    """MirrorPadGrad is linear and MirrorPad its adjoint: the gradient mirror-padded."""
    return [pad(grad, op.inputs[1], op.get_attr("mode")), None]
