"""CropAndResize's gradient (ops/image_grad.py) and its gradient ops
(ops/crop_resize_grad_ops.py).

TensorFlow's gradients are replayed from tests/fixtures/grads/detection.npz by
test_tf_grad_fixtures.py, the ops' values and messages from
tests/fixtures/ops/detection_grad_ops.npz by test_tf_op_fixtures.py. Here: the gradients
against central differences (CropAndResize's crops and boxes are float32, so float32 bounds),
CropAndResizeGradImage against a loop written here, on every device; unknown shapes; an
integer image gets no gradient.
"""

import numpy as np
import pytest

import minigraph as mg
from minigraph.wrappers import apply_op

rng = np.random.default_rng(2730)
# sample positions away from whole pixels, where the bilinear blend has no kink
BOXES = np.array([[0.13, 0.21, 0.88, 0.69], [0.81, 0.93, 0.07, 0.12]], np.float32)
IND = np.array([1, 0], np.int32)


def _crop(image, boxes, size=(3, 4), method="bilinear"):
    return mg.crop_and_resize(image, boxes, IND, list(size), method=method)


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
@pytest.mark.parametrize("size", [(3, 4), (1, 1)])
def test_image_gradient_matches_finite_differences(method, size):
    x0 = rng.standard_normal([2, 5, 6, 2])
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, x0.shape)
        y = _crop(x, BOXES, size, method)
        err = mg.test.compute_gradient_error(x, list(x0.shape), y, y.shape.as_list(),
                                             x_init_value=x0)  # fmt: skip
    assert err < 1e-3  # the crops are float32 (errors seen: 4e-5 to 2e-4)


@pytest.mark.parametrize("size", [(3, 4), (1, 1), (1, 3)])
def test_boxes_gradient_matches_finite_differences(size):
    x0 = rng.standard_normal([2, 5, 6, 2]).astype(np.float32)
    g = mg.Graph()
    with g.as_default():
        b = mg.placeholder(mg.float32, BOXES.shape)
        y = _crop(x0, b, size)
        err = mg.test.compute_gradient_error(b, list(BOXES.shape), y, y.shape.as_list(),
                                             x_init_value=BOXES, delta=1e-3)  # fmt: skip
    assert err < 5e-3  # float32 boxes and crops, step 1e-3 (errors seen: 1e-4 to 4e-4)


def _positions(lo, hi, size, in_size):
    """Sample positions along one axis in float32, as TensorFlow's kernel computes them."""
    f = np.float32
    if size == 1:
        return [f(0.5 * (float(lo) + float(hi)) * (in_size - 1))]
    scale = (f(hi) - f(lo)) * f(in_size - 1) / f(size - 1)
    return [f(lo) * f(in_size - 1) + f(i) * scale for i in range(size)]


def _grad_image_reference(grads, boxes, ind, shape, method):
    """TensorFlow's CropAndResizeBackpropImage: loops over boxes, samples and corners."""
    out = np.zeros(shape, np.float64)
    _, h, w, _ = shape
    n, ch, cw, _ = grads.shape
    for b in range(n):
        y1, x1, y2, x2 = boxes[b]
        for i, y in enumerate(_positions(y1, y2, ch, h)):
            if not 0 <= y <= h - 1:
                continue
            for j, x in enumerate(_positions(x1, x2, cw, w)):
                if not 0 <= x <= w - 1:
                    continue
                gv = grads[b, i, j].astype(np.float64)
                if method == "nearest":
                    out[ind[b], int(np.floor(y + 0.5)), int(np.floor(x + 0.5))] += gv
                    continue
                t, le, bo, r = (int(v) for v in (np.floor(y), np.floor(x), np.ceil(y), np.ceil(x)))
                dy, dx = float(y - t), float(x - le)
                out[ind[b], t, le] += (1 - dy) * (1 - dx) * gv
                out[ind[b], t, r] += (1 - dy) * dx * gv
                out[ind[b], bo, le] += dy * (1 - dx) * gv
                out[ind[b], bo, r] += dy * dx * gv
    return out


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_grad_image_matches_a_loop(method):
    boxes = np.array([[0.1, 0.2, 0.9, 0.7], [0.8, 0.9, 0.05, 0.1], [-0.3, 0.4, 1.2, 1.1]],
                     np.float32)  # fmt: skip
    ind = np.array([1, 0, 1], np.int32)
    grads = rng.standard_normal([3, 4, 3, 2]).astype(np.float32)
    g = mg.Graph()
    with g.as_default():
        out = apply_op("CropAndResizeGradImage", None,
                       [grads, boxes, ind, np.array([2, 5, 6, 2], np.int32)],
                       {"T": mg.float64, "method": method}).outputs[0]  # fmt: skip
    got = mg.Session(g).run(out)
    want = _grad_image_reference(grads, boxes, ind, (2, 5, 6, 2), method)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.usefixtures("any_device")
def test_unknown_shapes_and_integer_images():
    """An image of unknown shape gets its gradient's image_size from a Shape node; an
    integer image gets none, its boxes still do."""
    x0 = rng.standard_normal([2, 5, 6, 2]).astype(np.float32)
    results = []
    for known in (True, False):
        g = mg.Graph()
        with g.as_default():
            x = mg.placeholder(mg.float32, x0.shape if known else None)
            b = mg.placeholder(mg.float32, BOXES.shape if known else None)
            y = _crop(x, b)
            grads = mg.gradients(mg.reduce_sum(y * y), [x, b])
        results.append(mg.Session(g).run(grads, {x: x0, b: BOXES}))
    for a, c in zip(*results):
        np.testing.assert_array_equal(a, c)
    g = mg.Graph()
    with g.as_default():
        x = mg.constant(rng.integers(0, 9, [2, 5, 6, 2]).astype(np.int32))
        b = mg.constant(BOXES)
        dx, db = mg.gradients(_crop(x, b), [x, b])
    assert dx is None
    assert mg.Session(g).run(db).shape == BOXES.shape
