"""Independent steps at once: big CPU steps on an inter-op pool, as soon as their inputs are.

A CPU step may be big when its outputs are known to take at least ``BIG_STEP_BYTES`` or
their size is unknown until it runs (DynamicPartition, a placeholder's batch dim). A plan
with two such candidates that do not depend on each other is scheduled dynamically: each
step starts once the steps that make its inputs are done; a candidate with that much work
(its known output bytes, else its inputs' bytes, as this run feeds them) goes to the pool,
every other step runs in the calling thread, which waits on the pool only when nothing
else is ready. Every other plan keeps the executor's plain loop, which costs nothing extra,
and so does a run whose steps are all of unknown size and whose feeds are small.
NumPy releases the GIL in its loops, so two big independent steps (the two partitions of a
partition-and-stitch graph) use two cores.

A value is released once every step that reads it is done. Forwarding stays sound: a step
may overwrite only a buffer that no other step reads (see minigraph.plan).
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, NamedTuple, NoReturn

from .plan import Step

__all__ = ["BIG_STEP_BYTES", "Schedule", "plan_schedule", "run_schedule", "default_threads"]

# A step whose work is less than this runs in the calling thread: handing it to a thread
# costs more (tens of µs) than it could save.
BIG_STEP_BYTES = 1 << 20


class Schedule(NamedTuple):
    """The dependencies among a plan's fast steps (indices into the executor's list)."""

    producers: tuple[int, ...]  # how many steps make each step's inputs
    consumers: tuple[tuple[int, ...], ...]  # the steps that read each step's outputs
    reads: tuple[tuple[int, ...], ...]  # the value slots each step reads (each once)
    readers: dict[int, int]  # value slot -> how many steps read it (fetched slots: none)
    known_bytes: dict[int, int]  # candidate step -> its known output bytes (0: unknown)

    def worth_it(self, feed_values: Sequence[Any]) -> bool:
        """Whether this run may have two big steps: some step is known to be big, or the
        feeds are (else the scheduler's cost, about 1 µs a step, buys nothing)."""
        if any(self.known_bytes.values()):
            return True
        return sum(getattr(v, "nbytes", 0) for v in feed_values) >= BIG_STEP_BYTES


def default_threads(kernel_threads: int) -> int:
    """The inter-op pool's size when a Session does not say: the cores that one kernel's
    ``kernel_threads`` leave (at least 1, at most 4). The kernels split their own work over
    their threads, so on 2 cores with 2 kernel threads steps run one at a time: two at once
    oversubscribed the cores and cost ResNet50 at batch 8 290 against 248 ms, Xception 374
    against 311 (and helped no model of benchmarks/applications.py)."""
    return max(1, min(4, (os.cpu_count() or 1) // max(1, kernel_threads)))


def _output_bytes(step: Step) -> int | None:
    """The bytes a step's outputs are known to take (None when any dim is unknown)."""
    total = 0
    for dims, dtype in step.output_specs:
        if dims is None or None in dims:
            return None
        n = 1
        for d in dims:
            n *= d  # type: ignore[operator]
        total += n * _ITEMSIZE.get(dtype, 8)
    return total


_ITEMSIZE = {
    "bool": 1,
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "uint16": 2,
    "float16": 2,
    "int32": 4,
    "uint32": 4,
    "float32": 4,
    "int64": 8,
    "uint64": 8,
    "float64": 8,
    "complex64": 8,
    "complex128": 16,
}


def plan_schedule(steps: Sequence[Step], fetch_slots: Sequence[int]) -> Schedule | None:
    """The schedule of ``steps`` (the executor's fast steps, in plan order), or None when no
    two CPU steps that may be big are independent of each other."""
    maker: dict[int, int] = {}  # value slot -> the step that writes it
    for k, step in enumerate(steps):
        for o in step.outputs:
            maker[o] = k
    known: dict[int, int] = {}
    for k, step in enumerate(steps):
        nbytes = _output_bytes(step)
        if step.device.startswith("CPU") and (nbytes is None or nbytes >= BIG_STEP_BYTES):
            known[k] = nbytes or 0
    if len(known) < 2:
        return None
    made_by = [sorted({maker[s] for s in step.inputs if s in maker}) for step in steps]
    ancestors = [0] * len(steps)  # a bit per step
    for k, made in enumerate(made_by):
        for p in made:
            ancestors[k] |= ancestors[p] | (1 << p)
    cands = sorted(known)
    if not any(not (ancestors[b] >> a) & 1 for i, a in enumerate(cands) for b in cands[i + 1 :]):
        return None  # every candidate depends on the ones before it: nothing to overlap
    consumers: list[list[int]] = [[] for _ in steps]
    for k, made in enumerate(made_by):
        for p in made:
            consumers[p].append(k)
    reads = [tuple(dict.fromkeys(step.inputs)) for step in steps]
    kept = set(fetch_slots)
    readers: dict[int, int] = {}
    for r in reads:
        for s in r:
            if s not in kept:
                readers[s] = readers.get(s, 0) + 1
    return Schedule(
        tuple(len(m) for m in made_by),
        tuple(tuple(c) for c in consumers),
        tuple(reads),
        readers,
        known,
    )


_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


def _pool(threads: int) -> ThreadPoolExecutor:
    """The inter-op pool of this size, made on first use (apart from the kernels' own pool,
    which a step on this one may wait on)."""
    with _pools_lock:
        pool = _pools.get(threads)
        if pool is None:
            pool = _pools[threads] = ThreadPoolExecutor(threads, "minigraph-interop")
        return pool


def run_schedule(
    schedule: Schedule,
    fast: Sequence[tuple[Any, ...]],
    values: list[Any],
    threads: int,
    on_error: Callable[[int, Exception], NoReturn],
) -> None:
    """Run the fast steps ``(call, args, outs, single, release)`` into ``values`` as their
    inputs become ready; ``on_error(step index, exception)`` raises what a kernel's
    exception becomes, once the steps already on the pool are done."""
    pool = _pool(threads)
    waiting = list(schedule.producers)
    readers = dict(schedule.readers)
    ready = deque(k for k, n in enumerate(waiting) if n == 0)
    running: dict[Future, int] = {}

    def done(k: int, result: Any) -> None:
        _store(values, fast[k], result)
        for s in schedule.reads[k]:
            left = readers.get(s)
            if left is not None:
                readers[s] = left - 1
                if left == 1:
                    values[s] = None
        for c in schedule.consumers[k]:
            waiting[c] -= 1
            if waiting[c] == 0:
                ready.append(c)

    try:
        while ready or running:
            if not ready:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    k = running.pop(future)
                    try:
                        result = future.result()
                    except Exception as e:  # noqa: BLE001 - the executor names the step
                        on_error(k, e)
                    done(k, result)
                continue
            k = ready.popleft()
            call, args = fast[k][0], fast[k][1](values)
            known = schedule.known_bytes.get(k)
            if known is not None and len(running) < threads:
                work = known or sum(getattr(v, "nbytes", 0) for v in args)
                if work >= BIG_STEP_BYTES:
                    # Run in a copy of this thread's context: NumPy's error state goes along.
                    running[pool.submit(contextvars.copy_context().run, call, *args)] = k
                    continue
            try:
                result = call(*args)
            except Exception as e:  # noqa: BLE001 - the executor names the step
                on_error(k, e)
            done(k, result)
    finally:
        wait(running)  # a failed run leaves no step of its own running


def _store(values: list[Any], entry: tuple[Any, ...], result: Any) -> None:
    _, _, outs, single, _ = entry
    if single:
        values[outs] = result
    else:
        for o, r in zip(outs, result):
            values[o] = r
