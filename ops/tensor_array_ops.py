"""TF1 TensorArray ops: TensorArrayV3 and its Read, Write, Gather, Scatter, Concat, Split,
Size and Close (V3), what tf.compat.v1 while loops and map_fn write with control flow v1.

Unlike a TensorList, a TF1 TensorArray is mutable: TensorArrayV3 makes one per run and
returns a ``resource`` handle to it (a 0-d object array on the host) and a ``flow`` scalar;
each op that writes returns a new flow, and an op that reads takes the flow of the writes
before it, so the flow edges order the ops on one array (writes into it are locked, as
independent steps may run on two threads). Elements are stored as copies the array owns
and read out as new arrays. Rules and messages are TensorFlow's (tensor_array.h,
tensor_array_ops.cc): writing an index twice or after reading it is an error; with
``clear_after_read`` an element can be read once; an element never written reads as zeros
when the element shape is fully known; ``identical_element_shapes`` fixes the element
shape at the first write. Gradients (TensorArrayGradV3) are not supported.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

import numpy as np

from minigraph.dtypes import DType
from minigraph.errors import UnimplementedError, short_repr
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import host_array, shape_str
from minigraph.ops.tensor_list import on_device, scalar_int, tf_name, variant
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import (
    TensorShape,
    merge_dim,
    scalar,
    with_rank,
    with_rank_at_least,
)
from minigraph.wrappers import make_wrapper_class

BUILDERS = ()  # graphs with these ops come from TensorFlow; mg.TensorArray writes TensorLists

# TensorFlow names each array "<tensor_array_name or node name>_<n>", n counting per process.
_COUNTER = itertools.count()


class _Slot:
    """One element: its value and what has been done to it."""

    __slots__ = ("value", "written", "read", "cleared")

    def __init__(self) -> None:
        self.value: Any = None
        self.written = False
        self.read = False
        self.cleared = False


class TensorArrayState:
    """The mutable array a TensorArrayV3 handle refers to (TensorFlow's TensorArray)."""

    def __init__(
        self,
        name: str,
        dtype: DType,
        size: int,
        element_shape: TensorShape,
        dynamic_size: bool,
        clear_after_read: bool,
        identical_element_shapes: bool,
    ) -> None:
        self.name = name
        self.dtype = dtype
        self.slots = [_Slot() for _ in range(size)]
        self.element_shape = element_shape
        self.dynamic_size = dynamic_size
        self.clear_after_read = clear_after_read
        self.identical_element_shapes = identical_element_shapes
        self.closed = False
        self.lock = threading.Lock()

    def __repr__(self) -> str:
        return f"TensorArray({self.name}, size={len(self.slots)}, dtype={self.dtype.name})"

    def write(self, ctx: KernelContext, index: int, value: Any) -> None:
        """LockedWriteOrAggregate without aggregation (only gradient arrays aggregate)."""
        if index < 0 or (not self.dynamic_size and index >= len(self.slots)):
            ctx.fail(
                f"TensorArray {self.name}: Tried to write to index {index} but array is not "
                f"resizeable and size is: {len(self.slots)}"
            )
        if index >= len(self.slots):
            ctx.check_size([index + 1], object)
            self.slots.extend(_Slot() for _ in range(index + 1 - len(self.slots)))
        slot = self.slots[index]
        if not self.element_shape.is_compatible_with(value.shape):
            ctx.fail(
                f"TensorArray {self.name}: Could not write to TensorArray index {index} because "
                f"the value shape is {shape_str(value.shape)} which is incompatible with the "
                f"TensorArray's inferred element shape: {self.element_shape} (consider setting "
                "infer_shape=False)."
            )
        if self.identical_element_shapes and not self.element_shape.is_fully_defined():
            self.element_shape = TensorShape(value.shape)
        if slot.read:
            ctx.fail(
                f"TensorArray {self.name}: Could not write to TensorArray index {index} because "
                "it has already been read."
            )
        if slot.written:
            ctx.fail(
                f"TensorArray {self.name}: Could not write to TensorArray index {index} because "
                "it has already been written to."
            )
        slot.value, slot.written = value, True

    def read(self, ctx: KernelContext, index: int) -> Any:
        """LockedRead: a new array (or the stored one, which a clearing read hands over)."""
        if index < 0 or index >= len(self.slots):
            ctx.fail(f"Tried to read from index {index} but array size is: {len(self.slots)}")
        slot = self.slots[index]
        if slot.cleared:
            ctx.fail(
                f"TensorArray {self.name}: Could not read index {index} twice because it was "
                "cleared after a previous read (perhaps try setting clear_after_read = false?)."
            )
        if slot.written:
            value = on_device(ctx.xp, slot.value)
            if value is slot.value and not self.clear_after_read:
                value = value.copy()
        elif self.element_shape.is_fully_defined():
            value = ctx.allocate(self.element_shape.as_list(), self.dtype.np, fill=0)
        else:
            ctx.fail(
                f"TensorArray {self.name}: Could not read from TensorArray index {index}.  "
                f"Furthermore, the element shape is not fully defined: {self.element_shape}.  "
                "It is possible you are working with a resizeable TensorArray and "
                "stop_gradients is not allowing the gradients to be written.  If you set the "
                "full element_shape property on the forward TensorArray, the proper all-zeros "
                "tensor will be returned instead of incurring this error."
            )
        if self.clear_after_read:
            slot.value, slot.cleared = None, True
        slot.read = True
        return value


def _array(ctx: KernelContext, handle: Any) -> TensorArrayState:
    value = handle[()] if isinstance(handle, np.ndarray) and handle.shape == () else handle
    if not isinstance(value, TensorArrayState):
        ctx.fail(f"Input handle is not a TensorArray. Saw: '{short_repr(value)}'")
    if value.closed:
        ctx.fail(f"TensorArray {value.name} has already been closed.")
    return value


def _flow() -> np.ndarray:
    return np.zeros((), np.float32)


def _check_write_dtype(ctx: KernelContext, ta: TensorArrayState, value: Any) -> None:
    if value.dtype != ta.dtype.np:
        ctx.fail(
            f"TensorArray dtype is {tf_name(ta.dtype)} but Op is trying to write dtype "
            f"{tf_name(value.dtype)}."
        )


def _check_read_dtype(ctx: KernelContext, ta: TensorArrayState) -> None:
    if ctx.attrs["dtype"] != ta.dtype:
        ctx.fail(
            f"TensorArray dtype is {tf_name(ta.dtype)} but Op requested dtype "
            f"{tf_name(ctx.attrs['dtype'])}."
        )


def _vector(ctx: KernelContext, x: Any, message: str) -> np.ndarray:
    x = host_array(ctx, x)
    if x.ndim != 1:
        ctx.fail(f"{message}{shape_str(x.shape)}")
    return x


def _scalar_spec(spec: TensorSpec) -> None:
    with_rank(spec.shape, 0)


# -- TensorArrayV3 ---------------------------------------------------------------------------


def _tensor_array_v3_shape(c: InferenceContext, size: TensorSpec) -> list[TensorShape]:
    _scalar_spec(size)
    if size.value is not None and int(size.value) < 0:
        c.fail("Size should be >= 0.")
    return [scalar(), scalar()]


TENSOR_ARRAY_V3 = define_op(
    "TensorArrayV3",
    inputs=["size: int32"],
    outputs=["handle: resource", "flow: float32"],
    attrs=[
        "dtype: type",
        "element_shape: shape = None",
        "dynamic_size: bool = False",
        "clear_after_read: bool = True",
        "identical_element_shapes: bool = False",
        "tensor_array_name: string = ''",
    ],
    shape_fn=_tensor_array_v3_shape,
    host_inputs=["size"],
    host_outputs=["flow"],
    is_stateful=True,
    doc="A new TensorArray of ``size`` elements (each run makes one), and its first flow.",
)


@register_kernel("TensorArrayV3", "CPU", "GPU")
def _tensor_array_v3_kernel(ctx: KernelContext, size: Any) -> Any:
    n = scalar_int(ctx, size, "size")
    if n < 0:
        ctx.fail("Size should be >= 0.")
    ctx.check_size([n], object)
    a = ctx.attrs
    name = f"{a['tensor_array_name'] or ctx.node_name}_{next(_COUNTER)}"
    ta = TensorArrayState(
        name,
        a["dtype"],
        n,
        a["element_shape"],
        a["dynamic_size"],
        a["clear_after_read"],
        a["identical_element_shapes"],
    )
    return variant(ta), _flow()


TensorArrayV3 = make_wrapper_class(TENSOR_ARRAY_V3)


# -- TensorArrayWriteV3, TensorArrayReadV3 ------------------------------------------------------


def _tensor_array_write_v3_shape(
    c: InferenceContext, handle: TensorSpec, index: TensorSpec, value: TensorSpec, flow: TensorSpec
) -> TensorShape:
    _scalar_spec(index)
    _scalar_spec(flow)
    return scalar()


TENSOR_ARRAY_WRITE_V3 = define_op(
    "TensorArrayWriteV3",
    inputs=["handle: resource", "index: int32", "value: T", "flow_in: float32"],
    outputs=["flow_out: float32"],
    attrs=["T: type"],
    shape_fn=_tensor_array_write_v3_shape,
    host_inputs=["index", "flow_in"],
    host_outputs=["flow_out"],
    is_stateful=True,
    doc="Writes ``value`` at ``index`` (once per index).",
)


@register_kernel("TensorArrayWriteV3", "CPU", "GPU")
def _tensor_array_write_v3_kernel(
    ctx: KernelContext, handle: Any, index: Any, value: Any, flow_in: Any
) -> Any:
    ta = _array(ctx, handle)
    _check_write_dtype(ctx, ta, value)
    i = scalar_int(ctx, index, "index")
    with ta.lock:
        ta.write(ctx, i, value.copy())
    return _flow()


TensorArrayWriteV3 = make_wrapper_class(TENSOR_ARRAY_WRITE_V3)


def _tensor_array_read_v3_shape(
    c: InferenceContext, handle: TensorSpec, index: TensorSpec, flow: TensorSpec
) -> TensorShape:
    _scalar_spec(index)
    _scalar_spec(flow)
    return TensorShape(None)


TENSOR_ARRAY_READ_V3 = define_op(
    "TensorArrayReadV3",
    inputs=["handle: resource", "index: int32", "flow_in: float32"],
    outputs=["value: dtype"],
    attrs=["dtype: type"],
    shape_fn=_tensor_array_read_v3_shape,
    host_inputs=["index", "flow_in"],
    is_stateful=True,
    doc="The element at ``index`` (zeros if never written and the element shape is known).",
)


@register_kernel("TensorArrayReadV3", "CPU", "GPU")
def _tensor_array_read_v3_kernel(ctx: KernelContext, handle: Any, index: Any, flow_in: Any) -> Any:
    ta = _array(ctx, handle)
    _check_read_dtype(ctx, ta)
    i = scalar_int(ctx, index, "index")
    with ta.lock:
        return ta.read(ctx, i)


TensorArrayReadV3 = make_wrapper_class(TENSOR_ARRAY_READ_V3)


# -- TensorArrayGatherV3, TensorArrayConcatV3 ----------------------------------------------------


def _tensor_array_gather_v3_shape(
    c: InferenceContext, handle: TensorSpec, indices: TensorSpec, flow: TensorSpec
) -> TensorShape:
    indices_shape = with_rank(indices.shape, 1)
    _scalar_spec(flow)
    return TensorShape([indices_shape.dims[0]]).concatenate(c.attrs["element_shape"])


TENSOR_ARRAY_GATHER_V3 = define_op(
    "TensorArrayGatherV3",
    inputs=["handle: resource", "indices: int32", "flow_in: float32"],
    outputs=["value: dtype"],
    attrs=["dtype: type", "element_shape: shape = None"],
    shape_fn=_tensor_array_gather_v3_shape,
    host_inputs=["indices", "flow_in"],
    is_stateful=True,
    doc="The elements at ``indices``, stacked; they must all have one shape.",
)


@register_kernel("TensorArrayGatherV3", "CPU", "GPU")
def _tensor_array_gather_v3_kernel(
    ctx: KernelContext, handle: Any, indices: Any, flow_in: Any
) -> Any:
    ta = _array(ctx, handle)
    _check_read_dtype(ctx, ta)
    indices = _vector(ctx, indices, "Expected indices to be a vector, but received shape: ")
    shape = ctx.attrs["element_shape"]
    if not indices.size:
        if not shape.is_fully_defined():
            ctx.fail(
                f"TensorArray has size zero, but element shape {shape} is not fully defined. "
                "Currently only static shapes are supported when packing zero-size "
                "TensorArrays.",
                UnimplementedError,
            )
        return ctx.allocate([0, *shape.as_list()], ta.dtype.np)
    with ta.lock:
        values = [ta.read(ctx, i) for i in indices.tolist()]
    first = values[0].shape
    if not shape.is_compatible_with(first):
        ctx.fail(
            f"TensorArray was passed element_shape {shape} which does not match the Tensor at "
            f"index 0: {shape_str(first)}"
        )
    for i, v in enumerate(values[1:], 1):
        if v.shape != first:
            ctx.fail(
                f"TensorArray has inconsistent shapes.  Index 0 has shape: {shape_str(first)} "
                f"but index {i} has shape: {shape_str(v.shape)}"
            )
    ctx.check_size([len(values), *first], ta.dtype.np)
    return ctx.xp.stack(values)


TensorArrayGatherV3 = make_wrapper_class(TENSOR_ARRAY_GATHER_V3)


def _tensor_array_concat_v3_shape(
    c: InferenceContext, handle: TensorSpec, flow: TensorSpec
) -> list[TensorShape]:
    _scalar_spec(flow)
    rest = c.attrs["element_shape_except0"]
    return [TensorShape([None]).concatenate(rest), TensorShape([None])]


TENSOR_ARRAY_CONCAT_V3 = define_op(
    "TensorArrayConcatV3",
    inputs=["handle: resource", "flow_in: float32"],
    outputs=["value: dtype", "lengths: int64"],
    attrs=["dtype: type", "element_shape_except0: shape = None"],
    shape_fn=_tensor_array_concat_v3_shape,
    host_inputs=["flow_in"],
    host_outputs=["lengths"],
    is_stateful=True,
    doc="All elements concatenated along axis 0, and each one's length.",
)


@register_kernel("TensorArrayConcatV3", "CPU", "GPU")
def _tensor_array_concat_v3_kernel(ctx: KernelContext, handle: Any, flow_in: Any) -> Any:
    ta = _array(ctx, handle)
    _check_read_dtype(ctx, ta)
    rest = ctx.attrs["element_shape_except0"]
    with ta.lock:
        size = len(ta.slots)
        if not size:
            if not rest.is_fully_defined():
                ctx.fail(
                    f"TensorArray has size zero, but element_shape_except0 {rest} is not fully "
                    "defined. Currently only static shapes are supported when concatenating "
                    "zero-size TensorArrays.",
                    UnimplementedError,
                )
            return ctx.allocate([0, *rest.as_list()], ta.dtype.np), np.zeros(0, np.int64)
        values = [ta.read(ctx, i) for i in range(size)]
    for i, v in enumerate(values):
        if v.ndim == 0:
            ctx.fail(
                f"Concat saw a scalar shape at index {i} but requires at least vectors.  Did "
                "you mean to call pack?"
            )
        if v.shape[1:] != values[0].shape[1:]:
            ctx.fail(
                "TensorArray has inconsistent shapes.  Index 0 has (excepting dimension 0) "
                f"shape: {shape_str(values[0].shape[1:])} but index {i} has (excepting "
                f"dimension 0) shape: {shape_str(v.shape[1:])}"
            )
    lengths = np.array([v.shape[0] for v in values], np.int64)
    ctx.check_size([int(lengths.sum()), *values[0].shape[1:]], ta.dtype.np)
    return ctx.xp.concatenate(values), lengths


TensorArrayConcatV3 = make_wrapper_class(TENSOR_ARRAY_CONCAT_V3)


# -- TensorArrayScatterV3, TensorArraySplitV3 ----------------------------------------------------


def _tensor_array_scatter_v3_shape(
    c: InferenceContext,
    handle: TensorSpec,
    indices: TensorSpec,
    value: TensorSpec,
    flow: TensorSpec,
) -> TensorShape:
    indices_shape = with_rank(indices.shape, 1)
    value_shape = with_rank_at_least(value.shape, 1)
    if value_shape.rank is not None:
        merge_dim(indices_shape.dims[0], value_shape.dims[0])
    _scalar_spec(flow)
    return scalar()


TENSOR_ARRAY_SCATTER_V3 = define_op(
    "TensorArrayScatterV3",
    inputs=["handle: resource", "indices: int32", "value: T", "flow_in: float32"],
    outputs=["flow_out: float32"],
    attrs=["T: type"],
    shape_fn=_tensor_array_scatter_v3_shape,
    host_inputs=["indices", "flow_in"],
    host_outputs=["flow_out"],
    is_stateful=True,
    doc="Writes row ``i`` of ``value`` at ``indices[i]``.",
)


@register_kernel("TensorArrayScatterV3", "CPU", "GPU")
def _tensor_array_scatter_v3_kernel(
    ctx: KernelContext, handle: Any, indices: Any, value: Any, flow_in: Any
) -> Any:
    ta = _array(ctx, handle)
    _check_write_dtype(ctx, ta, value)
    indices = _vector(ctx, indices, "Expected indices to be a vector, but received shape: ")
    if value.ndim == 0:
        ctx.fail("Expected value to be at least a vector, but received shape: []")
    if indices.size != value.shape[0]:
        ctx.fail(
            "Expected len(indices) == values.shape[0], but saw: "
            f"{indices.size} vs. {value.shape[0]}"
        )
    with ta.lock:
        if indices.size and not ta.dynamic_size:
            top = int(indices.max())
            if top >= len(ta.slots):
                ctx.fail(f"Max scatter index must be < array size ({top} vs. {len(ta.slots)})")
        fresh = value.copy()
        for row, i in enumerate(indices.tolist()):
            ta.write(ctx, i, fresh[row])
    return _flow()


TensorArrayScatterV3 = make_wrapper_class(TENSOR_ARRAY_SCATTER_V3)


def _tensor_array_split_v3_shape(
    c: InferenceContext,
    handle: TensorSpec,
    value: TensorSpec,
    lengths: TensorSpec,
    flow: TensorSpec,
) -> TensorShape:
    with_rank_at_least(value.shape, 1)
    with_rank(lengths.shape, 1)
    _scalar_spec(flow)
    return scalar()


TENSOR_ARRAY_SPLIT_V3 = define_op(
    "TensorArraySplitV3",
    inputs=["handle: resource", "value: T", "lengths: int64", "flow_in: float32"],
    outputs=["flow_out: float32"],
    attrs=["T: type"],
    shape_fn=_tensor_array_split_v3_shape,
    host_inputs=["lengths", "flow_in"],
    host_outputs=["flow_out"],
    is_stateful=True,
    doc="Writes consecutive slices of ``value`` along axis 0, ``lengths[i]`` rows at ``i``.",
)


@register_kernel("TensorArraySplitV3", "CPU", "GPU")
def _tensor_array_split_v3_kernel(
    ctx: KernelContext, handle: Any, value: Any, lengths: Any, flow_in: Any
) -> Any:
    ta = _array(ctx, handle)
    _check_write_dtype(ctx, ta, value)
    lengths = _vector(ctx, lengths, "Expected lengths to be a vector, received shape: ")
    if value.ndim == 0:
        ctx.fail("Expected value to be at least a vector, but received shape: []")
    if lengths.size and int(lengths.min()) < 0:
        ctx.fail(f"Invalid value in lengths: {int(lengths.min())}")
    total = int(lengths.sum())
    if total != value.shape[0]:
        ctx.fail(
            "Expected sum of lengths to be equal to values.shape[0], but sum of lengths is "
            f"{total} and value's shape is: {shape_str(value.shape)}"
        )
    ends = np.cumsum(lengths).tolist()
    with ta.lock:
        if not ta.dynamic_size and len(ta.slots) != lengths.size:
            ctx.fail(
                "TensorArray's size is not equal to the size of lengths "
                f"({len(ta.slots)} vs. {lengths.size}), and the TensorArray is not marked as "
                "dynamically resizeable"
            )
        fresh = value.copy()
        for i, end in enumerate(ends):
            ta.write(ctx, i, fresh[end - int(lengths[i]) : end])
    return _flow()


TensorArraySplitV3 = make_wrapper_class(TENSOR_ARRAY_SPLIT_V3)


# -- TensorArraySizeV3, TensorArrayCloseV3 ---------------------------------------------------------


def _tensor_array_size_v3_shape(
    c: InferenceContext, handle: TensorSpec, flow: TensorSpec
) -> TensorShape:
    _scalar_spec(flow)
    return scalar()


TENSOR_ARRAY_SIZE_V3 = define_op(
    "TensorArraySizeV3",
    inputs=["handle: resource", "flow_in: float32"],
    outputs=["size: int32"],
    shape_fn=_tensor_array_size_v3_shape,
    host_inputs=["flow_in"],
    host_outputs=["size"],
    is_stateful=True,
    doc="The number of elements (a dynamic-size array grows as it is written).",
)


@register_kernel("TensorArraySizeV3", "CPU", "GPU")
def _tensor_array_size_v3_kernel(ctx: KernelContext, handle: Any, flow_in: Any) -> Any:
    ta = _array(ctx, handle)
    with ta.lock:
        return np.array(len(ta.slots), np.int32)


TensorArraySizeV3 = make_wrapper_class(TENSOR_ARRAY_SIZE_V3)


def _tensor_array_close_v3_shape(c: InferenceContext, handle: TensorSpec) -> list[TensorShape]:
    return []


TENSOR_ARRAY_CLOSE_V3 = define_op(
    "TensorArrayCloseV3",
    inputs=["handle: resource"],
    shape_fn=_tensor_array_close_v3_shape,
    is_stateful=True,
    doc="Closes the array: its elements are dropped and later ops on it fail.",
)


@register_kernel("TensorArrayCloseV3", "CPU", "GPU")
def _tensor_array_close_v3_kernel(ctx: KernelContext, handle: Any) -> tuple[()]:
    ta = _array(ctx, handle)
    with ta.lock:
        ta.closed = True
        ta.slots = []
    return ()


TensorArrayCloseV3 = make_wrapper_class(TENSOR_ARRAY_CLOSE_V3)

__all__ = [
    "TensorArrayV3",
    "TensorArrayWriteV3",
    "TensorArrayReadV3",
    "TensorArrayGatherV3",
    "TensorArrayConcatV3",
    "TensorArrayScatterV3",
    "TensorArraySplitV3",
    "TensorArraySizeV3",
    "TensorArrayCloseV3",
]
