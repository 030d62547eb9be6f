"""Symbolic gradients in graph mode: ``mg.gradients`` and the C++ API's
``AddSymbolicGradients``, as TensorFlow's ``gradients_util`` builds them.

The forward ops between ``xs`` and ``ys`` are visited in reverse topological order; each
op's registered gradient function (``minigraph.registry.register_gradient``, one block
per op in the ``*_grad`` module beside its family) turns the gradients of its outputs into
gradients of its inputs, and the gradients that reach one tensor along several paths are
summed with one AddN. Ops are built under ``gradients/<forward op>_grad`` and on the
forward op's device, so a gradient graph reads like TensorFlow's.

As in TensorFlow: an ``x`` that no ``y`` depends on gets None; integer and bool tensors
carry no gradient; ``stop_gradients`` and ``StopGradient`` ops are treated as constants;
an op with no registered gradient on the path is an error naming its type and node.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from minigraph import errors
from minigraph.dtypes import DType
from minigraph.graph import Node, Operation, Output
from minigraph.ops.array_ops import ones_like, zeros_like
from minigraph.ops.math_n_ops import add_n
from minigraph.ops.variables import Variable
from minigraph.registry import lookup_gradient
from minigraph.scope import Scope, current_scope, default_scope
from minigraph.wrappers import as_output, convert_to_output

__all__ = ["gradients", "AddSymbolicGradients"]


def _differentiable(dtype: DType) -> bool:
    """Whether gradients flow through tensors of ``dtype`` (TensorFlow's
    _IsBackpropagatable: floats, complex numbers, resources, which a variable's
    gradient reaches through ReadVariableOp, and variants: a TensorList's gradient is a
    TensorList)."""
    return dtype.is_floating or dtype.is_complex or dtype.name in ("resource", "variant")


def _as_tensor(value: Any, what: str) -> Output:
    if isinstance(value, Variable):  # its handle: every read of it leads there
        return value.handle
    out = as_output(value)
    if out is None:
        raise TypeError(
            f"{what} must be tensors (Outputs or variables), got {type(value).__name__}"
        )
    return out


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def gradients(
    ys: Any,
    xs: Any,
    grad_ys: Any = None,
    name: str = "gradients",
    stop_gradients: Any = None,
) -> list[Output | None]:
    """The symbolic partial derivatives of ``sum(ys)`` with respect to each of ``xs``.

    Args:
        ys: a tensor or a list of tensors to differentiate.
        xs: a tensor, a variable or a list of them.
        grad_ys: the gradients of ``ys`` (default: ones shaped as each y), one per y;
            None entries take the default.
        name: the name scope of the gradient ops.
        stop_gradients: tensors held constant (no gradient flows through them).

    Returns:
        One gradient per x, shaped as x, or None where no y depends on x (or x is an
        integer tensor).

    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     x = mg.constant(np.float32([1.0, 2.0, 3.0]))
    ...     y = x * x  # the gradient of sum(y)
    ...     (dx,) = mg.gradients(y, x)
    >>> mg.Session(g).run(dx)
    array([2., 4., 6.], dtype=float32)
    """
    y_list = [_as_tensor(y, "ys") for y in _listed(ys)]
    x_list = [_as_tensor(x, "xs") for x in _listed(xs)]
    if grad_ys is None:
        grad_ys = [None] * len(y_list)
    grad_y_list = _listed(grad_ys)
    if len(grad_y_list) != len(y_list):
        raise ValueError(
            f"Passed {len(grad_y_list)} grad_ys for {len(y_list)} ys: give one per y (or None)"
        )
    stops = {_as_tensor(s, "stop_gradients").node for s in _listed(stop_gradients or [])}
    if not y_list:
        return [None] * len(x_list)
    graph = y_list[0].graph
    for t in (*y_list, *x_list):
        if t.graph is not graph:
            raise errors.InvalidArgumentError(
                f"{t.name} is from a different graph than {y_list[0].name}", t.node.name
            )
    scope = current_scope()
    if scope.graph is not graph:
        scope = Scope(graph)
    with default_scope(scope.new_sub_scope(name)):
        return _backprop(y_list, x_list, grad_y_list, stops)


def _between(ys: list[Output], xs: list[Output], stops: set[Node]) -> set[Node]:
    """The nodes on a data path from some x to some y (both ends included)."""
    reached: set[Node] = set()
    stack = [x.node for x in xs]
    while stack:
        node = stack.pop()
        if node in reached:
            continue
        reached.add(node)
        if node in stops:
            continue
        for out in Operation(node).outputs:
            stack.extend(c.node for c in out.consumers())
    between: set[Node] = set()
    stack = [y.node for y in ys if y.node in reached]
    while stack:
        node = stack.pop()
        if node in between:
            continue
        between.add(node)
        if node in stops:
            continue
        stack.extend(x.node for x in node.inputs if x.node in reached)
    return between


def _backprop(
    ys: list[Output], xs: list[Output], grad_ys: list[Any], stops: set[Node]
) -> list[Output | None]:
    between = _between(ys, xs, stops)
    # How many gradient contributions each node still waits for: one per data edge
    # to a consumer inside ``between`` that passes gradients on.
    pending = {n: 0 for n in between}
    for n in between:
        if n in stops:
            continue
        for x in n.inputs:
            if x.node in pending:
                pending[x.node] += 1
    grads: dict[Output, list[Output]] = {}
    for i, (y, gy) in enumerate(zip(ys, grad_ys)):
        if gy is None and y.shape.is_fully_defined() and y.shape.num_elements() == 1:
            # a scalar loss: a constant 1, as TensorFlow's Fill is after constant folding
            g = convert_to_output(np.ones(y.shape.as_list(), y.dtype.np), name=f"grad_ys_{i}")
        elif gy is None:
            g = ones_like(y, name=f"grad_ys_{i}")
        else:
            g = convert_to_output(gy, dtype=y.dtype, name=f"grad_ys_{i}")
            if not y.shape.is_compatible_with(g.shape):
                raise errors.InvalidArgumentError(
                    f"grad_ys[{i}] has shape {g.shape}, incompatible with ys[{i}] {y.name} "
                    f"of shape {y.shape}",
                    g.node.name,
                )
        if y.node in between:
            grads.setdefault(y, []).append(g)
    ready = [n for n in between if pending[n] == 0]
    while ready:
        node = ready.pop()
        if node in stops:
            continue
        upstream = [i for i, x in enumerate(node.inputs) if x.node in pending]
        if not upstream:  # an x with nothing of interest above it
            continue
        op = Operation(node)
        in_grads = _call_gradient(op, [_summed(grads.get(o)) for o in op.outputs])
        for i in upstream:
            x = node.inputs[i]
            g = in_grads[i] if in_grads else None
            if g is not None and _differentiable(x.dtype):
                grads.setdefault(x, []).append(_as_tensor(g, "gradient functions' results"))
            pending[x.node] -= 1
            if pending[x.node] == 0:
                ready.append(x.node)
    return [_summed(grads.get(x)) if _differentiable(x.dtype) else None for x in xs]


def _summed(parts: list[Output] | None) -> Output | None:
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return add_n(parts, name="AddN")


def _call_gradient(op: Operation, out_grads: list[Output | None]) -> list[Any]:
    """The input gradients of one forward op, from its outputs' gradients (empty when none
    flows: no output has a gradient, or the op is not differentiable)."""
    if all(g is None for g in out_grads):
        return []
    found, fn = lookup_gradient(op.type)
    if not found:
        raise errors.NoGradientError(
            f"No gradient defined for operation '{op.name}' (op type: {op.type})",
            op.name,
            op.type,
        )
    if fn is None:  # declared not differentiable
        return []
    with default_scope(_grad_scope(op)):
        filled = [
            g if g is not None else zeros_like(o) if _differentiable(o.dtype) else None
            for g, o in zip(out_grads, op.outputs)
        ]
        result = fn(op, *filled)
    result = list(result) if isinstance(result, list | tuple) else [result]
    if len(result) != op.num_inputs:
        raise errors.InternalError(
            f"the gradient function of {op.type} returned {len(result)} gradients for "
            f"{op.num_inputs} inputs",
            op.name,
            op.type,
        )
    return result


def _grad_scope(op: Operation) -> Scope:
    scope = current_scope()
    sub = scope.new_sub_scope(f"{op.name}_grad")
    return sub.with_device(op.device or None) if op.device else sub


def AddSymbolicGradients(  # noqa: N802  (the C++ API's name)
    scope: Scope,
    outputs: Sequence[Any],
    inputs: Sequence[Any],
    grad_inputs: Sequence[Any] | None = None,
) -> list[Output]:
    """The C++ API's ``AddSymbolicGradients``: the gradients of ``outputs`` with respect
    to ``inputs``, given ``grad_inputs`` (default: ones), built in ``scope``.

    As TensorFlow's C++ builder, an input that no output depends on is an
    InvalidArgumentError (``mg.gradients`` returns None for it instead).
    """
    outs = [_as_tensor(o, "outputs") for o in outputs]
    ins = [_as_tensor(i, "inputs") for i in inputs]
    if grad_inputs is not None and len(grad_inputs) != len(outs):
        raise errors.InvalidArgumentError("Must specify a gradient input for each output.")
    reachable = _between(outs, ins, set())
    for i in ins:
        if i.node not in reachable:
            raise errors.InvalidArgumentError(
                f"Cannot compute the partial derivative for node '{i.node.name}' as it's "
                "unreachable from the output node(s).",
                i.node.name,
                i.node.type_string,
            )
    with default_scope(scope):
        result = gradients(outs, ins, grad_ys=grad_inputs)
    missing = [i.name for i, g in zip(ins, result) if g is None]
    if missing:
        raise errors.InvalidArgumentError(
            f"No gradient flows to {', '.join(missing)}: integer inputs or ops without "
            "gradients on every path"
        )
    return [g for g in result if g is not None]
