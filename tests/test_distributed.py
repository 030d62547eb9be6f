"""minigraph on Dask: map_batches and DaskExecutor (issue 14).

Two clusters, each started once: an in-process one (threads; fast) and a real
LocalCluster of two worker processes on 127.0.0.1. Where a node ran is read from Dask's
task stream (the worker Dask reports for each task key), not from our own records.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

distributed = pytest.importorskip(
    "distributed",
    reason="the distributed extra is not installed: pip install 'minigraph[distributed]'",
)
da = pytest.importorskip("dask.array")

import minigraph as mg  # noqa: E402
from minigraph import errors  # noqa: E402
from minigraph.distributed import DaskExecutor, map_batches  # noqa: E402
from minigraph.distributed.executor import _worker_order, _workers_info  # noqa: E402
from minigraph.registry import OPS  # noqa: E402

_TEST_PID = os.getpid()
_SLEEPS_STARTED: list[int] = []  # _DaskSleep appends here when it starts (in-process workers)


# -- test ops (names start with "_": not public) -------------------------------------------


def _declare_test_ops() -> None:
    """_DaskSleep sleeps ``seconds`` (in a Dask worker only); _DaskDieOnce kills its worker
    process the first time it runs (never in the test process), then passes its input
    through."""
    import os as _os
    import time as _time

    from minigraph.registry import OPS as _OPS
    from minigraph.registry import define_op, register_kernel

    if "_DaskSleep" in _OPS:
        return

    def shape(c, x):
        return x.shape

    define_op(
        "_DaskSleep",
        inputs=["x: T"],
        outputs=["y: T"],
        attrs=["T: type", "seconds: float = 2.0"],
        shape_fn=shape,
    )
    define_op(
        "_DaskDieOnce",
        inputs=["x: T"],
        outputs=["y: T"],
        attrs=["T: type", "marker: string"],
        shape_fn=shape,
    )

    @register_kernel("_DaskSleep", "CPU")
    def _sleep(ctx, x):
        try:
            import distributed as _d

            _d.get_worker()
            _SLEEPS_STARTED.append(1)
            _time.sleep(ctx.attrs["seconds"])
        except (ImportError, ValueError):
            pass  # not in a Dask worker: no sleep
        return x.copy()

    @register_kernel("_DaskDieOnce", "CPU")
    def _die_once(ctx, x):
        marker = ctx.attrs["marker"]
        if _os.getpid() != _TEST_PID and marker and not _os.path.exists(marker):
            open(marker, "w").close()
            _os._exit(1)  # the worker dies mid-run; the nanny starts another
        return x.copy()


class _TestOps(distributed.WorkerPlugin):
    def setup(self, worker):
        _declare_test_ops()


@pytest.fixture(scope="module", autouse=True)
def test_ops():
    _declare_test_ops()
    yield
    OPS.pop("_DaskSleep", None)
    OPS.pop("_DaskDieOnce", None)


def _apply(op_type, x, **attrs):
    from minigraph.wrappers import apply_op

    return apply_op(op_type, None, [x], attrs).output(0)


# -- clusters --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def inproc():
    with distributed.Client(
        processes=False, n_workers=2, threads_per_worker=2, dashboard_address=":0"
    ) as client:
        yield client


@pytest.fixture(scope="module")
def procs():
    import cloudpickle
    import dask

    from minigraph.distributed import WORKER_ENVIRON

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with (
        dask.config.set(WORKER_ENVIRON),
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",
            silence_logs=50,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        client.register_plugin(_TestOps())
        yield client


def _ran_on(client, executor, stream):
    """node name -> worker name, from Dask's task stream records."""
    names = {a: w["name"] for a, w in _workers_info(client).items()}
    out = {}
    for rec in stream:
        for node in executor.last_run_keys.get(rec["key"], ()):
            out[node] = names.get(rec["worker"], rec["worker"])
    return out


# -- graphs ----------------------------------------------------------------------------------


def _partition_stitch_graph():
    """The seed composition, per element: add 1 to every x != -1."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None], name="x")
        mask = mg.cast(mg.not_equal(x, mg.constant(-1.0)), mg.int32)
        parts = mg.dynamic_partition(x, mask, 2)
        idx = mg.dynamic_partition(mg.range(mg.shape(x)[0]), mask, 2)
        y = mg.dynamic_stitch(idx, [parts[0], parts[1] + 1.0], name="y")
    return g, x, y


def _local(graph, fetches, feeds):
    with mg.Session(graph) as sess:
        return sess.run(fetches, feeds)


# -- map_batches -----------------------------------------------------------------------------


def test_map_batches_matches_a_local_session_with_nesting(inproc):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, 3], name="x")
        w = mg.placeholder(mg.float32, [3], name="w")
        i = mg.placeholder(mg.int32, [None], name="i")
        y = x * w + 1.0
        z = mg.cast(i, mg.float32) * 2.0
    rng = np.random.default_rng(0)
    xs = rng.random((10, 3), dtype=np.float32)
    ids = np.arange(10, dtype=np.int32)
    wv = np.array([1.0, -2.0, 0.5], np.float32)
    feeds = {x: da.from_array(xs, chunks=(4, 3)), "i:0": da.from_array(ids, chunks=4), w: wv}
    out = map_batches(g, {"a": [y, (z,)], "b": y}, feeds, client=inproc)
    assert isinstance(out["a"][0], da.Array) and isinstance(out["a"][1], tuple)
    assert out["a"][0].chunks == ((4, 4, 2), (3,))
    want = _local(g, {"a": [y, (z,)], "b": y}, {x: xs, i: ids, w: wv})
    got = inproc.compute(out).result()
    np.testing.assert_array_equal(got["a"][0], want["a"][0])
    np.testing.assert_array_equal(got["a"][1][0], want["a"][1][0])
    np.testing.assert_array_equal(got["b"], want["b"])


def test_map_batches_seed_partition_and_stitch_over_four_chunks(procs):
    g, x, y = _partition_stitch_graph()
    xs = np.array([0.1, -1.0, 5.2, 4.3, -1.0, 7.4, -1.0, 2.0], np.float32)
    lazy = map_batches(g, y, {x: da.from_array(xs, chunks=2)}, client=procs)
    assert lazy.numblocks == (4,)
    np.testing.assert_array_equal(lazy.compute(), _local(g, y, {x: xs}))
    # The document was scattered once to each worker; each worker built one Session,
    # with one plan, whatever the number of chunks it ran.
    from minigraph.distributed import batches

    def cached():
        return [len(s._plans) for s in batches._cache.values()]

    per_worker = procs.run(cached)
    assert sorted(per_worker.values()) == [[1], [1]]
    del lazy  # its document is released while the next call sends the same one
    lazy2 = map_batches(g, y, {x: da.from_array(xs * 2, chunks=2)}, client=procs)
    np.testing.assert_array_equal(lazy2.compute(), _local(g, y, {x: xs * 2}))
    assert sorted(procs.run(cached).values()) == [[1], [1]]


def test_map_batches_refuses_a_fetch_that_is_not_batched(inproc):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, 4], name="x")
        s2b = mg.space_to_batch_nd(x[:, :, None], [2], [[0, 0]])
        shape = mg.shape(x)
        const = mg.constant(np.zeros((4, 4), np.float32))
        scalar = mg.size(x)
    feeds = {x: da.zeros((8, 4), chunks=(4, 4), dtype="float32")}
    with pytest.raises(ValueError, match="first dim is not the batch dim"):
        map_batches(g, s2b, feeds, client=inproc)
    with pytest.raises(ValueError, match="first dim is not the batch dim"):
        map_batches(g, shape, feeds, client=inproc)
    # A constant with as many rows as a chunk is caught by the second probe size.
    with pytest.raises(ValueError, match="first dim is not the batch dim"):
        map_batches(g, const, feeds, client=inproc)
    with pytest.raises(ValueError, match="scalar"):
        map_batches(g, scalar, feeds, client=inproc)


def test_map_batches_refuses_bad_chunking(inproc):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, 4], name="x")
        v = mg.placeholder(mg.float32, [None], name="v")
        y = x + v[:, None]
    with pytest.raises(ValueError, match="chunked along axis 1"):
        map_batches(g, y, {x: da.zeros((8, 4), chunks=(4, 2)), v: da.zeros(8, chunks=4)})
    with pytest.raises(ValueError, match="chunked differently"):
        map_batches(g, y, {x: da.zeros((8, 4), chunks=(4, 4)), v: da.zeros(8, chunks=2)})
    with pytest.raises(ValueError, match="at least one dask.array"):
        map_batches(g, y, {x: np.zeros((8, 4)), v: np.zeros(8)})
    with pytest.raises(errors.InvalidArgumentError, match="Cannot feed value of shape") as e:
        map_batches(g, y, {x: da.zeros((8, 5), chunks=(4, 5)), v: da.zeros(8, chunks=4)})
    assert e.value.node_name == "x"


def test_map_batches_without_a_client_uses_the_local_scheduler(monkeypatch):
    def none():
        raise ValueError("No clients found")

    monkeypatch.setattr(distributed, "default_client", none)
    g, x, y = _partition_stitch_graph()
    xs = np.array([1.0, -1.0, 3.0, -1.0], np.float32)
    lazy = map_batches(g, [y], {x: da.from_array(xs, chunks=2)})
    (got,) = lazy
    np.testing.assert_array_equal(got.compute(scheduler="threads"), [2.0, -1.0, 4.0, -1.0])


# -- DaskExecutor ----------------------------------------------------------------------------


def _mixed_graph():
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float32, [None], name="a")
        with mg.device("/job:worker/task:0"):
            b = mg.multiply(a, 2.0, name="b")
        with mg.device("/job:worker/task:1"):
            c = mg.add(b, 1.0, name="c")
            d = mg.multiply(c, c, name="d")
        with mg.device("/job:worker/task:0"):
            e = mg.subtract(d, b, name="e")
        f = mg.add(e, a, name="f")  # no task: wherever Dask puts it
    return g, a, [f, c]


def test_executor_places_nodes_on_the_workers_their_device_strings_name(procs):
    g, a, fetches = _mixed_graph()
    av = np.arange(6, dtype=np.float32)
    ex = DaskExecutor(procs)
    with mg.Session(g, executor=ex) as sess, distributed.get_task_stream(procs) as ts:
        got = sess.run(fetches, {a: av})
    # The local answer, from a copy without the job/task parts the local executor refuses.
    local = mg.Graph.from_json(g.to_json().replace("/job:worker/task:1", ""))
    local = mg.Graph.from_json(local.to_json().replace("/job:worker/task:0", ""))
    want = _local(local, ["f:0", "c:0"], {"a:0": av})
    for x, y in zip(got, want):
        np.testing.assert_array_equal(x, y)
    ran = _ran_on(procs, ex, ts.data)
    assert ran["b"] == 0 and ran["e"] == 0
    assert ran["c"] == 1 and ran["d"] == 1
    assert g.node("c").assigned_device.startswith("/job:worker/task:1")
    # An explicit mapping turns the placement around.
    ex2 = DaskExecutor(procs, workers={"/job:worker/task:0": 1, "/job:worker/task:1": 0})
    with distributed.get_task_stream(procs) as ts:
        mg.Session(g, executor=ex2).run(fetches, {a: av})
    ran = _ran_on(procs, ex2, ts.data)
    assert (ran["b"], ran["c"]) == (1, 0)


@pytest.mark.parametrize("seed", ["space_to_batch", "stitch", "scatter", "partition_stitch"])
def test_executor_runs_the_seed_ops_as_a_local_session(inproc, seed):
    g = mg.Graph()
    with g.as_default():
        if seed == "space_to_batch":
            x = mg.constant(np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1))
            with mg.device("/job:worker/task:1"):
                y = mg.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]])
            feeds = {}
        elif seed == "stitch":
            with mg.device("/job:worker/task:0"):
                i0 = mg.constant([6, 4, 1])
            with mg.device("/job:worker/task:1"):
                i1 = mg.constant([[5, 2], [0, 3]])
            d0 = mg.constant([[1.0, 2], [3, 4], [5, 6]])
            d1 = mg.constant([[[1.0, 2], [3, 4]], [[5, 6], [7, 8]]])
            y = mg.dynamic_stitch([i0, i1], [d0, d1])
            feeds = {}
        elif seed == "scatter":
            t = mg.placeholder(mg.int32, [8], name="t")
            with mg.device("/job:worker/task:1"):
                y = mg.tensor_scatter_nd_update(t, [[4], [3], [1], [7]], [9, 10, 11, 12])
            feeds = {t: np.arange(1, 9, dtype=np.int32)}
        else:
            g, x, y = _partition_stitch_graph()
            feeds = {x: np.array([0.1, -1.0, 5.2, 4.3, -1.0, 7.4], np.float32)}
    got = mg.Session(g, executor=DaskExecutor(inproc)).run(y, feeds)
    local = mg.Graph.from_json(
        g.to_json().replace("/job:worker/task:1", "").replace("/job:worker/task:0", "")
    )
    names = {k if isinstance(k, str) else k.name: v for k, v in feeds.items()}
    np.testing.assert_array_equal(got, _local(local, y.name, names))


def test_executor_sends_feeds_once_per_run_and_big_constants_once_per_plan(inproc):
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float32, [None], name="a")
        big = mg.constant(np.ones(40_000, np.float32), name="big")
        with mg.device("/job:worker/task:0"):
            b = mg.add(a, big, name="b")
        with mg.device("/job:worker/task:1"):
            c = mg.multiply(a, big, name="c")
        d = mg.add(b, c, name="d")
    ex = DaskExecutor(inproc)
    sess = mg.Session(g, executor=ex)
    av = np.arange(40_000, dtype=np.float32)
    with distributed.get_task_stream(inproc) as ts:
        for _ in range(2):
            got, const = sess.run([d, big], {a: av})
            np.testing.assert_array_equal(got, (av + 1) + av)
            np.testing.assert_array_equal(const, np.ones(40_000, np.float32))
    keys = [r["key"] for r in ts.data]
    assert sum(k.startswith("mg-feed-") for k in keys) == 2  # one per run, two readers each
    assert sum(k.startswith("mg-const-big-") for k in keys) == 1  # once for the plan


def test_executor_unsatisfiable_placement_fails_before_submitting(inproc):
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float32, [None], name="a")
        with mg.device("/job:worker/task:5"):
            b = mg.multiply(a, a, name="far")
        with mg.device("/job:worker/task:0/device:GPU:0"):
            c = mg.multiply(a, a, name="gpu_node")

    def keys(dask_scheduler=None):
        return set(dask_scheduler.tasks)

    before = inproc.run_on_scheduler(keys)
    sess = mg.Session(g, executor=DaskExecutor(inproc))
    with pytest.raises(errors.InvalidArgumentError, match="task:5 names no worker") as e:
        sess.run(b, {a: np.ones(3, np.float32)})
    assert e.value.node_name == "far"
    with pytest.raises(errors.InvalidArgumentError, match="needs a GPU") as e:
        sess.run(c, {a: np.ones(3, np.float32)})
    assert e.value.node_name == "gpu_node"
    with pytest.raises(errors.InvalidArgumentError, match="names no worker"):
        mg.Session(g, executor=DaskExecutor(inproc, workers={"/job:worker/task:5": "nobody"})).run(
            b, {a: np.ones(3, np.float32)}
        )
    assert not inproc.run_on_scheduler(keys) - before  # nothing was submitted


def test_executor_gpu_nodes_run_on_a_worker_with_a_gpu_resource(monkeypatch):
    monkeypatch.setattr(mg.config, "simulated_gpu", lambda: True)
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float32, [None], name="a")
        with mg.device("/job:worker/task:0/device:GPU:0"):
            b = mg.multiply(a, 2.0, name="b")
        c = mg.add(b, 1.0, name="c")
    with distributed.Client(
        processes=False, n_workers=1, resources={"GPU": 1}, dashboard_address=":0"
    ) as client:
        ex = DaskExecutor(client)
        sess = mg.Session(g, executor=ex)
        np.testing.assert_array_equal(sess.run(c, {a: [1.0, 2.0]}), [3.0, 5.0])
        plan = next(iter(sess._plans.values()))
        assert {s.node_name: s.device for s in plan.steps}["b"] == "GPU:0"


def test_executor_reraises_a_workers_op_error_with_the_node_name(procs):
    g = mg.Graph()
    with g.as_default():
        i = mg.placeholder(mg.int32, [None], name="i")
        with mg.device("/job:worker/task:1"):
            y = mg.gather(mg.constant([1.0, 2.0, 3.0]), i, name="bad_gather")
        z = mg.add(y, 1.0, name="z")
    sess = mg.Session(g, executor=DaskExecutor(procs))
    with pytest.raises(errors.InvalidArgumentError) as e:
        sess.run(z, {i: np.array([0, 7], np.int32)})
    assert e.value.node_name == "bad_gather"
    assert "bad_gather" in str(e.value)
    np.testing.assert_array_equal(sess.run(z, {i: np.array([2, 0], np.int32)}), [4.0, 2.0])


def test_executor_finishes_a_run_whose_worker_died(procs, tmp_path):
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float32, [None], name="a")
        with mg.device("/job:worker/task:0"):
            b = mg.multiply(a, 2.0, name="b")
        with mg.device("/job:worker/task:1"):
            c = _apply("_DaskDieOnce", b, marker=str(tmp_path / "died"))
            d = mg.add(c, 1.0, name="d")
    av = np.arange(5, dtype=np.float32)
    got = mg.Session(g, executor=DaskExecutor(procs)).run(d, {a: av})
    assert (tmp_path / "died").exists()  # a worker really died mid-run
    np.testing.assert_array_equal(got, av * 2 + 1)
    procs.wait_for_workers(2, timeout=30)


def test_executor_names_the_node_when_every_retry_fails(procs, tmp_path):
    def set_allowed(n, dask_scheduler=None):
        old = dask_scheduler.allowed_failures
        dask_scheduler.allowed_failures = n
        return old

    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float32, [None], name="a")
        with mg.device("/job:worker/task:0"):
            c = _apply("_DaskDieOnce", a, marker=str(tmp_path / "m"))
    # The node kills its worker once; with no failures allowed, Dask gives up at once.
    old = procs.run_on_scheduler(set_allowed, 0)
    try:
        with pytest.raises(errors.UnavailableError) as e:
            mg.Session(g, executor=DaskExecutor(procs)).run(c, {a: np.ones(2, np.float32)})
    finally:
        procs.run_on_scheduler(set_allowed, old)
    assert e.value.node_name == c.node.name
    assert "died" in str(e.value)
    procs.wait_for_workers(2, timeout=30)


def test_keyboard_interrupt_cancels_the_runs_tasks(inproc):
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float32, [None], name="a")
        with mg.device("/job:worker/task:0"):
            s = _apply("_DaskSleep", a)
        with mg.device("/job:worker/task:1"):
            t = mg.add(s, 1.0, name="after_sleep")
    ex = DaskExecutor(inproc)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))  # a real Ctrl-C
    timer.start()
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        mg.Session(g, executor=ex).run(t, {a: np.ones(2, np.float32)})
    assert time.perf_counter() - t0 < 1.9  # did not wait for the sleep

    def states(keys, dask_scheduler=None):
        return {k: dask_scheduler.tasks[k].state for k in keys if k in dask_scheduler.tasks}

    keys = list(ex.last_run_keys)
    deadline = time.time() + 5
    while inproc.run_on_scheduler(states, keys) and time.time() < deadline:
        time.sleep(0.05)
    assert inproc.run_on_scheduler(states, keys) == {}  # released: nothing left to run


# -- after a shutdown, and large feeds --------------------------------------------------------


def _double_graph():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None], name="x")
        y = mg.multiply(x, 2.0, name="y")
    return g, x, y


def test_a_closed_client_is_unavailable_error_naming_the_cause():
    g, x, y = _double_graph()
    feeds = {x: np.ones(3, np.float32)}
    lazy_x = da.ones(4, chunks=2, dtype="float32")
    # A client closed by client.close(), its cluster left running.
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as cluster:
        client = distributed.Client(cluster)
        sess = mg.Session(g, executor=DaskExecutor(client))
        np.testing.assert_array_equal(sess.run(y, feeds), [2.0, 2.0, 2.0])
        client.close()
        with pytest.raises(errors.UnavailableError, match=r"client is closed.*client\.close\(\)"):
            sess.run(y, feeds)  # Dask's KeyError 'workers' before
        with pytest.raises(errors.UnavailableError, match="client is closed"):
            DaskExecutor(client)
        with pytest.raises(errors.UnavailableError, match="map_batches needs a running"):
            map_batches(g, y, {x: lazy_x}, client=client)  # an AttributeError before
    # A cluster shut down under its client.
    cluster = distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=":0")
    client = distributed.Client(cluster)
    sess = mg.Session(g, executor=DaskExecutor(client))
    address = cluster.scheduler_address
    cluster.close()
    with pytest.raises(errors.UnavailableError, match="was shut down") as e:
        sess.run(y, feeds)
    assert address in str(e.value)
    with pytest.raises(errors.UnavailableError, match="was shut down"):
        map_batches(g, y, {x: lazy_x}, client=client)
    client.close()


def test_closing_the_cluster_mid_run_is_unavailable_error_naming_the_node():
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float32, [None], name="a")
        with mg.device("/job:worker/task:0"):
            s = _apply("_DaskSleep", a, seconds=0.5)
        t = mg.add(s, 1.0, name="after_sleep")
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as cluster:
        client = distributed.Client(cluster)
        sess = mg.Session(g, executor=DaskExecutor(client))
        _SLEEPS_STARTED.clear()

        def close_once_running():
            deadline = time.monotonic() + 30
            while not _SLEEPS_STARTED and time.monotonic() < deadline:
                time.sleep(0.01)
            cluster.close()

        closer = threading.Thread(target=close_once_running)
        closer.start()
        with pytest.raises(errors.UnavailableError, match="while the run waited") as e:
            sess.run(t, {a: np.ones(2, np.float32)})  # Dask's ClosedClientError before
        closer.join()
        client.close()
    assert _SLEEPS_STARTED  # the cluster closed while the node ran
    assert "was shut down" in str(e.value)
    assert e.value.node_name == "after_sleep"  # the fetch it waited for


def test_a_large_feed_is_scattered_once_per_run_not_sent_in_the_task_graph(inproc, monkeypatch):
    import dask

    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float32, [None], name="a")
        with mg.device("/job:worker/task:0"):
            b = mg.multiply(a, 2.0, name="b")
        with mg.device("/job:worker/task:1"):
            c = mg.add(a, 1.0, name="c")
        d = mg.subtract(b, c, name="d")
    av = np.arange(1 << 19, dtype=np.float32)  # 2 MiB, past the default scatter_bytes
    want = av * np.float32(2) - (av + np.float32(1))
    scattered = []
    scatter = inproc.scatter

    def spy(data, **kw):
        scattered.append((sorted(data), kw))
        return scatter(data, **kw)

    monkeypatch.setattr(inproc, "scatter", spy)
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1MiB"}):
        # Embedded (scatter_bytes=None), the feed makes a graph that Dask warns about.
        embedded = mg.Session(g, executor=DaskExecutor(inproc, scatter_bytes=None))
        with pytest.warns(UserWarning, match="Sending large graph"):
            np.testing.assert_array_equal(embedded.run(d, {a: av}), want)
        assert not scattered
        sess = mg.Session(g, executor=DaskExecutor(inproc))
        with warnings.catch_warnings():
            warnings.filterwarnings("error", "Sending large graph")
            for _ in range(2):
                np.testing.assert_array_equal(sess.run(d, {a: av}), want)
    assert len(scattered) == 2  # once per run, though two tasks on two workers read it
    workers = [addr for _, addr in _worker_order(_workers_info(inproc))]
    for keys, kw in scattered:
        assert len(keys) == 1 and keys[0].startswith("mg-feed-")
        assert kw["workers"] == sorted(workers) and kw["broadcast"] is True


def test_a_scattered_feed_lost_with_its_worker_is_unavailable_error(procs, tmp_path):
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float32, [None], name="a")
        with mg.device("/job:worker/task:1"):
            c = _apply("_DaskDieOnce", a, marker=str(tmp_path / "died"))
            d = mg.add(c, 1.0, name="d")
    av = np.arange(1 << 19, dtype=np.float32)  # 2 MiB: scattered to task:1's worker
    sess = mg.Session(g, executor=DaskExecutor(procs))
    # Dask reruns a lost task, but a scattered value has no task to rerun.
    with pytest.raises(errors.UnavailableError, match="scattered .* lost") as e:
        sess.run(d, {a: av})
    assert (tmp_path / "died").exists()
    assert e.value.node_name == c.node.name
    procs.wait_for_workers(2, timeout=30)
    np.testing.assert_array_equal(sess.run(d, {a: av}), av + 1)  # "run again"


def test_map_batches_scatters_values_fed_whole_instead_of_embedding_them(inproc):
    import dask

    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, 3], name="x")
        w = mg.placeholder(mg.float32, [None], name="w")
        y = x * 2.0 + mg.reduce_sum(w)
    wv = (np.arange(1 << 19) % 3).astype(np.float32)  # 2 MiB; sums exactly in float32
    xs = np.arange(24, dtype=np.float32).reshape(8, 3)
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1MiB"}):
        lazy = map_batches(g, y, {x: da.from_array(xs, chunks=(4, 3)), w: wv}, client=inproc)
        with warnings.catch_warnings():
            warnings.filterwarnings("error", "Sending large graph")
            got = inproc.compute(lazy).result()
    np.testing.assert_array_equal(got, xs * 2 + float(wv.astype(np.int64).sum()))


# -- packaging and the CLI -------------------------------------------------------------------


def test_import_minigraph_does_not_import_dask():
    code = "import sys, minigraph, minigraph.distributed; print('dask' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_dask_is_an_import_error_naming_the_extra(monkeypatch):
    from minigraph.distributed import require_dask

    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r"minigraph\[distributed\]"):
        require_dask()
    with pytest.raises(ImportError, match=r"minigraph\[distributed\]"):
        DaskExecutor(None)


def test_cli_run_and_trace_on_a_dask_scheduler(procs, tmp_path, capsys):
    from minigraph.cli import main

    g, a, _ = _mixed_graph()
    (tmp_path / "g.json").write_text(g.to_json())
    np.save(tmp_path / "a.npy", np.arange(4, dtype=np.float32))
    address = procs.scheduler.address
    args = [str(tmp_path / "g.json"), "--feed", f"a={tmp_path / 'a.npy'}", "--fetch", "f:0"]
    assert main(["run", *args, "--dask", address, "--out", str(tmp_path / "o.npz")]) == 0
    got = np.load(tmp_path / "o.npz")["f:0"]
    av = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(got, (av * 2 + 1) ** 2 - av * 2 + av)
    out = str(tmp_path / "t.json")
    assert main(["trace", *args, "--dask", address, "-o", out]) == 0
    import json

    events = json.load(open(out))["traceEvents"]
    rows = {e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert {"worker 0", "worker 1"} <= rows
    assert {"e", "f"} <= {e["name"] for e in events if e["ph"] == "X"}


def test_executor_refuses_variables_naming_the_handle(inproc):
    """A Dask worker keeps no state between tasks: a variable lives in a local Session."""
    g = mg.Graph()
    with g.as_default():
        v = mg.Variable([1.0, 2.0], name="v")
        y = mg.multiply(v, 2.0, name="y")
    sess = mg.Session(g, executor=DaskExecutor(inproc))
    with pytest.raises(errors.UnimplementedError, match="variables live in a Session") as e:
        sess.run(v.initializer)
    assert e.value.node_name == "v"
    with pytest.raises(errors.UnimplementedError):
        sess.run(y)
