"""Session options, named as TensorFlow's ``ConfigProto``: threads and the graph optimizer.

>>> import minigraph as mg
>>> config = mg.ConfigProto(graph_options=mg.GraphOptions(
...     optimizer_options=mg.OptimizerOptions(do_constant_folding=False)))
>>> config.graph_options.optimizer_options.do_common_subexpression_elimination
True
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

from .optimizer import OptimizerOptions

__all__ = ["ConfigProto", "GraphOptions", "OptimizerOptions"]


@dataclass(frozen=True)
class GraphOptions:
    """How plans are built: ``optimizer_options`` says which optimizer passes run."""

    optimizer_options: OptimizerOptions = field(default_factory=OptimizerOptions)

    def __post_init__(self) -> None:
        if not isinstance(self.optimizer_options, OptimizerOptions):
            raise TypeError(
                f"optimizer_options must be an OptimizerOptions, got {self.optimizer_options!r}"
            )


@dataclass(frozen=True)
class ConfigProto:
    """A Session's options (``mg.Session(graph, config=mg.ConfigProto(...))``).

    ``intra_op_parallelism_threads``: how many threads one CPU kernel may split its work
    over (0: the default, ``MINIGRAPH_KERNEL_THREADS`` or the cores, at most 4), and the
    most threads the BLAS library may use during this Session's runs (its count is 1 by
    default, ``mg.config.set_blas_threads``; the caller's is put back after each run; see
    minigraph.blas).
    ``inter_op_parallelism_threads``: how many independent big CPU steps (1 MB of work or
    more, that do not depend on each other; see minigraph.interop) may run at once (0: the
    cores that one kernel's threads leave, 1 to 4: one at a time where the kernels' threads
    take every core; 1: one step at a time).
    ``allow_soft_placement``: run an op on the CPU when its device has no kernel for it.
    ``graph_options``: the optimizer passes (all on by default).
    """

    intra_op_parallelism_threads: int = 0
    inter_op_parallelism_threads: int = 0
    allow_soft_placement: bool = True
    graph_options: GraphOptions = field(default_factory=GraphOptions)

    def __post_init__(self) -> None:
        for name in ("intra_op_parallelism_threads", "inter_op_parallelism_threads"):
            n = getattr(self, name)
            if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
                raise ValueError(f"{name} must be an int >= 0, got {n!r}")
        if not isinstance(self.allow_soft_placement, bool):
            raise TypeError(
                f"allow_soft_placement must be a bool, got {self.allow_soft_placement!r}"
            )
        if not isinstance(self.graph_options, GraphOptions):
            raise TypeError(f"graph_options must be a GraphOptions, got {self.graph_options!r}")
