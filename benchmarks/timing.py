"""The timing rules every benchmark here uses."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np


def call_seconds(fn: Callable[[], Any], repeat: int = 1) -> list[float]:
    """Seconds of each of ``repeat`` timed calls of ``fn`` (no warm-up)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def timer(name: str, fn: Callable[[], Any], calls: int = 1) -> Callable[[], dict[str, float]]:
    """A contender for :func:`interleaved_seconds`: ``{name: seconds}`` of one call of
    ``fn``, or the median of ``calls`` calls in a row (for calls of microseconds, whose
    steady cost is the point, not that of a first call after the others ran)."""
    return lambda: {name: float(np.median(call_seconds(fn, calls)))}


def median_seconds(fn: Callable[[], Any], repeat: int, label: str = "timing") -> float:
    """Median seconds of one call, over ``repeat`` timed calls after one warm-up call
    (counted on a terminal's stderr, between the calls)."""
    fn()
    times = []
    from minigraph.progress import Progress  # here: peers' TF worker has no minigraph

    with Progress(label, repeat, "calls") as progress:
        for _ in range(repeat):
            times += call_seconds(fn)
            progress.update()
    return float(np.median(times))


def interleaved_seconds(
    rounds: int, contenders: Iterable[Callable[[], dict[str, float]]], label: str = "timing"
) -> dict[str, list[float]]:
    """Per name, the seconds of each of ``rounds`` rounds: each round times every contender
    once (each returns ``{name: seconds}`` of one call, already warmed up).

    This VM's speed drifts by up to 2x over seconds to minutes; timing one contender's
    repeats and then the next's puts them in different phases, so a ratio of their medians
    measures the drift as much as the code. Interleaved, every round's figures share a
    phase, and the median of the per-round ratios (``median_ratio``) is robust to it.

    What ran just before a call matters too: after any pause (a 2 ms sleep, or waiting on
    TensorFlow's worker) a 0.06 ms model run took 0.25 ms, and a kernel on both cores runs
    slower after the machine idled (DynamicPartition 16M into 16: 66-84 ms after 0.45 s
    against 48-58). So the order rotates by one each round, and every other cycle of
    rotations runs backwards (rotating the other way): each contender comes right after
    each of the others about equally often, and, from three contenders on, never right
    after itself. (Rotating forwards only, the contender after TensorFlow's worker was
    mostly the same one.)

    On a terminal, a line on stderr counts the rounds (between rounds, never inside a
    timed call) and is erased before the caller prints its row.
    """
    contenders = list(contenders)
    n = len(contenders)
    out: dict[str, list[float]] = {}
    from minigraph.progress import Progress

    with Progress(label, rounds, "rounds") as progress:
        for r in range(rounds):
            backwards = (r // max(n, 1)) % 2 == 1
            k = (-r if backwards else r) % max(n, 1)  # so no contender runs twice in a row
            order = contenders[k:] + contenders[:k]
            if backwards:
                order.reverse()
            for contender in order:
                for name, seconds in contender().items():
                    out.setdefault(name, []).append(seconds)
            progress.update()
    return out


def median_ratio(a: list[float], b: list[float]) -> float:
    """The median over rounds of ``a[i] / b[i]``."""
    return float(np.median(np.asarray(a) / np.asarray(b)))
