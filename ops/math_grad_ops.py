"""TensorFlow's dedicated gradient ops of the unary math functions: TanhGrad, SigmoidGrad,
SqrtGrad, RsqrtGrad and ReciprocalGrad.

Each computes the derivative from the forward op's *output* ``y`` and the incoming
gradient ``dy``, so the gradient graph need not keep the forward input or recompute the
function (TensorFlow's _TanhGrad, _SqrtGrad... emit them; graphs exported by TensorFlow's
training code hold them). The formulas and their order of operations are those of
TensorFlow's CPU kernels (cwise_ops_gradients.h, scalar_*_gradient_op): SqrtGrad,
RsqrtGrad and ReciprocalGrad take the conjugate of ``y`` themselves and give 0 wherever
``dy`` is 0 (even where the derivative is infinite or NaN); TanhGrad and SigmoidGrad
leave conjugating to the gradient function. As TensorFlow, the output is shaped as ``y``
and ``dy`` needs only as many elements.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minigraph.kernel import KernelContext
from minigraph.ops.common import INEXACT, same_shape
from minigraph.registry import define_op, register_kernel
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = ()  # used by gradient functions; not re-exported from minigraph


def _tanh_grad(xp: Any, y: Any, dy: Any) -> Any:
    return dy * (1 - y * y)


def _sigmoid_grad(xp: Any, y: Any, dy: Any) -> Any:
    return dy * y * (1 - y)


def _sqrt_grad(xp: Any, y: Any, dy: Any) -> Any:
    return (0.5 * dy) / xp.conj(y)


def _rsqrt_grad(xp: Any, y: Any, dy: Any) -> Any:
    c = xp.conj(y)
    return -0.5 * (dy * c) * (c * c)


def _reciprocal_grad(xp: Any, y: Any, dy: Any) -> Any:
    c = xp.conj(y)
    return -c * c * dy


def unary_grad_op(
    op_type: str, formula: Callable[..., Any], zero_where_dy_is_zero: bool, doc: str
) -> tuple[Any, type]:
    """Declare and register one ``(y, dy) -> z`` gradient op; returns (builder, class)."""
    op_def = define_op(
        op_type,
        inputs=["y: T", "dy: T"],
        outputs=["z: T"],
        attrs=[f"T: {INEXACT}"],
        shape_fn=same_shape,  # TensorFlow's: y's shape, dy is not merged with it
        doc=doc,
    )

    def kernel(ctx: KernelContext, y: Any, dy: Any) -> Any:
        if y.size != dy.size:
            ctx.fail(
                "The two arguments to a cwise op must have same number of elements, "
                f"got {y.size} and {dy.size}"
            )
        xp = ctx.xp
        dy = dy.reshape(y.shape)
        z = formula(xp, y, dy)
        if zero_where_dy_is_zero:
            z = xp.where(dy == 0, xp.zeros((), y.dtype), z)
        return xp.asarray(z, dtype=y.dtype)  # 0-d operands give NumPy scalars

    register_kernel(op_type, "CPU", "GPU")(kernel)
    builder = "".join("_" + c.lower() if c.isupper() else c for c in op_type).lstrip("_")
    return make_builder(op_def, builder), make_wrapper_class(op_def)


tanh_grad, TanhGrad = unary_grad_op(
    "TanhGrad",
    _tanh_grad,
    False,
    "The gradient of Tanh from its output: ``dy * (1 - y * y)``.",
)
sigmoid_grad, SigmoidGrad = unary_grad_op(
    "SigmoidGrad",
    _sigmoid_grad,
    False,
    "The gradient of Sigmoid from its output: ``dy * y * (1 - y)``.",
)
sqrt_grad, SqrtGrad = unary_grad_op(
    "SqrtGrad",
    _sqrt_grad,
    True,
    "The gradient of Sqrt from its output: ``0.5 * dy / conj(y)``, 0 where dy is 0.",
)
rsqrt_grad, RsqrtGrad = unary_grad_op(
    "RsqrtGrad",
    _rsqrt_grad,
    True,
    "The gradient of Rsqrt from its output: ``-0.5 * dy * conj(y)**3``, 0 where dy is 0.",
)
reciprocal_grad, ReciprocalGrad = unary_grad_op(
    "ReciprocalGrad",
    _reciprocal_grad,
    True,
    "The gradient of Reciprocal from its output: ``-dy * conj(y)**2``, 0 where dy is 0.",
)

__all__ = ["TanhGrad", "SigmoidGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad"]
