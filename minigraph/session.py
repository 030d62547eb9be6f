"""Sessions: run fetches of a graph with feeds, through a cached plan.

``Session.run`` reads like an interpreter: normalise the fetches and feeds,
get the plan for that signature (building it once), run it, and rebuild the
caller's structure from the fetched values.

Thread-safety: several threads may call ``run`` on one Session at once; each
run has its own values, and the plan cache is locked.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

import numpy as np

from . import blas, errors
from .config import check_byte_count
from .devices import parse_device
from .errors import short_repr
from .executor import Executor, LocalExecutor
from .graph import Graph, Node, Operation, Output
from .kernel import check_output_size, tensor_limit
from .options import ConfigProto
from .plan import Plan, build_plan
from .scope import Scope, get_default_graph
from .transfer import to_host
from .wrappers import as_array, as_output

__all__ = ["Session", "ClientSession", "RunOptions", "RunMetadata", "PLAN_CACHE_SIZE"]

# Plans a Session keeps, least recently used dropped first: a long-lived Session fed many
# different fetch/feed sets must not grow without bound.
PLAN_CACHE_SIZE = 256


@dataclass
class RunOptions:
    """Options for one run.

    ``trace=True`` collects per-node timings into RunMetadata; ``return_device_arrays=True``
    leaves fetched values that live on a GPU there (CuPy arrays) instead of copying them
    to NumPy arrays.
    """

    trace: bool = False
    return_device_arrays: bool = False


_NO_OPTIONS = RunOptions()  # a run without options: one shared, never written


@dataclass
class RunMetadata:
    """Filled by a traced run: one StepTiming (name, op, device, start µs, duration µs) per node."""

    step_timings: list = field(default_factory=list)
    optimizations: tuple[str, ...] = ()  # what each optimizer pass changed in the run's plan


class Session:
    """Runs parts of a graph.

    Args:
        graph: the graph to run (default: the current default graph).
        device: where nodes without a device request run: None (the CPU),
            "/cpu:0" or "/gpu:0".
        allow_soft_placement: run an op on the CPU when the chosen device has
            no kernel for it.
        executor: what runs plans (default: a LocalExecutor).
        max_tensor_bytes: the most bytes one tensor may take in this Session's runs
            (default: ``mg.config.max_tensor_bytes()``, the machine's free memory unless
            set); a larger output, feed conversion or fetch copy is a
            ResourceExhaustedError naming the node, raised before allocating.
        config: a ``mg.ConfigProto``: threads per kernel and steps at once, soft placement (its
            ``allow_soft_placement`` replaces the argument above) and which optimizer
            passes run when a plan is built (all by default).

    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     x = mg.placeholder(mg.float32, shape=[None], name="x")
    ...     y = x * 2.0
    >>> with mg.Session(g) as sess:
    ...     sess.run(y, feed_dict={x: [1.0, 2.0]})
    array([2., 4.], dtype=float32)
    """

    def __init__(
        self,
        graph: Graph | None = None,
        device: str | None = None,
        allow_soft_placement: bool = True,
        executor: Executor | None = None,
        max_tensor_bytes: int | None = None,
        config: ConfigProto | None = None,
    ) -> None:
        if graph is not None and not isinstance(graph, Graph):
            raise TypeError(f"graph must be a mg.Graph, got {type(graph).__name__}")
        if device is not None and not isinstance(device, str):
            raise TypeError(f"device must be a str or None, got {type(device).__name__}")
        self.max_tensor_bytes = check_byte_count(max_tensor_bytes, "max_tensor_bytes")
        self.graph = graph if graph is not None else get_default_graph()
        self.device = device
        self._device_spec = parse_device(device)
        if config is not None and not isinstance(config, ConfigProto):
            raise TypeError(f"config must be a mg.ConfigProto, got {type(config).__name__}")
        self.config = config or ConfigProto(allow_soft_placement=allow_soft_placement)
        self.allow_soft_placement = self.config.allow_soft_placement
        self._executor = executor or LocalExecutor(
            self.max_tensor_bytes,
            self.config.intra_op_parallelism_threads or None,
            self.config.inter_op_parallelism_threads or None,
        )
        self._plans: dict[tuple[Any, ...], Plan] = {}
        # When each plan was last used, by id: the key's hash runs Python code, an id's not.
        self._last_used: dict[int, int] = {}
        self._clock = itertools.count()
        self._lock = threading.Lock()
        self._closed = False
        # The last run's plan, with its signature (fetches, targets, feeds, feed devices).
        self._last_plan: tuple[tuple[Any, ...], Plan] | None = None
        # Each Output fed so far, with its NumPy dtype and dims: a graph's Outputs are few.
        self._fed: dict[Output, tuple[np.dtype, tuple[int | None, ...] | None]] = {}

    # -- the interpreter -----------------------------------------------------

    def run(
        self,
        fetches: Any,
        feed_dict: Mapping[Any, Any] | None = None,
        options: RunOptions | None = None,
        run_metadata: RunMetadata | None = None,
    ) -> Any:
        """Run what ``fetches`` need and return their values in the same structure.

        Fetches are Outputs, Operations (run for effect; their value is None),
        tensor names ("x:0"), op names ("x"), or lists, tuples and dicts of them.
        ``feed_dict`` maps Outputs or tensor names to arrays.
        """
        if self._closed:
            raise errors.FailedPreconditionError("Attempted to use a closed Session.")
        options = options or _NO_OPTIONS
        if (
            feed_dict is not None
            and type(feed_dict) is not dict
            and not isinstance(feed_dict, Mapping)
        ):
            raise TypeError(
                f"feed_dict must be a dict (a mapping of tensors to values), got "
                f"{type(feed_dict).__name__}"
            )
        if options is not None and not isinstance(options, RunOptions):
            raise TypeError(f"options must be a mg.RunOptions, got {type(options).__name__}")
        if run_metadata is not None and not isinstance(run_metadata, RunMetadata):
            raise TypeError(
                f"run_metadata must be a mg.RunMetadata, got {type(run_metadata).__name__}"
            )
        tensors, targets, rebuild = self._normalise_fetches(fetches)
        feed_keys, feed_values, feed_devices = self._normalise_feeds(feed_dict or {})
        plan = self._plan(tensors, targets, feed_keys, feed_devices)
        timings: list | None = [] if options.trace else None
        blas_threads = blas.plan_calls_blas(plan) and blas.run_threads(
            self.config.intra_op_parallelism_threads
        )
        if blas_threads:  # BLAS's own threads within this run's budget (minigraph.blas)
            blas.enter(blas_threads)
        try:
            values = self._executor.run(plan, feed_values, timings)
        finally:
            if blas_threads:
                blas.leave(blas_threads)
        if run_metadata is not None and timings is not None:
            run_metadata.step_timings = timings
            run_metadata.optimizations = plan.optimizations
        limit = self._limit
        if options.return_device_arrays:
            owned = [
                _owned(v, t, limit) if isinstance(v, np.ndarray) else v
                for v, t in zip(values, tensors)
            ]
        else:
            owned = [
                v if type(v) is np.ndarray and v.flags.writeable else _owned(to_host(v), t, limit)
                for v, t in zip(values, tensors)
            ]
        for i in plan.shared_fetches:  # views of an earlier fetch's buffer: the caller's own
            if owned[i] is values[i]:  # not copied above (from a constant, a feed, a GPU)
                owned[i] = _owned(owned[i], tensors[i], limit, copy=True)
        return rebuild(owned)

    def _limit(self) -> int:
        return tensor_limit(self.max_tensor_bytes)

    # -- helpers -------------------------------------------------------------

    def _plan(
        self,
        tensors: list[Output],
        targets: list[Node],
        feeds: list[Output],
        feed_devices: list[str],
    ) -> Plan:
        names = tuple(t.name for t in targets) if targets else ()
        last = self._last_plan
        if last is not None and last[0] == (tensors, names, feeds, feed_devices):
            # the same signature as the last run: compared element by element, mostly by
            # identity, where the dict's key would hash every Output (1000 fetches: 60 µs)
            self._last_used[id(last[1])] = next(self._clock)
            return last[1]
        key = (tuple(tensors), names, tuple(feeds), tuple(feed_devices))
        plan = self._plans.get(key)
        if plan is None:
            with self._lock:
                plan = self._plans.get(key)
                if plan is None:
                    # An executor that runs plans elsewhere (DaskExecutor) may plan them.
                    build = getattr(self._executor, "build_plan", build_plan)
                    plan = build(
                        tensors,
                        targets,
                        feeds,
                        self._device_spec,
                        self.allow_soft_placement,
                        feed_devices,
                        optimizer=self.config.graph_options.optimizer_options,
                    )
                    self._plans[key] = plan
                    self._last_used[id(plan)] = next(self._clock)
                    if len(self._plans) > PLAN_CACHE_SIZE:
                        self._drop_least_recently_used()
        self._last_used[id(plan)] = next(self._clock)
        self._last_plan = ((tensors, names, feeds, feed_devices), plan)  # one assignment
        return plan

    def _drop_least_recently_used(self) -> None:
        used = self._last_used
        key = min(self._plans, key=lambda k: used.get(id(self._plans[k]), -1))
        del self._plans[key]
        # Rebuilt rather than popped: a run racing this one may re-add a dropped plan's id.
        self._last_used = {id(p): used.get(id(p), -1) for p in self._plans.values()}

    def _resolve(self, fetch: Any) -> Output | Node:
        if isinstance(fetch, str):
            if ":" in fetch:
                return self.graph.get_tensor_by_name(fetch)
            return self.graph.node(fetch)
        target: Output | Node | None
        if isinstance(fetch, Operation):
            target = fetch.node
        else:
            target = as_output(fetch)
            if target is None:
                op = getattr(fetch, "operation", None)
                if not isinstance(op, Operation):
                    raise TypeError(
                        f"Fetch argument {short_repr(fetch)} has invalid type "
                        f"{type(fetch).__name__}: expected an Output, Operation, tensor or op "
                        "name, or a list, tuple or dict of them"
                    )
                target = op.node
        graph = target.graph
        if graph is not self.graph:
            name = target.name
            raise errors.InvalidArgumentError(
                f"Fetch {name} is not an element of this session's graph", name.split(":")[0]
            )
        return target

    def _normalise_fetches(self, fetches: Any) -> tuple[list[Output], list[Node], Callable]:
        if type(fetches) is Output and fetches.op.node.graph is self.graph:
            return [fetches], [], _first
        if type(fetches) is list and all(
            type(f) is Output and f.op.node.graph is self.graph for f in fetches
        ):  # the common case, fast: a flat list of this graph's Outputs (repeats are fine)
            return list(fetches), [], _same
        tensors: list[Output] = []
        targets: list[Node] = []

        def walk(f: Any) -> Callable[[list[Any]], Any]:
            if isinstance(f, list | tuple) and as_output(f) is None:
                parts = [walk(x) for x in f]
                if isinstance(f, tuple) and hasattr(f, "_fields"):  # namedtuple
                    return lambda v: type(f)(*(p(v) for p in parts))
                kind = type(f) if isinstance(f, tuple) else list
                return lambda v: kind(p(v) for p in parts)
            if isinstance(f, Mapping):
                items = [(k, walk(x)) for k, x in f.items()]
                mapping: Any = type(f)
                return lambda v: mapping((k, p(v)) for k, p in items)
            target = self._resolve(f)
            if isinstance(target, Node):
                targets.append(target)
                return lambda v: None
            i = len(tensors)  # a repeat too: the plan copies it (Plan.shared_fetches)
            tensors.append(target)
            return lambda v: v[i]

        return tensors, targets, walk(fetches)

    def _normalise_feeds(
        self, feed_dict: Mapping[Any, Any]
    ) -> tuple[list[Output], list[Any], list[str]]:
        keys, values = [], []
        fed = self._fed
        for key, value in feed_dict.items():
            known = fed.get(key) if type(key) is Output else None
            if (
                known is not None
                and type(value) is np.ndarray
                and value.dtype is known[0]
                and _shape_fits(known[1], value.shape)
            ):  # the common case, fast: an Output fed before, an array that needs no change
                keys.append(key)
                values.append(_read_only(value))
                continue
            out = self._fed_output(key)
            keys.append(out)
            values.append(_check_feed(out, value, self._limit))
        if len(keys) > 1:
            order = sorted(range(len(keys)), key=lambda k: (keys[k].node.id, keys[k].index))
            keys, values = [keys[k] for k in order], [values[k] for k in order]
        return keys, values, [_device_of(v) for v in values]

    def _fed_output(self, key: Any) -> Output:
        """The Output a feed_dict key names, checked to be of this graph; remembered with
        its dtype and dims for the fast path of later runs."""
        if type(key) is Output:
            out: Output | None = key
        elif isinstance(key, str):
            out = self.graph.get_tensor_by_name(key)
        else:
            out = as_output(key)
        if out is None:
            raise TypeError(f"Cannot interpret feed_dict key {short_repr(key)} as a tensor")
        if out.graph is not self.graph:
            raise errors.InvalidArgumentError(
                f"Fed tensor {out.name} is not an element of this session's graph",
                out.node.name,
                out.node.type_string,
            )
        self._fed[out] = (out.dtype.np, out.shape.dims)
        return out

    def close(self) -> None:
        self._closed = True
        self._last_plan = None
        self._plans.clear()
        self._last_used.clear()
        resources = getattr(self._executor, "resources", None)
        if resources is not None:  # the variables' values go with the Session, as in TF
            resources.clear()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _check_feed(out: Output, value: Any, limit: Callable[[], int]) -> Any:
    """The fed value as a read-only array of the tensor's dtype, checked against its shape.

    An integer fed into a narrower integer tensor must fit (an int64 2**40 into int32 is
    an error, not a silent wrap); a conversion that would allocate more than ``limit()``
    bytes is a ResourceExhaustedError.
    """
    want = out.dtype.np
    node = out.node

    def fail(msg: str, error: type[errors.OpError] = errors.InvalidArgumentError) -> NoReturn:
        raise error(msg, node.name, node.type_string)

    on_device = hasattr(value, "__cuda_array_interface__")
    if on_device:
        arr = value  # a device array: checked below, moved by the plan's copies
    else:
        if as_output(value) is not None or isinstance(value, Operation):
            fail(
                f"The value of a feed cannot be a tensor (got {short_repr(value)}); feed a NumPy "
                "array, a Python scalar or a list"
            )
        try:
            arr = value if isinstance(value, np.ndarray) else as_array(value)
        except (TypeError, ValueError) as e:
            fail(f"cannot feed {type(value).__name__} to {out.name}: {e}")
    kind_ok = arr.dtype == want or (
        arr.dtype.kind in "biufc"
        and np.can_cast(arr.dtype, want, "same_kind")
        and not (arr.dtype.kind == "b" and want.kind != "b")
    )
    if not kind_ok:
        fail(
            f"cannot feed a value of dtype {arr.dtype} to tensor {out.name} of dtype "
            f"{out.dtype.name}"
        )
    if not _shape_fits(out.shape.dims, arr.shape):
        fail(
            f"Cannot feed value of shape {tuple(arr.shape)} for Tensor {out.name}, which has "
            f"shape {out.shape}"
        )
    if arr.dtype != want:
        check_output_size(arr.shape, want.itemsize, node.name, node.type_string, limit())
        if arr.dtype.kind in "iu" and want.kind in "iu" and arr.size:
            info = np.iinfo(want)
            lo, hi = int(arr.min()), int(arr.max())
            if lo < info.min or hi > info.max:
                fail(
                    f"cannot feed {arr.dtype} value {lo if lo < info.min else hi} to tensor "
                    f"{out.name} of dtype {out.dtype.name}: out of range (minigraph does not "
                    "wrap integers silently; cast first)"
                )
        try:
            arr = arr.astype(want)
        except MemoryError:
            fail(
                f"OOM converting the value fed to {out.name} to {out.dtype.name}: "
                f"{arr.size * want.itemsize} bytes needed",
                errors.ResourceExhaustedError,
            )
    if on_device:
        return arr  # CuPy has no read-only arrays; plans never write a fed buffer anyway
    return _read_only(arr)


def _read_only(arr: np.ndarray) -> np.ndarray:
    """A read-only view of a fed array: no kernel writes it, and a fetch of it (or of a view
    of it) is copied, so the caller's array is never changed through a run."""
    view = arr.view()
    view.setflags(write=False)  # half the cost of view.flags.writeable = False
    return view


def _same(values: list[Any]) -> list[Any]:
    return values


def _first(values: list[Any]) -> Any:
    return values[0]


def _shape_fits(dims: tuple[int | None, ...] | None, shape: tuple[int, ...]) -> bool:
    """A fed array's shape against the tensor's partial one (TensorShape.is_compatible_with
    without building a TensorShape: this runs once per feed per run)."""
    if dims is None or dims == shape:
        return True
    return len(dims) == len(shape) and all(d is None or d == n for d, n in zip(dims, shape))


def _device_of(value: Any) -> str:
    """Where a fed value lives: "CPU:0", or "GPU:<id>" for a CuPy array."""
    if type(value) is np.ndarray:
        return "CPU:0"
    device: Any = getattr(value, "device", None)
    return f"GPU:{device.id}" if hasattr(device, "id") else "CPU:0"


def _owned(value: Any, tensor: Output, limit: Callable[[], int], copy: bool = False) -> Any:
    """A fetched array the caller may write: constants and feeds are read-only views, and
    a ``copy`` is asked for a view of another fetch's buffer; both are copied here (after a
    size check against ``limit()``: a fed broadcast view may stand for far more memory
    than it holds)."""
    if not copy and value.flags.writeable:
        return value
    node = tensor.node
    check_output_size(value.shape, value.itemsize, node.name, node.type_string, limit())
    try:
        return value.copy()
    except MemoryError:
        raise errors.ResourceExhaustedError(
            f"OOM copying the fetched value of {tensor.name}: {value.nbytes} bytes needed",
            node.name,
            node.type_string,
        ) from None


class ClientSession:
    """TensorFlow's C++ ``ClientSession``: runs Outputs of a Scope's graph.

    >>> import minigraph as mg
    >>> root = mg.Scope.new_root_scope()
    >>> c = mg.ops.Const(root, [1, 2])
    >>> mg.ClientSession(root).run([c.output])
    [array([1, 2], dtype=int32)]
    """

    def __init__(self, scope: Scope, device: str | None = None) -> None:
        self.scope = scope
        self._session = Session(scope.graph, device=device)

    def run(
        self,
        fetch_outputs: Sequence[Any],
        feed_dict: Mapping[Any, Any] | None = None,
        run_outputs: Sequence[Any] = (),
    ) -> list[Any]:
        """Values of ``fetch_outputs`` (a list of Outputs); ``run_outputs`` run for effect."""
        if as_output(fetch_outputs) is not None:
            fetch_outputs = [fetch_outputs]
        values = self._session.run([list(fetch_outputs), list(run_outputs)], feed_dict)
        return values[0]
