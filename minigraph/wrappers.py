"""From an OpDef to what users call: ``apply_op``, builders and C++-style classes.

``apply_op`` is the one path by which every node is made: it converts Python
and NumPy values to Const nodes, infers type and list-length attrs from the
inputs, checks dtypes and attrs against the declaration, and adds the node
under the current Scope. ``make_builder`` and ``make_wrapper_class`` generate
the snake_case builder and the C++-style class from the declaration alone.
"""

from __future__ import annotations

import builtins
import contextlib
import inspect
import numbers
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn

import numpy as np

from . import config, dtypes, errors
from .dtypes import DType
from .errors import short_repr
from .functions import Function
from .graph import Node, Operation, Output
from .op_def import AttrDef, OpDef
from .registry import lookup_op
from .scope import Scope, current_scope, has_default_scope
from .shapes import as_shape

__all__ = [
    "apply_op",
    "as_output",
    "convert_to_output",
    "make_builder",
    "make_wrapper_class",
    "to_numpy",
    "as_array",
    "nested_output",
    "pack_list",
]


def as_output(value: Any) -> Output | None:
    """The Output a value stands for (an Output, or a one-output op wrapper), else None."""
    if isinstance(value, Output):
        return value
    get = getattr(value, "_as_output", None)
    return get() if get is not None else None


_MAX_RANK = 64  # NumPy's (and so minigraph's) most dims


class _Ragged(Exception):
    pass


def _describe(shape: tuple[int, ...]) -> str:
    return "a scalar" if not shape else f"of shape {list(shape)}"


def _nested_shape(value: Any, path: str, depth: int) -> tuple[int, ...]:
    """The shape of a nested sequence, or _Ragged saying where it is not rectangular."""
    if depth > _MAX_RANK:
        raise _Ragged(f"nested more than {_MAX_RANK} deep (a tensor has at most {_MAX_RANK} dims)")
    if isinstance(value, np.ndarray):
        return tuple(value.shape)
    if not isinstance(value, list | tuple):
        return ()
    if not value:
        return (0,)
    first = _nested_shape(value[0], f"{path}[0]", depth + 1)
    for i in builtins.range(1, len(value)):
        shape = _nested_shape(value[i], f"{path}[{i}]", depth + 1)
        if shape != first:
            raise _Ragged(f"{path}[{i}] is {_describe(shape)}, but {path}[0] is {_describe(first)}")
    return (len(value), *first)


def _ragged_where(value: Any) -> str | None:
    """Where a nested sequence stops being rectangular, in words; None if it is."""
    try:
        _nested_shape(value, "value", 0)
    except _Ragged as e:
        return str(e)
    except RecursionError:
        return "nested too deep (a tensor has at most 64 dims)"
    return None


def _ragged_message(where: str) -> str:
    if where.startswith("nested"):
        return f"Can't convert a Python sequence {where} to Tensor"
    return f"Can't convert non-rectangular Python sequence to Tensor: {where}"


def as_array(value: Any) -> np.ndarray:
    """``np.asarray(value)``, or a ValueError saying where a nested list is not rectangular
    (or too deep), or a TypeError for what NumPy cannot make an array of."""
    try:
        arr = np.asarray(value)
    except (ValueError, RecursionError, OverflowError) as e:
        where = _ragged_where(value)
        if where is not None:
            raise ValueError(_ragged_message(where)) from None
        raise ValueError(
            f"cannot convert {short_repr(value)} to a tensor ({type(e).__name__})"
        ) from None
    except Exception as e:  # a junk object whose __array__ or __len__ raises
        raise TypeError(
            f"cannot convert {short_repr(value)} to a tensor ({type(e).__name__}: {e})"
        ) from None
    if arr.dtype == object and isinstance(value, list | tuple):
        where = _ragged_where(value)
        if where is not None:
            raise ValueError(_ragged_message(where))
    return arr


def _object_error(value: Any, arr: np.ndarray, dtype: DType | None) -> TypeError | ValueError:
    """Why an object or string array is not a tensor: an int too large, or not a number."""
    flat = arr.reshape(-1)
    for v in flat:
        if isinstance(v, numbers.Integral) and not isinstance(v, bool):
            if not -(2**63) <= int(v) < 2**64:
                bits = int(v).bit_length()
                shown = str(int(v)) if bits <= 100 else f"of about {int(bits * 0.30103)} digits"
                return ValueError(
                    f"Can't convert Python int {shown} to a tensor: out of range for int64"
                )
    want = f" of {dtype.name}" if dtype is not None else ""
    return TypeError(f"cannot convert {short_repr(value)} to a tensor{want}")


def _python_dtype(value: Any, arr: np.ndarray | None = None) -> DType:
    """TensorFlow's default dtype for Python data: int32 (int64 if needed), float32."""
    arr = as_array(value) if arr is None else arr
    kind = arr.dtype.kind
    if kind == "b":
        return dtypes.bool_
    if kind in "iu":
        if arr.size and (arr.min() < -(2**31) or arr.max() >= 2**31):
            return dtypes.int64
        return dtypes.int32
    if kind == "f":
        return dtypes.float32
    if kind == "c":
        return dtypes.complex128
    raise _object_error(value, arr, None)


def to_numpy(value: Any, dtype: DType | None = None) -> np.ndarray:
    """Convert Python/NumPy data to an array of ``dtype``, refusing lossy kinds of cast.

    Python ints may become floats, but floats never silently become ints; NumPy
    arrays may change width within a kind (float64 -> float32) or go int -> float.
    Raises TypeError or ValueError with what was wrong.
    """
    if dtype is not None and dtype.is_handle:  # a handle comes from an op, never from data
        raise TypeError(f"cannot convert {short_repr(value)} to a {dtype.name} tensor")
    if isinstance(value, np.ndarray | np.generic):
        arr = np.asarray(value)
        if arr.dtype.kind not in "biufc":
            raise TypeError(f"cannot convert a {arr.dtype} array to a tensor")
        if dtype is None:
            return arr
        if arr.dtype == dtype.np:
            return arr
        if not np.can_cast(arr.dtype, dtype.np, "same_kind"):
            raise TypeError(f"cannot convert a {arr.dtype} array to {dtype.name}")
        _check_int_range(arr, dtype)
        with np.errstate(over="ignore"):  # float64 -> float32 rounds 1e300 to inf, as TF
            return arr.astype(dtype.np)
    if dtype is None:
        dtype = _python_dtype(value)
    arr = as_array(value)
    if arr.dtype == object or arr.dtype.kind not in "biufc":
        raise _object_error(value, arr, dtype)
    target = dtype.np
    if _typeless(value, arr):  # [] or [[], []]: NumPy's float64 is no type of the data's
        return arr.astype(target)
    if arr.dtype.kind == "f" and target.kind in "iub":
        raise TypeError(f"Expected {dtype.name}, but got {short_repr(value)} of type 'float'")
    if arr.dtype.kind == "c" and target.kind != "c":
        raise TypeError(f"Expected {dtype.name}, but got {short_repr(value)} of type 'complex'")
    _check_int_range(arr, dtype)
    if arr.dtype.kind in "iuf" and target.kind == "b":
        raise TypeError(f"Expected bool, but got {short_repr(value)}")
    return arr.astype(target)


def _typeless(value: Any, arr: np.ndarray) -> bool:
    """Whether Python data has no elements to give it a type (``[]``, ``[[], []]``): NumPy
    calls it float64, TensorFlow gives it the dtype the op asks for."""
    return arr.size == 0 and arr.dtype == np.float64 and isinstance(value, list | tuple)


def _check_int_range(arr: np.ndarray, dtype: DType) -> None:
    """Integers go into a narrower integer dtype only when every value fits."""
    if arr.dtype.kind in "iu" and dtype.np.kind in "iu" and arr.size:
        info = np.iinfo(dtype.np)
        lo, hi = arr.min(), arr.max()
        if lo < info.min or hi > info.max:
            bad = lo if lo < info.min else hi
            raise ValueError(f"value {bad} is out of range for {dtype.name}")


def convert_to_output(
    value: Any, dtype: DType | None = None, scope: Scope | None = None, name: str = "Const"
) -> Output:
    """An Output for ``value``: itself if it is one, else a new Const node."""
    out = as_output(value)
    if out is not None:
        if dtype is not None and out.dtype != dtype:
            raise errors.InvalidArgumentError(
                f"Tensor conversion requested dtype {dtype.name} for Tensor with dtype "
                f"{out.dtype.name}: {out.name}",
                out.node.name,
                out.node.type_string,
            )
        return out
    scope = scope or current_scope()
    inner = nested_output(value)
    if inner is not None:
        name = "packed" if name == "Const" else name
        try:
            return pack_list(value, dtype or inner.dtype, scope, name)
        except (TypeError, ValueError) as e:
            raise errors.InvalidArgumentError(str(e), scope.unique_op_name(name), "Pack") from None
    try:
        arr = to_numpy(value, dtype)
    except (TypeError, ValueError) as e:
        raise errors.InvalidArgumentError(str(e), scope.unique_op_name(name), "Const") from None
    return const_node(scope.with_op_name(name), arr)


def nested_output(value: Any, depth: int = 0) -> Output | None:
    """The first Output inside a (nested) list or tuple, else None (also for an Output
    itself): TensorFlow packs such a list into one tensor (see :func:`pack_list`)."""
    if not isinstance(value, list | tuple) or depth > _MAX_RANK:
        return None
    for v in value:
        t = type(v)
        if t is int or t is float or t is bool:  # the bulk of a long list: skip it fast
            continue
        found = as_output(v) if not isinstance(v, list | tuple) else nested_output(v, depth + 1)
        if found is not None:
            return found
    return None


def _tensor_in(value: Any) -> Output | None:
    """The Output a value is, or the first one inside it (a list that will be packed)."""
    out = as_output(value)
    return out if out is not None else nested_output(value)


def pack_list(value: list | tuple, dtype: DType, scope: Scope, name: str) -> Output:
    """TensorFlow's auto-packing: a (nested) list holding tensors is a Pack of its items
    along a new first axis, nested lists packed first and Python items made Consts of
    ``dtype``; a tensor of another dtype is a TypeError, as in TensorFlow. (The runtime
    knows Pack by name here, as it knows Const: both are how Python data becomes a tensor.)
    """
    items: list[Any] = []
    for i, v in enumerate(value):
        out = as_output(v)
        if out is None and nested_output(v) is not None:
            out = pack_list(v, dtype, scope, f"{name}_{i}")
        if out is None:
            items.append(to_numpy(v, dtype))
        elif out.dtype != dtype:
            raise TypeError(
                f"Cannot convert a list containing a tensor of dtype {out.dtype.name} to "
                f"{dtype.name} (Tensor is: {out.name})"
            )
        else:
            items.append(out)
    return apply_op("Pack", scope.with_op_name(name), [items], {"axis": 0}).output(0)


def const_node(scope: Scope, value: np.ndarray) -> Output:
    """A Const node holding a private, read-only copy of ``value``."""
    value = np.array(value, copy=True)
    value.flags.writeable = False
    attrs = {"value": value, "dtype": dtypes.as_dtype(value.dtype)}
    node = _add_node(scope, lookup_op("Const"), scope.unique_op_name("Const"), [], attrs)
    return Output(Operation(node))


def apply_op(
    op_type: str,
    scope: Scope | None,
    inputs: Sequence[Any],
    attrs: dict[str, Any],
    reserved_name: str | None = None,
) -> Operation:
    """Make one node of ``op_type``: convert inputs, infer and check attrs, add it.

    ``inputs`` follow the declaration (a list for a list input); ``attrs`` are
    the caller's, without the ones inferred from inputs. ``reserved_name``: a name the
    caller already took from the graph (``Scope.unique_op_name``), to name things after
    the node before it exists.
    """
    op_def = lookup_op(op_type)
    scope = _scope_for(scope or current_scope(), inputs)
    name = reserved_name or scope.unique_op_name(op_type)
    if len(inputs) != len(op_def.inputs):
        raise errors.InvalidArgumentError(
            f"{op_type} takes {len(op_def.inputs)} inputs, got {len(inputs)}", name, op_type
        )
    attrs = dict(attrs)
    sub = Scope(scope.graph, name, None, scope.device_spec, scope.control_deps)
    converted = convert_inputs(op_def, name, sub, inputs, attrs)
    node = _add_node(scope, op_def, name, converted, check_attrs(op_def, name, attrs))
    return Operation(node)


def _scope_for(scope: Scope, inputs: Sequence[Any]) -> Scope:
    """Outside any ``as_default()``, ops go to their inputs' graph, as in TensorFlow."""
    if has_default_scope():
        return scope
    for value in inputs:
        for v in value if isinstance(value, list | tuple) else [value]:
            out = _tensor_in(v)
            if out is not None and out.graph is not scope.graph:
                return Scope(out.graph, op_name=scope.op_name)
    return scope


def _add_node(
    scope: Scope, op_def: OpDef, name: str, inputs: list[Any], attrs: dict[str, Any]
) -> Node:
    """The node, with the scope's device and control dependencies."""
    with node_errors(name, op_def.name):
        return scope.graph.create_node(
            op_def,
            name,
            inputs,
            attrs,
            device=scope.device_spec.to_string(),
            control_inputs=scope.control_deps,
        )


@contextlib.contextmanager
def node_errors(name: str, op_type: str) -> Iterator[None]:
    """Node creation lets only OpErrors out: a MemoryError (a shape function or a constant
    fold that asked for too much) is a ResourceExhaustedError, anything else a bug in the
    op's shape function, an InternalError naming the node."""
    try:
        yield
    except errors.OpError:
        raise
    except MemoryError as e:
        raise errors.ResourceExhaustedError(
            f"OOM while inferring shapes: {str(e) or 'MemoryError'}", name, op_type
        ) from e
    except Exception as e:
        raise errors.InternalError(
            f"shape inference raised {type(e).__name__}: {str(e)[:200]}", name, op_type
        ) from e


def convert_inputs(
    op_def: OpDef, name: str, sub: Scope, inputs: Sequence[Any], attrs: dict[str, Any]
) -> list[Any]:
    """Convert each input, setting list lengths and type attrs from what is known."""

    def fail(msg: str) -> NoReturn:
        raise errors.InvalidArgumentError(msg, name, op_def.name)

    for key in op_def.inferred_attrs() & attrs.keys():
        fail(f"attr '{key}' of {op_def.name} is inferred from the inputs and cannot be set")
    # Lists as lists; their lengths fix number attrs.
    items: list[list[Any]] = []
    for arg, value in zip(op_def.inputs, inputs):
        if arg.is_list:
            if as_output(value) is not None or not isinstance(value, list | tuple):
                fail(
                    f"Expected list for '{arg.name}' argument to '{_snake(op_def.name)}' Op, "
                    f"not {short_repr(value)}."
                )
            n = len(value)
            if arg.number_attr is None:  # a list(type) arg: its dtypes are set below
                items.append(list(value))
                continue
            if arg.number_attr in attrs and attrs[arg.number_attr] != n:
                fail(
                    f"List argument '{arg.name}' to '{_snake(op_def.name)}' Op with length {n} "
                    "must match "
                    f"length {attrs[arg.number_attr]} of argument "
                    f"'{_list_arg_with(op_def, arg.number_attr).name}'."
                )
            attrs[arg.number_attr] = n
            items.append(list(value))
        else:
            items.append([value])
    # Type attrs: from Outputs (also inside lists, which are packed) first, then NumPy
    # arrays, then Python data; data with no elements ([]) takes what the op asks for.
    tensors = [[_tensor_in(v) for v in values] for values in items]
    for rank in (0, 1, 2, 3):
        for arg, values, outs_in in zip(op_def.inputs, items, tensors):
            if arg.type_attr is None or arg.type_attr in attrs:
                continue
            if rank == 3 and values:  # only data with no elements is left
                attrs[arg.type_attr] = _typeless_dtype(op_def, arg.type_attr)
            for v, out in zip(values, outs_in):
                if rank == 0 and out is not None:
                    attrs[arg.type_attr] = out.dtype
                elif rank == 1 and isinstance(v, np.ndarray | np.generic):
                    attrs[arg.type_attr] = dtypes.as_dtype(v.dtype)
                elif rank == 2 and out is None:
                    try:
                        arr = as_array(v)
                        if not _typeless(v, arr):
                            attrs[arg.type_attr] = _python_dtype(v, arr)
                    except (TypeError, ValueError) as e:
                        fail(f"input '{arg.name}': {e}")
                if arg.type_attr in attrs:
                    break
    converted: list[Any] = []
    flat_index = 0
    for arg, values, outs_in in zip(op_def.inputs, items, tensors):
        want = attrs.get(arg.type_attr) if arg.type_attr else arg.dtype
        outs = []
        for i, v in enumerate(values):
            out = as_output(v)
            if out is None:
                const_name = f"{arg.name}_{i}" if arg.is_list else arg.name
                inner = outs_in[i]
                try:
                    if inner is not None:  # a list holding tensors: packed, as in TF
                        out = pack_list(v, want or inner.dtype, sub, const_name)
                    else:
                        out = const_node(sub.with_op_name(const_name), to_numpy(v, want))
                except (TypeError, ValueError) as e:
                    fail(f"input '{arg.name}': {e}")
            elif want is not None and out.dtype != want:
                if arg.type_attr is None:
                    fail(
                        f"cannot compute {op_def.name} as input #{flat_index}(zero-based) was "
                        f"expected to be a {want.name} tensor but is a {out.dtype.name} tensor"
                    )
                fail(
                    f"input '{arg.name}' of {op_def.name} has dtype {out.dtype.name}, but attr "
                    f"'{arg.type_attr}' is {want.name} from another input; minigraph does not "
                    "mix dtypes silently (use mg.cast)"
                )
            outs.append(out)
            flat_index += 1
        if arg.type_list_attr is not None:
            attrs[arg.type_list_attr] = tuple(o.dtype for o in outs)
        converted.append(outs if arg.is_list else outs[0])
    return converted


def _typeless_dtype(op_def: OpDef, type_attr: str) -> DType:
    """The dtype of data with no elements for ``type_attr``: its default (TensorFlow's
    preferred dtype), else float32 (TensorFlow's for ``[]``), else int32 (its for Python
    ints), else the first type allowed."""
    a = next(a for a in op_def.attrs if a.name == type_attr)
    if a.has_default:
        return dtypes.as_dtype(a.default)
    if a.allowed is None:
        return dtypes.float32
    for dt in (dtypes.float32, dtypes.int32):
        if dt in a.allowed:
            return dt
    return a.allowed[0]


def _list_arg_with(op_def: OpDef, number_attr: str | None) -> Any:
    return next(a for a in op_def.inputs if a.number_attr == number_attr)


def check_attrs(op_def: OpDef, name: str, attrs: dict[str, Any]) -> dict[str, Any]:
    """Validate attrs against the declaration, fill defaults, normalise values."""
    known = {a.name: a for a in op_def.attrs}
    for key in attrs:
        if key not in known:
            raise errors.InvalidArgumentError(
                f"{op_def.name} has no attr named '{key}'", name, op_def.name
            )
    out: dict[str, Any] = {}
    for a in op_def.attrs:
        if a.name in attrs:
            out[a.name] = _check_attr(op_def, name, a, attrs[a.name])
        elif a.has_default:
            out[a.name] = a.default
        else:
            raise errors.InvalidArgumentError(
                f"{op_def.name} requires a value for attr '{a.name}' ({a.spec})", name, op_def.name
            )
    _check_output_counts(op_def, name, out)
    if op_def.name == "Const" and dtypes.as_dtype(out["value"].dtype) != out["dtype"]:
        raise errors.InvalidArgumentError(
            f"Const dtype {out['dtype'].name} does not match its value's ({out['value'].dtype})",
            name,
            op_def.name,
        )
    return out


_INT64 = (-(2**63), 2**63 - 1)


def _int64_attr(fail: Callable[[str], Any], attr: str, value: Any) -> int:
    """An int attr: an int (not a bool, not a float) that fits int64, as TensorFlow's."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        fail(f"attr '{attr}' expects an int, got {short_repr(value)}")
    value = int(value)
    if not _INT64[0] <= value <= _INT64[1]:
        fail(f"attr '{attr}' = {short_repr(value, 40)} is out of range for int64")
    return value


# Each output of a node is a Python object (and an entry in the graph) of about this many
# bytes; a list output whose length attr asks for more than the tensor cap can hold is
# refused before any is made.
OUTPUT_BYTES = 1024


def _check_output_counts(op_def: OpDef, name: str, attrs: dict[str, Any]) -> None:
    for arg in op_def.outputs:
        if arg.is_list and arg.number_attr is not None:
            n = attrs.get(arg.number_attr)
            if isinstance(n, int) and n * OUTPUT_BYTES > config.max_tensor_bytes():
                raise errors.ResourceExhaustedError(
                    f"{arg.number_attr} = {n} outputs for '{arg.name}' would take about "
                    f"{n * OUTPUT_BYTES} bytes, at most {config.max_tensor_bytes()} can be "
                    "allocated",
                    name,
                    op_def.name,
                )


def _check_attr(op_def: OpDef, name: str, a: AttrDef, value: Any) -> Any:
    def fail(msg: str) -> Any:
        raise errors.InvalidArgumentError(msg, name, op_def.name)

    if a.kind == "type":
        try:
            value = dtypes.as_dtype(value)
        except TypeError as e:
            fail(f"attr '{a.name}': {e}")
        if a.allowed is not None and value not in a.allowed:
            allowed = ", ".join(d.name for d in a.allowed)
            fail(
                f"Value for attr '{a.name}' of {value.name} is not in the list of allowed "
                f"values: {allowed}"
            )
        return value
    if a.kind == "int":
        value = _int64_attr(fail, a.name, value)
        if a.minimum is not None and value < a.minimum:
            fail(f"Value for attr '{a.name}' of {value} must be at least minimum {a.minimum}")
        return value
    if a.kind == "float":
        if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
            fail(f"attr '{a.name}' expects a float, got {short_repr(value)}")
        try:
            return float(value)
        except OverflowError:
            fail(f"attr '{a.name}' = {short_repr(value)} does not fit a float")
    if a.kind == "bool":
        if not isinstance(value, bool | np.bool_):
            fail(f"attr '{a.name}' expects a bool, got {short_repr(value)}")
        return bool(value)
    if a.kind == "string":
        if isinstance(value, bytes):
            try:
                value = value.decode()
            except UnicodeDecodeError:
                fail(f"attr '{a.name}' is not UTF-8 text: {short_repr(value)}")
        if not isinstance(value, str):
            fail(f"attr '{a.name}' expects a string, got {short_repr(value)}")
        if a.allowed is not None and value not in a.allowed:
            fail(
                f"Value for attr '{a.name}' of \"{value}\" is not in the list of allowed "
                f"values: {', '.join(repr(s) for s in a.allowed)}"
            )
        return value
    if a.kind == "list(int)":
        if not isinstance(value, list | tuple | np.ndarray):
            fail(f"attr '{a.name}' expects a list of ints, got {short_repr(value)}")
        return tuple(_int64_attr(fail, a.name, v) for v in value)
    if a.kind == "list(type)":
        if not isinstance(value, list | tuple):
            fail(f"attr '{a.name}' expects a list of dtypes, got {short_repr(value)}")
        try:
            types = tuple(dtypes.as_dtype(v) for v in value)
        except TypeError as e:
            fail(f"attr '{a.name}': {e}")
        if a.minimum is not None and len(types) < a.minimum:
            fail(f"Attr '{a.name}' of length {len(types)} must be at least minimum {a.minimum}")
        return types
    if a.kind == "tensor":
        try:
            arr = to_numpy(value)
        except (TypeError, ValueError) as e:
            fail(f"attr '{a.name}': {e}")
        if not arr.flags.writeable:
            return arr
        arr = arr.copy()
        arr.flags.writeable = False
        return arr
    if a.kind == "shape":
        try:
            return as_shape(value).check_valid()
        except (TypeError, ValueError) as e:
            fail(f"attr '{a.name}': {e}")
    if a.kind == "list(shape)":
        if not isinstance(value, list | tuple):
            fail(f"attr '{a.name}' expects a list of shapes, got {short_repr(value)}")
        try:
            return tuple(as_shape(v).check_valid() for v in value)
        except (TypeError, ValueError) as e:
            fail(f"attr '{a.name}': {e}")
    if a.kind in ("func", "list(func)"):
        items = value if a.kind == "list(func)" else [value]
        if not isinstance(items, list | tuple) or not all(isinstance(f, Function) for f in items):
            fail(
                f"attr '{a.name}' expects "
                f"{'Functions' if a.kind == 'list(func)' else 'a Function'}, "
                f"got {short_repr(value)}"
            )
        if a.minimum is not None and len(items) < a.minimum:
            fail(f"Attr '{a.name}' of length {len(items)} must be at least minimum {a.minimum}")
        return tuple(items) if a.kind == "list(func)" else value
    return value


# -- generated API ----------------------------------------------------------


def _snake(name: str) -> str:
    out = []
    for i, ch in enumerate(name):
        if (
            ch.isupper()
            and i
            and (not name[i - 1].isupper() or (i + 1 < len(name) and name[i + 1].islower()))
        ):
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def _signature(op_def: OpDef, with_scope: bool) -> inspect.Signature:
    P = inspect.Parameter
    params = [P("scope", P.POSITIONAL_OR_KEYWORD)] if with_scope else []
    params += [P(a.name, P.POSITIONAL_OR_KEYWORD) for a in op_def.inputs]
    inferred = op_def.inferred_attrs()
    attrs = [a for a in op_def.attrs if a.name not in inferred]
    params += [P(a.name, P.POSITIONAL_OR_KEYWORD) for a in attrs if not a.has_default]
    params += [P(a.name, P.KEYWORD_ONLY, default=a.default) for a in attrs if a.has_default]
    if not with_scope:
        params.append(P("name", P.KEYWORD_ONLY, default=None))
    return inspect.Signature(params)


def _doc(op_def: OpDef) -> str:
    return (op_def.doc or f"The {op_def.name} op.").strip()


def make_builder(op_def: OpDef, name: str | None = None) -> Callable[..., Any]:
    """The snake_case builder: ``fn(*inputs, *attrs, name=None)`` on the current scope.

    Returns the Output for a one-output op, the list of Outputs otherwise.
    """
    sig = _signature(op_def, with_scope=False)
    n_inputs = len(op_def.inputs)

    def builder(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        values = list(bound.arguments.values())
        node_name = bound.arguments["name"]
        scope = current_scope()
        if node_name:
            scope = scope.with_op_name(node_name)
        attrs = dict(zip(list(bound.arguments)[n_inputs:-1], values[n_inputs:-1]))
        op = apply_op(op_def.name, scope, values[:n_inputs], attrs)
        outs = op.outputs
        return outs[0] if len(op_def.outputs) == 1 and not op_def.outputs[0].is_list else outs

    builder.__name__ = builder.__qualname__ = name or _snake(op_def.name)
    builder.__signature__ = sig  # type: ignore[attr-defined]
    builder.__doc__ = _doc(op_def)
    return builder


def make_wrapper_class(op_def: OpDef) -> type:
    """The C++-style class: ``Op(scope, *inputs, **attrs)`` with named outputs as attributes."""
    sig = _signature(op_def, with_scope=True)
    n_inputs = len(op_def.inputs)
    single = len(op_def.outputs) == 1 and not op_def.outputs[0].is_list

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        values = list(bound.arguments.values())
        scope = values[0]
        if not isinstance(scope, Scope):
            raise TypeError(
                f"{op_def.name}: the first argument must be a Scope, got {short_repr(scope)}"
            )
        attrs = dict(zip(list(bound.arguments)[1 + n_inputs :], values[1 + n_inputs :]))
        self.operation = apply_op(op_def.name, scope, values[1 : 1 + n_inputs], attrs)
        outs = self.operation.outputs
        i = 0
        for arg in op_def.outputs:
            n = arg.count(self.operation.node.attrs) if arg.is_list else None
            setattr(self, arg.name, outs[i : i + n] if n is not None else outs[i])
            i += 1 if n is None else n

    def node(self: Any) -> Node:
        return self.operation.node

    def _as_output(self: Any) -> Output | None:
        return self.operation.output(0) if single else None

    def __repr__(self: Any) -> str:
        return f"<{op_def.name} {self.operation.name!r}>"

    namespace: dict[str, Any] = {
        "__init__": __init__,
        "node": node,
        "_as_output": _as_output,
        "__repr__": __repr__,
        "__doc__": _doc(op_def),
        "op_def": op_def,
    }
    __init__.__signature__ = sig  # type: ignore[attr-defined]
    return type(op_def.name, (), namespace)
