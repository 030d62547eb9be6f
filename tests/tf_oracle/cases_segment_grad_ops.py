"""TensorFlow 2.21's SparseSegment{Sum,Mean,SqrtN}Grad and ...GradV2 (ops/segment_grad_ops.py)
run forward: family "segment_grad_ops" of make_op_fixtures.py.

Values: repeated and unsorted indices, unsorted segment ids (the kernel does not mind),
counts that scale (Mean, SqrtN), every float dtype, int64 indices and ids, rank 1 to 3,
``output_dim0`` 0. Errors, each in TensorFlow's order: the last segment id past ``grad``'s
rows, bad indices and ids (Mean/SqrtN V1 scan every id first; the rest go entry by entry),
size and rank mismatches, a negative ``output_dim0``. No empty ``indices`` with
``output_dim0`` > 0 for the V1 ops: TensorFlow leaves that output uninitialised (minigraph's
zeros are checked in tests/test_gather_grad.py).
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(3131)
f16, f32, f64 = np.float16, np.float32, np.float64
i32, i64 = np.int32, np.int64
NAMES = ["Sum", "Mean", "SqrtN"]


def ints(values, dtype=i32):
    return np.array(values, dtype)


def grad(shape, dtype=f32):
    return rng.standard_normal(shape).astype(dtype)


def _op(name, v2, **args):
    """One case of SparseSegment<name>Grad (or V2), its last input under its own name."""
    dim0 = args.pop("dim0")
    op = f"SparseSegment{name}Grad{'V2' if v2 else ''}"
    label = args.pop("label")
    args["dense_output_dim0" if v2 else "output_dim0"] = dim0
    return case(op, name=f"{op} {label}", **args)


def _cases():
    cases = []
    for name in NAMES:
        for v2 in (False, True):
            cases += [
                _op(name, v2, label="repeats", grad=grad([3, 4]), indices=ints([2, 0, 2, 4]),
                    segment_ids=ints([0, 0, 1, 2]), dim0=i32(6)),
                _op(name, v2, label="unsorted ids", grad=grad([3, 2], f64),
                    indices=ints([0, 0, 1, 3], i64), segment_ids=ints([2, 1, 0, 0], i64),
                    dim0=i32(4)),
                _op(name, v2, label="float16, rank 1", grad=grad([3], f16),
                    indices=ints([2, 0, 2]), segment_ids=ints([0, 0, 2]), dim0=i32(4)),
                _op(name, v2, label="rank 3, 12 in a segment", grad=grad([2, 2, 3], f64),
                    indices=ints(rng.integers(0, 5, 13)), segment_ids=ints([0] * 12 + [1]),
                    dim0=i32(5)),
                _op(name, v2, label="dim0 0", grad=grad([2, 2]), indices=ints([0, 9]),
                    segment_ids=ints([0, 1]), dim0=i32(0)),
                _op(name, v2, label="last id past grad", grad=grad([3, 2]),
                    indices=ints([0, 9, 8]), segment_ids=ints([0, 1, 3]), dim0=i32(6)),
                _op(name, v2, label="bad index before bad id", grad=grad([3, 2]),
                    indices=ints([9, 0]), segment_ids=ints([-1, 0]), dim0=i32(6)),
                _op(name, v2, label="bad id at a good index", grad=grad([3, 2]),
                    indices=ints([0, 9]), segment_ids=ints([-1, 0]), dim0=i32(6)),
                _op(name, v2, label="bad id", grad=grad([3, 2]), indices=ints([0, 1]),
                    segment_ids=ints([5, 0]), dim0=i32(6)),
                _op(name, v2, label="negative index", grad=grad([3, 2]), indices=ints([-1, 0]),
                    segment_ids=ints([0, 0]), dim0=i32(6)),
                _op(name, v2, label="sizes differ", grad=grad([3, 2]), indices=ints([0, 1]),
                    segment_ids=ints([0]), dim0=i32(6)),
                _op(name, v2, label="indices matrix", grad=grad([3, 2]),
                    indices=ints([[0, 1]]), segment_ids=ints([0, 1]), dim0=i32(3)),
                _op(name, v2, label="dim0 vector", grad=grad([3, 2]), indices=ints([0, 1]),
                    segment_ids=ints([0, 1]), dim0=ints([3])),
                _op(name, v2, label="dim0 negative", grad=grad([3, 2]), indices=ints([0, 1]),
                    segment_ids=ints([0, 1]), dim0=i32(-1)),
                _op(name, v2, label="grad scalar", grad=np.float32(1.0), indices=ints([0]),
                    segment_ids=ints([0]), dim0=i32(2)),
            ]  # fmt: skip
        cases.append(
            _op(
                name,
                True,
                label="empty",
                grad=grad([3, 4]),
                indices=ints([]),
                segment_ids=ints([]),
                dim0=i32(3),
            )
        )
    return cases


CASES = _cases()
