"""Helpers that gradient functions share (the ``*_grad`` modules): summing a broadcast
operand's gradient back to its shape, and shapes known while the graph is built.

Where shape inference knows both operands' shapes, the reduction axes are constants and a
gradient that needs no reduction is passed on as it is, as TensorFlow's
SmartBroadcastGradientArgs does; otherwise the axes come from a BroadcastGradientArgs node.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph.graph import Output
from minigraph.ops.reduction_ops import reduce_sum
from minigraph.ops.shape_ops import broadcast_gradient_args, gradient_reduction_axes, reshape, shape

__all__ = ["static_dims", "shape_of", "unbroadcast", "binary_grads"]


def static_dims(x: Output) -> list[int] | None:
    """``x``'s dims when shape inference knows every one, else None."""
    dims = x.shape.dims
    if dims is None or any(d is None for d in dims):
        return None
    return [int(d) for d in dims]


def shape_of(x: Output) -> Any:
    """``x``'s shape: a constant list when known, else a Shape node."""
    dims = static_dims(x)
    return np.array(dims, np.int32) if dims is not None else shape(x)


def _fail(message: str) -> None:
    raise ValueError(message)  # unreachable: the forward op's shape function checked it


def unbroadcast(grad: Output, x: Output, other: Output) -> Output:
    """``grad`` (shaped as the broadcast of ``x`` and ``other``) summed over the axes
    ``x`` was stretched along and reshaped to ``x``'s shape."""
    xd, od, gd = static_dims(x), static_dims(other), static_dims(grad)
    if xd is not None and od is not None:
        if gd == xd:
            return grad
        axes, _ = gradient_reduction_axes(xd, od, _fail)
        summed = reduce_sum(grad, axes.astype(np.int32)) if axes.size else grad
        return reshape(summed, np.array(xd, np.int32))
    axes, _ = broadcast_gradient_args(shape(x), shape(other))
    return reshape(reduce_sum(grad, axes), shape(x))


def binary_grads(op: Any, gx: Output | None, gy: Output | None) -> list[Output | None]:
    """The gradients of a broadcasting binary op's two inputs, given each already
    computed at the broadcast shape (None for an input that gets none)."""
    x, y = op.inputs[0], op.inputs[1]
    return [
        None if gx is None else unbroadcast(gx, x, y),
        None if gy is None else unbroadcast(gy, y, x),
    ]
