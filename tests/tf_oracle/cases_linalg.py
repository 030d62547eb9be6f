"""MatMul, BatchMatMulV2 and Einsum run by TensorFlow 2.21 (make_op_fixtures.py): family
"linalg".

Left out on purpose: Einsum equations TF's kernel refuses and NumPy accepts (more than two
operands, no ``->``, a labelled dim of 1 broadcast against a larger one): minigraph follows
``np.einsum`` there (ops/linalg_ops.py).
"""

from __future__ import annotations

import numpy as np
from oracle_case import case

rng = np.random.default_rng(2112)

f16, f32, f64, c64, c128 = np.float16, np.float32, np.float64, np.complex64, np.complex128
i32, i64 = np.int32, np.int64


def m(shape, dtype=f32):
    if np.dtype(dtype).kind == "c":
        return (rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)).astype(dtype)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-5, 6, shape).astype(dtype)
    return rng.uniform(-2, 2, shape).astype(dtype)


def _matmul():
    cases = []
    for dt in [f16, f32, f64, i32, i64, c64, c128]:
        for ta in (False, True):
            for tb in (False, True):
                a = m((3, 2) if ta else (2, 3), dt)
                b = m((4, 3) if tb else (3, 4), dt)
                cases.append(
                    case(
                        "MatMul",
                        name=f"MatMul {np.dtype(dt).name} ta={ta} tb={tb}",
                        a=a,
                        b=b,
                        transpose_a=ta,
                        transpose_b=tb,
                        rtol=1e-2 if dt == f16 else None,
                        atol=1e-2 if dt == f16 else None,
                    )
                )
    cases += [
        case("MatMul", name="MatMul empty inner", a=np.zeros((2, 0), f32), b=np.zeros((0, 3), f32)),
        case("MatMul", name="MatMul empty outer", a=np.zeros((0, 2), f32), b=m((2, 3))),
        case("MatMul", name="MatMul mismatch", a=m((2, 3)), b=m((4, 5))),
        case("MatMul", name="MatMul rank 3", a=m((2, 2, 3)), b=m((3, 5))),
        case(
            "MatMul", name="MatMul grad hints", a=m((2, 3)), b=m((3, 2)), grad_a=True, grad_b=True
        ),
    ]
    return cases


def _batch_matmul():
    cases = []
    for dt in [f32, f64, i32, c128]:
        for ax in (False, True):
            for ay in (False, True):
                x = m((5, 1, 3, 2) if ax else (5, 1, 2, 3), dt)
                y = m((4, 4, 3) if ay else (4, 3, 4), dt)
                cases.append(
                    case(
                        "BatchMatMulV2",
                        name=f"BatchMatMulV2 {np.dtype(dt).name} adj_x={ax} adj_y={ay}",
                        x=x,
                        y=y,
                        adj_x=ax,
                        adj_y=ay,
                    )
                )
    cases += [
        case("BatchMatMulV2", name="BatchMatMulV2 rank 2", x=m((2, 3)), y=m((3, 4))),
        case(
            "BatchMatMulV2",
            name="BatchMatMulV2 float16",
            x=m((2, 2, 3), f16),
            y=m((2, 3, 2), f16),
            rtol=1e-2,
            atol=1e-2,
        ),
        case("BatchMatMulV2", name="BatchMatMulV2 empty batch", x=m((0, 2, 3)), y=m((3, 4))),
        case("BatchMatMulV2", name="BatchMatMulV2 batch mismatch", x=m((2, 2, 3)), y=m((3, 3, 5))),
        case("BatchMatMulV2", name="BatchMatMulV2 inner mismatch", x=m((2, 2, 3)), y=m((2, 4, 5))),
        case("BatchMatMulV2", name="BatchMatMulV2 rank 1", x=m((3,)), y=m((3, 5))),
    ]
    return cases


def _einsum():
    eqs = [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("ij->ji", [(2, 3)]),
        ("ij->", [(2, 3)]),
        ("ii->i", [(3, 3)]),
        ("ii->", [(3, 3)]),
        ("i,i->", [(4,), (4,)]),
        ("i,j->ij", [(2,), (3,)]),
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
        ("bij,bkj->bik", [(2, 2, 3), (2, 4, 3)]),
        ("...ij,...jk->...ik", [(5, 1, 2, 3), (4, 3, 2)]),
        ("...ij,jk->...ik", [(2, 2, 3), (3, 2)]),
        ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
        ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
        ("aij,ajk->", [(2, 2, 2), (2, 2, 2)]),
    ]
    cases = []
    for k, (eq, shapes) in enumerate(eqs):
        dt = [f32, f64, c128, i32][k % 4]
        cases.append(
            case(
                "Einsum",
                name=f"Einsum {eq} {np.dtype(dt).name}",
                inputs=[m(s, dt) for s in shapes],
                equation=eq,
            )
        )
    cases += [
        case("Einsum", name="Einsum mismatch", inputs=[m((2, 3)), m((4, 5))], equation="ij,jk->ik"),
        case("Einsum", name="Einsum wrong rank", inputs=[m((2, 3))], equation="ijk->i"),
        # an output label repeated: the values on that diagonal (the gradient of a trace)
        case("Einsum", name="Einsum i->ii", inputs=[m((3,), f64)], equation="i->ii"),
        case("Einsum", name="Einsum ij->jii", inputs=[m((2, 3))], equation="ij->jii"),
        case("Einsum", name="Einsum i,j->iji", inputs=[m((2,)), m((3,))], equation="i,j->iji"),
        case("Einsum", name="Einsum i...->i...i", inputs=[m((2, 3), f64)], equation="i...->i...i"),
    ]
    return cases


CASES = _matmul() + _batch_matmul() + _einsum()
