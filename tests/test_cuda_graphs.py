"""CUDA graphs of fixed-shape GPU plans (minigraph.cuda_graphs): when a plan is captured,
that replays give each run's own results in buffers of the caller's own, feeds untouched,
the fallback when a kernel syncs during capture, and the off switch. On the simulated GPU
where there is no real one (its capture runs the steps; its host reads fail meanwhile)."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import minigraph as mg
from minigraph import cuda_graphs, errors
from minigraph.registry import define_op, register_kernel
from minigraph.transfer import to_host
from minigraph.wrappers import apply_op

define_op(
    "_TestHostRead",
    inputs=["x: T"],
    outputs=["y: T"],
    attrs=["T: type"],
    shape_fn=lambda c, x: x.shape,
)


@register_kernel("_TestHostRead", "CPU", "GPU")
def _host_read_kernel(ctx, x):
    """Reads its input back to the host (a sync, forbidden while a graph is captured)."""
    host = x if isinstance(x, np.ndarray) and ctx.xp is np else ctx.xp.asnumpy(x)
    return ctx.xp.asarray(host * 2)


@pytest.fixture
def gpu(monkeypatch):
    """Sessions on the simulated "/gpu:0", in the fast loop (the output checks of the test
    suite run the slow one, which never captures). The simulated GPU, even where a real one
    is: these tests hold the bookkeeping; tests/gpu/test_cuda_graphs.py holds the hardware's
    behaviour."""
    monkeypatch.setattr(mg.config, "simulated_gpu", lambda: True)
    before = mg.config.cuda_graphs()
    mg.config.set_check_outputs(False)
    mg.config.set_cuda_graphs(True)
    yield lambda g: mg.Session(g, device="/gpu:0")
    mg.config.set_cuda_graphs(before)


def _mlp():
    g = mg.Graph()
    rng = np.random.default_rng(0)
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, 4], name="x")
        w = mg.constant(rng.standard_normal((4, 3)).astype(np.float32))
        y = mg.nn.softmax(mg.nn.relu(mg.matmul(x, w) + 1.0))
    return g, x, y, w


def _graphs(sess):
    (plan,) = sess._plans.values()
    return sess._executor.cuda_graphs(plan)


def _reference(x, w):
    h = np.maximum(x @ w + 1.0, 0.0)
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_a_plan_is_captured_after_its_plain_runs_and_replayed(gpu):
    g, x, y, w = _mlp()
    sess = gpu(g)
    wv = sess.run(w)
    sess = gpu(g)
    rng = np.random.default_rng(1)
    for i in range(6):
        feed = rng.standard_normal((2, 4)).astype(np.float32)
        np.testing.assert_allclose(sess.run(y, {x: feed}), _reference(feed, wv), rtol=1e-5)
        graphs = _graphs(sess)
        assert graphs.captures == (1 if i >= cuda_graphs.CAPTURE_AFTER else 0)
    assert graphs.replays == 6 - cuda_graphs.CAPTURE_AFTER and graphs.failures == 0


@pytest.mark.parametrize("device_arrays", [False, True])
def test_results_are_never_a_buffer_a_later_replay_writes(gpu, device_arrays):
    g, x, y, _ = _mlp()
    sess = gpu(g)
    options = mg.RunOptions(return_device_arrays=device_arrays)
    feeds = [np.full((2, 4), i, np.float32) for i in range(6)]
    results = [sess.run(y, {x: f}, options=options) for f in feeds]
    kept = [to_host(r).copy() for r in results]
    for f, r, k in zip(feeds, results, kept):
        np.testing.assert_array_equal(to_host(r), k)
        np.testing.assert_array_equal(k, to_host(sess.run(y, {x: f}, options=options)))
    assert _graphs(sess).captures == 1
    assert len({id(r) for r in results}) == len(results)


def test_feeds_are_not_written(gpu):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [3], name="x")
        y = mg.exp(x + 1.0) * 2.0  # one fused step that may write into the upload's buffer
    sess = gpu(g)
    feed = np.arange(3, dtype=np.float32)
    for _ in range(5):
        np.testing.assert_allclose(sess.run(y, {x: feed}), np.exp(feed + 1.0) * 2.0, rtol=1e-6)
        np.testing.assert_array_equal(feed, np.arange(3, dtype=np.float32))
    assert _graphs(sess).captures == 1


def test_a_kernel_that_reads_to_the_host_makes_the_plan_plain_for_good(gpu):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [3], name="x")
        y = apply_op("_TestHostRead", None, [x + 1.0], {}).output(0)
    sess = gpu(g)
    for i in range(6):
        feed = np.full(3, i, np.float32)
        np.testing.assert_array_equal(sess.run(y, {x: feed}), (feed + 1.0) * 2)
    graphs = _graphs(sess)
    assert graphs.broken and graphs.failures == 1 and graphs.captures == 0
    assert graphs.replays == 0


def test_the_off_switch(gpu):
    mg.config.set_cuda_graphs(False)
    g, x, y, _ = _mlp()
    sess = gpu(g)
    for _ in range(5):
        sess.run(y, {x: np.ones((2, 4), np.float32)})
    assert _graphs(sess).captures == 0
    code = "import minigraph as mg; print(mg.config.cuda_graphs())"
    for value, expected in [(None, "False"), ("0", "False"), ("1", "True")]:  # off by default
        env = {k: v for k, v in os.environ.items() if k != "MINIGRAPH_CUDA_GRAPHS"}
        if value is not None:
            env["MINIGRAPH_CUDA_GRAPHS"] = value
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert out.stdout.strip() == expected


def test_each_feed_signature_has_its_graph_and_large_host_feeds_none(gpu):
    g, x, y, _ = _mlp()
    sess = gpu(g)
    for batch in (1, 2, 1, 2, 1, 2):
        assert sess.run(y, {x: np.ones((batch, 4), np.float32)}).shape == (batch, 3)
    assert _graphs(sess).captures == 2
    big = np.ones((cuda_graphs.SMALL_HOST_FEED // 16 + 1, 4), np.float32)
    for _ in range(4):
        sess.run(y, {x: big})
    assert _graphs(sess).captures == 2


def test_a_plan_with_a_host_step_is_not_capturable(gpu):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [3], name="x")
        with mg.device("/cpu:0"):
            y = x * 2.0
        z = y + 1.0
    sess = gpu(g)
    for _ in range(4):
        np.testing.assert_array_equal(sess.run(z, {x: np.ones(3, np.float32)}), [3, 3, 3])
    assert _graphs(sess) is None


def test_a_bad_index_after_capture_still_names_the_node(gpu):
    g = mg.Graph()
    with g.as_default():
        params = mg.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
        i = mg.placeholder(mg.int32, [2, 2], name="i")
        y = mg.gather_nd(params, i, name="pick") * 2.0
    sess = gpu(g)
    good = np.array([[0, 1], [3, 2]], np.int32)
    for _ in range(4):
        np.testing.assert_array_equal(sess.run(y, {i: good}), [2, 22])
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = \[4, 0\]") as e:
        sess.run(y, {i: np.array([[0, 1], [4, 0]], np.int32)})
    assert e.value.node_name == "pick"
    np.testing.assert_array_equal(sess.run(y, {i: good}), [2, 22])


def test_replays_from_several_threads(gpu):
    g, x, y, w = _mlp()
    sess = gpu(g)
    wv = sess.run(w)
    for _ in range(3):
        sess.run(y, {x: np.zeros((2, 4), np.float32)})
    failures = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(20):
            feed = rng.standard_normal((2, 4)).astype(np.float32)
            got = sess.run(y, {x: feed})
            if not np.allclose(got, _reference(feed, wv), rtol=1e-5):
                failures.append(seed)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
