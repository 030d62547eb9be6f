"""The documented ops and the Keras models on the GPU, against PyTorch, raw CuPy and the CPU.

    python benchmarks/gpu.py [--repeat 5] [--only stitch] [--no-cpu] [--no-models]
    python benchmarks/gpu.py --models [--only keras_mlp]

Ops table: each case of benchmarks/ops.py (inputs of 64-256 MB) runs with its inputs
already on the GPU (CuPy feeds) and its outputs left there
(RunOptions(return_device_arrays=True)). In the same run, the case's best formulation in
PyTorch and in raw CuPy (benchmarks/gpu_peers.py; "-" where there is none, or without
PyTorch or CUDA) runs on the same device-resident inputs, and a device-to-device copy of
the bytes the case moves (inputs + outputs) gives the floor. Each is timed with CUDA
events (PyTorch's with its own), the median of --repeat runs after one warm-up. Columns:
the medians in ms, mg/best (minigraph over the faster of PyTorch and CuPy), %copy (copy
ms / mg ms: the share of copy bandwidth minigraph reaches) and the CPU session's median.
Every GPU result, minigraph's and each peer's, is checked against the CPU result first.

Models table (``--models`` for it alone; after the ops table unless ``--no-models``):
each Keras fixture of benchmarks/models.py at batch 1, 1024 and 16384, fed from and
fetched to the host as a user runs it, wall-clock medians of the CPU session and of the
GPU session, their ratio, the first run of a new GPU Session (plan + first launch), and
whether the GPU's outputs match the CPU's within the fixture's rtol.

A summary block ends the output (benchmarks/run_on_gpu.sh copies it). With --budget, no
new case or model starts after that many seconds; the summary counts what was skipped.

With MINIGRAPH_SIMULATED_GPU=1 it runs on the NumPy-backed stand-in (wall-clock timing;
its module stands in for CuPy in the cupy column), which checks the script, not the speed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

import gpu_peers
import numpy as np

import minigraph as mg
from minigraph.devices import Device, gpu_unavailable_reason

MODEL_BATCHES = (1, 1024, 16384)


def _load_module(file: str, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(file))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


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


def _torch_timer(torch: Any):
    """As _timer, with PyTorch's CUDA events (recorded on PyTorch's current stream)."""

    def events(fn: Any) -> float:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

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


def _to_host(value: Any, xp: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_to_host(v, xp) for v in value]
    if hasattr(value, "detach"):  # a torch tensor
        return value.detach().cpu().numpy()
    return xp.asnumpy(value)


def _matches(got: Any, expected: Any, rtol: float = 1e-5, dups: Any = None) -> bool:
    """``got`` equals ``expected`` up to float rounding: float sums may round differently
    (atomics, another order), so the absolute tolerance follows the result's size. At
    ``dups`` (positions several index rows write) any written value is accepted: those
    are taken from ``got``, as benchmarks/ops.py does."""
    if isinstance(expected, list):
        return len(got) == len(expected) and all(
            _matches(a, b, rtol) for a, b in zip(got, expected)
        )
    got = np.asarray(got)
    if got.shape != expected.shape:
        return False
    if dups is not None:
        expected = expected.copy()
        expected[dups] = got[dups]
    scale = float(np.abs(expected).max(initial=0)) if expected.dtype.kind == "f" else 0.0
    atol = rtol * 0.1 * max(scale, 1.0)
    return bool(np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True))


def _ms(value: Any) -> str:
    return value if isinstance(value, str) else f"{value:.3f}"


def _free(xp: Any, torch: Any) -> None:
    if xp.__name__ == "cupy":
        xp.get_default_memory_pool().free_all_blocks()
    if torch is not None:
        torch.cuda.empty_cache()


def _time_peer(fn: Any, timer: Any, xp: Any, expected: Any, dups: Any, repeat: int) -> float | str:
    """The peer's median ms, or why there is none ("-", "peer differs", "error")."""
    if fn is None:
        return "-"
    try:
        if not _matches(_to_host(fn(), xp), expected, dups=dups):
            return "peer differs"
        return _median_ms(timer, fn, repeat)
    except Exception as e:  # a peer's failure is reported, and the run goes on
        print(f"  peer error: {type(e).__name__}: {e}", flush=True)
        return "error"


def run_ops(args: argparse.Namespace, xp: Any, torch: Any, deadline: float) -> dict[str, Any]:
    """The ops table; returns, per case, mg/best (a float, or None where it has none)."""
    timer = _timer(xp)
    torch_timer = _torch_timer(torch) if torch is not None else None
    keep = mg.RunOptions(return_device_arrays=True)
    head = (
        f"{'case':<52} {'mg ms':>9} {'torch ms':>12} {'cupy ms':>12} {'copy ms':>8}"
        f" {'mg/best':>7} {'%copy':>6} {'CPU ms':>8}"
    )
    print(head, flush=True)
    ratios: dict[str, Any] = {}
    for case in _load_module("ops.py", "cpu_cases").CASES:
        if args.only not in case.name:
            continue
        if time.perf_counter() > deadline:
            ratios[case.name] = "skipped"
            continue
        g = mg.Graph()
        with g.as_default():
            fetch, feeds, _, *rest = case.build()  # (fetch, feeds, NumPy's fn[, duplicates])
        dups = rest[0] if rest else None
        cpu_sess = mg.Session(g)
        expected = cpu_sess.run(fetch, feeds)
        device_feeds = {k: xp.asarray(v) for k, v in feeds.items()}
        sess = mg.Session(g, device="/gpu:0")
        try:
            same = _matches(
                _to_host(sess.run(fetch, device_feeds, options=keep), xp), expected, dups=dups
            )
        except Exception as e:  # reported, and the run goes on to the next case
            print(f"{case.name:<52} error: {type(e).__name__}: {e}", flush=True)
            ratios[case.name] = "error"
            continue
        if not same:
            print(f"{case.name:<52} differs: the GPU's result is not the CPU's", flush=True)
            ratios[case.name] = "differs"
            continue
        moved = sum(v.nbytes for v in feeds.values()) + _nbytes(expected)
        t_mg = _median_ms(
            timer,
            lambda sess=sess, f=fetch, d=device_feeds: sess.run(f, d, options=keep),
            args.repeat,
        )
        try:
            torch_fn, cupy_fn = gpu_peers.for_case(case.name, list(feeds.values()), torch, xp)
        except Exception as e:
            print(f"  peer setup error: {type(e).__name__}: {e}", flush=True)
            torch_fn = cupy_fn = None
        t_torch = _time_peer(torch_fn, torch_timer, xp, expected, dups, args.repeat)
        t_cupy = _time_peer(cupy_fn, timer, xp, expected, dups, args.repeat)
        del torch_fn, cupy_fn
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
        peers = [t for t in (t_torch, t_cupy) if not isinstance(t, str)]
        ratio = t_mg / min(peers) if peers else None
        ratios[case.name] = ratio
        print(
            f"{case.name:<52} {t_mg:>9.3f} {_ms(t_torch):>12} {_ms(t_cupy):>12} {t_copy:>8.3f}"
            f" {'-' if ratio is None else f'{ratio:.2f}':>7} {t_copy / t_mg:>6.0%} {t_cpu:>8.1f}",
            flush=True,
        )
        del expected, device_feeds, feeds, src, dst, sess, cpu_sess, g
        _free(xp, torch)
    return ratios


def _model_cases(only: str) -> tuple[Any, list[dict[str, Any]]]:
    models = _load_module("models.py", "cpu_models")
    cases = json.loads((models.FIXTURES / "cases.json").read_text())
    return models, [c for c in cases if c["kind"] == "keras" and only in c["name"]]


def run_models(args: argparse.Namespace, deadline: float) -> list[tuple[str, int, Any, Any, str]]:
    """The models table; returns (model, batch, CPU ms, GPU ms, check) per row (ms None and
    check "skipped" where the budget ran out)."""
    models, cases = _model_cases(args.only)
    print(
        f"{'model':<22} {'batch':>6} {'CPU ms':>9} {'GPU ms':>9} {'cpu/gpu':>8}"
        f" {'first GPU ms':>13} {'check':>8}",
        flush=True,
    )
    rows = []
    for case in cases:
        for batch in MODEL_BATCHES:
            if time.perf_counter() > deadline:
                rows.append((case["name"], batch, None, None, "skipped"))
                continue
            g, feeds, fetches = models.load(case, batch)
            cpu = mg.Session(g)
            expected = cpu.run(fetches, feeds)  # also the CPU's warm-up
            t_cpu = float(
                np.median(
                    [
                        _wall_ms(lambda s=cpu, f=fetches, d=feeds: s.run(f, d))
                        for _ in range(args.repeat)
                    ]
                )
            )
            t0 = time.perf_counter()
            gpu = mg.Session(g, device="/gpu:0")
            got = gpu.run(fetches, feeds)
            t_first = (time.perf_counter() - t0) * 1e3
            ok = _matches(got, expected, case.get("rtol", 1e-5))
            t_gpu = float(
                np.median(
                    [
                        _wall_ms(lambda s=gpu, f=fetches, d=feeds: s.run(f, d))
                        for _ in range(args.repeat)
                    ]
                )
            )
            rows.append((case["name"], batch, t_cpu, t_gpu, "ok" if ok else "differs"))
            print(
                f"{case['name']:<22} {batch:>6} {t_cpu:>9.3f} {t_gpu:>9.3f} {t_cpu / t_gpu:>8.2f}"
                f" {t_first:>13.1f} {rows[-1][4]:>8}",
                flush=True,
            )
            del g, feeds, fetches, cpu, gpu, got, expected
    return rows


def summary(ratios: dict[str, Any] | None, rows: list[Any] | None) -> list[str]:
    """The closing block: where minigraph stands against its peers and against the CPU."""
    lines = ["== summary"]
    if ratios is not None:
        timed = {k: v for k, v in ratios.items() if isinstance(v, float)}
        at_best = [k for k, v in timed.items() if v <= 1.0]
        lines.append(f"ops at or below the best peer: {len(at_best)} of {len(timed)} with a peer")
        lines += [f"  {k} ({timed[k]:.2f})" for k in at_best]
        if timed:
            worst = max(timed, key=timed.get)
            lines.append(f"worst mg/best: {timed[worst]:.2f} ({worst})")
        for status in ("differs", "error", "skipped"):
            names = [k for k, v in ratios.items() if v == status]
            if names:
                lines.append(f"ops {status}: {len(names)}: {', '.join(names)}")
    if rows is not None:
        slow = [r for r in rows if r[1] == 1 and r[2] is not None and r[3] > r[2]]
        lines.append(f"models slower on the GPU than the CPU at batch 1: {len(slow)}")
        lines += [f"  {r[0]}: GPU {r[3]:.3f} ms, CPU {r[2]:.3f} ms" for r in slow]
        differs = [f"{r[0]} batch {r[1]}" for r in rows if r[-1] == "differs"]
        if differs:
            lines.append(f"models whose GPU outputs differ: {', '.join(differs)}")
        skipped = sum(r[2] is None for r in rows)
        if skipped:
            lines.append(f"model rows skipped (budget): {skipped}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="", help="run the cases/models whose name contains this")
    parser.add_argument("--no-cpu", action="store_true", help="skip the ops' CPU timings")
    parser.add_argument("--models", action="store_true", help="the models table only")
    parser.add_argument("--no-models", action="store_true", help="the ops table only")
    parser.add_argument("--budget", type=float, default=float("inf"), help="seconds")
    args = parser.parse_args()
    reason = gpu_unavailable_reason()
    if reason is not None:
        print(f"no GPU to benchmark: {reason}")
        return 1
    deadline = time.perf_counter() + args.budget
    xp = Device("GPU", 0).xp
    torch = gpu_peers.load_torch()
    torch_version = "-" if torch is None else torch.__version__
    print(f"array module: {xp.__name__}, torch: {torch_version}, repeat: {args.repeat}")
    ratios = None if args.models else run_ops(args, xp, torch, deadline)
    rows = None if args.no_models else run_models(args, deadline)
    print("\n".join(summary(ratios, rows)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
