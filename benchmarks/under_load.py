"""Models with another process busy on one core: BLAS's threads left alone against minigraph's.

    python benchmarks/under_load.py [--rounds 40] [--only cnn] [--batch 1 --batch 64]
        [--modes native,1,2] [--loads quiet,busy,busy-high]

Each model (Keras fixtures of tests/fixtures/graphs, and the Keras LSTM loop of
tests/fixtures/control_flow) runs in one Session per mode: ``native`` leaves the BLAS
library's thread count alone (minigraph before issue 26: OpenBLAS splits each product over
every core), ``auto`` is minigraph's default (minigraph.blas), and a number sets that count
during runs (``mg.config.set_blas_threads``). Under each load: ``quiet``; ``busy``, a child
process spinning on core 0 (pinned there, same priority); ``busy-high``, the same at nice
-10 (a higher priority, as root only; skipped otherwise). The modes are timed in
interleaved rounds (benchmarks/timing.py), one call each a round, after a warm-up; printed:
median and 90th percentile ms per mode, and each mode's median under load over its quiet
median. The load average seen at the start is printed too: other work on the machine
shows in the quiet figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from models import FIXTURES, LOOP_FIXTURES, load
from timing import interleaved_seconds

import minigraph as mg
from minigraph import blas

SPIN = "import os\nos.sched_setaffinity(0, {0})\nwhile True:\n    pass\n"


@contextmanager
def busy_core(nice: int) -> Iterator[bool]:
    """A child process spinning on core 0 at ``nice`` while the block runs (False: could not
    be started at that priority)."""

    def setup() -> None:
        os.nice(nice)

    try:
        child = subprocess.Popen([sys.executable, "-c", SPIN], preexec_fn=setup if nice else None)
    except (OSError, subprocess.SubprocessError):
        yield False
        return
    time.sleep(0.3)
    if child.poll() is not None:
        yield False
        return
    try:
        yield True
    finally:
        child.kill()
        child.wait()


def _mode_setting(mode: str) -> int | None:
    return {"native": 0, "auto": None}.get(mode, int(mode) if mode.isdigit() else None)


def contender(mode: str, sess: mg.Session, fetches: Any, feeds: Any) -> Callable[[], dict]:
    """One timed call in ``mode`` (the BLAS setting is switched between calls, not in them)."""
    setting = _mode_setting(mode)

    def call() -> dict[str, float]:
        mg.config.set_blas_threads(setting)
        t0 = time.perf_counter()
        sess.run(fetches, feeds)
        return {mode: time.perf_counter() - t0}

    return call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--only", default="", help="models whose name contains this")
    parser.add_argument("--batch", type=int, action="append", help="default: 1")
    parser.add_argument("--modes", default="native,auto")
    parser.add_argument("--loads", default="quiet,busy,busy-high")
    args = parser.parse_args()
    modes = args.modes.split(",")
    loads = args.loads.split(",")
    cases = [
        (c, FIXTURES)
        for c in json.loads((FIXTURES / "cases.json").read_text())
        if c["name"] in ("keras_cnn", "keras_transformer", "keras_mlp")
    ] + [
        (c, LOOP_FIXTURES)
        for c in json.loads((LOOP_FIXTURES / "cases.json").read_text())
        if c["name"] == "lstm_bench_fn"
    ]
    cases = [(c, f) for c, f in cases if args.only in c["name"]]
    libs = [os.path.basename(path) for path, _, _ in blas.libraries()] or "none found"
    print(f"load average {os.getloadavg()}, {os.cpu_count()} cores, BLAS {libs}")
    print(f"BLAS threads outside runs: {blas.get_threads()}; modes {modes}")
    head = f"{'model':<18} {'batch':>5} {'load':<10} {'mode':<7}"
    print(f"{head} {'median':>9} {'p90':>9} {'x quiet':>8}")
    for case, fixtures in cases:
        for batch in args.batch or [1]:
            g, feeds, fetches = load(case, batch, fixtures)
            sessions = {m: mg.Session(g) for m in modes}
            contenders = [contender(m, sessions[m], fetches, feeds) for m in modes]
            for c in contenders:
                c()  # warm-up: plan, first allocations
            quiet: dict[str, float] = {}
            for load_name in loads:
                nice = {"quiet": None, "busy": 0, "busy-high": -10}[load_name]
                label = f"{case['name']} {load_name}"
                if nice is None:
                    t = interleaved_seconds(args.rounds, contenders, label)
                else:
                    with busy_core(nice) as started:
                        if not started:
                            print(f"{case['name']:<18} {batch:>5} {load_name:<10} (no process)")
                            continue
                        t = interleaved_seconds(args.rounds, contenders, label)
                for m in modes:
                    med, p90 = np.median(t[m]) * 1e3, np.percentile(t[m], 90) * 1e3
                    if nice is None:
                        quiet[m] = med
                    ratio = med / quiet[m] if m in quiet else float("nan")
                    print(
                        f"{case['name']:<18} {batch:>5} {load_name:<10} {m:<7} "
                        f"{med:>9.3f} {p90:>9.3f} {ratio:>8.2f}"
                    )
    mg.config.set_blas_threads(None)


if __name__ == "__main__":
    main()
