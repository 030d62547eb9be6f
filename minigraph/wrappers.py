"""From an OpDef to what users call: ``apply_op``, builders and C++-style classes.

``apply_op`` is the one path by which every node is made: it converts Python
and NumPy values to Const nodes, infers type and list-length attrs from the
inputs, checks dtypes and attrs against the declaration, and adds the node
under the current Scope. ``make_builder`` and ``make_wrapper_class`` generate
the snake_case builder and the C++-style class from the declaration alone.
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import dtypes, errors
from .dtypes import DType
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
]


def as_output(value: Any) -> Output | None:
    """The Output a value stands for (an Output, or a one-output op wrapper), else None."""
    if isinstance(value, Output):
        return value
    get = getattr(value, "_as_output", None)
    return get() if get is not None else None


def _python_dtype(value: Any) -> DType:
    """TensorFlow's default dtype for Python data: int32 (int64 if needed), float32."""
    arr = np.asarray(value)
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
    raise TypeError(f"cannot convert {value!r} to a tensor (NumPy sees dtype {arr.dtype})")


def to_numpy(value: Any, dtype: DType | None = None) -> np.ndarray:
    """Convert Python/NumPy data to an array of ``dtype``, refusing lossy kinds of cast.

    Python ints may become floats, but floats never silently become ints; NumPy
    arrays may change width within a kind (float64 -> float32) or go int -> float.
    Raises TypeError or ValueError with what was wrong.
    """
    if isinstance(value, np.ndarray | np.generic):
        arr = np.asarray(value)
        if dtype is None or arr.dtype == dtype.np:
            return arr
        if arr.dtype.kind not in "biufc" or not np.can_cast(arr.dtype, dtype.np, "same_kind"):
            raise TypeError(f"cannot convert a {arr.dtype} array to {dtype.name}")
        _check_int_range(arr, dtype)
        return arr.astype(dtype.np)
    if dtype is None:
        dtype = _python_dtype(value)
    arr = np.asarray(value)
    if arr.dtype == object or arr.dtype.kind not in "biufc":
        raise TypeError(f"cannot convert {value!r} to a tensor of {dtype.name}")
    target = dtype.np
    if arr.dtype.kind == "f" and target.kind in "iub":
        raise TypeError(f"Expected {dtype.name}, but got {value!r} of type 'float'")
    if arr.dtype.kind == "c" and target.kind != "c":
        raise TypeError(f"Expected {dtype.name}, but got {value!r} of type 'complex'")
    _check_int_range(arr, dtype)
    if arr.dtype.kind in "iuf" and target.kind == "b":
        raise TypeError(f"Expected bool, but got {value!r}")
    return arr.astype(target)


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
    try:
        arr = to_numpy(value, dtype)
    except (TypeError, ValueError) as e:
        raise errors.InvalidArgumentError(str(e), scope.unique_op_name(name), "Const") from None
    return const_node(scope.with_op_name(name), arr)


def const_node(scope: Scope, value: np.ndarray) -> Output:
    """A Const node holding a private, read-only copy of ``value``."""
    value = np.array(value, copy=True)
    value.flags.writeable = False
    attrs = {"value": value, "dtype": dtypes.as_dtype(value.dtype)}
    node = _add_node(scope, lookup_op("Const"), scope.unique_op_name("Const"), [], attrs)
    return Output(Operation(node))


def apply_op(
    op_type: str, scope: Scope | None, inputs: Sequence[Any], attrs: dict[str, Any]
) -> Operation:
    """Make one node of ``op_type``: convert inputs, infer and check attrs, add it.

    ``inputs`` follow the declaration (a list for a list input); ``attrs`` are
    the caller's, without the ones inferred from inputs.
    """
    op_def = lookup_op(op_type)
    scope = _scope_for(scope or current_scope(), inputs)
    name = scope.unique_op_name(op_type)
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
            out = as_output(v)
            if out is not None and out.graph is not scope.graph:
                return Scope(out.graph, op_name=scope.op_name)
    return scope


def _add_node(
    scope: Scope, op_def: OpDef, name: str, inputs: list[Any], attrs: dict[str, Any]
) -> Node:
    """The node, with the scope's device and control dependencies."""
    return scope.graph.create_node(
        op_def,
        name,
        inputs,
        attrs,
        device=scope.device_spec.to_string(),
        control_inputs=scope.control_deps,
    )


def convert_inputs(
    op_def: OpDef, name: str, sub: Scope, inputs: Sequence[Any], attrs: dict[str, Any]
) -> list[Any]:
    """Convert each input, setting list lengths and type attrs from what is known."""

    def fail(msg: str) -> None:
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
                    f"not {value!r}."
                )
            n = len(value)
            assert arg.number_attr is not None
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
    # Type attrs: from Outputs first, then NumPy arrays, then Python data.
    for rank in (0, 1, 2):
        for arg, values in zip(op_def.inputs, items):
            if arg.type_attr is None or arg.type_attr in attrs:
                continue
            for v in values:
                out = as_output(v)
                if rank == 0 and out is not None:
                    attrs[arg.type_attr] = out.dtype
                elif rank == 1 and isinstance(v, np.ndarray | np.generic):
                    attrs[arg.type_attr] = dtypes.as_dtype(v.dtype)
                elif rank == 2 and out is None:
                    try:
                        attrs[arg.type_attr] = _python_dtype(v)
                    except TypeError as e:
                        fail(str(e))
                if arg.type_attr in attrs:
                    break
    converted: list[Any] = []
    flat_index = 0
    for arg, values in zip(op_def.inputs, items):
        want = attrs.get(arg.type_attr) if arg.type_attr else arg.dtype
        outs = []
        for i, v in enumerate(values):
            out = as_output(v)
            if out is None:
                const_name = f"{arg.name}_{i}" if arg.is_list else arg.name
                try:
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
        converted.append(outs if arg.is_list else outs[0])
    return converted


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
    return out


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
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            fail(f"attr '{a.name}' expects an int, got {value!r}")
        value = int(value)
        if a.minimum is not None and value < a.minimum:
            fail(f"Value for attr '{a.name}' of {value} must be at least minimum {a.minimum}")
        return value
    if a.kind == "float":
        if not isinstance(value, numbers.Real):
            fail(f"attr '{a.name}' expects a float, got {value!r}")
        return float(value)
    if a.kind == "bool":
        if not isinstance(value, bool | np.bool_):
            fail(f"attr '{a.name}' expects a bool, got {value!r}")
        return bool(value)
    if a.kind == "string":
        if isinstance(value, bytes):
            value = value.decode()
        if not isinstance(value, str):
            fail(f"attr '{a.name}' expects a string, got {value!r}")
        if a.allowed is not None and value not in a.allowed:
            fail(
                f"Value for attr '{a.name}' of \"{value}\" is not in the list of allowed "
                f"values: {', '.join(repr(s) for s in a.allowed)}"
            )
        return value
    if a.kind == "list(int)":
        try:
            return tuple(int(v) for v in value)
        except TypeError:
            fail(f"attr '{a.name}' expects a list of ints, got {value!r}")
    if a.kind == "shape":
        try:
            return as_shape(value)
        except (TypeError, ValueError) as e:
            fail(f"attr '{a.name}': {e}")
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
            raise TypeError(f"{op_def.name}: the first argument must be a Scope, got {scope!r}")
        attrs = dict(zip(list(bound.arguments)[1 + n_inputs :], values[1 + n_inputs :]))
        self.operation = apply_op(op_def.name, scope, values[1 : 1 + n_inputs], attrs)
        outs = self.operation.outputs
        i = 0
        for arg in op_def.outputs:
            n = self.operation.node.attrs[arg.number_attr] if arg.is_list else None
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
