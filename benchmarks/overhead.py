"""Executor overhead and peak memory, against plain NumPy doing the same work.

    python benchmarks/overhead.py [--repeat 200]

1. A chain of K additions on a float32[4] tensor (K = 1, 10, 100, 1000): µs per
   Session.run, and the per-node cost (slope between K=100 and K=1000), against NumPy
   calling np.add K times.
2. Peak memory of a 50-op elementwise chain on a 256 MB float32 tensor, counting the input,
   as a multiple of the tensor's size; each measurement runs in a fresh child process.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import numpy as np
from timing import median_seconds


def chain_overhead(repeat: int) -> dict[int, tuple[float, float]]:
    import minigraph as mg

    results = {}
    for k in (1, 10, 100, 1000):
        g = mg.Graph()
        with g.as_default():
            x = mg.placeholder(mg.float32, shape=[4], name="x")
            y = x
            one = mg.constant(np.float32(1.0))
            for _ in range(k):
                y = mg.add(y, one)
        sess = mg.Session(g)
        feed = {x: np.zeros(4, np.float32)}
        t_mg = median_seconds(lambda sess=sess, y=y, feed=feed: sess.run(y, feed), repeat)

        a = np.zeros(4, np.float32)
        c = np.float32(1.0)

        def numpy_chain(k=k, a=a, c=c):
            v = a
            for _ in range(k):
                v = np.add(v, c)
            return v

        t_np = median_seconds(numpy_chain, repeat)
        results[k] = (t_mg * 1e6, t_np * 1e6)
    return results


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()

    res = chain_overhead(args.repeat)
    print("chain of K adds on float32[4]: median µs per run")
    print(f"{'K':>6} {'minigraph':>12} {'numpy':>10} {'ratio':>7}")
    for k, (t_mg, t_np) in res.items():
        print(f"{k:>6} {t_mg:>12.1f} {t_np:>10.1f} {t_mg / t_np:>7.1f}")
    per_node = (res[1000][0] - res[100][0]) / 900
    per_np = (res[1000][1] - res[100][1]) / 900
    fixed = res[1][0] - per_node
    print(
        f"per node: {per_node:.2f} µs (numpy per op: {per_np:.2f} µs, "
        f"ratio {per_node / per_np:.1f}); per run: {fixed:.1f} µs"
    )
    if not args.skip_memory:
        mem = chain_peak_memory()
        print("peak memory of a 50-op elementwise chain on 256 MB, counting the input:")
        for mode, ratio in mem.items():
            print(f"  {mode:<14} {ratio:.2f}x")


if __name__ == "__main__":
    main()
