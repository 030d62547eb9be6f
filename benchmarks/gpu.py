"""The documented ops on the GPU: effective bandwidth against a device-to-device copy.

    python benchmarks/gpu.py [--repeat 5] [--only stitch] [--no-cpu]

Each case of benchmarks/ops.py (inputs of 64-256 MB) runs with its inputs already on the
GPU (CuPy feeds) and its outputs left there (RunOptions(return_device_arrays=True)),
timed with CUDA events. Reported: effective bandwidth, (bytes of the inputs + bytes of the
outputs) / time; the bandwidth of a device-to-device copy of the same bytes; their ratio
(1.0 = as fast as a copy); and the CPU kernel's time for comparison. Every GPU result is
checked against the CPU result first.

With MINIGRAPH_SIMULATED_GPU=1 it runs on the NumPy-backed stand-in (wall-clock timing),
which checks the script, not the speed.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import minigraph as mg
from minigraph.devices import Device, gpu_unavailable_reason


def _load_cases() -> list[Any]:
    spec = importlib.util.spec_from_file_location("cpu_cases", Path(__file__).with_name("ops.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module.CASES


def _timer(xp: Any):
    """A function timing ``fn`` in ms: CUDA events on a real GPU, wall clock otherwise."""
    if xp.__name__ != "cupy":
        return _wall_ms

    def events(fn: Any) -> float:
        start, end = xp.cuda.Event(), xp.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        return xp.cuda.get_elapsed_time(start, end)

    return events


def _wall_ms(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


def _median_ms(timer: Any, fn: Any, repeat: int) -> float:
    fn()
    return float(np.median([timer(fn) for _ in range(repeat)]))


def _nbytes(values: Any) -> int:
    return sum(v.nbytes for v in values) if isinstance(values, list) else values.nbytes


def _host(values: Any) -> Any:
    from minigraph.transfer import to_host

    return [to_host(v) for v in values] if isinstance(values, list) else to_host(values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    parser.add_argument("--no-cpu", action="store_true", help="skip the CPU timings")
    args = parser.parse_args()
    reason = gpu_unavailable_reason()
    if reason is not None:
        print(f"no GPU to benchmark: {reason}")
        return 1
    xp = Device("GPU", 0).xp
    timer = _timer(xp)
    keep = mg.RunOptions(return_device_arrays=True)
    print(f"array module: {xp.__name__}")
    print(f"{'case':<52} {'GB/s':>7} {'copy GB/s':>10} {'ratio':>6} {'GPU ms':>8} {'CPU ms':>8}")
    for case in _load_cases():
        if args.only not in case.name:
            continue
        g = mg.Graph()
        with g.as_default():
            fetch, feeds, _ = case.build()
        cpu_sess = mg.Session(g)
        expected = cpu_sess.run(fetch, feeds)
        device_feeds = {k: xp.asarray(v) for k, v in feeds.items()}
        sess = mg.Session(g, device="/gpu:0")
        result = sess.run(fetch, device_feeds, options=keep)
        got = _host(result)
        pairs = zip(got, expected) if isinstance(expected, list) else [(got, expected)]
        for a, b in pairs:  # float sums may round differently (atomics)
            assert np.allclose(a, b, equal_nan=True), f"{case.name}: GPU differs from CPU"
        moved = sum(v.nbytes for v in feeds.values()) + _nbytes(expected)
        t_gpu = _median_ms(
            timer,
            lambda sess=sess, f=fetch, d=device_feeds: sess.run(f, d, options=keep),
            args.repeat,
        )
        src = xp.ones(moved // 8, np.float32)  # a copy reads and writes moved / 2 bytes each
        dst = xp.empty_like(src)
        t_copy = _median_ms(timer, lambda src=src, dst=dst: xp.copyto(dst, src), args.repeat)
        t_cpu = (
            float("nan")
            if args.no_cpu
            else _median_ms(
                _wall_ms, lambda s=cpu_sess, f=fetch, d=feeds: s.run(f, d), max(1, args.repeat // 2)
            )
        )
        gbs, copy_gbs = moved / t_gpu / 1e6, moved / t_copy / 1e6
        print(
            f"{case.name:<52} {gbs:>7.1f} {copy_gbs:>10.1f} {gbs / copy_gbs:>6.2f} "
            f"{t_gpu:>8.2f} {t_cpu:>8.1f}",
            flush=True,
        )
        del result, expected, device_feeds, feeds, src, dst, sess, cpu_sess, g
    return 0


if __name__ == "__main__":
    sys.exit(main())
