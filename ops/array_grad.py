"""Gradients of the array ops (ops/array_ops.py), one block per op, with TensorFlow's
formulas (tensorflow/python/ops/array_grad.py)."""

from __future__ import annotations

from typing import Any

from minigraph.graph import Operation, Output
from minigraph.ops.array_ops import cast
from minigraph.registry import register_gradient


@register_gradient("Cast")
def _cast_grad(op: Operation, grad: Output) -> list[Any]:
    """Back to the source dtype between float and complex types; nothing to or from an
    integer or bool (TensorFlow's _CastGrad)."""
    src = op.inputs[0].dtype
    inexact = [t.is_floating or t.is_complex for t in (src, grad.dtype)]
    return [cast(grad, src) if all(inexact) else None]
