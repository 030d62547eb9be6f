"""On a real GPU: the detection ops' row-product kernel multiplies as NumPy's sequential
cumprod does, and NMS and CropAndResize give the CPU's bits (CuPy's own sorts, searches,
bit views and takes included)."""

import numpy as np
import pytest

import minigraph as mg
from minigraph.ops import detection_ops


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_row_products_kernel(cupy, dtype):
    rng = np.random.default_rng(0)
    factors = rng.uniform(0.5, 1.0, (1000, 37)).astype(dtype)
    factors[:, 0] = rng.uniform(-1, 1, 1000)
    factors[0, 5] = np.nan
    want = detection_ops._row_products(np, factors)
    got = detection_ops._row_products(cupy, cupy.asarray(factors)).get()
    assert got.tobytes() == want.tobytes()


def _run(build, device):
    g = mg.Graph()
    with g.as_default(), mg.device(device):
        outs = build()
    return mg.Session(g).run(outs)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("sigma", [0.0, 0.5])
def test_nms_gives_the_cpus_bits(cupy, dtype, sigma):
    rng = np.random.default_rng(1)
    centre = rng.uniform(0, 1, (3000, 2))
    half = rng.uniform(0.01, 0.1, (3000, 2))
    boxes = np.concatenate([centre - half, centre + half], axis=1).astype(dtype)
    scores = rng.uniform(-0.2, 1, 3000).astype(dtype)

    def build():
        return mg.non_max_suppression_v5(
            boxes, scores, np.int32(300), dtype(0.4), dtype(-0.1), dtype(sigma)
        )

    for got, want in zip(_run(build, "/gpu:0"), _run(build, "/cpu:0")):
        assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_crop_and_resize_gives_the_cpus_bits(cupy, method):
    rng = np.random.default_rng(2)
    image = rng.standard_normal((4, 33, 41, 3)).astype(np.float32)
    boxes = rng.uniform(-0.2, 1.2, (500, 4)).astype(np.float32)
    box_ind = rng.integers(0, 4, 500).astype(np.int32)

    def build():
        return mg.crop_and_resize(image, boxes, box_ind, [7, 9], method, 0.5)

    (got,), (want,) = _run(lambda: [build()], "/gpu:0"), _run(lambda: [build()], "/cpu:0")
    assert got.tobytes() == want.tobytes()
