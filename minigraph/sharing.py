"""Shared-input merging: steps of one op that read the same value run as one step.

Some ops spend most of their time on one input, whatever the others are: DynamicPartition
sorts its ``partitions`` and then only gathers each ``data`` in that order. The seed
idiom partitions the data and ``range(n)`` by the same partitions, then stitches them back,
so the sort is done twice. An op that declares how to run several steps at once
(``OpDef.shared``, see :class:`~minigraph.op_def.SharedInput`) gets its steps that read
one value at that input, with equal attrs, on one device (and one Dask worker), and
independent of each other, merged into one ``_SharedInput`` step named after the last of
them, whose kernel does the shared work once.

Results are bitwise those of the separate steps. Where the op's shared kernel declines
(an input is bad, or merging would not help), the members' own kernels run one by one, so
an error names the same node as without the pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from .kernel import KernelContext
from .registry import define_internal_op, lookup_kernel, lookup_op, register_kernel

__all__ = ["SHARED_OP", "merge_shared_inputs"]

SHARED_OP = "_SharedInput"


class Member(NamedTuple):
    """One step of a merged group: its node, attrs, and how many inputs it has besides the
    shared one."""

    node_name: str
    attrs: dict[str, Any]
    inputs: int


define_internal_op(
    SHARED_OP,
    inputs=["inputs: Tin"],
    outputs=["outputs: Tout"],
    attrs=["Tin: list(type)", "Tout: list(type)"],
    doc="Internal: steps of one op that read one value, run as one (see minigraph.sharing).",
)


@register_kernel(SHARED_OP, "CPU", "GPU")
def _shared_kernel(ctx: KernelContext, *inputs: Any) -> list[Any]:
    op_type, members = ctx.attrs["op"], ctx.attrs["members"]
    others, start = [], 0
    for m in members:
        others.append(list(inputs[start : start + m.inputs]))
        start += m.inputs
    shared = inputs[-1]
    contexts = ctx.memo.get("contexts")
    if contexts is None:  # one assignment: runs of a plan may share its steps across threads
        contexts = ctx.memo["contexts"] = [
            ctx.for_member(m.attrs, m.node_name, op_type) for m in members
        ]
    results = lookup_op(op_type).shared.kernel(contexts[0], others, shared)  # type: ignore[union-attr]
    if results is None:  # the members' own kernels: their results, or their errors
        kernel = lookup_kernel(op_type, ctx.device.partition(":")[0], ctx.node_name)
        position = ctx.attrs["position"]
        results = []
        for mctx, ins in zip(contexts, others):
            args = [*ins[:position], shared, *ins[position:]]
            out = kernel(mctx, *args)
            results.append(list(out) if isinstance(out, list | tuple) else [out])
    return [x for r in results for x in r]


# -- The optimizer pass ----------------------------------------------------------------------


def merge_shared_inputs(
    protos: list[Any], keep: frozenset[int], places: Mapping[str, Any] | None = None
) -> tuple[list[Any], int]:
    """Plan steps with each group of mergeable steps made one step (placed where the last of
    them was, with the steps between that read the others' outputs moved after it), and how
    many steps were merged away."""
    del keep  # every output of a merged step stays in its slot: fetches are unaffected
    if sum(p.op_def.shared is not None for p in protos) < 2:
        return protos, 0
    merged = 0
    while True:
        group = _first_group(protos, places or {})
        if group is None:
            return protos, merged
        protos = _merge(protos, group)
        merged += len(group) - 1


def _first_group(protos: list[Any], places: Mapping[str, Any]) -> list[int] | None:
    """The first two or more mergeable steps (indices, in order), else None."""
    maker = {o: k for k, p in enumerate(protos) for o in p.outputs}
    ancestors = [0] * len(protos)  # a bit per step
    for k, p in enumerate(protos):
        for s in p.inputs:
            if s in maker:
                ancestors[k] |= ancestors[maker[s]] | (1 << maker[s])
    groups: dict[Any, list[list[int]]] = {}
    for k, p in enumerate(protos):
        key = _group_key(p, places)
        if key is None:
            continue
        for group in groups.setdefault(key, []):  # the first group it is independent of
            if all(not (ancestors[k] >> j) & 1 for j in group):
                group.append(k)
                break
        else:
            groups[key].append([k])
    found = [g for gs in groups.values() for g in gs if len(g) > 1]
    return min(found) if found else None


def _group_key(p: Any, places: Mapping[str, Any]) -> Any:
    shared = p.op_def.shared
    if shared is None or p.device.partition(":")[0] not in p.op_def.kernels:
        return None
    if len(p.inputs) != len(p.op_def.inputs) or any(n is not None for n in p.input_lengths):
        return None  # list inputs: not this pass's kind of op
    attrs = tuple(repr(p.attrs.get(a)) for a in shared.attrs)
    return (p.op_def.name, p.inputs[shared.input], p.device, places.get(p.name), attrs)


def _merge(protos: list[Any], group: list[int]) -> list[Any]:
    """``protos`` with the steps ``group`` (independent, in order) replaced by one step at
    the last one's place; steps between that depend on a member move after it."""
    first, last = group[0], group[-1]
    members = set(group)
    made = {o for k in group[:-1] for o in protos[k].outputs}
    before, after = [], []
    for k in range(first + 1, last):
        if k in members:
            continue
        p = protos[k]
        if made.intersection(p.inputs):
            after.append(p)
            made.update(p.outputs)
        else:
            before.append(p)
    merged = _merged_proto([protos[k] for k in group])
    return [*protos[:first], *before, merged, *after, *protos[last + 1 :]]


def _merged_proto(steps: Sequence[Any]) -> Any:
    last = steps[-1]
    position = last.op_def.shared.input
    inputs: list[int] = []
    members = []
    for p in steps:
        others = [s for i, s in enumerate(p.inputs) if i != position]
        inputs.extend(others)
        members.append(Member(p.name, dict(p.attrs), len(others)))
    inputs.append(last.inputs[position])
    outputs = tuple(o for p in steps for o in p.outputs)
    specs = tuple(s for p in steps for s in p.specs)
    return replace(
        last,
        op_def=lookup_op(SHARED_OP),
        attrs={
            "Tin": (),
            "Tout": tuple(s.dtype for s in specs),
            "op": last.op_def.name,
            "members": tuple(members),
            "position": position,
        },
        inputs=tuple(inputs),
        input_lengths=(None,) * len(inputs),
        outputs=outputs,
        specs=specs,
    )
