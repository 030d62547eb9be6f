"""Process-wide switches: the debug knob and op determinism.

``MINIGRAPH_SIMULATED_GPU=1`` makes "/gpu:0" a NumPy-backed stand-in, so the GPU path
(placement, copies, the kernels' non-NumPy code) runs on machines without a GPU.
``MINIGRAPH_KERNEL_THREADS=N`` caps the threads a CPU kernel may split its work over
(default: the cores, at most 4; 1 turns threading off).
``MINIGRAPH_BLAS_THREADS=N`` (or :func:`set_blas_threads`) is the BLAS library's thread
count while a run runs (default: minigraph decides, see minigraph.blas; ``native`` or 0
leaves BLAS alone, as before issue 26); a Session's ``intra_op_parallelism_threads`` bounds
it, and the caller's own count is put back after each run.
``MINIGRAPH_MAX_TENSOR_BYTES=N`` (or :func:`set_max_tensor_bytes`) caps the bytes one
tensor may take; by default the cap is the machine's free memory (``MemAvailable`` in
/proc/meminfo, else the physical memory; no more than the process may still map under an
address-space limit, ``ulimit -v``), read again at most once a second. A Session's
``max_tensor_bytes`` keyword overrides it for that Session.
``MINIGRAPH_HOST_POOL_BYTES=N`` (or :func:`set_host_pool_bytes`) sizes the pool of large
host buffers that kernels' outputs are reused from, run after run (default: 1 GiB, at most
an eighth of the physical memory; 0 turns it off).
``MINIGRAPH_KEEP_FREED_MEMORY=1`` (or :func:`keep_freed_memory`) lets the C allocator keep
freed memory for reuse, as TensorFlow's allocator does, instead of returning large blocks
to the system: later runs skip the page faults of fresh memory.
``MINIGRAPH_CUDA_GRAPHS=1`` (or ``set_cuda_graphs(True)``) lets GPU plans of fixed shapes be
captured as CUDA graphs and replayed (minigraph.cuda_graphs). Off by default: on an H200
with CuPy 14.2 a plan with a matmul failed to capture (harmless: it then runs plainly), and
no replay has been checked on hardware yet.
``MINIGRAPH_JIT=0`` (or ``set_jit(False)``) keeps fused elementwise chains on the host as
NumPy calls, op by op; by default, where Numba (the ``jit`` extra) is installed, each chain
of exactly rounded float ops (with at most one exp, tanh, sigmoid or erf among them) runs as
compiled loops (minigraph.fusion_jit), as do Erf/Erfc, depthwise convolutions, max pooling
and Adam's update (minigraph.jit), with the same values.
``MINIGRAPH_JIT=1`` asks for it and fails without Numba.
``MINIGRAPH_DEBUG=1`` in the environment prints one line per executed node
(op, name, device, output shapes, time) and checks every kernel's outputs
against what shape inference promised. ``set_check_outputs(True)`` turns on
the checks alone (the test suite does).
"""

from __future__ import annotations

import functools
import importlib.util
import numbers
import os
import time
from typing import Any

from . import host_pool

__all__ = [
    "debug",
    "set_debug",
    "check_outputs",
    "set_check_outputs",
    "enable_op_determinism",
    "disable_op_determinism",
    "op_determinism_enabled",
    "simulated_gpu",
    "set_simulated_gpu",
    "cuda_graphs",
    "set_cuda_graphs",
    "jit",
    "set_jit",
    "kernel_threads",
    "blas_threads",
    "set_blas_threads",
    "max_tensor_bytes",
    "set_max_tensor_bytes",
    "max_tensor_bytes_set",
    "free_memory",
    "keep_freed_memory",
    "host_pool_bytes",
    "set_host_pool_bytes",
]

_state: dict[str, Any] = {
    "debug": os.environ.get("MINIGRAPH_DEBUG", "") not in ("", "0"),
    "check_outputs": os.environ.get("MINIGRAPH_DEBUG", "") not in ("", "0"),
    "determinism": False,
    "simulated_gpu": os.environ.get("MINIGRAPH_SIMULATED_GPU", "") not in ("", "0"),
    "kernel_threads": int(os.environ.get("MINIGRAPH_KERNEL_THREADS", "0") or 0)
    or min(4, os.cpu_count() or 1),
    "max_tensor_bytes": None,
    "cuda_graphs": os.environ.get("MINIGRAPH_CUDA_GRAPHS", "0") not in ("", "0"),
    "jit": {"": None, "0": False}.get(os.environ.get("MINIGRAPH_JIT", ""), True),
}


def _env_bytes(name: str) -> int | None:
    raw = os.environ.get(name, "")
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number of bytes, got {raw!r}") from None
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def _env_blas_threads() -> int | None:
    raw = os.environ.get("MINIGRAPH_BLAS_THREADS", "").strip().lower()
    if raw in ("", "auto"):
        return None
    if raw == "native":
        return 0
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"MINIGRAPH_BLAS_THREADS must be an int >= 0 or 'native', got {raw!r}")
    return value


_state["blas_threads"] = _env_blas_threads()
_state["max_tensor_bytes"] = _env_bytes("MINIGRAPH_MAX_TENSOR_BYTES")
_state["host_pool_bytes"] = _env_bytes("MINIGRAPH_HOST_POOL_BYTES")


def debug() -> bool:
    return _state["debug"]


def set_debug(on: bool) -> None:
    """Print one line per executed node, and check kernel outputs."""
    _state["debug"] = bool(on)
    _state["check_outputs"] = bool(on) or _state["check_outputs"]


def check_outputs() -> bool:
    return _state["check_outputs"]


def set_check_outputs(on: bool) -> None:
    """Check every kernel's outputs (count, dtype, shape) against shape inference."""
    _state["check_outputs"] = bool(on)


def enable_op_determinism() -> None:
    """Make every op bitwise reproducible, float scatter-adds on the GPU included."""
    _state["determinism"] = True


def disable_op_determinism() -> None:
    _state["determinism"] = False


def op_determinism_enabled() -> bool:
    return _state["determinism"]


def simulated_gpu() -> bool:
    return _state["simulated_gpu"]


def set_simulated_gpu(on: bool) -> None:
    """Make "/gpu:0" a simulated GPU backed by NumPy (see minigraph.simulated_gpu)."""
    _state["simulated_gpu"] = bool(on)


def cuda_graphs() -> bool:
    return _state["cuda_graphs"]


def set_cuda_graphs(enabled: bool) -> None:
    """Capture GPU plans of fixed shapes as CUDA graphs and replay them (the default), or
    not: every run then launches its kernels one by one (see minigraph.cuda_graphs)."""
    _state["cuda_graphs"] = bool(enabled)


JIT_HINT = "requires the 'jit' extra (Numba): pip install 'minigraph[jit]'"


@functools.cache
def jit_installed() -> bool:
    """Whether Numba can be imported (looked up, not imported)."""
    return importlib.util.find_spec("numba") is not None


def jit() -> bool:
    """Whether fused elementwise chains, Erf/Erfc, depthwise convolutions, max pooling and
    Adam's update on the host run as compiled loops (minigraph.jit): :func:`set_jit`'s
    choice, by default whether Numba is installed. Asked for (``set_jit(True)``,
    ``MINIGRAPH_JIT=1``) without Numba: an ImportError naming the extra."""
    wanted = _state["jit"]
    if wanted is None:
        return jit_installed()
    if wanted and not jit_installed():
        raise ImportError(f"MINIGRAPH_JIT=1 {JIT_HINT}")
    return bool(wanted)


def set_jit(enabled: bool | None) -> None:
    """Run fused elementwise chains on the host as compiled loops (True: an ImportError
    naming the extra when Numba is missing), as NumPy calls op by op (False), or as the
    default decides (None: compiled where Numba is installed)."""
    if enabled and not jit_installed():
        raise ImportError(f"set_jit(True) {JIT_HINT}")
    _state["jit"] = None if enabled is None else bool(enabled)


def kernel_threads() -> int:
    """How many threads a CPU kernel may split independent work over."""
    return _state["kernel_threads"]


def blas_threads() -> int | None:
    """The BLAS thread count runs ask for: None (minigraph's default), 0 (BLAS left alone)
    or a count."""
    return _state["blas_threads"]


def set_blas_threads(n: int | None) -> None:
    """Set the BLAS library's thread count during runs: None for minigraph's default
    (see minigraph.blas), 0 to leave BLAS alone (its own threads, one a core), or a count.
    A Session's ``intra_op_parallelism_threads`` still bounds it."""
    if n is not None and (isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0):
        raise ValueError(f"BLAS threads must be None or an int >= 0, got {n!r}")
    _state["blas_threads"] = None if n is None else int(n)


def check_byte_count(value: Any, what: str) -> int | None:
    """None, or a non-negative int (bools and floats refused): a byte count."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{what} must be an int number of bytes or None, got {value!r}")
    if int(value) < 0:
        raise ValueError(f"{what} must be >= 0, got {value}")
    return int(value)


def set_max_tensor_bytes(limit: int | None) -> None:
    """Cap the bytes one tensor may take (None: the machine's free memory).

    An output larger than this is a ResourceExhaustedError naming the node and the
    bytes asked for, raised before anything is allocated.
    """
    _state["max_tensor_bytes"] = check_byte_count(limit, "max_tensor_bytes")


def max_tensor_bytes_set() -> int | None:
    """The cap set by :func:`set_max_tensor_bytes` (or the environment), None if unset."""
    return _state["max_tensor_bytes"]


def max_tensor_bytes() -> int:
    """The bytes one tensor may take now: the set cap, else the machine's free memory."""
    cap = _state["max_tensor_bytes"]
    return free_memory() if cap is None else cap


_free: list[float] = [0.0, 0]  # (when read, bytes)
_FREE_MEMORY_TTL = 1.0


def _read_free_memory() -> int:
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 2**63 - 1


def _address_space_left() -> int | None:
    """What this process may still map under an address-space limit (RLIMIT_AS, ``ulimit
    -v``), else None: past it an allocation fails (MemoryError) however much memory is
    free."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft == resource.RLIM_INFINITY:
            return None
        with open("/proc/self/statm", "rb") as f:
            mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (ImportError, OSError, ValueError, IndexError):
        return None
    return max(soft - mapped, 0)


def free_memory() -> int:
    """The machine's free memory in bytes (MemAvailable, else physical memory), at most
    what an address-space limit still lets the process map, with the host pool's free
    buffers (the system counts them as used); cached 1 s."""
    now = time.monotonic()
    if now - _free[0] > _FREE_MEMORY_TTL:
        free = _read_free_memory()
        left = _address_space_left()
        _free[1] = (free if left is None else min(free, left)) + host_pool.POOL.free_bytes()
        _free[0] = now
    return int(_free[1])


def _default_host_pool_bytes() -> int:
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        physical = 8 << 30
    return min(1 << 30, physical // 8)


def host_pool_bytes() -> int:
    """How many bytes of large host buffers the pool may hold, in use or free."""
    limit = _state["host_pool_bytes"]
    if limit is None:
        limit = _state["host_pool_bytes"] = _default_host_pool_bytes()
    return limit


def set_host_pool_bytes(limit: int | None) -> None:
    """Size the pool of large host buffers (None: the default; 0: no pool).

    A kernel's output of 1 MB or more on the host is a view of a pooled buffer, reused
    once no array refers to it: later runs skip the page faults of fresh memory (see
    :mod:`minigraph.host_pool`). Free buffers over the new size are released at once.
    """
    _state["host_pool_bytes"] = check_byte_count(limit, "host_pool_bytes")
    host_pool.POOL.trim(host_pool_bytes())


# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4


def keep_freed_memory() -> bool:
    """Let glibc keep freed memory for the next allocation: True when it now does.

    NumPy gets large arrays from ``malloc``, which maps fresh pages from the system for
    each one and unmaps them when it is freed, so every large output pays a page fault per
    4 KB page on first touch (about 7 ms per 64 MB on the project's VM). TensorFlow's
    allocator keeps its memory instead. This makes glibc do the same for the whole
    process: no allocation is mapped on its own, and freed memory is never trimmed. The
    process's resident memory then stays at its peak. Linux with glibc only (False
    elsewhere); it cannot be undone, so it is an explicit choice, never made on import
    unless ``MINIGRAPH_KEEP_FREED_MEMORY=1`` is set. A 256 MB DynamicStitch went from 95
    to 67 ms (benchmarks/ops.py's parallel stitch case, min of 7, 2026-12-03).
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl, macOS, Windows)
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_MAX, 0)) and bool(mallopt(_M_TRIM_THRESHOLD, 2**31 - 1))


if os.environ.get("MINIGRAPH_KEEP_FREED_MEMORY", "") not in ("", "0"):
    keep_freed_memory()
