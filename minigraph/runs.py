"""Elementwise work on operands that repeat a short block of the output's trailing axes.

NumPy runs its inner loop once per repeat of a broadcast operand's block: adding a bias of
4 channels to [1024, 8, 8, 4] calls it 65536 times, 4 elements each. :func:`widened` gives
the same arrays as [rows, run] views with the short operands tiled to the run, so each
call covers about _WIDE_RUN elements and every element still meets the same operands.
Used by elementwise fusion (minigraph.fusion) and by the op library's broadcasting kernels.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["may_widen", "widened"]

# A short repeated operand is tiled to about this many elements' run, ...
_WIDE_RUN = 1 << 10
# ... when it repeats at least this many times: tiling costs about 2.5 µs, a repeat saves
# 10-20 ns of NumPy's loop setup (an LSTM's [64, 256] bias add: 4.6 µs, 7.4 widened).
_WIDE_MIN_REPEATS = 1 << 10


def may_widen(sizes: Any, out_size: int) -> bool:
    """Whether :func:`widened` might widen operands of these sizes for an output of this
    many elements: one of them repeats often enough. A cheap test first (its own checks
    cost 1-1.5 µs, more than the add of a [64, 192] bias that it leaves as it is)."""
    return any(1 < n and n * _WIDE_MIN_REPEATS <= out_size for n in sizes)


def widened(inputs: tuple[Any, ...], out: np.ndarray) -> tuple[tuple[Any, ...], np.ndarray]:
    """The inputs and ``out`` as [rows, run] views, with each input that repeats a short
    block of ``out``'s trailing axes (a bias or a scale of a few channels) tiled to the
    run; unchanged unless every input is that, ``out``'s shape, or a single element, and
    the block repeats at least _WIDE_MIN_REPEATS times.

    A scale of 4 channels over [1024, 8, 8, 4] took 0.30 ms a multiply, against 0.05 with
    runs of 1024. Only for functions that pair elements as NumPy broadcasting does (ufuncs;
    ``Elementwise.broadcasts`` in a fused chain), so each element still meets the same
    operands: the bits do not change.
    """
    if out.ndim < 2 or out.size < _WIDE_MIN_REPEATS or not out.flags.c_contiguous:
        return inputs, out
    block = 0  # the longest repeated block, in elements
    for x in inputs:
        if x.size == 1 or (x.shape == out.shape and x.flags.c_contiguous):
            continue
        trailing = x.shape[next((i for i, d in enumerate(x.shape) if d != 1), x.ndim) :]
        if trailing != out.shape[out.ndim - len(trailing) :] or not x.flags.c_contiguous:
            return inputs, out
        block = max(block, x.size)
    if not block or block * 2 > _WIDE_RUN or out.size < block * _WIDE_MIN_REPEATS:
        return inputs, out
    # The most repeats, up to _WIDE_RUN // block, that divide the rows (both powers of two).
    repeats = math.gcd(out.size // block, 1 << ((_WIDE_RUN // block).bit_length() - 1))
    if repeats == 1:
        return inputs, out
    run = block * repeats
    wide = []
    for x in inputs:
        if x.size == 1:
            wide.append(x.reshape(()))
        elif x.size == out.size:
            wide.append(x.reshape(-1, run))
        else:  # the block, ``run // x.size`` times (np.tile's Python costs 3 us more)
            wide.append(x.reshape(1, -1).repeat(run // x.size, axis=0).reshape(-1))
    return tuple(wide), out.reshape(-1, run)
