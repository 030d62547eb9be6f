"""Executor overhead and peak memory, against plain NumPy doing the same work.

    python benchmarks/overhead.py [--repeat 200] [--skip-memory]
    python benchmarks/overhead.py --peers [--peers-python /path/to/tf/venv/bin/python]

1. A chain of K additions on a float32[4] tensor (K = 1, 10, 100, 1000), each adding the
   one shared constant, run with the optimizer's defaults ("fused": elementwise fusion makes
   the chain one step) and with fusion off ("unfused": nothing else folds or merges, so the
   plan runs K adds, which the script checks: the executor's cost per node); and a wide
   graph of K independent adds of x and K distinct constants, fetched together (K = 100,
   1000; a Const and an Add step per add). Figures: µs per Session.run (per contender the
   median over 10 interleaved rounds of its median of repeat / 10 calls in a row, so a
   drift in the VM's speed falls on all of them alike), and the cost per add (the slope
   between K=100 and K=1000) against NumPy calling np.add K times, and per executed step.
   The per-run cost is the chain's K=1 time less one add, also in NumPy adds (the VM's
   speed moves it, not the ratio).
2. Peak memory of a 50-op elementwise chain on a 256 MB float32 tensor, counting the input,
   as a multiple of the tensor's size; each measurement runs in a fresh child process.

With ``--peers``, TensorFlow runs the same graphs in the same run (benchmarks/peers.py):
tf.compat.v1.Session with Grappler (its default), with Grappler off, and as a concrete
function; "TF nodes" is how many nodes TensorFlow's Session actually ran (its partition
graphs, counting its feed and fetch nodes). Without TensorFlow those columns are skipped.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import peers
from timing import interleaved_seconds, timer

TF_MODES = ("session", "session_no_grappler", "function")
# Each K is timed in this many interleaved rounds, each the median of repeat / ROUNDS calls
# of every contender in a row (timing.interleaved_seconds): the VM's drift falls on all.
ROUNDS = 10


def _chain(k: int) -> tuple[Any, Any, list[Any], Callable[[np.ndarray], Any]]:
    import minigraph as mg

    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[4], name="x")
        y = x
        one = mg.constant(np.float32(1.0))
        for _ in range(k):
            y = mg.add(y, one)
    c = np.float32(1.0)

    def numpy_chain(a: np.ndarray) -> Any:
        v = a
        for _ in range(k):
            v = np.add(v, c)
        return v

    return g, x, [y], numpy_chain


def _wide(k: int) -> tuple[Any, Any, list[Any], Callable[[np.ndarray], Any]]:
    import minigraph as mg

    cs = [np.float32(i + 1) for i in range(k)]
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[4], name="x")
        ys = [mg.add(x, mg.constant(c)) for c in cs]

    def numpy_wide(a: np.ndarray) -> Any:
        return [np.add(a, c) for c in cs]

    return g, x, ys, numpy_wide


def measure(
    kind: str, ks: tuple[int, ...], repeat: int, tf: peers.TFPeer | None
) -> dict[int, dict[str, Any]]:
    """For each K: µs per run of minigraph, NumPy and each TF mode; the plan's step count."""
    import minigraph as mg

    results = {}
    for k in ks:
        g, x, fetches, numpy_fn = (_chain if kind == "chain" else _wide)(k)
        a = np.zeros(4, np.float32)
        sess = mg.Session(g)
        unfused = mg.OptimizerOptions(do_elementwise_fusion=False)
        sess_unfused = mg.Session(
            g,
            config=mg.ConfigProto(graph_options=mg.GraphOptions(optimizer_options=unfused)),
        )
        feed = {x: a}
        got = sess.run(fetches, feed)
        assert all(np.array_equal(u, v) for u, v in zip(got, sess_unfused.run(fetches, feed)))
        expected = numpy_fn(a)
        expected = expected if isinstance(expected, list) else [expected]
        assert all(np.array_equal(u, v) for u, v in zip(got, expected)), f"{kind} {k}: wrong"
        plan = next(iter(getattr(sess_unfused, "_plans", {}).values()), None)
        fused_plan = next(iter(getattr(sess, "_plans", {}).values()), None)
        calls = max(1, repeat // ROUNDS)
        contenders = [
            timer("minigraph", lambda s=sess_unfused, f=fetches, d=feed: s.run(f, d), calls),
            timer("numpy", lambda f=numpy_fn, a=a: f(a), calls),
        ]
        if kind == "chain":
            contenders.append(timer("fused", lambda s=sess, f=fetches, d=feed: s.run(f, d), calls))
        peer = None
        if tf is not None:
            peer = tf.prepare(g, feed, fetches, modes=TF_MODES)
            for mode, values in peer.outputs.items():
                ok = all(np.array_equal(u, v) for u, v in zip(got, values))
                assert ok, f"{kind} {k}: TF {mode} differs from minigraph"
            contenders.append(lambda p=peer, c=calls: p.time(c))
        for contender in contenders:  # a warm-up each
            contender()
        seconds = interleaved_seconds(ROUNDS, contenders, f"{kind} K={k}")
        r: dict[str, Any] = {name: float(np.median(v)) for name, v in seconds.items()}
        r["steps"] = len(plan.steps) if plan is not None else None
        r["optimized"] = list(getattr(plan, "optimizations", ()))
        if kind == "chain":
            r["fused_steps"] = len(fused_plan.steps) if fused_plan is not None else None
        # The point is the cost of K executed adds: say so if the optimizer changed that.
        if r["steps"] is not None and (r["steps"] != 2 * k - (k - 1) * (kind == "chain")):
            print(f"warning: {kind} K={k} runs {r['steps']} steps: {r['optimized']}")
        if peer is not None:
            r["tf_nodes"] = peer.info.get("session_nodes")
            r["tf_nodes_no_grappler"] = peer.info.get("session_no_grappler_nodes")
            peer.release()
        results[k] = {n: v * 1e6 if isinstance(v, float) else v for n, v in r.items()}
    return results


def report(kind: str, res: dict[int, dict[str, Any]], tf: bool) -> dict[str, float]:
    """Print the table; return the per-node slopes (µs) of each column."""
    cols = ["minigraph", *(["fused"] if "fused" in res[min(res)] else []), "numpy"]
    cols += TF_MODES if tf else ()
    names = {
        "minigraph": "unfused",
        "session": "TF sess",
        "session_no_grappler": "TF no-gr",
        "function": "tf.fn",
    }
    head = f"{'K':>6} {'steps':>6} " + " ".join(f"{names.get(c, c):>10}" for c in cols)
    print(head + f" {'mg/numpy':>9}" + (f" {'TF nodes':>9} {'no-gr':>6}" if tf else ""))
    for k, r in res.items():
        line = f"{k:>6} {r['steps'] if r['steps'] is not None else '?':>6} "
        line += " ".join(f"{r[c]:>10.1f}" for c in cols)
        line += f" {r['minigraph'] / r['numpy']:>9.2f}"
        if tf:
            line += f" {r.get('tf_nodes') or '?':>9} {r.get('tf_nodes_no_grappler') or '?':>6}"
        print(line)
        if r["optimized"]:
            print(f"{'':>6} optimizer: {'; '.join(r['optimized'])}")
    lo, hi = sorted(res)[-2:]
    slope = {c: (res[hi][c] - res[lo][c]) / (hi - lo) for c in cols}
    print(
        f"per add ({kind}, slope K={lo}..{hi}): "
        + ", ".join(f"{names.get(c, c)} {v:.2f} µs" for c, v in slope.items())
        + f"; unfused / numpy {slope['minigraph'] / slope['numpy']:.2f}"
        + (f"; fused / numpy {slope['fused'] / slope['numpy']:.2f}" if "fused" in slope else "")
    )
    if res[hi]["steps"] and res[lo]["steps"]:
        per_step = (res[hi]["minigraph"] - res[lo]["minigraph"]) / (
            res[hi]["steps"] - res[lo]["steps"]
        )
        print(f"  minigraph per executed step: {per_step:.2f} µs")
    return slope


_CHILD = r"""
import json, resource, sys
import numpy as np
mode, n_ops = sys.argv[1], int(sys.argv[2])
n = 256 * 2**20 // 4
if mode == "minigraph":
    import minigraph as mg
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[n], name="x")
        y = x
        for i in range(n_ops):
            y = y * 1.0001 if i % 2 else y + 1.0
    sess = mg.Session(g)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
a = np.ones(n, np.float32)
if mode == "minigraph":
    out = sess.run(y, {x: a})
elif mode == "numpy":
    out = a
    for i in range(n_ops):
        out = out * np.float32(1.0001) if i % 2 else out + np.float32(1.0)
else:  # numpy in place after the first op
    out = a + np.float32(1.0)
    for i in range(1, n_ops):
        if i % 2:
            np.multiply(out, np.float32(1.0001), out=out)
        else:
            np.add(out, np.float32(1.0), out=out)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"ratio": (peak - base) * 1024 / a.nbytes}))
"""


def chain_peak_memory(n_ops: int = 50) -> dict[str, float]:
    out = {}
    for mode in ("minigraph", "numpy", "numpy-inplace"):
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, mode, str(n_ops)],
            check=True,
            capture_output=True,
            text=True,
        )
        out[mode] = json.loads(proc.stdout)["ratio"]
    return out


def loop_iteration_us(iterations: int = 20000, repeat: int = 5) -> float:
    """µs per iteration of a one-op ``mg.while_loop`` (``i + 1`` while ``i < n``): what a
    loop costs beyond its body's ops, a cond plan and a body plan run per iteration."""
    import minigraph as mg

    g = mg.Graph()
    with g.as_default():
        n = mg.placeholder(mg.int32, [])
        out = mg.while_loop(lambda i: i < n, lambda i: i + 1, 0)
    sess = mg.Session(g)
    sess.run(out, {n: 10})
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        sess.run(out, {n: iterations})
        best = min(best, time.perf_counter() - t0)
    return best / iterations * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--skip-memory", action="store_true")
    peers.add_arguments(parser)
    args = parser.parse_args()
    tf = peers.TFPeer.start(args.peers_python) if args.peers else None

    print("a chain of K adds on float32[4]: median µs per run")
    chain = measure("chain", (1, 10, 100, 1000), args.repeat, tf)
    per_node = report("chain", chain, tf is not None)
    print("a wide graph: K independent adds on float32[4], fetched together: µs per run")
    wide = measure("wide", (100, 1000), args.repeat, tf)
    report("wide", wide, tf is not None)
    fixed = {c: chain[1][c] - per_node[c] for c in per_node}
    print(
        "per run (chain K=1 less one add): "
        + ", ".join(f"{c} {v:.1f} µs" for c, v in fixed.items() if c != "numpy")
    )
    # The VM's speed drifts by up to 2x: in NumPy calls, the per-run cost is comparable
    # across runs (the bar of 8 µs was set when a call took 0.42 µs: 19 calls).
    in_adds = fixed["minigraph"] / per_node["numpy"]
    print(f"  minigraph per run, in NumPy adds on the chain: {in_adds:.1f}")
    if tf is not None:
        tf.close()
    print(f"a while loop's own cost: {loop_iteration_us():.2f} µs per iteration (cond + body)")
    if not args.skip_memory:
        mem = chain_peak_memory()
        print("peak memory of a 50-op elementwise chain on 256 MB, counting the input:")
        for mode, ratio in mem.items():
            print(f"  {mode:<14} {ratio:.2f}x")


if __name__ == "__main__":
    main()
