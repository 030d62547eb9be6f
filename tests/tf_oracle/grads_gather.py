"""Gradients of the index ops (ops/gather_grad.py), computed by TensorFlow 2.21: family
"gather" of make_grad_fixtures.py. GatherV2 (axes, batch dims, 0-d and empty indices,
index dtypes), GatherNd, the seed ops DynamicStitch/ParallelDynamicStitch (duplicate
indices: TensorFlow gives the overwritten ones the gradient too), DynamicPartition (empty
and scalar partitions), ScatterNd, the TensorScatter* ops (duplicates, ties), TopKV2 and
OneHot (not differentiable). Where TensorFlow returns an IndexedSlices the fixture holds
its dense value (tf.convert_to_tensor), which minigraph returns."""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(27)
f16, f32, f64, c128 = np.float16, np.float32, np.float64, np.complex128
i16, i32, i64 = np.int16, np.int32, np.int64


def normal(shape, dtype=f64):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def ints(values, dtype=i32):
    return np.array(values, dtype)


GATHER = [
    case("GatherV2", name="GatherV2 axis 0, duplicates", params=normal([5, 3]),
         indices=ints([4, 0, 4, 2]), axis=i32(0)),
    case("GatherV2", name="GatherV2 axis 1", params=normal([3, 4, 2], f32),
         indices=ints([[0, 2], [1, 1]]), axis=i32(1)),
    case("GatherV2", name="GatherV2 axis -1, int64", params=normal([2, 3]),
         indices=ints([2, 0, 2], i64), axis=i64(-1)),
    case("GatherV2", name="GatherV2 batch_dims 1", params=normal([2, 4, 3]),
         indices=ints([[0, 3, 3], [1, 2, 0]]), axis=i32(1), batch_dims=1),
    case("GatherV2", name="GatherV2 batch_dims 1, axis 2", params=normal([2, 3, 4], f32),
         indices=ints([[0, 3], [1, 1]]), axis=i32(2), batch_dims=1),
    case("GatherV2", name="GatherV2 batch_dims 2", params=normal([2, 2, 3, 2]),
         indices=ints([[[0, 2], [1, 1]], [[2, 2], [0, 1]]]), axis=i32(2), batch_dims=2),
    case("GatherV2", name="GatherV2 batch_dims -1", params=normal([2, 3]),
         indices=ints([[2, 0, 2], [1, 1, 0]]), axis=i32(1), batch_dims=-1),
    case("GatherV2", name="GatherV2 0-d index", params=normal([3, 2]), indices=i32(1),
         axis=i32(0)),
    case("GatherV2", name="GatherV2 0-d index, axis 1", params=normal([2, 3, 2]),
         indices=i32(2), axis=i32(1)),
    case("GatherV2", name="GatherV2 int16 indices", params=normal([4, 2], f32),
         indices=ints([3, 3, 1], i16), axis=i32(0)),
    case("GatherV2", name="GatherV2 empty indices", params=normal([3, 2]),
         indices=ints(np.zeros([0, 2])), axis=i32(0)),
    case("GatherV2", name="GatherV2 empty params dim", params=normal([4, 0]),
         indices=ints([1, 3]), axis=i32(0)),
    case("GatherV2", name="GatherV2 empty indices, axis 1", params=normal([2, 3]),
         indices=ints(np.zeros([0])), axis=i32(1)),
    case("GatherV2", name="GatherV2 complex128", params=normal([3, 2], c128),
         indices=ints([0, 0, 2]), axis=i32(0)),
    case("GatherV2", name="GatherV2 float16", params=normal([3, 2], f16),
         indices=ints([2, 1, 2]), axis=i32(0)),
    case("GatherNd", name="GatherNd elements, duplicates", params=normal([3, 4]),
         indices=ints([[0, 1], [2, 3], [0, 1]])),
    case("GatherNd", name="GatherNd [N, 1] rows", params=normal([4, 2, 3], f32),
         indices=ints([[1], [3], [1]])),
    case("GatherNd", name="GatherNd index matrix", params=normal([3, 2]),
         indices=ints([[[2], [0]], [[2], [2]]], i64)),
    case("GatherNd", name="GatherNd IGNORE", params=normal([4, 2]),
         indices=ints([[1, 0], [7, 1], [1, 0]]), bad_indices_policy="IGNORE"),
]  # fmt: skip

STITCH = [
    case("DynamicStitch", name="DynamicStitch doc example (0-d index)",
         indices=[ints(6), ints([4, 1]), ints([[5, 2], [0, 3]])],
         data=[normal([2]), normal([2, 2]), normal([2, 2, 2])]),
    case("DynamicStitch", name="DynamicStitch duplicates", indices=[ints([0, 1, 0]), ints([2])],
         data=[normal([3]), normal([1])]),
    case("DynamicStitch", name="DynamicStitch duplicates across lists",
         indices=[ints([0, 2]), ints([2, 1, 0])], data=[normal([2, 3], f32), normal([3, 3], f32)]),
    case("DynamicStitch", name="DynamicStitch empty list, gap",
         indices=[ints([0, 3]), ints(np.zeros([0])), ints([1])],
         data=[normal([2, 2]), normal([0, 2]), normal([1, 2])]),
    case("DynamicStitch", name="DynamicStitch all empty",
         indices=[ints(np.zeros([0])), ints(np.zeros([0]))],
         data=[normal([0, 2]), normal([0, 2])]),
    case("DynamicStitch", name="DynamicStitch complex128", indices=[ints([1, 0])],
         data=[normal([2], c128)]),
    case("ParallelDynamicStitch", name="ParallelDynamicStitch doc example",
         indices=[ints(6), ints([4, 1]), ints([[5, 2], [0, 3]])],
         data=[normal([2], f32), normal([2, 2], f32), normal([2, 2, 2], f32)]),
    case("ParallelDynamicStitch", name="ParallelDynamicStitch duplicates",
         indices=[ints([0, 1, 0]), ints([2, 0])], data=[normal([3, 2]), normal([2, 2])]),
    case("DynamicPartition", name="DynamicPartition 1-D", data=normal([6]),
         partitions=ints([0, 0, 2, 3, 2, 1]), num_partitions=4),
    case("DynamicPartition", name="DynamicPartition matrix partitions",
         data=normal([2, 3, 2], f32), partitions=ints([[1, 0, 1], [2, 2, 0]]), num_partitions=3),
    case("DynamicPartition", name="DynamicPartition empty parts", data=normal([4, 2]),
         partitions=ints([1, 3, 1, 3]), num_partitions=4),
    case("DynamicPartition", name="DynamicPartition 0-d partitions", data=normal([4]),
         partitions=ints(3), num_partitions=4),
    case("DynamicPartition", name="DynamicPartition empty data", data=normal([0, 3]),
         partitions=ints(np.zeros([0])), num_partitions=2),
]  # fmt: skip

SCATTER = [
    case("ScatterNd", name="ScatterNd duplicates", indices=ints([[1], [3], [1]]),
         updates=normal([3, 2]), shape=ints([5, 2])),
    case("ScatterNd", name="ScatterNd elements", indices=ints([[0, 1], [2, 0]], i64),
         updates=normal([2], f32), shape=ints([3, 2], i64)),
    case("TensorScatterUpdate", name="TensorScatterUpdate duplicates", tensor=normal([5, 2]),
         indices=ints([[1], [3], [1]]), updates=normal([3, 2])),
    case("TensorScatterUpdate", name="TensorScatterUpdate elements",
         tensor=normal([3, 3], f32), indices=ints([[0, 1], [2, 2]]), updates=normal([2], f32)),
    case("TensorScatterAdd", tensor=normal([5, 2]), indices=ints([[1], [3], [1]]),
         updates=normal([3, 2])),
    case("TensorScatterSub", tensor=normal([4], f32), indices=ints([[3], [0]], i64),
         updates=normal([2], f32)),
    case("TensorScatterMax", name="TensorScatterMax ties", tensor=np.ones(4),
         indices=ints([[1], [2], [3], [3]]), updates=np.array([2, 0.5, 1, 1])),
    case("TensorScatterMin", name="TensorScatterMin ties", tensor=np.array([[1.0, 2], [3, 4]]),
         indices=ints([[0], [1], [0]]), updates=np.array([[1.0, 0], [5, 4], [1, 3]])),
    case("TensorScatterMax", name="TensorScatterMax", tensor=normal([3, 2], f32),
         indices=ints([[2], [0]]), updates=normal([2, 2], f32)),
    case("ScatterNdNonAliasingAdd", input=normal([5, 2]), indices=ints([[1], [3], [1]]),
         updates=normal([3, 2])),
]  # fmt: skip

TOP_K = [
    case("TopKV2", name="TopKV2 matrix", input=normal([3, 5]), k=i32(2)),
    case("TopKV2", name="TopKV2 rank 3", input=normal([2, 2, 4], f32), k=i32(3)),
    case("TopKV2", name="TopKV2 ties", input=np.array([[1.0, 3, 3, 1], [2, 2, 2, 2]]),
         k=i32(2)),
    case("TopKV2", name="TopKV2 vector, k 0", input=normal([4]), k=i32(0)),
    case("TopKV2", name="TopKV2 int64 k", input=normal([2, 3]), k=i64(3)),
    case("OneHot", name="OneHot (not differentiable)", indices=ints([0, 2, -1]),
         depth=i32(3), on_value=f32(2.0), off_value=f32(-1.0)),
]  # fmt: skip

CASES = GATHER + STITCH + SCATTER + TOP_K
