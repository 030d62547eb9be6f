"""Repeated indices (ops/duplicates.py) and the simulated GPU's CuPy limits.

Each helper runs on NumPy and on the simulated CuPy, whose ``put`` lets any one of
repeated indices win, as racing GPU writes may; references are plain Python loops.
"""

import numpy as np
import pytest

from minigraph.cupy_limits import has_atomic_at
from minigraph.ops.duplicates import occurrences, reduce_by_key, winners
from minigraph.simulated_gpu import xp as sim

MODULES = pytest.mark.parametrize("xp", [np, sim], ids=["numpy", "simulated-cupy"])


def _reference_occurrences(flat, last):
    seen = {}
    for j, v in enumerate(flat.tolist()):
        if last or v not in seen:
            seen[v] = j
    return np.isin(np.arange(flat.size), list(seen.values()))


@MODULES
@pytest.mark.parametrize("last", [True, False])
@pytest.mark.parametrize("n_slots", [50, 100_000])  # a table; sorting (sparse indices)
def test_occurrences_first_and_last(xp, last, n_slots):
    rng = np.random.default_rng(0)
    flat = rng.integers(0, 50, 500).astype(np.intp)
    mask = occurrences(xp, flat, n_slots, last)
    np.testing.assert_array_equal(mask, _reference_occurrences(flat, last))


@MODULES
@pytest.mark.parametrize("last", [True, False])
@pytest.mark.parametrize("n_slots", [50, 100_000])
def test_winners_point_at_the_kept_occurrence(xp, last, n_slots):
    rng = np.random.default_rng(4)
    flat = rng.integers(0, 50, 300).astype(np.intp)
    kept = {}
    for j, v in enumerate(flat.tolist()):
        if last or v not in kept:
            kept[v] = j
    np.testing.assert_array_equal(winners(xp, flat, n_slots, last), [kept[v] for v in flat])


@pytest.mark.parametrize("last", [True, False])
def test_the_table_comes_from_the_given_allocator(last):
    # Kernels pass ctx.empty, whose large buffers are kept from run to run; the table it
    # gives holds garbage where flat names no slot, as a pooled buffer may.
    rng = np.random.default_rng(8)
    flat = rng.integers(0, 50, 300).astype(np.intp)
    asked = []

    def garbage(shape, dtype):
        asked.append((shape, np.dtype(dtype)))
        return np.full(shape, 123456, dtype)

    expected = _reference_occurrences(flat, last)
    np.testing.assert_array_equal(occurrences(np, flat, 60, last, empty=garbage), expected)
    assert asked == [((60,), np.dtype(np.uint32))]


@MODULES
def test_occurrences_none_without_repeats(xp):
    assert occurrences(xp, np.array([3, 1, 2], np.intp), 4, last=True) is None
    assert occurrences(xp, np.array([7], np.intp), 8, last=False) is None


def test_the_simulated_put_does_not_write_in_order():
    table = np.zeros(1, np.int64)
    winners = set()
    for n in range(2, 12):
        sim.put(table, np.zeros(n, np.intp), np.arange(n))
        winners.add(int(table[0]) == n - 1)
    assert winners == {True, False}  # sometimes the last, as NumPy, sometimes another


def _reference_reduce(keys, values, fold):
    out = {}
    for k, v in zip(keys.tolist(), values):
        out[k] = v if k not in out else fold(out[k], v)
    ks = sorted(out)
    return np.array(ks), np.array([out[k] for k in ks])


@MODULES
@pytest.mark.parametrize("row", [(), (3,)])
def test_reduce_by_key_sums_integers_exactly(xp, row):
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 9, 1000)
    keys[:300] = 4  # one long run: nine rounds
    values = rng.integers(-1000, 1000, (1000, *row)).astype(np.int64)
    got_keys, got = reduce_by_key(xp, keys, values.copy(), xp.add)
    want_keys, want = _reference_reduce(keys, values, lambda a, b: a + b)
    np.testing.assert_array_equal(got_keys, want_keys)
    np.testing.assert_array_equal(got, want)


@MODULES
def test_reduce_by_key_keeps_the_earliest_of_equal_extremes(xp):
    # min that keeps the left operand on ties: -0.0 then 0.0 keeps -0.0, and back.
    keys = np.array([1, 0, 1, 0, 1, 1, 0])
    values = np.array([0.0, -0.0, -0.0, 0.0, 2.0, -0.0, 5.0])
    _, got = reduce_by_key(xp, keys, values.copy(), lambda a, b: xp.where(b < a, b, a))
    np.testing.assert_array_equal(np.signbit(got), [True, False])  # key 0: -0.0; key 1: 0.0


@MODULES
def test_reduce_by_key_of_nothing(xp):
    keys, values = reduce_by_key(xp, np.zeros(0, np.intp), np.zeros((0, 2)), xp.add)
    assert keys.shape == (0,) and values.shape == (0, 2)


@MODULES
def test_reduce_by_key_leaves_its_inputs_alone(xp):
    keys, values = np.array([1, 0, 1]), np.array([1.0, 2.0, 3.0])
    reduce_by_key(xp, keys, values, xp.add)
    np.testing.assert_array_equal(keys, [1, 0, 1])
    np.testing.assert_array_equal(values, [1.0, 2.0, 3.0])


@MODULES
def test_reduce_by_key_sums_floats_pairwise(xp):
    # Key 0's rows 1, 1e8, -1e8, 1 fold as (1 + 1e8) + (-1e8 + 1) = 0 in float32 (1 + 1e8
    # rounds to 1e8), where a left-to-right loop gives 1: the order is fixed, and pairwise.
    keys = np.array([0, 1, 0, 0, 0])
    values = np.array([1, 5, 1e8, -1e8, 1], np.float32)
    got_keys, got = reduce_by_key(xp, keys, values, xp.add)
    np.testing.assert_array_equal(got_keys, [0, 1])
    np.testing.assert_array_equal(got, np.array([0, 5], np.float32))


def test_the_simulated_cupy_has_only_cupys_scatter_ufuncs():
    a = np.zeros(3, np.float32)
    with pytest.raises(NotImplementedError, match="multiply.at"):
        sim.multiply.at(a, [0], 1)
    with pytest.raises(TypeError, match="float32"):
        sim.subtract.at(a, [0], 1)  # CuPy's subtract.at: int32 and uint32 only
    with pytest.raises(TypeError, match="int64"):
        sim.add.at(np.zeros(3, np.int64), [0], 1)  # CuPy 13: no int64 atomicAdd
    with pytest.raises(NotImplementedError, match="minimum.reduceat"):
        sim.minimum.reduceat(a, [0, 1])
    with pytest.raises(ValueError, match="stably"):
        sim.argsort(a, kind="quicksort")
    with pytest.raises(AttributeError, match="errstate"):
        sim.errstate  # noqa: B018
    sim.add.at(a, [0, 0], 1)
    np.testing.assert_array_equal(a, [2, 0, 0])


def test_atomic_dtypes_and_sizes():
    assert has_atomic_at("add", np.float16) and not has_atomic_at("maximum", np.float16)
    assert not has_atomic_at("add", np.int64) and not has_atomic_at("subtract", np.float32)
    assert has_atomic_at("subtract", np.int32) and not has_atomic_at("multiply", np.int32)
    assert has_atomic_at("add", np.float32, 2**31 - 1)
    assert not has_atomic_at("add", np.float32, 2**31)  # CuPy 13's scatter extents: int32


def test_past_cupys_int32_extents_the_gpu_path_sorts_instead(monkeypatch):
    import minigraph as mg
    from minigraph import cupy_limits

    monkeypatch.setattr(cupy_limits, "AT_MAX_ELEMENTS", 10)  # the simulated .at refuses more
    monkeypatch.setattr(mg.config, "simulated_gpu", lambda: True)
    rng = np.random.default_rng(6)
    idx = rng.integers(0, 20, (200, 1)).astype(np.int32)
    upd = rng.integers(-50, 50, 200).astype(np.float32)  # integral: exact in any order
    g = mg.Graph()
    with g.as_default():
        add = mg.tensor_scatter_nd_add(mg.zeros([20]), idx, upd)
        last = mg.tensor_scatter_nd_update(mg.zeros([20]), idx, upd)
    got_add, got_last = mg.Session(g, device="/gpu:0").run([add, last])
    want_add, want_last = np.zeros(20, np.float32), np.zeros(20, np.float32)
    np.add.at(want_add, idx[:, 0], upd)
    for i, u in zip(idx[:, 0], upd):
        want_last[i] = u
    np.testing.assert_array_equal(got_add, want_add)
    np.testing.assert_array_equal(got_last, want_last)
