"""CUDA graphs of fixed-shape GPU plans: capture a plan's steps once, then replay them.

At batch 1 a GPU plan costs its kernels' launches and Python's time per step far more
than the kernels themselves (keras_mlp: 11 steps, 0.33 ms on an H200 against 0.05 on the
CPU). A CUDA graph launches all of a plan's kernels with one call. :class:`PlanGraphs`
holds, for one plan, a captured graph per feed signature (each feed's shape and dtype):

- **When**: every step of the plan runs on the GPU (host constants aside; a CPU step,
  even shape arithmetic on constants, makes the plan not capturable: the simplest rule),
  no step is stateful (a replay would repeat a random op's draws),
  every feed is a device array of at most SMALL_DEVICE_FEED bytes or a host array of at
  most SMALL_HOST_FEED bytes (a large feed's copy into the graph's buffer outweighs the
  launches a graph saves: such a plan is not launch-bound), and the
  plan has run CAPTURE_AFTER times with that signature (so every kernel is compiled and
  every lazy table built). At most MAX_GRAPHS signatures per plan are captured.
- **How**: the feeds' uploads (the ``_Copy`` steps that read a fed host value) stay out
  of the graph: static device buffers stand for their results, and for device feeds. The
  other steps run once under CuPy's stream capture on a private stream, allocating from a
  private ``cupy.cuda.MemoryPool`` that the captured graph owns for its lifetime, so a
  replay never writes memory that anyone else has been given.
- **Replay**: copy the feeds into the static buffers, launch the graph on the current
  stream, and copy each fetched device value into a fresh array, so no caller ever holds
  a buffer that a later replay overwrites; replays of one graph take turns (a lock).
- **Failure**: anything that fails during capture (a kernel that syncs or reads a value
  to the host, which stream capture forbids; an unsupported call; an error of any kind)
  ends the capture, marks the plan not capturable for good, and the run goes on plainly:
  never a wrong answer, never a stream left capturing.

The simulated GPU (``MINIGRAPH_SIMULATED_GPU=1``) takes the same path: its "capture" runs
the steps (recording nothing), its host reads (``asnumpy``) fail while capturing as CuPy's
do, and its "replay" runs the steps again and writes their results into the captured
output arrays, so the bookkeeping (captures, fallbacks, copies out) is tested everywhere.
It is opt-in: ``mg.config.set_cuda_graphs(True)`` or ``MINIGRAPH_CUDA_GRAPHS=1`` (see
docs/devices.md for why it is off by default).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from . import simulated_gpu
from .devices import is_cupy

__all__ = ["PlanGraphs", "CAPTURE_AFTER", "MAX_GRAPHS", "SMALL_HOST_FEED", "SMALL_DEVICE_FEED"]

CAPTURE_AFTER = 2  # plain runs of one feed signature before it is captured
MAX_GRAPHS = 4  # feed signatures captured per plan
SMALL_HOST_FEED = 1 << 16  # bytes: a larger host feed's upload outweighs what a graph saves
SMALL_DEVICE_FEED = 1 << 20  # bytes: copying a larger device feed in costs more than it saves

Signature = tuple[tuple[tuple[int, ...], str, bool], ...]
RunSteps = Callable[[list[Any]], None]


class PlanGraphs:
    """One plan's captured graphs. ``xp`` is the GPU's array module; ``uploads`` maps the
    slot of each upload step's result to the index of the feed it uploads; ``feed_slots``
    are the plan's; ``run_region(values)`` runs every step but the uploads on ``values``.

    ``captures`` and ``failures`` count what happened (tests read them); once ``broken``,
    the plan runs plainly for good."""

    def __init__(
        self,
        xp: Any,
        feed_slots: Sequence[int],
        fetch_slots: Sequence[int],
        uploads: dict[int, int],
        template: list[Any],
        run_region: RunSteps,
    ) -> None:
        self.xp = xp
        self.feed_slots = tuple(feed_slots)
        self.fetch_slots = tuple(fetch_slots)
        self.uploads = dict(uploads)
        self.host_feeds = frozenset(self.uploads.values())
        self.template = template
        self.run_region = run_region
        self.graphs: dict[Signature, _Captured] = {}
        self.seen: dict[Signature, int] = {}
        self.captures = 0
        self.failures = 0
        self.replays = 0
        self.broken = False
        self.failure: str | None = None  # why the capture failed, for tests and debugging
        self._lock = threading.Lock()

    def run(self, feed_values: Sequence[Any]) -> list[Any] | None:
        """The fetched values by a graph's replay, capturing it first if it is time; None
        when this run must be a plain one."""
        if self.broken:
            return None
        sig = self._signature(feed_values)
        if sig is None:
            return None
        captured = self.graphs.get(sig)
        if captured is None:
            with self._lock:
                count = self.seen[sig] = self.seen.get(sig, 0) + 1
                if count <= CAPTURE_AFTER or len(self.graphs) >= MAX_GRAPHS or self.broken:
                    return None
                captured = self.graphs.get(sig) or self._capture(sig, feed_values)
            if captured is None:
                return None
        self.replays += 1
        return captured.replay(feed_values)

    def _signature(self, feed_values: Sequence[Any]) -> Signature | None:
        """Each feed's shape, dtype and whether it is uploaded; None for a large host feed,
        or a host array that a step would read as it is (HostMemory, a real GPU only)."""
        sig = []
        for k, v in enumerate(feed_values):
            host = k in self.host_feeds
            if host and v.nbytes > SMALL_HOST_FEED:
                return None
            if not host and isinstance(v, np.ndarray) and is_cupy(self.xp):
                return None
            if not host and v.nbytes > SMALL_DEVICE_FEED:
                return None
            sig.append((tuple(v.shape), v.dtype.str, host))
        return tuple(sig)

    def _capture(self, sig: Signature, feed_values: Sequence[Any]) -> _Captured | None:
        backend = _CuPyBackend(self.xp) if is_cupy(self.xp) else _SimulatedBackend()
        try:
            captured = _Captured.capture(self, backend, feed_values)
        except Exception as e:  # a sync, an unsupported call, an error: plain runs from now on
            self.failure = f"{type(e).__name__}: {e}"
            self.broken = True
            self.failures += 1
            return None
        self.graphs[sig] = captured
        self.captures += 1
        return captured


class _Captured:
    """One graph: its static input buffers, the values it leaves in the fetch slots, the
    private memory pool and stream it was captured with, and its launch."""

    def __init__(self, owner: PlanGraphs, backend: Any) -> None:
        self.owner = owner
        self.backend = backend
        self.static: dict[int, Any] = {}  # slot -> device buffer the feed is copied into
        self.sources: dict[int, int] = {}  # slot -> index of the feed it holds
        self.outputs: list[Any] = []
        self.graph: Any = None
        self.lock = threading.Lock()

    @classmethod
    def capture(cls, owner: PlanGraphs, backend: Any, feed_values: Sequence[Any]) -> _Captured:
        self = cls(owner, backend)
        xp = owner.xp
        with backend.allocating():
            for slot, k in [*owner.uploads.items(), *_device_feeds(owner)]:
                v = feed_values[k]
                self.static[slot] = xp.empty(v.shape, v.dtype)
                self.sources[slot] = k
        self._fill(feed_values)
        values = owner.template.copy()  # the steps read no feed but through a static buffer
        for slot, buffer in self.static.items():
            values[slot] = buffer
        self.graph = backend.capture(lambda: owner.run_region(values))
        self.outputs = [values[s] for s in owner.fetch_slots]
        if not backend.simulated:
            return self
        # A simulated replay runs the steps again and leaves their results where the
        # capture's were, as a real graph does (so a missing copy out shows in tests).
        targets = [o if _is_buffer(o) else None for o in self.outputs]

        def rerun() -> None:
            again = owner.template.copy()
            for slot, buffer in self.static.items():
                again[slot] = buffer
            owner.run_region(again)
            for target, s in zip(targets, owner.fetch_slots):
                if target is not None and again[s] is not target:
                    np.copyto(target, again[s])

        self.graph = rerun
        return self

    def _fill(self, feed_values: Sequence[Any]) -> None:
        for slot, k in self.sources.items():
            self.backend.fill(self.static[slot], feed_values[k])

    def replay(self, feed_values: Sequence[Any]) -> list[Any]:
        with self.lock:
            self._fill(feed_values)
            self.backend.launch(self.graph)
            return [o.copy() if _is_buffer(o) else o for o in self.outputs]


def _device_feeds(owner: PlanGraphs) -> Iterator[tuple[int, int]]:
    """(slot, feed index) of the feeds the steps read on the device as they are."""
    for k, slot in enumerate(owner.feed_slots):
        if k not in owner.host_feeds:
            yield slot, k


def _is_buffer(x: Any) -> bool:
    """A device array the graph writes (not a host constant, read-only, left as it is)."""
    return (
        x is not None
        and hasattr(x, "copy")
        and getattr(x, "flags", None) is not None
        and (x.flags.writeable if isinstance(x, np.ndarray) else True)
    )


class _CuPyBackend:
    """Capture with CuPy: a private non-blocking stream and memory pool per graph."""

    simulated = False

    def __init__(self, cupy: Any) -> None:
        self.cupy = cupy
        self.pool = cupy.cuda.MemoryPool()
        self.stream = cupy.cuda.Stream(non_blocking=True)

    @contextlib.contextmanager
    def allocating(self) -> Iterator[None]:
        with self.cupy.cuda.using_allocator(self.pool.malloc):
            yield

    def capture(self, run: Callable[[], None]) -> Any:
        cuda = self.cupy.cuda
        with self.stream, cuda.using_allocator(self.pool.malloc):
            self.stream.begin_capture()
            try:
                run()
            except BaseException:
                with contextlib.suppress(Exception):
                    self.stream.end_capture()  # an invalidated capture says so: ignored
                raise
            return self.stream.end_capture()

    def fill(self, buffer: Any, value: Any) -> None:
        if isinstance(value, np.ndarray):
            buffer.set(np.ascontiguousarray(value))
        else:
            self.cupy.copyto(buffer, value)

    def launch(self, graph: Any) -> None:
        graph.launch(stream=self.cupy.cuda.get_current_stream())


class _SimulatedBackend:
    """The simulated GPU's stand-in: the steps run; host reads fail while "capturing"."""

    simulated = True

    def allocating(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def capture(self, run: Callable[[], None]) -> Any:
        with simulated_gpu.capturing():
            run()
        return None  # replaced by the caller's rerun

    def fill(self, buffer: Any, value: Any) -> None:
        np.copyto(buffer, value)

    def launch(self, graph: Callable[[], None]) -> None:
        graph()
