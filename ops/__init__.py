"""The op library: one module per op family, each op's whole story in one block.

Importing this package registers every op. Each family module exports its
snake_case builders and its C++-style classes; this package re-exports the
classes (``ops.DynamicStitch``) and ``minigraph`` re-exports the builders.
"""

from minigraph.ops import (  # noqa: F401  (importing a family registers its ops)
    array_grad,
    array_grad_ops,
    array_ops,
    batch_norm_ops,
    compare_ops,
    complex_ops,
    control_flow_grad,
    control_flow_ops,
    conv3d_backprop_ops,
    conv3d_grad,
    conv3d_ops,
    conv_backprop_ops,
    conv_grad,
    conv_ops,
    crop_resize_grad_ops,
    data_flow_ops,
    depth_space_ops,
    detection_ops,
    gather_grad,
    gather_ops,
    gradients,
    image_grad,
    image_grad_ops,
    image_ops,
    linalg_grad,
    linalg_ops,
    list_gather_ops,
    list_grad,
    list_ops,
    loss_ops,
    math_grad,
    math_grad_ops,
    math_n_ops,
    math_ops,
    nn_grad,
    nn_grad_ops,
    nn_ops,
    pad_ops,
    partition_ops,
    pool3d_grad_ops,
    pool_grad_ops,
    random_grad,
    random_ops,
    reduction_grad,
    reduction_ops,
    scatter_nd_non_aliasing,
    scatter_ops,
    segment_grad,
    segment_grad_ops,
    segment_ops,
    shape_ops,
    slice_grad,
    slice_ops,
    spacetobatch_ops,
    sparse_segment_ops,
    strided_slice_ops,
    switch_merge_ops,
    tensor_array,
    tensor_array_ops,
    training_ops,
    variable_ops,
    variables,
    while_grad,
)
from minigraph.ops.array_grad_ops import *  # noqa: F403
from minigraph.ops.array_ops import *  # noqa: F403
from minigraph.ops.batch_norm_ops import *  # noqa: F403
from minigraph.ops.compare_ops import *  # noqa: F403
from minigraph.ops.complex_ops import *  # noqa: F403
from minigraph.ops.control_flow_ops import *  # noqa: F403
from minigraph.ops.conv3d_backprop_ops import *  # noqa: F403
from minigraph.ops.conv3d_ops import *  # noqa: F403
from minigraph.ops.conv_backprop_ops import *  # noqa: F403
from minigraph.ops.conv_ops import *  # noqa: F403
from minigraph.ops.crop_resize_grad_ops import *  # noqa: F403
from minigraph.ops.data_flow_ops import *  # noqa: F403
from minigraph.ops.depth_space_ops import *  # noqa: F403
from minigraph.ops.detection_ops import *  # noqa: F403
from minigraph.ops.gather_ops import *  # noqa: F403
from minigraph.ops.gradients import AddSymbolicGradients  # noqa: F401
from minigraph.ops.image_grad_ops import *  # noqa: F403
from minigraph.ops.image_ops import *  # noqa: F403
from minigraph.ops.linalg_ops import *  # noqa: F403
from minigraph.ops.list_gather_ops import *  # noqa: F403
from minigraph.ops.list_ops import *  # noqa: F403
from minigraph.ops.loss_ops import *  # noqa: F403
from minigraph.ops.math_grad_ops import *  # noqa: F403
from minigraph.ops.math_n_ops import *  # noqa: F403
from minigraph.ops.math_ops import *  # noqa: F403
from minigraph.ops.nn_grad_ops import *  # noqa: F403
from minigraph.ops.nn_ops import *  # noqa: F403
from minigraph.ops.pad_ops import *  # noqa: F403
from minigraph.ops.partition_ops import *  # noqa: F403
from minigraph.ops.pool3d_grad_ops import *  # noqa: F403
from minigraph.ops.pool_grad_ops import *  # noqa: F403
from minigraph.ops.random_ops import *  # noqa: F403
from minigraph.ops.reduction_ops import *  # noqa: F403
from minigraph.ops.scatter_nd_non_aliasing import *  # noqa: F403
from minigraph.ops.scatter_ops import *  # noqa: F403
from minigraph.ops.segment_grad_ops import *  # noqa: F403
from minigraph.ops.segment_ops import *  # noqa: F403
from minigraph.ops.shape_ops import *  # noqa: F403
from minigraph.ops.slice_ops import *  # noqa: F403
from minigraph.ops.spacetobatch_ops import *  # noqa: F403
from minigraph.ops.sparse_segment_ops import *  # noqa: F403
from minigraph.ops.strided_slice_ops import *  # noqa: F403
from minigraph.ops.switch_merge_ops import *  # noqa: F403
from minigraph.ops.tensor_array import *  # noqa: F403
from minigraph.ops.tensor_array_ops import *  # noqa: F403
from minigraph.ops.training_ops import *  # noqa: F403
from minigraph.ops.variable_ops import *  # noqa: F403

FAMILIES = (
    array_ops,
    shape_ops,
    slice_ops,
    strided_slice_ops,
    pad_ops,
    gather_ops,
    math_ops,
    math_n_ops,
    compare_ops,
    complex_ops,
    linalg_ops,
    reduction_ops,
    nn_ops,
    loss_ops,
    conv_ops,
    conv3d_ops,
    conv_backprop_ops,
    spacetobatch_ops,
    depth_space_ops,
    image_ops,
    detection_ops,
    random_ops,
    data_flow_ops,
    partition_ops,
    segment_ops,
    sparse_segment_ops,
    segment_grad_ops,
    scatter_ops,
    scatter_nd_non_aliasing,
    switch_merge_ops,
    control_flow_ops,
    tensor_array,
    variables,
)


def builders() -> dict:
    """Every family's public builders, by name (what ``minigraph`` re-exports)."""
    out = {}
    for family in FAMILIES:
        for name in family.BUILDERS:
            out[name] = getattr(family, name)
    return out
