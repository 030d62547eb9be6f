"""TF1 conditionals: Switch, _SwitchN and Merge, run by dead tensors (minigraph.deadness).

A Switch forwards its data to one output and makes the other dead; nodes fed by a dead
value are skipped (their outputs are dead too); a Merge forwards its first live input. So
a ``tf.compat.v1.cond``, or a graph frozen with ``lower_control_flow=True``, runs only its
taken branch. TF1 while loops (Enter, Exit, NextIteration, LoopCond) never reach a plan:
import rewrites each into a functional While (minigraph.functionalize).

These ops are declared stateful, as nothing may fold them: the value a Merge would give
at build time (its first input) is not the one it gives when a branch is dead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph.deadness import DEAD, declare
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import host_array
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, unknown_shape, with_rank
from minigraph.wrappers import make_wrapper_class

BUILDERS: tuple[str, ...] = ()  # TF1 graphs bring these ops; builders write functional ones


def _scalar(ctx: KernelContext, value: Any, what: str) -> Any:
    """A scalar control input read on the host, or TensorFlow's error."""
    v = host_array(ctx, value)
    if v.ndim != 0:
        ctx.fail(f"The {what} input must be a scalar, but it has shape {list(v.shape)}")
    return v


# -- Switch --------------------------------------------------------------------------


def _switch_shape(c: InferenceContext, data: TensorSpec, pred: TensorSpec) -> list[TensorShape]:
    with_rank(pred.shape, 0)
    return [data.shape, data.shape]


SWITCH = define_op(
    "Switch",
    inputs=["data: T", "pred: bool"],
    outputs=["output_false: T", "output_true: T"],
    attrs=["T: type"],
    shape_fn=_switch_shape,
    host_inputs=["pred"],
    is_stateful=True,
    aliases_input=True,
    doc="Forwards ``data`` to ``output_true`` if ``pred`` is true, else to ``output_false``; "
    "the other output is dead, and so is every node that reads it.",
)
declare("Switch", makes_dead=True)


@register_kernel("Switch", "CPU", "GPU")
def _switch_kernel(ctx: KernelContext, data: Any, pred: Any) -> tuple[Any, Any]:
    if bool(_scalar(ctx, pred, "second")):
        return DEAD, data
    return data, DEAD


Switch = make_wrapper_class(SWITCH)


# -- _SwitchN ------------------------------------------------------------------------


def _switch_n_shape(c: InferenceContext, data: TensorSpec, index: TensorSpec) -> list[TensorShape]:
    with_rank(index.shape, 0)
    return [data.shape] * c.attrs["num_outs"]


SWITCH_N = define_op(
    "_SwitchN",
    inputs=["data: T", "output_index: int32"],
    outputs=["outputs: num_outs * T"],
    attrs=["num_outs: int >= 1", "T: type"],
    shape_fn=_switch_n_shape,
    host_inputs=["output_index"],
    is_stateful=True,
    aliases_input=True,
    doc="Forwards ``data`` to output ``output_index`` (the last one when the index is out "
    "of range, as a Case's default branch); the other outputs are dead.",
)
declare("_SwitchN", makes_dead=True)


@register_kernel("_SwitchN", "CPU", "GPU")
def _switch_n_kernel(ctx: KernelContext, data: Any, output_index: Any) -> list[Any]:
    n = ctx.attrs["num_outs"]
    i = int(_scalar(ctx, output_index, "second"))
    if not 0 <= i < n:
        i = n - 1
    outputs = [DEAD] * n
    outputs[i] = data
    return outputs


SwitchN = make_wrapper_class(SWITCH_N)  # TensorFlow's internal op: not in ops' namespace


# -- Merge ---------------------------------------------------------------------------


def _merge_shape(c: InferenceContext, inputs: list[TensorSpec]) -> list[TensorShape]:
    shape = inputs[0].shape
    for x in inputs[1:]:
        if shape.rank is None or x.shape.rank is None or shape.rank != x.shape.rank:
            shape = unknown_shape()
            break
        shape = TensorShape([a if a == b else None for a, b in zip(shape.dims, x.shape.dims)])
    return [shape, TensorShape([])]


MERGE = define_op(
    "Merge",
    inputs=["inputs: N * T"],
    outputs=["output: T", "value_index: int32"],
    attrs=["T: type", "N: int >= 1"],
    shape_fn=_merge_shape,
    host_outputs=["value_index"],
    is_stateful=True,
    aliases_input=True,
    doc="Forwards its first live input and that input's index; dead when all its inputs "
    "are. (TensorFlow forwards the first input to arrive; when several are live, the "
    "first in input order is the one its kernel takes.)",
)
declare("Merge", takes_dead=True)


@register_kernel("Merge", "CPU", "GPU")
def _merge_kernel(ctx: KernelContext, inputs: list[Any]) -> tuple[Any, Any]:
    for i, x in enumerate(inputs):
        if x is not DEAD:
            return x, np.array(i, np.int32)
    return DEAD, DEAD


Merge = make_wrapper_class(MERGE)

__all__ = ["Switch", "Merge"]
