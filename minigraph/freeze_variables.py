"""Freeze resource variables into constants in a GraphDef and its function library, as
TensorFlow's ``convert_variables_to_constants_v2`` does, without TensorFlow.

A TF2 SavedModel's graph holds each variable as a ``VarHandleOp`` whose handle (a DT_RESOURCE
tensor) is passed into the signature's function, maybe on into nested calls and loops, and
read there by ``ReadVariableOp``. Given each handle's saved value, :func:`freeze` makes every
``VarHandleOp`` a ``Const`` of that value and follows the handle wherever it flows, giving it
the value's type instead of DT_RESOURCE:

- ``ReadVariableOp`` becomes ``Identity``; ``ResourceGather`` becomes ``GatherV2`` (with a Const
  axis), ``ResourceGatherNd`` ``GatherNd``, ``VariableShape`` ``Shape``; ``Identity`` passes it on;
- a call (``PartitionedCall``, ``StatefulPartitionedCall``), loop (``While``) or conditional
  (``If``, ``Case``) passing it gets the value's type in its type attrs, and the functions it
  calls are rewritten with that argument typed (and shaped) as the value; a loop body that
  passes it through returns the value;
- any other use (an assignment: the signature writes a variable) is an UnimplementedError
  naming the node, as a frozen graph cannot hold it.

The result is a plain GraphDef of TensorFlow's own ops, which minigraph imports like any
frozen graph (and TensorFlow can run). Functions the result does not call are dropped.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import errors
from .tf_proto import tensor_to_proto

__all__ = ["freeze"]

DT_RESOURCE = 20
_CALLS = ("PartitionedCall", "StatefulPartitionedCall")
_LOOPS = ("While", "StatelessWhile")
_IFS = ("If", "StatelessIf")
_CASES = ("Case", "StatelessCase")


@dataclass(frozen=True)
class _Var:
    """What a frozen handle now carries: a value of this dtype (enum) and shape."""

    name: str  # the variable's VarHandleOp, for messages
    dtype: int
    shape: tuple[int, ...]


class _Body:
    """The nodes of the graph or of one function, with its way of naming tensors."""

    def __init__(self, nodes: list[Any], in_function: str | None) -> None:
        self.nodes = nodes
        self.fn = in_function
        self.renamed: dict[str, str] = {}  # "n:value:" -> "n:output:" (an output arg renamed)

    def rename(self, ref: str) -> str:
        head, sep, tail = ref.rpartition(":")
        return self.renamed.get(head + sep, head + sep) + tail if sep else ref

    def key(self, ref: str) -> str:
        if self.fn is None and ":" not in ref:
            return f"{ref}:0"
        return ref

    def out(self, node: str, i: int) -> str:
        return f"{node}:output:{i}" if self.fn else f"{node}:{i}"

    def where(self) -> str:
        return f"function {self.fn}" if self.fn else "the graph"


class _Freezer:
    def __init__(self, p: Any, gd: Any) -> None:
        self.p = p
        self.defs = {f.signature.name: f for f in gd.library.function}
        self.done: dict[tuple[str, tuple[Any, ...]], tuple[str, dict[int, _Var]]] = {}
        self.new_defs: dict[str, Any] = {}

    def fail(
        self, node: Any, msg: str, error: type[errors.OpError] = errors.UnimplementedError
    ) -> Any:
        raise error(msg, node.name, node.op)

    # -- one body --------------------------------------------------------------------------

    def body(self, body: _Body, res: dict[str, _Var]) -> None:
        """Rewrite every use of a frozen handle in ``body`` (inputs first)."""
        for node in _topological(body.nodes):
            uses = [
                (i, res[body.key(ref)])
                for i, ref in enumerate(node.input)
                if not ref.startswith("^") and body.key(ref) in res
            ]
            if uses:
                try:
                    self.node(body, node, uses, res)
                except (IndexError, KeyError, ValueError, TypeError) as e:  # a malformed NodeDef
                    self.fail(
                        node,
                        f"malformed {node.op} in {body.where()} ({type(e).__name__}: {e})",
                        errors.InvalidArgumentError,
                    )
        if body.renamed:
            for node in body.nodes:
                refs = [body.rename(ref) for ref in node.input]
                del node.input[:]
                node.input.extend(refs)

    def node(
        self, body: _Body, node: Any, uses: list[tuple[int, _Var]], res: dict[str, _Var]
    ) -> None:
        op, attr = node.op, node.attr
        var = uses[0][1]
        if op in ("ReadVariableOp", "ResourceGather", "ResourceGatherNd") and (
            attr["dtype"].type != var.dtype
        ):
            self.fail(
                node,
                f"reads variable '{var.name}' as {_dtype_name(self.p, attr['dtype'].type)}, but "
                f"its saved value is {_dtype_name(self.p, var.dtype)}",
                errors.InvalidArgumentError,
            )
        if op == "ReadVariableOp":
            node.op = "Identity"
            del attr["dtype"]
            attr["T"].type = var.dtype
            body.renamed[f"{node.name}:value:"] = f"{node.name}:output:"
        elif op == "Identity":
            attr["T"].type = var.dtype
            res[body.out(node.name, 0)] = var
        elif op in ("ResourceGather", "ResourceGatherNd") and uses[0][0] == 0:
            for key in ("dtype", "validate_indices"):
                if key in attr:
                    del attr[key]
            attr["Tparams"].type = var.dtype
            if op == "ResourceGather":
                node.op = "GatherV2"
                batch_dims = int(attr["batch_dims"].i) if "batch_dims" in attr else 0
                axis = self._axis_const(body, node, batch_dims)
                node.input.insert(2, axis)
                attr["Taxis"].type = self.p.types_pb2.DT_INT32
            else:
                node.op = "GatherNd"
                if "batch_dims" in attr and attr["batch_dims"].i == 0:
                    del attr["batch_dims"]
        elif op == "VariableShape":
            node.op = "Shape"
            attr["T"].type = var.dtype
        elif op in _CALLS:
            bound = {i: v for i, v in uses}
            for i, v in bound.items():
                attr["Tin"].list.type[i] = v.dtype
            name, outs = self.function(attr["f"].func.name, bound, node)
            attr["f"].func.name = name
            for j, v in outs.items():
                attr["Tout"].list.type[j] = v.dtype
                res[body.out(node.name, j)] = v
        elif op in _LOOPS:
            bound = {i: v for i, v in uses}
            for i, v in bound.items():
                attr["T"].list.type[i] = v.dtype
                shapes = attr["output_shapes"].list.shape if "output_shapes" in attr else []
                if i < len(shapes):
                    shapes[i].CopyFrom(_shape_proto(self.p, v.shape))
            attr["cond"].func.name = self.function(attr["cond"].func.name, bound, node)[0]
            name, outs = self.function(attr["body"].func.name, bound, node)
            if any(outs.get(i) != v for i, v in bound.items()):
                self.fail(node, f"its body does not pass variable '{var.name}' through unchanged")
            attr["body"].func.name = name
            for i, v in bound.items():
                res[body.out(node.name, i)] = v
        elif op in _IFS or op in _CASES:
            if any(i == 0 for i, _ in uses):
                self.fail(node, f"its branch selector is variable '{var.name}'")
            bound = {i - 1: v for i, v in uses}
            for i, v in bound.items():
                attr["Tin"].list.type[i] = v.dtype
            branches = (
                [attr["then_branch"].func, attr["else_branch"].func]
                if op in _IFS
                else list(attr["branches"].list.func)
            )
            for func in branches:
                name, outs = self.function(func.name, bound, node)
                if outs:
                    self.fail(node, f"a branch returns variable '{var.name}'")
                func.name = name
        else:
            self.fail(
                node,
                f"{op} uses variable '{var.name}' in {body.where()}; minigraph freezes variables "
                "on load and runs only signatures that read them (ReadVariableOp, "
                "ResourceGather, VariableShape, passed through calls, loops and conditionals)",
            )

    def _axis_const(self, body: _Body, node: Any, value: int) -> str:
        p = self.p
        const = p.node_def_pb2.NodeDef(name=f"{node.name}/axis", op="Const", device=node.device)
        const.attr["dtype"].type = p.types_pb2.DT_INT32
        const.attr["value"].tensor.CopyFrom(tensor_to_proto(p, np.array(value, np.int32)))
        body.nodes.append(const)
        return f"{const.name}:output:0" if body.fn else const.name

    # -- functions -------------------------------------------------------------------------

    def function(
        self, name: str, bound: dict[int, _Var], caller: Any
    ) -> tuple[str, dict[int, _Var]]:
        """The name of ``name`` specialised for frozen arguments ``bound`` (rewritten once per
        distinct binding), and which of its outputs return a frozen value."""
        memo = (name, tuple(sorted((i, v.dtype, v.shape) for i, v in bound.items())))
        if memo in self.done:
            return self.done[memo]
        source = self.defs.get(name)
        if source is None:
            return self.fail(
                caller,
                f"function {name!r} is not in the SavedModel's library",
                errors.NotFoundError,
            )
        new_name = name if name not in self.new_defs else f"{name}_frozen{len(self.done)}"
        fdef = type(source)()
        fdef.CopyFrom(source)
        fdef.signature.name = new_name
        res: dict[str, _Var] = {}
        for i, v in bound.items():
            if i >= len(fdef.signature.input_arg):
                self.fail(caller, f"passes {i + 1} or more arguments to {name}, which takes fewer")
            arg = fdef.signature.input_arg[i]
            if arg.type != DT_RESOURCE:
                self.fail(caller, f"passes variable '{v.name}' to argument {arg.name!r} of {name}")
            arg.type = v.dtype
            attrs = fdef.arg_attr[i].attr
            for key in list(attrs):
                if key.startswith("_handle"):
                    del attrs[key]
            shapes = attrs["_output_shapes"].list.shape
            del shapes[:]
            shapes.add().CopyFrom(_shape_proto(self.p, v.shape))
            res[arg.name] = v
        nodes = [_copy(self.p, nd) for nd in fdef.node_def]
        body = _Body(nodes, new_name)
        self.body(body, res)
        for key in list(fdef.ret):
            fdef.ret[key] = body.rename(fdef.ret[key])
        del fdef.node_def[:]
        fdef.node_def.extend(nodes)
        outs: dict[int, _Var] = {}
        for j, arg in enumerate(fdef.signature.output_arg):
            got = res.get(fdef.ret[arg.name]) if arg.name in fdef.ret else None
            if got is not None:
                arg.type = got.dtype
                outs[j] = got
        self.new_defs[new_name] = fdef
        self.done[memo] = (new_name, outs)
        return new_name, outs


def freeze(p: Any, gd: Any, values: Mapping[str, np.ndarray]) -> Any:
    """A copy of GraphDef ``gd`` with each ``VarHandleOp`` named in ``values`` a ``Const``
    of its value and every use of it rewritten (see the module docstring); its library
    holds only the functions the result calls."""
    out = p.graph_pb2.GraphDef()
    out.versions.CopyFrom(gd.versions)
    freezer = _Freezer(p, gd)
    res: dict[str, _Var] = {}
    nodes = []
    for nd in gd.node:
        copy = _copy(p, nd)
        if nd.op == "VarHandleOp" and nd.name in values:
            value = values[nd.name]
            const = tensor_to_proto(p, value)
            del copy.attr["shape"]
            for key in [k for k in copy.attr if k != "dtype"]:
                del copy.attr[key]
            copy.op = "Const"
            copy.attr["value"].tensor.CopyFrom(const)
            res[f"{nd.name}:0"] = _Var(nd.name, int(const.dtype), tuple(value.shape))
        nodes.append(copy)
    freezer.body(_Body(nodes, None), res)
    out.node.extend(nodes)
    for name in _called(nodes, freezer):
        out.library.function.add().CopyFrom(freezer.new_defs.get(name) or freezer.defs[name])
    return out


def _called(nodes: list[Any], freezer: _Freezer) -> list[str]:
    """The functions ``nodes`` call, directly or through other functions, callees first."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(node: Any) -> None:
        for value in node.attr.values():
            funcs = [value.func] if value.HasField("func") else []
            funcs += list(value.list.func) if value.HasField("list") else []
            for f in funcs:
                fdef = freezer.new_defs.get(f.name) or freezer.defs.get(f.name)
                if fdef is None or f.name in seen:
                    continue
                seen.add(f.name)
                for inner in fdef.node_def:
                    visit(inner)
                order.append(f.name)
        fdef = freezer.defs.get(node.op)  # a node whose op is a library function's name
        if fdef is not None and node.op not in seen:
            seen.add(node.op)
            for inner in fdef.node_def:
                visit(inner)
            order.append(node.op)

    for node in nodes:
        visit(node)
    return order


def _topological(nodes: list[Any]) -> list[Any]:
    """``nodes`` with every node after the nodes it reads (stable; cycles keep their order,
    which the importer reports)."""
    names = {n.name: i for i, n in enumerate(nodes)}
    users: dict[str, list[str]] = {n.name: [] for n in nodes}
    waiting: dict[str, int] = {}
    for n in nodes:
        deps = {ref.lstrip("^").split(":")[0] for ref in n.input} & names.keys()
        deps.discard(n.name)
        waiting[n.name] = len(deps)
        for d in deps:
            users[d].append(n.name)
    ready = [(names[n], n) for n, w in waiting.items() if w == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, name = heapq.heappop(ready)
        order.append(nodes[names[name]])
        for u in users[name]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, (names[u], u))
    placed = {n.name for n in order}
    return order + [n for n in nodes if n.name not in placed]


def _copy(p: Any, nd: Any) -> Any:
    copy = p.node_def_pb2.NodeDef()
    copy.CopyFrom(nd)
    return copy


def _shape_proto(p: Any, shape: tuple[int, ...]) -> Any:
    proto = p.tensor_shape_pb2.TensorShapeProto()
    for d in shape:
        proto.dim.add(size=int(d))
    return proto


def _dtype_name(p: Any, enum: int) -> str:
    try:
        return str(p.types_pb2.DataType.Name(enum))
    except ValueError:
        return str(enum)
