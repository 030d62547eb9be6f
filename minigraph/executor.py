"""Executors run plans. The local one binds each step to its kernel once per plan.

An executor takes a :class:`~minigraph.plan.Plan` and the fed arrays and
returns the fetched arrays. :class:`LocalExecutor` runs every step in this
thread; a distributed executor can run the same plan data elsewhere, since a
step names its op, attrs and device and holds no Graph or Session object.
"""

from __future__ import annotations

import contextvars
import functools
import operator
import sys
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, NoReturn, Protocol

import numpy as np

from . import config, dtypes, errors, host_pool
from .cuda_graphs import PlanGraphs
from .deadness import DEAD, takes_dead
from .devices import Device, is_cupy
from .graph import group_inputs
from .interop import Schedule, default_threads, plan_schedule, run_schedule
from .kernel import KernelContext
from .plan import Plan, Step
from .registry import lookup_kernel, lookup_op
from .resources import ResourceManager
from .transfer import COPY_OP

__all__ = ["Executor", "LocalExecutor", "StepTiming", "current_trace"]


class Executor(Protocol):
    def run(self, plan: Plan, feed_values: Sequence[Any], timings: list | None = None) -> list[Any]:
        """Run ``plan`` on ``feed_values`` (in ``plan.feed_slots`` order); return fetched values."""
        ...


class StepTiming(tuple):
    """(node name, op type, device, start in µs since the run began, duration in µs)."""

    __slots__ = ()


def _device_of(step: Step) -> Device:
    device_type, _, index = step.device.partition(":")
    return Device(device_type, int(index or 0))


def _bind(
    step: Step,
    tensor_bytes: int | None = None,
    threads: int | None = None,
    resources: ResourceManager | None = None,
) -> tuple[Callable[..., Any], KernelContext]:
    kernel = lookup_kernel(step.op_type, step.device.partition(":")[0], step.node_name)
    device = _device_of(step)
    ctx = KernelContext(
        dict(step.attrs),
        device.xp,
        step.node_name,
        step.op_type,
        step.device,
        step.forwardable,
        device.memory_limit,
        tensor_bytes,
        threads,
        resources,
    )
    if any(n is not None for n in step.input_lengths):
        lengths = step.input_lengths
        inner = kernel

        def kernel(ctx: KernelContext, *flat: Any, _k: Callable = inner) -> Any:
            return _k(ctx, *group_inputs(flat, lengths))

    if device.device_type == "GPU" and device.index and is_cupy(ctx.xp):
        gpu, inner_gpu = ctx.xp.cuda.Device(device.index), kernel

        def kernel(ctx: KernelContext, *args: Any, _k: Callable = inner_gpu) -> Any:
            with gpu:  # CuPy allocates and launches on the current device
                return _k(ctx, *args)

    return kernel, ctx


def _specialized(fn: Callable[..., Any], ctx: KernelContext, step: Step) -> Callable[..., Any]:
    """The kernel with its context bound; or, where the kernel offers one for the inputs'
    static dims (``kernel.specialize(ctx, input_dims)``), a cheaper callable with the same
    results, such as the bare ufunc of a small Add whose shapes are all known."""
    specialize = getattr(fn, "specialize", None)
    if specialize is not None and len(step.input_dims) == len(step.inputs):
        special = specialize(ctx, step.input_dims)
        if special is not None:
            return special
    return functools.partial(fn, ctx)


def _getter(slots: tuple[int, ...]) -> Callable[[list[Any]], Any]:
    """A C-speed function from the values list to a step's input values."""
    if len(slots) == 1:
        return operator.itemgetter(slice(slots[0], slots[0] + 1))
    if not slots:
        return operator.itemgetter(slice(0, 0))
    return operator.itemgetter(*slots)


def _numpy_error_state() -> tuple[Any, Any]:
    """NumPy 2's context variable for its floating-point error state, and the state with
    every warning off: a run sets the variable to that state made once (0.16 µs) instead of
    entering ``np.errstate``, which builds it on every call (0.47 µs); its buffer size is the
    one at import. (None, None) on a NumPy without the variable (1.x): runs enter errstate."""
    var = getattr(
        getattr(getattr(np, "_core", None), "_ufunc_config", None), "_extobj_contextvar", None
    )
    if var is None:
        return None, None
    with np.errstate(all="ignore"):
        return var, var.get()


_FP_STATE, _FP_IGNORE = _numpy_error_state()


class LocalExecutor:
    """Runs plans in the calling thread; safe to call from several threads at once.

    ``max_tensor_bytes`` caps the bytes one tensor may take in its runs (None:
    ``mg.config.max_tensor_bytes()``, the machine's free memory unless set);
    ``intra_op_threads`` the threads one kernel may use (None: ``mg.config.kernel_threads()``);
    ``inter_op_threads`` how many big independent steps may run at once (None: the cores
    one kernel's threads leave, 1 to 4; 1: one at a time; see minigraph.interop);
    ``resources`` the variables its kernels see (default: its own, empty).
    """

    def __init__(
        self,
        max_tensor_bytes: int | None = None,
        intra_op_threads: int | None = None,
        inter_op_threads: int | None = None,
        resources: ResourceManager | None = None,
    ) -> None:
        self.max_tensor_bytes = config.check_byte_count(max_tensor_bytes, "max_tensor_bytes")
        self.intra_op_threads = intra_op_threads
        self.inter_op_threads = inter_op_threads or default_threads(
            intra_op_threads or config.kernel_threads()
        )
        self.resources = resources if resources is not None else ResourceManager()
        # Each plan's bound steps, dropped when the plan is (a Session drops unused plans).
        self._bound: dict[int, tuple[weakref.ref[Plan], _Bound]] = {}

    def _bound_steps(self, plan: Plan) -> _Bound:
        entry = self._bound.get(id(plan))
        if entry is None or entry[0]() is not plan:
            entry = (weakref.ref(plan), self._bind_plan(plan))
            self._bound[id(plan)] = entry
            weakref.finalize(plan, self._bound.pop, id(plan), None)
        return entry[1]

    def _bind_plan(self, plan: Plan) -> _Bound:
        """Every step bound to its kernel and context, for the checked loop; and for the fast
        loop, the host constants' values in a template of the value slots (a run starts
        from a copy of it instead of running their steps) and the other steps as
        ``(kernel with its context bound, input getter, output slots, single, releases)``."""
        host_pool.settle_malloc()  # NumPy's medium temporaries stop page-faulting
        bound, fast, fast_steps = [], [], []
        template: list[Any] = [None] * plan.num_slots
        for step in plan.steps:
            fn, ctx = _bind(step, self.max_tensor_bytes, self.intra_op_threads, self.resources)
            single = step.single_output
            args, outs = _getter(step.inputs), step.outputs[0] if single else step.outputs
            bound.append((fn, ctx, args, outs, single, step.release))
            if step.op_type == "Const" and step.device.startswith("CPU"):
                template[step.outputs[0]] = step.attrs["value"]  # read-only; never released
                continue
            fast.append((_specialized(fn, ctx, step), args, outs, single, step.release))
            fast_steps.append(step)
        schedule = (
            plan_schedule(fast_steps, plan.fetch_slots) if self.inter_op_threads > 1 else None
        )
        graphs = _plan_graphs(plan, fast, fast_steps, template)
        return _Bound(bound, fast, fast_steps, template, schedule, graphs)

    def runner(self, plan: Plan) -> Callable[[Sequence[Any]], list[Any]]:
        """``lambda feeds: self.run(plan, feeds)``, bound to ``plan`` once: a while loop runs
        its body's plan every iteration, and this makes the lookups ``run`` makes per call
        (the plan's bound steps, which loop it takes) once. Inside a run (NumPy's warnings
        off already) with no output checks, it goes straight to the fast loop."""
        bound = self._bound_steps(plan)
        run = functools.partial(self.run, plan)
        if plan.dead_aware or bound.graphs is not None or bound.schedule is not None:
            return run
        template, fast, fast_steps = bound.template, bound.fast, bound.fast_steps
        fed = len(plan.feed_slots)
        if plan.feed_slots != tuple(range(fed)):  # build_plan gives the feeds the first slots
            return run
        fetched = _getter(plan.fetch_slots)
        state = _FP_STATE

        def run_fast(feed_values: Sequence[Any]) -> list[Any]:
            if state is None or state.get() is not _FP_IGNORE or config.check_outputs():
                return run(feed_values)
            values = template.copy()
            values[:fed] = feed_values
            _run_fast(fast, fast_steps, values)
            return list(fetched(values))

        return run_fast

    def cuda_graphs(self, plan: Plan) -> PlanGraphs | None:
        """The CUDA graphs of ``plan`` (None when it cannot be captured), once it has run."""
        entry = self._bound.get(id(plan))
        return entry[1].graphs if entry is not None and entry[0]() is plan else None

    # IEEE results are the answer, as in TensorFlow: NumPy's floating-point warnings (inf -
    # inf, 0 / 0) are off in every kernel of the run, on every thread it uses.
    def run(self, plan: Plan, feed_values: Sequence[Any], timings: list | None = None) -> list[Any]:
        if _FP_STATE is None:
            with np.errstate(all="ignore"):
                return self._run(plan, feed_values, timings)
        token = _FP_STATE.set(_FP_IGNORE)
        try:
            return self._run(plan, feed_values, timings)
        finally:
            _FP_STATE.reset(token)

    def _run(self, plan: Plan, feed_values: Sequence[Any], timings: list | None) -> list[Any]:
        bound = self._bound_steps(plan)
        if timings is not None or config.check_outputs() or plan.dead_aware:
            values: list[Any] = [None] * plan.num_slots
            for s, v in zip(plan.feed_slots, feed_values):
                values[s] = v
            _run_checked(plan, bound.steps, values, timings)
            if plan.dead_aware:
                _check_live(plan, values)
            return [values[s] for s in plan.fetch_slots]
        graphs = bound.graphs
        if graphs is not None and config.cuda_graphs():
            fetched = graphs.run(feed_values)  # None: not (yet) a captured signature
            if fetched is not None:
                return fetched
        values = bound.template.copy()
        for s, v in zip(plan.feed_slots, feed_values):
            values[s] = v
        schedule = bound.schedule
        if schedule is not None and schedule.worth_it(feed_values):  # see minigraph.interop

            def fail(k: int, e: Exception) -> NoReturn:
                if isinstance(e, errors.OpError):
                    raise e
                raise _wrap(bound.fast_steps[k], e) from e

            run_schedule(schedule, bound.fast, values, self.inter_op_threads, fail)
            return [values[s] for s in plan.fetch_slots]
        _run_fast(bound.fast, bound.fast_steps, values)
        return [values[s] for s in plan.fetch_slots]


def _run_fast(fast: list[tuple[Any, ...]], steps: list[Step], values: list[Any]) -> None:
    """The fast loop: each bound step on ``values``, releasing values after their last use."""
    k = 0
    try:
        for k, (call, args, outs, single, release) in enumerate(fast):  # noqa: B007
            if single:
                values[outs] = call(*args(values))
            else:
                for o, r in zip(outs, call(*args(values))):
                    values[o] = r
            for r in release:
                values[r] = None
    except errors.OpError:
        raise
    except Exception as e:
        raise _wrap(steps[k], e) from e


def _plan_graphs(
    plan: Plan, fast: list[tuple[Any, ...]], fast_steps: list[Step], template: list[Any]
) -> PlanGraphs | None:
    """The CUDA graphs of a plan whose steps all run on GPU:0 (host constants aside), or
    None: a CPU step (even shape arithmetic on constants), another GPU, an upload of
    anything but a feed, a fed value fetched as it is, or a stateful step (a replay would
    repeat its effect: a random op's draws) make it not capturable (see
    minigraph.cuda_graphs). The uploads of feeds stay out of the graph."""
    if not fast_steps or set(plan.fetch_slots) & set(plan.feed_slots):
        return None
    if any(lookup_op(step.op_type).is_stateful for step in fast_steps):
        return None
    if any(step.device != "GPU:0" for step in fast_steps):
        return None
    feed_index = {slot: k for k, slot in enumerate(plan.feed_slots)}
    uploads: dict[int, int] = {}
    region, region_steps = [], []
    for entry, step in zip(fast, fast_steps):
        if step.op_type == COPY_OP:
            if step.inputs[0] not in feed_index:
                return None
            uploads[step.outputs[0]] = feed_index[step.inputs[0]]
        else:
            region.append(entry)
            region_steps.append(step)
    return PlanGraphs(
        _device_of(fast_steps[0]).xp,
        plan.feed_slots,
        plan.fetch_slots,
        uploads,
        template,
        functools.partial(_run_fast, region, region_steps),
    )


class _Bound(NamedTuple):
    """A plan's steps bound once: all of them for the checked loop, and the fast loop's."""

    steps: list[tuple[Any, ...]]
    fast: list[tuple[Any, ...]]
    fast_steps: list[Step]
    template: list[Any]
    schedule: Schedule | None  # when some steps may run at once (minigraph.interop)
    graphs: PlanGraphs | None  # when the plan may be captured (minigraph.cuda_graphs)


def _run_checked(
    plan: Plan, bound: list[tuple[Any, ...]], values: list[Any], timings: list | None
) -> None:
    """The slow loop: per-step timing, debug lines and output checks; and the loop of a
    plan whose values may be dead (minigraph.deadness): a step with a dead input or a dead
    control input is skipped and its outputs are dead, except a Merge's, which runs."""
    t_run = time.perf_counter()
    token = _TRACE.set((timings, t_run)) if timings is not None else None
    try:
        _run_steps(plan, bound, values, timings, t_run)
    finally:
        if token is not None:
            _TRACE.reset(token)


# The timings list and start of the traced run in progress (per thread and task): a call op
# runs its body traced into it (minigraph.functions), its steps named under the call's.
_TRACE: contextvars.ContextVar[tuple[list, float] | None] = contextvars.ContextVar(
    "minigraph_trace", default=None
)


def current_trace() -> tuple[list, float] | None:
    """(the timings of the traced run in progress, its start in perf_counter seconds), or
    None outside a traced run."""
    return _TRACE.get()


def _run_steps(
    plan: Plan, bound: list[tuple[Any, ...]], values: list[Any], timings: list | None, t_run: float
) -> None:
    dead_aware = plan.dead_aware
    for step, (fn, ctx, args, outs, single, release) in zip(plan.steps, bound):
        ins = args(values)
        if dead_aware and _skipped(step, ins, values):
            for o in [outs] if single else outs:
                values[o] = DEAD
            if step.control_output is not None:
                values[step.control_output] = DEAD
            for r in release:
                values[r] = None
            continue
        t0 = time.perf_counter()
        try:
            result = fn(ctx, *ins)
            if timings is not None:
                ctx.synchronize()  # a GPU step's time is its kernels' time, not their launch
        except errors.OpError:
            raise
        except Exception as e:
            raise _wrap(step, e) from e
        results = [result] if single else list(result)
        dt = time.perf_counter() - t0
        if config.check_outputs():
            _check_outputs(step, results)
        for o, r in zip([outs] if single else outs, results):
            values[o] = r
        if step.control_output is not None:  # a Merge of dead inputs is dead; a Switch is not
            dead = takes_dead(step.op_type) and results[0] is DEAD
            values[step.control_output] = DEAD if dead else True
        for r in release:
            values[r] = None
        if timings is not None:
            timings.append(
                StepTiming(
                    (step.node_name, step.op_type, step.device, (t0 - t_run) * 1e6, dt * 1e6)
                )
            )
        if config.debug():
            shapes = ", ".join(
                f"{getattr(r, 'dtype', '?')}{list(getattr(r, 'shape', ()))}" for r in results
            )
            print(
                f"[minigraph] {step.op_type:<20} {step.node_name:<30} {step.device:<6} "
                f"{shapes}  {dt * 1e6:.1f}us",
                file=sys.stderr,
            )


def _skipped(step: Step, inputs: Sequence[Any], values: list[Any]) -> bool:
    """Whether a step of a dead-aware plan is dead: a data or control input is (a Merge
    runs whatever its inputs, as TensorFlow's executor does)."""
    if takes_dead(step.op_type):
        return False
    return any(v is DEAD for v in inputs) or any(values[c] is DEAD for c in step.control_inputs)


def _check_live(plan: Plan, values: list[Any]) -> None:
    """A fetched tensor that is dead (on a branch a Switch did not take) is an error, in
    TensorFlow's words."""
    for i, s in enumerate(plan.fetch_slots):
        if values[s] is DEAD:
            step = next(p for p in plan.steps if s in p.outputs)
            raise errors.InvalidArgumentError(
                f"Retval[{i}] does not have value: output {step.outputs.index(s)} of "
                f"{step.node_name} is dead (it is on a branch of a conditional that did not "
                "run)",
                step.node_name,
                step.op_type,
            )


def _check_outputs(step: Step, results: list[Any]) -> None:
    """Kernel outputs must match the count, dtypes and shapes inference promised."""
    if len(results) != len(step.output_specs):
        raise errors.InternalError(
            f"kernel returned {len(results)} outputs, expected {len(step.output_specs)}",
            step.node_name,
            step.op_type,
        )
    for i, (r, (dims, dtype)) in enumerate(zip(results, step.output_specs)):
        if r is DEAD:  # the untaken output of a Switch
            continue
        if isinstance(r, np.generic):  # a kernel must return arrays (host_array reads them)
            raise errors.InternalError(
                f"output {i}: kernel returned a NumPy scalar, not an array",
                step.node_name,
                step.op_type,
            )
        if np.dtype(r.dtype) != dtypes.as_dtype(dtype).np:  # as_dtype: "variant" is object
            raise errors.InternalError(
                f"output {i}: kernel returned dtype {r.dtype}, shape inference said {dtype}",
                step.node_name,
                step.op_type,
            )
        if dims is not None and (
            len(dims) != r.ndim or any(d is not None and d != n for d, n in zip(dims, r.shape))
        ):
            raise errors.InternalError(
                f"output {i}: kernel returned shape {list(r.shape)}, shape inference said "
                f"{['?' if d is None else d for d in dims]}",
                step.node_name,
                step.op_type,
            )


def _wrap(step: Step, e: Exception) -> errors.OpError:
    """No exception but an OpError leaves a kernel: name the node and what broke.

    The one place where a MemoryError (or CuPy's OutOfMemoryError) that escaped a
    kernel's size checks becomes a ResourceExhaustedError; anything else is a bug in
    the kernel (InternalError).
    """
    if isinstance(e, MemoryError) or type(e).__name__ == "OutOfMemoryError":
        return errors.ResourceExhaustedError(
            f"OOM while running the kernel: {e or type(e).__name__}", step.node_name, step.op_type
        )
    return errors.InternalError(
        f"kernel raised {type(e).__name__}: {e}", step.node_name, step.op_type
    )
