"""Nodes of op types minigraph lacks, kept by ``import_graph_def(..., allow_unsupported=True)``.

Such a node keeps its op type, inputs, device and TensorFlow's attrs as they were (the
NodeDef's AttrValues, serialized), so that ``as_graph_def`` writes it back unchanged and
TensorFlow can run the export. Its OpDef is made on first use for its op type and never
enters the registry (``mg.registered_ops()``, ``minigraph check`` and the import's refusal
without the flag stay as they are). It has no kernel on any device, so building the plan of
a run that needs the node raises UnimplementedError naming the node and the op, with the
hint ``minigraph check`` gives (minigraph.plan); a run whose fetches do not need it, or that
feeds its outputs, works. The optimizer never sees one, and build-time folding skips it.

Shape inference sees what the GraphDef tells of each output:

- how many: one past the highest output index that a consumer, a return element or a
  function's result reads, the length of ``_output_shapes`` or of a list(type) output attr
  (``Tout``, ``output_types``, ``out_types``); at least one;
- its dtype: what a registered consumer declares for that input (its type attr, or its
  arg's fixed dtype: what TensorFlow checked when the graph was built) or a function's
  declared result type; else, for a one-output node, its ``out_type``, ``output_type``,
  ``DstT``, ``Tout``, ``dtype`` or ``T`` attr; else :data:`UNKNOWN`;
- its shape: ``_output_shapes``, else unknown.

Downstream nodes infer from these as from any other node's outputs.
"""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import errors
from .dtypes import DType
from .graph import Node, Output
from .op_def import ArgDef, OpDef, parse_attr
from .op_kinds import unsupported_kind
from .registry import OPS
from .shapes import TensorShape, unknown_shape
from .tf_proto import Fail, _enum_to_dtype, _shape_from_proto, split_input

__all__ = [
    "UNKNOWN",
    "MAX_OUTPUTS",
    "OutputFacts",
    "dtype_or_none",
    "function_names",
    "opaque_op",
    "is_opaque",
    "output_specs",
    "node_attrs",
    "write_attrs",
    "output_ref",
    "unsupported_needed",
]

# The dtype of an output that nothing in the GraphDef types (a string, say, that only
# another unsupported node reads). No kernel ever sees one.
UNKNOWN = DType("unknown", np.object_)

# A kept node's attrs, all minigraph's own (TensorFlow's are in NODE_ATTRS, apart).
INPUT_TYPES = "_input_types"
OUTPUT_TYPES = "_output_types"
OUTPUT_SHAPES = "_output_shapes"
OUTPUT_ARGS = "_output_args"  # in a function body: the output arg naming each output
FUNCTIONS = "_functions"  # the library functions its func attrs name (exported with it)
NODE_ATTRS = "_node_attrs"  # base64 of a NodeDef holding TensorFlow's attrs only

# An output index past this is refused: a file could otherwise ask for any number of specs.
MAX_OUTPUTS = 1 << 16

# Attrs that give a one-output op's dtype, by TensorFlow's naming habits (Cast's DstT,
# Shape's out_type, ArgMax's output_type, a Placeholder-like dtype, an elementwise T).
_SINGLE_TYPE_ATTRS = ("out_type", "output_type", "DstT", "Tout", "dtype", "T")
_LIST_TYPE_ATTRS = ("Tout", "output_types", "out_types")

# TensorFlow's op names (OpDef's CamelCase, "_" for its internal ones, ">" in a few).
_OP_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_>]*")
_OPAQUE: dict[str, OpDef] = {}
_LOCK = threading.Lock()


def opaque_op(op_type: str, node_name: str = "") -> OpDef:
    """The OpDef of kept nodes of ``op_type``, made on first use (not registered); an
    op type name TensorFlow could not have is an error naming the node."""
    if not _OP_NAME.fullmatch(op_type):
        raise errors.InvalidArgumentError(
            f"invalid op type name {errors.short_repr(op_type, 80)}", node_name, op_type[:80]
        )
    with _LOCK:
        op_def = _OPAQUE.get(op_type)
        if op_def is None:
            if op_type in OPS:
                raise errors.InternalError(f"op {op_type} is registered; no node of it is kept")
            op_def = _OPAQUE[op_type] = _make(op_type)
    return op_def


def is_opaque(op_def: OpDef) -> bool:
    """Whether ``op_def`` is the OpDef of kept nodes of an unsupported op type."""
    return _OPAQUE.get(op_def.name) is op_def


def _make(op_type: str) -> OpDef:
    kind, hint = unsupported_kind(op_type)
    attrs = (
        f"{INPUT_TYPES}: list(type)",
        f"{OUTPUT_TYPES}: list(type)",
        f"{OUTPUT_SHAPES}: list(shape)",
        f"{OUTPUT_ARGS}: list(string) = []",
        f"{FUNCTIONS}: list(func) = []",
        f"{NODE_ATTRS}: string",
    )
    return OpDef(
        name=op_type,
        inputs=(ArgDef("inputs", type_list_attr=INPUT_TYPES),),
        outputs=(ArgDef("outputs", type_list_attr=OUTPUT_TYPES),),
        attrs=tuple(parse_attr(a) for a in attrs),
        shape_fn=_opaque_shape,
        doc=f"{op_type}, an op minigraph lacks, kept by import_graph_def(allow_unsupported=True)",
        is_stateful=True,  # never merged, folded or fused, were it ever planned
        unsupported=(
            f"op {op_type} is not supported by minigraph ({kind}), and this run needs it: "
            f"{hint}. The graph was imported with allow_unsupported=True: runs that do not "
            "need this node work, and feeding its outputs runs past it"
        ),
    )


def _opaque_shape(c: Any, inputs: Any) -> list[TensorShape]:
    return list(c.attrs[OUTPUT_SHAPES])


# -- what an import knows of the kept nodes' outputs ---------------------------------------


@dataclass(frozen=True)
class OutputFacts:
    """What an import knows of outputs beyond the NodeDefs: tensors (``"node:k"``) read
    from outside (return elements, a function's results) and the dtype a function's
    signature gives a result; in a FunctionDef body, the output arg that names each flat
    output of a kept node (``node -> [arg, ...]``), as its refs (``node:arg:i``) say."""

    used: Iterable[str] = ()
    typed: Mapping[str, DType] = field(default_factory=dict)
    args: Mapping[str, list[str]] = field(default_factory=dict)


def output_specs(
    p: Any, gd: Any, kept: set[str], defs: Mapping[str, Any], facts: OutputFacts
) -> dict[str, tuple[list[DType], list[TensorShape], list[str]]]:
    """(dtypes, shapes, output arg names) of each kept node's outputs (see the module
    docstring); ``defs`` are the library's FunctionDefs, by name."""
    reads: dict[str, dict[int, DType | None]] = {n: {} for n in kept}

    def note(ref: str, dtype: DType | None) -> None:
        src, index, control = split_input(ref)
        if control or src not in kept:
            return
        if index >= MAX_OUTPUTS:
            Fail(src)(f"output {index} is read; a kept unsupported node has at most {MAX_OUTPUTS}")
        if reads[src].get(index) is None:
            reads[src][index] = dtype

    for nd in gd.node:
        data = [r for r in nd.input if not r.startswith("^")]
        declared = [] if nd.name in kept else _declared_inputs(p, nd, defs, len(data))
        for i, ref in enumerate(data):
            note(ref, declared[i] if i < len(declared) else None)
    for ref in facts.used:
        note(ref, None)
    for ref, dtype in facts.typed.items():
        note(ref, dtype)
    out = {}
    for nd in gd.node:
        if nd.name not in kept:
            continue
        read = reads[nd.name]
        args = list(facts.args.get(nd.name, ()))
        shapes: list[TensorShape] = []
        listed: list[DType | None] = []
        if nd.name not in facts.args:  # a body's attrs list outputs in an order unknown here
            shapes = _listed_shapes(nd)
            listed = _listed_types(p, nd)
        count = max([len(args), len(shapes), len(listed), 1, *(i + 1 for i in read)])
        if count > MAX_OUTPUTS:
            Fail(nd.name, nd.op)(
                f"{count} outputs; a kept unsupported node has at most {MAX_OUTPUTS}"
            )
        types: list[DType | None] = [read.get(i) for i in range(count)]
        for i, given in enumerate(listed):
            types[i] = types[i] or given
        if count == 1 and types[0] is None and nd.name not in facts.args:
            types[0] = _single_type(p, nd)
        shapes += [unknown_shape()] * (count - len(shapes))
        out[nd.name] = ([t or UNKNOWN for t in types], shapes, args)
    return out


class _NoDtype(Exception):
    pass


def _raise(msg: str, error: Any = None) -> Any:
    raise _NoDtype(msg)


def dtype_or_none(p: Any, enum: int) -> DType | None:
    """The minigraph dtype of a DataType enum, or None (DT_STRING, a reference type...)."""
    try:
        return _enum_to_dtype(p, enum, _raise, "")
    except _NoDtype:
        return None


def _declared_inputs(p: Any, nd: Any, defs: Mapping[str, Any], n_data: int) -> list[Any]:
    """The dtype a registered op (or a library function called by name) declares for each
    data input of NodeDef ``nd``, None where its attrs do not say; [] for other ops."""
    if nd.op not in OPS and nd.op in defs:
        return [dtype_or_none(p, a.type) for a in defs[nd.op].signature.input_arg]
    op_def = OPS.get(nd.op)
    if op_def is None:
        return []
    out: list[DType | None] = []
    for arg in op_def.inputs:
        if arg.type_list_attr is not None:
            if arg.type_list_attr not in nd.attr:  # `in` first: reading a key would add it
                return out
            out += [dtype_or_none(p, t) for t in nd.attr[arg.type_list_attr].list.type]
            continue
        n = 1
        if arg.number_attr is not None:
            if arg.number_attr not in nd.attr:
                return out
            n = min(max(int(nd.attr[arg.number_attr].i), 0), n_data)
        dtype = arg.dtype if arg.type_attr is None else _type_attr(p, op_def, nd, arg.type_attr)
        out += [dtype] * n
        if len(out) >= n_data:
            break
    return out


def _type_attr(p: Any, op_def: OpDef, nd: Any, name: str) -> DType | None:
    if name in nd.attr and nd.attr[name].WhichOneof("value") == "type":
        return dtype_or_none(p, nd.attr[name].type)
    a = next((a for a in op_def.attrs if a.name == name), None)
    return a.default if a is not None and a.has_default and isinstance(a.default, DType) else None


def _listed_shapes(nd: Any) -> list[TensorShape]:
    if "_output_shapes" not in nd.attr:
        return []
    fail = Fail(nd.name, nd.op)
    shapes = nd.attr["_output_shapes"].list.shape
    return [_shape_from_proto(s, fail, f"_output_shapes[{i}]") for i, s in enumerate(shapes)]


def _listed_types(p: Any, nd: Any) -> list[DType | None]:
    for name in _LIST_TYPE_ATTRS:
        if name in nd.attr and nd.attr[name].WhichOneof("value") == "list":
            types = nd.attr[name].list.type
            if len(types):
                return [dtype_or_none(p, t) for t in types]
    return []


def _single_type(p: Any, nd: Any) -> DType | None:
    for name in _SINGLE_TYPE_ATTRS:
        if name in nd.attr and nd.attr[name].WhichOneof("value") == "type":
            return dtype_or_none(p, nd.attr[name].type)
    return None


def function_names(nd: Any) -> list[str]:
    """The library functions a NodeDef's func attrs name, by attr name order."""
    names: list[str] = []
    for key in sorted(nd.attr):
        value = nd.attr[key]
        which = value.WhichOneof("value")
        if which == "func":
            names.append(value.func.name)
        elif which == "list":
            names += [f.name for f in value.list.func]
    return names


def node_attrs(
    p: Any,
    nd: Any,
    spec: tuple[list[DType], list[TensorShape], list[str]],
    functions: Sequence[Any],
) -> dict[str, Any]:
    """A kept node's attrs (but its input types, which its inputs give)."""
    attrs_only = p.node_def_pb2.NodeDef()
    for key in nd.attr:
        attrs_only.attr[key].CopyFrom(nd.attr[key])
    types, shapes, args = spec
    return {
        OUTPUT_TYPES: tuple(types),
        OUTPUT_SHAPES: tuple(shapes),
        OUTPUT_ARGS: tuple(args),
        FUNCTIONS: tuple(functions),
        NODE_ATTRS: base64.b64encode(attrs_only.SerializeToString(deterministic=True)).decode(),
    }


# -- export ----------------------------------------------------------------------------


def write_attrs(p: Any, node: Node, nd: Any) -> None:
    """Give NodeDef ``nd`` the kept node's TensorFlow attrs, as they were imported."""
    from google.protobuf.message import DecodeError

    attrs_only = p.node_def_pb2.NodeDef()
    try:
        attrs_only.ParseFromString(base64.b64decode(node.attrs[NODE_ATTRS], validate=True))
    except (DecodeError, ValueError) as e:
        raise errors.InvalidArgumentError(
            f"the attrs kept for unsupported op {node.type_string} are corrupt ({e})",
            node.name,
            node.type_string,
        ) from None
    for key in attrs_only.attr:
        nd.attr[key].CopyFrom(attrs_only.attr[key])


def output_ref(node: Node, index: int) -> str:
    """A kept body node's output ``index`` as a FunctionDef names it: ``node:arg:i``."""
    args = node.attrs[OUTPUT_ARGS]
    if index >= len(args):
        raise errors.UnimplementedError(
            f"output {index} of unsupported op {node.type_string} cannot be named in a "
            "FunctionDef: its output arg names are unknown (only a node imported from a "
            "FunctionDef knows them)",
            node.name,
            node.type_string,
        )
    name = args[index]
    return f"{node.name}:{name}:{args[:index].count(name)}"


# -- what a fetch needs ----------------------------------------------------------------


def unsupported_needed(fetches: Sequence[Output]) -> list[list[tuple[Node, str]]]:
    """For each fetch, the kept unsupported nodes a run of it needs (fed nothing), each with
    the function whose body holds it ("" for the graph's own), in the order found."""
    bodies: dict[str, list[tuple[Node, str]]] = {}

    def walk(starts: Iterable[Node], where: str) -> list[tuple[Node, str]]:
        seen: set[int] = set()
        found: list[tuple[Node, str]] = []
        stack = list(starts)
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if is_opaque(node.op_def):
                found.append((node, where))
            else:
                for fn in node.op_def.functions_in(node.attrs):
                    found += [f for f in body(fn) if f not in found]
            stack += [x.node for x in node.inputs] + list(node.control_inputs)
        return found

    def body(fn: Any) -> list[tuple[Node, str]]:
        if fn.name not in bodies:
            bodies[fn.name] = []  # a recursive library: nothing more down this path
            starts = [x.node for x in fn.outputs] + list(fn.control_outputs)
            bodies[fn.name] = walk(starts, fn.name)
        return bodies[fn.name]

    return [walk([x.node], "") for x in fetches]
