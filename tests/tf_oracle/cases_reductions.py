"""Reductions, arg reductions and scans run by TensorFlow 2.21 (make_op_fixtures.py): family
"reductions".

Argument names are ``tf.raw_ops``'s: the reductions' ``reduction_indices`` input is called
``axis`` there (TF's api_def renames it), so the replay maps ``axis`` to
``reduction_indices`` for Sum, Mean, Prod, Max, Min, Any and All.

Left out on purpose: float16 sums that overflow half precision midway (TF accumulates in
half, minigraph in float32, so TF's inf is minigraph's finite value); int64 axes beyond the
int32 range (TF reads them as int32 and reduces the wrong axis, minigraph reports them out of
range); int16 ``dimension`` for ArgMax (TF reads it as int32 and reports garbage).
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(2021)

i32, i64 = np.int32, np.int64
nan, inf = np.nan, np.inf

REDUCE = ["Sum", "Mean", "Prod", "Max", "Min"]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float16, np.float32, np.float64]


def ax(*values, dtype=i32):
    return np.array(values, dtype)


def _reduce_cases():
    cases = []
    x23 = np.arange(6, dtype=np.float32).reshape(2, 3)
    x345 = rng.standard_normal((3, 4, 5)).astype(np.float32)
    specials = np.array([[1.0, nan, 3.0], [inf, 1.0, -inf], [-inf, 2.0, 3.0]], np.float32)
    for k, op in enumerate(REDUCE):
        cases += [
            case(op, name=f"{op} all axes", input=x23, axis=ax(0, 1)),
            case(op, name=f"{op} scalar axis", input=x23, axis=i32(1)),
            case(op, name=f"{op} keep_dims", input=x23, axis=ax(0), keep_dims=True),
            case(op, name=f"{op} negative axes", input=x345, axis=ax(-1, 0)),
            case(op, name=f"{op} int64 axes", input=x345, axis=ax(2, 1, dtype=i64), keep_dims=True),
            case(op, name=f"{op} NaN and inf", input=specials, axis=i32(1)),
            case(op, name=f"{op} empty axis", input=np.zeros((0, 3), np.float32), axis=i32(0)),
        ]
        # Integer dtypes, two per op; more for the empty Max and Min.
        for dt in INTS[k % 4 :: 4]:
            info = np.iinfo(dt)
            v = rng.integers(max(info.min, -1000), min(info.max, 1000), (3, 4)).astype(dt)
            cases.append(case(op, name=f"{op} {np.dtype(dt).name}", input=v, axis=i32(1)))
        extremes = [np.int8, np.uint8, np.int64, np.uint64, np.float16]
        for dt in extremes if op in ("Max", "Min") else [INTS[k]]:
            name = f"{op} empty {np.dtype(dt).name}"
            cases.append(case(op, name=name, input=np.zeros((2, 0), dt), axis=i32(1)))
    # The axis checks are one helper: run through two ops.
    for op in ("Sum", "Max"):
        cases += [
            case(op, name=f"{op} duplicate axes", input=x23, axis=ax(1, -1)),
            case(op, name=f"{op} axis out of range", input=x23, axis=ax(0, 2)),
            case(op, name=f"{op} negative axis out of range", input=x23, axis=i32(-3)),
            case(op, name=f"{op} axis of a scalar", input=np.float32(1), axis=i32(0)),
            case(op, name=f"{op} scalar input", input=np.float64(2.5), axis=ax()),
            case(op, name=f"{op} float64 3-D", input=x345.astype(np.float64), axis=ax(1)),
            case(op, name=f"{op} no axes", input=x23, axis=ax()),
            case(op, name=f"{op} empty output", input=np.zeros((0, 3), np.float32), axis=i32(1)),
        ]
    # float16: values whose partial sums stay well inside half precision.
    h = rng.uniform(-1, 1, (4, 6)).astype(np.float16)
    for op in ["Sum", "Mean", "Max", "Min"]:
        cases.append(case(op, name=f"{op} float16", input=h, axis=i32(1), atol=1e-2))
    cases.append(
        case(
            "Prod",
            name="Prod float16",
            input=(h + np.float16(2)).astype(np.float16),
            axis=i32(1),
            rtol=1e-2,
        )
    )
    c = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64)
    for op in ["Sum", "Mean", "Prod"]:
        cases += [
            case(op, name=f"{op} complex64", input=c, axis=i32(0)),
            case(op, name=f"{op} complex128 all", input=c.astype(np.complex128), axis=ax(0, 1)),
            case(op, name=f"{op} complex empty", input=np.zeros((0,), np.complex64), axis=i32(0)),
        ]
    cases += [
        case("Sum", name="Sum int8 wraps", input=np.array([100, 100], np.int8), axis=i32(0)),
        case("Prod", name="Prod int8 wraps", input=np.array([100, 100, 3], np.int8), axis=i32(0)),
        case(
            "Sum", name="Sum uint32 wraps", input=np.array([2**32 - 1, 2], np.uint32), axis=i32(0)
        ),
        case("Mean", name="Mean int8 sums wide", input=np.array([100, 100], np.int8), axis=i32(0)),
        case(
            "Mean",
            name="Mean uint8 sums wide",
            input=np.array([200, 200, 200], np.uint8),
            axis=i32(0),
        ),
        case(
            "Mean",
            name="Mean int32 sums wide",
            input=np.array([2**31 - 1] * 2, np.int32),
            axis=i32(0),
        ),
        case("Mean", name="Mean int64 wraps", input=np.array([2**62] * 3, np.int64), axis=i32(0)),
        case("Mean", name="Mean uint64 wraps", input=np.array([2**63] * 3, np.uint64), axis=i32(0)),
        case(
            "Mean",
            name="Mean truncates toward zero",
            input=np.array([[-1, -2, 0], [-7, 0, 0], [1, 2, 0], [-5, 5, -1]], np.int32),
            axis=i32(1),
        ),
        case(
            "Mean",
            name="Mean of inf and -inf",
            input=np.array([inf, -inf], np.float32),
            axis=i32(0),
        ),
        case("Sum", name="Sum bool", input=np.array([True, False]), axis=i32(0)),
        case("Max", name="Max complex", input=np.ones(2, np.complex64), axis=i32(0)),
        case(
            "Sum",
            name="Sum axes of rank 2",
            input=x23,
            axis=np.array([[0]], i32),
            mg_error="InvalidArgumentError",
            why="TF's kernel flattens the axes, but its shape function (run first in "
            "graph mode, and always in minigraph) requires rank at most 1",
        ),
    ]
    b = np.array([[True, True], [False, False], [True, False]])
    for op in ["Any", "All"]:
        cases += [
            case(op, name=f"{op} doc all", input=b, axis=ax(0, 1)),
            case(op, name=f"{op} doc rows", input=b, axis=i32(1), keep_dims=True),
            case(op, name=f"{op} doc cols", input=b, axis=i32(-2)),
            case(op, name=f"{op} empty", input=np.zeros((2, 0), bool), axis=i32(1)),
            case(op, name=f"{op} no axes", input=b, axis=ax(dtype=i64)),
        ]
    cases.append(case("All", name="All duplicate axes", input=b, axis=ax(0, 0)))
    return cases


def _arg_cases():
    cases = []
    doc = np.array([[2, 20, 30, 3, 6], [3, 11, 16, 1, 8], [14, 45, 23, 5, 27]], i32)
    nans = np.array(
        [
            [1, nan, 3],
            [nan, 1, 0],
            [nan, nan, nan],
            [-inf, nan, -inf],
            [nan, -inf, 2],
            [1, 3, 3],
            [-0.0, 0.0, -0.0],
            [inf, inf, nan],
        ],
        np.float32,
    )
    for op in ["ArgMax", "ArgMin"]:
        cases += [
            case(op, name=f"{op} doc vector", input=doc[0], dimension=i32(0)),
            case(op, name=f"{op} doc axis 0", input=doc, dimension=i32(0)),
            case(op, name=f"{op} doc axis 1", input=doc, dimension=i32(1)),
            case(op, name=f"{op} int32 output", input=doc, dimension=i32(0), output_type=np.int32),
            case(op, name=f"{op} NaN rows", input=nans, dimension=i32(1)),
            case(op, name=f"{op} NaN cols", input=nans, dimension=i32(0)),
            case(
                op,
                name=f"{op} bool",
                input=np.array([[False, True, True], [True, False, True]]),
                dimension=i32(1),
            ),
            case(
                op,
                name=f"{op} ties",
                input=rng.integers(0, 3, (4, 6)).astype(np.uint8),
                dimension=i32(1),
            ),
            case(op, name=f"{op} 3-D", input=rng.standard_normal((3, 4, 5)), dimension=i32(1)),
            case(
                op,
                name=f"{op} empty other axis",
                input=np.zeros((0, 3), np.float32),
                dimension=i32(1),
            ),
            case(op, name=f"{op} empty axis", input=np.zeros((0, 3), np.float32), dimension=i32(0)),
        ]
        for dt in INTS[op == "ArgMin" :: 2]:
            v = rng.integers(0, 50, (3, 4)).astype(dt)
            cases.append(case(op, name=f"{op} {np.dtype(dt).name}", input=v, dimension=i32(0)))
    # The checks are one helper: run through ArgMax.
    cases += [
        case("ArgMax", name="ArgMax negative axis", input=doc, dimension=i32(-1)),
        case("ArgMin", name="ArgMin int64 dimension", input=doc, dimension=i64(1)),
        case("ArgMax", name="ArgMax float16 NaN", input=nans.astype(np.float16), dimension=i32(1)),
        case("ArgMin", name="ArgMin float64 NaN", input=nans.astype(np.float64), dimension=i32(0)),
        case(
            "ArgMax", name="ArgMax empty negative axis", input=np.zeros((2, 0)), dimension=i32(-1)
        ),
        case("ArgMax", name="ArgMax dimension out of range", input=doc, dimension=i32(2)),
        case("ArgMin", name="ArgMin negative dimension out of range", input=doc, dimension=i32(-3)),
        case("ArgMax", name="ArgMax scalar input", input=np.float32(1), dimension=i32(0)),
        case("ArgMax", name="ArgMax vector dimension", input=doc, dimension=np.array([0], i32)),
        case("ArgMax", name="ArgMax complex", input=np.ones(2, np.complex64), dimension=i32(0)),
        case(
            "ArgMax", name="ArgMax int16 output", input=doc, dimension=i32(1), output_type=np.int16
        ),
        case(
            "ArgMax",
            name="ArgMax uint16 output",
            input=doc,
            dimension=i32(1),
            output_type=np.uint16,
        ),
        case(
            "ArgMax",
            name="ArgMax int16 output wraps",
            input=np.eye(1, 40000, 39999, dtype=np.int8)[0],
            dimension=i32(0),
            output_type=np.int16,
        ),
        case(
            "ArgMin", name="ArgMin int16 output", input=doc, dimension=i32(1), output_type=np.int16
        ),
    ]
    return cases


def _scan_cases():
    cases = []
    x = np.array([[2, 4, 6, 8], [1, 3, 5, 7]], i32)
    f = rng.uniform(0.5, 1.5, (3, 5)).astype(np.float32)
    for op in ["Cumsum", "Cumprod"]:
        for exclusive in (False, True):
            for reverse in (False, True):
                flags = dict(exclusive=exclusive, reverse=reverse)
                tag = f"{op} exclusive={exclusive} reverse={reverse}"
                cases += [
                    case(op, name=f"{tag} doc", x=x[0], axis=i32(0), **flags),
                    case(op, name=f"{tag} axis -1", x=f, axis=i32(-1), **flags),
                ]
        cases += [
            case(op, name=f"{op} 3-D middle axis", x=rng.uniform(0.5, 1.5, (2, 3, 4)), axis=i32(1)),
            case(op, name=f"{op} float16", x=np.array([1, 2, 0.5, -1, 3], np.float16), axis=i32(0)),
            case(
                op,
                name=f"{op} NaN and inf",
                x=np.array([1, nan, 2, inf, -inf]),
                axis=i32(0),
                reverse=True,
            ),
            case(
                op,
                name=f"{op} complex",
                x=np.array([1j, 2, 3 - 1j], np.complex64),
                axis=i32(0),
                exclusive=True,
            ),
            case(op, name=f"{op} axis 0", x=x, axis=i32(0), exclusive=True),
            case(op, name=f"{op} int64 axis", x=f.astype(np.float64), axis=i64(1), reverse=True),
            case(op, name=f"{op} empty axis", x=np.zeros((0, 3), np.float32), axis=i32(0)),
            case(
                op,
                name=f"{op} empty other",
                x=np.zeros((2, 0)),
                axis=i32(1),
                exclusive=True,
                reverse=True,
            ),
            case(op, name=f"{op} axis out of range", x=f, axis=i32(2)),
        ]
        for dt in INTS[op == "Cumprod" :: 2]:
            info = np.iinfo(dt)
            v = rng.integers(info.min // 2 if info.min else 0, info.max // 2, (2, 5)).astype(dt)
            cases.append(case(op, name=f"{op} {np.dtype(dt).name} wraps", x=v, axis=i32(1)))
    # The checks are one helper: run through Cumsum.
    cases += [
        case("Cumsum", name="Cumsum negative axis out of range", x=f, axis=i32(-3)),
        case("Cumsum", name="Cumsum vector axis", x=f, axis=np.array([0], i32)),
        case("Cumsum", name="Cumsum scalar input", x=np.float32(1), axis=i32(0)),
        case("Cumprod", name="Cumprod bool", x=np.array([True, False]), axis=i32(0)),
    ]
    cases.append(
        case(
            "Cumsum",
            name="Cumsum float16 in half precision",
            x=np.array([2048, 1, 1, 1, 1], np.float16),
            axis=i32(0),
        )
    )
    return cases


CASES = _reduce_cases() + _arg_cases() + _scan_cases()
