"""Neural-network ops (tf.nn): BiasAdd; the activations Relu, Relu6, Elu, Selu, LeakyRelu,
Softplus (one factory); Softmax and LogSoftmax (one factory); TopKV2, InTopKV2. Convolution
and pooling are in conv_ops, batch norm in batch_norm_ops, the losses in loss_ops.

Builders have tf.compat.v1.nn's names and arguments; ``minigraph.ops.nn`` (``mg.nn``)
gathers them. float16 inputs are computed in float32 and rounded once, where TensorFlow
accumulates in float32 too (softmax, losses).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any, NoReturn

import numpy as np

from minigraph import errors
from minigraph.fusion_jit import run_op
from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import REUSE_MIN_SIZE, KernelContext
from minigraph.op_def import Elementwise
from minigraph.ops.common import (
    FLOAT,
    NUMBER,
    REAL,
    REQUIRED,
    axis_value,
    host_array,
    reduce,
    select_bits,
    shape_str,
    tf_builder,
    widened_ufunc,
)
from minigraph.ops.math_kernels import first_nan
from minigraph.registry import define_op, register_kernel
from minigraph.runs import may_widen
from minigraph.shapes import (
    TensorShape,
    merge_dim,
    with_rank,
    with_rank_at_least,
)
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS: tuple[str, ...] = ()  # nothing here is top-level in tf.compat.v1
NN_BUILDERS = (
    "bias_add", "relu", "relu6", "elu", "selu", "leaky_relu", "softplus", "softmax",
    "log_softmax", "top_k", "in_top_k",
)  # fmt: skip


def in_float32(x: Any) -> Any:
    """x in its accumulation dtype: float32 for float16, else itself."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


# -- BiasAdd -------------------------------------------------------------------------------


def bias_axis(data_format: str, rank: int) -> int:
    """TensorFlow's kernel: NCHW puts the channels in dim 1 (for rank >= 3), else last."""
    return 1 if data_format == "NCHW" and rank >= 3 else rank - 1


def _bias_add_shape(c: InferenceContext, x: TensorSpec, b: TensorSpec) -> TensorShape:
    xs = with_rank_at_least(x.shape, 2)
    bs = with_rank(b.shape, 1)
    if xs.dims is None:
        return xs
    dims = list(xs.dims)
    axis = bias_axis(c.attrs["data_format"], len(dims))
    if None not in (dims[axis], bs[0]) and dims[axis] != bs[0]:
        c.fail(
            "Must provide as many biases as the last dimension of the input tensor: "
            f"[{bs[0]}] vs. {xs}"
        )
    dims[axis] = merge_dim(dims[axis], bs[0])
    return TensorShape(dims)


def _bias_add_result(attrs: Any, x: tuple[int, ...], b: tuple[int, ...]) -> Any:
    """BiasAdd's result shape for elementwise fusion; None where its kernel would refuse."""
    if len(x) < 2 or len(b) != 1 or x[bias_axis(attrs["data_format"], len(x))] != b[0]:
        return None
    return x


def _bias_add_into(xp: Any, attrs: Any) -> Callable[..., Any]:
    data_format = attrs["data_format"]
    if data_format == "NHWC":  # channels last at every rank: b broadcasts as it is
        return xp.add

    def into(x: Any, b: Any, out: Any) -> Any:
        axis = bias_axis(data_format, x.ndim)
        if axis == x.ndim - 1:  # channels last: b broadcasts as it is
            return xp.add(x, b, out=out)
        shape = [1] * x.ndim
        shape[axis] = b.shape[0]
        return xp.add(x, b.reshape(shape), out=out)

    return into


BIAS_ADD = define_op(
    "BiasAdd",
    inputs=["value: T", "bias: T"],
    outputs=["output: T"],
    attrs=[f"T: {NUMBER}", "data_format: {'NHWC', 'NCHW'} = 'NHWC'"],
    shape_fn=_bias_add_shape,
    elementwise=Elementwise(
        _bias_add_into,
        _bias_add_result,
        broadcasts=lambda attrs: attrs["data_format"] == "NHWC",  # the bias pairs with dim -1
        cuda=lambda attrs, dtype: "{0} + {1}" if attrs["data_format"] == "NHWC" else None,
        host=lambda attrs, dtype: first_nan("+") if attrs["data_format"] == "NHWC" else None,
    ),
    doc="""
Adds the 1-D ``bias`` to ``value`` along its channel dim: the last one (NHWC), or dim 1
for NCHW with rank >= 3 (as TensorFlow's kernel: a rank-2 value takes it last either way).

>>> import numpy as np, minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.nn.bias_add(np.array([[1, 2], [3, 4]]), np.array([10, 20]))
>>> mg.Session(g).run(y)
array([[11, 22],
       [13, 24]])
""",
)


@register_kernel("BiasAdd", "CPU", "GPU")
def _bias_add_kernel(ctx: KernelContext, x: Any, b: Any) -> Any:
    if x.ndim < 2:
        ctx.fail(f"Input tensor must be at least 2D: {shape_str(x.shape)}")
    if b.ndim != 1:
        ctx.fail(f"Biases must be 1D: {shape_str(b.shape)}")
    axis = bias_axis(ctx.attrs["data_format"], x.ndim)
    if x.shape[axis] != b.shape[0]:
        ctx.fail(
            "Must provide as many biases as the last dimension of the input tensor: "
            f"{shape_str(b.shape)} vs. {shape_str(x.shape)}"
        )
    shape = [1] * x.ndim
    shape[axis] = b.shape[0]
    bias = b.reshape(shape)
    if ctx.xp is np and x.dtype == b.dtype:
        if x.size >= REUSE_MIN_SIZE or may_widen((b.size,), x.size):
            return widened_ufunc(np.add, x, bias, ctx.output_buffer((x,), x.shape, x.dtype))
    return x + bias


BiasAdd = make_wrapper_class(BIAS_ADD)
_bias_add = make_builder(BIAS_ADD, "bias_add")


def bias_add(
    value: Any, bias: Any, data_format: str | None = None, name: str | None = None
) -> Output:
    """``value + bias`` along the channel dim, as tf.nn.bias_add ("NC..." formats: dim 1)."""
    fmt = "NCHW" if data_format is not None and data_format.startswith("NC") else "NHWC"
    return _bias_add(value, bias, data_format=fmt, name=name or "BiasAdd")


# -- activations: one factory --------------------------------------------------------------

SELU_SCALE = 1.0507009873554804934193349852946
SELU_ALPHA = 1.6732632423543772848170429916717


def _relu(xp: Any, x: Any, attrs: dict, out: Any) -> None:
    """``x`` where not ``x < 0``, else 0, into ``out`` (which may be ``x``): NaN stays NaN
    and -0.0 stays -0.0, as in TensorFlow's scalar loop (np.maximum makes -0.0 0.0 on
    some SIMD paths and not others). Floats' bits as integers times a 0/1 mask, kept or
    cleared: np.where branches on each element, 1.3 ns an element on random signs against
    0.5 (see the commit); the mask as bools, cast inside the product, is 0.77 -> 0.47 ms
    on [64, 28, 28, 16] float32 against an integer mask made first."""
    if x.dtype.kind != "f":
        xp.maximum(x, x.dtype.type(0), out=out)
        return
    ints = np.dtype(f"i{x.dtype.itemsize}")
    keep = ~xp.less(x, x.dtype.type(0))  # where not x < 0 (NaN too)
    xp.multiply(x.view(ints), keep, out=out.view(ints))


def _relu6(xp: Any, x: Any, attrs: dict, out: Any) -> None:
    _relu(xp, x, attrs, out)
    xp.minimum(out, out.dtype.type(6), out=out)  # NaN stays NaN; no ties but 6 with 6


# Relu as a C expression for fused GPU kernels, and as a Python one for compiled host loops
# (minigraph.fusion_jit): -0.0 and NaN stay, as in _relu.
_RELU = "({0} < C(0) ? C(0) : {0})"
HOST_RELU = "(T(0) if {0} < T(0) else {0})"


def _literal(value: float, dtype: Any) -> str:
    """``value`` rounded to ``dtype`` (as NumPy's weak Python scalars are), as a C literal of
    the compute type."""
    return f"C({float(np.dtype(dtype).type(value))!r})"


def _elu(xp: Any, x: Any, attrs: dict) -> Any:
    return select_bits(xp, x < 0, xp.expm1(xp.minimum(x, 0)), x)


def _selu(xp: Any, x: Any, attrs: dict) -> Any:
    neg = (SELU_SCALE * SELU_ALPHA) * xp.expm1(xp.minimum(x, 0))
    return select_bits(xp, x < 0, neg, SELU_SCALE * x).astype(x.dtype, copy=False)


def _leaky_relu(xp: Any, x: Any, attrs: dict) -> Any:
    """x where x > 0, else alpha * x. With 0 < alpha <= 1 that is the larger of the two
    (with alpha > 1 the smaller): they tie only where they are the same bits (0, +-inf,
    alpha 1), so no np.where, which branches on each element (1.3 ns an element on random
    signs). alpha is TensorFlow's float attr, a float32, converted to x's dtype."""
    alpha = x.dtype.type(np.float32(attrs["alpha"]))
    scaled = xp.multiply(x, alpha, out=xp.empty_like(x))  # an array even when x is 0-d
    if 0 < alpha <= 1:
        return xp.maximum(x, scaled, out=scaled)
    if alpha > 1:
        return xp.minimum(x, scaled, out=scaled)
    return select_bits(xp, x > 0, x, scaled)


def _softplus(xp: Any, x: Any, attrs: dict) -> Any:
    return xp.logaddexp(x.dtype.type(0), x)  # log(1 + exp(x)) without overflow


def activation(
    op_type: str,
    fn: Callable[..., Any],
    types: str,
    *,
    builder: str,
    attrs: Sequence[str] = (),
    params: Sequence[tuple[str, Any]] = (("features", REQUIRED),),
    in_place: bool = False,
    cuda: Callable[[Any, Any], str | None] | None = None,
    host: Callable[[Any, Any], str | None] | None = None,
    doc: str,
) -> tuple[Callable[..., Any], type]:
    """Declare and register one elementwise activation ``features -> activations``;
    returns (tf.compat.v1 builder, class). ``cuda`` and ``host``: its C expression for
    fused GPU kernels and its Python one for compiled host loops (op_def.Elementwise).
    ``in_place``: ``fn`` is
    ``fn(xp, x, attrs, out)`` and writes the result into ``out``, which may be ``x``: no
    temporary result, and the unfused kernel may overwrite a buffer it is handed."""
    elementwise: Elementwise
    if in_place:
        elementwise = Elementwise(
            lambda xp, a: lambda x, out: fn(xp, x, a, out), cuda=cuda, host=host
        )
    else:
        elementwise = Elementwise.result(
            lambda xp, attrs, x: fn(xp, x, attrs), cuda=cuda, host=host
        )
    op_def = define_op(
        op_type,
        inputs=["features: T"],
        outputs=["activations: T"],
        attrs=[f"T: {types}", *attrs],
        shape_fn=lambda c, x: x.shape,
        elementwise=elementwise,
        doc=doc,
    )

    def kernel(ctx: KernelContext, x: Any) -> Any:
        if in_place:
            out = ctx.output_buffer((x,), x.shape, x.dtype)
            if run_op(ctx, (x,), out) is None:  # else one compiled loop (host, large, Numba)
                fn(ctx.xp, x, ctx.attrs, out)
            return out
        out = fn(ctx.xp, x, ctx.attrs)
        return ctx.xp.asarray(out).astype(x.dtype, copy=False)

    kernel.__name__ = f"_{builder}_kernel"
    register_kernel(op_type, "CPU", "GPU")(kernel)
    return tf_builder(op_def, builder, params), make_wrapper_class(op_def)


relu, Relu = activation(
    "Relu",
    _relu,
    REAL,
    builder="relu",
    in_place=True,
    cuda=lambda attrs, dtype: _RELU,
    host=lambda attrs, dtype: HOST_RELU,
    doc="""
``max(features, 0)``; NaN stays NaN and -0.0 stays -0.0 (TensorFlow gives -0.0 or 0.0
depending on its SIMD path).

>>> import numpy as np, minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.nn.relu(np.array([-10.0, -5.0, 0.0, 5.0, 10.0], np.float32))
>>> mg.Session(g).run(y)
array([ 0.,  0.,  0.,  5., 10.], dtype=float32)
""",
)
relu6, Relu6 = activation(
    "Relu6",
    _relu6,
    REAL,
    builder="relu6",
    in_place=True,
    cuda=lambda attrs, dtype: f"mg_min({_RELU}, C(6))",
    host=lambda attrs, dtype: f"(T(6) if {{0}} > T(6) else {HOST_RELU})",  # min(relu, 6)
    doc="``min(max(features, 0), 6)``; NaN stays NaN and -0.0 stays -0.0.",
)
elu, Elu = activation(
    "Elu",
    _elu,
    FLOAT,
    builder="elu",
    cuda=lambda attrs, dtype: "({0} < C(0) ? expm1({0}) : {0})",
    doc="``features`` where positive, else ``exp(features) - 1``.",
)
selu, Selu = activation(
    "Selu",
    _selu,
    FLOAT,
    builder="selu",
    cuda=lambda attrs, dtype: (
        f"({{0}} < C(0) ? R({_literal(SELU_SCALE * SELU_ALPHA, dtype)} * R(expm1({{0}}))) "
        f": R({_literal(SELU_SCALE, dtype)} * {{0}}))"
    ),
    doc="``scale * features`` where positive, else ``scale * alpha * (exp(features) - 1)``, "
    "with scale 1.0507009873554805 and alpha 1.6732632423543772.",
)
leaky_relu, LeakyRelu = activation(
    "LeakyRelu",
    _leaky_relu,
    FLOAT,
    builder="leaky_relu",
    attrs=["alpha: float = 0.2"],
    params=(("features", REQUIRED), ("alpha", 0.2)),
    cuda=lambda attrs, dtype: (
        f"({{0}} > C(0) ? {{0}} : R({{0}} * {_literal(float(np.float32(attrs['alpha'])), dtype)}))"
    ),
    doc="""
``features`` where positive, else ``alpha * features``.

>>> import numpy as np, minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.nn.leaky_relu(np.array([-1.0, 2.0]))
>>> mg.Session(g).run(y)
array([-0.2,  2. ])
""",
)
softplus, Softplus = activation(
    "Softplus",
    _softplus,
    FLOAT,
    builder="softplus",
    doc="``log(exp(features) + 1)``, computed without overflow.",
)


# -- Softmax, LogSoftmax: one factory ------------------------------------------------------


def _softmax_shape(c: InferenceContext, x: TensorSpec) -> TensorShape:
    if x.shape.rank == 0:
        c.fail("logits must have >= 1 dimension, got []")
    return x.shape


def _exp_rows(xp: Any, x: Any) -> tuple[Any, Any, Any]:
    """(x - max, exp(x - max), its sum) over the last axis, in the accumulation dtype."""
    xa = in_float32(x)
    last = (xa.ndim - 1,)
    shifted = xa - reduce(xp, "max", xa, last, keepdims=True)
    e = xp.exp(shifted)
    return shifted, e, reduce(xp, "sum", e, last, keepdims=True)


def log_softmax_rows(xp: Any, x: Any) -> tuple[Any, Any]:
    """(x - max, log(sum(exp(x - max)))) over the last axis, in the accumulation dtype."""
    shifted, _, total = _exp_rows(xp, x)
    return shifted, xp.log(total)


def _softmax_rows(xp: Any, x: Any) -> Any:
    """exp(x - max) times the reciprocal of its sum, as TensorFlow's kernel computes it: one
    exp an element, where exp(x - max - log(sum)) took two."""
    _, e, total = _exp_rows(xp, x)
    e *= xp.reciprocal(total)
    return e


def softmax_op(op_type: str, output: str, log: bool, builder: str, doc: str) -> tuple[Any, type]:
    """Declare and register Softmax or LogSoftmax over the last axis; (builder, class)."""
    op_def = define_op(
        op_type,
        inputs=["logits: T"],
        outputs=[f"{output}: T"],
        attrs=[f"T: {FLOAT}"],
        shape_fn=_softmax_shape,
        doc=doc,
    )

    def kernel(ctx: KernelContext, x: Any) -> Any:
        xp = ctx.xp
        if x.ndim == 0:
            ctx.fail("logits must have >= 1 dimension, got []")
        if x.size == 0:
            return xp.empty(x.shape, x.dtype)
        if log:
            shifted, lse = log_softmax_rows(xp, x)
            out = shifted - lse
        else:
            out = _softmax_rows(xp, x)
        return out.astype(x.dtype, copy=False)

    kernel.__name__ = f"_{builder}_kernel"
    register_kernel(op_type, "CPU", "GPU")(kernel)
    generated = make_builder(op_def, builder)

    def build(
        logits: Any, axis: int | None = None, name: str | None = None, dim: Any = None
    ) -> Any:
        return _on_last_axis(generated, logits, dim if axis is None else axis, name or op_type)

    build.__name__ = build.__qualname__ = builder
    build.__doc__ = op_def.doc.strip()
    return build, make_wrapper_class(op_def)


def _on_last_axis(op: Callable[..., Any], x: Any, axis: int | None, name: str) -> Output:
    """``op`` applied along ``axis``: swapped with the last axis around it when needed."""
    from minigraph.ops.shape_ops import transpose
    from minigraph.wrappers import convert_to_output

    if axis is None or axis == -1:
        return op(x, name=name)
    x = convert_to_output(x)

    def fail(message: str) -> NoReturn:
        raise errors.InvalidArgumentError(message, name, name)

    if x.shape.rank is None:
        fail(f"axis={axis} needs a known rank")
    rank = x.shape.rank
    axis = axis_value(SimpleNamespace(fail=fail), axis, rank)
    if axis == rank - 1:
        return op(x, name=name)
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return transpose(op(transpose(x, perm), name=name), perm)


softmax, Softmax = softmax_op(
    "Softmax",
    "softmax",
    False,
    "softmax",
    """
``exp(logits) / sum(exp(logits))`` over the last axis (the builder takes ``axis``),
computed from ``logits - max`` so that large logits do not overflow.

>>> import numpy as np, minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.nn.softmax(np.array([0.0, np.log(3.0)]))
>>> mg.Session(g).run(y)
array([0.25, 0.75])
""",
)
log_softmax, LogSoftmax = softmax_op(
    "LogSoftmax",
    "logsoftmax",
    True,
    "log_softmax",
    "``logits - log(sum(exp(logits)))`` over the last axis (the builder takes ``axis``), "
    "numerically stable.",
)


# -- TopKV2, InTopKV2 ----------------------------------------------------------------------


def _k_value(ctx: KernelContext, k_in: Any) -> int:
    k = host_array(ctx, k_in)
    if k.ndim != 0:
        ctx.fail(f"k must be 0-D, got shape {shape_str(k.shape)}")
    return int(k)


def _top_k_shape(c: InferenceContext, x: TensorSpec, k: TensorSpec) -> list:
    xs = with_rank_at_least(x.shape, 1)
    with_rank(k.shape, 0)
    kv = None if k.value is None else int(k.value)
    if kv is not None and kv < 0:
        c.fail(f"Need k >= 0, got {kv}")
    if xs.dims is None:
        return [TensorShape(None), TensorShape(None)]
    last = xs.dims[-1]
    if None not in (kv, last) and last < kv:  # type: ignore[operator]
        c.fail(f"input must have at least k columns. Had {last}, needed {kv}")
    out = TensorShape([*xs.dims[:-1], kv])
    return [out, out]


TOP_K_V2 = define_op(
    "TopKV2",
    inputs=["input: T", "k: Tk"],
    outputs=["values: T", "indices: index_type"],
    attrs=[
        "sorted: bool = True",
        f"T: {REAL}",
        "Tk: {int16, int32, int64} = int32",
        "index_type: {int16, int32, int64} = int32",
    ],
    shape_fn=_top_k_shape,
    host_inputs=["k"],
    doc="""
The ``k`` largest entries of each last-axis row of ``input`` and their indices, largest
first; equal values come lower index first (as TensorFlow). NaN counts as the largest
(TensorFlow's comparisons put NaN nowhere consistent: ``[1, nan, 3, 2, nan]`` gives
``[nan, 3, 1]`` for k=3 but ``[3, 1, nan, 2, nan]`` for k=5).
``sorted=False`` gives the same order (TensorFlow leaves it unspecified).
Errors: ``k < 0`` ("Need k >= 0, got -1"); ``k`` larger than the last dim ("input must
have at least k columns. Had 2, needed 3").

>>> import numpy as np, minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     values, indices = mg.nn.top_k(np.array([1.0, 3.0, 3.0, 2.0]), k=3)
>>> mg.Session(g).run([values, indices])
[array([3., 3., 2.]), array([1, 2, 3], dtype=int32)]
""",
)


@register_kernel("TopKV2", "CPU", "GPU")
def _top_k_v2_kernel(ctx: KernelContext, x: Any, k_in: Any) -> list:
    xp = ctx.xp
    k = _k_value(ctx, k_in)
    if k < 0:
        ctx.fail(f"Need k >= 0, got {k}")
    if x.ndim < 1:
        ctx.fail(f"input must be >= 1-D, got shape {shape_str(x.shape)}")
    n = x.shape[-1]
    if n < k:
        ctx.fail(f"input must have at least k columns. Had {n}, needed {k}")
    index_type = ctx.attrs["index_type"].as_numpy_dtype
    ctx.check_size((*x.shape[:-1], k), x.dtype)
    # Descending, ties by lower index: a stable ascending sort of the reversed row, read
    # backwards (works for unsigned ints too, where negation would not).
    order = xp.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1][..., :k]
    indices = (n - 1) - order
    values = xp.take_along_axis(x, indices, axis=-1)
    return [xp.ascontiguousarray(values), xp.ascontiguousarray(indices.astype(index_type))]


TopKV2 = make_wrapper_class(TOP_K_V2)
_top_k_v2 = make_builder(TOP_K_V2, "top_k_v2")


def top_k(
    input: Any,  # noqa: A002
    k: Any = 1,
    sorted: bool = True,  # noqa: A002
    name: str | None = None,
) -> tuple[Output, Output]:
    """(values, indices) of the ``k`` largest entries of each last-axis row, as tf.nn.top_k."""
    values, indices = _top_k_v2(input, k, sorted=sorted, name=name or "TopKV2")
    return values, indices


def _in_top_k_shape(c: InferenceContext, p: TensorSpec, t: TensorSpec, k: TensorSpec) -> Any:
    ps, ts = with_rank(p.shape, 2), with_rank(t.shape, 1)
    with_rank(k.shape, 0)
    batch = ps[0] if ps.dims else None
    if None not in (batch, ts[0]) and batch != ts[0]:
        c.fail(f"First dimension of predictions {batch} must match length of targets {ts[0]}")
    return TensorShape([merge_dim(batch, ts[0])])


IN_TOP_K_V2 = define_op(
    "InTopKV2",
    inputs=["predictions: float32", "targets: T", "k: T"],
    outputs=["precision: bool"],
    attrs=["T: {int32, int64} = int32"],
    shape_fn=_in_top_k_shape,
    host_inputs=["k"],
    doc="""
Whether ``targets[i]`` is among the ``k`` largest ``predictions[i]``: True when fewer than
``k`` predictions of the row are strictly greater than the target's (so ties count in the
target's favour). As TensorFlow: a target out of range, or a row with any non-finite
prediction, answers False (no error).

Example: predictions ``[[1, 3, 3, 2]]``, k=1: target 1 and target 2 are both True.
""",
)


@register_kernel("InTopKV2", "CPU", "GPU")
def _in_top_k_v2_kernel(ctx: KernelContext, p: Any, t: Any, k_in: Any) -> Any:
    xp = ctx.xp
    k = _k_value(ctx, k_in)
    if p.ndim != 2:
        ctx.fail(f"predictions must be 2-dimensional, got {shape_str(p.shape)}")
    if t.ndim != 1:
        ctx.fail(f"targets must be 1-dimensional, got {shape_str(t.shape)}")
    if p.shape[0] != t.shape[0]:
        ctx.fail(
            f"First dimension of predictions {p.shape[0]} must match length of targets {t.shape[0]}"
        )
    batch, classes = p.shape
    valid = (t >= 0) & (t < classes)
    safe = xp.where(valid, t, 0).astype(np.int64)
    target = (
        xp.take_along_axis(p, safe[:, None], axis=1) if classes else xp.zeros((batch, 1), p.dtype)
    )
    finite = xp.isfinite(p).all(axis=1)
    greater = (p > target).sum(axis=1)
    return valid & finite & (greater < k)


InTopKV2 = make_wrapper_class(IN_TOP_K_V2)
_in_top_k_v2 = make_builder(IN_TOP_K_V2, "in_top_k_v2")


def in_top_k(predictions: Any, targets: Any, k: Any, name: str | None = None) -> Output:
    """Whether each target is in its row's top ``k`` predictions, as tf.compat.v1.nn.in_top_k."""
    return _in_top_k_v2(predictions, targets, k, name=name or "InTopKV2")


__all__ = [
    "BiasAdd", "Relu", "Relu6", "Elu", "Selu", "LeakyRelu", "Softplus", "Softmax", "LogSoftmax",
    "TopKV2", "InTopKV2", *NN_BUILDERS,
]  # fmt: skip
