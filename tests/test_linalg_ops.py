"""MatMul, BatchMatMulV2 and Einsum: TensorFlow's documented examples (values from TF 2.21),
property tests against NumPy references written here, shape inference and errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from op_helpers import run

import minigraph as mg
from minigraph import errors
from minigraph.scope import current_scope

pytestmark = pytest.mark.usefixtures("any_device")  # CPU and (simulated) GPU

F32, I32, C128 = np.float32, np.int32, np.complex128


def same(actual, expected, rtol=1e-6):
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=1e-6)


R = np.arange(12, dtype=F32)

TF_EXAMPLES = [
    # tf.linalg.matmul's docstring
    (
        lambda a, b: mg.matmul(a, b),
        (
            np.array([1, 2, 3, 4, 5, 6], I32).reshape(2, 3),
            np.array([7, 8, 9, 10, 11, 12], I32).reshape(3, 2),
        ),
        np.array([[58, 64], [139, 154]], I32),
    ),
    (
        lambda a, b: mg.matmul(a, b),
        (
            np.arange(1, 13, dtype=I32).reshape(2, 2, 3),
            np.arange(13, 25, dtype=I32).reshape(2, 3, 2),
        ),
        np.array([[[94, 100], [229, 244]], [[508, 532], [697, 730]]], I32),
    ),
    # complex adjoints and transposes, as TF 2.21 computes them
    (
        lambda a, b: mg.matmul(a, b, adjoint_a=True, transpose_b=True),
        (np.array([[1 + 2j, 3j], [2, 1 - 1j]]), np.array([[1j, 2], [3, 4 - 1j]])),
        np.array([[6 + 1j, 11 - 8j], [5 + 2j, 5 - 6j]]),
    ),
    (
        lambda a, b: mg.matmul(a, b, transpose_a=True, adjoint_b=True),
        (np.array([[[1 + 2j, 3j], [2, 1 - 1j]]]), np.array([[1j, 2], [3, 4 - 1j]])),
        np.array([[[6 - 1j, 11 + 8j], [5 - 2j, 5 + 6j]]]),
    ),
    # tf.einsum's docstring, values from TF 2.21
    (
        lambda a, b: mg.einsum("i,i->", a, b),
        (np.array([1, 2, 3], F32), np.array([4, 5, 6], F32)),
        F32(32),
    ),
    (
        lambda a, b: mg.einsum("i,j->ij", a, b),
        (np.array([1, 2], F32), np.array([3, 4, 5], F32)),
        np.array([[3, 4, 5], [6, 8, 10]], F32),
    ),
    (
        lambda a, b: mg.einsum("bij,bjk->bik", a, b),
        (R.reshape(2, 2, 3), R.reshape(2, 3, 2)),
        np.array([[[10, 13], [28, 40]], [[172, 193], [244, 274]]], F32),
    ),
    (lambda a: mg.einsum("ii->", a), (R[:9].reshape(3, 3),), F32(12)),
    (lambda a: mg.einsum("ii->i", a), (R[:9].reshape(3, 3),), np.array([0, 4, 8], F32)),
    (
        lambda a, b: mg.einsum("...ij,...jk->...ik", a, b),
        (R.reshape(2, 2, 3), R[:6].reshape(3, 2)),
        np.array([[[10, 13], [28, 40]], [[46, 67], [64, 94]]], F32),
    ),
]


@pytest.mark.parametrize("case", range(len(TF_EXAMPLES)))
def test_tensorflow_examples(case):
    build, args, expected = TF_EXAMPLES[case]
    same(run(build, *args), expected)


def _matrix(dtype, shape, data):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        re = data.draw(hnp.arrays(np.float64, shape, elements=st.integers(-5, 5).map(float)))
        im = data.draw(hnp.arrays(np.float64, shape, elements=st.integers(-5, 5).map(float)))
        return (re + 1j * im).astype(dtype)
    lo = 0 if dtype.kind == "u" else -5
    return data.draw(hnp.arrays(dtype, shape, elements=st.integers(lo, 5).map(dtype.type)))


def _adj(m, conj):
    m = np.swapaxes(m, -1, -2)
    return np.conj(m) if conj else m


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_matmul_matches_numpy(data):
    dtype = np.dtype(
        data.draw(
            st.sampled_from(
                [
                    np.float16,
                    np.float32,
                    np.float64,
                    np.int32,
                    np.int64,
                    np.uint8,
                    np.complex64,
                    C128,
                ]
            )
        )
    )
    batch = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, min_side=0, max_side=3)
    )
    rank2 = data.draw(st.booleans())
    bx, by = ((), ()) if rank2 else batch.input_shapes
    m, k, n = (data.draw(st.integers(0, 4)) for _ in range(3))
    ta, tb, aa, ab = (data.draw(st.booleans()) for _ in range(4))
    ta, tb = ta and not aa, tb and not ab
    x = _matrix(dtype, bx + ((k, m) if ta or aa else (m, k)), data)
    y = _matrix(dtype, by + ((n, k) if tb or ab else (k, n)), data)
    xm = _adj(x, aa) if ta or aa else x
    ym = _adj(y, ab) if tb or ab else y
    wide = {np.dtype(np.float16): np.float32, np.dtype(np.uint8): np.uint64}.get(dtype, dtype)
    expected = np.matmul(xm.astype(wide), ym.astype(wide)).astype(dtype)
    got = run(
        lambda a, b: mg.matmul(a, b, transpose_a=ta, transpose_b=tb, adjoint_a=aa, adjoint_b=ab),
        x,
        y,
    )
    assert got.dtype == dtype
    np.testing.assert_allclose(got, expected, rtol=1e-3 if dtype == np.float16 else 1e-6)


@pytest.mark.parametrize(
    "a_shape, b_shape, transpose_a",
    [
        ((1100, 600), (600, 700), False),
        ((300, 1200), (1200, 1500), False),  # more columns than rows: column slices
        ((900, 1100), (900, 500), True),
    ],
)
def test_large_matmuls_split_over_threads_match_a_plain_sum(a_shape, b_shape, transpose_a):
    """Products of 4 MB or more are cut into row (or, with more columns than rows, column)
    slices, one a kernel thread: each entry still the sum of its row times its column."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal(a_shape)
    b = rng.standard_normal(b_shape)
    got = run(lambda x, y: mg.matmul(x, y, transpose_a=transpose_a), a, b)
    want = np.einsum("ik,kj->ij", a.T if transpose_a else a, b)  # no BLAS
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-11)


def test_matmul_emits_matmul_or_batch_matmul():
    g = mg.Graph()
    with g.as_default():
        m = mg.placeholder(mg.float32, [2, 3])
        b = mg.placeholder(mg.float32, [4, 3, 5])
        u = mg.placeholder(mg.float32)
        p = mg.matmul(m, m, transpose_b=True)
        q = mg.matmul(m, b)
        r = mg.matmul(u, m, adjoint_b=True)
    assert p.op.type == "MatMul" and p.shape == mg.TensorShape([2, 2])
    assert p.op.node.attrs["transpose_b"] and not p.op.node.attrs["transpose_a"]
    assert q.op.type == "BatchMatMulV2" and q.shape == mg.TensorShape([4, 2, 5])
    assert r.op.type == "BatchMatMulV2" and r.shape.rank is None
    assert r.op.node.attrs["adj_y"]


@pytest.mark.parametrize(
    "build, shapes, expected",
    [
        (lambda a, b: mg.matmul(a, b), ([None, 3], [None, None]), [None, None]),
        (lambda a, b: mg.matmul(a, b, transpose_a=True), ([3, 2], [3, None]), [2, None]),
        (lambda a, b: mg.matmul(a, b), ([None, 2, 3], [3, 4]), [None, 2, 4]),
        (lambda a, b: mg.matmul(a, b), ([1, 2, 3], [5, 3, 4]), [5, 2, 4]),
        (lambda a, b: mg.matmul(a, b, adjoint_a=True), ([7, 1, 3, 2], [5, 3, 4]), [7, 5, 2, 4]),
        (lambda a, b: mg.einsum("ij,jk->ik", a, b), ([None, 3], [None, 5]), [None, 5]),
        (lambda a, b: mg.einsum("ij,jk", a, b), ([2, None], [None, 5]), [2, 5]),
        (
            lambda a, b: mg.einsum("...ij,jk->...ik", a, b),
            ([4, None, 2, 3], [3, 5]),
            [4, None, 2, 5],
        ),
        (lambda a, b: mg.einsum("...ij,jk->...ik", a, b), (None, [3, 5]), None),
        (lambda a, b: mg.einsum("ij,jk->ki", a, b), (None, [3, 5]), [5, None]),
        (lambda a, b: mg.einsum("ba,b", a, b), ([2, 3], [2]), [3]),
        (lambda a, b: mg.einsum("Ba,a->aB", a, b), ([2, 3], [1]), [3, 2]),
    ],
)
def test_shape_inference(build, shapes, expected):
    g = mg.Graph()
    with g.as_default():
        out = build(*[mg.placeholder(mg.float32, s) for s in shapes])
    assert out.shape == mg.TensorShape(expected)


EQUATIONS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->ji", [(2, 2, 3)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("...ij,...jk->...ik", [(5, 1, 2, 3), (4, 3, 2)]),
    ("...i,...i", [(2, 3), (4, 1, 3)]),
    ("i...->...", [(2, 3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("i,j,k->ijk", [(2,), (3,), (1,)]),
    ("ab,ab->", [(0, 3), (0, 3)]),
    ("ij,jk->ik", [(2, 1), (3, 4)]),  # NumPy broadcasts a labelled 1 (TF does not)
    ("Ba", [(2, 3)]),
    ("i", [(4,)]),
]


@pytest.mark.parametrize("equation, shapes", EQUATIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64])
def test_einsum_matches_numpy(equation, shapes, dtype):
    rng = np.random.default_rng(len(equation))
    xs = [rng.integers(-4, 5, size=s).astype(dtype) for s in shapes]
    expected = np.einsum(equation, *xs)
    g = mg.Graph()
    with g.as_default():
        phs = [mg.placeholder(mg.as_dtype(dtype), s) for s in shapes]
        out = mg.einsum(equation, *phs)
    assert out.shape == mg.TensorShape(expected.shape)
    got = mg.Session(g).run(out, dict(zip(phs, xs)))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, expected, rtol=1e-6)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_einsum_random_contractions_match_numpy(data):
    labels = "abcde"
    n_ops = data.draw(st.integers(1, 3))
    sizes = {c: data.draw(st.integers(0, 3)) for c in labels}
    terms = [
        data.draw(st.lists(st.sampled_from(labels), min_size=0, max_size=3)) for _ in range(n_ops)
    ]
    seen = sorted({c for t in terms for c in t})
    out = data.draw(st.permutations(seen).map(lambda p: p[: data.draw(st.integers(0, len(p)))]))
    explicit = data.draw(st.booleans())
    equation = ",".join("".join(t) for t in terms) + ("->" + "".join(out) if explicit else "")
    xs = [
        data.draw(
            hnp.arrays(
                np.float64, tuple(sizes[c] for c in t), elements=st.integers(-3, 3).map(float)
            )
        )
        for t in terms
    ]
    expected = np.einsum(equation, *xs)
    got = run(lambda *p: mg.einsum(equation, *p), *xs)
    np.testing.assert_allclose(got, expected, rtol=1e-9)
    assert got.shape == expected.shape


@pytest.mark.parametrize(
    "build, shapes, message",
    [
        (
            lambda a, b, name: mg.matmul(a, b, name=name),
            ([2, 3], [4, 5]),
            "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]",
        ),
        (
            lambda a, b, name: mg.matmul(a, b, transpose_b=True, name=name),
            ([2, 3], [4, 5]),
            "Matrix size-incompatible",
        ),
        (
            lambda a, b, name: mg.matmul(a, b, name=name),
            ([2, 2, 3], [2, 4, 5]),
            "Matrix size-incompatible: In[0]: [2,2,3], In[1]: [2,4,5]",
        ),
        (
            lambda a, b, name: mg.matmul(a, b, name=name),
            ([2, 2, 3], [3, 3, 5]),
            "In[0] and In[1] must have compatible batch dimensions: [2,2,3] vs. [3,3,5]",
        ),
        (lambda a, b, name: mg.matmul(a, b, name=name), ([3], [3, 5]), "ndims must be >= 2: 1"),
        (
            lambda a, b, name: mg.ops.MatMul(current_scope().with_op_name(name), a, b),
            ([2, 2, 3], [3, 5]),
            "Shape must be rank 2 but is rank 3",
        ),
        (
            lambda a, b, name: mg.einsum("ij,jk->ik", a, b, name=name),
            ([2, 3], [4, 5]),
            "Expected dimension 3 at axis 0 of input 1 shaped [4,5] but got dimension 4",
        ),
        (
            lambda a, name: mg.einsum("ijk->i", a, name=name),
            ([2, 3],),
            "Expected input 0 to have rank 3 but got: 2",
        ),
        (
            lambda a, name: mg.einsum("ij->k", a, name=name),
            ([2, 3],),
            "Output subscript 'k' does not appear in the inputs",
        ),
        (
            lambda a, name: mg.einsum("ij->i...i...", a, name=name),
            ([2, 3],),
            "Invalid subscripts 'i...i...'",
        ),
        (
            lambda a, name: mg.einsum("i,j->ij", a, name=name),
            ([2],),
            "Expecting 1 input subscripts in equation 'i,j->ij' but got: 2",
        ),
        (lambda a, name: mg.einsum("i1->i", a, name=name), ([2, 3],), "Invalid subscripts 'i1'"),
        (
            lambda a, name: mg.einsum("ii->i", a, name=name),
            ([2, 3],),
            "Repeated subscript 'i' of input 0 has unequal dims",
        ),
        (
            lambda a, name: mg.einsum("...i->i", a, name=name),
            ([2, 3],),
            "has no '...' for the broadcast dims",
        ),
        (
            lambda a, b, name: mg.einsum("...i,...i->...", a, b, name=name),
            ([2, 3], [4, 3]),
            "Ellipsis dims of input 1 do not broadcast",
        ),
        (
            lambda a, b, name: mg.matmul(a, b, transpose_a=True, adjoint_a=True, name=name),
            ([2, 2], [2, 2]),
            "Only one of transpose_a and adjoint_a",
        ),
    ],
)
def test_build_time_errors_name_the_node(build, shapes, message):
    g = mg.Graph()
    with g.as_default():
        phs = [mg.placeholder(mg.float32, s) for s in shapes]
        with pytest.raises(errors.InvalidArgumentError) as e:
            build(*phs, name="bad")
    assert message in str(e.value)
    assert e.value.node_name == "bad"


@pytest.mark.parametrize(
    "build, values, message",
    [
        (
            lambda a, b: mg.matmul(a, b),
            (np.ones((2, 3), F32), np.ones((4, 5), F32)),
            "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]",
        ),
        (
            lambda a, b: mg.matmul(a, b),
            (np.ones((2, 2, 3), F32), np.ones((3, 3, 5), F32)),
            "must have compatible batch dimensions: [2,2,3] vs. [3,3,5]",
        ),
        (
            lambda a, b: mg.einsum("ij,jk->ik", a, b),
            (np.ones((2, 3), F32), np.ones((4, 5), F32)),
            "Expected dimension 3 at axis 0 of input 1",
        ),
        (
            lambda a: mg.einsum("...i->i", a),
            (np.ones((2, 3), F32),),
            "has no '...' for the broadcast dims",
        ),
    ],
)
def test_run_time_errors_name_the_node(build, values, message):
    g = mg.Graph()
    with g.as_default():
        phs = [mg.placeholder(mg.float32) for _ in values]
        out = build(*phs)
    with pytest.raises(errors.InvalidArgumentError) as e:
        mg.Session(g).run(out, dict(zip(phs, values)))
    assert message in str(e.value)
    assert e.value.node_name == out.op.name


def test_huge_outputs_are_refused_before_allocating():
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float64, [None, 1])
        b = mg.placeholder(mg.float64, [1, None])
        outer = mg.matmul(a, b)
        e = mg.einsum(
            "i,j,k->ijk",
            mg.placeholder(mg.float64, [None], name="v"),
            mg.placeholder(mg.float64, [None], name="w"),
            mg.placeholder(mg.float64, [None], name="u"),
        )
    big = np.ones((1 << 20, 1))
    sess = mg.Session(g)
    with pytest.raises(errors.ResourceExhaustedError):
        sess.run(outer, {a: np.ones((1 << 22, 1)), b: np.ones((1, 1 << 22))})
    with pytest.raises(errors.ResourceExhaustedError):
        sess.run(e, {"v:0": big[:, 0], "w:0": big[:, 0], "u:0": big[:, 0]})


def test_wrong_dtypes_are_refused():
    g = mg.Graph()
    with g.as_default():
        with pytest.raises(errors.InvalidArgumentError, match="bool is not in the list") as e:
            mg.matmul(np.ones((2, 2), bool), np.ones((2, 2), bool), name="mm")
        assert e.value.node_name == "mm"
        with pytest.raises(errors.InvalidArgumentError, match="int8 is not in the list"):
            mg.matmul(np.ones((2, 2, 2), np.int8), np.ones((2, 2), np.int8))
        with pytest.raises(errors.InvalidArgumentError, match="does not mix dtypes"):
            mg.einsum("i,i", mg.placeholder(mg.float32), mg.placeholder(mg.float64))


def test_a_matmul_output_larger_than_its_operands_is_checked_against_the_cap():
    # Small products skip the size check only when the output is no larger than an
    # operand (as elementwise kernels); an outer product grows past both, and is checked.
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float64, [None, None])
        b = mg.placeholder(mg.float64, [None, None])
        p = mg.matmul(a, b)
    sess = mg.Session(g, max_tensor_bytes=16 * 1024)
    with pytest.raises(errors.ResourceExhaustedError, match="MatMul"):
        sess.run(p, {a: np.ones((64, 1)), b: np.ones((1, 64))})  # 32 KB out of 512 B in
    x, w = np.arange(64.0).reshape(1, 64), np.ones((64, 8))
    np.testing.assert_array_equal(sess.run(p, {a: x, b: w}), np.full((1, 8), x.sum()))


def test_a_product_of_many_multiply_adds_is_split_and_still_the_product():
    """A product of SPLIT_MIN_MACS multiply-adds or more runs on every kernel thread even
    when its operands are small (an Inception 1x1 convolution at batch 8); a smaller one
    (an LSTM cell's [64, 64] @ [64, 256] at batch 64) runs as one BLAS call."""
    from minigraph.kernel import PARALLEL_MIN_BYTES
    from minigraph.ops.common import product_work

    rng = np.random.default_rng(3)
    a = rng.standard_normal((512, 768)).astype(np.float32)
    b = rng.standard_normal((768, 192)).astype(np.float32)
    assert a.nbytes + b.nbytes + 512 * 192 * 4 < PARALLEL_MIN_BYTES <= product_work(a, b)
    cell = np.zeros((64, 64), np.float32), np.zeros((64, 256), np.float32)
    assert product_work(*cell) < PARALLEL_MIN_BYTES
    got = run(lambda x, y: mg.matmul(x, y), a, b)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
