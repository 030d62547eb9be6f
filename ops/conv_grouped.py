"""Grouped convolutions: the filter's in-depth divides the input's depth.

TensorFlow's Conv2D and Conv3D take a filter ``[*k, in_depth / groups, out_depth]``: input
channels ``[g * ci, (g + 1) * ci)`` feed output channels ``[g * co, (g + 1) * co)`` only.
Keras writes ``Conv2D(groups=C)`` this way, and ConvNeXt its depthwise convolutions. The
Conv2D and Conv3D shape functions call the checks here (TensorFlow's messages, the same for
both), Conv2D's kernel its own, and both kernels the convolution: one input channel a group
is a depthwise convolution (its fast path); otherwise one batched matrix product a filter
tap, over every group at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from minigraph.inference import InferenceContext
from minigraph.kernel import KernelContext
from minigraph.ops.conv_geometry import window_taps
from minigraph.ops.conv_kernels import depthwise_conv
from minigraph.shapes import merge_dim

__all__: list[str] = []


def conv_shape_depth(
    c: InferenceContext, in_depth: int | None, wdims: Sequence[int | None], depthwise: bool
) -> int | None:
    """The input depth, after Conv2DShapeImpl's (and Conv3DShape's) channel checks (groups
    allowed) or, for a depthwise convolution, after merging it with the filter's."""
    if depthwise:
        return merge_dim(in_depth, wdims[-2])
    filter_depth, out_depth = wdims[-2], wdims[-1]
    if in_depth is None or filter_depth is None:
        return in_depth
    if filter_depth == 0:
        c.fail("Depth of filter must not be 0")
    if in_depth % filter_depth:
        c.fail(
            f"Depth of input ({in_depth}) is not a multiple of input depth of filter "
            f"({filter_depth})"
        )
    groups = in_depth // filter_depth
    if groups == 0:
        c.fail("Number of groups must not be 0")
    if groups > 1 and out_depth is not None and out_depth % groups:
        c.fail(
            f"Depth of output ({out_depth}) is not a multiple of the number of groups ({groups})"
        )
    return in_depth


def conv_groups(ctx: KernelContext, in_depth: int, wshape: Sequence[int], depthwise: bool) -> int:
    """How many groups the kernel convolves, after TensorFlow's kernel checks."""
    filter_depth, out_depth = wshape[2], wshape[3]
    if depthwise:
        if in_depth != filter_depth:
            ctx.fail(f"input depth must equal filter depth: {in_depth} vs {filter_depth}")
        return 1
    if filter_depth <= 0 or in_depth % filter_depth:
        ctx.fail(
            f"input depth must be evenly divisible by filter depth: {in_depth} vs {filter_depth}"
        )
    groups = in_depth // filter_depth
    if groups > 1 and out_depth % groups:
        ctx.fail(
            f"output depth must be evenly divisible by number of groups: {out_depth} vs {groups}"
        )
    return max(groups, 1)


def grouped_conv(
    ctx: KernelContext,
    xpad: Any,
    w: Any,
    outs: Sequence[int],
    s: Sequence[int],
    d: Sequence[int],
    groups: int,
) -> Any:
    """The convolution of the padded channels-last ``xpad`` with ``groups`` groups (``w``
    [*k, ci, cout]); the result holds ``n * prod(outs) * out_depth`` elements in
    channels-last order (the caller reshapes it). One input channel a group is a depthwise
    convolution: output channel ``g * co + q`` is channel ``g`` with filter ``q``."""
    xp = ctx.xp
    *k, ci, cout = w.shape
    co = cout // groups
    if ci == 1:
        return depthwise_conv(ctx, xpad, w.reshape(*k, groups, co), outs, s, d)
    rows = xpad.shape[0] * math.prod(outs)
    ctx.check_size((groups, rows, co), w.dtype)
    # [groups, ci, co] a tap: group g's filter, for a product batched over the groups
    weights = w.reshape(-1, ci, groups, co).transpose(0, 2, 1, 3)
    acc = None
    for index, window in window_taps(xpad, outs, k, s, d):  # each a product over the batch
        taps = xp.ascontiguousarray(window).reshape(rows, groups, ci).transpose(1, 0, 2)
        product = xp.matmul(taps, weights[index])  # [groups, rows, co]
        if acc is None:
            acc = product
        else:
            acc += product
    assert acc is not None  # every filter dim is at least 1
    return xp.ascontiguousarray(acc.transpose(1, 0, 2))
