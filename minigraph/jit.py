"""Host loops compiled by Numba (the ``jit`` extra): when a kernel takes one, and how it is
compiled, in one place for fused chains (minigraph.fusion_jit), Erf/Erfc (ops/special.py),
depthwise convolutions (ops/conv_jit.py), max pooling (ops/pool_jit.py) and Adam's update
(ops/training_jit.py).

How: ``nogil`` (the kernels' threads run loops side by side), NumPy's error model (a
division by zero gives inf or NaN, never an exception) and no fast-math, so LLVM neither
reassociates nor contracts ``a * b + c`` into a fused multiply-add: a loop of exactly
rounded operations gives the bits of the NumPy calls it replaces. Numba is imported at the
first compile, never by ``import minigraph``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import config
from .kernel import REUSE_MIN_SIZE

__all__ = ["MIN_SIZE", "compile_source", "wanted"]

# From this many elements a kernel takes its compiled loop (the NumPy path's own threshold
# for buffer reuse): below, a NumPy call costs less than Numba's dispatch.
MIN_SIZE = REUSE_MIN_SIZE


def wanted(xp: Any, size: int) -> bool:
    """Whether a host kernel of ``size`` output elements takes its compiled loop: on the
    host, large enough, and config.jit() on (by default: Numba installed)."""
    return xp is np and size >= MIN_SIZE and config.jit()


def compile_source(source: str, title: str, namespace: dict[str, Any], *names: str) -> Any:
    """The functions ``names`` that ``source`` defines (with ``namespace``'s globals, and
    ``np``), each compiled; ``title`` names the source in tracebacks."""
    import numba

    scope = {"np": np, **namespace}
    exec(compile(source, f"<minigraph {title}>", "exec"), scope)
    compiled = numba.njit(nogil=True, error_model="numpy", cache=False)
    return tuple(compiled(scope[name]) for name in names)
