"""Shared-input merging (minigraph.sharing): DynamicPartitions by one partitions tensor run
as one step with one sort, with bitwise the separate steps' results and errors."""

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors
from minigraph.optimizer import OptimizerOptions

UNMERGED = mg.ConfigProto(
    graph_options=mg.GraphOptions(optimizer_options=OptimizerOptions(do_shared_input_merging=False))
)
N = 70_000  # past two blocks of the sorted path's 32K rows
PARTS = 8  # the sorted path: more than 5 parts


def traced(session, fetches, feeds):
    meta = mg.RunMetadata()
    out = session.run(fetches, feeds, options=mg.RunOptions(trace=True), run_metadata=meta)
    return out, meta.optimizations


def merged_steps(optimizations):
    return sum(
        int(line.split(":")[1].split()[0])
        for line in optimizations
        if line.startswith("shared_input_merging")
    )


def random_inputs(seed, rows=(), dtype=np.float32):
    """Data of N rows and partition ids into PARTS parts, with their placeholders."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((N, *rows)) * 100).astype(dtype)
    p = rng.integers(0, PARTS, N).astype(np.int32)
    px = mg.placeholder(mg.as_dtype(x.dtype), shape=x.shape)
    return x, p, px, mg.placeholder(mg.int32, shape=[N])


def assert_partitioned_then_stitched(out, x, p):
    """``out``: PARTS partitions of x, anything, then x stitched back (masks keep order)."""
    for k in range(PARTS):
        np.testing.assert_array_equal(out[k], x[p == k])
    np.testing.assert_array_equal(out[-1], x)


def seed_idiom(x, p, parts=PARTS):
    """The documented idiom: partition the data and its positions alike, stitch them back."""
    data = mg.dynamic_partition(x, p, parts)
    positions = mg.dynamic_partition(mg.range(mg.shape(x)[0]), p, parts)
    return data, positions, mg.dynamic_stitch(positions, data)


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32, np.int64, np.complex64])
def test_the_seed_idiom_sorts_once_and_gives_the_separate_bits(dtype):
    with mg.Graph().as_default():
        x, p, px, pp = random_inputs(1, dtype=dtype)
        data, positions, y = seed_idiom(px, pp)
        fetches = [*data, *positions, y]
        (on, optimizations) = traced(mg.Session(), fetches, {px: x, pp: p})
        off = mg.Session(config=UNMERGED).run(fetches, {px: x, pp: p})
    assert merged_steps(optimizations) == 1
    for a, b in zip(on, off, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    assert_partitioned_then_stitched(on, x, p)
    for k in range(PARTS):
        np.testing.assert_array_equal(on[PARTS + k], np.flatnonzero(p == k))


@pytest.mark.parametrize("rows", [(2,), (3, 4)], ids=["8B", "48B"])
def test_rows_the_kernel_would_not_sort_run_separately_with_the_same_results(rows):
    with mg.Graph().as_default():
        x, p, px, pp = random_inputs(2, rows)
        data, positions, y = seed_idiom(px, pp)
        out = mg.Session().run([*data, y], {px: x, pp: p})
    assert_partitioned_then_stitched(out, x, p)


def test_only_partitions_by_the_same_ids_and_count_merge():
    with mg.Graph().as_default():
        x, p, px, pp = random_inputs(3)
        a = mg.dynamic_partition(px, pp, PARTS)
        b = mg.dynamic_partition(px * 2.0, pp, PARTS + 1)  # another count
        c = mg.dynamic_partition(px, mg.reverse(pp, [0]), PARTS)  # other ids
        out, optimizations = traced(mg.Session(), [*a, *b, *c], {px: x, pp: p})
    assert merged_steps(optimizations) == 0
    np.testing.assert_array_equal(out[PARTS + 1], 2 * x[p == 1])


def test_a_partition_of_a_partitions_result_is_not_merged_with_it():
    # Stitched back and partitioned again by the same ids: the second depends on the first.
    with mg.Graph().as_default():
        x, p, px, pp = random_inputs(4)
        data, positions, y = seed_idiom(px, pp)
        doubled = [d * 2.0 for d in data]  # read between the merged steps, moved after them
        again = mg.dynamic_partition(mg.dynamic_stitch(positions, doubled), pp, PARTS)
        out, optimizations = traced(mg.Session(), [*again, y], {px: x, pp: p})
    assert merged_steps(optimizations) == 1  # data with positions; not `again`
    for k in range(PARTS):
        np.testing.assert_array_equal(out[k], 2 * x[p == k])
    np.testing.assert_array_equal(out[-1], x)


@pytest.mark.parametrize("merge", [True, False])
def test_errors_name_the_node_the_separate_steps_name(merge):
    config = None if merge else UNMERGED
    with mg.Graph().as_default():
        px = mg.placeholder(mg.float32, shape=[None])
        pp = mg.placeholder(mg.int32, shape=[None])
        a = mg.dynamic_partition(px, pp, PARTS, name="first")
        b = mg.dynamic_partition(mg.range(mg.shape(pp)[0]), pp, PARTS, name="second")
        s = mg.Session(config=config)
        p = np.zeros(N, np.int32)
        with pytest.raises(errors.InvalidArgumentError, match="data.shape must start") as e:
            s.run([*a, *b], {px: np.zeros(N - 1, np.float32), pp: p})
        assert e.value.node_name == "first"
        p[7] = PARTS
        with pytest.raises(errors.InvalidArgumentError, match="partitions") as e:
            s.run([*a, *b], {px: np.zeros(N, np.float32), pp: p})
        assert e.value.node_name == "first"


def test_merging_runs_on_the_simulated_gpu_too(monkeypatch):
    monkeypatch.setattr(mg.config, "simulated_gpu", lambda: True)
    with mg.Graph().as_default():
        x, p, px, pp = random_inputs(5)
        with mg.device("/gpu:0"):
            data, positions, y = seed_idiom(px, pp)
        out = mg.Session().run([*data, y], {px: x, pp: p})
    assert_partitioned_then_stitched(out, x, p)


def test_the_pass_is_switchable():
    with pytest.raises(TypeError, match="do_shared_input_merging must be a bool"):
        OptimizerOptions(do_shared_input_merging=1)
    assert not OptimizerOptions.off().do_shared_input_merging
