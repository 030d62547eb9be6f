"""minigraph on Dask: map_batches throughput and DaskExecutor's per-task overhead.

    python benchmarks/distributed.py [--workers 2] [--repeat 5] [--quick]

1. map_batches on a LocalCluster (processes, --workers workers of one thread each) against
   one local Session on the same data (in the workers' memory already for map_batches, as
   an array loaded with Dask would be; the results are gathered to the client):
   - compute-bound: the atrous convolution of examples/atrous_convolution.py
     (SpaceToBatchND -> Conv2D -> BatchToSpaceND) over a batch of images;
   - memory-bound: the seed partition-and-stitch (add 1 where x != -1) over a float32 vector;
   and, for partition-and-stitch, the time per chunk as the chunk shrinks (where Dask's
   per-chunk cost overtakes the work).
2. DaskExecutor against the local executor: a chain of K float32[4] additions whose nodes
   alternate between /job:worker/task:0 and task:1 (K tasks per run), and the same chain
   with no placement (one task per run). The slope over K is the cost of one task.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

# This file is named like the package it measures: keep its folder behind site-packages,
# so that `import distributed` finds Dask's (timing.py is still found there).
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path += [_HERE, os.path.join(_HERE, "..", "examples")]
from timing import median_seconds  # noqa: E402


def _atrous_graph(h: int, w: int, c: int, rate: int):
    from atrous_convolution import atrous_valid

    import minigraph as mg

    rng = np.random.default_rng(0)
    filters = rng.standard_normal((3, 3, c, c)).astype(np.float32)
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, h, w, c], name="x")
        y = atrous_valid(x, filters, rate)
    return g, x, y


def _partition_stitch_graph():
    import minigraph as mg

    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None], name="x")
        mask = mg.cast(mg.not_equal(x, mg.constant(-1.0)), mg.int32)
        parts = mg.dynamic_partition(x, mask, 2)
        idx = mg.dynamic_partition(mg.range(mg.shape(x)[0]), mask, 2)
        y = mg.dynamic_stitch(idx, [parts[0], parts[1] + 1.0])
    return g, x, y


def _versus(client, g, x, y, data, chunk_rows, repeat):
    """(local s, dask s) for the whole array; checks that both give the same result."""
    import dask.array as da
    import distributed

    import minigraph as mg
    from minigraph.distributed import map_batches

    sess = mg.Session(g)
    t_local = median_seconds(lambda: sess.run(y, {x: data}), repeat)
    # The data already on the workers (as a user's Dask-loaded array would be).
    lazy_src = client.persist(da.from_array(data, chunks=(chunk_rows,) + data.shape[1:]))
    distributed.wait(lazy_src)

    def dask_run():
        return map_batches(g, y, {x: lazy_src}, client=client).compute()

    np.testing.assert_array_equal(dask_run(), sess.run(y, {x: data}))
    t_dask = median_seconds(dask_run, repeat)
    return t_local, t_dask


def bench_map_batches(client, workers: int, repeat: int, quick: bool) -> None:
    print(f"\nmap_batches on a LocalCluster of {workers} processes vs one local Session")
    print(f"{'graph':<34} {'data':>16} {'chunks':>7} {'local s':>9} {'dask s':>9} {'speedup':>8}")
    n_img = 32 if quick else 128
    g, x, y = _atrous_graph(64, 64, 16, 2)
    imgs = np.random.default_rng(1).standard_normal((n_img, 64, 64, 16)).astype(np.float32)
    chunks = 4 * workers
    t_l, t_d = _versus(client, g, x, y, imgs, n_img // chunks, repeat)
    mb = imgs.nbytes / 2**20
    print(
        f"{'atrous conv (compute-bound)':<34} {f'{n_img} img {mb:.0f} MB':>16} {chunks:>7} "
        f"{t_l:>9.3f} {t_d:>9.3f} {t_l / t_d:>8.2f}"
    )
    n = 2**22 if quick else 2**24
    vec = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    vec[::3] = -1.0
    g, x, y = _partition_stitch_graph()
    t_l, t_d = _versus(client, g, x, y, vec, n // chunks, repeat)
    print(
        f"{'partition-and-stitch (memory)':<34} {f'{n >> 20}M f32':>16} {chunks:>7} "
        f"{t_l:>9.3f} {t_d:>9.3f} {t_l / t_d:>8.2f}"
    )

    print("\npartition-and-stitch over 4M float32, by chunk size: ms per chunk (local: ms")
    print("for the same rows in one Session.run)")
    print(f"{'rows/chunk':>11} {'chunks':>7} {'dask ms/chunk':>14} {'local ms/chunk':>15}")
    import minigraph as mg

    vec = vec[: 2**22]
    sess = mg.Session(g)
    for rows in (2**10, 2**13, 2**16, 2**19, 2**21):
        n_chunks = len(vec) // rows
        if n_chunks > 2048:
            continue
        t_l, t_d = _versus(client, g, x, y, vec, rows, max(1, repeat // 2))
        t_one = median_seconds(lambda rows=rows: sess.run(y, {x: vec[:rows]}), repeat)
        print(f"{rows:>11} {n_chunks:>7} {t_d / n_chunks * 1e3:>14.3f} {t_one * 1e3:>15.3f}")


def _per_run(sess, fetch, feeds, repeat: int) -> float:
    return median_seconds(lambda: sess.run(fetch, feeds), repeat)


def bench_executor(client, repeat: int) -> None:
    import minigraph as mg
    from minigraph.distributed import DaskExecutor

    print("\nDaskExecutor vs the local executor: chain of K adds on float32[4], ms per run")
    print(f"{'K':>5} {'local':>9} {'dask, 1 task':>13} {'dask, K tasks':>14}")
    rows = {}
    for k in (1, 8, 32):
        graphs = {}
        for placed in (False, True):
            g = mg.Graph()
            with g.as_default():
                x = mg.placeholder(mg.float32, [4], name="x")
                y = x
                for i in range(k):
                    with mg.device(f"/job:worker/task:{i % 2}" if placed else None):
                        y = mg.add(y, 1.0)
            graphs[placed] = (g, x, y)
        feed = np.zeros(4, np.float32)
        g, x, y = graphs[False]
        t_local = _per_run(mg.Session(g), y, {x: feed}, repeat * 20)
        t_one = _per_run(mg.Session(g, executor=DaskExecutor(client)), y, {x: feed}, repeat * 4)
        g, x, y = graphs[True]
        t_many = _per_run(mg.Session(g, executor=DaskExecutor(client)), y, {x: feed}, repeat * 4)
        rows[k] = (t_local, t_one, t_many)
        print(f"{k:>5} {t_local * 1e3:>9.3f} {t_one * 1e3:>13.2f} {t_many * 1e3:>14.2f}")
    per_task = (rows[32][2] - rows[1][2]) / 31
    per_node = (rows[32][0] - rows[1][0]) / 31
    print(
        f"per task: {per_task * 1e3:.2f} ms (local executor per node: {per_node * 1e6:.1f} µs); "
        f"per run with one task: {rows[1][1] * 1e3:.2f} ms"
    )


def main() -> None:
    warnings.filterwarnings("ignore", message="Sending large graph")  # the data, once
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="smaller data (a smoke run)")
    args = parser.parse_args()

    import dask
    import distributed

    from minigraph.distributed import WORKER_ENVIRON

    t0 = time.perf_counter()
    with (
        dask.config.set(WORKER_ENVIRON),
        distributed.LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",
            silence_logs=40,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        print(
            f"LocalCluster: {args.workers} worker processes x 1 thread, started in "
            f"{time.perf_counter() - t0:.1f} s; this machine has {os.cpu_count()} cores"
        )
        bench_map_batches(client, args.workers, args.repeat, args.quick)
        bench_executor(client, args.repeat)


if __name__ == "__main__":
    main()
