"""Gradients of function calls and conditionals: PartitionedCall, StatefulPartitionedCall,
If, StatelessIf, Case and StatelessCase, and TF1's Switch, _SwitchN and Merge (the loops'
are in :mod:`minigraph.ops.while_grad`).

TensorFlow differentiates these ops by rewriting the forward op so that it also returns
the intermediates its gradient needs. A minigraph graph is never rewritten, so the
gradient *recomputes*: the gradient of a call of ``f`` calls a function
``G(inputs..., output grads...)`` whose body is a copy of ``f``'s (:func:`inline_function`)
followed by ``mg.gradients`` of its results with respect to its arguments. The forward
body runs once more in the backward pass, which costs time but keeps no intermediates
alive between the two passes; a body with stateful random ops draws new numbers when it
runs again (use the stateless random ops in a body you differentiate).

A conditional's gradient is the same op on the same predicate or branch index, whose
branches are each forward branch's gradient body; an input that one branch differentiates
and another does not gets zeros from the latter. The predicate and index get None.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from minigraph import dtypes, errors
from minigraph.functions import ARG_OP, FuncGraph, Function, unique_function_name
from minigraph.graph import Node, Operation, Output
from minigraph.opaque import is_opaque
from minigraph.ops import switch_merge_ops  # noqa: F401  (declares Switch and Merge)
from minigraph.ops.array_ops import zeros, zeros_like
from minigraph.ops.compare_ops import equal
from minigraph.ops.control_flow_ops import _stateful
from minigraph.ops.gradients import gradients
from minigraph.registry import register_gradient
from minigraph.scope import current_scope
from minigraph.wrappers import apply_op

__all__ = ["inline_function", "GradientBody", "live_grads", "zeros_for", "within"]


# -- inlining a body ---------------------------------------------------------------------


def inline_function(fn: Function, args: Sequence[Output]) -> list[Output]:
    """Copy ``fn``'s body into the graph being built (the current scope), its arguments
    bound to ``args``; the copies of its results.

    Only the nodes the results need (through data and control edges) are copied, in the
    body's order, each with its attrs (those inferred from the inputs are inferred again),
    device and control inputs; a call or loop in the body keeps its Function attrs.
    """
    if len(args) != len(fn.inputs):
        raise errors.InvalidArgumentError(
            f"function {fn.name} takes {len(fn.inputs)} arguments, got {len(args)}"
        )
    values: dict[tuple[Node, int], Output] = {(x.node, x.index): a for x, a in zip(fn.inputs, args)}
    copies: dict[Node, Node] = {x.node: a.node for x, a in zip(fn.inputs, args)}
    needed = _ancestors(fn.outputs)
    scope = current_scope()
    for node in fn.graph.nodes():
        if node not in needed or node in copies:
            continue
        if node.type_string == ARG_OP:
            raise errors.InvalidArgumentError(
                f"function {fn.name} reads argument {node.name}, which is not in its signature",
                node.name,
                ARG_OP,
            )
        if is_opaque(node.op_def):
            raise errors.UnimplementedError(
                f"cannot copy {node.name} of function {fn.name}: minigraph has no op "
                f"{node.type_string}",
                node.name,
                node.type_string,
            )
        op = _copy_node(node, values, copies, scope)
        copies[node] = op.node
        for i, out in enumerate(op.outputs):
            values[(node, i)] = out
    return [values[(x.node, x.index)] for x in fn.outputs]


def _ancestors(outputs: Sequence[Output]) -> set[Node]:
    """The nodes ``outputs`` depend on, through data and control edges (theirs included)."""
    seen: set[Node] = set()
    stack = [x.node for x in outputs]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(x.node for x in node.inputs)
        stack.extend(node.control_inputs)
    return seen


def _copy_node(
    node: Node, values: dict[tuple[Node, int], Output], copies: dict[Node, Node], scope: Any
) -> Operation:
    """``node`` made again in ``scope`` from the copies of its inputs."""
    flat = [values[(x.node, x.index)] for x in node.inputs]
    grouped: list[Any] = []
    pos = 0
    for length in node.input_lengths:
        if length is None:
            grouped.append(flat[pos])
            pos += 1
        else:
            grouped.append(flat[pos : pos + length])
            pos += length
    op_def = node.op_def
    declared = {a.name for a in op_def.attrs}
    inferred = op_def.inferred_attrs()
    attrs = {k: v for k, v in node.attrs.items() if k in declared and k not in inferred}
    sub = scope.with_op_name(node.name)
    if node.requested_device:
        sub = sub.with_device(node.requested_device)
    controls = [Operation(copies[c]) for c in node.control_inputs]
    if controls:
        sub = sub.with_control_dependencies(controls)
    return apply_op(node.type_string, sub, grouped, attrs)


# -- gradient bodies -----------------------------------------------------------------------


@contextlib.contextmanager
def within(fn: Function, caller: Operation) -> Iterator[None]:
    """Errors raised while differentiating a copy of ``fn``'s body say where the node
    they name is: in ``fn``, which ``caller`` runs."""
    try:
        yield
    except errors.OpError as e:
        where = f"in function {fn.name} of {caller.type} '{caller.name}'"
        raise type(e)(f"{e.message} ({where})", e.node_name, e.op_type) from e


def live_grads(grads: Sequence[Output | None]) -> list[Output | None]:
    """The incoming gradients that carry a value: None for none, and None for a resource
    output's (the walk fills a resource output with a meaningless ZerosLike; a gradient
    that reaches it through a read is a float tensor)."""
    return [None if g is None or g.dtype == dtypes.resource else g for g in grads]


def zeros_for(x: Output, like: Output | None = None) -> Output:
    """Zeros as the gradient of ``x``: shaped as x, or for a resource as its variable's
    value (of ``like``'s dtype when given, else the handle's)."""
    if x.dtype != dtypes.resource:
        return zeros_like(x)
    data = x.spec.handle_data
    dtype = like.dtype if like is not None else data[1] if data is not None else None
    if dtype is None:
        raise errors.InvalidArgumentError(
            f"cannot make a zero gradient for resource {x.name}: its variable's dtype is unknown",
            x.node.name,
        )
    if data is not None and data[0].is_fully_defined():
        return zeros(data[0].as_list(), dtype)
    read = apply_op("ReadVariableOp", None, [x], {"dtype": dtype}).outputs[0]
    return zeros_like(read)


class GradientBody:
    """``G(inputs..., grads...)``: a copy of ``fn``'s body followed by the gradients of its
    results (weighted by ``grads``, one argument per live incoming gradient) with respect
    to its arguments. :meth:`function` makes it a Function returning chosen gradients."""

    def __init__(self, fn: Function, caller: Operation, grads: Sequence[Output | None]) -> None:
        outer = caller.graph
        self.name = unique_function_name(outer, f"{fn.name}_grad")
        self.graph = FuncGraph(self.name, outer)
        with self.graph.as_default(), within(fn, caller):
            self.args = [
                self.graph.add_arg(x.dtype, x.shape, f"input_{i}", x.spec.handle_data)
                for i, x in enumerate(fn.inputs)
            ]
            live = [(j, g) for j, g in enumerate(grads) if g is not None]
            self.grad_args = [
                self.graph.add_arg(g.dtype, g.shape.merge_with(fn.outputs[j].shape), f"grad_{j}")
                if g.shape.is_compatible_with(fn.outputs[j].shape)
                else self.graph.add_arg(g.dtype, g.shape, f"grad_{j}")
                for j, g in live
            ]
            outs = inline_function(fn, self.args)
            ys = [outs[j] for j, _ in live]
            self.grads: list[Output | None] = (
                gradients(ys, self.args, grad_ys=self.grad_args) if ys else [None] * len(self.args)
            )

    def function(self, wanted: Sequence[int], like: Sequence[Output | None] = ()) -> Function:
        """The body returning the gradients of arguments ``wanted`` (zeros where it has
        none, of the dtype of ``like[i]`` for a resource argument), added to the library."""
        with self.graph.as_default():
            outputs = [
                g if (g := self.grads[i]) is not None else zeros_for(self.args[i], _at(like, i))
                for i in wanted
            ]
        fn = Function(self.name, self.graph, outputs, inputs=[*self.args, *self.grad_args])
        self.graph.outer_graph.library[self.name] = fn
        return fn


def _at(items: Sequence[Any], i: int) -> Any:
    return items[i] if i < len(items) else None


def _scattered(n: int, wanted: Sequence[int], results: Sequence[Output]) -> list[Any]:
    """``n`` gradients: the gradient op's results at ``wanted``, else None."""
    out: list[Any] = [None] * n
    for i, r in zip(wanted, results):
        out[i] = r
    return out


# -- PartitionedCall, StatefulPartitionedCall ----------------------------------------------


@register_gradient("PartitionedCall")
@register_gradient("StatefulPartitionedCall")
def _call_grad(op: Operation, *grads: Output) -> list[Any]:
    """A call of ``f``'s gradient body on the call's inputs and the live gradients."""
    live = live_grads(grads)
    body = GradientBody(op.get_attr("f"), op, live)
    wanted = [i for i, g in enumerate(body.grads) if g is not None]
    if not wanted:
        return [None] * op.num_inputs
    fn = body.function(wanted)
    op_type = "StatefulPartitionedCall" if _stateful(fn) else "PartitionedCall"
    inputs = [*op.inputs, *(g for g in live if g is not None)]
    call = apply_op(op_type, None, [inputs], {"f": fn, "Tout": fn.output_dtypes})
    return _scattered(op.num_inputs, wanted, call.outputs)


# -- If, StatelessIf, Case, StatelessCase ----------------------------------------------------


def _branches_grad(
    op: Operation, branches: Sequence[Function], grads: Sequence[Output]
) -> tuple[list[Function], list[int], list[Output]]:
    """Each branch's gradient body, returning the gradients of the inputs (after the
    selector) that any branch differentiates; those, and the gradient op's inputs."""
    live = live_grads(grads)
    bodies = [GradientBody(fn, op, live) for fn in branches]
    n = op.num_inputs - 1
    wanted = [i for i in range(n) if any(b.grads[i] is not None for b in bodies)]
    like = [next((b.grads[i] for b in bodies if b.grads[i] is not None), None) for i in range(n)]
    fns = [b.function(wanted, like) for b in bodies]
    return fns, wanted, [*op.inputs[1:], *(g for g in live if g is not None)]


def _branch_op(op: Operation, fns: Sequence[Function], inputs: list[Output], attrs: dict) -> Any:
    """The gradient op: If or Case, stateful when a gradient body is (TensorFlow's rule)."""
    kind = op.type.removeprefix("Stateless")
    attrs["Tout"] = fns[0].output_dtypes
    op_type = kind if _stateful(*fns) else f"Stateless{kind}"
    return apply_op(op_type, None, [op.inputs[0], inputs], attrs)


@register_gradient("If")
@register_gradient("StatelessIf")
def _if_grad(op: Operation, *grads: Output) -> list[Any]:
    """The same If on the same predicate, over the branches' gradient bodies."""
    branches = [op.get_attr("then_branch"), op.get_attr("else_branch")]
    fns, wanted, inputs = _branches_grad(op, branches, grads)
    if not wanted:
        return [None] * op.num_inputs
    attrs = {"then_branch": fns[0], "else_branch": fns[1]}
    result = _branch_op(op, fns, inputs, attrs)
    return [None, *_scattered(op.num_inputs - 1, wanted, result.outputs)]


@register_gradient("Case")
@register_gradient("StatelessCase")
def _case_grad(op: Operation, *grads: Output) -> list[Any]:
    """The same Case on the same branch index, over the branches' gradient bodies."""
    fns, wanted, inputs = _branches_grad(op, op.get_attr("branches"), grads)
    if not wanted:
        return [None] * op.num_inputs
    result = _branch_op(op, fns, inputs, {"branches": fns})
    return [None, *_scattered(op.num_inputs - 1, wanted, result.outputs)]


# -- Switch, _SwitchN, Merge (TF1 conditionals) ----------------------------------------------------
#
# Imported TF1 conds (and the conds in a TF1 loop's body) run by dead tensors. Their
# gradients are TensorFlow's for a Switch or Merge outside any control-flow context (an
# imported graph has none): the gradient graph is a conditional of its own, whose untaken
# branch is dead. ZerosLike of a dead output is dead too, so a Merge takes the live one.


@register_gradient("Switch")
def _switch_grad(op: Operation, false_grad: Output, true_grad: Output) -> list[Any]:
    """The branch taken's gradient, each gated by the predicate again and merged."""
    pred = op.inputs[1]
    gated = [
        _switch(false_grad, pred).outputs[0],
        _switch(true_grad, pred).outputs[1],
    ]
    return [_merge(gated), None]


@register_gradient("_SwitchN")
def _switch_n_grad(op: Operation, *grads: Output) -> list[Any]:
    """As Switch's: each output's gradient gated by the index again, merged (TensorFlow
    has none: it lowers only its own Case this way)."""
    index = op.inputs[1]
    n = len(grads)
    gated = [
        apply_op("_SwitchN", None, [g, index], {"num_outs": n}).outputs[i]
        for i, g in enumerate(grads)
    ]
    return [_merge(gated), None]


@register_gradient("Merge")
def _merge_grad(op: Operation, grad: Output, unused_index: Output | None) -> list[Any]:
    """The gradient goes to the input the Merge forwarded (its value_index)."""
    taken = op.outputs[1]
    return [_switch(grad, equal(taken, np.int32(i))).outputs[1] for i in range(op.num_inputs)]


def _switch(data: Output, pred: Output) -> Operation:
    return apply_op("Switch", None, [data, pred], {})


def _merge(inputs: list[Output]) -> Output:
    return apply_op("Merge", None, [inputs], {}).outputs[0]
