"""A fused elementwise chain on a GPU as one generated CUDA kernel.

On the host a chain runs op by op into one buffer (minigraph.fusion). On a GPU each op of
that loop is a kernel launch and a pass over memory; here the chain's ops, each given as a
C expression by its declaration (``op_def.Elementwise.cuda``), become the body of one
``cupy.ElementwiseKernel``: one launch, one read of each input and one write of the result.

Each op's result is rounded to the chain's dtype before the next reads it, as the op-by-op
kernels round it, and the kernel is compiled with ``--fmad=false`` so that no ``a * b + c``
becomes a fused multiply-add: + - * / and sqrt give the unfused kernels' bits, and each
transcendental function is CUDA's own, as in CuPy's ufuncs. float16 computes in float,
rounding after each op (NumPy's rule). Kernels are cached by their source (CuPy compiles
each once per process, and keeps the binary on disk).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from .registry import elementwise_forms

__all__ = ["chain_kernel"]

# C types of the chain's dtype (CuPy's kernel type names) and what each op computes in.
_C_TYPES = {
    "float16": ("float16", "float"),
    "float32": ("float", "float"),
    "float64": ("double", "double"),
    "int8": ("signed char", "signed char"),
    "int16": ("short", "short"),
    "int32": ("int", "int"),
    "int64": ("long long", "long long"),
    "uint8": ("unsigned char", "unsigned char"),
    "uint16": ("unsigned short", "unsigned short"),
    "uint32": ("unsigned int", "unsigned int"),
    "uint64": ("unsigned long long", "unsigned long long"),
}

# NumPy's maximum and minimum: the first operand when it is NaN or wins the comparison.
_PREAMBLE = """
template <typename C> __device__ C mg_max(C a, C b) { return (a >= b || a != a) ? a : b; }
template <typename C> __device__ C mg_min(C a, C b) { return (a <= b || a != a) ? a : b; }
"""


def chain_kernel(members: Sequence[Any], dtype: Any, num_inputs: int) -> Any | None:
    """``kernel(*inputs, out)`` running the chain ``members`` (fusion.Member) on CuPy arrays of
    ``dtype`` into ``out``, or None where an op has no C expression for this dtype."""
    dtype = np.dtype(dtype)
    if dtype.name not in _C_TYPES:
        return None
    expressions = elementwise_forms(members, "cuda", dtype)
    if expressions is None:
        return None
    lines = []
    for m, expression in zip(members, expressions):
        operands = ["acc" if k < 0 else f"((C)x{k})" for k in m.operands]
        lines.append(f"acc = R({expression.format(*operands)});")
    return _compiled(dtype.name, num_inputs, "\n".join(lines))


@functools.lru_cache(maxsize=256)
def _compiled(dtype_name: str, num_inputs: int, body: str) -> Any:
    import cupy

    t, c = _C_TYPES[dtype_name]
    operation = (
        f"typedef {t} T;\ntypedef {c} C;\n#define R(v) ((C)(T)((C)(v)))\n"
        f"C acc;\n{body}\ny = (T)acc;\n#undef R"
    )
    inputs = ", ".join(f"{dtype_name} x{k}" for k in range(num_inputs))
    return cupy.ElementwiseKernel(
        inputs,
        f"{dtype_name} y",
        operation,
        "minigraph_fused_chain",
        preamble=_PREAMBLE,
        options=("--fmad=false",),
    )
