"""What a shape function sees: specs of its inputs, the attrs, and how to fail.

Shape functions are pure functions ``fn(c, *inputs)`` over :class:`TensorSpec`
values (a list of them for a list input) that return the output shapes: one
TensorShape for a single output, else a list with one per output (a list
output contributes one shape per element). Errors go through ``c.fail`` or the
ShapeError raised by the helpers in :mod:`minigraph.shapes`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from . import errors
from .dtypes import DType
from .shapes import TensorShape, as_shape

__all__ = ["TensorSpec", "InferenceContext", "shape_from_value"]


@dataclass(frozen=True)
class TensorSpec:
    """Shape and dtype of a tensor, and its value when it is a known small constant. A
    resource handle may carry the (shape, dtype) of what it refers to, as TensorFlow's
    handle data: a variable's, so that reading it has a known shape."""

    shape: TensorShape
    dtype: DType
    value: np.ndarray | None = None
    handle_data: tuple[TensorShape, DType] | None = None


class InferenceContext:
    """The node-specific part of shape inference: attrs, and errors naming the node."""

    __slots__ = ("attrs", "node_name", "op_type")

    def __init__(self, attrs: dict[str, Any], node_name: str, op_type: str) -> None:
        self.attrs = attrs
        self.node_name = node_name
        self.op_type = op_type

    def fail(self, message: str) -> NoReturn:
        raise errors.InvalidArgumentError(message, self.node_name, self.op_type)


def shape_from_value(c: InferenceContext, spec: TensorSpec) -> TensorShape:
    """Read a 1-D shape tensor (such as Reshape's ``shape``): -1 entries are unknown dims."""
    if spec.value is None:
        length = spec.shape[0] if spec.shape.rank == 1 else None
        return TensorShape(None if length is None else [None] * length)
    dims = spec.value.reshape(-1).tolist()
    for d in dims:
        if d < -1:
            c.fail(f"Invalid value in tensor used for shape: {d}")
    return as_shape([None if d == -1 else d for d in dims])
