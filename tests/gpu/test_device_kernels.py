"""On a real GPU: the CUDA kernels of ops/cuda_kernels.py give what their array-call
formulations (the simulated GPU's) give."""

import numpy as np
import pytest

from minigraph.ops import cuda_kernels
from minigraph.simulated_gpu import xp as sim


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("dims", [(7,), (7, 5), (4, 3, 5, 2)])
def test_index_rows_kernel(cupy, index_dtype, dims):
    rng = np.random.default_rng(len(dims))
    idx = np.stack([rng.integers(0, d, 100_003) for d in dims], -1).astype(index_dtype)
    for bad in (None, -1, dims[-1], np.iinfo(index_dtype).max):
        if bad is not None:
            idx[99_000, -1] = bad
        flat, any_bad = cuda_kernels.index_rows(cupy, cupy.asarray(idx), dims)
        want, want_bad = cuda_kernels.index_rows(sim, idx, dims)
        assert any_bad == want_bad == (bad is not None)
        if bad is None:
            np.testing.assert_array_equal(flat.get(), want)


@pytest.mark.parametrize("parts", [1, 2, 8, 31, 32, 33, 1023, 1024, 5000])
@pytest.mark.parametrize("n", [1, 4095, 4096, 3 * 4096 + 17, 1 << 20])
def test_partition_order_kernel(cupy, parts, n):
    rng = np.random.default_rng(n + parts)
    ids = rng.integers(0, parts, n).astype(np.int32)
    if n > 100:
        ids[[3, n // 2, n - 1]] = [-1, parts, 2**31 - 1]  # bad ids go last, in order
    order, sizes = cuda_kernels.partition_order(cupy, cupy.asarray(ids), parts)
    want, want_sizes = cuda_kernels.partition_order(sim, ids, parts)
    assert sizes == want_sizes
    np.testing.assert_array_equal(order.get(), want)


def test_partition_order_of_few_distinct_ids_in_a_warp(cupy):
    """Runs of one id (every lane of a warp a peer) and alternating ids."""
    ids = np.repeat(np.arange(8, dtype=np.int32), 5000)
    ids = np.concatenate([ids, np.tile(np.array([0, 7], np.int32), 7000)])
    order, sizes = cuda_kernels.partition_order(cupy, cupy.asarray(ids), 8)
    np.testing.assert_array_equal(order.get(), np.argsort(ids, kind="stable"))
    assert sizes == [*np.bincount(ids, minlength=8).tolist(), 0]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int64])
def test_max_into_kernel(cupy, dtype):
    rng = np.random.default_rng(0)
    out = rng.standard_normal((64, 33)).astype(dtype)
    window = rng.standard_normal((64, 66)).astype(dtype)[:, ::2]  # a strided window
    if np.dtype(dtype).kind == "f":
        out[0, :4] = [0.0, -0.0, np.nan, 1.0]
        window[0, :4] = [-0.0, 0.0, 5.0, np.nan]
    want = out.copy()
    cuda_kernels.max_into(sim, want, window)
    got = cupy.asarray(out)
    cuda_kernels.max_into(cupy, got, cupy.asarray(window))
    assert got.get().tobytes() == want.tobytes()
