"""A stand-in for CuPy on machines without a GPU, for testing the GPU path.

With ``mg.config.set_simulated_gpu(True)`` (or ``MINIGRAPH_SIMULATED_GPU=1``), "/gpu:0"
is available and its array module is this one: NumPy behind another module object. Plans
then place nodes on the GPU and insert host/device copies exactly as with a real GPU, and
kernels take their non-NumPy code paths (``xp is not np``), so a machine without a GPU
still runs the GPU kernels' logic. Values stay in host memory; nothing here is fast.

Where CuPy accepts less than NumPy, so does this module, so that a kernel which passes
on the simulated GPU does not fail on a real one for want of a CuPy feature
(:mod:`minigraph.cupy_limits`):

- ``ufunc.at`` exists only for the ufuncs and dtypes CUDA has atomics for (``add``,
  ``maximum`` and ``minimum`` on the common 32- and 64-bit types, ``subtract`` on int32
  and uint32 only, the bitwise ops); others raise NotImplementedError, other dtypes
  TypeError.
- ``ufunc.reduceat`` exists only for ``add``.
- ``argsort`` and ``sort`` take no ``kind`` but the stable one; ``take`` has no ``mode``;
  there is no ``errstate``.
- ``put`` writes in a shuffled order, so with a repeated index any one value may win, as
  when a GPU's writes race; kernels must not count on NumPy's in-order writes.
- While a CUDA graph is "captured" (:func:`capturing`, see minigraph.cuda_graphs),
  ``asnumpy`` (a read back to the host) fails as CuPy's does during stream capture.
"""

from __future__ import annotations

import contextlib
import threading
import types
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np

from .cupy_limits import ATOMIC_AT_DTYPES, has_atomic_at

__all__ = ["xp", "capturing"]

_capture = threading.local()  # whether this thread is "capturing" a CUDA graph


@contextlib.contextmanager
def capturing() -> Iterator[None]:
    """A simulated stream capture on this thread: host reads fail until it ends."""
    _capture.on = True
    try:
        yield
    finally:
        _capture.on = False


_NOT_IN_CUPY = frozenset({"errstate", "seterr", "geterr"})


class _Ufunc:
    """A NumPy ufunc with CuPy's narrower ``at`` and ``reduceat``."""

    def __init__(self, ufunc: np.ufunc) -> None:
        self._ufunc = ufunc
        self._name = ufunc.__name__
        self.__name__ = f"cupy_{self._name}"  # as CuPy names its ufuncs

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._ufunc(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ufunc, name)

    def at(self, a: np.ndarray, indices: Any, b: Any = None) -> None:
        if self._name not in ATOMIC_AT_DTYPES:
            raise NotImplementedError(f"`{self.__name__}.at` is not supported yet")
        if not has_atomic_at(self._name, a.dtype):
            raise TypeError(f"{self.__name__}.at does not support {a.dtype}")
        if not has_atomic_at(self._name, a.dtype, max(a.size, np.size(indices))):
            raise OverflowError(f"{self.__name__}.at: more elements than int32 extents hold")
        self._ufunc.at(a, indices, b)

    def reduceat(self, array: Any, indices: Any, axis: int = 0, **kwargs: Any) -> Any:
        if self._name != "add":
            raise NotImplementedError(f"`{self.__name__}.reduceat` is not supported yet")
        return self._ufunc.reduceat(array, indices, axis=axis, **kwargs)


def _sort_kind(kind: str | None) -> None:
    if kind not in (None, "stable"):
        raise ValueError(f"CuPy sorts stably only; kind={kind!r} is not accepted")


class _SimulatedCuPy(types.ModuleType):
    """NumPy's functions, with CuPy's copying ``asarray`` and ``asnumpy`` and its limits."""

    ndarray = np.ndarray

    def __getattr__(self, name: str) -> Any:
        if name in _NOT_IN_CUPY:
            raise AttributeError(f"CuPy has no {name}")
        value = getattr(np, name)
        return _Ufunc(value) if isinstance(value, np.ufunc) else value

    @staticmethod
    def asarray(x: Any, dtype: Any = None) -> np.ndarray:
        if isinstance(x, np.ndarray) and (dtype is None or x.dtype == dtype):
            return x if x.flags.writeable else np.array(x)  # "device" arrays are writable
        return np.array(x, dtype=dtype)

    @staticmethod
    def asnumpy(x: Any) -> np.ndarray:
        if getattr(_capture, "on", False):
            raise RuntimeError(
                "cudaErrorStreamCaptureUnsupported: operation not permitted when stream is "
                "capturing (a device-to-host copy, simulated)"
            )
        return np.array(x, copy=True)

    @staticmethod
    def argsort(a: Any, axis: int = -1, kind: str | None = None) -> np.ndarray:
        _sort_kind(kind)
        return np.argsort(a, axis=axis, kind="stable")

    @staticmethod
    def sort(a: Any, axis: int = -1, kind: str | None = None) -> np.ndarray:
        _sort_kind(kind)
        return np.sort(a, axis=axis, kind="stable")

    @staticmethod
    def put(
        a: np.ndarray, ind: Any, v: Any, mode: Literal["raise", "wrap", "clip"] = "wrap"
    ) -> None:
        ind = np.asarray(ind).reshape(-1)
        v = np.resize(np.asarray(v, a.dtype), ind.shape)  # repeated as necessary, as CuPy
        order = np.random.default_rng(ind.size).permutation(ind.size)
        np.put(a, ind[order], v[order], mode=mode)

    @staticmethod
    def take(a: Any, indices: Any, axis: int | None = None, out: Any = None) -> np.ndarray:
        return np.take(a, indices, axis=axis, out=out)


xp = _SimulatedCuPy("minigraph.simulated_cupy")
