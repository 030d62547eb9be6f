"""The ``minigraph`` command: demo, check, run, show and trace.

    minigraph demo
    minigraph check GRAPH
    minigraph run GRAPH --feed x=x.npy --fetch y:0 [--device /cpu:0] [--out out.npz]
    minigraph show GRAPH [-o graph.svg|graph.png|graph.dot]
    minigraph trace GRAPH --feed x=x.npy --fetch y:0 [-o trace.json] [--runs 3] [--logdir DIR]
    minigraph run|trace ... --dask [ADDRESS]   (on Dask: a LocalCluster, or that scheduler)

GRAPH is a minigraph graph file (``.json``, Graph.to_json()) or a TensorFlow GraphDef
(``.pb`` binary or ``.pbtxt`` text, imported with TensorFlow's node names; needs the
``tensorboard`` extra). Errors in the graph, the feeds or a run print
``minigraph: error: ...`` and exit with 1; bad arguments exit with 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from . import errors

GRAPH_HELP = "a graph file: .json (Graph.to_json()), or a TensorFlow GraphDef .pb / .pbtxt"


class CommandError(Exception):
    """A problem with the command's inputs, reported without a traceback."""


TF_SUFFIXES = (".pb", ".pbtxt")


def _is_graph_def(path: str) -> bool:
    return Path(path).suffix.lower() in TF_SUFFIXES


def _load_graph(path: str) -> Any:
    from .graph import Graph

    if _is_graph_def(path):
        from .graph_def import import_graph_def

        if not Path(path).is_file():
            raise CommandError(f"cannot read graph file {path}: No such file")
        graph = Graph()
        with graph.as_default():
            import_graph_def(path, name="")
        return graph
    try:
        text = Path(path).read_bytes()
    except OSError as e:
        raise CommandError(f"cannot read graph file {path}: {e.strerror}") from None
    return Graph.from_json(text)


def _parse_feeds(graph: Any, feeds: list[str]) -> dict[Any, np.ndarray]:
    out = {}
    for item in feeds:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise CommandError(f"--feed takes NAME=FILE.npy, got {item!r}")
        tensor = graph.get_tensor_by_name(name if ":" in name else f"{name}:0")
        try:
            out[tensor] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise CommandError(f"cannot load feed {name} from {path}: {e}") from None
    return out


def _fetch_names(fetches: list[str]) -> list[str]:
    if not fetches:
        raise CommandError("give at least one --fetch NAME (a tensor such as y:0)")
    return [f if ":" in f else f"{f}:0" for f in fetches]


@contextlib.contextmanager
def _executor(args: argparse.Namespace) -> Iterator[Any]:
    """None (the local executor), or with --dask a DaskExecutor on that scheduler or on a
    LocalCluster started for this command and closed after it."""
    if args.dask is None:
        yield None
        return
    from .distributed import DaskExecutor, require_dask

    try:
        distributed = require_dask()
    except ImportError as e:
        raise CommandError(str(e)) from None
    with contextlib.ExitStack() as stack:
        if args.dask:
            try:
                client = stack.enter_context(distributed.Client(args.dask, timeout="10s"))
            except (OSError, ValueError) as e:
                raise CommandError(f"cannot reach the Dask scheduler at {args.dask}: {e}") from None
        else:
            import dask

            from .distributed import WORKER_ENVIRON

            stack.enter_context(dask.config.set(WORKER_ENVIRON))
            cluster = stack.enter_context(
                distributed.LocalCluster(host="127.0.0.1", dashboard_address=":0", silence_logs=40)
            )
            client = stack.enter_context(distributed.Client(cluster))
        yield DaskExecutor(client)


def _cmd_demo(args: argparse.Namespace) -> int:
    from . import demo

    return demo.main()


def _op_rows(path: str) -> list[tuple[str, int, bool, str]]:
    """(op, count, supported, first node) per op type of a graph file, without building it."""
    if _is_graph_def(path):
        from .graph_def import op_support

        if not Path(path).is_file():
            raise CommandError(f"cannot read graph file {path}: No such file")
        return op_support(path)
    from .graph_def import _unsupported_reason

    try:
        doc = json.loads(Path(path).read_bytes())
        nodes = [(str(n["name"]), str(n["op"])) for n in doc["nodes"]]
    except OSError as e:
        raise CommandError(f"cannot read graph file {path}: {e.strerror}") from None
    except (ValueError, KeyError, TypeError) as e:
        raise CommandError(f"{path} is not a minigraph graph file ({e!r})") from None
    rows: dict[str, list[Any]] = {}
    for name, op in nodes:
        row = rows.setdefault(op, [op, 0, _unsupported_reason(op) is None, name])
        row[1] += 1
    return [(r[0], r[1], r[2], r[3]) for r in rows.values()]


def _cmd_check(args: argparse.Namespace) -> int:
    rows = _op_rows(args.graph)
    width = max([len("op")] + [len(r[0]) for r in rows])
    print(f"{'op':<{width}}  {'count':>5}  supported  example node")
    for op, count, ok, node in rows:
        line = f"{op:<{width}}  {count:>5}  {'yes' if ok else 'no':<9}  {'' if ok else node}"
        print(line.rstrip())
    bad = [r for r in rows if not r[2]]
    total = sum(r[1] for r in rows)
    if bad:
        print(
            f"{len(bad)} of {len(rows)} op types are not supported "
            f"({sum(r[1] for r in bad)} of {total} nodes)"
        )
        return 1
    print(f"all {len(rows)} op types ({total} nodes) are supported")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from .session import Session

    graph = _load_graph(args.graph)
    feeds = _parse_feeds(graph, args.feed)
    names = _fetch_names(args.fetch)
    with _executor(args) as executor:
        values = Session(graph, device=args.device, executor=executor).run(names, feeds)
    if args.out:
        np.savez(args.out, **dict(zip(names, values)))
        print(f"wrote {len(values)} arrays to {args.out}")
    else:
        for name, value in zip(names, values):
            print(f"{name}: {value.dtype}{list(value.shape)}")
            print(np.array2string(value, threshold=200))
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    dot = _load_graph(args.graph).to_dot()
    if not args.output:
        sys.stdout.write(dot)
        return 0
    out = Path(args.output)
    fmt = out.suffix.lstrip(".").lower()
    if fmt in ("dot", "gv"):
        out.write_text(dot)
        print(f"wrote {out}")
        return 0
    if fmt not in ("svg", "png", "pdf"):
        raise CommandError(f"-o must end in .dot, .svg, .png or .pdf, got {out.name}")
    dot_bin = shutil.which("dot")
    if dot_bin is None:
        fallback = out.with_suffix(".dot")
        fallback.write_text(dot)
        raise CommandError(
            f"rendering {fmt.upper()} needs Graphviz's `dot` program, which is not installed "
            f"(e.g. apt-get install graphviz); wrote the DOT text to {fallback} instead"
        )
    proc = subprocess.run(
        [dot_bin, f"-T{fmt}", "-o", str(out)], input=dot.encode(), capture_output=True
    )
    if proc.returncode:
        raise CommandError(f"dot failed: {proc.stderr.decode(errors='replace').strip()}")
    print(f"wrote {out}")
    return 0


def _cmd_trace(args: argparse.Namespace) -> int:
    from .session import RunMetadata, RunOptions, Session
    from .trace import trace_events

    if args.runs < 1:
        raise CommandError(f"--runs must be at least 1, got {args.runs}")
    graph = _load_graph(args.graph)
    feeds = _parse_feeds(graph, args.feed)
    names = _fetch_names(args.fetch)
    runs = []
    with _executor(args) as executor:  # on Dask: the task stream, one row per worker
        sess = Session(graph, device=args.device, executor=executor)
        for _ in range(args.runs):
            meta = RunMetadata()
            sess.run(names, feeds, options=RunOptions(trace=True), run_metadata=meta)
            runs.append(meta.step_timings)
    Path(args.output).write_text(json.dumps(trace_events(runs)))
    total = sum(t[4] for t in runs[-1])
    print(
        f"wrote {args.output}: {len(runs)} runs, {len(runs[-1])} nodes, "
        f"{total:.1f} µs in kernels in the last run (open it in Perfetto or chrome://tracing)"
    )
    if args.logdir:
        from .summary import FileWriter

        with FileWriter(args.logdir, graph) as writer:
            for i, timings in enumerate(runs):
                writer.add_run_metadata(RunMetadata(step_timings=timings), f"run_{i}", i)
        print(f"wrote the graph and {len(runs)} runs to {args.logdir} (tensorboard --logdir ...)")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="minigraph",
        description="minigraph: a small TensorFlow-like dataflow runtime.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    raw = argparse.RawDescriptionHelpFormatter

    p = sub.add_parser(
        "demo",
        help="run the documented examples",
        formatter_class=raw,
        description="Build and run each example from the op documents, print "
        "its inputs and result, and check it against the documented value.",
        epilog="example:\n  minigraph demo",
    )
    p.set_defaults(fn=_cmd_demo)

    p = sub.add_parser(
        "check",
        help="list a graph file's op types and whether minigraph runs them",
        formatter_class=raw,
        description="Print one row per op type of a graph file (op, node count, "
        "supported, one node of each unsupported op); exit 1 if any is unsupported.",
        epilog="examples:\n  minigraph check frozen_model.pb\n  minigraph check g.pbtxt",
    )
    p.add_argument("graph", metavar="GRAPH", help=GRAPH_HELP)
    p.set_defaults(fn=_cmd_check)

    def graph_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("graph", metavar="GRAPH", help=GRAPH_HELP)
        p.add_argument(
            "--feed",
            action="append",
            default=[],
            metavar="NAME=FILE.npy",
            help="feed a placeholder (or any tensor) from a .npy file; repeatable",
        )
        p.add_argument(
            "--fetch",
            action="append",
            default=[],
            metavar="NAME",
            help="a tensor to compute, such as y:0; repeatable",
        )
        p.add_argument("--device", default=None, help="session device: /cpu:0 or /gpu:0")
        p.add_argument(
            "--dask",
            nargs="?",
            const="",
            default=None,
            metavar="ADDRESS",
            help="run on Dask: on the scheduler at ADDRESS, or with no ADDRESS on a "
            "LocalCluster started for the run (needs the distributed extra)",
        )

    p = sub.add_parser(
        "run",
        help="run a graph file",
        formatter_class=raw,
        description="Run a graph file with feeds from .npy files and print or "
        "save the fetched tensors.",
        epilog="examples:\n  minigraph run g.json --feed x=x.npy --fetch y:0\n"
        "  minigraph run g.json --feed x:0=x.npy --fetch y:0 --fetch z:0 "
        "--out out.npz",
    )
    graph_args(p)
    p.add_argument("--out", metavar="OUT.npz", help="save the results here instead of printing")
    p.set_defaults(fn=_cmd_run)

    p = sub.add_parser(
        "show",
        help="draw a graph file",
        formatter_class=raw,
        description="Write a graph file as Graphviz DOT text, or render it to "
        "SVG/PNG/PDF when Graphviz's `dot` is installed.",
        epilog="examples:\n  minigraph show g.json            # DOT on stdout\n"
        "  minigraph show g.json -o g.svg",
    )
    p.add_argument("graph", metavar="GRAPH", help=GRAPH_HELP)
    p.add_argument("-o", "--output", metavar="FILE", help="graph.dot, graph.svg or graph.png")
    p.set_defaults(fn=_cmd_show)

    p = sub.add_parser(
        "trace",
        help="time each node of a run",
        formatter_class=raw,
        description="Run a graph file and write a Chrome trace-event JSON of "
        "per-node times, for Perfetto (ui.perfetto.dev) or chrome://tracing.",
        epilog="example:\n  minigraph trace g.json --feed x=x.npy --fetch y:0 "
        "-o trace.json --runs 3\n  minigraph trace model.pb --feed x=x.npy --fetch y:0 "
        "--logdir logs",
    )
    graph_args(p)
    p.add_argument("-o", "--output", default="trace.json", metavar="TRACE.json")
    p.add_argument("--runs", type=int, default=1, help="how many runs to record (default 1)")
    p.add_argument(
        "--logdir",
        metavar="DIR",
        help="also write a TensorBoard event file (graph + per-node compute times) here",
    )
    p.set_defaults(fn=_cmd_trace)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.fn(args)
    except (CommandError, errors.OpError, ImportError) as e:
        print(f"minigraph: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
