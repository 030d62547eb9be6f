"""Op kernels with a compiled host loop (the ``jit`` extra, minigraph.jit): Erf/Erfc and the
depthwise convolution give the NumPy path's values, and take the loop where they should."""

import numpy as np
import pytest
from op_helpers import assert_bits, special_values

import minigraph as mg
from minigraph import config
from minigraph.ops import conv_jit, math_ops
from minigraph.wrappers import apply_op

pytest.importorskip("numba", reason="the jit extra (Numba) is not installed")

SHAPE = (4, 16, 16, 48)  # 49152 elements: above minigraph.jit.MIN_SIZE


def spy_on(monkeypatch, module, name):
    """Whether each call of ``module.name`` took its compiled loop (returned non-None)."""
    seen = []
    original = getattr(module, name)

    def spy(*args):
        result = original(*args)
        seen.append(result is not None)
        return result

    monkeypatch.setattr(module, name, spy)
    return seen


def run_both(build, *feeds):
    """``build``'s graph run with the compiled loops, then with NumPy calls."""
    g = mg.Graph()
    with g.as_default():
        holders = [mg.placeholder(mg.as_dtype(f.dtype), f.shape) for f in feeds]
        fetch = build(*holders)
    results = []
    try:
        for enabled in (True, False):
            config.set_jit(enabled)
            results.append(mg.Session(g).run(fetch, dict(zip(holders, feeds))))
    finally:
        config.set_jit(None)
    return results


# -- Erf and Erfc ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_and_erfc_run_as_compiled_loops_with_the_numpy_paths_bits(dtype, monkeypatch):
    """Both regions' edges (1, 8, 28), infinities, signed zeros, subnormals and NaNs, in a
    tensor of several blocks: bitwise the same as the NumPy calls', a NaN as the input's."""
    compiled_runs = spy_on(monkeypatch, math_ops, "run_op")
    edges = [1.0, 8.0, 28.0, 30.0]
    edges += [np.nextafter(dtype(e), dtype(0)) for e in edges]
    x = special_values(SHAPE, dtype)
    x.reshape(-1)[100 : 100 + 2 * len(edges)] = np.array(edges + [-e for e in edges], dtype)
    x = np.concatenate([x, np.random.default_rng(2).uniform(-30, 30, x.shape).astype(dtype)])
    compiled, numpy_calls = run_both(lambda t: [mg.erf(t), mg.erfc(t)], x)
    assert compiled_runs == [True, True, False, False]
    nan = np.isnan(x)
    for got, want in zip(compiled, numpy_calls):
        assert_bits(got, want)
        assert_bits(got[nan], x[nan])  # sign and payload kept


# -- DepthwiseConv2dNative ------------------------------------------------------------------


def assert_same_values(got, want):
    """Equal values, signed zeros told apart, NaN where NaN (its payload may differ, as
    between the NumPy forms)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert_bits(got[~nan], want[~nan])


DEPTHWISE = [  # input shape, filter size, strides, dilations, padding, format
    ((4, 28, 28, 44), 5, 1, 1, "SAME", "NHWC"),  # NASNet's separable convolutions
    ((2, 57, 57, 32), 7, 2, 1, "SAME", "NHWC"),  # a reduction cell's, strided
    ((4, 100, 100, 3), 3, 1, 2, "VALID", "NHWC"),  # dilated, few channels
    ((4, 41, 40, 16), 3, (2, 1), 1, "SAME", "NHWC"),  # a row stride alone
    ((2, 16, 40, 40), 3, 1, 1, "SAME", "NCHW"),  # channels first: copied to channels last
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "k", "s", "d", "padding", "fmt"), DEPTHWISE)
def test_depthwise_convolution_runs_as_a_compiled_loop_with_the_numpy_values(
    shape, k, s, d, padding, fmt, dtype, monkeypatch
):
    compiled_runs = spy_on(monkeypatch, conv_jit, "depthwise_rows")
    rng = np.random.default_rng(sum(shape))
    x = special_values(shape, dtype)  # infinities, NaNs, signed zeros
    channels = shape[1] if fmt == "NCHW" else shape[-1]
    w = rng.standard_normal((k, k, channels, 1)).astype(dtype)
    w.reshape(-1)[:3] = [0.0, -0.0, np.inf]
    sh, sw = (s, s) if isinstance(s, int) else s
    strides = [1, 1, sh, sw] if fmt == "NCHW" else [1, sh, sw, 1]

    def build(t):
        return mg.nn.depthwise_conv2d_native(
            t, w, strides, padding, data_format=fmt, dilations=[d, d]
        )

    compiled, numpy_calls = run_both(build, x)
    assert compiled_runs == [True, False]
    assert_same_values(compiled, numpy_calls)


def test_a_small_or_multiplied_depthwise_convolution_keeps_the_numpy_forms(monkeypatch):
    """Under minigraph.jit.MIN_SIZE output elements, or several filters a channel."""
    compiled_runs = spy_on(monkeypatch, conv_jit, "depthwise_rows")
    x = np.random.default_rng(0).standard_normal((1, 8, 8, 4)).astype(np.float32)
    w = np.ones((3, 3, 4, 1), np.float32)
    run_both(lambda t: mg.nn.depthwise_conv2d_native(t, w, 1, "SAME"), x)
    assert compiled_runs == [False, False]
    big = np.zeros((4, 28, 28, 44), np.float32)
    two = np.ones((3, 3, 44, 2), np.float32)
    compiled_runs.clear()
    run_both(lambda t: mg.nn.depthwise_conv2d_native(t, two, 1, "SAME"), big)
    assert compiled_runs == []  # depthwise_conv's loop over taps, never asked


# -- MaxPool and MaxPoolGrad ----------------------------------------------------------------


def pooling_input(shape, dtype, seed=0):
    """special_values with ties (equal zeros of both signs, repeated values) and windows of
    only -inf."""
    x = special_values(shape, dtype, seed)
    flat = x.reshape(-1)
    flat[200:400] = np.round(flat[200:400])  # many equal values, 0.0 and -0.0 among them
    flat[1000:1200:2] = -0.0
    x[0, :4, :4] = -np.inf  # channels-last or first: some window of only -inf
    return x


POOLS = [  # input shape, window, strides, padding, format
    ((16, 28, 28, 16), 2, 2, "VALID", "NHWC"),  # a CNN's 2x2 pooling: windows apart
    ((16, 29, 29, 16), 3, 2, "SAME", "NHWC"),  # overlapping, padded
    ((4, 30, 30, 24), (3, 2), (1, 2), "SAME", "NHWC"),  # unequal window and strides
    ((8, 24, 30, 30), 3, 2, "SAME", "NCHW"),  # channels first: transposed, then copied
    ((16, 29, 29, 16), 2, 2, "SAME", "NHWC"),  # windows apart, the last ones padded
    ((16, 41, 44, 16), 2, 3, "VALID", "NHWC"),  # windows apart, cells between them
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "k", "s", "padding", "fmt"), POOLS)
def test_max_pool_and_its_gradient_run_as_compiled_loops_with_the_numpy_bits(
    shape, k, s, padding, fmt, dtype, monkeypatch
):
    from minigraph.ops import pool_jit

    forward_runs = spy_on(monkeypatch, pool_jit, "max_pool")
    backward_runs = spy_on(monkeypatch, pool_jit, "max_pool_grad")
    x = pooling_input(shape, dtype)
    kh, kw = (k, k) if isinstance(k, int) else k
    sh, sw = (s, s) if isinstance(s, int) else s
    if fmt == "NCHW":
        ksize, strides = [1, 1, kh, kw], [1, 1, sh, sw]
    else:
        ksize, strides = [1, kh, kw, 1], [1, sh, sw, 1]
    grads = None

    def build(t):
        nonlocal grads
        y = mg.nn.max_pool(t, ksize, strides, padding, data_format=fmt)
        grads = special_values(y.shape.as_list(), dtype, 1)  # NaN, inf and -0.0 gradients
        attrs = {"ksize": ksize, "strides": strides, "padding": padding, "data_format": fmt}
        return [y, apply_op("MaxPoolGrad", None, [t, y, grads], attrs).outputs[0]]

    compiled, numpy_calls = run_both(build, x)
    assert forward_runs == [True, False] and backward_runs == [True, False]
    for got, want in zip(compiled, numpy_calls):
        assert_bits(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("shape", "k", "s", "padding", "fmt"),
    [*POOLS, ((4, 21, 21, 44), 3, 1, "SAME", "NHWC")],  # NASNet's: each cell in nine windows
)
def test_avg_pool_runs_as_a_compiled_loop_with_the_numpy_values(
    shape, k, s, padding, fmt, dtype, monkeypatch
):
    """Means over the cells inside the input (SAME's padding not counted), added in scan
    order: the NumPy form's values (which NaN payload survives where two meet may differ)."""
    from minigraph.ops import pool_jit

    runs = spy_on(monkeypatch, pool_jit, "avg_pool")
    x = pooling_input(shape, dtype)
    kh, kw = (k, k) if isinstance(k, int) else k
    sh, sw = (s, s) if isinstance(s, int) else s
    ksize, strides = (
        ([1, 1, kh, kw], [1, 1, sh, sw]) if fmt == "NCHW" else ([1, kh, kw, 1], [1, sh, sw, 1])
    )
    compiled, numpy_calls = run_both(
        lambda t: mg.nn.avg_pool(t, ksize, strides, padding, data_format=fmt), x
    )
    assert runs == [True, False]
    assert_same_values(compiled, numpy_calls)


def test_max_pool_of_float16_keeps_the_numpy_form(monkeypatch):
    from minigraph.ops import pool_jit

    forward_runs = spy_on(monkeypatch, pool_jit, "max_pool")
    x = np.zeros((8, 64, 64, 16), np.float16)
    run_both(lambda t: mg.nn.max_pool(t, 2, 2, "VALID"), x)
    assert forward_runs == [False, False]


# -- ResourceApplyAdam ----------------------------------------------------------------------


@pytest.mark.parametrize("nesterov", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adam_runs_as_a_compiled_loop_with_the_numpy_values(dtype, nesterov, monkeypatch):
    """var, m, v and the gradient with infinities, NaNs, signed zeros and subnormals (a
    negative v too: NaN from its square root): the compiled update's values are the NumPy
    calls' (which NaN payload survives where two meet may differ)."""
    from minigraph import ops
    from minigraph.ops import training_jit
    from minigraph.scope import current_scope

    compiled_runs = []
    original = training_jit.adam

    def spy(*args):
        compiled_runs.append(original(*args))
        return compiled_runs[-1]

    monkeypatch.setattr(training_jit, "adam", spy)
    shape = (300, 200)  # 60000 elements: above minigraph.jit.MIN_SIZE, two pieces
    start = [special_values(shape, dtype, seed) for seed in range(3)]
    scalars = [np.asarray(s, dtype) for s in (0.81, 0.998, 0.01, 0.9, 0.999, 1e-7)]
    g = mg.Graph()
    with g.as_default():
        variables = [mg.Variable(a) for a in start]
        ops.ResourceApplyAdam(
            current_scope(),
            *[v.handle for v in variables],
            *scalars,
            special_values(shape, dtype, 3),
            use_nesterov=nesterov,
        )
        update = g.get_operation_by_name("ResourceApplyAdam")
        init = mg.global_variables_initializer()
    results = []
    try:
        for enabled in (True, False):
            config.set_jit(enabled)
            with mg.Session(g) as sess:
                sess.run(init)
                sess.run(update)
                results.append(sess.run(variables))
    finally:
        config.set_jit(None)
    assert compiled_runs == [True, False]
    for got, want in zip(*results):
        assert_same_values(got, want)
