"""Run graphs on a Dask cluster of worker processes: map_batches and DaskExecutor.

A LocalCluster of two worker processes on this machine stands in for a real cluster
(``Client("tcp://scheduler:8786")`` would use one). On it this script runs

* the seed partition-and-stitch graph over the chunks of a dask array (map_batches, data
  parallel), checked against NumPy's ``where``;
* a graph whose nodes TensorFlow-style device strings pin to the two workers
  (DaskExecutor), checked against NumPy, with where each node ran read from Dask's task
  stream;
* and, once the cluster is closed, the UnavailableError a run then gives.

The cluster starts under ``if __name__ == "__main__":``: Dask starts each worker process
by importing this file again, and without the guard each would start a cluster of its
own (docs/distributed.md). Needs the distributed extra: pip install 'minigraph[distributed]'.
Run: python examples/dask_cluster.py
"""

import logging

import numpy as np

import minigraph as mg


def partition_stitch_graph():
    """Add 1 to every x that is not -1, leave the -1s alone (the seed composition)."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None], name="x")
        mask = mg.cast(mg.not_equal(x, -1.0), mg.int32)
        parts = mg.dynamic_partition(x, mask, 2)
        idx = mg.dynamic_partition(mg.range(mg.shape(x)[0]), mask, 2)
        y = mg.dynamic_stitch(idx, [parts[0], parts[1] + 1.0], name="y")
    return g, x, y


def placed_graph():
    """b on the first worker, c on the second: (2a) + 1, then squared where Dask likes."""
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float32, [None], name="a")
        with mg.device("/job:worker/task:0"):
            b = mg.multiply(a, 2.0, name="b")
        with mg.device("/job:worker/task:1"):
            c = mg.add(b, 1.0, name="c")
        d = mg.multiply(c, c, name="d")
    return g, a, d


def main() -> None:
    try:
        import dask
        import dask.array as da
        import distributed
    except ImportError:
        print("this example needs the distributed extra: pip install 'minigraph[distributed]'")
        return
    from minigraph.distributed import WORKER_ENVIRON, DaskExecutor, map_batches

    rng = np.random.default_rng(0)
    data = rng.standard_normal(200_000).astype(np.float32)
    data[rng.random(data.shape) < 0.3] = -1.0
    av = np.arange(6, dtype=np.float32)
    g, x, y = partition_stitch_graph()
    g2, a, d = placed_graph()

    with (
        dask.config.set(WORKER_ENVIRON),  # no MALLOC_TRIM_THRESHOLD_: kernels ran 5-10x slower
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, dashboard_address=":0", silence_logs=logging.ERROR
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        # map_batches: one task per chunk, the graph sent once to each worker.
        lazy = map_batches(g, y, {x: da.from_array(data, chunks=50_000)}, client=client)
        got = client.compute(lazy).result()
        np.testing.assert_array_equal(got, np.where(data != -1.0, data + 1.0, data))
        print(
            f"map_batches: {lazy.numblocks[0]} chunks of {len(data) // lazy.numblocks[0]:,} rows "
            f"on {len(client.nthreads())} worker processes: equals NumPy's where(x != -1, x + 1, x)"
        )

        # DaskExecutor: one task per run of nodes with one placement.
        executor = DaskExecutor(client)
        sess = mg.Session(g2, executor=executor)
        with distributed.get_task_stream(client) as stream:
            out = sess.run(d, {a: av})
        np.testing.assert_array_equal(out, (av * 2 + 1) ** 2)
        names = {
            addr: info["name"]
            for addr, info in client.scheduler_info(n_workers=-1)["workers"].items()
        }
        ran = {
            node: names[rec["worker"]]
            for rec in stream.data
            for node in executor.last_run_keys.get(rec["key"], ())
        }
        print(
            f"DaskExecutor: (2a + 1)^2 = {out}; b ran on worker {ran['b']}, "
            f"c on worker {ran['c']}, d (no placement) on worker {ran['d']}"
        )
        assert (ran["b"], ran["c"]) == (0, 1)

    try:  # the cluster is closed now
        sess.run(d, {a: av})
    except mg.errors.UnavailableError as e:
        print(f"after the cluster closed: UnavailableError: {e}")
    else:
        raise AssertionError("a closed cluster ran a graph")


if __name__ == "__main__":
    main()
