"""Batch normalisation: FusedBatchNormV3 (inference and training) and its gradient op
FusedBatchNormGradV3, as TensorFlow's CPU kernels (fused_batch_norm_op.cc).

In training, FusedBatchNormV3 normalises with the batch's own statistics, returns their
running averages (``exponential_avg_factor``) as ``batch_mean``/``batch_variance``, and
keeps the batch mean and (biased) variance in ``reserve_space_1``/``_2`` for the gradient:
FusedBatchNormGradV3 reads them there, on every device (TensorFlow's GPU keeps an inverse
variance there instead; minigraph's GPU keeps what its CPU keeps, so the pair agrees).
Statistics and gradients are computed in float32 (``U``), float16 inputs cast once, as
TensorFlow does; the channel is the last dim, or dim 1 for NCHW/NCDHW.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import shape_str
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, merge_dim, with_rank
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS: tuple[str, ...] = ()  # nothing here is top-level in tf.compat.v1
NN_BUILDERS = ("fused_batch_norm",)

_FORMAT_ATTR = "data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'"


def _channel_axis(data_format: str, rank: int) -> int:
    return 1 if data_format.startswith("NC") else rank - 1


def _rank(data_format: str) -> int:
    return 5 if "D" in data_format else 4


def _per_channel(xp: Any, v: Any, axis: int, rank: int) -> Any:
    """A [C] vector shaped to broadcast along ``axis`` of a rank-``rank`` tensor."""
    shape = [1] * rank
    shape[axis] = v.shape[0]
    return v.reshape(shape)


# Rows a block when summing a channel's values in two levels (see _sum).
_BLOCK = 256


def _sum(xp: Any, a: Any, axis: int, b: Any = None) -> Any:
    """The float32 sum of ``a`` (times ``b``: no product array is made) over every axis but
    the channel axis, in two levels: sums of blocks of _BLOCK rows, then their sum (a
    channel holds batch x height x width values, whose one-level float32 sum drifts: 5e-6
    relative on [32, 56, 56, 64], two levels 4e-7, TF's 5e-4; float64 accumulation is 2x
    slower). Channels-first sums each image's plane first."""
    c = a.shape[axis]
    outer, inner = math.prod(a.shape[:axis]), math.prod(a.shape[axis + 1 :])
    a3 = a.reshape(outer, c, inner)
    b3 = None if b is None else b.reshape(outer, c, inner)
    if inner > 1:  # channels first: each (image, channel) plane, then the images
        planes = a3.sum(axis=2) if b3 is None else xp.einsum("ock,ock->oc", a3, b3)
        return planes.sum(axis=0)
    rows, a2 = outer, a3.reshape(outer, c)
    b2 = None if b3 is None else b3.reshape(outer, c)
    full = rows - rows % _BLOCK
    total = xp.zeros((c,), np.float32)
    if full:
        blocks = a2[:full].reshape(-1, _BLOCK, c)
        if b2 is None:
            total += blocks.sum(axis=1).sum(axis=0)
        else:
            other = b2[:full].reshape(-1, _BLOCK, c)
            total += xp.einsum("rbc,rbc->rc", blocks, other).sum(axis=0)
    if rows > full:
        rest = a2[full:] if b2 is None else a2[full:] * b2[full:]
        total += rest.sum(axis=0)
    return total


def _by_batch(ctx: KernelContext, fn: Any, n: int, nbytes: int) -> list:
    """``fn(rows)`` for slices of the batch, one a core on the host (NumPy releases the GIL
    in its loops; on this busy 2-core VM no gain was measured, see the commit)."""
    pieces = max(1, min(n, ctx.threads)) if ctx.xp is np else 1
    bounds = [n * p // pieces for p in range(pieces + 1)]
    return ctx.parallel_map(lambda p: fn(slice(bounds[p], bounds[p + 1])), range(pieces), nbytes)


def _total(parts: list) -> Any:
    """The slices' partial sums added, in slice order."""
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


# -- FusedBatchNormV3 ---------------------------------------------------------------------


def _uses_statistics(attrs: dict) -> bool:
    """Whether ``mean`` and ``variance`` are read: in inference, and in training when the
    running averages move by a factor other than 1 (else they may be empty)."""
    return not attrs["is_training"] or attrs["exponential_avg_factor"] != 1.0


def _statistics_prefix(attrs: dict) -> str:
    return "When is_training=false" if not attrs["is_training"] else (
        "When exponential_avg_factor != 1"
    )  # fmt: skip


def _fused_batch_norm_shape(c: InferenceContext, x: TensorSpec, *params: TensorSpec) -> list:
    """TensorFlow's FusedBatchNormV3Shape: x of rank 4 (5 for NDHWC/NCDHW), every vector it
    reads of the channels' size."""
    fmt = c.attrs["data_format"]
    rank = _rank(fmt)
    xs = with_rank(x.shape, rank)
    channels = xs.dims[_channel_axis(fmt, rank)] if xs.dims else None
    used = 4 if _uses_statistics(c.attrs) else 2
    for pname, p in list(zip(("scale", "offset", "mean", "variance"), params))[:used]:
        ps = with_rank(p.shape, 1)
        if None not in (channels, ps[0]) and channels != ps[0]:
            prefix = f"{_statistics_prefix(c.attrs)}, " if pname in ("mean", "variance") else ""
            c.fail(
                f"{prefix}{pname} must have the same number of elements as the channels of "
                f"x, got {ps[0]} and {channels}"
            )
        channels = merge_dim(channels, ps[0])
    vec = TensorShape([channels])
    return [xs, vec, vec, vec, vec, TensorShape([0])]


FUSED_BATCH_NORM_V3 = define_op(
    "FusedBatchNormV3",
    inputs=["x: T", "scale: U", "offset: U", "mean: U", "variance: U"],
    outputs=[
        "y: T",
        "batch_mean: U",
        "batch_variance: U",
        "reserve_space_1: U",
        "reserve_space_2: U",
        "reserve_space_3: U",
    ],
    attrs=[
        "T: {float16, float32}",
        "U: {float32}",
        "epsilon: float = 0.0001",
        "exponential_avg_factor: float = 1.0",
        _FORMAT_ATTR,
        "is_training: bool = True",
    ],
    shape_fn=_fused_batch_norm_shape,
    doc="""
Batch normalisation per channel (the last dim, or dim 1 for NCHW/NCDHW):
``y = (x - m) / sqrt(v + epsilon) * scale + offset``.

``is_training=false`` (inference): ``m``, ``v`` are ``mean`` and ``variance``;
``batch_mean``/``batch_variance`` and ``reserve_space_1``/``_2`` are ``mean`` and
``variance`` (as TensorFlow's default oneDNN CPU kernel gives them; its plain kernel leaves
the reserve spaces uninitialised).

``is_training=true`` (the op's default, as TensorFlow): ``m``, ``v`` are the batch's mean
and biased variance, in float32. ``batch_mean``/``batch_variance`` are their running
averages: with ``exponential_avg_factor`` f, ``(1 - f) * mean + f * m`` and
``(1 - f) * variance + f * v * n / (n - 1)`` (Bessel's correction, n the values a channel;
with f = 1, ``mean``/``variance`` are not read and may be empty). ``reserve_space_1``/``_2``
are ``m`` and ``v``, what FusedBatchNormGradV3 reads. An empty ``x`` gives NaN running
averages and zero reserve spaces, as TensorFlow's CPU.

``reserve_space_3`` is empty. Errors as TensorFlow's kernel: x of rank 4 or 5, vectors of
rank 1 whose size is the channels' ("scale must have the same number of elements as the
channels of x").
""",
)


def _fbn_checks(ctx: KernelContext, x: Any, vectors: list[Any]) -> int:
    """FusedBatchNormOpBase's checks, in its order; the channel count."""
    attrs = ctx.attrs
    if x.ndim not in (4, 5):
        ctx.fail(f"input must be 4 or 5-dimensional{shape_str(x.shape)}")
    names = ("scale", "offset", "estimated_mean", "estimated_variance")
    for pname, p in zip(names, vectors):
        if p.ndim != 1:
            ctx.fail(f"{pname} must be 1-dimensional{shape_str(p.shape)}")
    channels = x.shape[_channel_axis(attrs["data_format"], x.ndim)]
    checked = zip(("scale", "offset", "mean", "variance"), vectors)
    for k, (pname, p) in enumerate(checked):
        if k >= 2 and not _uses_statistics(attrs):
            break
        if p.shape[0] != channels:
            prefix = f"{_statistics_prefix(attrs)}, " if k >= 2 else ""
            ctx.fail(
                f"{prefix}{pname} must have the same number of elements as the channels of "
                f"x, got {p.shape[0]} and {channels}"
            )
    return channels


@register_kernel("FusedBatchNormV3", "CPU", "GPU")
def _fused_batch_norm_v3_kernel(
    ctx: KernelContext, x: Any, scale: Any, offset: Any, mean: Any, variance: Any
) -> list:
    xp, attrs = ctx.xp, ctx.attrs
    channels = _fbn_checks(ctx, x, [scale, offset, mean, variance])
    axis = _channel_axis(attrs["data_format"], x.ndim)
    eps = np.float32(attrs["epsilon"])
    empty = xp.empty((0,), np.float32)
    if not attrs["is_training"]:
        mult = scale / xp.sqrt(variance + eps)
        y = (x.astype(np.float32) - _per_channel(xp, mean, axis, x.ndim)) * _per_channel(
            xp, mult, axis, x.ndim
        )  # fmt: skip
        y = y + _per_channel(xp, offset, axis, x.ndim)
        stats = [a.copy() for a in (mean, variance, mean, variance)]  # four distinct buffers
        return [y.astype(x.dtype, copy=False), *stats, empty]
    if x.size == 0:  # TF's CPU: NaN running averages
        nan = xp.full((channels,), np.nan, np.float32)
        zeros = xp.zeros((channels,), np.float32)
        return [xp.empty(x.shape, x.dtype), nan, nan.copy(), zeros, zeros.copy(), empty]
    rest = x.size // channels
    n, nbytes = x.shape[0], x.size * 4

    def per_channel(a: Any) -> Any:
        return _per_channel(xp, a, axis, x.ndim)

    def slice_sum(b: slice) -> Any:
        return _sum(xp, x[b].astype(np.float32, copy=False), axis)

    batch_mean = _total(_by_batch(ctx, slice_sum, n, nbytes))
    batch_mean *= np.float32(1.0 / rest)
    centered = ctx.empty(x.shape, np.float32)

    def center(b: slice) -> Any:
        xp.subtract(x[b], per_channel(batch_mean), out=centered[b], dtype=np.float32)
        return _sum(xp, centered[b], axis, centered[b])

    batch_var = _total(_by_batch(ctx, center, n, nbytes)) * np.float32(1.0 / rest)
    factor = (scale / xp.sqrt(batch_var + eps)).astype(np.float32, copy=False)
    y = centered if x.dtype == np.float32 else ctx.empty(x.shape, x.dtype)

    def normalise(b: slice) -> None:
        part = centered[b]
        part *= per_channel(factor)
        xp.add(part, per_channel(offset), out=y[b], casting="unsafe")

    _by_batch(ctx, normalise, n, nbytes)
    adjust = np.float32(rest) / np.float32(max(rest - 1, 1))  # Bessel's correction
    f = np.float32(attrs["exponential_avg_factor"])
    if f == 1:
        running_mean, running_var = batch_mean.copy(), batch_var * adjust
    else:
        running_mean = (np.float32(1) - f) * mean + f * batch_mean
        running_var = (np.float32(1) - f) * variance + (f * adjust) * batch_var
    return [y, running_mean, running_var, batch_mean, batch_var, empty]


FusedBatchNormV3 = make_wrapper_class(FUSED_BATCH_NORM_V3)
_fused_batch_norm_v3 = make_builder(FUSED_BATCH_NORM_V3, "fused_batch_norm_v3")


def fused_batch_norm(
    x: Any,
    scale: Any,
    offset: Any,
    mean: Any = None,
    variance: Any = None,
    epsilon: float = 0.001,
    data_format: str = "NHWC",
    is_training: bool = True,
    name: str | None = None,
    exponential_avg_factor: float = 1.0,
) -> tuple[Output, Output, Output]:
    """Batch norm: (y, running mean, running variance), as
    tf.compat.v1.nn.fused_batch_norm. In training (the default) ``mean``/``variance`` may
    be None (empty) unless ``exponential_avg_factor`` is not 1; ``epsilon`` is raised to
    1.001e-5 at least, as TensorFlow does (cuDNN's minimum).

    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     x = np.float32([1, 3, 5, 7]).reshape(2, 1, 2, 1)
    ...     y, m, v = mg.nn.fused_batch_norm(x, [1.0], [0.0])
    >>> y, m, v = mg.Session(g).run([y, m, v])
    >>> y.ravel().round(3)
    array([-1.342, -0.447,  0.447,  1.342], dtype=float32)
    >>> m, v.round(3)  # the batch's mean, and its variance with Bessel's correction
    (array([4.], dtype=float32), array([6.667], dtype=float32))
    """
    if (not is_training or exponential_avg_factor != 1.0) and (mean is None or variance is None):
        raise ValueError(
            "Both `mean` and `variance` must be a 1D tensor when `is_training` is False or "
            f"`exponential_avg_factor` != 1.0. Received: `mean` {mean!r} and `variance` "
            f"{variance!r}"
        )
    none = np.zeros(0, np.float32)
    outs = _fused_batch_norm_v3(
        x,
        np.asarray(scale, np.float32) if not isinstance(scale, Output) else scale,
        np.asarray(offset, np.float32) if not isinstance(offset, Output) else offset,
        none if mean is None else mean,
        none if variance is None else variance,
        epsilon=max(float(epsilon), 1.001e-5),
        exponential_avg_factor=float(exponential_avg_factor),
        data_format=data_format,
        is_training=is_training,
        name=name or "FusedBatchNormV3",
    )
    return outs[0], outs[1], outs[2]


# -- FusedBatchNormGradV3 -----------------------------------------------------------------


def _fused_batch_norm_grad_shape(
    c: InferenceContext, dy: TensorSpec, x: TensorSpec, scale: TensorSpec, *saved: TensorSpec
) -> list:
    """TensorFlow's FusedBatchNormGradShape: y_backprop and x of one shape (rank 4, 5 for
    NDHWC/NCDHW), scale and the saved statistics vectors of the channels' size."""
    fmt = c.attrs["data_format"]
    rank = _rank(fmt)
    known = [s.shape.as_list() for s in (dy, x) if s.shape.is_fully_defined()]
    if len(known) == 2 and known[0] != known[1]:  # the kernel's words
        c.fail(
            f"x and y_backprop must have same shape, but x has shape {shape_str(known[1])} "
            f"and y_backprop has shape {shape_str(known[0])}"
        )
    shape = with_rank(dy.shape, rank).merge_with(with_rank(x.shape, rank))
    axis = _channel_axis(fmt, rank)
    channels = shape.dims[axis] if shape.dims else None
    for pname, p in zip(("scale", "reserve_space_1", "reserve_space_2"), (scale, *saved[:2])):
        ps = with_rank(p.shape, 1)
        if None not in (channels, ps[0]) and channels != ps[0]:
            c.fail(
                f"{pname} must have the same number of elements as the channels of x, got "
                f"{ps[0]} and {channels}"
            )
        channels = merge_dim(channels, ps[0])
    if shape.dims is not None:
        dims = list(shape.dims)
        dims[axis] = channels
        shape = TensorShape(dims)
    vec = TensorShape([channels])
    return [shape, vec, vec, TensorShape([0]), TensorShape([0])]


FUSED_BATCH_NORM_GRAD_V3 = define_op(
    "FusedBatchNormGradV3",
    inputs=[
        "y_backprop: T",
        "x: T",
        "scale: float",
        "reserve_space_1: U",
        "reserve_space_2: U",
        "reserve_space_3: U",
    ],
    outputs=[
        "x_backprop: T",
        "scale_backprop: U",
        "offset_backprop: U",
        "reserve_space_4: U",
        "reserve_space_5: U",
    ],
    attrs=[
        "T: {float16, float32}",
        "U: {float32}",
        "epsilon: float = 0.0001",
        _FORMAT_ATTR,
        "is_training: bool = True",
    ],
    shape_fn=_fused_batch_norm_grad_shape,
    doc="""
The gradient of FusedBatchNormV3, as TensorFlow's CPU kernel, with m and v the saved
statistics (``reserve_space_1``/``_2``: FusedBatchNormV3's batch mean and variance in
training; the population ``mean``/``variance`` in inference) and ``r = rsqrt(v + epsilon)``:

- ``offset_backprop = sum(y_backprop)`` and ``scale_backprop = sum(y_backprop * (x - m) * r)``
  over every value of a channel;
- ``is_training=true``: ``x_backprop = scale * r * (y_backprop - mean(y_backprop) - (x - m) *
  mean(y_backprop * (x - m)) * r**2)``;
- ``is_training=false``: ``x_backprop = y_backprop * scale * r``, NHWC/NDHWC only ("The
  implementation of FusedBatchNormGrad with is_training=False only support NHWC tensor
  format for now."; TensorFlow's Python gradient transposes NCHW, and so does minigraph's).

``reserve_space_3`` is not read; ``reserve_space_4``/``_5`` are empty. An empty ``x`` gives
zero scale and offset gradients. Computed in float32, float16 inputs cast once.
""",
)


def _fbn_grad_checks(ctx: KernelContext, dy: Any, x: Any, scale: Any, m: Any, v: Any) -> int:
    """FusedBatchNormGradOpBase's checks, in its order; the channel count."""
    for a in (dy, x):
        if a.ndim not in (4, 5):
            ctx.fail(f"input must be 4 or 5-dimensional{shape_str(a.shape)}")
    for what, a in (("scale", scale), ("saved mean", m), ("saved variance", v)):
        if a.ndim != 1:
            ctx.fail(f"{what} must be 1-dimensional{shape_str(a.shape)}")
    if x.shape != dy.shape:
        ctx.fail(
            f"x and y_backprop must have same shape, but x has shape {shape_str(x.shape)} and "
            f"y_backprop has shape {shape_str(dy.shape)}"
        )
    channels = x.shape[_channel_axis(ctx.attrs["data_format"], x.ndim)]
    for pname, p in (("scale", scale), ("reserve_space_1", m), ("reserve_space_2", v)):
        if p.shape[0] != channels:
            ctx.fail(
                f"{pname} must have the same number of elements as the channels of x, got "
                f"{p.shape[0]} and {channels}"
            )
    return channels


@register_kernel("FusedBatchNormGradV3", "CPU", "GPU")
def _fused_batch_norm_grad_v3_kernel(
    ctx: KernelContext, dy: Any, x: Any, scale: Any, m: Any, v: Any, _saved: Any
) -> list:
    xp, attrs = ctx.xp, ctx.attrs
    channels = _fbn_grad_checks(ctx, dy, x, scale, m, v)
    empty = xp.empty((0,), np.float32)
    if x.size == 0:
        zeros = xp.zeros((channels,), np.float32)
        return [xp.empty(x.shape, x.dtype), zeros, zeros.copy(), empty, empty.copy()]
    training = attrs["is_training"]
    if not training and attrs["data_format"].startswith("NC"):
        ctx.fail(
            "The implementation of FusedBatchNormGrad with is_training=False only support "
            "NHWC tensor format for now."
        )
    axis = _channel_axis(attrs["data_format"], x.ndim)

    def per_channel(a: Any) -> Any:
        return _per_channel(xp, a, axis, x.ndim)

    r = (np.float32(1) / xp.sqrt(v + np.float32(attrs["epsilon"]))).astype(np.float32)
    n, nbytes = x.shape[0], x.size * 4
    dx = ctx.empty(x.shape, x.dtype)
    centered = ctx.empty(x.shape, np.float32) if training else None

    def sums(b: slice) -> tuple[Any, Any]:
        """sum(y_backprop) and sum(y_backprop * (x - m)) over one slice of the batch."""
        dyf = dy[b].astype(np.float32, copy=False)
        out = None if centered is None else centered[b]
        part = xp.subtract(x[b], per_channel(m), out=out, dtype=np.float32)
        return _sum(xp, dyf, axis), _sum(xp, dyf, axis, part)

    partial = _by_batch(ctx, sums, n, 2 * nbytes)
    offset_backprop = _total([p[0] for p in partial])
    dy_centered = _total([p[1] for p in partial])
    scale_backprop = dy_centered * r
    if training:
        rest = np.float32(x.size // channels)
        coef1 = scale * r
        coef12 = coef1 * (r * r * (dy_centered / rest))
        shift = coef1 * (offset_backprop * (np.float32(1) / rest))

        def backprop(b: slice) -> None:
            # scale * r * (dy - mean(dy) - (x - m) * mean(dy * (x - m)) * r**2)
            assert centered is not None  # made for training
            part = centered[b]
            part *= per_channel(coef12)
            part += per_channel(shift)
            if dx.dtype == np.float32:  # into the output, else through a float32 buffer
                out = xp.multiply(dy[b], per_channel(coef1), out=dx[b])
                out -= part
            else:
                out = xp.multiply(dy[b], per_channel(coef1), dtype=np.float32)
                out -= part
                dx[b] = out

    else:

        def backprop(b: slice) -> None:
            xp.multiply(dy[b], per_channel(r * scale), out=dx[b], dtype=np.float32,
                        casting="unsafe")  # fmt: skip

    _by_batch(ctx, backprop, n, 2 * nbytes)
    return [dx, scale_backprop, offset_backprop, empty, empty.copy()]


FusedBatchNormGradV3 = make_wrapper_class(FUSED_BATCH_NORM_GRAD_V3)

__all__ = ["FusedBatchNormV3", "FusedBatchNormGradV3", *NN_BUILDERS]
