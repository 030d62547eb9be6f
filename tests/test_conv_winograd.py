"""Conv2D's Winograd path (ops/conv_winograd.py): 3x3 stride-1 filters with enough channels
and tiles. Expected values come from the direct sum in float64 (test_conv_ops'
reference_conv2d)."""

from __future__ import annotations

import numpy as np
import pytest
from test_conv_ops import reference_conv2d

import minigraph as mg
from minigraph.ops import conv_winograd


def _conv(x, f, padding, fmt="NHWC"):
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.as_dtype(x.dtype), shape=x.shape)
        y = mg.conv2d(p, f, 1, padding, data_format=fmt)
    return mg.Session(g).run(y, {p: x})


def _taken(monkeypatch) -> list:
    calls = []
    real = conv_winograd.winograd_conv
    monkeypatch.setattr(
        conv_winograd, "winograd_conv", lambda *a: calls.append(a[2].shape) or real(*a)
    )
    return calls


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-13), (np.float32, 2e-6)])
@pytest.mark.parametrize(
    "shape, cout, padding",
    [
        ((2, 16, 16, 32), 32, "SAME"),  # even output: whole tiles
        ((3, 11, 9, 40), 33, "SAME"),  # odd output: the last tiles read a zero row, column
        ((1, 18, 20, 32), 64, "VALID"),
        ((12, 6, 7, 48), 32, "VALID"),  # 4x5 outputs: 2x3 tiles an image
    ],
)
def test_winograd_matches_the_direct_sum(monkeypatch, dtype, tol, shape, cout, padding):
    calls = _taken(monkeypatch)
    rng = np.random.default_rng(shape[1])
    x = rng.standard_normal(shape).astype(dtype)
    f = rng.standard_normal((3, 3, shape[-1], cout)).astype(dtype)
    got = _conv(x, f, padding)
    assert calls, "the Winograd path was not taken"
    want = reference_conv2d(x.astype(np.float64), f.astype(np.float64), (1, 1), padding, (1, 1))
    assert got.dtype == dtype and got.shape == want.shape
    # F(2x2, 3x3) rounds like a reordered sum: errors relative to the sums' magnitude
    scale = np.abs(x).max() * np.abs(f).max() * 9 * shape[-1]
    assert np.abs(got - want).max() <= tol * scale


@pytest.mark.parametrize("piece_bytes", [1, 1 << 20])
def test_winograd_pieces_give_the_same_bits(monkeypatch, piece_bytes):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 13, 10, 32)).astype(np.float32)
    f = rng.standard_normal((3, 3, 32, 40)).astype(np.float32)
    monkeypatch.setattr(conv_winograd, "PIECE_BYTES", 1 << 30)
    whole = _conv(x, f, "SAME")
    monkeypatch.setattr(conv_winograd, "PIECE_BYTES", piece_bytes)
    assert _conv(x, f, "SAME").tobytes() == whole.tobytes()


def test_winograd_nchw_and_where_it_is_not_used(monkeypatch):
    calls = _taken(monkeypatch)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 32, 12, 12)).astype(np.float32)  # NCHW
    f = rng.standard_normal((3, 3, 32, 32)).astype(np.float32)
    got = _conv(x, f, "SAME", fmt="NCHW").transpose(0, 2, 3, 1)
    want = reference_conv2d(
        x.transpose(0, 2, 3, 1).astype(np.float64), f.astype(np.float64), (1, 1), "SAME", (1, 1)
    )
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert len(calls) == 1
    # float16 runs in float32 (as every float16 convolution), then rounds once
    x16, f16 = x.transpose(0, 2, 3, 1).astype(np.float16), f.astype(np.float16)
    got16 = _conv(x16, f16, "SAME")
    want16 = reference_conv2d(
        x16.astype(np.float64), f16.astype(np.float64), (1, 1), "SAME", (1, 1)
    )
    assert got16.dtype == np.float16 and len(calls) == 2
    np.testing.assert_allclose(got16, want16, rtol=2e-3, atol=2e-2)
    # Too few channels, too few tiles, int32, a stride: im2col (no Winograd call)
    _conv(x[:, :8].transpose(0, 2, 3, 1).copy(), f[:, :, :8], "SAME")
    _conv(x[:1, :, :4, :4].transpose(0, 2, 3, 1).copy(), f, "SAME")
    _conv(np.ones((2, 12, 12, 32), np.int32), np.ones((3, 3, 32, 32), np.int32), "SAME")
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.float32, shape=(2, 24, 24, 32))
        mg.Session(g).run(mg.conv2d(p, f, 2, "SAME"), {p: np.ones((2, 24, 24, 32), np.float32)})
    assert len(calls) == 2
