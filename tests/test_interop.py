"""Independent big steps at once (minigraph.interop): same results as one at a time, steps
really overlap (also at different depths, and when sizes are known only when the run
feeds them), small ones stay in the calling thread, values are released only after their
last reader."""

import threading

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors
from minigraph.devices import parse_device
from minigraph.executor import LocalExecutor
from minigraph.interop import plan_schedule
from minigraph.plan import build_plan
from minigraph.registry import define_op, register_kernel
from minigraph.wrappers import apply_op

BIG = 1 << 18  # float32 elements: 1 MB, a "big" step


def one_at_a_time():
    return mg.ConfigProto(inter_op_parallelism_threads=1)


def two_at_once():
    """Two steps at once (by default a machine whose kernel threads take every core runs
    one at a time)."""
    return mg.ConfigProto(inter_op_parallelism_threads=2)


@pytest.fixture(autouse=True)
def _fast_loop():
    """The scheduled run is the executor's fast loop: kernel output checks (on in the
    rest of the suite) use the one-step-at-a-time loop."""
    mg.config.set_check_outputs(False)
    yield
    mg.config.set_check_outputs(True)


_meeting: dict = {}


def _test_op(name, before):
    """A CPU op ``x + 1`` that first calls ``before()``."""

    def kernel(ctx, x):
        before()
        return x + 1.0

    define_op(
        name, inputs=["x: T"], outputs=["y: T"], attrs=["T: type"], shape_fn=lambda c, x: x.shape
    )
    register_kernel(name, "CPU")(kernel)


# Waits until another step of the same kind is running too (or times out).
_test_op("_TestMeet", lambda: _meeting["barrier"].wait())


def meet(x):
    return apply_op("_TestMeet", None, [x], {}).output(0)


def _two_branches():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[BIG], name="x")
        y = meet(x * 2.0) + meet(x * 3.0)
    return g, x, y


def test_two_big_independent_steps_run_at_once():
    g, x, y = _two_branches()
    _meeting["barrier"] = threading.Barrier(2, timeout=20)
    out = mg.Session(g, config=two_at_once()).run(y, {x: np.ones(BIG, np.float32)})
    np.testing.assert_array_equal(out, np.full(BIG, 7.0, np.float32))


def test_one_at_a_time_when_the_session_says_so():
    g, x, y = _two_branches()
    _meeting["barrier"] = threading.Barrier(2, timeout=0.5)
    with pytest.raises(errors.InternalError, match="BrokenBarrierError") as e:
        mg.Session(g, config=one_at_a_time()).run(y, {x: np.ones(BIG, np.float32)})
    assert e.value.node_name.startswith("_TestMeet")


def test_small_graphs_keep_the_plain_loop():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[4], name="x")
        y = (x * 2.0) + (x * 3.0)
    plan = build_plan([y], [], [x], parse_device(None))
    assert plan_schedule(plan.steps, plan.fetch_slots) is None


def test_a_value_lives_until_its_last_reader_is_done():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(BIG).astype(np.float32)
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[BIG], name="x")
        s = x * 2.0
        chain = mg.round(s + 1.0)  # three steps (Round ends a fused chain)
        chain = chain * 3.0
        chain = chain - 0.5
        late = chain + s  # reads s late, earlier in plan order than `early`
        early = s * 5.0  # reads s early, last in plan order
        wide = s * 7.0  # another big step beside them
        y = late + early + wide
    plan = build_plan([y], [], [x], parse_device(None))
    assert plan_schedule(plan.steps, plan.fetch_slots) is not None
    got = mg.Session(g, config=two_at_once()).run(y, {x: a})
    want = mg.Session(g, config=one_at_a_time()).run(y, {x: a})
    np.testing.assert_array_equal(got, want)


def test_the_seed_composition_gives_the_same_bits():
    rng = np.random.default_rng(1)
    n = 1 << 19
    data = rng.standard_normal(n).astype(np.float32)
    parts = rng.integers(0, 8, n).astype(np.int32)
    g = mg.Graph()
    with g.as_default():
        d = mg.placeholder(mg.float32, shape=[n], name="d")
        p = mg.placeholder(mg.int32, shape=[n], name="p")
        pieces = mg.dynamic_partition(d, p, 8)
        positions = mg.dynamic_partition(mg.range(n), p, 8)
        y = mg.dynamic_stitch(positions, pieces)
    feeds = {d: data, p: parts}
    got = mg.Session(g, config=two_at_once()).run(y, feeds)
    want = mg.Session(g, config=one_at_a_time()).run(y, feeds)
    assert got.tobytes() == want.tobytes() == data.tobytes()


def test_an_error_in_a_threaded_step_names_its_node():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[BIG], name="x")
        i = mg.placeholder(mg.int32, shape=[BIG], name="i")
        y = mg.gather(x, i, name="bad_gather") + mg.gather(x * 2.0, i, name="good_gather")
    idx = np.zeros(BIG, np.int32)
    idx[5] = BIG  # out of range
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[5\]") as e:
        mg.Session(g, config=two_at_once()).run(y, {x: np.ones(BIG, np.float32), i: idx})
    assert e.value.node_name in ("bad_gather", "good_gather")


_threads: list = []
# Notes the thread it runs on.
_test_op("_TestWhere", lambda: _threads.append(threading.current_thread().name))


def _unknown_sizes_at_different_depths(op):
    """Two independent steps of ``op`` on inputs of unknown size, one behind a longer chain."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None], name="x")
        deep = mg.round(mg.round(x))  # two steps (Round is fused only with itself)
        a = apply_op(op, None, [x], {}).output(0)
        b = apply_op(op, None, [mg.cast(deep, mg.float32)], {}).output(0)
        y = a + b
    return g, x, y


def test_big_steps_at_different_depths_and_sizes_known_at_run_time_overlap():
    g, x, y = _unknown_sizes_at_different_depths("_TestMeet")
    _meeting["barrier"] = threading.Barrier(2, timeout=20)
    v = np.ones(BIG, np.float32)
    np.testing.assert_array_equal(
        mg.Session(g, config=two_at_once()).run(y, {x: v}), np.full(BIG, 4.0, np.float32)
    )


def test_steps_fed_small_inputs_stay_in_the_calling_thread():
    g, x, y = _unknown_sizes_at_different_depths("_TestWhere")
    plan = build_plan([y], [], [x], parse_device(None))
    assert plan_schedule(plan.steps, plan.fetch_slots) is not None  # sizes unknown: maybe
    _threads.clear()
    out = mg.Session(g, config=two_at_once()).run(y, {x: np.ones(1000, np.float32)})
    np.testing.assert_array_equal(out, np.full(1000, 4.0, np.float32))
    assert _threads == [threading.current_thread().name] * 2
    _threads.clear()
    mg.Session(g, config=two_at_once()).run(y, {x: np.ones(BIG, np.float32)})
    assert len(_threads) == 2 and all(t.startswith("minigraph-interop") for t in _threads)


@pytest.mark.parametrize(
    "cores, kernel_threads, want",
    [(2, 2, 1), (1, 1, 1), (8, 4, 2), (16, 4, 4), (64, 2, 4), (4, 8, 1)],
)
def test_the_default_pool_has_the_cores_a_kernels_threads_leave(
    monkeypatch, cores, kernel_threads, want
):
    from minigraph import interop

    monkeypatch.setattr(interop.os, "cpu_count", lambda: cores)
    assert interop.default_threads(kernel_threads) == want
    executor = LocalExecutor(intra_op_threads=kernel_threads)
    assert executor.inter_op_threads == want
