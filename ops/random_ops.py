"""Random ops: RandomUniform, RandomStandardNormal, TruncatedNormal and RandomUniformInt.

**The distributions are TensorFlow's, the bits are not.** TensorFlow draws with Philox4x32-10
and its own conversions to floats; minigraph draws with NumPy's Philox (4x64) keyed by the
node's ``(seed, seed2)`` and NumPy's conversions (float32 uniforms of 24 bits, ziggurat
normals). The same seeds give other numbers than TensorFlow's, from the same distribution:
uniform on ``[0, 1)``, standard normal, the normal truncated to ``(-2, 2)`` by drawing again
(as TensorFlow does; nothing is clipped), integers uniform on ``[minval, maxval)``.

**Seeds, as in TensorFlow's graph mode.** A node's generator starts from its ``seed`` and
``seed2`` attrs on its first run in a Session, and each later run of that node draws the next
values; a new Session starts the sequence again, so two Sessions of one graph give the same
values run by run. ``seed = seed2 = 0`` asks for a nondeterministic sequence (fresh entropy
from the OS). The builders set the attrs as ``tf.compat.v1`` does with no graph-level seed:
``seed=s`` gives ``(87654321, s)``, no seed gives ``(0, 0)``. minigraph has no graph-level
seed (``tf.compat.v1.set_random_seed``); a GraphDef keeps the attrs TensorFlow wrote.

The generator lives in the step's memo (KernelContext.memo), and a Session keeps one plan per
fetch/feed signature: a node run under two signatures in one Session draws two sequences,
each from its seeds (TensorFlow shares one kernel per node across a Session's signatures).
A plan the Session drops (past PLAN_CACHE_SIZE) starts again when rebuilt; the Dask executor
binds each run afresh, so there every run draws a seeded node's first values.

The values are drawn on the host and copied to a GPU, so every device gives the same values
for the same seeds. The ops are stateful: never folded, merged or captured in a CUDA graph.
"""

from __future__ import annotations

import threading
from typing import Any, NoReturn

import numpy as np

from minigraph import dtypes, errors
from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec, shape_from_value
from minigraph.kernel import KernelContext
from minigraph.ops.common import INDEX_TYPES, host_array, shape_str, type_set
from minigraph.ops.math_ops import add, multiply, subtract
from minigraph.registry import define_op, register_kernel
from minigraph.scope import current_scope, name_scope
from minigraph.shapes import TensorShape, with_rank
from minigraph.wrappers import convert_to_output, make_builder, make_wrapper_class

BUILDERS = ("random_uniform", "random_normal", "truncated_normal")

_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)
_INTS = (dtypes.int32, dtypes.int64)
_SEEDS = ["seed: int = 0", "seed2: int = 0"]
_INT64_MAX = 2**63 - 1
_MASK64 = 2**64 - 1
# tf.compat.v1's random_seed: the graph seed an op seed is paired with when none is set.
DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1
_TRUNCATE = 2.0  # TruncatedNormal keeps |x| < 2, as TensorFlow's TruncatedNormalDistribution


# -- shapes ------------------------------------------------------------------------------


def _shape_value(c: InferenceContext, shape: TensorSpec) -> TensorShape:
    """RandomShape (MakeShapeFromShapeTensor): the output's shape from the ``shape`` input;
    a constant one that the kernel would refuse fails now, with the kernel's message."""
    with_rank(shape.shape, 1)
    out = shape_from_value(c, shape)
    if shape.value is not None:
        _checked_dims(c.fail, shape.value.reshape(-1).tolist())
    return out


def _checked_dims(fail: Any, dims: list[int]) -> tuple[int, ...]:
    """tensor::MakeShape's checks, dim by dim: each >= 0, the element count within int64."""
    count = 1
    for d in dims:
        if d < 0:
            fail(f"Dimension {d} must be >= 0")
        count *= d
        if count > _INT64_MAX:
            fail(f"Shape {shape_str(dims)} would have more than 2**63 - 1 elements")
    return tuple(dims)


def _scalar_bound(c: InferenceContext, spec: TensorSpec, what: str) -> int | None:
    if spec.shape.rank not in (None, 0):
        c.fail(f"{what} must be a scalar; got a tensor of shape {spec.shape}")
    return None if spec.value is None else int(spec.value)


def _random_uniform_int_shape(
    c: InferenceContext, shape: TensorSpec, minval: TensorSpec, maxval: TensorSpec
) -> TensorShape:
    lo = _scalar_bound(c, minval, "minval")
    hi = _scalar_bound(c, maxval, "maxval")
    out = _shape_value(c, shape)
    count = out.num_elements()
    if lo is not None and hi is not None and count and lo >= hi:
        c.fail(f"Need minval < maxval, got {lo} >= {hi}")
    return out


# -- the generator -----------------------------------------------------------------------

_MAKING = threading.Lock()


def _generator(ctx: KernelContext) -> np.random.Generator:
    """This step's generator: keyed by its seeds on its first run, kept in its memo."""
    gen = ctx.memo.get("random")
    if gen is None:
        with _MAKING:  # two first runs at once must not each start a sequence
            gen = ctx.memo.get("random")
            if gen is None:
                seed, seed2 = ctx.attrs["seed"], ctx.attrs["seed2"]
                if seed == 0 and seed2 == 0:
                    bits = np.random.Philox()  # nondeterministic, as TensorFlow's (0, 0)
                else:
                    key = np.array([seed & _MASK64, seed2 & _MASK64], np.uint64)
                    bits = np.random.Philox(key=key)
                gen = ctx.memo["random"] = np.random.Generator(bits)
    return gen


def _dims(ctx: KernelContext, shape: Any) -> tuple[int, ...]:
    dims = host_array(ctx, shape)
    if dims.ndim != 1:
        ctx.fail(f"shape must be a vector of {{int32,int64}}, got shape {shape_str(dims.shape)}")
    return _checked_dims(ctx.fail, dims.tolist())


def _on_device(ctx: KernelContext, values: np.ndarray) -> Any:
    return values if ctx.xp is np else ctx.xp.asarray(values)


# -- RandomUniform, RandomStandardNormal, TruncatedNormal --------------------------------


def _uniform(gen: np.random.Generator, dims: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if dtype == np.float16:  # k / 2048: exact in float16, never rounded up to 1
        k = gen.integers(0, 2048, dims, dtype=np.int16)
        return (k.astype(np.float32) * np.float32(2**-11)).astype(np.float16)
    return gen.random(dims, dtype=dtype)


def _normal(gen: np.random.Generator, dims: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if dtype == np.float16:
        return gen.standard_normal(dims, dtype=np.float32).astype(np.float16)
    return gen.standard_normal(dims, dtype=dtype)


def _truncated(gen: np.random.Generator, dims: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Normals with |x| >= 2 drawn again until none is left (a round draws only those:
    4.6% of the last round's), judged after rounding to ``dtype``."""
    out = _normal(gen, dims, dtype)
    flat = out.reshape(-1)
    redo = np.flatnonzero(~(np.abs(flat) < _TRUNCATE))
    while redo.size:
        again = _normal(gen, (redo.size,), dtype)
        flat[redo] = again
        redo = redo[~(np.abs(again) < _TRUNCATE)]
    return out


_DRAWS = {
    "RandomUniform": _uniform,
    "RandomStandardNormal": _normal,
    "TruncatedNormal": _truncated,
}

_DOCS = {
    "RandomUniform": "uniform on ``[0, 1)``",
    "RandomStandardNormal": "from the standard normal distribution",
    "TruncatedNormal": "from the standard normal distribution truncated to ``(-2, 2)``: a "
    "value of 2 or more in magnitude is drawn again (as TensorFlow does; nothing is clipped), "
    "so the standard deviation is about 0.88",
}

_SEED_DOC = """
``seed`` and ``seed2`` key the node's sequence: each run in a Session draws the next values
and a new Session starts again; both 0 means nondeterministic. The distribution is
TensorFlow's, the bits are not (NumPy's Philox; see the random_ops module). Stateful: never
folded. Errors (InvalidArgumentError): ``shape`` not a vector, a negative dim, more than
2**63 - 1 elements."""


def _random_float_kernel(op: str) -> Any:
    draw = _DRAWS[op]

    def kernel(ctx: KernelContext, shape: Any) -> Any:
        dims = _dims(ctx, shape)
        dtype = np.dtype(ctx.attrs["dtype"].np)
        ctx.check_size(dims, dtype)
        values = np.asarray(draw(_generator(ctx), dims, dtype))  # a 0-d draw is a scalar
        return _on_device(ctx, values)

    kernel.__name__ = f"_{op}_kernel"
    return kernel


def _define_random_float(op: str) -> Any:
    op_def = define_op(
        op,
        inputs=["shape: T"],
        outputs=["output: dtype"],
        attrs=[*_SEEDS, f"dtype: {type_set(_FLOATS)}", f"T: {INDEX_TYPES}"],
        shape_fn=_shape_value,
        host_inputs=["shape"],
        is_stateful=True,
        doc=f"A tensor of shape ``shape`` (a host int vector) and type ``dtype``, its values "
        f"{_DOCS[op]}.\n{_SEED_DOC}",
    )
    register_kernel(op, "CPU", "GPU")(_random_float_kernel(op))
    return op_def


RANDOM_UNIFORM = _define_random_float("RandomUniform")
RANDOM_STANDARD_NORMAL = _define_random_float("RandomStandardNormal")
TRUNCATED_NORMAL = _define_random_float("TruncatedNormal")
RandomUniform = make_wrapper_class(RANDOM_UNIFORM)
RandomStandardNormal = make_wrapper_class(RANDOM_STANDARD_NORMAL)
TruncatedNormal = make_wrapper_class(TRUNCATED_NORMAL)
_random_uniform = make_builder(RANDOM_UNIFORM)
_random_standard_normal = make_builder(RANDOM_STANDARD_NORMAL)
_truncated_normal = make_builder(TRUNCATED_NORMAL)


# -- RandomUniformInt --------------------------------------------------------------------

RANDOM_UNIFORM_INT = define_op(
    "RandomUniformInt",
    inputs=["shape: T", "minval: Tout", "maxval: Tout"],
    outputs=["output: Tout"],
    attrs=[*_SEEDS, f"Tout: {type_set(_INTS)}", f"T: {INDEX_TYPES}"],
    shape_fn=_random_uniform_int_shape,
    host_inputs=["shape", "minval", "maxval"],
    is_stateful=True,
    doc=f"""
A tensor of shape ``shape`` whose integers are uniform on ``[minval, maxval)`` (scalars of
type ``Tout``). An empty output needs no valid range, as in TensorFlow; otherwise
``minval >= maxval`` is "Need minval < maxval, got 5 >= 5", at build time when both are
constants. {_SEED_DOC}
""",
)


@register_kernel("RandomUniformInt", "CPU", "GPU")
def _random_uniform_int_kernel(ctx: KernelContext, shape: Any, minval: Any, maxval: Any) -> Any:
    lo, hi = host_array(ctx, minval), host_array(ctx, maxval)
    if lo.ndim != 0:
        ctx.fail(f"minval must be 0-D, got shape {shape_str(lo.shape)}")
    if hi.ndim != 0:
        ctx.fail(f"maxval must be 0-D, got shape {shape_str(hi.shape)}")
    dims = _dims(ctx, shape)
    dtype = lo.dtype
    if ctx.check_size(dims, dtype) == 0:
        return _on_device(ctx, np.empty(dims, dtype))
    if int(lo) >= int(hi):
        ctx.fail(f"Need minval < maxval, got {int(lo)} >= {int(hi)}")
    return _on_device(ctx, _generator(ctx).integers(int(lo), int(hi), dims, dtype=dtype))


RandomUniformInt = make_wrapper_class(RANDOM_UNIFORM_INT)
_random_uniform_int = make_builder(RANDOM_UNIFORM_INT)


# -- builders, as tf.compat.v1's -----------------------------------------------------------


def _fail(message: str, name: str, op: str) -> NoReturn:
    """A builder's argument error, naming the node it would have made."""
    raise errors.InvalidArgumentError(message, current_scope().unique_op_name(name), op)


def _seeds(seed: Any, name: str, op: str) -> tuple[int, int]:
    """random_seed.get_seed with no graph-level seed: ``(DEFAULT_GRAPH_SEED, seed % (2**31 -
    1))`` for an op seed, ``(0, 0)`` (nondeterministic) for none."""
    if seed is None:
        return 0, 0
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        _fail(f"seed must be an int, got {seed!r}", name, op)
    return DEFAULT_GRAPH_SEED, int(seed) % _MAXINT32


def _checked_dtype(dtype: Any, allowed: tuple[dtypes.DType, ...], name: str, op: str) -> Any:
    dt = dtypes.as_dtype(dtype)
    if dt not in allowed:
        names = ", ".join(d.name for d in allowed)
        _fail(
            f"Argument `dtype` got invalid value {dt.name}. Accepted dtypes are {names}.", name, op
        )
    return dt


def _is_python(value: Any, n: int) -> bool:
    return type(value) is int and value == n


def random_uniform(
    shape: Any,
    minval: Any = 0,
    maxval: Any = None,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Output:
    """Values uniform on ``[minval, maxval)``, as tf.compat.v1.random_uniform: RandomUniform
    scaled for floats (``maxval`` defaults to 1), RandomUniformInt for int32/int64 (which
    need ``maxval``). ``seed`` gives reproducible values (see the random_ops module).

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     x = mg.random_uniform([2, 3], -1.0, 1.0, seed=7)
    >>> v = mg.Session(g).run(x)
    >>> v.shape, v.dtype, bool(((v >= -1) & (v < 1)).all())
    ((2, 3), dtype('float32'), True)
    >>> bool((mg.Session(g).run(x) == v).all())  # a new Session starts the sequence again
    True
    """
    name = name or "random_uniform"
    dt = _checked_dtype(dtype, _FLOATS + _INTS, name, "RandomUniform")
    if maxval is None:
        if dt.is_integer:
            _fail(f"Must specify maxval for integer dtype {dt.name}", name, "RandomUniformInt")
        maxval = 1
    seed1, seed2 = _seeds(seed, name, "RandomUniform")
    with name_scope(name):
        if dt.is_integer:
            lo = convert_to_output(minval, dt, name="min")
            hi = convert_to_output(maxval, dt, name="max")
            return _random_uniform_int(shape, lo, hi, seed=seed1, seed2=seed2)
        x = _random_uniform(shape, dtype=dt, seed=seed1, seed2=seed2)
        if _is_python(minval, 0):  # as TensorFlow: [0, 1) as it is, [0, maxval) one product
            if _is_python(maxval, 1):
                return x
            return multiply(x, convert_to_output(maxval, dt, name="max"))
        lo = convert_to_output(minval, dt, name="min")
        hi = convert_to_output(maxval, dt, name="max")
        return add(multiply(x, subtract(hi, lo)), lo)


def _normal_builder(raw: Any, op: str, default: str) -> Any:
    """tf.compat.v1.random_normal or truncated_normal: ``raw`` times stddev, plus mean."""

    def builder(
        shape: Any,
        mean: Any = 0.0,
        stddev: Any = 1.0,
        dtype: Any = dtypes.float32,
        seed: int | None = None,
        name: str | None = None,
    ) -> Output:
        name = name or default
        dt = _checked_dtype(dtype, _FLOATS, name, op)
        seed1, seed2 = _seeds(seed, name, op)
        with name_scope(name):
            mean = convert_to_output(mean, dt, name="mean")
            stddev = convert_to_output(stddev, dt, name="stddev")
            x = raw(shape, dtype=dt, seed=seed1, seed2=seed2)
            return add(multiply(x, stddev), mean)

    builder.__name__ = builder.__qualname__ = default
    return builder


random_normal = _normal_builder(_random_standard_normal, "RandomStandardNormal", "random_normal")
random_normal.__doc__ = """Normal values of ``mean`` and ``stddev``, as
    tf.compat.v1.random_normal: RandomStandardNormal scaled and shifted.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     x = mg.random_normal([10000], mean=5.0, stddev=0.1, seed=1)
    >>> bool(abs(mg.Session(g).run(x).mean() - 5.0) < 0.01)
    True
    """
truncated_normal = _normal_builder(_truncated_normal, "TruncatedNormal", "truncated_normal")
truncated_normal.__doc__ = """Normal values of ``mean`` and ``stddev`` within two
    ``stddev`` of the mean (drawn again beyond, never clipped), as
    tf.compat.v1.truncated_normal.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     x = mg.truncated_normal([10000], stddev=3.0, seed=1)
    >>> bool((abs(mg.Session(g).run(x)) < 6.0).all())
    True
    """

__all__ = [
    "RandomUniform",
    "RandomStandardNormal",
    "TruncatedNormal",
    "RandomUniformInt",
    "DEFAULT_GRAPH_SEED",
    *BUILDERS,
]
