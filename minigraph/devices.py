"""Device specs and devices: where a node runs, and the array module there.

Specs keep TensorFlow's job/replica/task parts so that a later distributed
executor can map a task to a worker:
``"/job:localhost/replica:0/task:0/device:CPU:0"``, ``"/cpu:0"``, ``"/gpu:1"``,
``"GPU:0"``. Importing this module never imports CuPy; a GPU is looked for only
when a plan places a node on one.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

import numpy as np

from . import config, errors

__all__ = [
    "DeviceSpec",
    "Device",
    "parse_device",
    "get_device",
    "gpu_unavailable_reason",
    "is_cupy",
]

_PART = re.compile(r"^(job|replica|task|device):(.*)$", re.IGNORECASE)
_DEV = re.compile(r"^(cpu|gpu)(?::(\d+|\*))?$", re.IGNORECASE)


def is_cupy(xp: Any) -> bool:
    """Whether an array module is CuPy itself (not NumPy, not the simulated GPU's module):
    where a kernel may launch CUDA code of its own."""
    return getattr(xp, "__name__", "") == "cupy"


@dataclass(frozen=True)
class DeviceSpec:
    """A possibly partial device name; unset fields are None."""

    job: str | None = None
    replica: int | None = None
    task: int | None = None
    device_type: str | None = None  # "CPU" or "GPU"
    device_index: int | None = None

    def merge(self, other: DeviceSpec) -> DeviceSpec:
        """``other``'s set fields over this spec's (how nested ``mg.device`` scopes combine)."""
        fields = {k: v for k, v in other.__dict__.items() if v is not None}
        if "device_type" in fields and "device_index" not in fields:
            fields["device_index"] = None
        return replace(self, **fields)

    def to_string(self) -> str:
        parts = []
        if self.job is not None:
            parts.append(f"/job:{self.job}")
        if self.replica is not None:
            parts.append(f"/replica:{self.replica}")
        if self.task is not None:
            parts.append(f"/task:{self.task}")
        if self.device_type is not None:
            index = "*" if self.device_index is None else self.device_index
            parts.append(f"/device:{self.device_type}:{index}")
        return "".join(parts)

    def __str__(self) -> str:
        return self.to_string()


@functools.lru_cache(maxsize=256)
def parse_device(spec: str | None) -> DeviceSpec:
    """Parse a device string; InvalidArgumentError with the accepted forms if it is malformed."""
    if not spec:
        return DeviceSpec()
    fields: dict[str, Any] = {}
    for part in spec.strip("/").split("/"):
        m = _PART.match(part)
        dev = _DEV.match(part)
        if dev is None and m is not None and m.group(1).lower() == "device":
            dev = _DEV.match(m.group(2))
        if dev is not None:
            fields["device_type"] = dev.group(1).upper()
            if dev.group(2) not in (None, "*"):
                fields["device_index"] = int(dev.group(2))
        elif m is not None and m.group(1).lower() in ("replica", "task") and m.group(2).isdigit():
            fields[m.group(1).lower()] = int(m.group(2))
        elif m is not None and m.group(1).lower() == "job" and m.group(2):
            fields["job"] = m.group(2)
        else:
            raise errors.InvalidArgumentError(
                f"Invalid device specification {spec!r}: expected a form like "
                "'/job:localhost/replica:0/task:0/device:CPU:0', '/cpu:0' or '/gpu:1'"
            )
    return DeviceSpec(**fields)


@dataclass(frozen=True)
class Device:
    """A concrete device in this process: a type, an index, and its array module."""

    device_type: str
    index: int = 0

    @property
    def name(self) -> str:
        return f"/job:localhost/replica:0/task:0/device:{self.device_type}:{self.index}"

    @property
    def xp(self) -> ModuleType:
        if self.device_type == "CPU":
            return np
        if config.simulated_gpu():
            from .simulated_gpu import xp

            return xp
        import cupy

        return cupy

    @property
    def memory_limit(self) -> int | None:
        """The most one tensor here may take: a real GPU's memory; None means the host's."""
        if self.device_type == "CPU":
            return None
        xp = self.xp
        return int(xp.cuda.Device(self.index).mem_info[1]) if is_cupy(xp) else None


CPU0 = Device("CPU", 0)


def gpu_unavailable_reason(index: int = 0) -> str | None:
    """None when GPU ``index`` can be used, else why not (no CuPy, no CUDA device...)."""
    if config.simulated_gpu():
        return None if index == 0 else "the simulated GPU is GPU:0 only"
    try:
        import cupy
    except ImportError:
        return "CuPy is not installed (pip install 'minigraph[cuda12]' or '[cuda13]')"
    except Exception as e:  # a broken CUDA install can fail at import with anything
        return f"CuPy failed to import: {e}"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # no driver, a driver too old for CuPy's CUDA, no device...
        return f"no CUDA device is available to CuPy ({e})"
    if count == 0:
        return "no CUDA device is available to CuPy"
    if index >= count:
        return f"there are only {count} GPUs"
    return None


def get_device(spec: DeviceSpec, node_name: str = "", op_type: str = "") -> Device:
    """The local Device for a spec, or UnavailableError naming the node and why."""
    device_type = spec.device_type or "CPU"
    index = spec.device_index or 0
    if (
        spec.job not in (None, "localhost")
        or spec.task not in (None, 0)
        or spec.replica not in (None, 0)
    ):
        raise errors.UnavailableError(
            f"device {spec.to_string()} is not in this process; the local executor runs "
            "only /job:localhost/replica:0/task:0",
            node_name,
            op_type,
        )
    if device_type == "CPU":
        if index != 0:
            raise errors.UnavailableError(
                f"there is only one CPU device, not CPU:{index}", node_name, op_type
            )
        return CPU0
    reason = gpu_unavailable_reason(index)
    if reason is not None:
        raise errors.UnavailableError(
            f"cannot place on {spec.to_string()}: {reason}", node_name, op_type
        )
    return Device("GPU", index)
