"""TensorFlow's protobuf messages and minigraph's values, both ways: DataType enums, shapes,
TensorProtos and AttrValues (minigraph.graph_def imports and exports whole GraphDefs with
them).

The message classes come from the ``tensorboard`` package (the ``tensorboard`` extra), never
from TensorFlow, and are imported only when :func:`protos` is called. Reading checks
everything a hostile file could get wrong (dtypes, ranks, sizes against the tensor cap)
before anything is allocated, and fails through :class:`Fail`, which names the node.
"""

from __future__ import annotations

import importlib
import types
from typing import Any

import numpy as np

from . import dtypes, errors
from .kernel import check_output_size
from .op_def import AttrDef
from .shapes import TensorShape

EXTRA_HINT = "requires the 'tensorboard' extra: pip install 'minigraph[tensorboard]'"


_PROTO_MODULES = (
    "attr_value_pb2",
    "function_pb2",
    "graph_pb2",
    "node_def_pb2",
    "tensor_pb2",
    "tensor_shape_pb2",
    "types_pb2",
    "versions_pb2",
)


def protos() -> Any:
    """tensorboard's protobuf modules (``protos().graph_pb2``...), or an ImportError naming
    the extra."""
    try:
        modules = [
            importlib.import_module(f"tensorboard.compat.proto.{name}") for name in _PROTO_MODULES
        ]
    except ImportError as e:
        raise ImportError(f"TensorFlow GraphDef support {EXTRA_HINT} ({e})") from None
    return types.SimpleNamespace(**dict(zip(_PROTO_MODULES, modules)))


# -- dtypes --------------------------------------------------------------------------

_ENUM_NAMES = {
    "float16": "DT_HALF",
    "float32": "DT_FLOAT",
    "float64": "DT_DOUBLE",
    "int8": "DT_INT8",
    "int16": "DT_INT16",
    "int32": "DT_INT32",
    "int64": "DT_INT64",
    "uint8": "DT_UINT8",
    "uint16": "DT_UINT16",
    "uint32": "DT_UINT32",
    "uint64": "DT_UINT64",
    "bool": "DT_BOOL",
    "complex64": "DT_COMPLEX64",
    "complex128": "DT_COMPLEX128",
    "variant": "DT_VARIANT",
    "resource": "DT_RESOURCE",
}


def _dtype_to_enum(p: Any, dt: dtypes.DType) -> int:
    return int(p.types_pb2.DataType.Value(_ENUM_NAMES[dt.name]))


def _enum_to_dtype(p: Any, enum: int, fail: Any, what: str) -> dtypes.DType:
    names = p.types_pb2.DataType
    try:
        tf_name = names.Name(enum)
    except ValueError:
        return fail(f"{what}: unknown DataType enum {enum}")
    if tf_name.endswith("_REF"):
        return fail(
            f"{what}: reference dtype {tf_name} ({enum}) is not supported: minigraph has no "
            "reference tensors (freeze the graph's variables into constants)"
        )
    for mg_name, name in _ENUM_NAMES.items():
        if name == tf_name:
            return dtypes.as_dtype(mg_name)
    return fail(f"{what}: TensorFlow dtype {tf_name} ({enum}) is not supported by minigraph")


# -- reading protos --------------------------------------------------------------------


class Fail:
    """Raises InvalidArgumentError (or another OpError) about one node of the GraphDef."""

    def __init__(self, node: str = "", op: str = "") -> None:
        self.node, self.op = node, op

    def __call__(self, msg: str, error: type[errors.OpError] = errors.InvalidArgumentError) -> Any:
        where = f"GraphDef node '{self.node}'" if self.node else "GraphDef"
        raise error(f"{where}: {msg}", self.node, self.op)


# NumPy's most dims (NPY_MAXDIMS: 32 before NumPy 2, 64 since); TensorFlow allows 254.
NUMPY_MAX_DIMS = 64 if int(np.__version__.split(".")[0]) >= 2 else 32


def _shape_from_proto(proto: Any, fail: Fail, what: str) -> TensorShape:
    if proto.unknown_rank:
        if len(proto.dim):  # TensorFlow's check (PartialTensorShape::IsValidShape)
            fail(
                f"{what}: An unknown shape must not have any dimensions set "
                f"(unknown_rank is set and {len(proto.dim)} dims are listed)"
            )
        return TensorShape(None)
    if len(proto.dim) > NUMPY_MAX_DIMS:
        fail(f"{what}: a shape of {len(proto.dim)} dims; at most {NUMPY_MAX_DIMS} are supported")
    dims: list[int | None] = []
    for d in proto.dim:
        if d.size < -1:
            fail(f"{what}: dimension {d.size} is invalid (sizes are >= 0, or -1 for unknown)")
        dims.append(None if d.size == -1 else int(d.size))
    return TensorShape(dims)


# TensorProto value fields by dtype, as TensorFlow's tensor_util reads them.
_VALUE_FIELDS = {
    "float16": "half_val",
    "float32": "float_val",
    "float64": "double_val",
    "int8": "int_val",
    "int16": "int_val",
    "int32": "int_val",
    "uint8": "int_val",
    "uint16": "int_val",
    "int64": "int64_val",
    "uint32": "uint32_val",
    "uint64": "uint64_val",
    "bool": "bool_val",
    "complex64": "scomplex_val",
    "complex128": "dcomplex_val",
}


def tensor_from_proto(p: Any, proto: Any, fail: Fail, what: str = "tensor") -> np.ndarray:
    """A read-only array from a TensorProto, in any of its encodings."""
    dt = _enum_to_dtype(p, proto.dtype, fail, what)
    shape = _shape_from_proto(proto.tensor_shape, fail, what)
    if shape.dims is None or None in shape.dims:
        fail(f"{what}: a tensor value needs a fully known shape, got {shape}")
    dims = [int(d) for d in shape.dims]  # type: ignore[union-attr, arg-type]
    # Before any bytes are made: a few values may stand for a huge tensor (TF repeats the last).
    count = check_output_size(dims, dt.size, fail.node, fail.op)
    if proto.tensor_content:
        raw = proto.tensor_content
        if len(raw) != count * dt.size:
            fail(
                f"{what}: tensor_content has {len(raw)} bytes, "
                f"{dt.name}{dims} needs {count * dt.size}"
            )
        arr = np.frombuffer(raw, dtype=dt.np.newbyteorder("<")).astype(dt.np)
    else:
        field = _VALUE_FIELDS[dt.name]
        values = list(getattr(proto, field))
        if dt.is_complex:
            if len(values) % 2:
                fail(f"{what}: {field} has an odd number of floats ({len(values)})")
            flat = np.asarray(values, dtype=dt.np.type(0).real.dtype).reshape(-1, 2)
            vals = flat[:, 0] + 1j * flat[:, 1]
        elif dt == dtypes.float16:
            vals = np.asarray(values, dtype=np.int64).astype(np.uint16).view(np.float16)
        else:
            vals = np.asarray(values)
        others = [f for f in set(_VALUE_FIELDS.values()) if f != field and len(getattr(proto, f))]
        if proto.string_val:
            others.append("string_val")
        if others:
            fail(f"{what}: a {dt.name} tensor has values in {sorted(others)}, expected {field}")
        if len(vals) > count:
            fail(f"{what}: {field} has {len(vals)} values, {dt.name}{dims} holds {count}")
        try:
            arr = np.empty(count, dt.np)
        except MemoryError:  # under the cap, yet the process cannot map it (ulimit -v)
            fail(
                f"{what}: OOM when allocating tensor with shape {dims}: "
                f"{count * dt.size} bytes needed",
                errors.ResourceExhaustedError,
            )
        if len(vals) == 0:
            arr.fill(0)
        else:
            with np.errstate(all="ignore"):
                arr[: len(vals)] = vals.astype(dt.np)
            arr[len(vals) :] = arr[len(vals) - 1]  # TF repeats the last value
    arr = arr.reshape(dims)
    arr.flags.writeable = False
    return arr


def attr_value_kind(value: Any) -> str:
    return value.WhichOneof("value") or "list"  # an empty AttrValue reads as an empty list


def attr_from_proto(p: Any, a: AttrDef, value: Any, fail: Fail) -> Any:
    which = attr_value_kind(value)
    field = {
        "type": "type",
        "int": "i",
        "float": "f",
        "bool": "b",
        "string": "s",
        "shape": "shape",
        "tensor": "tensor",
        "list(int)": "list",
        "list(type)": "list",
        "list(shape)": "list",
        "list(func)": "list",
        "list(string)": "list",
        "func": "func",
    }[a.kind]
    if which != field:
        fail(f"attr '{a.name}' must be a {a.kind} (AttrValue.{field}), got AttrValue.{which}")
    what = f"attr '{a.name}'"
    if a.kind == "type":
        return _enum_to_dtype(p, value.type, fail, what)
    if a.kind == "int":
        return int(value.i)
    if a.kind == "float":
        # TF keeps float attrs as float32: read back the shortest decimal (0.1, not 0.100000001)
        return float(str(np.float32(value.f)))
    if a.kind == "bool":
        return bool(value.b)
    if a.kind == "string":
        try:
            return value.s.decode("utf-8")
        except UnicodeDecodeError:
            return fail(f"{what} is not UTF-8 text")
    if a.kind == "shape":
        return _shape_from_proto(value.shape, fail, what)
    if a.kind == "tensor":
        return tensor_from_proto(p, value.tensor, fail, what)
    if a.kind == "func":  # a function's name: the importer resolves it in the library
        return _function_name(value.func, fail, what)
    lst = value.list
    field = {
        "list(type)": "type",
        "list(shape)": "shape",
        "list(func)": "func",
        "list(string)": "s",
    }.get(a.kind, "i")
    for other in ("s", "i", "f", "b", "type", "shape", "tensor", "func"):
        if other != field and len(getattr(lst, other)):
            fail(f"{what} must be a {a.kind}, got a list of {other}")
    if a.kind == "list(type)":
        return tuple(_enum_to_dtype(p, v, fail, what) for v in lst.type)
    if a.kind == "list(shape)":
        return tuple(_shape_from_proto(v, fail, what) for v in lst.shape)
    if a.kind == "list(func)":
        return tuple(_function_name(v, fail, what) for v in lst.func)
    if a.kind == "list(string)":
        try:
            return tuple(v.decode("utf-8") for v in lst.s)
        except UnicodeDecodeError:
            return fail(f"{what} is not UTF-8 text")
    return tuple(int(v) for v in lst.i)


def _function_name(func: Any, fail: Fail, what: str) -> str:
    """A NameAttrList's function name; attrs on it (a polymorphic function's
    instantiation) are not supported."""
    if len(func.attr):
        fail(
            f"{what}: function {func.name!r} is instantiated with attrs, which minigraph "
            "does not support"
        )
    return str(func.name)


def generic_attr(p: Any, value: Any) -> Any:
    """An AttrValue as plain Python, to compare with TF_ONLY_ATTR_DEFAULTS."""
    which = attr_value_kind(value)
    if which == "list":
        for f in ("s", "i", "f", "b", "type"):
            items = list(getattr(value.list, f))
            if items:
                return [v.decode("utf-8", "replace") if f == "s" else v for v in items]
        return []
    if which == "s":
        return value.s.decode("utf-8", "replace")
    if which in ("i", "f", "b", "type"):
        return getattr(value, which)
    return object()  # shapes, tensors, funcs: never a TF-only default here


# -- export ----------------------------------------------------------------------------


def _shape_to_proto(p: Any, shape: Any) -> Any:
    shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)
    proto = p.tensor_shape_pb2.TensorShapeProto()
    if shape.dims is None:
        proto.unknown_rank = True
    else:
        for d in shape.dims:
            proto.dim.add(size=-1 if d is None else int(d))
    return proto


def tensor_to_proto(p: Any, value: np.ndarray) -> Any:
    """A TensorProto of ``value``: dtype, shape and little-endian ``tensor_content``."""
    arr = np.asarray(value)
    dt = dtypes.as_dtype(arr.dtype)
    proto = p.tensor_pb2.TensorProto(dtype=_dtype_to_enum(p, dt))
    proto.tensor_shape.CopyFrom(_shape_to_proto(p, list(arr.shape)))
    little = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"), copy=False)
    proto.tensor_content = little.tobytes()
    return proto


def attr_to_proto(p: Any, a: AttrDef, value: Any) -> Any:
    av = p.attr_value_pb2.AttrValue()
    if a.kind == "type":
        av.type = _dtype_to_enum(p, value)
    elif a.kind == "int":
        av.i = int(value)
    elif a.kind == "float":
        av.f = float(value)
    elif a.kind == "bool":
        av.b = bool(value)
    elif a.kind == "string":
        av.s = str(value).encode("utf-8")
    elif a.kind == "shape":
        av.shape.CopyFrom(_shape_to_proto(p, value))
    elif a.kind == "tensor":
        av.tensor.CopyFrom(tensor_to_proto(p, value))
    elif a.kind == "list(int)":
        av.list.SetInParent()
        av.list.i.extend(int(v) for v in value)
    elif a.kind == "list(type)":
        av.list.SetInParent()
        av.list.type.extend(_dtype_to_enum(p, v) for v in value)
    elif a.kind == "list(shape)":
        av.list.SetInParent()
        av.list.shape.extend(_shape_to_proto(p, v) for v in value)
    elif a.kind == "list(string)":
        av.list.SetInParent()
        av.list.s.extend(str(v).encode("utf-8") for v in value)
    elif a.kind == "func":
        av.func.name = value.name
    elif a.kind == "list(func)":
        av.list.SetInParent()
        for f in value:
            av.list.func.add(name=f.name)
    else:  # pragma: no cover - a new attr kind must be added here
        raise errors.UnimplementedError(f"cannot export attr kind {a.kind!r}")
    return av


def split_input(ref: str) -> tuple[str, int, bool]:
    """(node, output index, is control) of a NodeDef input string."""
    if ref.startswith("^"):
        return ref[1:], -1, True
    name, sep, index = ref.rpartition(":")
    if sep and index.isdigit() and index.isascii():
        return name, int(index), False
    return ref, 0, False
