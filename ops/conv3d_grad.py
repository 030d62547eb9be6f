"""Gradients of the 3-D convolution and pooling ops (conv3d_ops, conv3d_backprop_ops,
pool3d_grad_ops), one block per op, with TensorFlow's formulas
(tensorflow/python/ops/nn_grad.py).

As the 2-D ones (conv_grad.py): a convolution's gradients are its two backprop ops with
the forward op's own attrs, a backprop op's are the other backprop op and the forward
convolution, so gradients of gradients are built from the same three ops. Shapes passed
to a backprop op are constants when shape inference knows them, else Shape nodes.
"""

from __future__ import annotations

from typing import Any

from minigraph.graph import Operation, Output
from minigraph.ops import (  # noqa: F401  (the ops built here)
    conv3d_backprop_ops,
    conv3d_ops,
    pool3d_grad_ops,
)
from minigraph.ops.array_ops import zeros_like
from minigraph.ops.grad_util import shape_of
from minigraph.registry import register_gradient
from minigraph.wrappers import apply_op

__all__: list[str] = []

_WINDOW = ("strides", "padding", "data_format", "dilations")


def _conv(op: Operation, op_type: str, inputs: list[Any]) -> Output:
    """``op_type`` on ``inputs`` with ``op``'s window attrs (not its dtypes)."""
    attrs = {k: op.node.attrs[k] for k in _WINDOW}
    return apply_op(op_type, None, inputs, attrs).outputs[0]


# -- Conv3D and its backprops -------------------------------------------------------------


@register_gradient("Conv3D")
def _conv3d_grad(op: Operation, grad: Output) -> list[Any]:
    """Conv3DBackpropInputV2 and Conv3DBackpropFilterV2 with Conv3D's attrs, on the input's
    and filter's shapes."""
    x, w = op.inputs
    return [
        _conv(op, "Conv3DBackpropInputV2", [shape_of(x), w, grad]),
        _conv(op, "Conv3DBackpropFilterV2", [x, shape_of(w), grad]),
    ]


@register_gradient("Conv3DBackpropInputV2")
def _conv3d_backprop_input_grad(op: Operation, grad: Output) -> list[Any]:
    """input_sizes gets none; the filter's is a filter backprop with ``grad`` as the
    input, out_backprop's the convolution of ``grad``."""
    _, w, dy = op.inputs
    return [
        None,
        _conv(op, "Conv3DBackpropFilterV2", [grad, shape_of(w), dy]),
        _conv(op, "Conv3D", [grad, w]),
    ]


@register_gradient("Conv3DBackpropFilterV2")
def _conv3d_backprop_filter_grad(op: Operation, grad: Output) -> list[Any]:
    """filter_sizes gets none; the input's is an input backprop of ``grad`` as the filter,
    out_backprop's the convolution of the input with ``grad``."""
    x, _, dy = op.inputs
    return [
        _conv(op, "Conv3DBackpropInputV2", [shape_of(x), grad, dy]),
        None,
        _conv(op, "Conv3D", [x, grad]),
    ]


# -- pooling ----------------------------------------------------------------------------

_POOL = ("ksize", "strides", "padding", "data_format")


def _pool(op: Operation, op_type: str, inputs: list[Any]) -> Output:
    """``op_type`` on ``inputs`` with ``op``'s pooling attrs (not its dtypes)."""
    attrs = {k: op.node.attrs[k] for k in _POOL}
    return apply_op(op_type, None, inputs, attrs).outputs[0]


@register_gradient("MaxPool3D")
def _max_pool3d_grad(op: Operation, grad: Output) -> list[Any]:
    """MaxPool3DGrad: each window's gradient to every cell equal to its max, as
    TensorFlow's CPU kernel."""
    return [_pool(op, "MaxPool3DGrad", [op.inputs[0], op.outputs[0], grad])]


@register_gradient("MaxPool3DGrad")
def _max_pool3d_grad_grad(op: Operation, grad: Output) -> list[Any]:
    """Zeros for MaxPool3D's input and output (the pick is piecewise constant), and the
    gradient read at the first equal cell for ``grad``."""
    x, y, _ = op.inputs
    return [zeros_like(x), zeros_like(y), _pool(op, "MaxPool3DGradGrad", [x, y, grad])]


@register_gradient("MaxPool3DGradGrad")
def _max_pool3d_grad_grad_grad(op: Operation, grad: Output) -> list[Any]:
    """Zeros for MaxPool3D's input and output; MaxPool3DGrad of ``grad``."""
    x, y, _ = op.inputs
    return [zeros_like(x), zeros_like(y), _pool(op, "MaxPool3DGrad", [x, y, grad])]


@register_gradient("AvgPool3D")
def _avg_pool3d_grad(op: Operation, grad: Output) -> list[Any]:
    """AvgPool3DGrad on the input's shape."""
    return [_pool(op, "AvgPool3DGrad", [shape_of(op.inputs[0]), grad])]


@register_gradient("AvgPool3DGrad")
def _avg_pool3d_grad_grad(op: Operation, grad: Output) -> list[Any]:
    """orig_input_shape (int32) gets none; grad's is AvgPool3D of the gradient (linear)."""
    return [None, _pool(op, "AvgPool3D", [grad])]
