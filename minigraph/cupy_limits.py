"""Where CuPy does less than NumPy, in one place: kernels ask, the simulated GPU enforces.

Read from CuPy's source: ``ufunc.at`` is ``ndarray._scatter_op`` (``cupy/_core/_kernel.pyx``),
which exists for ``add``, ``maximum`` and ``minimum`` only and launches one CUDA atomic
per element (``cupy/_core/_routines_indexing.pyx``, ``_scatter_op_single``), so only on
the dtypes CUDA has those atomics for, and it passes its operands' extents to the kernel
as int32. ``ufunc.reduceat`` exists for ``add`` only and is
computed as differences of a running sum, which loses float precision; minigraph's
kernels never call it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ATOMIC_AT_DTYPES", "AT_MAX_ELEMENTS", "has_atomic_at"]


def _dtypes(*names: str) -> frozenset[np.dtype]:
    return frozenset(np.dtype(n) for n in names)


# ufunc name -> the dtypes whose ``ufunc.at`` CuPy implements with atomics.
ATOMIC_AT_DTYPES: dict[str, frozenset[np.dtype]] = {
    "add": _dtypes("int32", "uint32", "uint64", "float16", "float32", "float64"),
    "maximum": _dtypes("int32", "uint32", "uint64", "float32", "float64"),
    "minimum": _dtypes("int32", "uint32", "uint64", "float32", "float64"),
}


# The most elements an operand of CuPy's ``ufunc.at`` may have (int32 extents).
AT_MAX_ELEMENTS = 2**31 - 1


def has_atomic_at(ufunc_name: str, dtype: np.dtype, size: int = 0) -> bool:
    """Whether CuPy's ``getattr(cupy, ufunc_name).at`` works on arrays of ``dtype`` whose
    largest operand has ``size`` elements."""
    known = np.dtype(dtype) in ATOMIC_AT_DTYPES.get(ufunc_name, frozenset())
    return known and size <= AT_MAX_ELEMENTS
