"""Graph files: a GraphDef-like JSON document, exact on round trip, safe to load.

    {"format": "minigraph.graph", "version": 1,
     "nodes": [{"name": "x", "op": "Placeholder", "inputs": [], "device": "",
                "attrs": {"dtype": {"type": "float32"}, "shape": {"shape": [null, 4]}}},
               {"name": "y", "op": "Add", "inputs": ["x:0", "c:0", "^init"], ...}]}

Inputs are ``"node:index"`` (data) or ``"^node"`` (control). Attrs are tagged by kind;
tensors (Const values) are ``{"dtype", "shape", "base64"}`` of their little-endian bytes,
so every value round-trips bit for bit. Loading never unpickles or evaluates anything: each
node is rebuilt through the same checks as a builder call (op registered, inputs defined
earlier, dtypes and attrs valid for the op, shapes inferred), and anything malformed is an
InvalidArgumentError (NotFoundError for an unknown op) saying which node and why.

A node of an op type minigraph lacks, kept by ``import_graph_def(allow_unsupported=True)``
(minigraph.opaque), is written with ``"unsupported"`` in place of ``"attrs"``: its outputs'
dtypes (``"unknown"`` where the GraphDef did not say) and shapes, the output arg names of
a function body's node, and TensorFlow's attrs as the base64 of a NodeDef holding them; it
is read back as such a node, which a run that needs it refuses.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import math
from typing import Any

import numpy as np

from . import dtypes, errors
from .devices import parse_device
from .errors import short_repr
from .graph import Graph, Node, Output, provide
from .op_def import AttrDef, OpDef, group_listed_inputs
from .opaque import (
    FUNCTIONS,
    INPUT_TYPES,
    MAX_OUTPUTS,
    NODE_ATTRS,
    OUTPUT_ARGS,
    OUTPUT_SHAPES,
    OUTPUT_TYPES,
    UNKNOWN,
    is_opaque,
    opaque_op,
)
from .registry import OPS, lookup_op
from .scope import Scope
from .shapes import TensorShape

__all__ = ["graph_to_dict", "graph_from_dict", "to_json", "from_json"]

# Graph-file messages quote up to this much of a bad value.
_short = functools.partial(short_repr, n=120)
_MAX_RANK = 64
_INT64_MAX = 2**63 - 1


FORMAT = "minigraph.graph"
VERSION = 1


# -- writing -------------------------------------------------------------------------


def _tensor_to_json(value: np.ndarray) -> dict[str, Any]:
    arr = np.asarray(value)
    little = arr.astype(arr.dtype.newbyteorder("<"), copy=False)  # tobytes() is C order
    return {
        "dtype": dtypes.as_dtype(arr.dtype).name,
        "shape": list(arr.shape),
        "base64": base64.b64encode(little.tobytes()).decode("ascii"),
    }


def _attr_to_json(a: AttrDef, value: Any) -> dict[str, Any]:
    if a.kind == "type":
        return {"type": value.name}
    if a.kind == "tensor":
        return {"tensor": _tensor_to_json(value)}
    if a.kind == "shape":
        shape = value if isinstance(value, TensorShape) else TensorShape(value)
        return {"shape": None if shape.dims is None else list(shape.dims)}
    if a.kind == "float":
        return {"float": value if math.isfinite(value) else repr(value)}
    if a.kind == "list(int)":
        return {"list(int)": list(value)}
    if a.kind == "list(type)":
        return {"list(type)": [t.name for t in value]}
    if a.kind == "list(string)":
        return {"list(string)": list(value)}
    return {a.kind: value}


def graph_to_dict(graph: Graph) -> dict[str, Any]:
    nodes = []
    for node in graph.nodes():
        opaque = is_opaque(node.op_def)
        if node.op_def.calls_functions and not (opaque and not node.attrs[FUNCTIONS]):
            raise errors.UnimplementedError(
                "the JSON graph format holds no function bodies: write a graph with control "
                "flow or function calls as a GraphDef (mg.write_graph)",
                node.name,
                node.type_string,
            )
        inputs = [x.name for x in node.inputs] + [f"^{c.name}" for c in node.control_inputs]
        item: dict[str, Any] = {
            "name": node.name,
            "op": node.type_string,
            "inputs": inputs,
            "device": node.requested_device,
        }
        if opaque:
            item["unsupported"] = _opaque_to_json(node)
        else:
            item["attrs"] = {
                a.name: _attr_to_json(a, node.attrs[a.name]) for a in node.op_def.attrs
            }
        nodes.append(item)
    return {"format": FORMAT, "version": VERSION, "nodes": nodes}


def _opaque_to_json(node: Node) -> dict[str, Any]:
    a = node.attrs
    return {
        "output_types": [t.name for t in a[OUTPUT_TYPES]],
        "output_shapes": [None if s.dims is None else list(s.dims) for s in a[OUTPUT_SHAPES]],
        "output_args": list(a[OUTPUT_ARGS]),
        "node_attrs": a[NODE_ATTRS],
    }


def to_json(graph: Graph, indent: int | None = 1) -> str:
    return json.dumps(graph_to_dict(graph), indent=indent, allow_nan=False)


# -- reading -------------------------------------------------------------------------


class _Fail:
    def __init__(self, where: str, node: str = "", op: str = "") -> None:
        self.where, self.node, self.op = where, node, op

    def __call__(self, msg: str, error: type[errors.OpError] = errors.InvalidArgumentError) -> Any:
        raise error(f"graph file: {self.where}: {msg}", self.node, self.op)


def _expect(fail: _Fail, value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        fail(f"{what} must be {getattr(kind, '__name__', kind)}, got {type(value).__name__}")
    return value


def _tensor_from_json(fail: _Fail, obj: Any) -> np.ndarray:
    _expect(fail, obj, dict, "a tensor")
    try:
        dt = dtypes.as_dtype(_expect(fail, obj.get("dtype"), str, "tensor dtype"))
    except TypeError as e:
        fail(str(e))
    shape = _expect(fail, obj.get("shape"), list, "tensor shape")
    if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        fail(f"tensor shape must be non-negative ints, got {_short(shape)}")
    if len(shape) > _MAX_RANK:
        fail(f"tensor shape has {len(shape)} dims, at most {_MAX_RANK} are supported")
    if any(d > _INT64_MAX for d in shape) or math.prod(d for d in shape if d) > _INT64_MAX:
        fail(f"tensor shape {_short(shape)} is too large (more than 2**63 - 1 entries)")
    try:
        raw = base64.b64decode(_expect(fail, obj.get("base64"), str, "tensor data"), validate=True)
    except (binascii.Error, ValueError) as e:
        fail(f"tensor data is not base64: {_short(str(e))}")
    count = math.prod(shape)
    if len(raw) != count * dt.size:
        fail(f"tensor data has {len(raw)} bytes, {dt.name}{shape} needs {count * dt.size}")
    try:
        arr = np.frombuffer(raw, dtype=dt.np.newbyteorder("<")).astype(dt.np).reshape(shape)
    except ValueError as e:  # a shape NumPy cannot hold, even with no data
        fail(f"tensor shape {_short(shape)} cannot be held: {e}")
    return arr


def _attr_from_json(fail: _Fail, a: AttrDef, obj: Any) -> Any:
    _expect(fail, obj, dict, f"attr '{a.name}'")
    if list(obj) != [a.kind]:
        fail(f"attr '{a.name}' must be tagged '{a.kind}', got {sorted(obj)}")
    value = obj[a.kind]
    if a.kind == "type":
        try:
            return dtypes.as_dtype(_expect(fail, value, str, f"attr '{a.name}'"))
        except TypeError as e:
            fail(str(e))
    if a.kind == "tensor":
        return _tensor_from_json(fail, value)
    if a.kind == "shape":
        if value is None:
            return TensorShape(None)
        _expect(fail, value, list, f"attr '{a.name}'")
        if not all(
            d is None or (isinstance(d, int) and not isinstance(d, bool) and d >= 0) for d in value
        ):
            fail(f"attr '{a.name}' must list non-negative ints or null, got {_short(value)}")
        if len(value) > _MAX_RANK:
            fail(f"attr '{a.name}' has {len(value)} dims, at most {_MAX_RANK} are supported")
        try:
            return TensorShape(value).check_valid()
        except ValueError as e:
            fail(f"attr '{a.name}': {e}")
    if a.kind == "float":
        if isinstance(value, str) and value in ("nan", "inf", "-inf"):
            return float(value)
        if isinstance(value, bool):
            fail(f"attr '{a.name}' must be a number, got bool")
        try:
            return float(_expect(fail, value, (int, float), f"attr '{a.name}'"))
        except OverflowError:
            fail(f"attr '{a.name}' = {_short(value)} does not fit a float")
    if a.kind == "list(type)":
        _expect(fail, value, list, f"attr '{a.name}'")
        try:
            return tuple(dtypes.as_dtype(_expect(fail, v, str, f"attr '{a.name}'")) for v in value)
        except TypeError as e:
            fail(f"attr '{a.name}': {e}")
    if a.kind == "list(int)":
        _expect(fail, value, list, f"attr '{a.name}'")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            fail(f"attr '{a.name}' must be a list of ints, got {_short(value)}")
        return tuple(value)
    if a.kind == "list(string)":
        _expect(fail, value, list, f"attr '{a.name}'")
        if not all(isinstance(v, str) for v in value):
            fail(f"attr '{a.name}' must be a list of strings, got {_short(value)}")
        return tuple(value)
    expected = {"int": int, "bool": bool, "string": str}[a.kind]
    return _expect(fail, value, expected, f"attr '{a.name}'")


def _add_node(graph: Graph, index: int, obj: Any) -> None:
    from .wrappers import check_attrs, convert_inputs, node_errors

    fail = _Fail(f"node {index}")
    _expect(fail, obj, dict, "a node")
    name = _expect(fail, obj.get("name"), str, "node name")
    if not name or any(c in name for c in ":^") or name.startswith("/"):
        fail(f"invalid node name {_short(name)}")
    fail = _Fail(f"node {index} ('{name}')", name)
    op_type = _expect(fail, obj.get("op"), str, "op")
    opaque = "unsupported" in obj
    if opaque:
        if op_type in OPS:
            fail(f'op {op_type} is supported: its node has "attrs", not "unsupported"')
        if "attrs" in obj:
            fail('a node of an unsupported op has "unsupported" and no "attrs"')
        try:
            op_def: OpDef = opaque_op(op_type, name)
        except errors.OpError as e:
            fail(e.message)
    else:
        try:
            op_def = lookup_op(op_type)
        except errors.NotFoundError as e:
            fail(e.message, errors.NotFoundError)
    fail.op = op_type
    device = _expect(fail, obj.get("device", ""), str, "device")
    try:
        parse_device(device)
    except errors.OpError as e:
        fail(e.message)
    if opaque:
        attrs = _opaque_from_json(fail, obj["unsupported"])
    else:
        attrs_obj = _expect(fail, obj.get("attrs", {}), dict, "attrs")
        known = {a.name: a for a in op_def.attrs}
        for key in attrs_obj:
            if key not in known:
                fail(f"{op_type} has no attr named '{key}'")
        attrs = {k: _attr_from_json(fail, known[k], v) for k, v in attrs_obj.items()}

    data: list[Output] = []
    control: list[Node] = []
    for ref in _expect(fail, obj.get("inputs", []), list, "inputs"):
        _expect(fail, ref, str, "an input")
        try:
            if ref.startswith("^"):
                control.append(graph.node(ref[1:]))
            else:
                data.append(graph.get_tensor_by_name(ref))
        except errors.OpError as e:
            fail(f"input {_short(ref)} is not an earlier node's output ({e.message})")
    if opaque:
        if graph.unique_name(name) != name:
            fail(f"duplicate node name '{name}'")
        attrs[INPUT_TYPES] = tuple(x.dtype for x in data)
        with node_errors(name, op_type):
            graph.create_node(op_def, name, [data], attrs, device=device, control_inputs=control)
        return
    grouped = group_listed_inputs(op_def, attrs, data, fail, "file")

    if graph.unique_name(name) != name:
        fail(f"duplicate node name '{name}'")
    scope = Scope(graph)
    explicit = {k: v for k, v in attrs.items() if k not in op_def.inferred_attrs()}
    inferred = dict(explicit)
    converted = convert_inputs(op_def, name, scope, grouped, inferred)
    for key in op_def.inferred_attrs():
        if key in attrs and attrs[key] != inferred[key]:
            fail(f"attr '{key}' is {attrs[key]} but the inputs give {inferred[key]}")
    final = check_attrs(op_def, name, inferred)
    if op_type == "Const" and final["dtype"] != dtypes.as_dtype(final["value"].dtype):
        fail("Const dtype does not match its value")
    if op_type == "Const":
        value = np.array(final["value"])
        value.flags.writeable = False
        final["value"] = value
    with node_errors(name, op_type):
        graph.create_node(op_def, name, converted, final, device=device, control_inputs=control)


def _opaque_from_json(fail: _Fail, obj: Any) -> dict[str, Any]:
    """A kept unsupported node's attrs from its ``"unsupported"`` object."""
    _expect(fail, obj, dict, '"unsupported"')
    keys = ("output_types", "output_shapes", "output_args", "node_attrs")
    if sorted(obj) != sorted(keys):
        fail(f'"unsupported" must hold {", ".join(keys)}, got {_short(sorted(obj))}')
    names = _expect(fail, obj["output_types"], list, "output_types")
    if not 1 <= len(names) <= MAX_OUTPUTS:
        fail(f"output_types must list 1 to {MAX_OUTPUTS} dtypes, got {len(names)}")
    types = []
    for t in names:
        _expect(fail, t, str, "an output type")
        if t == UNKNOWN.name:
            types.append(UNKNOWN)
            continue
        try:
            types.append(dtypes.as_dtype(t))
        except TypeError as e:
            fail(f"output_types: {e}")
    shapes = _expect(fail, obj["output_shapes"], list, "output_shapes")
    if len(shapes) != len(types):
        fail(f"output_shapes has {len(shapes)} shapes for {len(types)} output types")
    shape_attr = AttrDef("output_shapes", "shape")
    args = _expect(fail, obj["output_args"], list, "output_args")
    if args and len(args) != len(types):
        fail(f"output_args has {len(args)} names for {len(types)} output types")
    for a in args:
        _expect(fail, a, str, "an output arg")
    blob = _expect(fail, obj["node_attrs"], str, "node_attrs")
    try:
        base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError) as e:
        fail(f"node_attrs is not base64: {_short(str(e))}")
    return {
        OUTPUT_TYPES: tuple(types),
        OUTPUT_SHAPES: tuple(_attr_from_json(fail, shape_attr, {"shape": s}) for s in shapes),
        OUTPUT_ARGS: tuple(args),
        FUNCTIONS: (),  # a graph file holds no function bodies
        NODE_ATTRS: blob,
    }


def graph_from_dict(obj: Any) -> Graph:
    fail = _Fail("top level")
    _expect(fail, obj, dict, "the document")
    if obj.get("format") != FORMAT:
        fail(f"not a minigraph graph file (format {_short(obj.get('format'))})")
    version = obj.get("version")
    if type(version) is not int or version != VERSION:  # not True, not 1.0: they equal 1
        fail(f"unsupported version {_short(version)}; this minigraph reads {VERSION}")
    graph = Graph()
    for i, node in enumerate(_expect(fail, obj.get("nodes"), list, "nodes")):
        _add_node(graph, i, node)
    return graph


def from_json(text: str | bytes) -> Graph:
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as e:
        # JSONDecodeError, UnicodeDecodeError and Python's limit on an int's digits (a
        # 5000-digit number) are all ValueErrors.
        msg = short_repr(str(e), 200)
        if "integer string conversion" in msg:
            msg = "an integer has more digits than Python reads (4300)"
        raise errors.InvalidArgumentError(f"graph file: not valid JSON: {msg}") from None
    return graph_from_dict(obj)


provide("to_json", to_json)
provide("from_json", from_json)
