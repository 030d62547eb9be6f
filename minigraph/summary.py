"""TensorBoard event files: a graph and traced runs, as ``tf.compat.v1.summary.FileWriter``.

    with mg.summary.FileWriter("logs", g) as w:
        meta = mg.RunMetadata()
        sess.run(y, feeds, options=mg.RunOptions(trace=True), run_metadata=meta)
        w.add_run_metadata(meta, "step1")

then ``tensorboard --logdir logs``: the Graphs dashboard shows the graph, and for the tagged
run colours each node by its compute time. Needs the ``tensorboard`` extra (imported only
when a FileWriter is made).
"""

from __future__ import annotations

import os
import time
from typing import Any

from .devices import parse_device

__all__ = ["FileWriter", "run_metadata_to_proto"]


def _require() -> Any:
    try:
        from tensorboard.compat.proto import config_pb2, event_pb2, step_stats_pb2
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
    except ImportError as e:
        from .tf_proto import EXTRA_HINT

        raise ImportError(f"mg.summary.FileWriter {EXTRA_HINT} ({e})") from None
    return config_pb2, event_pb2, step_stats_pb2, EventFileWriter


def _full_device(device: str) -> str:
    """``CPU:0`` -> ``/job:localhost/replica:0/task:0/device:CPU:0`` (TensorFlow's naming)."""
    spec = parse_device(device)
    kind = spec.device_type or "CPU"
    index = spec.device_index or 0
    return (
        f"/job:{spec.job or 'localhost'}/replica:{spec.replica or 0}/task:{spec.task or 0}"
        f"/device:{kind}:{index}"
    )


def run_metadata_to_proto(run_metadata: Any, start_micros: int | None = None) -> Any:
    """TensorFlow's RunMetadata (StepStats per device) from a traced run's ``mg.RunMetadata``.

    Each node's ``all_start_micros`` is ``start_micros`` (default: now) plus its start
    within the run; ``op_*``/``all_end_rel_micros`` are its kernel time, what TensorBoard
    colours the graph by.
    """
    config_pb2, _, step_stats_pb2, _ = _require()
    base = int(time.time() * 1e6) if start_micros is None else int(start_micros)
    proto = config_pb2.RunMetadata()
    devices: dict[str, Any] = {}
    for timing in run_metadata.step_timings:
        name, op, device, start, duration = timing
        dev = _full_device(device)
        if dev not in devices:
            devices[dev] = proto.step_stats.dev_stats.add(device=dev)
        rel = max(int(round(duration)), 1) if duration > 0 else 0
        devices[dev].node_stats.add(
            node_name=name,
            all_start_micros=base + int(round(start)),
            op_start_rel_micros=0,
            op_end_rel_micros=rel,
            all_end_rel_micros=rel,
            timeline_label=f"{name} = {op}()",
            scheduled_micros=base + int(round(start)),
        )
    return proto


class FileWriter:
    """Writes TensorBoard event files into ``logdir``, as ``tf.compat.v1.summary.FileWriter``.

    Args:
        logdir: the directory (created if needed).
        graph: a Graph to write at once (as ``add_graph``), or None.
        max_queue, flush_secs, filename_suffix: as TensorFlow's.

    Usable as a context manager (closed on exit).
    """

    def __init__(
        self,
        logdir: str | os.PathLike,
        graph: Any = None,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        _, self._event_pb2, _, writer_cls = _require()
        os.makedirs(logdir, exist_ok=True)
        self._writer = writer_cls(
            os.fspath(logdir), max_queue, flush_secs, filename_suffix=filename_suffix
        )
        self._closed = False
        if graph is not None:
            self.add_graph(graph)

    def get_logdir(self) -> str:
        return str(self._writer.get_logdir())

    def _add(self, step: int | None, **fields: Any) -> None:
        if self._closed:
            raise RuntimeError("FileWriter is closed")
        event = self._event_pb2.Event(wall_time=time.time(), **fields)
        if step is not None:
            event.step = int(step)
        self._writer.add_event(event)

    def add_graph(self, graph: Any, global_step: int | None = None) -> None:
        """Write ``graph`` (a Graph or a GraphDef) for TensorBoard's Graphs dashboard."""
        from .graph import Graph
        from .graph_def import as_graph_def, parse_graph_def

        gd = as_graph_def(graph) if isinstance(graph, Graph) else parse_graph_def(graph)
        self._add(global_step, graph_def=gd.SerializeToString())

    def add_run_metadata(self, run_metadata: Any, tag: str, global_step: int | None = None) -> None:
        """Write a traced run (``mg.RunMetadata``, or TF's RunMetadata proto) under ``tag``."""
        if hasattr(run_metadata, "SerializeToString"):
            proto = run_metadata
        else:
            if not run_metadata.step_timings:
                raise ValueError(
                    "run_metadata holds no step timings: run with "
                    "options=mg.RunOptions(trace=True), run_metadata=meta"
                )
            proto = run_metadata_to_proto(run_metadata)
        tagged = self._event_pb2.TaggedRunMetadata(tag=tag, run_metadata=proto.SerializeToString())
        self._add(global_step, tagged_run_metadata=tagged)

    def flush(self) -> None:
        if not self._closed:
            self._writer.flush()

    def close(self) -> None:
        if not self._closed:
            self._writer.close()
            self._closed = True

    def __enter__(self) -> FileWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
