"""Gradients of MatMul, BatchMatMulV2 and Einsum (ops/linalg_grad.py) against central
differences (float64; shapes known, of unknown rank, and with unknown dims), including
what TensorFlow's Einsum gradient does not cover: more than two operands, equations
without ``->`` and labelled dims of 1 that broadcast. TensorFlow's own values (complex
operands too) are in tests/fixtures/grads/linalg.npz (tests/test_tf_grad_fixtures.py)."""

from __future__ import annotations

import numpy as np
import pytest

import minigraph as mg

rng = np.random.default_rng(9)
SHAPES = ["static", "unknown", "unknown-dims"]


def gradient_error(fn, shapes, how="static"):
    """compute_gradient_error of ``fn(*xs)`` with respect to every x; the xs are
    placeholders of the shapes, of unknown shape, or of known rank and unknown dims."""
    values = [rng.standard_normal(s) for s in shapes]
    g = mg.Graph()
    with g.as_default():
        xs = [
            mg.placeholder(
                mg.float64,
                {"static": s, "unknown": None, "unknown-dims": [None] * len(s)}[how],
            )
            for s in shapes
        ]
        y = fn(*xs)
        with mg.Session(g) as sess:
            y_shape = np.shape(sess.run(y, dict(zip(xs, values))))
        return mg.test.compute_gradient_error(
            xs, shapes, y, y_shape, x_init_value=values, delta=1e-6
        )


def _swapped(shape, swap):
    return (*shape[:-2], shape[-1], shape[-2]) if swap else tuple(shape)


@pytest.mark.parametrize("how", SHAPES)
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_gradients(ta, tb, how):
    shapes = [_swapped((2, 3), ta), _swapped((3, 4), tb)]
    fn = lambda a, b: mg.matmul(a, b, transpose_a=ta, transpose_b=tb)  # noqa: E731
    assert gradient_error(fn, shapes, how) < 1e-6


def test_matmul_gradients_are_matmuls_as_tensorflow_builds_them():
    g = mg.Graph()
    with g.as_default():
        a, b = mg.placeholder(mg.float32, [None, 3]), mg.placeholder(mg.float32, [None, 3])
        da, db = mg.gradients(mg.matmul(a, b, transpose_b=True), [a, b])
    assert (da.op.type, db.op.type) == ("MatMul", "MatMul")
    assert da.op.get_attr("grad_a") and db.op.get_attr("grad_b")
    assert db.op.get_attr("transpose_a") and not db.op.get_attr("transpose_b")


@pytest.mark.parametrize("how", SHAPES)
@pytest.mark.parametrize(
    "sx,sy",
    [
        ((2, 2, 3), (2, 3, 4)),  # equal batch dims: no reduction
        ((2, 1, 2, 3), (3, 3, 4)),  # both broadcast
        ((2, 3), (4, 3, 2)),  # a matrix against a batch
        ((5, 2, 3), (3, 4)),
    ],
)
@pytest.mark.parametrize("adj", [(False, False), (False, True), (True, False), (True, True)])
def test_batch_matmul_gradients(sx, sy, adj, how):
    ax, ay = adj
    shapes = [_swapped(sx, ax), _swapped(sy, ay)]
    fn = lambda x, y: mg.matmul(x, y, adjoint_a=ax, adjoint_b=ay)  # noqa: E731
    assert gradient_error(fn, shapes, how) < 1e-6


EQUATIONS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("ij->ji", [(2, 3)]),
    ("ii->i", [(3, 3)]),
    ("ii->", [(3, 3)]),
    ("i->ii", [(3,)]),  # a repeated output label: a diagonal
    ("ij->jii", [(2, 3)]),
    ("iij->j", [(2, 2, 3)]),
    ("abc->ac", [(2, 3, 4)]),  # a plain sum
    ("abc->ca", [(2, 3, 4)]),  # a sum and a transpose
    ("aabbcd->ca", [(2, 2, 3, 3, 4, 2)]),
    ("abc,cd->ad", [(2, 3, 4), (4, 2)]),  # b in one operand only
    ("ii,ij->j", [(3, 3), (3, 2)]),
    ("ij,jk->", [(2, 3), (3, 4)]),
    ("...ij,jk->...ik", [(2, 3, 2, 3), (3, 4)]),
    ("i...j,jk->i...k", [(2, 5, 3), (3, 4)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 2)]),  # batch dims broadcast
    ("...i,...i->...", [(2, 1, 3), (4, 3)]),
    ("a...b->...", [(2, 3, 4, 5)]),
    ("...ab->...a", [(2, 3, 4)]),
    # beyond TensorFlow's kernel: np.einsum's equations
    ("ij,jk", [(2, 3), (3, 4)]),  # no "->"
    ("i,i,i->i", [(3,), (3,), (3,)]),  # three operands
    ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]),
    ("ij,ij->ij", [(2, 1), (2, 3)]),  # a labelled dim of 1 broadcast
    ("ij,jk->ik", [(2, 3), (1, 4)]),
]


@pytest.mark.parametrize("how", SHAPES)
@pytest.mark.parametrize("eq,shapes", EQUATIONS, ids=[e for e, _ in EQUATIONS])
def test_einsum_gradients(eq, shapes, how):
    assert gradient_error(lambda *xs: mg.einsum(eq, *xs), shapes, how) < 1e-6


def test_einsum_gradient_of_a_matrix_product_is_two_einsums():
    g = mg.Graph()
    with g.as_default():
        a, b = mg.placeholder(mg.float32, [2, 3]), mg.placeholder(mg.float32, [3, 4])
        da, db = mg.gradients(mg.einsum("ij,jk->ik", a, b), [a, b])
    assert (da.op.type, da.op.get_attr("equation")) == ("Einsum", "ik,jk->ij")
    assert (db.op.type, db.op.get_attr("equation")) == ("Einsum", "ik,ij->jk")


def test_einsum_with_a_repeated_output_label_is_a_diagonal():
    g = mg.Graph()
    with g.as_default():
        x = np.arange(6.0).reshape(2, 3)
        y = mg.einsum("ij->jii", x)
    got = mg.Session(g).run(y)
    want = np.zeros((3, 2, 2))
    for j in range(3):
        want[j] = np.diag(x[:, j])
    assert y.shape.as_list() == [3, 2, 2]
    np.testing.assert_array_equal(got, want)
