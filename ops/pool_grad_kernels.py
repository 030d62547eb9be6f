"""The pooling gradients' arithmetic over any number of spatial dims, shared by the 2-D
ops (pool_grad_ops.py: MaxPoolGrad, AvgPoolGrad, MaxPoolGradGrad) and the 3-D ones, on
channels-last arrays, written once against ``ctx.xp``. MaxPool3DGrad has its own rule
(every cell equal to the max), as TensorFlow's 3-D CPU kernel.

Like the forward pooling kernels (conv_kernels.py), each loops over the window's taps, a
strided view of the whole (padded) batch each, never over elements. A gradient is
scattered back by adding each tap's share into that tap's view of a zeroed padded image, in
reverse tap order: for every input cell that adds its contributions in the order of the
output positions they come from, the order of TensorFlow's CPU loops, so float sums round
as TensorFlow's do. Values are added in the tensor's own dtype, as TensorFlow's kernels do
(float16 too).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minigraph.kernel import KernelContext
from minigraph.ops import pool_jit
from minigraph.ops.conv_geometry import pad_image, tap_tiles, tiles_fit, tiles_gap, window_taps
from minigraph.ops.conv_kernels import pool_windows, window_counts

__all__: list[str] = []

Pads = Sequence[tuple[int, int]]  # (before, after) of each spatial dim


def _tap_masks(
    xp: Any, sizes: Sequence[int], pads: Pads, outs: Sequence[int], k: Sequence[int],
    s: Sequence[int],
) -> list[Any]:  # fmt: skip
    """For each tap (in window_taps' order), where it reads a cell inside the input: a
    [1, *outs, 1] bool array, or None where it does everywhere (worked out on the host)."""
    masks = []
    for offsets in itertools.product(*(range(kk) for kk in k)):
        mask = None
        for d, (o, n, ss, (before, _), size) in enumerate(zip(offsets, outs, s, pads, sizes)):
            pos = np.arange(n, dtype=np.int64) * ss + o - before
            inside = (pos >= 0) & (pos < size)
            if inside.all():
                continue
            shape = [1] * (len(outs) + 2)
            shape[d + 1] = n
            inside = inside.reshape(shape)
            mask = inside if mask is None else mask & inside
        masks.append(None if mask is None else xp.asarray(mask))
    return masks


def _tap_dtype(taps: int) -> Any:
    return np.int8 if taps < 127 else np.int16 if taps < 32767 else np.int32


def _first_inside(masks: list[Any], outs: Sequence[int]) -> Any:
    """For each output position ([1, *outs, 1]), the first tap inside the input (0 where
    none is: such a window's pick falls in the padding, which is cropped), on the host."""
    inside = [np.ones((1, *outs, 1), bool) if m is None else np.asarray(m) for m in masks]
    stacked = np.broadcast_arrays(*inside)
    return np.argmax(np.stack(stacked), axis=0)


def max_taps(
    xp: Any, x: Any, pads: Pads, outs: Sequence[int], k: Sequence[int], s: Sequence[int]
) -> Any:
    """The winning tap of each window of channels-last ``x`` ([n, *outs, c]), by
    TensorFlow's CPU rule (SpatialMaxPoolWithArgMaxHelper): the window's first cell inside
    the input, in scan order, then each later cell greater than the best so far. So the
    first of equal maxima wins, a NaN first cell wins over everything and a later NaN
    never does, and pad cells never win. It reads the input, not MaxPool's output, as
    TensorFlow's CPU does.

    Computed without masked writes (NumPy runs those ~10x slower than arithmetic): the
    window's largest non-NaN value (fmax over the taps; float pads are NaN), the first tap
    equal to it (taps compared from the last, each equal one taking the place by integer
    arithmetic), then the first cell inside the input where that one is NaN.
    [32, 56, 56, 64] float32, 2x2 stride 2: 58 -> 14 ms (benchmarks/grad_ops.py)."""
    masks = _tap_masks(xp, x.shape[1:-1], pads, outs, k, s)
    floating = x.dtype.kind == "f"
    fill = np.nan if floating else np.iinfo(x.dtype).min
    xpad = pad_image(xp, x, pads, x.dtype.type(fill))
    larger = xp.fmax if floating else xp.maximum
    best = None
    for window in pool_windows(xp, xpad, outs, k, s):
        best = window.copy() if best is None else larger(best, window, out=best)
    assert best is not None  # a window has at least one tap
    arg = xp.zeros(best.shape, _tap_dtype(len(masks)))
    taps = list(window_taps(xpad, outs, k, s, [1] * len(k)))
    for t, window in reversed(taps):  # the first equal tap is the last to take its place
        equal = window == best  # NaN pads never equal; integer pads are masked
        if not floating and masks[t] is not None:
            equal &= masks[t]
        arg -= (arg - arg.dtype.type(t)) * equal
    if floating:
        first = _first_inside(masks, outs)
        nan_first = None
        for t in np.unique(first).tolist():
            hit = xp.isnan(taps[t][1])
            if not (first == t).all():
                hit &= xp.asarray(first == t)
            nan_first = hit if nan_first is None else nan_first | hit
        assert nan_first is not None
        arg += (xp.asarray(first).astype(arg.dtype) - arg) * nan_first
    return arg


def scatter_taps(
    xp: Any, share: Callable[[int], Any], shape: Sequence[int], dtype: Any, pads: Pads,
    outs: Sequence[int], k: Sequence[int], s: Sequence[int],
) -> Any:  # fmt: skip
    """The channels-last gradient of an input of ``shape``: each tap's ``share(t)``
    ([n, *outs, c]) added into that tap's view of a zeroed padded image, in reverse tap
    order (TensorFlow's order of output positions for each input cell), then cropped."""
    n, *sizes, c = shape
    padded = [size + a + b for size, (a, b) in zip(sizes, pads)]
    image = xp.zeros((n, *padded, c), dtype)
    ones = [1] * len(k)
    for t, view in reversed(list(window_taps(image, outs, k, s, ones))):
        view += share(t)
    crop = tuple(slice(a, a + size) for size, (a, _) in zip(sizes, pads))
    return image[(slice(None), *crop, slice(None))]


def _tiled_max_pool_grad(ctx: KernelContext, x: Any, grad: Any, outs: Sequence[int],
                         k: Sequence[int], s: Sequence[int]) -> Any:  # fmt: skip
    """MaxPoolGrad where windows never overlap (:func:`tiles_fit`: the usual 2x2 stride 2):
    each input cell is in at most one window, so nothing is summed, and the taps are laid
    out [taps, windows] by one copy, after which every pass is contiguous (the strided tap
    views of the general path run NumPy's inner loop once a pixel: [64, 28, 28, 16]
    float32, 2x2 stride 2, 2.9 -> 1.3 ms on 2 cores). The pick is :func:`max_taps`' rule:
    the first tap not below the window's largest non-NaN value (so the first tap wins
    when NaN), else the first later tap equal to it. Pieces of the batch go to threads."""
    xp = ctx.xp
    gaps = tiles_gap(x.shape, outs, k, s)  # cells in no window get 0
    out = xp.zeros(x.shape, grad.dtype) if gaps else ctx.empty(x.shape, grad.dtype)
    zero = grad.dtype.type(0)
    # a product with the 0/1 picks is 4x faster than a select, and the same where finite
    finite = xp is np and grad.dtype.kind == "f" and bool(np.isfinite(grad).all())
    larger = xp.fmax if x.dtype.kind == "f" else xp.maximum

    def run(rows: slice) -> None:
        taps = xp.ascontiguousarray(tap_tiles(x[rows], outs, k, s))
        taps = taps.reshape(-1, *grad[rows].shape)
        best = taps[0].copy()
        for tap in taps[1:]:
            larger(best, tap, out=best)
        won = xp.empty(taps.shape, bool)
        xp.less(taps[0], best, out=won[0])
        xp.logical_not(won[0], out=won[0])
        taken = won[0].copy()
        for t in range(1, len(taps)):
            xp.equal(taps[t], best, out=won[t])
            won[t] &= ~taken
            taken |= won[t]
        # zero plus the gradient, as TensorFlow's zeroed output += grad: -0.0 becomes 0.0
        if finite:
            spread = xp.multiply(won, grad[rows], dtype=grad.dtype)
            spread += zero
        else:
            spread = xp.where(won, grad[rows] + zero, zero)
        place = tap_tiles(out[rows], outs, k, s)
        place[...] = spread.reshape(place.shape)

    ctx.parallel_slices(run, x.shape[0], 4 * x.nbytes)
    return out


def max_pool_grad(
    ctx: KernelContext, x: Any, grad: Any, pads: Pads, outs: Sequence[int], k: Sequence[int],
    s: Sequence[int],
) -> Any:  # fmt: skip
    """MaxPoolGrad: each window's gradient goes to its winning cell (:func:`max_taps`)."""
    xp = ctx.xp
    if x.size == 0 or grad.size == 0:
        return xp.zeros(x.shape, x.dtype)
    compiled = pool_jit.max_pool_grad(ctx, x, grad, pads, outs, k, s)  # the jit extra's loop
    if compiled is not None:
        return compiled
    if tiles_fit(x.shape, pads, outs, k, s):
        return _tiled_max_pool_grad(ctx, x, grad, outs, k, s)
    arg = max_taps(xp, x, pads, outs, k, s)
    zero = xp.zeros((), grad.dtype)
    # grad times the tap's 0/1 mask where grad is finite (3x faster than a select, the
    # same values: 0 + (-0.0) is 0 as 0 + 0); a select where inf or NaN would spread
    finite = xp is np and grad.dtype.kind == "f" and bool(np.isfinite(grad).all())

    def share(t: int) -> Any:
        if finite:
            return grad * (arg == t)
        return xp.where(arg == t, grad, zero)

    return scatter_taps(xp, share, x.shape, x.dtype, pads, outs, k, s)


def max_pool_grad_all_equal(
    ctx: KernelContext, x: Any, y: Any, grad: Any, pads: Pads, outs: Sequence[int],
    k: Sequence[int], s: Sequence[int],
) -> Any:  # fmt: skip
    """MaxPool3DGrad, as TensorFlow's CPU kernel (pooling_ops_3d.cc): each window's
    gradient goes to every cell inside the input equal to MaxPool's output ``y`` (all of
    equal maxima; none where ``y`` is NaN), in ``grad``'s dtype."""
    xp = ctx.xp
    if x.size == 0 or grad.size == 0:
        return xp.zeros(x.shape, grad.dtype)
    xpad = pad_image(xp, x, pads, x.dtype.type(np.nan))  # pads never equal y
    zero = xp.zeros((), grad.dtype)
    windows = [window for _, window in window_taps(xpad, outs, k, s, [1] * len(k))]
    return scatter_taps(
        xp, lambda t: xp.where(windows[t] == y, grad, zero), x.shape, grad.dtype, pads, outs, k, s
    )


def avg_pool_grad(
    ctx: KernelContext, shape: Sequence[int], grad: Any, pads: Pads, outs: Sequence[int],
    k: Sequence[int], s: Sequence[int],
) -> Any:  # fmt: skip
    """AvgPoolGrad: each window's gradient times 1 / (its cells inside the input), spread
    over those cells. The factor is rounded as TensorFlow's ``T(1.0 / count)`` (a double,
    through float for float16) and the product is in the dtype."""
    xp = ctx.xp
    if 0 in shape or grad.size == 0:
        return xp.zeros(shape, grad.dtype)
    counts = window_counts(np, shape[1:-1], pads, outs, k, s)
    factor = 1.0 / counts
    if grad.dtype == np.float16:  # Eigen's half from a double goes through float
        factor = factor.astype(np.float32)
    factor = factor.astype(grad.dtype)
    share = grad * xp.asarray(factor)[None, ..., None]
    return scatter_taps(xp, lambda t: share, shape, grad.dtype, pads, outs, k, s)


def max_pool_grad_grad(
    ctx: KernelContext, x: Any, y: Any, grad: Any, pads: Pads, outs: Sequence[int],
    k: Sequence[int], s: Sequence[int],
) -> Any:  # fmt: skip
    """MaxPoolGradGrad: for each window, ``grad`` (shaped as the input) at the window's
    first cell, in scan order, equal to MaxPool's output ``y`` (TensorFlow's CPU rule,
    SpatialMaxPoolGradGrad); 0 where no cell equals it (a NaN or all -inf window)."""
    xp = ctx.xp
    out = xp.zeros(y.shape, y.dtype)
    if out.size == 0 or x.size == 0:
        return out
    masks = _tap_masks(xp, x.shape[1:-1], pads, outs, k, s)
    found = xp.zeros(y.shape, bool)
    xpad, gpad = pad_image(xp, x, pads), pad_image(xp, grad, pads)
    ones = [1] * len(k)
    taps = zip(window_taps(xpad, outs, k, s, ones), window_taps(gpad, outs, k, s, ones))
    for (t, window), (_, gwindow) in taps:
        take = (window == y) & ~found
        if masks[t] is not None:
            take &= masks[t]
        xp.copyto(out, gwindow, where=take)
        found |= take
    return out
