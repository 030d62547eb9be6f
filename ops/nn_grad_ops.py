"""The gradient ops of the activations and of BiasAdd, with TensorFlow's OpDefs and
kernels: ReluGrad, Relu6Grad, EluGrad, SeluGrad, SoftplusGrad, LeakyReluGrad (one
factory) and BiasAddGrad.

TensorFlow's gradient functions build these ops (ops/nn_grad.py builds the same ones), so
a training graph exported from TensorFlow, or from minigraph, holds them. Each kernel is
TensorFlow's functor (relu_op_functor.h, bias_op.cc) written against ``xp``: ReluGrad and
Relu6Grad multiply by a 0/1 mask, so a NaN or infinite gradient stays NaN where the
feature is not positive, as TensorFlow's; the others select.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from minigraph.fusion_jit import run_op
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.op_def import Elementwise
from minigraph.ops.common import FLOAT, NUMBER, REAL, reduce, shape_str
from minigraph.ops.nn_ops import SELU_ALPHA, SELU_SCALE, bias_axis, in_float32
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, merge, with_rank_at_least
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS: tuple[str, ...] = ()  # gradient ops: TensorFlow exports no builder for them


# -- the activations' gradients: one factory -----------------------------------------------


def _relu_grad(xp: Any, g: Any, x: Any, attrs: dict) -> Any:
    return xp.multiply(g, x > 0, dtype=g.dtype)  # the mask cast inside the product


def _relu6_grad(xp: Any, g: Any, x: Any, attrs: dict) -> Any:
    return xp.multiply(g, (x > 0) & (x < 6), dtype=g.dtype)


def _elu_grad(xp: Any, g: Any, y: Any, attrs: dict) -> Any:
    return xp.where(y < 0, (y + y.dtype.type(1)) * g, g)


def _selu_grad(xp: Any, g: Any, y: Any, attrs: dict) -> Any:
    t = y.dtype.type
    return xp.where(y < 0, g * (y + t(SELU_SCALE * SELU_ALPHA)), g * t(SELU_SCALE))


def _softplus_grad(xp: Any, g: Any, x: Any, attrs: dict) -> Any:
    return g / (xp.exp(-x) + x.dtype.type(1))


def _leaky_relu_grad(xp: Any, g: Any, x: Any, attrs: dict) -> Any:
    alpha = g.dtype.type(np.float32(attrs["alpha"]))  # TensorFlow's float attr, in T
    return xp.where(x > 0, g, g * alpha)


def _same_shape(c: InferenceContext, g: TensorSpec, x: TensorSpec) -> TensorShape:
    return merge(g.shape, x.shape)  # TensorFlow's MergeBothInputsShapeFn


def _equal_shapes(attrs: Any, g: tuple[int, ...], x: tuple[int, ...]) -> Any:
    """The result's shape for elementwise fusion; None where the kernel refuses."""
    return g if g == x else None


def activation_grad(
    op_type: str,
    fn: Callable[..., Any],
    types: str,
    *,
    builder: str,
    second: str = "features",
    attrs: Sequence[str] = (),
    host: str | None = None,
    doc: str,
) -> tuple[Callable[..., Any], type]:
    """Declare and register one activation's gradient op ``(gradients, second) ->
    backprops`` (``second``: the forward op's features or its outputs); returns its
    (builder, class). ``host``: its Python expression for compiled host loops
    (op_def.Elementwise.host), for every float dtype."""
    host_form = None if host is None else lambda attrs, dtype: host
    op_def = define_op(
        op_type,
        inputs=["gradients: T", f"{second}: T"],
        outputs=["backprops: T"],
        attrs=[*attrs, f"T: {types}"],
        shape_fn=_same_shape,
        elementwise=replace(
            Elementwise.result(lambda xp, a, g, x: fn(xp, g, x, a), host=host_form),
            shape=_equal_shapes,
        ),
        doc=doc,
    )

    def kernel(ctx: KernelContext, g: Any, x: Any) -> Any:
        if g.shape != x.shape:
            ctx.fail(
                f"Inputs to operation {ctx.node_name} of type {op_type} must have the same "
                f"size and shape.  Input 0: {shape_str(g.shape)} != input 1: "
                f"{shape_str(x.shape)}"
            )
        out = run_op(ctx, (g, x))  # one compiled loop (host, large, Numba), or None
        if out is not None:
            return out
        return ctx.xp.asarray(fn(ctx.xp, g, x, ctx.attrs)).astype(g.dtype, copy=False)

    kernel.__name__ = f"_{op_type.lower()}_kernel"
    register_kernel(op_type, "CPU", "GPU")(kernel)
    return make_builder(op_def, builder), make_wrapper_class(op_def)


relu_grad, ReluGrad = activation_grad(
    "ReluGrad",
    _relu_grad,
    REAL,
    builder="relu_grad",
    host="{0} * (T(1) if {1} > T(0) else T(0))",  # times the 0/1 mask, as _relu_grad
    doc="""
Relu's gradient: ``gradients * (features > 0)`` (a product, so a NaN or infinite gradient
gives NaN where the feature is not positive, as TensorFlow's kernel). TensorFlow's
gradient of Relu passes Relu's output as ``features``. Inputs of different shapes:
"Inputs to operation r of type ReluGrad must have the same size and shape.  Input 0: [2]
!= input 1: [3]".
""",
)
relu6_grad, Relu6Grad = activation_grad(
    "Relu6Grad",
    _relu6_grad,
    REAL,
    builder="relu6_grad",
    host="{0} * (T(1) if {1} > T(0) and {1} < T(6) else T(0))",
    doc="Relu6's gradient: ``gradients * (0 < features < 6)`` (a product, as ReluGrad).",
)
elu_grad, EluGrad = activation_grad(
    "EluGrad",
    _elu_grad,
    FLOAT,
    builder="elu_grad",
    second="outputs",
    doc="Elu's gradient from its ``outputs``: ``gradients * (outputs + 1)`` where "
    "``outputs < 0``, else ``gradients``.",
)
selu_grad, SeluGrad = activation_grad(
    "SeluGrad",
    _selu_grad,
    FLOAT,
    builder="selu_grad",
    second="outputs",
    doc="Selu's gradient from its ``outputs``: ``gradients * (outputs + scale * alpha)`` "
    "where ``outputs < 0``, else ``gradients * scale``.",
)
softplus_grad, SoftplusGrad = activation_grad(
    "SoftplusGrad",
    _softplus_grad,
    FLOAT,
    builder="softplus_grad",
    doc="Softplus's gradient: ``gradients / (exp(-features) + 1)``.",
)
leaky_relu_grad, LeakyReluGrad = activation_grad(
    "LeakyReluGrad",
    _leaky_relu_grad,
    FLOAT,
    builder="leaky_relu_grad",
    attrs=["alpha: float = 0.2"],
    doc="LeakyRelu's gradient: ``gradients`` where ``features > 0``, else ``gradients * alpha``.",
)


# -- BiasAddGrad ---------------------------------------------------------------------------


def _bias_add_grad_shape(c: InferenceContext, g: TensorSpec) -> TensorShape:
    """The channel dim; as BiasAdd's, a rank-2 NCHW input is taken (TensorFlow's graph-mode
    shape function asks NCHW for rank 3, its kernel sums the rows of rank 2)."""
    s = with_rank_at_least(g.shape, 2)
    if s.dims is None:
        return TensorShape([None])
    return TensorShape([s.dims[bias_axis(c.attrs["data_format"], len(s.dims))]])


BIAS_ADD_GRAD = define_op(
    "BiasAddGrad",
    inputs=["out_backprop: T"],
    outputs=["output: T"],
    attrs=[f"T: {NUMBER}", "data_format: {'NHWC', 'NCHW'} = 'NHWC'"],
    shape_fn=_bias_add_grad_shape,
    doc="""
BiasAdd's gradient for its bias: ``out_backprop`` summed over every dim but the channel
dim (the last; dim 1 for NCHW with rank >= 3, as BiasAdd: a rank-2 NCHW input sums its
rows, as TensorFlow's kernel, where TensorFlow's graph-mode shape function asks NCHW for
rank 3). float16 sums in float32.

>>> import numpy as np, minigraph as mg
>>> from minigraph.ops import nn_grad_ops
>>> g = mg.Graph()
>>> with g.as_default():
...     db = nn_grad_ops.bias_add_grad(np.ones((4, 2, 3)))
>>> mg.Session(g).run(db)
array([8., 8., 8.])
""",
)


@register_kernel("BiasAddGrad", "CPU", "GPU")
def _bias_add_grad_kernel(ctx: KernelContext, g: Any) -> Any:
    if g.ndim < 2:
        ctx.fail(f"Input tensor must be at least 2D: {shape_str(g.shape)}")
    axis = bias_axis(ctx.attrs["data_format"], g.ndim)
    x = in_float32(g)
    if ctx.xp is np and axis == g.ndim - 1 and x.dtype.kind == "f" and x.size:
        # channels last: a product with ones runs BLAS's summing over the rows, where
        # NumPy's column sum loops a row at a time ([50176, 16] float32: 1.0 -> 0.18 ms)
        rows = x.reshape(-1, x.shape[-1])
        total = np.ones(rows.shape[0], x.dtype) @ rows
    else:
        total = reduce(ctx.xp, "sum", x, tuple(a for a in range(g.ndim) if a != axis))
    return ctx.xp.asarray(total).astype(g.dtype, copy=False)


BiasAddGrad = make_wrapper_class(BIAS_ADD_GRAD)
bias_add_grad = make_builder(BIAS_ADD_GRAD, "bias_add_grad")


__all__ = [
    "ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "SoftplusGrad", "LeakyReluGrad",
    "BiasAddGrad", "relu_grad", "relu6_grad", "elu_grad", "selu_grad", "softplus_grad",
    "leaky_relu_grad", "bias_add_grad",
]  # fmt: skip
