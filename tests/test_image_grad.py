"""Gradients of the resize ops (ops/image_grad.py), the resize gradient ops
(ops/image_grad_ops.py) and what is not differentiable in the image and detection ops.

TensorFlow's gradients are replayed from tests/fixtures/grads/image.npz and its gradient
ops' values from tests/fixtures/ops/image_grad_ops.npz (within tolerance) by the fixture
tests. Here: every resize gradient against central differences (float64, every
coordinate mode, up and down), ResizeNearestNeighborGrad bit for bit against TensorFlow,
TF's messages, unknown shapes, and NonMaxSuppression as TensorFlow differentiates it.
"""

import json
from pathlib import Path

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors
from minigraph.wrappers import apply_op

rng = np.random.default_rng(2731)
OPS_FIXTURES = Path(__file__).parent / "fixtures" / "ops"
MODES = {
    "legacy": {},
    "align_corners": {"align_corners": True},
    "half_pixel": {"half_pixel_centers": True},
}
RESIZES = {
    "bilinear": mg.resize_bilinear,
    "nearest": mg.resize_nearest_neighbor,
    "bicubic": mg.resize_bicubic,
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", RESIZES)
@pytest.mark.parametrize(
    "shape,size", [([1, 3, 4, 2], [5, 7]), ([2, 5, 6, 1], [3, 2]), ([1, 1, 3, 1], [2, 5])]
)
def test_resize_gradients_match_finite_differences(method, mode, shape, size):
    """A resize is linear in the image (its float32 result too), so central differences at
    0 with a step of 1 give its Jacobian exactly: the weights, which the gradient must
    send back to the same pixels."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, shape)
        y = RESIZES[method](x, size, **MODES[mode])
        err = mg.test.compute_gradient_error(
            x, shape, y, y.shape.as_list(), x_init_value=np.zeros(shape), delta=1.0
        )
    assert err < 1e-6


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("method", RESIZES)
def test_unknown_shapes_give_the_same_gradients(method):
    """An image of unknown shape: ResizeNearestNeighborGrad's size is sliced from its
    Shape, the other gradient ops read the image's shape when run."""
    x0 = rng.standard_normal([2, 3, 5, 2])
    w = rng.standard_normal([2, 4, 3, 2])
    results = []
    for known in (True, False):
        g = mg.Graph()
        with g.as_default():
            x = mg.placeholder(mg.float64, x0.shape if known else None)
            y = RESIZES[method](x, [4, 3], half_pixel_centers=True)
            (dx,) = mg.gradients(y, [x], grad_ys=w.astype(y.dtype.np))
        assert dx.dtype == mg.float64
        results.append(mg.Session(g).run(dx, {x: x0}))
    np.testing.assert_array_equal(results[0], results[1])


def _cases():
    with np.load(OPS_FIXTURES / "image_grad_ops.npz") as data:
        arrays = {k: data[k] for k in data.files}
    cases = []
    for i, meta in enumerate(json.loads(str(arrays.pop("meta")))):
        inputs = {k.split("/", 2)[2]: v for k, v in arrays.items() if k.startswith(f"{i}/in/")}
        cases.append((meta["name"], meta, inputs, arrays.get(f"{i}/out/0")))
    return cases


CASES = _cases()
NEAREST = [c for c in CASES if c[1]["op"] == "ResizeNearestNeighborGrad" and c[3] is not None]
ERRORS = [c for c in CASES if c[1].get("tf_error")]


def _op(meta, inputs):
    op_def = mg.registered_ops()[meta["op"]]
    return apply_op(meta["op"], None, [inputs[a.name] for a in op_def.inputs], meta["attrs"])


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("name,meta,inputs,want", NEAREST, ids=[c[0] for c in NEAREST])
def test_nearest_neighbor_grad_is_bit_identical_to_tensorflow(name, meta, inputs, want):
    """Each input pixel's copies summed in TensorFlow's order (rows, then columns)."""
    g = mg.Graph()
    with g.as_default():
        out = _op(meta, inputs).outputs[0]
    got = mg.Session(g).run(out)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))


@pytest.mark.parametrize("known", [True, False], ids=["build", "run"])
@pytest.mark.parametrize("name,meta,inputs,want", ERRORS, ids=[c[0] for c in ERRORS])
def test_resize_gradient_ops_give_tensorflows_messages(name, meta, inputs, want, known):
    message = meta["tf_message"].split("}} ", 1)[-1].split(" [Op:")[0]
    with pytest.raises(errors.InvalidArgumentError) as e:
        g = mg.Graph()
        with g.as_default():
            phs = {k: mg.placeholder(mg.as_dtype(v.dtype), v.shape if known else None)
                   for k, v in inputs.items()}  # fmt: skip
            out = _op(meta, phs).outputs[0]
        mg.Session(g).run(out, {phs[k]: v for k, v in inputs.items()})
    # at build time a rank is TF's shape function's message (as its graph mode says it)
    shape_fn = ("Shape must be rank", "Dimension must be 2")
    assert message in str(e.value) or (known and any(m in str(e.value) for m in shape_fn))
    assert e.value.node_name


def test_integer_images_get_no_gradient():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [1, 2, 2, 1])
        ints = mg.cast(x, mg.int32)
        y = mg.resize_bilinear(ints, [3, 3]) + mg.resize_bicubic(ints, [3, 3])
        assert mg.gradients(y, [x]) == [None]
        assert mg.gradients(mg.resize_nearest_neighbor(ints, [3, 3]), [ints]) == [None]


def test_non_max_suppression_is_differentiated_as_tensorflow():
    """V3 and V4 return indices: nothing flows (None). V5's selected_scores is a float with
    no gradient registered, as in TensorFlow (LookupError there, NoGradientError here)."""
    boxes = np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3]], np.float32)
    g = mg.Graph()
    with g.as_default():
        b, s = mg.constant(boxes), mg.constant(np.float32([0.9, 0.8, 0.7]))
        v3 = apply_op("NonMaxSuppressionV3", None, [b, s, 2, 0.5, 0.0], {}).outputs[0]
        v4 = apply_op("NonMaxSuppressionV4", None, [b, s, 2, 0.5, 0.0], {}).outputs[0]
        assert mg.gradients(mg.cast(v3, mg.float32), [b, s]) == [None, None]
        assert mg.gradients(mg.cast(v4, mg.float32), [b, s]) == [None, None]
        v5 = apply_op("NonMaxSuppressionV5", None, [b, s, 2, 0.5, 0.0, 0.0], {}).outputs
        with pytest.raises(errors.NoGradientError, match="NonMaxSuppressionV5"):
            mg.gradients(v5[1], [s])
        # ResizeBilinearGrad is not differentiable (TensorFlow's NotDifferentiable)
        x = mg.constant(rng.standard_normal([1, 2, 2, 1]).astype(np.float32))
        (dx,) = mg.gradients(mg.resize_bilinear(x, [3, 3]), [x], grad_ys=np.ones([1, 3, 3, 1]))
        assert mg.gradients(dx, [x]) == [None]
