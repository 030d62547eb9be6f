"""Per-node timings as a Chrome trace-event document (Perfetto, chrome://tracing)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["trace_events"]


def trace_events(runs: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """One complete ("X") event per executed node; each run is a process, each device a thread.

    ``runs`` holds one list of StepTiming (name, op, device, start µs, duration µs) per run.
    """
    events: list[dict[str, Any]] = []
    devices: dict[str, int] = {}
    for pid, timings in enumerate(runs):
        events.append(
            {"name": "process_name", "ph": "M", "pid": pid, "args": {"name": f"Session.run #{pid}"}}
        )
        for name, op, device, start, duration in timings:
            tid = devices.setdefault(device, len(devices))
            events.append(
                {
                    "name": name,
                    "cat": op,
                    "ph": "X",
                    "ts": round(start, 3),
                    "dur": round(duration, 3),
                    "pid": pid,
                    "tid": tid,
                    "args": {"op": op, "device": device},
                }
            )
    for device, tid in devices.items():
        for pid in range(len(runs)):
            events.append(
                {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": device}}
            )
    return {"traceEvents": events, "displayTimeUnit": "ms"}
