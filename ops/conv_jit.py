"""A 2-D depthwise convolution with one filter a channel (Keras's DepthwiseConv2D, the
separable convolutions of NASNet, MobileNet, EfficientNet) as one compiled loop over output
rows, where Numba (the ``jit`` extra) is installed: see minigraph.jit.

NumPy's forms (conv_kernels.depthwise_by_rows) make a pass over a piece of the output for
each tap, or an einsum whose inner loop is the channels of one pixel; the loop here keeps an
output row in the L1 cache while it adds all the taps' products into it, the channels (or,
with a column stride of 1, the whole row) its vectorised inner loop. Each output starts at
0 and adds its taps' products in tap order, each product and sum rounded to the dtype, as
the NumPy forms do: the same values (NaN payloads aside, as between those forms).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from minigraph import jit
from minigraph.kernel import KernelContext

__all__ = ["depthwise_rows"]

# Output rows of a piece of work for the threads: about this many bytes of output.
_PIECE_BYTES = 1 << 18

_SOURCE = """
def depthwise(x, w, tiled, out, s0, s1, d0, d1, first, last):
    oh, ow, c = out.shape[1], out.shape[2], out.shape[3]
    kh, kw = w.shape[0], w.shape[1]
    for q in range(first, last):
        n = q // oh
        r = q - n * oh
        o = out[n, r]
        for p in range(ow):
            for ch in range(c):
                o[p, ch] = 0
        for i in range(kh):
            row = x[n, r * s0 + i * d0]
            if s1 == 1:  # windows side by side: the whole row is one run (tiled weights)
                flat_out = o.reshape(ow * c)
                flat_row = row.reshape(row.shape[0] * c)
                for j in range(kw):
                    window = flat_row[j * d1 * c : j * d1 * c + ow * c]  # (a computed
                    wt = tiled[i, j]  # index in the loop below would keep LLVM from vectors)
                    for e in range(ow * c):
                        flat_out[e] = flat_out[e] + window[e] * wt[e]
            else:
                for j in range(kw):
                    wt = w[i, j]
                    for p in range(ow):
                        pixel = row[p * s1 + j * d1]
                        for ch in range(c):
                            o[p, ch] = o[p, ch] + pixel[ch] * wt[ch]
"""


@functools.cache
def _loop() -> Any:
    (depthwise,) = jit.compile_source(_SOURCE, "depthwise convolution", {}, "depthwise")
    return depthwise


def depthwise_rows(
    ctx: KernelContext, xpad: Any, weights: Any, outs: Sequence[int], s: Sequence[int],
    d: Sequence[int],
) -> Any | None:  # fmt: skip
    """The depthwise convolution of the padded channels-last image ``xpad`` [n, h, w, c]
    with ``weights`` [kh, kw, c] into a new [n, oh, ow, c] array, its output rows over
    the kernels' threads; None where the NumPy forms run (a GPU, a small output, another
    dtype, Numba off or missing)."""
    n, c = xpad.shape[0], xpad.shape[-1]
    oh, ow = outs
    size = n * oh * ow * c
    if weights.dtype not in (np.float32, np.float64) or not jit.wanted(ctx.xp, size):
        return None
    loop = _loop()
    x = np.ascontiguousarray(xpad, weights.dtype)  # a channels-first input, unpadded
    w = np.ascontiguousarray(weights)
    tiled = np.tile(w, (1, 1, ow)) if s[1] == 1 else np.empty((0, 0, 0), w.dtype)
    out = ctx.empty((n, oh, ow, c), weights.dtype)
    rows = n * oh
    step = max(1, min(_PIECE_BYTES // max(1, ow * c * out.itemsize), -(-rows // ctx.threads)))

    def piece(p: int) -> None:
        loop(x, w, tiled, out, s[0], s[1], d[0], d[1], p * step, min(rows, (p + 1) * step))

    ctx.parallel_each(piece, -(-rows // step), out.nbytes * w.shape[0] * w.shape[1])
    return out
