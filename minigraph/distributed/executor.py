"""DaskExecutor: a Session's plan as Dask tasks placed by TensorFlow's device strings.

Planning (``DaskExecutor.build_plan``, which the Session calls in place of the local
planner): the graph is copied with its device strings dropped, so the local planner
accepts nodes of other tasks, and each step of that plan gets back its device type and
its ``/job:worker/task:N``. Running: consecutive steps with one placement become one task
(``_run_group``) submitted with ``workers=[address]``; values cross between tasks as Dask
futures, so intermediates stay on the workers, and only fetched values are gathered.
"""

from __future__ import annotations

import itertools
import operator
import threading
import time
import uuid
import weakref
from collections.abc import Mapping, Sequence
from concurrent.futures import CancelledError
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from .. import config, errors
from ..deadness import makes_dead
from ..devices import DeviceSpec, parse_device
from ..graph import Node, Output
from ..graph_io import graph_from_dict, graph_to_dict
from ..plan import Plan, Step
from ..plan import build_plan as _local_build_plan
from ..registry import lookup_op

__all__ = ["DaskExecutor", "DaskPlan"]

WORKERS_TTL_S = 1.0  # how long DaskExecutor trusts its list of the cluster's workers


@dataclass(frozen=True)
class DaskPlan(Plan):
    """A plan whose steps also say which ``/job:worker/task:N`` each runs on (None: any)."""

    pins: tuple[str | None, ...] = ()


def _dask_plan(plan: Plan, steps: tuple[Step, ...], pins: tuple[str | None, ...]) -> DaskPlan:
    """``plan`` with these steps and their tasks (whatever other fields Plan has)."""
    kept = {f.name: getattr(plan, f.name) for f in fields(Plan)}
    return DaskPlan(**{**kept, "steps": steps, "pins": pins})


def _pin(spec: DeviceSpec) -> str | None:
    if spec.task is None or spec.job == "localhost":
        return None
    return f"/job:{spec.job or 'worker'}/task:{spec.task}"


def _norm_task(key: str) -> str:
    pin = _pin(parse_device(key))
    if pin is None:
        raise ValueError(f"workers keys must name a task, like '/job:worker/task:0'; got {key!r}")
    return pin


# -- what runs on a worker ------------------------------------------------------------------


@dataclass(frozen=True)
class _Group:
    """One Dask task: consecutive steps with one placement (plain data, pickled per run)."""

    steps: tuple[Step, ...]
    inputs: tuple[int, ...]  # slots read from other tasks, in argument order
    outputs: tuple[int, ...]  # slots returned, in order
    max_tensor_bytes: int | None


def _to_device(step: Step, values: list[Any]) -> list[Any]:
    """A GPU step's device inputs moved to its GPU (host inputs stay NumPy)."""
    from ..executor import _device_of

    xp = _device_of(step).xp
    op_def = lookup_op(step.op_type)
    flags: list[bool] = []
    for arg, n in zip(op_def.inputs, step.input_lengths):
        flags.extend([arg.name in op_def.host_inputs] * (1 if n is None else n))
    return [v if host else xp.asarray(v) for v, host in zip(values, flags)]


@np.errstate(all="ignore")  # IEEE results are the answer, as in a local run
def _run_group(group: _Group, *inputs: Any) -> Any:
    """Run a group's steps on this worker; return its outputs (one value, or a tuple).

    No kernel writes into an input (the plan's steps forward nothing): Dask holds the
    inputs, and a retry may read them again.
    """
    from ..executor import _bind, _check_outputs, _wrap
    from ..transfer import to_host

    values: dict[int, Any] = dict(zip(group.inputs, inputs))
    for step in group.steps:
        fn, ctx = _bind(step, group.max_tensor_bytes)
        args = [values[s] for s in step.inputs]
        gpu = step.device.startswith("GPU")
        if gpu:
            args = _to_device(step, args)
        try:
            result = fn(ctx, *args)
        except errors.OpError:
            raise
        except Exception as e:
            raise _wrap(step, e) from e
        results = [result] if step.single_output else list(result)
        if config.check_outputs():
            _check_outputs(step, results)
        if gpu:  # values leave a task as host arrays: Dask moves and keeps NumPy
            results = [to_host(r) for r in results]
        for o, r in zip(step.outputs, results):
            values[o] = r
        for r in step.release:
            if r not in group.outputs:
                values.pop(r, None)
    out = tuple(values[s] for s in group.outputs)
    return out[0] if len(out) == 1 else out


def _value(x: Any) -> Any:
    return x


# -- the executor ---------------------------------------------------------------------------


def _worker_order(info: Mapping[str, Any]) -> list[tuple[Any, str]]:
    """(name, address) of the workers in the order of their names (numbers numerically)."""
    pairs = [(w.get("name", addr), addr) for addr, w in info.items()]

    def key(p: tuple[Any, str]) -> tuple[int, Any]:
        name = p[0]
        if isinstance(name, int) or (isinstance(name, str) and name.isdigit()):
            return (0, int(name))
        return (1, str(name))

    return sorted(pairs, key=key)


def client_down(client: Any) -> str | None:
    """Why ``client`` cannot run anything (its status and its cluster's), or None if it can.

    A client that is reconnecting counts as up: Dask waits for its scheduler
    (``distributed.comm.timeouts.connect``) and closes it when that fails.
    """
    status = str(getattr(client, "status", "running"))
    if status in ("running", "connecting", "newly-created"):
        return None
    cluster = getattr(client, "cluster", None)
    state = getattr(getattr(cluster, "status", None), "name", None)
    if state in ("closing", "closed", "failed"):
        address = getattr(cluster, "scheduler_address", "?")
        return f"its cluster ({type(cluster).__name__} at {address}) was shut down ({state})"
    return f"the client is {status} (client.close() was called, or it lost its scheduler)"


def require_running(client: Any, what: str) -> None:
    """UnavailableError naming the cause when ``client`` is closed (Dask's own errors for
    that are a KeyError or an AttributeError from deep inside the client)."""
    why = client_down(client)
    if why is not None:
        raise errors.UnavailableError(f"{what} needs a running Dask client: {why}")


def _workers_info(client: Any) -> dict[str, Any]:
    """Every worker's address -> info (newer Dask lists only a few unless asked for all)."""
    require_running(client, "DaskExecutor")
    try:
        info = client.scheduler_info(n_workers=-1)
    except TypeError:  # distributed before 2025 lists them all
        info = client.scheduler_info()
    if "workers" not in info:  # the client closed while asking (its reconnecting failed)
        require_running(client, "DaskExecutor")
        raise errors.UnavailableError(
            f"DaskExecutor could not reach the Dask scheduler (the client is {client.status})"
        )
    return dict(info["workers"])


def _pinned(mapping: Mapping[str, str], pin: str | None) -> dict[str, Any]:
    """submit() keywords for a pinned task: its worker, or another when that one is gone."""
    if pin is None:
        return {}
    return {"workers": [mapping[pin]], "allow_other_workers": True}


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "_." else "_" for c in name)


class DaskExecutor:
    """Runs a Session's plans as Dask tasks, placed by the nodes' ``/job:worker/task:N``.

    ``mg.Session(graph, executor=DaskExecutor(client))``. Consecutive plan steps with one
    placement become one task. A node under ``mg.device("/job:worker/task:N")`` runs on
    the N-th worker in the order of the workers' names (LocalCluster names them 0, 1, ...)
    unless ``workers`` maps task strings to worker names or addresses
    (``{"/job:worker/task:0": "alice"}``); a node with no task runs where Dask puts it
    (beside its inputs); a GPU node needs a worker with a ``GPU`` resource. A placement
    that no worker can satisfy is an InvalidArgumentError naming the node, raised before
    any task is submitted.

    Feeds go to the cluster once per run: inside the run's task graph, or, from
    ``scatter_bytes`` up, scattered to the workers that read them (Dask warns about, and
    its scheduler holds, a large graph); constants of ``const_bytes`` or more once per
    plan. Intermediates stay on the workers and only the fetches come back. An op failing
    on a worker raises the same mg error here. A worker that dies is Dask's to retry: its
    tasks run again, on the worker the nanny restarts or another (Dask pins a task to the
    address a name had when the run was submitted, so the next run finds the restarted
    worker by its name); when Dask gives up, UnavailableError names the node. A
    KeyboardInterrupt while waiting cancels the run's tasks. A closed client, or a
    cluster shut down before or during a run, is an UnavailableError naming the cause.
    """

    def __init__(
        self,
        client: Any,
        workers: Mapping[str, Any] | None = None,
        *,
        const_bytes: int = 64 * 1024,
        scatter_bytes: int = 1 << 20,
        max_tensor_bytes: int | None = None,
    ) -> None:
        from . import require_dask

        require_dask()
        require_running(client, "DaskExecutor")
        self.client = client
        self.workers = None if workers is None else {_norm_task(k): v for k, v in workers.items()}
        self.const_bytes = const_bytes
        self.scatter_bytes = config.check_byte_count(scatter_bytes, "scatter_bytes")
        self.max_tensor_bytes = config.check_byte_count(max_tensor_bytes, "max_tensor_bytes")
        self._consts: dict[int, tuple[weakref.ref[Plan], dict[int, Any]]] = {}
        self._lock = threading.Lock()
        self._runs = itertools.count()
        self._info: tuple[float, dict[str, Any]] | None = None
        # The latest run's task keys -> their nodes (to read Dask's task stream by node).
        self.last_run_keys: dict[str, tuple[str, ...]] = {}

    # -- planning (the Session calls this in place of the local planner) -------------------

    def build_plan(
        self,
        fetch_outputs: Sequence[Output],
        target_nodes: Sequence[Node],
        feeds: Sequence[Output],
        session_device: DeviceSpec,
        allow_soft_placement: bool = True,
        feed_devices: Sequence[str] | None = None,
        **options: Any,
    ) -> DaskPlan:
        """The local plan of a copy of the graph placed on the host, plus each step's task.

        ``options`` go to the local planner as they are (its optimizer options).
        """
        anchors: list[Output | Node] = [*fetch_outputs, *target_nodes, *feeds]
        if not anchors:
            return DaskPlan(steps=(), num_slots=0, feed_slots=(), fetch_slots=())
        graph = anchors[0].graph
        wanted: dict[str, tuple[str | None, DeviceSpec]] = {}
        doc = graph_to_dict(graph)
        for n in doc["nodes"]:
            spec = session_device.merge(parse_device(n["device"]))
            wanted[n["name"]] = (_pin(spec), spec)
            n["device"] = ""
        shadow = graph_from_dict(doc)
        plan = _local_build_plan(
            [shadow.get_tensor_by_name(x.name) for x in fetch_outputs],
            [shadow.node(n.name) for n in target_nodes],
            [shadow.get_tensor_by_name(x.name) for x in feeds],
            DeviceSpec(),
            allow_soft_placement,
            None,
            places={name: pin for name, (pin, _) in wanted.items()},  # fused chains: one task
            **options,
        )
        steps: list[Step] = []
        pins: list[str | None] = []
        for step in plan.steps:
            pin, spec = wanted.get(step.node_name, (None, DeviceSpec()))
            device = "CPU:0"
            if spec.device_type == "GPU":
                if "GPU" in lookup_op(step.op_type).kernels:
                    device = f"GPU:{spec.device_index or 0}"
                elif not allow_soft_placement:
                    raise errors.InvalidArgumentError(
                        f"Cannot assign a device for operation {step.node_name}: no GPU "
                        f"kernel for op {step.op_type} and soft placement is off",
                        step.node_name,
                        step.op_type,
                    )
            steps.append(replace(step, device=device, forwardable=frozenset()))
            pins.append(pin)
            if step.node_name in wanted:
                task = pin or "/job:localhost/replica:0/task:0"
                graph.node(step.node_name).assigned_device = f"{task}/device:{device}"
        return _dask_plan(plan, tuple(steps), tuple(pins))

    # -- running ----------------------------------------------------------------------------

    def _workers_now(self) -> dict[str, Any]:
        """The scheduler's workers, asked at most once a second (a round trip per run
        otherwise); a worker that left meanwhile only moves its tasks (loose pins)."""
        now = time.monotonic()
        with self._lock:
            if self._info is None or now - self._info[0] > WORKERS_TTL_S:
                self._info = (now, _workers_info(self.client))
            return self._info[1]

    def _addresses(self, plan: DaskPlan) -> dict[str, str]:
        """Each task string's worker address; InvalidArgumentError for what cannot run."""
        info = self._workers_now()
        order = _worker_order(info)
        if self.workers is None:
            mapping = {f"/job:worker/task:{i}": addr for i, (_, addr) in enumerate(order)}
        else:
            by_name = {str(name): addr for name, addr in order}
            mapping = {}
            for task, who in self.workers.items():
                found = by_name.get(str(who), who if who in info else None)
                if found is not None:
                    mapping[task] = found
        has_gpu = {a for a, w in info.items() if (w.get("resources") or {}).get("GPU", 0) > 0}
        for step, pin in zip(plan.steps, plan.pins):
            if pin is not None and pin not in mapping:
                known = ", ".join(sorted(mapping)) or "none"
                raise errors.InvalidArgumentError(
                    f"Cannot assign a device for operation {step.node_name}: {pin} names no "
                    f"worker of the Dask cluster ({len(info)} workers; tasks: {known})",
                    step.node_name,
                    step.op_type,
                )
            if step.device.startswith("GPU") and (
                not has_gpu or (pin is not None and mapping[pin] not in has_gpu)
            ):
                where = f"worker {mapping[pin]} ({pin}) has no" if pin else "no worker has a"
                raise errors.InvalidArgumentError(
                    f"Cannot assign a device for operation {step.node_name}: it needs a GPU "
                    f"and {where} 'GPU' resource (start GPU workers with --resources GPU=1)",
                    step.node_name,
                    step.op_type,
                )
        return mapping

    def _const_futures(self, plan: DaskPlan, mapping: Mapping[str, str]) -> dict[int, Any]:
        """Large constants, submitted once per plan (as tasks: a lost copy is recomputed)."""
        with self._lock:
            entry = self._consts.get(id(plan))
            if entry is not None and entry[0]() is plan:
                return entry[1]
            futures = {}
            for step, pin in zip(plan.steps, plan.pins):
                if step.op_type != "Const" or step.device != "CPU:0":
                    continue
                value = step.attrs["value"]
                if np.asarray(value).nbytes < self.const_bytes:
                    continue
                futures[step.outputs[0]] = self.client.submit(
                    _value,
                    value,
                    key=f"mg-const-{_safe(step.node_name)}-{uuid.uuid4().hex[:12]}",
                    pure=False,
                    **_pinned(mapping, pin),
                )
            self._consts[id(plan)] = (weakref.ref(plan), futures)
            weakref.finalize(plan, self._consts.pop, id(plan), None)
            return futures

    def run(self, plan: Plan, feed_values: Sequence[Any], timings: list | None = None) -> list[Any]:
        if plan.dead_aware:  # its tasks would hand a dead value to the next kernel
            step = next(s for s in plan.steps if makes_dead([s.op_type]))
            raise errors.UnimplementedError(
                "a TF1 conditional (Switch/Merge) runs on the local executor only, not on Dask",
                step.node_name,
                step.op_type,
            )
        if not isinstance(plan, DaskPlan):  # a plan from the local planner: nothing pinned
            steps = tuple(replace(s, forwardable=frozenset()) for s in plan.steps)
            plan = _dask_plan(plan, steps, (None,) * len(steps))
        require_running(self.client, "Session.run on a DaskExecutor")
        mapping = self._addresses(plan)  # before anything is submitted
        if timings is None:
            return self._run(plan, feed_values, mapping)[0]
        import distributed

        t0 = time.time()
        with distributed.get_task_stream(self.client) as stream:
            out, names = self._run(plan, feed_values, mapping)
        timings.extend(self._timings(names, stream.data, t0))
        return out

    def _run(
        self, plan: DaskPlan, feed_values: Sequence[Any], mapping: Mapping[str, str]
    ) -> tuple[list[Any], dict[str, tuple[str, ...]]]:
        """The fetched values, and each task key's node names."""
        fed = dict(zip(plan.feed_slots, feed_values))
        futures: list[Any] = []
        wanted: dict[str, int | None] = {}
        keys: dict[str, tuple[Step, ...]] = {}
        try:
            consts = self._const_futures(plan, mapping)
            graph, wanted, keys, scattered = self._task_graph(plan, consts, fed, mapping)
            names = {k: tuple(s.node_name for s in v) for k, v in keys.items()}
            self.last_run_keys = names
            # One message to the scheduler per run; only the fetches and the last tasks
            # (run for effect) are held, so Dask frees intermediates as it goes.
            futures = self.client.get(graph, list(wanted), sync=False)
            out = self._collect(plan, fed, dict(zip(wanted, futures)), wanted, keys, scattered)
        except BaseException as e:  # an op error, a lost worker, KeyboardInterrupt
            why = client_down(self.client)
            if why is None:
                self.client.cancel(futures)
            if why is None or isinstance(e, (errors.OpError, KeyboardInterrupt)):
                raise
            # The client or its cluster closed during the run: Dask's CancelledError or
            # ClosedClientError says nothing about which.
            step = _awaited(futures, wanted, keys)
            node, op = (step.node_name, step.op_type) if step else ("", "")
            raise errors.UnavailableError(
                f"the Dask client closed while the run waited for "
                f"{step.node_name if step else 'its tasks'}: {why}; Dask raised "
                f"{type(e).__name__}",
                node,
                op,
            ) from e
        return out, names

    def _task_graph(
        self,
        plan: DaskPlan,
        consts: Mapping[int, Any],
        fed: Mapping[int, Any],
        mapping: Mapping[str, str],
    ) -> tuple[Any, dict[str, int | None], dict[str, tuple[Step, ...]], dict[int, Any]]:
        """The run as a Dask graph: one layer per group (annotated with its worker), a key
        per fed value (beside its readers when they share one worker) or a future for a
        large one scattered to them, and small getitem tasks where a group returns several
        values. Returns the graph, the keys to hold (key -> fetched slot, or None for a
        last task), each group key's steps and the scattered feeds' futures by slot."""
        from dask.highlevelgraph import HighLevelGraph, MaterializedLayer

        from ..transfer import to_host

        groups = _groups(plan, consts)
        run_id = f"{next(self._runs)}-{uuid.uuid4().hex[:8]}"
        producer = {o: g for g, (_, _, ss) in enumerate(groups) for s in ss for o in s.outputs}
        reads: dict[int, set[int]] = {}  # slot -> the groups that read it from outside
        for g, (_, _, steps) in enumerate(groups):
            for step in steps:
                for s in step.inputs:
                    if producer.get(s) != g:
                        reads.setdefault(s, set()).add(g)
        fetched = set(plan.fetch_slots)
        ref: dict[int, Any] = dict(consts)  # slot -> its key (or a const's future)
        scattered: dict[int, Any] = {}
        layers: dict[str, Any] = {}
        deps: dict[str, set[str]] = {}

        def layer(name: str, tasks: dict[str, Any], pin: Any, on: set[str], **more: Any) -> None:
            annotations = {**_pinned(mapping, pin), **more}
            layers[name] = MaterializedLayer(tasks, annotations=annotations or None)
            deps[name] = on

        for s, value in fed.items():
            if s not in reads:
                continue
            # Sent once per run: in the task graph (a lost copy is sent again), or a large
            # one scattered to its readers' workers, past the scheduler's task specs.
            pins = {groups[g][0] for g in reads[s]}
            key = f"mg-feed-{run_id}-{s}"
            value = to_host(value)
            if self.scatter_bytes is not None and value.nbytes >= self.scatter_bytes:
                # Asked afresh: a worker that left since the cached list is a KeyError
                # in the scheduler's scatter (its tasks just move: loose pins).
                alive = _workers_info(self.client) if pins - {None} else {}
                targets = sorted({mapping[p] for p in pins if p is not None} & alive.keys())
                ref[s] = scattered[s] = self.client.scatter(
                    {key: value}, workers=targets or None, broadcast=len(targets) > 1
                )[key]
            else:
                ref[s] = key
                layer(key, {key: value}, next(iter(pins)) if len(pins) == 1 else None, set())
        keys: dict[str, tuple[Step, ...]] = {}
        for g, (pin, gpu, steps) in enumerate(groups):
            inputs = tuple(sorted(s for s, gs in reads.items() if g in gs))
            outputs = tuple(
                o
                for step in steps
                for o in step.outputs
                if o in fetched or any(h != g for h in reads.get(o, ()))
            )
            key = f"mg-{_safe(steps[0].node_name)}-{run_id}-{g}"
            keys[key] = tuple(steps)
            group = _Group(tuple(steps), inputs, outputs, self.max_tensor_bytes)
            args = [ref[s] for s in inputs]
            on = {a for a in args if isinstance(a, str)}
            extra = {"resources": {"GPU": 1}} if gpu else {}
            layer(key, {key: (_run_group, group, *args)}, pin, on, **extra)
            if len(outputs) == 1:
                ref[outputs[0]] = key
            else:  # one small task per value, beside the group's result
                for i, o in enumerate(outputs):
                    part = ref[o] = f"{key}-{i}"
                    layer(part, {part: (operator.getitem, key, i)}, None, {key})
        wanted: dict[str, int | None] = {}
        for s in plan.fetch_slots:
            if s not in fed and isinstance(ref.get(s), str):
                wanted[ref[s]] = s
        consumed = set().union(*deps.values())
        for key in keys:
            if key not in consumed:  # a last task: held so that the run waits for it
                wanted.setdefault(key, None)
        return HighLevelGraph(layers, deps), wanted, keys, scattered

    def _collect(
        self,
        plan: DaskPlan,
        fed: Mapping[int, Any],
        futures: Mapping[str, Any],
        wanted: Mapping[str, int | None],
        keys: Mapping[str, tuple[Step, ...]],
        scattered: Mapping[int, Any],
    ) -> list[Any]:
        """Wait for the run (targets run for effect too), raise its first error, gather."""
        import distributed

        try:
            distributed.wait(list(futures.values()))
        except CancelledError:  # newer Dask raises for a cancelled future
            if client_down(self.client) is not None:
                raise  # the cluster went away: the caller says so
        failed = [f for f in futures.values() if f.status != "finished"]
        lost = [s for s, f in scattered.items() if f.status != "finished"]
        if failed and lost:  # Dask recomputes a lost task, never a lost scattered value
            reader = next(st for steps in keys.values() for st in steps if lost[0] in st.inputs)
            raise errors.UnavailableError(
                f"a fed value that {reader.node_name} reads was scattered to the workers "
                f"(it has scatter_bytes={self.scatter_bytes} bytes or more) and lost when "
                "its worker left the cluster; Dask cannot recompute a scattered value: run "
                "again, or raise scatter_bytes to send feeds inside the task graph",
                reader.node_name,
                reader.op_type,
            )
        if failed:  # a failure reaches every task after it: report the earliest node's
            raise min((_remote_error(f, keys) for f in failed), key=lambda e: e[0])[1]
        fetch_keys = [k for k, s in wanted.items() if s is not None]  # only fetches come back
        got = dict(zip(fetch_keys, self.client.gather([futures[k] for k in fetch_keys])))
        by_slot = {s: got[k] for k, s in wanted.items() if s is not None}
        out = []
        for s in plan.fetch_slots:
            if s in fed:
                out.append(fed[s])
            elif s in by_slot:
                out.append(by_slot[s])
            else:  # a fetched big constant: its per-plan future
                out.append(self._const_value(plan, s))
        return out

    def _const_value(self, plan: DaskPlan, slot: int) -> Any:
        entry = self._consts.get(id(plan))
        assert entry is not None
        return entry[1][slot].result()

    def _timings(
        self, keys: Mapping[str, tuple[str, ...]], records: Sequence[Any], t0: float
    ) -> list[Any]:
        """StepTimings of the run's tasks from Dask's task stream, one row per worker."""
        from ..executor import StepTiming

        info = _workers_info(self.client)
        names = {addr: w.get("name", addr) for addr, w in info.items()}
        out = []
        for rec in records:
            nodes = keys.get(rec.get("key"))
            if nodes is None:
                continue
            label = nodes[0] if len(nodes) == 1 else f"{nodes[0]}..{nodes[-1]} ({len(nodes)})"
            worker = f"worker {names.get(rec['worker'], rec['worker'])}"
            for ss in rec.get("startstops", ()):
                if ss.get("action") == "compute":
                    start, stop = ss["start"], ss["stop"]
                    out.append(
                        StepTiming(
                            (label, "DaskTask", worker, (start - t0) * 1e6, (stop - start) * 1e6)
                        )
                    )
        out.sort(key=lambda t: t[3])
        return out


def _groups(plan: DaskPlan, consts: Mapping[int, Any]) -> list[tuple[str | None, bool, list[Step]]]:
    """Consecutive steps with one placement (task, GPU or not); big constants left out."""
    groups: list[tuple[str | None, bool, list[Step]]] = []
    for step, pin in zip(plan.steps, plan.pins):
        if step.op_type == "Const" and step.outputs[0] in consts:
            continue
        gpu = step.device.startswith("GPU")
        if groups and groups[-1][0] == pin and groups[-1][1] == gpu:
            groups[-1][2].append(step)
        else:
            groups.append((pin, gpu, [step]))
    return groups


def _remote_error(fut: Any, keys: Mapping[str, tuple[Step, ...]]) -> tuple[int, BaseException]:
    """(the failing group's place in the run, the error to raise): the mg error a task
    raised, or one naming its first node."""
    import distributed

    exc = fut.exception() if fut.status == "error" else None
    order = {k: i for i, k in enumerate(keys)}
    key = str(getattr(exc, "task", None) if isinstance(exc, distributed.KilledWorker) else fut.key)
    key = key if key in keys else key.rsplit("-", 1)[0]
    steps = keys.get(key, ())
    where = order.get(key, len(order))
    if isinstance(exc, errors.OpError):
        return order.get(_key_of_node(keys, exc.node_name) or key, where), exc
    node, op = (steps[0].node_name, steps[0].op_type) if steps else ("", "")
    if exc is None:
        return where, errors.UnavailableError(
            f"the Dask task running {node} was cancelled", node, op
        )
    if isinstance(exc, distributed.KilledWorker):
        names = ", ".join(s.node_name for s in steps)
        return where, errors.UnavailableError(
            f"the Dask workers running {names} died each time Dask ran it ({exc})", node, op
        )
    return where, errors.InternalError(
        f"the Dask task running {node} failed: {type(exc).__name__}: {exc}", node, op
    )


def _awaited(
    futures: Sequence[Any],
    wanted: Mapping[str, int | None],
    keys: Mapping[str, tuple[Step, ...]],
) -> Step | None:
    """The step whose value the run still waited for, earliest in the plan (its fetch, or
    the last step of a task run for effect)."""
    order = {k: i for i, k in enumerate(keys)}
    waiting = []
    for f in futures:
        if f.status == "finished":
            continue
        group = f.key if f.key in keys else str(f.key).rsplit("-", 1)[0]
        steps = keys.get(group, ())
        slot = wanted.get(f.key)
        making = [s for s in steps if slot in s.outputs] or list(steps[-1:])
        waiting += [(order[group], step.node_name, step) for step in making]
    return min(waiting, key=lambda w: w[:2])[2] if waiting else None


def _key_of_node(keys: Mapping[str, tuple[Step, ...]], node_name: str) -> str | None:
    for key, steps in keys.items():
        if any(s.node_name == node_name for s in steps):
            return key
    return None
