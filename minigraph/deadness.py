"""Dead tensors: how TF1 conditionals (Switch and Merge) run in a flat plan.

TensorFlow's executor runs a conditional's untaken branch as *dead*: a Switch gives its
data on one output and a dead tensor on the other; every node with a dead data input, or a
dead control input, is skipped and its outputs are dead too; a Merge forwards its first live
input and is dead only when all its inputs are. minigraph does the same with a sentinel:
:data:`DEAD` in a value slot means "dead". Ops declare how they treat dead values
(:func:`declare`): an op that makes them (Switch) marks the plans that contain it
``Plan.dead_aware``, and only those plans run the executor's dead-aware loop; every other
plan keeps the plain loop, which never looks for :data:`DEAD`.

A control input matters for deadness as in TensorFlow: a node whose control input was
skipped is skipped. A control edge from a Switch that ran is live (whatever branch it took),
so TensorFlow's conds hang a branch's constants on an Identity of one Switch output.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["DEAD", "declare", "makes_dead", "takes_dead"]


class _Dead:
    """The one dead value. It is no array: a kernel never receives it (except a Merge's)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DEAD"

    def __reduce__(self) -> str:
        return "DEAD"  # pickles as this module's DEAD: one object in every process

    def __bool__(self) -> bool:
        raise TypeError("a dead tensor has no value")


DEAD: Any = _Dead()

# Op name -> (makes dead values, takes dead inputs), filled by the op modules.
_RULES: dict[str, tuple[bool, bool]] = {}


def declare(op: str, *, makes_dead: bool = False, takes_dead: bool = False) -> None:
    """Say how op ``op`` treats dead values: ``makes_dead``, an output may be dead while the
    node ran (Switch, _SwitchN); ``takes_dead``, the node runs with dead inputs, and is dead
    only when all its data inputs are (Merge: its kernel sees :data:`DEAD` and returns it
    when every input is dead; its output is one of its inputs)."""
    if op in _RULES:
        raise ValueError(f"deadness of op {op!r} is already declared")
    _RULES[op] = (makes_dead, takes_dead)


def makes_dead(ops: Iterable[str]) -> bool:
    """Whether a plan of these op types can hold dead values (it then runs dead-aware)."""
    return any(_RULES.get(op, (False, False))[0] for op in ops)


def takes_dead(op: str) -> bool:
    """Whether an op runs when its inputs are dead (Merge)."""
    return _RULES.get(op, (False, False))[1]
