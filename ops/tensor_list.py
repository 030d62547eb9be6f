"""The value behind the TensorList ops: :class:`TensorList`, and what its ops share
(reading shape tensors, merging partial shapes, moving items between devices).

A list is a :class:`TensorList` held in a 0-d object array of dtype ``variant``, on the
host on every device (the plan never copies it); its items are arrays on the device of the
op that wrote them. Every op makes a new list and never changes the one it reads, so a
list may be read by any number of ops, folded into a constant or fetched. The executor
may overwrite a kernel's outputs and an input after its last reader, so an op that puts
arrays into a list stores copies it owns, and an op that takes arrays out returns new ones.
Messages are TensorFlow's (tensorflow/core/kernels/list_kernels.{h,cc}).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from minigraph import dtypes
from minigraph.devices import is_cupy
from minigraph.dtypes import DType
from minigraph.errors import short_repr
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import INDEX_TYPES, host_array, shape_str
from minigraph.shapes import TensorShape, scalar, unknown_shape, with_rank_at_most
from minigraph.transfer import to_device, to_host

SHAPE_TYPES = INDEX_TYPES  # an element_shape tensor is int32 or int64, as TensorFlow's


# -- The list value and what every op shares ---------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False)
class TensorList:
    """An immutable list of arrays: what a ``variant`` value of the TensorList ops holds.

    ``items`` holds one array per element, or None for an element not set yet (read as
    zeros of the element shape when that is known, as TensorFlow does). The arrays are
    the list's own: no op writes into them, and every op that changes a list makes a new
    TensorList (sharing the unchanged items), so lists are safe to share between threads.
    """

    items: tuple[Any, ...]
    element_dtype: DType
    element_shape: TensorShape
    max_num_elements: int = -1

    def with_items(self, items: tuple[Any, ...]) -> TensorList:
        # (the constructor itself: dataclasses.replace took 3 µs of a loop's list write)
        return TensorList(items, self.element_dtype, self.element_shape, self.max_num_elements)

    def __repr__(self) -> str:
        return (
            f"TensorList(length={len(self.items)}, element_dtype={self.element_dtype.name}, "
            f"element_shape={self.element_shape})"
        )


# TensorFlow's DataTypeString for the names its messages print.
_TF_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def tf_name(dtype: Any) -> str:
    """A dtype as TensorFlow's messages name it (float32 is "float")."""
    name = dtypes.as_dtype(dtype).name
    return _TF_NAMES.get(name, name)


def variant(value: Any) -> np.ndarray:
    """``value`` in a 0-d object array: how a variant (or resource) travels in a run."""
    out = np.empty((), object)
    out[()] = value
    return out


def input_list(ctx: KernelContext, handle: Any) -> TensorList:
    value = handle[()] if isinstance(handle, np.ndarray) and handle.shape == () else handle
    if not isinstance(value, TensorList):
        ctx.fail(f"Input handle is not a list. Saw: '{short_repr(value)}'")
    return value


def check_dtype(ctx: KernelContext, lst: TensorList, attr: str = "element_dtype") -> None:
    want = ctx.attrs[attr]
    if want != lst.element_dtype:
        ctx.fail(
            f"Invalid data types; op elements {tf_name(want)} but list elements "
            f"{tf_name(lst.element_dtype)}"
        )


def on_device(xp: Any, a: Any) -> Any:
    """An item in ``xp``'s memory: a list written on one device may be read on another
    (a variant item, a list of lists, stays on the host as every variant does)."""
    if a.dtype == object:
        return a
    if xp is np:
        return to_host(a)
    if is_cupy(xp) and isinstance(a, np.ndarray):
        return to_device(xp, a)
    return a


def owned_rows(
    ctx: KernelContext, tensor: Any, bounds: list[tuple[int, int]] | None = None
) -> list:
    """Views of one fresh copy of ``tensor``: rows (or ``bounds`` slices) a list may keep
    after the executor reuses ``tensor``'s buffer."""
    fresh = tensor.copy()
    if bounds is None:
        return [fresh[i] for i in range(fresh.shape[0])]
    return [fresh[a:b] for a, b in bounds]


def shape_from_tensor(fail: Callable[[str], NoReturn], t: np.ndarray) -> TensorShape:
    """TensorFlow's TensorShapeFromTensor: -1 (a scalar) is an unknown rank; -1 entries
    of a vector are unknown dims."""
    if t.ndim == 0:
        if int(t) != -1:
            fail("The only valid scalar shape tensor is the fully unknown shape specified as -1.")
        return TensorShape(None)
    if t.ndim != 1:
        fail(f"Shape must be at most rank 1 but is rank {t.ndim}")
    dims = [int(d) for d in t.tolist()]
    for d in dims:
        if d < -1:
            fail(f"Dimension {d} must be >= -1")
    return TensorShape([None if d == -1 else d for d in dims])


def merge_shapes(fail: Callable[[str], NoReturn], a: TensorShape, b: Any) -> TensorShape:
    """PartialTensorShape::MergeWith, with its messages."""
    b = b if isinstance(b, TensorShape) else TensorShape(b)
    if a.dims is None:
        return b
    if b.dims is None:
        return a
    if len(a.dims) != len(b.dims):
        fail(
            f"PartialTensorShape: Incompatible ranks during merge: {len(a.dims)} vs. {len(b.dims)}"
        )
    if not a.is_compatible_with(b):
        fail(f"PartialTensorShape: Incompatible shapes during merge: {a} vs. {b}")
    return TensorShape([x if x is not None else y for x, y in zip(a.dims, b.dims)])


def element_shape_input(ctx: KernelContext, lst: TensorList, t: Any) -> TensorShape:
    """GetElementShapeFromInput: the op's element_shape input merged with the list's."""
    return merge_shapes(
        ctx.fail, shape_from_tensor(ctx.fail, host_array(ctx, t)), lst.element_shape
    )


def merged_with_items(
    ctx: KernelContext, lst: TensorList, shape: TensorShape, which: Any
) -> TensorShape:
    """``shape`` merged with the set items' shapes (``which`` positions), when the list's own
    element shape leaves it open."""
    if lst.element_shape.is_fully_defined():
        return shape
    items = lst.items
    for item_shape in dict.fromkeys(items[i].shape for i in which if items[i] is not None):
        shape = merge_shapes(ctx.fail, shape, item_shape)  # each distinct shape once, in order
    return shape


def scalar_int(ctx: KernelContext, x: Any, what: str) -> int:
    if type(x) is np.ndarray and not x.ndim:  # a loop's index, every step
        return int(x)
    x = host_array(ctx, x)
    if x.size != 1:  # TensorFlow reads scalar<int32>(), which takes any one-element tensor
        ctx.fail(f"{what} must be a scalar, got shape {shape_str(x.shape)}")
    return int(x.reshape(()))


def stacked(
    ctx: KernelContext, items: list[Any], shape: TensorShape, count_shape: list[int]
) -> Any:
    """Fresh array ``count_shape + shape`` of ``items`` (None items are zeros)."""
    xp = ctx.xp
    dims = [int(d) for d in shape.as_list()]
    dtype = ctx.attrs["element_dtype"].np
    ctx.check_size(count_shape + dims, dtype)
    if not items:
        return ctx.allocate(count_shape + dims, dtype)
    zeros = None
    parts = []
    for item in items:
        if item is None:
            if zeros is None:
                zeros = ctx.allocate(dims, dtype, fill=0)
            item = zeros
        parts.append(on_device(xp, item))
    return xp.stack(parts).reshape(count_shape + dims)


def zeros_item(ctx: KernelContext, shape: TensorShape) -> Any:
    return ctx.allocate([int(d) for d in shape.as_list()], ctx.attrs["element_dtype"].np, fill=0)


def copy_out(ctx: KernelContext, item: Any) -> Any:
    """An item as a new array on this device: a list never hands out its own buffers."""
    out = on_device(ctx.xp, item)
    return out.copy() if out is item else out


# -- Lists as gradients: zeros and sums (ZerosLike and AddN of variant tensors) -----------


def zeros_list(ctx: KernelContext, value: Any) -> np.ndarray:
    """TensorListZerosLike: a list as long as ``value``'s with zeros for each set item
    (unset ones stay unset), what ZerosLike makes of a list (a zero gradient)."""
    lst = input_list(ctx, value)
    items = tuple(
        None
        if item is None
        else zeros_list(ctx, item)
        if item.dtype == object
        else ctx.allocate(item.shape, item.dtype, fill=0)
        for item in lst.items
    )
    return variant(TensorList(items, lst.element_dtype, lst.element_shape))


def add_lists(ctx: KernelContext, values: list[Any]) -> np.ndarray:
    """TensorListBinaryAdd over ``values``, in order: item by item, an unset item taking
    the other's; what AddN makes of lists (gradients that reach one list twice)."""
    total = input_list(ctx, values[0])
    for value in values[1:]:
        total = _add_two(ctx, total, input_list(ctx, value))
    return variant(total)


def _add_two(ctx: KernelContext, a: TensorList, b: TensorList) -> TensorList:
    if a.element_dtype != b.element_dtype:
        ctx.fail(
            "Trying to add two lists of tensors of different dtypes. One is "
            f"{tf_name(a.element_dtype)} and the other is {tf_name(b.element_dtype)}"
        )
    if not a.element_shape.is_compatible_with(b.element_shape):
        ctx.fail(
            "Trying to add two lists of tensors with incompatible element shapes. One is "
            f"{a.element_shape} and the other is {b.element_shape}"
        )
    if len(a.items) != len(b.items):
        ctx.fail(
            "Trying to add two lists of tensors with different lengths. One is "
            f"{len(a.items)} and the other is {len(b.items)}"
        )
    items = []
    for x, y in zip(a.items, b.items):
        if x is None or y is None:
            items.append(y if x is None else x)
        elif x.dtype == object:
            items.append(variant(_add_two(ctx, input_list(ctx, x), input_list(ctx, y))))
        elif x.shape != y.shape:
            ctx.fail(
                "Trying to add two tensors with incompatible element shapes. One is "
                f"{shape_str(x.shape)} and the other is {shape_str(y.shape)}"
            )
        else:
            items.append(ctx.xp.add(on_device(ctx.xp, x), on_device(ctx.xp, y)))
    shape = a.element_shape.merge_with(b.element_shape)
    return TensorList(tuple(items), a.element_dtype, shape)


# -- Shape functions: variant outputs are scalars ---------------------------------------


def spec_shape(c: InferenceContext, spec: TensorSpec) -> TensorShape:
    """What an element_shape input says at build time (its value when constant)."""
    if spec.value is not None:
        return shape_from_tensor(c.fail, np.asarray(spec.value))
    with_rank_at_most(spec.shape, 1)
    if spec.shape.rank == 1 and spec.shape.dims[0] is not None:
        return unknown_shape(spec.shape.dims[0])
    return TensorShape(None)


def list_out_shape(c: InferenceContext, *specs: TensorSpec) -> TensorShape:
    return scalar()
