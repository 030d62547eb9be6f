"""Execution plans: a graph pruned to what the fetches need, as a flat list of steps.

A plan is plain data (op types, attrs, devices, value slots), so an executor
in another process can run it with its own kernel registry. Building one:
prune to the fetches' ancestors, cutting at feeds; place every node; order the
nodes topologically; find each value's last consumer (to release it) and which
inputs a kernel may overwrite (forwarding).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import errors
from .devices import DeviceSpec, get_device, parse_device
from .graph import Node, Output
from .registry import lookup_op

__all__ = ["Step", "Plan", "build_plan"]


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


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...]
    num_slots: int
    feed_slots: tuple[int, ...]  # one per fed tensor, in the order the session passes them
    fetch_slots: tuple[int, ...]  # one per tensor fetch


def build_plan(
    fetch_outputs: Sequence[Output],
    target_nodes: Sequence[Node],
    feeds: Sequence[Output],
    session_device: DeviceSpec,
    allow_soft_placement: bool = True,
) -> Plan:
    fed = set(feeds)
    nodes = _prune(fetch_outputs, target_nodes, fed)
    slot: dict[Output, int] = {x: i for i, x in enumerate(feeds)}
    for node in nodes:
        for i in range(node.num_outputs):
            slot.setdefault(Output(_op(node), i), len(slot))

    # Who reads each slot: non-view consumers count for forwarding; views share a buffer.
    group = list(range(len(slot)))  # buffer group of each slot (views join their input's)

    def root(s: int) -> int:
        while group[s] != s:
            s = group[s]
        return s

    uses: dict[int, int] = {}  # buffer group -> number of reads by non-view ops
    pinned: set[int] = {root(slot[x]) for x in feeds}  # groups that must never be written
    last_use: dict[int, int] = {}
    steps_inputs = []
    for k, node in enumerate(nodes):
        ins = tuple(slot[x] for x in node.inputs)
        steps_inputs.append(ins)
        for s in ins:
            last_use[s] = k
        if node.op_def.aliases_input and ins:
            for o in range(node.num_outputs):
                group[slot[Output(_op(node), o)]] = root(ins[0])
        else:
            for s in ins:
                uses[root(s)] = uses.get(root(s), 0) + 1
        if node.type_string == "Const":
            pinned.add(root(slot[Output(_op(node), 0)]))
    fetch_slots = tuple(slot[x] for x in fetch_outputs)
    pinned.update(root(s) for s in fetch_slots)

    releases: dict[int, list[int]] = {}
    for s, k in last_use.items():
        if s not in fetch_slots:
            releases.setdefault(k, []).append(s)

    steps = []
    for k, node in enumerate(nodes):
        ins = steps_inputs[k]
        forwardable = frozenset(
            i
            for i, s in enumerate(ins)
            if root(s) not in pinned
            and uses.get(root(s), 0) == 1
            and ins.count(s) == 1
            and not node.op_def.aliases_input
        )
        device = _place(node, session_device, allow_soft_placement)
        steps.append(
            Step(
                op_type=node.type_string,
                node_name=node.name,
                attrs=node.attrs,
                device=device,
                inputs=ins,
                input_lengths=node.input_lengths,
                outputs=tuple(slot[Output(_op(node), i)] for i in range(node.num_outputs)),
                release=tuple(sorted(releases.get(k, ()))),
                forwardable=forwardable,
                output_specs=tuple((s.shape.dims, s.dtype.name) for s in node.output_specs),
                single_output=node.op_def.single_output,
            )
        )
    return Plan(tuple(steps), len(slot), tuple(slot[x] for x in feeds), fetch_slots)


def _op(node: Node) -> Any:
    from .graph import Operation

    return Operation(node)


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
        Output(_op(node), i) in fed for i in range(node.num_outputs)
    )


def _place(node: Node, session_device: DeviceSpec, allow_soft_placement: bool) -> str:
    """The device a node runs on: its request, else the session's, else the CPU."""
    spec = session_device.merge(parse_device(node.requested_device))
    device = get_device(spec, node.name, node.type_string)
    op_def = lookup_op(node.type_string)
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
