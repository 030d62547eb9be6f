"""Shape ops: Shape, Size, Rank, Reshape and Transpose.

Each op stands in one block: declaration, shape function, kernel, builder.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec, shape_from_value
from minigraph.kernel import KernelContext
from minigraph.ops.array_ops import range
from minigraph.ops.common import INDEX_TYPES, host_array
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, unknown_shape, with_rank
from minigraph.wrappers import convert_to_output, make_builder, make_wrapper_class

BUILDERS = ("shape", "size", "rank", "reshape", "transpose")


# -- Shape, Size, Rank -------------------------------------------------------------


def _shape_shape(c: InferenceContext, x: TensorSpec) -> Any:
    if x.shape.is_fully_defined():
        return np.array(x.shape.dims, c.attrs["out_type"].np)
    return TensorShape([x.shape.rank])


SHAPE = define_op(
    "Shape",
    inputs=["input: T"],
    outputs=["output: out_type"],
    attrs=["T: type", "out_type: {int32, int64} = int32"],
    shape_fn=_shape_shape,
    host_outputs=["output"],
    doc="The shape of a tensor, as a 1-D integer tensor.",
)


@register_kernel("Shape", "CPU", "GPU")
def _shape_kernel(ctx: KernelContext, x: Any) -> Any:
    return np.array(x.shape, ctx.attrs["out_type"].np)


Shape = make_wrapper_class(SHAPE)
shape = make_builder(SHAPE)


def _size_shape(c: InferenceContext, x: TensorSpec) -> Any:
    n = x.shape.num_elements()
    return TensorShape([]) if n is None else np.array(n, c.attrs["out_type"].np)


SIZE = define_op(
    "Size",
    inputs=["input: T"],
    outputs=["output: out_type"],
    attrs=["T: type", "out_type: {int32, int64} = int32"],
    shape_fn=_size_shape,
    host_outputs=["output"],
    doc="The number of elements of a tensor, as a scalar.",
)


@register_kernel("Size", "CPU", "GPU")
def _size_kernel(ctx: KernelContext, x: Any) -> Any:
    return np.array(x.size, ctx.attrs["out_type"].np)


Size = make_wrapper_class(SIZE)
size = make_builder(SIZE)


def _rank_shape(c: InferenceContext, x: TensorSpec) -> Any:
    return TensorShape([]) if x.shape.rank is None else np.array(x.shape.rank, np.int32)


RANK = define_op(
    "Rank",
    inputs=["input: T"],
    outputs=["output: int32"],
    attrs=["T: type"],
    shape_fn=_rank_shape,
    host_outputs=["output"],
    doc="The rank (number of dimensions) of a tensor, as an int32 scalar.",
)


@register_kernel("Rank", "CPU", "GPU")
def _rank_kernel(ctx: KernelContext, x: Any) -> Any:
    return np.array(x.ndim, np.int32)


Rank = make_wrapper_class(RANK)
rank = make_builder(RANK)


# -- Reshape -----------------------------------------------------------------------


def _reshape_target(fail: Any, n: int | None, dims: list[int | None]) -> list[int | None]:
    """Resolve one -1 (None) in ``dims`` against ``n`` elements, as Reshape does."""
    unknown = [i for i, d in enumerate(dims) if d is None]
    if len(unknown) > 1:
        fail(f"Only one input size may be -1, not both {unknown[0]} and {unknown[1]}")
    known = 1
    for d in dims:
        if d is not None:
            known *= d
    if n is None:
        return dims
    if unknown:
        if known == 0 or n % known:
            if known == 0 and n == 0:
                return [0 if d is None else d for d in dims]
            fail(
                f"Input to reshape is a tensor with {n} values, but the requested shape "
                f"requires a multiple of {known}"
            )
        return [n // known if d is None else d for d in dims]
    if known != n:
        fail(f"Input to reshape is a tensor with {n} values, but the requested shape has {known}")
    return dims


def _reshape_shape(c: InferenceContext, tensor: TensorSpec, shape: TensorSpec) -> TensorShape:
    with_rank(shape.shape, 1)
    target = shape_from_value(c, shape)
    if shape.value is None:
        return target
    return TensorShape(_reshape_target(c.fail, tensor.shape.num_elements(), list(target.dims)))


RESHAPE = define_op(
    "Reshape",
    inputs=["tensor: T", "shape: Tshape"],
    outputs=["output: T"],
    attrs=["T: type", f"Tshape: {INDEX_TYPES} = int32"],
    shape_fn=_reshape_shape,
    host_inputs=["shape"],
    aliases_input=True,
    doc="The same elements in a new shape; one dimension may be -1 (inferred).",
)


@register_kernel("Reshape", "CPU", "GPU")
def _reshape_kernel(ctx: KernelContext, x: Any, shape: Any) -> Any:
    shape = host_array(ctx, shape)
    if shape.ndim != 1:
        ctx.fail(f"sizes input must be 1-D, not {list(shape.shape)}")
    dims = [None if d == -1 else int(d) for d in shape.tolist()]
    for d in dims:
        if d is not None and d < 0:
            ctx.fail(f"Size must be non-negative, not {d}")
    return x.reshape(_reshape_target(ctx.fail, x.size, dims))


Reshape = make_wrapper_class(RESHAPE)
reshape = make_builder(RESHAPE)


# -- Transpose -----------------------------------------------------------------------


def _transpose_shape(c: InferenceContext, x: TensorSpec, perm: TensorSpec) -> TensorShape:
    with_rank(perm.shape, 1)
    n = perm.shape[0] if perm.shape.rank == 1 else None
    s = x.shape if n is None else with_rank(x.shape, n)
    if perm.value is None:
        return unknown_shape(s.rank)
    p = perm.value.tolist()
    _check_perm(c, p, len(p))
    return TensorShape([s.dims[i] for i in p])


def _check_perm(c: Any, p: list[int], rank: int) -> None:
    if sorted(p) != list(np.arange(rank)):
        c.fail(f"{p} is not a valid permutation of {rank} dimensions")


TRANSPOSE = define_op(
    "Transpose",
    inputs=["x: T", "perm: Tperm"],
    outputs=["y: T"],
    attrs=["T: type", f"Tperm: {INDEX_TYPES} = int32"],
    shape_fn=_transpose_shape,
    host_inputs=["perm"],
    aliases_input=True,
    doc="Permutes the dimensions of ``x``: ``y.shape[i] == x.shape[perm[i]]``.",
)


@register_kernel("Transpose", "CPU", "GPU")
def _transpose_kernel(ctx: KernelContext, x: Any, perm: Any) -> Any:
    p = host_array(ctx, perm).tolist()
    if len(p) != x.ndim:
        ctx.fail(
            f"transpose expects a vector of size {x.ndim}. But input(1) is a vector of "
            f"size {len(p)}"
        )
    _check_perm(ctx, p, x.ndim)
    return x.transpose(p)


Transpose = make_wrapper_class(TRANSPOSE)
_transpose = make_builder(TRANSPOSE, "transpose")


def transpose(a: Any, perm: Any = None, name: str = "transpose") -> Output:
    """Permutes dimensions; by default reverses them, as ``tf.transpose``."""
    x = convert_to_output(a)
    if perm is None:
        if x.shape.rank is not None:
            perm = np.arange(x.shape.rank - 1, -1, -1, dtype=np.int32)
        else:
            from minigraph.ops.math_ops import subtract

            perm = range(subtract(rank(x), 1), -1, -1)
    return _transpose(x, perm, name=name)


__all__ = ["Shape", "Size", "Rank", "Reshape", "Transpose", *BUILDERS]
