"""Execution plans: a graph pruned to what the fetches need, as a flat list of steps.

A plan is plain data (op types, attrs, devices, value slots), so an executor
in another process can run it with its own kernel registry. Building one:
prune to the fetches' ancestors, cutting at feeds; place every node; order the
nodes topologically; find each value's last consumer (to release it) and which
inputs a kernel may overwrite (forwarding).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import deadness, errors
from .devices import DeviceSpec, get_device, parse_device
from .graph import Node, Operation, Output
from .optimizer import OptimizerOptions, optimize, resolve
from .registry import lookup_op
from .transfer import COPY_OP

__all__ = ["Step", "Plan", "build_plan", "PLAN_OPTIONS"]

# The attr a plan adds to a call op's step (While, If, PartitionedCall...): the plan's
# (optimizer options, soft placement), so that the bodies it runs are planned alike.
PLAN_OPTIONS = "_plan_options"


@dataclass(frozen=True)
class Step:
    """Run one node: read value slots ``inputs``, write ``outputs``, then free ``release``."""

    op_type: str
    node_name: str
    attrs: Mapping[str, Any]
    device: str  # "CPU:0", "GPU:0"
    inputs: tuple[int, ...]
    input_lengths: tuple[int | None, ...]
    outputs: tuple[int, ...]
    release: tuple[int, ...]
    forwardable: frozenset[int]
    output_specs: tuple[tuple[tuple[int | None, ...] | None, str], ...]  # (dims, dtype name)
    single_output: bool = True  # the kernel returns one array, not a sequence
    input_dims: tuple[tuple[int | None, ...] | None, ...] = ()  # what shape inference knows
    # Only in a dead-aware plan (Plan.dead_aware): the slots of the control tokens this
    # step waits on (DEAD when that node was skipped), and the slot of its own token.
    control_inputs: tuple[int, ...] = ()
    control_output: int | None = None


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...]
    num_slots: int
    feed_slots: tuple[int, ...]  # one per fed tensor, in the order the session passes them
    fetch_slots: tuple[int, ...]  # one per tensor fetch
    optimizations: tuple[str, ...] = ()  # what each optimizer pass changed, one line each
    # Fetches (positions in fetch_slots) whose value may share its buffer with an earlier
    # fetch's: a view of it (Reshape, Split...), or the same tensor again. The session
    # returns them as copies, so that every fetched array is the caller's own.
    shared_fetches: tuple[int, ...] = ()
    # Whether a value may be dead (a Switch is among the steps): the executor then runs the
    # dead-aware loop, which skips a step fed a dead value (minigraph.deadness).
    dead_aware: bool = False


def build_plan(
    fetch_outputs: Sequence[Output],
    target_nodes: Sequence[Node],
    feeds: Sequence[Output],
    session_device: DeviceSpec,
    allow_soft_placement: bool = True,
    feed_devices: Sequence[str] | None = None,
    optimizer: OptimizerOptions | None = None,
    places: Mapping[str, Any] | None = None,
    aliased_fetches: bool = False,
) -> Plan:
    """The plan for these fetches and feeds; ``feed_devices`` says where each fed value is.

    ``optimizer`` says which passes of :mod:`minigraph.optimizer` run (None: all of them);
    ``places`` maps node names to where an executor will run them (a Dask worker), so that
    no fused step spans two places. ``aliased_fetches``: fetched values may be other
    values' buffers (a fetched Identity is removed): for a caller that never hands fetched
    buffers out as fresh ones, as a function call (minigraph.functions) does not.
    """
    fed = set(feeds)
    nodes = _prune(fetch_outputs, target_nodes, fed)
    slot: dict[Output, int] = {x: i for i, x in enumerate(feeds)}
    where = list(feed_devices or ["CPU:0"] * len(feeds))  # the device of each slot's value
    protos = []
    copies: dict[tuple[int, str], int] = {}
    placed = _place_all(nodes, session_device, allow_soft_placement)
    dead_aware = deadness.makes_dead(n.type_string for n in nodes)
    tokens = _control_tokens(nodes, where) if dead_aware else {}
    for node in nodes:
        device = placed[node.name]
        if device != "CPU:0" and _host_only(node, [where[slot[x]] for x in node.inputs]):
            device = placed[node.name] = _place_on_cpu(node)
        ins = []
        for x, host in zip(node.inputs, _host_flags(node)):
            s = slot[x]
            need = "CPU:0" if host else device
            if where[s] != need:
                if (s, need) not in copies:
                    copies[s, need] = len(where)
                    where.append(need)
                    # Named after the reader, so an error in the copy names the user's node.
                    protos.append(
                        _Proto(
                            lookup_op(COPY_OP),
                            node.name,
                            {"T": x.dtype},
                            need,
                            (s,),
                            (None,),
                            (copies[s, need],),
                            (x.spec,),
                        )
                    )
                s = copies[s, need]
            ins.append(s)
        outs = []
        for i, host in enumerate(_host_flags(node, outputs=True)):
            out = Output(Operation(node), i)
            # A fed output keeps its feed slot for its readers; the step writes a slot of
            # its own that nothing reads (a node runs when some other output is needed).
            outs.append(len(where))
            where.append("CPU:0" if host else device)
            if out not in slot:
                slot[out] = outs[-1]
        attrs = node.attrs
        if node.op_def.calls_functions:
            # A call op's bodies are planned with the options its caller's plan had.
            attrs = {**attrs, PLAN_OPTIONS: (optimizer or OptimizerOptions(), allow_soft_placement)}
        protos.append(
            _Proto(
                node.op_def,
                node.name,
                attrs,
                device,
                tuple(ins),
                node.input_lengths,
                tuple(outs),
                node.output_specs,
                tuple(tokens[c.name] for c in node.control_inputs if c.name in tokens),
                tokens.get(node.name),
            )
        )
    fetch_slots = tuple(slot[x] for x in fetch_outputs)
    protos, alias, report = optimize(
        protos, fetch_slots, optimizer or OptimizerOptions(), places, aliased_fetches
    )
    fetch_slots = tuple(resolve(alias, s) for s in fetch_slots)
    dims = {i: x.shape.dims for i, x in enumerate(feeds)}  # a feed is checked against these
    dims.update((o, spec.shape.dims) for p in protos for o, spec in zip(p.outputs, p.specs))
    steps, shared = _schedule(protos, len(where), fetch_slots, range(len(feeds)), dims)
    return Plan(
        steps, len(where), tuple(range(len(feeds))), fetch_slots, tuple(report), shared, dead_aware
    )


def _control_tokens(nodes: list[Node], where: list[str]) -> dict[str, int]:
    """A slot for each planned node that another one has as a control input: the node's
    control token, which says whether it ran (a dead-aware plan skips a node whose control
    input was skipped, as TensorFlow does)."""
    planned = {n.name for n in nodes}
    tokens: dict[str, int] = {}
    for n in nodes:
        for c in n.control_inputs:
            if c.name in planned and c.name not in tokens:
                tokens[c.name] = len(where)
                where.append("CPU:0")
    return tokens


@dataclass(frozen=True)
class _Proto:
    """A step before its releases and forwarding are known."""

    op_def: Any
    name: str
    attrs: Mapping[str, Any]
    device: str
    inputs: tuple[int, ...]
    input_lengths: tuple[int | None, ...]
    outputs: tuple[int, ...]
    specs: tuple[Any, ...]
    control_inputs: tuple[int, ...] = ()  # as Step's
    control_output: int | None = None


def _schedule(
    protos: list[_Proto],
    num_slots: int,
    fetch_slots: tuple[int, ...],
    feeds: Any,
    dims: Mapping[int, tuple[int | None, ...] | None],
) -> tuple[tuple[Step, ...], tuple[int, ...]]:
    """Steps with releases (after each value's last reader), forwardable inputs and the
    inputs' dims as shape inference knows them (``dims``, by slot); and the fetches that
    share a buffer with an earlier fetch (Plan.shared_fetches).

    An input may be overwritten when its buffer is not fed, not a constant or a variable's
    value, not fetched, and read by exactly one op that is not a view. Views
    (``aliases_input`` ops) share their input's buffer, so their readers count together.
    """
    group = list(range(num_slots))  # buffer group of each slot (views join their input's)

    def root(s: int) -> int:
        while group[s] != s:
            s = group[s]
        return s

    uses: dict[int, int] = {}  # buffer group -> number of reads by non-view ops
    pinned: set[int] = set(feeds)  # buffer groups that must never be written
    last_use: dict[int, int] = {}
    for k, p in enumerate(protos):
        for s in p.inputs:
            last_use[s] = k
        if deadness.takes_dead(p.op_def.name):
            _join_inputs(p.inputs, group, root, uses, pinned)  # a Merge passes on any input
        if p.op_def.aliases_input and p.inputs:
            for o in p.outputs:
                group[o] = root(p.inputs[p.op_def.aliased_input])
        else:
            for s in p.inputs:
                uses[root(s)] = uses.get(root(s), 0) + 1
        if p.op_def.name == "Const" or p.op_def.outputs_are_state:
            pinned.update(root(o) for o in p.outputs)
    pinned.update(root(s) for s in fetch_slots)

    releases: dict[int, list[int]] = {}
    for s, k in last_use.items():
        if s not in fetch_slots:
            releases.setdefault(k, []).append(s)

    steps = []
    for k, p in enumerate(protos):
        forwardable = frozenset(
            i
            for i, s in enumerate(p.inputs)
            if root(s) not in pinned
            and uses.get(root(s), 0) == 1
            and p.inputs.count(s) == 1
            and not p.op_def.aliases_input
        )
        steps.append(
            Step(
                op_type=p.op_def.name,
                node_name=p.name,
                attrs=dict(p.attrs),  # a plain dict: steps pickle for remote workers
                device=p.device,
                inputs=p.inputs,
                input_lengths=p.input_lengths,
                outputs=p.outputs,
                release=tuple(sorted(releases.get(k, ()))),
                forwardable=forwardable,
                output_specs=tuple((s.shape.dims, s.dtype.name) for s in p.specs),
                single_output=p.op_def.single_output,
                input_dims=tuple(dims.get(s) for s in p.inputs),
                control_inputs=p.control_inputs,
                control_output=p.control_output,
            )
        )
    fetched: set[int] = set()  # the buffers fetched so far
    shared = []
    for i, s in enumerate(fetch_slots):
        if root(s) in fetched:
            shared.append(i)
        fetched.add(root(s))
    return tuple(steps), tuple(shared)


def _join_inputs(
    inputs: tuple[int, ...], group: list[int], root: Any, uses: dict[int, int], pinned: set[int]
) -> None:
    """Make one buffer group of all these inputs (a Merge's output is any one of them)."""
    first = root(inputs[0])
    for s in inputs[1:]:
        r = root(s)
        if r != first:
            group[r] = first
            uses[first] = uses.get(first, 0) + uses.pop(r, 0)
            if r in pinned:
                pinned.add(first)


def _place_all(
    nodes: list[Node], session_device: DeviceSpec, allow_soft_placement: bool
) -> dict[str, str]:
    """Each node's device; a constant read only in host memory stays on the host."""
    placed = {n.name: _place(n, session_device, allow_soft_placement) for n in nodes}
    readers: dict[str, set[str]] = {}
    for n in nodes:
        for x, host in zip(n.inputs, _host_flags(n)):
            readers.setdefault(x.node.name, set()).add("CPU:0" if host else placed[n.name])
    for n in nodes:
        if (
            n.type_string == "Const"
            and placed[n.name] != "CPU:0"
            and readers.get(n.name) == {"CPU:0"}
        ):
            placed[n.name] = _place_on_cpu(n)
    return placed


def _host_only(node: Node, input_devices: list[str]) -> bool:
    """Shape arithmetic: int32 results of host values stay on the host, as in TensorFlow.

    TensorFlow keeps int32 tensors of GPU ops in host memory; here an op whose inputs are
    all on the host and whose outputs are all int32 of a known shape of at most
    _SHAPE_LIKE_ELEMENTS elements runs on the CPU, unless a GPU was requested for it
    explicitly.
    """
    return (
        bool(node.inputs)
        and all(d == "CPU:0" for d in input_devices)
        and all(s.dtype.name == "int32" and _small(s.shape) for s in node.output_specs)
        and "CPU" in node.op_def.kernels
        and parse_device(node.requested_device).device_type != "GPU"
    )


# Shape arithmetic makes values of known, small shapes; an int32 op whose result may be
# larger (a Range over a batch: the seed composition's positions) runs on the GPU instead,
# rather than on the host and then copied there (16M positions: 25 ms on an H200 -> 1).
_SHAPE_LIKE_ELEMENTS = 1024


def _small(shape: Any) -> bool:
    return shape.is_fully_defined() and math.prod(shape.dims) <= _SHAPE_LIKE_ELEMENTS


def _place_on_cpu(node: Node) -> str:
    node.assigned_device = get_device(DeviceSpec(device_type="CPU")).name
    return "CPU:0"


def _host_flags(node: Node, outputs: bool = False) -> list[bool]:
    """For each flat input (or output) of a node: is it in host memory on every device?"""
    op_def = node.op_def
    if outputs:
        args = [(a, a.count(node.attrs) if a.is_list else None) for a in op_def.outputs]
        host = op_def.host_outputs
    else:
        args, host = list(zip(op_def.inputs, node.input_lengths)), op_def.host_inputs
    flags = []
    for arg, n in args:
        flags.extend([arg.name in host] * (1 if n is None else n))
    # A handle (a TensorList, a TensorArray) is a host object on every device: never copied.
    specs = node.output_specs if outputs else [x.spec for x in node.inputs]
    return [f or spec.dtype.is_handle for f, spec in zip(flags, specs)]


def _prune(
    fetch_outputs: Sequence[Output], targets: Sequence[Node], fed: set[Output]
) -> list[Node]:
    """The nodes that the fetches and targets need, in creation (topological) order."""
    needed: dict[str, Node] = {}
    stack = [x.node for x in fetch_outputs if x not in fed] + list(targets)
    while stack:
        node = stack.pop()
        if node.name in needed:
            continue
        needed[node.name] = node
        stack.extend(x.node for x in node.inputs if x not in fed)
        # A control input whose outputs are all fed counts as done, as in TensorFlow.
        stack.extend(c for c in node.control_inputs if not _all_fed(c, fed))
    order = sorted(needed.values(), key=lambda n: n.id)
    for node in order:
        if node.type_string == "Placeholder":
            spec = node.output_specs[0]
            raise errors.InvalidArgumentError(
                f"You must feed a value for placeholder tensor '{node.name}' with dtype "
                f"{spec.dtype.name} and shape {spec.shape}",
                node.name,
                node.type_string,
            )
    return order


def _all_fed(node: Node, fed: set[Output]) -> bool:
    return node.num_outputs > 0 and all(
        Output(Operation(node), i) in fed for i in range(node.num_outputs)
    )


def _place(node: Node, session_device: DeviceSpec, allow_soft_placement: bool) -> str:
    """The device a node runs on: its request, else the session's, else the CPU."""
    op_def = node.op_def
    if op_def.unsupported:  # a node of an op minigraph lacks, kept by the import
        raise errors.UnimplementedError(op_def.unsupported, node.name, node.type_string)
    spec = session_device.merge(parse_device(node.requested_device))
    device = get_device(spec, node.name, node.type_string)
    if device.device_type not in op_def.kernels:
        if not allow_soft_placement or "CPU" not in op_def.kernels:
            have = ", ".join(sorted(op_def.kernels)) or "none"
            raise errors.InvalidArgumentError(
                f"Cannot assign a device for operation {node.name}: no {device.device_type} "
                f"kernel for op {node.type_string} (devices with a kernel: {have}) and soft "
                "placement is off",
                node.name,
                node.type_string,
            )
        device = get_device(DeviceSpec(device_type="CPU"), node.name, node.type_string)
    node.assigned_device = device.name
    return f"{device.device_type}:{device.index}"
