"""Sessions: fetches, feeds, pruning, plan cache, memory, threads, errors, devices."""

import collections
import subprocess
import sys
import threading
import tracemalloc

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors


@pytest.fixture
def graph():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None, 2], name="x")
        y = mg.multiply(x, 2.0, name="y")
        z = mg.add(y, 1.0, name="z")
    return g, x, y, z


def test_fetch_structures(graph):
    g, x, y, z = graph
    feed = {x: np.array([[1, 2]], np.float32)}
    with mg.Session(g) as sess:
        assert sess.run(z, feed).tolist() == [[3, 5]]
        a, (b,), d = sess.run([y, (z,), {"k": "z:0"}], feed)
        assert a.tolist() == [[2, 4]] and b.tolist() == [[3, 5]] and d["k"].tolist() == [[3, 5]]
        Pair = collections.namedtuple("Pair", "first second")
        p = sess.run(Pair(y, z), feed)
        assert isinstance(p, Pair) and p.second.tolist() == [[3, 5]]
        assert sess.run(z.op, feed) is None
        assert sess.run("z", feed) is None
        assert sess.run([z, z], feed)[1].tolist() == [[3, 5]]


def test_feeds_by_output_and_by_name(graph):
    g, x, y, z = graph
    with mg.Session(g) as sess:
        by_name = sess.run(z, {"x:0": [[0.5, 1.0]]})
        by_output = sess.run(z, {x: [[0.5, 1.0]]})
        np.testing.assert_array_equal(by_name, by_output)
        assert by_name.dtype == np.float32
        # Feeding an intermediate cuts the graph there.
        assert sess.run(z, {y: [[10.0, 20.0]]}).tolist() == [[11, 21]]


def test_feeding_one_output_of_a_node_that_still_runs_for_another():
    # The node runs for its unfed output; readers of the fed output see the feed.
    g = mg.Graph()
    with g.as_default():
        data = mg.constant(np.arange(6, dtype=np.float32))
        evens, odds = mg.dynamic_partition(data, [0, 1, 0, 1, 0, 1], 2)
        a, b = evens * 2.0, odds * 3.0
    with mg.Session(g) as sess:
        got_a, got_b, got_evens = sess.run([a, b, evens], {evens: np.array([100.0], np.float32)})
        assert got_a.tolist() == [200] and got_b.tolist() == [3, 9, 15]
        assert got_evens.tolist() == [100]
        assert sess.run(a).tolist() == [0, 4, 8]  # unfed: the node's own output


def test_feed_checks_name_the_placeholder(graph):
    g, x, y, z = graph
    with mg.Session(g) as sess:
        with pytest.raises(errors.InvalidArgumentError, match="Cannot feed value of shape") as e:
            sess.run(z, {x: np.zeros((2, 3), np.float32)})
        assert e.value.node_name == "x" and "'x'" in str(e.value)
        with pytest.raises(errors.InvalidArgumentError, match="dtype complex128") as e:
            sess.run(z, {x: np.zeros((1, 2), np.complex128)})
        assert "'x'" in str(e.value)
        with pytest.raises(
            errors.InvalidArgumentError,
            match="must feed a value for placeholder"
            r" tensor 'x' with dtype float32 and shape \[\?,2\]",
        ) as e:
            sess.run(z)
        assert e.value.node_name == "x"
        with pytest.raises(errors.NotFoundError):
            sess.run(z, {"nope:0": 1})


def test_feeds_are_checked_on_every_run_not_only_the_first(graph):
    """After a good feed of x, later runs still check what is fed to x: shape, dtype, graph."""
    g, x, y, z = graph
    with mg.Session(g) as sess:
        good = np.zeros((1, 2), np.float32)
        for _ in range(2):
            sess.run(z, {x: good})
        with pytest.raises(errors.InvalidArgumentError, match="Cannot feed value of shape"):
            sess.run(z, {x: np.zeros((2, 3), np.float32)})
        with pytest.raises(errors.InvalidArgumentError, match="dtype complex128"):
            sess.run(z, {x: np.zeros((1, 2), np.complex128)})
        # a float64 array is converted, not taken as it is
        assert sess.run(x, {x: np.full((1, 2), 0.1)}).dtype == np.float32
        other = mg.Graph()
        with other.as_default():
            foreign = mg.placeholder(mg.float32, shape=[None, 2], name="x")
        with pytest.raises(errors.InvalidArgumentError, match="not an element of this session"):
            sess.run(z, {foreign: good})
        fed = sess.run(x, {x: good})
        fed[:] = 7  # a fetched feed is the caller's own copy
        assert not good.any()


def test_a_run_leaves_numpy_error_state_as_it_was():
    """Kernels run with NumPy's floating-point warnings off; the caller's state is back after
    the run, also when the run fails."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[2], name="x")
        y = mg.divide(x - x, x)
    raising = {"divide": "raise", "over": "raise", "under": "raise", "invalid": "raise"}
    with mg.Session(g) as sess, np.errstate(all="raise"):
        got = sess.run(y, {x: np.array([np.inf, 0], np.float32)})  # inf - inf, 0 / 0
        assert np.isnan(got).all() and np.geterr() == raising
        with pytest.raises(errors.InvalidArgumentError):
            sess.run(y, {x: np.zeros(3, np.float32)})
        assert np.geterr() == raising


def test_pruning_never_runs_unneeded_nodes():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.int32, shape=[3], name="x")
        good = x + 1
        # This branch would fail at run time: index 5 is out of range for 3 elements.
        bad = mg.gather(x, x[0] + 5)
    with mg.Session(g) as sess:
        assert sess.run(good, {x: [1, 2, 3]}).tolist() == [2, 3, 4]
        with pytest.raises(errors.InvalidArgumentError, match="is not in \\[0, 3\\)") as e:
            sess.run(bad, {x: [1, 2, 3]})
        assert e.value.node_name == bad.op.name


def test_unfed_placeholder_in_pruned_branch_is_fine():
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float32, name="a")
        b = mg.constant(2.0) * 3.0
        _ = a + b
    assert mg.Session(g).run(b) == 6.0


def test_plan_cache_reuse(graph):
    g, x, y, z = graph
    sess = mg.Session(g)
    sess.run(z, {x: [[1, 2]]})
    sess.run(z, {x: [[3, 4]]})
    sess.run([z], {"x:0": [[3, 4]]})
    assert len(sess._plans) == 1
    sess.run(y, {x: [[3, 4]]})
    assert len(sess._plans) == 2
    plan = next(iter(sess._plans.values()))
    # x * c + d: the Mul and the AddV2 are fused into one step (minigraph.fusion)
    assert [s.op_type for s in plan.steps] == ["Const", "Const", "_FusedElementwise"]


def test_feeds_in_any_order_share_one_plan_and_keep_their_values():
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float32, shape=[2], name="a")
        b = mg.placeholder(mg.float32, shape=[2], name="b")
        y = a - b
    sess = mg.Session(g)
    one, two = np.array([5, 7], np.float32), np.array([1, 2], np.float32)
    np.testing.assert_array_equal(sess.run(y, {a: one, b: two}), [4, 5])
    np.testing.assert_array_equal(sess.run(y, {b: two, a: one}), [4, 5])
    np.testing.assert_array_equal(sess.run(y, {"b:0": one, a: two}), [-4, -5])
    assert len(sess._plans) == 1


def test_no_mutation_of_feeds_or_constants():
    g = mg.Graph()
    base = np.arange(4, dtype=np.float32)
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[4], name="x")
        c = mg.constant(base)
        y = ((x + 1.0) * 2.0) - c  # intermediates may be reused in place
        i = mg.identity(x)
    feed = np.ones(4, np.float32)
    before, base_before = feed.copy(), base.copy()
    with mg.Session(g) as sess:
        for _ in range(2):
            out, same, const = sess.run([y, i, c], {x: feed})
            np.testing.assert_array_equal(out, (before + 1) * 2 - base_before)
        same[:] = 99  # the caller owns what run returns
        const[:] = 99
        np.testing.assert_array_equal(sess.run(c), base_before)
    np.testing.assert_array_equal(feed, before)
    base[:] = -1  # the graph keeps its own copy of a constant
    np.testing.assert_array_equal(mg.Session(g).run(c), base_before)


def test_fetched_arrays_never_share_memory():
    """A fetched value and a view of it (Reshape, Split pieces, the same tensor twice)
    come back as separate arrays: writing one leaves the others alone."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[2, 4], name="x")
        y = x * 2.0
        flat = mg.reshape(y, [8])
        left, right = mg.split(y, 2, axis=1)
        c = mg.constant(np.arange(4, dtype=np.float32))
    feed = {x: np.ones((2, 4), np.float32)}
    with mg.Session(g) as sess:
        got = sess.run([y, flat, left, right, y, c, mg.reshape(c, [2, 2])], feed)
        for i, a in enumerate(got):
            for b in got[i + 1 :]:
                assert not np.shares_memory(a, b)
        for a in got:
            a[...] = -1
        np.testing.assert_array_equal(sess.run(y, feed), np.full((2, 4), 2, np.float32))
        single = sess.run(flat, feed)  # one fetch: nothing to copy
        np.testing.assert_array_equal(single, np.full(8, 2, np.float32))
        nested = sess.run({"a": y, "b": [y, (flat,)]}, feed)
        assert not np.shares_memory(nested["a"], nested["b"][0])
        assert not np.shares_memory(nested["a"], nested["b"][1][0])


def test_elementwise_chain_reuses_buffers():
    g = mg.Graph()
    n = 1 << 20  # 4 MB of float32
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[n], name="x")
        y = x
        for _ in range(30):
            y = y + 1.0
    feed = np.zeros(n, np.float32)
    with mg.Session(g) as sess:
        sess.run(y, {x: feed})
        tracemalloc.start()
        out = sess.run(y, {x: feed})
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert out[0] == 30.0
    assert peak < 2.5 * feed.nbytes  # one or two live buffers, not thirty


def test_control_dependencies_are_honoured():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.int32, shape=[], name="x")
        check = mg.gather([1, 2, 3], x)  # fails for x >= 3
        with mg.control_dependencies([check]):
            out = mg.constant(7)
    with mg.Session(g) as sess:
        assert sess.run(out, {x: 1}) == 7
        with pytest.raises(errors.InvalidArgumentError, match="is not in \\[0, 3\\)"):
            sess.run(out, {x: 5})


def test_concurrent_runs_on_one_session():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, shape=[None], name="x")
        y = mg.reshape(x * 3.0 + 1.0, [-1, 1])
        z = mg.concat([y, y * 2.0], axis=1)
    sess = mg.Session(g)
    failures = []

    def worker(seed):
        rng = np.random.default_rng(seed)
        for _ in range(50):
            v = rng.standard_normal(rng.integers(1, 200))
            out = sess.run(z, {x: v})
            expected = np.stack([v * 3 + 1, (v * 3 + 1) * 2], axis=1)
            if not np.array_equal(out, expected):
                failures.append(seed)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_gpu_request_without_gpu_is_unavailable():
    from minigraph.devices import gpu_unavailable_reason

    if gpu_unavailable_reason() is None:
        pytest.skip("a GPU is present")
    g = mg.Graph()
    with g.as_default():
        with mg.device("/gpu:0"):
            y = mg.constant(1.0, name="on_gpu") + 1.0
    with pytest.raises(errors.UnavailableError, match="on_gpu") as e:
        mg.Session(g).run(y)
    assert "GPU" in str(e.value)
    g2 = mg.Graph()
    with g2.as_default():
        c = mg.constant(1.0, name="plain")
    with pytest.raises(errors.UnavailableError, match="plain"):
        mg.Session(g2, device="/gpu:0").run(c)


def test_device_strings():
    from minigraph.devices import parse_device

    full = parse_device("/job:localhost/replica:0/task:0/device:CPU:0")
    assert (full.job, full.replica, full.task, full.device_type, full.device_index) == (
        "localhost",
        0,
        0,
        "CPU",
        0,
    )
    assert parse_device("/gpu:1").to_string() == "/device:GPU:1"
    assert parse_device("GPU:0").device_type == "GPU"
    assert parse_device("/job:worker/task:1/device:CPU:0").task == 1
    with pytest.raises(errors.InvalidArgumentError, match="Invalid device"):
        parse_device("/tpu:0")
    g = mg.Graph()
    with g.as_default(), mg.device("/job:worker/task:1"):
        y = mg.constant(1.0, name="remote")
    with pytest.raises(errors.UnavailableError, match="remote"):
        mg.Session(g).run(y)


def test_session_places_nodes_on_cpu():
    g = mg.Graph()
    with g.as_default(), mg.device("/cpu:0"):
        y = mg.constant(1.0) + 1.0
    mg.Session(g).run(y)
    assert y.node.assigned_device == "/job:localhost/replica:0/task:0/device:CPU:0"


def test_closed_session():
    g = mg.Graph()
    with g.as_default():
        c = mg.constant(1)
    sess = mg.Session(g)
    sess.close()
    with pytest.raises(errors.FailedPreconditionError):
        sess.run(c)


def test_fetch_from_other_graph_and_bad_fetch():
    g1, g2 = mg.Graph(), mg.Graph()
    with g1.as_default():
        a = mg.constant(1)
    with g2.as_default():
        mg.constant(1)
    with pytest.raises(errors.InvalidArgumentError, match="not an element"):
        mg.Session(g2).run(a)
    with pytest.raises(TypeError, match="invalid type"):
        mg.Session(g1).run(3.5)


def test_trace_options_collect_timings(graph):
    g, x, y, z = graph
    meta = mg.RunMetadata()
    mg.Session(g).run(z, {x: [[1, 2]]}, options=mg.RunOptions(trace=True), run_metadata=meta)
    # y = x * c and z = y + d run as one fused step, named after z
    assert [t[:2] for t in meta.step_timings] == [
        ("y/y", "Const"),
        ("z/y", "Const"),
        ("z", "_FusedElementwise"),
    ]
    assert all(t[4] >= 0 for t in meta.step_timings)
    unfused = mg.OptimizerOptions(do_elementwise_fusion=False)
    config = mg.ConfigProto(graph_options=mg.GraphOptions(optimizer_options=unfused))
    mg.Session(g, config=config).run(
        z, {x: [[1, 2]]}, options=mg.RunOptions(trace=True), run_metadata=meta
    )
    assert [t[0] for t in meta.step_timings] == ["y/y", "y", "z/y", "z"]


def test_debug_prints_one_line_per_node(graph, capsys):
    g, x, y, z = graph
    mg.config.set_debug(True)
    try:
        mg.Session(g).run(z, {x: [[1, 2]]})
    finally:
        mg.config.set_debug(False)
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("[minigraph]")]
    assert len(lines) == 3 and "Const" in lines[0] and "CPU:0" in lines[0]
    assert "_FusedElementwise" in lines[2]  # y = x * c and z = y + d, fused


def test_kernel_exceptions_are_wrapped(cpu_only_op):
    broken = cpu_only_op("_TestBroken", lambda ctx, x: x[10])
    g = mg.Graph()
    with g.as_default():
        y = broken(mg.placeholder(mg.float32, name="p"))
    with pytest.raises(errors.InternalError, match="IndexError") as e:
        mg.Session(g).run(y, {"p:0": 1.0})
    assert e.value.node_name == "_TestBroken"


def test_outputs_are_checked_against_inference(cpu_only_op):
    lies = cpu_only_op("_TestLies", lambda ctx, x: x.reshape(-1))
    g = mg.Graph()
    with g.as_default():
        y = lies(mg.placeholder(mg.float32, [2, 2], name="p"))
    with pytest.raises(errors.InternalError, match="shape"):
        mg.Session(g).run(y, {"p:0": np.zeros((2, 2))})


def test_huge_output_is_resource_exhausted_before_allocation():
    g = mg.Graph()
    with g.as_default():
        d = mg.placeholder(mg.int64, shape=[2], name="d")
        f = mg.fill(d, 1.0)
    with pytest.raises(errors.ResourceExhaustedError, match="OOM when allocating") as e:
        mg.Session(g).run(f, {d: [2**40, 2**40]})
    assert e.value.node_name == f.op.name


def test_plans_are_plain_data_that_pickle():
    import pickle

    from minigraph.executor import LocalExecutor

    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None], name="x")
        y = mg.dynamic_stitch([[1, 0]], [mg.stack([x[0] * 2.0, x[1]])])
    sess = mg.Session(g)
    sess.run(y, {x: [1.0, 2.0]})
    (plan,) = sess._plans.values()
    copy = pickle.loads(pickle.dumps(plan))  # what a worker in another process receives
    (out,) = LocalExecutor().run(copy, [np.array([1.0, 3.0], np.float32)])
    np.testing.assert_array_equal(out, [3.0, 2.0])


class _FakeRuntime:
    def __init__(self, count=None, error=None):
        self.count, self.error = count, error

    def getDeviceCount(self):  # noqa: N802 (CuPy's name)
        if self.error is not None:
            raise self.error
        return self.count


def _fake_cupy(runtime):
    import types

    cupy = types.ModuleType("cupy")
    cupy.cuda = types.SimpleNamespace(runtime=runtime)
    return cupy


@pytest.mark.parametrize(
    "cupy, index, reason",
    [
        (None, 0, "CuPy is not installed"),  # sys.modules[name] = None: import fails
        (
            _fake_cupy(_FakeRuntime(error=RuntimeError("cudaErrorInsufficientDriver"))),
            0,
            r"no CUDA device is available to CuPy \(cudaErrorInsufficientDriver\)",
        ),
        (_fake_cupy(_FakeRuntime(count=0)), 0, "no CUDA device is available to CuPy"),
        (_fake_cupy(_FakeRuntime(count=1)), 1, "there are only 1 GPUs"),
    ],
    ids=["no-cupy", "no-driver", "no-device", "no-gpu-1"],
)
def test_why_a_gpu_is_unavailable(monkeypatch, cupy, index, reason):
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    g = mg.Graph()
    with g.as_default(), mg.device(f"/gpu:{index}"):
        y = mg.constant(1.0, name="wants_gpu")
    with pytest.raises(errors.UnavailableError, match=reason) as e:
        mg.Session(g).run(y)
    assert "wants_gpu" in str(e.value)
    with g.as_default():
        z = mg.constant(2.0) * 3.0
    assert mg.Session(g).run(z) == 6.0  # the CPU keeps working


def test_cpu_sessions_never_import_cupy():
    code = (
        "import sys, minigraph as mg\n"
        "g = mg.Graph()\n"
        "with g.as_default():\n"
        "    y = mg.dynamic_stitch([[1, 0]], [[1.0, 2.0]])\n"
        "assert mg.Session(g).run(y).tolist() == [2.0, 1.0]\n"
        "assert 'cupy' not in sys.modules, 'cupy was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_gpu_tensor_may_take_at_most_the_gpus_memory(monkeypatch):
    import types

    from minigraph.devices import Device

    class FakeDevice:
        def __init__(self, index):
            self.mem_info = (1 << 30, (index + 80) << 30)  # (free, total)

    cupy = types.ModuleType("cupy")
    cupy.cuda = types.SimpleNamespace(Device=FakeDevice)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    assert Device("GPU", 1).memory_limit == 81 << 30
    assert Device("CPU", 0).memory_limit is None  # the host's memory


def test_a_long_lived_session_keeps_a_bounded_number_of_plans(monkeypatch):
    import gc

    from minigraph import session as session_module

    monkeypatch.setattr(session_module, "PLAN_CACHE_SIZE", 4)
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [], name="x")
        ys = [x + float(k) for k in range(10)]
    sess = mg.Session(g)
    hot = ys[0]
    for k, y in enumerate(ys):
        assert sess.run([hot, y], {x: 1.0}) == [1.0, 1.0 + k]
        assert sess.run(hot, {x: 2.0}) == 2.0
    assert len(sess._plans) == 4
    assert ((hot,), (), (x,), ("CPU:0",)) in sess._plans  # in use: never the one dropped
    gc.collect()
    assert len(sess._executor._bound) == 4  # the executor drops the bindings of dropped plans


def test_the_plan_cache_stays_bounded_under_threads(monkeypatch):
    from minigraph import session as session_module

    monkeypatch.setattr(session_module, "PLAN_CACHE_SIZE", 2)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch often, so runs race with evictions
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [], name="x")
        ys = [x + float(k) for k in range(6)]
    sess = mg.Session(g)

    def work(t):
        for k in range(300):
            assert sess.run(ys[(k + t) % 6], {x: 1.0}) == 1.0 + (k + t) % 6

    try:
        threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert len(sess._plans) == 2
    assert len(sess._last_used) <= 2 + 8  # at most one stale id per racing thread


def test_small_binary_ops_of_known_shapes_run_as_the_bare_ufunc():
    """The executor calls np.add itself for a CPU Add whose shapes are known, broadcast,
    and small (nothing else for its kernel to do); otherwise the kernel, with its checks."""
    from minigraph.devices import parse_device
    from minigraph.executor import LocalExecutor
    from minigraph.kernel import REUSE_MIN_SIZE
    from minigraph.optimizer import OptimizerOptions
    from minigraph.plan import build_plan

    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[3, 4], name="x")
        u = mg.placeholder(mg.float32, shape=[None], name="u")
        b = mg.placeholder(mg.float32, shape=[REUSE_MIN_SIZE], name="b")
        i = mg.placeholder(mg.int32, shape=[2], name="i")
        small = mg.add(x, mg.constant(np.float32(1)), name="small")
        row = mg.subtract(small, mg.constant(np.ones(4, np.float32)), name="row")
        unknown = mg.multiply(u, 2.0, name="unknown")
        big = mg.add(b, 1.0, name="big")
        div = mg.floordiv(i, 0, name="div")
    unfused = OptimizerOptions(do_elementwise_fusion=False)
    plan = build_plan(
        [row, unknown, big, div], [], [x, u, b, i], parse_device(None), True, None, unfused
    )
    bound = LocalExecutor()._bound_steps(plan)
    calls = {s.node_name: entry[0] for s, entry in zip(bound.fast_steps, bound.fast, strict=True)}
    assert calls["small"] is np.add and calls["row"] is np.subtract
    assert calls["unknown"] is not np.multiply and calls["big"] is not np.add
    assert calls["div"] is not np.floor_divide  # its zero check must run
    sess = mg.Session(g)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(sess.run(row, {x: a}), a)
    with pytest.raises(errors.InvalidArgumentError, match="division by zero"):
        sess.run(div, {i: np.array([1, 2], np.int32)})


def _fast_and_checked(g, fetch, feed):
    """``fetch``'s value from the plain fast loop (which binds small ops of known shapes to
    their bare ufuncs) and from the checked loop the suite runs (kernel outputs checked)."""
    mg.config.set_check_outputs(False)
    try:
        fast = mg.Session(g).run(fetch, feed)
    finally:
        mg.config.set_check_outputs(True)
    return fast, mg.Session(g).run(fetch, feed)


def _ops_with_bare_ufuncs():
    """(op type, dtype) for each CPU kernel that may run as its bare ufunc, each dtype it takes."""
    cases = []
    for name, op_def in sorted(mg.registered_ops().items()):
        if getattr(op_def.kernels.get("CPU"), "specialize", None) is None:
            continue
        t = next((a for a in op_def.attrs if a.name == "T"), None)
        for dtype in t.allowed if t is not None else (mg.bool,):
            cases.append((name, dtype))
    return cases


@pytest.mark.parametrize("op_type, dtype", _ops_with_bare_ufuncs())
def test_every_op_that_may_run_as_its_bare_ufunc_gives_its_kernels_values(op_type, dtype):
    """Small unary and binary elementwise ops of known shapes may run as the bare NumPy
    ufunc in the fast loop (not in the checked loop the suite runs): same dtype and bits."""
    op_def = mg.registered_ops()[op_type]
    rng = np.random.default_rng(0)
    np_dtype = dtype.np
    if np_dtype.kind == "b":
        values = [rng.integers(0, 2, (3, 4)).astype(bool) for _ in op_def.inputs]
    elif np_dtype.kind in "iu":  # no zero or negative second operand: divisions, powers
        low = 0 if np_dtype.kind == "u" else -3
        values = [rng.integers(low, 4, (3, 4)), rng.integers(1, 4, (3, 4))]
    else:
        values = [rng.normal(0, 2, (3, 4)), rng.uniform(0.5, 2, (3, 4))]
        values[0].flat[:3] = [0.0, np.inf, -0.5]
        if np_dtype.kind == "c":
            values = [v + 1j * rng.normal(0, 1, (3, 4)) for v in values]
    values = [v.astype(np_dtype) for v in values[: len(op_def.inputs)]]
    g = mg.Graph()
    with g.as_default():
        phs = [mg.placeholder(dtype, shape=[3, 4]) for _ in values]
        attrs = {a.name: a.default for a in op_def.attrs if a.has_default}
        attrs.update({"T": dtype} if any(a.name == "T" for a in op_def.attrs) else {})
        node = g.create_node(op_def, g.unique_name(op_type), phs, attrs)
    fast, checked = _fast_and_checked(g, mg.Operation(node).outputs[0], dict(zip(phs, values)))
    assert fast.dtype == checked.dtype and fast.shape == checked.shape
    np.testing.assert_array_equal(fast.view(np.uint8), checked.view(np.uint8))  # bitwise


_KEEP_FREED = r"""
import os, sys
import numpy as np
import minigraph as mg

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

if sys.argv[1] == "keep":
    assert mg.config.keep_freed_memory()
a = np.ones(1 << 24)  # 128 MB, touched
before = rss()
del a
freed = before - rss()
b = np.ones(1 << 24)  # where the freed block was, when it was kept
print(freed >= 100 << 20, rss() - before < 16 << 20)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc and /proc: Linux only")
def test_keep_freed_memory_keeps_freed_blocks_for_the_next_allocation():
    """By default glibc unmaps a large freed array (its pages go back to the system); with
    mg.config.keep_freed_memory() it keeps them, and the next array reuses them."""

    def run(mode):
        out = subprocess.run(
            [sys.executable, "-c", _KEEP_FREED, mode], capture_output=True, text=True, check=True
        )
        return out.stdout.split()

    assert run("default") == ["True", "True"]  # returned to the system, then mapped again
    assert run("keep") == ["False", "True"]  # kept, and reused


@pytest.mark.parametrize(
    "op, dtype",
    [
        (mg.add, np.float32),
        (mg.subtract, np.int64),
        (mg.multiply, np.float64),
        (mg.maximum, np.float32),
        (mg.less, np.int32),
        (mg.equal, np.float32),
        (mg.logical_and, np.bool_),
    ],
)
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (4,)), ((), (2, 3)), ((5,), ())])
def test_the_fast_loop_and_its_bare_ufuncs_give_the_checked_loops_values(op, dtype, shapes):
    """The suite runs the checked loop (kernel output checks on); the plain loop binds small
    ops of known shapes to their bare ufuncs: both give NumPy's values."""
    rng = np.random.default_rng(0)
    a, b = (rng.integers(-3, 4, s).astype(dtype) for s in shapes)
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.as_dtype(dtype), shape=shapes[0], name="x")
        y = mg.placeholder(mg.as_dtype(dtype), shape=shapes[1], name="y")
        z = op(x, y)
    fast, checked = _fast_and_checked(g, z, {x: a, y: b})
    want = {
        mg.add: np.add,
        mg.subtract: np.subtract,
        mg.multiply: np.multiply,
        mg.maximum: np.maximum,
        mg.less: np.less,
        mg.equal: np.equal,
        mg.logical_and: np.logical_and,
    }[op](a, b)
    for got in (fast, checked):
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
