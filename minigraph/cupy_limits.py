"""Where CuPy does less than NumPy, in one place: kernels ask, the simulated GPU enforces.

``ufunc.at`` is ``ndarray._scatter_op`` (``cupy/_core/_kernel.pyx``): one CUDA atomic per
element (``cupy/_core/_routines_indexing.pyx``, ``_scatter_op_single``), so it exists only
for the ufuncs and dtypes CUDA has atomics for; any other ufunc raises
NotImplementedError, any other dtype TypeError. The table below is CuPy 13's (read from
13.6's kernels and messages), the oldest release the ``cuda12``/``cuda13`` extras allow:
CuPy 14 also takes int64 for ``add``, ``maximum`` and ``minimum``, and passes the
operands' extents to the kernel as int64 where 13 passes int32, but kernels that stay
within 13's limits run on both. ``ufunc.reduceat`` exists for ``add`` only and is computed
as differences of a running sum, which loses float precision; minigraph's kernels never
call it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ATOMIC_AT_DTYPES", "AT_MAX_ELEMENTS", "has_atomic_at"]


def _dtypes(*names: str) -> frozenset[np.dtype]:
    return frozenset(np.dtype(n) for n in names)


_BITWISE = _dtypes("int32", "int64", "uint32", "uint64")

# ufunc name -> the dtypes whose ``ufunc.at`` CuPy 13 and later implement with atomics.
ATOMIC_AT_DTYPES: dict[str, frozenset[np.dtype]] = {
    "add": _dtypes("int32", "uint32", "uint64", "float16", "float32", "float64"),
    "subtract": _dtypes("int32", "uint32"),
    # Not float64: CuPy 14.2's float64 max/min atomics keep float32's precision (an H200
    # gave 0.095070019364357 for 0.09507002147674988), so those kernels sort instead.
    "maximum": _dtypes("int32", "uint32", "uint64", "float32"),
    "minimum": _dtypes("int32", "uint32", "uint64", "float32"),
    "bitwise_and": _BITWISE,
    "bitwise_or": _BITWISE,
    "bitwise_xor": _BITWISE,
}

# The most elements an operand of CuPy 13's ``ufunc.at`` may have (int32 extents).
AT_MAX_ELEMENTS = 2**31 - 1


def has_atomic_at(ufunc_name: str, dtype: np.dtype, size: int = 0) -> bool:
    """Whether CuPy's ``getattr(cupy, ufunc_name).at`` works on arrays of ``dtype`` whose
    largest operand has ``size`` elements."""
    known = np.dtype(dtype) in ATOMIC_AT_DTYPES.get(ufunc_name, frozenset())
    return known and size <= AT_MAX_ELEMENTS
