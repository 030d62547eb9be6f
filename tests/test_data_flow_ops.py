"""DynamicStitch, ParallelDynamicStitch and DynamicPartition.

Expected values come from the seed doc (002), from semantics.md (TensorFlow 2.21's
tests and runs, §3, §4, §9, §10) or from small references written here: a plain
Python loop for stitch, boolean masks for partition.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigraph as mg
from minigraph import errors, kernel, ops
from minigraph.ops import common, data_flow_ops, partition_ops

pytestmark = pytest.mark.usefixtures("any_device")  # CPU and (simulated) GPU

STITCHES = [mg.dynamic_stitch, mg.parallel_dynamic_stitch]
STITCH_IDS = ["DynamicStitch", "ParallelDynamicStitch"]

DTYPES = [d.as_numpy_dtype for d in mg.dtypes.ALL_TYPES]  # every dtype, bool included


def run(build: Any, *arrays: np.ndarray, shapes: Any = None) -> Any:
    """Build ``build(*placeholders)`` on a new graph and run it on ``arrays``.

    The placeholders have the arrays' shapes (or ``shapes``, None for unknown rank),
    so nothing is known as a constant at build time.
    """
    g = mg.Graph()
    shapes = shapes or [a.shape for a in arrays]
    with g.as_default():
        phs = [
            mg.placeholder(mg.as_dtype(a.dtype), shape=s, name=f"p{k}")
            for k, (a, s) in enumerate(zip(arrays, shapes))
        ]
        out = build(*phs)
    return mg.Session(g).run(out, dict(zip(phs, arrays)))


def run_lists(build: Any, indices: list, data: list, known_shapes: bool = True) -> Any:
    """``build(index placeholders, data placeholders)``, fed ``indices`` and ``data``."""
    idx = [np.asarray(i, np.int32) for i in indices]
    dat = [np.asarray(d) for d in data]
    shapes = [a.shape if known_shapes else None for a in idx + dat]
    n = len(idx)
    return run(lambda *p: build(list(p[:n]), list(p[n:])), *idx, *dat, shapes=shapes)


def build_now(build: Any) -> Any:
    """Run ``build()`` on a new default graph; returns (graph, result)."""
    g = mg.Graph()
    with g.as_default():
        return g, build()


def check_error(exc: pytest.ExceptionInfo, kind: type, text: str, node: str) -> None:
    assert exc.type is kind, exc.value
    assert text in str(exc.value), str(exc.value)
    assert exc.value.node_name == node
    assert f"'{node}'" in str(exc.value)


def stitch_reference(indices: list, data: list) -> np.ndarray:
    """A plain loop over every (m, i), in order: later writes win, gaps stay zero."""
    idx = [np.asarray(i).reshape(-1) for i in indices]
    extra = np.asarray(data[0]).shape[np.asarray(indices[0]).ndim :]
    rows = [np.asarray(d).reshape((len(i), *extra)) for i, d in zip(idx, data)]
    first = 1 + max([int(v) for i in idx for v in i], default=-1)
    out = np.zeros((first, *extra), np.asarray(data[0]).dtype)
    for i, r in zip(idx, rows):
        for k in range(len(i)):
            out[int(i[k])] = r[k]
    return out


def partition_reference(data: np.ndarray, partitions: np.ndarray, n: int) -> list[np.ndarray]:
    """Boolean masks: ``data[partitions == k]`` keeps row-major order."""
    return [data[partitions == k] for k in range(n)]


def assert_same(actual: np.ndarray, expected: np.ndarray) -> None:
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_array_equal(actual, expected)


# -- Seed doc 002 and semantics.md §10 ---------------------------------------------

SEED_INDICES = [6, [4, 1], [[5, 2], [0, 3]]]
SEED_DATA = [[61, 62], [[41, 42], [11, 12]], [[[51, 52], [21, 22]], [[1, 2], [31, 32]]]]
SEED_MERGED = np.array(
    [[1, 2], [11, 12], [21, 22], [31, 32], [41, 42], [51, 52], [61, 62]], np.int32
)
SEED_X = [0.1, -1.0, 5.2, 4.3, -1.0, 7.4]
SEED_RESULT = [
    1.100000023841858,
    -1.0,
    6.199999809265137,
    5.300000190734863,
    -1.0,
    8.399999618530273,
]


@pytest.mark.parametrize("stitch", STITCHES, ids=STITCH_IDS)
def test_seed_stitch_example_with_builders(stitch):
    g, y = build_now(lambda: stitch(SEED_INDICES, SEED_DATA))
    assert y.shape == mg.TensorShape([7, 2])
    assert y.dtype == mg.int32
    assert_same(mg.Session(g).run(y), SEED_MERGED)


@pytest.mark.parametrize("stitch", STITCHES, ids=STITCH_IDS)
def test_seed_stitch_example_with_placeholders(stitch):
    out = run_lists(stitch, SEED_INDICES, [np.array(d, np.int32) for d in SEED_DATA], False)
    assert_same(out, SEED_MERGED)


@pytest.mark.parametrize("cls", [ops.DynamicStitch, ops.ParallelDynamicStitch], ids=STITCH_IDS)
def test_seed_stitch_example_with_classes(cls):
    root = mg.Scope.new_root_scope()
    indices = [ops.Const(root, v) for v in SEED_INDICES]
    data = [ops.Const(root, v) for v in SEED_DATA]
    st_ = cls(root.with_op_name("merged"), indices, data)
    assert st_.operation.name == "merged"
    assert st_.node().type_string == cls.__name__
    assert st_.merged.shape == mg.TensorShape([7, 2])
    (out,) = mg.ClientSession(root).run([st_.merged])
    assert_same(out, SEED_MERGED)
    # A one-output wrapper stands for its Output.
    (again,) = mg.ClientSession(root).run([ops.Identity(root, st_).output])
    assert_same(again, SEED_MERGED)


def test_seed_composition_with_builders():
    g = mg.Graph()
    with g.as_default():
        x = mg.constant(SEED_X)
        condition_mask = mg.not_equal(x, mg.constant(-1.0))
        partitioned_data = mg.dynamic_partition(x, mg.cast(condition_mask, mg.int32), 2)
        partitioned_data[1] = partitioned_data[1] + 1.0
        condition_indices = mg.dynamic_partition(
            mg.range(mg.shape(x)[0]), mg.cast(condition_mask, mg.int32), 2
        )
        y = mg.dynamic_stitch(condition_indices, partitioned_data)
    parts, positions, out = mg.Session(g).run([partitioned_data, condition_indices, y])
    assert_same(parts[0], np.array([-1, -1], np.float32))
    assert_same(positions[0], np.array([1, 4], np.int32))
    assert_same(positions[1], np.array([0, 2, 3, 5], np.int32))
    assert_same(out, np.array(SEED_RESULT, np.float32))
    assert out.tolist() == SEED_RESULT


@pytest.mark.parametrize("constant_length", [False, True])
def test_seed_composition_with_classes(constant_length):
    root = mg.Scope.new_root_scope()
    x = ops.Const(root, SEED_X)
    mask = ops.Cast(root, ops.NotEqual(root, x, ops.Const(root, -1.0)), mg.int32)
    partitioned = ops.DynamicPartition(root, x, mask, 2)
    incremented = ops.Add(root, partitioned.outputs[1], ops.Const(root, 1.0))
    if constant_length:
        n: Any = ops.Const(root, len(SEED_X))
    else:
        n = ops.StridedSlice(root, ops.Shape(root, x), [0], [1], [1], shrink_axis_mask=1)
    positions = ops.DynamicPartition(root, ops.Range(root, 0, n, 1), mask, 2)
    merged = ops.DynamicStitch(
        root.with_op_name("merged"), positions.outputs, [partitioned.outputs[0], incremented]
    )
    (out,) = mg.ClientSession(root).run([merged.merged])
    assert_same(out, np.array(SEED_RESULT, np.float32))


# -- DynamicStitch: semantics.md §3 and §9 ----------------------------------------


STITCH_CASES = [
    # (indices, data, expected) -- TensorFlow's kernel tests and runs
    ([0, 1], [40, 60], [40, 60]),
    ([1, 0], [40, 60], [60, 40]),
    (
        [[0, 4, 7], [1, 6, 2, 3, 5]],
        [[0, 40, 70], [10, 60, 20, 30, 50]],
        [0, 10, 20, 30, 40, 50, 60, 70],
    ),
    (
        [[1, 6, 2, 3, 5, 0, 4, 7]],
        [[10, 60, 20, 30, 50, 0, 40, 70]],
        [0, 10, 20, 30, 40, 50, 60, 70],
    ),
    (
        [[0, 4, 7], [1, 6], [2, 3, 5]],
        [[[0, 1], [40, 41], [70, 71]], [[10, 11], [60, 61]], [[20, 21], [30, 31], [50, 51]]],
        [[10 * k, 10 * k + 1] for k in range(8)],
    ),
    (
        [[0, 4, 7], [1, 6], [2, 3, 5], []],
        [
            [[0, 1], [40, 41], [70, 71]],
            [[10, 11], [60, 61]],
            [[20, 21], [30, 31], [50, 51]],
            np.zeros((0, 2), np.int32),
        ],
        [[10 * k, 10 * k + 1] for k in range(8)],
    ),
    # Gaps are zero; duplicates: the later (m, i) wins.
    ([[0, 4]], [[1.5, 2.5]], [1.5, 0, 0, 0, 2.5]),
    ([[0, 1, 0]], [[1, 2, 3]], [3, 2]),
    ([[0, 1], [0]], [[1, 2], [9]], [9, 2]),
    ([[0, 1], [0, 1], [1]], [[1, 2], [3, 4], [5]], [3, 5]),
    ([[[0, 0], [0, 0]]], [[[1, 2], [3, 4]]], [4]),
]


@pytest.mark.parametrize("stitch", STITCHES, ids=STITCH_IDS)
@pytest.mark.parametrize("indices, data, expected", STITCH_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128, np.uint8])
def test_stitch_cases(stitch, indices, data, expected, dtype):
    data = [np.asarray(d).astype(dtype) for d in data]
    expected = np.asarray(expected).astype(dtype)
    assert_same(run_lists(stitch, indices, data), expected)
    assert_same(run_lists(stitch, indices, data, known_shapes=False), expected)
    g, y = build_now(lambda: stitch([np.asarray(i, np.int32) for i in indices], data))
    assert y.shape == mg.TensorShape(expected.shape)
    assert_same(mg.Session(g).run(y), expected)


@pytest.mark.parametrize("stitch", STITCHES, ids=STITCH_IDS)
def test_stitch_higher_rank_is_the_doc_example(stitch):
    expected = 10 * np.arange(7, dtype=np.int32)[:, None] + np.array([1, 2], np.int32)
    expected[0] = [1, 2]
    assert_same(SEED_MERGED, expected)
    data = [np.asarray(d, np.float64) for d in SEED_DATA]
    assert_same(run_lists(stitch, SEED_INDICES, data, False), expected.astype(np.float64))


@pytest.mark.parametrize("stitch", STITCHES, ids=STITCH_IDS)
@pytest.mark.parametrize(
    "indices, data, shape",
    [
        ([[]], [np.zeros((0, 2), np.float32)], (0, 2)),
        ([[], []], [np.zeros((0, 2), np.float32), np.zeros((0, 2), np.float32)], (0, 2)),
        ([[0, 1]], [np.zeros((2, 0), np.float32)], (2, 0)),
        ([[1, 0], [3]], [np.zeros((2, 0, 4), np.float32), np.zeros((1, 0, 4))], (4, 0, 4)),
        ([[[]]], [np.zeros((1, 0, 3), np.float32)], (0, 3)),
    ],
)
def test_stitch_empty_inputs(stitch, indices, data, shape):
    data = [d.astype(np.float32) for d in data]
    out = run_lists(stitch, indices, data, False)
    assert_same(out, np.zeros(shape, np.float32))
    g, y = build_now(lambda: stitch([np.asarray(i, np.int32) for i in indices], data))
    assert y.shape == mg.TensorShape(shape)


@pytest.mark.parametrize("stitch", STITCHES, ids=STITCH_IDS)
@pytest.mark.parametrize(
    "dtype, zero", [(np.bool_, False), (np.complex64, 0j), (np.float16, 0.0), (np.int8, 0)]
)
def test_stitch_gaps_are_zero(stitch, dtype, zero):
    ones = np.ones(3, dtype)
    out = run_lists(stitch, [[0, 4], [6]], [ones[:2], ones[:1]])
    expected = np.array([1, zero, zero, zero, 1, zero, 1]).astype(dtype)
    assert_same(out, expected)
    # Rows wider than a word take the gather path; gaps there are zero rows.
    wide = np.ones((3, 5), dtype)
    out = run_lists(stitch, [[0, 4], [6]], [wide[:2], wide[:1]])
    assert_same(out, expected[:, None] * np.ones(5, dtype))


def test_stitch_large_gap_is_all_zeros():
    out = run_lists(mg.dynamic_stitch, [[0], [100_002]], [[7.0], [8.0]])
    assert out.shape == (100_003,)
    assert out[0] == 7 and out[-1] == 8 and not out[1:-1].any()


@pytest.mark.parametrize("stitch", STITCHES, ids=STITCH_IDS)
@pytest.mark.parametrize("row", [(), (2,), (3,), (2, 4)])
def test_stitch_many_duplicates_later_wins(stitch, row):
    rng = np.random.default_rng(7)
    indices = [rng.integers(0, 50, size=n).astype(np.int32) for n in (3000, 1, 0, 2000)]
    data = [rng.random((len(i), *row)).astype(np.float32) for i in indices]
    expected = stitch_reference(indices, data)
    # The reference is an independent loop; check that it really is "last wins".
    last = {int(v): (m, k) for m, i in enumerate(indices) for k, v in enumerate(i)}
    for v, (m, k) in last.items():
        np.testing.assert_array_equal(expected[v], data[m][k])
    for _ in range(3):  # deterministic from run to run
        assert_same(run_lists(stitch, indices, data), expected)


def test_stitch_reverse_order_duplicates():
    # Every index written twice, the second time in reverse order: NumPy's own
    # winner would not matter, the later list must win everywhere.
    n = 10_000
    idx = np.arange(n, dtype=np.int32)
    out = run_lists(
        mg.parallel_dynamic_stitch,
        [idx, idx[::-1].copy()],
        [np.zeros(n, np.int64), np.arange(n, dtype=np.int64)[::-1].copy()],
    )
    assert_same(out, np.arange(n, dtype=np.int64))


@pytest.mark.parametrize("stitch", STITCHES, ids=STITCH_IDS)
@pytest.mark.parametrize("row", [(3,), (5,), (2, 4)], ids=["12B", "20B", "32B"])
@pytest.mark.parametrize("kind", ["permutation", "gaps", "duplicates"])
def test_stitch_rows_that_are_not_words(stitch, row, kind):
    # Rows of 12, 20 and 32 bytes move as one opaque item each on the CPU.
    rng = np.random.default_rng(11)
    n = 500
    positions = rng.permutation(n if kind != "gaps" else 3 * n)[:n]
    if kind == "duplicates":
        positions[::7] = positions[1::7][: len(positions[::7])]
    indices = np.array_split(positions.astype(np.int32), 3)
    data = [rng.random((len(i), *row)).astype(np.float32) for i in indices]
    assert_same(run_lists(stitch, indices, data), stitch_reference(indices, data))


@pytest.mark.parametrize("chunk", [1, 3, 64, 1 << 16])
@pytest.mark.parametrize("kind", ["permutation", "gaps", "duplicates"])
@pytest.mark.parametrize("row", [(), (3,)], ids=["word", "12B"])
def test_stitch_index_chunks(monkeypatch, chunk, kind, row):
    # Indices are cast to intp a chunk at a time: chunk boundaries inside a list, lists
    # shorter than a chunk, an empty list, and 2-D indices.
    monkeypatch.setattr(data_flow_ops, "_STITCH_CHUNK", chunk)
    rng = np.random.default_rng(chunk)
    n = 300
    positions = rng.permutation(n if kind != "gaps" else 2 * n)[:n].astype(np.int32)
    if kind == "duplicates":
        positions[::5] = positions[-1]
    indices = [positions[:100].reshape(10, 10), positions[100:100], positions[100:]]
    data = [rng.random((*i.shape, *row)).astype(np.float32) for i in indices]
    assert_same(run_lists(mg.dynamic_stitch, indices, data), stitch_reference(indices, data))


@pytest.mark.parametrize("stitch", STITCHES, ids=STITCH_IDS)
def test_stitch_more_indices_than_rows_with_gaps(stitch):
    # More indices than rows: repeats without a look, yet rows 1 and 2 are never named.
    indices = [np.zeros(4, np.int32), np.array([3, 0], np.int32)]
    data = [np.arange(1, 5, dtype=np.float32), np.array([7, 8], np.float32)]
    assert_same(run_lists(stitch, indices, data), np.array([8, 0, 0, 7], np.float32))


@pytest.mark.parametrize("stitch", STITCHES, ids=STITCH_IDS)
@pytest.mark.parametrize("row", [(), (16,)], ids=["word", "64B"])
def test_stitch_as_many_indices_as_rows_with_a_repeat(stitch, row):
    # As many indices as rows: only a look at them finds that one repeats, and that rows
    # no index names must be zero. Several chunks in each list, on both cores; one row
    # named over 1000 times.
    rng = np.random.default_rng(5)
    n = 300_000
    positions = rng.permutation(n).astype(np.int32)
    positions[rng.choice(n, 1000, replace=False)] = 17
    indices = np.array_split(positions, 3)
    data = [rng.random((len(i), *row)).astype(np.float32) + 1 for i in indices]
    expected = stitch_reference(indices, data)
    never_named = n - np.unique(positions).size
    assert never_named >= 999 and (expected.reshape(n, -1) == 0).all(axis=1).sum() == never_named
    for _ in range(3):
        assert_same(run_lists(stitch, indices, data), expected)


@pytest.mark.parametrize("row", [(), (3,)], ids=["word", "12B"])
def test_stitch_repeats_when_writes_are_found_out_of_order(monkeypatch, row):
    # Had NumPy written a table out of order, the chunked winners report it after writing
    # some rows (here: every first occurrence, the wrong ones); the winners over all
    # indices at once then write every named row again.
    def out_of_order(ctx, out, host, rows):
        for i, r in zip(host, rows):
            flat = i.reshape(-1)
            _, first = np.unique(flat, return_index=True)
            out[flat[first]] = r[first]
        return False

    monkeypatch.setattr(data_flow_ops, "_stitch_winners_in_chunks", out_of_order)
    rng = np.random.default_rng(2)
    indices = [rng.integers(0, 40, size=n).astype(np.int32) for n in (60, 0, 50)]
    data = [rng.random((len(i), *row)).astype(np.float32) for i in indices]
    expected = stitch_reference(indices, data)
    assert_same(run_lists(mg.dynamic_stitch, indices, data), expected)


def test_stitch_non_contiguous_data():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = run(
        lambda a: mg.dynamic_stitch([[2, 0, 1, 3, 4, 5]], [mg.transpose(a)]),
        x,
    )
    assert_same(out, x.T[[1, 2, 0, 3, 4, 5]])


def test_stitch_does_not_touch_its_inputs():
    idx = np.array([1, 0], np.int32)
    data = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    before = data.copy()
    g = mg.Graph()
    with g.as_default():
        i = mg.placeholder(mg.int32)
        d = mg.placeholder(mg.float32)
        y = mg.dynamic_stitch([i], [d])
        z = mg.dynamic_partition(d, [0, 0], 1)
    out, (part,) = mg.Session(g).run([y, z], {i: idx, d: data})
    assert_same(data, before)
    assert not np.shares_memory(out, data)
    assert not np.shares_memory(part, data)


def test_rows_are_put_from_read_only_values_without_a_copy(monkeypatch):
    # Fed tensors reach kernels as read-only views; np.put would copy such values first.
    rows = np.arange(12, dtype=np.float32).reshape(4, 3)
    fed = rows.view()
    fed.flags.writeable = False
    seen = []
    real_put = np.put

    def spy(a, ind, v, mode="raise"):
        seen.append(v)
        return real_put(a, ind, v, mode=mode)

    monkeypatch.setattr(common.np, "put", spy)
    out = np.zeros((5, 3), np.float32)
    common.put_rows(out, np.array([4, 0, 2, 1]), fed)
    assert_same(out, np.stack([rows[1], rows[3], rows[2], np.zeros(3, np.float32), rows[0]]))
    assert seen[0].flags.writeable and np.shares_memory(seen[0], rows)  # np.put won't copy
    assert not fed.flags.writeable
    assert_same(rows, np.arange(12, dtype=np.float32).reshape(4, 3))
    # Memory read-only at its source cannot be viewed as writeable: np.put copies it.
    frozen = np.frombuffer(rows.tobytes(), np.float32).reshape(4, 3)
    common.put_rows(out, np.array([0, 1, 2, 3]), frozen)
    assert_same(out[:4], rows)


def test_one_kernel_for_both_stitch_ops():
    reg = mg.registered_ops()
    assert reg["DynamicStitch"].kernels["CPU"] is reg["ParallelDynamicStitch"].kernels["CPU"]
    for name in ("DynamicStitch", "ParallelDynamicStitch", "DynamicPartition"):
        assert reg[name].kernel_devices == frozenset({"CPU", "GPU"})
    assert reg["DynamicStitch"].signature() == (
        "DynamicStitch(indices: N * int32, data: N * T) -> (merged: T)"
    )
    assert reg["DynamicPartition"].signature() == (
        "DynamicPartition(data: T, partitions: int32) -> (outputs: num_partitions * T)"
    )
    # On a GPU the indices stay in device memory (one sync for the output size).
    assert reg["DynamicStitch"].host_inputs == frozenset()
    for fn in (mg.dynamic_stitch, mg.parallel_dynamic_stitch, mg.dynamic_partition):
        assert ">>>" in fn.__doc__


# -- Shape inference ----------------------------------------------------------------


def _ph(dtype: Any, shape: Any) -> Any:
    return mg.placeholder(dtype, shape=shape)


@pytest.mark.parametrize(
    "build, expected",
    [
        (lambda: mg.dynamic_stitch([_ph(mg.int32, None)], [_ph(mg.float32, None)]), None),
        (lambda: mg.dynamic_stitch([_ph(mg.int32, None)], [_ph(mg.float32, [3, 2])]), None),
        (lambda: mg.dynamic_stitch([_ph(mg.int32, [None])], [_ph(mg.float32, None)]), None),
        (
            lambda: mg.dynamic_stitch([_ph(mg.int32, [None])], [_ph(mg.float32, [None, 3])]),
            [None, 3],
        ),
        (
            lambda: mg.dynamic_stitch(
                [_ph(mg.int32, [None]), _ph(mg.int32, None)],
                [_ph(mg.float32, [None, None, 4]), _ph(mg.float32, [2, 3, 4])],
            ),
            [None, None, 4],
        ),
        (
            lambda: mg.dynamic_stitch(
                [_ph(mg.int32, [None]), _ph(mg.int32, [2, 2])],
                [_ph(mg.float32, [None, None, 4]), _ph(mg.float32, [2, None, 3, None])],
            ),
            [None, 3, 4],
        ),
        (lambda: mg.dynamic_stitch([[0, 1], _ph(mg.int32, [2])], [[1, 2], [3, 4]]), [None]),
        (lambda: mg.dynamic_stitch([[0, 5]], [_ph(mg.float32, [None, 4])]), [6, 4]),
        (lambda: mg.dynamic_stitch([3, [0]], [[1, 2], [[3, 4]]]), [4, 2]),
        (lambda: mg.parallel_dynamic_stitch([[2, 0]], [_ph(mg.bool, [2])]), [3]),
        (lambda: mg.dynamic_partition(_ph(mg.float32, [None, 3]), _ph(mg.int32, None), 2), None),
        (lambda: mg.dynamic_partition(_ph(mg.float32, None), _ph(mg.int32, [5]), 2), None),
        (
            lambda: mg.dynamic_partition(_ph(mg.float32, [None, 3]), _ph(mg.int32, [None]), 2),
            [None, 3],
        ),
        (
            lambda: mg.dynamic_partition(_ph(mg.float32, [2, 3, 4]), _ph(mg.int32, [2, None]), 3),
            [None, 4],
        ),
        (lambda: mg.dynamic_partition(_ph(mg.float32, [5]), _ph(mg.int32, []), 3), [None, 5]),
        (lambda: mg.dynamic_partition([1, 2, 3], [0, 1, 1], 2), [None]),
    ],
)
def test_shape_inference(build, expected):
    _, out = build_now(build)
    for o in out if isinstance(out, list) else [out]:
        assert o.shape == mg.TensorShape(expected)


def test_partition_output_count_and_dtype():
    _, parts = build_now(lambda: mg.dynamic_partition(_ph(mg.complex64, [4]), [1, 0, 1, 0], 5))
    assert len(parts) == 5
    assert all(p.dtype == mg.complex64 for p in parts)
    assert [p.index for p in parts] == [0, 1, 2, 3, 4]


# -- DynamicPartition: semantics.md §4 and §9 --------------------------------------

PARTITION_CASES = [
    # (data, partitions, num_partitions, expected outputs)
    (
        [0, 13, 2, 39, 4, 17],
        [0, 0, 2, 3, 2, 1],
        4,
        [[0, 13], [17], [2, 4], [39]],
    ),
    (
        np.arange(18).reshape(6, 3),
        [0, 0, 2, 3, 2, 1],
        4,
        [[[0, 1, 2], [3, 4, 5]], [[15, 16, 17]], [[6, 7, 8], [12, 13, 14]], [[9, 10, 11]]],
    ),
    ([1, 2, 3, 4], [1, 3, 1, 3], 4, [[], [1, 3], [], [2, 4]]),
    (np.zeros((2, 0)), [0, 1], 3, [np.zeros((1, 0)), np.zeros((1, 0)), np.zeros((0, 0))]),
    ([], [], 2, [[], []]),
    ([10, 20], 1, 2, [np.zeros((0, 2)), [[10, 20]]]),
    (
        [10, 13, 12, 11],
        3,
        4,
        [np.zeros((0, 4)), np.zeros((0, 4)), np.zeros((0, 4)), [[10, 13, 12, 11]]],
    ),
    ([[1, 2], [3, 4]], [[0, 1], [1, 0]], 2, [[1, 4], [2, 3]]),
    ([10, 20, 30, 40, 50], [0, 0, 1, 1, 0], 2, [[10, 20, 50], [30, 40]]),
    ([5, 6, 7], [0, 0, 0], 1, [[5, 6, 7]]),
]


@pytest.mark.parametrize("data, partitions, n, expected", PARTITION_CASES)
@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.complex64, np.int16])
def test_partition_cases(data, partitions, n, expected, dtype):
    data = np.asarray(data).astype(dtype)
    partitions = np.asarray(partitions, np.int32)
    expected = [np.asarray(e).astype(dtype) for e in expected]
    for shapes in (None, [None, None]):
        outs = run(lambda d, p: mg.dynamic_partition(d, p, n), data, partitions, shapes=shapes)
        assert len(outs) == n
        for out, e in zip(outs, expected):
            assert_same(out, e)
    g, outs = build_now(lambda: mg.dynamic_partition(data, partitions, n))
    for out, e in zip(mg.Session(g).run(outs), expected):
        assert_same(out, e)


def test_partition_complex64():
    data = np.array([1 + 2j, 3 + 4j, 5 + 6j, 7 + 8j], np.complex64)
    outs = run(lambda d: mg.dynamic_partition(d, [1, 0, 1, 0], 2), data)
    assert_same(outs[0], np.array([3 + 4j, 7 + 8j], np.complex64))
    assert_same(outs[1], np.array([1 + 2j, 5 + 6j], np.complex64))


@pytest.mark.parametrize(
    "shape, n, partitions",
    [
        ((100_000,), 2, lambda i: i % 2),
        ((30_000, 7), 97, lambda i: (i * i) % 97),
        ((3072,), 16, lambda i: i % 16),  # TensorFlow's testCUBBug sizes
        ((5000, 3), 9, lambda i: (i * 7) % 9),
        ((4000, 2), 8, lambda i: (i // 3) % 8),
    ],
)
@pytest.mark.parametrize("split", [False, True], ids=["one core", "both cores"])
def test_partition_large(monkeypatch, shape, n, partitions, split):
    # Both cores: wide rows get their masks and gathers per partition on either thread.
    if split:
        monkeypatch.setattr(kernel, "PARALLEL_MIN_BYTES", 0)
    data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    p = partitions(np.arange(shape[0], dtype=np.int64)).astype(np.int32)
    outs = run(lambda d, q: mg.dynamic_partition(d, q, n), data, p)
    for out, e in zip(outs, partition_reference(data, p, n)):
        assert_same(out, e)
    if shape == (3072,):
        assert outs[-1].shape == (192,)


@pytest.mark.parametrize("dtype", [np.bool_, np.int16, np.float32, np.complex64])
@pytest.mark.parametrize(
    "n, ids",
    [(2, "random"), (4, "runs"), (5, "random"), (6, "random"), (8, "runs"), (9, "runs")]
    + [(16, "random"), (255, "random"), (256, "runs"), (257, "random"), (300, "runs")],
)
@pytest.mark.parametrize("block_bytes, sort_rows", [(1, 1), (64, 7), (1000, 500)])
def test_partition_in_blocks(monkeypatch, dtype, n, ids, block_bytes, sort_rows):
    # Word rows are split block by block on the CPU (up to 5 parts with masks on blocks
    # of block_bytes, beyond by a counting sort of blocks of sort_rows rows, the last one
    # shorter); tiny blocks make many of them, with partitions missing from some blocks
    # or from all. 256 partitions still sort 8-bit keys, 257 need 16 bits. The blocks go
    # to both cores, each writing its stretch of the scratch buffer.
    monkeypatch.setattr(kernel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(partition_ops, "_PARTITION_BLOCK_BYTES", block_bytes)
    monkeypatch.setattr(partition_ops, "_PARTITION_SORT_ROWS", sort_rows)
    rng = np.random.default_rng(n)
    size = 2001
    if ids == "random":
        p = rng.integers(0, n, size=size)
    else:  # long runs of one id, every third id never used
        p = np.repeat(rng.choice(np.arange(0, n, 3), size=size // 50 + 1), 50)[:size]
    p = p.astype(np.int32)
    data = _random_data(rng, (size,), dtype)
    outs = run(lambda d, q: mg.dynamic_partition(d, q, n), data, p)
    assert len(outs) == n
    for out, e in zip(outs, partition_reference(data, p, n)):
        assert_same(out, e)


@pytest.mark.parametrize("size", [0, 1, 64, 65, 127, 129])
@pytest.mark.parametrize("segments", [2, 16, 1 << 15])
def test_partition_sort_block_edges(monkeypatch, size, segments):
    # The blocked counting sort: blocks of 64 rows (the last one full, short or alone),
    # at most ``segments`` (block, partition) segments (2: too few for two blocks of
    # 8 partitions, so one sort of all rows); the first and last partitions empty.
    monkeypatch.setattr(partition_ops, "_PARTITION_SORT_ROWS", 64)
    monkeypatch.setattr(partition_ops, "_PARTITION_SEGMENTS", segments)
    rng = np.random.default_rng(size)
    p = rng.integers(1, 7, size=size).astype(np.int32)
    data = rng.standard_normal(size).astype(np.float64)
    outs = run(lambda d, q: mg.dynamic_partition(d, q, 8), data, p)
    expected = [[x for x, q in zip(data.tolist(), p.tolist()) if q == k] for k in range(8)]
    for out, e in zip(outs, expected):
        assert_same(out, np.array(e, np.float64))


@pytest.mark.parametrize("bad", [[(700, 9)], [(900, -1), (700, 8)], [(5, 2**31 - 1), (999, -7)]])
@pytest.mark.parametrize("shared", [False, True])
def test_partition_sort_names_the_first_bad_id(monkeypatch, bad, shared):
    # The blocked sort checks ids block by block, the blocks on both cores; the error
    # still names the first bad entry in flat order, as TensorFlow does.
    monkeypatch.setattr(partition_ops, "_PARTITION_SORT_ROWS", 64)
    p = (np.arange(1000) % 8).astype(np.int32).reshape(10, 100)
    for pos, value in bad:
        p.flat[pos] = value
    first, value = min(bad)
    data = np.zeros(1000, np.float32).reshape(10, 100)

    def build(d, q):
        also = mg.dynamic_partition(d * 2.0, q, 8) if shared else []  # one sort for both
        return mg.dynamic_partition(d, q, 8) + also

    with pytest.raises(errors.InvalidArgumentError) as e:
        run(build, data, p)
    assert f"partitions[{first // 100},{first % 100}] = {value} is not in [0, 8)" in str(e.value)


@pytest.mark.parametrize("n", [2, 8])
def test_partition_under_a_cap_the_input_is_over(monkeypatch, n, any_device):
    # Each output is under the Session's cap; the input (and the sort's buffers) are not.
    if any_device == "gpu":
        pytest.skip("the feed's copy to the device is an allocation under the cap")
    monkeypatch.setattr(partition_ops, "_PARTITION_SORT_ROWS", 64)
    x = np.arange(4000, dtype=np.float32)
    p = (np.arange(4000) % n).astype(np.int32)
    g = mg.Graph()
    with g.as_default():
        px, pp = mg.placeholder(mg.float32, [4000]), mg.placeholder(mg.int32, [4000])
        y = mg.dynamic_partition(px, pp, n)
    outs = mg.Session(g, max_tensor_bytes=8000).run(y, {px: x, pp: p})
    for out, e in zip(outs, partition_reference(x, p, n)):
        assert_same(out, e)


@pytest.mark.parametrize("data_shape", [(4,), (4, 5), (4, 5, 2)])
@pytest.mark.parametrize("extra", [(), (6,), (6, 7)])
def test_partition_higher_rank(data_shape, extra):
    rng = np.random.default_rng(3)
    data = rng.random(data_shape + extra).astype(np.float32)
    p = rng.integers(0, 3, size=data_shape).astype(np.int32)
    outs = run(lambda d, q: mg.dynamic_partition(d, q, 3), data, p)
    for out, e in zip(outs, partition_reference(data, p, 3)):
        assert_same(out, e)
        assert out.shape[1:] == extra


# -- Errors -------------------------------------------------------------------------


@pytest.mark.parametrize("stitch", STITCHES, ids=STITCH_IDS)
def test_stitch_int64_indices_are_rejected_at_build_time(stitch):
    op = "DynamicStitch" if stitch is mg.dynamic_stitch else "ParallelDynamicStitch"
    msg = (
        f"cannot compute {op} as input #{{}}(zero-based) was expected to be a int32 tensor "
        "but is a int64 tensor"
    )
    g = mg.Graph()
    with g.as_default():
        with pytest.raises(errors.OpError) as e:
            stitch([mg.placeholder(mg.int64)], [[1.0]], name="st")
        check_error(e, errors.InvalidArgumentError, msg.format(0), "st")
        with pytest.raises(errors.OpError) as e:
            stitch([[0], mg.constant(np.array([1], np.int64))], [[1.0], [2.0]], name="st2")
        check_error(e, errors.InvalidArgumentError, msg.format(1), "st2")
    root = mg.Scope.new_root_scope()
    cls = getattr(ops, op)
    with pytest.raises(errors.OpError) as e:
        cls(root.with_op_name("st3"), [ops.Const(root, np.array([0], np.int64))], [[1.0]])
    check_error(e, errors.InvalidArgumentError, msg.format(0), "st3")


def test_partition_int64_partitions_are_rejected_at_build_time():
    g = mg.Graph()
    with g.as_default():
        with pytest.raises(errors.OpError) as e:
            mg.dynamic_partition([1.0, 2.0], mg.placeholder(mg.int64), 2, name="dp")
    check_error(
        e,
        errors.InvalidArgumentError,
        "cannot compute DynamicPartition as input #1(zero-based) was expected to be a int32 "
        "tensor but is a int64 tensor",
        "dp",
    )


@pytest.mark.parametrize(
    "build, text, node",
    [
        # List length mismatch: the generated Python wrapper of TensorFlow says
        # 'dynamic_stitch' where the runtime says the op name.
        (
            lambda: mg.dynamic_stitch([[0], [1]], [[1.0], [2.0], [3.0], [4.0]], name="st"),
            "List argument 'data' to 'dynamic_stitch' Op with length 4 must match length 2 "
            "of argument 'indices'.",
            "st",
        ),
        (
            lambda: mg.parallel_dynamic_stitch([[0], [1]], [[1.0]], name="st"),
            "List argument 'data' to 'parallel_dynamic_stitch' Op with length 1 must match "
            "length 2 of argument 'indices'.",
            "st",
        ),
        (
            lambda: mg.dynamic_stitch([], [], name="st"),
            "Value for attr 'N' of 0 must be at least minimum 1",
            "st",
        ),
        (
            lambda: mg.dynamic_stitch(mg.constant([0]), [[1.0]], name="st"),
            "Expected list for 'indices' argument to 'dynamic_stitch' Op",
            "st",
        ),
        (
            lambda: mg.dynamic_partition([1.0], [0], 0, name="dp"),
            "Value for attr 'num_partitions' of 0 must be at least minimum 1",
            "dp",
        ),
        (
            lambda: mg.dynamic_partition([1.0], [0], -2, name="dp"),
            "Value for attr 'num_partitions' of -2 must be at least minimum 1",
            "dp",
        ),
        # Shape errors (TensorFlow's shape function: MergePrefix, then Merge).
        (
            lambda: mg.dynamic_stitch([[[1, 6, 2, 3, 5]]], [[10, 60, 20, 30, 50]], name="st"),
            "Shape must be at least rank 2 but is rank 1",
            "st",
        ),
        (
            lambda: mg.dynamic_stitch(
                [[0, 4, 7], [1, 6, 2, 3, 5]], [[0, 40, 70], [[10, 60, 20, 30, 50]]], name="st"
            ),
            "Dimensions must be equal, but are 1 and 5",
            "st",
        ),
        (
            lambda: mg.dynamic_stitch(
                [[0, 4, 7], [1, 6, 2, 3, 5]], [[0, 40, 70], [10, 60, 20, 30]], name="st"
            ),
            "Dimensions must be equal, but are 4 and 5",
            "st",
        ),
        (
            lambda: mg.dynamic_stitch(
                [[0, 4, 7], [1, 6]], [[[0], [40], [70]], [[10, 11], [60, 61]]], name="st"
            ),
            "Dimension 0 in both shapes must be equal, but are 1 and 2. Shapes are [1] and [2].",
            "st",
        ),
        (
            lambda: mg.dynamic_stitch(
                [[0, 1], [2]], [[[1], [2]], [[[1, 2, 3], [4, 5, 6]]]], name="st"
            ),
            "Shapes must be equal rank, but are 1 and 2",
            "st",
        ),
        (
            lambda: mg.dynamic_stitch([[0, 1, 2]], [[1.0, 2.0]], name="st"),
            "Dimensions must be equal, but are 2 and 3",
            "st",
        ),
        # Constant indices prove an index error at build time, in the kernel's words.
        (
            lambda: mg.dynamic_stitch([[[0, 1], [2, -1]]], [np.ones((2, 2))], name="st"),
            "indices[0][3] = -1 is out of range [0, 3)",
            "st",
        ),
        (
            lambda: mg.dynamic_stitch([[0, 1, 4], [-1, 2, -3]], [[1, 2, 3], [4, 5, 6]], name="st"),
            "indices[1][0] = -1 is out of range [0, 5)",
            "st",
        ),
        (
            lambda: mg.parallel_dynamic_stitch([[-3, -1]], [[1.0, 2.0]], name="st"),
            "indices[0][0] = -3 is out of range [0, 0)",
            "st",
        ),
        (
            lambda: mg.dynamic_stitch([-1], [1.0], name="st"),
            "indices[0][0] = -1 is out of range [0, 0)",
            "st",
        ),
        (
            lambda: mg.dynamic_partition([[0], [1], [2]], [[0], [0]], 2, name="dp"),
            "Dimensions must be equal, but are 3 and 2",
            "dp",
        ),
        (
            lambda: mg.dynamic_partition([1, 2], [[0, 1]], 2, name="dp"),
            "Shape must be at least rank 2 but is rank 1",
            "dp",
        ),
        (
            lambda: mg.dynamic_partition([0, 13, 2, 39, 4, 17], [0, 0, 99, 3, 98, 1], 4, name="dp"),
            "partitions[2] = 99 is not in [0, 4)",
            "dp",
        ),
        (
            lambda: mg.dynamic_partition([1, 2, 3], 17, 7, name="dp"),
            "partitions = 17 is not in [0, 7)",
            "dp",
        ),
        (
            lambda: mg.dynamic_partition(np.zeros((2, 3)), [[0, 1, 2], [3, 17, 18]], 7, name="dp"),
            "partitions[1,1] = 17 is not in [0, 7)",
            "dp",
        ),
        (
            lambda: mg.dynamic_partition([1, 2], [0, -1], 2, name="dp"),
            "partitions[1] = -1 is not in [0, 2)",
            "dp",
        ),
        (
            lambda: mg.dynamic_partition(np.zeros((3, 0)), [0, 5, 9], 2, name="dp"),
            "partitions[1] = 5 is not in [0, 2)",
            "dp",
        ),
    ],
)
def test_build_time_errors(build, text, node):
    with pytest.raises(errors.OpError) as e:
        build_now(build)
    check_error(e, errors.InvalidArgumentError, text, node)


def _run_error(build: Any, arrays: list[np.ndarray], known_shapes: bool = False) -> Any:
    with pytest.raises(errors.OpError) as e:
        run(build, *arrays, shapes=None if known_shapes else [None] * len(arrays))
    return e


def _stitch2(stitch: Any, name: str) -> Any:
    return lambda i0, i1, d0, d1: stitch([i0, i1], [d0, d1], name=name)


I32 = np.int32
F32 = np.float32


@pytest.mark.parametrize("stitch", STITCHES, ids=STITCH_IDS)
@pytest.mark.parametrize(
    "arrays, text",
    [
        # The flat position inside one tensor, as TensorFlow, with the list, value and range.
        (
            [
                np.array([[0, 1], [2, -1]], I32),
                np.zeros(0, I32),
                np.ones((2, 2), F32),
                np.ones(0, F32),
            ],
            "indices[0][3] = -1 is out of range [0, 3)",
        ),
        (
            [
                np.array([0, 1, 2], I32),
                np.array([3, -1, 4, -5], I32),
                np.ones(3, F32),
                np.ones(4, F32),
            ],
            "indices[1][1] = -1 is out of range [0, 5)",
        ),
        (
            [np.array(-7, I32), np.array([-1], I32), np.ones((), F32), np.ones(1, F32)],
            "indices[0][0] = -7 is out of range [0, 0)",
        ),
        # Index checks come before shape checks, as in TensorFlow.
        (
            [np.array([0, -1], I32), np.array([1], I32), np.ones(3, F32), np.ones((1, 2), F32)],
            "indices[0][1] = -1 is out of range [0, 2)",
        ),
        (
            [np.array([0, 1, 2], I32), np.array([3], I32), np.ones(2, F32), np.ones(1, F32)],
            "data[0].shape = [2] does not start with indices[0].shape = [3]",
        ),
        (
            [np.array([[0, 1]], I32), np.array([3], I32), np.ones(2, F32), np.ones(1, F32)],
            "data[0].shape = [2] does not start with indices[0].shape = [1,2]",
        ),
        (
            [
                np.array([0, 1, 2], I32),
                np.array([3, 4, 5, 6], I32),
                np.ones((3, 1), F32),
                np.ones((4, 2), F32),
            ],
            "Need data[0].shape[1:] = data[1].shape[1:], got data[0].shape = [3,1], "
            "data[1].shape = [4,2], indices[0].shape = [3], indices[1].shape = [4]",
        ),
        (
            [np.array(0, I32), np.array([[3]], I32), np.ones(2, F32), np.ones((1, 1, 3), F32)],
            "Need data[0].shape[0:] = data[1].shape[2:], got data[0].shape = [2], "
            "data[1].shape = [1,1,3], indices[0].shape = [], indices[1].shape = [1,1]",
        ),
    ],
)
def test_stitch_run_time_errors(stitch, arrays, text):
    e = _run_error(_stitch2(stitch, "st"), arrays)
    check_error(e, errors.InvalidArgumentError, text, "st")


def test_stitch_out_of_range_with_known_shapes_fails_at_run_time():
    arrays = [np.array([4, -2], I32), np.array([1], I32), np.ones(2, F32), np.ones(1, F32)]
    e = _run_error(_stitch2(mg.dynamic_stitch, "st"), arrays, known_shapes=True)
    check_error(e, errors.InvalidArgumentError, "indices[0][1] = -2 is out of range [0, 5)", "st")


@pytest.mark.parametrize("stitch", STITCHES, ids=STITCH_IDS)
def test_stitch_huge_output_is_resource_exhausted_before_allocating(stitch):
    idx = np.array([2**31 - 1], I32)
    data = np.ones((1, 4096), np.float64)
    e = _run_error(lambda i, d: stitch([i], [d], name="st"), [idx, data])
    check_error(
        e,
        errors.ResourceExhaustedError,
        "OOM when allocating tensor with shape [2147483648,4096]",
        "st",
    )
    # Constant indices: the shape is known at build time, the run still refuses.
    g = mg.Graph()
    with g.as_default():
        y = stitch([[2**31 - 1]], [mg.placeholder(mg.float64, [1, 4096], name="d")], name="st2")
    assert y.shape == mg.TensorShape([2**31, 4096])
    with pytest.raises(errors.OpError) as e:
        mg.Session(g).run(y, {"d:0": data})
    check_error(e, errors.ResourceExhaustedError, "OOM when allocating", "st2")


def test_stitch_counts_rows_in_int64():
    # TensorFlow's int32 max + 1 wraps to a negative size; minigraph gives 2**31 empty rows.
    out = run_lists(mg.dynamic_stitch, [[2**31 - 1]], [np.zeros((1, 0), F32)], False)
    assert out.shape == (2**31, 0)


@pytest.mark.parametrize(
    "data, partitions, n, text",
    [
        (
            np.ones((3, 1), F32),
            np.zeros((2, 1), I32),
            2,
            "data.shape must start with partitions.shape, got data.shape = [3,1], "
            "partitions.shape = [2,1]",
        ),
        (
            np.ones(3, F32),
            np.zeros((3, 1), I32),
            2,
            "data.shape must start with partitions.shape, got data.shape = [3], "
            "partitions.shape = [3,1]",
        ),
        (
            np.ones(6, F32),
            np.array([0, 0, 99, 3, 98, 1], I32),
            4,
            "partitions[2] = 99 is not in [0, 4)",
        ),
        (np.ones(3, F32), np.array(17, I32), 7, "partitions = 17 is not in [0, 7)"),
        (
            np.ones((2, 3), F32),
            np.array([[0, 1, 2], [3, 17, -1]], I32),
            7,
            "partitions[1,1] = 17 is not in [0, 7)",
        ),
        (
            np.ones(6, F32),
            np.array([6, 5, 4, 3, 1, 0], I32),
            2,
            "partitions[0] = 6 is not in [0, 2)",
        ),
        (np.ones(2, F32), np.array([0, -1], I32), 2, "partitions[1] = -1 is not in [0, 2)"),
        (np.ones((3, 0), F32), np.array([0, 1, 9], I32), 2, "partitions[2] = 9 is not in [0, 2)"),
        (
            np.ones(40, F32),
            np.arange(40, 80, dtype=I32),
            40,
            "partitions[0] = 40 is not in [0, 40)",
        ),
    ],
)
def test_partition_run_time_errors(data, partitions, n, text):
    e = _run_error(lambda d, p: mg.dynamic_partition(d, p, n, name="dp"), [data, partitions])
    check_error(e, errors.InvalidArgumentError, text, "dp")


def test_partition_error_through_class_names_the_node():
    root = mg.Scope.new_root_scope()
    p = ops.Placeholder(root.with_op_name("p"), mg.int32)
    dp = ops.DynamicPartition(root.with_op_name("parts"), [1.0, 2.0], p, 3)
    assert len(dp.outputs) == 3
    with pytest.raises(errors.OpError) as e:
        mg.ClientSession(root).run(dp.outputs, {p.output: np.array([0, 3], I32)})
    check_error(e, errors.InvalidArgumentError, "partitions[1] = 3 is not in [0, 3)", "parts")


# -- Properties ------------------------------------------------------------------------

HYP_DTYPES = st.sampled_from(DTYPES)


def _random_data(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    values = rng.integers(-100, 100, size=shape)
    if np.dtype(dtype).kind == "c":
        return (values + 1j * rng.integers(-9, 9, size=shape)).astype(dtype)
    if np.dtype(dtype).kind == "u":
        return np.abs(values).astype(dtype)
    return values.astype(dtype)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    prefix=st.lists(st.integers(0, 5), min_size=0, max_size=3),
    extra=st.lists(st.integers(0, 3), min_size=0, max_size=2),
    n=st.integers(1, 12),
    dtype=HYP_DTYPES,
    parallel=st.booleans(),
)
def test_stitch_of_partitions_is_the_identity(seed, prefix, extra, n, dtype, parallel):
    rng = np.random.default_rng(seed)
    shape = tuple(prefix) + tuple(extra)
    x = _random_data(rng, shape, dtype)
    p = rng.integers(0, n, size=tuple(prefix)).astype(np.int32)
    stitch = mg.parallel_dynamic_stitch if parallel else mg.dynamic_stitch

    def build(xs, ps):
        positions = mg.reshape(mg.range(mg.size(ps)), mg.shape(ps))
        parts = mg.dynamic_partition(xs, ps, n)
        return parts, stitch(mg.dynamic_partition(positions, ps, n), parts)

    parts, out = run(build, x, p, shapes=[None, None])
    size = int(np.prod(prefix, dtype=np.int64))
    assert_same(out, x.reshape((size, *extra)))
    for part, e in zip(parts, partition_reference(x, p, n)):
        assert_same(part, e)


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_lists=st.integers(1, 4),
    extra=st.lists(st.integers(0, 3), min_size=0, max_size=2),
    max_index=st.integers(0, 30),
    dtype=HYP_DTYPES,
    parallel=st.booleans(),
    known=st.booleans(),
)
def test_stitch_matches_a_loop(seed, n_lists, extra, max_index, dtype, parallel, known):
    rng = np.random.default_rng(seed)
    indices, data = [], []
    for _ in range(n_lists):
        ishape = tuple(rng.integers(0, 4, size=rng.integers(0, 3)))
        indices.append(rng.integers(0, max_index + 1, size=ishape).astype(np.int32))
        data.append(_random_data(rng, ishape + tuple(extra), dtype))
    stitch = mg.parallel_dynamic_stitch if parallel else mg.dynamic_stitch
    assert_same(run_lists(stitch, indices, data, known), stitch_reference(indices, data))


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    prefix=st.lists(st.integers(0, 6), min_size=0, max_size=3),
    extra=st.lists(st.integers(0, 3), min_size=0, max_size=2),
    n=st.integers(1, 20),
    dtype=HYP_DTYPES,
)
def test_partition_matches_boolean_masks(seed, prefix, extra, n, dtype):
    rng = np.random.default_rng(seed)
    x = _random_data(rng, tuple(prefix) + tuple(extra), dtype)
    p = rng.integers(0, n, size=tuple(prefix)).astype(np.int32)
    outs = run(lambda d, q: mg.dynamic_partition(d, q, n), x, p)
    assert len(outs) == n
    for out, e in zip(outs, partition_reference(x, p, n)):
        assert_same(out, e)


@pytest.mark.parametrize("n", [255, 257, 65_537])
def test_partition_many_partitions(n):
    # Partition ids are narrowed to 8 or 16 bits for the radix sort when they fit.
    rng = np.random.default_rng(n)
    p = np.concatenate([rng.integers(0, n, size=2000), [n - 1, 0, 256 % n]]).astype(np.int32)
    data = rng.random((len(p), 2)).astype(np.float32)
    outs = run(lambda d, q: mg.dynamic_partition(d, q, n), data, p)
    assert len(outs) == n
    for k in sorted({0, 1, 254, 256 % n, n - 1}):
        assert_same(outs[k], data[p == k])
    order = sorted(range(len(p)), key=lambda i: int(p[i]))  # Python's sort is stable
    assert_same(np.concatenate(outs), data[order])
