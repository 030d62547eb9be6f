"""Neural-network ops run by TensorFlow 2.21 (see make_op_fixtures.py): family "nn".

Written with TensorFlow's default CPU kernels (oneDNN on). Left out, because TensorFlow's
answer depends on the kernel or is undefined (each is tested in test_nn_ops.py or
test_conv_ops.py instead):
- NCHW Conv2D/MaxPool/AvgPool/DepthwiseConv2dNative, DepthwiseConv2dNative dilations and
  unequal strides: TF's plain CPU kernels refuse them (oneDNN runs some); minigraph runs all;
- malformed explicit_paddings: oneDNN does not check them (the plain kernels do);
- a rank-0 Softmax: oneDNN AbortedError, plain InvalidArgumentError;
- float16 FusedBatchNormV3: TF leaves reserve_space_1/2 uninitialised (for float32 the
  oneDNN kernel writes mean and variance there, the plain one leaves them uninitialised);
- TopKV2 with NaN: TF's comparisons give no order ([1, nan, 3, 2, nan] gives [nan, 3, 1]
  for k=3 but [3, 1, nan, 2, nan] for k=5); minigraph puts NaN first, as a sort would.
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(4)

f16, f32, f64 = np.float16, np.float32, np.float64
i8, i32, i64, u8 = np.int8, np.int32, np.int64, np.uint8
nan, inf = np.nan, np.inf


def normal(shape, dtype=f32, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


SPECIAL = np.array([nan, inf, -inf, 0.0, -0.0, 1e-8, -3.5, 2.0, 7.0, 40.0, -40.0, -100.0], f32)
IMAGE = normal((2, 5, 6, 3))
VEC3 = np.array([0.5, -1.0, 2.0], f32)

CASES = [
    # BiasAdd
    case("BiasAdd", value=IMAGE, bias=VEC3),
    case("BiasAdd", name="BiasAdd-NCHW", value=IMAGE.transpose(0, 3, 1, 2).copy(), bias=VEC3,
         data_format="NCHW"),
    case("BiasAdd", name="BiasAdd-NCHW-rank3", value=normal((2, 3, 4)), bias=VEC3,
         data_format="NCHW"),
    case("BiasAdd", name="BiasAdd-NCHW-rank2", value=normal((2, 3)), bias=VEC3,
         data_format="NCHW"),
    case("BiasAdd", name="BiasAdd-int32", value=np.arange(12, dtype=i32).reshape(4, 3),
         bias=np.array([1, -2, 3], i32)),
    case("BiasAdd", name="BiasAdd-f64-rank5", value=normal((1, 2, 2, 2, 3), f64),
         bias=VEC3.astype(f64)),
    case("BiasAdd", name="BiasAdd-mismatch", value=normal((2, 3)), bias=normal(2)),
    case("BiasAdd", name="BiasAdd-rank1", value=normal(3), bias=VEC3),
    # activations
    case("Relu", features=SPECIAL),
    case("Relu", name="Relu-int8", features=np.array([-128, -1, 0, 5, 127], i8)),
    case("Relu", name="Relu-f64", features=normal((3, 4), f64)),
    case("Relu6", features=SPECIAL),
    case("Relu6", name="Relu6-int32", features=np.array([-5, 0, 3, 6, 9], i32)),
    case("Elu", features=SPECIAL),
    case("Elu", name="Elu-f64", features=normal((2, 5), f64, 3.0)),
    case("Elu", name="Elu-f16", features=normal(8, f16, 3.0)),
    case("Selu", features=SPECIAL),
    case("Selu", name="Selu-f64", features=normal((2, 5), f64, 3.0)),
    case("LeakyRelu", features=SPECIAL),
    case("LeakyRelu", name="LeakyRelu-alpha2", features=SPECIAL, alpha=2.0),
    case("LeakyRelu", name="LeakyRelu-f16", features=normal(8, f16, 3.0), alpha=0.01),
    case("Softplus", features=SPECIAL),
    case("Softplus", name="Softplus-f64", features=normal((3, 3), f64, 10.0)),
    case("Softplus", name="Softplus-f16", features=normal(8, f16, 3.0)),
    case("Relu", name="Relu-bool", features=np.array([True, False])),
    # Softmax, LogSoftmax
    case("Softmax", logits=normal((3, 5), f32, 5.0)),
    case("Softmax", name="Softmax-f64-rank3", logits=normal((2, 3, 4), f64, 5.0)),
    case("Softmax", name="Softmax-f16", logits=normal((2, 6), f16, 3.0)),
    case("Softmax", name="Softmax-large", logits=np.array([[1000.0, 1000.0, -inf]], f32)),
    case("Softmax", name="Softmax-empty", logits=np.zeros((2, 0), f32)),
    case("LogSoftmax", logits=normal((3, 5), f32, 5.0)),
    case("LogSoftmax", name="LogSoftmax-neg-inf", logits=np.array([[0, 1], [-inf, 0]], f32)),
    case("LogSoftmax", name="LogSoftmax-f64", logits=normal((4,), f64, 30.0)),
    # MaxPool, AvgPool
    case("MaxPool", input=IMAGE, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"),
    case("MaxPool", name="MaxPool-SAME", input=IMAGE, ksize=[1, 3, 2, 1],
         strides=[1, 2, 1, 1], padding="SAME"),
    case("MaxPool", name="MaxPool-int32", input=rng.integers(-9, 9, (1, 4, 4, 2)).astype(i32),
         ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1], padding="SAME"),
    case("MaxPool", name="MaxPool-nan-inf",
         input=np.array([nan, 1, nan, nan, -inf, -inf, 2, nan], f32).reshape(1, 2, 4, 1),
         ksize=[1, 1, 2, 1], strides=[1, 1, 2, 1], padding="VALID"),
    case("MaxPool", name="MaxPool-EXPLICIT", input=IMAGE, ksize=[1, 2, 3, 1],
         strides=[1, 1, 2, 1], padding="EXPLICIT", explicit_paddings=[0, 0, 1, 0, 2, 1, 0, 0]),
    case("MaxPool", name="MaxPool-f64", input=IMAGE.astype(f64), ksize=[1, 5, 6, 1],
         strides=[1, 1, 1, 1], padding="VALID"),
    case("MaxPool", name="MaxPool-negative-size", input=IMAGE, ksize=[1, 7, 1, 1],
         strides=[1, 1, 1, 1], padding="VALID"),
    case("MaxPool", name="MaxPool-batch", input=IMAGE, ksize=[2, 1, 1, 1],
         strides=[1, 1, 1, 1], padding="VALID"),
    case("MaxPool", name="MaxPool-ksize0", input=IMAGE, ksize=[1, 0, 1, 1],
         strides=[1, 1, 1, 1], padding="VALID"),
    case("AvgPool", value=IMAGE, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"),
    case("AvgPool", name="AvgPool-SAME", value=IMAGE, ksize=[1, 3, 3, 1],
         strides=[1, 2, 2, 1], padding="SAME"),
    case("AvgPool", name="AvgPool-SAME-3x3",
         value=np.arange(9, dtype=f32).reshape(1, 3, 3, 1), ksize=[1, 2, 2, 1],
         strides=[1, 2, 2, 1], padding="SAME"),
    case("AvgPool", name="AvgPool-f64", value=IMAGE.astype(f64), ksize=[1, 4, 1, 1],
         strides=[1, 1, 3, 1], padding="SAME"),
    case("AvgPool", name="AvgPool-f16", value=IMAGE.astype(f16), ksize=[1, 2, 3, 1],
         strides=[1, 1, 1, 1], padding="SAME"),
    case("AvgPool", name="AvgPool-int32", value=np.ones((1, 2, 2, 1), i32), ksize=[1, 1, 1, 1],
         strides=[1, 1, 1, 1], padding="VALID"),
    case("AvgPool", name="AvgPool-negative-size", value=IMAGE, ksize=[1, 1, 9, 1],
         strides=[1, 1, 1, 1], padding="VALID"),
    # Conv2D's attrs, DepthwiseConv2dNative
    case("Conv2D", name="Conv2D-EXPLICIT", input=IMAGE, filter=normal((2, 3, 3, 4)),
         strides=[1, 2, 1, 1], padding="EXPLICIT", explicit_paddings=[0, 0, 1, 2, 0, 3, 0, 0]),
    case("Conv2D", name="Conv2D-SAME-s2-nocudnn", input=IMAGE, filter=normal((3, 3, 3, 2)),
         strides=[1, 2, 2, 1], padding="SAME", use_cudnn_on_gpu=False),
    case("Conv2D", name="Conv2D-dilated", input=IMAGE, filter=normal((2, 2, 3, 2)),
         strides=[1, 1, 1, 1], padding="VALID", dilations=[1, 2, 2, 1]),
    case("Conv2D", name="Conv2D-int32", input=np.ones((1, 3, 3, 1), i32),
         filter=np.ones((2, 2, 1, 1), i32), strides=[1, 1, 1, 1], padding="VALID"),
    case("Conv2D", name="Conv2D-channels", input=IMAGE, filter=normal((1, 1, 2, 2)),
         strides=[1, 1, 1, 1], padding="VALID"),
    case("DepthwiseConv2dNative", input=IMAGE, filter=normal((2, 2, 3, 2)),
         strides=[1, 1, 1, 1], padding="VALID"),
    case("DepthwiseConv2dNative", name="DepthwiseConv2dNative-SAME-s2", input=IMAGE,
         filter=normal((3, 3, 3, 1)), strides=[1, 2, 2, 1], padding="SAME"),
    case("DepthwiseConv2dNative", name="DepthwiseConv2dNative-EXPLICIT",
         input=normal((1, 3, 3, 1)), filter=normal((2, 2, 1, 3)), strides=[1, 1, 1, 1],
         padding="EXPLICIT", explicit_paddings=[0, 0, 1, 1, 1, 1, 0, 0]),
    case("DepthwiseConv2dNative", name="DepthwiseConv2dNative-f64",
         input=IMAGE.astype(f64), filter=normal((2, 3, 3, 3), f64), strides=[1, 1, 1, 1],
         padding="SAME"),
    case("DepthwiseConv2dNative", name="DepthwiseConv2dNative-channels", input=IMAGE,
         filter=normal((2, 2, 2, 1)), strides=[1, 1, 1, 1], padding="VALID"),
    # FusedBatchNormV3
    case("FusedBatchNormV3", x=IMAGE, scale=VEC3, offset=normal(3), mean=normal(3),
         variance=np.array([0.5, 1.0, 2.0], f32), is_training=False),
    case("FusedBatchNormV3", name="FusedBatchNormV3-NCHW",
         x=IMAGE.transpose(0, 3, 1, 2).copy(), scale=VEC3, offset=normal(3), mean=normal(3),
         variance=np.array([0.5, 1.0, 2.0], f32), is_training=False, data_format="NCHW",
         epsilon=0.01),
    case("FusedBatchNormV3", name="FusedBatchNormV3-mismatch", x=IMAGE, scale=normal(2),
         offset=normal(3), mean=normal(3), variance=np.ones(3, f32), is_training=False),
    case("FusedBatchNormV3", name="FusedBatchNormV3-rank3", x=normal((2, 2, 3)), scale=VEC3,
         offset=normal(3), mean=normal(3), variance=np.ones(3, f32), is_training=False),
    case("FusedBatchNormV3", name="FusedBatchNormV3-training", x=IMAGE, scale=VEC3,
         offset=normal(3), mean=np.zeros(0, f32), variance=np.zeros(0, f32)),
    # TopKV2, InTopKV2
    case("TopKV2", input=np.array([[1, 3, 3, 2], [5, 5, 5, 5]], f32), k=np.int32(3)),
    case("TopKV2", name="TopKV2-rank3-int64",
         input=rng.integers(0, 3, (2, 3, 6)).astype(i64), k=np.int64(4), index_type=i64),
    case("TopKV2", name="TopKV2-uint8", input=np.array([[1, 3, 255, 3]], u8), k=np.int32(2)),
    case("TopKV2", name="TopKV2-k0", input=normal((2, 3)), k=np.int32(0)),
    case("TopKV2", name="TopKV2-f64-all", input=normal((3, 4), f64), k=np.int32(4)),
    case("TopKV2", name="TopKV2-k-too-large", input=normal((2, 3)), k=np.int32(4)),
    case("TopKV2", name="TopKV2-k-negative", input=normal((2, 3)), k=np.int32(-1)),
    case("TopKV2", name="TopKV2-scalar", input=np.float32(1.0), k=np.int32(1)),
    case("InTopKV2", predictions=np.array([[1, 3, 3, 2], [1, 3, 3, 2], [0, 1, 2, 3]], f32),
         targets=np.array([1, 3, 0], i32), k=np.int32(1)),
    case("InTopKV2", name="InTopKV2-nonfinite",
         predictions=np.array([[1, nan, 3, 2], [1, inf, 3, 2], [1, 2, 3, 4]], f32),
         targets=np.array([2, 2, 3], i64), k=np.int64(2)),
    case("InTopKV2", name="InTopKV2-out-of-range",
         predictions=np.array([[1, 3, 3, 2], [1, 3, 3, 2]], f32), targets=np.array([7, -1], i32),
         k=np.int32(4)),
    case("InTopKV2", name="InTopKV2-k", predictions=normal((4, 5)),
         targets=np.array([0, 1, 2, 3], i32), k=np.int32(3)),
    case("InTopKV2", name="InTopKV2-mismatch", predictions=normal((2, 3)),
         targets=np.array([0, 1, 2], i32), k=np.int32(1)),
    # losses
    case("L2Loss", t=normal((3, 4))),
    case("L2Loss", name="L2Loss-f64", t=normal(7, f64)),
    case("L2Loss", name="L2Loss-f16", t=normal(6, f16)),
    case("L2Loss", name="L2Loss-empty", t=np.zeros((0, 2), f32)),
    case("SoftmaxCrossEntropyWithLogits", features=normal((3, 4), f32, 3.0),
         labels=rng.dirichlet(np.ones(4), 3).astype(f32)),
    case("SoftmaxCrossEntropyWithLogits", name="SoftmaxCrossEntropyWithLogits-broadcast",
         features=np.zeros((2, 3), f32), labels=np.array([[0, 1, 0]], f32)),
    case("SoftmaxCrossEntropyWithLogits", name="SoftmaxCrossEntropyWithLogits-f64",
         features=normal((2, 5), f64, 10.0), labels=rng.dirichlet(np.ones(5), 2)),
    case("SoftmaxCrossEntropyWithLogits", name="SoftmaxCrossEntropyWithLogits-f16",
         features=normal((2, 3), f16), labels=np.array([[1, 0, 0], [0, 0.5, 0.5]], f16)),
    case("SoftmaxCrossEntropyWithLogits", name="SoftmaxCrossEntropyWithLogits-rank1",
         features=np.zeros(3, f32), labels=np.array([0, 1, 0], f32)),
    case("SoftmaxCrossEntropyWithLogits", name="SoftmaxCrossEntropyWithLogits-mismatch",
         features=np.zeros((2, 3), f32), labels=np.zeros((2, 4), f32)),
    case("SparseSoftmaxCrossEntropyWithLogits", features=normal((4, 3), f32, 3.0),
         labels=np.array([0, 2, 1, 2], i32)),
    case("SparseSoftmaxCrossEntropyWithLogits", name="SparseSoftmaxCrossEntropyWithLogits-f64",
         features=normal((3, 5), f64, 10.0), labels=np.array([4, 0, 2], i64)),
    case("SparseSoftmaxCrossEntropyWithLogits", name="SparseSoftmaxCrossEntropyWithLogits-f16",
         features=normal((2, 3), f16), labels=np.array([1, 2], i64)),
    case("SparseSoftmaxCrossEntropyWithLogits",
         name="SparseSoftmaxCrossEntropyWithLogits-out-of-range",
         features=np.zeros((3, 3), f32), labels=np.array([0, 5, 1], i32)),
    case("SparseSoftmaxCrossEntropyWithLogits",
         name="SparseSoftmaxCrossEntropyWithLogits-negative",
         features=np.zeros((3, 3), f32), labels=np.array([0, -1, 1], i64)),
    case("SparseSoftmaxCrossEntropyWithLogits",
         name="SparseSoftmaxCrossEntropyWithLogits-rank",
         features=np.zeros((3, 3), f32), labels=np.zeros((3, 1), i32)),
    # alpha is a float attr: TF's kernel takes float32(0.2) in float64 (-0.20000000298...)
    case("LeakyRelu", name="LeakyRelu-f64-alpha", features=np.array([-1.0, -3.7, 2.5], f64),
         alpha=0.2),
]  # fmt: skip
