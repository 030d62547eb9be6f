"""mg.nn: BiasAdd, activations, Softmax/LogSoftmax, FusedBatchNormV3 (inference; training is
in test_conv_grad.py), TopKV2, InTopKV2 and the losses, against NumPy references written
here and TensorFlow's documented examples. Convolution and pooling are in test_conv_ops.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from op_helpers import gpu_ulps, same_bits

import minigraph as mg
from minigraph import errors

pytestmark = pytest.mark.usefixtures("any_device")  # CPU and (simulated) GPU

FLOATS = [np.float16, np.float32, np.float64]
TOL = {np.float16: 3e-3, np.float32: 2e-6, np.float64: 1e-13}


def run(fn, *args, **kwargs):
    g = mg.Graph()
    with g.as_default():
        out = fn(*args, **kwargs)
    return mg.Session(g).run(out)


def close(got, want, dtype):
    tol = TOL[np.dtype(dtype).type]
    assert got.dtype == dtype
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol)


def float_arrays(dtype, min_dims=1, max_dims=3, max_side=5, nonfinite=True):
    finite = st.floats(-30, 30, width=np.finfo(dtype).bits)
    special = st.sampled_from([np.nan, np.inf, -np.inf])
    return hnp.arrays(
        dtype,
        hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=max_side),
        elements=st.one_of(finite, special) if nonfinite else finite,
    )


def test_nn_namespace():
    names = {
        "bias_add", "relu", "relu6", "elu", "selu", "leaky_relu", "softplus", "softmax",
        "log_softmax", "max_pool", "avg_pool", "depthwise_conv2d_native", "conv2d",
        "fused_batch_norm", "top_k", "in_top_k", "l2_loss", "softmax_cross_entropy_with_logits",
        "sparse_softmax_cross_entropy_with_logits",
    }  # fmt: skip
    assert names <= set(mg.nn.__all__)
    assert all(callable(getattr(mg.nn, n)) for n in names)
    assert mg.nn.conv2d is mg.conv2d and "nn" in mg.__all__
    for op in ("BiasAdd", "Relu", "FusedBatchNormV3", "TopKV2", "InTopKV2", "L2Loss",
               "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits",
               "MaxPool", "AvgPool", "DepthwiseConv2dNative", "Conv2D"):  # fmt: skip
        assert mg.registered_ops()[op].kernel_devices == {"CPU", "GPU"}
        assert hasattr(mg.ops, op)


# -- BiasAdd ---------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    hnp.array_shapes(min_dims=2, max_dims=5, min_side=0, max_side=4),
    st.sampled_from(["NHWC", "NCHW"]),
    st.sampled_from([np.float32, np.float64, np.int32, np.int64, np.uint8, np.complex64]),
)
def test_bias_add_matches_reference(shape, fmt, dtype):
    rng = np.random.default_rng(len(shape))
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    axis = 1 if fmt == "NCHW" and len(shape) >= 3 else len(shape) - 1
    b = (rng.standard_normal(shape[axis]) * 10).astype(dtype)
    bshape = [1] * len(shape)
    bshape[axis] = shape[axis]
    got = run(mg.nn.bias_add, x, b, data_format=fmt)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, x + b.reshape(bshape), rtol=1e-6)


def test_bias_add_examples_and_errors():
    np.testing.assert_array_equal(
        run(mg.nn.bias_add, np.zeros((2, 3, 4), np.float32), np.arange(3.0, dtype=np.float32),
            "NCHW")[1],  # TF 2.21: channels in dim 1 for rank-3 NCHW
        [[0.0] * 4, [1.0] * 4, [2.0] * 4],
    )  # fmt: skip
    with mg.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match="as many biases") as e:
            mg.nn.bias_add(np.zeros((2, 3), np.float32), np.zeros(2, np.float32), name="b")
        assert e.value.node_name == "b"
        with pytest.raises(errors.InvalidArgumentError, match="at least rank 2"):
            mg.nn.bias_add(np.zeros(3, np.float32), np.zeros(3, np.float32))
        with pytest.raises(errors.InvalidArgumentError, match="rank 1"):
            mg.nn.bias_add(np.zeros((2, 3), np.float32), np.zeros((1, 3), np.float32))
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.float32, None)
        y = mg.nn.bias_add(p, np.zeros(2, np.float32), name="late")
    with pytest.raises(errors.InvalidArgumentError, match=r"\[2\] vs. \[2,3\]") as e:
        mg.Session(g).run(y, {p: np.zeros((2, 3), np.float32)})
    assert e.value.node_name == "late"


# -- activations -----------------------------------------------------------------------------

SELU_SCALE, SELU_ALPHA = 1.0507009873554805, 1.6732632423543772

ACTIVATIONS = {
    "relu": lambda x: np.where(x < 0, 0, x),
    "relu6": lambda x: np.where(x < 0, 0, np.where(x > 6, 6, x)),
    "elu": lambda x: np.where(x < 0, np.expm1(np.minimum(x, 0)), x),
    "selu": lambda x: np.where(
        x < 0, SELU_SCALE * SELU_ALPHA * np.expm1(np.minimum(x, 0)), SELU_SCALE * x
    ),  # fmt: skip
    "leaky_relu": lambda x: np.where(x > 0, x, 0.2 * x),
    "softplus": lambda x: np.where(x > 30, x, np.log1p(np.exp(np.minimum(x, 30)))),
}


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(sorted(ACTIVATIONS)), st.sampled_from(FLOATS), st.data())
def test_activations_match_reference(name, dtype, data):
    x = data.draw(float_arrays(dtype))
    with np.errstate(all="ignore"):
        want = ACTIVATIONS[name](x.astype(np.float64))
    close(run(getattr(mg.nn, name), x), want, dtype)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint16])
def test_relu_relu6_on_integers(dtype):
    info = np.iinfo(dtype)
    x = np.array([info.min, -1 if info.min else 0, 0, 3, 6, 7, info.max], dtype)
    np.testing.assert_array_equal(run(mg.nn.relu, x), np.maximum(x, 0).astype(dtype))
    r6 = run(mg.nn.relu6, x)
    assert r6.dtype == dtype
    np.testing.assert_array_equal(r6, np.clip(x, 0, 6).astype(dtype))


def test_activation_documented_examples():
    # tf.nn.relu, tf.nn.leaky_relu, tf.nn.softplus docs; TF 2.21 for NaN and alpha.
    x = np.array([-10.0, -5.0, 0.0, 5.0, 10.0], np.float32)
    np.testing.assert_array_equal(run(mg.nn.relu, x), [0, 0, 0, 5, 10])
    np.testing.assert_allclose(run(mg.nn.leaky_relu, np.array([-1.0, 2.0])), [-0.2, 2.0])
    lr = run(mg.nn.leaky_relu, np.array([np.nan, -1, 7, -np.inf], np.float32), alpha=2.0)
    np.testing.assert_array_equal(lr, [np.nan, -2, 7, -np.inf])
    sp = run(mg.nn.softplus, np.array([-100, -20, 0, 20, 100], np.float32))
    np.testing.assert_allclose(sp, [0, 2.0611537e-09, 0.6931472, 20, 100], rtol=1e-6, atol=1e-30)
    elu = run(mg.nn.elu, np.array([np.nan, -1, 7, -np.inf], np.float32))
    np.testing.assert_allclose(elu, [np.nan, -0.63212055, 7, -1], rtol=1e-6)
    assert np.isnan(run(mg.nn.relu6, np.array([np.nan], np.float32))).all()


def test_activation_errors_name_the_node():
    with mg.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match="not in the list") as e:
            mg.nn.elu(np.array([1, 2], np.int32), name="e")
        assert e.value.node_name == "e"
        with pytest.raises(errors.InvalidArgumentError, match="not in the list"):
            mg.nn.relu(np.array([True]))
        y = mg.nn.leaky_relu(np.ones(2, np.float32), 0.5, "lr")
        assert y.op.node.attrs["alpha"] == 0.5 and y.op.name == "lr"


# -- Softmax, LogSoftmax ---------------------------------------------------------------------


def ref_log_softmax(x, axis=-1):
    with np.errstate(all="ignore"):
        shifted = x - x.max(axis=axis, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(FLOATS), st.booleans(), st.data())
def test_softmax_log_softmax_match_reference(dtype, log, data):
    x = data.draw(float_arrays(dtype, max_dims=3, nonfinite=data.draw(st.booleans())))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    if x.shape[axis] == 0:
        want = np.empty(x.shape)
    else:
        want = ref_log_softmax(x.astype(np.float64), axis)
        want = want if log else np.exp(want)
    got = run(mg.nn.log_softmax if log else mg.nn.softmax, x, axis=axis)
    assert got.shape == x.shape
    close(got, want, dtype)


def test_softmax_examples_and_errors():
    # tf.nn.softmax doc: softmax([-1, 0., 1.]) = [0.09003057, 0.24472848, 0.66524094]
    got = run(mg.nn.softmax, np.array([-1.0, 0.0, 1.0], np.float32))
    np.testing.assert_allclose(got, [0.09003057, 0.24472848, 0.66524094], rtol=1e-6)
    big = run(mg.nn.softmax, np.array([1000.0, 1000.0]))  # no overflow
    np.testing.assert_array_equal(big, [0.5, 0.5])
    ls = run(mg.nn.log_softmax, np.array([[0, 1], [-np.inf, 0]], np.float32))  # TF 2.21
    np.testing.assert_allclose(ls, [[-1.3132616, -0.31326166], [-np.inf, 0]], rtol=1e-6)
    with mg.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match=">= 1 dimension") as e:
            mg.nn.softmax(np.float32(1), name="s")
        assert e.value.node_name == "s"
        with pytest.raises(errors.InvalidArgumentError, match="not in the list"):
            mg.nn.log_softmax(np.array([1, 2]))
        with pytest.raises(errors.InvalidArgumentError, match=r"range \[-1, 1\)"):
            mg.nn.softmax(np.ones(3), axis=1)


# -- FusedBatchNormV3 ------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(["NHWC", "NCHW", "NDHWC", "NCDHW"]),
    st.sampled_from([np.float16, np.float32]),
    st.integers(0, 3),
    st.integers(1, 4),
    st.floats(1e-5, 0.1),
)
def test_fused_batch_norm_matches_reference(fmt, dtype, n, c, eps):
    rng = np.random.default_rng(n * 10 + c)
    rank = 5 if "D" in fmt else 4
    shape = [n, 3, 2, c] if rank == 4 else [n, 2, 3, 2, c]
    if fmt.startswith("NC"):
        shape = [shape[0], c, *shape[1:-1]]
    x = rng.standard_normal(shape).astype(dtype)
    scale, offset, mean = (rng.standard_normal(c).astype(np.float32) for _ in range(3))
    var = rng.random(c).astype(np.float32) + 0.5
    bshape = [1] * rank
    bshape[1 if fmt.startswith("NC") else -1] = c
    want = (x.astype(np.float64) - mean.reshape(bshape)) / np.sqrt(
        var.reshape(bshape).astype(np.float64) + np.float32(max(eps, 1.001e-5))
    ) * scale.reshape(bshape) + offset.reshape(bshape)
    y, bm, bv = run(mg.nn.fused_batch_norm, x, scale, offset, mean, var, eps, fmt, False)
    close(y, want, dtype)
    np.testing.assert_array_equal(bm, mean)
    np.testing.assert_array_equal(bv, var)


def test_fused_batch_norm_outputs_and_errors():
    x = np.arange(36, dtype=np.float32).reshape(2, 3, 3, 2)
    one, zero = np.ones(2, np.float32), np.zeros(2, np.float32)
    root = mg.Scope.new_root_scope()
    op = mg.ops.FusedBatchNormV3(root.with_op_name("bn"), x, one, zero, one, one, is_training=False)
    outs = mg.Session(root.graph).run([op.y, op.batch_mean, op.batch_variance, op.reserve_space_1,
                              op.reserve_space_2, op.reserve_space_3])  # fmt: skip
    np.testing.assert_allclose(outs[0].reshape(-1)[:3], [-0.99995005, 0.0, 0.99995005], 1e-6)
    assert [o.shape for o in outs[1:]] == [(2,), (2,), (2,), (2,), (0,)]
    with mg.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match="mean must have the same number"):
            mg.nn.fused_batch_norm(x, one, zero, np.ones(3, np.float32), one, is_training=False)
        with pytest.raises(errors.InvalidArgumentError, match="rank 4"):
            mg.nn.fused_batch_norm(x[0], one, zero, one, one)
        with pytest.raises(errors.InvalidArgumentError, match="not in the list"):
            mg.nn.fused_batch_norm(x.astype(np.float64), one, zero, one, one)


# -- TopKV2, InTopKV2 ------------------------------------------------------------------------


def ref_top_k(x, k):
    """Largest first, equal values lower index first; NaN counts as the largest."""
    key = np.where(np.isnan(x), np.inf, x) if x.dtype.kind == "f" else x.astype(np.float64)
    nan_first = np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool)
    idx = np.empty(x.shape[:-1] + (k,), np.int64)
    for pos in np.ndindex(x.shape[:-1]):
        row = sorted(range(x.shape[-1]), key=lambda i: (not nan_first[pos][i], -key[pos][i], i))
        idx[pos] = row[:k]
    return np.take_along_axis(x, idx, axis=-1), idx


@settings(max_examples=30, deadline=None)
@given(
    hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6),
    st.sampled_from([np.float32, np.float64, np.int32, np.uint8, np.int64, np.float16]),
    st.sampled_from([np.int32, np.int64]),
    st.data(),
)
def test_top_k_matches_reference(shape, dtype, index_type, data):
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(0, 4, shape).astype(dtype)  # many ties
    if x.dtype.kind == "f" and x.size:
        x.flat[rng.integers(0, x.size)] = np.nan
    k = data.draw(st.integers(0, shape[-1]))
    root = mg.Scope.new_root_scope()
    op = mg.ops.TopKV2(root, x, k, index_type=index_type)
    values, indices = mg.Session(root.graph).run([op.values, op.indices])
    want_v, want_i = ref_top_k(x, k)
    assert indices.dtype == index_type and values.dtype == dtype
    np.testing.assert_array_equal(indices, want_i)
    np.testing.assert_array_equal(values, want_v)


def test_top_k_examples_and_errors():
    v, i = run(mg.nn.top_k, np.array([[1, 3, 3, 2]], np.float32), 3)  # TF 2.21
    np.testing.assert_array_equal(v, [[3, 3, 2]])
    np.testing.assert_array_equal(i, [[1, 2, 3]])
    v, i = run(mg.nn.top_k, np.array([1.0, np.nan, 3.0, 2.0], np.float32), k=2)
    np.testing.assert_array_equal(v, [np.nan, 3])
    np.testing.assert_array_equal(i, [1, 2])
    with mg.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match="Had 2, needed 3") as e:
            mg.nn.top_k(np.array([[1.0, 3.0]]), 3, name="t")
        assert e.value.node_name == "t"
        with pytest.raises(errors.InvalidArgumentError, match="Need k >= 0, got -1"):
            mg.nn.top_k(np.array([1.0]), -1)
        with pytest.raises(errors.InvalidArgumentError, match="at least rank 1"):
            mg.nn.top_k(np.float32(1.0))
    g = mg.Graph()
    with g.as_default():
        k = mg.placeholder(mg.int32, [])
        v, _ = mg.nn.top_k(np.array([[1.0, 3.0]]), k, name="late")
    assert v.shape.as_list() == [1, None]
    with pytest.raises(errors.InvalidArgumentError, match="Had 2, needed 5") as e:
        mg.Session(g).run(v, {k: 5})
    assert e.value.node_name == "late"


def ref_in_top_k(p, t, k):
    out = []
    for row, target in zip(p, t):
        if not 0 <= target < len(row) or not np.isfinite(row).all():
            out.append(False)
        else:
            out.append(int((row > row[target]).sum()) < k)
    return np.array(out, bool)


@settings(max_examples=30, deadline=None)
@given(
    st.integers(0, 5), st.integers(0, 5), st.integers(-1, 6), st.sampled_from([np.int32, np.int64])
)
def test_in_top_k_matches_reference(batch, classes, k, tdtype):
    rng = np.random.default_rng(batch * 7 + classes)
    p = rng.integers(0, 3, (batch, classes)).astype(np.float32)
    if p.size > 2:
        p.flat[rng.integers(0, p.size)] = rng.choice([np.nan, np.inf, 1.0])
    t = rng.integers(-1, classes + 2, batch).astype(tdtype)
    got = run(mg.nn.in_top_k, p, t, tdtype(k))
    np.testing.assert_array_equal(got, ref_in_top_k(p, t, k))


def test_in_top_k_doc_example_and_errors():
    # tf.math.in_top_k doc example
    pred = np.array([[1.2, 3.4, 5.6, 7.8], [0.5, 0.9, 1.1, 2.3], [5.1, 2.1, 7.4, 9.2]], np.float32)
    got = run(mg.nn.in_top_k, pred, np.array([0, 1, 3], np.int32), 2)
    np.testing.assert_array_equal(got, [False, False, True])
    with mg.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match="must match length of targets 2"):
            mg.nn.in_top_k(pred[:1], np.array([1, 2], np.int32), 1, name="i")
        p64 = mg.placeholder(mg.float64, [3, 4])
        with pytest.raises(errors.InvalidArgumentError, match="float32"):
            mg.nn.in_top_k(p64, np.array([1, 2, 0], np.int32), 1)


# -- losses ----------------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(FLOATS), st.data())
def test_l2_loss_matches_reference(dtype, data):
    x = data.draw(float_arrays(dtype, min_dims=0, nonfinite=False))
    close(run(mg.nn.l2_loss, x), (x.astype(np.float64) ** 2).sum() / 2, dtype)


def test_l2_loss_example():
    got = run(mg.nn.l2_loss, np.array([1.0, 2.0, 3.0], np.float32))
    assert got.shape == () and got == 7.0


def ref_xent(f, lab):
    ls = ref_log_softmax(f.astype(np.float64))
    return -(lab * ls).sum(axis=-1), np.exp(ls) - lab


@settings(max_examples=30, deadline=None)
@given(
    st.integers(0, 4),
    st.integers(1, 5),
    st.sampled_from(FLOATS),
    st.sampled_from(["none", "labels_row", "features_row"]),
)
def test_softmax_cross_entropy_matches_reference(batch, classes, dtype, bcast):
    rng = np.random.default_rng(batch * 11 + classes)
    f = (rng.standard_normal((batch, classes)) * 5).astype(dtype)
    lab = rng.dirichlet(np.ones(classes), batch).astype(dtype)
    if bcast == "labels_row":
        lab = lab[:1] if batch else lab.reshape(0, classes)[:0]
        lab = rng.dirichlet(np.ones(classes), 1).astype(dtype)
    elif bcast == "features_row":
        f = f[:1] if batch == 1 else (rng.standard_normal((1, classes)) * 5).astype(dtype)
    root = mg.Scope.new_root_scope()
    op = mg.ops.SoftmaxCrossEntropyWithLogits(root, f, lab)
    loss, back = mg.Session(root.graph).run([op.loss, op.backprop])
    shape = np.broadcast_shapes(f.shape, lab.shape)
    fb, lb = np.broadcast_to(f, shape), np.broadcast_to(lab, shape).astype(np.float64)
    want_loss, want_back = ref_xent(fb, lb)
    close(loss, want_loss, dtype)
    close(back, want_back, dtype)


def test_softmax_cross_entropy_examples_and_errors():
    # TF 2.21: logits [[0,0,0]]*2, labels [[0,1,0]] broadcast -> loss log 3, backprop.
    root = mg.Scope.new_root_scope()
    op = mg.ops.SoftmaxCrossEntropyWithLogits(
        root, np.zeros((2, 3), np.float32), np.array([[0, 1, 0]], np.float32)
    )
    r_loss, r_back = mg.Session(root.graph).run([op.loss, op.backprop])
    r2 = run(
        mg.nn.softmax_cross_entropy_with_logits,
        labels=np.array([[0.0, 1.0]]),
        logits=np.array([[0.0, np.log(3.0)]]),
    )
    np.testing.assert_allclose(r_loss, [1.0986123, 1.0986123], rtol=1e-6)
    np.testing.assert_allclose(r_back, [[1 / 3, -2 / 3, 1 / 3]] * 2, rtol=1e-6)
    np.testing.assert_allclose(r2, [-np.log(0.75)])
    with mg.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match="rank 2") as e:
            mg.nn.softmax_cross_entropy_with_logits(np.zeros(3), np.zeros(3), name="x")
        assert e.value.node_name == "x"
        with pytest.raises(errors.InvalidArgumentError, match="Incompatible shapes"):
            mg.nn.softmax_cross_entropy_with_logits(np.zeros((2, 4)), np.zeros((2, 3)))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 4), st.integers(1, 5), st.sampled_from(FLOATS),
       st.sampled_from([np.int32, np.int64]))  # fmt: skip
def test_sparse_softmax_cross_entropy_matches_reference(batch, classes, dtype, ldtype):
    rng = np.random.default_rng(batch * 13 + classes)
    f = (rng.standard_normal((batch, classes)) * 5).astype(dtype)
    lab = rng.integers(0, classes, batch).astype(ldtype)
    root = mg.Scope.new_root_scope()
    op = mg.ops.SparseSoftmaxCrossEntropyWithLogits(root, f, lab)
    loss, back = mg.Session(root.graph).run([op.loss, op.backprop])
    want_loss, want_back = ref_xent(f, np.eye(classes)[lab])
    close(loss, want_loss, dtype)
    close(back, want_back, dtype)


def test_sparse_softmax_cross_entropy_errors():
    message = (
        r"Received a label value of 5 which is outside the valid range of \[0, 3\)\.  "
        r"Label values: 0 5 1"
    )
    for fed in (False, True):
        g = mg.Graph()
        with g.as_default():
            labels = mg.placeholder(mg.int32, [3]) if fed else np.array([0, 5, 1], np.int32)
            loss = mg.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=np.zeros((3, 3), np.float32), name="s"
            )
        with pytest.raises(errors.InvalidArgumentError, match=message) as e:
            mg.Session(g).run(loss, {labels: np.array([0, 5, 1], np.int32)} if fed else None)
        assert e.value.node_name == "s"
    with mg.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match="same first dimension"):
            mg.nn.sparse_softmax_cross_entropy_with_logits(
                labels=np.array([0, 1]), logits=np.zeros((3, 2))
            )
        with pytest.raises(errors.InvalidArgumentError, match="rank 1"):
            mg.nn.sparse_softmax_cross_entropy_with_logits(
                labels=np.zeros((3, 1), np.int32), logits=np.zeros((3, 2))
            )
    g = mg.Graph()
    with g.as_default():
        y = mg.nn.sparse_softmax_cross_entropy_with_logits(
            labels=np.array([0, -1], np.int64), logits=np.zeros((2, 3))
        )
    with pytest.raises(errors.InvalidArgumentError, match="label value of -1"):
        mg.Session(g).run(y)


@pytest.mark.parametrize("alpha", [0.0, 1e-5, 0.2, 1.0, 3.5, -0.5])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_leaky_relu_is_the_select_bitwise(alpha, dtype):
    # x where x > 0, else alpha * x: for every alpha, with NaN, +-inf and +-0 among the values.
    # alpha is TensorFlow's float attr: a float32, converted to the dtype (as TF's kernel).
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(3000) * 10).astype(dtype)
    x[:6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, -1e-3]
    with np.errstate(all="ignore"):
        want = np.where(x > 0, x, x * dtype(np.float32(alpha)))
    got = run(mg.nn.leaky_relu, x, alpha=alpha)
    same_bits(got, want)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_elu_and_selu_choose_their_branch_bitwise(dtype):
    # 6400 elements: the branch is chosen through an integer mask (ops.common.select_bits).
    rng = np.random.default_rng(6)
    x = (rng.standard_normal(6400) * 5).astype(dtype)
    x[:5] = [np.nan, -0.0, 0.0, -np.inf, np.inf]
    with np.errstate(all="ignore"):
        neg = np.expm1(np.minimum(x, 0))
        want_elu = np.where(x < 0, neg, x)
        scale, alpha = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
        want_selu = np.where(x < 0, (scale * alpha) * neg, scale * x).astype(dtype)
    for build, want, name in ((mg.nn.elu, want_elu, "elu"), (mg.nn.selu, want_selu, "selu")):
        same_bits(run(build, x), want, gpu_ulps(name, dtype))
