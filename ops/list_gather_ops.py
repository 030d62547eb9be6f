"""TensorList ops over many elements at once: TensorListStack, TensorListGather,
TensorListConcatV2 and TensorListScatterIntoExistingList (tf.TensorArray's stack, gather,
concat and scatter). The list value and its rules are in :mod:`minigraph.ops.tensor_list`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import host_array, shape_str
from minigraph.ops.tensor_list import (
    SHAPE_TYPES,
    check_dtype,
    element_shape_input,
    input_list,
    merge_shapes,
    merged_with_items,
    on_device,
    owned_rows,
    spec_shape,
    stacked,
    tf_name,
    variant,
)
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, scalar, with_rank
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = (
    "tensor_list_stack",
    "tensor_list_gather",
    "tensor_list_concat_v2",
    "tensor_list_scatter_into_existing_list",
)


# -- TensorListStack, TensorListGather -----------------------------------------------------------


def _tensor_list_stack_shape(
    c: InferenceContext, handle: TensorSpec, element_shape: TensorSpec
) -> TensorShape:
    count = c.attrs["num_elements"]
    return TensorShape([None if count == -1 else count]).concatenate(spec_shape(c, element_shape))


TENSOR_LIST_STACK = define_op(
    "TensorListStack",
    inputs=["input_handle: variant", "element_shape: int32"],
    outputs=["tensor: element_dtype"],
    attrs=["element_dtype: type", "num_elements: int = -1"],
    shape_fn=_tensor_list_stack_shape,
    host_inputs=["element_shape"],
    doc="The list's elements stacked along a new axis 0 (unset ones as zeros); "
    "``num_elements`` (-1: any) is the length the list must have.",
)


@register_kernel("TensorListStack", "CPU", "GPU")
def _tensor_list_stack_kernel(ctx: KernelContext, handle: Any, element_shape: Any) -> Any:
    lst = input_list(ctx, handle)
    check_dtype(ctx, lst)
    n = len(lst.items)
    count = ctx.attrs["num_elements"]
    if count != -1 and n != count:
        ctx.fail(
            f"Operation expected a list with {count} elements but got a list with {n} elements."
        )
    shape = element_shape_input(ctx, lst, element_shape)
    if not shape.is_fully_defined() and not n:
        ctx.fail(
            "Tried to stack elements of an empty list with non-fully-defined element_shape: "
            f"{shape}"
        )
    shape = merged_with_items(ctx, lst, shape, range(n))
    if not shape.is_fully_defined():
        ctx.fail(
            "Tried to stack list which only contains uninitialized tensors and has a "
            f"non-fully-defined element_shape: {shape}"
        )
    return stacked(ctx, list(lst.items), shape, [n])


TensorListStack = make_wrapper_class(TENSOR_LIST_STACK)
tensor_list_stack = make_builder(TENSOR_LIST_STACK)


def _tensor_list_gather_shape(
    c: InferenceContext, handle: TensorSpec, indices: TensorSpec, element_shape: TensorSpec
) -> TensorShape:
    return indices.shape.concatenate(spec_shape(c, element_shape))


TENSOR_LIST_GATHER = define_op(
    "TensorListGather",
    inputs=["input_handle: variant", "indices: int32", "element_shape: int32"],
    outputs=["values: element_dtype"],
    attrs=["element_dtype: type"],
    shape_fn=_tensor_list_gather_shape,
    host_inputs=["indices", "element_shape"],
    doc="The elements at ``indices``, stacked (shaped ``indices.shape + element_shape``, as "
    "TensorFlow's shape function says).",
)


@register_kernel("TensorListGather", "CPU", "GPU")
def _tensor_list_gather_kernel(
    ctx: KernelContext, handle: Any, indices: Any, element_shape: Any
) -> Any:
    lst = input_list(ctx, handle)
    check_dtype(ctx, lst)
    indices = host_array(ctx, indices)
    flat = indices.reshape(-1).tolist()
    shape = element_shape_input(ctx, lst, element_shape)
    if not shape.is_fully_defined() and not flat:
        ctx.fail(f"Tried to gather 0-elements from a list with non-fully-defined shape: {shape}")
    n = len(lst.items)
    for i in flat:
        if not 0 <= i < n:
            ctx.fail(f"Index {i} out o range; list only has {n} elements.")
    shape = merged_with_items(ctx, lst, shape, flat)
    if not shape.is_fully_defined():
        ctx.fail(
            "Tried to gather uninitialized tensors from a list with non-fully-defined "
            f"element_shape: {shape}"
        )
    return stacked(ctx, [lst.items[i] for i in flat], shape, list(indices.shape))


TensorListGather = make_wrapper_class(TENSOR_LIST_GATHER)
tensor_list_gather = make_builder(TENSOR_LIST_GATHER)


# -- TensorListConcatV2, TensorListScatterIntoExistingList -----------------------------------


def _tensor_list_concat_v2_shape(
    c: InferenceContext, handle: TensorSpec, element_shape: TensorSpec, leading_dims: TensorSpec
) -> list[TensorShape]:
    shape = spec_shape(c, element_shape)
    if shape.rank == 0:
        c.fail("Concat requires elements to be at least vectors, found scalars instead.")
    rest = TensorShape(None) if shape.rank is None else TensorShape(shape.dims[1:])
    return [TensorShape([None]).concatenate(rest), TensorShape([None])]


TENSOR_LIST_CONCAT_V2 = define_op(
    "TensorListConcatV2",
    inputs=["input_handle: variant", "element_shape: shape_type", "leading_dims: int64"],
    outputs=["tensor: element_dtype", "lengths: int64"],
    attrs=["element_dtype: type", f"shape_type: {SHAPE_TYPES}"],
    shape_fn=_tensor_list_concat_v2_shape,
    host_inputs=["element_shape", "leading_dims"],
    host_outputs=["lengths"],
    doc="The list's elements concatenated along axis 0, and each one's length. An unset "
    "element is zeros, ``leading_dims[i]`` rows long (or as long as every set element).",
)


@register_kernel("TensorListConcatV2", "CPU", "GPU")
def _tensor_list_concat_v2_kernel(
    ctx: KernelContext, handle: Any, element_shape: Any, leading_dims: Any
) -> Any:
    lst = input_list(ctx, handle)
    check_dtype(ctx, lst)
    shape = element_shape_input(ctx, lst, element_shape)
    if shape.rank == 0:
        ctx.fail("Concat requires elements to be at least vectors, found scalars instead.")
    first = None if shape.rank is None else shape.dims[0]
    rest = TensorShape(None) if shape.rank is None else TensorShape(shape.dims[1:])
    if not lst.items and not rest.is_fully_defined():
        ctx.fail(
            "All except the first dimension must be fully defined when concating an empty "
            f"tensor list. element_shape: {rest}"
        )
    if not lst.element_shape.is_fully_defined():
        seen: set[int] = set()
        for i, item in enumerate(lst.items):
            if item is None:
                continue
            if item.ndim == 0:
                ctx.fail(f"Concat saw a scalar shape at index {i} but requires at least vectors.")
            rest = merge_shapes(ctx.fail, rest, item.shape[1:])
            if first is not None and first != item.shape[0]:
                ctx.fail(
                    "First entry of element_shape input does not match the first dim of list "
                    f"element at index: {i} Expected: {first} Actual: {item.shape[0]}"
                )
            seen.add(item.shape[0])
        if first is None and len(seen) == 1:
            first = seen.pop()  # every set element has this many rows
    if not rest.is_fully_defined():
        ctx.fail(
            "Trying to concat list with only uninitialized tensors but "
            f"element_shape_except_first_dim is not fully defined: {rest}"
        )
    leading = host_array(ctx, leading_dims).reshape(-1).tolist()
    lengths = []
    for i, item in enumerate(lst.items):
        if item is not None:
            lengths.append(item.shape[0])
        elif i < len(leading):
            lengths.append(int(leading[i]))
        elif first is not None:
            lengths.append(first)
        else:
            ctx.fail(
                f"List contains uninitialized tensor at index {i} but leading_dims has only "
                f"{len(leading)} elements."
            )
    dims = [int(d) for d in rest.as_list()]
    dtype = ctx.attrs["element_dtype"].np
    ctx.check_size([sum(lengths), *dims], dtype)
    parts = [
        ctx.allocate([n, *dims], dtype, fill=0) if item is None else on_device(ctx.xp, item)
        for item, n in zip(lst.items, lengths)
    ]
    if parts:
        out = ctx.xp.concatenate(parts)
    else:
        out = ctx.allocate([0, *dims], dtype)
    return out, np.array(lengths, np.int64)


TensorListConcatV2 = make_wrapper_class(TENSOR_LIST_CONCAT_V2)
tensor_list_concat_v2 = make_builder(TENSOR_LIST_CONCAT_V2)


def _tensor_list_scatter_into_existing_list_shape(
    c: InferenceContext, handle: TensorSpec, tensor: TensorSpec, indices: TensorSpec
) -> TensorShape:
    if tensor.shape.rank == 0:
        c.fail("Tensor must be at least a vector, but saw shape: []")
    with_rank(indices.shape, 1)
    return scalar()


TENSOR_LIST_SCATTER_INTO_EXISTING_LIST = define_op(
    "TensorListScatterIntoExistingList",
    inputs=["input_handle: variant", "tensor: element_dtype", "indices: int32"],
    outputs=["output_handle: variant"],
    attrs=["element_dtype: type"],
    shape_fn=_tensor_list_scatter_into_existing_list_shape,
    host_inputs=["indices"],
    doc="The list with element ``indices[i]`` set to ``tensor[i]`` (grown to fit the "
    "largest index; a repeated index keeps its last row).",
)


@register_kernel("TensorListScatterIntoExistingList", "CPU", "GPU")
def _tensor_list_scatter_into_existing_list_kernel(
    ctx: KernelContext, handle: Any, tensor: Any, indices: Any
) -> Any:
    lst = input_list(ctx, handle)
    if ctx.attrs["element_dtype"] != lst.element_dtype:
        ctx.fail(
            f"Invalid data types; input tensor type: {tf_name(ctx.attrs['element_dtype'])} "
            f"list element_type: {tf_name(lst.element_dtype)}"
        )
    if tensor.ndim == 0:
        ctx.fail("Tensor must be at least a vector, but saw shape: []")
    indices = host_array(ctx, indices)
    if indices.ndim != 1:
        ctx.fail(f"Expected indices to be a vector, but received shape: {shape_str(indices.shape)}")
    if indices.size != tensor.shape[0]:
        ctx.fail(
            "Expected len(indices) == tensor.shape[0], but saw: "
            f"{indices.size} vs. {tensor.shape[0]}"
        )
    if indices.size and int(indices.min()) < 0:
        ctx.fail("Indices in TensorListScatter must all be non-negative.")
    if not lst.element_shape.is_compatible_with(tensor.shape[1:]):
        ctx.fail(
            "Tried to scatter a tensor with incompatible shape into a list. Item element "
            f"shape: {shape_str(tensor.shape[1:])} list shape: {lst.element_shape}"
        )
    top = int(indices.max()) + 1 if indices.size else 0
    ctx.check_size([top], object)
    items = list(lst.items) + [None] * (top - len(lst.items))
    for i, row in zip(indices.tolist(), owned_rows(ctx, tensor)):
        items[i] = row  # in order: a repeated index keeps its last row, as TensorFlow
    return variant(lst.with_items(tuple(items)))


TensorListScatterIntoExistingList = make_wrapper_class(TENSOR_LIST_SCATTER_INTO_EXISTING_LIST)
tensor_list_scatter_into_existing_list = make_builder(TENSOR_LIST_SCATTER_INTO_EXISTING_LIST)

__all__ = [
    "TensorListStack",
    "TensorListGather",
    "TensorListConcatV2",
    "TensorListScatterIntoExistingList",
    *BUILDERS,
]
