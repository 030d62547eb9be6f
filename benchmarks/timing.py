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


def median_seconds(fn: Callable[[], Any], repeat: int) -> float:
    """Median seconds of one call, over ``repeat`` timed calls after one warm-up call."""
    fn()
    return float(np.median(call_seconds(fn, repeat)))


def interleaved_seconds(
    rounds: int, contenders: Iterable[Callable[[], dict[str, float]]]
) -> dict[str, list[float]]:
    """Per name, the seconds of each of ``rounds`` rounds: each round times every contender
    once, in turn, starting one later each round (each returns ``{name: seconds}`` of one
    call, already warmed up).

    This VM's speed drifts by up to 2x over seconds to minutes; timing one contender's
    repeats and then the next's puts them in different phases, so a ratio of their medians
    measures the drift as much as the code. Interleaved, every round's figures share a
    phase, and the median of the per-round ratios (``median_ratio``) is robust to it.
    """
    contenders = list(contenders)
    out: dict[str, list[float]] = {}
    for r in range(rounds):
        # Each round starts one contender later: none always runs right after the same
        # other one (a kernel on both cores runs slower after the machine idled: after a
        # 0.45 s sleep, DynamicPartition 16M into 16 took 66-84 ms against 48-58).
        k = r % len(contenders) if contenders else 0
        for contender in contenders[k:] + contenders[:k]:
            for name, seconds in contender().items():
                out.setdefault(name, []).append(seconds)
    return out


def median_ratio(a: list[float], b: list[float]) -> float:
    """The median over rounds of ``a[i] / b[i]``."""
    return float(np.median(np.asarray(a) / np.asarray(b)))
