"""The one timing rule every benchmark here uses."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np


def median_seconds(fn: Callable[[], Any], repeat: int) -> float:
    """Median seconds of one call, over ``repeat`` timed calls after one warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))
