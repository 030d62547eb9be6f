"""Functional control flow built in Python: mg.while_loop, mg.cond, mg.switch_case, mg.case.

Expected values come from plain Python loops and branches written here. Every graph runs
on the CPU, on the (simulated) GPU and with the optimizer off (the any_device fixture).
"""

from __future__ import annotations

import numpy as np
import pytest

import minigraph as mg


def _run(fetches, feeds=None):
    g = fetches[0].graph if isinstance(fetches, list) else fetches.graph
    return mg.Session(g).run(fetches, feeds)  # any_device picks the device and optimizer


pytestmark = pytest.mark.usefixtures("any_device")


def test_while_loop_counts_and_multiplies():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [3])
        i, y = mg.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, y * 2.0 + 1.0), [0, x])
    value = np.array([1.0, -2.0, 0.5], np.float32)
    expected = value.copy()
    for _ in range(4):
        expected = expected * 2 + 1
    got_i, got_y = _run([i, y], {x: value})
    assert got_i == 4
    np.testing.assert_array_equal(got_y, expected)
    np.testing.assert_array_equal(value, [1.0, -2.0, 0.5])  # the feed is not mutated


def test_while_loop_data_dependent_trip_count():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [])
        n, y = mg.while_loop(lambda n, y: y > 1.0, lambda n, y: (n + 1, y / 2.0), [0, x])
    for start in (0.5, 3.0, 100.0):
        count, value = 0, np.float32(start)
        while value > 1.0:
            count, value = count + 1, value / np.float32(2)
        assert _run([n, y], {x: start}) == [count, value]


def test_while_loop_captures_outer_tensors_and_returns_structure():
    g = mg.Graph()
    with g.as_default():
        step = mg.placeholder(mg.int32, [])
        limit = mg.constant(10)
        single = mg.while_loop(lambda v: v < limit, lambda v: v + step, mg.constant(0))
        pair = mg.while_loop(lambda a, b: a < limit, lambda a, b: (a + step, b - step), (0, 0))
    got = _run([single, list(pair)], {step: 3})
    assert got[0] == 12 and got[1] == [12, -12]
    assert isinstance(pair, tuple)


def test_while_loop_one_variable_in_a_list_takes_a_bare_body_result():
    # tf.while_loop(c, lambda i: i + 1, [i]) runs in TensorFlow 2: the result stays a list.
    g = mg.Graph()
    with g.as_default():
        n = mg.placeholder(mg.int32, [])
        looped = mg.while_loop(lambda i: i < n, lambda i: i + 1, [mg.constant(0)])
    assert isinstance(looped, list) and len(looped) == 1
    assert _run(looped, {n: 5}) == [5]


def test_while_loop_shape_invariants_let_a_shape_grow():
    g = mg.Graph()
    with g.as_default():
        v = mg.placeholder(mg.float32, [None])
        grown = mg.while_loop(
            lambda v: mg.size(v) < 10, lambda v: mg.concat([v, v], 0), v, shape_invariants=[None]
        )
    assert grown.shape.dims == (None,)
    got = _run(grown, {v: [1.0, 2.0, 3.0]})
    np.testing.assert_array_equal(got, [1, 2, 3] * 4)


def test_while_loop_maximum_iterations():
    g = mg.Graph()
    with g.as_default():
        limit = mg.placeholder(mg.int32, [])
        fixed = mg.while_loop(lambda x: x < 1000.0, lambda x: x * 2.0, 1.0, maximum_iterations=3)
        fed = mg.while_loop(lambda x: x < 1000.0, lambda x: x * 2.0, 1.0, maximum_iterations=limit)
    assert _run(fixed) == 8.0
    assert _run(fed, {limit: 5}) == 32.0
    assert _run(fed, {limit: 50}) == 1024.0  # cond stops it first
    assert _run(fed, {limit: -1}) == 1.0  # TensorFlow 2: no iteration


def test_nested_loops_and_cond_inside_loop():
    g = mg.Graph()
    with g.as_default():
        n = mg.placeholder(mg.int32, [])

        def outer_body(i, total):
            inner = mg.while_loop(lambda j, s: j < i, lambda j, s: (j + 1, s + j), [0, 0])[1]
            odd = mg.cond(mg.equal(i % 2, 1), lambda: inner * 10, lambda: inner)
            return i + 1, total + odd

        _, total = mg.while_loop(lambda i, t: i < n, outer_body, [0, 0])
    expected = 0
    for i in range(6):
        inner = sum(range(i))
        expected += inner * 10 if i % 2 == 1 else inner
    assert _run(total, {n: 6}) == expected


def test_cond_runs_only_the_taken_branch():
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.bool, [])
        x = mg.placeholder(mg.float32, [2, 2])
        out = mg.cond(p, lambda: mg.matmul(x, x), lambda: mg.tanh(mg.reduce_sum(x)) + x)
    value = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    np.testing.assert_array_equal(_run(out, {p: True, x: value}), value @ value)
    np.testing.assert_allclose(_run(out, {p: False, x: value}), np.tanh(value.sum()) + value, 1e-6)


def test_cond_branch_shapes_relax_and_results_are_lists():
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.bool, [])
        a, b = mg.cond(p, lambda: [mg.zeros([2]), 1], lambda: [mg.ones([3]), 2])
    assert a.shape.dims == (None,)
    got = _run([a, b], {p: False})
    np.testing.assert_array_equal(got[0], [1, 1, 1])
    assert got[1] == 2


def test_a_pass_through_result_is_its_own_buffer():
    # The If returns its captured input unchanged; later in-place work on one must not
    # change the other.
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [4])
        y = x * 1.0
        same = mg.cond(mg.constant(True), lambda: y, lambda: y)
        out = [same + 1.0, y + 2.0]
    got = _run(out, {x: np.arange(4, dtype=np.float32)})
    np.testing.assert_array_equal(got[0], np.arange(4) + 1)
    np.testing.assert_array_equal(got[1], np.arange(4) + 2)


def test_switch_case_and_case():
    g = mg.Graph()
    with g.as_default():
        i = mg.placeholder(mg.int32, [])
        x = mg.placeholder(mg.float32, [])
        fns = [lambda: x + 1.0, lambda: x * 2.0, lambda: -x]
        picked = mg.switch_case(i, fns)
        with_default = mg.switch_case(i, fns[:2], default=lambda: x * 0.0)
        first_true = mg.case([(x < 0.0, lambda: x - 100.0), (x < 10.0, lambda: x + 100.0)])
        defaulted = mg.case([(x < 0.0, lambda: x - 100.0)], default=lambda: x * 3.0)
    for index, expected in [(0, 4.0), (1, 6.0), (2, -3.0), (7, -3.0), (-1, -3.0)]:
        assert _run(picked, {i: index, x: 3.0}) == expected
    assert _run(with_default, {i: 5, x: 3.0}) == 0.0
    assert _run(first_true, {x: -1.0}) == -101.0
    assert _run(first_true, {x: 5.0}) == 105.0
    assert _run(first_true, {x: 50.0}) == 150.0  # no default: the last pair's
    assert _run(defaulted, {x: 2.0}) == 6.0


def test_bodies_are_planned_once():
    g = mg.Graph()
    with g.as_default():
        n = mg.placeholder(mg.int32, [])
        out = mg.while_loop(lambda i: i < n, lambda i: i + 1, 0)
    sess = mg.Session(g)
    assert sess.run(out, {n: 5}) == 5
    body = g.library[out.node.attrs["body"].name]
    plans = dict(body._plans)
    assert sess.run(out, {n: 50}) == 50
    assert body._plans == plans  # nothing planned again
    # one plan, and the loop's split of it: None (i + 1 reads the loop variable)
    assert sorted(p is None for p in plans.values()) == [False, True]


def test_build_time_errors_name_the_loop():
    g = mg.Graph()
    with g.as_default():
        x = mg.constant([1.0, 2.0])
        with pytest.raises(mg.errors.InvalidArgumentError, match="after one iteration") as e:
            mg.while_loop(lambda v: mg.size(v) < 8, lambda v: mg.concat([v, v], 0), x, name="grow")
        assert e.value.node_name == "grow"
        with pytest.raises(mg.errors.InvalidArgumentError, match="enters the loop as float32"):
            mg.while_loop(lambda v: v[0] < 8.0, lambda v: mg.cast(v, mg.int32), x)
        with pytest.raises(mg.errors.InvalidArgumentError, match="returns 1 values for 2"):
            mg.while_loop(lambda a, b: a < 3.0, lambda a, b: [a], [1.0, 2.0])
        with pytest.raises(mg.errors.InvalidArgumentError, match="bool scalar"):
            mg.while_loop(lambda v: v, lambda v: v, x)
        with pytest.raises(mg.errors.InvalidArgumentError, match="must be >= 0"):
            mg.while_loop(lambda v: v < 3.0, lambda v: v, 1.0, maximum_iterations=-2)
        with pytest.raises(mg.errors.InvalidArgumentError, match="same number and dtypes"):
            mg.cond(mg.constant(True), lambda: x, lambda: mg.constant(1))
        with pytest.raises(TypeError, match="Python bool"):
            mg.cond(True, lambda: x, lambda: x)
        with pytest.raises(mg.errors.InvalidArgumentError, match="shape_invariants has 2"):
            mg.while_loop(lambda v: v < 3.0, lambda v: v, [1.0], shape_invariants=[[], []])


def test_the_cpp_style_classes_exist():
    assert mg.ops.While is not None and mg.ops.StatelessIf is not None
    assert mg.ops.PartitionedCall is not None and mg.ops.Case is not None


def test_to_dot_draws_each_body_once_as_a_cluster():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [], name="x")
        mg.while_loop(lambda v: v < 9.0, lambda v: v * 2.0, x, name="loop")
        mg.while_loop(lambda v: v < 9.0, lambda v: v * 3.0, x, name="again")
    dot = g.to_dot()
    for body in ("loop_cond", "loop_body", "again_cond", "again_body"):
        assert dot.count(f'subgraph "cluster_{body}"') == 1
        assert f'lhead="cluster_{body}"' in dot
    assert '"loop_body/Mul" [label="Mul\\nMul"];' in dot


def test_an_endless_loop_stops_on_ctrl_c_and_frees_what_it_made():
    import _thread
    import gc
    import threading
    import tracemalloc

    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [1 << 18])
        endless = mg.while_loop(lambda v: mg.constant(True), lambda v: v + 1.0, x)
    sess = mg.Session(g)
    value = np.zeros(1 << 18, np.float32)
    sess.run(x, {x: value})  # warm: pools exist
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            sess.run(endless, {x: value})
    finally:
        timer.cancel()
    gc.collect()
    leaked = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert leaked < value.nbytes  # no iteration's 1 MB value outlives the run
    np.testing.assert_array_equal(value, 0.0)  # the feed is untouched


def test_a_trace_names_the_steps_of_each_iteration():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [], name="x")
        mg.while_loop(
            lambda v: v < 9.0,
            lambda v: mg.cond(v > 3.0, lambda: v * 2.0, lambda: v + 3.0),
            x,
            name="loop",
        )
    out = g.get_tensor_by_name("loop:0")
    meta = mg.RunMetadata()
    assert (
        mg.Session(g).run(out, {x: 1.0}, options=mg.RunOptions(trace=True), run_metadata=meta)
        == 16.0
    )
    names = [t[0] for t in meta.step_timings]
    # 1 -> 4 (else) -> 8 (then) -> 16 (then): three iterations, four predicates
    assert "loop/cond/3/Less" in names and "loop/cond/4/Less" not in names
    assert "loop/body/0/cond/else/AddV2" in names
    assert "loop/body/2/cond/then/Mul" in names
    starts = [t[3] for t in meta.step_timings]
    assert all(s >= 0 for s in starts)
    assert names[-1] == "loop"  # the loop's own step ends after its bodies' steps


def test_a_body_constant_returned_is_never_written_by_the_caller():
    # The outer Mul may write into its input in place: the cond's result must be its own,
    # not the branch's constant (kept from run to run, on the GPU too).
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.bool, [])
        x = mg.placeholder(mg.float32, [4])
        picked = mg.cond(p, lambda: mg.constant([1.0, 2.0, 3.0, 4.0]), lambda: mg.identity(x))
        looped = mg.while_loop(lambda v: mg.reduce_sum(v) < 0.0, lambda v: v, picked)
        y = looped * 2.0
    sess = mg.Session(g)
    for _ in range(3):
        np.testing.assert_array_equal(sess.run(y, {p: True, x: np.zeros(4)}), [2, 4, 6, 8])


def test_a_body_passing_its_argument_through_keeps_the_callers_value():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [3])
        doubled = x * 1.0
        same = mg.while_loop(lambda v: mg.reduce_sum(v) > 100.0, lambda v: mg.identity(v), doubled)
        out = [same + 1.0, doubled + 2.0]
    got = mg.Session(g).run(out, {x: np.arange(3, dtype=np.float32)})
    np.testing.assert_array_equal(got[0], [1, 2, 3])
    np.testing.assert_array_equal(got[1], [2, 3, 4])
