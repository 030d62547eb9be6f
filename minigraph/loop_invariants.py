"""Loop-invariant code motion: what a while loop's body computes from values that stay the
same from one iteration to the next runs once per run of the loop, not once per iteration.

A loop variable is invariant when the body returns its argument as it is (through
Identity-like nodes): TensorFlow passes a loop's captured tensors that way, a Keras RNN's
kernels and biases among them. A node of the body is invariant when it is stateless,
calls no function, and reads (by data and by control) only invariant values and
constants. The *frontier* is the invariant values that the rest of the body reads, or
that it returns, and that some node computes (a constant or an argument passed on costs
nothing to read again). A Keras GRU splits its bias into the input and recurrent halves
and squeezes each on every iteration: those three steps are the frontier's only work.

A body with a frontier is planned twice more (Function.loop_plans): a prelude, from the
arguments to the frontier values, and the iteration, from the arguments and the frontier
values (fed, so nothing before them is planned) to the results. The loop runs the
prelude at its first iteration, not before the loop: a loop that never iterates runs none
of it, and an invariant node that fails does so in the first iteration, as it would in
the body, with the same error. Results are bitwise the same: every node computes the same
function of the same values.

Only host bodies are split (a GPU body's frontier values may live on either device), and
no body that may hold dead values (a TF1 Switch or Merge inside: minigraph.deadness).
``OptimizerOptions(do_loop_invariant_motion=False)`` turns it off.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .deadness import makes_dead
from .graph import Graph, Node, Operation, Output
from .optimizer import PASS_THROUGH

__all__ = ["Body", "invariant_frontier"]


class Body(Protocol):
    """What the analysis reads of a loop body (a minigraph.functions.Function)."""

    @property
    def graph(self) -> Graph: ...
    @property
    def inputs(self) -> Sequence[Output]: ...
    @property
    def outputs(self) -> Sequence[Output]: ...


def invariant_frontier(fn: Body) -> list[Output]:
    """The body's frontier (see the module's docstring), in node order; empty when the
    body computes nothing from invariant values alone, or may hold dead values."""
    nodes = sorted(fn.graph.nodes(), key=lambda n: n.id)
    if makes_dead(n.type_string for n in nodes):
        return []
    arg_names = {x.node.name for x in fn.inputs}
    invariant: set[Output] = {
        arg for arg, result in zip(fn.inputs, fn.outputs) if _source(result) == arg
    }
    computed: set[str] = set()  # invariant nodes, constants included
    for node in nodes:
        if node.name not in arg_names and _hoistable(node, invariant, computed):
            computed.add(node.name)
            invariant.update(Operation(node).outputs)
    frontier: dict[Output, None] = {}
    readers = [x for n in nodes if n.name not in computed for x in n.inputs]
    for x in [*readers, *fn.outputs]:
        if x.node.name in computed and _source(x).node.type_string not in ("Const", "_Arg"):
            frontier[x] = None
    return list(frontier)


def _hoistable(node: Node, invariant: set[Output], computed: set[str]) -> bool:
    op = node.op_def
    return (
        not op.is_stateful
        and not op.outputs_are_state
        and not op.calls_functions
        and all(x in invariant for x in node.inputs)
        and all(c.name in computed for c in node.control_inputs)
    )


def _source(x: Output) -> Output:
    """The value that ``x`` passes on unchanged through Identity-like nodes."""
    while x.node.type_string in PASS_THROUGH and len(x.node.inputs) == 1:
        x = x.node.inputs[0]
    return x
