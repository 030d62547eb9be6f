"""``mg.graph_util``: between variables and constants, as ``tf.compat.v1.graph_util``.

- :func:`convert_variables_to_constants` freezes a Session's variables into a GraphDef
  (TensorFlow's function of that name): each variable the outputs need becomes a ``Const``
  of its value in the Session, each read an ``Identity``
  (``minigraph.freeze_variables``, which SavedModel loading uses too).
- :func:`constants_to_variables` goes the other way, for fine-tuning a frozen model: the
  weights of an imported graph become variables, initialised to the values they had, so
  ``mg.gradients`` and the optimizers can train them.
- :func:`extract_sub_graph` prunes a GraphDef to what some nodes need.

They work on GraphDefs, so they need the ``tensorboard`` extra's protobuf classes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from minigraph import errors
from minigraph.freeze_variables import freeze
from minigraph.graph import Graph
from minigraph.graph_def import import_graph_def
from minigraph.ops.variable_ops import CONTAINER, VariableState
from minigraph.ops.variables import Variable
from minigraph.session import Session
from minigraph.tf_proto import protos
from minigraph.transfer import to_host

__all__ = ["convert_variables_to_constants", "constants_to_variables", "extract_sub_graph"]


def extract_sub_graph(graph_def: Any, dest_nodes: Sequence[str]) -> Any:
    """A copy of ``graph_def`` with only the nodes ``dest_nodes`` need (data and control
    inputs), in their order, and its function library."""
    p = protos()
    by_name = {n.name: n for n in graph_def.node}
    missing = [d for d in dest_nodes if d not in by_name]
    if missing:
        raise errors.NotFoundError(f"{missing[0]} is not in graph")
    need: set[str] = set()
    stack = list(dest_nodes)
    while stack:
        name = stack.pop()
        if name not in need:
            need.add(name)
            stack.extend(r.lstrip("^").split(":")[0] for r in by_name[name].input)
    out = p.graph_pb2.GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    out.library.CopyFrom(graph_def.library)
    out.node.extend(n for n in graph_def.node if n.name in need)
    return out


def convert_variables_to_constants(
    sess: Session,
    input_graph_def: Any,
    output_node_names: Sequence[str],
    variable_names_whitelist: Iterable[str] | None = None,
    variable_names_blacklist: Iterable[str] | None = None,
) -> Any:
    """``input_graph_def`` pruned to ``output_node_names``, with each variable they need
    (its ``VarHandleOp``) a ``Const`` of its value in ``sess``.

    Variables left out by the white/black lists stay variables. A variable the Session has
    not initialised is a FailedPreconditionError naming it; an assign among the nodes the
    outputs need is an UnimplementedError (a frozen graph cannot hold it).
    """
    pruned = extract_sub_graph(input_graph_def, output_node_names)
    allowed = None if variable_names_whitelist is None else set(variable_names_whitelist)
    refused = set(variable_names_blacklist or ())
    values = {}
    for node in pruned.node:
        if node.op != "VarHandleOp" or node.name in refused:
            continue
        if allowed is None or node.name in allowed:
            values[node.name] = _session_value(sess, node)
    return freeze(protos(), pruned, values)


def _session_value(sess: Session, node: Any) -> np.ndarray:
    """The value the variable of VarHandleOp ``node`` has in ``sess``."""
    resources = getattr(sess._executor, "resources", None)  # noqa: SLF001 - the Session's own
    container = node.attr["container"].s.decode() or CONTAINER
    name = node.attr["shared_name"].s.decode() or node.name
    var = None if resources is None else resources.get(container, name)
    if not isinstance(var, VariableState) or var.value is None:
        raise errors.FailedPreconditionError(
            f"Could not find variable {name}: it has no value in this Session (run its "
            "initializer first)",
            node.name,
            "VarHandleOp",
        )
    return np.array(to_host(var.value))


def _weights(p: Any, gd: Any) -> list[str]:
    """Every floating-point Const of more than one element: a frozen model's weights."""
    names = []
    for node in gd.node:
        if node.op == "Const":
            tensor = node.attr["value"].tensor
            dims = [d.size for d in tensor.tensor_shape.dim]
            floats = (p.types_pb2.DT_HALF, p.types_pb2.DT_FLOAT, p.types_pb2.DT_DOUBLE)
            if tensor.dtype in floats and int(np.prod(dims)) > 1:
                names.append(node.name)
    return names


def constants_to_variables(graph: Graph, names: Iterable[str] | None = None) -> Graph:
    """A copy of ``graph`` in which the Consts ``names`` (default: every floating-point
    Const of more than one element, a frozen model's weights) are trainable variables.

    Const ``w`` becomes TensorFlow's nodes for a variable: ``w`` (VarHandleOp),
    ``w/Initializer/initial_value`` (the value), ``w/Assign`` and ``w/Read/ReadVariableOp``,
    which the Const's readers now read. The new graph's ``mg.trainable_variables()`` lists
    them in graph order and ``mg.global_variables_initializer()`` gives them their values.
    Consts inside function bodies stay constants.

    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     w = mg.constant(np.float32([[1, 2], [3, 4]]), name="w")
    ...     y = mg.matmul(mg.placeholder(mg.float32, [None, 2], name="x"), w, name="y")
    >>> tuned = mg.graph_util.constants_to_variables(g)
    >>> [v.name for v in mg.trainable_variables(tuned)]
    ['w:0']
    """
    p = protos()
    gd = graph.as_graph_def()
    chosen = _weights(p, gd) if names is None else list(names)
    consts = {n.name: n for n in gd.node if n.op == "Const"}
    for name in chosen:
        if name not in consts:
            kind = "not a Const" if name in graph else "not in the graph"
            raise errors.InvalidArgumentError(f"{name} is {kind}: only Consts become variables")
    chosen_set = set(chosen)
    read = {name: f"{name}/Read/ReadVariableOp" for name in chosen}
    out = p.graph_pb2.GraphDef()
    out.versions.CopyFrom(gd.versions)
    out.library.CopyFrom(gd.library)
    for node in gd.node:
        if node.name in chosen_set:
            out.node.extend(_variable_nodes(p, node))
            continue
        copy = out.node.add()
        copy.CopyFrom(node)
        del copy.input[:]
        for ref in node.input:
            src = ref.lstrip("^").split(":")[0]
            if src in read and not ref.startswith("^"):
                ref = read[src]  # a Const has one output
            copy.input.append(ref)
    tuned = Graph()
    with tuned.as_default():
        import_graph_def(out, name="")
    for name in chosen:
        Variable._adopt(  # noqa: SLF001 - the nodes Variable() would have made
            tuned.get_tensor_by_name(f"{name}:0"),
            tuned.get_operation_by_name(f"{name}/Assign"),
            tuned.get_tensor_by_name(f"{name}/Initializer/initial_value:0"),
        )
    return tuned


def _variable_nodes(p: Any, const: Any) -> list[Any]:
    """The NodeDefs of a variable initialised to Const ``const``'s value."""
    name = const.name
    dtype = const.attr["dtype"].type
    initial = p.node_def_pb2.NodeDef()
    initial.CopyFrom(const)
    initial.name = f"{name}/Initializer/initial_value"
    del initial.input[:]  # its control inputs stay with the reads
    handle = p.node_def_pb2.NodeDef(name=name, op="VarHandleOp", device=const.device)
    handle.attr["dtype"].type = dtype
    handle.attr["shape"].shape.CopyFrom(const.attr["value"].tensor.tensor_shape)
    handle.attr["shared_name"].s = name.encode()
    assign = p.node_def_pb2.NodeDef(
        name=f"{name}/Assign", op="AssignVariableOp", input=[name, initial.name]
    )
    assign.attr["dtype"].type = dtype
    reader = p.node_def_pb2.NodeDef(
        name=f"{name}/Read/ReadVariableOp", op="ReadVariableOp", device=const.device
    )
    reader.input.extend([name, *(r for r in const.input if r.startswith("^"))])
    reader.attr["dtype"].type = dtype
    return [initial, handle, assign, reader]
