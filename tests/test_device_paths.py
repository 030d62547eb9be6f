"""The GPU code paths that avoid device syncs (index rows checked and offset in one pass,
DynamicPartition by counts, MaxPool without its -0.0 probe): the same results and the same
TensorFlow errors, naming the node, on the CPU and on the (simulated) GPU."""

import numpy as np
import pytest
from op_helpers import fails, run, same

import minigraph as mg
from minigraph.ops import cuda_kernels, indexing
from minigraph.simulated_gpu import xp as sim

pytestmark = pytest.mark.usefixtures("any_device")  # CPU and (simulated) GPU


@pytest.fixture
def no_column_maxima(any_device, monkeypatch):
    """On the GPU, the per-column maxima (a slow strided reduction each) are never taken."""
    if any_device == "gpu":

        def refuse(xp, x):
            raise AssertionError("the device path takes no per-column maxima")

        monkeypatch.setattr(indexing, "column_maxima", refuse)


# -- Index rows: one pass, one sync ------------------------------------------------------


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_gather_nd_elements_and_rows(no_column_maxima, index_dtype, depth):
    rng = np.random.default_rng(depth)
    params = rng.standard_normal((5, 4, 3, 2)).astype(np.float32)
    idx = np.stack([rng.integers(0, params.shape[k], 50) for k in range(depth)], -1)
    idx = idx.reshape(5, 10, depth).astype(index_dtype)
    got = run(mg.gather_nd, params, idx)
    same(got, params[tuple(np.moveaxis(idx, -1, 0))])


@pytest.mark.parametrize(
    "bad, message",
    [
        ([0, -1], r"indices\[1,1\] = \[0, -1\] does not index into param shape \[5,4,3\]"),
        ([5, 0], r"indices\[1,1\] = \[5, 0\] does not index into param shape \[5,4,3\]"),
        ([4, 4], r"indices\[1,1\] = \[4, 4\] does not index into param shape \[5,4,3\]"),
        ([2**40, 0], r"indices\[1,1\] = \[1099511627776, 0\] does not index"),
    ],
)
def test_a_bad_index_row_names_the_node_and_the_first_bad_row(no_column_maxima, bad, message):
    params = np.zeros((5, 4, 3), np.float32)
    idx = np.zeros((3, 4, 2), np.int64)
    idx[1, 1] = bad
    idx[2, 3] = [7, 7]  # a later bad row is not the one named
    e = fails(mg.gather_nd, params, idx, match=message)
    assert e.op_type == "GatherNd"


def test_a_bad_scatter_row_names_the_node(no_column_maxima):
    e = fails(
        mg.tensor_scatter_nd_update,
        np.zeros((4, 3), np.float32),
        np.array([[0, 0], [3, 2], [1, 3], [9, 9]], np.int32),
        np.ones(4, np.float32),
        match=r"indices\[2\] = \[1, 3\] does not index into shape \[4,3\]",
    )
    assert e.op_type == "TensorScatterUpdate"


def test_ignore_zero_fills_bad_element_rows(no_column_maxima):
    params = np.arange(12, dtype=np.float32).reshape(4, 3)
    idx = np.array([[0, 1], [4, 0], [3, 2], [-1, 1]], np.int32)
    got = run(lambda p, i: mg.gather_nd(p, i, bad_indices_policy="IGNORE"), params, idx)
    same(got, np.array([1, 0, 11, 0], np.float32))


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_index_rows_formulation_of_the_simulated_gpu(index_dtype):
    dims = (7, 5, 3)
    rng = np.random.default_rng(0)
    idx = np.stack([rng.integers(0, d, 100) for d in dims], -1).astype(index_dtype)
    flat, bad = cuda_kernels.index_rows(sim, idx, dims)
    same(flat, np.ravel_multi_index(tuple(idx.T), dims).astype(np.int64))
    assert not bad
    for k, v in [(0, 7), (1, -1), (2, 3), (0, np.iinfo(index_dtype).min)]:
        wrong = idx.copy()
        wrong[57, k] = v
        assert cuda_kernels.index_rows(sim, wrong, dims)[1]
    column, bad = cuda_kernels.index_rows(sim, idx[:, :1], dims[:1])
    same(column, idx[:, 0])
    assert not bad
    assert cuda_kernels.index_rows(sim, idx[:0], dims)[1] is False


# -- DynamicPartition by counts: one order for every data, one sync ----------------------


def _partition_reference(data, ids, parts):
    return [data[ids == k] for k in range(parts)]


@pytest.mark.parametrize("parts", [1, 2, 8, 255, 256, 300, 1100])
def test_partition_keeps_the_input_order_in_each_part(parts):
    rng = np.random.default_rng(parts)
    ids = rng.integers(0, parts, 10_000).astype(np.int32)
    data = rng.standard_normal((10_000, 3)).astype(np.float32)
    got = run(lambda d, i: mg.dynamic_partition(d, i, parts), data, ids)
    for g, w in zip(got, _partition_reference(data, ids, parts), strict=True):
        same(g, w)


def test_partition_of_2d_ids_and_empty_inputs():
    ids = np.array([[0, 1], [1, 0]], np.int32)
    got = run(lambda d, i: mg.dynamic_partition(d, i, 3), np.array([[1, 2], [3, 4]]), ids)
    for g, w in zip(got, [[1, 4], [2, 3], []], strict=True):
        same(g, np.array(w, np.int64))
    empty = run(
        lambda d, i: mg.dynamic_partition(d, i, 2),
        np.zeros((0, 4), np.float64),
        np.zeros(0, np.int32),
    )
    for g in empty:
        same(g, np.zeros((0, 4), np.float64))


def test_partition_then_stitch_shares_one_order():
    """The seed composition: the optimizer partitions data and range(n) by one ids tensor
    in one shared step; the stitch puts the data back."""
    rng = np.random.default_rng(3)
    data = rng.standard_normal(5000).astype(np.float32)
    ids = rng.integers(0, 8, 5000).astype(np.int32)

    def build(d, i):
        positions = mg.dynamic_partition(mg.range(mg.size(d)), i, 8)
        return mg.dynamic_stitch(positions, mg.dynamic_partition(d, i, 8))

    same(run(build, data, ids), data)


@pytest.mark.parametrize("bad", [-1, 8, 2**31 - 1, -(2**31)])
@pytest.mark.parametrize("shared", [False, True])
def test_a_bad_partition_id_names_the_node_and_the_first(bad, shared):
    ids = np.zeros(6000, np.int32)
    ids[4321] = bad
    ids[5000] = 99  # a later bad id is not the one named

    def build(d, i):
        parts = mg.dynamic_partition(d, i, 8, name="split")
        if not shared:
            return parts
        return [parts, mg.dynamic_partition(d * 2.0, i, 8, name="split2")]

    e = fails(
        build,
        np.ones(6000, np.float32),
        ids,
        match=rf"partitions\[4321\] = {bad} is not in \[0, 8\)",
    )
    assert e.op_type == "DynamicPartition" and e.node_name in ("split", "split2")


@pytest.mark.parametrize("parts", [1, 3, 300])
def test_partition_order_formulation_of_the_simulated_gpu(parts):
    rng = np.random.default_rng(parts)
    ids = rng.integers(0, parts, 3000).astype(np.int32)
    ids[[5, 77]] = [-3, parts]
    order, sizes = cuda_kernels.partition_order(sim, ids, parts)
    keys = np.where((ids < 0) | (ids >= parts), parts, ids)
    same(order, np.argsort(keys, kind="stable").astype(order.dtype))
    assert sizes == np.bincount(keys, minlength=parts + 1).tolist()
    empty, none = cuda_kernels.partition_order(sim, ids[:0], parts)
    assert empty.size == 0 and none == [0] * (parts + 1)


# -- MaxPool: no probe for -0.0 on a device --------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_max_pool_keeps_the_first_signed_zero_and_skips_nan(dtype):
    if np.dtype(dtype).kind == "f":
        x = np.array([[0.0, -0.0, np.nan, 1.0], [-0.0, 0.0, -np.inf, np.nan]], dtype)
    else:
        x = np.array([[0, -5, 3, 1], [-7, 2, 9, -1]], dtype)
    got = run(lambda v: mg.nn.max_pool(v, 2, 2, "VALID"), x.reshape(1, 2, 4, 1))
    flat = x.reshape(2, 2, 2).transpose(1, 0, 2).reshape(2, 4)  # each window's cells in order
    want = []
    for cells in flat:
        best = np.finfo(dtype).min if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min
        best = np.array(best, dtype)
        for c in cells:
            if c > best:
                best = c
        want.append(best)
    want = np.array(want, dtype).reshape(1, 1, 2, 1)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_max_into_formulation_of_the_simulated_gpu():
    out = np.array([0.0, -0.0, 1.0, -np.inf], np.float32)
    cuda_kernels.max_into(sim, out, np.array([-0.0, 0.0, np.nan, 2.0], np.float32))
    assert out.tobytes() == np.array([0.0, -0.0, 1.0, 2.0], np.float32).tobytes()
