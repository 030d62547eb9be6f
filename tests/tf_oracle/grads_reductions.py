"""Gradients of the reductions and scans (ops/reduction_grad.py), computed by TensorFlow
2.21: family "reductions" of make_grad_fixtures.py. Axes are given as TensorFlow takes
them (scalars, vectors, negative, none), with and without keep_dims; replayed once with
constant axes (minigraph's Reshape + Tile by constants) and once with the axes fed at run
time (the kept-dims shape computed in the graph). Products have zeros in the input (the
cumulative-product formula); Max/Min have ties (the gradient is shared)."""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(11)
f16, f32, f64, c64, c128 = np.float16, np.float32, np.float64, np.complex64, np.complex128
i32, i64 = np.int32, np.int64


def normal(shape, dtype=f64):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _reductions():
    cases = []
    for op in ["Sum", "Mean", "Prod"]:
        cases += [
            case(op, input=normal([2, 3]), axis=i32(1)),
            case(
                op,
                name=f"{op} keep_dims",
                input=normal([2, 3, 2], f32),
                axis=np.array([0, 2], i32),
                keep_dims=True,
            ),
            case(
                op, name=f"{op} negative int64 axis", input=normal([2, 3]), axis=np.array([-1], i64)
            ),
            case(
                op, name=f"{op} every axis", input=normal([2, 2, 3]), axis=np.array([0, 1, 2], i32)
            ),
            case(
                op,
                name=f"{op} every axis reordered",
                input=normal([2, 3], f32),
                axis=np.array([1, 0], i32),
                keep_dims=True,
            ),
            case(op, name=f"{op} no axis", input=normal([2, 3]), axis=np.zeros([0], i32)),
            case(op, name=f"{op} scalar", input=np.float64(1.5), axis=np.zeros([0], i32)),
            case(op, name=f"{op} complex", input=normal([3, 2], c64), axis=i32(0)),
        ]
    cases += [
        case("Sum", name="Sum empty", input=np.zeros([0, 3]), axis=i32(0)),
        case("Sum", name="Sum float16", input=normal([4, 3], f16), axis=i32(0)),
        case("Mean", name="Mean of nothing", input=np.zeros([3, 0], f32), axis=i32(1)),
        case(
            "Prod",
            name="Prod one zero",
            input=np.array([[2.0, 0.0, 3.0], [1.5, -2.0, 0.5]]),
            axis=i32(1),
        ),
        case(
            "Prod",
            name="Prod two zeros",
            input=np.array([[0.0, 2.0, 0.0], [1.5, -2.0, 0.5]]),
            axis=i32(1),
            keep_dims=True,
        ),
        case("Prod", name="Prod middle axis", input=normal([2, 3, 2]), axis=i32(1)),
        case("Prod", name="Prod empty", input=np.zeros([2, 0]), axis=i32(1)),
    ]
    for op in ["Max", "Min"]:
        ties = np.array([[1.0, 3.0, 3.0], [-1.0, -1.0, -1.0]])
        cases += [
            case(op, input=normal([2, 3]), axis=i32(1)),
            case(op, name=f"{op} ties", input=ties, axis=i32(1)),
            case(
                op,
                name=f"{op} ties keep_dims",
                input=ties.astype(f32),
                axis=np.array([0, 1], i32),
                keep_dims=True,
            ),
            case(op, name=f"{op} negative axis", input=normal([2, 3, 2]), axis=np.array([-3], i32)),
        ]
    return cases


def _scans():
    cases = []
    for op in ["Cumsum", "Cumprod"]:
        for exclusive in (False, True):
            for reverse in (False, True):
                cases.append(
                    case(
                        op,
                        name=f"{op} exclusive={exclusive} reverse={reverse}",
                        x=normal([2, 4]),
                        axis=i32(1),
                        exclusive=exclusive,
                        reverse=reverse,
                    )
                )
        cases += [
            case(op, name=f"{op} axis 0 float32", x=normal([3, 2], f32), axis=i32(0)),
            case(op, name=f"{op} negative axis", x=normal([2, 3]), axis=i64(-1)),
            case(op, name=f"{op} complex", x=normal([4], c128), axis=i32(0)),
        ]
    cases.append(
        case("Cumprod", name="Cumprod with a zero", x=np.array([2.0, 0.0, 3.0, 4.0]), axis=i32(0))
    )
    return cases


CASES = _reductions() + _scans()
