"""Gradients of the neural-network ops (ops/nn_grad.py) and their gradient ops
(ops/nn_grad_ops.py): each checked against central differences (float64, shapes known and
unknown), second derivatives through the gradient ops, the graphs they build, and a
2-layer perceptron whose gradients match TensorFlow's (tests/fixtures/training/mlp.npz,
written by tests/tf_oracle/make_training_fixtures.py). TensorFlow's own values for each op
are in tests/fixtures/grads/nn.npz (tests/test_tf_grad_fixtures.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import minigraph as mg
from minigraph import ops
from minigraph.devices import parse_device
from minigraph.optimizer import OptimizerOptions
from minigraph.plan import build_plan
from minigraph.scope import current_scope

TRAINING = Path(__file__).resolve().parent / "fixtures" / "training" / "mlp.npz"
rng = np.random.default_rng(5)


def away(shape, kinks=(0.0,)):
    """float64 values at least 0.1 from each kink (a finite difference across one fails)."""
    x = np.asarray(3 * rng.standard_normal(shape))
    for k in kinks:
        near = np.abs(x - k) < 0.1
        x[near] = k + np.where(x[near] < k, -0.5, 0.5)
    return x


def gradient_error(fn, values, fed=False, delta=1e-6):
    """compute_gradient_error of ``fn(*xs)`` with respect to every x, the xs placeholders
    of the values' shapes (or of unknown shape when ``fed``)."""
    g = mg.Graph()
    with g.as_default():
        xs = [mg.placeholder(mg.float64, None if fed else v.shape) for v in values]
        y = fn(*xs)
        with mg.Session(g) as sess:
            y_shape = np.shape(sess.run(y, dict(zip(xs, values))))
        return mg.test.compute_gradient_error(
            xs, [v.shape for v in values], y, y_shape, x_init_value=values, delta=delta
        )


def second(fn):
    """The function ``xs -> sum of (d(sum fn(xs))/dx) ** 2 over the xs``: its gradient is
    a second derivative."""

    def wrapped(*xs):
        grads = mg.gradients(fn(*xs), list(xs))
        return mg.add_n([mg.reduce_sum(g * g) for g in grads])

    return wrapped


ACTIVATIONS = {
    "Relu": mg.nn.relu,
    "Relu6": mg.nn.relu6,
    "Elu": mg.nn.elu,
    "Selu": mg.nn.selu,
    "Softplus": mg.nn.softplus,
    "LeakyRelu": lambda x: mg.nn.leaky_relu(x, alpha=0.3),
}


@pytest.mark.parametrize("fed", [False, True], ids=["static", "unknown"])
@pytest.mark.parametrize("op", sorted(ACTIVATIONS))
def test_activation_gradients(op, fed):
    x = away((3, 4), kinks=(0.0, 6.0))
    assert gradient_error(ACTIVATIONS[op], [x], fed) < 1e-6
    assert gradient_error(second(ACTIVATIONS[op]), [x], fed) < 1e-6


@pytest.mark.parametrize("op", sorted(ACTIVATIONS))
def test_activation_gradients_use_tensorflows_gradient_ops(op):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [2, 3])
        (dx,) = mg.gradients(ACTIVATIONS[op](x), x)
    want = {"Softplus": "Mul"}.get(op, f"{op}Grad")  # TF's Softplus gradient: grad * sigmoid
    assert dx.op.type == want
    assert dx.op.name.startswith(f"gradients/{op}_grad/")


GRAD_OPS = {
    "ReluGrad": ops.ReluGrad,
    "Relu6Grad": ops.Relu6Grad,
    "EluGrad": ops.EluGrad,
    "SeluGrad": ops.SeluGrad,
    "SoftplusGrad": ops.SoftplusGrad,
    "LeakyReluGrad": lambda s, g, x: ops.LeakyReluGrad(s, g, x, alpha=0.3),
}


@pytest.mark.parametrize("fed", [False, True], ids=["static", "unknown"])
@pytest.mark.parametrize("op", sorted(GRAD_OPS))
def test_gradient_op_gradients(op, fed):
    """The gradient ops' own gradients (TensorFlow's second-order formulas) with respect to
    both inputs. EluGrad and SeluGrad take the forward outputs, which lie above -1 and
    -scale * alpha."""
    low = {"EluGrad": -1.0, "SeluGrad": -1.7}.get(op)
    x = away((2, 3), kinks=(0.0, 6.0))
    if low is not None:
        x = np.maximum(x, low + 0.3)

    def fn(g, x):
        return GRAD_OPS[op](current_scope(), g, x).backprops

    assert gradient_error(fn, [rng.standard_normal((2, 3)), x], fed) < 1e-6


def test_gradient_of_a_gradient_matches_the_second_derivative():
    """d/dx of d/dx softplus(x) is sigmoid'(x), through SoftplusGrad's gradient."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [5])
        (dx,) = mg.gradients(mg.nn.softplus(x), x)
        (d2x,) = mg.gradients(dx, x)
    xv = np.linspace(-3, 3, 5)
    s = 1 / (1 + np.exp(-xv))
    np.testing.assert_allclose(mg.Session(g).run(d2x, {x: xv}), s * (1 - s), rtol=1e-12)


def test_relu_gradient_ops_have_no_gradient_for_integers():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.int32, [3])
        y = mg.cast(mg.nn.relu(x), mg.float32)
        assert mg.gradients(y, x) == [None]


# -- BiasAdd -------------------------------------------------------------------------------


BIAS_CASES = [
    ("NHWC", (2, 3)),
    ("NHWC", (2, 2, 3)),
    ("NCHW", (2, 3, 2, 2)),
    ("NCHW", (2, 3, 4)),
    ("NCHW", (2, 3)),  # rank 2: the bias is last in either format
]


@pytest.mark.parametrize("fed", [False, True], ids=["static", "unknown"])
@pytest.mark.parametrize("fmt,shape", BIAS_CASES)
def test_bias_add_gradients(fmt, shape, fed):
    channels = shape[1] if fmt == "NCHW" and len(shape) > 2 else shape[-1]
    values = [rng.standard_normal(shape), rng.standard_normal(channels)]

    def fn(x, b):
        return mg.nn.bias_add(x, b, data_format=fmt)

    assert gradient_error(fn, values, fed) < 1e-6
    assert gradient_error(second(lambda x, b: fn(x, b) * fn(x, b)), values, fed, 1e-4) < 1e-6


@pytest.mark.parametrize("fmt,shape", BIAS_CASES)
def test_bias_add_grad_sums_all_but_the_channels(fmt, shape):
    """BiasAddGrad against a loop over the channels."""
    x = rng.standard_normal(shape).astype(np.float32)
    axis = 1 if fmt == "NCHW" and len(shape) > 2 else len(shape) - 1
    want = [np.take(x, c, axis=axis).sum(dtype=np.float64) for c in range(shape[axis])]
    g = mg.Graph()
    with g.as_default():
        db = ops.bias_add_grad(x, data_format=fmt)
    assert db.shape.as_list() == [shape[axis]]
    np.testing.assert_allclose(mg.Session(g).run(db), want, rtol=1e-5)


def test_bias_add_grad_errors():
    with mg.Graph().as_default():
        with pytest.raises(mg.errors.InvalidArgumentError, match="at least rank 2"):
            ops.bias_add_grad(np.ones(3, np.float32), name="db")
        p = mg.placeholder(mg.float32)
        db = ops.bias_add_grad(p, name="db_fed")
        with pytest.raises(mg.errors.InvalidArgumentError, match=r"at least 2D: \[3\]") as e:
            mg.Session().run(db, {p: np.ones(3, np.float32)})
    assert e.value.node_name == "db_fed"


def test_gradient_ops_check_their_shapes():
    with mg.Graph().as_default():
        with pytest.raises(mg.errors.InvalidArgumentError, match="Dimension 0 in both shapes"):
            ops.relu_grad(np.ones(2, np.float32), np.ones(3, np.float32))
        a, b = mg.placeholder(mg.float32), mg.placeholder(mg.float32)
        r = ops.elu_grad(a, b, name="r")
        with pytest.raises(mg.errors.InvalidArgumentError) as e:
            mg.Session().run(r, {a: np.ones(2, np.float32), b: np.ones((1, 2), np.float32)})
    assert str(e.value).startswith(
        "Inputs to operation r of type EluGrad must have the same size and shape.  "
        "Input 0: [2] != input 1: [1,2]"
    )


# -- Softmax, LogSoftmax, L2Loss -----------------------------------------------------------


@pytest.mark.parametrize("fed", [False, True], ids=["static", "unknown"])
@pytest.mark.parametrize("op", ["softmax", "log_softmax", "l2_loss"])
@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 2, 3)])
def test_softmax_and_l2_loss_gradients(op, shape, fed):
    fn = getattr(mg.nn, op)
    x = [rng.standard_normal(shape)]
    assert gradient_error(fn, x, fed) < 1e-6
    assert gradient_error(second(fn), x, fed, 1e-5) < 1e-6


# -- cross entropies -----------------------------------------------------------------------


def _probabilities(shape):
    p = rng.random(shape)
    return p / p.sum(axis=-1, keepdims=True)


def _xent(features, labels):
    """Both outputs of SoftmaxCrossEntropyWithLogits, so the walk meets a gradient for each."""
    op = ops.SoftmaxCrossEntropyWithLogits(current_scope(), features, labels)
    return mg.reduce_sum(op.loss) + mg.reduce_sum(op.backprop * op.backprop)


@pytest.mark.parametrize("fed", [False, True], ids=["static", "unknown"])
@pytest.mark.parametrize(
    "features,labels", [((3, 4), (3, 4)), ((1, 4), (3, 4)), ((3, 4), (1, 4)), ((3, 4), (4,))]
)
def test_softmax_cross_entropy_gradients(features, labels, fed):
    """Features and labels, through the loss and the backprop output (the labels'
    gradient takes both, where TensorFlow's drops the backprop's), broadcast or not."""
    values = [rng.standard_normal(features), _probabilities(labels)]

    def loss(f, lab):
        return mg.nn.softmax_cross_entropy_with_logits(labels=lab, logits=f)

    assert gradient_error(loss, values, fed) < 1e-6
    assert gradient_error(_xent, values, fed, 1e-5) < 1e-6
    assert gradient_error(second(loss), values, fed, 1e-5) < 1e-6


@pytest.mark.parametrize("fed", [False, True], ids=["static", "unknown"])
def test_sparse_softmax_cross_entropy_gradients(fed):
    labels = np.array([0, 3, 1], np.int64)

    def loss(f):
        return mg.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=f)

    x = [rng.standard_normal((3, 4))]
    assert gradient_error(loss, x, fed) < 1e-6
    assert gradient_error(second(loss), x, fed, 1e-5) < 1e-6


def test_sparse_labels_get_no_gradient():
    g = mg.Graph()
    with g.as_default():
        f = mg.placeholder(mg.float32, [2, 3])
        lab = mg.placeholder(mg.int32, [2])
        loss = mg.nn.sparse_softmax_cross_entropy_with_logits(labels=lab, logits=f)
        df, dlab = mg.gradients(loss, [f, lab])
    assert df is not None and dlab is None


def test_an_unused_backprop_output_adds_no_second_derivative_ops():
    """As TensorFlow's: the zeros the walk gives the backprop output skip the softmax term."""
    g = mg.Graph()
    with g.as_default():
        f = mg.placeholder(mg.float32, [2, 3])
        loss = mg.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 2], logits=f)
        mg.gradients(loss, f)
    types = {n.type_string for n in g.nodes() if n.name.startswith("gradients/")}
    assert "Softmax" not in types and "BatchMatMulV2" not in types


# -- a 2-layer perceptron, as TensorFlow trains it -----------------------------------------


def _mlp(arrays, dtype, batch_known):
    """The fixture's model and gradients with minigraph, from placeholders."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(dtype, [None if not batch_known else 6, 4], name="x")
        labels = mg.placeholder(mg.int64, [None], name="labels")
        w1, b1, w2, b2 = (mg.constant(arrays[f"in/{k}"], name=k) for k in ("w1", "b1", "w2", "b2"))
        hidden = mg.nn.relu(mg.nn.bias_add(mg.matmul(x, w1), b1))
        logits = mg.nn.bias_add(mg.matmul(hidden, w2), b2)
        losses = mg.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        loss = mg.reduce_mean(losses)
        before = set(g.nodes())
        grads = mg.gradients(loss, [w1, b1, w2, b2, x])
    new_types = sorted(n.type_string for n in g.nodes() if n not in before)
    feeds = {x: arrays["in/x"], labels: arrays["in/labels"]}
    return g, loss, grads, feeds, new_types


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("batch_known", [True, False], ids=["static", "unknown-batch"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mlp_gradients_match_tensorflow(dtype, batch_known):
    with np.load(TRAINING) as data:
        arrays = {k[len(dtype) + 1 :]: data[k] for k in data.files if k.startswith(dtype)}
    g, loss, grads, feeds, new_types = _mlp(arrays, mg.as_dtype(dtype), batch_known)
    got_loss, got = mg.Session(g).run([loss, grads], feeds)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got_loss, arrays["loss"], rtol=rtol)
    for key, value in zip(["w1", "b1", "w2", "b2", "x"], got):
        want = arrays[f"grad/{key}"]
        assert value.dtype == want.dtype and value.shape == want.shape, key
        np.testing.assert_allclose(value, want, rtol=rtol, atol=rtol * 1e-2, err_msg=key)
    # TensorFlow's gradient ops, so the graph exports to TensorFlow as TF built it
    tf_types = json.loads(str(arrays["grad_ops"]))
    for op in ("ReluGrad", "BiasAddGrad", "MatMul"):
        assert new_types.count(op) == tf_types.count(op), op


def test_mlp_trains():
    """Plain gradient descent on the fixture's model lowers its loss."""
    with np.load(TRAINING) as data:
        arrays = {k[len("float64/") :]: data[k] for k in data.files if k.startswith("float64")}
    g, loss, grads, feeds, _ = _mlp(arrays, mg.float64, False)
    params = [arrays[f"in/{k}"] for k in ("w1", "b1", "w2", "b2")]
    consts = [g.get_tensor_by_name(f"{k}:0") for k in ("w1", "b1", "w2", "b2")]
    history = []
    with mg.Session(g) as sess:
        for _ in range(30):
            value, *steps = sess.run([loss, *grads[:4]], {**feeds, **dict(zip(consts, params))})
            history.append(float(value))
            params = [p - 0.5 * s for p, s in zip(params, steps)]
    assert history[-1] < 0.5 * history[0]


@pytest.mark.usefixtures("any_device")
def test_gradient_ops_fuse_with_the_same_bits():
    """The gradient ops run inside elementwise chains (a backward pass's ReluGrad after a
    scale) with the unfused plan's bits, and one chain step replaces them."""
    g = mg.Graph()
    with g.as_default():
        dy = mg.placeholder(mg.float32, [None, 6], name="dy")
        x = mg.placeholder(mg.float32, [None, 6], name="x")
        chain = ops.relu_grad(dy * 2.0, x)
        chain = ops.leaky_relu_grad(chain, x, alpha=0.3)
        chain = ops.elu_grad(chain + 1.0, x)
        chain = ops.selu_grad(chain, x)
        y = ops.relu6_grad(chain, x) * 0.5
    feeds = {dy: rng.standard_normal((500, 6)).astype(np.float32),
             x: (4 * rng.standard_normal((500, 6))).astype(np.float32)}  # fmt: skip
    feeds[x][0, :3] = [0.0, -0.0, 6.0]
    plan = build_plan([y], [], list(feeds), parse_device(None), True, None, OptimizerOptions())
    assert [s.op_type for s in plan.steps].count("_FusedElementwise") == 1
    unfused = mg.ConfigProto(
        graph_options=mg.GraphOptions(
            optimizer_options=OptimizerOptions(do_elementwise_fusion=False)
        )
    )
    fused, plain = mg.Session(g).run(y, feeds), mg.Session(g, config=unfused).run(y, feeds)
    np.testing.assert_array_equal(fused.view(np.int32), plain.view(np.int32))
