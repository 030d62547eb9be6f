"""The graph optimizer: passes over a plan's steps before they are scheduled.

Each pass is exact: a plan runs to bitwise the results it would give unoptimized, and
raises the same errors. What a pass may touch:

- ``remove_identity``: Identity, IdentityN, StopGradient, Snapshot and NoOp steps do
  nothing but pass buffers on (or run for nothing); their readers read the inputs instead.
- ``common_subexpression_elimination``: a step that repeats another (same op, attrs,
  inputs and device, and not stateful) is dropped; its readers read the first.
- ``constant_folding``: a CPU step whose inputs are all constants runs once, when the
  plan is built, and becomes constants, when its outputs are known to take at most
  ``max_folded_constant_in_bytes``; a step that fails is left to fail at run time. A copy
  of a constant to a GPU becomes a constant there (copied once per plan, not per run).
  Steps on a GPU are not folded: the GPU's float sums may round differently.
- ``input_facts``: a step whose op registered input facts (``register_input_facts``) is
  told what holds of its inputs by how they were made, as attrs for its kernel: a
  DynamicStitch whose indices are distinct parts of one DynamicPartition of a Range skips
  its check for repeated indices. Nothing is removed.
- ``shared_input_merging``: steps of one op that read the same value where the op does
  its main work once for all of them (DynamicPartitions by the same partitions: one sort)
  become one step (see :mod:`minigraph.sharing`).
- ``elementwise_fusion``: a chain of elementwise steps (Add, Mul, Sqrt, BiasAdd, Relu...)
  whose values in between nothing else reads becomes one step that writes one buffer in
  place, in blocks that stay in the cache (see :mod:`minigraph.fusion`).
- ``loop_invariant_motion`` (not a pass over one plan): a while loop's body computes what
  depends only on values that stay the same from one iteration to the next once per run
  of the loop (see :mod:`minigraph.loop_invariants`).

Steps whose values a fetch reads are never removed or replaced, and nothing is ever
dropped that could raise at run time, except a repeat of a step that still runs.

In a plan that may hold dead values (a TF1 conditional: minigraph.deadness) every pass
keeps deadness as it was: a step that waits on a control input or that another step waits
on is left as it is (a Const waiting on a branch's pivot is no constant), Switch and Merge
are never folded, and no steps share an input (a merged step would be skipped as a whole
when one member's input is dead). The other passes hold: an Identity or a repeat has its
input's deadness, and a fused chain's steps in between have no other reader.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .deadness import makes_dead
from .fusion import fuse_elementwise
from .kernel import KernelContext
from .registry import lookup_op
from .sharing import merge_shared_inputs

__all__ = ["PASS_THROUGH", "OptimizerOptions", "optimize"]

# Ops whose step passes its input on unchanged (or, for NoOp, does nothing at all).
PASS_THROUGH = frozenset({"Identity", "StopGradient", "Snapshot", "PreventGradient"})
_NOTHING = frozenset({"NoOp"})
_COPY = "_Copy"
# Constants up to this size take part in common-subexpression keys by value.
_CSE_VALUE_BYTES = 1 << 16


@dataclass(frozen=True)
class OptimizerOptions:
    """Which passes run when a plan is built (all by default), as TensorFlow's
    ``OptimizerOptions``; ``max_folded_constant_in_bytes`` caps what one fold may build."""

    do_constant_folding: bool = True
    do_common_subexpression_elimination: bool = True
    remove_identity: bool = True
    do_elementwise_fusion: bool = True
    do_shared_input_merging: bool = True
    do_input_facts: bool = True
    do_loop_invariant_motion: bool = True  # in while-loop bodies (minigraph.loop_invariants)
    max_folded_constant_in_bytes: int = 10 * 1024 * 1024

    def __post_init__(self) -> None:
        for name in (
            "do_constant_folding",
            "do_common_subexpression_elimination",
            "remove_identity",
            "do_elementwise_fusion",
            "do_shared_input_merging",
            "do_input_facts",
            "do_loop_invariant_motion",
        ):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}")
        cap = self.max_folded_constant_in_bytes
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 0:
            raise ValueError(f"max_folded_constant_in_bytes must be an int >= 0, got {cap!r}")

    @classmethod
    def off(cls) -> OptimizerOptions:
        """Every pass off: the plan runs the pruned graph as it is."""
        return cls(
            do_constant_folding=False,
            do_common_subexpression_elimination=False,
            remove_identity=False,
            do_elementwise_fusion=False,
            do_shared_input_merging=False,
            do_input_facts=False,
            do_loop_invariant_motion=False,
        )


def optimize(
    protos: list[Any],
    fetch_slots: Sequence[int],
    options: OptimizerOptions,
    places: Mapping[str, Any] | None = None,
    aliased_fetches: bool = False,
) -> tuple[list[Any], dict[int, int], list[str]]:
    """The optimized steps, a map from dropped slots to the slots that replace them, and
    one line per pass that changed something (what the trace lists). ``places`` (node name
    -> where it runs, for a distributed executor) keeps fused chains within one place.
    ``aliased_fetches``: a fetched Identity may go too (its fetch then reads the Identity's
    input, see ``resolve``), for a caller that never hands out fetched buffers as its own
    (a function body's plan)."""
    keep = frozenset(fetch_slots)
    alias: dict[int, int] = {}
    report: list[str] = []
    passes: list[tuple[str, Callable[..., tuple[list[Any], int]]]] = []
    if options.remove_identity:
        passes.append(("remove_identity", _remove_identity))
    if options.do_common_subexpression_elimination:
        passes.append(("common_subexpression_elimination", _eliminate_common))
    if options.do_constant_folding:
        passes.append(("constant_folding", _fold_constants))
    if options.do_input_facts:
        passes.append(("input_facts", _learn_input_facts))
    if options.do_shared_input_merging and not makes_dead(p.op_def.name for p in protos):
        passes.append(("shared_input_merging", _with_places(merge_shared_inputs, places or {})))
    if options.do_elementwise_fusion:
        passes.append(("elementwise_fusion", _with_places(fuse_elementwise, places or {})))
    for name, run in passes:
        before = len(protos)
        if aliased_fetches and name == "remove_identity":
            protos, changed = run(protos, frozenset(), alias, options)
            keep = frozenset(resolve(alias, s) for s in fetch_slots)
        else:
            protos, changed = run(protos, keep, alias, options)
        if changed:
            report.append(f"{name}: {changed} steps ({before} -> {len(protos)} steps)")
    return protos, alias, report


def _waits(p: Any) -> bool:
    """Whether a step takes part in control dependencies of a dead-aware plan: no pass
    may drop, fold, merge or fuse it."""
    return bool(p.control_inputs) or p.control_output is not None


def resolve(alias: dict[int, int], s: int) -> int:
    """The slot that holds slot ``s``'s value after the passes dropped steps."""
    while s in alias:
        s = alias[s]
    return s


def _rewire(protos: list[Any], alias: dict[int, int]) -> list[Any]:
    return [
        p
        if not any(s in alias for s in p.inputs)
        else replace(p, inputs=tuple(resolve(alias, s) for s in p.inputs))
        for p in protos
    ]


def _remove_identity(
    protos: list[Any], keep: frozenset[int], alias: dict[int, int], options: OptimizerOptions
) -> tuple[list[Any], int]:
    out, removed = [], 0
    for p in protos:
        name = p.op_def.name
        if _waits(p):
            out.append(p)
            continue
        if name in _NOTHING or (
            name in PASS_THROUGH and not keep.intersection(p.outputs) and len(p.inputs) == 1
        ):
            for o in p.outputs:
                alias[o] = resolve(alias, p.inputs[0])
            removed += 1
            continue
        if name == "IdentityN" and not keep.intersection(p.outputs):
            # each output is its input (Keras' swish and GELU write one around their
            # custom gradients: its kernel copies, 41 ms of EfficientNetB0 at batch 8)
            for i, o in zip(p.inputs, p.outputs, strict=True):
                alias[o] = resolve(alias, i)
            removed += 1
            continue
        out.append(p)
    return _rewire(out, alias), removed


def _with_places(
    run: Callable[..., tuple[list[Any], int]], places: Mapping[str, Any]
) -> Callable[..., tuple[list[Any], int]]:
    """A pass that keeps its work within one place (``run(protos, keep, places)``) as the
    optimizer calls its passes."""

    def adapted(
        protos: list[Any], keep: frozenset[int], alias: dict[int, int], options: OptimizerOptions
    ) -> tuple[list[Any], int]:
        return run(_rewire(protos, alias), keep, places)

    return adapted


def _learn_input_facts(
    protos: list[Any], keep: frozenset[int], alias: dict[int, int], options: OptimizerOptions
) -> tuple[list[Any], int]:
    protos = _rewire(protos, alias)
    maker = {o: (p, i) for p in protos for i, o in enumerate(p.outputs)}
    out, told = [], 0
    for p in protos:
        learn = p.op_def.input_facts
        facts = learn(p, maker.get) if learn is not None else None
        if facts:
            p = replace(p, attrs={**p.attrs, **facts})
            told += 1
        out.append(p)
    return out, told


def _hashable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        if value.nbytes > _CSE_VALUE_BYTES:
            return ("array", id(value))
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _eliminate_common(
    protos: list[Any], keep: frozenset[int], alias: dict[int, int], options: OptimizerOptions
) -> tuple[list[Any], int]:
    seen: dict[Any, Any] = {}
    out, removed = [], 0
    for p in _rewire(protos, alias):
        p = replace(p, inputs=tuple(resolve(alias, s) for s in p.inputs))
        if p.op_def.is_stateful or keep.intersection(p.outputs) or _waits(p):
            out.append(p)
            continue
        attrs = tuple(sorted((k, _hashable(v)) for k, v in p.attrs.items()))
        key = (p.op_def.name, p.device, p.inputs, p.input_lengths, attrs)
        first = seen.get(key)
        if first is None:
            seen[key] = p
            out.append(p)
            continue
        for mine, theirs in zip(p.outputs, first.outputs):
            alias[mine] = theirs
        removed += 1
    return out, removed


def _const_value(p: Any) -> np.ndarray | None:
    return p.attrs["value"] if p.op_def.name == "Const" and not _waits(p) else None


def _output_bytes(p: Any) -> int | None:
    total = 0
    for spec in p.specs:
        n = spec.shape.num_elements()
        if n is None:
            return None
        total += n * spec.dtype.size
    return total


def _fold_constants(
    protos: list[Any], keep: frozenset[int], alias: dict[int, int], options: OptimizerOptions
) -> tuple[list[Any], int]:
    const_op = lookup_op("Const")
    values: dict[int, np.ndarray] = {}
    out, folded = [], 0
    for p in _rewire(protos, alias):
        value = _const_value(p)
        if value is not None:
            values[p.outputs[0]] = value
            out.append(p)
            continue
        results = _try_fold(p, values, keep, options)
        if results is None:
            out.append(p)
            continue
        folded += 1
        for slot, spec, result in zip(p.outputs, p.specs, results):
            values[slot] = result
            attrs = {"value": result, "dtype": spec.dtype}
            out.append(
                replace(
                    p,
                    op_def=const_op,
                    attrs=attrs,
                    inputs=(),
                    input_lengths=(),
                    outputs=(slot,),
                    specs=(spec,),
                )
            )
    # Constants that only folded steps read are dead now.
    read = {s for p in out for s in p.inputs} | keep
    live = [p for p in out if _const_value(p) is None or p.outputs[0] in read]
    return live, folded


def _try_fold(
    p: Any, values: dict[int, np.ndarray], keep: frozenset[int], options: OptimizerOptions
) -> list[np.ndarray] | None:
    """The outputs of ``p`` computed now, or None when it may not (or cannot) be folded."""
    op_def = p.op_def
    if (
        not p.inputs
        or op_def.is_stateful
        or _waits(p)
        or keep.intersection(p.outputs)
        or any(s not in values for s in p.inputs)
    ):
        return None
    nbytes = _output_bytes(p)
    if nbytes is None or nbytes > options.max_folded_constant_in_bytes:
        return None
    if op_def.name == _COPY:  # a constant copied to a device: the value, kept on the host
        return [values[p.inputs[0]]]
    if not p.device.startswith("CPU") or "CPU" not in op_def.kernels:
        return None
    flat = [values[s] for s in p.inputs]
    grouped, i = [], 0
    for n in p.input_lengths:
        grouped.append(flat[i] if n is None else flat[i : i + n])
        i += 1 if n is None else n
    ctx = KernelContext(dict(p.attrs), np, p.name, op_def.name)
    try:
        with np.errstate(all="ignore"):  # as in a run: kernels leave warnings to the runtime
            result = op_def.kernels["CPU"](ctx, *grouped)
    except Exception:  # the step fails as it would have, when the plan runs
        return None
    results = [result] if op_def.single_output else list(result)
    frozen = []
    for r, spec in zip(results, p.specs):
        arr = np.array(r, dtype=spec.dtype.np, copy=True)
        if math.prod(arr.shape) * arr.itemsize > options.max_folded_constant_in_bytes:
            return None
        arr.flags.writeable = False
        frozen.append(arr)
    return frozen
