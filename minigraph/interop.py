"""Independent steps at once: a plan's steps in dependency waves, big CPU steps on threads.

A step's wave is one more than the latest wave among the steps that make its inputs, so
the steps of one wave never read each other's outputs. Where a wave holds two or more big
CPU steps (outputs known to take at least ``BIG_STEP_BYTES``), they run on the inter-op
pool while the wave's other steps run in the calling thread; every other plan keeps the
executor's plain loop, which costs nothing extra. NumPy releases the GIL in its loops, so
two big independent steps (the two partitions of a partition-and-stitch graph) use two
cores.

A value is released after the last wave that reads it (not after its last reader in plan
order, which may run in an earlier wave). Forwarding stays sound: a step may overwrite only
a buffer that no other step reads (see minigraph.plan).
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple, NoReturn

from .plan import Step

__all__ = ["BIG_STEP_BYTES", "Wave", "plan_waves", "run_waves", "default_threads"]

# A step whose outputs take less than this runs in the calling thread: handing it to a
# thread costs more (tens of µs) than it could save.
BIG_STEP_BYTES = 1 << 20


class Wave(NamedTuple):
    inline: tuple[int, ...]  # indices of fast steps run in the calling thread
    threaded: tuple[int, ...]  # indices of fast steps run on the inter-op pool
    release: tuple[int, ...]  # value slots no later wave reads


def default_threads() -> int:
    """The inter-op pool's size when a Session does not say: the cores, at most 4."""
    return min(4, os.cpu_count() or 1)


def _output_bytes(step: Step) -> int:
    """The bytes a step's outputs are known to take (0 when any dim is unknown)."""
    total = 0
    for dims, dtype in step.output_specs:
        if dims is None or None in dims:
            return 0
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


def plan_waves(steps: Sequence[Step], fetch_slots: Sequence[int]) -> list[Wave] | None:
    """The waves of ``steps`` (the executor's fast steps, in plan order), or None when no
    wave has two big CPU steps to run at once."""
    made_in: dict[int, int] = {}  # slot -> the wave of the step that writes it
    levels = []
    for step in steps:
        level = 1 + max((made_in.get(s, -1) for s in step.inputs), default=-1)
        levels.append(level)
        for o in step.outputs:
            made_in[o] = level
    n_waves = max(levels, default=-1) + 1
    big: list[list[int]] = [[] for _ in range(n_waves)]
    small: list[list[int]] = [[] for _ in range(n_waves)]
    for k, (step, level) in enumerate(zip(steps, levels)):
        is_big = step.device.startswith("CPU") and _output_bytes(step) >= BIG_STEP_BYTES
        (big if is_big else small)[level].append(k)
    if not any(len(b) >= 2 for b in big):
        return None
    last_read: dict[int, int] = {}
    for step, level in zip(steps, levels):
        for s in step.inputs:
            last_read[s] = max(last_read.get(s, -1), level)
    kept = set(fetch_slots)
    releases: list[list[int]] = [[] for _ in range(n_waves)]
    for s, level in last_read.items():
        if s not in kept:
            releases[level].append(s)
    waves = []
    for level in range(n_waves):
        threaded = big[level] if len(big[level]) >= 2 else []
        inline = sorted(small[level] + (big[level] if not threaded else []))
        waves.append(Wave(tuple(inline), tuple(threaded), tuple(sorted(releases[level]))))
    return waves


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


def run_waves(
    waves: Sequence[Wave],
    fast: Sequence[tuple[Any, ...]],
    values: list[Any],
    threads: int,
    on_error: Callable[[int, Exception], NoReturn],
) -> None:
    """Run the fast steps ``(call, args, outs, single, release)`` wave by wave into
    ``values``; ``on_error(step index, exception)`` raises what a kernel's exception becomes."""
    pool = _pool(threads)
    for wave in waves:
        # Each step runs in a copy of this thread's context: NumPy's error state goes along.
        futures = [
            (k, pool.submit(contextvars.copy_context().run, fast[k][0], *fast[k][1](values)))
            for k in wave.threaded
        ]
        try:
            for k in wave.inline:
                _store(values, fast[k], _call(fast[k], values, k, on_error))
        finally:
            for k, future in futures:
                try:
                    result = future.result()
                except Exception as e:  # noqa: BLE001 - the executor names the step
                    on_error(k, e)
                _store(values, fast[k], result)
        for r in wave.release:
            values[r] = None


def _call(entry: tuple[Any, ...], values: list[Any], k: int, on_error: Callable) -> Any:
    try:
        return entry[0](*entry[1](values))
    except Exception as e:  # noqa: BLE001 - the executor names the step
        on_error(k, e)


def _store(values: list[Any], entry: tuple[Any, ...], result: Any) -> None:
    _, _, outs, single, _ = entry
    if single:
        values[outs] = result
    else:
        for o, r in zip(outs, result):
            values[o] = r
