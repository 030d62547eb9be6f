"""Elementwise fusion (minigraph.fusion): a chain of ufunc ops runs as one step, with
bitwise the unfused plan's results and errors."""

import warnings

import numpy as np
import op_helpers
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import gpu_ulps, same_bits

import minigraph as mg
from minigraph import errors, fusion
from minigraph.devices import parse_device
from minigraph.optimizer import OptimizerOptions
from minigraph.plan import build_plan

pytestmark = pytest.mark.usefixtures("any_device")

UNFUSED = mg.ConfigProto(
    graph_options=mg.GraphOptions(optimizer_options=OptimizerOptions(do_elementwise_fusion=False))
)

# name -> (builder, NumPy reference, kinds of dtype it takes, whether the reference gives
# the kernel's bits). The references are NumPy written from each op's definition, applied op
# by op to fresh arrays, as a user would write the chain.
BINARY = {
    "add": (mg.add, np.add, "fiu", True),
    "subtract": (mg.subtract, np.subtract, "fiu", True),
    "multiply": (mg.multiply, np.multiply, "fiu", True),
    "maximum": (mg.maximum, np.maximum, "fi", True),
    "minimum": (mg.minimum, np.minimum, "fi", True),
    "truediv": (mg.truediv, np.true_divide, "f", True),
    "squared_difference": (mg.squared_difference, lambda x, y: (x - y) * (x - y), "f", True),
    "div_no_nan": (
        mg.div_no_nan,
        lambda x, y: np.where(y == 0, 0, x / y).astype(x.dtype),
        "f",
        True,
    ),
}
UNARY = {
    "negative": (mg.negative, np.negative, "fi", True),
    "abs": (mg.abs, np.abs, "fi", True),
    "square": (mg.square, np.square, "fiu", True),
    "sqrt": (mg.sqrt, np.sqrt, "f", True),
    "exp": (mg.exp, np.exp, "f", True),
    "tanh": (mg.tanh, np.tanh, "f", True),
    "log1p": (mg.log1p, np.log1p, "f", True),
    "floor": (mg.floor, np.floor, "f", True),
    "relu": (mg.nn.relu, lambda x: np.where(x < 0, x.dtype.type(0), x), "fi", True),
    "leaky_relu": (
        mg.nn.leaky_relu,
        lambda x: np.where(x > 0, x, x * x.dtype.type(np.float32(0.2))),  # a float attr
        "f",
        True,
    ),
    "sigmoid": (mg.sigmoid, lambda x: (1 / (1 + np.exp(-x))).astype(x.dtype), "f", False),
    "rsqrt": (mg.rsqrt, lambda x: 1 / np.sqrt(x), "f", False),
    "elu": (mg.nn.elu, lambda x: np.where(x < 0, np.expm1(x), x), "f", False),
}


def plan_steps(fetches, feeds=(), fusion=True):
    options = OptimizerOptions(do_elementwise_fusion=fusion)
    plan = build_plan(list(fetches), [], list(feeds), parse_device(None), True, None, options)
    return [s.op_type for s in plan.steps], plan.optimizations


def run_both(g, fetches, feed=None):
    return mg.Session(g).run(fetches, feed), mg.Session(g, config=UNFUSED).run(fetches, feed)


def bitwise(a, b, ulps=0):
    """The same bits; on a real GPU by its contract (op_helpers.same_bits): NaN payloads may
    differ, and a chain with a transcendental function is within ``ulps`` of the CPU."""
    same_bits(a, b, ulps)


def test_a_chain_runs_as_one_step_with_the_same_result():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None, 3], name="x")
        y = mg.sqrt(mg.add(mg.multiply(x, 2.0), x)) - 1.0
    ops, report = plan_steps([y], [x])
    assert ops.count("_FusedElementwise") == 1
    assert not {"Mul", "AddV2", "Sqrt", "Sub"} & set(ops)
    assert report[-1] == "elementwise_fusion: 3 steps (6 -> 3 steps)"
    assert plan_steps([y], [x], fusion=False)[0].count("_FusedElementwise") == 0
    a = np.array([[0, 1, 2], [3, -4, np.inf]], np.float32)
    fused, unfused = run_both(g, y, {x: a})
    bitwise(fused, unfused)
    with np.errstate(invalid="ignore"):
        bitwise(fused, np.sqrt(a * np.float32(2) + a) - np.float32(1))


def test_fetched_or_shared_values_end_a_chain():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[4], name="x")
        a = x * 2.0  # fetched: must stay a value of its own
        b = a + 1.0
        c = mg.exp(b)  # read by two ops: the chain c <- b ends here
        d, e = c * 3.0, c - 1.0
    ops, _ = plan_steps([a, d, e], [x])
    # a (fetched) alone; b and c fused; d and e each alone
    assert ops.count("_FusedElementwise") == 1 and ops.count("Mul") == 2 and "Sub" in ops
    v = np.array([0.5, -1, 2, np.nan], np.float32)
    fused, unfused = run_both(g, [a, d, e], {x: v})
    for f, u in zip(fused, unfused, strict=True):
        bitwise(f, u)
    c_ref = np.exp(v * np.float32(2) + np.float32(1))
    ulps = gpu_ulps("exp", np.float32) + 1  # and the rounding of the op after it
    bitwise(fused[1], c_ref * np.float32(3), ulps)
    bitwise(fused[2], c_ref - np.float32(1), ulps)


def test_a_value_the_chain_reads_twice_is_not_overwritten_early():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None], name="x")
        t = mg.round(x)  # read by three ops: a step of its own, whose buffer the chain may get
        y = (t + 1.0) * t - t
    v = np.linspace(-3, 3, 5000, dtype=np.float32)
    fused, unfused = run_both(g, y, {x: v})
    bitwise(fused, unfused)
    r = np.rint(v)
    bitwise(fused, (r + np.float32(1)) * r - r)


def test_feeds_and_constants_are_never_written():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None], name="x")
        c = mg.constant(np.full(5000, 2, np.float32))
        y = mg.negative(x * c + c)
    v = np.ones(5000, np.float32)
    kept = v.copy()
    out = mg.Session(g).run(y, {x: v})
    bitwise(v, kept)
    np.testing.assert_array_equal(out, np.full(5000, -4, np.float32))
    np.testing.assert_array_equal(mg.Session(g).run(c), np.full(5000, 2, np.float32))


def test_a_chain_broadcasts_as_its_ops_do():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, shape=[None, None], name="x")
        row = mg.placeholder(mg.float64, shape=[None], name="row")
        col = mg.placeholder(mg.float64, shape=[None, 1], name="col")
        y = mg.minimum((x - row) * col, 5.0)
    a, r, c = np.arange(6.0).reshape(2, 3), np.array([1.0, 2, 3]), np.array([[2.0], [-1]])
    fused, unfused = run_both(g, y, {x: a, row: r, col: c})
    bitwise(fused, unfused)
    bitwise(fused, np.minimum((a - r) * c, 5.0))
    # A chain that grows by broadcasting: scalar x, then a matrix.
    fused, unfused = run_both(g, y, {x: [[1.5]], row: r, col: c})
    bitwise(fused, np.minimum((np.array([[1.5]]) - r) * c, 5.0))
    bitwise(fused, unfused)


def test_a_chain_ends_where_its_value_is_known_to_grow():
    # A layer norm's scale: rsqrt(var + eps) is [n, 5, 1], times gamma [8] it is [n, 5, 8].
    # Fused, that chain would fall back to the unfused kernels on every run, so it ends at
    # the growth and the product starts a chain of its own.
    g = mg.Graph()
    with g.as_default():
        var = mg.placeholder(mg.float32, shape=[None, 5, 1], name="var")
        gamma = mg.constant(np.linspace(0.5, 2, 8, dtype=np.float32))
        y = mg.rsqrt(var + 1e-3) * gamma + 0.5
    ops, report = plan_steps([y], [var])
    assert ops.count("_FusedElementwise") == 2 and "Mul" not in ops
    v = np.random.default_rng(1).random((3, 5, 1)).astype(np.float32)
    fused, unfused = run_both(g, y, {var: v})
    bitwise(fused, unfused)


def test_shapes_that_do_not_broadcast_fail_as_the_unfused_op_does():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None], name="x")
        y = mg.placeholder(mg.float32, shape=[None], name="y")
        z = mg.add(mg.multiply(x, 2.0, name="double"), y, name="plus_y")
        w = mg.sqrt(z, name="root")
    feed = {x: np.ones(3, np.float32), y: np.ones(4, np.float32)}
    for config in (None, UNFUSED):
        with pytest.raises(errors.InvalidArgumentError, match="Incompatible shapes") as e:
            mg.Session(g, config=config).run(w, feed)
        assert e.value.node_name == "plus_y"


def test_an_output_too_large_fails_as_the_unfused_op_does():
    g = mg.Graph()
    with g.as_default():
        row = mg.placeholder(mg.float32, shape=[None], name="row")
        col = mg.placeholder(mg.float32, shape=[None, 1], name="col")
        y = mg.exp(mg.add(row, col, name="outer"), name="e")
    feed = {row: np.ones(4000, np.float32), col: np.ones((4000, 1), np.float32)}
    for config in (None, UNFUSED):
        sess = mg.Session(g, config=config, max_tensor_bytes=1 << 20)
        with pytest.raises(errors.ResourceExhaustedError) as e:
            sess.run(y, feed)
        assert e.value.node_name == "outer"


@pytest.mark.parametrize("n", [2, 3 << 20])  # 3M float64: a chain run in blocks, on threads
def test_runs_emit_no_floating_point_warnings(n):
    """IEEE results are the answer, as in TensorFlow: no RuntimeWarning for inf - inf, fused
    or not, on the calling thread or the pools'."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, shape=[None], name="x")
        y = (x - x * 1.0) * 2.0  # inf - inf
        z = mg.subtract(x, x, name="alone")  # an op of its own
    v = np.ones(n)
    v[0] = np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fused, alone = mg.Session(g).run([y, z], {x: v})
    assert np.isnan(fused[0]) and np.isnan(alone[0]) and fused[1] == 0 and alone[-1] == 0


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16])
def test_large_chains_run_in_blocks_with_the_same_bits(dtype):
    """Past 4 MB the chain runs in cache-sized blocks of rows, on both cores: the operands
    that span the rows are cut per block, the rest broadcast whole."""
    rng = np.random.default_rng(7)
    shape = (1537, 1031)  # blocks do not divide the rows evenly
    if dtype == np.int32:
        a = rng.integers(-1000, 1000, shape, dtype=dtype)
        r = rng.integers(-9, 9, shape[1], dtype=dtype)
        c = rng.integers(-9, 9, (shape[0], 1), dtype=dtype)
    else:
        a = (rng.standard_normal(shape) * 100).astype(dtype)
        r = rng.standard_normal(shape[1]).astype(dtype)
        c = rng.standard_normal((shape[0], 1)).astype(dtype)
        a[0, :3] = [np.inf, -np.inf, np.nan]
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(dtype, shape=[None, None], name="x")
        row = mg.placeholder(dtype, shape=[None], name="row")
        col = mg.placeholder(dtype, shape=[None, 1], name="col")
        y = mg.maximum(mg.square(x * row - col) + x, col)
    feed = {x: a, row: r, col: c}
    fused, unfused = run_both(g, y, feed)
    bitwise(fused, unfused)
    with np.errstate(all="ignore"):
        bitwise(fused, np.maximum(np.square(a * r - c) + a, c))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("shape", [(1537, 1031), (3 << 20,), (8, 57, 57, 96)])
def test_large_inexact_chains_run_in_blocks_with_the_same_bits(shape, dtype):
    """Transcendental functions and maximum's signed zeros in blocks give the bits of the
    unfused ops: each block starts a multiple of 1024 elements into the output, so each
    element takes NumPy's loop path it takes in one call (swish, GELU's pieces, softplus)."""
    rng = np.random.default_rng(8)
    a = (rng.standard_normal(shape) * 6).astype(dtype)
    flat = a.reshape(-1)
    flat[::1013] = -0.0
    flat[1::1009] = np.nan
    flat[2::997] = np.inf
    flat[3::991] = -np.inf
    flat[4::983] = 0.0
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(dtype, shape=[None] * len(shape), name="x")
        swish = x * mg.sigmoid(x)
        y = mg.maximum(mg.tanh(mg.exp(swish) - 1.5) * x, -0.0) + mg.nn.softplus(x)
    assert plan_steps([y], [x])[0].count("_FusedElementwise") == 1  # softplus aside
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fused, unfused = run_both(g, y, {x: a})
    bitwise(fused, unfused)


@pytest.mark.parametrize("n,row_size,itemsize", [(1537, 1031, 4), (10, 1 << 20, 4), (5, 3, 8),
                                                 (4096, 96, 2), (1, 7, 4)])  # fmt: skip
def test_blocks_start_a_multiple_of_1024_elements_apart(n, row_size, itemsize):
    rows = fusion._block_rows(n, row_size, itemsize)
    assert 1 <= rows <= n
    assert rows == n or rows * row_size % 1024 == 0


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_random_chains_are_bitwise_the_unfused_plan(data):
    kind = data.draw(st.sampled_from("fiu"))
    dtype = np.dtype(
        data.draw(
            st.sampled_from(
                {"f": ["float16", "float32", "float64"], "i": ["int32", "int64"], "u": ["uint8"]}[
                    kind
                ]
            )
        )
    )
    binary = {k: v for k, v in BINARY.items() if kind in v[2]}
    unary = {k: v for k, v in UNARY.items() if kind in v[2]}
    n = data.draw(st.sampled_from([1, 7, 5000]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))

    def operand():
        shape = data.draw(st.sampled_from([(), (n,), (1,)]))
        if kind == "f":
            v = (rng.standard_normal(shape) * 4).astype(dtype)
        else:
            v = rng.integers(0, 50 if kind == "u" else 100, shape).astype(dtype)
        return v

    x0 = operand()
    if x0.shape != (n,):
        x0 = np.resize(x0, (n,))
    g = mg.Graph()
    feed = {}
    with g.as_default():
        x = mg.placeholder(dtype, shape=[None], name="x")
        feed[x] = x0
        y, ref, ref_exact, transcendental = x, x0.copy(), True, False
        for i in range(data.draw(st.integers(2, 6))):
            if data.draw(st.booleans()) or not unary:
                name = data.draw(st.sampled_from(sorted(binary)))
                build, fn, _, exact = binary[name]
                v = operand()
                if data.draw(st.booleans()):
                    other = mg.constant(v)
                else:
                    other = mg.placeholder(dtype, shape=None, name=f"p{i}")
                    feed[other] = v
                left = data.draw(st.booleans())
                y = build(y, other) if left else build(other, y)
                with np.errstate(all="ignore"):
                    ref = fn(ref, v) if left else fn(v, ref)
                ref_exact &= exact
            else:
                name = data.draw(st.sampled_from(sorted(unary)))
                build, fn, _, exact = unary[name]
                transcendental |= name in op_helpers.GPU_ULPS
                y = build(y)
                with np.errstate(all="ignore"):
                    ref = fn(ref)
            ref_exact &= exact
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fused, unfused = run_both(g, y, feed)
    bitwise(fused, unfused)
    # Where a reference rounds differently from its kernel (sigmoid's formula), later ops
    # may amplify the difference without bound: those ops' values are checked in their own
    # tests, and here fused against unfused only.
    # On a real GPU a transcendental function is within its ulps of NumPy's, and later ops
    # may amplify that too: fused against unfused only there as well.
    if ref_exact and not (op_helpers.REAL_GPU and transcendental):
        bitwise(fused, np.asarray(ref, dtype))


def test_a_chain_never_spans_two_devices(any_device):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[3], name="x")
        a = x * 2.0
        with mg.device("/cpu:0"):
            b = a + 1.0
        y = b * 3.0
    meta = mg.RunMetadata()
    out = mg.Session(g).run(y, {x: [1, 2, 3]}, options=mg.RunOptions(trace=True), run_metadata=meta)
    np.testing.assert_array_equal(out, [9, 15, 21])
    fused = [t for t in meta.step_timings if t[1] == "_FusedElementwise"]
    # On the CPU all three fuse; with the session on a GPU, b runs apart on the CPU.
    assert len(fused) == {"cpu": 1, "gpu": 0, "unoptimized": 0}[any_device]


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("rows", [3, 600])  # 600 x 8 x 8 x 32 float32: blocks of rows
@pytest.mark.parametrize("channels", [32, 8])  # 8: as many as the width, NCHW or not
def test_bias_add_and_relu_fuse_as_keras_layers_use_them(data_format, rows, channels):
    # In NHWC the bias pairs with the last dim, so the chain may run widened (a short
    # bias tiled to a run); in NCHW it must not, even when the width equals the channels.
    rng = np.random.default_rng(3)
    rows *= 32 // channels
    shape = (rows, 8, 8, channels) if data_format == "NHWC" else (rows, channels, 8, 8)
    a = rng.standard_normal(shape).astype(np.float32)
    bias = rng.standard_normal(channels).astype(np.float32)
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None, *shape[1:]], name="x")
        pre = mg.nn.bias_add(x * 2.0, bias, data_format=data_format)
        y = mg.nn.leaky_relu(mg.nn.relu(pre) - 0.5)
    ops, _ = plan_steps([y], [x])
    assert "BiasAdd" not in ops and "Relu" not in ops and ops.count("_FusedElementwise") == 1
    fused, unfused = run_both(g, y, {x: a})
    bitwise(fused, unfused)
    b = bias.reshape((channels,) if data_format == "NHWC" else (channels, 1, 1))
    r = np.where(a * np.float32(2) + b < 0, np.float32(0), a * np.float32(2) + b) - np.float32(0.5)
    bitwise(fused, np.where(r > 0, r, r * np.float32(0.2)))


def test_a_bias_the_kernel_refuses_fails_as_the_unfused_op_does():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None, None], name="x")
        b = mg.placeholder(mg.float32, shape=[None], name="b")
        y = mg.nn.relu(mg.nn.bias_add(mg.exp(x), b, name="biased"))
    feed = {x: np.zeros((2, 3), np.float32), b: np.zeros(4, np.float32)}
    for config in (None, UNFUSED):
        with pytest.raises(errors.InvalidArgumentError, match="as many biases") as e:
            mg.Session(g, config=config).run(y, feed)
        assert e.value.node_name == "biased"
    feed[b] = np.ones(3, np.float32)
    np.testing.assert_array_equal(mg.Session(g).run(y, feed), np.full((2, 3), 2, np.float32))


def test_a_chain_never_spans_two_places_of_a_distributed_executor():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[3], name="x")
        y = mg.exp(mg.sqrt(mg.negative(x, name="a"), name="b"), name="c")
    places = {"a": "/job:worker/task:0", "b": "/job:worker/task:0", "c": "/job:worker/task:1"}
    plan = build_plan([y], [], [x], parse_device(None), True, None, None, places)
    assert [(s.op_type, s.node_name) for s in plan.steps] == [
        ("_FusedElementwise", "b"),  # a and b, on task 0
        ("Exp", "c"),
    ]
    assert [s.op_type for s in build_plan([y], [], [x], parse_device(None)).steps] == [
        "_FusedElementwise"
    ]


def test_one_fused_plan_runs_from_many_threads_at_once():
    """Runs share a plan's fused step (its compiled program and remembered shapes)."""
    from concurrent.futures import ThreadPoolExecutor

    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, shape=[None], name="x")
        y = mg.sqrt(x * 2.0 + 1.0) - 3.0
    sess = mg.Session(g)

    def check(n: int) -> bool:
        v = np.arange(n, dtype=np.float64)
        return np.array_equal(sess.run(y, {x: v}), np.sqrt(v * 2.0 + 1.0) - 3.0)

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(check, [1 + i % 97 for i in range(400)]))


@pytest.mark.parametrize(
    "shape, small_shape, widened",
    [
        ((64, 8, 8, 4), (4,), True),  # Keras's scale and shift of 4 channels
        ((64, 8, 8, 4), (1, 1, 4), True),  # leading ones
        ((256, 32, 32, 4), (32, 4), True),  # 4 MB: the rows of the widened view in blocks
        ((64, 8, 8, 4), (8, 1, 4), False),  # repeated along a middle axis: as it was
        ((3, 5, 7, 3), (3,), False),  # 105 repeats: no run of a power of two fits
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_short_repeated_operands_run_widened_with_the_same_bits(shape, small_shape, widened, dtype):
    # A chain over [..., C] with C-sized operands runs on [rows, run] views, the small
    # operands tiled to the run; every element still meets the same operands.
    from minigraph import runs
    from minigraph.kernel import KernelContext

    rng = np.random.default_rng(9)

    def values(s):
        if dtype == np.int32:
            return rng.integers(-50, 50, s).astype(dtype)
        return rng.standard_normal(s).astype(dtype)

    a, res, scale, shift = values(shape), values(shape), values(small_shape), values(small_shape)
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(dtype, shape=shape, name="x")
        r = mg.placeholder(dtype, shape=shape, name="r")
        y = mg.nn.relu(x * mg.constant(scale) + mg.constant(shift) + r)
    fused, unfused = run_both(g, y, {x: a, r: res})
    bitwise(fused, unfused)
    bitwise(fused, np.maximum(a * scale + shift + res, dtype(0)))
    out = KernelContext({}, np, "n", "Op").empty(shape, dtype)
    inputs, view = runs.widened((a, scale, shift, res), out)
    if widened:
        assert view.ndim == 2 and view.shape[1] % scale.size == 0 and view.shape[1] > scale.size
        assert view.shape[1] <= runs._WIDE_RUN  # a short run: the tiles cost little
        assert np.shares_memory(view, out) and all(v.shape[-1] == view.shape[1] for v in inputs)
    else:
        assert view is out and all(v is w for v, w in zip(inputs, [a, scale, shift, res]))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("n", [7, 5000, 3 << 20])  # 3M: a chain run in blocks, on threads
def test_relu_keeps_signed_zeros_and_nan_bits_fused_or_not(dtype, n):
    # Relu is ``where(x < 0, 0, x)``: -0.0 stays -0.0 and a NaN keeps its bits (TensorFlow's
    # own result for -0.0 depends on its SIMD path), whichever way the plan runs it.
    rng = np.random.default_rng(3)
    v = rng.standard_normal(n).astype(dtype)
    ints = np.dtype(f"u{v.itemsize}")
    quiet_nan = np.array(np.nan, dtype).view(ints)
    special = np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, -np.nan, 6.0], dtype)
    special = np.concatenate([special, (quiet_nan | 1).astype(ints).view(dtype).reshape(1)])
    v[: min(n, special.size)] = special[: min(n, special.size)]
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(dtype, shape=[n], name="x")
        y = mg.nn.relu(x * dtype(1) - dtype(0)), mg.nn.relu6(x * dtype(1))  # -0.0 - 0.0: -0.0
    (fused, fused6), (unfused, unfused6) = run_both(g, list(y), {x: v})
    want = np.where(v < 0, dtype(0), v)
    bitwise(fused, want)
    bitwise(unfused, want)
    bitwise(fused6, np.where(v > 6, dtype(6), want))
    bitwise(unfused6, fused6)
