"""The convolution and pooling kernels over any number of spatial dims, shared by the 2-D
ops (conv_ops: Conv2D, DepthwiseConv2dNative, MaxPool, AvgPool) and the 3-D ones
(conv3d_ops: Conv3D, MaxPool3D, AvgPool3D).

Each takes the channels-last image ``[n, *spatial, c]`` padded once (conv_geometry.py) and
loops over the window's taps, each a strided view of the whole batch (a loop over filter
taps, never over elements). A convolution gathers the taps side by side (im2col) for one
matrix product per slice of the batch.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from minigraph.kernel import KernelContext
from minigraph.ops import conv_jit, conv_winograd
from minigraph.ops.common import has_negative_zero, matrix_product, row_element, select_bits
from minigraph.ops.conv_geometry import accumulator_dtype, pad_image, window_slices, window_taps
from minigraph.ops.cuda_kernels import max_into

__all__: list[str] = []

Pads = Sequence[tuple[int, int]]  # (before, after) of each spatial dim


def pixels(xp: Any, a: Any) -> Any:
    """``a`` with its last (channel) axis viewed as one element per pixel (NumPy only: its
    strided copy costs about the same per element whatever the element's size)."""
    if xp is not np or a.shape[-1] == 1 or a.strides[-1] != a.itemsize:
        return a
    nbytes = a.shape[-1] * a.itemsize
    return a.view(row_element(nbytes))


def pixel_views(xp: Any, a: Any, b: Any) -> tuple[Any, Any]:
    """``a`` and ``b`` as :func:`pixels` views them, or both as they are where one of them
    cannot be viewed so (a channels-first input seen as channels-last: its channels are not
    adjacent)."""
    pa, pb = pixels(xp, a), pixels(xp, b)
    return (pa, pb) if pa.dtype == pb.dtype else (a, b)


# -- convolutions --------------------------------------------------------------------------

# The im2col patches of one slice of the batch take at most about this many bytes (whole
# images; at least one): a slice's patches stay near the cache while BLAS multiplies them.
# Measured on 2 cores (min of 5, 3x3 SAME): [256,16,16,32] -> 32, 32 MB slices 15.3 ms,
# 4 MB 14.7; [8,5,5,512] -> 512 the same 3.6 (one slice); 1 MB slices lose where an
# image's patches are few rows ([8,5,5,512]: 5.6 ms).
PATCH_BYTES = 1 << 22
# Pooling windows of pixels up to this many bytes are copied contiguous first: NumPy
# copies a pixel of up to 16 bytes as one word, and its arithmetic on a strided view runs
# its inner loop once per pixel.
IM2COL_MAX_PIXEL_BYTES = 16


def convolve(
    ctx: KernelContext, xpad: Any, w: Any, outs: Sequence[int], s: Sequence[int], d: Sequence[int]
) -> Any:
    """The convolution of the padded channels-last ``xpad`` with ``w`` [*k, cin, cout]
    (one group) as matrix products: a window that is the whole input (a 1x1 filter,
    stride 1) is one ``[n * pixels, cin] @ [cin, cout]`` product with no copy; any other
    gathers each window's taps side by side (im2col) for one product per slice of the
    batch, whose inner dimension is every tap's channels. A product per tap instead
    (summing taps) gave BLAS a short inner dimension and strided rows: [8,5,5,512] ->
    512, 3x3, 19.3 -> 3.6 ms; [8,20,20,128] -> 128, 9.4 -> 4.3; [256,16,16,32] -> 32,
    20.0 -> 14.7; a strided 1x1 [8,10,10,1024] -> 2048 35 -> 8 (2 cores, 2026-12-05)."""
    *k, cin, cout = w.shape
    if ctx.xp is np and conv_winograd.usable(xpad, w, outs, s, d):
        return conv_winograd.winograd_conv(ctx, xpad, w, outs)
    if math.prod(k) == 1:
        window = next(window_taps(xpad, outs, k, s, d))[1]
        if window.flags.c_contiguous:  # the whole input: no patches to gather
            out = ctx.empty((xpad.shape[0], *outs, cout), w.dtype)  # its size is checked
            rows = window.reshape(-1, cin)
            matrix_product(ctx, rows, w.reshape(cin, cout), out.reshape(-1, cout))
            return out
    return conv_as_matmul(ctx, xpad, w, outs, s, d)


def conv_as_matmul(
    ctx: KernelContext, xpad: Any, w: Any, outs: Sequence[int], s: Sequence[int], d: Sequence[int]
) -> Any:
    """A convolution as matrix products: each window's taps side by side (im2col: a copy
    per filter row where :func:`gather_filter_rows` can, else per tap), times the filter
    as a [taps * cin, cout] matrix. The output is cut into pieces of whole images, or of
    output rows of one image, whose patches take about PATCH_BYTES; the threads take the
    pieces as they come free, each gathering into a buffer of its own and multiplying
    with BLAS on one thread (minigraph.blas), so a core that another process holds up
    slows only its own pieces."""
    xp = ctx.xp
    *k, cin, cout = w.shape
    ntaps = math.prod(k)
    n, rows = xpad.shape[0], outs[0]
    out = ctx.empty((n, *outs, cout), w.dtype)  # the output's size is checked
    if out.size == 0:
        return out
    line_bytes = math.prod(outs[1:]) * ntaps * cin * w.dtype.itemsize  # one output row
    lines = max(1, PATCH_BYTES // max(line_bytes, 1))
    if n * math.prod(outs) >= cout:  # a piece for every thread
        lines = min(lines, max(1, -(-n * rows // ctx.threads)))
    # else fewer patch rows than filter columns: one piece, whose product splits the
    # filter's columns over the threads (see matrix_product)
    if lines >= rows:  # whole images
        step = lines // rows
        pieces = [(slice(i, min(i + step, n)), slice(0, rows)) for i in range(0, n, step)]
    else:  # output rows of one image
        pieces = [
            (slice(i, i + 1), slice(r, min(r + lines, rows)))
            for i in range(n)
            for r in range(0, rows, lines)
        ]
    matrix = w.reshape(ntaps * cin, cout)
    buffers: dict[int, Any] = {}  # a patches buffer for each thread

    def run(piece: tuple[slice, slice]) -> None:
        images, part = piece
        src = xpad[images, part.start * s[0] : (part.stop - 1) * s[0] + (k[0] - 1) * d[0] + 1]
        shape = (images.stop - images.start, part.stop - part.start, *outs[1:], ntaps, cin)
        patches = thread_buffer(buffers, xp, math.prod(shape), w.dtype).reshape(shape)
        gather_patches(xp, patches, src, k, s, d)
        target = out[images, part].reshape(-1, cout)  # a view: whole images, or rows of one
        if len(pieces) == 1:
            matrix_product(ctx, patches.reshape(-1, ntaps * cin), matrix, target)
        else:
            xp.matmul(patches.reshape(-1, ntaps * cin), matrix, out=target)

    ctx.parallel_map(run, pieces, out.nbytes + n * rows * line_bytes)
    return out


def gather_patches(
    xp: Any, patches: Any, xpad: Any, k: Sequence[int], s: Sequence[int], d: Sequence[int]
) -> None:
    """im2col: fill ``patches`` [n, *outs, taps, cin] with each output position's window
    of the padded image ``xpad``, a copy per filter row where :func:`gather_filter_rows`
    can, else per tap (NumPy copies a pixel's channels fastest as one word, or one void
    element)."""
    if not gather_filter_rows(xp, patches, xpad, k, s, d):
        dst, src = pixel_views(xp, patches, xpad)
        for index, window in window_taps(src, patches.shape[1:-2], k, s, d):
            dst[..., index, :] = window


def gather_filter_rows(
    xp: Any, patches: Any, xpad: Any, k: Sequence[int], s: Sequence[int], d: Sequence[int]
) -> bool:
    """Fill ``patches`` [n, *outs, taps, cin] with one copy per filter row (the taps along
    the last spatial dim) rather than one per tap, where possible (host arrays, dilation 1
    along that dim, each padded row's pixels adjacent in memory): a filter row's kw taps
    are kw adjacent pixels of the padded image, whatever the stride, copied as one opaque
    item. 3x3 over [1024, 8, 8, 4]: 1.6 -> 0.8 ms; with 3 channels (12-byte pixels, no
    word) 3.7 -> 0.8. False where not possible."""
    n, *spatial, cin = xpad.shape
    outs = patches.shape[1:-2]
    kw = k[-1]
    if xp is not np or d[-1] != 1 or patches.size == 0:
        return False
    if xpad.strides[-1] != xpad.itemsize or xpad.strides[-2] != cin * xpad.itemsize:
        return False
    run = np.dtype((np.void, kw * cin * xpad.itemsize))
    rows = xpad.reshape(n, *spatial[:-1], spatial[-1] * cin)  # a view: rows are contiguous
    # [n, *spatial[:-1], ow, kw * cin]: each output column's window of a padded row
    windows = np.lib.stride_tricks.sliding_window_view(rows, kw * cin, axis=-1)
    windows = windows[..., :: cin * s[-1], :]
    items = windows[..., : outs[-1], :].view(run)[..., 0]  # one item a window row
    dst = patches.reshape(n, *outs, math.prod(k[:-1]), kw * cin).view(run)[..., 0]
    for index, offsets in enumerate(itertools.product(*(range(kk) for kk in k[:-1]))):
        lead = window_slices(offsets, outs[:-1], s[:-1], d[:-1])
        dst[..., index] = items[(slice(None), *lead)]
    return True


# A depthwise convolution with one filter a channel runs over slices of the batch whose
# output takes about this many bytes, so each slice's buffers stay in the L2 cache.
_DEPTHWISE_SLICE_BYTES = 1 << 18
# From this many elements in an output row (ow * channels), depthwise_by_rows: NumPy's
# loops then run long enough; below, many small images ([1024,4,4,4]: 0.5 ms against 12)
# go faster as whole-image copies.
_DEPTHWISE_MIN_ROW = 256
# depthwise_by_rows sums a piece's taps in one einsum from this many channels (with fewer
# its inner loop over the channels is short: a multiply and an add a tap are faster; with
# one channel einsum's inner loop may become the taps, summed in another order):
# [8,56,44] 5x5 8.0 -> 5.2 ms, but [8,112,11] 3x3 3.3 -> 8.2 (2 cores).
_DEPTHWISE_EINSUM_CHANNELS = 32
# depthwise_by_rows's pieces: about this many bytes of output (fewer, longer NumPy calls
# let both threads run: [8,40,40,144] 2 threads, 256 KB pieces 4.75 ms, 1 MB 3.97).
_DEPTHWISE_ROWS_BYTES = 1 << 20


def depthwise_conv(
    ctx: KernelContext, xpad: Any, w: Any, outs: Sequence[int], s: Sequence[int], d: Sequence[int]
) -> Any:
    """Each input channel with its own ``cmul`` filters (``w`` [*k, cin, cmul]), summed
    tap by tap; the result holds ``n * prod(outs) * cin * cmul`` elements in channels-last
    order. With one filter a channel (Keras's default), each window is copied into a
    contiguous buffer and multiplied by the tap's weights tiled to a whole image, so
    NumPy's inner loops run over whole images rather than over the channels of one pixel,
    a cache-sized slice of the batch at a time, on both cores ([1024,4,4,4] and
    [64,32,32,32], 3x3: see the commit); the products and their order are the same."""
    xp = ctx.xp
    *k, cin, cmul = w.shape
    weights = w.reshape(math.prod(k), cin, cmul)  # -1 is ambiguous for an empty filter
    n = xpad.shape[0]
    if cmul != 1:
        out = xp.zeros((n, *outs, cin, cmul), w.dtype)
        for index, window in window_taps(xpad, outs, k, s, d):
            out += window[..., None] * weights[index]
        return out
    size = math.prod(outs) * cin
    if len(k) == 2:  # the jit extra's compiled loop, where it runs
        compiled = conv_jit.depthwise_rows(ctx, xpad, w.reshape(*k, cin), outs, s, d)
        if compiled is not None:
            return compiled.reshape(n, size)
    if xp is np and len(k) == 2 and outs[-1] * cin >= _DEPTHWISE_MIN_ROW:
        return depthwise_by_rows(ctx, xpad, weights[..., 0], k, outs, s, d).reshape(n, size)
    out = ctx.empty((n, size), w.dtype)  # the output's size is checked
    tiled = [xp.tile(weights[t, :, 0], math.prod(outs)) for t in range(len(weights))]
    step = max(1, n)
    if xp is np:  # cache-sized slices, at least two (one a core)
        step = max(1, min(-(-n // 2), _DEPTHWISE_SLICE_BYTES // max(1, size * w.dtype.itemsize)))

    def run(b: int) -> None:
        part = slice(b * step, min(n, (b + 1) * step))
        acc = out[part]
        acc[...] = 0
        for t, window in enumerate(copied_windows(xp, xpad[part], outs, k, s, d)):
            flat = window.reshape(acc.shape)  # a view: the window's buffer is contiguous
            flat *= tiled[t]
            acc += flat

    ctx.parallel_each(run, -(-n // step), out.nbytes * len(weights))
    return out


def depthwise_by_rows(
    ctx: KernelContext, xpad: Any, weights: Any, k: Sequence[int], outs: Sequence[int],
    s: Sequence[int], d: Sequence[int],
) -> Any:  # fmt: skip
    """A 2-D depthwise convolution with one filter a channel (``weights`` [taps, c]) on the
    host, with no copy of the input, over pieces of output rows of one image, or of whole
    images (about _DEPTHWISE_ROWS_BYTES each), that the threads take as they come free.
    Each output starts at 0 and adds its taps' products in order, as
    :func:`depthwise_conv`. With a column stride of 1 a piece is one ``einsum`` over whole
    output rows (:func:`_row_einsum`). Else, from _DEPTHWISE_EINSUM_CHANNELS channels a piece
    is one ``einsum`` over a strided view of its windows, one pass over the output (the channels,
    contiguous in every operand, are its inner loop, so it sums in the same order; an
    input whose channels are not adjacent is copied first; a NaN added to a NaN may keep
    the other's payload): 2 cores, [8,56,144] 5x5 22.6 -> 9.0 ms, [8,28,176] 7x7 12.7 ->
    4.1, [1,14,480] 5x5 1.0 -> 0.3. With fewer, a multiply and an add a tap
    (:func:`_tap_rows`). NumPy's einsum holds the GIL: its pieces run one at a time."""
    n, c, item = xpad.shape[0], xpad.shape[-1], xpad.itemsize
    oh, ow = outs
    out = ctx.empty((n, oh, ow * c), weights.dtype)  # the output's size is checked
    lines = max(1, _DEPTHWISE_ROWS_BYTES // max(1, ow * c * item))
    lines = min(lines, max(1, -(-n * oh // ctx.threads)))  # a piece for every thread
    if lines >= oh:  # whole images
        step = lines // oh
        pieces = [(slice(i, min(i + step, n)), 0, oh) for i in range(0, n, step)]
    else:  # output rows of one image
        pieces = [
            (slice(i, i + 1), r, min(r + lines, oh)) for i in range(n) for r in range(0, oh, lines)
        ]
    if s[1] == 1:
        run = _row_einsum(xpad, weights, k, outs, s, d, out)
    elif c >= _DEPTHWISE_EINSUM_CHANNELS:
        run = _einsum_rows(xpad, weights, k, outs, s, d, out.reshape(n, oh, ow, c))
    else:
        run = _tap_rows(xpad, weights, k, outs, s, d, out)
    ctx.parallel_map(run, pieces, out.nbytes * math.prod(k))
    return out


def _row_einsum(
    xpad: Any, weights: Any, k: Sequence[int], outs: Sequence[int], s: Sequence[int],
    d: Sequence[int], out: Any,
) -> Callable[[tuple[slice, int, int]], None]:  # fmt: skip
    """depthwise_by_rows's work on a piece, for a column stride of 1: one einsum whose inner
    loop is a whole output row of ``ow * c`` elements. With unit column stride, output
    element ``w * c + ch`` of a row reads input element ``(w + j * d) * c + ch`` of a row
    for tap ``(i, j)``: an affine map of the flat row index, so the windows are one strided
    view [n, oh, ow * c, kh, kw] and each tap's weights are tiled along the row. The sum
    runs over the taps in their order from 0, as the other forms (the same bits): [8, 28,
    28, 44] 5x5 4.4 -> 1.3 ms, [8, 56, 56, 11] 7x7 19.7 -> 2.0 on one thread."""
    if not xpad.flags.c_contiguous:  # a channels-first input, unpadded
        xpad = np.ascontiguousarray(xpad)
    n, rows, cols, c = xpad.shape
    ow = outs[1]
    sn, sr, item = xpad.strides[0], xpad.strides[1], xpad.itemsize
    windows = np.lib.stride_tricks.as_strided(
        xpad.reshape(n, rows, cols * c),
        (n, outs[0], ow * c, k[0], k[1]),
        (sn, s[0] * sr, item, d[0] * sr, d[1] * c * item),
        writeable=False,
    )
    tiled = np.tile(weights.reshape(*k, c), (1, 1, ow))  # [kh, kw, ow * c]

    def run(piece: tuple[slice, int, int]) -> None:
        images, r0, r1 = piece
        np.einsum("nhkij,ijk->nhk", windows[images, r0:r1], tiled, out=out[images, r0:r1])

    return run


def _einsum_rows(
    xpad: Any, weights: Any, k: Sequence[int], outs: Sequence[int], s: Sequence[int],
    d: Sequence[int], out: Any,
) -> Callable[[tuple[slice, int, int]], None]:  # fmt: skip
    """depthwise_by_rows's work on a piece: one einsum over its windows into ``out``."""
    if xpad.strides[-1] != xpad.itemsize:  # a channels-first input, unpadded
        xpad = np.ascontiguousarray(xpad)
    span = [(kk - 1) * dd + 1 for kk, dd in zip(k, d)]
    windows = np.lib.stride_tricks.sliding_window_view(xpad, span, axis=(1, 2))
    windows = windows[:, :: s[0], :: s[1], :, :: d[0], :: d[1]][:, : outs[0], : outs[1]]
    filters = weights.reshape(*k, xpad.shape[-1])

    def run(piece: tuple[slice, int, int]) -> None:
        images, r0, r1 = piece
        np.einsum("nhwcij,ijc->nhwc", windows[images, r0:r1], filters, out=out[images, r0:r1])

    return run


def _tap_rows(
    xpad: Any, weights: Any, k: Sequence[int], outs: Sequence[int], s: Sequence[int],
    d: Sequence[int], out: Any,
) -> Callable[[tuple[slice, int, int]], None]:  # fmt: skip
    """depthwise_by_rows's work on a piece, for a column stride over 1 and few channels: a
    multiply and an add a tap into ``out`` [n, oh, ow * c], each tap's window a strided view
    (``ow`` runs of ``c`` elements an output row)."""
    c = xpad.shape[-1]
    ow = outs[1]
    taps = list(itertools.product(range(k[0]), range(k[1])))
    buffers: dict[int, Any] = {}

    def run(piece: tuple[slice, int, int]) -> None:
        images, r0, r1 = piece
        acc = out[images, r0:r1]
        acc[...] = 0
        product = thread_buffer(buffers, np, acc.size, acc.dtype).reshape(acc.shape)
        for t, (i, j) in enumerate(taps):
            rows = slice(r0 * s[0] + i * d[0], (r1 - 1) * s[0] + i * d[0] + 1, s[0])
            window = xpad[images, rows, j * d[1] : j * d[1] + (ow - 1) * s[1] + 1 : s[1]]
            np.multiply(window, weights[t], out=product.reshape(*acc.shape[:2], ow, c))
            acc += product

    return run


def thread_buffer(buffers: dict[int, Any], xp: Any, size: int, dtype: Any) -> Any:
    """A flat buffer of at least ``size`` elements for the calling thread, kept in
    ``buffers`` (one kernel call's) for its next piece of work."""
    buffer = buffers.get(threading.get_ident())
    if buffer is None or buffer.size < size:
        buffer = buffers[threading.get_ident()] = xp.empty(size, dtype)
    return buffer[:size]


# -- pooling ------------------------------------------------------------------------------


def pool_windows(
    xp: Any, xpad: Any, outs: Sequence[int], k: Sequence[int], s: Sequence[int]
) -> Iterator[Any]:
    """Each pooling window, [n, *outs, c], in tap order: on the host with pixels of at
    most 16 bytes, copied contiguous first (NumPy's arithmetic on the strided view runs
    its inner loop once per pixel, over c elements: [1024, 8, 8, 4], 2x2, see the commit)."""
    ones = [1] * len(k)
    if xp is np and xpad.shape[-1] * xpad.itemsize <= IM2COL_MAX_PIXEL_BYTES:
        yield from copied_windows(xp, xpad, outs, k, s, ones)
    else:
        for _, window in window_taps(xpad, outs, k, s, ones):
            yield window


def copied_windows(
    xp: Any, xpad: Any, outs: Sequence[int], k: Sequence[int], s: Sequence[int], d: Sequence[int]
) -> Iterator[Any]:
    """Each window of :func:`window_taps`, in tap order, copied (a pixel as one word where it
    can be) into one contiguous [n, *outs, c] buffer, the same buffer every time."""
    buffer = xp.empty((xpad.shape[0], *outs, xpad.shape[-1]), xpad.dtype)
    dst, src = pixel_views(xp, buffer, xpad)
    for _, window in window_taps(src, outs, k, s, d):
        dst[...] = window
        yield buffer


def window_counts(
    xp: Any, sizes: Sequence[int], pads: Pads, outs: Sequence[int], k: Sequence[int],
    s: Sequence[int],
) -> Any:  # fmt: skip
    """How many cells of each window are inside the input (pad cells not counted), an
    int64 [*outs] array: what an average divides by, and its gradient too."""
    counts = None
    for size, kk, ss, o, p in zip(sizes, k, s, outs, pads):
        start = xp.arange(o, dtype=np.int64) * ss - p[0]
        dim = xp.minimum(start + kk, size) - xp.maximum(start, 0)
        counts = dim if counts is None else counts[..., None] * dim
    assert counts is not None  # at least one spatial dim
    return counts


def window_mean(
    xp: Any, x: Any, pads: Pads, outs: Sequence[int], k: Sequence[int], s: Sequence[int]
) -> Any:
    """The mean of each window of channels-last ``x`` over its cells inside the input (pad
    cells are not counted: TensorFlow's SAME rule), float16 summed in float32."""
    acc = accumulator_dtype(x.dtype)
    xpad = pad_image(xp, x, pads, dtype=acc)
    out = xp.zeros((x.shape[0], *outs, x.shape[-1]), acc)
    for window in pool_windows(xp, xpad, outs, k, s):
        out += window
    # without padding, every window's cells (a scalar divides 10x faster than a grid)
    if not any(p for pair in pads for p in pair):
        out /= np.dtype(acc).type(math.prod(k))
    else:
        counts = window_counts(xp, x.shape[1:-1], pads, outs, k, s)
        out /= counts.astype(acc)[None, ..., None]
    return out.astype(x.dtype, copy=False)


def window_max(
    xp: Any, x: Any, pads: Pads, outs: Sequence[int], k: Sequence[int], s: Sequence[int]
) -> Any:
    """The largest cell of each window of channels-last ``x``, by TensorFlow's rule: start
    at the lowest value, take a cell only if it is greater, so NaN is skipped, and a window
    of -inf (or NaN) gives the lowest finite value; pad cells never win."""
    info = np.finfo(x.dtype) if x.dtype.kind == "f" else np.iinfo(x.dtype)
    lowest = x.dtype.type(info.min)
    xpad = pad_image(xp, x, pads, lowest)
    signed_zeros = xp is np and x.dtype.kind == "f" and has_negative_zero(x)
    if xp is np and not signed_zeros and x.shape[-1] * x.itemsize >= SEPARABLE_MIN_PIXEL_BYTES:
        return _separable_max(xpad, outs, k, s, lowest)
    out = xp.full((x.shape[0], *outs, x.shape[-1]), lowest, x.dtype)
    windows = pool_windows(xp, xpad, outs, k, s)
    if xp is not np:  # the rule below in one kernel a window: no sync for a -0.0 probe
        for window in windows:
            max_into(xp, out, window)
    elif signed_zeros:  # the first of 0.0, -0.0 wins
        for window in windows:
            out = select_bits(xp, window > out, window, out)
    else:  # the same values: fmax skips NaN, and only signed zeros tie with other bits
        larger = xp.fmax if x.dtype.kind == "f" else xp.maximum
        for window in windows:
            larger(out, window, out=out)
    return out


# Pixels of at least this many bytes are max-pooled one spatial axis at a time: the
# later axes' strided passes then run NumPy's inner loop over whole pixels.
SEPARABLE_MIN_PIXEL_BYTES = 32


def _separable_max(
    xpad: np.ndarray, outs: Sequence[int], k: Sequence[int], s: Sequence[int], lowest: Any
) -> np.ndarray:
    """window_max's rule where no -0.0 can tie with 0.0: the largest non-NaN cell of each
    window, at least ``lowest``, taken over one spatial axis at a time, outermost first
    (the max of a set, in any order: the same value; [128, 28, 28, 16] 2x2 stride 2:
    1.8 -> 1.0 ms). Rows first: their taps are whole contiguous rows."""
    larger = np.fmax if xpad.dtype.kind == "f" else np.maximum
    acc = xpad
    for axis, (kk, ss, o) in enumerate(zip(k, s, outs), start=1):
        lead = (slice(None),) * axis
        taps = [acc[(*lead, slice(t, t + (o - 1) * ss + 1, ss))] for t in range(kk)]
        if kk == 1:
            acc = taps[0]
            continue
        acc = larger(taps[0], taps[1])
        for tap in taps[2:]:
            larger(acc, tap, out=acc)
    if acc.base is not None:  # every window one cell: a view of xpad so far
        acc = acc.copy()
    if xpad.dtype.kind == "f":
        larger(acc, lowest, out=acc)  # a window of -inf or NaN gives the lowest value
    return acc
