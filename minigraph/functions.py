"""Functions: graphs that other graphs call (TensorFlow's FunctionDef library).

A :class:`Function` is a body graph (a :class:`FuncGraph`) whose ``_Arg`` nodes are its
arguments and some of whose outputs are its results. Call ops (PartitionedCall, While,
If, Case: minigraph.ops.control_flow_ops) hold Functions in their ``func`` attrs and run
them through :meth:`Function.call`, which plans a body once per device and plan options
and reuses that plan for every call, so a loop's body is never re-planned per iteration.

A graph's functions are in ``graph.library`` (name -> Function), shared with the body
graphs built inside it. Building a body with a Python function (``mg.while_loop``'s body,
``mg.cond``'s branches) works in a FuncGraph: a tensor of an enclosing graph used inside it
is *captured*, becoming an extra argument that the call op passes in.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from . import errors
from .dtypes import DType
from .executor import LocalExecutor, StepTiming, current_trace
from .graph import Graph, Node, Operation, Output
from .inference import InferenceContext
from .kernel import KernelContext
from .loop_invariants import invariant_frontier
from .options import OptimizerOptions
from .plan import PLAN_OPTIONS, Plan, build_plan
from .registry import define_op, lookup_op, register_kernel
from .shapes import TensorShape

__all__ = ["ARG_OP", "FuncGraph", "Function", "LoopRun", "unique_function_name"]

_UNMADE: Any = object()  # a key of Function._kept not made yet (None is a value)

ARG_OP = "_Arg"


def _arg_shape(c: InferenceContext) -> TensorShape:
    return c.attrs["shape"]


define_op(
    ARG_OP,
    outputs=["output: T"],
    attrs=["T: type", "index: int >= 0", "shape: shape"],
    shape_fn=_arg_shape,
    is_stateful=True,  # never folded: its value is the call's
    doc="Internal: argument ``index`` of a function body; its call feeds it.",
)


@register_kernel(ARG_OP, "CPU", "GPU")
def _arg_kernel(ctx: KernelContext) -> Any:
    ctx.fail(
        f"function argument {ctx.attrs['index']} was not fed: a function body runs only "
        "through a call op (PartitionedCall, While, If, Case)"
    )


class FuncGraph(Graph):
    """The graph of a function body. Tensors of enclosing graphs that its nodes read are
    captured: each becomes an ``_Arg`` of this graph (see :meth:`capture`)."""

    def __init__(self, name: str, outer_graph: Graph) -> None:
        super().__init__()
        self.name = name
        self.outer_graph = outer_graph
        self.library = outer_graph.library  # one library for a graph and its bodies
        self.args: list[Output] = []  # every _Arg in index order: declared, then captured
        self.captures: dict[Output, tuple[Output, Output]] = {}  # x -> (outer value, _Arg)

    def add_arg(
        self, dtype: DType, shape: TensorShape, name: str, handle_data: Any = None
    ) -> Output:
        """A new argument: the next ``_Arg`` of the body (a resource keeps the handle data of
        what it is passed, so that reading a captured variable has its shape)."""
        attrs = {"T": dtype, "index": len(self.args), "shape": shape}
        node = self.create_node(lookup_op(ARG_OP), self.unique_name(name), [], attrs)
        if handle_data is not None:
            node.output_specs = (replace(node.output_specs[0], handle_data=handle_data),)
        self.args.append(Output(Operation(node), 0))
        return self.args[-1]

    def capture(self, x: Output) -> Output:
        """``x`` as a value of this graph: itself, or the argument it is passed in as."""
        if x.graph is self:
            return x
        if x in self.captures:
            return self.captures[x][1]
        outer = self.outer_graph
        if isinstance(outer, FuncGraph):
            outer_x = outer.capture(x)
        elif x.graph is outer:
            outer_x = x
        else:
            raise errors.InvalidArgumentError(
                f"{x.name} is from a graph that does not enclose the body of {self.name}"
            )
        name = f"capture_{x.node.name.replace('/', '_')}"
        inner = self.add_arg(x.dtype, x.shape, name, x.spec.handle_data)
        self.captures[x] = (outer_x, inner)
        return inner

    def create_node(
        self,
        op_def: Any,
        name: str,
        inputs: Sequence[Any],
        attrs: dict[str, Any],
        *,
        device: str = "",
        control_inputs: Sequence[Node] = (),
    ) -> Node:
        inputs = [
            [self.capture(x) for x in v] if isinstance(v, list) else self.capture(v) for v in inputs
        ]
        # A control dependency on an enclosing graph's node cannot cross into a body.
        control_inputs = [c for c in control_inputs if c.graph is self]
        return super().create_node(
            op_def, name, inputs, attrs, device=device, control_inputs=control_inputs
        )


class Function:
    """A function body and its signature.

    ``inputs`` are the body's ``_Arg`` outputs in argument order (default: every ``_Arg``
    of the graph, in the order they were made); ``outputs`` the results;
    ``control_outputs`` nodes that run on every call though no result needs them
    (TensorFlow's ``control_ret``).
    """

    def __init__(
        self,
        name: str,
        graph: FuncGraph,
        outputs: Sequence[Output],
        control_outputs: Sequence[Node] = (),
        inputs: Sequence[Output] | None = None,
        input_names: Sequence[str] | None = None,
        output_names: Sequence[str] | None = None,
        attrs: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.graph = graph
        self.inputs = list(graph.args if inputs is None else inputs)
        self.outputs = list(outputs)
        self.control_outputs = list(control_outputs)
        self.input_names = list(input_names or [x.node.name for x in self.inputs])
        self.output_names = list(output_names or [f"output_{i}" for i in range(len(outputs))])
        self.attrs = dict(attrs or {})  # TensorFlow's FunctionDef attrs, kept for export
        self._plans: dict[tuple[Any, ...], Any] = {}  # plans and loop splits (see _kept)
        self._memo_key = f"function {name}"  # where a call site keeps its plan (ctx.memo)
        self._lock = threading.Lock()

    @property
    def input_dtypes(self) -> list[DType]:
        return [x.dtype for x in self.inputs]

    @property
    def output_dtypes(self) -> list[DType]:
        return [x.dtype for x in self.outputs]

    def output_shapes(self) -> list[TensorShape]:
        return [x.shape for x in self.outputs]

    def called(self) -> list[Function]:
        """The functions that the body's call ops name (directly)."""
        found: dict[str, Function] = {}
        for node in self.graph.nodes():
            for fn in node.op_def.functions_in(node.attrs):
                found.setdefault(fn.name, fn)
        return list(found.values())

    def plan(self, device: str, options: tuple[Any, ...] = ()) -> Plan:
        """The body's plan on ``device`` (``"CPU:0"``, ``"GPU:0"``), made once and kept."""
        return self._kept((device, options), lambda: self._build_plan(device, options))

    def loop_plans(self, device: str, options: tuple[Any, ...] = ()) -> LoopPlans | None:
        """The body split for a while loop that runs it (minigraph.loop_invariants), made once
        and kept; None when there is nothing to hoist or the options turn it off."""
        return self._kept(("loop", device, options), lambda: self._split(device, options))

    def _kept(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        found = self._plans.get(key, _UNMADE)
        if found is _UNMADE:
            with self._lock:
                found = self._plans.get(key, _UNMADE)
                if found is _UNMADE:
                    found = self._plans[key] = make()
        return found

    def _build_plan(
        self,
        device: str,
        options: tuple[Any, ...],
        fetches: Sequence[Output] | None = None,
        frontier: Sequence[Output] = (),
    ) -> Plan:
        """The plan from the arguments (and ``frontier`` values, fed on ``device``) to
        ``fetches`` (default: the results, and the control outputs run)."""
        from .devices import parse_device

        optimizer, soft = _unpacked(options)
        where = ["CPU:0" if x.dtype.is_handle else device for x in self.inputs]
        return build_plan(
            self.outputs if fetches is None else fetches,
            self.control_outputs if fetches is None else (),
            [*self.inputs, *frontier],
            parse_device("/device:" + device),
            allow_soft_placement=soft,
            feed_devices=where + [device] * len(frontier),
            optimizer=optimizer,
            aliased_fetches=True,  # a call copies a result that aliases (control_flow_ops)
        )

    def _split(self, device: str, options: tuple[Any, ...]) -> LoopPlans | None:
        if not device.startswith("CPU") or not _unpacked(options)[0].do_loop_invariant_motion:
            return None
        frontier = invariant_frontier(self)
        if not frontier:
            return None
        return LoopPlans(
            self._build_plan(device, options, frontier),
            self._build_plan(device, options, frontier=frontier),
        )

    def call(self, ctx: KernelContext, args: Sequence[Any], label: str = "call") -> list[Any]:
        """Run the body on ``args`` (on the calling step's device); its results. In a traced
        run, the body's steps are traced too, named ``<call node>/<label>/<step>`` (a loop
        labels ``body/<iteration>``), so a trace of an LSTM reads step by step."""
        if len(args) != len(self.inputs):
            ctx.fail(f"function {self.name} takes {len(self.inputs)} arguments, got {len(args)}")
        plan, executor, _, run = self._bound(ctx)
        return _run(ctx, executor, plan, run, args, label)

    def caller(self, ctx: KernelContext, label: str) -> Callable[[Sequence[Any], int], list[Any]]:
        """:meth:`call` bound to one run of the calling step, for a loop that calls the body
        every iteration: ``f(args, i)`` runs it on ``args`` (as many as it takes: the
        caller's signature was checked when it was built), traced as ``label/i``. Outside a
        traced run it goes straight to the executor's runner of the plan."""
        plan, executor, _, run = self._bound(ctx)
        if current_trace() is None:
            return lambda args, i: run(args)
        return lambda args, i: _run(ctx, executor, plan, run, args, f"{label}/{i}")

    def borrowed(self, ctx: KernelContext) -> frozenset[int]:
        """Positions of the results that are not buffers of the call's own (a constant of the
        body, kept from call to call, or a view of another result): a caller that hands
        results on as fresh buffers copies these (and any that overlap its arguments)."""
        return self._bound(ctx)[2]

    def _bound(self, ctx: KernelContext) -> tuple[Plan, LocalExecutor, frozenset[int], Any]:
        """This call site's plan, executor, borrowed results and the executor's runner of
        the plan, kept in its step's memo."""
        bound = ctx.memo.get(self._memo_key)
        if bound is None:
            plan = self.plan(ctx.device, ctx.attrs.get(PLAN_OPTIONS, ()))
            executor = _executor(ctx)
            bound = (plan, executor, _borrowed(plan), executor.runner(plan))
            ctx.memo[self._memo_key] = bound
        return bound

    def __repr__(self) -> str:
        return f"<Function {self.name}: {len(self.inputs)} args, {len(self.outputs)} results>"


class LoopPlans(NamedTuple):
    """A while-loop body split at its frontier (minigraph.loop_invariants)."""

    prelude: Plan  # the arguments -> the frontier values
    iteration: Plan  # the arguments and the frontier values -> the results


class LoopRun:
    """The iterations of one run of a while loop: :meth:`caller` runs the body as
    Function.caller does, but for a body with loop-invariant work, which it does once, at the
    first call, and hands to every iteration (minigraph.loop_invariants)."""

    def __init__(self, fn: Function, ctx: KernelContext) -> None:
        self._fn, self._ctx = fn, ctx
        key = fn._memo_key + " loop"
        bound = ctx.memo.get(key)
        if bound is None:
            plans = fn.loop_plans(ctx.device, ctx.attrs.get(PLAN_OPTIONS, ()))
            borrowed = None if plans is None else _borrowed(plans.iteration, len(fn.inputs))
            executor = _executor(ctx)
            runners = None if plans is None else [executor.runner(p) for p in plans]
            bound = ctx.memo[key] = (plans, borrowed, executor, runners)
        self._plans: LoopPlans | None = bound[0]
        self._borrowed: frozenset[int] | None = bound[1]
        self._executor: LocalExecutor = bound[2]
        self._runners: list[Any] | None = bound[3]

    def caller(self, label: str) -> Callable[[Sequence[Any], int], list[Any]]:
        """As Function.caller, for the body with its loop-invariant work, which the first
        call does and hands to every iteration (traced as ``label/i/invariant``)."""
        fn, ctx, plans, runners = self._fn, self._ctx, self._plans, self._runners
        if plans is None or runners is None:
            return fn.caller(ctx, label)
        executor, (prelude, iteration) = self._executor, runners
        traced = current_trace() is not None
        frontier: list[Any] | None = None

        def call(args: Sequence[Any], i: int) -> list[Any]:
            nonlocal frontier
            if frontier is None:
                where = f"{label}/{i}/invariant"
                frontier = _run(ctx, executor, plans.prelude, prelude, args, where)
            if traced:
                where = f"{label}/{i}"
                return _run(ctx, executor, plans.iteration, iteration, [*args, *frontier], where)
            return iteration([*args, *frontier])

        return call

    def borrowed(self) -> frozenset[int]:
        """As Function.borrowed; a frontier value returned as a result is borrowed too."""
        return self._fn.borrowed(self._ctx) if self._borrowed is None else self._borrowed


def _unpacked(options: tuple[Any, ...]) -> tuple[OptimizerOptions, bool]:
    """(optimizer options, allow soft placement) of a call's PLAN_OPTIONS."""
    return options if options else (OptimizerOptions(), True)  # type: ignore[return-value]


def _borrowed(plan: Plan, num_args: int | None = None) -> frozenset[int]:
    """The results of ``plan`` that are no buffers of a call's own: constants, views of an
    earlier result, and, when ``num_args`` is given, values fed after that many arguments
    (a loop body's frontier)."""
    constants = {o for step in plan.steps if step.op_type == "Const" for o in step.outputs}
    fed = range(len(plan.feed_slots) if num_args is None else num_args, len(plan.feed_slots))
    return frozenset(
        i
        for i, s in enumerate(plan.fetch_slots)
        if s in constants or i in plan.shared_fetches or s in fed
    )


def _run(
    ctx: KernelContext,
    executor: LocalExecutor,
    plan: Plan,
    run: Any,
    args: Sequence[Any],
    label: str,
) -> list[Any]:
    """Run a body's plan (``run``: the executor's runner of it); in a traced run its steps
    are traced under ``label``."""
    trace = current_trace()
    if trace is None:
        return run(args)
    timings, origin = trace
    inner: list[StepTiming] = []
    start = time.perf_counter()
    results = executor.run(plan, list(args), timings=inner)
    offset = (start - origin) * 1e6
    prefix = f"{ctx.node_name}/{label}/"
    timings.extend(
        StepTiming((prefix + name, op, device, t + offset, dt)) for name, op, device, t, dt in inner
    )
    return results


_EXECUTORS: dict[tuple[Any, ...], LocalExecutor] = {}  # for callers with no Session (Dask)
_EXECUTORS_LOCK = threading.Lock()


def _executor(ctx: KernelContext) -> LocalExecutor:
    """One executor per (tensor cap, threads) that keeps each body plan's bound steps. A
    Session's are among its resources: the bodies see the caller's variables, and the
    executors go with the Session."""
    key = (ctx.tensor_bytes, ctx.threads)

    def make() -> LocalExecutor:
        return LocalExecutor(*key, inter_op_threads=1, resources=ctx.resources)

    if ctx.resources is not None:
        return ctx.resources.lookup_or_create("_function_executors", repr(key), make)
    ex = _EXECUTORS.get(key)
    if ex is None:
        with _EXECUTORS_LOCK:
            ex = _EXECUTORS.setdefault(key, make())
    return ex


def unique_function_name(graph: Graph, base: str) -> str:
    name, i = base, 1
    while name in graph.library:
        name, i = f"{base}_{i}", i + 1
    return name
