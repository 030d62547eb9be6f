"""TensorFlow 1's reference variables, imported as resource variables.

A ``tf.compat.v1`` graph built without resource variables holds each variable as a
``VariableV2`` whose output is a *reference*: ``Assign``/``AssignAdd``/``AssignSub`` and the
training ops (``ApplyGradientDescent``, ``ApplyAdam``...) update it through that reference,
and every other reader (``w/read``, an Identity) dereferences it when it runs. minigraph has
no reference tensors, so before import :func:`to_resource_variables` rewrites such a
GraphDef into the resource form TensorFlow 2 writes, node for node:

- ``VariableV2`` ``w`` -> ``VarHandleOp`` ``w/resource`` (shared name: its ``shared_name``,
  else ``w``), and a ``ReadVariableOp`` ``w``, so that fetching ``w:0`` gives its value;
- an update ``u`` of ``w`` -> its resource op (``AssignVariableOp``, ``AssignAddVariableOp``,
  ``AssignSubVariableOp``, ``ResourceApply*``) named ``u/update``, and a ``ReadVariableOp``
  named ``u`` after it, so that what read ``u`` (its new value, or ``^u`` to run it) still
  does;
- ``IsVariableInitialized`` -> ``VarIsInitializedOp``;
- any other reader of ``w`` -> the same reader of a ``ReadVariableOp`` of its own, with the
  reader's control inputs, so that it reads when the reader would have.

Graphs without reference variables are returned as they are. Function bodies hold none
(TensorFlow 2 writes only resource variables there).
"""

from __future__ import annotations

from typing import Any

from .registry import OPS

__all__ = ["to_resource_variables", "rewritten"]

REF_VARIABLES = frozenset({"VariableV2", "Variable"})
# A TF1 update of a reference -> its resource op (same inputs, the refs become handles).
_UPDATES = {"Assign": "AssignVariableOp", "AssignAdd": "AssignAddVariableOp",
            "AssignSub": "AssignSubVariableOp"}  # fmt: skip


def _resource_op(op: str) -> str | None:
    """The resource form of an update op: Assign* by the table, Apply* (training ops) as
    ``Resource`` + its name when minigraph has that op."""
    if op in _UPDATES:
        return _UPDATES[op]
    if op.startswith(("Apply", "SparseApply")) and f"Resource{op}" in OPS:
        return f"Resource{op}"
    return None


def rewritten(op: str) -> bool:
    """Whether import turns nodes of ``op`` into resource-variable ops (so they run)."""
    return op in REF_VARIABLES or op == "IsVariableInitialized" or _resource_op(op) is not None


def to_resource_variables(p: Any, gd: Any) -> Any:
    """``gd`` with its reference variables rewritten as resource variables (see the module
    docstring); ``gd`` itself when it has none."""
    variables = {n.name: n for n in gd.node if n.op in REF_VARIABLES}
    if not variables:
        return gd
    out = p.graph_pb2.GraphDef()
    out.versions.CopyFrom(gd.versions)
    out.library.CopyFrom(gd.library)
    taken = {n.name for n in gd.node}
    dtypes = {name: node.attr["dtype"].type for name, node in variables.items()}

    def ref_of(ref: str) -> str | None:
        """The variable an input names, when it names one's reference."""
        if ref.startswith("^"):
            return None
        src, _, index = ref.partition(":")
        return src if src in variables and index in ("", "0") else None

    def unique(base: str) -> str:
        name, i = base, 1
        while name in taken:
            name, i = f"{base}_{i}", i + 1
        taken.add(name)
        return name

    handles = {var: unique(f"{var}/resource") for var in variables}

    def read(var: str, name: str, controls: list[str]) -> Any:
        node = out.node.add(name=name, op="ReadVariableOp", input=[handles[var], *controls])
        node.attr["dtype"].type = dtypes[var]
        return node

    def rewired(node: Any, positions: frozenset[int], into: Any) -> None:
        """``node``'s inputs on ``into``: a variable's reference becomes its handle at
        ``positions``, elsewhere a read of its own."""
        controls = [r for r in node.input if r.startswith("^")]
        del into.input[:]
        for i, ref in enumerate(node.input):
            var = ref_of(ref)
            if var is not None and i in positions:
                ref = handles[var]
            elif var is not None:
                ref = read(var, unique(f"{node.name}/read_{var.replace('/', '_')}"), controls).name
            into.input.append(ref)

    for node in gd.node:
        if node.name in variables:
            handle = out.node.add(name=handles[node.name], op="VarHandleOp", device=node.device)
            handle.attr["dtype"].type = node.attr["dtype"].type
            handle.attr["shape"].CopyFrom(node.attr["shape"])
            handle.attr["container"].s = node.attr["container"].s
            handle.attr["shared_name"].s = node.attr["shared_name"].s or node.name.encode()
            read(node.name, node.name, [r for r in node.input if r.startswith("^")])
            continue
        resource_op = _resource_op(node.op)
        if resource_op is not None and node.input and ref_of(node.input[0]):
            update = out.node.add()
            update.CopyFrom(node)
            update.name = unique(f"{node.name}/update")
            update.op = resource_op
            if node.op in _UPDATES:  # Assign's T is AssignVariableOp's dtype
                update.attr["dtype"].type = node.attr["T"].type
                for key in [k for k in update.attr if k not in ("dtype", "validate_shape")]:
                    del update.attr[key]
            rewired(node, _handle_positions(resource_op), update)
            read(ref_of(node.input[0]) or "", node.name, [f"^{update.name}"])
        elif node.op == "IsVariableInitialized" and node.input and ref_of(node.input[0]):
            check = out.node.add(name=node.name, op="VarIsInitializedOp", device=node.device)
            rewired(node, frozenset({0}), check)
        else:
            copy = out.node.add()
            copy.CopyFrom(node)
            rewired(node, frozenset(), copy)
    return out


def _handle_positions(op: str) -> frozenset[int]:
    """The inputs of a resource op that take a variable's handle."""
    args = OPS[op].inputs
    return frozenset(i for i, a in enumerate(args) if a.dtype is not None and a.dtype.is_handle)
