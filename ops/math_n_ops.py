"""AddN: the elementwise sum of N tensors of one shape (what gradients sum with).

TensorFlow's shape function merges the inputs' shapes (no broadcasting: a mismatch is
an error at build time); its kernel sums in input order, which minigraph follows so
that float results match.
"""

from __future__ import annotations

from typing import Any

from minigraph import dtypes
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import type_set
from minigraph.ops.tensor_list import add_lists
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import ShapeError, TensorShape, merge
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = ("add_n",)
NUMBER_OR_VARIANT = type_set([*dtypes.NUMBER_TYPES, dtypes.variant])  # TF's AddN allows lists


def _add_n_shape(c: InferenceContext, inputs: list[TensorSpec]) -> TensorShape:
    shape = inputs[0].shape
    for i, x in enumerate(inputs[1:], 1):
        try:
            shape = merge(shape, x.shape)
        except ShapeError as e:
            c.fail(f"Shapes of all inputs must match: inputs[0] and inputs[{i}]: {e}")
    return shape


ADD_N = define_op(
    "AddN",
    inputs=["inputs: N * T"],
    outputs=["sum: T"],
    attrs=["N: int >= 1", f"T: {NUMBER_OR_VARIANT}"],
    shape_fn=_add_n_shape,
    doc="""
Adds all input tensors elementwise; every input has the same shape (no broadcasting).

>>> import numpy as np, minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     s = mg.add_n([np.float32([1, 2]), np.float32([3, 4]), np.float32([5, 6])])
>>> mg.Session(g).run(s)
array([ 9., 12.], dtype=float32)
""",
)


@register_kernel("AddN", "CPU", "GPU")
def _add_n_kernel(ctx: KernelContext, inputs: list[Any]) -> Any:
    if inputs[0].dtype == object:  # TensorLists: the gradients of a list, summed
        return add_lists(ctx, inputs)
    shape = inputs[0].shape
    for i, x in enumerate(inputs[1:], 1):
        if x.shape != shape:
            ctx.fail(
                f"Inputs to operation AddN must have the same size and shape.  Input 0: "
                f"{list(shape)} != input {i}: {list(x.shape)}"
            )
    if len(inputs) == 1:
        return inputs[0].copy()
    total = ctx.xp.add(inputs[0], inputs[1], out=ctx.empty(shape, inputs[0].dtype))
    for x in inputs[2:]:
        ctx.xp.add(total, x, out=total)
    return total


AddN = make_wrapper_class(ADD_N)
_add_n = make_builder(ADD_N)


def add_n(inputs: Any, name: str | None = None) -> Any:
    """The elementwise sum of a list of tensors, as ``tf.math.add_n``."""
    if not isinstance(inputs, list | tuple) or not inputs:
        raise ValueError("inputs must be a non-empty list of tensors with the same shape")
    return _add_n(list(inputs), name=name or "AddN")
