"""Cases for the ops minigraph had before the TF-graph issues: the seed ops and their helpers."""

import numpy as np
from oracle_case import case

f32 = np.float32
i32 = np.int32

CASES = [
    case(
        "SpaceToBatchND",
        input=np.arange(1, 5, dtype=f32).reshape(1, 2, 2, 1),
        block_shape=np.array([2, 2], i32),
        paddings=np.zeros((2, 2), i32),
    ),
    case(
        "SpaceToBatchND",
        name="SpaceToBatchND-padded",
        input=np.arange(1, 17, dtype=f32).reshape(2, 2, 4, 1),
        block_shape=np.array([2, 2], i32),
        paddings=np.array([[0, 0], [2, 0]], i32),
    ),
    case(
        "BatchToSpaceND",
        input=np.arange(1, 5, dtype=f32).reshape(4, 1, 1, 1),
        block_shape=np.array([2, 2], i32),
        crops=np.zeros((2, 2), i32),
    ),
    case(
        "DynamicStitch",
        indices=[np.array(6, i32), np.array([4, 1], i32), np.array([[5, 2], [0, 3]], i32)],
        data=[
            np.array([61, 62], f32),
            np.array([[41, 42], [11, 12]], f32),
            np.array([[[51, 52], [21, 22]], [[1, 2], [31, 32]]], f32),
        ],
    ),
    case(
        "DynamicPartition",
        data=np.array([10, 20, 30, 40, 50], f32),
        partitions=np.array([0, 0, 1, 1, 0], i32),
        num_partitions=2,
    ),
    case(
        "TensorScatterUpdate",
        tensor=np.zeros(8, i32),
        indices=np.array([[4], [3], [1], [7]], i32),
        updates=np.array([9, 10, 11, 12], i32),
    ),
    case(
        "TensorScatterAdd",
        tensor=np.ones(8, f32),
        indices=np.array([[4], [3], [1], [7]], i32),
        updates=np.array([9, 10, 11, 12], f32),
    ),
    case(
        "GatherNd",
        params=np.array([[1, 2], [3, 4]], i32),
        indices=np.array([[1], [0]], i32),
    ),
    case(
        "GatherNd",
        name="GatherNd-bad-index",
        params=np.array([[1, 2], [3, 4]], i32),
        indices=np.array([[2]], i32),
    ),
    case("ConcatV2", values=[np.ones((1, 2), f32), np.zeros((1, 2), f32)], axis=np.int32(0)),
    case("Cast", x=np.array([1.7, -1.7, 2.5], f32), DstT=np.int32),
    case("Reshape", tensor=np.arange(6, dtype=i32), shape=np.array([3, -1], i32)),
    case(
        "Reshape", name="Reshape-bad", tensor=np.arange(6, dtype=i32), shape=np.array([4, -1], i32)
    ),
]
