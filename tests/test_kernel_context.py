"""KernelContext helpers: allocation limits, forwarding, and splitting work over threads."""

import threading

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors
from minigraph.kernel import PARALLEL_MIN_BYTES, KernelContext


def test_parallel_map_keeps_order_and_uses_threads_for_large_work(monkeypatch):
    monkeypatch.setattr(mg.config, "kernel_threads", lambda: 2)
    ctx = KernelContext({}, np, "n", "Op")
    names = []
    both = threading.Barrier(2, timeout=10)  # the first two pieces wait for each other

    def work(k):
        names.append(threading.current_thread().name)
        if k < 2:
            both.wait()
        return k * k

    assert ctx.parallel_map(work, range(6), PARALLEL_MIN_BYTES) == [0, 1, 4, 9, 16, 25]
    this = threading.current_thread().name  # it takes pieces too: it is running already
    assert this in names and any(n.startswith("minigraph-kernel") for n in names)
    assert set(names) <= {this} | {n for n in names if n.startswith("minigraph-kernel")}
    names.clear()
    small = ctx.parallel_map(lambda k: work(k + 2), range(3), PARALLEL_MIN_BYTES - 1)
    assert small == [4, 9, 16]
    assert set(names) == {this}  # small work: no threads


def test_parallel_map_is_serial_with_one_thread(monkeypatch):
    monkeypatch.setattr(mg.config, "kernel_threads", lambda: 1)
    ctx = KernelContext({}, np, "n", "Op")
    names = []
    ctx.parallel_map(lambda k: names.append(threading.current_thread().name), range(4), 1 << 40)
    assert set(names) == {threading.current_thread().name}


@pytest.mark.parametrize("work_bytes", [PARALLEL_MIN_BYTES, 1])
def test_parallel_each_runs_every_index_once_in_order_on_each_thread(monkeypatch, work_bytes):
    monkeypatch.setattr(mg.config, "kernel_threads", lambda: 2)
    ctx = KernelContext({}, np, "n", "Op")
    done: dict[str, list[int]] = {}

    def work(i):
        done.setdefault(threading.current_thread().name, []).append(i)

    ctx.parallel_each(work, 50, work_bytes)
    assert sorted(i for seen in done.values() for i in seen) == list(range(50))
    assert all(seen == sorted(seen) for seen in done.values())
    if work_bytes == 1:  # small work: this thread only
        assert list(done) == [threading.current_thread().name]
    ctx.parallel_each(work, 0, work_bytes)  # nothing to do


def test_parallel_each_passes_errors_on(monkeypatch):
    monkeypatch.setattr(mg.config, "kernel_threads", lambda: 2)
    ctx = KernelContext({}, np, "n", "Op")

    def work(i):
        if i == 7:
            raise ValueError("piece 7")

    with pytest.raises(ValueError, match="piece 7"):
        ctx.parallel_each(work, 20, PARALLEL_MIN_BYTES)


def test_parallel_map_passes_errors_on():
    ctx = KernelContext({}, np, "n", "Op")

    def work(k):
        if k == 3:
            ctx.fail("piece 3 is bad")

    with pytest.raises(errors.InvalidArgumentError, match="piece 3 is bad"):
        ctx.parallel_map(work, range(5), 1 << 40)


def test_allocate_refuses_what_cannot_exist():
    ctx = KernelContext({}, np, "big", "Fill")
    with pytest.raises(errors.ResourceExhaustedError, match="big"):
        ctx.allocate((2**40, 2**40), np.float32)
    assert ctx.allocate((2, 3), np.int8, fill=0).tolist() == [[0] * 3] * 2


def test_forwarded_only_offers_marked_writable_inputs():
    a, b = np.zeros(4), np.zeros(4)
    ctx = KernelContext({}, np, "n", "Add", forwardable={1})
    assert ctx.forwarded((a, b), (4,), a.dtype) is b
    assert ctx.forwarded((a,), (4,), a.dtype) is None  # only the inputs passed count
    b.flags.writeable = False
    assert ctx.forwarded((a, b), (4,), a.dtype) is None
    assert ctx.forwarded((a, np.zeros(5)), (4,), a.dtype) is None


def test_threaded_stitch_and_partition_match_references():
    rng = np.random.default_rng(5)
    n = PARALLEL_MIN_BYTES // 2  # float32 rows: twice the threading threshold
    x = rng.standard_normal(n).astype(np.float32)
    p = rng.integers(0, 3, n).astype(np.int32)
    g = mg.Graph()
    with g.as_default():
        parts = mg.dynamic_partition(x, p, 3)
        positions = mg.dynamic_partition(mg.range(n), p, 3)
        back = mg.dynamic_stitch(positions, parts)
    out = mg.Session(g).run([parts, back])
    for k in range(3):
        np.testing.assert_array_equal(out[0][k], x[p == k])
    np.testing.assert_array_equal(out[1], x)


@pytest.mark.parametrize("batch", [1, 3])
def test_threaded_space_to_batch_round_trip(batch):
    """Large enough to be copied on several threads; checked against the doc's four steps."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((batch, 2 * 257, 4 * 129, 3)).astype(np.float32)
    pads = [[1, 1], [2, 2]]
    assert x.nbytes * 2 > PARALLEL_MIN_BYTES
    g = mg.Graph()
    with g.as_default():
        y = mg.space_to_batch_nd(x, [2, 4], pads)
        back = mg.batch_to_space_nd(y, [2, 4], pads)
    out, restored = mg.Session(g).run([y, back])
    p = np.pad(x, [(0, 0), *pads, (0, 0)])
    b, h, w, c = p.shape
    ref = p.reshape(b, h // 2, 2, w // 4, 4, c).transpose(2, 4, 0, 1, 3, 5)
    np.testing.assert_array_equal(out, ref.reshape(b * 8, h // 2, w // 4, c))
    np.testing.assert_array_equal(restored, x)


def test_threaded_gather_nd_matches_indexing():
    rng = np.random.default_rng(7)
    params = rng.standard_normal((1 << 16, 16)).astype(np.float32)
    idx = rng.integers(0, 1 << 16, (1 << 16, 1)).astype(np.int32)
    g = mg.Graph()
    with g.as_default():
        y = mg.gather_nd(params, idx)
    np.testing.assert_array_equal(mg.Session(g).run(y), params[idx[:, 0]])


def test_parallel_map_inside_a_piece_runs_serially_instead_of_waiting_on_itself(monkeypatch):
    # Both pool threads busy with pieces that split their own work again: the inner pieces
    # run in the piece's thread (queued on the busy pool they would wait forever).
    monkeypatch.setattr(mg.config, "kernel_threads", lambda: 2)
    ctx = KernelContext({}, np, "n", "Op")

    def outer(k):
        inner = ctx.parallel_map(lambda j: threading.current_thread().name, range(4), 1 << 40)
        return threading.current_thread().name, set(inner)

    for name, inner in ctx.parallel_map(outer, range(2), PARALLEL_MIN_BYTES):
        assert inner == {name}
