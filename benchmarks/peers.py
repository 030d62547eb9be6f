"""Same-run peers for the benchmarks: TensorFlow, timed in a worker process.

    peer = TFPeer.start(args.peers_python)     # None (and a line saying why) without TF
    with peer.prepare(graph, feeds, fetches) as p:   # held ready in the worker
        p.outputs["session"][0] ...
        p.time()                                     # {mode: seconds} of one call each
        p.time(5)                                    # {mode: median of 5 calls in a row}

Each case's minigraph graph is exported with ``Graph.as_graph_def()`` (the ``tensorboard``
extra) and its fed values written to a temp .npz; a worker (this file with ``--worker``, run
by an interpreter that has TensorFlow: ``--peers-python``, default the current one) imports
the GraphDef, calls it once in each mode (the warm-up) and holds it ready, so that the
caller can interleave its own calls with the worker's (timing.interleaved_seconds):

- ``session``: ``tf.compat.v1.Session.run`` with a feed_dict (Grappler on, TF's defaults;
  fed arrays 64-byte aligned, so TensorFlow feeds them without a copy);
- ``session_no_grappler``: the same with Grappler's meta-optimizer disabled (asked for);
- ``function``: the imported graph as a concrete function (``tf.compat.v1.wrap_function``,
  pruned to the feeds and fetches: what a ``tf.function`` runs), called on eager tensors
  made beforehand, each result converted with ``.numpy()``.

The worker writes what each mode returned, so the caller can check it against minigraph's.
TensorFlow is never imported by the calling process, and never a dependency of minigraph.
The caller is idle while the worker times, so the two never share the cores.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--peers", action="store_true", help="also time TensorFlow in the same run, if found"
    )
    parser.add_argument(
        "--peers-python",
        default=None,
        help="an interpreter that can import tensorflow (default: this one, if it can)",
    )


class Prepared:
    """A graph the worker holds ready in each mode; ``with`` it to release it after."""

    def __init__(
        self, peer: TFPeer, outputs: dict[str, list[np.ndarray]], info: dict[str, Any]
    ) -> None:
        self.peer, self.outputs, self.info = peer, outputs, info

    def time(self, repeat: int = 1) -> dict[str, float]:
        """Per mode, the median seconds of ``repeat`` calls in a row (timed in the worker)."""
        return self.peer._ask({"op": "time", "repeat": repeat})["seconds"]

    def __enter__(self) -> Prepared:
        return self

    def release(self) -> None:
        """Let the worker drop the graph, its sessions and its inputs."""
        self.peer._ask({"op": "release"})

    def __exit__(self, *exc: object) -> None:
        self.release()


class TFPeer:
    """A TensorFlow worker process that times GraphDefs on request."""

    def __init__(self, proc: subprocess.Popen, version: str) -> None:
        self.proc = proc
        self.version = version
        self.tmp = tempfile.TemporaryDirectory(prefix="mg-peers-")

    @classmethod
    def start(cls, python: str | None) -> TFPeer | None:
        """The worker, or None after printing why TensorFlow is skipped."""
        if python is None:
            if importlib.util.find_spec("tensorflow") is None:
                print(
                    "peers: TensorFlow is not importable here (pass --peers-python); "
                    "skipping the TensorFlow columns"
                )
                return None
            python = sys.executable
        if importlib.util.find_spec("tensorboard") is None:
            print(
                "peers: exporting graphs needs the 'tensorboard' extra "
                "(pip install 'minigraph[tensorboard]'); skipping the TensorFlow columns"
            )
            return None
        try:
            proc = subprocess.Popen(
                [python, os.path.join(HERE, "peers.py"), "--worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
        except OSError as e:
            print(f"peers: cannot start {python}: {e}; skipping the TensorFlow columns")
            return None
        hello = json.loads(proc.stdout.readline() or "{}")
        if "version" not in hello:
            proc.wait()
            print(
                f"peers: {python} cannot import tensorflow ({hello.get('error', 'no reply')}); "
                "skipping the TensorFlow columns"
            )
            return None
        print(f"peers: TensorFlow {hello['version']} in {python}")
        return cls(proc, hello["version"])

    def prepare(
        self,
        graph: Any,
        feeds: dict[Any, np.ndarray],
        fetches: list[Any],
        modes: tuple[str, ...] = ("session", "function"),
        return_outputs: bool = True,
    ) -> Prepared:
        """Have the worker import ``graph`` (a mg.Graph) and ready ``fetches`` fed ``feeds``
        in each mode, each called once (the warm-up; its values come back as ``outputs``)."""
        gd_path = os.path.join(self.tmp.name, "graph.pb")
        in_path = os.path.join(self.tmp.name, "inputs.npz")
        with open(gd_path, "wb") as f:
            f.write(graph.as_graph_def().SerializeToString())
        keys = [f"in{i}" for i in range(len(feeds))]
        np.savez(in_path, **dict(zip(keys, feeds.values())))
        try:
            reply = self._ask(
                {
                    "op": "prepare",
                    "graph": gd_path,
                    "inputs": in_path,
                    "feeds": {k: x.name for k, x in zip(keys, feeds)},
                    "fetches": [x.name for x in fetches],
                    "modes": list(modes),
                    "outputs": os.path.join(self.tmp.name, "out") if return_outputs else None,
                }
            )
        finally:
            os.remove(in_path)
        outputs = {}
        for mode, path in reply.get("outputs", {}).items():
            with np.load(path) as z:
                outputs[mode] = [z[f"out{i}"] for i in range(len(fetches))]
            os.remove(path)
        return Prepared(self, outputs, reply.get("info", {}))

    def _ask(self, request: dict) -> dict:
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline() or '{"error": "the worker died"}')
        if "error" in reply:
            raise RuntimeError(f"TensorFlow worker: {reply['error']}")
        return reply

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        self.tmp.cleanup()


# -- the worker (runs under the TensorFlow interpreter) ---------------------------------


def _worker() -> None:
    # TensorFlow logs to fd 2, but keep fd 1 for replies only, whatever a library prints.
    reply_fd = os.dup(1)
    os.dup2(2, 1)
    out = os.fdopen(reply_fd, "w")

    def say(obj: dict) -> None:
        out.write(json.dumps(obj) + "\n")
        out.flush()

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import tensorflow as tf
    except Exception as e:  # noqa: BLE001 - reported to the caller
        say({"error": f"{type(e).__name__}: {e}"})
        return
    sys.path.insert(0, HERE)
    from timing import call_seconds

    say({"version": tf.__version__})
    ready = Ready(tf)
    for line in sys.stdin:
        req = json.loads(line)
        try:
            if req["op"] == "prepare":
                say(ready.prepare(req))
            elif req["op"] == "time":
                seconds = {
                    mode: float(np.median(call_seconds(call, req["repeat"])))
                    for mode, call in ready.calls.items()
                }
                say({"seconds": seconds})
            elif req["op"] == "release":
                ready.release()
                say({})
            else:
                raise ValueError(f"unknown request {req['op']!r}")
        except Exception as e:  # noqa: BLE001 - reported to the caller
            say({"error": f"{type(e).__name__}: {e}"})


def aligned(a: np.ndarray, alignment: int = 64) -> np.ndarray:
    """``a`` in a 64-byte-aligned buffer: TensorFlow copies every fed array that is not
    (NumPy's large arrays start 16 bytes past a page), which cost it about 1.5x the floor
    per 256 MB input here; aligned feeds give TensorFlow its best case. benchmarks/ops.py
    feeds minigraph the same aligned arrays, so both read their rows alike."""
    if a.ctypes.data % alignment == 0:
        return a
    buf = np.empty(a.nbytes + alignment, np.uint8)
    start = -buf.ctypes.data % alignment
    out = buf[start : start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


class Ready:
    """The worker's one prepared graph: a warmed-up call per mode, until released."""

    def __init__(self, tf: Any) -> None:
        self.tf = tf
        self.calls: dict[str, Any] = {}
        self.sessions: list[Any] = []

    def release(self) -> None:
        for sess in self.sessions:
            sess.close()
        self.calls, self.sessions = {}, []

    def prepare(self, req: dict) -> dict:
        self.release()
        with open(req["graph"], "rb") as f:
            gd = self.tf.compat.v1.GraphDef.FromString(f.read())
        with np.load(req["inputs"]) as z:
            inputs = {k: aligned(z[k]) for k in req["feeds"]}
        outputs: dict[str, str] = {}
        info: dict[str, Any] = {}
        for mode in req["modes"]:
            if mode in ("session", "session_no_grappler"):
                call, info[f"{mode}_nodes"] = self._session(
                    gd, inputs, req, grappler=mode == "session"
                )
            elif mode == "function":
                call = self._function(gd, inputs, req)
            else:
                raise ValueError(f"unknown mode {mode!r}")
            values = call()  # the warm-up
            if req["outputs"]:
                path = f"{req['outputs']}-{mode}.npz"
                np.savez(path, **{f"out{i}": np.asarray(v) for i, v in enumerate(values)})
                outputs[mode] = path
            del values
            self.calls[mode] = call
        return {"outputs": outputs, "info": info}

    def _session(self, gd: Any, inputs: dict, req: dict, grappler: bool) -> tuple[Any, int]:
        """``Session.run`` with a feed_dict, Grappler on (TF's default) or its
        meta-optimizer disabled; and how many nodes the Session runs (after Grappler)."""
        tf = self.tf
        from tensorflow.core.protobuf import rewriter_config_pb2

        config = tf.compat.v1.ConfigProto()
        if not grappler:
            config.graph_options.rewrite_options.CopyFrom(
                rewriter_config_pb2.RewriterConfig(disable_meta_optimizer=True)
            )
        with tf.Graph().as_default() as g:
            tf.compat.v1.import_graph_def(gd, name="")
        feed = {g.get_tensor_by_name(n): inputs[k] for k, n in req["feeds"].items()}
        fetch = [g.get_tensor_by_name(n) for n in req["fetches"]]
        sess = tf.compat.v1.Session(graph=g, config=config)
        self.sessions.append(sess)

        def call(s: Any = sess, f: list = fetch, d: dict = feed) -> list[np.ndarray]:
            return s.run(f, d)

        meta = tf.compat.v1.RunMetadata()
        opts = tf.compat.v1.RunOptions(output_partition_graphs=True)
        sess.run(fetch, feed, options=opts, run_metadata=meta)
        return call, sum(len(p.node) for p in meta.partition_graphs)

    def _function(self, gd: Any, inputs: dict, req: dict) -> Any:
        """The imported graph as a concrete function pruned to the feeds and fetches (what a
        ``tf.function`` runs), called on eager tensors made beforehand."""
        tf = self.tf

        def imported() -> None:
            tf.compat.v1.import_graph_def(gd, name="")

        wrapped = tf.compat.v1.wrap_function(imported, [])
        names = list(req["feeds"].items())
        fn = wrapped.prune(
            feeds=[wrapped.graph.get_tensor_by_name(n) for _, n in names],
            fetches=[wrapped.graph.get_tensor_by_name(n) for n in req["fetches"]],
        )
        args = [tf.constant(inputs[k]) for k, _ in names]

        def call(fn: Any = fn, args: list = args) -> list[np.ndarray]:
            return [t.numpy() for t in fn(*args)]

        return call


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        _worker()
    else:
        sys.exit("run by benchmarks/ops.py and benchmarks/overhead.py with --peers")
