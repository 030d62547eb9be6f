"""What the op test modules share: run a graph built on placeholders, expect its errors, and
compare results by the GPU contract of docs/devices.md."""

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors


def _placeholders(arrays, shapes):
    return [mg.placeholder(mg.as_dtype(a.dtype), shape=s) for a, s in zip(arrays, shapes)]


def run(build, *arrays):
    """Build ``build(*placeholders)`` on a new graph and run it on ``arrays``."""
    g = mg.Graph()
    with g.as_default():
        phs = _placeholders(arrays, [a.shape for a in arrays])
        out = build(*phs)
    return mg.Session(g).run(out, dict(zip(phs, arrays)))


def fails(build, *arrays, match, known=True, shapes=None):
    """``build`` on placeholders fails (at build or run time) with an InvalidArgumentError
    naming a node. The placeholders have the arrays' shapes, or unknown ones unless
    ``known``, or ``shapes``."""
    if shapes is None:
        shapes = [a.shape if known else None for a in arrays]
    with pytest.raises(errors.InvalidArgumentError, match=match) as e:
        g = mg.Graph()
        with g.as_default():
            phs = _placeholders(arrays, shapes)
            out = build(*phs)
        mg.Session(g).run(out, dict(zip(phs, arrays)))
    assert e.value.node_name
    return e.value


def build_fails(build, match):
    """``build()`` fails while the graph is built, with an error naming a node."""
    with pytest.raises(errors.InvalidArgumentError, match=match) as e:
        with mg.Graph().as_default():
            build()
    assert e.value.node_name
    return e.value


def same(got, want):
    """Equal dtype, shape and values (NaNs in the same places)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


# Set by the ``any_device`` fixture while a test runs on a real GPU (not the simulated one).
REAL_GPU = False

# The GPU contract (docs/devices.md, which holds this table too): the most units in the last
# place by which a real GPU's result of each function may differ from the CPU's, for float16,
# float32 and float64. CUDA's documented maximum errors (CUDA Math API, appendix "Mathematical
# Functions") plus the CPU's own (NumPy's loops are within 1 ulp of the exact value, 4 for
# float32's SIMD exp, sin and cos), each against the exact value; float16 runs in float32 and
# rounds once. Everything not named here is bitwise on every device (NaN payloads aside).
GPU_ULPS = {
    "exp": (1, 6, 2),
    "expm1": (1, 3, 2),
    "log": (1, 3, 2),
    "log1p": (1, 3, 2),
    "sin": (1, 6, 3),
    "cos": (1, 6, 3),
    "tanh": (1, 4, 3),
    "pow": (1, 10, 3),
    "sigmoid": (1, 8, 4),
    "rsqrt": (1, 3, 2),
    "erf": (1, 3, 3),
    "erfc": (1, 5, 6),
    "elu": (1, 3, 2),
    "selu": (2, 4, 3),
    "atan2": (1, 4, 3),
}


def gpu_ulps(name, dtype):
    """``GPU_ULPS[name]`` for ``dtype`` (complex: its parts' type)."""
    size = np.dtype(dtype).type(0).real.dtype.itemsize
    return GPU_ULPS[name][{2: 0, 4: 1, 8: 2}[size]]


def _ordered(x):
    """Float bits as integers that order as the floats do (-0.0 and 0.0 one apart)."""
    bits = x.view(f"u{x.dtype.itemsize}")
    sign = np.uint64(1) << np.uint64(8 * x.dtype.itemsize - 1)
    magnitude = (bits & (sign - np.uint64(1)).astype(bits.dtype)).astype(np.int64)
    return np.where(bits >= sign, -magnitude - 1, magnitude)


def ulp_distance(got, want):
    """Units in the last place between two float arrays of one dtype (complex: the larger of
    its parts'), as float64 so that operands of opposite sign cannot overflow."""
    if got.dtype.kind == "c":
        return np.maximum(ulp_distance(got.real, want.real), ulp_distance(got.imag, want.imag))
    a, b = _ordered(np.ascontiguousarray(got)), _ordered(np.ascontiguousarray(want))
    same_sign = (a < 0) == (b < 0)
    near = np.abs(np.where(same_sign, a, 0) - np.where(same_sign, b, 0))  # exact in int64
    return np.where(same_sign, near, np.abs(a.astype(np.float64)) + np.abs(b.astype(np.float64)))


def same_bits(got, want, ulps=0):
    """``got`` is ``want`` by the GPU contract: the same bits on the CPU and the simulated GPU;
    on a real GPU, NaN where ``want`` is NaN (any payload or sign) and elsewhere within
    ``ulps`` units in the last place (0: the same bits, the sign of zero included); with
    ``ulps``, a result below the smallest normal number may be anything up to it."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.shape)
    if not REAL_GPU or want.dtype.kind not in "fc":
        assert got.tobytes() == want.tobytes()
        return
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    far = ulp_distance(got[~nan], want[~nan])
    if ulps:  # CUDA's functions may flush results below the smallest normal number to 0
        tiny = np.finfo(want.dtype).tiny
        far[(np.abs(want[~nan]) < tiny) & (np.abs(got[~nan]) <= tiny)] = 0
    assert not (far > ulps).any(), (
        f"{int((far > ulps).sum())} values beyond {ulps} ulp (at most {far.max():.0f}): "
        f"{got[~nan][far > ulps][:4]} for {want[~nan][far > ulps][:4]}"
    )


def special_values(shape, dtype, seed=0):
    """Normals with every kind of float the ops treat apart: NaNs of both signs and two
    payloads, infinities, signed zeros, subnormals, values at and around 6."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    size = np.dtype(dtype).itemsize
    payloads = {2: (0x7E01, 0xFE23), 4: (0x7FC00001, 0xFFC00123),
                8: (0x7FF8000000000001, 0xFFF8000000000123)}[size]  # fmt: skip
    nans = [np.array(p, f"u{size}").view(dtype) for p in payloads]
    tiny = np.finfo(dtype).smallest_subnormal
    special = [*nans, np.inf, -np.inf, 0.0, -0.0, tiny, -tiny,
               6.0, np.nextafter(dtype(6), dtype(7)), -1e-30, 1e30]  # fmt: skip
    flat = x.reshape(-1)
    with np.errstate(over="ignore"):  # 1e30 is inf in float16
        special = np.array(special, np.float64).astype(dtype)
    flat[: len(special)] = special
    flat[-len(special) :] = special  # in the vector loop's body and in its remainder
    return x


def assert_bits(*arrays):
    first = arrays[0]
    for a in arrays[1:]:
        assert a.dtype == first.dtype and a.shape == first.shape
        assert a.tobytes() == first.tobytes()


def assert_bits_but_nan_signs(*arrays):
    """assert_bits with every NaN's sign bit cleared (its payload kept): a compiled loop's
    NaN may carry another sign (minigraph.fusion_jit: LLVM moves negations through
    products, x * x drops abs)."""
    assert_bits(*[np.where(np.isnan(a), np.abs(a), a) for a in arrays])
