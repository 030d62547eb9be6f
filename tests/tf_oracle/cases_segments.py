"""Segment reductions run by TensorFlow 2.21 (see make_op_fixtures.py): family "segments".

Float NaN and signed-zero cases of the sorted Segment Max/Min use fewer than 8 columns:
wider rows go through Eigen's vectorised reduction, whose NaN and zero handling depends on
the CPU's vector width (minigraph keeps TensorFlow's scalar rule; ops/segment_reduce.py).
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(11)

i32, i64 = np.int32, np.int64
nan, inf = np.nan, np.inf

DOC = np.array([[1, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]], i32)
SORTED = ["SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd"]
UNSORTED = ["UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd"]
SPARSE = ["SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN"]
# The checks are shared by each family: its errors are run through two ops.
CHECKED = {"SegmentSum", "SegmentMax", "UnsortedSegmentSum", "UnsortedSegmentMax"}


def ids(*values, dtype=i32):
    return np.array(values, dtype)


def _sorted_cases():
    cases = []
    wide = rng.uniform(0.5, 1.5, (20, 3, 2)).astype(np.float32)
    wide_ids = np.sort(rng.integers(0, 6, 20)).astype(i64)
    for op in SORTED:
        cases += [
            case(op, name=f"{op} doc", data=DOC, segment_ids=ids(0, 0, 1)),
            case(
                op,
                name=f"{op} gaps",
                data=np.array([1.0, 2, 3, 4], np.float32),
                segment_ids=ids(0, 0, 3, 3),
            ),
            case(op, name=f"{op} int64 ids 3-D", data=wide, segment_ids=wide_ids),
            case(
                op,
                name=f"{op} float16",
                data=np.array([1, 2, 3, 0.5], np.float16),
                segment_ids=ids(0, 0, 2, 2),
            ),
            case(
                op,
                name=f"{op} float64",
                data=rng.standard_normal((9, 2)),
                segment_ids=ids(0, 0, 0, 1, 1, 4, 4, 4, 4),
            ),
            case(
                op,
                name=f"{op} uint8",
                data=np.array([200, 100, 7], np.uint8),
                segment_ids=ids(0, 0, 1),
            ),
        ]
        if op != "SegmentMax" and op != "SegmentMin":
            cases.append(
                case(
                    op,
                    name=f"{op} complex",
                    data=np.array([1 + 2j, 3 - 1j, 2j], np.complex64),
                    segment_ids=ids(0, 0, 1),
                )
            )
        cases += []
        if op not in CHECKED:
            continue
        cases += [
            case(op, name=f"{op} empty", data=np.zeros((0, 3), np.float32), segment_ids=ids()),
            case(
                op,
                name=f"{op} not increasing",
                data=np.ones(4, np.float32),
                segment_ids=ids(0, 2, 1, 3),
            ),
            case(
                op,
                name=f"{op} negative first",
                data=np.ones(4, np.float32),
                segment_ids=ids(-1, 0, 0, 1),
            ),
            case(
                op, name=f"{op} last negative", data=np.ones(2, np.float32), segment_ids=ids(-3, -3)
            ),
            case(
                op,
                name=f"{op} id above range",
                data=np.ones(4, np.float32),
                segment_ids=ids(0, 5, 6, 2),
            ),
            case(
                op, name=f"{op} wrong length", data=np.ones(4, np.float32), segment_ids=ids(0, 0, 1)
            ),
            case(
                op,
                name=f"{op} 2-D ids",
                data=np.ones((2, 2), np.float32),
                segment_ids=np.zeros((2, 2), i32),
            ),
            case(op, name=f"{op} scalar data", data=np.float32(1), segment_ids=ids(0)),
        ]
    cases.append(
        case(
            "SegmentMean",
            name="SegmentMean int truncates",
            data=np.array([-7, 0, 5, -3, -4, 7], i32),
            segment_ids=ids(0, 0, 1, 2, 2, 2),
        )
    )
    for op in ("SegmentMax", "SegmentMin"):
        cases += [
            case(
                op,
                name=f"{op} NaN order",
                data=np.array([1, nan, nan, 1], np.float32),
                segment_ids=ids(0, 0, 1, 1),
            ),
            case(
                op,
                name=f"{op} zeros",
                data=np.array([0.0, -0.0, -0.0, 0.0, 0.0, -0.0, 0.0]),
                segment_ids=ids(0, 0, 1, 1, 2, 2, 2),
            ),
            case(
                op,
                name=f"{op} -inf inf",
                data=np.array([-inf, -inf, inf, inf], np.float32),
                segment_ids=ids(0, 0, 1, 1),
            ),
            case(op, name=f"{op} bool", data=np.array([True, False]), segment_ids=ids(0, 0)),
        ]
    return cases


def _unsorted_cases():
    cases = []
    x = rng.standard_normal((24, 8)).astype(np.float32)
    x[rng.random((24, 8)) < 0.1] = nan
    x[rng.random((24, 8)) < 0.1] = 0.0
    x[rng.random((24, 8)) < 0.1] = -0.0
    seg = rng.integers(-1, 5, 24).astype(i32)
    for op in UNSORTED:
        cases += [
            case(
                op,
                name=f"{op} doc",
                data=np.array([[1, 2, 3, 4], [5, 6, 7, 8], [4, 3, 2, 1]], i32),
                segment_ids=ids(0, 1, 0),
                num_segments=i32(2),
            ),
            case(
                op,
                name=f"{op} negative ids dropped",
                data=np.array([1.0, 2, 3], np.float32),
                segment_ids=ids(0, -1, 1),
                num_segments=i32(3),
            ),
            case(
                op,
                name=f"{op} 2-D ids",
                data=np.arange(12.0).reshape(2, 3, 2),
                segment_ids=np.array([[0, 2, 2], [-1, 0, 3]], i64),
                num_segments=i64(5),
            ),
            case(
                op,
                name=f"{op} scalar ids",
                data=np.array([5.0, 6.0], np.float32),
                segment_ids=i32(1),
                num_segments=i32(3),
            ),
            case(
                op,
                name=f"{op} random float32",
                data=np.abs(x) + 0.5,
                segment_ids=seg,
                num_segments=i32(6),
            ),
        ]
        for dt in (np.int8, np.uint8, np.float16):
            cases.append(
                case(
                    op,
                    name=f"{op} {np.dtype(dt).name}",
                    data=np.array([5, 6, 3], dt),
                    segment_ids=ids(0, 2, 0),
                    num_segments=i32(4),
                )
            )
        if op not in CHECKED:
            continue
        cases += [
            case(
                op,
                name=f"{op} empty",
                data=np.zeros((0, 3), np.float32),
                segment_ids=ids(),
                num_segments=i32(2),
            ),
            case(
                op,
                name=f"{op} id out of range",
                data=np.array([1.0, 2, 3], np.float32),
                segment_ids=ids(0, 2, 1),
                num_segments=i32(2),
            ),
            case(
                op,
                name=f"{op} 2-D id out of range",
                data=np.ones((2, 2), np.float32),
                segment_ids=np.array([[0, 1], [7, 1]], i32),
                num_segments=i32(2),
            ),
            case(
                op,
                name=f"{op} no segments",
                data=np.ones(3, np.float32),
                segment_ids=ids(0, 0, 1),
                num_segments=i32(0),
            ),
            case(
                op,
                name=f"{op} negative num_segments",
                data=np.ones(3, np.float32),
                segment_ids=ids(0, 0, 1),
                num_segments=i32(-1),
            ),
            case(
                op,
                name=f"{op} num_segments vector",
                data=np.ones(3, np.float32),
                segment_ids=ids(0, 0, 1),
                num_segments=ids(2),
            ),
            case(
                op,
                name=f"{op} not a prefix",
                data=np.ones(2, np.float32),
                segment_ids=ids(0, 1, 1),
                num_segments=i32(3),
            ),
            case(
                op,
                name=f"{op} huge num_segments",
                data=np.ones(2, np.float32),
                segment_ids=ids(0, 1, dtype=i64),
                num_segments=i64(2**40),
            ),
        ]
    cases.append(
        case(
            "UnsortedSegmentSum",
            name="UnsortedSegmentSum int16 ids",
            data=np.array([5.0, 6.0], np.float32),
            segment_ids=ids(0, 1, dtype=np.int16),
            num_segments=i32(3),
        )
    )
    cases.append(
        case(
            "UnsortedSegmentProd",
            name="UnsortedSegmentProd int16 ids",
            data=np.array([5.0, 6.0], np.float32),
            segment_ids=ids(0, 1, dtype=np.int16),
            num_segments=i32(3),
        )
    )
    cases.append(
        case(
            "UnsortedSegmentSum",
            name="UnsortedSegmentSum complex128",
            data=np.array([1 + 1j, 2 - 3j, 1j]),
            segment_ids=ids(1, 1, 0),
            num_segments=i32(2),
        )
    )
    for op in ("UnsortedSegmentMax", "UnsortedSegmentMin"):
        cases += [
            case(
                op,
                name=f"{op} NaN and zeros, 8 columns",
                data=x,
                segment_ids=seg,
                num_segments=i32(6),
            ),
            case(
                op,
                name=f"{op} -inf inf",
                data=np.array([-inf, -inf, inf, inf], np.float32),
                segment_ids=ids(0, 0, 1, 1),
                num_segments=i32(3),
            ),
        ]
    return cases


def _sparse_cases():
    cases = []
    c = np.array([[1, 2, 3, 4], [-1, -2, -3, -4], [5, 6, 7, 8]], np.float32)
    table = rng.uniform(-1, 1, (12, 5)).astype(np.float32)
    lengths = [1, 2, 7, 8, 9, 10, 16, 17, 25]
    seg = np.repeat(np.arange(0, 2 * len(lengths), 2), lengths).astype(i32)  # gaps between
    idx = rng.integers(0, 12, seg.size).astype(i32)
    for op in SPARSE:
        cases += [
            case(op, name=f"{op} doc", data=c, indices=ids(0, 1), segment_ids=ids(0, 0)),
            case(op, name=f"{op} doc 2", data=c, indices=ids(0, 1, 2), segment_ids=ids(0, 0, 1)),
            case(
                op,
                name=f"{op} gaps int64",
                data=c,
                indices=ids(0, 1, dtype=i64),
                segment_ids=ids(0, 3, dtype=i64),
            ),
            case(op, name=f"{op} segment lengths 1-25", data=table, indices=idx, segment_ids=seg),
            case(
                op,
                name=f"{op} float64 3-D",
                data=rng.standard_normal((4, 2, 3)),
                indices=ids(3, 3, 0, 1, 2),
                segment_ids=ids(1, 1, 1, 2, 2),
            ),
            case(
                op,
                name=f"{op} float16",
                data=rng.uniform(-2, 2, (6, 3)).astype(np.float16),
                indices=ids(0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4),
                segment_ids=np.zeros(11, i32),
            ),
            case(op, name=f"{op} empty", data=c, indices=ids(), segment_ids=ids()),
            case(
                f"{op}WithNumSegments",
                name=f"{op}WithNumSegments",
                data=c,
                indices=ids(0, 1, 2),
                segment_ids=ids(0, 0, 2),
                num_segments=i32(4),
            ),
        ]
        if op != "SparseSegmentSum":
            continue
        cases += [
            case(
                op,
                name=f"{op} bad index",
                data=c,
                indices=ids(0, 3, 2, 2),
                segment_ids=ids(0, 0, 2, 2),
            ),
            case(
                op,
                name=f"{op} negative index",
                data=c,
                indices=ids(0, -1, 2, 2),
                segment_ids=ids(0, 0, 2, 2),
            ),
            case(
                op,
                name=f"{op} bad index before a fall",
                data=c,
                indices=ids(0, 3, 2, 2),
                segment_ids=ids(0, 0, 2, 1),
            ),
            case(
                op,
                name=f"{op} fall before a bad index",
                data=c,
                indices=ids(0, 3, 2, 2),
                segment_ids=ids(1, 1, 0, 1),
            ),
            case(
                op,
                name=f"{op} negative first id",
                data=c,
                indices=ids(5, 0, 0, 2),
                segment_ids=ids(-1, -1, 0, 1),
            ),
            case(
                op, name=f"{op} last id negative", data=c, indices=ids(0, 0), segment_ids=ids(0, -1)
            ),
            case(
                op,
                name=f"{op} size mismatch",
                data=c,
                indices=ids(0, 0, 0),
                segment_ids=ids(0, 0, 0, 1),
            ),
            case(
                op,
                name=f"{op} 2-D indices",
                data=c,
                indices=np.zeros((1, 2), i32),
                segment_ids=np.zeros((1, 2), i32),
            ),
            case(
                op,
                name=f"{op} scalar data",
                data=np.float32(1),
                indices=ids(0, 0),
                segment_ids=ids(0, 0),
            ),
            case(
                op,
                name=f"{op} sparse_gradient",
                data=c,
                indices=ids(0, 1),
                segment_ids=ids(0, 0),
                sparse_gradient=True,
            ),
            case(
                f"{op}WithNumSegments",
                name=f"{op}WithNumSegments too few",
                data=c,
                indices=ids(0, 1, 2),
                segment_ids=ids(0, 0, 2),
                num_segments=i32(2),
            ),
            case(
                f"{op}WithNumSegments",
                name=f"{op}WithNumSegments empty",
                data=c,
                indices=ids(),
                segment_ids=ids(),
                num_segments=i32(2),
            ),
        ]
    cases.append(
        case(
            "SparseSegmentSum",
            name="SparseSegmentSum int32",
            data=DOC,
            indices=ids(0, 1, 2, 2),
            segment_ids=ids(0, 0, 1, 1),
        )
    )
    cases.append(
        case(
            "SparseSegmentMean",
            name="SparseSegmentMean int32",
            data=DOC,
            indices=ids(0, 1),
            segment_ids=ids(0, 0),
        )
    )
    return cases


CASES = _sorted_cases() + _unsorted_cases() + _sparse_cases()
