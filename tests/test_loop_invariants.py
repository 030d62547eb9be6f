"""Loop-invariant code motion (minigraph.loop_invariants): a while loop's body computes what
depends only on values that stay the same from one iteration to the next once per run of
the loop, with the results it gives when every iteration computes it.

Expected values come from plain NumPy loops written here; "runs once" is read from a trace,
whose step names say which iteration (or the hoisted part: ``body/0/invariant``) ran them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import minigraph as mg
from minigraph.loop_invariants import invariant_frontier

FIXTURES = Path(__file__).parent / "fixtures" / "control_flow"
NO_MOTION = mg.ConfigProto(
    graph_options=mg.GraphOptions(
        optimizer_options=mg.OptimizerOptions(do_loop_invariant_motion=False)
    )
)


def _traced(sess: mg.Session, fetches, feeds) -> tuple[object, list[str]]:
    meta = mg.RunMetadata()
    out = sess.run(fetches, feeds, options=mg.RunOptions(trace=True), run_metadata=meta)
    return out, [t[0] for t in meta.step_timings]


def _recurrence(steps: int = 5):
    """h = tanh(h @ w_h + b_h) for ``steps`` iterations, where the body cuts w_h and b_h out
    of one captured weight and one captured bias (as a Keras GRU cuts its bias)."""
    g = mg.Graph()
    with g.as_default():
        h0 = mg.placeholder(mg.float32, [2, 3], name="h0")
        w = mg.placeholder(mg.float32, [3, 6], name="w")
        b = mg.placeholder(mg.float32, [2, 3], name="b")

        def body(i, h):
            w_h = mg.split(w, 2, axis=1)[1]
            b_h = mg.squeeze(mg.split(b, 2, axis=0)[1], [0], name="bias")
            return i + 1, mg.tanh(mg.matmul(h, w_h) + b_h)

        i, h = mg.while_loop(lambda i, h: i < steps, body, [0, h0], name="loop")
    rng = np.random.default_rng(0)
    feeds = {
        h0: rng.standard_normal((2, 3)).astype(np.float32),
        w: rng.standard_normal((3, 6)).astype(np.float32),
        b: rng.standard_normal((2, 3)).astype(np.float32),
    }
    want = feeds[h0]
    for _ in range(steps):
        want = np.tanh(want @ feeds[w][:, 3:] + feeds[b][1])
    return g, feeds, (i, h), want


def test_the_invariant_part_runs_once_per_loop_with_the_same_bits():
    g, feeds, (i, h), want = _recurrence()
    (got_i, got_h), names = _traced(mg.Session(g), [i, h], feeds)
    assert got_i == 5
    np.testing.assert_allclose(got_h, want, rtol=1e-5, atol=1e-6)
    bias = [n for n in names if n.endswith("/bias")]
    assert bias == ["loop/body/0/invariant/bias"]  # not once per iteration
    assert sum(n.endswith("/MatMul") for n in names) == 5
    (_, plain_h), plain_names = _traced(mg.Session(g, config=NO_MOTION), [i, h], feeds)
    assert sum(n.endswith("/bias") for n in plain_names) == 5
    assert got_h.tobytes() == plain_h.tobytes()


def test_a_loop_that_never_iterates_runs_none_of_it():
    """An invariant node that fails does so only where the body runs: in the first
    iteration, with the error the body gives, naming the node."""
    g = mg.Graph()
    with g.as_default():
        n = mg.placeholder(mg.int32, [])
        x = mg.placeholder(mg.float32, [None])
        shape = mg.placeholder(mg.int32, [2])

        def body(i, acc):
            return i + 1, acc + mg.reduce_sum(mg.reshape(x, shape, name="bad_reshape"))

        out = mg.while_loop(lambda i, acc: i < n, body, [0, 0.0])
    sess = mg.Session(g)
    feeds = {x: np.arange(5, dtype=np.float32), shape: [2, 2]}
    assert sess.run(out, {n: 0, **feeds}) == [0, 0.0]
    with pytest.raises(mg.errors.InvalidArgumentError, match="bad_reshape"):
        sess.run(out, {n: 3, **feeds})
    feeds[shape] = [1, 5]
    assert sess.run(out, {n: 3, **feeds}) == [3, 30.0]


def test_stateful_nodes_run_every_iteration():
    g = mg.Graph()
    with g.as_default():
        shape = mg.placeholder(mg.int32, [1])

        def body(i, draws):
            draw = mg.random_uniform(shape, seed=1)
            return i + 1, mg.concat([draws, draw], 0)

        _, draws = mg.while_loop(
            lambda i, d: i < 4,
            body,
            [0, mg.zeros([0])],
            shape_invariants=[mg.TensorShape([]), mg.TensorShape([None])],
        )
    got = mg.Session(g).run(draws, {shape: [1]})
    assert got.shape == (4,) and len(set(got.tolist())) == 4


def test_a_hoisted_value_returned_as_a_loop_variable_stays_the_loops_own():
    """The body returns an invariant value (a view of the captured w, and w * 2) as the
    next iteration's arguments, which the iteration reads: every iteration sees them as
    they were made, and what the loop returns are buffers of its own, which the steps
    after the loop may overwrite in place without touching the caller's w."""
    n = 8192  # large enough for the steps after the loop to write in place
    g = mg.Graph()
    with g.as_default():
        w = mg.placeholder(mg.float32, [n])

        def body(i, view, doubled, total):
            return i + 1, mg.squeeze(mg.expand_dims(w, 0), [0]), w * 2.0, total + doubled

        zeros = mg.zeros([n])
        out = mg.while_loop(lambda i, *_: i < 3, body, [0, zeros, zeros, zeros])
        after = [out[1] * 3.0, out[2] + 1.0, out[3] - 1.0]
    value = np.arange(n, dtype=np.float32)
    sess = mg.Session(g)
    for _ in range(2):
        tripled, doubled, total = sess.run(after, {w: value})
        np.testing.assert_array_equal(tripled, value * 3)
        np.testing.assert_array_equal(doubled, value * 2 + 1)
        np.testing.assert_array_equal(total, value * 4 - 1)  # 0 + 2w + 2w
        np.testing.assert_array_equal(value, np.arange(n))


def test_the_keras_gru_hoists_its_bias_split():
    """The recurrent benchmark model: its body splits and squeezes its captured bias on
    every iteration; both squeezed halves are the frontier. Results are bitwise those of
    the loop without motion (fixture inputs of tests/fixtures/control_flow)."""
    case = next(
        c for c in json.loads((FIXTURES / "cases.json").read_text()) if c["name"] == "gru_bench_fn"
    )
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(str(FIXTURES / case["file"]), name="")
    recorded = np.load(FIXTURES / "gru_bench_fn.npz")
    feeds = {g.get_tensor_by_name(n): recorded[f"feed/{n}"] for n in case["feeds"]}
    fetches = [g.get_tensor_by_name(n) for n in case["fetches"]]
    (body,) = [f for name, f in g.library.items() if "body" in name]
    assert sorted(x.node.type_string for x in invariant_frontier(body)) == ["Squeeze"] * 2
    got = mg.Session(g).run(fetches, feeds)
    plain = mg.Session(g, config=NO_MOTION).run(fetches, feeds)
    assert [a.tobytes() for a in got] == [b.tobytes() for b in plain]


def test_nothing_is_hoisted_where_nothing_is_invariant():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [])
        out = mg.while_loop(lambda v: v < 100.0, lambda v: v * x + 1.0, 1.0)
    (body,) = [f for name, f in g.library.items() if "body" in name]
    assert invariant_frontier(body) == []  # v * x reads the loop variable
    assert body.loop_plans("CPU:0") is None
    assert mg.Session(g).run(out, {x: 3.0}) == 121.0  # 1, 4, 13, 40, 121


def test_loops_run_their_bodies_by_the_fast_loop_with_the_same_results():
    """Without output checks (the default outside tests) a body's plan runs through the
    executor's runner of it, straight to the fast loop: the same results as checked, and
    with or without loop-invariant motion."""
    g, feeds, (i, h), want = _recurrence(steps=7)
    checked = mg.Session(g).run([i, h], feeds)
    mg.config.set_check_outputs(False)  # conftest turns it back on
    for config in (None, NO_MOTION):
        got_i, got_h = mg.Session(g, config=config).run([i, h], feeds)
        assert got_i == 7 and got_h.tobytes() == checked[1].tobytes()
    np.testing.assert_allclose(checked[1], want, rtol=1e-5, atol=1e-6)


def test_an_executors_runner_is_its_run_bound_to_one_plan():
    from minigraph.devices import parse_device
    from minigraph.executor import LocalExecutor
    from minigraph.plan import build_plan

    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None], name="x")
        y = mg.tanh(x) * 2.0 + 1.0
    plan = build_plan([y], [], [x], parse_device(None))
    executor = LocalExecutor()
    run = executor.runner(plan)
    value = np.linspace(-2, 2, 9, dtype=np.float32)
    want = np.tanh(value) * np.float32(2) + np.float32(1)
    mg.config.set_check_outputs(False)  # the fast loop (conftest turns checks back on)
    (got,) = run([value])
    (again,) = executor.run(plan, [value])
    assert got.tobytes() == again.tobytes() == want.tobytes()
