"""ScatterNd, TensorScatter{Update,Add,Sub,Min,Max} and GatherNd.

Expected values come from the seed doc (seeds/004), from semantics.md (TensorFlow
2.21's doc examples, §9 test cases and §10 runs), or from the plain Python loops
below, which apply one index row at a time, in index order.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigraph as mg
from minigraph import errors, kernel, ops
from minigraph.ops import duplicates, gather_ops, scatter_ops
from minigraph.registry import OPS

pytestmark = pytest.mark.usefixtures("any_device")  # CPU and (simulated) GPU

NAN = float("nan")


def f32(v: Any) -> np.ndarray:
    return np.array(v, np.float32)


def i32(v: Any) -> np.ndarray:
    return np.array(v, np.int32)


def i64(v: Any) -> np.ndarray:
    return np.array(v, np.int64)


def build_and_run(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args)`` in a fresh graph (NumPy arguments become constants), then run it."""
    g = mg.Graph()
    with g.as_default():
        out = fn(*args, **kwargs)
    return mg.Session(g).run(out)


def run_fed(fn: Any, *values: np.ndarray, **kwargs: Any) -> Any:
    """``fn`` on placeholders of unknown shape, fed ``values``: the checks run in the kernel."""
    g = mg.Graph()
    with g.as_default():
        phs = [mg.placeholder(mg.as_dtype(v.dtype)) for v in values]
        out = fn(*phs, **kwargs)
    return mg.Session(g).run(out, dict(zip(phs, values)))


def assert_same(actual: np.ndarray, expected: np.ndarray) -> None:
    """Same dtype, shape and values, 0.0 and -0.0 told apart (a NaN's sign and payload aren't
    meaningful: x86 gives inf + -inf a different sign in SIMD and scalar loops)."""
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if actual.dtype.kind not in "fc":
        assert actual.tobytes() == expected.tobytes(), (actual, expected)
        return
    for a, e in [(actual.real, expected.real), (actual.imag, expected.imag)]:
        np.testing.assert_array_equal(a, e)  # NaN matches NaN
        numbers = ~np.isnan(e)
        assert (np.signbit(a)[numbers] == np.signbit(e)[numbers]).all(), (actual, expected)


def assert_sums_close(
    actual: np.ndarray, expected: np.ndarray, scale: np.ndarray, n_terms: int
) -> None:
    """Float sums on a GPU: atomics (or, without them, a pairwise fold) add in another order
    than the loop, so the last bits may differ, by at most about ``n_terms * eps * scale``
    (``scale``: the sum of the terms' magnitudes). Which elements are NaN, infinite or
    -0.0 does not depend on the order."""
    if actual.dtype.kind not in "fc":
        assert_same(actual, expected)
        return
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    eps = np.finfo(actual.dtype).eps
    scale = np.nan_to_num(scale, nan=np.inf)  # a NaN term in the other part of a complex
    parts = [(actual.real, expected.real)]
    if actual.dtype.kind == "c":
        parts.append((actual.imag, expected.imag))
    for a, e in parts:
        finite = np.isfinite(e)
        np.testing.assert_array_equal(np.where(finite, 0, a), np.where(finite, 0, e))
        zeros = (e == 0) & (a == 0)  # a cancellation may end at 0 in one order only
        assert (np.signbit(a)[zeros] == np.signbit(e)[zeros]).all(), (actual, expected)
        tol = 2 * (n_terms + 1) * eps * scale[finite].astype(np.float64)
        assert (np.abs(a[finite] - e[finite]) <= tol).all(), (actual, expected)


def assert_scatter_result(
    device: str, rule: str, out: np.ndarray, tensor: np.ndarray, indices: Any, updates: Any
) -> None:
    """``out`` against the loop: exact everywhere, except float sums on the GPU."""
    expected = scatter_reference(rule, tensor, indices, updates)
    if device == "gpu" and rule in ("add", "sub") and out.dtype.kind in "fc":
        with np.errstate(invalid="ignore", over="ignore"):
            scale = scatter_reference("add", np.abs(tensor), indices, np.abs(updates))
        assert_sums_close(out, expected, np.abs(scale), math.prod(indices.shape[:-1]))
    else:
        assert_same(out, expected)


# -- Independent references: one index row at a time, in index order ------------------

RULES = {
    "update": lambda t, u: np.copyto(t, u),
    "add": lambda t, u: np.add(t, u, out=t),
    "sub": lambda t, u: np.subtract(t, u, out=t),
    "min": lambda t, u: np.copyto(t, u, where=u < t),
    "max": lambda t, u: np.copyto(t, u, where=u > t),
}


def in_range(row: np.ndarray, shape: tuple[int, ...]) -> bool:
    return all(0 <= int(i) < d for i, d in zip(row, shape))


def scatter_reference(rule: str, tensor: np.ndarray, indices: np.ndarray, updates: np.ndarray):
    """TensorFlow's CPU loop; rows out of range are skipped (what IGNORE does)."""
    out = np.array(tensor, copy=True)
    ix = indices.shape[-1]
    rows = indices.reshape(math.prod(indices.shape[:-1]), ix)
    upd = updates.reshape((len(rows),) + out.shape[ix:])
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf is NaN, as in TensorFlow
        for row, u in zip(rows, upd):
            if in_range(row, out.shape):
                target = out[tuple(int(i) for i in row) + (Ellipsis,)]  # a view, even 0-d
                RULES[rule](target, u)
    return out


def gather_reference(params: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """One row at a time; rows out of range give zeros (what IGNORE does)."""
    ix = indices.shape[-1]
    rows = indices.reshape(math.prod(indices.shape[:-1]), ix)
    out = np.zeros((len(rows),) + params.shape[ix:], params.dtype)
    for k, row in enumerate(rows):
        if in_range(row, params.shape):
            out[k] = params[tuple(int(i) for i in row)]
    return out.reshape(indices.shape[:-1] + params.shape[ix:])


def first_bad_row(indices: np.ndarray, shape: tuple[int, ...]) -> str | None:
    ix = indices.shape[-1]
    rows = indices.reshape(math.prod(indices.shape[:-1]), ix)
    for k, row in enumerate(rows):
        if not in_range(row, shape):
            pos = np.unravel_index(k, indices.shape[:-1]) if indices.ndim > 1 else ()
            where = "[" + ",".join(map(str, pos)) + "]" if pos else ""
            return f"indices{where} = [{', '.join(str(int(v)) for v in row)}]"
    return None


# -- The seed doc (seeds/004, TensorScatterUpdate) ----------------------------------------


def test_seed_elements() -> None:
    out = build_and_run(
        mg.tensor_scatter_nd_update,
        np.ones(8, np.int32),
        i32([[4], [3], [1], [7]]),
        i32([9, 10, 11, 12]),
    )
    assert_same(out, i32([1, 11, 1, 10, 9, 1, 1, 12]))


def test_seed_slices() -> None:
    block = [[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]]
    g = mg.Graph()
    with g.as_default():
        out = mg.tensor_scatter_nd_update(mg.ones([4, 4, 4], mg.int32), [[0], [2]], [block, block])
    expected = np.ones((4, 4, 4), np.int32)
    expected[0] = expected[2] = block
    assert_same(mg.Session(g).run(out), expected)


def test_seed_duplicates_are_not_summed_the_last_wins() -> None:
    # The seed says "accumulated (summed)"; TensorFlow's kernel (and ours) assigns.
    out = build_and_run(
        mg.tensor_scatter_nd_update, np.zeros((10, 1), np.float32), i32([[5], [5]]), f32([[4], [8]])
    )
    assert out[5, 0] == 8 and out.sum() == 8


# -- TensorFlow's doc examples and runs (semantics.md §10) ----------------------------


def _x_example() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    diag = [[i, i] for i in range(5)] + [[i, 4 - i] for i in range(5)]  # [2, 2] twice
    return np.zeros((5, 5), np.float32), i32(diag), np.ones(10, np.float32)


DOC_EXAMPLES = [
    pytest.param(
        mg.tensor_scatter_nd_update,
        (i32([0] * 8), i32([[1], [3], [4], [7]]), i32([9, 10, 11, 12])),
        i32([0, 9, 0, 10, 11, 0, 0, 12]),
        id="update-doc-1",
    ),
    pytest.param(
        mg.tensor_scatter_nd_update,
        (i32([[1, 1], [1, 1], [1, 1]]), i32([[0, 1], [2, 0]]), i32([5, 10])),
        i32([[1, 5], [1, 1], [10, 1]]),
        id="update-doc-2",
    ),
    pytest.param(
        mg.tensor_scatter_nd_update,
        (np.zeros((6, 3), np.int32), i32([[2], [4]]), i32([[1, 2, 3], [4, 5, 6]])),
        i32([[0, 0, 0], [0, 0, 0], [1, 2, 3], [0, 0, 0], [4, 5, 6], [0, 0, 0]]),
        id="update-doc-slices",
    ),
    pytest.param(
        mg.tensor_scatter_nd_update,
        _x_example(),
        np.maximum(np.eye(5), np.fliplr(np.eye(5))).astype(np.float32),
        id="update-doc-X",
    ),
    pytest.param(
        mg.tensor_scatter_nd_add,
        (np.ones(8, np.int32), i32([[4], [3], [1], [7]]), i32([9, 10, 11, 12])),
        i32([1, 12, 1, 11, 10, 1, 1, 13]),
        id="add-doc",
    ),
    pytest.param(
        mg.scatter_nd,
        (i32([[4], [3], [1], [7]]), i32([9, 10, 11, 12]), i32([8])),
        i32([0, 11, 0, 10, 9, 0, 0, 12]),
        id="scatter_nd-doc-1",
    ),
    pytest.param(
        mg.scatter_nd,
        (
            i32([[0], [2]]),
            np.stack([np.repeat(i32([[5], [6], [7], [8]]), 4, axis=1)] * 2),
            i32([4, 4, 4]),
        ),
        np.stack([np.repeat(i32([[5], [6], [7], [8]]), 4, axis=1) * m for m in (1, 0, 1, 0)]),
        id="scatter_nd-doc-2",
    ),
    pytest.param(
        mg.gather_nd,
        (i32([[1, 2], [3, 4]]), i32([[1], [0]])),
        i32([[3, 4], [1, 2]]),
        id="gather_nd-doc",
    ),
]


@pytest.mark.parametrize("builder, args, expected", DOC_EXAMPLES)
def test_doc_examples(builder: Any, args: tuple, expected: np.ndarray) -> None:
    assert_same(build_and_run(builder, *args), expected)
    assert_same(run_fed(builder, *args), expected)


# -- TensorFlow's kernel tests (semantics.md §9) -----------------------------------------


@pytest.mark.parametrize("dtype", [np.int32, np.float32], ids=["int32", "float32"])
@pytest.mark.parametrize(
    "builder, expected",
    [
        (mg.tensor_scatter_nd_update, [1, 11, 1, 10, 9, 1, 1, 12]),
        (mg.tensor_scatter_nd_add, [1, 12, 1, 11, 10, 1, 1, 13]),
        (mg.tensor_scatter_nd_sub, [1, -10, 1, -9, -8, 1, 1, -11]),
    ],
)
def test_tensor_scatter_basic(builder: Any, expected: list, dtype: Any) -> None:
    args = (np.ones(8, dtype), i32([[4], [3], [1], [7]]), np.array([9, 10, 11, 12], dtype))
    assert_same(build_and_run(builder, *args), np.array(expected, dtype))


@pytest.mark.parametrize(
    "builder, expected",
    [
        (mg.tensor_scatter_nd_update, [1, -1, 1, 2, 0, 1, 1, 2]),
        (mg.tensor_scatter_nd_min, [1, -1, 1, 1, 0, 1, 1, 1]),
        (mg.tensor_scatter_nd_max, [1, 1, 1, 2, 1, 1, 1, 2]),
    ],
)
def test_tensor_scatter_min_max(builder: Any, expected: list) -> None:
    args = (np.ones(8, np.int32), i32([[4], [3], [1], [7]]), i32([0, 2, -1, 2]))
    assert_same(build_and_run(builder, *args), i32(expected))
    assert_same(run_fed(builder, *args), i32(expected))


def test_update_duplicate_rows_last_wins() -> None:
    updates = np.stack([np.arange(10), np.arange(20, 30), np.arange(10, 20)]).astype(np.float32)
    out = run_fed(
        mg.tensor_scatter_nd_update, np.zeros((10, 10), np.float32), i32([[5], [6], [6]]), updates
    )
    assert_same(out[6], np.arange(10, 20, dtype=np.float32))
    assert_same(out[5], np.arange(10, dtype=np.float32))
    four = build_and_run(
        mg.tensor_scatter_nd_update, f32([0, 0]), i32([[1]] * 4), f32([1, 2, 3, 4])
    )
    assert_same(four, f32([0, 4]))


@pytest.mark.parametrize("table", [0, 10**9], ids=["sort", "table"])
@pytest.mark.parametrize("rule", ["update", "add", "min"])
@pytest.mark.parametrize("slice_shape", [(), (3,)], ids=["elements", "slices"])
def test_duplicates_on_both_resolution_paths(
    monkeypatch: pytest.MonkeyPatch, table: int, rule: str, slice_shape: tuple, any_device: str
) -> None:
    # The first/last row per offset comes from a position table or from a sort.
    monkeypatch.setattr(duplicates, "_TABLE_SLOTS_PER_INDEX", table)
    rng = np.random.default_rng(7)
    tensor = rng.normal(size=(50,) + slice_shape).astype(np.float32)
    indices = rng.integers(0, 50, size=(200, 1)).astype(np.int32)
    updates = rng.normal(size=(200,) + slice_shape).astype(np.float32)
    builder = getattr(mg, f"tensor_scatter_nd_{rule}")
    out = run_fed(builder, tensor, indices, updates)
    assert_scatter_result(any_device, rule, out, tensor, indices, updates)


@pytest.mark.parametrize("hot", [0, 400], ids=["spread", "one hot offset"])
@pytest.mark.parametrize("rule", ["add", "sub", "min", "max"])
@pytest.mark.parametrize("slice_shape", [(), (3,)], ids=["elements", "slices"])
@pytest.mark.parametrize("split", [False, True], ids=["one core", "both cores"])
def test_repeats_applied_round_by_round(
    monkeypatch: pytest.MonkeyPatch,
    hot: int,
    rule: str,
    slice_shape: tuple,
    split: bool,
    any_device: str,
) -> None:
    # On the host, the r-th update of every offset goes in round r (its rows split over
    # the cores when large: here always, with split); spread offsets take several rounds,
    # and the hot offset's many updates end the rounds early (the rest in one fold or
    # ufunc.at). Either way each offset sees the loop's sequence, bit for bit: NaN, -0.0
    # and 0.0 among the values.
    if split:
        monkeypatch.setattr(kernel, "PARALLEL_MIN_BYTES", 0)
    rng = np.random.default_rng(11)
    spread = rng.integers(0, 4000, size=1000 - hot)
    offsets = rng.permutation(np.concatenate([spread, np.full(hot, 7)]))
    indices = offsets.reshape(-1, 1).astype(np.int32)
    updates = rng.choice([np.nan, -0.0, 0.0, 1.5, -2.25, 1e30, 3.0], (1000,) + slice_shape)
    updates = (updates * rng.random(updates.shape).round(1)).astype(np.float32)
    tensor = rng.choice([np.nan, -0.0, 0.0, 1.0, 2.0], (4000,) + slice_shape).astype(np.float32)
    builder = getattr(mg, f"tensor_scatter_nd_{rule}")
    out = run_fed(builder, tensor, indices, updates)
    assert_scatter_result(any_device, rule, out, tensor, indices, updates)


@pytest.mark.parametrize(
    "dtype, slice_shape",
    [
        (np.float32, ()),  # rows of 4 or 8 bytes: the output rows hold the winning positions
        (np.float64, ()),
        (np.int16, (2,)),
        (np.bool_, (4,)),
        (np.int32, (2,)),
        (np.uint8, ()),  # other rows: a table of positions
        (np.int16, (3,)),
        (np.complex128, (2,)),
    ],
)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("split", [False, True], ids=["one core", "both cores"])
def test_update_duplicates_every_row_size(
    monkeypatch: pytest.MonkeyPatch, dtype: Any, slice_shape: tuple, index_dtype: Any, split: bool
) -> None:
    # Many repeats, with differing values, on rows of every size; NaN and -0.0 stay as
    # given (positions are written over the rows' bits, then replaced). Split over the
    # cores, every winner is read before any row is written, and the updates naming one
    # row from both halves write the same winner.
    if split:
        monkeypatch.setattr(kernel, "PARALLEL_MIN_BYTES", 0)
    rng = np.random.default_rng(3)
    tensor = (rng.normal(size=(40,) + slice_shape) * 10).astype(dtype)
    indices = rng.integers(0, 40, size=(300, 1)).astype(index_dtype)
    updates = (rng.normal(size=(300,) + slice_shape) * 10).astype(dtype)
    if np.dtype(dtype).kind == "f":
        updates.reshape(-1)[::7] = np.array([np.nan, -0.0, np.inf], dtype)[
            np.arange(updates.size)[::7] % 3
        ]
    out = run_fed(mg.tensor_scatter_nd_update, tensor, indices, updates)
    assert_same(out, scatter_reference("update", tensor, indices, updates))


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int8])
def test_update_duplicate_elements(dtype: Any) -> None:
    # Index rows of depth 2 (single elements), many naming the same element.
    rng = np.random.default_rng(5)
    tensor = rng.integers(-50, 50, size=(8, 5)).astype(dtype)
    indices = np.stack([rng.integers(0, 8, 400), rng.integers(0, 5, 400)], 1).astype(np.int32)
    updates = rng.integers(-50, 50, size=400).astype(dtype)
    out = run_fed(mg.tensor_scatter_nd_update, tensor, indices, updates)
    assert_same(out, scatter_reference("update", tensor, indices, updates))


def test_add_duplicates_sum() -> None:
    out = build_and_run(mg.tensor_scatter_nd_add, f32([0, 0]), i32([[1]] * 3), f32([1, 2, 3]))
    assert_same(out, f32([0, 6]))
    out = build_and_run(mg.tensor_scatter_nd_sub, i32([0, 0]), i32([[1]] * 3), i32([1, 2, 3]))
    assert_same(out, i32([0, -6]))


def test_scatter_nd_many_duplicates_sum() -> None:
    updates = np.random.default_rng(0).random(100_000).astype(np.float32)
    out = run_fed(mg.scatter_nd, np.zeros((100_000, 1), np.int32), updates, i32([1]))
    np.testing.assert_allclose(out, [np.sum(updates)], rtol=1e-4)
    exact = run_fed(
        mg.scatter_nd, np.zeros((100_000, 1), np.int64), np.ones(100_000, np.int64), i64([1])
    )
    assert_same(exact, i64([100_000]))


def test_integer_overflow_wraps() -> None:
    big = np.iinfo(np.int32).max
    assert_same(
        build_and_run(mg.tensor_scatter_nd_add, i32([big]), i32([[0]]), i32([1])), i32([-(2**31)])
    )
    small = np.array([1], np.uint8)
    out = run_fed(mg.tensor_scatter_nd_sub, small, i32([[0]]), np.array([2], np.uint8))
    assert_same(out, np.array([255], np.uint8))
    assert_same(small, np.array([1], np.uint8))


@pytest.mark.parametrize(
    "indices, updates",
    [
        ([[4], [3], [1], [7]], [False, True, False, True]),
        ([[4], [3], [3], [7]], [False, True, True, True]),
    ],
    ids=["distinct", "duplicates-or"],
)
def test_scatter_nd_bool_adds_like_or(indices: list, updates: list) -> None:
    out = build_and_run(mg.scatter_nd, i32(indices), np.array(updates), i32([8]))
    assert_same(out, np.isin(np.arange(8), [3, 7]))


def test_scatter_nd_zero_indices_rank3() -> None:
    out = build_and_run(
        mg.scatter_nd, np.zeros((1, 1, 2), np.int32), np.zeros((1, 1), np.float32), i32([2, 2])
    )
    assert_same(out, np.zeros((2, 2), np.float32))


def test_scatter_nd_empty_everything() -> None:
    # Rank-1 indices pass only when there is nothing to scatter (semantics.md §9).
    out = build_and_run(mg.scatter_nd, np.zeros(0, np.int32), np.zeros(0, np.int32), i32([0]))
    assert out.size == 0 and out.dtype == np.int32
    empty = run_fed(
        mg.tensor_scatter_nd_add,
        np.zeros((0, 3), np.float32),
        np.zeros((0, 1), np.int64),
        np.zeros((0, 3), np.float32),
    )
    assert_same(empty, np.zeros((0, 3), np.float32))


@pytest.mark.parametrize(
    "indices_shape, shape",
    [((3, 5, 2), (4, 6, 7)), ((0, 2), (4, 6, 7)), ((4, 3), (3, 4, 2, 2, 2, 2, 2)),
     ((1, 2, 3), (3, 4, 5, 2, 2, 2, 2)), ((6, 7), (2,) * 7)],
    ids=["3x5-rows", "no-rows", "depth3-rank7", "1x2-depth3-rank7", "depth7"],
)  # fmt: skip
def test_scatter_nd_smoke(indices_shape: tuple, shape: tuple) -> None:
    rng = np.random.default_rng(1)
    ix = indices_shape[-1]
    indices = rng.integers(0, shape[:ix], size=indices_shape).astype(np.int64)
    updates = rng.normal(size=indices_shape[:-1] + shape[ix:])
    out = run_fed(mg.scatter_nd, indices, updates, i64(shape))
    assert_same(out, scatter_reference("add", np.zeros(shape), indices, updates))


# -- NaN and signed zeros in Min/Max (semantics.md §5 and Part 1) --------------------------


@pytest.mark.parametrize(
    "builder, tensor, indices, updates, expected",
    [
        (mg.tensor_scatter_nd_min, [1.0], [[0]], [NAN], [1.0]),  # min(1, nan) = 1
        (mg.tensor_scatter_nd_min, [NAN], [[0]], [0.0], [NAN]),  # min(nan, 0) = nan
        (mg.tensor_scatter_nd_max, [1.0], [[0]], [NAN], [1.0]),
        (mg.tensor_scatter_nd_max, [NAN], [[0]], [5.0], [NAN]),
        (mg.tensor_scatter_nd_min, [5.0], [[0], [0], [0]], [NAN, 2.0, NAN], [2.0]),
        (mg.tensor_scatter_nd_max, [0.0], [[0]], [-0.0], [0.0]),  # max(0.0, -0.0) = 0.0
        (mg.tensor_scatter_nd_max, [-0.0], [[0]], [0.0], [-0.0]),
        (mg.tensor_scatter_nd_min, [0.0], [[0]], [-0.0], [0.0]),
        (mg.tensor_scatter_nd_min, [-0.0], [[0], [0]], [0.0, -0.0], [-0.0]),
        (mg.tensor_scatter_nd_min, [5.0], [[0], [0], [0]], [-0.0, 0.0, 1.0], [-0.0]),
        (mg.tensor_scatter_nd_min, [5.0], [[0], [0], [0]], [0.0, -0.0, 1.0], [0.0]),
        (mg.tensor_scatter_nd_max, [-5.0], [[0], [0]], [0.0, -0.0], [0.0]),
        (mg.tensor_scatter_nd_min, [np.inf], [[0]], [NAN], [np.inf]),
        (mg.tensor_scatter_nd_max, [-np.inf], [[0]], [NAN], [-np.inf]),
    ],
)
@pytest.mark.parametrize("slice_width", [0, 3], ids=["elements", "slices"])
def test_min_max_nan_and_signed_zero_rules(
    builder: Any, tensor: list, indices: list, updates: list, expected: list, slice_width: int
) -> None:
    t, u, e = f32(tensor), f32(updates), f32(expected)
    if slice_width:  # the same rule across a row (the [rows, slice] path)
        t, u, e = (np.repeat(a[..., None], slice_width, axis=-1) for a in (t, u, e))
    assert_same(run_fed(builder, t, i32(indices), u), e)


# -- bad_indices_policy ------------------------------------------------------------------


def test_ignore_skips_bad_scatter_rows() -> None:
    out = build_and_run(
        mg.scatter_nd, i32([[6], [1]]), i32([5, 7]), i32([3]), bad_indices_policy="IGNORE"
    )
    assert_same(out, i32([0, 7, 0]))
    for builder, expected in [
        (mg.tensor_scatter_nd_update, [1.0, 2.0, 0.0]),
        (mg.tensor_scatter_nd_add, [1.0, 2.0, 0.0]),
        (mg.tensor_scatter_nd_min, [0.0, 0.0, 0.0]),
        (mg.tensor_scatter_nd_max, [1.0, 2.0, 0.0]),
    ]:
        args = (f32([0, 0, 0]), i32([[0], [3], [-1], [1]]), f32([1, 5, 6, 2]))
        assert_same(build_and_run(builder, *args, bad_indices_policy="IGNORE"), f32(expected))
        assert_same(run_fed(builder, *args, bad_indices_policy="IGNORE"), f32(expected))


def test_ignore_zero_fills_bad_gather_rows() -> None:
    args = (i32([5, 1, 2]), i32([[0], [7], [-1], [2]]))
    assert_same(build_and_run(mg.gather_nd, *args, bad_indices_policy="IGNORE"), i32([5, 0, 0, 2]))
    params = f32([[1, 2], [3, 4]])
    out = run_fed(mg.gather_nd, params, i64([[1], [2], [0]]), bad_indices_policy="IGNORE")
    assert_same(out, f32([[3, 4], [0, 0], [1, 2]]))


@pytest.mark.parametrize("policy", ["", "DEFAULT", "ERROR"])
def test_default_and_error_policies_raise(policy: str) -> None:
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = \[3\]"):
        run_fed(
            mg.tensor_scatter_nd_update,
            f32([0, 0]),
            i32([[0], [3]]),
            f32([1, 2]),
            bad_indices_policy=policy,
        )


@pytest.mark.parametrize(
    "builder, args",
    [
        (mg.scatter_nd, (i32([[0]]), f32([1]), i32([2]))),
        (mg.tensor_scatter_nd_max, (f32([0]), i32([[0]]), f32([1]))),
        (mg.gather_nd, (f32([0]), i32([[0]]))),
    ],
)
def test_unknown_policy_is_rejected_at_build_time(builder: Any, args: tuple) -> None:
    with pytest.raises(errors.InvalidArgumentError, match="bad_indices_policy") as info:
        build_and_run(builder, *args, bad_indices_policy="FOO", name="bad_op")
    assert info.value.node_name == "bad_op"


# -- GatherNd (semantics.md §6 and §9) -------------------------------------------------------


@pytest.mark.parametrize(
    "dtype", [np.float16, np.float32, np.float64, np.int32, np.int64, np.complex64, np.bool_]
)
@pytest.mark.parametrize("index_dtype", [np.int16, np.int32, np.int64])
def test_gather_nd_dtypes(dtype: Any, index_dtype: Any) -> None:
    params = np.array([8, 1, 2, 3, 7, 5]).astype(dtype)
    indices = np.array([[4], [4], [0]], index_dtype)
    assert_same(run_fed(mg.gather_nd, params, indices), params[[4, 4, 0]])


P = np.array([[-8, -1, -2, -3, -7, -5], [8, 1, 2, 3, 7, 5]], np.float32).T


@pytest.mark.parametrize(
    "params, indices, expected",
    [
        (P, i32([4, 1]), f32(7)),
        (P, i32([4]), f32([-7, 7])),
        (P, i32([[4], [4], [0]]), f32([[-7, 7], [-7, 7], [-8, 8]])),
        (P, np.zeros((2, 0), np.int32), np.stack([P, P])),
        (P, i32([[[3], [2], [1]], [[4], [4], [0]]]), P[[[3, 2, 1], [4, 4, 0]]]),
        (np.ones((3, 3), np.float32), np.zeros((0, 2), np.int32), np.zeros(0, np.float32)),
        (np.ones((3, 3), np.float32), np.zeros((0, 1), np.int32), np.zeros((0, 3), np.float32)),
        (np.ones((0, 3), np.float32), np.zeros((0, 2), np.int32), np.zeros(0, np.float32)),
        (P, i64([[0, 0], [1, 1]]), f32([-8, 1])),
    ],
    ids=["element", "row", "rows", "depth0", "rank3-indices", "empty", "empty-rows",
         "empty-params", "int64"],
)  # fmt: skip
def test_gather_nd_cases(params: np.ndarray, indices: np.ndarray, expected: np.ndarray) -> None:
    assert_same(build_and_run(mg.gather_nd, params, indices), expected)
    assert_same(run_fed(mg.gather_nd, params, indices), expected)


@pytest.mark.parametrize("indices_shape", [(2000, 5), (10, 10, 20, 5)])
def test_gather_nd_higher_rank(indices_shape: tuple) -> None:
    rng = np.random.default_rng(2)
    shape = (10, 20, 5, 1, 17)
    params = rng.random(shape)
    columns = [rng.integers(0, s, size=2000) for s in shape]
    indices = np.stack(columns, axis=1).reshape(indices_shape)
    expected = params[tuple(columns)].reshape(indices_shape[:-1])
    assert_same(run_fed(mg.gather_nd, params, indices), expected)


# -- Errors: type, TensorFlow's message, the node's name ------------------------------------

Z = np.zeros


def _err(builder: Any, args: tuple, build_msg: str, run_msg: str | None = None, id: str = ""):
    return pytest.param(builder, args, build_msg, build_msg if run_msg is None else run_msg, id=id)


TSU, SND, GND = mg.tensor_scatter_nd_update, mg.scatter_nd, mg.gather_nd
RANK0 = "Shape must be at least rank 1 but is rank 0"
PREFIX_BUILD = (
    "Dimensions [0,2) of indices[shape=[3,2,2]] = [3,2] must match dimensions [0,2) of "
    "updates[shape=[2,2,2]] = [2,2]: Dimension 0 in both shapes must be equal, but are 3 "
    "and 2. Shapes are [3,2] and [2,2]."
)
SUFFIX_BUILD = (
    "Dimensions [1,3) of input[shape=[2,2,2]] = [2,2] must match dimensions [2,2) of "
    "updates[shape=[2,2]] = []: Shapes must be equal rank, but are 2 and 0"
)
ERRORS = [
    # TensorScatter*
    _err(TSU, (f32([1, 2]), i32(0), f32([1])), RANK0,
         "Indices shape must have rank at least one. Found:[]", id="ts-indices-scalar"),
    _err(TSU, (f32([1, 2]), i32([[0]]), f32(1)), RANK0,
         "Updates shape must have rank at least one. Found:[]", id="ts-updates-scalar"),
    _err(TSU, (f32(1), i32([[0]]), f32([1])), RANK0,
         "Inner dimensions of output shape must match inner dimensions of updates shape. "
         "Output: [] updates: [1]", id="ts-tensor-scalar"),
    _err(TSU, (Z((0, 3), np.float32), i32([[0]]), f32([[1, 2, 3]])),
         "Indices and updates specified for empty input",
         "Indices and updates specified for empty output shape", id="ts-empty-output"),
    _err(TSU, (Z((2, 2, 2), np.float32), Z((3, 2, 2), np.int32), Z((2, 2, 2), np.float32)),
         PREFIX_BUILD, "Outer dimensions of indices and update must match. Indices shape: "
         "[3,2,2], updates shape:[2,2,2]", id="ts-outer"),
    _err(TSU, (Z((2, 2, 2), np.float32), Z((2, 2, 1), np.int32), Z((2, 2), np.float32)),
         SUFFIX_BUILD, "Inner dimensions of output shape must match inner dimensions of "
         "updates shape. Output: [2,2,2] updates: [2,2]", id="ts-inner-rank"),
    _err(TSU, (Z((2, 2), np.float32), i32([[0]]), Z((1, 3), np.float32)),
         "Dimensions [1,2) of input[shape=[2,2]] = [2] must match dimensions [1,2) of "
         "updates[shape=[1,3]] = [3]: Dimension 0 in both shapes must be equal, but are 2 "
         "and 3. Shapes are [2] and [3].",
         "The inner 1 dimensions of output.shape=[2,2] must match the inner 1 dimensions of "
         "updates.shape=[1,3]", id="ts-inner-dims"),
    _err(TSU, (Z((3, 3), np.float32), i32([1]), f32([1, 2, 3])),
         "Dimensions [0,1) of indices[shape=[1]] = 1 must match dimensions [0,1) of "
         "updates[shape=[3]] = 3", id="ts-rank1-indices"),
    _err(TSU, (Z((3, 1), np.float32), i32([1]), f32([1])),
         "Dimensions [1,2) of input[shape=[3,1]] must match dimensions [1,1) of "
         "updates[shape=[1]]", id="ts-rank1-indices-suffix"),
    _err(TSU, (Z(2, np.float32), i32([[0, 1]]), f32([1])),
         "Inner dimensions of output shape must match inner dimensions of updates shape. "
         "Output: [2] updates: [1]", id="ts-depth-above-rank"),
    _err(TSU, (Z(3, np.float32), Z((0, 0), np.int32), Z((0, 3), np.float32)),
         "Only indices.shape[-1] values between 1 and 1 are currently supported.  "
         "Requested rank: 0", id="ts-depth0"),
    _err(TSU, (Z(3, np.float32), Z((2, 0), np.int32), Z((2, 3), np.float32)),
         "Indices and updates specified for empty output shape", id="ts-depth0-with-updates"),
    _err(TSU, (Z(6, np.float32), i32([[-1], [0], [7]]), f32([1, 2, 3])),
         "indices[0] = [-1] does not index into shape [6]", id="ts-negative-first"),
    _err(mg.tensor_scatter_nd_add, (Z(6, np.float32), i32([[2], [0], [6], [9]]), f32([1] * 4)),
         "indices[2] = [6] does not index into shape [6]", id="ts-add-first-of-two"),
    _err(mg.tensor_scatter_nd_min, (Z((2, 3), np.float32), i32([[[0, 0], [1, 3]]]), f32([[1, 2]])),
         "indices[0,1] = [1, 3] does not index into shape [2,3]", id="ts-min-multi-index"),
    _err(mg.tensor_scatter_nd_sub, (Z((2, 3), np.float32), i64([[5]]), f32([[1, 2, 3]])),
         "indices[0] = [5] does not index into shape [2,3]", id="ts-sub-int64"),
    # ScatterNd
    _err(SND, (i32(0), f32([1]), i32([3])), RANK0,
         "Indices shape must have rank at least one. Found:[]", id="nd-indices-scalar"),
    _err(SND, (i32([[0]]), f32(1), i32([3])), RANK0,
         "Updates shape must have rank at least one. Found:[]", id="nd-updates-scalar"),
    _err(SND, (Z((3, 2, 2), np.int32), Z((2, 2, 2), np.float32), i32([2, 2, 2])), PREFIX_BUILD,
         "Dimensions [0,2) of indices[shape=[3,2,2]] must match dimensions [0,2) of "
         "updates[shape=[2,2,2]]", id="nd-prefix"),
    _err(SND, (Z((2, 2, 1), np.int32), Z((2, 2), np.float32), i32([2, 2, 2])), SUFFIX_BUILD,
         "Dimensions [1,3) of input[shape=[2,2,2]] must match dimensions [2,2) of "
         "updates[shape=[2,2]]", id="nd-suffix"),
    _err(SND, (i32([0]), f32([0]), i32([1])),
         "Dimensions [1,1) of input[shape=[1]] = [] must match dimensions [0,1) of "
         "updates[shape=[1]] = [1]: Shapes must be equal rank, but are 0 and 1",
         "Dimensions [1,1) of input[shape=[1]] must match dimensions [0,1) of "
         "updates[shape=[1]]", id="nd-rank1-indices"),
    _err(SND, (i32([[0]]), Z((1, 3, 2), np.float32), i32([0, 3, 2])),
         "Indices and updates specified for empty input",
         "Indices and updates specified for empty output.  indices shape: [1,1]",
         id="nd-empty-output"),
    _err(SND, (i32([[0]]), f32([1]), Z(0, np.int32)),
         "Indices and updates specified for empty output shape", id="nd-empty-shape-vector"),
    _err(SND, (Z((2, 0), np.int32), Z((2, 3), np.float32), i32([3])),
         "Indices and updates specified for empty output shape", id="nd-depth0-with-updates"),
    _err(SND, (i32([[0]]), f32([1]), i32([[2]])), "Shape must be rank 1 but is rank 2",
         "Shape must be a vector", id="nd-shape-matrix"),
    _err(SND, (i32([[0]]), f32([1]), i32([-2])), "Invalid value in tensor used for shape: -2",
         "Dimension -2 must be >= 0", id="nd-negative-dim"),
    _err(SND, (i32([[0, 1]]), f32([1]), i32([2])),
         "Dimensions [2,1) of input[shape=[2]] must match dimensions [1,1) of "
         "updates[shape=[1]]", id="nd-depth-above-rank"),
    _err(SND, (i32([[-1], [0], [7]]), f32([1, 2, 3]), i32([6])),
         "indices[0] = [-1] does not index into shape [6]", id="nd-negative-first"),
    _err(SND, (i64([[0], [1], [7]]), f32([1, 2, 3]), i64([6])),
         "indices[2] = [7] does not index into shape [6]", id="nd-int64"),
    # GatherNd
    _err(GND, (f32([1, 2]), i32(0)), RANK0, "indices must be at least a vector",
         id="gather-indices-scalar"),
    _err(GND, (f32(5), Z((1, 0), np.int32)), "params must be at least a vector",
         id="gather-params-scalar"),
    _err(GND, (f32([1, 2]), i32([[0, 1]])),
         "indices.shape[-1] must be <= params.rank, but saw indices shape: [1,2] and params "
         "shape: [2]",
         "index innermost dimension length must be <= params rank; saw: 2 vs. 1",
         id="gather-too-deep"),
    _err(GND, (Z((0, 3), np.float32), Z((1, 2), np.int32)),
         "Requested more than 0 entries, but params is empty.  Params shape: [0,3]",
         id="gather-params-empty"),
    _err(GND, (f32([0, 1, 2]), i32([[[0], [7]]])),
         "indices[0,1] = [7] does not index into param shape [3], node name: bad_op",
         id="gather-oob"),
    _err(GND, (f32([[0, 1, 2]]), i32([[[0], [0], [1]]])),
         "indices[0,2] = [1] does not index into param shape [1,3]", id="gather-oob-2d"),
    _err(GND, (f32([0, 1, 2]), i32([7])),
         "indices = [7] does not index into param shape [3]", id="gather-rank1-indices"),
    _err(GND, (f32([5, 1, 2]), i64([[0], [-1], [7]])),
         "indices[1] = [-1] does not index into param shape [3]", id="gather-negative-first"),
]  # fmt: skip


@pytest.mark.parametrize("builder, args, build_msg, run_msg", ERRORS)
def test_errors_at_build_time(builder: Any, args: tuple, build_msg: str, run_msg: str) -> None:
    # Constant inputs: shapes (and index values) are known when the node is made.
    g = mg.Graph()
    with g.as_default(), pytest.raises(errors.InvalidArgumentError) as info:
        builder(*args, name="bad_op")
    assert build_msg in info.value.message
    assert info.value.node_name == "bad_op" and "bad_op" in str(info.value)


@pytest.mark.parametrize("builder, args, build_msg, run_msg", ERRORS)
def test_errors_at_run_time(builder: Any, args: tuple, build_msg: str, run_msg: str) -> None:
    # Placeholders of unknown shape: the kernel finds the same problem, in its own words.
    with pytest.raises(errors.InvalidArgumentError) as info:
        run_fed(builder, *args, name="bad_op")
    assert run_msg in info.value.message
    assert info.value.node_name == "bad_op" and "bad_op" in str(info.value)


def test_unknown_dim_in_constant_shape_fails_at_run_time() -> None:
    g = mg.Graph()
    with g.as_default():
        out = mg.scatter_nd(i32([[0]]), f32([1]), i32([-1]), name="bad_op")
    assert out.shape.as_list() == [None]
    with pytest.raises(errors.InvalidArgumentError, match="Dimension -1 must be >= 0") as info:
        mg.Session(g).run(out)
    assert info.value.node_name == "bad_op"


@pytest.mark.parametrize(
    "shape",
    [[2**40, 2**40], [2**62, 4]],
    ids=["too-many-bytes", "count-past-int64"],
)
def test_huge_scatter_nd_output_is_resource_exhausted(shape: list) -> None:
    with pytest.raises(errors.ResourceExhaustedError) as info:
        build_and_run(mg.scatter_nd, i64([[0, 0]]), f32([1]), i64(shape), name="huge")
    assert info.value.node_name == "huge" and "huge" in str(info.value)


@pytest.mark.parametrize(
    "builder, args, message",
    [
        (mg.tensor_scatter_nd_update, (f32([0]), np.array([[0]], np.int16), f32([1])), "Tindices"),
        (mg.scatter_nd, (np.array([[0]], np.int16), f32([1]), np.array([1], np.int16)), "Tindices"),
        (mg.tensor_scatter_nd_add, (np.array([True]), i32([[0]]), np.array([True])), "'T'"),
        (mg.tensor_scatter_nd_min, (np.array([1j]), i32([[0]]), np.array([1j])), "'T'"),
        (mg.scatter_nd, (i32([[0]]), f32([1]), i64([2])), "int64"),
        (mg.tensor_scatter_nd_update, (f32([0]), i32([[0]]), i32([1])), "int32"),
    ],
    ids=["update-int16", "scatter_nd-int16", "add-bool", "min-complex", "shape-dtype",
         "updates-dtype"],
)  # fmt: skip
def test_dtype_constraints(builder: Any, args: tuple, message: str) -> None:
    g = mg.Graph()
    with g.as_default(), pytest.raises(errors.InvalidArgumentError, match=message) as info:
        builder(*(mg.constant(a) for a in args), name="bad_op")
    assert info.value.node_name == "bad_op"


# -- Shape inference -------------------------------------------------------------------------


def test_shape_inference() -> None:
    g = mg.Graph()
    with g.as_default():
        unknown = mg.placeholder(mg.int32)
        x = mg.placeholder(mg.float32, [None, 3])
        assert mg.scatter_nd(unknown, [1.0], [4, 5]).shape.as_list() == [4, 5]
        assert mg.scatter_nd([[0]], mg.placeholder(mg.float32), [4]).shape.as_list() == [4]
        length2 = mg.placeholder(mg.int32, [2])
        assert mg.scatter_nd([[0]], [[1.0, 2.0]], length2).shape.as_list() == [None, None]
        assert mg.scatter_nd([[0]], [1.0], mg.placeholder(mg.int32)).shape.rank is None
        assert mg.scatter_nd([[0]], [[1.0]], [-1, 1]).shape.as_list() == [None, 1]
        three = mg.placeholder(mg.int32, [2, 2, 2])
        assert (
            mg.scatter_nd(three, mg.placeholder(mg.float32, [2, 2, 2]), [2, 2, 2]).shape == [2] * 3
        )
        assert mg.tensor_scatter_nd_update(x, [[0]], [[1.0, 2.0, 3.0]]).shape.as_list() == [None, 3]
        assert mg.tensor_scatter_nd_max(x, unknown, mg.placeholder(mg.float32)).shape == [None, 3]
        assert mg.gather_nd(x, [[0]]).shape.as_list() == [1, 3]
        assert mg.gather_nd(x, unknown).shape.rank is None
        assert mg.gather_nd(mg.placeholder(mg.float32), [[0]]).shape.rank is None
        assert mg.gather_nd(x, mg.placeholder(mg.int32, [4, None, 2])).shape.as_list() == [4, None]
        assert mg.gather_nd(x, [1, 2]).shape.as_list() == []


def test_rank1_indices_with_partly_known_shapes_fail_at_run_time() -> None:
    # Part 1 rejects rank-1 indices at build time once every shape is known; with an
    # unknown dim the kernel rejects them.
    with pytest.raises(errors.InvalidArgumentError, match=r"Dimensions \[0,1\) of indices"):
        g = mg.Graph()
        with g.as_default():
            x = mg.placeholder(mg.float32, [None, 3])
            out = mg.tensor_scatter_nd_update(x, [1], [1.0, 2.0, 3.0])
        mg.Session(g).run(out, {x: np.zeros((3, 3), np.float32)})


# -- Forwarding: in place only when the executor hands over the tensor's buffer --------------


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> dict:
    """Wraps TensorScatterUpdate's kernels; records whether they wrote in place."""
    op_def = OPS["TensorScatterUpdate"]
    seen: dict = {"calls": []}

    def wrap(real: Any) -> Any:
        def kernel(ctx: Any, tensor: Any, indices: Any, updates: Any) -> Any:
            out = real(ctx, tensor, indices, updates)
            seen["calls"].append((tuple(sorted(ctx.forwardable)), out is tensor))
            return out

        return kernel

    for device, real in list(op_def.kernels.items()):
        monkeypatch.setitem(op_def.kernels, device, wrap(real))
    return seen


def test_forwardable_intermediate_is_updated_in_place(spy: dict) -> None:
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [4])
        t = x + 1.0  # a fresh buffer whose only consumer is the scatter
        y = mg.tensor_scatter_nd_update(t, [[1]], [9.0])
    fed = np.zeros(4, np.float32)
    out = mg.Session(g).run(y, {x: fed})
    assert spy["calls"] == [((0,), True)]
    assert_same(out, f32([1, 9, 1, 1]))
    assert_same(fed, np.zeros(4, np.float32))


def test_fed_tensor_is_not_touched(spy: dict, any_device: str) -> None:
    fed = np.zeros(4, np.float32)
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [4])
        y = mg.tensor_scatter_nd_update(x, [[1]], [9.0])
    assert_same(mg.Session(g).run(y, {x: fed}), f32([0, 9, 0, 0]))
    assert_same(fed, np.zeros(4, np.float32))
    # On a GPU the kernel gets a private device copy of the feed, which it may reuse.
    assert spy["calls"] == ([((), False)] if any_device != "gpu" else [((0,), True)])


def test_constant_tensor_is_not_touched(spy: dict) -> None:
    g = mg.Graph()
    with g.as_default():
        c = mg.constant(f32([0, 0, 0]))
        y = mg.tensor_scatter_nd_add(c, [[1]], [2.0])
        z = mg.tensor_scatter_nd_update(c, [[0]], [5.0])
    sess = mg.Session(g)
    for _ in range(2):  # a mutated constant would show on the second run
        assert_same(sess.run(y), f32([0, 2, 0]))
        assert_same(sess.run(z), f32([5, 0, 0]))
    assert_same(sess.run(c), f32([0, 0, 0]))
    assert all(not in_place for _, in_place in spy["calls"])


def test_tensor_with_another_consumer_is_not_touched(spy: dict) -> None:
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [3])
        t = x + 1.0
        y = mg.tensor_scatter_nd_update(t, [[2]], [7.0])
        other = t * 2.0  # a second consumer of t
    fed = f32([0, 1, 2])
    out, doubled = mg.Session(g).run([y, other], {x: fed})
    assert_same(out, f32([1, 2, 7]))
    assert_same(doubled, f32([2, 4, 6]))
    assert spy["calls"] == [((), False)]


def test_fetched_tensor_is_not_touched(spy: dict) -> None:
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [3])
        t = x + 1.0
        y = mg.tensor_scatter_nd_update(t, [[2]], [7.0])
    out, t_value = mg.Session(g).run([y, t], {x: f32([0, 1, 2])})
    assert_same(out, f32([1, 2, 7]))
    assert_same(t_value, f32([1, 2, 3]))
    assert not spy["calls"][0][1]


def test_only_the_tensor_buffer_becomes_the_output(spy: dict, any_device: str) -> None:
    # ``updates`` has the tensor's shape and may be forwarded; it must not be written.
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [2])
        u = mg.placeholder(mg.float32, [2])
        y = mg.tensor_scatter_nd_update(x, [[1], [0]], u + 0.0)
    fed = f32([5, 6])
    assert_same(mg.Session(g).run(y, {x: fed, u: f32([1, 2])}), f32([2, 1]))
    assert_same(fed, f32([5, 6]))
    # On a GPU the feed's private device copy (input 0) may become the output.
    assert spy["calls"] == ([((2,), False)] if any_device != "gpu" else [((0, 2), True)])


# -- API surface --------------------------------------------------------------------------------


def test_declarations() -> None:
    policy = ("", "DEFAULT", "ERROR", "IGNORE")
    for name in [
        "ScatterNd",
        "TensorScatterUpdate",
        "TensorScatterAdd",
        "TensorScatterSub",
        "TensorScatterMin",
        "TensorScatterMax",
        "GatherNd",
    ]:
        op_def = mg.registered_ops()[name]
        attr = op_def.attr("bad_indices_policy")
        assert attr.allowed == policy and attr.default == ""
        assert op_def.kernel_devices == {"CPU", "GPU"}
        assert "Example" in op_def.doc and ">>>" in op_def.doc
        allowed = {d.name for d in op_def.attr("Tindices").allowed}
        assert allowed == (
            {"int16", "int32", "int64"} if name == "GatherNd" else {"int32", "int64"}
        )
        types = {d.name for d in op_def.attr("Tparams" if name == "GatherNd" else "T").allowed}
        assert ("bool" in types) == (name in {"ScatterNd", "TensorScatterUpdate", "GatherNd"})
        assert ("complex64" in types) != (name in {"TensorScatterMin", "TensorScatterMax"})
    assert mg.registered_ops()["ScatterNd"].host_inputs == {"shape"}
    assert set(scatter_ops.__all__) >= set(scatter_ops.BUILDERS) | {"ScatterNd"}
    assert set(gather_ops.__all__) >= set(gather_ops.BUILDERS) | {"GatherNd"}
    for family in (scatter_ops, gather_ops):
        for name in family.BUILDERS:
            assert getattr(mg, name) is getattr(family, name)


def test_builders_take_name_positionally() -> None:
    g = mg.Graph()
    with g.as_default():
        a = mg.scatter_nd([[0]], [1.0], [2], "a")
        b = mg.tensor_scatter_nd_sub([1.0], [[0]], [1.0], "b")
        c = mg.gather_nd([1.0], [[0]], "c")
        d = mg.tensor_scatter_nd_update([1.0], [[0]], [2.0])
    assert [x.op.name for x in (a, b, c, d)] == ["a", "b", "c", "TensorScatterUpdate"]
    assert a.op.type == "ScatterNd" and a.op.node.attrs["bad_indices_policy"] == ""


def test_cpp_style_classes() -> None:
    root = mg.Scope.new_root_scope()
    t = ops.Const(root, f32([0, 0, 0]))
    upd = ops.TensorScatterUpdate(
        root.with_op_name("upd"),
        t,
        ops.Const(root, [[7]]),
        ops.Const(root, f32([1])),
        bad_indices_policy="IGNORE",
    )
    add = ops.TensorScatterAdd(root, upd, ops.Const(root, [[1]]), ops.Const(root, f32([2])))
    nd = ops.ScatterNd(
        root, ops.Const(root, [[1]]), ops.Const(root, f32([3])), ops.Const(root, [3])
    )
    gathered = ops.GatherNd(root, nd, ops.Const(root, [[1], [0]]))
    low = ops.TensorScatterMin(root, add.output, ops.Const(root, [[0]]), ops.Const(root, f32([-1])))
    high = ops.TensorScatterMax(root, low, ops.Const(root, [[2]]), ops.Const(root, f32([4])))
    sub = ops.TensorScatterSub(root, high, ops.Const(root, [[2]]), ops.Const(root, f32([1])))
    assert upd.operation.name == "upd" and upd.node().type_string == "TensorScatterUpdate"
    results = mg.ClientSession(root).run([add.output, nd.output, gathered.output, sub.output])
    for got, want in zip(results, [f32([0, 2, 0]), f32([0, 3, 0]), f32([3, 0]), f32([-1, 2, 3])]):
        assert_same(got, want)


# -- Properties: against the Python loops, for random shapes, dtypes and indices -------------

SCATTER_DTYPES = {
    "update": [np.float16, np.float32, np.float64, np.int8, np.uint8, np.int64, np.bool_,
               np.complex64],
    "add": [np.float16, np.float32, np.float64, np.int8, np.uint8, np.int32, np.int64,
            np.complex64],
    "sub": [np.float32, np.float64, np.uint8, np.int32, np.complex128],
    "min": [np.float16, np.float32, np.float64, np.int8, np.uint8, np.int32, np.int64],
    "max": [np.float16, np.float32, np.float64, np.int8, np.uint16, np.int32, np.int64],
    "scatter_nd": [np.float32, np.float64, np.int32, np.uint8, np.bool_, np.complex64],
}  # fmt: skip
SPECIAL_FLOATS = np.array([0.0, -0.0, 1.0, -1.0, 2.5, np.nan, np.inf, -np.inf])


def random_values(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)  # the full range, so sums wrap
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    if dtype.kind == "c":
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)
    mixed = np.where(
        rng.random(shape) < 0.5, rng.choice(SPECIAL_FLOATS, shape), rng.normal(size=shape)
    )
    return mixed.astype(dtype)


@st.composite
def scatter_cases(draw: Any, rule: str) -> dict:
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))
    ix = draw(st.integers(1, rank))
    batch = draw(st.lists(st.integers(0, 5), min_size=1, max_size=2))
    if math.prod(shape) == 0:
        batch[0] = 0  # nothing can go into an empty output
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    index_dtype = draw(st.sampled_from([np.int32, np.int64]))
    high = np.maximum(np.array(shape[:ix]), 1)
    indices = rng.integers(0, high, size=tuple(batch) + (ix,)).astype(index_dtype)
    ignore = draw(st.booleans())
    if ignore and indices.size:  # some rows out of range, some negative
        bad = rng.random(indices.shape) < 0.2
        indices = np.where(bad, rng.choice([-1, -3, 5, 9], indices.shape), indices)
        indices = indices.astype(index_dtype)
    dtype = draw(st.sampled_from(SCATTER_DTYPES[rule]))
    updates = random_values(rng, tuple(batch) + shape[ix:], dtype)
    tensor = random_values(rng, shape, dtype)
    return dict(
        tensor=tensor,
        indices=indices,
        updates=updates,
        ignore=ignore,
        constants=draw(st.booleans()),
    )


def run_case(builder: Any, inputs: tuple, constants: bool, **kwargs: Any) -> Any:
    return (
        build_and_run(builder, *inputs, **kwargs)
        if constants
        else run_fed(builder, *inputs, **kwargs)
    )


@pytest.mark.parametrize("rule", ["update", "add", "sub", "min", "max"])
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_tensor_scatter_matches_the_loop(rule: str, data: Any, any_device: str) -> None:
    case = data.draw(scatter_cases(rule))
    tensor, indices, updates = case["tensor"], case["indices"], case["updates"]
    builder = getattr(mg, f"tensor_scatter_nd_{rule}")
    policy = "IGNORE" if case["ignore"] else ""
    out = run_case(
        builder, (tensor, indices, updates), case["constants"], bad_indices_policy=policy
    )
    assert_scatter_result(any_device, rule, out, tensor, indices, updates)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_scatter_nd_matches_the_loop(data: Any, any_device: str) -> None:
    case = data.draw(scatter_cases("scatter_nd"))
    tensor, indices, updates = case["tensor"], case["indices"], case["updates"]
    shape = np.array(tensor.shape, indices.dtype)
    policy = "IGNORE" if case["ignore"] else ""
    out = run_case(
        mg.scatter_nd, (indices, updates, shape), case["constants"], bad_indices_policy=policy
    )
    assert_scatter_result(any_device, "add", out, np.zeros_like(tensor), indices, updates)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_bad_scatter_rows_name_the_first(data: Any) -> None:
    case = data.draw(scatter_cases("update"))
    tensor, indices, updates = case["tensor"], case["indices"], case["updates"]
    expected = first_bad_row(indices, tensor.shape) if tensor.size else None
    if expected is None:
        out = run_fed(mg.tensor_scatter_nd_update, tensor, indices, updates)
        assert_same(out, scatter_reference("update", tensor, indices, updates))
        return
    message = f"{expected} does not index into shape [{','.join(map(str, tensor.shape))}]"
    with pytest.raises(errors.InvalidArgumentError) as info:
        run_case(
            mg.tensor_scatter_nd_update,
            (tensor, indices, updates),
            case["constants"],
            name="bad_op",
        )
    assert info.value.message == message and info.value.node_name == "bad_op"


@st.composite
def gather_cases(draw: Any) -> dict:
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))
    ix = draw(st.integers(0, rank))
    batch = draw(st.lists(st.integers(0, 5), min_size=0, max_size=2))
    if math.prod(shape) == 0 and batch:
        batch[0] = 0  # no entry can come from empty params
    elif math.prod(shape) == 0:
        batch = [0]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    index_dtype = draw(st.sampled_from([np.int16, np.int32, np.int64]))
    indices = rng.integers(0, np.maximum(np.array(shape[:ix], int), 1), size=tuple(batch) + (ix,))
    ignore = draw(st.booleans())
    if ignore and indices.size:
        indices = np.where(rng.random(indices.shape) < 0.2, -2, indices)
    dtype = draw(
        st.sampled_from([np.float32, np.float64, np.int8, np.int64, np.bool_, np.complex64])
    )
    return dict(
        params=random_values(rng, shape, dtype),
        indices=indices.astype(index_dtype),
        ignore=ignore,
        constants=draw(st.booleans()),
    )


@settings(max_examples=80, deadline=None)
@given(case=gather_cases())
def test_gather_nd_matches_the_loop(case: dict) -> None:
    params, indices = case["params"], case["indices"]
    expected = gather_reference(params, indices)
    policy = "IGNORE" if case["ignore"] else ""
    bad = first_bad_row(indices, params.shape) if indices.shape[-1] else None
    if bad is not None and not case["ignore"]:
        with pytest.raises(errors.InvalidArgumentError, match="does not index into param shape"):
            run_case(mg.gather_nd, (params, indices), case["constants"])
        return
    out = run_case(mg.gather_nd, (params, indices), case["constants"], bad_indices_policy=policy)
    assert_same(out, expected)


def test_the_gpu_sum_tolerance_still_catches_wrong_sums() -> None:
    f32 = np.float32
    scale = np.array([3.0, 3.0])
    assert_sums_close(np.array([1.0, 2.0], f32), np.array([1.0, 2.0], f32), scale, 3)
    close = np.nextafter(f32(2.0), f32(3.0))  # one ulp off: another summation order
    assert_sums_close(np.array([1.0, close], f32), np.array([1.0, 2.0], f32), scale, 3)
    # 1e8 + -1 + -1e8 is 0 in index order but -1 in another; tiny next to the terms.
    assert_sums_close(np.array([-1.0], f32), np.array([0.0], f32), np.array([2e8]), 3)
    cases = [  # (actual, expected)
        ([1.0, 2.001], [1.0, 2.0]),
        ([1.0, -2.0], [1.0, 2.0]),
        ([np.nan, 2.0], [1.0, 2.0]),
        ([-0.0, 2.0], [0.0, 2.0]),
        ([0.5, 2.0], [0.0, 2.0]),
        ([np.inf, 2.0], [1.0, 2.0]),
    ]
    for wrong, expected in cases:
        with pytest.raises(AssertionError):
            assert_sums_close(np.array(wrong, f32), np.array(expected, f32), scale, 3)
