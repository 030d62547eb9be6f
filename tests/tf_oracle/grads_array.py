"""Gradients of the array ops (ops/array_grad.py, slice_grad.py: identity-like, shape, slice,
join, pad, block-move ops and the gradient ops StridedSliceGrad and MirrorPadGrad),
computed by TensorFlow 2.21: family "array" of make_grad_fixtures.py.

Each op is differentiated for float32 and float64 (complex64 and float16 where the op just
moves values), with edge shapes: scalars, empty tensors, negative axes, int64 index inputs.
The replay feeds every input through a placeholder of unknown shape as well, so each
gradient is also built from Shape nodes. Not differentiable in TF (None here too): ZerosLike,
OnesLike, Range, StopGradient, Shape, Size, Rank, PadV2's constant. Squeeze's attr is
``axis`` in tf.raw_ops and ``squeeze_dims`` in the OpDef: only its default is replayed.
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(27)
f16, f32, f64, c64 = np.float16, np.float32, np.float64, np.complex64
i32, i64 = np.int32, np.int64


def normal(shape, dtype=f64):
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


# TF's shape functions of SpaceToBatchND and BatchToSpaceND need block_shape's size.
KS = ["block_shape"]

CASES = [
    # Identity-like, Fill; not differentiable ones give None
    case("Identity", input=normal([2, 3], f32)),
    case("Identity", name="Identity scalar complex", input=normal([], c64)),
    case("IdentityN", input=[normal([2], f32), normal([3, 1]), np.arange(3, dtype=i32)]),
    case("PlaceholderWithDefault", input=normal([2, 3]), shape=[None, 3]),
    case("Fill", dims=i32([2, 3]), value=f64(1.5)),
    case("Fill", name="Fill empty int64 dims", dims=i64([0, 4]), value=f32(2.0)),
    case("ZerosLike", x=normal([2, 2])),
    case("OnesLike", x=normal([3], f32)),
    case("StopGradient", input=normal([2])),
    case("Range", start=f64(0.0), limit=f64(3.0), delta=f64(0.5)),
    case("Shape", input=normal([2, 3])),
    case("Size", input=normal([2, 3])),
    case("Rank", input=normal([2, 3])),
    # Reshape, ExpandDims, Squeeze, Transpose, BroadcastTo, Slice
    case("Reshape", tensor=normal([2, 3]), shape=i32([3, 2])),
    case("Reshape", name="Reshape -1 int64", tensor=normal([4, 3], f32), shape=i64([-1, 2])),
    case("Reshape", name="Reshape scalar", tensor=normal([]), shape=i32([1, 1])),
    case("Reshape", name="Reshape empty", tensor=normal([0, 3]), shape=i32([3, 0])),
    case("ExpandDims", input=normal([2, 3]), axis=i32(-1)),
    case("ExpandDims", name="ExpandDims scalar", input=normal([], f32), axis=i64(0)),
    case("Squeeze", input=normal([1, 3, 1, 2])),
    case("Transpose", x=normal([2, 3, 4]), perm=i32([2, 0, 1])),
    case("Transpose", name="Transpose int64 perm", x=normal([3, 2], f32), perm=i64([1, 0])),
    case("Transpose", name="Transpose complex", x=normal([2, 3], c64), perm=i32([1, 0])),
    case("Transpose", name="Transpose empty", x=normal([0, 2, 1]), perm=i32([1, 2, 0])),
    case("BroadcastTo", input=normal([3, 1]), shape=i32([2, 3, 4])),
    case("BroadcastTo", name="BroadcastTo scalar", input=normal([], f32), shape=i64([2, 2])),
    case("BroadcastTo", name="BroadcastTo same", input=normal([2, 2]), shape=i32([2, 2])),
    case("Slice", input=normal([4, 5]), begin=i32([1, 2]), size=i32([2, -1])),
    case(
        "Slice",
        name="Slice int64 3-D",
        input=normal([3, 2, 4], f32),
        begin=i64([1, 0, 1]),
        size=i64([-1, 1, 2]),
    ),
    case("Slice", name="Slice empty", input=normal([3, 3]), begin=i32([1, 1]), size=i32([0, 2])),
    # ConcatV2, Pack, Unpack, Split, SplitV, ReverseV2, Tile
    case("ConcatV2", values=[normal([2, 1]), normal([2, 3]), normal([2, 2])], axis=i32(1)),
    case(
        "ConcatV2",
        name="ConcatV2 negative int64 axis",
        values=[normal([1, 2, 2], f32), normal([3, 2, 2], f32)],
        axis=i64(-3),
    ),
    case(
        "ConcatV2",
        name="ConcatV2 with empty",
        values=[normal([0, 2]), normal([2, 2]), normal([1, 2])],
        axis=i32(0),
    ),
    case(
        "ConcatV2",
        name="ConcatV2 complex",
        values=[normal([2], c64), normal([1], c64)],
        axis=i32(0),
    ),
    case("Pack", values=[normal([2, 3]), normal([2, 3]), normal([2, 3])], axis=1),
    case("Pack", name="Pack scalars", values=[normal([], f32), normal([], f32)], axis=0),
    case("Unpack", value=normal([2, 3, 2]), num=3, axis=1),
    case("Unpack", name="Unpack negative axis", value=normal([2, 2], f32), num=2, axis=-1),
    case("Split", axis=i32(1), value=normal([2, 4]), num_split=2),
    case("Split", name="Split negative axis", axis=i32(-1), value=normal([3, 3], f32), num_split=3),
    case("SplitV", value=normal([5, 2]), size_splits=i64([1, -1, 2]), axis=i32(0), num_split=3),
    case(
        "SplitV",
        name="SplitV empty piece",
        value=normal([2, 3], f32),
        size_splits=i32([0, 3]),
        axis=i32(1),
        num_split=2,
    ),
    case("ReverseV2", tensor=normal([2, 3, 2]), axis=i32([0, -1])),
    case("ReverseV2", name="ReverseV2 int64 axis", tensor=normal([4], f32), axis=i64([0])),
    case("Tile", input=normal([2, 3]), multiples=i32([2, 1])),
    case("Tile", name="Tile int64 3-D", input=normal([1, 2, 2], f32), multiples=i64([3, 2, 2])),
    case("Tile", name="Tile zero multiple", input=normal([2, 2]), multiples=i32([0, 2])),
    case("Tile", name="Tile float16", input=normal([3], f16), multiples=i32([4])),
    # StridedSlice (every mask) and its gradient op StridedSliceGrad
    case(
        "StridedSlice",
        input=normal([4, 5]),
        begin=i32([1, 0]),
        end=i32([3, 5]),
        strides=i32([1, 2]),
    ),
    case(
        "StridedSlice",
        name="StridedSlice negative stride",
        input=normal([6], f32),
        begin=i32([-1]),
        end=i32([0]),
        strides=i32([-2]),
    ),
    case(
        "StridedSlice",
        name="StridedSlice masks",
        input=normal([3, 4, 5]),
        begin=i64([0, 1, 0, 2]),
        end=i64([0, 3, 0, 3]),
        strides=i64([1, 1, 1, 1]),
        begin_mask=1,
        end_mask=1,
        new_axis_mask=4,
        shrink_axis_mask=8,
    ),
    case(
        "StridedSlice",
        name="StridedSlice ellipsis",
        input=normal([2, 3, 4], f32),
        begin=i32([0, 1]),
        end=i32([0, 3]),
        strides=i32([1, 1]),
        ellipsis_mask=1,
    ),
    case(
        "StridedSlice",
        name="StridedSlice shrink to scalar",
        input=normal([3, 2]),
        begin=i32([2, 1]),
        end=i32([3, 2]),
        strides=i32([1, 1]),
        shrink_axis_mask=3,
    ),
    case(
        "StridedSlice",
        name="StridedSlice empty",
        input=normal([4, 2]),
        begin=i32([3]),
        end=i32([1]),
        strides=i32([1]),
    ),
    case(
        "StridedSlice",
        name="StridedSlice complex",
        input=normal([5], c64),
        begin=i32([1]),
        end=i32([5]),
        strides=i32([3]),
    ),
    case(
        "StridedSliceGrad",
        shape=i32([4, 5]),
        begin=i32([1, 0]),
        end=i32([3, 5]),
        strides=i32([1, 2]),
        dy=normal([2, 3]),
    ),
    case(
        "StridedSliceGrad",
        name="StridedSliceGrad shrink new axis",
        shape=i64([3, 4]),
        begin=i64([1, 0, 0]),
        end=i64([2, 0, 3]),
        strides=i64([1, 1, 1]),
        dy=normal([1, 3], f32),
        end_mask=0,
        new_axis_mask=2,
        shrink_axis_mask=1,
    ),
    # Pad, PadV2, MirrorPad, MirrorPadGrad
    case("Pad", input=normal([2, 3]), paddings=i32([[1, 0], [2, 1]])),
    case("Pad", name="Pad int64 empty", input=normal([0, 2], f32), paddings=i64([[1, 1], [0, 2]])),
    case("Pad", name="Pad scalar", input=normal([]), paddings=np.zeros((0, 2), i32)),
    case("PadV2", input=normal([2, 2]), paddings=i32([[0, 1], [1, 1]]), constant_values=f64(3.0)),
    case("MirrorPad", input=normal([3, 4]), paddings=i32([[2, 1], [1, 3]]), mode="REFLECT"),
    case(
        "MirrorPad",
        name="MirrorPad symmetric",
        input=normal([2, 3, 2], f32),
        paddings=i64([[2, 2], [0, 3], [1, 0]]),
        mode="SYMMETRIC",
    ),
    case(
        "MirrorPad",
        name="MirrorPad symmetric width 1",
        input=normal([1, 3]),
        paddings=i32([[1, 1], [0, 0]]),
        mode="SYMMETRIC",
    ),
    case("MirrorPadGrad", input=normal([6, 5]), paddings=i32([[2, 1], [1, 1]]), mode="REFLECT"),
    case(
        "MirrorPadGrad",
        name="MirrorPadGrad symmetric",
        input=normal([5, 4], f32),
        paddings=i32([[1, 2], [2, 0]]),
        mode="SYMMETRIC",
    ),
    # DepthToSpace, SpaceToDepth, SpaceToBatchND, BatchToSpaceND
    case("DepthToSpace", input=normal([1, 2, 3, 8]), block_size=2),
    case(
        "DepthToSpace",
        name="DepthToSpace float32 block 3",
        input=normal([2, 1, 1, 18], f32),
        block_size=3,
    ),
    case("SpaceToDepth", input=normal([1, 4, 6, 2]), block_size=2),
    case(
        "SpaceToDepth", name="SpaceToDepth float32", input=normal([2, 3, 3, 1], f32), block_size=3
    ),
    case(
        "SpaceToBatchND",
        known_shape=KS,
        input=normal([1, 4, 3, 2]),
        block_shape=i32([2, 2]),
        paddings=i32([[0, 0], [1, 0]]),
    ),
    case(
        "SpaceToBatchND",
        known_shape=KS,
        name="SpaceToBatchND int64 1-D",
        input=normal([2, 5, 1], f32),
        block_shape=i64([3]),
        paddings=i64([[1, 0]]),
    ),
    case(
        "BatchToSpaceND",
        known_shape=KS,
        input=normal([4, 2, 2, 1]),
        block_shape=i32([2, 2]),
        crops=i32([[0, 1], [1, 0]]),
    ),
    case(
        "BatchToSpaceND",
        known_shape=KS,
        name="BatchToSpaceND float32 1-D",
        input=normal([3, 2, 2], f32),
        block_shape=i32([3]),
        crops=i32([[1, 2]]),
    ),
]
