"""The backprop convolutions' arithmetic (conv_backprop_ops.py and conv3d_backprop_ops.py
declare the ops and check their arguments), on channels-last arrays in the accumulator
dtype, for any number of spatial dims, written once against ``ctx.xp``.

A filter is grouped, [*k, cin / G, cout] in G groups (a depthwise filter is G = cin groups
of one input channel). Both gradients loop over the filter's taps, each a strided view of
a padded image (conv_geometry.window_taps), never over elements: the input gradient is one
matrix product a slice of the batch, out_backprop times every tap's filter side by side,
whose columns are added into the taps' views of a zeroed padded image; the filter gradient
is a product a tap, the tap's window times out_backprop. A group of one input channel runs
as elementwise products (einsum) instead. On the host the batch is cut into slices that
the cores share."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from minigraph.kernel import KernelContext
from minigraph.ops.conv_geometry import pad_image, window_taps
from minigraph.ops.conv_kernels import gather_patches

__all__: list[str] = []

Pads = Sequence[tuple[int, int]]  # (before, after) of each spatial dim

# On a device, the columns of one slice of the batch (the input gradient's product) take at
# most about this many bytes, as conv_ops' im2col patches; on the host, a slice does about
# _COLUMN_SLICE_BYTES of work (_DEPTHWISE_SLICE_BYTES elementwise), and the slices are
# shared by the cores (see the commit for the figures).
_COLUMN_BYTES = 1 << 25
_COLUMN_SLICE_BYTES = 1 << 22
# At most this many values in a filter's patch (kh * kw * in-channels) for the filter
# gradient to gather whole patches as columns: then the columns take at most this many
# values a position, a few times out_backprop's own.
_SMALL_PATCH = 32
_DEPTHWISE_SLICE_BYTES = 1 << 18


def _slices(ctx: KernelContext, n: int, per_image: int, target: int) -> tuple[int, int]:
    """(images a slice, slices) over a batch of ``n``: on the host about ``target`` bytes of
    work a slice and at least two slices (one a core, taken by ``ctx.parallel_each``); on a
    device the whole batch, or what keeps the columns under _COLUMN_BYTES."""
    if ctx.xp is np:
        step = min(-(-n // 2), target // max(per_image, 1))
    else:
        step = min(n, _COLUMN_BYTES // max(per_image, 1))
    step = max(step, 1)
    return step, -(-n // step)


def input_grad(
    ctx: KernelContext, g: Any, w: Any, x_shape: Sequence[int], outs: Sequence[int], pads: Pads,
    groups: int, strides: Sequence[int], dilations: Sequence[int],
) -> Any:  # fmt: skip
    """The input gradient [n, *spatial, cin] of the convolution with ``w`` [*k, cin / G,
    cout] in ``groups`` groups: out_backprop times each tap's filter, added into that
    tap's strided view of a zeroed padded image, which is then cropped; a slice of the
    batch at a time."""
    xp = ctx.xp
    n, *sizes, cin = x_shape
    *k, ci, cout = w.shape
    taps = math.prod(k)
    co, rows = cout // groups, math.prod(outs)
    padded = (*(size + a + b for size, (a, b) in zip(sizes, pads)), cin)
    ctx.check_size((n, *padded), w.dtype)
    out = ctx.empty((n, *sizes, cin), w.dtype)  # the output's size is checked
    crop = tuple(slice(a, a + size) for size, (a, _) in zip(sizes, pads))
    if ci == 1:  # depthwise: each input channel's own filters, elementwise
        per_image = (math.prod(padded[:-1]) + 2 * rows * groups) * w.dtype.itemsize
        step, count = _slices(ctx, n, per_image, _DEPTHWISE_SLICE_BYTES)
        tap_filters = w.reshape(taps, groups, co)
    else:  # [G, co, taps * ci]: group g's filter, every tap's columns side by side
        per_image = rows * taps * cin * w.dtype.itemsize
        step, count = _slices(ctx, n, per_image, _COLUMN_SLICE_BYTES)
        ctx.check_size((step * rows, taps * cin), w.dtype)
        matrix = w.reshape(taps, ci, groups, co).transpose(2, 3, 0, 1)
        matrix = xp.ascontiguousarray(matrix).reshape(groups, co, taps * ci)

    def run(b: int) -> None:
        part = slice(b * step, min(n, (b + 1) * step))
        m = part.stop - part.start
        image = xp.zeros((m, *padded), w.dtype)
        views = window_taps(image, outs, k, strides, dilations)
        if ci == 1:
            grads = g[part]
            if co == 1:
                product = xp.empty_like(grads)
                for t, view in views:
                    view += xp.multiply(grads, tap_filters[t, :, 0], out=product)
            else:
                grads = grads.reshape(m, *outs, groups, co)
                for t, view in views:
                    view += xp.einsum("n...gq,gq->n...g", grads, tap_filters[t])
        elif m * rows:
            grads = g[part].reshape(m * rows, groups, co).transpose(1, 0, 2)
            columns = xp.matmul(grads, matrix)  # [G, m * rows, taps * ci]
            for t, view in views:
                tap = columns[:, :, t * ci : (t + 1) * ci].transpose(1, 0, 2)
                view += tap.reshape(m, *outs, cin)
        out[part] = image[(slice(None), *crop)]

    ctx.parallel_each(run, count, n * per_image)
    return out


def filter_grad(
    ctx: KernelContext, x: Any, g: Any, w_shape: Sequence[int], outs: Sequence[int], pads: Pads,
    groups: int, strides: Sequence[int], dilations: Sequence[int],
) -> Any:  # fmt: skip
    """The filter gradient [*k, cin / G, cout] in ``groups`` groups: each tap's window of
    the padded input times out_backprop, summed over the batch and positions; a slice of
    the batch at a time, the slices' sums added."""
    xp = ctx.xp
    *k, ci, cout = w_shape
    taps = math.prod(k)
    co, n, positions = cout // groups, g.shape[0], math.prod(outs)
    per_image = (positions * (cout + ci * groups) + x[0].size) * x.dtype.itemsize
    step, count = _slices(ctx, n, per_image, _COLUMN_SLICE_BYTES)

    def run(b: int) -> Any:
        part = slice(b * step, min(n, (b + 1) * step))
        m = part.stop - part.start
        xpad = pad_image(xp, x[part], pads)
        windows = window_taps(xpad, outs, k, strides, dilations)
        rows = m * positions
        if groups == 1 and taps * ci <= _SMALL_PATCH:
            # Few values a patch (a first layer's 3x3 over one or three channels): the
            # patches as columns and one product, which reads out_backprop once instead of
            # once a tap (a 3x3 filter over one channel, batch 64 at 28x28: 3.8 -> 0.6 ms).
            columns = xp.empty((m, *outs, taps, ci), x.dtype)
            gather_patches(xp, columns, xpad, k, strides, dilations)
            product = columns.reshape(rows, taps * ci).T @ g[part].reshape(rows, cout)
            return product.reshape(*k, ci, cout)
        out = xp.empty((taps, ci, cout), x.dtype)
        if ci == 1:  # depthwise: each channel's products with its own out_backprop channels
            grads = g[part].reshape(m, *outs, groups, co)
            dims = "abc"[: len(outs)]  # einsum sums the ellipsis' dims only when named
            subscripts = f"n{dims}g,n{dims}gq->gq"
            for t, window in windows:  # einsum reads the strided window as it is
                out[t, 0] = xp.einsum(subscripts, window, grads).reshape(cout)
            return out.reshape(*k, ci, cout)
        grads = xp.ascontiguousarray(g[part].reshape(rows, groups, co).transpose(1, 0, 2))
        for t, window in windows:
            columns = xp.ascontiguousarray(window).reshape(rows, groups, ci).transpose(1, 2, 0)
            product = xp.matmul(columns, grads)  # [G, ci, co]
            out[t] = product.transpose(1, 0, 2).reshape(ci, cout)
        return out.reshape(*k, ci, cout)

    sums = ctx.parallel_map(run, range(count), n * per_image)
    total = sums[0]
    for partial in sums[1:]:
        total += partial
    return total
