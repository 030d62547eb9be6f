"""On a real GPU: CuPy kernels give the CPU's results, data stays on the device, copies are few.

The op test-suites also run on "/gpu:0" through the any_device fixture (a real GPU when
there is one); these tests check what only real CuPy arrays can show.
"""

import numpy as np
import pytest

import minigraph as mg


def _graph():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None, 8, 8, 2], name="x")
        y = mg.space_to_batch_nd(x * 2.0, [2, 2], [[0, 0], [0, 0]])
        z = mg.batch_to_space_nd(y + 1.0, [2, 2], [[0, 0], [0, 0]])
    return g, x, z


def test_same_results_as_cpu_and_numpy_by_default():
    g, x, z = _graph()
    feed = np.random.default_rng(0).standard_normal((3, 8, 8, 2)).astype(np.float32)
    cpu = mg.Session(g).run(z, {x: feed})
    gpu = mg.Session(g, device="/gpu:0").run(z, {x: feed})
    assert isinstance(gpu, np.ndarray)
    np.testing.assert_array_equal(cpu, gpu)


def test_device_feeds_and_results_stay_on_the_device(cupy):
    g, x, z = _graph()
    feed = cupy.asarray(np.ones((1, 8, 8, 2), np.float32))
    sess = mg.Session(g, device="/gpu:0")
    out = sess.run(z, {x: feed}, options=mg.RunOptions(return_device_arrays=True))
    assert isinstance(out, cupy.ndarray)
    np.testing.assert_array_equal(out.get(), np.full((1, 8, 8, 2), 3.0, np.float32))
    (plan,) = sess._plans.values()
    assert [s.op_type for s in plan.steps if s.op_type == "_Copy"] == []


def test_deterministic_float_scatter_add():
    mg.config.enable_op_determinism()
    try:
        g = mg.Graph()
        rng = np.random.default_rng(1)
        idx = rng.integers(0, 16, (100000, 1)).astype(np.int32)
        upd = rng.standard_normal(100000).astype(np.float32)
        with g.as_default():
            y = mg.tensor_scatter_nd_add(mg.zeros([16]), idx, upd)
        sess = mg.Session(g, device="/gpu:0")
        first = sess.run(y)
        for _ in range(5):
            assert first.tobytes() == sess.run(y).tobytes()
        np.testing.assert_allclose(first, np.bincount(idx[:, 0], upd, 16), rtol=1e-3, atol=1e-2)
    finally:
        mg.config.disable_op_determinism()


def test_bad_indices_raise_on_the_gpu_too():
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.int32, [4], name="p")
        parts = mg.dynamic_partition(mg.constant([1.0, 2.0, 3.0, 4.0]), p, 2)
    with pytest.raises(mg.errors.InvalidArgumentError, match=r"partitions\[2\] = 7"):
        mg.Session(g, device="/gpu:0").run(parts, {p: [0, 1, 7, 0]})


def _cpu_and_gpu(build, feeds=None):
    g = mg.Graph()
    with g.as_default():
        y = build()
    return mg.Session(g).run(y, feeds), mg.Session(g, device="/gpu:0").run(y, feeds)


@pytest.mark.parametrize("rule", ["update", "min", "max"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64])
def test_racing_duplicates_give_the_cpus_bits(rule, dtype):
    # 1M updates into 1000 rows: every row is named ~1000 times, so GPU threads race.
    rng = np.random.default_rng(7)
    tensor = rng.standard_normal((1000, 4)).astype(dtype)
    idx = rng.integers(0, 1000, (1 << 20, 1)).astype(np.int32)
    upd = rng.choice(np.array([0.0, -0.0, 1.0, -1.0, np.nan, 2.0]), (1 << 20, 4))
    upd = upd.astype(dtype) if np.dtype(dtype).kind == "f" else rng.integers(-9, 9, upd.shape)
    cpu, gpu = _cpu_and_gpu(
        lambda: getattr(mg, f"tensor_scatter_nd_{rule}")(tensor, idx, upd.astype(dtype))
    )
    assert cpu.tobytes() == gpu.tobytes()


def test_racing_stitch_and_integer_sums_give_the_cpus_bits():
    rng = np.random.default_rng(8)
    indices = [rng.integers(0, 5000, 1 << 18).astype(np.int32) for _ in range(4)]
    data = [rng.standard_normal((1 << 18, 3)).astype(np.float32) for _ in range(4)]
    cpu, gpu = _cpu_and_gpu(lambda: mg.dynamic_stitch(indices, data))
    assert cpu.tobytes() == gpu.tobytes()
    idx = rng.integers(0, 100, (1 << 20, 1)).astype(np.int64)
    for dtype in (np.int64, np.int8, np.uint32):  # int64/int8: the fold; uint32: atomics
        upd = rng.integers(0, 100, 1 << 20).astype(dtype)
        cpu, gpu = _cpu_and_gpu(lambda upd=upd: mg.scatter_nd(idx, upd, [100]))
        assert cpu.tobytes() == gpu.tobytes()


def test_partition_matches_the_cpu():
    rng = np.random.default_rng(9)
    data = rng.standard_normal((1 << 20, 2)).astype(np.float32)
    parts = rng.integers(0, 13, 1 << 20).astype(np.int32)
    cpu, gpu = _cpu_and_gpu(lambda: mg.dynamic_partition(data, parts, 13))
    for a, b in zip(cpu, gpu):
        assert a.tobytes() == b.tobytes()


def test_a_tensor_larger_than_the_gpu_is_refused_before_allocating(cupy):
    g = mg.Graph()
    with g.as_default():
        y = mg.fill([1 << 20, 1 << 20], 1.0, name="huge")  # 4 TiB
    with pytest.raises(mg.errors.ResourceExhaustedError, match="huge") as e:
        mg.Session(g, device="/gpu:0").run(y)
    assert f"at most {cupy.cuda.Device(0).mem_info[1]} can be" in str(e.value)  # the GPU's


def test_a_fused_chain_on_the_gpu_gives_the_unfused_bits(cupy):
    """Elementwise fusion on CuPy: each op's kernel into one device buffer, in place."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None, 64], name="x")
        b = mg.constant(np.linspace(-1, 1, 64, dtype=np.float32))
        y = mg.nn.relu(mg.nn.bias_add(x * 2.0, b)) - mg.sigmoid(x)  # sigmoid: a second chain
        z = mg.sqrt(mg.abs(y) + 1.0)
    feed = np.random.default_rng(1).standard_normal((4096, 64)).astype(np.float32)
    unfused = mg.ConfigProto(
        graph_options=mg.GraphOptions(optimizer_options=mg.OptimizerOptions.off())
    )
    meta = mg.RunMetadata()
    fused = mg.Session(g, device="/gpu:0").run(
        z, {x: cupy.asarray(feed)}, options=mg.RunOptions(trace=True), run_metadata=meta
    )
    plain = mg.Session(g, device="/gpu:0", config=unfused).run(z, {x: feed})
    assert any(t[1] == "_FusedElementwise" and t[2].startswith("GPU") for t in meta.step_timings)
    assert fused.tobytes() == plain.tobytes()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32])
def test_a_chain_of_every_kind_of_op_is_one_generated_kernel(cupy, monkeypatch, dtype):
    """minigraph.fusion_cuda: one kernel for the whole chain, with the bits of the op-by-op
    kernels (CuPy's ufuncs and the ops' own), NaN payloads aside (the GPU contract)."""
    import op_helpers

    from minigraph import fusion, fusion_cuda

    monkeypatch.setattr(op_helpers, "REAL_GPU", True)
    built = []

    def chain_kernel(*args):
        built.append(fusion_cuda.chain_kernel(*args))
        return built[-1]

    monkeypatch.setattr(fusion, "chain_kernel", chain_kernel)
    rng = np.random.default_rng(3)
    v = (rng.standard_normal((512, 64)) * 3).astype(dtype)
    b = rng.standard_normal(64).astype(dtype)
    if np.dtype(dtype).kind == "f":
        v[0, :6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, 1e-3]
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.as_dtype(dtype), shape=[None, 64], name="x")
        y = mg.maximum(mg.nn.bias_add(x * dtype(2), b) - x, x)
        y = mg.nn.relu6(mg.minimum(mg.square(y), dtype(50)) + mg.negative(y))
        if np.dtype(dtype).kind == "f":
            y = mg.nn.leaky_relu(mg.tanh(mg.sigmoid(mg.exp(y / dtype(9)))) - dtype(0.7))
            y = mg.nn.selu(mg.nn.elu(mg.erf(mg.sqrt(mg.abs(y) + dtype(1))) - dtype(0.9)))
            y = mg.rsqrt(mg.log1p(mg.abs(y))) * mg.erfc(y)
    off = mg.ConfigProto(graph_options=mg.GraphOptions(optimizer_options=mg.OptimizerOptions.off()))
    fused = mg.Session(g, device="/gpu:0").run(y, {x: v})
    plain = mg.Session(g, device="/gpu:0", config=off).run(y, {x: v})
    assert built and None not in built  # every chain became one kernel
    op_helpers.same_bits(fused, plain)


@pytest.mark.parametrize(
    "dtype, row",
    [(np.float32, (16,)), (np.uint8, (3,)), (np.bool_, ()), (np.float64, (2, 3)), (np.int16, (5,))],
)
def test_stitch_on_the_device_gives_the_cpus_bits(dtype, row):
    # Repeats within and across lists, scalars among the indices, rows of odd byte counts.
    rng = np.random.default_rng(5)
    sizes = [1000, 1, 0, 3000]
    indices = [rng.integers(0, 2500, n).astype(np.int32) for n in sizes]
    indices[1] = np.array(7, np.int32)
    data = [(rng.standard_normal((*np.shape(i), *row)) * 9).astype(dtype) for i in indices]
    cpu, gpu = _cpu_and_gpu(lambda: mg.dynamic_stitch(indices, data))
    assert cpu.dtype == gpu.dtype and cpu.tobytes() == gpu.tobytes()
    # The seed composition: distinct indices (the optimizer says so), every row named once.
    x = rng.standard_normal((100000, *row)).astype(dtype)
    p = rng.integers(0, 8, 100000).astype(np.int32)

    def seed():
        parts = mg.dynamic_partition(x, p, 8)
        pos = mg.dynamic_partition(mg.range(100000), p, 8)
        return mg.dynamic_stitch(pos, parts)

    cpu, gpu = _cpu_and_gpu(seed)
    assert gpu.tobytes() == x.tobytes() == cpu.tobytes()


def test_a_fed_scalar_keeps_the_sign_of_zero():
    # CuPy copies a 0-d host array through a Python scalar, which lost -0.0's sign.
    cpu, gpu = _cpu_and_gpu(lambda: mg.identity(np.array(-0.0, np.float32)) * 1.0)
    assert gpu.tobytes() == cpu.tobytes() == np.array(-0.0, np.float32).tobytes()
