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

    def work(k):
        names.append(threading.current_thread().name)
        return k * k

    assert ctx.parallel_map(work, range(6), PARALLEL_MIN_BYTES) == [0, 1, 4, 9, 16, 25]
    assert all(n.startswith("minigraph-kernel") for n in names)
    names.clear()
    assert ctx.parallel_map(work, range(3), PARALLEL_MIN_BYTES - 1) == [0, 1, 4]
    assert set(names) == {threading.current_thread().name}  # small work: no threads


def test_parallel_map_is_serial_with_one_thread(monkeypatch):
    monkeypatch.setattr(mg.config, "kernel_threads", lambda: 1)
    ctx = KernelContext({}, np, "n", "Op")
    names = []
    ctx.parallel_map(lambda k: names.append(threading.current_thread().name), range(4), 1 << 40)
    assert set(names) == {threading.current_thread().name}


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
