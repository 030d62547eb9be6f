"""Placement on the (simulated) GPU: copy steps, host memory, soft placement."""

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors


@pytest.fixture
def gpu(monkeypatch):
    from minigraph.devices import gpu_unavailable_reason

    if gpu_unavailable_reason() is not None:
        monkeypatch.setattr(mg.config, "simulated_gpu", lambda: True)


def _plan(sess):
    (plan,) = sess._plans.values()
    return plan


def test_a_value_read_by_three_gpu_nodes_is_copied_once(gpu):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [4], name="x")
        ys = [x * 2.0, x + 1.0, -x]
        total = ys[0] + ys[1] + ys[2]
    sess = mg.Session(g, device="/gpu:0")
    out = sess.run(total, {x: np.arange(4, dtype=np.float32)})
    np.testing.assert_array_equal(out, np.arange(4) * 2 + 1)
    copies = [s for s in _plan(sess).steps if s.op_type == "_Copy"]
    assert len(copies) == 1 and copies[0].device == "GPU:0"
    assert all(s.device == "GPU:0" for s in _plan(sess).steps if s.op_type != "Const")


def test_host_memory_inputs_stay_on_the_host(gpu):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, 4], name="x")
        y = mg.reshape(x * 2.0, mg.shape(x)[::-1])
        z = mg.space_to_batch_nd(y, [2], [[0, 0]])
    sess = mg.Session(g, device="/gpu:0")
    out = sess.run(z, {x: np.ones((2, 4), np.float32)})
    np.testing.assert_array_equal(out, np.full((8, 1), 2.0, np.float32))
    steps = {s.node_name: s for s in _plan(sess).steps if s.op_type != "_Copy"}
    # Shape arithmetic on host values, and constants only read on the host, stay there.
    for name in ["Shape", "StridedSlice", "StridedSlice/begin", "SpaceToBatchND/block_shape"]:
        assert steps[name].device == "CPU:0", name
    for name in ["Mul", "Reshape", "SpaceToBatchND", "Mul/y"]:
        assert steps[name].device == "GPU:0", name
    # One copy in (x for Mul), none back: the shape never left the host.
    assert [s.device for s in _plan(sess).steps if s.op_type == "_Copy"] == ["GPU:0"]


def test_soft_placement_falls_back_to_cpu_with_copies(gpu, cpu_only_op):
    triple = cpu_only_op("_TestCpuOnly", lambda ctx, x: x * 3)
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [2], name="x")
        y = triple(x + 1.0) + 1.0
    sess = mg.Session(g, device="/gpu:0")
    np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [7.0, 10.0])
    devices = [(s.op_type, s.device) for s in _plan(sess).steps if s.op_type != "Const"]
    assert devices == [
        ("_Copy", "GPU:0"),
        ("AddV2", "GPU:0"),
        ("_Copy", "CPU:0"),
        ("_TestCpuOnly", "CPU:0"),
        ("_Copy", "GPU:0"),
        ("AddV2", "GPU:0"),
    ]
    strict = mg.Session(g, device="/gpu:0", allow_soft_placement=False)
    with pytest.raises(errors.InvalidArgumentError, match="no GPU kernel for op _TestCpuOnly"):
        strict.run(y, {x: [1.0, 2.0]})


def test_results_come_back_as_numpy_and_device_arrays_on_request(gpu):
    g = mg.Graph()
    with g.as_default():
        y = mg.constant([1.0, 2.0]) * 2.0
    out = mg.Session(g, device="/gpu:0").run(y)
    assert isinstance(out, np.ndarray) and out.tolist() == [2.0, 4.0]
    kept = mg.Session(g, device="/gpu:0").run(y, options=mg.RunOptions(return_device_arrays=True))
    assert kept.tolist() == [2.0, 4.0]


def test_deterministic_accumulation_path(gpu):
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 8, (500, 1)).astype(np.int32)
    upd = rng.standard_normal((500, 3))
    g = mg.Graph()
    with g.as_default():
        y = mg.tensor_scatter_nd_sub(mg.ones([8, 3], mg.float64), idx, upd)
    expected = np.ones((8, 3))
    np.subtract.at(expected, idx[:, 0], upd)
    mg.config.enable_op_determinism()
    try:
        sess = mg.Session(g, device="/gpu:0")
        first = sess.run(y)
        assert first.tobytes() == sess.run(y).tobytes()
    finally:
        mg.config.disable_op_determinism()
    np.testing.assert_allclose(first, expected, rtol=1e-12, atol=1e-12)


def test_explicit_gpu_request_keeps_int32_ops_on_the_gpu(gpu):
    g = mg.Graph()
    with g.as_default(), mg.device("/gpu:0"):
        s = mg.shape(mg.constant([[1, 2]])) * 2
    sess = mg.Session(g)
    assert sess.run(s).tolist() == [2, 4]
    (mul,) = [st for st in _plan(sess).steps if st.op_type == "Mul"]
    assert mul.device == "GPU:0"


@pytest.mark.parametrize(
    "dtype, deterministic, atomic",
    [
        (np.float32, False, True),  # CuPy's add.at: one atomic add per element
        (np.float32, True, False),  # enable_op_determinism: the fixed-order fold
        (np.int32, True, True),  # integer atomics give the same result in any order
        (np.int64, False, False),  # CuPy 13's add.at takes no int64
        (np.complex64, False, False),
    ],
)
def test_gpu_sums_use_atomics_only_where_cuda_has_them(monkeypatch, dtype, deterministic, atomic):
    from minigraph import simulated_gpu

    monkeypatch.setattr(mg.config, "simulated_gpu", lambda: True)
    calls = []
    at = simulated_gpu._Ufunc.at

    def spy(self, a, indices, b=None):
        calls.append((self.__name__, a.dtype))  # CuPy's names: cupy_add
        at(self, a, indices, b)

    monkeypatch.setattr(simulated_gpu._Ufunc, "at", spy)
    idx = np.array([[1], [0], [1], [1]], np.int32)
    upd = np.array([1, 2, 3, 4], dtype)
    g = mg.Graph()
    with g.as_default():
        y = mg.tensor_scatter_nd_sub(mg.ones([3], mg.as_dtype(dtype)), idx, upd)
    if deterministic:
        mg.config.enable_op_determinism()
    try:
        out = mg.Session(g, device="/gpu:0").run(y)
    finally:
        mg.config.disable_op_determinism()
    np.testing.assert_array_equal(out, np.array([1 - 2, 1 - 1 - 3 - 4, 1], dtype))
    assert (("cupy_add", np.dtype(dtype)) in calls) == atomic


def test_traced_gpu_steps_wait_for_their_kernels(gpu, monkeypatch):
    from minigraph.kernel import KernelContext

    waited = []
    monkeypatch.setattr(KernelContext, "synchronize", lambda self: waited.append(self.node_name))
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [2], name="x")
        y = mg.negative(x * 2.0, name="y")
    sess = mg.Session(g, device="/gpu:0")
    sess.run(y, {x: [1.0, 2.0]})
    assert waited == []  # untraced runs never wait
    meta = mg.RunMetadata()
    sess.run(y, {x: [1.0, 2.0]}, options=mg.RunOptions(trace=True), run_metadata=meta)
    assert waited == [t[0] for t in meta.step_timings] and "y" in waited
