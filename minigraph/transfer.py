"""Host/device copies: the plan inserts a ``_Copy`` step wherever a value must move.

A copy step runs on the device it copies *to*: its GPU kernel moves a host array onto
the GPU, its CPU kernel brings a device array back to the host. Plans place one copy
per (value, device), so a value read by three GPU nodes is copied once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .inference import InferenceContext, TensorSpec
from .kernel import KernelContext
from .registry import define_op, register_kernel
from .shapes import TensorShape

__all__ = ["COPY_OP", "to_device", "to_host"]

COPY_OP = "_Copy"


def to_host(x: Any) -> np.ndarray:
    """A NumPy array for a host or device array (CuPy's ``.get()`` copies to the host)."""
    if isinstance(x, np.ndarray):
        return x
    get = getattr(x, "get", None)
    return get() if get is not None else np.asarray(x)


def to_device(xp: Any, x: Any) -> Any:
    """A copy of ``x`` in ``xp``'s memory. CuPy 14 copies a 0-d host array through a Python
    scalar, which turned -0.0 into 0.0 on an H200: a 0-d value travels as one element."""
    if x.ndim == 0:
        return xp.array(x.reshape(1), copy=True).reshape(())
    return xp.array(x, copy=True)


def _copy_shape(c: InferenceContext, x: TensorSpec) -> TensorShape:
    return x.shape


define_op(
    COPY_OP,
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: type"],
    shape_fn=_copy_shape,
    doc="Internal: copies a value to the device this step runs on.",
)


@register_kernel(COPY_OP, "CPU")
def _copy_to_host_kernel(ctx: KernelContext, x: Any) -> Any:
    return to_host(x)  # a device array is at most as large as host memory allows


@register_kernel(COPY_OP, "GPU")
def _copy_to_device_kernel(ctx: KernelContext, x: Any) -> Any:
    ctx.check_size(x.shape, x.dtype)
    return to_device(ctx.xp, x)  # always a buffer of its own, even device to device
