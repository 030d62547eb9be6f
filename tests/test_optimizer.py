"""The plan optimizer: each pass gives the unoptimized plan's results and errors, and
never removes or replaces a fetched or fed value."""

import warnings

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors
from minigraph.devices import parse_device
from minigraph.optimizer import OptimizerOptions
from minigraph.plan import build_plan

pytestmark = pytest.mark.usefixtures("any_device")

OFF = OptimizerOptions.off()
NO_OPT = mg.ConfigProto(graph_options=mg.GraphOptions(optimizer_options=OFF))
# The other passes are seen step by step, before fusion merges what they leave (its own
# tests are in test_fusion.py).
UNFUSED = OptimizerOptions(do_elementwise_fusion=False)


def plan_for(fetches, feeds=(), options=UNFUSED, device=None):
    return build_plan(list(fetches), [], list(feeds), parse_device(device), True, None, options)


def op_types(plan):
    return [s.op_type for s in plan.steps]


def run_both(g, fetches, feed_dict=None):
    """The fetched values with the default optimizer and with every pass off."""
    on = mg.Session(g).run(fetches, feed_dict)
    off = mg.Session(g, config=NO_OPT).run(fetches, feed_dict)
    return on, off


def assert_same(a, b):
    for x, y in zip(a, b, strict=True):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)  # bitwise, NaNs included


def test_identity_chains_are_removed_but_fetched_identities_stay():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[3], name="x")
        a = mg.identity(mg.identity(x)) * 2.0
        b = mg.identity(a, name="out")
    plan = plan_for([b], [x])
    assert op_types(plan).count("Identity") == 1  # the fetched one
    assert any(line.startswith("remove_identity: 2 steps") for line in plan.optimizations)
    assert op_types(plan_for([b], [x], OFF)).count("Identity") == 3
    on, off = run_both(g, [b], {x: np.array([1, 2, 3], np.float32)})
    assert_same(on, off)
    np.testing.assert_array_equal(on[0], [2, 4, 6])


def test_identity_n_is_removed_unless_fetched():
    """IdentityN's outputs are its inputs (Keras' swish writes one around its custom
    gradient); one that is fetched stays, and the readers' in-place writes never reach a
    value that something else still reads."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[3], name="x")
        y = x * 2.0
        a, b = mg.identity_n([y, x])
        out = (a + 1.0) * b, (b - 1.0) * a  # each output read twice, in place where it may
        kept = mg.identity_n([y, x], name="kept")
    plan = plan_for(list(out), [x])
    assert "IdentityN" not in op_types(plan)
    assert any(line.startswith("remove_identity: 1 steps") for line in plan.optimizations)
    assert op_types(plan_for([kept[0]], [x])).count("IdentityN") == 1
    v = np.array([1, -2, 3], np.float32)
    on, off = run_both(g, [*out, *kept], {x: v})
    assert_same(on, off)
    np.testing.assert_array_equal(on[0], (v * 2 + 1) * v)
    np.testing.assert_array_equal(on[1], (v - 1) * v * 2)
    np.testing.assert_array_equal(on[3], v)


def test_common_subexpressions_run_once():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None], name="x")
        y = (x * 3.0 + 1.0) - (x * 3.0 + 1.0) * 0.5
    plan = plan_for([y], [x])
    assert op_types(plan).count("Mul") == 2  # x*3 once, then *0.5
    assert op_types(plan).count("AddV2") + op_types(plan).count("Add") == 1
    assert op_types(plan_for([y], [x], OFF)).count("Mul") == 3
    on, off = run_both(g, [y], {x: np.array([1.0, -2.0, np.nan], np.float32)})
    assert_same(on, off)


def test_constant_subgraphs_fold_into_constants():
    g = mg.Graph()
    with g.as_default():
        w = mg.transpose(mg.constant(np.arange(6, dtype=np.float32).reshape(2, 3))) * 2.0
        x = mg.placeholder(mg.float32, shape=[3, 2], name="x")
        y = x + w
    plan = plan_for([y], [x])
    assert "Transpose" not in op_types(plan) and "Mul" not in op_types(plan)
    assert any(line.startswith("constant_folding: 2 steps") for line in plan.optimizations)
    feed = {x: np.ones((3, 2), np.float32)}
    on, off = run_both(g, [y], feed)
    assert_same(on, off)
    np.testing.assert_array_equal(on[0], 1 + 2 * np.arange(6, dtype=np.float32).reshape(2, 3).T)


def test_folding_respects_its_size_cap():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[64, 64], name="x")
        y = mg.fill([64, 64], 1.5) * 2.0 + x  # the product: 16 KB of float32
    small = OptimizerOptions(max_folded_constant_in_bytes=1024, do_elementwise_fusion=False)
    assert "Mul" in op_types(plan_for([y], [x], options=small))
    assert "Mul" not in op_types(plan_for([y], [x]))


def test_a_fetched_value_is_never_folded_away():
    g = mg.Graph()
    with g.as_default():
        y = mg.constant(np.float32(2.0)) * 3.0
    assert op_types(plan_for([y])) == ["Const", "Const", "Mul"]
    assert mg.Session(g).run(y) == 6.0


def test_folding_gives_ieee_results_without_warnings():
    """Kernels leave NumPy's warnings to the runtime: the fold itself turns them off, so a
    caller who makes warnings errors still gets 0/0 and inf - inf folded, as a run gives."""
    g = mg.Graph()
    with g.as_default():
        c = mg.constant(np.array([0.0, np.inf], np.float32))
        x = mg.placeholder(mg.float32, shape=[2], name="x")
        y = mg.divide(c - c, c) + x  # [0/0, (inf-inf)/inf]: NaN, NaN
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plan = plan_for([y], [x])
        assert "RealDiv" not in op_types(plan) and "Sub" not in op_types(plan)
        on, off = run_both(g, [y], {x: np.zeros(2, np.float32)})
    assert_same(on, off)
    assert np.isnan(on[0]).all()


def test_a_failing_constant_step_still_fails_at_run_time():
    g = mg.Graph()
    with g.as_default():
        bad = mg.gather(np.array([1.0, 2.0], np.float32), [5]) + 1.0
    for options in (None, OFF):
        with pytest.raises(errors.InvalidArgumentError, match=r"indices\[0\] = 5") as e:
            mg.Session(g, config=None if options is None else NO_OPT).run(bad)
        assert e.value.node_name.startswith("GatherV2")


def test_fed_values_are_never_replaced():
    g = mg.Graph()
    with g.as_default():
        c = mg.constant(np.float32(1.0)) + 1.0  # foldable, but fed below
        y = c * 10.0
    assert mg.Session(g).run(y, {c: np.float32(5.0)}) == 50.0
    assert mg.Session(g).run(y) == 20.0


def test_optimizations_are_listed_in_the_trace(any_device):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[2], name="x")
        y = mg.identity(x) * (mg.constant(np.float32(2.0)) + 1.0) + 0.5
    meta = mg.RunMetadata()
    out = mg.Session(g).run(
        y, {x: [1.0, 2.0]}, options=mg.RunOptions(trace=True), run_metadata=meta
    )
    np.testing.assert_array_equal(out, [3.5, 6.5])
    passes = {line.split(":")[0] for line in meta.optimizations}
    # A GPU's constant steps are not folded: its float results may differ from the CPU's.
    # The Mul and the last Add fuse; the scalar Add does not join them (the Mul's result
    # is larger than its running value).
    expected = {
        "cpu": {"remove_identity", "constant_folding", "elementwise_fusion"},
        "gpu": {"remove_identity", "elementwise_fusion"},
        "unoptimized": set(),
    }
    assert passes == expected[any_device]


@pytest.mark.parametrize(
    "make, error",
    [
        (lambda: OptimizerOptions(do_constant_folding=1), TypeError),
        (lambda: OptimizerOptions(max_folded_constant_in_bytes=-1), ValueError),
        (lambda: OptimizerOptions(max_folded_constant_in_bytes=1.5), ValueError),
        (lambda: mg.GraphOptions(optimizer_options={"do_constant_folding": False}), TypeError),
        (lambda: mg.ConfigProto(graph_options=OFF), TypeError),
        (lambda: mg.ConfigProto(inter_op_parallelism_threads=-1), ValueError),
        (lambda: mg.ConfigProto(intra_op_parallelism_threads=True), ValueError),
        (lambda: mg.ConfigProto(allow_soft_placement="yes"), TypeError),
        (lambda: mg.Session(mg.Graph(), config={"inter_op_parallelism_threads": 2}), TypeError),
    ],
)
def test_options_of_the_wrong_kind_are_refused(make, error):
    with pytest.raises(error):
        make()


def _seed_idiom(parts=3):
    """The seed composition: data and range(n) partitioned alike, then stitched back."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None, 2], name="x")
        p = mg.placeholder(mg.int32, shape=[None], name="p")
        data = mg.dynamic_partition(x, p, parts)
        pos = mg.dynamic_partition(mg.range(mg.shape(x)[0]), p, parts)
    return g, x, p, data, pos


def _stitch_reference(indices, data):
    """DynamicStitch by its definition: lists in order, each row written in turn."""
    n = max((int(i.max()) + 1 for i in indices if i.size), default=0)
    out = np.zeros((n, *data[0].shape[indices[0].ndim :]), data[0].dtype)
    for i, d in zip(indices, data):
        for j, row in zip(i.reshape(-1).tolist(), d.reshape(-1, *out.shape[1:])):
            out[j] = row
    return out


def test_a_stitch_of_a_partitioned_range_is_told_its_indices_are_distinct(any_device, monkeypatch):
    from minigraph.ops import data_flow_ops

    g, x, p, data, pos = _seed_idiom()
    with g.as_default():
        y = mg.dynamic_stitch(pos, [d * 2.0 for d in data])
    plan = plan_for([y], [x, p])
    assert any(line.startswith("input_facts: 1 steps") for line in plan.optimizations)
    feed = {x: np.arange(14, dtype=np.float32).reshape(7, 2), p: [2, 0, 1, 0, 2, 1, 1]}
    expected = np.arange(14, dtype=np.float32).reshape(7, 2) * 2
    on, off = run_both(g, [y], feed)
    assert_same(on, off)
    np.testing.assert_array_equal(on[0], expected)

    def no_check(*args, **kwargs):
        raise AssertionError("the repeat check ran")

    # The host looks for repeats with one scatter of marks, a GPU with a table of positions.
    check = "positions" if any_device == "gpu" else "_stitch_distinct"
    monkeypatch.setattr(data_flow_ops, check, no_check)
    told = mg.ConfigProto(graph_options=mg.GraphOptions(optimizer_options=OptimizerOptions()))
    np.testing.assert_array_equal(mg.Session(g, config=told).run(y, feed), expected)
    with pytest.raises(errors.InternalError, match="repeat check"):
        mg.Session(g, config=NO_OPT).run(y, feed)


def test_a_stitch_of_a_reshaped_partitioned_range_is_told_too():
    # DynamicPartition's gradient stitches the partitions of range(size) reshaped to the
    # partitions' shape.
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[2, 3], name="x")
        p = mg.placeholder(mg.int32, shape=[2, 3], name="p")
        data = mg.dynamic_partition(x, p, 2)
        pos = mg.dynamic_partition(mg.reshape(mg.range(mg.size(p)), mg.shape(p)), p, 2)
        y = mg.parallel_dynamic_stitch(pos, [d + 1.0 for d in data])
    plan = plan_for([y], [x, p])
    assert any(line.startswith("input_facts: 1 steps") for line in plan.optimizations)
    feed = {x: np.arange(6, dtype=np.float32).reshape(2, 3), p: [[1, 0, 1], [0, 0, 1]]}
    on, off = run_both(g, [y], feed)
    assert_same(on, off)
    np.testing.assert_array_equal(on[0], np.arange(6, dtype=np.float32) + 1)


@pytest.mark.parametrize("case", ["one part twice", "not a range", "two partitions"])
def test_a_stitch_whose_indices_may_repeat_is_told_nothing(case):
    g, x, p, data, pos = _seed_idiom()
    with g.as_default():
        if case == "one part twice":
            indices, values = [pos[0], pos[1], pos[0]], [data[0], data[1], data[0] + 1.0]
        elif case == "not a range":
            same = mg.dynamic_partition(mg.zeros_like(mg.range(mg.shape(x)[0])), p, 3)
            indices, values = same, data
        else:
            other = mg.dynamic_partition(mg.range(mg.shape(x)[0]), 2 - p, 3)
            indices, values = [pos[0], other[0]], [data[0], data[2] + 1.0]
        y = mg.dynamic_stitch(indices, values)
    assert not any(line.startswith("input_facts") for line in plan_for([y], [x, p]).optimizations)
    feed = {x: np.arange(14, dtype=np.float32).reshape(7, 2), p: [2, 0, 1, 0, 2, 1, 1]}
    on, off = run_both(g, [y], feed)
    assert_same(on, off)
    got_indices, got_values = mg.Session(g, config=NO_OPT).run([indices, values], feed)
    np.testing.assert_array_equal(on[0], _stitch_reference(got_indices, got_values))


def test_a_fed_part_of_a_partitioned_range_is_not_trusted():
    # A feed may repeat indices: the stitch must look for repeats in it.
    g, x, p, data, pos = _seed_idiom(parts=2)
    with g.as_default():
        y = mg.dynamic_stitch(pos, data)
    feed = {
        x: np.arange(8, dtype=np.float32).reshape(4, 2),
        p: [0, 1, 1, 0],
        pos[0]: np.array([1, 1], np.int32),
    }
    on, off = run_both(g, [y], feed)
    assert_same(on, off)
    fed_parts = mg.Session(g).run(data, feed)
    np.testing.assert_array_equal(
        on[0], _stitch_reference([np.array([1, 1]), np.array([1, 2])], fed_parts)
    )
