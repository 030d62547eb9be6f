"""Independent big steps at once (minigraph.interop): same results as one at a time, steps
really overlap, values are released only after their last reader's wave."""

import threading

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors
from minigraph.devices import parse_device
from minigraph.interop import plan_waves
from minigraph.plan import build_plan
from minigraph.registry import define_op, register_kernel
from minigraph.wrappers import apply_op

BIG = 1 << 18  # float32 elements: 1 MB, a "big" step


def one_at_a_time():
    return mg.ConfigProto(inter_op_parallelism_threads=1)


@pytest.fixture(autouse=True)
def _fast_loop():
    """The threaded waves are the executor's fast loop: kernel output checks (on in the
    rest of the suite) use the one-step-at-a-time loop."""
    mg.config.set_check_outputs(False)
    yield
    mg.config.set_check_outputs(True)


_meeting: dict = {}


def _meet_kernel(ctx, x):
    """Waits until another step of the same kind is running too (or times out)."""
    _meeting["barrier"].wait()
    return x + 1.0


define_op(
    "_TestMeet",
    inputs=["x: T"],
    outputs=["y: T"],
    attrs=["T: type"],
    shape_fn=lambda c, x: x.shape,
)
register_kernel("_TestMeet", "CPU")(_meet_kernel)


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
    out = mg.Session(g).run(y, {x: np.ones(BIG, np.float32)})
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
    assert plan_waves(plan.steps, plan.fetch_slots) is None


def test_a_value_lives_until_its_last_wave_not_its_last_reader_in_plan_order():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(BIG).astype(np.float32)
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[BIG], name="x")
        s = x * 2.0  # wave 0
        chain = s + 1.0  # waves 1..3
        chain = chain * 3.0
        chain = chain - 0.5
        late = chain + s  # reads s in wave 4, earlier in plan order than `early`
        early = s * 5.0  # reads s in wave 1, last in plan order
        wide = s * 7.0  # another big step of wave 1
        y = late + early + wide
    plan = build_plan([y], [], [x], parse_device(None))
    assert plan_waves(plan.steps, plan.fetch_slots) is not None
    got = mg.Session(g).run(y, {x: a})
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
    got = mg.Session(g).run(y, feeds)
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
        mg.Session(g).run(y, {x: np.ones(BIG, np.float32), i: idx})
    assert e.value.node_name in ("bad_gather", "good_gather")
