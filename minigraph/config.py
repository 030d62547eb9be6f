"""Process-wide switches: the debug knob and op determinism.

``MINIGRAPH_SIMULATED_GPU=1`` makes "/gpu:0" a NumPy-backed stand-in, so the GPU path
(placement, copies, the kernels' non-NumPy code) runs on machines without a GPU.
``MINIGRAPH_KERNEL_THREADS=N`` caps the threads a CPU kernel may split its work over
(default: the cores, at most 4; 1 turns threading off).
``MINIGRAPH_DEBUG=1`` in the environment prints one line per executed node
(op, name, device, output shapes, time) and checks every kernel's outputs
against what shape inference promised. ``set_check_outputs(True)`` turns on
the checks alone (the test suite does).
"""

from __future__ import annotations

import os
from typing import Any

__all__ = [
    "debug",
    "set_debug",
    "check_outputs",
    "set_check_outputs",
    "enable_op_determinism",
    "disable_op_determinism",
    "op_determinism_enabled",
    "simulated_gpu",
    "set_simulated_gpu",
    "kernel_threads",
]

_state: dict[str, Any] = {
    "debug": os.environ.get("MINIGRAPH_DEBUG", "") not in ("", "0"),
    "check_outputs": os.environ.get("MINIGRAPH_DEBUG", "") not in ("", "0"),
    "determinism": False,
    "simulated_gpu": os.environ.get("MINIGRAPH_SIMULATED_GPU", "") not in ("", "0"),
    "kernel_threads": int(os.environ.get("MINIGRAPH_KERNEL_THREADS", "0") or 0)
    or min(4, os.cpu_count() or 1),
}


def debug() -> bool:
    return _state["debug"]


def set_debug(on: bool) -> None:
    """Print one line per executed node, and check kernel outputs."""
    _state["debug"] = bool(on)
    _state["check_outputs"] = bool(on) or _state["check_outputs"]


def check_outputs() -> bool:
    return _state["check_outputs"]


def set_check_outputs(on: bool) -> None:
    """Check every kernel's outputs (count, dtype, shape) against shape inference."""
    _state["check_outputs"] = bool(on)


def enable_op_determinism() -> None:
    """Make every op bitwise reproducible, float scatter-adds on the GPU included."""
    _state["determinism"] = True


def disable_op_determinism() -> None:
    _state["determinism"] = False


def op_determinism_enabled() -> bool:
    return _state["determinism"]


def simulated_gpu() -> bool:
    return _state["simulated_gpu"]


def set_simulated_gpu(on: bool) -> None:
    """Make "/gpu:0" a simulated GPU backed by NumPy (see minigraph.simulated_gpu)."""
    _state["simulated_gpu"] = bool(on)


def kernel_threads() -> int:
    """How many threads a CPU kernel may split independent work over."""
    return _state["kernel_threads"]
