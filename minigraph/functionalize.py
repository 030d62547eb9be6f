"""TF1 while loops become functional While nodes: a GraphDef -> GraphDef rewrite at import.

A ``tf.compat.v1.while_loop`` (or a While lowered by freezing with
``lower_control_flow=True``) is a cycle of dataflow nodes in a *frame*::

    Enter -> Merge -> Switch(pred = LoopCond(cond)) -:1-> body ... -> NextIteration -> Merge
                            `-:0-> Exit

minigraph's plans are acyclic, so import rewrites each frame, innermost first, into one
``While`` node (TensorFlow's functional loop, run by minigraph.ops.control_flow_ops) whose
``cond`` and ``body`` are FunctionDefs added to the GraphDef's library, in TensorFlow's
format, so the rewritten GraphDef also runs in TensorFlow. The loop variables are the
non-constant Enters (each with its Merge, Switch, NextIteration and Exit), then the loop
invariants (Enters with ``is_constant``), which the body passes through unchanged. Each Exit
becomes an Identity of the same name reading the While's output, so consumers and fetches
keep their names; the While takes the LoopCond's name. Conditionals in a loop (Switch and
Merge on other predicates) stay in the body, which runs them by dead tensors.

This works on protobuf messages only (no minigraph graph); node output names in function
bodies (``"add:z:0"``) come from the registered ops' declarations.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from . import errors
from .registry import OPS

__all__ = ["LOOP_OPS", "functionalize_loops", "has_loops"]

# The ops of a TF1 loop's frame; import rewrites them away, so no kernel runs them.
LOOP_OPS = frozenset({"Enter", "Exit", "NextIteration", "LoopCond"})


def has_loops(graph_def: Any) -> bool:
    """Whether a GraphDef holds TF1 loops (an Enter node)."""
    return any(n.op == "Enter" for n in graph_def.node)


def _split(ref: str) -> tuple[str, int]:
    """(node, output index) of a data input string; index -1 for a control input ``^x``."""
    if ref.startswith("^"):
        return ref[1:], -1
    name, sep, index = ref.rpartition(":")
    if sep and index.isdigit():
        return name, int(index)
    return ref, 0


def _fail(node: Any, message: str) -> errors.OpError:
    return errors.UnimplementedError(
        f"cannot rewrite the TF1 while loop into a While: {message}", node.name, node.op
    )


@dataclass
class _Frame:
    """One loop: its Enters, the nodes inside it and the loop's structure."""

    name: str
    parent: str
    members: list[str] = field(default_factory=list)


def functionalize_loops(graph_def: Any) -> Any:
    """A copy of ``graph_def`` with every TF1 while loop made a While node (innermost loops
    first) and its cond and body added to the library; ``graph_def`` itself when it has no
    loops. Anything but the frame structure TensorFlow writes is an UnimplementedError
    naming the node."""
    if not has_loops(graph_def):
        return graph_def
    gd = type(graph_def)()
    gd.CopyFrom(graph_def)
    nodes = {n.name: n for n in gd.node}
    frames, frame_of = _frames(nodes)
    depth = {"": 0}

    def level(f: str) -> int:
        if f not in depth:
            depth[f] = level(frames[f].parent) + 1
        return depth[f]

    taken = set(nodes) | {f.signature.name for f in gd.library.function}
    for f in sorted(frames, key=level, reverse=True):
        frame = frames[f]
        frame.members = [n for n in nodes if frame_of.get(n) == f]
        new = _rewrite(gd, nodes, frame, taken)
        for name in frame.members:
            del nodes[name]
        for nd in new:
            nodes[nd.name] = nd
            frame_of[nd.name] = frame.parent
    del gd.node[:]
    gd.node.extend(nodes.values())
    return gd


def _frames(nodes: dict[str, Any]) -> tuple[dict[str, _Frame], dict[str, str]]:
    """Each frame (by its Enters' frame_name) with its parent, and each node's frame ("" is
    the top level), found as TensorFlow's BuildControlFlowInfo does: from the nodes with
    no inputs along every edge; an Enter starts its frame, an Exit returns to the parent."""
    readers: dict[str, list[str]] = {n: [] for n in nodes}
    for nd in nodes.values():
        for ref in nd.input:
            src = _split(ref)[0]
            if src not in nodes:
                raise _fail(nd, f"input '{ref}' names no node of the GraphDef")
            readers[src].append(nd.name)
    frames: dict[str, _Frame] = {}
    frame_of = {n: "" for n, nd in nodes.items() if not nd.input}
    todo = list(frame_of)
    while todo:
        src = todo.pop()
        here = frame_of[src]
        if nodes[src].op == "Exit":
            here = frames[here].parent if here else here
        for dst in readers[src]:
            nd = nodes[dst]
            want = here
            if nd.op == "Enter":
                want = nd.attr["frame_name"].s.decode()
                known = frames.setdefault(want, _Frame(want, here))
                if known.parent != here:
                    raise _fail(nd, f"frame '{want}' is entered from two frames")
            if dst in frame_of:
                if frame_of[dst] != want and nd.op != "Merge":
                    raise _fail(nd, f"it reads values of frames '{frame_of[dst]}' and '{want}'")
                continue
            frame_of[dst] = want
            todo.append(dst)
    return frames, frame_of


@dataclass
class _Var:
    """A loop variable: its Enter, Merge, Switch, NextIteration and (maybe) Exit."""

    enter: Any
    merge: Any
    switch: Any
    next_iteration: Any
    exit: Any | None


def _rewrite(gd: Any, nodes: dict[str, Any], frame: _Frame, taken: set[str]) -> list[Any]:
    """The While node and the Identities standing for the Exits of one frame; its cond and
    body are added to ``gd.library``."""
    members = [nodes[n] for n in frame.members]
    readers: dict[str, list[tuple[Any, int]]] = {}
    for nd in members:
        for ref in nd.input:
            src, index = _split(ref)
            readers.setdefault(src, []).append((nd, index))

    def reader(nd: Any, index: int, op: str) -> Any | None:
        found = [r for r, i in readers.get(nd.name, []) if i == index and r.op == op]
        if len(found) > 1:
            raise _fail(nd, f"output {index} has {len(found)} {op} readers, expected one")
        return found[0] if found else None

    conds = [nd for nd in members if nd.op == "LoopCond"]
    if len(conds) != 1:
        raise _fail(members[0], f"frame '{frame.name}' has {len(conds)} LoopCond nodes")
    loop_cond = conds[0]
    variables: list[_Var] = []
    invariants: list[Any] = []
    for enter in (nd for nd in members if nd.op == "Enter"):
        if enter.attr["is_constant"].b:
            invariants.append(enter)
            continue
        merge = reader(enter, 0, "Merge")
        if merge is None:
            raise _fail(enter, "a loop variable's Enter that no Merge reads")
        nexts = [nodes[_split(r)[0]] for r in merge.input if _split(r)[0] != enter.name]
        switch = reader(merge, 0, "Switch")
        if len(nexts) != 1 or nexts[0].op != "NextIteration" or switch is None:
            raise _fail(
                merge, "a loop Merge must read an Enter and a NextIteration and feed a Switch"
            )
        if _split(switch.input[1])[0] != loop_cond.name:
            raise _fail(switch, f"its predicate is not the loop's LoopCond {loop_cond.name}")
        variables.append(_Var(enter, merge, switch, nexts[0], reader(switch, 0, "Exit")))
    if not variables:
        raise _fail(loop_cond, "a loop with no loop variable")

    structure = {loop_cond.name, *(e.name for e in invariants)}
    for v in variables:
        structure.update(
            n.name for n in (v.enter, v.merge, v.switch, v.next_iteration, v.exit) if n
        )
    inside = set(frame.members) - structure
    args = [_arg_name(v.enter.name, i, taken) for i, v in enumerate(variables)]
    args += [_arg_name(e.name, len(args) + i, taken) for i, e in enumerate(invariants)]
    types = [v.enter.attr["T"].type for v in variables] + [e.attr["T"].type for e in invariants]
    fixed = {f"{e.name}:0": a for e, a in zip(invariants, args[len(variables) :])}
    in_cond = {f"{v.merge.name}:0": a for v, a in zip(variables, args)} | fixed
    in_body = {f"{v.switch.name}:1": a for v, a in zip(variables, args)} | in_cond
    cond_name = _unique(_function_name(frame.name) + "_cond", taken)
    body_name = _unique(_function_name(frame.name) + "_body", taken)
    library = gd.library.function
    _function(library.add(), cond_name, nodes, inside, args, types, in_cond,
              [("cond", loop_cond.input[0], 10)], [])  # fmt: skip
    refs = [v.next_iteration.input[0] for v in variables] + [f"{e.name}:0" for e in invariants]
    outputs = [(_unique(f"{a}_out", taken), r, t) for a, r, t in zip(args, refs, types)]
    controls = [r[1:] for v in variables for r in v.next_iteration.input if r.startswith("^")]
    _function(library.add(), body_name, nodes, inside, args, types, in_body, outputs, controls)

    loop = type(loop_cond)()
    loop.name, loop.op, loop.device = loop_cond.name, "While", variables[0].enter.device
    loop.input.extend(v.enter.input[0] for v in variables)
    loop.input.extend(e.input[0] for e in invariants)
    controls_in = {r for e in [v.enter for v in variables] + invariants for r in e.input[1:]}
    loop.input.extend(sorted(controls_in))
    loop.attr["T"].list.type.extend(types)
    loop.attr["cond"].func.name = cond_name
    loop.attr["body"].func.name = body_name
    loop.attr["parallel_iterations"].i = variables[0].enter.attr["parallel_iterations"].i or 10
    shapes = loop.attr["output_shapes"].list.shape
    for nd in [v.exit for v in variables] + invariants:
        known = nd.attr["_output_shapes"].list.shape if nd is not None else []
        if known:
            shapes.add().CopyFrom(known[0])
        else:
            shapes.add().unknown_rank = True
    new = [loop]
    for i, v in enumerate(variables):
        if v.exit is not None:
            ident = type(loop_cond)()
            ident.name, ident.op, ident.device = v.exit.name, "Identity", v.exit.device
            ident.input.append(loop.name if i == 0 else f"{loop.name}:{i}")
            ident.attr["T"].type = types[i]
            new.append(ident)
    return new


def _function(
    fdef: Any,
    name: str,
    nodes: dict[str, Any],
    inside: set[str],
    args: list[str],
    types: list[int],
    sources: dict[str, str],
    outputs: list[tuple[str, str, int]],
    controls: list[str],
) -> None:
    """Fill ``fdef`` with the nodes of ``inside`` (the frame's, less its loop structure) that
    ``outputs`` (name, ref, dtype) and ``controls`` (node names) need, reading ``sources``
    (refs -> arg names) as arguments."""
    needed: dict[str, Any] = {}
    todo = [_split(ref)[0] for _, ref, _ in outputs if _key(ref) not in sources] + controls
    while todo:
        n = todo.pop()
        if n in needed:
            continue
        nd = nodes[n]
        if n not in inside:
            raise _fail(nd, f"a node of the loop reads it outside the loop's pattern ({name})")
        needed[n] = nd
        for ref in nd.input:
            src, index = _split(ref)
            if index < 0 and src not in inside:
                continue  # a loop variable or a value from outside is there before the body
            if _key(ref) not in sources:
                todo.append(src)
    fdef.signature.name = name
    for a, t in zip(args, types):
        fdef.signature.input_arg.add(name=a, type=t)
    for out, ref, t in outputs:
        fdef.signature.output_arg.add(name=out, type=t)
        fdef.ret[out] = sources.get(_key(ref)) or _function_ref(nodes, ref)
    stateful = [n for n in controls if n in needed and _reaches_stateful(needed, n)]
    for n in stateful:
        fdef.signature.control_output.append(n)
        fdef.control_ret[n] = n
    for nd in sorted(needed.values(), key=lambda x: x.name):
        out = fdef.node_def.add()
        out.CopyFrom(nd)
        del out.input[:]
        for ref in nd.input:
            src, index = _split(ref)
            if index < 0:
                if src in needed:
                    out.input.append(ref)
            elif _key(ref) in sources:
                out.input.append(sources[_key(ref)])
            else:
                out.input.append(_function_ref(nodes, ref))
        for key in [k for k in out.attr if k in ("_class", "_output_shapes")]:
            del out.attr[key]


def _key(ref: str) -> str:
    """A data input string as ``"node:index"`` (``"x"`` is ``"x:0"``)."""
    name, index = _split(ref)
    return f"{name}:{index}"


def _reaches_stateful(needed: dict[str, Any], start: str) -> bool:
    """Whether a control output runs a stateful op (else it is left out, as it does
    nothing); an op minigraph does not know counts as stateful."""
    seen, todo = set(), [start]
    while todo:
        n = todo.pop()
        if n in seen or n not in needed:
            continue
        seen.add(n)
        op = OPS.get(needed[n].op)
        if op is None or (op.is_stateful and op.name not in ("Switch", "_SwitchN", "Merge")):
            return True
        todo.extend(_split(r)[0] for r in needed[n].input)
    return False


def _function_ref(nodes: dict[str, Any], ref: str) -> str:
    """A GraphDef ref ``"add:1"`` as a FunctionDef body writes it: ``"add:z:0"`` (the output
    arg's name and the index within that arg), from the op's declaration."""
    name, index = _split(ref)
    nd = nodes[name]
    for arg, count in _output_args(nd):
        if index < count:
            return f"{name}:{arg}:{index}"
        index -= count
    raise _fail(nd, f"it has no output {_split(ref)[1]}")


def _output_args(nd: Any) -> Iterable[tuple[str, int]]:
    """(output arg name, how many tensors it stands for) of a NodeDef's op, in order."""
    if nd.op == "While" and "While" not in OPS:  # the node this rewrite makes
        return [("output", len(nd.attr["T"].list.type))]
    op = OPS.get(nd.op)
    if op is None:
        raise _fail(nd, f"op {nd.op} is not registered, so its outputs are not known")
    out = []
    for arg in op.outputs:
        if arg.number_attr:
            out.append((arg.name, nd.attr[arg.number_attr].i))
        elif arg.type_list_attr:
            out.append((arg.name, len(nd.attr[arg.type_list_attr].list.type)))
        else:
            out.append((arg.name, 1))
    return out


def _function_name(frame: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", frame).strip("_") or "while"


def _arg_name(enter: str, i: int, taken: set[str]) -> str:
    """An argument name as TensorFlow writes them (lowercase, [a-z0-9_]), from the Enter."""
    base = re.sub(r"[^a-z0-9_]", "_", enter.lower()).strip("_")
    return _unique(f"arg{i}_{base}" if base else f"arg{i}", taken)


def _unique(name: str, taken: set[str]) -> str:
    out, k = name, 1
    while out in taken:
        out, k = f"{name}_{k}", k + 1
    taken.add(out)
    return out
