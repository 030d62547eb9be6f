"""Cases for the shape and data-movement ops of issue 11 (family "shapes").

The case format passes inputs and attrs by ``tf.raw_ops``' keywords, and minigraph declares
TF's OpDef names; where they differ there are no cases here, and tests/test_shape_ops.py,
tests/test_slice_ops.py and tests/test_gather_ops.py check the op against TF's values
instead: ExpandDims (raw_ops ``axis``, OpDef ``dim``), Split and SplitV (``axis`` /
``split_dim``), Where (``condition`` / ``input``), and Squeeze's attr (``axis`` /
``squeeze_dims``: only its default is replayed).
"""

import numpy as np
from oracle_case import case

f16 = np.float16
f32 = np.float32
f64 = np.float64
i32 = np.int32
i64 = np.int64

X = np.arange(6, dtype=f32).reshape(2, 3)
T3 = np.arange(24, dtype=i32).reshape(2, 3, 4)
NANS = np.array([[1.5, 0.0], [np.nan, -np.inf]], f32)

CASES = [
    # ExpandDims, Squeeze, BroadcastTo, Slice
    case("Squeeze", input=np.zeros((1, 2, 1, 3, 1), f32)),
    case("BroadcastTo", input=np.array([1, 2, 3], i32), shape=np.array([2, 3], i32)),
    case("BroadcastTo", name="BroadcastTo-nan", input=NANS[:, :1], shape=np.array([3, 2, 4], i64)),
    case("BroadcastTo", name="BroadcastTo-bad", input=np.arange(3), shape=np.array([2, 2], i32)),
    case("BroadcastTo", name="BroadcastTo-rank", input=X, shape=np.array([3], i32)),
    case("Slice", input=X, begin=np.array([0, 1], i32), size=np.array([-1, 1], i32)),
    case(
        "Slice",
        name="Slice-empty",
        input=T3,
        begin=np.array([1, 3, 0], i64),
        size=np.array([1, 0, -1], i64),
    ),
    case(
        "Slice", name="Slice-oob", input=X, begin=np.array([0, 1], i32), size=np.array([1, 3], i32)
    ),
    case(
        "Slice", name="Slice-neg", input=X, begin=np.array([-1, 1], i32), size=np.array([1, 1], i32)
    ),
    # Split, SplitV, Unpack, Tile, ReverseV2
    case("Unpack", value=T3, num=3, axis=1),
    case("Unpack", name="Unpack-neg", value=NANS, num=2, axis=-1),
    case("Unpack", name="Unpack-bad-num", value=X, num=2, axis=1),
    case("Tile", input=X, multiples=np.array([2, 1], i32)),
    case("Tile", name="Tile-zero", input=T3, multiples=np.array([1, 0, 2], i64)),
    case("Tile", name="Tile-neg", input=X, multiples=np.array([-1, 1], i32)),
    case("Tile", name="Tile-len", input=X, multiples=np.array([2], i32)),
    case("ReverseV2", tensor=T3, axis=np.array([0, -1], i32)),
    case("ReverseV2", name="ReverseV2-none", tensor=X, axis=np.zeros(0, i64)),
    case("ReverseV2", name="ReverseV2-dup", tensor=X, axis=np.array([1, -1], i32)),
    case("ReverseV2", name="ReverseV2-oob", tensor=X, axis=np.array([2], i32)),
    # Pad, PadV2, MirrorPad
    case("Pad", input=X, paddings=np.array([[1, 0], [0, 2]], i32)),
    case("Pad", name="Pad-neg", input=X, paddings=np.array([[-1, 0], [0, 2]], i32)),
    case("Pad", name="Pad-rows", input=X, paddings=np.array([[1, 0]], i32)),
    case(
        "PadV2", input=NANS, paddings=np.array([[0, 1], [2, 0]], i64), constant_values=f32(np.nan)
    ),
    case(
        "PadV2",
        name="PadV2-vector-value",
        input=X,
        paddings=np.array([[0, 1], [0, 0]], i32),
        constant_values=np.array([9], f32),
    ),
    case("MirrorPad", input=X, paddings=np.array([[1, 1], [2, 2]], i32), mode="REFLECT"),
    case(
        "MirrorPad",
        name="MirrorPad-symmetric",
        input=X,
        paddings=np.array([[2, 2], [3, 3]], i32),
        mode="SYMMETRIC",
    ),
    case(
        "MirrorPad",
        name="MirrorPad-reflect-big",
        input=X,
        paddings=np.array([[2, 0], [0, 0]], i32),
        mode="REFLECT",
    ),
    case(
        "MirrorPad",
        name="MirrorPad-symmetric-big",
        input=X,
        paddings=np.array([[3, 0], [0, 0]], i32),
        mode="SYMMETRIC",
    ),
    # OneHot, Where, Unique
    case(
        "OneHot",
        indices=np.array([0, 2, -1, 5], i32),
        depth=i32(3),
        on_value=f32(5),
        off_value=f32(0),
        axis=-1,
    ),
    case(
        "OneHot",
        name="OneHot-axis0",
        indices=np.array([[0, 2], [1, -1]], i64),
        depth=i32(3),
        on_value=f64(1),
        off_value=f64(-1),
        axis=0,
    ),
    case(
        "OneHot",
        name="OneHot-uint8",
        indices=np.array([0, 2], np.uint8),
        depth=i32(3),
        on_value=np.bool_(True),
        off_value=np.bool_(False),
    ),
    case(
        "OneHot",
        name="OneHot-depth",
        indices=np.array([0, 2], i32),
        depth=i32(-1),
        on_value=f32(1),
        off_value=f32(0),
    ),
    case(
        "OneHot",
        name="OneHot-axis",
        indices=np.array([0, 2], i32),
        depth=i32(3),
        on_value=f32(1),
        off_value=f32(0),
        axis=2,
    ),
    case("Unique", x=np.array([1, 1, 2, 4, 4, 4, 7, 8, 8], i32)),
    case("Unique", name="Unique-int64-idx", x=np.array([3.0, 1.0, 3.0], f64), out_idx=np.int64),
    case("Unique", name="Unique-nan", x=np.array([np.nan, 1.0, np.nan, -0.0, 0.0], f32)),
    case("Unique", name="Unique-empty", x=np.zeros(0, f32)),
    case("Unique", name="Unique-matrix", x=np.array([[1, 2]], i32)),
    # IdentityN, StopGradient, PreventGradient, Snapshot
    case("IdentityN", input=[X, X * 2]),
    case("IdentityN", name="IdentityN-mixed-dtypes", input=[T3, X]),
    case("StopGradient", input=NANS),
    case("PreventGradient", input=X, message="no gradient"),
    case("Snapshot", input=T3),
    # GatherV2 batch_dims, Cast Truncate
    case(
        "GatherV2",
        params=np.array([[1, 2, 3], [4, 5, 6]], i32),
        indices=np.array([[2, 0], [1, 1]], i32),
        axis=i32(1),
        batch_dims=1,
    ),
    case(
        "GatherV2",
        name="GatherV2-batch-axis2",
        params=T3,
        indices=np.array([[3, 0], [1, 1]], i64),
        axis=i32(2),
        batch_dims=1,
    ),
    case(
        "GatherV2",
        name="GatherV2-batch-neg",
        params=T3,
        indices=np.array([[2, 0], [1, 1]], i32),
        axis=i32(1),
        batch_dims=-1,
    ),
    case(
        "GatherV2",
        name="GatherV2-batch-gt-axis",
        params=X,
        indices=np.array([[2, 0], [1, 1]], i32),
        axis=i32(0),
        batch_dims=1,
    ),
    case(
        "GatherV2",
        name="GatherV2-batch-range",
        params=X,
        indices=np.array([[2, 0], [1, 1]], i32),
        axis=i32(1),
        batch_dims=3,
    ),
    case(
        "GatherV2",
        name="GatherV2-batch-mismatch",
        params=X,
        indices=np.zeros((3, 2), i32),
        axis=i32(1),
        batch_dims=1,
    ),
    case(
        "GatherV2",
        name="GatherV2-batch-oob",
        params=X,
        indices=np.array([[2, 0], [1, 5]], i32),
        axis=i32(1),
        batch_dims=1,
    ),
    case(
        "Cast",
        x=np.array([1 / 3, -1 / 3, 1 + 2**-24 + 2**-30, np.nan, np.inf]),
        DstT=f32,
        Truncate=True,
    ),
    case(
        "Cast",
        name="Cast-truncate-f16",
        x=np.array([1 + 2**-11 + 2**-12, 65519.0, 70000.0, -1 / 3, 1e-6], f32),
        DstT=f16,
        Truncate=True,
    ),
    case(
        "Cast",
        name="Cast-round-f16",
        x=np.array([1 + 2**-11 + 2**-12, 65519.0, -1 / 3, 1e-6], f32),
        DstT=f16,
        Truncate=False,
    ),
    case(
        "Cast",
        name="Cast-truncate-complex",
        x=np.array([1 / 3 + 1j / 3]),
        DstT=np.complex64,
        Truncate=True,
    ),
    case("Cast", name="Cast-truncate-int", x=np.array([1.7, -1.7], f32), DstT=i32, Truncate=True),
]
