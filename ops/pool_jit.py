"""2-D MaxPool, AvgPool and MaxPoolGrad as compiled loops, where Numba (the ``jit`` extra)
is installed: see minigraph.jit.

NumPy's forms (conv_kernels.window_max and window_mean, pool_grad_kernels.max_pool_grad;
AvgPool's also pads a copy of the input) make a pass over
the whole batch for each tap, and the gradient several more to pick each window's winner
without masked writes; with few channels each pass runs NumPy's inner loop once a pixel.
The loops here visit each window once, its channels the vectorised inner loop, and read the
padding as absent (no padded copy). The rules are TensorFlow's, as the NumPy forms':

- MaxPool: start at the dtype's lowest value and take a cell only if it is greater, so NaN
  is skipped, the first of equal zeros stays, a window of -inf gives the lowest value.
- AvgPool: the cells inside the input added from 0 in scan order, divided by their count
  (SAME's padding is not counted), as window_mean: its bits.
- MaxPoolGrad (SpatialMaxPoolWithArgMaxHelper): the window's first cell inside the input
  wins, then each later cell greater than the best so far; each window's gradient is added
  to its winner's cell of a zeroed image, windows in row-major order (so sums round as
  TensorFlow's do, and a -0.0 gradient gives 0.0).
"""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np

from minigraph import jit
from minigraph.kernel import KernelContext

__all__ = ["avg_pool", "max_pool", "max_pool_grad"]

Pads = Sequence[tuple[int, int]]  # (before, after) of each spatial dim

# The cells of output (r, p)'s window inside the input, in scan order, ``cell`` each one's
# channels: the loop header both loops share, its body indented under it by _each_cell.
_CELLS = """\
for i in range(kh):
    row = r * sh + i - top
    if row < 0 or row >= h:
        continue
    for j in range(kw):
        col = p * sw + j - left
        if col < 0 or col >= w:
            continue
        cell = x[n, row, col]
"""


def _each_cell(indent: int, body: str) -> str:
    """_CELLS with ``body`` inside, at ``indent`` spaces."""
    inner = textwrap.indent(textwrap.dedent(body), " " * 8)
    return textwrap.indent(_CELLS + inner, " " * indent)


_SOURCE = (
    """
def window_max(x, out, kh, kw, sh, sw, top, left, lowest, first, last):
    h, w = x.shape[1], x.shape[2]
    oh, ow, c = out.shape[1], out.shape[2], out.shape[3]
    for q in range(first, last):
        n = q // oh
        r = q - n * oh
        for p in range(ow):
            o = out[n, r, p]
            for ch in range(c):
                o[ch] = lowest
"""
    + _each_cell(
        12,
        """
        for ch in range(c):
            v = cell[ch]
            o[ch] = v if v > o[ch] else o[ch]
        """,
    )
    + """

def window_mean(x, out, kh, kw, sh, sw, top, left, zero, first, last):
    h, w = x.shape[1], x.shape[2]
    oh, ow, c = out.shape[1], out.shape[2], out.shape[3]
    count_in_dtype = np.empty(1, x.dtype)
    for q in range(first, last):
        n = q // oh
        r = q - n * oh
        for p in range(ow):
            o = out[n, r, p]
            for ch in range(c):
                o[ch] = zero
            count = 0
"""
    + _each_cell(
        12,
        """
        count += 1
        for ch in range(c):
            o[ch] = o[ch] + cell[ch]
        """,
    )
    + """
            count_in_dtype[0] = count
            d = count_in_dtype[0]
            for ch in range(c):
                o[ch] = o[ch] / d

def max_pool_grad(x, grad, out, kh, kw, sh, sw, top, left, first, last):
    h, w, c = x.shape[1], x.shape[2], x.shape[3]
    oh, ow = grad.shape[1], grad.shape[2]
    best = np.empty(c, x.dtype)
    at = np.empty(c, np.int64)
    for n in range(first, last):
        image = out[n].reshape(h * w, c)
        for here in range(h * w):
            for ch in range(c):
                image[here, ch] = 0
        for r in range(oh):
            for p in range(ow):
                found = False
"""
    + _each_cell(
        16,
        """
        here = row * w + col
        if not found:
            for ch in range(c):
                best[ch] = cell[ch]
                at[ch] = here
            found = True
            continue
        for ch in range(c):
            v = cell[ch]
            take = v > best[ch]
            best[ch] = v if take else best[ch]
            at[ch] = here if take else at[ch]
        """,
    )
    + """
                if found:
                    g = grad[n, r, p]
                    for ch in range(c):
                        image[at[ch], ch] = image[at[ch], ch] + g[ch]
"""
)


@functools.cache
def _loops() -> tuple[Any, Any, Any]:
    return jit.compile_source(_SOURCE, "pooling", {}, "window_max", "window_mean", "max_pool_grad")


def _runs(x: Any, size: int, k: Sequence[int], ctx: KernelContext) -> bool:
    return len(k) == 2 and x.dtype in (np.float32, np.float64) and jit.wanted(ctx.xp, size)


def max_pool(
    ctx: KernelContext, x: Any, pads: Pads, outs: Sequence[int], k: Sequence[int],
    s: Sequence[int],
) -> Any | None:  # fmt: skip
    """The largest cell of each window of channels-last ``x`` [n, h, w, c] (TensorFlow's
    rule, above) into a new [n, *outs, c] array, its output rows over the kernels' threads;
    None where the NumPy form runs (a GPU, a small output, another dtype, 3-D, no Numba)."""
    window_max, _, _ = _loops()
    lowest = np.finfo(x.dtype).min if x.dtype.kind == "f" else 0  # (ints: no loop)
    return _by_output_rows(ctx, window_max, x, pads, outs, k, s, x.dtype.type(lowest))


def avg_pool(
    ctx: KernelContext, x: Any, pads: Pads, outs: Sequence[int], k: Sequence[int],
    s: Sequence[int],
) -> Any | None:  # fmt: skip
    """The mean of each window of channels-last ``x`` [n, h, w, c] over its cells inside
    the input, as conv_kernels.window_mean computes it (from 0, each cell added in scan
    order, then divided by their count: its bits) into a new [n, *outs, c] array; None
    where the NumPy form runs (a GPU, a small output, another dtype, 3-D, no Numba)."""
    _, window_mean, _ = _loops()
    return _by_output_rows(ctx, window_mean, x, pads, outs, k, s, x.dtype.type(0))


def _by_output_rows(
    ctx: KernelContext, loop: Any, x: Any, pads: Pads, outs: Sequence[int], k: Sequence[int],
    s: Sequence[int], start: Any,
) -> Any | None:  # fmt: skip
    """A pooling ``loop`` (window_max, window_mean) into a new [n, *outs, c] array, its
    output rows over the kernels' threads; None where it does not run."""
    n, c = x.shape[0], x.shape[-1]
    if not _runs(x, n * outs[0] * outs[1] * c, k, ctx):
        return None
    x = np.ascontiguousarray(x)  # a channels-first input, transposed
    out = ctx.empty((n, *outs, c), x.dtype)
    rows = n * outs[0]
    step = max(1, -(-rows // (4 * ctx.threads)))

    def piece(b: int) -> None:
        end = min(rows, (b + 1) * step)
        loop(x, out, *k, *s, pads[0][0], pads[1][0], start, b * step, end)

    ctx.parallel_each(piece, -(-rows // step), x.nbytes * k[0] * k[1])
    return out


def max_pool_grad(
    ctx: KernelContext, x: Any, grad: Any, pads: Pads, outs: Sequence[int], k: Sequence[int],
    s: Sequence[int],
) -> Any | None:  # fmt: skip
    """MaxPoolGrad of channels-last ``x`` [n, h, w, c] and ``grad`` [n, *outs, c] (the
    rule above) into a new array shaped as ``x``, images over the kernels' threads; None
    where the NumPy form runs (a GPU, a small input, another dtype, 3-D, no Numba)."""
    if not _runs(x, x.size, k, ctx) or grad.dtype != x.dtype:
        return None
    _, _, pool_grad = _loops()
    x = np.ascontiguousarray(x)
    grad = np.ascontiguousarray(grad)
    out = ctx.empty(x.shape, x.dtype)

    def piece(n: int) -> None:
        pool_grad(x, grad, out, *k, *s, pads[0][0], pads[1][0], n, n + 1)

    ctx.parallel_each(piece, x.shape[0], 2 * x.nbytes * k[0] * k[1])
    return out
