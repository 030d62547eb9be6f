"""``mg.nn``: the neural-network builders under tf.compat.v1.nn's names.

Activations, softmax, bias and top-k come from nn_ops, batch norm from batch_norm_ops,
losses from loss_ops, convolution and pooling from conv_ops (``mg.nn.conv2d`` is
``mg.conv2d``), their backprops and conv2d_transpose from conv_backprop_ops, the 3-D ones
from conv3d_ops.

>>> import numpy as np, minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.nn.relu(np.array([-1.0, 2.0]))
>>> mg.Session(g).run(y)
array([0., 2.])
"""

from minigraph.ops.batch_norm_ops import fused_batch_norm
from minigraph.ops.conv3d_ops import avg_pool3d, conv3d, max_pool3d
from minigraph.ops.conv_backprop_ops import (
    conv2d_backprop_filter,
    conv2d_backprop_input,
    conv2d_transpose,
    depthwise_conv2d_native_backprop_filter,
    depthwise_conv2d_native_backprop_input,
)
from minigraph.ops.conv_ops import avg_pool, conv2d, depthwise_conv2d_native, max_pool
from minigraph.ops.loss_ops import (
    l2_loss,
    softmax_cross_entropy_with_logits,
    sparse_softmax_cross_entropy_with_logits,
)
from minigraph.ops.nn_ops import (
    bias_add,
    elu,
    in_top_k,
    leaky_relu,
    log_softmax,
    relu,
    relu6,
    selu,
    softmax,
    softplus,
    top_k,
)

__all__ = [
    "avg_pool",
    "avg_pool3d",
    "bias_add",
    "conv2d",
    "conv3d",
    "conv2d_backprop_filter",
    "conv2d_backprop_input",
    "conv2d_transpose",
    "depthwise_conv2d_native",
    "depthwise_conv2d_native_backprop_filter",
    "depthwise_conv2d_native_backprop_input",
    "elu",
    "fused_batch_norm",
    "in_top_k",
    "l2_loss",
    "leaky_relu",
    "log_softmax",
    "max_pool",
    "max_pool3d",
    "relu",
    "relu6",
    "selu",
    "softmax",
    "softmax_cross_entropy_with_logits",
    "softplus",
    "sparse_softmax_cross_entropy_with_logits",
    "top_k",
]
