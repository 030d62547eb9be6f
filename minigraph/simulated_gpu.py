"""A stand-in for CuPy on machines without a GPU, for testing the GPU path.

With ``mg.config.set_simulated_gpu(True)`` (or ``MINIGRAPH_SIMULATED_GPU=1``), "/gpu:0"
is available and its array module is this one: NumPy behind another module object. Plans
then place nodes on the GPU and insert host/device copies exactly as with a real GPU, and
kernels take their non-NumPy code paths (``xp is not np``), so a machine without a GPU
still runs the GPU kernels' logic. Values stay in host memory; nothing here is fast.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

__all__ = ["xp"]


class _SimulatedCuPy(types.ModuleType):
    """NumPy's functions, with CuPy's copying ``asarray`` and ``asnumpy``."""

    ndarray = np.ndarray

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)

    @staticmethod
    def asarray(x: Any, dtype: Any = None) -> np.ndarray:
        if isinstance(x, np.ndarray) and (dtype is None or x.dtype == dtype):
            return x if x.flags.writeable else np.array(x)  # "device" arrays are writable
        return np.array(x, dtype=dtype)

    @staticmethod
    def asnumpy(x: Any) -> np.ndarray:
        return np.array(x, copy=True)


xp = _SimulatedCuPy("minigraph.simulated_cupy")
