"""Gradients of the segment reductions (ops/segment_grad.py), computed by TensorFlow 2.21:
family "segments" of make_grad_fixtures.py. Segment* and UnsortedSegment* with gaps,
multi-dim ids, negative ids (dropped), ties (Max/Min share the gradient) and zeros (Prod:
one zero, two zeros); SparseSegment* with repeated indices, with and without
``num_segments`` and ``sparse_gradient`` (TensorFlow's SparseSegment*Grad and *GradV2
ops; the fixture holds the dense value of the V2 IndexedSlices). No empty SparseSegmentSum
without ``sparse_gradient``: TensorFlow's SparseSegmentSumGrad leaves that output
uninitialised (tests/test_gather_grad.py checks minigraph's zeros)."""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(2027)
f16, f32, f64, c128 = np.float16, np.float32, np.float64, np.complex128
i32, i64 = np.int32, np.int64


def normal(shape, dtype=f64):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def ints(values, dtype=i32):
    return np.array(values, dtype)


TIES = np.array([[1.0, 2.0], [1.0, -2.0], [3.0, 0.5], [3.0, 0.5], [3.0, 7.0]])
ZEROS = np.array([[2.0, 0.0], [0.0, 0.0], [3.0, 1.5], [0.5, 0.0], [4.0, 2.0]])

SEGMENT = [
    case("SegmentSum", name="SegmentSum with a gap", data=normal([5, 2]),
         segment_ids=ints([0, 0, 1, 3, 3])),
    case("SegmentSum", name="SegmentSum complex128", data=normal([3], c128),
         segment_ids=ints([0, 1, 1], i64)),
    case("SegmentMean", name="SegmentMean with a gap", data=normal([5, 2, 2], f32),
         segment_ids=ints([0, 0, 0, 2, 3])),
    case("SegmentMean", name="SegmentMean 1-D", data=normal([4]), segment_ids=ints([1, 1, 1, 1])),
    case("SegmentMax", name="SegmentMax ties", data=TIES, segment_ids=ints([0, 0, 1, 1, 2])),
    case("SegmentMin", name="SegmentMin ties", data=TIES, segment_ids=ints([0, 0, 1, 1, 1])),
    case("SegmentMax", name="SegmentMax float32", data=normal([4, 3], f32),
         segment_ids=ints([0, 2, 2, 2], i64)),
    case("SegmentProd", name="SegmentProd zeros", data=ZEROS, segment_ids=ints([0, 0, 1, 1, 2])),
    case("SegmentProd", name="SegmentProd float32", data=normal([4, 2], f32),
         segment_ids=ints([0, 0, 0, 1])),
    case("SegmentSum", name="SegmentSum empty", data=normal([0, 3]),
         segment_ids=ints(np.zeros([0]))),
]  # fmt: skip

UNSORTED = [
    case("UnsortedSegmentSum", name="UnsortedSegmentSum negative ids", data=normal([5, 2]),
         segment_ids=ints([2, -1, 0, 2, -3]), num_segments=i32(4)),
    case("UnsortedSegmentSum", name="UnsortedSegmentSum matrix ids",
         data=normal([2, 3, 2], f32), segment_ids=ints([[1, 0, 1], [-1, 2, 2]], i64),
         num_segments=i64(3)),
    case("UnsortedSegmentSum", name="UnsortedSegmentSum complex128", data=normal([3], c128),
         segment_ids=ints([1, 1, 0]), num_segments=i32(2)),
    case("UnsortedSegmentMax", name="UnsortedSegmentMax ties, negative id", data=TIES,
         segment_ids=ints([0, 0, -1, 1, 1]), num_segments=i32(3)),
    case("UnsortedSegmentMin", name="UnsortedSegmentMin ties", data=TIES,
         segment_ids=ints([1, 1, 0, 0, 0]), num_segments=i32(2)),
    case("UnsortedSegmentMin", name="UnsortedSegmentMin matrix ids", data=normal([2, 2, 3], f32),
         segment_ids=ints([[0, 1], [1, 0]]), num_segments=i32(2)),
    case("UnsortedSegmentProd", name="UnsortedSegmentProd zeros, negative id", data=ZEROS,
         segment_ids=ints([0, 0, 1, -1, 1]), num_segments=i32(3)),
    case("UnsortedSegmentProd", name="UnsortedSegmentProd float32", data=normal([4, 2], f32),
         segment_ids=ints([1, 0, 1, 1]), num_segments=i32(2)),
]  # fmt: skip


def sparse(name, sparse_gradient, dtype=f64, num_segments=None, index_dtype=i32):
    args = dict(
        data=normal([4, 3], dtype),
        indices=ints([2, 0, 2, 3, 1], index_dtype),
        segment_ids=ints([0, 0, 0, 2, 2]),
    )
    op = f"SparseSegment{name}"
    if num_segments is not None:
        op += "WithNumSegments"
        args["num_segments"] = i32(num_segments)
    label = f"{op} sparse_gradient={sparse_gradient} {np.dtype(dtype).name}"
    return case(op, name=label, sparse_gradient=sparse_gradient, **args)


SPARSE = [
    sparse(name, sg, dtype, ns, idx)
    for name in ("Sum", "Mean", "SqrtN")
    for sg, dtype, ns, idx in [
        (False, f64, None, i32),
        (True, f64, None, i64),
        (False, f32, 5, i64),
        (True, f32, 4, i32),
    ]
] + [
    case("SparseSegmentMean", name="SparseSegmentMean float16", data=normal([3, 2], f16),
         indices=ints([1, 1, 0]), segment_ids=ints([0, 1, 1])),
    case("SparseSegmentSqrtN", name="SparseSegmentSqrtN 3-D, 10 rows in a segment",
         data=normal([3, 2, 2]), indices=ints([0, 1, 2, 0, 1, 2, 0, 1, 2, 0]),
         segment_ids=ints(np.zeros(10))),
    case("SparseSegmentSumWithNumSegments", name="SparseSegmentSum empty, num_segments",
         data=normal([3, 2]), indices=ints(np.zeros([0])), segment_ids=ints(np.zeros([0])),
         num_segments=i32(2), sparse_gradient=True),
]  # fmt: skip

CASES = SEGMENT + UNSORTED + SPARSE
