"""TensorFlow GraphDefs: import them into a minigraph Graph, export a Graph as one.

    with g.as_default():
        y, = mg.import_graph_def("model.pb", input_map={"x:0": x}, return_elements=["y:0"])
    gd = g.as_graph_def()                       # tensorboard.compat.proto.graph_pb2.GraphDef
    mg.write_graph(g, "logs", "g.pbtxt", as_text=True)

The protobuf classes come from the ``tensorboard`` package (the ``tensorboard`` extra), never
from TensorFlow, and are imported only when these functions are called. Import rebuilds
every node through its op's declaration (as :mod:`minigraph.graph_io` does), so each node is
shape-inferred and checked as if a builder had made it. Before anything is added, the whole
GraphDef is checked: every op type must be registered (all missing ones are listed in one
UnimplementedError; ``allow_unsupported=True`` keeps their nodes instead, see
:mod:`minigraph.opaque`), every input must exist, and the nodes must form no cycle; they may
come in any order. A failed import leaves the graph as it was.

Attrs are read by TensorFlow's names and AttrValue types. Attrs whose names start with "_"
(``_output_shapes``, ``_class``...) are ignored; an attr that minigraph's declaration lacks
is accepted only when its value is TensorFlow's default for it (:data:`TF_ONLY_ATTR_DEFAULTS`).
"""

from __future__ import annotations

import errno
import heapq
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import config, dtypes, errors
from .devices import parse_device
from .function_def import CALL_OP, Library, export_functions
from .functionalize import LOOP_OPS, functionalize_loops
from .graph import Graph, Operation, Output, provide
from .op_def import group_listed_inputs
from .op_kinds import CONTROL_FLOW_OPS
from .opaque import INPUT_TYPES, OutputFacts, function_names, is_opaque, opaque_op, output_specs
from .opaque import node_attrs as opaque_attrs
from .opaque import write_attrs as write_opaque_attrs
from .ref_variables import rewritten, to_resource_variables
from .registry import OPS
from .tf_proto import (
    Fail,
    attr_from_proto,
    attr_to_proto,
    attr_value_kind,
    generic_attr,
    protos,
    split_input,
)

__all__ = [
    "import_graph_def",
    "as_graph_def",
    "write_graph",
    "parse_graph_def",
    "op_support",
    "library_functions",
    "CONTROL_FLOW_OPS",
    "TF_ONLY_ATTR_DEFAULTS",
    "GRAPH_DEF_VERSION",
]

# The GraphDef version TensorFlow 2.21 writes (tf.version.GRAPH_DEF_VERSION); exports say so.
GRAPH_DEF_VERSION = 2474

# TensorFlow's own internal ops that its graphs hold (lowered Case): registered, and exported,
# though their names start with "_" as minigraph's internal ones do.
TENSORFLOW_INTERNAL_OPS = frozenset({"_SwitchN"})

# Attrs read and dropped: TensorFlow's session config for a function call (serialized
# bytes), which minigraph has no use for.
_DROPPED_ATTRS = frozenset({"config_proto"})

# Attrs TensorFlow declares but minigraph's ops do not, with TensorFlow's default (by attr
# name, as the same attr means the same on every op). A GraphDef may carry them only at this
# value; tests/test_graph_def.py checks the table against TensorFlow's OpDefs.
TF_ONLY_ATTR_DEFAULTS: dict[str, Any] = {
    "use_cudnn_on_gpu": True,
    "explicit_paddings": [],
    "incompatible_shape_error": True,
    "batch_dims": 0,
    "grad_a": False,
    "grad_b": False,
}


# -- parsing ---------------------------------------------------------------------------


def parse_graph_def(graph_def: Any) -> Any:
    """A tensorboard GraphDef from a GraphDef (tensorboard's or TensorFlow's), bytes or a path.

    Paths ending in ``.pbtxt`` (or ``.txt``) are read as text format, others as binary.
    Anything else (a TensorProto, the GraphDef class itself), a path that is not a readable
    file, a file too large to be a GraphDef and malformed contents are mg.errors.
    """
    p = protos()
    if isinstance(graph_def, p.graph_pb2.GraphDef):
        return graph_def
    text = False
    if isinstance(graph_def, str | os.PathLike):
        data, text = _read_graph_def_file(graph_def)
    elif isinstance(graph_def, bytes | bytearray | memoryview):
        data = bytes(graph_def)
    elif not isinstance(graph_def, type) and _message_name(graph_def) == "GraphDef":
        data = graph_def.SerializeToString()  # TensorFlow's own tf.compat.v1.GraphDef
    else:
        got = (
            f"the class {graph_def.__name__} itself (make one with {graph_def.__name__}())"
            if isinstance(graph_def, type)
            else f"a {_message_name(graph_def)} message"
            if _message_name(graph_def)
            else type(graph_def).__name__
        )
        raise errors.InvalidArgumentError(
            "graph_def must be a GraphDef, its serialized bytes or a path to a .pb/.pbtxt "
            f"file, got {got}"
        )
    gd = p.graph_pb2.GraphDef()
    try:
        if text:
            from google.protobuf import text_format

            text_format.Parse(data.decode("utf-8"), gd)
        else:
            gd.ParseFromString(data)
    except Exception as e:  # DecodeError, ParseError, UnicodeDecodeError, RuntimeWarning...
        kind = "text" if text else "binary"
        raise errors.InvalidArgumentError(
            f"not a valid {kind} GraphDef ({type(e).__name__}: {e})"
        ) from None
    return gd


def _message_name(value: Any) -> str:
    """A protobuf message's type name ("GraphDef", "TensorProto"), "" for anything else."""
    full = getattr(getattr(value, "DESCRIPTOR", None), "full_name", "")
    return full.rsplit(".", 1)[-1] if isinstance(full, str) else ""


# Protobuf refuses to parse a message of 2 GiB or more, so no binary GraphDef is larger.
MAX_GRAPH_DEF_BYTES = 2**31 - 1


def _read_graph_def_file(path: str | os.PathLike) -> tuple[bytes, bool]:
    """A GraphDef file's bytes and whether it is text format; its size is checked first,
    so a huge (or sparse) file is refused before anything is read."""
    raw = os.fspath(path)
    name = raw if isinstance(raw, str) else os.fsdecode(raw)
    if "\0" in name:
        raise errors.InvalidArgumentError(f"GraphDef path {name!r} holds a NUL byte")
    text = name.lower().endswith((".pbtxt", ".txt"))
    try:
        st = os.stat(raw)  # "model.pb/" is not a file: ENOTDIR, as open() would say
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if not stat.S_ISREG(st.st_mode):  # a FIFO or device would block or never end
            raise errors.InvalidArgumentError(f"GraphDef path {name} is not a regular file")
        if not text and st.st_size > MAX_GRAPH_DEF_BYTES:
            raise errors.InvalidArgumentError(
                f"GraphDef file {name} is {st.st_size} bytes; a binary GraphDef is at most "
                f"{MAX_GRAPH_DEF_BYTES} (protobuf's limit)"
            )
        limit = config.max_tensor_bytes()
        if st.st_size > limit:
            raise errors.ResourceExhaustedError(
                f"GraphDef file {name} is {st.st_size} bytes, at most {limit} can be read"
            )
        with open(raw, "rb") as f:
            return f.read(), text
    except OSError as e:
        raise errors.NotFoundError(f"cannot read GraphDef file {name}: {e.strerror}") from None


def unsupported_reason(op: str) -> str | None:
    if op in LOOP_OPS:
        return None  # TF1 loops: import makes each a While (minigraph.functionalize)
    if op in OPS and (not op.startswith("_") or op in TENSORFLOW_INTERNAL_OPS):
        return None
    if op in CONTROL_FLOW_OPS:
        return "TensorFlow 1 control flow (see docs/tensorflow.md)"
    return "not implemented in minigraph"


def op_support(graph_def: Any) -> list[tuple[str, int, bool, str]]:
    """(op type, node count, supported, first node name) per op type, in first-use order,
    over the graph's nodes and its function library's bodies; a node whose op is a
    library function's name is a call (supported)."""
    gd = parse_graph_def(graph_def)
    functions = {f.signature.name for f in gd.library.function}
    rows: dict[str, list[Any]] = {}
    bodies = [nd for f in gd.library.function for nd in f.node_def]
    for node in [*gd.node, *bodies]:
        ok = node.op in functions or unsupported_reason(node.op) is None or rewritten(node.op)
        row = rows.setdefault(node.op, [node.op, 0, ok, node.name])
        row[1] += 1
    return [tuple(r) for r in rows.values()]  # type: ignore[misc]


def library_functions(graph_def: Any) -> list[str]:
    """The names of the functions in a GraphDef's library (what its calls and loops run)."""
    return [f.signature.name for f in parse_graph_def(graph_def).library.function]


def _check_supported(gd: Any, allow_unsupported: bool) -> None:
    missing = [r for r in op_support(gd) if not r[2]]
    if allow_unsupported:  # kept as unsupported nodes, but minigraph's own internal ops
        missing = [r for r in missing if r[0] in OPS]
    if not missing:
        return
    parts = [f"{op} (e.g. node '{node}'; {unsupported_reason(op)})" for op, _, _, node in missing]
    keep = (
        ""
        if allow_unsupported
        else "; allow_unsupported=True (the command's --allow-unsupported) imports the graph "
        "anyway, and only runs that need these ops fail"
    )
    raise errors.UnimplementedError(
        f"GraphDef uses {len(missing)} op type(s) that minigraph cannot run: "
        + ", ".join(parts)
        + keep,
        missing[0][3],
        missing[0][0],
    )


def _topological(gd: Any, mapped: set[str]) -> list[Any]:
    """The GraphDef's nodes, inputs first (stable); a missing input or a cycle is an error."""
    by_name: dict[str, Any] = {}
    for node in gd.node:
        fail = Fail(node.name, node.op)
        if not node.name or node.name.startswith("/") or any(c in node.name for c in ":^"):
            fail(f"invalid node name {node.name!r}")
        if node.name in by_name:
            fail("duplicate node name")
        by_name[node.name] = node
    waiting: dict[str, int] = {}
    users: dict[str, list[str]] = {n: [] for n in by_name}
    for node in gd.node:
        deps = set()
        for ref in node.input:
            src, index, control = split_input(ref)
            key = f"^{src}" if control else f"{src}:{index}"
            if key in mapped:
                continue
            if src not in by_name:
                Fail(node.name, node.op)(f"input '{ref}' names no node of the GraphDef")
            deps.add(src)
        waiting[node.name] = len(deps)
        for src in deps:
            users[src].append(node.name)
    # Kahn's algorithm, always taking the earliest ready node in GraphDef order: a GraphDef
    # that is already in topological order keeps its order exactly.
    position = {n: i for i, n in enumerate(by_name)}
    ready = [(position[n], n) for n in by_name if waiting[n] == 0]
    heapq.heapify(ready)
    order: list[Any] = []
    while ready:
        _, name = heapq.heappop(ready)
        order.append(by_name[name])
        for user in users[name]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, (position[user], user))
    if len(order) < len(by_name):
        import networkx as nx

        stuck = [n for n in by_name if waiting[n] > 0]  # GraphDef order: a stable message
        g = nx.DiGraph()
        g.add_nodes_from(stuck)
        for n in stuck:
            for ref in by_name[n].input:
                src = split_input(ref)[0]
                if waiting.get(src, 0) > 0:
                    g.add_edge(src, n)
        cycle = [u for u, _ in nx.find_cycle(g, source=stuck[0])]
        first = by_name[cycle[0]]
        Fail(first.name, first.op)("the GraphDef has a cycle: " + " -> ".join(cycle + [cycle[0]]))
    return order


# -- import ----------------------------------------------------------------------------


def import_graph_def(
    graph_def: Any,
    input_map: Mapping[str, Any] | None = None,
    return_elements: Sequence[str] | None = None,
    name: str | None = None,
    op_dict: Any = None,
    producer_op_list: Any = None,
    allow_unsupported: bool = False,
) -> list[Any] | None:
    """Import a TensorFlow GraphDef into the default graph, as ``tf.graph_util.import_graph_def``.

    Args:
        graph_def: a GraphDef (tensorboard's or TensorFlow's), its serialized bytes, or a
            path to a ``.pb`` (binary) or ``.pbtxt`` (text) file.
        input_map: GraphDef tensor names (``"x:0"``, ``"x"`` for ``"x:0"``, ``"^x"`` for a
            control input) -> Outputs (or Operations for ``^`` names) of the default graph
            that replace them.
        return_elements: names in the GraphDef to return: ``"y:0"`` gives an Output,
            ``"y"`` an Operation.
        name: prefix of the imported names (default ``"import"``, made unique); ``""``
            imports with TensorFlow's names as they are.
        op_dict, producer_op_list: accepted for TensorFlow's signature; unused.
        allow_unsupported: keep the nodes of op types minigraph lacks (in the graph and in
            the library's functions): they export back unchanged, shape inference takes
            their outputs' dtypes and shapes from what the GraphDef says (else unknown), and
            only a run that needs one fails, with UnimplementedError naming it
            (:mod:`minigraph.opaque`).

    Returns:
        The list of ``return_elements``, or None when none were asked for.

    Raises:
        UnimplementedError: listing every op type minigraph lacks, before anything is added
            (unless ``allow_unsupported``).
        InvalidArgumentError: a malformed GraphDef, naming the node; the graph is unchanged.
    """
    from .scope import current_scope
    from .wrappers import as_output

    del op_dict, producer_op_list
    p = protos()
    gd = parse_graph_def(graph_def)
    scope = current_scope()
    graph = scope.graph

    mapping: dict[str, Any] = {}
    for key, value in (input_map or {}).items():
        if not isinstance(key, str):
            raise TypeError(f"input_map keys must be tensor names, got {key!r}")
        if key.startswith("^"):
            node = getattr(value, "node", None)
            if not isinstance(value, Operation) or node is None:
                raise TypeError(f"input_map[{key!r}] must be an Operation, got {value!r}")
            mapping[key] = value.node
        else:
            src, index, _ = split_input(key)
            out = as_output(value)
            if out is None:
                raise TypeError(f"input_map[{key!r}] must be an Output, got {value!r}")
            if out.graph is not graph:
                raise errors.InvalidArgumentError(
                    f"input_map[{key!r}] ({out.name}) is not in the default graph"
                )
            mapping[f"{src}:{index}"] = out

    gd = to_resource_variables(p, gd)  # TF1 reference variables (minigraph.ref_variables)
    _check_supported(gd, allow_unsupported)
    gd = functionalize_loops(gd)  # TF1 while loops -> While nodes (minigraph.functionalize)
    order = _topological(gd, set(mapping))
    names = {n.name for n in gd.node}
    used = {
        (lambda s: f"^{s[0]}" if s[2] else f"{s[0]}:{s[1]}")(split_input(ref))
        for n in gd.node
        for ref in n.input
    }
    unused = sorted(set(mapping) - used)
    if unused:
        raise errors.InvalidArgumentError(
            f"Attempted to map inputs that were not found in graph_def: {unused}"
        )
    for ref in return_elements or ():
        if split_input(ref)[0] not in names or ref.startswith("^"):
            raise errors.InvalidArgumentError(
                f"Requested return_element {ref!r} not found in graph_def."
            )

    if name is None:
        name = "import"
    with graph._undo_on_error():
        if name:
            prefix = scope.new_sub_scope(name).prefix
        else:
            prefix = scope.prefix
        full = (lambda n: f"{prefix}/{n}") if prefix else (lambda n: n)
        library = Library(p, gd.library, graph, _import_body, allow_unsupported)
        kept = output_specs(
            p,
            gd,
            {n.name for n in gd.node if library.keeps(n.op)},
            library.defs,
            OutputFacts(used=return_elements or ()),
        )
        for node in order:
            _import_node(p, graph, node, full, mapping, scope, library, kept)

    if return_elements is None:
        return None
    results: list[Any] = []
    for ref in return_elements:
        if ":" in ref:
            src, index, _ = split_input(ref)
            results.append(graph.get_tensor_by_name(f"{full(src)}:{index}"))
        else:
            results.append(graph.get_operation_by_name(full(ref)))
    return results


def _import_body(
    p: Any,
    body: Graph,
    gd: Any,
    input_map: dict[str, Any],
    library: Library,
    facts: OutputFacts,
) -> None:
    """Import a function body's nodes (a GraphDef with GraphDef names) into ``body``, the
    default graph, its arguments given by ``input_map``."""
    from .scope import current_scope

    kept = output_specs(
        p, gd, {n.name for n in gd.node if library.keeps(n.op)}, library.defs, facts
    )
    for node in _topological(gd, set(input_map)):
        _import_node(p, body, node, lambda n: n, input_map, current_scope(), library, kept)


def _import_node(
    p: Any,
    graph: Graph,
    nd: Any,
    full: Any,
    mapping: dict[str, Any],
    scope: Any,
    library: Library,
    kept: dict[str, Any],
) -> None:
    from .scope import Scope
    from .wrappers import check_attrs, convert_inputs, node_errors

    name = full(nd.name)
    fail = Fail(name, nd.op)
    if name in graph:
        fail(f"a node named '{name}' is already in the graph", errors.InvalidArgumentError)
    if nd.name in kept:  # an op minigraph lacks, imported with allow_unsupported=True
        op_def = opaque_op(nd.op, name)
        functions = [library.function(f, fail) for f in function_names(nd)]
        attrs = opaque_attrs(p, nd, kept[nd.name], functions)
    else:
        op_def, attrs = _node_attrs(p, nd, library, fail)
    try:
        parse_device(nd.device)
    except errors.OpError as e:
        fail(f"device {nd.device!r}: {e.message}")
    device = nd.device
    if not device and scope.device_spec.to_string():
        device = scope.device_spec.to_string()

    data: list[Output] = []
    # As TF: the import's control dependencies go to the nodes with no inputs of their own.
    control: list[Any] = [] if len(nd.input) else list(scope.control_deps)
    for ref in nd.input:
        src, index, is_control = split_input(ref)
        if is_control:
            node = mapping.get(f"^{src}")
            if node is None:
                node = graph.node(full(src))
            if node not in control:
                control.append(node)
            continue
        out = mapping.get(f"{src}:{index}")
        if out is None:
            src_node = graph.node(full(src))
            if index >= src_node.num_outputs:
                fail(
                    f"input '{ref}': node '{src}' has {src_node.num_outputs} outputs, "
                    f"there is no output {index}"
                )
            out = Output(Operation(src_node), index)
        data.append(out)

    if nd.name in kept:
        graph.unique_name(name)  # reserve it, as a builder would
        attrs[INPUT_TYPES] = tuple(x.dtype for x in data)
        with node_errors(name, nd.op):
            graph.create_node(op_def, name, [data], attrs, device=device, control_inputs=control)
        return
    grouped = group_listed_inputs(op_def, attrs, data, fail, "NodeDef")
    graph.unique_name(name)  # reserve it, as a builder would
    inferred_keys = op_def.inferred_attrs()
    inferred = {k: v for k, v in attrs.items() if k not in inferred_keys}
    converted = convert_inputs(op_def, name, Scope(graph), grouped, inferred)
    for key in inferred_keys:
        if key in attrs and attrs[key] != inferred[key]:
            fail(f"attr '{key}' is {attrs[key]} but the inputs give {inferred[key]}")
    final = check_attrs(op_def, name, inferred)
    if nd.op == "Const" and final["dtype"] != dtypes.as_dtype(final["value"].dtype):
        fail(f"Const dtype {final['dtype'].name} does not match its value's {final['value'].dtype}")
    with node_errors(name, nd.op):  # a MemoryError or a shape function's bug: an mg error
        graph.create_node(op_def, name, converted, final, device=device, control_inputs=control)


def _node_attrs(p: Any, nd: Any, library: Library, fail: Fail) -> tuple[Any, dict[str, Any]]:
    """The OpDef of a NodeDef of a registered op (or a call of a library function by name)
    and its attrs, read by the OpDef's declarations."""
    attrs: dict[str, Any] = {}
    if nd.op not in OPS and nd.op in library:  # a call of a library function by name
        fn = library.function(nd.op, fail)
        op_def, attrs = (
            OPS[CALL_OP],
            {"f": fn, "Tin": tuple(fn.input_dtypes), "Tout": fn.output_dtypes},
        )
        nd_attrs: Any = {}
    else:
        op_def, nd_attrs = OPS[nd.op], nd.attr
    known = {a.name: a for a in op_def.attrs}
    for key in sorted(nd_attrs):
        value = nd_attrs[key]
        if key.startswith("_") or key in _DROPPED_ATTRS:
            continue
        if key in known:
            attrs[key] = attr_from_proto(p, known[key], value, fail)
            if known[key].kind == "func":
                attrs[key] = library.function(attrs[key], fail)
            elif known[key].kind == "list(func)":
                attrs[key] = tuple(library.function(f, fail) for f in attrs[key])
            continue
        if attr_value_kind(value) == "func":
            fail(f"attr '{key}' is a function (AttrValue.func) that {nd.op} does not take")
        default = TF_ONLY_ATTR_DEFAULTS.get(key, _MISSING)
        got = generic_attr(p, value)
        if default is _MISSING or got != default:
            fail(
                f"{nd.op} has no attr named '{key}' in minigraph (only TensorFlow's default "
                f"{'is' if default is _MISSING else repr(default) + ' is'} accepted), "
                f"got {got!r}"
            )
    return op_def, attrs


_MISSING = object()


def as_graph_def(graph: Graph) -> Any:
    """The graph as a tensorboard GraphDef that TensorFlow imports and runs.

    Every node keeps its name, op type, device, data inputs (``"x"`` for ``x:0``,
    ``"x:1"``), control inputs (``"^x"``) and declared attrs, written with TensorFlow's
    AttrValue types; tensors go in ``tensor_content``. ``versions.producer`` is
    :data:`GRAPH_DEF_VERSION` (TensorFlow 2.21's).
    """
    p = protos()
    gd = p.graph_pb2.GraphDef()
    gd.versions.producer = GRAPH_DEF_VERSION
    for node in graph.nodes():
        opaque = is_opaque(node.op_def)  # kept as imported: TensorFlow's own op
        if (
            not opaque
            and node.type_string.startswith("_")
            and node.type_string not in TENSORFLOW_INTERNAL_OPS
        ):
            raise errors.UnimplementedError(
                f"op {node.type_string} exists only in minigraph; TensorFlow cannot run it",
                node.name,
                node.type_string,
            )
        nd = gd.node.add(name=node.name, op=node.type_string, device=node.requested_device)
        for x in node.inputs:
            nd.input.append(x.node.name if x.index == 0 else x.name)
        nd.input.extend(f"^{c.name}" for c in node.control_inputs)
        if opaque:
            write_opaque_attrs(p, node, nd)
            continue
        for a in node.op_def.attrs:
            nd.attr[a.name].CopyFrom(attr_to_proto(p, a, node.attrs[a.name]))
    export_functions(p, graph.nodes(), gd.library, attr_to_proto)
    return gd


def write_graph(
    graph_or_graph_def: Any, logdir: str | os.PathLike, name: str, as_text: bool = False
) -> str:
    """Write a Graph (or GraphDef) to ``logdir/name``, as ``tf.io.write_graph``; return the path.

    ``as_text=True`` writes protobuf text format (``.pbtxt``), else binary (``.pb``).
    ``logdir`` is created if needed.
    """
    gd = (
        as_graph_def(graph_or_graph_def)
        if isinstance(graph_or_graph_def, Graph)
        else parse_graph_def(graph_or_graph_def)
    )
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(os.fspath(logdir), name)
    if as_text:
        from google.protobuf import text_format

        Path(path).write_text(text_format.MessageToString(gd))
    else:
        Path(path).write_bytes(gd.SerializeToString())
    return path


provide("as_graph_def", as_graph_def)
