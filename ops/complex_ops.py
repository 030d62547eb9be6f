"""Complex numbers: Conj, the complex conjugate.

TensorFlow's gradients of products, quotients and most unary functions multiply by the
conjugate of an operand (a complex gradient is the conjugate of the derivative times the
incoming gradient), so Conj is what makes those gradients right for complex inputs. As
``tf.math.conj``, the builder returns a real or integer tensor unchanged (no op is
added: TensorFlow's Conj kernel takes complex types only).
"""

from __future__ import annotations

from typing import Any

from minigraph.graph import Output
from minigraph.kernel import KernelContext
from minigraph.ops.common import same_shape
from minigraph.registry import define_op, register_kernel
from minigraph.wrappers import convert_to_output, make_builder, make_wrapper_class

BUILDERS = ("conj",)

# TensorFlow's T also allows variant (the conjugate of a tensor list's elements); minigraph's
# variants are opaque host objects with no conjugate, so only the complex types are taken.
CONJ = define_op(
    "Conj",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: {complex64, complex128} = complex64"],
    shape_fn=same_shape,
    doc="""
The complex conjugate of each element: ``a + bj`` becomes ``a - bj``.

>>> import numpy as np, minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.conj(np.complex64([1 + 2j, 3j]))
>>> mg.Session(g).run(y)
array([1.-2.j, 0.-3.j], dtype=complex64)
""",
)


@register_kernel("Conj", "CPU", "GPU")
def _conj_kernel(ctx: KernelContext, x: Any) -> Any:
    return ctx.xp.asarray(ctx.xp.conj(x))  # NumPy gives a scalar for a 0-d input


Conj = make_wrapper_class(CONJ)
_conj = make_builder(CONJ, "conj")


def conj(x: Any, name: str | None = None) -> Output:
    """The complex conjugate of ``x`` (the Conj op), as ``tf.math.conj``: a real or
    integer ``x`` is returned as it is."""
    out = convert_to_output(x)
    if out.dtype.is_complex:
        return _conj(out, name=name or "Conj")
    if out.dtype.is_floating or out.dtype.is_integer:
        return out
    raise TypeError(f"conj takes numeric tensors, got {out.dtype.name} ({out.name})")


__all__ = ["Conj", *BUILDERS]
