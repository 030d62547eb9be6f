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
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from . import errors
from .dtypes import DType
from .executor import LocalExecutor, StepTiming, current_trace
from .graph import Graph, Node, Operation, Output
from .inference import InferenceContext
from .kernel import KernelContext
from .options import OptimizerOptions
from .plan import PLAN_OPTIONS, Plan, build_plan
from .registry import define_op, lookup_op, register_kernel
from .shapes import TensorShape

__all__ = ["ARG_OP", "FuncGraph", "Function", "unique_function_name"]

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
        self._plans: dict[tuple[Any, ...], Plan] = {}
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
        key = (device, options)
        plan = self._plans.get(key)
        if plan is None:
            with self._lock:
                plan = self._plans.get(key)
                if plan is None:
                    plan = self._plans[key] = self._build_plan(device, options)
        return plan

    def _build_plan(self, device: str, options: tuple[Any, ...]) -> Plan:
        from .devices import parse_device

        optimizer, soft = options if options else (OptimizerOptions(), True)
        where = ["CPU:0" if x.dtype.is_handle else device for x in self.inputs]
        return build_plan(
            self.outputs,
            self.control_outputs,
            self.inputs,
            parse_device("/device:" + device),
            allow_soft_placement=soft,
            feed_devices=where,
            optimizer=optimizer,
            aliased_fetches=True,  # a call copies a result that aliases (control_flow_ops)
        )

    def call(self, ctx: KernelContext, args: Sequence[Any], label: str = "call") -> list[Any]:
        """Run the body on ``args`` (on the calling step's device); its results. In a traced
        run, the body's steps are traced too, named ``<call node>/<label>/<step>`` (a loop
        labels ``body/<iteration>``), so a trace of an LSTM reads step by step."""
        if len(args) != len(self.inputs):
            ctx.fail(f"function {self.name} takes {len(self.inputs)} arguments, got {len(args)}")
        plan, executor, _ = self._bound(ctx)
        trace = current_trace()
        if trace is None:
            return executor.run(plan, list(args))
        timings, origin = trace
        inner: list[StepTiming] = []
        start = time.perf_counter()
        results = executor.run(plan, list(args), timings=inner)
        offset = (start - origin) * 1e6
        prefix = f"{ctx.node_name}/{label}/"
        timings.extend(
            StepTiming((prefix + name, op, device, t + offset, dt))
            for name, op, device, t, dt in inner
        )
        return results

    def borrowed(self, ctx: KernelContext) -> frozenset[int]:
        """Positions of the results that are not buffers of the call's own (a constant of the
        body, kept from call to call, or a view of another result): a caller that hands
        results on as fresh buffers copies these (and any that overlap its arguments)."""
        return self._bound(ctx)[2]

    def _bound(self, ctx: KernelContext) -> tuple[Plan, LocalExecutor, frozenset[int]]:
        """This call site's plan, executor and borrowed results, kept in its step's memo."""
        bound = ctx.memo.get(self._memo_key)
        if bound is None:
            plan = self.plan(ctx.device, ctx.attrs.get(PLAN_OPTIONS, ()))
            constants = {o for step in plan.steps if step.op_type == "Const" for o in step.outputs}
            borrowed = frozenset(
                i
                for i, s in enumerate(plan.fetch_slots)
                if s in constants or i in plan.shared_fetches
            )
            bound = ctx.memo[self._memo_key] = (plan, _executor(ctx), borrowed)
        return bound

    def __repr__(self) -> str:
        return f"<Function {self.name}: {len(self.inputs)} args, {len(self.outputs)} results>"


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
