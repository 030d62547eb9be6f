"""Functional control flow and function calls: PartitionedCall, StatefulPartitionedCall,
While, StatelessWhile, If, StatelessIf, Case, StatelessCase; and their builders
``mg.while_loop``, ``mg.cond``, ``mg.case``, ``mg.switch_case``.

Each op holds its bodies as :class:`~minigraph.functions.Function` attrs and runs them
through ``Function.call``: a body is planned once per device and reused for every call
and every iteration. A loop's predicate is read with one scalar copy per iteration; a
loop can be interrupted (Ctrl-C) between iterations, and a finished iteration's values
are freed as the next one replaces them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minigraph import dtypes, errors
from minigraph.functions import ARG_OP, FuncGraph, Function, LoopRun, unique_function_name
from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.array_ops import cast
from minigraph.ops.compare_ops import less, logical_and
from minigraph.ops.reduction_ops import argmax
from minigraph.ops.slice_ops import concat, stack
from minigraph.registry import define_op, register_kernel
from minigraph.scope import current_scope
from minigraph.shapes import TensorShape, as_shape, unknown_shape
from minigraph.transfer import to_host
from minigraph.wrappers import apply_op, convert_to_output, make_wrapper_class

BUILDERS = ("while_loop", "cond", "case", "switch_case")

__all__ = [
    *BUILDERS,
    "PartitionedCall",
    "StatefulPartitionedCall",
    "While",
    "StatelessWhile",
    "If",
    "StatelessIf",
    "Case",
    "StatelessCase",
]


# -- shared: signatures, results, predicates -------------------------------------------


def _check_signature(
    c: InferenceContext, fn: Function, what: str, in_types: Sequence[Any], out_types: Sequence[Any]
) -> None:
    """The call's dtypes against the function's: a mismatch fails at build time."""

    def names(ts: Sequence[Any]) -> str:
        return "[" + ", ".join(dtypes.as_dtype(t).name for t in ts) + "]"

    if list(in_types) != fn.input_dtypes:
        c.fail(
            f"{what} function {fn.name} takes {names(fn.input_dtypes)}, the node passes "
            f"{names(in_types)}"
        )
    if out_types is not None and list(out_types) != fn.output_dtypes:
        c.fail(
            f"{what} function {fn.name} returns {names(fn.output_dtypes)}, the node "
            f"declares {names(out_types)}"
        )


def _relaxed(shapes: Sequence[TensorShape]) -> TensorShape:
    """The most specific shape that every one of ``shapes`` has (a dim that differs is
    unknown; ranks that differ: unknown rank), as TensorFlow relaxes branch shapes."""
    first = shapes[0]
    if first.rank is None or any(s.rank != first.rank for s in shapes):
        return unknown_shape()
    dims = [d if all(s.dims[i] == d for s in shapes) else None for i, d in enumerate(first.dims)]
    return TensorShape(dims)


def _declared(c: InferenceContext, inferred: list[TensorShape]) -> list[TensorShape]:
    """``output_shapes`` where the node declares them (TensorFlow's graphs do), merged with
    what inference found; else what inference found."""
    declared = c.attrs.get("output_shapes") or ()
    if len(declared) != len(inferred):
        return inferred
    merged = []
    for i, (d, s) in enumerate(zip(declared, inferred)):
        if not d.is_compatible_with(s):
            c.fail(f"output {i}: output_shapes says {d}, the body gives {s}")
        merged.append(d.merge_with(s))
    return merged


def _fresh(
    xp: Any, results: Sequence[Any], inputs: Sequence[Any], borrowed: frozenset[int]
) -> list[Any]:
    """The results as buffers of their own. The plan takes a step's outputs for new
    buffers that a later step may overwrite in place; a body may return an argument (a
    pass-through), one value twice or a constant of its own (``borrowed``: see
    Function.borrowed), so such a result is copied."""
    out: list[Any] = []
    for i, r in enumerate(results):
        if r.dtype != object and (
            i in borrowed
            or any(xp.may_share_memory(r, a) for a in (*inputs, *out) if a.dtype != object)
        ):
            r = r.copy()
        out.append(r)
    return out


def _to_bool(ctx: KernelContext, value: Any) -> bool:
    """TensorFlow's ToBool of a predicate: a scalar is its truth; any other tensor is true
    when it has elements. One scalar copies to the host (the only sync of a GPU loop)."""
    if value.ndim == 0:
        return bool(to_host(value))
    return value.size > 0


# -- PartitionedCall, StatefulPartitionedCall --------------------------------------------


def _call_shape(c: InferenceContext, args: list[TensorSpec]) -> list[TensorShape]:
    f = c.attrs["f"]
    _check_signature(c, f, "the", [a.dtype for a in args], c.attrs["Tout"])
    return f.output_shapes()


CALL_OPS = {
    op: define_op(
        op,
        inputs=["args: Tin"],
        outputs=["output: Tout"],
        attrs=[
            "Tin: list(type) >= 0",
            "Tout: list(type) >= 0",
            "f: func",
            "config: string = ''",
            "config_proto: string = ''",
            "executor_type: string = ''",
        ],
        shape_fn=_call_shape,
        is_stateful=op.startswith("Stateful"),
        doc="Calls function ``f`` on ``args``; its results.",
    )
    for op in ("PartitionedCall", "StatefulPartitionedCall")
}


@register_kernel("PartitionedCall", "CPU", "GPU")
@register_kernel("StatefulPartitionedCall", "CPU", "GPU")
def _call_kernel(ctx: KernelContext, args: list[Any]) -> list[Any]:
    f = ctx.attrs["f"]
    return _fresh(ctx.xp, f.call(ctx, args), args, f.borrowed(ctx))


PartitionedCall = make_wrapper_class(CALL_OPS["PartitionedCall"])
StatefulPartitionedCall = make_wrapper_class(CALL_OPS["StatefulPartitionedCall"])


# -- While, StatelessWhile -------------------------------------------------------------


def _while_shape(c: InferenceContext, inputs: list[TensorSpec]) -> list[TensorShape]:
    cond, body = c.attrs["cond"], c.attrs["body"]
    types = [x.dtype for x in inputs]
    _check_signature(c, cond, "cond", types, None)
    _check_signature(c, body, "body", types, types)
    if len(cond.outputs) != 1:
        c.fail(f"cond function {cond.name} returns {len(cond.outputs)} values, not 1")
    for x, arg in zip(inputs, body.inputs):
        if not arg.shape.is_compatible_with(x.shape):
            c.fail(f"loop input of shape {x.shape} enters body argument {arg.name} of {arg.shape}")
    # The loop's outputs have the shapes its body's arguments allow (the invariants).
    return _declared(c, [arg.shape for arg in body.inputs])


WHILE_OPS = {
    op: define_op(
        op,
        inputs=["input: T"],
        outputs=["output: T"],
        attrs=[
            "T: list(type) >= 0",
            "cond: func",
            "body: func",
            "output_shapes: list(shape) = []",
            "parallel_iterations: int = 10",
        ],
        shape_fn=_while_shape,
        is_stateful=op == "While",
        doc="``output = input; while cond(*output): output = body(*output)``. "
        "``parallel_iterations`` is accepted and ignored: iterations run one by one.",
    )
    for op in ("While", "StatelessWhile")
}


@register_kernel("While", "CPU", "GPU")
@register_kernel("StatelessWhile", "CPU", "GPU")
def _while_kernel(ctx: KernelContext, inputs: list[Any]) -> list[Any]:
    loop = LoopRun(ctx.attrs["body"], ctx)
    cond, body = ctx.attrs["cond"].caller(ctx, "cond"), loop.caller("body")
    values, i = list(inputs), 0
    while _to_bool(ctx, cond(values, i)[0]):
        values = body(values, i)  # the last iteration's values are freed
        i += 1
    return _fresh(ctx.xp, values, inputs, loop.borrowed() if i else frozenset())


While = make_wrapper_class(WHILE_OPS["While"])
StatelessWhile = make_wrapper_class(WHILE_OPS["StatelessWhile"])


# -- If, StatelessIf, Case, StatelessCase --------------------------------------------------


def _branches_shape(
    c: InferenceContext, branches: Sequence[Function], inputs: list[TensorSpec]
) -> list[TensorShape]:
    for fn in branches:
        _check_signature(c, fn, "branch", [x.dtype for x in inputs], c.attrs["Tout"])
    n = len(c.attrs["Tout"])
    return _declared(c, [_relaxed([fn.outputs[i].shape for fn in branches]) for i in range(n)])


def _if_shape(c: InferenceContext, pred: TensorSpec, inputs: list[TensorSpec]) -> Any:
    return _branches_shape(c, [c.attrs["then_branch"], c.attrs["else_branch"]], inputs)


def _case_shape(c: InferenceContext, index: TensorSpec, inputs: list[TensorSpec]) -> Any:
    if index.shape.rank not in (None, 0):
        c.fail(f"branch_index must be a scalar, got shape {index.shape}")
    return _branches_shape(c, c.attrs["branches"], inputs)


_BRANCH_ATTRS = ["Tin: list(type) >= 0", "Tout: list(type) >= 0"]
IF_OPS = {
    op: define_op(
        op,
        inputs=["cond: Tcond", "input: Tin"],
        outputs=["output: Tout"],
        attrs=[
            "Tcond: type",
            *_BRANCH_ATTRS,
            "then_branch: func",
            "else_branch: func",
            "output_shapes: list(shape) = []",
        ],
        shape_fn=_if_shape,
        host_inputs=["cond"],
        is_stateful=op == "If",
        doc="``then_branch(*input)`` if ``cond`` (TensorFlow's truth: a scalar's value, "
        "else whether it has elements), else ``else_branch(*input)``.",
    )
    for op in ("If", "StatelessIf")
}
CASE_OPS = {
    op: define_op(
        op,
        inputs=["branch_index: int32", "input: Tin"],
        outputs=["output: Tout"],
        attrs=[*_BRANCH_ATTRS, "branches: list(func) >= 1", "output_shapes: list(shape) = []"],
        shape_fn=_case_shape,
        host_inputs=["branch_index"],
        is_stateful=op == "Case",
        doc="``branches[branch_index](*input)``; an index out of range runs the last branch.",
    )
    for op in ("Case", "StatelessCase")
}


@register_kernel("If", "CPU", "GPU")
@register_kernel("StatelessIf", "CPU", "GPU")
def _if_kernel(ctx: KernelContext, pred: Any, inputs: list[Any]) -> list[Any]:
    which = "then" if _to_bool(ctx, pred) else "else"
    branch = ctx.attrs[f"{which}_branch"]
    return _fresh(ctx.xp, branch.call(ctx, inputs, which), inputs, branch.borrowed(ctx))


@register_kernel("Case", "CPU", "GPU")
@register_kernel("StatelessCase", "CPU", "GPU")
def _case_kernel(ctx: KernelContext, index: np.ndarray, inputs: list[Any]) -> list[Any]:
    branches = ctx.attrs["branches"]
    i = int(index)
    i = i if 0 <= i < len(branches) else len(branches) - 1
    branch = branches[i]
    return _fresh(ctx.xp, branch.call(ctx, inputs, f"branch{i}"), inputs, branch.borrowed(ctx))


If = make_wrapper_class(IF_OPS["If"])
StatelessIf = make_wrapper_class(IF_OPS["StatelessIf"])
Case = make_wrapper_class(CASE_OPS["Case"])
StatelessCase = make_wrapper_class(CASE_OPS["StatelessCase"])


# -- builders: tracing bodies -----------------------------------------------------------


class _Traced:
    """A body traced from a Python function: its graph, declared arguments and results."""

    def __init__(
        self,
        name: str,
        fn: Callable[..., Any],
        specs: Sequence[tuple[Any, ...]],
        outer: Any,
        node: str,
        op_type: str,
    ) -> None:
        self.name = unique_function_name(outer, name)
        self.graph = FuncGraph(self.name, outer)
        with self.graph.as_default():
            self.args = [
                self.graph.add_arg(spec[0], spec[1], f"arg{i}") for i, spec in enumerate(specs)
            ]
            result = fn(*[_unflatten(a, s) for a, s in zip(self.args, specs)])
            self.single = not isinstance(result, list | tuple)
            if result is None:
                raise errors.InvalidArgumentError(
                    f"{self.name} returned None: a body returns its values", node, op_type
                )
            items = [result] if self.single else list(result)
            self.results = [self.graph.capture(_as_value(r)) for r in items]

    def function(self, captured: Sequence[Output], pass_through: bool = False) -> Function:
        """The body as a Function taking its arguments and then ``captured`` (an argument
        for each, unused where this body does not read it), added to the library. With
        ``pass_through`` it also returns those arguments (a loop body's captured values
        go round unchanged)."""
        # ``captured`` are values of the enclosing graph: a tensor captured from further
        # out is passed in as the enclosing body's argument for it.
        inner_of = dict(self.graph.captures.values())
        extra = [
            inner_of[x] if x in inner_of else self.graph.add_arg(x.dtype, x.shape, "unused_capture")
            for x in captured
        ]
        outputs = [*self.results, *extra] if pass_through else self.results
        fn = Function(self.name, self.graph, outputs, inputs=[*self.args, *extra])
        self.graph.outer_graph.library[self.name] = fn
        return fn


def _captured(bodies: Sequence[_Traced]) -> list[Output]:
    """The enclosing graph's values that any of ``bodies`` reads, in first-use order."""
    seen: dict[Output, None] = {}
    for body in bodies:
        for outer, _ in body.graph.captures.values():
            seen.setdefault(outer, None)
    return list(seen)


def _as_value(value: Any) -> Output:
    """A body's result or a loop variable as an Output (a TensorArray as its handle)."""
    loop_var = getattr(value, "_loop_var", None)
    return loop_var() if callable(loop_var) else convert_to_output(value)


def _unflatten(arg: Output, spec: tuple[Any, ...]) -> Any:
    """A body argument as the body function sees it (a TensorArray is rebuilt around it)."""
    rebuild = spec[2] if len(spec) > 2 else None
    return rebuild(arg) if rebuild is not None else arg


def _spec(value: Any) -> tuple[Any, ...]:
    out = _as_value(value)
    rebuild = getattr(value, "_with_loop_var", None)
    return (out.dtype, out.shape, rebuild)


def _node_name(default: str, name: str | None) -> tuple[Any, str]:
    scope = current_scope()
    return scope, scope.unique_op_name(name or default)


# -- while_loop -------------------------------------------------------------------------------


def while_loop(
    cond: Callable[..., Any],
    body: Callable[..., Any],
    loop_vars: Any,
    shape_invariants: Any = None,
    parallel_iterations: int = 10,
    maximum_iterations: Any = None,
    name: str | None = None,
) -> Any:
    """Repeat ``body`` while ``cond`` is true, as ``tf.while_loop``: one While node.

    ``loop_vars`` is a tensor, a list or tuple of them (or ``mg.TensorArray``s); the
    result has the same structure. ``cond(*vars)`` returns a bool scalar, ``body(*vars)``
    the next values, with each variable's dtype and a shape that fits its invariant:
    its entering shape unless ``shape_invariants`` relaxes it (``[None, 3]``). Tensors
    of the enclosing graph that the functions read are passed in (captured).
    ``maximum_iterations`` stops the loop after that many iterations (a negative
    constant is an error; a negative fed value runs none, as TensorFlow 2).
    """
    scope, node = _node_name("while", name)
    single = not isinstance(loop_vars, list | tuple)
    values = [loop_vars] if single else list(loop_vars)
    with scope:
        outs = [_as_value(v) for v in values]
    specs = [_spec(v) for v in values]
    invariants = _invariants(shape_invariants, outs, single, node)
    specs = [(s[0], inv, *s[2:]) for s, inv in zip(specs, invariants)]
    n = len(specs)
    limit = None
    if maximum_iterations is not None:
        with scope:
            limit = _iteration_limit(maximum_iterations, node)
        specs += [(dtypes.int32, TensorShape([])), (dtypes.int32, TensorShape([]))]

    def cond_fn(*args: Any) -> Any:
        pred = convert_to_output(cond(*args[:n]))
        if pred.dtype != dtypes.bool_ or pred.shape.rank not in (None, 0):
            raise errors.InvalidArgumentError(
                f"cond must return a bool scalar, got {pred.dtype.name} of shape {pred.shape}",
                node,
                "While",
            )
        if limit is None:
            return pred
        return logical_and(pred, less(args[n], args[n + 1]))

    def body_fn(*args: Any) -> Any:
        result = body(*args[:n])
        # TensorFlow takes one bare tensor for one loop variable, given bare or in a list.
        results = [result] if n == 1 and not isinstance(result, list | tuple) else result
        if not isinstance(results, list | tuple) or len(results) != n:
            got = len(results) if isinstance(results, list | tuple) else 1
            raise errors.InvalidArgumentError(
                f"body returns {got} values for {n} loop variables", node, "While"
            )
        if limit is None:
            return list(results)
        return [*results, args[n] + 1, args[n + 1]]

    traced_cond = _Traced(f"{node}_cond", cond_fn, specs, scope.graph, node, "While")
    traced_body = _Traced(f"{node}_body", body_fn, specs, scope.graph, node, "While")
    _check_loop_results(traced_body.results[:n], outs, invariants, node)
    captured = _captured([traced_cond, traced_body])
    cond_f = traced_cond.function(captured)
    body_f = traced_body.function(captured, pass_through=True)
    inputs = [*outs, *([limit[0], limit[1]] if limit else []), *captured]
    op_type = "StatelessWhile" if not _stateful(cond_f, body_f) else "While"
    op = apply_op(
        op_type,
        scope,
        [inputs],
        {
            "cond": cond_f,
            "body": body_f,
            "output_shapes": [*invariants, *(x.shape for x in inputs[n:])],
            "parallel_iterations": parallel_iterations,
        },
        reserved_name=node,
    )
    results = [_rebuild(v, out) for v, out in zip(values, op.outputs[:n])]
    return results[0] if single else type(loop_vars)(results)


def _rebuild(value: Any, out: Output) -> Any:
    rebuild = getattr(value, "_with_loop_var", None)
    return rebuild(out) if callable(rebuild) else out


def _stateful(*fns: Function) -> bool:
    """Whether a body (or one it calls) holds a stateful op: TensorFlow then writes While."""
    seen: set[str] = set()
    stack = list(fns)
    while stack:
        fn = stack.pop()
        if fn.name in seen:
            continue
        seen.add(fn.name)
        if any(n.op_def.is_stateful and n.type_string != ARG_OP for n in fn.graph.nodes()):
            return True
        stack.extend(fn.called())
    return False


def _invariants(
    shape_invariants: Any, outs: list[Output], single: bool, node: str
) -> list[TensorShape]:
    """Each loop variable's invariant: given, or its entering shape; checked to fit."""
    if shape_invariants is None:
        return [x.shape for x in outs]
    given = [shape_invariants] if single else list(shape_invariants)
    if len(given) != len(outs):
        raise errors.InvalidArgumentError(
            f"shape_invariants has {len(given)} shapes for {len(outs)} loop variables",
            node,
            "While",
        )
    invariants = [x.shape if s is None else as_shape(s) for s, x in zip(given, outs)]
    for x, inv in zip(outs, invariants):
        if not inv.is_compatible_with(x.shape):
            raise errors.InvalidArgumentError(
                f"loop variable {x.name} enters with shape {x.shape}, which its shape "
                f"invariant {inv} does not allow",
                node,
                "While",
            )
    return invariants


def _check_loop_results(
    results: list[Output], outs: list[Output], invariants: list[TensorShape], node: str
) -> None:
    """A body keeps each variable's dtype, and a shape at least as specific as its
    invariant (TensorFlow's rule), else the loop is refused at build time."""
    for x, r, inv in zip(outs, results, invariants):
        if r.dtype != x.dtype:
            raise errors.InvalidArgumentError(
                f"loop variable {x.name} enters the loop as {x.dtype.name}, but the body "
                f"returns {r.dtype.name} for it",
                node,
                "While",
            )
        fits = inv.rank is None or (
            r.shape.rank == inv.rank
            and all(d is None or d == e for d, e in zip(inv.dims, r.shape.dims))
        )
        if not fits:
            raise errors.InvalidArgumentError(
                f"Input tensor '{x.name}' enters the loop with shape {inv}, but has shape "
                f"{r.shape} after one iteration. To allow the shape to vary across "
                "iterations, use the `shape_invariants` argument of while_loop to specify a "
                "less-specific shape.",
                node,
                "While",
            )


def _iteration_limit(maximum_iterations: Any, node: str) -> tuple[Output, Output]:
    """(the counter's start, the limit) for ``maximum_iterations``."""
    limit = convert_to_output(maximum_iterations, name="maximum_iterations")
    if limit.dtype not in (dtypes.int32, dtypes.int64) or limit.shape.rank not in (None, 0):
        raise errors.InvalidArgumentError(
            f"maximum_iterations must be an integer scalar, got {limit.dtype.name} of shape "
            f"{limit.shape}",
            node,
            "While",
        )
    value = limit.spec.value
    if value is not None and int(value) < 0:
        raise errors.InvalidArgumentError(
            f"maximum_iterations must be >= 0, got {int(value)}", node, "While"
        )
    if limit.dtype != dtypes.int32:
        limit = cast(limit, dtypes.int32)
    return convert_to_output(np.int32(0), name="iteration_count"), limit


# -- cond, case, switch_case -----------------------------------------------------------------


def _branch_call(
    op_type: str,
    selector: Output,
    fns: Sequence[Callable[[], Any]],
    names: Sequence[str],
    scope: Any,
    node: str,
) -> Any:
    """One If or Case node running one of ``fns`` (no arguments; what they read of the
    enclosing graph is passed in); its outputs, shaped as the functions' results."""
    traced = [
        _Traced(f"{node}_{b}", fn, [], scope.graph, node, op_type) for fn, b in zip(fns, names)
    ]
    first = traced[0]
    for t in traced[1:]:
        if len(t.results) != len(first.results) or [r.dtype for r in t.results] != [
            r.dtype for r in first.results
        ]:
            raise errors.InvalidArgumentError(
                f"branches must return the same number and dtypes of values: {first.name} "
                f"returns {_types(first.results)}, {t.name} returns {_types(t.results)}",
                node,
                op_type,
            )
    captured = _captured(traced)
    fns_ = [t.function(captured) for t in traced]
    stateful = _stateful(*fns_)
    attrs: dict[str, Any] = {"Tout": [r.dtype for r in first.results]}
    if op_type == "If":
        attrs.update(then_branch=fns_[0], else_branch=fns_[1])
    else:
        attrs["branches"] = fns_
    op = apply_op(
        ("" if stateful else "Stateless") + op_type,
        scope,
        [selector, captured],
        attrs,
        reserved_name=node,
    )
    outs = op.outputs
    if not outs:
        return op
    return outs[0] if first.single else outs


def _types(results: Sequence[Output]) -> str:
    return "[" + ", ".join(r.dtype.name for r in results) + "]"


def cond(
    pred: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any], name: str | None = None
) -> Any:
    """``true_fn()`` if ``pred`` else ``false_fn()``, as ``tf.cond``: one If node; only the
    taken branch runs. Both return the same number of values with the same dtypes; a
    shape that differs between them is unknown in the result."""
    if isinstance(pred, bool | np.bool_):
        raise TypeError("pred must not be a Python bool: call the branch directly")
    scope, node = _node_name("cond", name)
    with scope:
        p = convert_to_output(pred)
    if p.dtype != dtypes.bool_ or p.shape.rank not in (None, 0):
        raise errors.InvalidArgumentError(
            f"pred must be a bool scalar, got {p.dtype.name} of shape {p.shape}", node, "If"
        )
    return _branch_call("If", p, [true_fn, false_fn], ["true", "false"], scope, node)


def switch_case(
    branch_index: Any,
    branch_fns: Any,
    default: Callable[[], Any] | None = None,
    name: str | None = None,
) -> Any:
    """``branch_fns[branch_index]()``, as ``tf.switch_case``: one Case node. An index out
    of range runs ``default`` (or, without one, the last branch). ``branch_fns`` is a
    list of functions or a dict ``{index: fn}`` with the indices 0..n-1."""
    if isinstance(branch_fns, dict):
        if sorted(branch_fns) != list(range(len(branch_fns))):
            raise ValueError(f"branch_fns keys must be 0..{len(branch_fns) - 1}")
        branch_fns = [branch_fns[k] for k in range(len(branch_fns))]
    fns = list(branch_fns) + ([default] if default is not None else [])
    if not fns:
        raise ValueError("switch_case needs at least one branch")
    scope, node = _node_name("switch_case", name)
    with scope:
        index = convert_to_output(branch_index, dtypes.int32)
    if index.shape.rank not in (None, 0):
        raise errors.InvalidArgumentError(
            f"branch_index must be an int32 scalar, got shape {index.shape}", node, "Case"
        )
    return _branch_call("Case", index, fns, [f"branch{i}" for i in range(len(fns))], scope, node)


def case(
    pred_fn_pairs: Sequence[tuple[Any, Callable[[], Any]]],
    default: Callable[[], Any] | None = None,
    name: str | None = None,
) -> Any:
    """The function of the first pair whose predicate is true, as ``tf.case``: else
    ``default`` (without one, the last pair's function). One Case node, whose index is
    the first true predicate's position."""
    pairs = list(pred_fn_pairs.items() if isinstance(pred_fn_pairs, dict) else pred_fn_pairs)
    if not pairs:
        raise ValueError("case needs at least one (predicate, function) pair")
    scope, node = _node_name("case", name)
    with scope.new_sub_scope(node.rsplit("/", 1)[-1]):
        preds = [convert_to_output(p) for p, _ in pairs]
        for p in preds:
            if p.dtype != dtypes.bool_ or p.shape.rank not in (None, 0):
                raise errors.InvalidArgumentError(
                    f"predicate {p.name} must be a bool scalar, got {p.dtype.name} of shape "
                    f"{p.shape}",
                    node,
                    "Case",
                )
        # The first true predicate: argmax of [preds..., True] as ints (ties: the first).
        flags = concat([cast(stack(preds), dtypes.int32), np.array([1], np.int32)], 0)
        index = cast(argmax(flags, 0), dtypes.int32)
    fns = [fn for _, fn in pairs] + [default if default is not None else pairs[-1][1]]
    return _branch_call("Case", index, fns, [f"branch{i}" for i in range(len(fns))], scope, node)
