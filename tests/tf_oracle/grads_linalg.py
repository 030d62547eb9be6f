"""Gradients of the linear-algebra ops (ops/linalg_grad.py), computed by TensorFlow 2.21:
family "linalg" of make_grad_fixtures.py. MatMul in its four transpose forms, BatchMatMulV2
in its four adjoint forms with batch dims that broadcast (summed back to each operand's
shape), complex operands (conjugated), and Einsum: contractions, transposes, traces and
diagonals, labels only one operand has (TensorFlow's reduced-label cases) and ellipses.
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(23)
f32, f64, c64, c128 = np.float32, np.float64, np.complex64, np.complex128


def normal(shape, dtype=f64):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def swap(shape, swapped):
    return [*shape[:-2], shape[-1], shape[-2]] if swapped else list(shape)


MATMUL = [
    case("MatMul", name=f"MatMul ta={ta} tb={tb} {np.dtype(dt).name}",
         a=normal(swap([2, 3], ta), dt), b=normal(swap([3, 4], tb), dt),
         transpose_a=ta, transpose_b=tb)
    for ta in (False, True)
    for tb in (False, True)
    for dt in (f32, f64, c128)
]  # fmt: skip

BATCH_MATMUL = [
    case("BatchMatMulV2", name=f"BatchMatMulV2 {sx} {sy} adj_x={ax} adj_y={ay} {np.dtype(dt).name}",
         x=normal(swap(sx, ax), dt), y=normal(swap(sy, ay), dt), adj_x=ax, adj_y=ay)
    for sx, sy, dt in [
        ([2, 2, 3], [2, 3, 4], f32),  # equal batch dims
        ([2, 1, 2, 3], [3, 3, 4], f64),  # both broadcast
        ([2, 3], [4, 3, 2], f64),  # a matrix against a batch
        ([5, 2, 3], [3, 4], c64),
    ]
    for ax in (False, True)
    for ay in (False, True)
]  # fmt: skip

EINSUM = [
    case("Einsum", name=f"Einsum {eq} {np.dtype(dt).name}",
         inputs=[normal(s, dt) for s in shapes], equation=eq)
    for eq, shapes, dt in [
        ("ij,jk->ik", [[2, 3], [3, 4]], f32),
        ("ij,kj->ik", [[2, 3], [4, 3]], f64),
        ("bij,bjk->bik", [[2, 2, 3], [2, 3, 2]], f64),
        ("ij->ji", [[2, 3]], f64),
        ("ii->i", [[3, 3]], f64),
        ("ii->", [[3, 3]], f32),
        ("i->ii", [[3]], f64),
        ("abc->ac", [[2, 3, 4]], f64),  # a plain sum: broadcast back
        ("abc->ca", [[2, 3, 4]], f64),  # a sum and a transpose: an einsum back
        ("aabbcd->ca", [[2, 2, 3, 3, 4, 2]], f64),
        ("abc,cd->ad", [[2, 3, 4], [4, 2]], f64),  # b only in the first operand
        ("ij,jk->", [[2, 3], [3, 4]], f64),
        ("ii,ij->j", [[3, 3], [3, 2]], f64),
        ("...ij,jk->...ik", [[2, 3, 2, 3], [3, 4]], f64),
        ("...ij,...jk->...ik", [[2, 1, 2, 3], [3, 3, 2]], f32),  # broadcast batch dims
        ("i...j,j->i...", [[2, 3, 4], [4]], f64),
        ("ij,jk->ik", [[2, 3], [3, 2]], c128),
        ("i,i->", [[4], [4]], c64),
    ]
]  # fmt: skip

CASES = [
    *MATMUL,
    case("MatMul", name="MatMul empty", a=normal([0, 3]), b=normal([3, 2])),
    case("MatMul", name="MatMul empty inner", a=normal([2, 0], f32), b=normal([0, 3], f32)),
    *BATCH_MATMUL,
    case("BatchMatMulV2", name="BatchMatMulV2 empty batch", x=normal([0, 2, 3]), y=normal([3, 2])),
    *EINSUM,
]
