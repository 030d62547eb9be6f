"""Gradients of the index ops and segment reductions (ops/gather_grad.py,
ops/segment_grad.py) and the gradient ops SparseSegment*Grad(V2) (ops/segment_grad_ops.py).

TensorFlow's gradients are replayed from tests/fixtures/grads/{gather,segments}.npz by
test_tf_grad_fixtures.py. Here, independently of TensorFlow: every gradient against
central differences (mg.test.compute_gradient_error, float64, error < 1e-6), known static
shapes and unknown ones; the seed ops' rules (a duplicate DynamicStitch index gets the
gradient of the row it names even where it was overwritten, as TensorFlow's) against
loop references; the not-differentiable ops; the gradient ops against a loop reference
and TensorFlow's messages (tests/fixtures/ops/segment_grad_ops.npz).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from op_helpers import build_fails

import minigraph as mg
from minigraph import errors
from minigraph.wrappers import apply_op

rng = np.random.default_rng(1727)
FIXTURES = Path(__file__).parent / "fixtures" / "ops" / "segment_grad_ops.npz"


def gradient_error(build, shapes, y_shape, known=True, inits=None):
    """compute_gradient_error of ``build(*xs)`` for float64 placeholders of ``shapes``
    (of unknown shape unless ``known``)."""
    g = mg.Graph()
    with g.as_default():
        xs = [mg.placeholder(mg.float64, s if known else None) for s in shapes]
        y = build(*xs)
        if inits is None:  # distinct values at least 0.25 apart, none 0: no ties, no zeros
            inits = [
                (rng.permutation(np.prod(s)) - np.prod(s) / 2 + 0.5).reshape(s) / 4 for s in shapes
            ]
        return mg.test.compute_gradient_error(xs, shapes, y, y_shape, x_init_value=inits)


def gradients(build, values, grad_y, known=True):
    """The gradients of ``sum(grad_y * build(*xs))`` at ``values``."""
    g = mg.Graph()
    with g.as_default():
        xs = [mg.placeholder(mg.float64, v.shape if known else None) for v in values]
        y = build(*xs)
        grads = mg.gradients(y, xs, grad_ys=grad_y)
    return mg.Session(g).run(grads, dict(zip(xs, values)))


# -- every gradient against central differences ------------------------------------------

# (label, build, input shapes, output shape, whether it takes unknown input shapes)
NUMERIC = [
    ("GatherV2 axis 0", lambda p: mg.gather(p, [3, 0, 3, 1]), [[4, 2]], [4, 2]),
    ("GatherV2 axis 1", lambda p: mg.gather(p, [[2, 0], [1, 1]], axis=1), [[2, 3, 2]],
     [2, 2, 2, 2]),
    ("GatherV2 axis -1", lambda p: mg.gather(p, [1, 1, 0], axis=-1), [[2, 2]], [2, 3]),
    ("GatherV2 batch_dims 1", lambda p: mg.gather(p, [[2, 0, 2], [1, 1, 0]], batch_dims=1),
     [[2, 3]], [2, 3]),
    ("GatherV2 batch_dims 1, axis 2",
     lambda p: mg.gather(p, [[2, 0], [1, 2]], axis=2, batch_dims=1), [[2, 2, 3, 2]], [2, 2, 2, 2]),
    ("GatherV2 batch_dims -1", lambda p: mg.gather(p, [[0, 1], [1, 1]], batch_dims=-1),
     [[2, 2]], [2, 2]),
    ("GatherV2 0-d index", lambda p: mg.gather(p, 2, axis=1), [[2, 3]], [2]),
    ("GatherNd elements", lambda p: mg.gather_nd(p, [[0, 1], [1, 0], [0, 1]]), [[2, 2, 3]], [3, 3]),
    ("GatherNd one index row", lambda p: mg.gather_nd(p, [1, 0]), [[2, 2, 3]], [3]),
    ("GatherNd batch_dims 1", lambda p: mg.gather_nd(p, [[1], [0]], batch_dims=1),
     [[2, 2, 3]], [2, 3]),
    ("DynamicStitch", lambda a, b: mg.dynamic_stitch([[0, 3], 1], [a, b]), [[2, 2], [2]], [4, 2]),
    ("ParallelDynamicStitch", lambda a, b: mg.parallel_dynamic_stitch([2, [[1], [0]]], [a, b]),
     [[2], [2, 1, 2]], [3, 2]),
    ("ScatterNd", lambda u: mg.scatter_nd([[1], [3], [1]], u, [5, 2]), [[3, 2]], [5, 2]),
    ("TensorScatterUpdate", lambda t, u: mg.tensor_scatter_nd_update(t, [[1], [3]], u),
     [[5, 2], [2, 2]], [5, 2]),
    ("TensorScatterAdd", lambda t, u: mg.tensor_scatter_nd_add(t, [[1, 0], [1, 0]], u),
     [[2, 2], [2]], [2, 2]),
    ("TensorScatterSub", lambda t, u: mg.tensor_scatter_nd_sub(t, [[1], [3], [1]], u),
     [[5, 2], [3, 2]], [5, 2]),
    ("TensorScatterMax", lambda t, u: mg.tensor_scatter_nd_max(t, [[1], [3], [0]], u),
     [[5, 2], [3, 2]], [5, 2]),
    ("TensorScatterMin", lambda t, u: mg.tensor_scatter_nd_min(t, [[1], [3], [0]], u),
     [[5, 2], [3, 2]], [5, 2]),
    ("ScatterNdNonAliasingAdd", lambda t, u: mg.scatter_nd_non_aliasing_add(t, [[1], [1]], u),
     [[3, 2], [2, 2]], [3, 2]),
    ("TopKV2", lambda x: mg.nn.top_k(x, 2)[0], [[2, 2, 4]], [2, 2, 2]),
    ("SegmentSum", lambda x: mg.segment_sum(x, [0, 0, 2]), [[3, 2]], [3, 2]),
    ("SegmentMean", lambda x: mg.segment_mean(x, [0, 0, 2, 2, 2]), [[5]], [3]),
    ("SegmentMax", lambda x: mg.segment_max(x, [0, 0, 1]), [[3, 2, 2]], [2, 2, 2]),
    ("SegmentMin", lambda x: mg.segment_min(x, [1, 1, 1]), [[3, 2]], [2, 2]),
    ("SegmentProd", lambda x: mg.segment_prod(x, [0, 0, 2]), [[3, 2]], [3, 2]),
    ("UnsortedSegmentSum", lambda x: mg.unsorted_segment_sum(x, [[1, -1], [1, 0]], 3),
     [[2, 2, 2]], [3, 2]),
    ("UnsortedSegmentMax", lambda x: mg.unsorted_segment_max(x, [1, -1, 1], 2), [[3, 2]], [2, 2]),
    ("UnsortedSegmentMin", lambda x: mg.unsorted_segment_min(x, [0, 0, 1], 2), [[3, 2]], [2, 2]),
    ("UnsortedSegmentProd", lambda x: mg.unsorted_segment_prod(x, [1, -1, 1], 2), [[3]], [2]),
    *[
        (f"{f.__name__} sparse_gradient={sg} num_segments={ns}",
         lambda x, f=f, sg=sg, ns=ns: f(x, [2, 0, 2, 1], [0, 0, 1, 1], num_segments=ns,
                                        sparse_gradient=sg),
         [[3, 2]], [ns or 2, 2])
        for f in (mg.sparse_segment_sum, mg.sparse_segment_mean, mg.sparse_segment_sqrt_n)
        for sg in (False, True)
        for ns in (None, 4)
    ],
]  # fmt: skip


@pytest.mark.parametrize("known", [True, False], ids=["static", "unknown"])
@pytest.mark.parametrize("label,build,shapes,y_shape", NUMERIC, ids=[c[0] for c in NUMERIC])
def test_gradient_matches_finite_differences(label, build, shapes, y_shape, known):
    if not known and "batch_dims" in label and "GatherNd" in label:
        pytest.skip("gather_nd with batch_dims needs the ranks of its inputs")
    assert gradient_error(build, shapes, y_shape, known) < 1e-6


def test_gather_gradient_with_an_unknown_axis():
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.float64, None)
        axis = mg.placeholder(mg.int64, None)
        batch = mg.placeholder(mg.int32, None)
        y = mg.gather(p, batch, axis=axis, batch_dims=1)
        (dp,) = mg.gradients(y, p, grad_ys=mg.placeholder(mg.float64, None, name="dy"))
    pv, iv = rng.standard_normal([2, 3, 4, 2]), np.array([[3, 0, 3], [1, 1, 2]], np.int32)
    dy = rng.standard_normal([2, 3, 3, 2])
    want = np.zeros_like(pv)
    for b in range(2):
        for m in range(3):
            for k in range(3):
                want[b, m, iv[b, k]] += dy[b, m, k]
    got = mg.Session(g).run(dp, {p: pv, axis: np.int64(-2), batch: iv, "dy:0": dy})
    np.testing.assert_allclose(got, want)


def test_gather_gradient_of_empty_and_zero_sized_tensors():
    (dp,) = gradients(
        lambda p: mg.gather(p, np.zeros([0, 2], np.int32)), [np.ones([3, 2])], np.zeros([0, 2, 2])
    )
    np.testing.assert_array_equal(dp, np.zeros([3, 2]))
    (dp,) = gradients(
        lambda p: mg.gather(p, [1, 0], axis=1),
        [np.ones([0, 2, 3])],
        np.zeros([0, 2, 3]),
        known=False,
    )
    assert dp.shape == (0, 2, 3)


# -- the seed ops: DynamicStitch, DynamicPartition and their composition -------------------


def _stitch_reference(indices, grad):
    """TensorFlow's rule, by a loop: data[m][i] gets grad[indices[m][i]], duplicates too."""
    out = []
    for idx in indices:
        idx = np.asarray(idx)
        rows = [grad[j] for j in idx.reshape(-1)]
        out.append(np.array(rows).reshape(idx.shape + grad.shape[1:]))
    return out


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("parallel", [False, True], ids=["DynamicStitch", "Parallel"])
@pytest.mark.parametrize("known", [True, False], ids=["static", "unknown"])
def test_stitch_gives_every_duplicate_its_rows_gradient(parallel, known):
    stitch = mg.parallel_dynamic_stitch if parallel else mg.dynamic_stitch
    indices = [np.array([[0, 1], [0, 4]], np.int32), np.array(2, np.int32), np.int32([4, 0])]
    data = [rng.standard_normal([2, 2, 3]), rng.standard_normal([3]), rng.standard_normal([2, 3])]
    grad = rng.standard_normal([5, 3])
    got = gradients(
        lambda *d: stitch([mg.constant(i) for i in indices], list(d)), data, grad, known
    )
    for g, w in zip(got, _stitch_reference(indices, grad)):
        np.testing.assert_array_equal(g, w)


def test_overwritten_stitch_entries_differ_from_finite_differences():
    """TensorFlow's rule (and minigraph's): the overwritten data[0][0] is given the gradient
    of row 0, although changing it changes nothing. Finite differences see 0 there."""
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float64, [2])
        b = mg.placeholder(mg.float64, [1])
        y = mg.dynamic_stitch([[0, 1], [0]], [a, b])
        theory, numeric = mg.test.compute_gradient(
            a, [2], y, [2], x_init_value=np.ones(2), extra_feed_dict={b: np.ones(1)}
        )
    np.testing.assert_array_equal(theory, np.eye(2))
    np.testing.assert_allclose(numeric, [[0, 0], [0, 1]], atol=1e-9)


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("known", [True, False], ids=["static", "unknown"])
def test_partition_gradient_stitches_each_part_back(known):
    data = rng.standard_normal([2, 3, 2])
    parts = np.array([[1, 3, 1], [0, 1, 3]], np.int32)  # partition 2 is empty
    grads = [rng.standard_normal([n, 2]) for n in (1, 3, 0, 2)]

    def build(d):
        p = mg.constant(parts) if known else mg.placeholder_with_default(parts, None)
        outs = mg.dynamic_partition(d, p, 4)
        return outs

    g = mg.Graph()
    with g.as_default():
        d = mg.placeholder(mg.float64, data.shape if known else None)
        outs = build(d)
        (dd,) = mg.gradients(outs, d, grad_ys=grads)
    got = mg.Session(g).run(dd, {d: data})
    want = np.zeros_like(data)
    seen = [0, 0, 0, 0]
    for i in range(2):  # rows in order within each partition, as DynamicPartition keeps them
        for j in range(3):
            k = parts[i, j]
            want[i, j] = grads[k][seen[k]]
            seen[k] += 1
    np.testing.assert_array_equal(got, want)


@pytest.mark.usefixtures("any_device")
def test_partition_gradient_with_scalar_partitions_and_empty_data():
    (dd,) = gradients(
        lambda d: mg.dynamic_partition(d, 2, 3),
        [np.arange(4.0)],
        [np.zeros([0, 4]), np.zeros([0, 4]), np.array([[1.0, 2, 3, 4]])],
    )
    np.testing.assert_array_equal(dd, [1.0, 2, 3, 4])
    (dd,) = gradients(
        lambda d: mg.dynamic_partition(d, np.zeros([0], np.int32), 2),
        [np.zeros([0, 3])],
        [np.zeros([0, 3]), np.zeros([0, 3])],
        known=False,
    )
    assert dd.shape == (0, 3)


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("known", [True, False], ids=["static", "unknown"])
def test_partition_then_stitch_composition(known):
    """The seed idiom (semantics.md §10): split by a mask, change one part, stitch back.
    Each element's gradient flows back to where it came from, scaled by the change."""
    x = np.array([0.1, -1.0, 5.2, 4.3, -1.0, 7.4])

    def build(xt, mask_of=None):
        mask = mg.cast(mg.not_equal(xt if mask_of is None else mask_of, -1.0), mg.int32)
        index = mg.range(mg.size(xt))
        parts = mg.dynamic_partition(xt, mask, 2)
        where = mg.dynamic_partition(index, mask, 2)
        return mg.dynamic_stitch(where, [parts[0], parts[1] * 3.0 + 1.0])

    w = rng.standard_normal(6)
    (dx,) = gradients(build, [x], w, known)
    np.testing.assert_allclose(dx, np.where(x != -1.0, 3.0, 1.0) * w)
    # Finite differences with the mask held (moving a -1 would move it to the other part).
    error = gradient_error(lambda xt: build(xt, mg.constant(x)), [[6]], [6], known, inits=[x])
    assert error < 1e-6


# -- duplicates in the scatter ops ----------------------------------------------------------


@pytest.mark.usefixtures("any_device")
def test_tensor_scatter_update_gives_every_duplicate_the_gradient():
    t, u = rng.standard_normal([4, 2]), rng.standard_normal([3, 2])
    grad = rng.standard_normal([4, 2])
    idx = [[1], [3], [1]]
    dt, du = gradients(lambda a, b: mg.tensor_scatter_nd_update(a, idx, b), [t, u], grad)
    want_t = grad.copy()
    want_t[[1, 3]] = 0
    np.testing.assert_array_equal(dt, want_t)
    np.testing.assert_array_equal(du, grad[[1, 3, 1]])


@pytest.mark.usefixtures("any_device")
def test_scatter_min_max_share_ties():
    x, u = np.ones(4), np.array([2.0, 0.5, 1.0, 1.0])
    dx, du = gradients(
        lambda a, b: mg.tensor_scatter_nd_max(a, [[1], [2], [3], [3]], b), [x, u], np.ones(4)
    )
    np.testing.assert_allclose(dx, [1, 0, 1, 1 / 3])
    np.testing.assert_allclose(du, [1, 0, 1 / 3, 1 / 3])


@pytest.mark.usefixtures("any_device")
def test_scatter_gradients_skip_rows_ignored():
    """A row IGNORE dropped gets no gradient (the policy is passed on), where TensorFlow's
    TensorScatterUpdate gradient would fail on it."""
    t, u, grad = np.ones([3, 2]), np.ones([2, 2]), rng.standard_normal([3, 2])
    dt, du = gradients(
        lambda a, b: mg.tensor_scatter_nd_update(a, [[1], [7]], b, bad_indices_policy="IGNORE"),
        [t, u],
        grad,
    )
    np.testing.assert_array_equal(dt, grad * [[1], [0], [1]])
    np.testing.assert_array_equal(du, [grad[1], [0, 0]])


@pytest.mark.usefixtures("any_device")
def test_top_k_gradient_goes_to_the_picked_positions():
    x = np.array([[1.0, 3.0, 3.0, 1.0], [4.0, 0.0, 5.0, 2.0]])
    grad = np.array([[10.0, 20.0, 30.0], [1.0, 2.0, 3.0]])
    (dx,) = gradients(lambda a: mg.nn.top_k(a, 3)[0], [x], grad, known=False)
    np.testing.assert_array_equal(dx, [[30, 10, 20, 0], [2, 0, 1, 3]])
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float64, [2, 3])
        values, _ = mg.nn.top_k(a, 0)
        (da,) = mg.gradients(values, a)
        out = apply_op("TopKV2", None, [a, np.int64(2)], {"index_type": mg.int64}).outputs[0]
        (db,) = mg.gradients(out, a, grad_ys=np.ones([2, 2]))
    za, zb = mg.Session(g).run([da, db], {a: np.arange(6.0).reshape(2, 3)})
    np.testing.assert_array_equal(za, np.zeros([2, 3]))
    np.testing.assert_array_equal(zb, [[0, 1, 1], [0, 1, 1]])  # TF's gradient fails on int64


@pytest.mark.usefixtures("any_device")
def test_segment_ties_and_zeros():
    data = np.array([[2.0, 0.0], [2.0, 0.0], [3.0, 0.0], [1.0, 5.0]])
    ids = [0, 0, 0, 1]
    (dmax,) = gradients(lambda d: mg.segment_max(d, ids), [data], np.ones([2, 2]))
    np.testing.assert_allclose(dmax, [[0, 1 / 3], [0, 1 / 3], [1, 1 / 3], [1, 1]])
    (dprod,) = gradients(
        lambda d: mg.unsorted_segment_prod(d, [0, 0, 0, -1], 2), [data], np.ones([2, 2])
    )
    # column 0 has no zero: prod / x; column 1 has three zeros in segment 0: nothing;
    # the row with id -1 gets nothing.
    np.testing.assert_allclose(dprod, [[6, 0], [6, 0], [4, 0], [0, 0]])
    (dprod,) = gradients(lambda d: mg.segment_prod(d, [0, 1, 1, 1]), [data], np.ones([2, 2]))
    np.testing.assert_allclose(dprod, [[1, 1], [3, 0], [2, 0], [6, 0]])


# -- not differentiable ----------------------------------------------------------------------


def test_one_hot_where_and_in_top_k_stop_gradients():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [2, 3])
        on = mg.placeholder(mg.float32, [])
        y = mg.one_hot([0, 2], 3, on_value=on, off_value=0.0)
        w = mg.cast(mg.where(x), mg.float32)
        k = mg.cast(mg.nn.in_top_k(x, [0, 1], 1), mg.float32)
        assert mg.gradients(y, on) == [None]
        assert mg.gradients([w, k], x) == [None]


def test_unique_has_no_gradient_as_in_tensorflow():
    with mg.Graph().as_default():
        x = mg.placeholder(mg.float32, [4])
        y, _ = mg.unique(x)
        with pytest.raises(
            errors.NoGradientError, match=r"operation '.*Unique.*' \(op type: Unique"
        ):
            mg.gradients(y, x)


# -- the gradient ops: SparseSegment{Sum,Mean,SqrtN}Grad and ...V2 ----------------------------

OPS = [f"SparseSegment{n}Grad{v}" for n in ("Sum", "Mean", "SqrtN") for v in ("", "V2")]


def _grad_reference(op, grad, indices, segment_ids, dim0):
    """A loop: row segment_ids[j] of grad, scaled, added to row indices[j]."""
    counts = np.bincount(segment_ids, minlength=grad.shape[0])
    out = np.zeros((dim0,) + grad.shape[1:], grad.dtype)
    for i, s in zip(indices, segment_ids):
        scale = 1.0
        if "Mean" in op:
            scale = 1.0 / max(counts[s], 1)
        elif "SqrtN" in op:
            scale = 1.0 / np.sqrt(max(counts[s], 1))
        out[i] += grad[s] * grad.dtype.type(scale)
    if op.endswith("V2"):
        unique = np.unique(indices)
        return [out[unique], unique]
    return [out]


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("op", OPS)
def test_gradient_ops_match_a_loop(op, dtype):
    grad = rng.standard_normal([4, 3, 2]).astype(dtype)
    indices = rng.integers(0, 6, 30).astype(np.int64)
    segment_ids = np.sort(rng.integers(0, 4, 30)).astype(np.int32)
    g = mg.Graph()
    with g.as_default():
        out = apply_op(op, None, [grad, indices, segment_ids, np.int32(7)], {}).outputs
    got = mg.Session(g).run(out)
    want = _grad_reference(op, grad, indices, segment_ids, 7)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.shape == b.shape
        tol = 2e-3 if dtype == np.float16 else 1e-6
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("op", OPS)
def test_gradient_ops_give_zeros_for_no_indices(op):
    """TensorFlow's V1 ops leave this output uninitialised; minigraph's is zeros."""
    g = mg.Graph()
    with g.as_default():
        empty = np.zeros([0], np.int32)
        out = apply_op(op, None, [np.ones([2, 3]), empty, empty, np.int32(4)], {}).outputs
    got = mg.Session(g).run(out)
    assert got[0].shape == ((0, 3) if op.endswith("V2") else (4, 3))
    assert not got[0].any()


def test_gradient_op_shapes():
    with mg.Graph().as_default():
        g = mg.placeholder(mg.float32, [None, 4, 2])
        i = mg.placeholder(mg.int64, [None])
        s = mg.placeholder(mg.int32, [5])
        out = apply_op("SparseSegmentMeanGrad", None, [g, i, s, np.int32(6)], {}).outputs
        assert out[0].shape.as_list() == [6, 4, 2]
        out = apply_op("SparseSegmentSumGradV2", None, [g, i, s, np.int32(6)], {}).outputs
        assert [o.shape.as_list() for o in out] == [[None, 4, 2], [None]]
        assert out[1].dtype == mg.int64
        n = mg.placeholder(mg.int32, [])
        out = apply_op("SparseSegmentSqrtNGrad", None, [g, i, s, n], {}).outputs
        assert out[0].shape.as_list() == [None, 4, 2]


@pytest.mark.parametrize(
    "args,match",
    [
        (([1.0], [0, 1], [0, 1, 2], 3), "Dimension 0 in both shapes must be equal"),
        (([1.0], [0], [0], -2), "Cannot specify a negative value for output_dim0"),
        ((1.0, [0], [0], 2), "Shape must be at least rank 1 but is rank 0"),
        (([1.0], [[0]], [0], 2), "Shape must be rank 1 but is rank 2"),
        (([1.0], [0], [0], [2]), "Shape must be rank 0 but is rank 1"),
    ],
)
def test_gradient_op_build_errors(args, match):
    grad, indices, ids, dim0 = args
    build_fails(
        lambda: apply_op(
            "SparseSegmentSumGrad",
            None,
            [np.float32(grad), np.int32(indices), np.int32(ids), np.int32(dim0)],
            {},
        ),
        match,
    )


def _fixture_errors():
    with np.load(FIXTURES, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    cases = []
    for i, meta in enumerate(json.loads(str(arrays.pop("meta")))):
        if meta.get("tf_error"):
            own = {k[len(f"{i}/in/") :]: v for k, v in arrays.items() if k.startswith(f"{i}/in/")}
            cases.append((meta["name"], meta, own))
    return cases


ERRORS = _fixture_errors()


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("label,meta,inputs", ERRORS, ids=[c[0] for c in ERRORS])
def test_gradient_op_errors_are_tensorflows(label, meta, inputs):
    """TensorFlow's message, at run time with every shape unknown (its kernel's order)."""
    message = meta["tf_message"].split("}} ", 1)[1].split(" [Op:", 1)[0]
    if message.startswith("Index must be less than 0"):  # TF's kernel, on a 0-d grad
        message = "Shape must be at least rank 1 but is rank 0"
    op_def = mg.registered_ops()[meta["op"]]
    g = mg.Graph()
    with g.as_default():
        phs = [mg.placeholder(mg.as_dtype(inputs[a.name].dtype)) for a in op_def.inputs]
        out = apply_op(meta["op"], None, phs, {}).outputs
    feeds = {p: inputs[a.name] for p, a in zip(phs, op_def.inputs)}
    with pytest.raises(errors.InvalidArgumentError) as e:
        mg.Session(g).run(out, feeds)
    assert message in str(e.value)
    assert e.value.node_name
