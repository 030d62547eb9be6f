"""TensorList ops that make lists and read or write one element: EmptyTensorList,
TensorListReserve, TensorListFromTensor, TensorListSplit, TensorListSetItem,
TensorListGetItem, TensorListLength, TensorListElementShape, TensorListResize,
TensorListPushBack and TensorListPopBack: what tf.TensorArray, Keras RNNs, map_fn and scan
write in TensorFlow 2. The list value and the rules its ops keep are in
:mod:`minigraph.ops.tensor_list`; the ops over many elements at once in
:mod:`minigraph.ops.list_gather_ops`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import host_array, shape_str
from minigraph.ops.tensor_list import (
    SHAPE_TYPES,
    TensorList,
    check_dtype,
    copy_out,
    element_shape_input,
    input_list,
    list_out_shape,
    merged_with_items,
    owned_rows,
    scalar_int,
    shape_from_tensor,
    spec_shape,
    variant,
    zeros_item,
)
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, scalar, with_rank
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = (
    "empty_tensor_list",
    "tensor_list_reserve",
    "tensor_list_from_tensor",
    "tensor_list_split",
    "tensor_list_set_item",
    "tensor_list_get_item",
    "tensor_list_length",
    "tensor_list_element_shape",
    "tensor_list_resize",
    "tensor_list_push_back",
    "tensor_list_pop_back",
)


# -- EmptyTensorList, TensorListReserve ----------------------------------------------------


def _empty_tensor_list_shape(
    c: InferenceContext, element_shape: TensorSpec, max_num_elements: TensorSpec
) -> TensorShape:
    spec_shape(c, element_shape)
    with_rank(max_num_elements.shape, 0)
    return scalar()


EMPTY_TENSOR_LIST = define_op(
    "EmptyTensorList",
    inputs=["element_shape: shape_type", "max_num_elements: int32"],
    outputs=["handle: variant"],
    attrs=["element_dtype: type", f"shape_type: {SHAPE_TYPES}"],
    shape_fn=_empty_tensor_list_shape,
    host_inputs=["element_shape", "max_num_elements"],
    doc="An empty list of ``element_dtype`` tensors of ``element_shape`` (-1: unknown), "
    "holding at most ``max_num_elements`` (-1: no limit).",
)


@register_kernel("EmptyTensorList", "CPU", "GPU")
def _empty_tensor_list_kernel(ctx: KernelContext, element_shape: Any, max_num_elements: Any) -> Any:
    shape = shape_from_tensor(ctx.fail, host_array(ctx, element_shape))
    limit = scalar_int(ctx, max_num_elements, "max_num_elements")
    return variant(TensorList((), ctx.attrs["element_dtype"], shape, limit))


EmptyTensorList = make_wrapper_class(EMPTY_TENSOR_LIST)
empty_tensor_list = make_builder(EMPTY_TENSOR_LIST)


def _tensor_list_reserve_shape(
    c: InferenceContext, element_shape: TensorSpec, num_elements: TensorSpec
) -> TensorShape:
    spec_shape(c, element_shape)
    with_rank(num_elements.shape, 0)
    if num_elements.value is not None and int(num_elements.value) < 0:
        c.fail(
            "The num_elements to reserve must be a non negative number, but got "
            f"{int(num_elements.value)}"
        )
    return scalar()


TENSOR_LIST_RESERVE = define_op(
    "TensorListReserve",
    inputs=["element_shape: shape_type", "num_elements: int32"],
    outputs=["handle: variant"],
    attrs=["element_dtype: type", f"shape_type: {SHAPE_TYPES}"],
    shape_fn=_tensor_list_reserve_shape,
    host_inputs=["element_shape", "num_elements"],
    doc="A list of ``num_elements`` unset elements (read as zeros once their shape is known).",
)


@register_kernel("TensorListReserve", "CPU", "GPU")
def _tensor_list_reserve_kernel(ctx: KernelContext, element_shape: Any, num_elements: Any) -> Any:
    shape = shape_from_tensor(ctx.fail, host_array(ctx, element_shape))
    n = scalar_int(ctx, num_elements, "num_elements")
    if n < 0:
        ctx.fail(f"The num_elements to reserve must be a non negative number, but got {n}")
    ctx.check_size([n], object)  # one reference per element
    return variant(TensorList((None,) * n, ctx.attrs["element_dtype"], shape))


TensorListReserve = make_wrapper_class(TENSOR_LIST_RESERVE)
tensor_list_reserve = make_builder(TENSOR_LIST_RESERVE)


# -- TensorListFromTensor, TensorListSplit -------------------------------------------------


def _tensor_list_from_tensor_shape(
    c: InferenceContext, tensor: TensorSpec, element_shape: TensorSpec
) -> TensorShape:
    if tensor.shape.rank == 0:
        c.fail("Tensor must be at least a vector, but saw shape: []")
    shape = spec_shape(c, element_shape)
    if tensor.shape.rank is not None and not shape.is_compatible_with(tensor.shape[1:]):
        c.fail(f"Specified a list with shape {shape} from a tensor with shape {tensor.shape[1:]}")
    return scalar()


TENSOR_LIST_FROM_TENSOR = define_op(
    "TensorListFromTensor",
    inputs=["tensor: element_dtype", "element_shape: shape_type"],
    outputs=["output_handle: variant"],
    attrs=["element_dtype: type", f"shape_type: {SHAPE_TYPES}"],
    shape_fn=_tensor_list_from_tensor_shape,
    host_inputs=["element_shape"],
    doc="A list of the rows of ``tensor`` (its slices along axis 0).",
)


@register_kernel("TensorListFromTensor", "CPU", "GPU")
def _tensor_list_from_tensor_kernel(ctx: KernelContext, tensor: Any, element_shape: Any) -> Any:
    shape = shape_from_tensor(ctx.fail, host_array(ctx, element_shape))
    if tensor.ndim == 0:
        ctx.fail("Tensor must be at least a vector, but saw shape: []")
    if not shape.is_compatible_with(tensor.shape[1:]):
        ctx.fail(
            f"Specified a list with shape {shape} from a tensor with shape "
            f"{shape_str(tensor.shape[1:])}"
        )
    items = tuple(owned_rows(ctx, tensor))
    return variant(TensorList(items, ctx.attrs["element_dtype"], shape))


TensorListFromTensor = make_wrapper_class(TENSOR_LIST_FROM_TENSOR)
tensor_list_from_tensor = make_builder(TENSOR_LIST_FROM_TENSOR)


def _tensor_list_split_shape(
    c: InferenceContext, tensor: TensorSpec, element_shape: TensorSpec, lengths: TensorSpec
) -> TensorShape:
    if tensor.shape.rank == 0:
        c.fail("Tensor must be at least a vector, but saw shape: []")
    spec_shape(c, element_shape)
    with_rank(lengths.shape, 1)
    return scalar()


TENSOR_LIST_SPLIT = define_op(
    "TensorListSplit",
    inputs=["tensor: element_dtype", "element_shape: shape_type", "lengths: int64"],
    outputs=["output_handle: variant"],
    attrs=["element_dtype: type", f"shape_type: {SHAPE_TYPES}"],
    shape_fn=_tensor_list_split_shape,
    host_inputs=["element_shape", "lengths"],
    doc="A list of consecutive slices of ``tensor`` along axis 0, ``lengths[i]`` rows each.",
)


@register_kernel("TensorListSplit", "CPU", "GPU")
def _tensor_list_split_kernel(
    ctx: KernelContext, tensor: Any, element_shape: Any, lengths: Any
) -> Any:
    shape = shape_from_tensor(ctx.fail, host_array(ctx, element_shape))
    if shape.rank == 0:
        ctx.fail(
            f"TensorListSplit requires element_shape to be at least of rank 1, but saw: {shape}"
        )
    if tensor.ndim == 0:
        ctx.fail("Tensor must be at least a vector, but saw shape: []")
    rest = TensorShape(None) if shape.rank is None else TensorShape(shape.dims[1:])
    if not rest.is_compatible_with(tensor.shape[1:]):
        ctx.fail(
            f"tensor shape {shape_str(tensor.shape)} is not compatible with element_shape {shape}"
        )
    lengths = host_array(ctx, lengths)
    if lengths.ndim != 1:
        ctx.fail(f"Expected lengths to be a vector, received shape: {shape_str(lengths.shape)}")
    rows = tensor.shape[0]
    bounds = []
    start = 0
    for length in lengths.tolist():
        if length < 0:
            ctx.fail(f"Invalid value in lengths: {length}")
        end = start + length
        if end > rows:
            ctx.fail(f"Attempting to slice [{start}, {end}] from tensor with length {rows}")
        bounds.append((start, end))
        start = end
    if start != rows:
        ctx.fail(f"Unused values in tensor. Length of tensor: {rows} Values used: {start}")
    items = tuple(owned_rows(ctx, tensor, bounds))
    return variant(TensorList(items, ctx.attrs["element_dtype"], shape))


TensorListSplit = make_wrapper_class(TENSOR_LIST_SPLIT)
tensor_list_split = make_builder(TENSOR_LIST_SPLIT)


# -- TensorListSetItem, TensorListGetItem -----------------------------------------------------


def _tensor_list_set_item_shape(
    c: InferenceContext, handle: TensorSpec, index: TensorSpec, item: TensorSpec
) -> TensorShape:
    with_rank(index.shape, 0)
    return scalar()


TENSOR_LIST_SET_ITEM = define_op(
    "TensorListSetItem",
    inputs=["input_handle: variant", "index: int32", "item: element_dtype"],
    outputs=["output_handle: variant"],
    attrs=["element_dtype: type", "resize_if_index_out_of_bounds: bool = False"],
    shape_fn=_tensor_list_set_item_shape,
    host_inputs=["index"],
    doc="The list with element ``index`` set to ``item`` (grown to fit when "
    "``resize_if_index_out_of_bounds``, as a dynamic-size tf.TensorArray writes).",
)


@register_kernel("TensorListSetItem", "CPU", "GPU")
def _tensor_list_set_item_kernel(ctx: KernelContext, handle: Any, index: Any, item: Any) -> Any:
    lst = input_list(ctx, handle)
    check_dtype(ctx, lst)
    i = scalar_int(ctx, index, "index")
    n = len(lst.items)
    if i < 0 or (i >= n and not ctx.attrs["resize_if_index_out_of_bounds"]):
        ctx.fail(f"Trying to modify element {i} in a list with {n} elements.")
    fits = ctx.memo.get("fits")  # the last (element shape, item shape) that was compatible
    if fits is None or fits[0] is not lst.element_shape or fits[1] != item.shape:
        if not lst.element_shape.is_compatible_with(item.shape):
            ctx.fail(
                "Tried to set a tensor with incompatible shape at a list index. Item element "
                f"shape: {shape_str(item.shape)} list shape: {lst.element_shape}"
            )
        ctx.memo["fits"] = (lst.element_shape, item.shape)  # (it holds the shape: no other
        # TensorShape takes its identity)
    items = list(lst.items) + [None] * (i + 1 - n)
    items[i] = item.copy()
    return variant(lst.with_items(tuple(items)))


TensorListSetItem = make_wrapper_class(TENSOR_LIST_SET_ITEM)
tensor_list_set_item = make_builder(TENSOR_LIST_SET_ITEM)


def _tensor_list_get_item_shape(
    c: InferenceContext, handle: TensorSpec, index: TensorSpec, element_shape: TensorSpec
) -> TensorShape:
    with_rank(index.shape, 0)
    return spec_shape(c, element_shape)


TENSOR_LIST_GET_ITEM = define_op(
    "TensorListGetItem",
    inputs=["input_handle: variant", "index: int32", "element_shape: Tshape"],
    outputs=["item: element_dtype"],
    attrs=["element_dtype: type", f"Tshape: {SHAPE_TYPES} = int32"],
    shape_fn=_tensor_list_get_item_shape,
    host_inputs=["index", "element_shape"],
    doc="Element ``index`` of the list (zeros of the element shape when it was never set).",
)


@register_kernel("TensorListGetItem", "CPU", "GPU")
def _tensor_list_get_item_kernel(
    ctx: KernelContext, handle: Any, index: Any, element_shape: Any
) -> Any:
    lst = input_list(ctx, handle)
    check_dtype(ctx, lst)
    i = scalar_int(ctx, index, "index")
    if not 0 <= i < len(lst.items):
        ctx.fail(f"Trying to access element {i} in a list with {len(lst.items)} elements.")
    item = lst.items[i]
    if item is not None:
        return copy_out(ctx, item)
    shape = element_shape_input(ctx, lst, element_shape)
    shape = merged_with_items(ctx, lst, shape, range(len(lst.items)))
    if not shape.is_fully_defined():
        ctx.fail(
            "Trying to read an uninitialized tensor but element_shape is not fully defined: "
            f"{shape} and no list element is set."
        )
    return zeros_item(ctx, shape)


TensorListGetItem = make_wrapper_class(TENSOR_LIST_GET_ITEM)
tensor_list_get_item = make_builder(TENSOR_LIST_GET_ITEM)


# -- TensorListLength, TensorListElementShape, TensorListResize -------------------------------


TENSOR_LIST_LENGTH = define_op(
    "TensorListLength",
    inputs=["input_handle: variant"],
    outputs=["length: int32"],
    shape_fn=list_out_shape,
    host_outputs=["length"],
    doc="The number of elements in the list (set or not).",
)


@register_kernel("TensorListLength", "CPU", "GPU")
def _tensor_list_length_kernel(ctx: KernelContext, handle: Any) -> Any:
    return np.array(len(input_list(ctx, handle).items), np.int32)


TensorListLength = make_wrapper_class(TENSOR_LIST_LENGTH)
tensor_list_length = make_builder(TENSOR_LIST_LENGTH)


def _tensor_list_element_shape_shape(c: InferenceContext, handle: TensorSpec) -> TensorShape:
    return TensorShape(None)  # -1 (a scalar) for an unknown rank, else a vector


TENSOR_LIST_ELEMENT_SHAPE = define_op(
    "TensorListElementShape",
    inputs=["input_handle: variant"],
    outputs=["element_shape: shape_type"],
    attrs=[f"shape_type: {SHAPE_TYPES}"],
    shape_fn=_tensor_list_element_shape_shape,
    host_outputs=["element_shape"],
    doc="The list's element shape as a shape tensor: -1 for an unknown rank, -1 entries "
    "for unknown dims.",
)


@register_kernel("TensorListElementShape", "CPU", "GPU")
def _tensor_list_element_shape_kernel(ctx: KernelContext, handle: Any) -> Any:
    shape = input_list(ctx, handle).element_shape
    dtype = ctx.attrs["shape_type"].np
    if shape.dims is None:
        return np.array(-1, dtype)
    return np.array([-1 if d is None else d for d in shape.dims], dtype).reshape(-1)


TensorListElementShape = make_wrapper_class(TENSOR_LIST_ELEMENT_SHAPE)
tensor_list_element_shape = make_builder(TENSOR_LIST_ELEMENT_SHAPE)


def _tensor_list_resize_shape(
    c: InferenceContext, handle: TensorSpec, size: TensorSpec
) -> TensorShape:
    with_rank(size.shape, 0)
    return scalar()


TENSOR_LIST_RESIZE = define_op(
    "TensorListResize",
    inputs=["input_handle: variant", "size: int32"],
    outputs=["output_handle: variant"],
    shape_fn=_tensor_list_resize_shape,
    host_inputs=["size"],
    doc="The list cut to ``size`` elements, or grown with unset ones.",
)


@register_kernel("TensorListResize", "CPU", "GPU")
def _tensor_list_resize_kernel(ctx: KernelContext, handle: Any, size: Any) -> Any:
    lst = input_list(ctx, handle)
    n = scalar_int(ctx, size, "size")
    if n < 0:
        ctx.fail(f"TensorListSlice expects size to be non-negative. Got: {n}")
    ctx.check_size([n], object)
    items = lst.items[:n] + (None,) * max(0, n - len(lst.items))
    return variant(lst.with_items(items))


TensorListResize = make_wrapper_class(TENSOR_LIST_RESIZE)
tensor_list_resize = make_builder(TENSOR_LIST_RESIZE)


# -- TensorListPushBack, TensorListPopBack ---------------------------------------------------------


TENSOR_LIST_PUSH_BACK = define_op(
    "TensorListPushBack",
    inputs=["input_handle: variant", "tensor: element_dtype"],
    outputs=["output_handle: variant"],
    attrs=["element_dtype: type"],
    shape_fn=list_out_shape,
    doc="The list with ``tensor`` appended.",
)


@register_kernel("TensorListPushBack", "CPU", "GPU")
def _tensor_list_push_back_kernel(ctx: KernelContext, handle: Any, tensor: Any) -> Any:
    lst = input_list(ctx, handle)
    check_dtype(ctx, lst)
    if not lst.element_shape.is_compatible_with(tensor.shape):
        ctx.fail(
            "Tried to append a tensor with incompatible shape to a list. Op element shape: "
            f"{shape_str(tensor.shape)} list shape: {lst.element_shape}"
        )
    n, limit = len(lst.items), lst.max_num_elements
    if limit != -1 and n >= limit:
        ctx.fail(f"Tried to push item into a full list list size: {n} max_num_elements: {limit}")
    return variant(lst.with_items(lst.items + (tensor.copy(),)))


TensorListPushBack = make_wrapper_class(TENSOR_LIST_PUSH_BACK)
tensor_list_push_back = make_builder(TENSOR_LIST_PUSH_BACK)


def _tensor_list_pop_back_shape(
    c: InferenceContext, handle: TensorSpec, element_shape: TensorSpec
) -> list[TensorShape]:
    return [scalar(), spec_shape(c, element_shape)]


TENSOR_LIST_POP_BACK = define_op(
    "TensorListPopBack",
    inputs=["input_handle: variant", "element_shape: int32"],
    outputs=["output_handle: variant", "tensor: element_dtype"],
    attrs=["element_dtype: type"],
    shape_fn=_tensor_list_pop_back_shape,
    host_inputs=["element_shape"],
    doc="The list without its last element, and that element.",
)


@register_kernel("TensorListPopBack", "CPU", "GPU")
def _tensor_list_pop_back_kernel(ctx: KernelContext, handle: Any, element_shape: Any) -> Any:
    lst = input_list(ctx, handle)
    check_dtype(ctx, lst)
    if not lst.items:
        ctx.fail("Trying to pop from an empty list.")
    item = lst.items[-1]
    if item is not None:
        value = copy_out(ctx, item)
    else:
        shape = element_shape_input(ctx, lst, element_shape)
        if not shape.is_fully_defined():
            ctx.fail(
                "Trying to read an uninitialized tensor but element_shape is not fully "
                f"defined.{shape}"
            )
        value = zeros_item(ctx, shape)
    return variant(lst.with_items(lst.items[:-1])), value


TensorListPopBack = make_wrapper_class(TENSOR_LIST_POP_BACK)
tensor_list_pop_back = make_builder(TENSOR_LIST_POP_BACK)

__all__ = [
    "EmptyTensorList",
    "TensorListReserve",
    "TensorListFromTensor",
    "TensorListSplit",
    "TensorListSetItem",
    "TensorListGetItem",
    "TensorListLength",
    "TensorListElementShape",
    "TensorListResize",
    "TensorListPushBack",
    "TensorListPopBack",
    *BUILDERS,
]
