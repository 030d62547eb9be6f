"""Atrous (dilated) convolution through SpaceToBatchND, as its documentation suggests.

A convolution with dilation rate r equals: SpaceToBatchND with block [r, r] (moving every
r-th pixel into its own batch entry), an ordinary convolution, and BatchToSpaceND back.
Checked here against Conv2D with dilations on random data (VALID padding, and SAME via the
paddings TensorFlow's tf.nn.atrous_conv2d computes).
Run: python examples/atrous_convolution.py
"""

import numpy as np

import minigraph as mg


def atrous_valid(x, filters, rate):
    """VALID dilated convolution of a [1, H, W, C] input whose H and W are multiples of rate."""
    y = mg.space_to_batch_nd(x, [rate, rate], [[0, 0], [0, 0]])
    y = mg.conv2d(y, filters, strides=1, padding="VALID")
    return mg.batch_to_space_nd(y, [rate, rate], [[0, 0], [0, 0]])


def atrous_same(x, filters, rate, height, width):
    """SAME dilated convolution: pad so every block sees the full dilated window."""
    k = filters.shape[0]
    pad = (k - 1) * rate  # the dilated filter's extra size
    pads = []
    for size in (height, width):
        before, after = pad // 2, pad - pad // 2
        after += (-(size + before + after)) % rate  # round up to a multiple of rate
        pads.append([before, after])
    crops = [[0, (-(size + pad)) % rate] for size in (height, width)]
    y = mg.space_to_batch_nd(x, [rate, rate], pads)
    y = mg.conv2d(y, filters, strides=1, padding="VALID")
    return mg.batch_to_space_nd(y, [rate, rate], crops)


def main() -> None:
    rng = np.random.default_rng(7)
    rate, h, w = 2, 12, 10
    x = rng.standard_normal((1, h, w, 3))
    filters = rng.standard_normal((3, 3, 3, 4))
    g = mg.Graph()
    with g.as_default():
        xin = mg.placeholder(mg.float64, shape=x.shape, name="x")
        via_blocks = atrous_valid(xin, filters, rate)
        direct = mg.conv2d(xin, filters, strides=1, padding="VALID", dilations=rate)
        same_blocks = atrous_same(xin, filters, rate, h, w)
        same_direct = mg.conv2d(xin, filters, strides=1, padding="SAME", dilations=rate)
    a, b, c, d = mg.Session(g).run([via_blocks, direct, same_blocks, same_direct], {xin: x})
    print("VALID: SpaceToBatchND -> Conv2D -> BatchToSpaceND", a.shape, "vs Conv2D", b.shape)
    print("SAME:  via blocks", c.shape, "vs Conv2D", d.shape)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c, d, rtol=1e-12, atol=1e-12)
    print(
        f"equal to a Conv2D with dilations={rate}: max difference "
        f"{max(np.abs(a - b).max(), np.abs(c - d).max()):.1e}"
    )


if __name__ == "__main__":
    main()
