"""The context a kernel runs with: attrs, the array module, the node, allocation.

Kernels are module-level functions ``fn(ctx, *inputs)``; the context is the
only thing they see besides their input arrays. It is built once per plan step,
so it holds plain data only and a remote worker can rebuild it. Kernels run with NumPy's
floating-point warnings off: whatever calls them sets that (see docs/architecture.md).
"""

from __future__ import annotations

import contextvars
import itertools
import math
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent import futures
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType
from typing import Any, NoReturn

import numpy as np

from . import config, errors, host_pool
from .resources import ResourceManager

__all__ = ["KernelContext", "check_output_size", "tensor_limit"]

_INT64_MAX = 2**63 - 1


# Below this much work, starting threads costs more than they save.
PARALLEL_MIN_BYTES = 1 << 22

# An input of this many elements may be a broadcast view (a fed np.broadcast_to, a
# BroadcastTo output) whose size nothing has paid for yet: a kernel checks the size of its
# new output first. Smaller ones are not checked, to keep the per-node cost of small ops low.
UNPAID_VIEW_SIZE = 1 << 20

# Below this many elements a host kernel writes a new array rather than look for an input
# buffer to reuse: looking (and the buffer pool's bookkeeping) costs about 2 µs, more than
# a fresh small array (an LSTM gate's [64, 256] add: 4.7 -> 2.5 µs).
REUSE_MIN_SIZE = 1 << 15

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


_in_pool = threading.local()  # .worker: this thread is one of the kernels' pool


def _mark_worker() -> None:
    _in_pool.worker = True


def _as_worker(work: Callable[[], None]) -> None:
    """``work()`` with this thread counted as a pool worker: a piece runs its own pieces
    in turn, as it would on a pool thread."""
    was = getattr(_in_pool, "worker", False)
    _in_pool.worker = True
    try:
        work()
    finally:
        _in_pool.worker = was


def _thread_pool() -> ThreadPoolExecutor:
    """The kernels' shared pool, made on first use (importing minigraph starts no thread)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(
                config.kernel_threads(), "minigraph-kernel", initializer=_mark_worker
            )
        return _pool


def tensor_limit(limit: int | None = None, device_limit: int | None = None) -> int:
    """The bytes one tensor may take: ``limit`` (a Session's cap) if given, else
    ``mg.config.max_tensor_bytes()`` (the set cap, else the free memory); never more
    than ``device_limit`` (a GPU's memory) when that is given."""
    if limit is None:
        if device_limit is not None and config.max_tensor_bytes_set() is None:
            return device_limit
        limit = config.max_tensor_bytes()
    return limit if device_limit is None else min(limit, device_limit)


def check_output_size(
    shape: Sequence[int], itemsize: int, node_name: str, op_type: str, limit: int | None = None
) -> int:
    """Return the element count of ``shape``, or raise ResourceExhaustedError.

    Counts in Python ints, so an element count or byte size past int64 (zero dims aside:
    NumPy cannot hold such a shape even when it is empty), or past ``limit`` bytes
    (default: :func:`tensor_limit`), is reported before anything is allocated.
    """
    count = 1
    extent = 1  # the count without its zero dims: NumPy refuses a shape past int64 even empty
    for d in shape:
        count *= int(d)
        extent *= max(int(d), 1)
    nbytes = count * itemsize
    limit = tensor_limit() if limit is None else limit
    if extent * max(itemsize, 1) > _INT64_MAX or nbytes > limit:
        raise errors.ResourceExhaustedError(
            f"OOM when allocating tensor with shape [{','.join(str(int(d)) for d in shape)}]: "
            f"{nbytes} bytes needed, at most {limit} can be allocated",
            node_name,
            op_type,
        )
    return count


class KernelContext:
    """Attrs, ``xp`` (numpy or cupy), the node's name, and allocation helpers.

    ``forwardable`` is the set of input positions whose buffers the executor
    hands over: not fed, not a constant, and with no other consumer. Only those
    may be written in place (see :meth:`output_buffer`).

    ``memory_limit`` is the device's (a GPU's memory; None on the host) and
    ``tensor_bytes`` the Session's cap (None: ``mg.config.max_tensor_bytes()``); every
    size check uses the smaller (see :func:`tensor_limit`). ``resources`` holds the
    Session's variables.
    """

    __slots__ = (
        "attrs",
        "xp",
        "node_name",
        "op_type",
        "device",
        "forwardable",
        "memory_limit",
        "tensor_bytes",
        "threads",
        "memo",
        "resources",
    )

    def __init__(
        self,
        attrs: dict[str, Any],
        xp: ModuleType = np,
        node_name: str = "",
        op_type: str = "",
        device: str = "CPU",
        forwardable: Iterable[int] = (),
        memory_limit: int | None = None,
        tensor_bytes: int | None = None,
        threads: int | None = None,
        resources: ResourceManager | None = None,
    ) -> None:
        self.attrs = attrs
        self.xp = xp
        self.node_name = node_name
        self.op_type = op_type
        self.device = device
        self.forwardable = tuple(sorted(forwardable))
        self.memory_limit = memory_limit
        self.tensor_bytes = tensor_bytes
        # Threads this kernel may split its work over: the Session's
        # intra_op_parallelism_threads, at most the shared pool's (mg.config.kernel_threads).
        self.threads = min(threads or config.kernel_threads(), config.kernel_threads())
        self.memo: dict[str, Any] = {}  # per plan step, e.g. a constant already on the device
        # The Session's variables (minigraph.resources); None where no Session runs the
        # kernel (constant folding while a graph is built, a remote worker).
        self.resources = resources

    def for_member(self, attrs: Mapping[str, Any], node_name: str, op_type: str) -> KernelContext:
        """The context of one node that an optimized step runs for (a fused chain's op):
        this step's device, limits and threads, that node's attrs and name (for its errors),
        and no input it may overwrite."""
        return KernelContext(
            dict(attrs),
            self.xp,
            node_name,
            op_type,
            self.device,
            (),
            self.memory_limit,
            self.tensor_bytes,
            self.threads,
            self.resources,
        )

    def fail(
        self, message: str, error: type[errors.OpError] = errors.InvalidArgumentError
    ) -> NoReturn:
        raise error(message, self.node_name, self.op_type)

    def check_size(self, shape: Sequence[int], dtype: Any) -> int:
        """Element count of an output of this shape; ResourceExhaustedError if too large."""
        itemsize = np.dtype(dtype).itemsize
        limit = tensor_limit(self.tensor_bytes, self.memory_limit)
        return check_output_size(shape, itemsize, self.node_name, self.op_type, limit)

    def allocate(self, shape: Sequence[int], dtype: Any, fill: Any = None) -> Any:
        """A new array on this kernel's device, checked for size first."""
        self.check_size(shape, dtype)
        return self.empty(shape, dtype, fill)

    def empty(self, shape: Sequence[int], dtype: Any, fill: Any = None) -> Any:
        """A new array (uninitialised unless ``fill`` is given) whose size the caller has
        checked or knows to be affordable (a buffer the size of an input). Large host
        arrays come from the buffer pool (see :mod:`minigraph.host_pool`)."""
        if type(shape) is not tuple:
            shape = tuple(map(int, shape))
        dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        try:
            if self.xp is np and math.prod(shape) * dtype.itemsize >= host_pool.MIN_BYTES:
                out = host_pool.POOL.take(shape, dtype, config.host_pool_bytes())
                if out is not None:
                    if fill is not None:  # a fill on both cores, like the copies
                        flat = out.reshape(-1)
                        self.parallel_slices(lambda s: flat[s].fill(fill), flat.size, out.nbytes)
                    return out
            try:
                return self._new(shape, dtype, fill)
            except MemoryError:
                if self.xp is not np or not host_pool.POOL.trim(0):
                    raise
                return self._new(shape, dtype, fill)  # with the pool's free buffers released
        except MemoryError as e:
            nbytes = np.dtype(dtype).itemsize * int(np.prod(shape, dtype=object))
            self.fail(
                f"OOM when allocating tensor with shape {list(shape)}: {nbytes} bytes "
                f"needed ({e or 'MemoryError'})",
                errors.ResourceExhaustedError,
            )

    def _new(self, shape: tuple[int, ...], dtype: Any, fill: Any) -> Any:
        if fill is None:
            return self.xp.empty(shape, dtype)
        if fill == 0:
            return self.xp.zeros(shape, dtype)
        return self.xp.full(shape, fill, dtype)

    def parallel_map(self, fn: Callable[[Any], Any], items: Iterable[Any], work_bytes: int) -> list:
        """``[fn(x) for x in items]``, split over threads when on the CPU and worth it.

        NumPy releases the GIL in its copy and compare loops, so independent pieces of
        one kernel (a list each, a partition each) run on both cores. Each thread takes
        the next item when done with one, so a thread the machine holds up leaves the
        others less to wait for; this thread is one of them, as it is running already (a
        pool thread the VM has let idle can take a while to start). ``fn`` must write
        disjoint memory; the results keep the order of ``items``.
        """
        items = list(items)
        if (
            self.xp is not np
            or len(items) < 2
            or work_bytes < PARALLEL_MIN_BYTES
            or self.threads < 2
            or getattr(_in_pool, "worker", False)  # a piece waiting on pieces could deadlock
        ):
            return [fn(x) for x in items]
        results: list[Any] = [None] * len(items)
        taken = itertools.count()  # next() on a count is atomic under the GIL

        def work() -> None:
            for i in iter(taken.__next__, None):
                if i >= len(items):
                    return
                results[i] = fn(items[i])

        # Each thread works in a copy of this thread's context: NumPy's error state goes along.
        pool = _thread_pool()
        helpers = [
            pool.submit(contextvars.copy_context().run, work)
            for _ in range(min(len(items), self.threads) - 1)
        ]
        try:
            contextvars.copy_context().run(_as_worker, work)
        finally:
            futures.wait(helpers)  # no piece still writes when this returns or raises
        for helper in helpers:
            helper.result()  # a helper's error
        return results

    def parallel_slices(self, fn: Callable[[slice], Any], n: int, work_bytes: int) -> None:
        """``fn(piece)`` for slices that tile ``range(n)``, one per thread when worth it."""
        pieces = max(1, min(n, self.threads)) if self.xp is np else 1
        bounds = [n * p // pieces for p in range(pieces + 1)]
        self.parallel_map(lambda p: fn(slice(bounds[p], bounds[p + 1])), range(pieces), work_bytes)

    def parallel_each(self, fn: Callable[[int], Any], n: int, work_bytes: int) -> None:
        """``fn(i)`` for each ``i`` in ``range(n)``: many similar pieces of work, taken by
        the threads as they come free (see :meth:`parallel_map`)."""
        self.parallel_map(fn, range(n), work_bytes)

    def synchronize(self) -> None:
        """Wait until this device has finished the work queued on it: GPU kernels return
        before they have run. A no-op on the CPU (and on the simulated GPU)."""
        cuda = getattr(self.xp, "cuda", None)
        if cuda is not None:  # device is "GPU:<index>"
            cuda.Device(int(self.device.partition(":")[2] or 0)).synchronize()

    def copy(self, dst: Any, src: Any) -> None:
        """``dst[...] = src`` (same shape), its first axis split over threads when large.

        Two threads copy a fresh 256 MB output about twice as fast: the page faults of
        new memory are paid in parallel too.
        """
        if dst.ndim == 0:
            dst[...] = src
            return

        def part(rows: slice) -> None:
            dst[rows] = src[rows]

        self.parallel_slices(part, dst.shape[0], dst.size * dst.itemsize)

    def forwarded(
        self,
        inputs: Sequence[Any],
        shape: tuple[int, ...],
        dtype: Any,
        among: Iterable[int] | None = None,
    ) -> Any | None:
        """An input buffer this kernel may overwrite, of this shape (a tuple) and dtype, else None.

        ``inputs`` are the kernel's leading inputs, in order; pass only the ones whose buffer
        may become the output (``(x,)`` for input 0 alone), or name their positions in
        ``among``. Only inputs the executor marked forwardable qualify (see the class doc).
        """
        positions = (
            self.forwardable if among is None else sorted(set(among) & set(self.forwardable))
        )
        for i in positions:
            if i >= len(inputs):
                break
            x = inputs[i]
            if x.shape == shape and x.dtype == dtype:
                flags = x.flags
                if flags.c_contiguous and getattr(flags, "writeable", True):  # CuPy: no flag
                    return x
        return None

    def output_buffer(self, inputs: Sequence[Any], shape: Sequence[int], dtype: Any) -> Any:
        """A forwardable input buffer of the right shape and dtype, else a new array."""
        shape = tuple(shape)
        out = self.forwarded(inputs, shape, dtype) if self.forwardable else None
        return out if out is not None else self.allocate(shape, dtype)
