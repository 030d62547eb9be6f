"""``mg.TensorArray``: TensorFlow 2's tf.TensorArray in graph mode, built on the TensorList
ops (a write returns a new TensorArray whose ``flow`` is the new list), so it can be a
loop variable: ``ta.flow`` is its one variant Output and ``TensorArray.from_flow`` (or
``from_handle``) rebuilds it from a new one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph import dtypes
from minigraph.dtypes import DType
from minigraph.graph import Output
from minigraph.ops.array_ops import cast, constant, no_op
from minigraph.ops.list_gather_ops import (
    tensor_list_concat_v2,
    tensor_list_gather,
    tensor_list_scatter_into_existing_list,
    tensor_list_stack,
)
from minigraph.ops.list_ops import (
    tensor_list_from_tensor,
    tensor_list_get_item,
    tensor_list_length,
    tensor_list_reserve,
    tensor_list_set_item,
    tensor_list_split,
)
from minigraph.scope import name_scope
from minigraph.shapes import TensorShape, as_shape
from minigraph.wrappers import as_output, convert_to_output, to_numpy

BUILDERS = ("TensorArray",)


def _shape_tensor(shape: TensorShape) -> np.ndarray:
    """A partial shape as TensorFlow's shape tensors write it: -1 for an unknown rank, -1
    for each unknown dim."""
    if shape.dims is None:
        return np.array(-1, np.int32)
    return np.array([-1 if d is None else d for d in shape.dims], np.int32).reshape(-1)


class TensorArray:
    """A list of tensors of one dtype that a graph writes one element at a time, as
    ``tf.TensorArray`` in TensorFlow 2 (arguments as TensorFlow's).

    Functional: ``write``, ``unstack``, ``scatter`` and ``split`` return a new TensorArray
    and leave this one as it was, so always use the result (``ta = ta.write(i, x)``). The
    element shape is learnt from what is written (``infer_shape``), shared by the
    TensorArrays made from one another, as in TensorFlow. ``clear_after_read`` and
    ``colocate_with_first_write_call`` are accepted and ignored (lists are values).
    Graph building is single-threaded, as for every builder.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     ta = mg.ops.TensorArray(mg.float32, size=2)
    ...     ta = ta.write(0, [1.0, 2.0]).write(1, [3.0, 4.0])
    ...     both = ta.stack()
    >>> mg.Session(g).run(both).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """

    def __init__(
        self,
        dtype: Any,
        size: Any = None,
        dynamic_size: bool | None = None,
        clear_after_read: bool | None = None,
        tensor_array_name: str | None = None,
        handle: Any = None,
        flow: Any = None,
        infer_shape: bool = True,
        element_shape: Any = None,
        colocate_with_first_write_call: bool = True,
        name: str | None = None,
    ) -> None:
        self._dtype: DType = dtypes.as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._infer_shape = infer_shape
        self._size = size
        # One cell shared by the TensorArrays made from this one: what a write learns of
        # the element shape, every later read of any of them knows (as TensorFlow's).
        self._shape_cell = [TensorShape(None) if element_shape is None else as_shape(element_shape)]
        if handle is not None and flow is None:
            flow = handle  # TensorFlow 2's handle is its flow
        if flow is not None:
            out = as_output(flow)
            if out is None or out.dtype != dtypes.variant:
                raise TypeError(f"a TensorArray's flow must be a variant Output, got {flow!r}")
            self._flow = out
            return
        if size is None:
            if not self._dynamic_size:
                raise ValueError("Size must be provided if handle is not provided")
            size = 0
        with name_scope(name or tensor_array_name or "TensorArrayV2"):
            self._flow = tensor_list_reserve(
                _shape_tensor(self.element_shape),
                _int32(size),
                element_dtype=self._dtype,
                name="TensorListReserve",
            )

    @classmethod
    def from_flow(
        cls,
        flow: Output,
        dtype: Any,
        element_shape: Any = None,
        dynamic_size: bool = False,
        infer_shape: bool = True,
        size: Any = None,
    ) -> TensorArray:
        """The TensorArray whose list is ``flow`` (what a loop body gets back for one)."""
        return cls(
            dtype,
            size=size,
            dynamic_size=dynamic_size,
            flow=flow,
            infer_shape=infer_shape,
            element_shape=element_shape,
        )

    from_handle = from_flow

    @property
    def flow(self) -> Output:
        """The variant Output holding the list: what a while loop carries."""
        return self._flow

    handle = flow

    @property
    def dtype(self) -> DType:
        return self._dtype

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic_size

    @property
    def element_shape(self) -> TensorShape:
        return self._shape_cell[0]

    def _with_flow(self, flow: Output) -> TensorArray:
        out = TensorArray.from_flow(
            flow, self._dtype, None, self._dynamic_size, self._infer_shape, self._size
        )
        out._shape_cell = self._shape_cell
        return out

    # How mg.while_loop carries a TensorArray: as its flow, rebuilt around the loop's value.
    def _loop_var(self) -> Output:
        return self._flow

    def _with_loop_var(self, flow: Output) -> TensorArray:
        return self._with_flow(flow)

    def _check_element_shape(self, shape: TensorShape) -> None:
        if not shape.is_compatible_with(self.element_shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected {self.element_shape}")
        if self._infer_shape:
            self._shape_cell[0] = self.element_shape.merge_with(shape)

    def _value(self, value: Any) -> Output:
        out = as_output(value)
        if out is None:
            return convert_to_output(to_numpy(value, self._dtype))
        if out.dtype != self._dtype:
            raise TypeError(
                f"TensorArray dtype is {self._dtype.name} but the value has dtype "
                f"{out.dtype.name}: {out.name}"
            )
        return out

    def write(self, index: Any, value: Any, name: str | None = None) -> TensorArray:
        """A new TensorArray with ``value`` at ``index`` (grown to fit if dynamic)."""
        with name_scope(name or "TensorArrayV2Write"):
            value = self._value(value)
            self._check_element_shape(value.shape)
            flow = tensor_list_set_item(
                self._flow,
                _int32(index),
                value,
                resize_if_index_out_of_bounds=self._dynamic_size,
            )
        return self._with_flow(flow)

    def read(self, index: Any, name: str | None = None) -> Output:
        """The element at ``index`` (zeros if never written and its shape is known)."""
        with name_scope(name or "TensorArrayV2Read"):
            return tensor_list_get_item(
                self._flow,
                _int32(index),
                _shape_tensor(self.element_shape),
                element_dtype=self._dtype,
            )

    def stack(self, name: str | None = None) -> Output:
        """All elements stacked along a new axis 0."""
        count = self._size if isinstance(self._size, int) and not self._dynamic_size else -1
        with name_scope(name or "TensorArrayV2Stack"):
            return tensor_list_stack(
                self._flow,
                _shape_tensor(self.element_shape),
                element_dtype=self._dtype,
                num_elements=count,
            )

    def gather(self, indices: Any, name: str | None = None) -> Output:
        """The elements at ``indices``, stacked."""
        with name_scope(name or "TensorArrayV2Gather"):
            return tensor_list_gather(
                self._flow,
                _int32(indices),
                _shape_tensor(self.element_shape),
                element_dtype=self._dtype,
            )

    def concat(self, name: str | None = None) -> Output:
        """All elements concatenated along axis 0."""
        with name_scope(name or "TensorArrayV2Concat"):
            return tensor_list_concat_v2(
                self._flow,
                _shape_tensor(self.element_shape),
                np.zeros(0, np.int64),
                element_dtype=self._dtype,
            )[0]

    def unstack(self, value: Any, name: str | None = None) -> TensorArray:
        """A new TensorArray holding the rows of ``value`` (whatever this one held)."""
        with name_scope(name or "TensorArrayUnstack"):
            value = self._value(value)
            rows = value.shape[1:] if value.shape.rank is not None else TensorShape(None)
            self._check_element_shape(rows)
            flow = tensor_list_from_tensor(value, _shape_tensor(rows))
        return self._with_flow(flow)

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> TensorArray:
        """A new TensorArray with row ``i`` of ``value`` at ``indices[i]``."""
        with name_scope(name or "TensorArrayScatter"):
            value = self._value(value)
            if value.shape.rank is not None:
                self._check_element_shape(value.shape[1:])
            flow = tensor_list_scatter_into_existing_list(self._flow, value, _int32(indices))
        return self._with_flow(flow)

    def split(self, value: Any, lengths: Any, name: str | None = None) -> TensorArray:
        """A new TensorArray holding consecutive slices of ``value``, ``lengths[i]`` rows
        at ``i``."""
        with name_scope(name or "TensorArraySplit"):
            value = self._value(value)
            out = as_output(lengths)
            if out is None:
                lengths64: Any = np.asarray(lengths, np.int64).reshape(-1)
                known = lengths64
            else:
                lengths64 = cast(out, dtypes.int64)
                known = None
            if value.shape.rank is not None and known is not None and known.size:
                if known.max() == known.min():
                    self._check_element_shape(
                        TensorShape([int(known[0])]).concatenate(value.shape[1:])
                    )
            flow = tensor_list_split(value, _shape_tensor(self.element_shape), lengths64)
        return self._with_flow(flow)

    def size(self, name: str | None = None) -> Output:
        """The number of elements: the given size, or the list's length when dynamic."""
        if not self._dynamic_size and self._size is not None:
            size = as_output(self._size)
            return size if size is not None else constant(np.int32(self._size), name=name or "Size")
        return tensor_list_length(self._flow, name=name or "TensorArrayV2Size")

    def identity(self) -> TensorArray:
        """This TensorArray (lists are values; TensorFlow's adds an Identity for control flow)."""
        return self

    def close(self, name: str | None = None) -> Any:
        """Does nothing (lists are values), as TensorFlow 2's; returns a NoOp."""
        return no_op(name=name or "TensorArrayV2Close")

    def __repr__(self) -> str:
        return (
            f"<mg.TensorArray dtype={self._dtype.name} element_shape={self.element_shape} "
            f"flow={self._flow.name}>"
        )


def _int32(value: Any) -> Any:
    """An index or size: an Output as it is, a Python value as int32."""
    out = as_output(value)
    return out if out is not None else np.asarray(value, np.int32)


__all__ = ["TensorArray"]
