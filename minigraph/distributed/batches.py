"""map_batches: run a graph over the chunks of dask arrays (data parallel).

The graph, pruned to the fetches with each feed a Placeholder, travels as its JSON
document: scattered once to every worker of the client, or (with Dask's local scheduler)
one key of the task graph. Each worker process keeps one Session per document digest, so
its plan cache serves every chunk that lands there.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import operator
import threading
import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .. import errors
from ..devices import DeviceSpec, parse_device
from ..graph import Graph, Output
from ..graph_io import graph_from_dict, graph_to_dict
from ..plan import _prune
from .executor import require_running

__all__ = ["map_batches"]


def _device_part(device: str) -> str:
    """A device string without its job/replica/task: what a worker's local Session accepts."""
    spec = parse_device(device)
    if spec.device_type is None:
        return ""
    return DeviceSpec(device_type=spec.device_type, device_index=spec.device_index).to_string()


def _fresh_name(taken: set[str], base: str) -> str:
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    taken.add(name)
    return name


def _pruned_document(
    graph: Graph,
    fetches: Sequence[Output],
    feeds: Sequence[Output],
    feed_shapes: Sequence[tuple[int | None, ...] | None],
) -> tuple[dict[str, Any], list[str], list[str]]:
    """The JSON document of what ``fetches`` need, with each feed a Placeholder.

    Returns the document, the fetches' tensor names in it and the feeds' placeholder
    names in it. ``feed_shapes`` gives each placeholder's shape (None: the tensor's).
    """
    fed = set(feeds)
    needed = {n.name for n in _prune(list(fetches), [], fed)}
    full = graph_to_dict(graph)
    taken = {n["name"] for n in full["nodes"]}
    rename: dict[str, str] = {}
    placeholders = []
    for x, shape in zip(feeds, feed_shapes):
        pname = _fresh_name(taken, f"mg_feed_{x.node.name}_{x.index}".replace("/", "_"))
        rename[x.name] = f"{pname}:0"
        dims = list(x.shape.dims) if shape is None and x.shape.dims is not None else shape
        placeholders.append(
            {
                "name": pname,
                "op": "Placeholder",
                "inputs": [],
                "device": "",
                "attrs": {
                    "dtype": {"type": x.dtype.name},
                    "shape": {"shape": None if dims is None else list(dims)},
                },
            }
        )
    nodes = []
    for node in full["nodes"]:
        if node["name"] not in needed:
            continue
        inputs = []
        for ref in node["inputs"]:
            if ref.startswith("^"):
                if ref[1:] in needed:
                    inputs.append(ref)
            else:
                inputs.append(rename.get(ref, ref))
        nodes.append({**node, "inputs": inputs, "device": _device_part(node["device"])})
    doc = {**full, "nodes": placeholders + nodes}
    fetch_names = [rename.get(x.name, x.name) for x in fetches]
    return doc, fetch_names, [rename[x.name][:-2] for x in feeds]


_CACHE_SIZE = 16
_cache: OrderedDict[str, Any] = OrderedDict()
_cache_lock = threading.Lock()


def _worker_session(digest: str, doc: str) -> Any:
    """This process's Session for a graph document, built once per digest (LRU of 16)."""
    from ..session import Session

    with _cache_lock:
        sess = _cache.get(digest)
        if sess is not None:
            _cache.move_to_end(digest)
            return sess
    sess = Session(graph_from_dict(json.loads(doc)))
    with _cache_lock:
        sess = _cache.setdefault(digest, sess)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return sess


@dataclass(frozen=True)
class _ChunkSpec:
    """What a chunk task needs besides the document and the fed chunks (plain data)."""

    digest: str
    fetch_names: tuple[str, ...]
    feed_names: tuple[str, ...]
    progress: str | None = None  # the Dask event topic counting finished chunks, if any


def _run_chunk(spec: _ChunkSpec, doc: str, *values: Any) -> Any:
    """One chunk's fetches: the array itself when there is one, else a tuple."""
    sess = _worker_session(spec.digest, doc)
    feeds = {f"{name}:0": v for name, v in zip(spec.feed_names, values)}
    out = sess.run(list(spec.fetch_names), feeds)
    if spec.progress is not None:
        _chunk_done(spec.progress)
    return out[0] if len(out) == 1 else tuple(out)


# -- a progress line while the chunks run ----------------------------------------------------


class _ChunkProgress:
    """The caller's terminal line for one map_batches call: ``map_batches: 3/8 chunks``,
    started by the first chunk of each compute and erased by its last."""

    def __init__(self, total: int) -> None:
        self.total = total
        self._bar: Any = None
        self._lock = threading.Lock()

    def tick(self, event: Any = None) -> None:
        """One chunk done (``event``: Dask's (time, message) when it came as an event)."""
        from ..progress import Progress

        with self._lock:
            if self._bar is None:
                self._bar = Progress("map_batches", self.total, "chunks")
            self._bar.update()
            if self._bar.done >= self.total:  # the next compute of the arrays starts afresh
                self._bar.close()
                self._bar = None


# Progress of recent calls by topic (a bounded map: a call's arrays may be computed any time
# later, or never; the oldest call's line stops and its Dask subscription ends).
_PROGRESS_CALLS = 32
_progress: OrderedDict[str, tuple[_ChunkProgress, Any]] = OrderedDict()
_progress_lock = threading.Lock()


def _chunk_done(topic: str) -> None:
    """Count a finished chunk: directly when the task runs in the caller's process (Dask's
    local scheduler, in-process workers), else as a Dask event the caller subscribed to."""
    with _progress_lock:
        entry = _progress.get(topic)
    if entry is not None:
        entry[0].tick()
        return
    try:
        from distributed import get_worker

        get_worker().log_event(topic, 1)
    except (ImportError, ValueError):  # not in a Dask worker: nobody is watching
        pass


def _watch_progress(client: Any, total: int) -> str | None:
    """The topic for this call's chunks to report to, when stderr is a terminal."""
    import sys

    from ..progress import enabled_for

    if not enabled_for(sys.stderr):
        return None
    topic = f"mg-progress-{uuid.uuid4().hex[:12]}"
    watcher = _ChunkProgress(total)
    if client is not None:
        client.subscribe_topic(topic, watcher.tick)
    with _progress_lock:
        _progress[topic] = (watcher, client)
        dropped = _progress.popitem(last=False) if len(_progress) > _PROGRESS_CALLS else None
    if dropped is not None and dropped[1][1] is not None:
        with contextlib.suppress(Exception):  # a closed client has no subscription to end
            dropped[1][1].unsubscribe_topic(dropped[0])
    return topic


# -- map_batches ----------------------------------------------------------------------------


def _is_dask_array(value: Any) -> bool:
    import dask.array as da

    return isinstance(value, da.Array)


def _check_dtype(out: Output, dtype: np.dtype) -> None:
    want = out.dtype.np
    ok = dtype == want or (
        dtype.kind in "biufc"
        and np.can_cast(dtype, want, "same_kind")
        and not (dtype.kind == "b" and want.kind != "b")
    )
    if not ok:
        raise errors.InvalidArgumentError(
            f"cannot feed a value of dtype {dtype} to tensor {out.name} of dtype {out.dtype.name}",
            out.node.name,
            out.node.type_string,
        )


def _broadcast_value(out: Output, value: Any) -> np.ndarray:
    """A value fed whole to every chunk, as an array of the tensor's dtype and shape."""
    try:
        arr = np.asarray(value)
    except Exception as e:
        raise errors.InvalidArgumentError(
            f"cannot feed {type(value).__name__} to {out.name}: {e}",
            out.node.name,
            out.node.type_string,
        ) from None
    _check_dtype(out, arr.dtype)
    if not out.shape.is_compatible_with(arr.shape):
        raise errors.InvalidArgumentError(
            f"Cannot feed value of shape {tuple(arr.shape)} for Tensor {out.name}, which has "
            f"shape {out.shape}",
            out.node.name,
            out.node.type_string,
        )
    return arr


def map_batches(
    graph: Graph, fetches: Any, feed_dict: Mapping[Any, Any], *, client: Any = None
) -> Any:
    """Run ``fetches`` over the chunks of dask arrays: one lazy dask array per fetch.

    Every value of ``feed_dict`` that is a ``dask.array`` must be chunked along axis 0
    only, with the same chunks as the other dask feeds; each chunk (the rows of every dask
    feed in that chunk, plus every other feed value whole) runs the graph, pruned to the
    fetches, on a worker. The results keep the nesting of ``fetches`` (lists, tuples,
    dicts) and are chunked along axis 0 like the feeds.

    The caller asserts that rows are independent, as with ``dask.array.map_blocks``: the
    graph must compute row i of each fetch from row i of the batch feeds alone. What shape
    inference proves wrong is refused: a fetch whose first dim is not the batch dim (for
    example a reduction over the batch, or a constant), feeds chunked along another axis,
    and chunks that disagree between feeds (``rechunk`` them first).

    The graph travels as its JSON document, once per worker (scattered to the client's
    workers when this is called); each worker keeps one Session, and its plan cache, per
    graph. ``client=None`` uses the current Dask client, or Dask's local scheduler when
    there is none (the document is then one key of the task graph). Compute the arrays
    on the client they were made for. While they compute, a line on a terminal's stderr
    counts the chunks done (``map_batches: 3/8 chunks``); nothing is shown elsewhere.

    >>> import dask.array as da, numpy as np, minigraph as mg
    >>> from minigraph.distributed import map_batches
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     x = mg.placeholder(mg.float32, [None, 3], name="x")
    ...     y = x * 2.0 + 1.0
    >>> out = map_batches(g, {"y": y}, {x: da.ones((8, 3), chunks=(4, 3), dtype="float32")})
    >>> out["y"].chunks, float(out["y"].sum().compute())
    (((4, 4), (3,)), 72.0)
    """
    from . import require_dask

    distributed = require_dask()
    import dask.array as da
    from dask.highlevelgraph import HighLevelGraph

    from ..session import Session

    helper = Session(graph)
    tensors, targets, rebuild = helper._normalise_fetches(fetches)
    if targets:
        raise TypeError(
            f"map_batches fetches tensors, not operations: {targets[0].name} is an operation"
        )
    if not tensors:
        raise ValueError("map_batches needs at least one tensor to fetch")

    batch: list[tuple[Output, Any]] = []
    broadcast: list[tuple[Output, Any]] = []
    seen: set[Output] = set()
    for key, value in feed_dict.items():
        out = graph.get_tensor_by_name(key) if isinstance(key, str) else helper._resolve(key)
        if not isinstance(out, Output):
            raise TypeError(f"Cannot interpret feed_dict key {key!r} as a tensor")
        if out in seen:
            raise ValueError(f"{out.name} is fed twice")
        seen.add(out)
        if _is_dask_array(value):
            batch.append((out, value))
        else:
            broadcast.append((out, value))
    if not batch:
        raise ValueError(
            "map_batches needs at least one dask.array feed chunked along axis 0; "
            "with none, run a Session"
        )

    chunks0: tuple[int, ...] | None = None
    first = ""
    for out, arr in batch:
        if arr.ndim == 0:
            raise ValueError(f"the dask array fed to {out.name} is a scalar: it has no batch axis")
        for axis in range(1, arr.ndim):
            if len(arr.chunks[axis]) > 1:
                raise ValueError(
                    f"the dask array fed to {out.name} is chunked along axis {axis} "
                    f"(chunks {arr.chunks[axis]}); map_batches splits along axis 0 only: "
                    f"use .rechunk({{{axis}: -1}})"
                )
        if any(c != c for c in arr.chunks[0]):  # NaN: unknown chunk sizes
            raise ValueError(
                f"the dask array fed to {out.name} has unknown chunk sizes along axis 0: "
                "call .compute_chunk_sizes() first"
            )
        if chunks0 is None:
            chunks0, first = arr.chunks[0], out.name
        elif arr.chunks[0] != chunks0:
            raise ValueError(
                f"the dask arrays fed to {first} and {out.name} are chunked differently "
                f"along axis 0 ({chunks0} and {arr.chunks[0]}): rechunk one like the other"
            )
        if not out.shape.is_compatible_with(arr.shape):
            raise errors.InvalidArgumentError(
                f"Cannot feed value of shape {tuple(arr.shape)} for Tensor {out.name}, which "
                f"has shape {out.shape}",
                out.node.name,
                out.node.type_string,
            )
        _check_dtype(out, np.dtype(arr.dtype))
    assert chunks0 is not None
    # Broadcast values are checked here (each worker's Session checks them again).
    broadcast = [(out, _broadcast_value(out, v)) for out, v in broadcast]

    feeds = [o for o, _ in batch] + [o for o, _ in broadcast]

    def document(rows: int | None) -> tuple[dict[str, Any], list[str], list[str]]:
        shapes: list[Any] = [(rows, *arr.shape[1:]) for _, arr in batch]
        shapes += [tuple(np.shape(v)) for _, v in broadcast]
        return _pruned_document(graph, tensors, feeds, shapes)

    doc, fetch_names, feed_names = document(None)
    specs = _probe_fetch_shapes(document, tensors, sorted(set(chunks0)))

    text = json.dumps(doc, separators=(",", ":"), allow_nan=False)
    digest = hashlib.sha256(text.encode()).hexdigest()[:32]
    token = uuid.uuid4().hex[:12]
    doc_key = f"mg-graph-{digest}"
    run_name = f"mg-batch-{token}"
    spec = _ChunkSpec(digest, tuple(fetch_names), tuple(feed_names))
    if client is None:
        try:
            client = distributed.default_client()
        except ValueError:
            client = None  # no client: Dask's local scheduler, the document is a key
    layer: dict[Any, Any] = {}
    doc_ref: Any = doc_key
    bkeys: list[Any] = []
    if client is not None:
        require_running(client, "map_batches")
        # The document and the values fed whole, once to every worker now (not inside
        # the task graph); a worker that joins later fetches them from a peer. Fresh keys
        # per call: a content key would be dropped by the release of an earlier call's
        # arrays while this call still needs it.
        doc_ref, *bkeys = client.scatter(
            [text, *(v for _, v in broadcast)], broadcast=True, hash=False
        )
    else:
        layer[doc_key] = text
        for k, (_, value) in enumerate(broadcast):
            bkey = f"mg-bcast-{token}-{k}"
            layer[bkey] = value
            bkeys.append(bkey)
    spec = replace(spec, progress=_watch_progress(client, len(chunks0)))
    single = len(tensors) == 1  # the chunk task's result is the fetch's chunk itself
    pad = (0,) * (len(specs[0]) - 1) if single else ()
    for i in range(len(chunks0)):
        args = [(arr.name, i) + (0,) * (arr.ndim - 1) for _, arr in batch] + bkeys
        layer[(run_name, i, *pad)] = (_run_chunk, spec, doc_ref, *args)
    layers: dict[str, Any] = {run_name: layer}
    deps: dict[str, set[str]] = {run_name: set()}
    for _, arr in batch:
        hlg = arr.__dask_graph__()
        layers.update(hlg.layers)
        deps.update(hlg.dependencies)
        deps[run_name] |= set(arr.__dask_layers__())
    results = []
    for j, (x, dims) in enumerate(zip(tensors, specs)):
        name = run_name if single else f"mg-fetch-{token}-{j}"
        rest = dims[1:]
        if not single:
            layers[name] = {
                (name, i) + (0,) * len(rest): (operator.getitem, (run_name, i), j)
                for i in range(len(chunks0))
            }
            deps[name] = {run_name}
        chunks = (chunks0, *[(float("nan") if d is None else d,) for d in rest])
        meta = np.empty((0,) * len(dims), dtype=x.dtype.np)
        results.append(da.Array(HighLevelGraph(layers, deps), name, chunks, meta=meta))
    return rebuild(results)


def _probe_fetch_shapes(
    document: Any, tensors: Sequence[Output], sizes: Sequence[int]
) -> list[tuple[int | None, ...]]:
    """Each fetch's dims, dim 0 proven (or not refuted) to be the batch dim by inference.

    The pruned graph is rebuilt with the batch dim set to each chunk size (and one more
    size, so that a constant equal to the one chunk size is caught); a fetch whose dim 0
    is known and differs from the batch size is refused.
    """
    probes = list(sizes)
    extra = [max(probes) + 1] if len(probes) == 1 else []
    dims: list[list[int | None] | None] = [None] * len(tensors)
    for rows in probes + extra:
        doc, fetch_names, _ = document(rows)
        try:
            g = graph_from_dict(doc)
        except errors.OpError:
            if rows in extra:
                continue  # the made-up size may be one the graph cannot take: no proof
            raise
        for j, (x, name) in enumerate(zip(tensors, fetch_names)):
            shape = g.get_tensor_by_name(name).shape
            if shape.rank is None:
                raise ValueError(
                    f"map_batches cannot tell the rank of fetch {x.name}: shape inference "
                    "left it unknown, so it cannot be a dask array's chunk"
                )
            if shape.rank == 0:
                raise ValueError(
                    f"fetch {x.name} is a scalar: it has no batch dim to split along "
                    "(map_batches needs row i of each fetch to come from row i of the feeds)"
                )
            assert shape.dims is not None
            d0 = shape.dims[0]
            if d0 is not None and d0 != rows:
                raise ValueError(
                    f"fetch {x.name}'s first dim is not the batch dim: with {rows} rows per "
                    f"chunk, shape inference gives it shape {shape}; map_batches needs row i "
                    "of each fetch to come from row i of the feeds"
                )
            got = list(shape.dims)
            prev = dims[j]
            if prev is None:
                dims[j] = got
            else:
                dims[j] = [a if a == b else None for a, b in zip(prev, got)]
    return [tuple(d) for d in dims if d is not None]
