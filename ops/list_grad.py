"""Gradients of the TensorList ops (ops/list_ops.py, list_gather_ops.py), one block per
op, as TensorFlow's (tensorflow/python/ops/list_ops.py): the gradient of a list is a list
(a variant tensor), so what writes a list reads its gradient and what reads one writes
it: TensorListFromTensor <-> TensorListStack, TensorListSplit <-> TensorListConcatV2,
TensorListGetItem -> TensorListSetItem, TensorListGather ->
TensorListScatterIntoExistingList, TensorListPushBack <-> TensorListPopBack.

Element shapes are constants where shape inference knows them, else Shape nodes. Lists
that reach one tensor twice are summed by AddN, and a list output nothing differentiates
gets ZerosLike: both work on lists as TensorFlow's do (ops/tensor_list.py). The list
makers (EmptyTensorList, TensorListReserve) and TensorListLength and
TensorListElementShape stop gradients.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph import dtypes
from minigraph.graph import Operation, Output
from minigraph.ops.array_ops import zeros_like
from minigraph.ops.grad_util import shape_of, static_dims
from minigraph.ops.list_gather_ops import (
    tensor_list_concat_v2,
    tensor_list_gather,
    tensor_list_scatter_into_existing_list,
    tensor_list_stack,
)
from minigraph.ops.list_ops import (
    tensor_list_element_shape,
    tensor_list_from_tensor,
    tensor_list_get_item,
    tensor_list_length,
    tensor_list_pop_back,
    tensor_list_push_back,
    tensor_list_reserve,
    tensor_list_resize,
    tensor_list_set_item,
    tensor_list_split,
)
from minigraph.ops.shape_ops import shape
from minigraph.ops.slice_ops import concat
from minigraph.registry import not_differentiable, register_gradient

not_differentiable(
    "EmptyTensorList", "TensorListReserve", "TensorListLength", "TensorListElementShape"
)


def _row_shape(t: Output) -> Any:
    """The shape of ``t``'s rows (``t.shape[1:]``): a constant when known, else sliced
    from a Shape node."""
    dims = static_dims(t)
    if dims is not None:
        return np.array(dims[1:], np.int32)
    return shape(t)[1:]


def _list_shape(handle: Output) -> Output:
    return tensor_list_element_shape(handle, shape_type=dtypes.int32)


# -- TensorListFromTensor, TensorListStack -------------------------------------------------


@register_gradient("TensorListFromTensor")
def _tensor_list_from_tensor_grad(op: Operation, dlist: Output) -> list[Any]:
    t = op.inputs[0]
    dims = t.shape.dims
    rows = dims[0] if dims else None
    tensor_grad = tensor_list_stack(
        dlist, _row_shape(t), element_dtype=t.dtype, num_elements=-1 if rows is None else rows
    )
    return [tensor_grad, None]


@register_gradient("TensorListStack")
def _tensor_list_stack_grad(op: Operation, dtensor: Output) -> list[Any]:
    return [tensor_list_from_tensor(dtensor, _row_shape(dtensor)), None]


# -- TensorListSplit, TensorListConcatV2 ---------------------------------------------------


@register_gradient("TensorListSplit")
def _tensor_list_split_grad(op: Operation, dlist: Output) -> list[Any]:
    tensor, _, lengths = op.inputs
    element_shape = concat([np.array([-1], np.int32), _row_shape(tensor)], 0)
    dtensor = tensor_list_concat_v2(dlist, element_shape, lengths, element_dtype=tensor.dtype)[0]
    return [dtensor, None, None]


@register_gradient("TensorListConcatV2")
def _tensor_list_concat_v2_grad(op: Operation, dtensor: Output, dlengths: Output) -> list[Any]:
    dlist = tensor_list_split(dtensor, _list_shape(op.inputs[0]), op.outputs[1])
    return [dlist, None, None]


# -- TensorListGetItem, TensorListSetItem, TensorListResize ----------------------------------


@register_gradient("TensorListGetItem")
def _tensor_list_get_item_grad(op: Operation, ditem: Output) -> list[Any]:
    handle, index = op.inputs[0], op.inputs[1]
    empty = tensor_list_reserve(
        _list_shape(handle), tensor_list_length(handle), element_dtype=ditem.dtype
    )
    return [tensor_list_set_item(empty, index, ditem), None, None]


@register_gradient("TensorListSetItem")
def _tensor_list_set_item_grad(op: Operation, dlist: Output) -> list[Any]:
    handle, index, item = op.inputs
    list_grad = tensor_list_set_item(dlist, index, zeros_like(item))
    item_grad = tensor_list_get_item(dlist, index, shape_of(item), element_dtype=item.dtype)
    if op.get_attr("resize_if_index_out_of_bounds"):
        list_grad = tensor_list_resize(list_grad, tensor_list_length(handle))
    return [list_grad, None, item_grad]


@register_gradient("TensorListResize")
def _tensor_list_resize_grad(op: Operation, dlist: Output) -> list[Any]:
    return [tensor_list_resize(dlist, tensor_list_length(op.inputs[0])), None]


# -- TensorListGather, TensorListScatterIntoExistingList ---------------------------------------


@register_gradient("TensorListGather")
def _tensor_list_gather_grad(op: Operation, dtensor: Output) -> list[Any]:
    handle, indices = op.inputs[0], op.inputs[1]
    empty = tensor_list_reserve(
        _list_shape(handle), tensor_list_length(handle), element_dtype=dtensor.dtype
    )
    return [tensor_list_scatter_into_existing_list(empty, dtensor, indices), None, None]


@register_gradient("TensorListScatterIntoExistingList")
def _tensor_list_scatter_into_existing_list_grad(op: Operation, dlist: Output) -> list[Any]:
    _, tensor, indices = op.inputs
    dtensor = tensor_list_gather(dlist, indices, _row_shape(tensor), element_dtype=tensor.dtype)
    zeroed = tensor_list_scatter_into_existing_list(dlist, zeros_like(tensor), indices)
    return [zeroed, dtensor, None]


# -- TensorListPushBack, TensorListPopBack -------------------------------------------------------


@register_gradient("TensorListPushBack")
def _tensor_list_push_back_grad(op: Operation, dlist: Output) -> list[Any]:
    tensor = op.inputs[1]
    dhandle, dtensor = tensor_list_pop_back(dlist, shape_of(tensor), element_dtype=tensor.dtype)
    return [dhandle, dtensor]


@register_gradient("TensorListPopBack")
def _tensor_list_pop_back_grad(op: Operation, dlist: Output, delement: Output | None) -> list[Any]:
    if delement is None:  # an element that carries no gradient (an integer): zeros, as TF
        delement = zeros_like(op.outputs[1])
    return [tensor_list_push_back(dlist, delement), None]
