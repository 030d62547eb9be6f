"""The BLAS library's thread count, owned by minigraph while it runs (issue 26).

NumPy's matrix products run in OpenBLAS, which splits each product over its own threads
(by default one a core) that spin while they wait for one another. Left alone, those
threads fight with minigraph's own pools (two independent steps on the inter-op pool each
splitting a product over every core) and with any other busy process: one busy core made
a ResNet50 run 3x slower here, 200x at a higher priority. So each ``Session.run`` whose
plan may call BLAS (a matrix product, a convolution, Einsum, a function call or loop) sets
BLAS's thread count to its own budget (see :func:`run_threads`) and puts the caller's back
when done; function bodies and inter-op steps run inside that window. Other runs (most of
them microseconds long) leave it alone and pay nothing; one that sets it pays about 2 µs.

The library is the OpenBLAS that NumPy loaded: found on first use (never at import) among
the process's loaded libraries (``/proc/self/maps``, else the files beside NumPy's
extension), opened with ``RTLD_NOLOAD`` so nothing new is loaded, and driven through its
own API: ``openblas_set_num_threads``/``openblas_get_num_threads``, or the prefixed names
of the scipy-openblas builds NumPy 2's wheels ship (``scipy_openblas_set_num_threads64_``).
Where none is found (another BLAS, a NumPy built without one) nothing is set and
:func:`available` is False; MKL's and BLIS's pools are then the user's to size
(``MKL_NUM_THREADS``, or threadpoolctl).

Thread-safety: the count is process-wide, not per thread. Runs in flight at once (from
several threads or Sessions) share one setting: the smallest any of them asked for. The
first run to start saves the caller's count; the last one to finish restores it; a BLAS
call elsewhere in the process during a run gets minigraph's count.
"""

from __future__ import annotations

import ctypes
import os
import threading
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from . import config

__all__ = [
    "available",
    "get_threads",
    "set_threads",
    "libraries",
    "run_threads",
    "plan_calls_blas",
    "may_call_blas",
    "enter",
    "leave",
]

# The count a run asks for unless told (mg.config.set_blas_threads). One thread: OpenBLAS
# splits a product into equal static parts, so one part whose thread shares its core with
# a busy process holds up the whole product while the others spin. Measured on 2 cores
# (benchmarks/under_load.py, docs/benchmarks.md): with a busy process at a higher priority
# the LSTM loop at batch 512 took 506 ms with 2 BLAS threads against 30 with one (13 and 15
# quiet); quiet, one thread cost up to 12% (none at batch 1, where products are small).
DEFAULT_THREADS = 1

# (set, get) symbol names, tried in order in each loaded OpenBLAS.
_SYMBOLS = (
    ("openblas_set_num_threads", "openblas_get_num_threads"),
    ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
    ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
    ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
)

_Setter = Callable[[int], None]
_Getter = Callable[[], int]

_lock = threading.Lock()
_found: list[tuple[str, _Setter, _Getter]] | None = None  # None: not looked for yet
_runs: dict[int, int] = {}  # threads asked for -> how many runs in flight ask it
_saved: list[int] = []  # each library's count before the first run in flight started
_applied = 0  # the count in force while runs are in flight
_changed = False  # whether minigraph set it since the first of them started


def _loaded_paths() -> list[str]:
    """Paths of loaded shared libraries that look like OpenBLAS, NumPy's first."""
    paths: list[str] = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.rsplit(" ", 1)[-1].strip()
                if "openblas" in os.path.basename(path).lower() and path not in paths:
                    paths.append(path)
    except OSError:
        pass
    if not paths:  # no /proc (macOS): the libraries NumPy's wheel ships beside it
        try:
            import numpy

            root = Path(numpy.__file__).resolve().parent
            for folder in (root.parent / "numpy.libs", root / ".dylibs", root.parent / "numpy"):
                paths += [str(p) for p in sorted(folder.glob("*openblas*"))]
        except (ImportError, OSError):
            pass
    return paths


def _open(path: str) -> tuple[_Setter, _Getter] | None:
    """The set/get functions of an already loaded library, or None."""
    mode = getattr(os, "RTLD_NOLOAD", 0) | getattr(os, "RTLD_LOCAL", 0)
    try:
        lib = ctypes.CDLL(path, mode=mode)  # RTLD_NOLOAD: fails unless already loaded
    except OSError:
        return None
    for set_name, get_name in _SYMBOLS:
        setter = getattr(lib, set_name, None)
        getter = getattr(lib, get_name, None)
        if setter is not None and getter is not None:
            # No argtypes: a Python int passes as a C int, at half the cost of declaring it.
            setter.restype = None
            getter.argtypes, getter.restype = [], ctypes.c_int
            return setter, getter
    return None


def libraries() -> list[tuple[str, _Setter, _Getter]]:
    """Each loaded OpenBLAS whose thread count can be set: (path, set, get). Looked for once,
    on first use (NumPy is imported by then, so its BLAS is loaded)."""
    global _found
    if _found is None:
        with _lock:
            if _found is None:
                import numpy  # noqa: F401  (loads its BLAS, if not yet)

                found = []
                for path in _loaded_paths():
                    fns = _open(path)
                    if fns is not None:
                        found.append((path, *fns))
                _found = found
    return _found


def available() -> bool:
    """Whether minigraph can set the BLAS library's thread count in this process."""
    return bool(libraries())


def get_threads() -> int | None:
    """The BLAS thread count now (the first library's), or None where it is not known."""
    libs = libraries()
    return int(libs[0][2]()) if libs else None


def set_threads(n: int) -> int | None:
    """Set every found library's thread count to ``n`` (>= 1); return the previous count
    (the first library's), or None where none was found. Process-wide; prefer a Session's
    ``ConfigProto(intra_op_parallelism_threads=)``, which sets it only while a run runs."""
    if n < 1:
        raise ValueError(f"BLAS threads must be >= 1, got {n}")
    libs = libraries()
    before = int(libs[0][2]()) if libs else None
    for _, setter, _ in libs:
        setter(int(n))
    return before


# Op types whose CPU kernels call BLAS (np.matmul, np.einsum), besides any type naming a
# convolution or a matrix product, and any op that runs a function body (a loop, a call).
BLAS_OPS = frozenset({"Einsum"})
_plans: dict[int, tuple[weakref.ref[Any], bool]] = {}  # id(plan) -> (plan, may call BLAS)


def may_call_blas(op_type: str, attrs: Mapping[str, Any]) -> bool:
    """Whether a step of this op may call BLAS: the rule :func:`plan_calls_blas` applies."""
    if op_type in BLAS_OPS or "Conv" in op_type or "MatMul" in op_type:
        return True
    return any(_is_function(v) for v in attrs.values())


def _is_function(value: Any) -> bool:
    from .functions import Function  # imported on use: functions imports the executor

    if isinstance(value, tuple | list):
        return any(isinstance(v, Function) for v in value)
    return isinstance(value, Function)


def plan_calls_blas(plan: Any) -> bool:
    """Whether a run of ``plan`` may call BLAS (looked at once per plan). Only those runs set
    the thread count: the rest, most of all small graphs of microseconds, pay nothing."""
    entry = _plans.get(id(plan))
    if entry is not None and entry[0]() is plan:
        return entry[1]
    calls = any(may_call_blas(step.op_type, step.attrs) for step in plan.steps)
    _plans[id(plan)] = (weakref.ref(plan), calls)
    weakref.finalize(plan, _plans.pop, id(plan), None)
    return calls


def run_threads(intra_op_threads: int | None) -> int:
    """The BLAS thread count a run asks for (0: leave BLAS alone): ``mg.config.
    blas_threads()`` if set, else DEFAULT_THREADS; at most ``intra_op_threads`` (a Session's
    ``intra_op_parallelism_threads``) when that is given."""
    setting = config.blas_threads()
    if setting == 0:
        return 0
    n = DEFAULT_THREADS if setting is None else setting
    return min(n, intra_op_threads) if intra_op_threads else n


def enter(threads: int) -> None:
    """A run starts and wants BLAS at ``threads`` or fewer: apply the smallest count of the
    runs in flight, never more than the caller's own (saved when this run is the first)."""
    global _applied, _changed
    libs = _found if _found is not None else libraries()
    if not libs:
        return
    with _lock:
        if _runs:
            _runs[threads] = _runs.get(threads, 0) + 1
            _apply(libs)
            return
        _runs[threads] = 1
        _saved[:] = [get() for _, _, get in libs]
        _applied = min(threads, _saved[0])
        _changed = _applied != _saved[0]
        if _changed:
            for _, setter, _ in libs:
                setter(_applied)


def leave(threads: int) -> None:
    """A run that asked for ``threads`` is done: restore the caller's count when it was the
    last in flight, else apply the smallest count of those still running."""
    libs = _found
    if not libs:
        return
    with _lock:
        left = _runs[threads] - 1
        if left:
            _runs[threads] = left  # the smallest count asked for is the same
            return
        del _runs[threads]
        if _runs:
            _apply(libs)
        elif _changed:
            for (_, setter, _), n in zip(libs, _saved):
                setter(n)


def _apply(libs: list[tuple[str, _Setter, _Getter]]) -> None:
    """Set the smallest count the runs in flight ask for, if not in force (under _lock)."""
    global _applied, _changed
    want = min(min(_runs), _saved[0])
    if want != _applied:
        for _, setter, _ in libs:
            setter(want)
        _applied, _changed = want, True
