"""TensorFlow's FunctionDef library, read into :class:`~minigraph.functions.Function`\\ s and
written back.

A FunctionDef names its body's tensors as ``node:output_arg:index`` (an output arg of the
node's op, and an index into it) and its arguments by name; import rewrites them to
GraphDef names (``node:flat_index``) and imports the body like a graph, into a FuncGraph.
Functions are read on first use, so a library's unused functions cost nothing; a function
that calls itself, directly or not, is an error, as is a name the library lacks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import errors
from .functions import ARG_OP, FuncGraph, Function
from .graph import Graph, Node, Operation, Output
from .opaque import MAX_OUTPUTS, OutputFacts, dtype_or_none, is_opaque, output_ref, write_attrs
from .registry import OPS
from .shapes import unknown_shape
from .tf_proto import Fail, _dtype_to_enum, _enum_to_dtype, _shape_from_proto, _shape_to_proto

__all__ = ["Library", "export_functions", "CALL_OP"]

CALL_OP = "PartitionedCall"  # what a node whose op is a library function's name becomes

# (protos, body graph, its GraphDef, input_map, the library, what is known of its kept
# nodes' outputs) -> None
ImportNodes = Callable[[Any, Graph, Any, dict[str, Any], "Library", OutputFacts], None]


class Library:
    """A GraphDef's function library, converted on demand into ``graph.library``.
    ``allow_unsupported``: the bodies keep nodes of op types minigraph lacks, as the
    graph does (minigraph.opaque)."""

    def __init__(
        self,
        p: Any,
        library: Any,
        graph: Graph,
        import_nodes: ImportNodes,
        allow_unsupported: bool = False,
    ) -> None:
        self.p = p
        self.defs = {f.signature.name: f for f in library.function}
        self.graph = graph
        self.import_nodes = import_nodes
        self.allow_unsupported = allow_unsupported
        self._converting: list[str] = []

    def __contains__(self, name: str) -> bool:
        return name in self.defs or name in self.graph.library

    def keeps(self, op: str) -> bool:
        """Whether a node of ``op`` is kept as a node of an unsupported op."""
        return self.allow_unsupported and op not in OPS and op not in self

    def ops(self) -> set[str]:
        """Every op type the library's bodies use."""
        return {nd.op for f in self.defs.values() for nd in f.node_def}

    def nodes(self) -> list[Any]:
        """Every NodeDef of every body (for the import's support check)."""
        return [nd for f in self.defs.values() for nd in f.node_def]

    def function(self, name: str, fail: Fail) -> Function:
        """The Function named ``name``, converted from its FunctionDef on first use."""
        known = self.graph.library.get(name)
        if known is not None:
            return known
        if name not in self.defs:
            fail(f"function {name!r} is not in the GraphDef's library", errors.NotFoundError)
        if name in self._converting:
            cycle = " -> ".join([*self._converting[self._converting.index(name) :], name])
            fail(f"the function library is recursive: {cycle}", errors.UnimplementedError)
        self._converting.append(name)
        try:
            fn = self._convert(self.defs[name])
        finally:
            self._converting.pop()
        self.graph.library[name] = fn
        return fn

    def _convert(self, fdef: Any) -> Function:
        p, sig = self.p, fdef.signature
        fail = Fail(sig.name, "FunctionDef")
        body = FuncGraph(sig.name, self.graph)
        input_map: dict[str, Any] = {}
        for i, arg in enumerate(sig.input_arg):
            if arg.type_attr or arg.number_attr or arg.type_list_attr:
                fail(f"argument {arg.name!r} has a polymorphic type, which is not supported")
            dtype = _enum_to_dtype(p, arg.type, fail, f"argument {arg.name!r}")
            shapes = fdef.arg_attr[i].attr.get("_output_shapes") if i in fdef.arg_attr else None
            shape = (
                _shape_from_proto(shapes.list.shape[0], fail, f"argument {arg.name!r}")
                if shapes is not None and len(shapes.list.shape) == 1
                else unknown_shape()
            )
            input_map[f"{arg.name}:0"] = body.add_arg(dtype, shape, arg.name)
        layouts = self._layouts(fdef, fail)
        gd = p.graph_pb2.GraphDef()
        for nd in fdef.node_def:
            copy = gd.node.add()
            copy.CopyFrom(nd)
            del copy.input[:]
            copy.input.extend(self._ref(r, fdef, input_map, fail, layouts) for r in nd.input)
        rets = {}
        for arg in sig.output_arg:
            if arg.name not in fdef.ret:
                fail(f"output {arg.name!r} has no entry in ret")
            rets[arg.name] = self._ref(fdef.ret[arg.name], fdef, input_map, fail, layouts)
        typed = {rets[a.name]: dtype_or_none(p, a.type) for a in sig.output_arg}
        facts = OutputFacts(
            typed={k: v for k, v in typed.items() if v is not None},
            args=layouts,
            used=rets.values(),
        )
        with body.as_default():
            self.import_nodes(p, body, gd, input_map, self, facts)
        outputs = [self._tensor(body, rets[arg.name], input_map) for arg in sig.output_arg]
        control = [body.node(fdef.control_ret[c]) for c in sig.control_output]
        return Function(
            sig.name,
            body,
            outputs,
            control,
            input_names=[a.name for a in sig.input_arg],
            output_names=[a.name for a in sig.output_arg],
        )

    def _tensor(self, body: Graph, ref: str, input_map: dict[str, Any]) -> Output:
        if ref in input_map:
            return input_map[ref]
        return body.get_tensor_by_name(ref if ":" in ref else f"{ref}:0")

    def _layouts(self, fdef: Any, fail: Fail) -> dict[str, list[str]]:
        """The output arg naming each flat output of each kept node of the body, as its
        refs (``node:arg:i``) use them: args in the order first read, each as long as its
        highest index read. A node minigraph cannot run never runs, so this order (which
        may not be TensorFlow's) only has to name each output again on export."""
        kept = {nd.name for nd in fdef.node_def if self.keeps(nd.op)}
        sizes: dict[str, dict[str, int]] = {}
        for ref in [*(r for nd in fdef.node_def for r in nd.input), *fdef.ret.values()]:
            parts = ref.split(":")
            if len(parts) == 3 and parts[0] in kept and parts[2].isdigit():
                if int(parts[2]) >= MAX_OUTPUTS:
                    fail(f"tensor {ref!r} is past the outputs a node minigraph lacks may have")
                args = sizes.setdefault(parts[0], {})
                args[parts[1]] = max(args.get(parts[1], 0), int(parts[2]) + 1)
        return {
            node: [a for a, n in args.items() for _ in range(n)] for node, args in sizes.items()
        }

    def _ref(self, ref: str, fdef: Any, input_map: dict[str, Any], fail: Fail, layouts: Any) -> str:
        """A FunctionDef tensor name as a GraphDef one: ``n:arg:i`` -> ``n:flat``."""
        if ref.startswith("^"):
            return ref
        parts = ref.split(":")
        if len(parts) == 1:
            if f"{ref}:0" not in input_map:
                fail(f"input {ref!r} names no argument of function {fdef.signature.name}")
            return f"{ref}:0"
        if len(parts) != 3 or not parts[2].isdigit():
            fail(f"malformed tensor name {ref!r} in function {fdef.signature.name}")
        node, arg, index = parts[0], parts[1], int(parts[2])
        nd = next((n for n in fdef.node_def if n.name == node), None)
        if nd is None:
            fail(f"input {ref!r} names no node of function {fdef.signature.name}")
        return f"{node}:{self._offset(nd, arg, fail, layouts) + index}"

    def _offset(self, nd: Any, arg: str, fail: Fail, layouts: Any) -> int:
        """Where output arg ``arg`` of NodeDef ``nd`` starts among its flat outputs."""
        if nd.op in self.defs or nd.op in self.graph.library:
            names = (
                [a.name for a in self.defs[nd.op].signature.output_arg]
                if nd.op in self.defs
                else self.graph.library[nd.op].output_names
            )
            if arg not in names:
                fail(f"function {nd.op} has no output {arg!r}")
            return names.index(arg)
        if nd.name in layouts:  # a node of an op minigraph lacks, kept
            return layouts[nd.name].index(arg)
        op_def = OPS.get(nd.op)
        if op_def is None:
            return fail(f"op {nd.op!r} of node {nd.name!r} is not registered")
        start = 0
        for out in op_def.outputs:
            if out.name == arg:
                return start
            start += _count(out, nd)
        return fail(f"{nd.op} has no output {arg!r} (node {nd.name!r})")


def _count(arg: Any, nd: Any) -> int:
    """How many tensors an output arg stands for on NodeDef ``nd``."""
    if arg.type_list_attr is not None:
        return len(nd.attr[arg.type_list_attr].list.type)
    if arg.number_attr is not None:
        return int(nd.attr[arg.number_attr].i)
    return 1


# -- export ------------------------------------------------------------------------------


def export_functions(
    p: Any, nodes: list[Node], library: Any, attr_to_proto: Callable[..., Any]
) -> None:
    """Add to ``library`` (a FunctionDefLibrary) every function that ``nodes`` call,
    directly or through other functions, each once, callees first."""
    done: set[str] = set()
    order: list[Function] = []

    def visit(fn: Function) -> None:
        if fn.name in done:
            return
        done.add(fn.name)
        for callee in fn.called():
            visit(callee)
        order.append(fn)

    for node in nodes:
        for fn in node.op_def.functions_in(node.attrs):
            visit(fn)
    for fn in order:
        library.function.add().CopyFrom(_function_def(p, fn, attr_to_proto))


def _function_def(p: Any, fn: Function, attr_to_proto: Callable[..., Any]) -> Any:
    fdef = p.function_pb2.FunctionDef()
    sig = fdef.signature
    sig.name = fn.name
    arg_names = {
        x: _arg_name(name, i) for i, (x, name) in enumerate(zip(fn.inputs, fn.input_names))
    }
    for x, name in arg_names.items():
        sig.input_arg.add(name=name, type=_dtype_to_enum(p, x.dtype))
        fdef.arg_attr[len(sig.input_arg) - 1].attr["_output_shapes"].list.shape.add().CopyFrom(
            _shape_to_proto(p, x.shape)
        )

    def ref(x: Output) -> str:
        if x in arg_names:
            return arg_names[x]
        if is_opaque(x.node.op_def):
            return output_ref(x.node, x.index)
        start = 0
        for out in x.node.op_def.outputs:
            n = out.count(x.node.attrs) if out.is_list else 1
            if x.index < start + n:
                return f"{x.node.name}:{out.name}:{x.index - start}"
            start += n
        raise errors.InternalError(f"no output {x.index} of {x.node.name}")

    for node in fn.graph.nodes():
        if node.type_string == ARG_OP:
            if Output(Operation(node), 0) not in arg_names:  # an argument no call passes
                raise errors.InternalError(
                    f"function {fn.name}: argument {node.name} is not in its signature"
                )
            continue
        nd = fdef.node_def.add(name=node.name, op=node.type_string, device=node.requested_device)
        nd.input.extend(ref(x) for x in node.inputs)
        nd.input.extend(f"^{c.name}" for c in node.control_inputs)
        if is_opaque(node.op_def):
            write_attrs(p, node, nd)
            continue
        for a in node.op_def.attrs:
            nd.attr[a.name].CopyFrom(attr_to_proto(p, a, node.attrs[a.name]))
    for x, name in zip(fn.outputs, fn.output_names):
        sig.output_arg.add(name=name, type=_dtype_to_enum(p, x.dtype))
        fdef.ret[name] = ref(x)
    for node in fn.control_outputs:
        sig.control_output.append(node.name)
        fdef.control_ret[node.name] = node.name
    return fdef


def _arg_name(name: str, i: int) -> str:
    """A TensorFlow argument name (``[a-z][a-z0-9_]*``) for ``name``."""
    clean = "".join(c if c.isalnum() or c == "_" else "_" for c in name.lower())
    return clean if clean[:1].isalpha() and clean.isascii() else f"arg{i}_{clean}"
