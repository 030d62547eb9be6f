"""Fused chains as compiled host loops (minigraph.fusion_jit, the ``jit`` extra): each runs
as one loop where it can, with bitwise the NumPy path's and the unfused plan's results, and
keeps the NumPy path where it cannot."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import assert_bits, assert_bits_but_nan_signs, special_values

import minigraph as mg
from minigraph import config, fusion, fusion_jit
from minigraph.ops.nn_grad_ops import relu6_grad, relu_grad
from minigraph.optimizer import OptimizerOptions

pytest.importorskip("numba", reason="the jit extra (Numba) is not installed")

UNFUSED = mg.ConfigProto(
    graph_options=mg.GraphOptions(optimizer_options=OptimizerOptions(do_elementwise_fusion=False))
)
SHAPE = (4, 16, 16, 48)  # 49152 elements: above the size that runs NumPy calls directly


def spy_on_run_chain(monkeypatch, module):
    """What each call of ``module.run_chain`` returns (True: it ran a compiled loop)."""
    seen = []
    original = module.run_chain

    def spy(*args):
        seen.append(original(*args))
        return seen[-1]

    monkeypatch.setattr(module, "run_chain", spy)
    return seen


@pytest.fixture
def compiled_runs(monkeypatch):
    """What each fused step's run_chain returned."""
    yield spy_on_run_chain(monkeypatch, fusion)
    config.set_jit(None)


def run_three_ways(g, fetch, feed):
    """The fused plan compiled, the fused plan as NumPy calls, the unfused plan."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        config.set_jit(True)
        compiled = mg.Session(g).run(fetch, feed)
        config.set_jit(False)
        numpy_calls = mg.Session(g).run(fetch, feed)
        unfused = mg.Session(g, config=UNFUSED).run(fetch, feed)
    return compiled, numpy_calls, unfused


def chain_graph(dtype, build):
    """A graph feeding ``x`` (SHAPE) to ``build(x)``; returns (graph, fetch, feed)."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(dtype, [None, *SHAPE[1:]], name="x")
        y = build(x)
    return g, y, {x: special_values(SHAPE, dtype)}


CHANNELS = SHAPE[-1]
rng = np.random.default_rng(1)
SCALE = (rng.standard_normal(CHANNELS) + 1).astype(np.float32)
SHIFT = rng.standard_normal(CHANNELS).astype(np.float32)
CHAINS = {
    # a batch norm's scale and shift, then Relu6 (MobileNetV2's every layer)
    "scale_shift_relu6": lambda x, c: mg.nn.relu6(x * c(SCALE) + c(SHIFT)),
    "bias_add_relu": lambda x, c: mg.nn.relu(mg.nn.bias_add(x, c(SHIFT))),
    "residual": lambda x, c: mg.nn.relu(x * c(SCALE) + c(SHIFT) + x * 2),
    "sub_div": lambda x, c: (x - c(SHIFT)) / c(SHIFT),  # a divisor of 0, inf, NaN
    "unary": lambda x, c: mg.reciprocal(mg.sqrt(mg.abs(mg.square(x + 1) - 3))),
    "divide_by_scalar": lambda x, c: mg.truediv(x * 3, c(np.float32(0))),
    "trailing_block": lambda x, c: (x + c(special_values(SHAPE[2:], np.float32, 2))) * 0.5,
    # a layer norm: statistics per position ([n, h, w, 1]), scale and shift per channel
    # around a NumPy ufunc (op_def.AroundUfunc): GELU as Keras writes it (ConvNeXt),
    # swish's sigmoid, an LSTM cell's tanh, and exp and erf after other ops
    "gelu": lambda x, c: mg.erfc(-x * c(0.7071067811865476)) * c(SCALE),
    "sigmoid": lambda x, c: mg.sigmoid(x * c(SCALE)) + c(SHIFT),
    "tanh": lambda x, c: mg.tanh(x - c(SHIFT)) * c(SCALE),
    "exp": lambda x, c: c(SCALE) * mg.exp(mg.negative(x)),
    "erf": lambda x, c: mg.erf(x * 3) + 1,
    "layer_norm": lambda x, c: (
        (x - mg.reduce_mean(x, -1, keepdims=True))
        * mg.rsqrt(mg.reduce_mean(mg.square(x), -1, keepdims=True) + 1e-3)
        * c(SCALE)
        + c(SHIFT)
    ),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CHAINS))
def test_a_chain_runs_as_one_loop_with_the_numpy_paths_bits(name, dtype, compiled_runs):
    g, y, feed = chain_graph(dtype, lambda x: CHAINS[name](x, lambda v: np.asarray(v, dtype)))
    compiled, numpy_calls, unfused = run_three_ways(g, y, feed)
    assert compiled_runs[0] is True
    assert not any(compiled_runs[1:])  # set_jit(False): the NumPy path
    assert_bits_but_nan_signs(compiled, numpy_calls, unfused)


def test_relu_keeps_signed_zeros_and_nan_bits(compiled_runs):
    g, y, feed = chain_graph(np.float32, lambda x: mg.nn.relu(x * 1.5))
    compiled, *_ = run_three_ways(g, y, feed)
    x = next(iter(feed.values())) * np.float32(1.5)
    want = np.where(x < 0, np.float32(0), x)  # NaN and -0.0 are not below 0: kept
    assert_bits(compiled, want)


def test_activation_gradients_run_as_one_loop(compiled_runs):
    g = mg.Graph()
    grads = special_values(SHAPE, np.float32, 3)
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, *SHAPE[1:]], name="x")
        gr = mg.placeholder(mg.float32, [None, *SHAPE[1:]], name="g")
        y = relu6_grad(relu_grad(gr * 2, x), x) * 0.5
    feed = {x: special_values(SHAPE, np.float32), gr: grads}
    compiled, numpy_calls, unfused = run_three_ways(g, y, feed)
    assert compiled_runs[0] is True
    assert_bits(compiled, numpy_calls, unfused)
    features = feed[x]
    mask = ((features > 0) & (features < 6)).astype(np.float32)  # both masks, as products
    with np.errstate(invalid="ignore"):  # inf times a 0 of the mask
        want = grads * np.float32(2) * (features > 0).astype(np.float32) * mask * np.float32(0.5)
    assert_bits(compiled, want)


def test_a_buffer_handed_over_by_the_executor_is_read_and_written_in_place(compiled_runs):
    # The product is dead after the chain reads it: the chain writes over it (read as out).
    a = np.random.default_rng(4).standard_normal((4096, 32)).astype(np.float32)
    b = np.random.default_rng(5).standard_normal((32, CHANNELS)).astype(np.float32)
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, 32], name="x")
        y = mg.nn.relu6(mg.matmul(x, b) * SCALE + SHIFT)
    compiled, numpy_calls, unfused = run_three_ways(g, y, {x: a})
    assert compiled_runs[0] is True
    assert_bits(compiled, numpy_calls, unfused)


@pytest.mark.parametrize(
    "case",
    [
        "log",  # a function with no compiled form
        "two_ufuncs",  # two around NumPy calls: the loops would recompute the first
        "float16",  # NumPy computes in float32 and rounds: not a loop's arithmetic
        "maximum",  # NumPy's choice between 0.0 and -0.0 depends on its SIMD path
        "middle_broadcast",  # a layout the loop does not read
        "strided_input",
    ],
)
def test_what_the_loop_cannot_run_stays_numpy_calls(case, compiled_runs):
    dtype = np.float16 if case == "float16" else np.float32
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(dtype, [None, *SHAPE[1:]], name="x")
        if case == "log":
            y = mg.log(x * 2) + 1
        elif case == "two_ufuncs":
            y = mg.tanh(mg.sigmoid(x * 2)) + 1
        elif case == "maximum":
            y = mg.maximum(x * 2, 0.0) + 1
        elif case == "middle_broadcast":
            y = x * np.ones((SHAPE[0], 1, 1, CHANNELS), np.float32) + 1
        elif case == "strided_input":
            wide = mg.concat([x, x], 3)
            y = mg.strided_slice(wide, [0] * 4, [0, 0, 0, CHANNELS], [1] * 4, end_mask=7) * 2 + 1
        else:
            y = x * 2 + 1
    feed = {x: special_values(SHAPE, dtype)}
    compiled, numpy_calls, unfused = run_three_ways(g, y, feed)
    assert compiled_runs and not any(compiled_runs)
    assert_bits(compiled, numpy_calls, unfused)


JITTED_BINARY = {"add": mg.add, "subtract": mg.subtract, "multiply": mg.multiply,
                 "truediv": mg.truediv}  # fmt: skip
JITTED_UNARY = {"negative": mg.negative, "abs": mg.abs, "square": mg.square, "sqrt": mg.sqrt,
                "reciprocal": mg.reciprocal, "relu": mg.nn.relu, "relu6": mg.nn.relu6,
                "sigmoid": mg.sigmoid, "tanh": mg.tanh, "exp": mg.exp, "erfc": mg.erfc}  # fmt: skip


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_random_chains_of_exact_ops_are_bitwise_the_unfused_plan(data):
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    seed = data.draw(st.integers(0, 2**16))
    operands = {  # every layout the loop reads: full, a trailing block, a channel, one value
        "full": special_values(SHAPE, dtype, seed + 1),
        "block": special_values(SHAPE[1:], dtype, seed + 2),
        "channel": special_values((CHANNELS,), dtype, seed + 3),
        "one": np.asarray(data.draw(st.sampled_from([0.0, -0.0, 2.5, np.nan])), dtype),
        "row": special_values((*SHAPE[:-1], 1), dtype, seed + 4),
    }
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(dtype, [None, *SHAPE[1:]], name="x")
        y = x
        for _ in range(data.draw(st.integers(2, 5))):
            if data.draw(st.booleans()):
                op = JITTED_BINARY[data.draw(st.sampled_from(sorted(JITTED_BINARY)))]
                other = mg.constant(operands[data.draw(st.sampled_from(sorted(operands)))])
                y = op(y, other) if data.draw(st.booleans()) else op(other, y)
            else:
                y = JITTED_UNARY[data.draw(st.sampled_from(sorted(JITTED_UNARY)))](y)
    config.set_jit(None)
    try:
        compiled, numpy_calls, unfused = run_three_ways(
            g, y, {x: special_values(SHAPE, dtype, seed)}
        )
    finally:
        config.set_jit(None)
    assert_bits_but_nan_signs(compiled, numpy_calls, unfused)


def test_asking_for_the_jit_without_numba_names_the_extra(monkeypatch):
    monkeypatch.setattr(config, "jit_installed", lambda: False)
    with pytest.raises(ImportError, match=r"minigraph\[jit\]"):
        config.set_jit(True)
    config.set_jit(None)
    assert config.jit() is False  # the default: NumPy calls without Numba


def test_numba_is_imported_only_when_a_large_chain_runs():
    code = (
        "import sys, numpy as np, minigraph as mg\n"
        "g = mg.Graph()\n"
        "with g.as_default():\n"
        "    x = mg.placeholder(mg.float32, [None], name='x')\n"
        "    y = mg.nn.relu(x * 2 + 1)\n"
        "s = mg.Session(g)\n"
        "s.run(y, {x: np.ones(8, np.float32)})\n"
        "print('numba' in sys.modules)\n"
        "s.run(y, {x: np.ones(1 << 16, np.float32)})\n"
        "print('numba' in sys.modules)\n"
    )
    env = {**os.environ, "MINIGRAPH_JIT": ""}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]


@pytest.mark.parametrize("op", ["relu", "relu6", "relu_grad", "relu6_grad"])
def test_a_lone_activation_or_its_gradient_runs_as_one_loop(op, monkeypatch):
    # Their NumPy kernels take several passes (a mask, then a product): outside a chain too
    # (a gradient that two ops read), a large one is one compiled loop, with the same bits.
    seen = spy_on_run_chain(monkeypatch, fusion_jit)  # run_op calls it
    build = {"relu": mg.nn.relu, "relu6": mg.nn.relu6}.get(op)
    grad = {"relu_grad": relu_grad, "relu6_grad": relu6_grad}.get(op)
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, *SHAPE[1:]], name="x")
        gr = mg.placeholder(mg.float32, [None, *SHAPE[1:]], name="g")
        y = build(x) if build else grad(gr, x)
    feed = {x: special_values(SHAPE, np.float32), gr: special_values(SHAPE, np.float32, 5)}
    try:
        compiled, numpy_calls, unfused = run_three_ways(g, y, feed)
    finally:
        config.set_jit(None)
    assert seen[0] is True
    assert_bits(compiled, numpy_calls, unfused)
    features = feed[x]
    if op == "relu":
        want = np.where(features < 0, np.float32(0), features)
    elif op == "relu6":
        want = np.minimum(np.where(features < 0, np.float32(0), features), np.float32(6))
    else:
        mask = features > 0 if op == "relu_grad" else (features > 0) & (features < 6)
        with np.errstate(invalid="ignore"):
            want = feed[gr] * mask.astype(np.float32)
    assert_bits(compiled, want)


def test_a_compiled_chain_never_writes_what_the_user_passed(compiled_runs):
    data = special_values(SHAPE, np.float32)
    scale = SCALE.copy()
    kept = data.copy(), scale.copy()
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, *SHAPE[1:]], name="x")
        y = mg.nn.relu6(x * scale + 1)
    config.set_jit(True)
    out = mg.Session(g).run(y, {x: data})
    assert compiled_runs == [True]
    assert_bits(data, kept[0])
    assert_bits(scale, kept[1])
    assert not np.shares_memory(out, data)
