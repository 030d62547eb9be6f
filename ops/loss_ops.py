"""Losses (tf.nn): L2Loss, SoftmaxCrossEntropyWithLogits and
SparseSoftmaxCrossEntropyWithLogits (both outputs: the loss and its gradient).

float16 inputs are computed in float32 and rounded once, as TensorFlow accumulates them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph import errors
from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import FLOAT, REQUIRED, host_array, shape_str, tf_builder
from minigraph.ops.nn_ops import in_float32, log_softmax_rows
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, broadcast, merge_dim, with_rank
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS: tuple[str, ...] = ()  # nothing here is top-level in tf.compat.v1
NN_BUILDERS = (
    "l2_loss",
    "softmax_cross_entropy_with_logits",
    "sparse_softmax_cross_entropy_with_logits",
)


# -- L2Loss --------------------------------------------------------------------------------

L2_LOSS = define_op(
    "L2Loss",
    inputs=["t: T"],
    outputs=["output: T"],
    attrs=[f"T: {FLOAT}"],
    shape_fn=lambda c, t: TensorShape([]),
    doc="""
``sum(t ** 2) / 2``, a scalar (float16 summed in float32, then rounded).

>>> import numpy as np, minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.nn.l2_loss(np.array([1.0, 2.0, 3.0], np.float32))
>>> float(mg.Session(g).run(y))
7.0
""",
)


@register_kernel("L2Loss", "CPU", "GPU")
def _l2_loss_kernel(ctx: KernelContext, t: Any) -> Any:
    ta = in_float32(t)
    return ctx.xp.asarray((ta * ta).sum() / 2).astype(t.dtype)


L2Loss = make_wrapper_class(L2_LOSS)
l2_loss = tf_builder(L2_LOSS, "l2_loss", (("t", REQUIRED),))


def _softmax_xent_shape(c: InferenceContext, f: TensorSpec, lab: TensorSpec) -> list:
    out = broadcast(f.shape, lab.shape)
    if out.rank is None:
        return [TensorShape([None]), TensorShape([None, None])]
    if out.rank != 2:
        c.fail(f"Shape must be broadcasted with rank 2, but is rank is {out.rank}")
    return [TensorShape([out.dims[0]]), out]  # type: ignore[index]


SOFTMAX_CROSS_ENTROPY_WITH_LOGITS = define_op(
    "SoftmaxCrossEntropyWithLogits",
    inputs=["features: T", "labels: T"],
    outputs=["loss: T", "backprop: T"],
    attrs=[f"T: {FLOAT}"],
    shape_fn=_softmax_xent_shape,
    doc="""
Cross entropy of ``softmax(features)`` against the distributions ``labels``, per row:
``loss[i] = -sum(labels[i] * log_softmax(features[i]))`` and
``backprop = softmax(features) - labels``. ``features`` and ``labels`` broadcast (as
TensorFlow 2.21) to ``[batch, classes]``; any other broadcast rank is an error.

Example: logits ``[[0, 0, 0]]``, labels ``[[0, 1, 0]]``: loss ``[log 3]``, backprop
``[[1/3, -2/3, 1/3]]``.
""",
)


@register_kernel("SoftmaxCrossEntropyWithLogits", "CPU", "GPU")
def _softmax_cross_entropy_with_logits_kernel(ctx: KernelContext, f: Any, lab: Any) -> list:
    xp = ctx.xp
    try:
        shape = np.broadcast_shapes(f.shape, lab.shape)
    except ValueError:
        ctx.fail(
            f"logits and labels must be broadcastable: logits_size={shape_str(f.shape)} "
            f"labels_size={shape_str(lab.shape)}"
        )
    if len(shape) != 2:
        ctx.fail(
            "logits and labels must be either 2-dimensional, or broadcasted to be 2-dimensional"
        )
    ctx.check_size(shape, f.dtype)
    f = xp.broadcast_to(f, shape)
    la = in_float32(xp.broadcast_to(lab, shape))
    if f.size == 0:
        return [xp.zeros(shape[:1], f.dtype), xp.empty(shape, f.dtype)]
    shifted, lse = log_softmax_rows(xp, f)
    loss = (la * (lse - shifted)).sum(axis=1)
    backprop = xp.exp(shifted - lse) - la
    return [loss.astype(f.dtype, copy=False), backprop.astype(f.dtype, copy=False)]


SoftmaxCrossEntropyWithLogits = make_wrapper_class(SOFTMAX_CROSS_ENTROPY_WITH_LOGITS)
_softmax_xent = make_builder(SOFTMAX_CROSS_ENTROPY_WITH_LOGITS, "softmax_cross_entropy_with_logits")


def softmax_cross_entropy_with_logits(
    labels: Any = None,
    logits: Any = None,
    dim: int = -1,
    name: str | None = None,
    axis: int | None = None,
) -> Output:
    """Per-row cross entropy of softmax(logits) against ``labels`` (the loss output), as
    tf.compat.v1.nn.softmax_cross_entropy_with_logits; the class axis must be the last."""
    axis = dim if axis is None else axis
    if axis != -1:
        raise errors.InvalidArgumentError(
            f"minigraph takes the classes on the last axis (axis=-1), got {axis}",
            name or "SoftmaxCrossEntropyWithLogits",
            "SoftmaxCrossEntropyWithLogits",
        )
    return _softmax_xent(logits, labels, name=name or "SoftmaxCrossEntropyWithLogits")[0]


def _sparse_xent_shape(c: InferenceContext, f: TensorSpec, lab: TensorSpec) -> list:
    fs, ls = with_rank(f.shape, 2), with_rank(lab.shape, 1)
    batch = fs.dims[0] if fs.dims else None
    if None not in (batch, ls[0]) and batch != ls[0]:
        c.fail(
            "logits and labels must have the same first dimension, got logits shape "
            f"{fs} and labels shape {ls}"
        )
    batch = merge_dim(batch, ls[0])
    return [TensorShape([batch]), TensorShape([batch, fs.dims[1] if fs.dims else None])]


SPARSE_SOFTMAX_CROSS_ENTROPY_WITH_LOGITS = define_op(
    "SparseSoftmaxCrossEntropyWithLogits",
    inputs=["features: T", "labels: Tlabels"],
    outputs=["loss: T", "backprop: T"],
    attrs=[f"T: {FLOAT}", "Tlabels: {int32, int64} = int64"],
    shape_fn=_sparse_xent_shape,
    doc="""
Cross entropy of ``softmax(features)`` (``[batch, classes]``) against class ids
``labels`` (``[batch]``): ``loss[i] = -log_softmax(features[i])[labels[i]]``,
``backprop = softmax(features) - one_hot(labels)``. A label outside ``[0, classes)`` is
InvalidArgumentError on every device ("Received a label value of 5 which is outside the
valid range of [0, 3).  Label values: 0 5 1", as TensorFlow's CPU).

Example: logits ``[[0, 0, 0]]``, labels ``[1]``: loss ``[log 3]``.
""",
)


@register_kernel("SparseSoftmaxCrossEntropyWithLogits", "CPU", "GPU")
def _sparse_softmax_cross_entropy_with_logits_kernel(ctx: KernelContext, f: Any, lab: Any) -> list:
    xp = ctx.xp
    if f.ndim != 2:
        ctx.fail(f"logits must be 2-D, but got shape {shape_str(f.shape)}")
    if lab.ndim != 1:
        ctx.fail(f"labels must be 1-D, but got shape {shape_str(lab.shape)}")
    if f.shape[0] != lab.shape[0]:
        ctx.fail(
            "logits and labels must have the same first dimension, got logits shape "
            f"{shape_str(f.shape)} and labels shape {shape_str(lab.shape)}"
        )
    batch, classes = f.shape
    if classes == 0 and batch:
        ctx.fail(f"Must have at least one class, but got logits shape {shape_str(f.shape)}")
    bad = (lab < 0) | (lab >= classes)
    if batch and bool(bad.any()):
        values = host_array(ctx, lab)
        first = int(values[int(np.argmax((values < 0) | (values >= classes)))])
        ctx.fail(
            f"Received a label value of {first} which is outside the valid range of "
            f"[0, {classes}).  Label values: {' '.join(str(int(v)) for v in values)}"
        )
    if f.size == 0:
        return [xp.zeros((batch,), f.dtype), xp.empty(f.shape, f.dtype)]
    one_hot = xp.arange(classes)[None, :] == lab[:, None]
    shifted, lse = log_softmax_rows(xp, f)
    picked = xp.take_along_axis(shifted, lab.astype(np.int64)[:, None], axis=1)
    loss = (lse - picked)[:, 0]
    backprop = xp.exp(shifted - lse) - one_hot
    return [loss.astype(f.dtype, copy=False), backprop.astype(f.dtype, copy=False)]


SparseSoftmaxCrossEntropyWithLogits = make_wrapper_class(SPARSE_SOFTMAX_CROSS_ENTROPY_WITH_LOGITS)
_sparse_xent = make_builder(
    SPARSE_SOFTMAX_CROSS_ENTROPY_WITH_LOGITS, "sparse_softmax_cross_entropy_with_logits"
)


def sparse_softmax_cross_entropy_with_logits(
    labels: Any = None, logits: Any = None, name: str | None = None
) -> Output:
    """Per-row cross entropy of softmax(logits) against class ids ``labels`` (the loss
    output), as tf.compat.v1.nn.sparse_softmax_cross_entropy_with_logits."""
    return _sparse_xent(logits, labels, name=name or "SparseSoftmaxCrossEntropyWithLogits")[0]


__all__ = [
    "L2Loss",
    "SoftmaxCrossEntropyWithLogits",
    "SparseSoftmaxCrossEntropyWithLogits",
    *NN_BUILDERS,
]
