"""Adam's update (ResourceApplyAdam, ops/training_ops.py) as one compiled loop, where Numba
(the ``jit`` extra) is installed: see minigraph.jit.

TensorFlow's formula as NumPy calls is a dozen passes over the variable's size, each a
read and a write of memory (784x256 float32: 1.3 ms of a 3.6 ms training step, on blocks
that stay in the cache); the loop reads var, m, v and the gradient once and writes the
three results once. Its operations are training_ops._adam's, in its order, each rounded to
the dtype (the scalar terms computed before, in the dtype, as there), so the values are
the NumPy path's; where two NaNs meet, which payload survives may differ.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from minigraph import jit
from minigraph.kernel import KernelContext

__all__ = ["adam"]

# Elements a piece for the kernels' threads.
_PIECE = 1 << 16


def adam(ctx: KernelContext, nesterov: bool, arrays: Sequence[Any], tensors: Sequence[Any],
         outs: Sequence[Any]) -> bool:  # fmt: skip
    """Adam's new var, m and v into ``outs`` from the flat ``arrays`` (var, m, v) and
    ``tensors`` (the scalars as training_ops._adam_scalars gives them, then the flat
    gradient); False, with nothing written, where the NumPy calls run (a GPU, a small
    variable, a dtype other than float32/float64, Numba off or missing)."""
    var = arrays[0]
    if var.dtype not in (np.float32, np.float64) or not jit.wanted(ctx.xp, var.size):
        return False
    *scalars, grad = tensors
    loop = _loop(nesterov)
    n = var.size

    def piece(p: int) -> None:
        part = slice(p * _PIECE, min(n, (p + 1) * _PIECE))
        loop(*(a[part] for a in (*arrays, grad, *outs)), *scalars)

    ctx.parallel_each(piece, -(-n // _PIECE), 7 * var.nbytes)
    return True


@functools.cache
def _loop(nesterov: bool) -> Any:
    """The update loop, compiled once per process: each line one of _adam's operations."""
    step = "(g * c1 + beta1 * new_m) * alpha" if nesterov else "new_m * alpha"
    source = "\n".join(
        [
            "def adam(var, m, v, grad, out_var, out_m, out_v, alpha, c1, c2, epsilon, beta1):",
            "    for i in range(var.size):",
            "        g = grad[i]",
            "        new_m = (g - m[i]) * c1 + m[i]",
            "        new_v = (g * g - v[i]) * c2 + v[i]",
            f"        step = {step}",
            "        out_m[i] = new_m",
            "        out_v[i] = new_v",
            "        out_var[i] = var[i] - step / (np.sqrt(new_v) + epsilon)",
        ]
    )
    (loop,) = jit.compile_source(source, "adam", {}, "adam")
    return loop
