"""Run graphs on Dask: batches over a cluster, and a Session executor that spreads a graph.

Two modes, both on Dask's own scheduler and workers (minigraph adds no scheduler, wire
protocol or worker pool of its own):

* :func:`map_batches` (data parallel): the pruned graph runs once per chunk of dask arrays
  chunked along axis 0; the results are lazy dask arrays. The graph travels as its JSON
  document, once per worker, and each worker keeps a Session (with its plan cache) per graph.
* :class:`DaskExecutor` (a graph spread over workers, TensorFlow's distributed Session):
  ``mg.Session(graph, executor=DaskExecutor(client))`` turns each run of consecutive plan
  steps with one placement into a Dask task pinned to the worker that the nodes'
  ``/job:worker/task:N`` names. Intermediates stay on the workers; only fetches come back.

Needs the ``distributed`` extra (``pip install 'minigraph[distributed]'``).
``import minigraph`` never imports Dask, nor does importing this package: Dask is
imported when a function here is called, and its absence is an ImportError naming the extra.
"""

from __future__ import annotations

from typing import Any

from .batches import map_batches
from .executor import DaskExecutor, DaskPlan

__all__ = [
    "map_batches",
    "DaskExecutor",
    "DaskPlan",
    "require_dask",
    "INSTALL_HINT",
    "WORKER_ENVIRON",
]

INSTALL_HINT = "pip install 'minigraph[distributed]'"

# Dask config for worker processes that run minigraph kernels: Dask's nannies set
# MALLOC_TRIM_THRESHOLD_=65536, which also pins glibc's mmap threshold at 128 KiB, so every
# large temporary is a fresh mmap and its pages fault in again: kernels ran 5-10x slower in
# such workers. ``with dask.config.set(WORKER_ENVIRON): LocalCluster(...)`` leaves it unset.
WORKER_ENVIRON = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}


def require_dask() -> Any:
    """Import ``distributed`` (and ``dask.array``); ImportError naming the extra when absent."""
    try:
        import dask.array  # noqa: F401
        import distributed
    except ImportError as e:
        raise ImportError(
            f"minigraph.distributed needs Dask and distributed: {INSTALL_HINT} ({e})"
        ) from e
    return distributed
