"""Gradients of While and StatelessWhile, by recomputation.

TensorFlow's while_v2 gradient rewrites the forward loop to push every intermediate its
gradient needs onto TensorLists. A minigraph graph is never rewritten, so the gradient of
a loop builds two new loops (docs/training.md, "Control flow"):

1. an *accumulating* copy of the forward loop: the same cond and body (inlined: see
   :func:`minigraph.ops.control_flow_grad.inline_function`), plus an iteration counter
   and one TensorList per loop variable the body changes, onto which each iteration
   pushes the values it starts from;
2. a *backward* loop that runs the counter down to 0, pops one iteration's values,
   recomputes the body on them and takes ``mg.gradients`` of its results with respect to
   its arguments, weighted by the gradients the next iteration passed back.

A loop-invariant input (an RNN's weights, captured by the body) is not pushed: the
backward body reads the loop's input. Its gradient rides in a loop variable of the
backward loop and sums the iterations' gradients, as the body passes the invariant on
unchanged. Integer and bool loop variables (counters, ``maximum_iterations``' count and
limit) are pushed when they change, so the recomputation sees them, and get None.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from minigraph import dtypes
from minigraph.functions import Function
from minigraph.graph import Operation, Output
from minigraph.ops.array_ops import cast, identity
from minigraph.ops.compare_ops import greater
from minigraph.ops.control_flow_grad import inline_function, live_grads, within, zeros_for
from minigraph.ops.control_flow_ops import while_loop
from minigraph.ops.gradients import _differentiable, gradients
from minigraph.ops.list_ops import empty_tensor_list, tensor_list_pop_back, tensor_list_push_back
from minigraph.ops.math_n_ops import add_n
from minigraph.ops.math_ops import add, subtract
from minigraph.ops.shape_ops import reshape, size
from minigraph.ops.tensor_array import _shape_tensor
from minigraph.registry import register_gradient
from minigraph.scope import current_scope
from minigraph.shapes import TensorShape

__all__: list[str] = []


class _Loop:
    """What the gradient needs to know of one forward While node."""

    def __init__(self, op: Operation) -> None:
        self.op = op
        self.cond: Function = op.get_attr("cond")
        self.body: Function = op.get_attr("body")
        self.inputs = list(op.inputs)
        n = len(self.inputs)
        # A variable the body returns as it got it keeps its input value all along.
        self.invariant = [_passed_on(self.body.outputs[k], self.body.inputs[k]) for k in range(n)]
        self.pushed = [k for k in range(n) if not self.invariant[k]]
        self.shapes = [arg.shape for arg in self.body.inputs]  # the shape invariants
        self.diff = [k for k in range(n) if _differentiable(self.inputs[k].dtype)]

    def values(self, changing: Sequence[Output], graph: Any = None) -> list[Output]:
        """All loop variables from the changing ones: the invariants are the loop's
        inputs, captured into ``graph`` when given (an input passed twice is a tensor of
        its own the second time, as the body's arguments are, so that its gradient is
        its own)."""
        out: list[Output] = [None] * len(self.inputs)  # type: ignore[list-item]
        for k, v in zip(self.pushed, changing):
            out[k] = v
        seen: set[Output] = set()
        for k, x in enumerate(self.inputs):
            if self.invariant[k]:
                inner = x if graph is None else graph.capture(x)
                out[k] = identity(inner) if inner in seen else inner
                seen.add(inner)
        return out

    def predicate(self, values: Sequence[Output]) -> Output:
        """The cond's result as a bool scalar (TensorFlow's While takes any tensor: a
        scalar is its truth, another tensor whether it has elements)."""
        pred = inline_function(self.cond, values)[0]
        if pred.dtype != dtypes.bool_:
            pred = cast(pred, dtypes.bool_)  # a number's truth, elementwise
        if pred.shape.rank in (None, 0):
            return pred  # the loop's kernel takes the truth of what it is at run time
        return greater(size(pred), np.int32(0))


def _passed_on(result: Output, arg: Output) -> bool:
    """Whether a body's ``result`` is its argument ``arg`` (through Identity nodes, as
    TensorFlow's bodies return the loop's maximum iteration count)."""
    while result.node.type_string == "Identity":
        result = result.node.inputs[0]
    return result == arg


def _accumulate(loop: _Loop) -> tuple[Output, list[Output]]:
    """The accumulating copy of the loop: its iteration count, and per changing variable
    the list of the values each iteration started from."""
    changing = [loop.inputs[k] for k in loop.pushed]
    stacks = [
        empty_tensor_list(
            _shape_tensor(loop.shapes[k]), np.int32(-1), element_dtype=loop.inputs[k].dtype
        )
        for k in loop.pushed
    ]
    m = len(changing)

    def cond(count: Output, *rest: Output) -> Output:
        return loop.predicate(loop.values(rest[:m]))

    # The body's results may have less specific static shapes than the loop declares (an
    # imported body): a reshape restores them, when it can.
    shapes = [_reshapable(loop.shapes[k]) for k in loop.pushed]

    def body(count: Output, *rest: Output) -> list[Output]:
        values = loop.values(rest[:m])
        pushed = [tensor_list_push_back(s, values[k]) for s, k in zip(rest[m:], loop.pushed)]
        results = inline_function(loop.body, values)
        changed = [_fit(results[k], s) for k, s in zip(loop.pushed, shapes)]
        return [add(count, np.int32(1)), *changed, *pushed]

    invariants = [TensorShape([]), *shapes, *[TensorShape([])] * m]
    out = while_loop(
        cond, body, [np.int32(0), *changing, *stacks], shape_invariants=invariants, name="forward"
    )
    return out[0], list(out[1 + m :])


def _backward(loop: _Loop, count: Output, stacks: list[Output], dys: list[Output]) -> list[Output]:
    """The backward loop: the gradients of the loop's differentiable inputs (``loop.diff``)
    from those of its outputs."""
    d, m = len(dys), len(stacks)
    # A gradient has its variable's shape invariant (a resource's: its variable's shape),
    # which a reshape restores where the gradient's ops lose dims, when it can.
    shapes = [
        _reshapable(g.shape if loop.inputs[k].dtype == dtypes.resource else loop.shapes[k])
        for k, g in zip(loop.diff, dys)
    ]

    def cond(count: Output, *rest: Output) -> Output:
        return greater(count, np.int32(0))

    def body(count: Output, *rest: Output) -> list[Output]:
        grads, rest_stacks = rest[:d], rest[d:]
        popped, changing = [], []
        for s, k in zip(rest_stacks, loop.pushed):
            shape = _shape_tensor(loop.shapes[k])
            s, value = tensor_list_pop_back(s, shape, element_dtype=loop.inputs[k].dtype)
            popped.append(s)
            changing.append(value)
        values = loop.values(changing, current_scope().graph)
        with within(loop.body, loop.op):
            return [subtract(count, np.int32(1)), *gradient_step(values, grads), *popped]

    def gradient_step(values: list[Output], grads: Sequence[Output]) -> list[Output]:
        """One iteration backwards: the body recomputed on ``values``, differentiated."""
        results = inline_function(loop.body, values)
        # An invariant's result is its argument: its gradient passes on as it came, plus
        # what the body's uses of it add (a resource's gradient is its value's).
        wrt = [(k, g) for k, g in zip(loop.diff, grads) if not loop.invariant[k]]
        xs = [values[k] for k in loop.diff]
        dxs = gradients([results[k] for k, _ in wrt], xs, grad_ys=[g for _, g in wrt])
        new = [
            _plus(dx, g) if loop.invariant[k] else dx if dx is not None else zeros_for(x, like=g)
            for k, dx, x, g in zip(loop.diff, dxs, xs, grads)
        ]
        return [_fit(g, s) for g, s in zip(new, shapes)]

    invariants = [TensorShape([]), *shapes, *[TensorShape([])] * m]
    out = while_loop(
        cond, body, [count, *dys, *stacks], shape_invariants=invariants, name="backward"
    )
    return list(out[1 : 1 + d])


def _reshapable(shape: TensorShape) -> TensorShape:
    """``shape`` if a reshape can give a tensor that static shape (one unknown dim at
    most), else an unknown shape."""
    dims = shape.dims
    if dims is None or sum(d is None for d in dims) > 1:
        return TensorShape(None)
    return shape


def _fit(g: Output, shape: TensorShape) -> Output:
    """``g``, reshaped to ``shape`` (see _reshapable) where its own is less specific."""
    want, have = shape.dims, g.shape.dims
    if want is None or (
        have is not None
        and len(have) == len(want)
        and all(d in (None, e) for d, e in zip(want, have))
    ):
        return g
    return reshape(g, np.array([-1 if d is None else d for d in want], np.int32))


def _plus(dx: Output | None, g: Output) -> Output:
    return g if dx is None else add_n([g, dx])


@register_gradient("While")
@register_gradient("StatelessWhile")
def _while_grad(op: Operation, *grads: Output) -> list[Any]:
    """By recomputation: a copy of the loop that pushes each iteration's values, then a
    loop that pops them and runs the body's gradient backwards (docs/training.md)."""
    loop = _Loop(op)
    live = live_grads(grads)
    if not loop.diff or all(live[k] is None for k in loop.diff):
        return [None] * op.num_inputs
    dys = [_start(loop, k, live[k]) for k in loop.diff]
    count, stacks = _accumulate(loop)
    dxs = _backward(loop, count, stacks, dys)
    out: list[Any] = [None] * op.num_inputs
    for k, dx in zip(loop.diff, dxs):
        out[k] = dx
    return out


def _start(loop: _Loop, k: int, grad: Output | None) -> Output:
    """The backward loop's first gradient of variable ``k``: the incoming one, else zeros
    (a resource's: its variable's value's)."""
    return zeros_for(loop.inputs[k]) if grad is None else grad
