"""Graph files: exact round trips for every registered op, and hostile or broken files."""

import json

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors, ops
from minigraph.scope import current_scope

F = np.arange(12, dtype=np.float32).reshape(3, 4)
TIES = np.floor(F / 3).reshape(1, 3, 4, 1)  # pooling windows with equal maxima


def _scope():
    from minigraph.scope import current_scope

    return current_scope()


def _reserve():
    return ops.tensor_list_reserve([4], 3, element_dtype=mg.float32)


def _empty():
    return ops.empty_tensor_list([4], 5, element_dtype=mg.float32)


def _from(x):
    return ops.tensor_list_from_tensor(x, [4])


def _push(lst):
    return ops.tensor_list_push_back(lst, F[1])


def _stack(lst):
    return ops.tensor_list_stack(lst, [4], element_dtype=mg.float32)


_TENSOR_ARRAY_V3_OPS = [
    "TensorArrayV3",
    "TensorArrayWriteV3",
    "TensorArrayReadV3",
    "TensorArrayScatterV3",
    "TensorArrayGatherV3",
    "TensorArraySplitV3",
    "TensorArrayConcatV3",
    "TensorArraySizeV3",
    "TensorArrayCloseV3",
]


def _variable(update=None, check=False):
    """A variable made, initialised, maybe updated and read in one run (each run of a
    round trip is in a new Session); ``check``: whether it is initialised, instead."""
    h = ops.VarHandleOp(_scope(), dtype=mg.float32, shape=[3, 4], shared_name="rt").resource
    init = ops.AssignVariableOp(_scope(), h, F)
    with mg.control_dependencies([init]):
        done = update(h) if update else init
    with mg.control_dependencies([done]):
        if check:
            return ops.VarIsInitializedOp(_scope(), h).is_initialized
        return ops.ReadVariableOp(_scope(), h, dtype=mg.float32).value


def _trained(op, slots, *tensors, **attrs):
    """A variable and its slots (``slots``: name -> initial value) made and initialised, one
    training op applied with ``tensors`` (float32), then each read after it."""
    handles, inits = [], []
    for name, value in {"var": F, **slots}.items():
        h = ops.VarHandleOp(_scope(), dtype=mg.float32, shape=[3, 4], shared_name=name).resource
        inits.append(ops.AssignVariableOp(_scope(), h, value))
        handles.append(h)
    with mg.control_dependencies(inits):
        args = [np.float32(t) for t in tensors]
        done = getattr(ops, op)(_scope(), *handles, *args, **attrs)
    with mg.control_dependencies([done]):
        return [ops.ReadVariableOp(_scope(), h, dtype=mg.float32).value for h in handles]


_GRAD = F / 10.0 - 0.5
_ADAM = (0.9, 0.999, 0.01, 0.9, 0.999, 1e-7)


def _tensor_array_v3():
    """Every TF1 TensorArray op on one array and a second one (split, concat)."""
    ta = ops.TensorArrayV3(_scope(), 3, dtype=mg.float32, clear_after_read=False)
    flow = ops.TensorArrayWriteV3(_scope(), ta.handle, 0, F[0], ta.flow).flow_out
    flow = ops.TensorArrayScatterV3(_scope(), ta.handle, [2, 1], F[1:], flow).flow_out
    read = ops.TensorArrayReadV3(_scope(), ta.handle, 1, flow, dtype=mg.float32).value
    gathered = ops.TensorArrayGatherV3(_scope(), ta.handle, [2, 0], flow, dtype=mg.float32)
    size = ops.TensorArraySizeV3(_scope(), ta.handle, flow).size
    ta2 = ops.TensorArrayV3(_scope(), 2, dtype=mg.float32)
    flow2 = ops.TensorArraySplitV3(_scope(), ta2.handle, F, np.array([1, 2]), ta2.flow).flow_out
    cat = ops.TensorArrayConcatV3(_scope(), ta2.handle, flow2, dtype=mg.float32)
    with mg.control_dependencies([read, gathered.value, size]):
        closed = ops.TensorArrayCloseV3(_scope(), ta.handle).operation
    with mg.control_dependencies([closed]):
        return [read, gathered.value, size, cat.value, cat.lengths, mg.identity(size)]


# One small graph per registered op type: (build, fetch value expected to survive the trip).
OP_EXAMPLES = {
    "Const": lambda: mg.constant(np.array([np.nan, -0.0, 1e-40], np.float32)),
    "Placeholder": lambda: mg.placeholder(mg.float32, shape=[None, 4], name="p") * 1.0,
    "PlaceholderWithDefault": lambda: mg.placeholder_with_default(F, shape=[None, 4]) * 1.0,
    "Identity": lambda: mg.identity(F),
    "Shape": lambda: mg.shape(mg.placeholder(mg.int64, name="s"), out_type=mg.int64),
    "Size": lambda: mg.size(F),
    "Rank": lambda: mg.rank(F),
    "Reshape": lambda: mg.reshape(F, [2, -1]),
    "Fill": lambda: mg.fill([2, 2], 1.5),
    "ZerosLike": lambda: mg.zeros_like(F),
    "OnesLike": lambda: mg.ones_like(F),
    "ConcatV2": lambda: mg.concat([F, F], 1),
    "Pack": lambda: mg.stack([F, F], axis=-1),
    "Transpose": lambda: mg.transpose(F),
    "StridedSlice": lambda: mg.constant(F)[1:, None, ::-2],
    "GatherV2": lambda: mg.gather(F, [2, 0], axis=0),
    "Range": lambda: mg.range(0.0, 1.0, 0.25),
    "Cast": lambda: mg.cast(F, mg.complex64),
    "Add": lambda: mg.ops.Add(_scope(), F, 1.0).z,
    "AddV2": lambda: mg.constant(F) + 1.0,
    "Atan2": lambda: mg.atan2(F - 5.5, F[0] - 1.5),
    # elementwise math, selection and linear algebra (math helper)
    **{
        op: (lambda fn=fn: fn(F - 5.5))
        for op, fn in {
            "Abs": mg.abs,
            "Sign": mg.sign,
            "Square": mg.square,
            "Sqrt": mg.sqrt,
            "Rsqrt": mg.rsqrt,
            "Reciprocal": mg.reciprocal,
            "Exp": mg.exp,
            "Expm1": mg.expm1,
            "Log": mg.log,
            "Log1p": mg.log1p,
            "Sin": mg.sin,
            "Cos": mg.cos,
            "Tanh": mg.tanh,
            "Sigmoid": mg.sigmoid,
            "Erf": mg.erf,
            "Erfc": mg.erfc,
            "Floor": mg.floor,
            "Ceil": mg.ceil,
            "Round": mg.round,
            "Rint": mg.rint,
            "IsNan": mg.is_nan,
            "IsInf": mg.is_inf,
            "IsFinite": mg.is_finite,
        }.items()
    },
    **{
        op: (lambda fn=fn: fn(F - 5.5, 2.5))
        for op, fn in {
            "FloorDiv": mg.floordiv,
            "FloorMod": mg.floormod,
            "TruncateDiv": mg.truncatediv,
            "TruncateMod": mg.truncatemod,
            "Pow": mg.pow,
            "DivNoNan": mg.div_no_nan,
            "SquaredDifference": mg.squared_difference,
        }.items()
    },
    "Div": lambda: mg.ops.Div(_scope(), [7, -7], [2, 2]).z,
    "Select": lambda: mg.select([True, False, True], F, -F),
    "SelectV2": lambda: mg.where_v2(F > 5.0, F, 0.0),
    "ClipByValue": lambda: mg.clip_by_value(F, 2.0, 7.0),
    "Conj": lambda: mg.conj(mg.cast(F - 5.5, mg.complex64) * (1 + 2j)),
    # the gradient ops of the unary math functions (math_grad_ops)
    **{
        op: (lambda op=op: getattr(ops, op)(_scope(), F / 12.0, F - 5.5).z)
        for op in ["TanhGrad", "SigmoidGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad"]
    },
    "MatMul": lambda: mg.matmul(F, F, transpose_b=True),
    "BatchMatMulV2": lambda: mg.matmul(F.reshape(3, 2, 2), F[:2, :2]),
    "Einsum": lambda: mg.einsum("ij,kj->ik", F, F),
    "Sub": lambda: mg.constant(F) - 1.0,
    "Mul": lambda: mg.constant(F) * 2.0,
    "RealDiv": lambda: mg.constant(F) / 2.0,
    "Neg": lambda: -mg.constant(F),
    "Maximum": lambda: mg.maximum(F, 3.0),
    "Minimum": lambda: mg.minimum(F, 3.0),
    "Equal": lambda: mg.equal(F, 3.0),
    "NotEqual": lambda: mg.not_equal(F, 3.0),
    "Less": lambda: mg.less(F, 3.0),
    "LessEqual": lambda: mg.less_equal(F, 3.0),
    "Greater": lambda: mg.greater(F, 3.0),
    "GreaterEqual": lambda: mg.greater_equal(F, 3.0),
    "LogicalAnd": lambda: mg.logical_and([True, False], [True, True]),
    "LogicalOr": lambda: mg.logical_or([True, False], [False, False]),
    "LogicalNot": lambda: mg.logical_not([True, False]),
    "SpaceToDepth": lambda: mg.space_to_depth(F.reshape(1, 2, 6, 1), 2),
    "DepthToSpace": lambda: mg.depth_to_space(F.reshape(1, 1, 3, 4), 2),
    "ResizeBilinear": lambda: mg.resize_bilinear(F.reshape(1, 3, 4, 1), [5, 2]),
    "ResizeNearestNeighbor": lambda: mg.resize_nearest_neighbor(
        F.reshape(1, 3, 4, 1), [5, 7], half_pixel_centers=True
    ),
    "NonMaxSuppressionV3": lambda: mg.non_max_suppression(F[:, :4], F[:, 0], 2, 0.4),
    "NonMaxSuppressionV4": lambda: mg.non_max_suppression_v4(
        F[:, :4], F[:, 0], np.int32(5), np.float32(0.4), np.float32(1), pad_to_max_output_size=True
    ),
    "NonMaxSuppressionV5": lambda: mg.non_max_suppression_v5(
        F[:, :4], F[:, 0], np.int32(3), np.float32(0.4), np.float32(0), np.float32(0.5)
    ),
    "CropAndResize": lambda: mg.crop_and_resize(
        F.reshape(1, 3, 4, 1), [[0, 0, 1, 1], [0.5, 1, 0, -0.2]], [0, 0], [2, 3], "nearest", 1.5
    ),
    "ResizeBicubic": lambda: mg.resize_bicubic(F.reshape(1, 3, 4, 1), [5, 7], True),
    # Random values differ from TensorFlow's (the bits are minigraph's own): what is compared
    # is a fact of the distribution, and the seeded values across the round trip.
    "RandomUniform": lambda: mg.less(mg.random_uniform([3, 4], seed=1), 1.0),
    "RandomStandardNormal": lambda: mg.is_finite(mg.random_normal([5], seed=2)),
    "TruncatedNormal": lambda: mg.less(mg.abs(mg.truncated_normal([6], seed=3)), 2.0),
    "RandomUniformInt": lambda: mg.less(mg.random_uniform([4], 3, 9, mg.int64, seed=4), 9),
    "SpaceToBatchND": lambda: mg.space_to_batch_nd(F.reshape(1, 3, 4, 1), [1, 2], [[0, 1], [0, 0]]),
    "BatchToSpaceND": lambda: mg.batch_to_space_nd(F.reshape(4, 3, 1, 1), [2, 2], [[0, 1], [0, 0]]),
    "DynamicStitch": lambda: mg.dynamic_stitch([[0, 2], [1]], [[1.0, 2.0], [3.0]]),
    "ParallelDynamicStitch": lambda: mg.parallel_dynamic_stitch([[1], [0]], [[F[0]], [F[1]]]),
    "DynamicPartition": lambda: mg.dynamic_partition(F, [1, 0, 1], 2),
    "ScatterNd": lambda: mg.scatter_nd([[1], [0]], [5, 6], [3]),
    "ScatterNdNonAliasingAdd": lambda: mg.scatter_nd_non_aliasing_add(F, [[1]], [F[0]]),
    "TensorScatterUpdate": lambda: mg.tensor_scatter_nd_update(F, [[1, 1]], [9.0]),
    "TensorScatterAdd": lambda: mg.tensor_scatter_nd_add(F, [[1]], [F[0]]),
    "TensorScatterSub": lambda: mg.tensor_scatter_nd_sub(F, [[1]], [F[0]]),
    "TensorScatterMin": lambda: mg.tensor_scatter_nd_min(F, [[2, 3]], [-1.0]),
    "TensorScatterMax": lambda: mg.tensor_scatter_nd_max(F, [[2, 3]], [99.0]),
    "GatherNd": lambda: mg.gather_nd(F, [[1, 2], [0, 0]]),
    "Conv2D": lambda: mg.conv2d(
        F.reshape(1, 3, 4, 1), np.ones((2, 2, 1, 2), np.float32), 1, "SAME", dilations=2
    ),
    "Sum": lambda: mg.reduce_sum(F, 1, keepdims=True),
    "Mean": lambda: mg.reduce_mean(F, [0, -1]),
    "Prod": lambda: mg.reduce_prod(F, 0),
    "Max": lambda: mg.reduce_max(F, -1),
    "Min": lambda: mg.reduce_min(F),
    "Any": lambda: mg.reduce_any(mg.constant(F) > 5.0, 0),
    "All": lambda: mg.reduce_all(mg.constant(F) > 5.0, 1, keepdims=True),
    "ArgMax": lambda: mg.argmax(F, 1, output_type=mg.int32),
    "ArgMin": lambda: mg.argmin(F, 0),
    "Cumsum": lambda: mg.cumsum(F, 1, exclusive=True),
    "Cumprod": lambda: mg.cumprod(F, 0, reverse=True),
    "BiasAdd": lambda: mg.nn.bias_add(F, F[0]),
    "Relu": lambda: mg.nn.relu(F - 5.0),
    "Relu6": lambda: mg.nn.relu6(F - 2.0),
    "Elu": lambda: mg.nn.elu(F - 5.0),
    "Selu": lambda: mg.nn.selu(F - 5.0),
    "LeakyRelu": lambda: mg.nn.leaky_relu(F - 5.0, alpha=0.1),
    "Softplus": lambda: mg.nn.softplus(F - 5.0),
    "Softmax": lambda: mg.nn.softmax(F),
    "LogSoftmax": lambda: mg.nn.log_softmax(F),
    # the activations' gradient ops and BiasAddGrad (nn_grad_ops)
    **{
        op: (lambda op=op: getattr(ops, op)(_scope(), F / 12.0, F - 5.5).backprops)
        for op in ["ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "SoftplusGrad"]
    },
    "LeakyReluGrad": lambda: ops.LeakyReluGrad(_scope(), F, F - 5.5, alpha=0.3).backprops,
    "BiasAddGrad": lambda: ops.BiasAddGrad(_scope(), F.reshape(3, 2, 2), data_format="NCHW").output,
    "MaxPool": lambda: mg.nn.max_pool(F.reshape(1, 3, 4, 1), 2, 1, "SAME"),
    "AvgPool": lambda: mg.nn.avg_pool(F.reshape(1, 3, 4, 1), 2, 2, "SAME"),
    "Conv3D": lambda: mg.nn.conv3d(
        F.reshape(1, 3, 2, 2, 1), np.ones((2, 1, 2, 1, 2), np.float32), [1, 2, 1, 1, 1], "SAME"
    ),
    "MaxPool3D": lambda: mg.nn.max_pool3d(F.reshape(1, 3, 2, 2, 1), [2, 1, 2], 1, "SAME"),
    "AvgPool3D": lambda: mg.nn.avg_pool3d(F.reshape(1, 3, 2, 2, 1), 2, [2, 1, 1], "SAME"),
    "DepthwiseConv2dNative": lambda: mg.nn.depthwise_conv2d_native(
        F.reshape(1, 3, 2, 2), np.ones((2, 2, 2, 2), np.float32), 1, "SAME"
    ),
    "Conv2DBackpropInput": lambda: mg.nn.conv2d_transpose(
        F.reshape(1, 3, 2, 2), np.ones((2, 2, 1, 2), np.float32), [1, 6, 4, 1], 2
    ),
    "Conv2DBackpropFilter": lambda: mg.nn.conv2d_backprop_filter(
        F.reshape(1, 3, 4, 1), [2, 2, 1, 2], np.ones((1, 2, 3, 2), np.float32), 1, "VALID"
    ),
    "DepthwiseConv2dNativeBackpropInput": lambda: mg.nn.depthwise_conv2d_native_backprop_input(
        [1, 3, 2, 2], np.ones((2, 2, 2, 1), np.float32), F.reshape(1, 3, 2, 2), 1, "SAME"
    ),
    "DepthwiseConv2dNativeBackpropFilter": lambda: mg.nn.depthwise_conv2d_native_backprop_filter(
        F.reshape(1, 3, 2, 2), [2, 2, 2, 1], F.reshape(1, 3, 2, 2), 1, "SAME"
    ),
    "FusedBatchNormV3": lambda: mg.nn.fused_batch_norm(
        # Fed, and only y fetched: TensorFlow's Grappler folds an all-constant one, and
        # rewrites an inference one into Mul/Add, after which its other outputs are gone.
        mg.placeholder(mg.float32, [1, 1, 3, 4], name="fbn_x"),
        F[0],
        F[1],
        F[2],
        F[0] + 1.0,
        is_training=False,
    )[0],
    "FusedBatchNormGradV3": lambda: (
        ops.FusedBatchNormGradV3(
            _scope(),
            F.reshape(1, 1, 3, 4),
            TIES.reshape(1, 1, 3, 4),
            F[0],
            F[1],
            F[2] + 1.0,
            np.zeros(0, np.float32),
            epsilon=0.01,
        ).x_backprop
    ),
    "MaxPoolGrad": lambda: (
        ops.MaxPoolGrad(
            _scope(),
            TIES,
            mg.nn.max_pool(TIES, 2, 1, "SAME"),
            F.reshape(1, 3, 4, 1),
            [1, 2, 2, 1],
            [1, 1, 1, 1],
            "SAME",
        ).output
    ),
    "AvgPoolGrad": lambda: (
        ops.AvgPoolGrad(
            _scope(), [1, 3, 4, 1], F[:1].reshape(1, 2, 2, 1), [1, 2, 2, 1], [1, 2, 2, 1], "SAME"
        ).output
    ),
    "MaxPoolGradGrad": lambda: (
        ops.MaxPoolGradGrad(
            _scope(),
            TIES,
            mg.nn.max_pool(TIES, 2, 2, "VALID"),
            F.reshape(1, 3, 4, 1),
            [1, 2, 2, 1],
            [1, 2, 2, 1],
            "VALID",
        ).output
    ),
    "Conv3DBackpropInputV2": lambda: (
        ops.Conv3DBackpropInputV2(
            _scope(),
            [1, 3, 2, 2, 1],
            np.ones((1, 1, 2, 1, 2), np.float32),
            F.reshape(1, 3, 2, 1, 2),
            strides=[1, 1, 1, 1, 1],
            padding="VALID",
        ).output
    ),
    "Conv3DBackpropFilterV2": lambda: (
        ops.Conv3DBackpropFilterV2(
            _scope(),
            TIES.reshape(1, 3, 2, 2, 1),
            [1, 1, 2, 1, 2],
            F.reshape(1, 3, 2, 1, 2),
            strides=[1, 1, 1, 1, 1],
            padding="VALID",
        ).output
    ),
    "MaxPool3DGrad": lambda: (
        ops.MaxPool3DGrad(
            _scope(),
            TIES.reshape(1, 3, 2, 2, 1),
            mg.nn.max_pool3d(TIES.reshape(1, 3, 2, 2, 1), [2, 1, 2], 1, "SAME"),
            F.reshape(1, 3, 2, 2, 1),
            ksize=[1, 2, 1, 2, 1],
            strides=[1, 1, 1, 1, 1],
            padding="SAME",
        ).output
    ),
    "AvgPool3DGrad": lambda: (
        ops.AvgPool3DGrad(
            _scope(),
            [1, 3, 2, 2, 1],
            F.reshape(-1)[:8].reshape(1, 2, 2, 2, 1),
            ksize=[1, 2, 2, 2, 1],
            strides=[1, 2, 1, 1, 1],
            padding="SAME",
        ).output
    ),
    "MaxPool3DGradGrad": lambda: (
        ops.MaxPool3DGradGrad(
            _scope(),
            TIES.reshape(1, 3, 2, 2, 1),
            mg.nn.max_pool3d(TIES.reshape(1, 3, 2, 2, 1), 2, 2, "VALID"),
            F.reshape(1, 3, 2, 2, 1),
            ksize=[1, 2, 2, 2, 1],
            strides=[1, 2, 2, 2, 1],
            padding="VALID",
        ).output
    ),
    "CropAndResizeGradImage": lambda: (
        ops.CropAndResizeGradImage(
            _scope(),
            F.reshape(1, 3, 4, 1),
            np.array([[0.1, 0.2, 0.9, 0.7]], np.float32),
            np.array([0], np.int32),
            [1, 4, 5, 1],
            T=mg.float32,
        ).output
    ),
    "CropAndResizeGradBoxes": lambda: (
        ops.CropAndResizeGradBoxes(
            _scope(),
            F.reshape(1, 3, 4, 1),
            TIES,
            np.array([[0.1, 0.2, 0.9, 0.7]], np.float32),
            np.array([0], np.int32),
        ).output
    ),
    "ResizeBilinearGrad": lambda: (
        ops.ResizeBilinearGrad(
            _scope(), F.reshape(1, 3, 4, 1), np.zeros((1, 2, 3, 1)), half_pixel_centers=True
        ).output
    ),
    "ResizeBicubicGrad": lambda: (
        ops.ResizeBicubicGrad(
            _scope(), F.reshape(1, 3, 4, 1), np.zeros((1, 2, 5, 1), np.float32), align_corners=True
        ).output
    ),
    "ResizeNearestNeighborGrad": lambda: (
        ops.ResizeNearestNeighborGrad(_scope(), F.reshape(1, 3, 4, 1), [2, 3]).output
    ),
    "TopKV2": lambda: list(mg.nn.top_k(F, 2)),
    "InTopKV2": lambda: mg.nn.in_top_k(F, [3, 0, 1], 1),
    "L2Loss": lambda: mg.nn.l2_loss(F),
    "SoftmaxCrossEntropyWithLogits": lambda: mg.nn.softmax_cross_entropy_with_logits(
        labels=F / 66.0, logits=F
    ),
    "SparseSoftmaxCrossEntropyWithLogits": lambda: mg.nn.sparse_softmax_cross_entropy_with_logits(
        labels=[0, 3, 1], logits=F
    ),
    "ExpandDims": lambda: mg.expand_dims(F, -1),
    "Squeeze": lambda: mg.squeeze(mg.expand_dims(F, 0), [0]),
    "BroadcastTo": lambda: mg.broadcast_to(F, [2, 3, 4]),
    "BroadcastGradientArgs": lambda: mg.broadcast_gradient_args(
        mg.placeholder(mg.int32, [None], name="s0"), [1, 4]
    )[0],
    "AddN": lambda: mg.add_n([F, F * 2.0, F]),
    "VarHandleOp": _variable,
    "ReadVariableOp": _variable,
    "AssignVariableOp": lambda: _variable(lambda h: ops.AssignVariableOp(_scope(), h, F * 2.0)),
    "AssignAddVariableOp": lambda: _variable(lambda h: ops.AssignAddVariableOp(_scope(), h, F)),
    "AssignSubVariableOp": lambda: _variable(lambda h: ops.AssignSubVariableOp(_scope(), h, F)),
    "VarIsInitializedOp": lambda: _variable(check=True),
    # training ops (training_ops)
    "ResourceApplyGradientDescent": lambda: _trained(
        "ResourceApplyGradientDescent", {}, 0.1, _GRAD
    ),
    "ResourceApplyMomentum": lambda: _trained(
        "ResourceApplyMomentum", {"accum": F / 2}, 0.1, _GRAD, 0.9, use_nesterov=True
    ),
    "ResourceApplyKerasMomentum": lambda: _trained(
        "ResourceApplyKerasMomentum", {"accum": F / 2}, 0.1, _GRAD, 0.9
    ),
    "ResourceApplyAdam": lambda: _trained(
        "ResourceApplyAdam", {"m": F / 4, "v": F + 1}, *_ADAM, _GRAD, use_nesterov=True
    ),
    "ResourceApplyRMSProp": lambda: _trained(
        "ResourceApplyRMSProp", {"ms": F + 1, "mom": F / 4}, 0.01, 0.9, 0.5, 1e-7, _GRAD
    ),
    "ResourceApplyCenteredRMSProp": lambda: _trained(
        "ResourceApplyCenteredRMSProp",
        {"mg": F / 100, "ms": F + 1, "mom": F / 4},
        *(0.01, 0.9, 0.5, 1e-7, _GRAD),
    ),
    "ResourceApplyAdagrad": lambda: _trained("ResourceApplyAdagrad", {"accum": F + 1}, 0.1, _GRAD),
    "ResourceApplyAdagradV2": lambda: _trained(
        "ResourceApplyAdagradV2", {"accum": F + 1}, 0.1, 1e-7, _GRAD, update_slots=False
    ),
    "Slice": lambda: mg.slice(F, [0, 1], [-1, 1]),
    "Split": lambda: mg.split(F, 2, axis=1),
    "SplitV": lambda: mg.split(F, [1, -1], axis=1),
    "Unpack": lambda: mg.unstack(F, axis=1),
    "Tile": lambda: mg.tile(F, [2, 1]),
    "Pad": lambda: mg.pad(F, [[1, 0], [0, 2]]),
    "PadV2": lambda: mg.pad(F, [[1, 0], [0, 2]], constant_values=9.0),
    "MirrorPad": lambda: mg.pad(F, [[1, 1], [1, 1]], "SYMMETRIC"),
    "MirrorPadGrad": lambda: (
        ops.MirrorPadGrad(current_scope(), F, [[1, 0], [1, 1]], mode="REFLECT").output
    ),
    "StridedSliceGrad": lambda: (
        ops.StridedSliceGrad(current_scope(), [3, 4], [1, 0], [3, 4], [1, 2], F[1:3, ::2]).output
    ),
    "ReverseV2": lambda: mg.reverse(F, [-1]),
    "OneHot": lambda: mg.one_hot([0, 2, -1], 3, axis=0),
    "Where": lambda: mg.where(F > 1.0),
    "Unique": lambda: list(mg.unique([3, 1, 3])),
    "IdentityN": lambda: mg.identity_n([F, F]),
    "Switch": lambda: ops.Switch(_scope(), F, True).output_true,
    "Merge": lambda: ops.Merge(_scope(), [F, F * 2.0]).output,
    "StopGradient": lambda: mg.stop_gradient(F),
    "PreventGradient": lambda: ops.PreventGradient(current_scope(), F, message="m").output,
    "Snapshot": lambda: ops.Snapshot(current_scope(), F).output,
    "NoOp": lambda: [mg.no_op()],
    "SegmentSum": lambda: mg.segment_sum(F, [0, 0, 2]),
    "SegmentMean": lambda: mg.segment_mean(F, [0, 1, 1]),
    "SegmentMax": lambda: mg.segment_max(F, [0, 0, 1]),
    "SegmentMin": lambda: mg.segment_min(F, [1, 1, 1]),
    "SegmentProd": lambda: mg.segment_prod(F, [0, 1, 2]),
    "UnsortedSegmentSum": lambda: mg.unsorted_segment_sum(F, [2, 0, 2], 3),
    "UnsortedSegmentMax": lambda: mg.unsorted_segment_max(F, [1, -1, 1], 3),
    "UnsortedSegmentMin": lambda: mg.unsorted_segment_min(F, [0, 0, 1], 2),
    "UnsortedSegmentProd": lambda: mg.unsorted_segment_prod(F, [1, 0, 1], 2),
    "SparseSegmentSum": lambda: mg.sparse_segment_sum(F, [2, 0], [0, 1]),
    "SparseSegmentMean": lambda: mg.sparse_segment_mean(F, [2, 0, 1], [0, 0, 1]),
    "SparseSegmentSqrtN": lambda: mg.sparse_segment_sqrt_n(F, [1, 1], [0, 0]),
    "SparseSegmentSumWithNumSegments": lambda: mg.sparse_segment_sum(
        F, [2, 0], [0, 1], num_segments=3
    ),
    "SparseSegmentMeanWithNumSegments": lambda: mg.sparse_segment_mean(
        F, [2, 0], [0, 1], num_segments=3
    ),
    "SparseSegmentSqrtNWithNumSegments": lambda: mg.sparse_segment_sqrt_n(
        F, [2, 0], [0, 2], num_segments=4
    ),
    # the gradient ops of the sparse segment reductions (segment_grad_ops)
    **{
        f"SparseSegment{name}Grad{v2}": (
            lambda name=name, v2=v2: (
                getattr(ops, f"SparseSegment{name}Grad{v2}")(
                    _scope(), F, np.array([2, 0, 2], np.int64), [0, 0, 1], 4
                ).operation.outputs
            )
        )
        for name in ["Sum", "Mean", "SqrtN"]
        for v2 in ["", "V2"]
    },
    **{
        # The list and TensorArray ops (tests/test_list_ops.py), each fetched through an op
        # that gives numbers: a list or an array handle is not a value to compare.
        "EmptyTensorList": lambda: _stack(_push(_empty())),
        "TensorListReserve": lambda: _stack(_reserve()),
        "TensorListFromTensor": lambda: _stack(_from(F)),
        "TensorListSplit": lambda: ops.tensor_list_get_item(
            ops.tensor_list_split(F, [-1, 4], np.array([1, 2])),
            1,
            [-1, 4],
            element_dtype=mg.float32,
        ),
        "TensorListSetItem": lambda: _stack(ops.tensor_list_set_item(_reserve(), 1, F[0])),
        "TensorListGetItem": lambda: ops.tensor_list_get_item(
            _from(F), 2, [4], element_dtype=mg.float32
        ),
        "TensorListStack": lambda: _stack(_from(F)),
        "TensorListLength": lambda: ops.tensor_list_length(_reserve()),
        "TensorListElementShape": lambda: ops.tensor_list_element_shape(
            _reserve(), shape_type=mg.int64
        ),
        "TensorListPushBack": lambda: _stack(_push(_reserve())),
        "TensorListPopBack": lambda: ops.tensor_list_pop_back(
            _from(F), [4], element_dtype=mg.float32
        )[1],
        "TensorListConcatV2": lambda: ops.tensor_list_concat_v2(
            _from(F), [-1], np.zeros(0, np.int64), element_dtype=mg.float32
        ),
        "TensorListGather": lambda: ops.tensor_list_gather(
            _from(F), [2, 0], [4], element_dtype=mg.float32
        ),
        "TensorListScatterIntoExistingList": lambda: _stack(
            ops.tensor_list_scatter_into_existing_list(_reserve(), F[:2], [1, 0])
        ),
        "TensorListResize": lambda: _stack(ops.tensor_list_resize(_from(F), 5)),
        **{op: _tensor_array_v3 for op in _TENSOR_ARRAY_V3_OPS},
    },
}


def _feeds(graph):
    feeds = {}
    for node in graph.nodes():
        if node.type_string == "Placeholder":
            spec = node.output_specs[0]
            shape = [d if d is not None else 3 for d in spec.shape.dims or [2]]
            feeds[f"{node.name}:0"] = np.ones(shape, spec.dtype.np)
    return feeds


def test_every_registered_op_has_a_round_trip_example():
    public = {
        n
        for n, op in mg.registered_ops().items()
        if not n.startswith("_") and not op.calls_functions
    }
    assert public <= set(OP_EXAMPLES), f"no example for {sorted(public - set(OP_EXAMPLES))}"


def test_a_graph_with_function_bodies_is_refused_by_name():
    g = mg.Graph()
    with g.as_default():
        mg.while_loop(lambda i: i < 3, lambda i: i + 1, 0, name="loop")
    with pytest.raises(mg.errors.UnimplementedError, match="no function bodies") as e:
        g.to_json()
    assert e.value.node_name == "loop"


@pytest.mark.parametrize("op", sorted(OP_EXAMPLES))
def test_round_trip_is_exact(op):
    g = mg.Graph()
    with g.as_default(), mg.device("/cpu:0"):
        a = mg.constant(1.0, name="a")
        with mg.control_dependencies([a]):
            out = OP_EXAMPLES[op]()
    outs = out if isinstance(out, list) else [out]
    assert any(n.type_string == op for n in g.nodes())
    text = g.to_json()
    g2 = mg.Graph.from_json(text)
    assert g2.to_json() == text
    for n1, n2 in zip(g.nodes(), g2.nodes()):
        assert (n1.name, n1.type_string, n1.requested_device) == (
            n2.name,
            n2.type_string,
            n2.requested_device,
        )
        assert [x.name for x in n1.inputs] == [x.name for x in n2.inputs]
        assert [c.name for c in n1.control_inputs] == [c.name for c in n2.control_inputs]
        assert n1.output_specs[0].shape == n2.output_specs[0].shape if n1.num_outputs else True
    names = [o.name for o in outs]
    v1 = mg.Session(g).run(names, _feeds(g))
    v2 = mg.Session(g2).run(names, _feeds(g2))
    for x, y in zip(v1, v2):
        if x is None:  # an Operation run for effect (NoOp)
            assert y is None
            continue
        assert x.dtype == y.dtype and x.shape == y.shape
        assert x.tobytes() == y.tobytes()


def _doc(nodes):
    return json.dumps({"format": "minigraph.graph", "version": 1, "nodes": nodes})


def _const(name, dtype="float32", shape=(), data="AACAPw=="):
    return {
        "name": name,
        "op": "Const",
        "inputs": [],
        "device": "",
        "attrs": {
            "value": {"tensor": {"dtype": dtype, "shape": list(shape), "base64": data}},
            "dtype": {"type": dtype},
        },
    }


@pytest.mark.parametrize(
    "text, error, message",
    [
        ("[1, 2]", errors.InvalidArgumentError, "the document must be dict"),
        (
            '{"format": "minigraph.graph", "version": 9}',
            errors.InvalidArgumentError,
            "unsupported version 9",
        ),
        (_doc([{"name": "x", "op": "Exec"}]), errors.NotFoundError, "'Exec'"),
        (_doc([_const("a"), _const("a")]), errors.InvalidArgumentError, "duplicate node name"),
        (_doc([_const("a", data="!!")]), errors.InvalidArgumentError, "not base64"),
        (_doc([_const("a", shape=(1000000,))]), errors.InvalidArgumentError, "needs 4000000"),
        (_doc([_const("a", shape=(-1,))]), errors.InvalidArgumentError, "non-negative"),
        (_doc([_const("a", dtype="object")]), errors.InvalidArgumentError, "object"),
        (
            _doc([dict(_const("a"), attrs={"value": {"int": 3}, "dtype": {"type": "int32"}})]),
            errors.InvalidArgumentError,
            "must be tagged 'tensor'",
        ),
        (
            _doc(
                [
                    _const("a"),
                    {
                        "name": "n",
                        "op": "Neg",
                        "inputs": ["a:0"],
                        "attrs": {"T": {"type": "int32"}},
                    },
                ]
            ),
            errors.InvalidArgumentError,
            "attr 'T' is int32 but the inputs give float32",
        ),
        (
            _doc([_const("a"), {"name": "n", "op": "Neg", "inputs": ["a:0", "a:0"]}]),
            errors.InvalidArgumentError,
            "takes 1 data inputs here",
        ),
        (
            _doc([{"name": "n", "op": "Neg", "inputs": ["n:0"]}]),
            errors.InvalidArgumentError,
            "not an earlier node's output",
        ),
        (
            _doc(
                [
                    _const("a"),
                    {
                        "name": "n",
                        "op": "Neg",
                        "inputs": ["a:0"],
                        "bogus": 1,
                        "attrs": {"evil": {"string": "rm -rf"}},
                    },
                ]
            ),
            errors.InvalidArgumentError,
            "no attr named 'evil'",
        ),
        (
            _doc([{"name": "bad:name", "op": "Const"}]),
            errors.InvalidArgumentError,
            "invalid node name",
        ),
        ("[" * 100000 + "]" * 100000, errors.InvalidArgumentError, "not valid JSON"),
    ],
)
def test_hostile_or_broken_files(text, error, message):
    with pytest.raises(error) as e:
        mg.Graph.from_json(text)
    assert message in str(e.value)


def test_loaded_graph_runs_like_the_original():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None, 2], name="x")
        y = mg.reshape(mg.transpose(x) * 3.0, [-1])
    g2 = mg.Graph.from_json(g.to_json())
    feed = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.testing.assert_array_equal(
        mg.Session(g2).run(y.name, {"x:0": feed}), (feed.T * 3).reshape(-1)
    )
