"""TensorBoard: event files from mg.summary.FileWriter, read back and served by TensorBoard."""

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import numpy as np
import pytest

import minigraph as mg

pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")

from tensorboard.backend.event_processing.event_file_loader import (  # noqa: E402
    RawEventFileLoader,
)
from tensorboard.compat.proto import config_pb2, event_pb2, graph_pb2  # noqa: E402


def _traced_graph():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None], name="x")
        y = mg.multiply(x, 2.0, name="y")
        z = mg.cast(y, mg.float64, name="z")  # not fused with y (minigraph.fusion): two steps
    meta = mg.RunMetadata()
    mg.Session(g).run(
        z, {x: np.ones(1000, np.float32)}, options=mg.RunOptions(trace=True), run_metadata=meta
    )
    return g, meta


def _events(logdir):
    files = sorted(logdir.glob("events.out.tfevents.*"))
    assert len(files) == 1
    return [event_pb2.Event.FromString(r) for r in RawEventFileLoader(str(files[0])).Load()]


def test_file_writer_writes_graph_and_run_metadata(tmp_path):
    g, meta = _traced_graph()
    with mg.summary.FileWriter(tmp_path, g) as w:
        w.add_run_metadata(meta, "step1", global_step=3)
        w.flush()
        assert w.get_logdir() == str(tmp_path)
    events = _events(tmp_path)
    graphs = [e for e in events if e.HasField("graph_def")]
    tagged = [e for e in events if e.HasField("tagged_run_metadata")]
    assert len(graphs) == 1 and len(tagged) == 1
    gd = graph_pb2.GraphDef.FromString(graphs[0].graph_def)
    assert [n.name for n in gd.node] == [n.name for n in g.nodes()]
    assert tagged[0].tagged_run_metadata.tag == "step1" and tagged[0].step == 3
    rm = config_pb2.RunMetadata.FromString(tagged[0].tagged_run_metadata.run_metadata)
    (dev,) = rm.step_stats.dev_stats
    assert dev.device == "/job:localhost/replica:0/task:0/device:CPU:0"
    stats = {s.node_name: s for s in dev.node_stats}
    assert {"y", "z"} <= set(stats)
    timings = {t[0]: t for t in meta.step_timings}
    for name, s in stats.items():
        assert s.all_start_micros > 1_600_000_000_000_000  # wall-clock µs
        assert s.all_end_rel_micros == s.op_end_rel_micros >= 0
        assert abs(s.all_end_rel_micros - timings[name][4]) <= 1
    starts = [stats[n].all_start_micros for n in ("y", "z")]
    assert starts[0] <= starts[1]  # y runs before z


def test_file_writer_errors(tmp_path):
    w = mg.summary.FileWriter(tmp_path / "new" / "dir")
    with pytest.raises(ValueError, match="RunOptions\\(trace=True\\)"):
        w.add_run_metadata(mg.RunMetadata(), "empty")
    w.close()
    w.close()  # twice is fine
    g, _ = _traced_graph()
    with pytest.raises(RuntimeError, match="closed"):
        w.add_graph(g)


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
        return r.read().decode()


def test_tensorboard_serves_the_graph_and_run_metadata(tmp_path):
    g, meta = _traced_graph()
    with mg.summary.FileWriter(tmp_path, g) as w:
        w.add_run_metadata(meta, "step1")
    port = _free_port()
    cmd = [sys.executable, "-m", "tensorboard.main", "--logdir", str(tmp_path)]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--load_fast", "false"]
    cmd += ["--reload_interval", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        info, deadline = {}, time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"tensorboard exited: {proc.stderr.read().decode()[-2000:]}")
            try:
                info = json.loads(_get(port, "/data/plugin/graphs/info"))
                if info.get(".", {}).get("run_graph") and info["."].get("tags"):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.5)
        assert info.get(".", {}).get("run_graph"), f"no graph served: {info}"
        assert "step1" in info["."]["tags"]
        graph = _get(port, "/data/plugin/graphs/graph?" + urllib.parse.urlencode({"run": "."}))
        assert 'name: "z"' in graph and 'op: "Cast"' in graph
        query = urllib.parse.urlencode({"run": ".", "tag": "step1"})
        run_meta = _get(port, f"/data/plugin/graphs/run_metadata?{query}")
        assert "step_stats" in run_meta and 'node_name: "z"' in run_meta
        assert "all_end_rel_micros" in run_meta or "all_start_micros" in run_meta
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stderr.close()


def test_the_graph_event_holds_the_bodies_a_loop_runs(tmp_path):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [], name="x")
        mg.while_loop(lambda v: v < 9.0, lambda v: v * 2.0, x, name="loop")
    with mg.summary.FileWriter(tmp_path, g) as w:
        w.flush()
    (event,) = [e for e in _events(tmp_path) if e.HasField("graph_def")]
    gd = graph_pb2.GraphDef.FromString(event.graph_def)
    assert {f.signature.name for f in gd.library.function} == {"loop_cond", "loop_body"}
    body = next(f for f in gd.library.function if f.signature.name == "loop_body")
    assert [n.op for n in body.node_def] == ["Const", "Mul"]
