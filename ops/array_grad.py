"""Gradients of the array ops that move or copy values without changing them (array_ops,
shape_ops, depth_space_ops, spacetobatch_ops), one block per op, with TensorFlow's
formulas (tensorflow/python/ops/array_grad.py). The joining, slicing and padding ops are
in slice_grad.py.

Each gradient undoes its op's rearrangement (the inverse transpose, the opposite
block move, a reshape back) or sums what a broadcast copied. Shapes that shape inference
knows become constants; unknown ones are read at run time with Shape nodes, so every
gradient also works on placeholders of unknown shape. Shape, Size, Rank, ZerosLike,
OnesLike, Range, Const, StopGradient and BroadcastGradientArgs are not differentiable, as in
TensorFlow (gradients stop there); Snapshot has no gradient in TensorFlow either, so the
walk reports it as an op without one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph import errors
from minigraph.graph import Operation, Output
from minigraph.ops.array_ops import cast
from minigraph.ops.array_ops import range as range_op
from minigraph.ops.depth_space_ops import depth_to_space, space_to_depth
from minigraph.ops.grad_util import static_dims, unbroadcast
from minigraph.ops.pad_ops import pad
from minigraph.ops.reduction_ops import reduce_sum
from minigraph.ops.scatter_ops import scatter_nd
from minigraph.ops.shape_ops import reshape, shape, size, transpose
from minigraph.ops.slice_ops import stack
from minigraph.ops.spacetobatch_ops import batch_to_space_nd, space_to_batch_nd
from minigraph.registry import not_differentiable, register_gradient

not_differentiable(
    "Const",
    "ZerosLike",
    "OnesLike",
    "Range",
    "StopGradient",
    "Shape",
    "Size",
    "Rank",
    "BroadcastGradientArgs",
)


def reshape_like(grad: Output, x: Output) -> Output:
    """``grad`` reshaped to ``x``'s shape: a constant when shape inference knows it (with
    -1 for a single unknown dim, as TensorFlow's _ReshapeGrad), else a Shape node."""
    dims = x.shape.dims
    if dims is not None:
        unknown = [i for i, d in enumerate(dims) if d is None]
        # With a zero dim, -1 would be ambiguous (TensorFlow reshapes it to 1).
        if len(unknown) <= 1 and 0 not in dims:
            return reshape(grad, np.array([-1 if d is None else d for d in dims], np.int32))
        if not unknown:
            return reshape(grad, np.array(dims, np.int32))
    return reshape(grad, shape(x))


@register_gradient("Cast")
def _cast_grad(op: Operation, grad: Output) -> list[Any]:
    """Back to the source dtype between float and complex types; nothing to or from an
    integer or bool (TensorFlow's _CastGrad)."""
    src = op.inputs[0].dtype
    inexact = [t.is_floating or t.is_complex for t in (src, grad.dtype)]
    return [cast(grad, src) if all(inexact) else None]


# -- Identity, PlaceholderWithDefault, IdentityN, PreventGradient, Fill ----------------


@register_gradient("Identity")
@register_gradient("PlaceholderWithDefault")
def _identity_grad(op: Operation, grad: Output) -> list[Any]:
    return [grad]


@register_gradient("IdentityN")
def _identity_n_grad(op: Operation, *grads: Output) -> list[Any]:
    return list(grads)


@register_gradient("PreventGradient")
def _prevent_gradient_grad(op: Operation, grad: Output) -> list[Any]:
    """An error by design: the graph's author said no gradient may pass (TensorFlow raises
    LookupError with the op's message; NoGradientError is one)."""
    raise errors.NoGradientError(
        f"Gradient explicitly disabled. Reason: {op.get_attr('message')}",
        op.name,
        op.type,
    )


@register_gradient("Fill")
def _fill_grad(op: Operation, grad: Output) -> list[Any]:
    """Every output element is ``value``: its gradient is the sum of them all."""
    return [None, reduce_sum(grad)]


# -- Reshape, ExpandDims, Squeeze ------------------------------------------------------


@register_gradient("Reshape")
@register_gradient("ExpandDims")
def _reshape_grad(op: Operation, grad: Output) -> list[Any]:
    return [reshape_like(grad, op.inputs[0]), None]


@register_gradient("Squeeze")
def _squeeze_grad(op: Operation, grad: Output) -> list[Any]:
    return [reshape_like(grad, op.inputs[0])]


# -- Transpose -------------------------------------------------------------------------


def _inverse_permutation(perm: Output) -> Any:
    """``perm``'s inverse: a constant when ``perm`` is one, else a ScatterNd that writes
    ``i`` at ``perm[i]`` (TensorFlow's InvertPermutation, which minigraph lacks)."""
    value = perm.spec.value
    if value is not None:
        return np.argsort(value).astype(value.dtype)
    n = size(perm, out_type=perm.dtype)
    positions = range_op(0, n, 1, dtype=perm.dtype)
    return scatter_nd(reshape(perm, np.array([-1, 1], np.int32)), positions, stack([n]))


@register_gradient("Transpose")
def _transpose_grad(op: Operation, grad: Output) -> list[Any]:
    return [transpose(grad, _inverse_permutation(op.inputs[1])), None]


# -- BroadcastTo -----------------------------------------------------------------------


@register_gradient("BroadcastTo")
def _broadcast_to_grad(op: Operation, grad: Output) -> list[Any]:
    """Summed over the axes the input was stretched along, as a broadcasting binary op's
    operand (BroadcastGradientArgs of the input's shape and the output's)."""
    return [unbroadcast(grad, op.inputs[0], op.outputs[0]), None]


# -- Slice -----------------------------------------------------------------------------


@register_gradient("Slice")
def _slice_grad(op: Operation, grad: Output) -> list[Any]:
    """The gradient padded with zeros back to the input's shape: ``begin`` before it and
    the rest of each dimension after (TensorFlow's _SliceGrad)."""
    x, begin = op.inputs[0], op.inputs[1]
    xd, yd, b = static_dims(x), static_dims(op.outputs[0]), begin.spec.value
    if xd is not None and yd is not None and b is not None:
        after = np.array(xd) - np.array(yd) - b
        return [pad(grad, np.stack([b, after], axis=1).astype(b.dtype)), None, None]
    dt = begin.dtype
    after = shape(x, out_type=dt) - shape(op.outputs[0], out_type=dt) - begin
    return [pad(grad, stack([begin, after], axis=1)), None, None]


# -- DepthToSpace, SpaceToDepth: each other's inverse ----------------------------------


@register_gradient("SpaceToDepth")
def _space_to_depth_grad(op: Operation, grad: Output) -> list[Any]:
    block, fmt = op.get_attr("block_size"), op.get_attr("data_format")
    return [depth_to_space(grad, block, data_format=fmt)]


@register_gradient("DepthToSpace")
def _depth_to_space_grad(op: Operation, grad: Output) -> list[Any]:
    block, fmt = op.get_attr("block_size"), op.get_attr("data_format")
    return [space_to_depth(grad, block, data_format=fmt)]


# -- SpaceToBatchND, BatchToSpaceND: each other's inverse ------------------------------


@register_gradient("SpaceToBatchND")
def _space_to_batch_nd_grad(op: Operation, grad: Output) -> list[Any]:
    return [batch_to_space_nd(grad, op.inputs[1], op.inputs[2]), None, None]


@register_gradient("BatchToSpaceND")
def _batch_to_space_nd_grad(op: Operation, grad: Output) -> list[Any]:
    return [space_to_batch_nd(grad, op.inputs[1], op.inputs[2]), None, None]
