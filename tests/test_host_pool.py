"""The pool of large host buffers: reuse once nothing refers to a buffer, never before."""

import platform
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import minigraph as mg
from minigraph import host_pool
from minigraph.host_pool import ALIGNMENT, MIN_BYTES, HostPool, size_class
from minigraph.kernel import KernelContext

F32 = np.dtype(np.float32)
SHAPE = (MIN_BYTES // 4,)  # the smallest pooled float32 vector
LIMIT = 64 * MIN_BYTES


def address(x: np.ndarray) -> int:
    """Where the array's data starts (holding its base would keep the buffer taken)."""
    return x.__array_interface__["data"][0]


@pytest.fixture
def pool_size():
    """Set mg.config's pool size for one test; restores the default."""
    yield mg.config.set_host_pool_bytes
    mg.config.set_host_pool_bytes(None)


@pytest.mark.parametrize("n", [MIN_BYTES, MIN_BYTES + 1, 3 * MIN_BYTES - 7, 255 << 20, 1 << 33])
def test_size_class_wastes_at_most_a_sixteenth(n):
    c = size_class(n)
    assert n <= c <= n + n // 16 + 4096
    assert size_class(c) == c


def test_a_buffer_is_reused_only_once_nothing_refers_to_it():
    pool = HostPool()
    a = pool.take(SHAPE, F32, LIMIT)
    where = address(a)
    b = pool.take(SHAPE, F32, LIMIT)
    assert not np.shares_memory(a, b)
    view_of_a_view = a.reshape(2, -1)[1:]
    del a
    c = pool.take(SHAPE, F32, LIMIT)  # a's slab is still referred to by the view
    assert not np.shares_memory(c, view_of_a_view)
    del view_of_a_view, b, c
    d = pool.take(SHAPE, F32, LIMIT)
    assert address(d) == where and pool.held_bytes == 3 * size_class(MIN_BYTES)


def test_free_bytes_counts_the_buffers_nothing_uses():
    pool = HostPool()
    a, b = pool.take(SHAPE, F32, LIMIT), pool.take((2 * SHAPE[0],), F32, LIMIT)
    assert pool.free_bytes() == 0
    del a
    assert pool.free_bytes() == size_class(MIN_BYTES)
    del b
    assert pool.free_bytes() == size_class(MIN_BYTES) + size_class(2 * MIN_BYTES)


def test_free_memory_counts_the_pools_free_buffers(monkeypatch):
    # The system counts the pool's free buffers as used; a tensor may still have them.
    monkeypatch.setattr(mg.config, "_read_free_memory", lambda: 10 * MIN_BYTES)
    monkeypatch.setattr(host_pool, "POOL", HostPool())
    monkeypatch.setattr(mg.config, "_free", [0.0, 0])  # nothing cached
    held = host_pool.POOL.take(SHAPE, F32, LIMIT)
    del held
    assert mg.config.free_memory() == 10 * MIN_BYTES + size_class(MIN_BYTES)


def test_taken_arrays_have_the_shape_and_dtype_asked_for():
    pool = HostPool()
    x = pool.take((3, MIN_BYTES // 8), np.dtype(np.complex64), LIMIT)
    assert x.shape == (3, MIN_BYTES // 8) and x.dtype == np.complex64
    assert x.flags.c_contiguous and x.flags.writeable and x.base.nbytes >= x.nbytes


def test_taken_arrays_start_on_an_aligned_address():
    # A 64-byte row must not straddle two cache lines, as at malloc's 16 bytes past a page.
    pool = HostPool()
    for n in (MIN_BYTES, MIN_BYTES + 24, 3 * MIN_BYTES):
        assert address(pool.take((n,), np.dtype(np.uint8), LIMIT)) % ALIGNMENT == 0


def test_small_and_object_arrays_are_not_pooled():
    pool = HostPool()
    assert pool.take((MIN_BYTES // 4 - 1,), F32, LIMIT) is None
    assert pool.take((MIN_BYTES,), np.dtype(object), LIMIT) is None
    assert pool.held_bytes == 0


def test_the_pool_holds_at_most_its_limit_and_drops_free_buffers_first():
    pool = HostPool()
    limit = 2 * size_class(MIN_BYTES)
    a, b = pool.take(SHAPE, F32, limit), pool.take(SHAPE, F32, limit)
    assert pool.take(SHAPE, F32, limit) is None  # both in use: no room for a third
    assert pool.take((4 * MIN_BYTES,), F32, LIMIT) is not None  # a larger limit makes room
    del a
    big = pool.take((MIN_BYTES // 2,), F32, 2 * size_class(MIN_BYTES) + size_class(2 * MIN_BYTES))
    assert big is not None  # a's free buffer was dropped to make room for another class
    assert pool.held_bytes <= 2 * size_class(MIN_BYTES) + size_class(2 * MIN_BYTES) + size_class(
        4 * MIN_BYTES
    )
    del b, big
    pool.trim(0)
    assert pool.held_bytes == 0


def test_threads_never_share_a_buffer():
    pool = HostPool()
    clobbered = []

    def work(k):
        for _ in range(50):
            x = pool.take(SHAPE, F32, LIMIT)
            x.fill(k)
            time.sleep(0)  # let the other threads take buffers meanwhile
            if not (x == k).all():
                clobbered.append(k)
            del x

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not clobbered and pool.held_bytes <= 4 * size_class(MIN_BYTES)


def test_config_sizes_the_pool_and_zero_turns_it_off(pool_size):
    ctx = KernelContext({}, np, "n", "Op")
    pool_size(0)
    assert mg.config.host_pool_bytes() == 0 and host_pool.POOL.held_bytes == 0
    assert ctx.allocate(SHAPE, np.float32).base is None  # malloc'd as usual
    pool_size(LIMIT)
    assert ctx.allocate(SHAPE, np.float32).base is not None
    with pytest.raises(ValueError, match="host_pool_bytes must be >= 0"):
        pool_size(-1)
    with pytest.raises(TypeError, match="host_pool_bytes"):
        pool_size(1.5)


def test_a_reused_buffer_is_filled_when_asked(pool_size):
    pool_size(LIMIT)
    ctx = KernelContext({}, np, "n", "Op")
    dirty = ctx.allocate(SHAPE, np.float32)
    dirty.fill(np.nan)
    where = address(dirty)
    del dirty
    again = ctx.allocate(SHAPE, np.float32, fill=0)
    assert address(again) == where and not again.any()


def test_stitch_gaps_are_zero_in_a_reused_buffer(pool_size):
    # The second run's output reuses the first's buffer, full of the first's values.
    pool_size(LIMIT)
    n = MIN_BYTES // 4
    with mg.Graph().as_default():
        i = mg.placeholder(mg.int32, shape=[None])
        d = mg.placeholder(mg.float32, shape=[None])
        y = mg.dynamic_stitch([i], [d])
        with mg.Session() as s:
            s.run(y, {i: np.arange(2 * n, dtype=np.int32), d: np.ones(2 * n, np.float32)})
            out = s.run(y, {i: np.array([0, 2 * n - 1], np.int32), d: np.ones(2, np.float32)})
    expected = np.zeros(2 * n, np.float32)
    expected[[0, -1]] = 1
    np.testing.assert_array_equal(out, expected)


def test_results_kept_across_runs_keep_their_values(pool_size):
    pool_size(LIMIT)
    with mg.Graph().as_default():
        x = mg.placeholder(mg.float32, shape=SHAPE)
        y = mg.tile(x, [2])
        with mg.Session() as s:
            first = s.run(y, {x: np.full(SHAPE, 1, np.float32)})
            second = s.run(y, {x: np.full(SHAPE, 2, np.float32)})
            del second
            third = s.run(y, {x: np.full(SHAPE, 3, np.float32)})
    assert (first == 1).all() and (third == 3).all()
    assert not np.shares_memory(first, third)


def test_an_allocation_out_of_memory_releases_the_pools_free_buffers_and_tries_again(
    pool_size, monkeypatch
):
    pool_size(LIMIT)
    ctx = KernelContext({}, np, "n", "Op")
    ctx.allocate(SHAPE, np.float32)  # a buffer in the pool, free again at once
    assert host_pool.POOL.held_bytes > 0
    real_empty, calls = np.empty, []

    def empty_failing_once(shape, dtype=float, *args, **kwargs):
        calls.append(shape)
        if len(calls) == 1:
            raise MemoryError("no memory left")
        return real_empty(shape, dtype, *args, **kwargs)

    pool_size(LIMIT)
    monkeypatch.setattr(host_pool.POOL, "take", lambda *a: None)  # as for a too-large array
    monkeypatch.setattr(np, "empty", empty_failing_once)
    out = ctx.allocate((3,), np.float32)
    assert out.shape == (3,) and len(calls) == 2 and host_pool.POOL.held_bytes == 0
    calls.clear()
    monkeypatch.setattr(np, "empty", lambda *a, **k: (_ for _ in ()).throw(MemoryError()))
    with pytest.raises(mg.errors.ResourceExhaustedError, match="OOM when allocating"):
        ctx.allocate((3,), np.float32)  # nothing left to release: the error names the node


_MEDIUM_BLOCKS = r"""
import resource, sys
from concurrent.futures import ThreadPoolExecutor
import numpy as np
import minigraph as mg
from minigraph.host_pool import HostPool, MIN_BYTES

keys = np.random.default_rng(0).integers(0, 16, 1 << 16).astype(np.uint8)

def faults_of_medium_blocks():
    np.argsort(keys, kind="stable")  # the warm-up: the thread's heap holds one call's blocks
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        np.argsort(keys, kind="stable")  # a 512 KB order and a 512 KB scratch
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

# In a thread, as kernels run: a thread's own malloc arena gives memory back most eagerly.
with ThreadPoolExecutor(1) as thread:
    first = thread.submit(faults_of_medium_blocks).result()
    if sys.argv[1] == "slab":
        kept = HostPool().take((MIN_BYTES,), np.dtype(np.uint8), 4 * MIN_BYTES)
    else:  # a Session's first run of a graph of small tensors, which the pool never sees
        with mg.Graph().as_default():
            mg.Session().run(mg.constant(np.ones(4, np.float32)) + 1.0)
    print(first, thread.submit(faults_of_medium_blocks).result())
"""


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc"
)
@pytest.mark.parametrize("first", ["slab", "run"])
def test_the_first_slab_or_run_lets_malloc_keep_medium_blocks(first):
    # A fresh interpreter: glibc's thresholds only ever rise, so this process's are spent.
    # A run settles them too: a model of small tensors may never make a slab, and its
    # medium temporaries (an elementwise formula's terms) would fault on every call.
    out = subprocess.run(
        [sys.executable, "-c", _MEDIUM_BLOCKS, first], capture_output=True, text=True, check=True
    )
    first_faults, then = map(int, out.stdout.split())
    if first_faults < 20 * 64:
        pytest.skip(f"malloc already keeps 512 KB blocks here ({first_faults} page faults)")
    assert then < 64, f"20 argsorts page-faulted {then} times after the first {first}"
