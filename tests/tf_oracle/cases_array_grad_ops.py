"""Cases for the array family's gradient ops (ops/array_grad_ops.py): StridedSliceGrad and
MirrorPadGrad run forward by TensorFlow 2.21, values and kernel errors (family
"array_grad_ops" of make_op_fixtures.py). tests/test_array_grad.py checks the messages.

Left out: MirrorPadGrad of rank 6 and more (TensorFlow's kernel stops at rank 5 with
UnimplementedError; minigraph's MirrorPad and MirrorPadGrad take any rank) and bool (no
TensorFlow kernel: NotFoundError; minigraph's says so too, tested in test_array_grad.py).
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(2727)
f16, f32, f64, c64 = np.float16, np.float32, np.float64, np.complex64
i32, i64 = np.int32, np.int64


def normal(shape, dtype=f32):
    return rng.standard_normal(shape).astype(dtype)


def ssg(shape, begin, end, strides, dy, dtype=i32, name=None, **masks):
    return case(
        "StridedSliceGrad",
        name=name,
        shape=np.array(shape, dtype),
        begin=np.array(begin, dtype),
        end=np.array(end, dtype),
        strides=np.array(strides, dtype),
        dy=dy,
        **masks,
    )


def mpg(x, paddings, mode, name=None, dtype=i32):
    return case("MirrorPadGrad", name=name, input=x, paddings=np.array(paddings, dtype), mode=mode)


CASES = [
    # StridedSliceGrad: every mask, negative strides, int64, dtypes, empty, errors
    ssg([4, 6], [1, 0], [3, 5], [1, 2], normal([2, 3])),
    ssg([6], [-1], [0], [-2], normal([3], f64)),
    ssg(
        [3, 4, 5],
        [0, 1, 0, 2],
        [0, 3, 0, 3],
        [1, 1, 1, 1],
        normal([3, 2, 1]),
        i64,
        begin_mask=1,
        end_mask=1,
        new_axis_mask=4,
        shrink_axis_mask=8,
    ),
    ssg([2, 3, 4], [0, 1], [0, 3], [1, 1], normal([2, 3, 2], f16), ellipsis_mask=1),
    ssg([3, 2], [2, 1], [3, 2], [1, 1], np.array(5.0, f64), shrink_axis_mask=3),
    ssg([4, 2], [3], [1], [1], normal([0, 2])),
    ssg([5], [1], [5], [3], (normal([2]) + 1j * normal([2])).astype(c64)),
    ssg([4], [1], [3], [1], np.array([7, 8], i32)),
    ssg([4], [1], [3], [1], np.array([True, True])),
    ssg([0, 3], [0], [0], [1], normal([0, 3]), end_mask=1),
    ssg([4, 6], [1, 0], [3, 5], [1, 2], normal([2, 2]), name="dy shaped wrong"),
    ssg([[4, 6]], [1, 0], [3, 5], [1, 2], normal([2, 3]), name="shape not 1-D"),
    ssg([-4, 6], [1, 0], [3, 5], [1, 2], normal([2, 3]), name="negative dim"),
    ssg([4, 6], [1, 0], [3, 5], [1, 0], normal([2, 3]), name="zero stride"),
    ssg([4, 6], [1, 0, 0], [3, 5], [1, 1], normal([2, 3]), name="lengths differ"),
    ssg([4, 6], [7], [8], [1], normal([6]), shrink_axis_mask=1, name="index out of bounds"),
    # MirrorPadGrad: both modes, each side, int64 paddings, dtypes, scalar, errors
    mpg(normal([4, 6]), [[1, 1], [2, 1]], "REFLECT"),
    mpg(normal([4, 6], f64), [[1, 1], [2, 1]], "SYMMETRIC"),
    mpg(normal([7, 3, 5]), [[2, 2], [0, 0], [0, 2]], "SYMMETRIC", dtype=i64),
    mpg(normal([5, 4], f16), [[0, 2], [1, 0]], "REFLECT"),
    mpg((normal([5]) + 1j * normal([5])).astype(c64), [[1, 2]], "SYMMETRIC"),
    mpg(np.arange(15, dtype=i32).reshape(5, 3), [[2, 0], [0, 0]], "REFLECT"),
    mpg(np.arange(6, dtype=i64), [[1, 1]], "SYMMETRIC"),
    mpg(np.float32(3.0), np.zeros((0, 2), i32), "REFLECT", "scalar"),
    mpg(normal([2, 3, 4, 3, 2]), [[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]], "SYMMETRIC"),
    mpg(normal([4, 6]), [[-1, 1], [2, 1]], "SYMMETRIC", "negative padding"),
    mpg(normal([4, 6]), [[2, 2], [2, 1]], "SYMMETRIC", "total padding too large"),
    mpg(normal([4, 6]), [[0, 3], [2, 1]], "SYMMETRIC", "symmetric padding too large"),
    mpg(normal([4, 6]), [[2, 0], [2, 1]], "REFLECT", "reflect padding too large"),
    mpg(normal([3, 3]), [[1, 1], [0, 0]], "REFLECT", "reflect padding of a size 1"),
    mpg(normal([0, 3]), [[0, 0], [0, 0]], "REFLECT", "empty"),
    mpg(normal([4, 6]), [[1, 1, 1], [2, 1, 1]], "REFLECT", "paddings not 2 columns"),
    mpg(normal([4, 6]), [[1, 1]], "REFLECT", "paddings of another rank"),
]
