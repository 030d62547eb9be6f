"""The ``minigraph`` command: demo, run, show and trace.

    minigraph demo
    minigraph run GRAPH.json --feed x=x.npy --fetch y:0 [--device /cpu:0] [--out out.npz]
    minigraph show GRAPH.json [-o graph.svg|graph.png|graph.dot]
    minigraph trace GRAPH.json --feed x=x.npy --fetch y:0 [-o trace.json] [--runs 3]

Errors in the graph, the feeds or a run print ``minigraph: error: ...`` and exit with 1;
bad arguments exit with 2.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from . import errors


class CommandError(Exception):
    """A problem with the command's inputs, reported without a traceback."""


def _load_graph(path: str) -> Any:
    from .graph import Graph

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


def _cmd_demo(args: argparse.Namespace) -> int:
    from . import demo

    return demo.main()


def _cmd_run(args: argparse.Namespace) -> int:
    from .session import Session

    graph = _load_graph(args.graph)
    feeds = _parse_feeds(graph, args.feed)
    names = _fetch_names(args.fetch)
    values = Session(graph, device=args.device).run(names, feeds)
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
    sess = Session(graph, device=args.device)
    runs = []
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

    def graph_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("graph", metavar="GRAPH.json", help="a graph file (Graph.to_json())")
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
    p.add_argument("graph", metavar="GRAPH.json")
    p.add_argument("-o", "--output", metavar="FILE", help="graph.dot, graph.svg or graph.png")
    p.set_defaults(fn=_cmd_show)

    p = sub.add_parser(
        "trace",
        help="time each node of a run",
        formatter_class=raw,
        description="Run a graph file and write a Chrome trace-event JSON of "
        "per-node times, for Perfetto (ui.perfetto.dev) or chrome://tracing.",
        epilog="example:\n  minigraph trace g.json --feed x=x.npy --fetch y:0 "
        "-o trace.json --runs 3",
    )
    graph_args(p)
    p.add_argument("-o", "--output", default="trace.json", metavar="TRACE.json")
    p.add_argument("--runs", type=int, default=1, help="how many runs to record (default 1)")
    p.set_defaults(fn=_cmd_trace)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.fn(args)
    except (CommandError, errors.OpError) as e:
        print(f"minigraph: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
