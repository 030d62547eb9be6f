"""Large host buffers kept from run to run, as CuPy's memory pool does on the GPU.

NumPy gets a large array from ``malloc``, which maps fresh pages for it and unmaps them
when it is freed: every run's large outputs pay a page fault (and the kernel's zeroing)
on first touch, about 55 ms of system time for a 256 MB output on the project's VM.
TensorFlow's allocator keeps its memory instead. Kernels that ask their context for an
output (:meth:`KernelContext.allocate`) get it from here: a view of a pooled byte buffer
(a "slab"), which is free again once no array refers to it. NumPy keeps a view's owner
as its ``base``, so a slab is free exactly when the pool holds its only reference.

Smaller blocks are malloc's to keep: when the pool makes its first slab, or an executor
first binds a plan (:func:`settle_malloc`), glibc is let keep freed blocks of up to
:data:`MALLOC_KEEPS` (:func:`let_malloc_keep_medium_blocks`), so the temporaries NumPy
makes inside kernels (an argsort's order and scratch, a block's keys, the terms of an
elementwise formula on a medium tensor) stop page-faulting on every call.

Only buffers of at least :data:`MIN_BYTES` are pooled; the pool holds at most
``mg.config.host_pool_bytes()`` in all (0 turns it off), in use or free, and drops free
slabs, oldest first, to make room. An allocation that runs out of memory drops every free
slab and tries once more (``KernelContext.empty``).
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict

import numpy as np

__all__ = [
    "ALIGNMENT",
    "MALLOC_KEEPS",
    "MIN_BYTES",
    "POOL",
    "HostPool",
    "let_malloc_keep_medium_blocks",
    "settle_malloc",
    "size_class",
]

# Smaller arrays come from malloc's free lists (or NumPy's own cache) without faults.
MIN_BYTES = 1 << 20

# Arrays start at a multiple of this many bytes (TensorFlow's allocator aligns to 64):
# malloc's large blocks start 16 bytes past a page, so a 64-byte row would straddle two
# cache lines. The 256 MB parallel stitch's writes: 49-55 ms aligned, 66-69 at 16 past.
ALIGNMENT = 4096

# A slab is free when this is its reference count: the pool's own, and getrefcount's.
_FREE_REFS = 2
# Reference counts say when a slab is free: CPython's, and only with the GIL (a free-
# threaded build may defer them).
_POOLING = sys.implementation.name == "cpython" and getattr(sys, "_is_gil_enabled", lambda: True)()


# glibc's malloc maps each block of at least its "mmap threshold" (128 KB at start) on its
# own and unmaps it when freed, and gives the memory at the top of its heaps back once more
# than the "trim threshold" (twice that) is free there: either way the next block of that
# size page-faults again. Its own rule raises both when a mapped block is freed: the mmap
# threshold to that block's size (up to 32 MB), the trim threshold to twice it. A process
# gets there once it frees one mid-sized array; this freeing one of 4 MB gets there first.
# Threads repeating NumPy's argsort of 64K 8-bit keys (a 512 KB order and a 512 KB scratch
# each): 22600 page faults and 36 ms per 100 calls, then none and 11 ms (2026-12-03).
MALLOC_KEEPS = 4 << 20


def let_malloc_keep_medium_blocks() -> None:
    """Free one mapped block of :data:`MALLOC_KEEPS` bytes, so glibc keeps freed blocks of
    up to that size (and up to twice it free atop each heap) from then on, as it would once
    the process freed one such array itself. It never lowers a threshold, and elsewhere
    than glibc it only allocates and frees a block."""
    block = np.empty(MALLOC_KEEPS, np.uint8)  # mapped: larger than the threshold so far
    del block  # glibc's free() adjusts the thresholds; the pages were never touched


_malloc_settled = False


def settle_malloc() -> None:
    """:func:`let_malloc_keep_medium_blocks`, once per process (twice would do no harm)."""
    global _malloc_settled
    if not _malloc_settled:
        _malloc_settled = True
        let_malloc_keep_medium_blocks()


def size_class(nbytes: int) -> int:
    """``nbytes`` rounded up to one of 16 steps per power of two: a slab serves any
    request of its class, wasting at most 1/16 of it."""
    step = 1 << max(nbytes.bit_length() - 5, 12)
    return -(-nbytes // step) * step


class HostPool:
    """Slabs by size class; ``take`` hands out a view of a free one, or makes one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # size class -> slabs, in use or free; classes in the order last taken from.
        self._slabs: OrderedDict[int, list[np.ndarray]] = OrderedDict()
        self._held = 0

    @property
    def held_bytes(self) -> int:
        """Bytes of every slab, in use or free."""
        return self._held

    def free_bytes(self) -> int:
        """Bytes of the slabs no array uses now: memory the pool can hand out again, which
        the operating system counts as used."""
        with self._lock:
            return sum(
                cls
                for cls, slabs in self._slabs.items()
                for k in range(len(slabs))
                if _is_free(slabs, k)
            )

    def take(self, shape: tuple[int, ...], dtype: np.dtype, limit: int) -> np.ndarray | None:
        """An uninitialised C-ordered array of ``shape`` and ``dtype`` from the pool, or
        None when it is too small to pool, or no slab is free and ``limit`` bytes of
        slabs leave no room for another (the caller allocates as usual then)."""
        nbytes = dtype.itemsize
        for d in shape:
            nbytes *= d
        if nbytes < MIN_BYTES or not _POOLING or dtype.hasobject:
            return None
        cls = size_class(nbytes)
        with self._lock:
            slab = self._free_slab(cls)
            if slab is None:
                slab = self._new_slab(cls, limit)
            if slab is None:
                return None
            # A view keeps the slab as its base: taken until every view of it is gone.
            start = -slab.__array_interface__["data"][0] % ALIGNMENT
            return slab[start : start + nbytes].view(dtype).reshape(shape)

    def trim(self, limit: int) -> int:
        """Drop free slabs, oldest class first, until at most ``limit`` bytes are held; the
        bytes dropped."""
        with self._lock:
            held = self._held
            self._drop_free(held - limit)
            return held - self._held

    def _free_slab(self, cls: int) -> np.ndarray | None:
        slabs = self._slabs.get(cls)
        if not slabs:
            return None
        self._slabs.move_to_end(cls)
        for k in range(len(slabs)):
            if _is_free(slabs, k):
                return slabs[k]
        return None

    def _new_slab(self, cls: int, limit: int) -> np.ndarray | None:
        if cls > limit:
            return None
        self._drop_free(self._held + cls - limit)
        if self._held + cls > limit:
            return None
        try:
            slab = np.empty(cls + ALIGNMENT, np.uint8)
        except MemoryError:
            return None
        self._slabs.setdefault(cls, []).append(slab)
        self._slabs.move_to_end(cls)
        self._held += cls
        settle_malloc()
        return slab

    def _drop_free(self, excess: int) -> None:
        """Drop free slabs, least recently used classes first, until ``excess`` bytes are."""
        for cls in list(self._slabs):
            slabs = self._slabs[cls]
            k = 0
            while excess > 0 and k < len(slabs):
                if _is_free(slabs, k):
                    del slabs[k]
                    self._held -= cls
                    excess -= cls
                else:
                    k += 1
            if not slabs:
                del self._slabs[cls]
            if excess <= 0:
                return


def _is_free(slabs: list[np.ndarray], k: int) -> bool:
    """Whether nothing but the list refers to ``slabs[k]`` (getrefcount adds its own)."""
    return sys.getrefcount(slabs[k]) == _FREE_REFS


# The process's pool: kernels on the host take their outputs from it.
POOL = HostPool()
