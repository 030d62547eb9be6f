"""The ``minigraph`` command: demo, inputs, check, run, show and trace.

    minigraph demo
    minigraph inputs GRAPH
    minigraph check GRAPH
    minigraph run GRAPH --feed x=x.npy [--fetch y:0] [--device /cpu:0] [--out out.npz]
    minigraph show GRAPH [-o graph.svg|graph.png|graph.dot]
    minigraph trace GRAPH --feed x=x.npy [--fetch y:0] [-o trace.json [--force]] [--runs 3]
    minigraph run|trace ... --dask [ADDRESS]   (on Dask: a LocalCluster, or that scheduler)
    minigraph inputs|run|show|trace ... --allow-unsupported   (keep ops minigraph lacks)
    minigraph --version

GRAPH is a minigraph graph file (``.json``, Graph.to_json()) or a TensorFlow GraphDef
(``.pb`` binary or ``.pbtxt`` text, imported with TensorFlow's node names; needs the
``tensorboard`` extra); :mod:`minigraph.graph_files` recognises what else users hand it.
Without ``--fetch``, run and trace fetch the graph's likely outputs (the nodes no other
node reads, as ``inputs`` lists them) and say so. Every error, in the arguments, the
files, the feeds or a run, is one ``minigraph: error: ...`` line on stderr: exit 2 for
bad arguments, 1 for the rest. With ``--allow-unsupported`` a GraphDef or SavedModel whose
op types minigraph partly lacks is imported anyway (``import_graph_def(...,
allow_unsupported=True)``): a run fails only when its fetches need such an op; ``check``
says which fetches do.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from . import __version__, config, errors
from .graph_files import (
    CommandError,
    functions_line,
    load_graph,
    op_rows,
    signature_of,
    unsupported_kind,
)

GRAPH_HELP = "a graph file: .json (Graph.to_json()), or a TensorFlow GraphDef .pb / .pbtxt"

# Op types that are never a graph's result, as TensorFlow's summarize_graph tool says when
# it lists a GraphDef's "possible outputs".
UNLIKELY_OUTPUT_OPS = frozenset({"Const", "Placeholder", "NoOp", "Assign"})

# The longest error line printed (a message quoting a hostile file is cut here).
MAX_ERROR_CHARS = 2000


def likely_outputs(graph: Any) -> list[Any]:
    """Every output of the nodes no other node reads (by data or control edge), except
    Const, Placeholder, NoOp and Assign, in creation order: what a user most likely wants."""
    nx_graph = graph.as_networkx()
    out = []
    for node in graph.nodes():
        if nx_graph.out_degree(node.name) or node.type_string in UNLIKELY_OUTPUT_OPS:
            continue
        out += [graph.get_tensor_by_name(f"{node.name}:{i}") for i in range(node.num_outputs)]
    return out


def placeholders(graph: Any) -> list[Any]:
    """The graph's Placeholder outputs, in creation order: what a run must be fed."""
    nodes = [n for n in graph.nodes() if n.type_string == "Placeholder"]
    return [graph.get_tensor_by_name(f"{n.name}:0") for n in nodes]


def _signature_names(graph: Any) -> dict[str, str]:
    """A SavedModel's signature input and output names -> their graph tensors' names
    (empty for other graphs), so --feed and --fetch take either."""
    sig = signature_of(graph)
    if sig is None:
        return {}
    return {k: v.tensor.name for k, v in [*sig.inputs.items(), *sig.outputs.items()]}


def _parse_feeds(graph: Any, feeds: list[str]) -> dict[Any, np.ndarray]:
    out = {}
    aliases = _signature_names(graph)
    for item in feeds:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise CommandError(f"--feed takes NAME=FILE.npy, got {item!r}")
        name = aliases.get(name, name)
        tensor = graph.get_tensor_by_name(name if ":" in name else f"{name}:0")
        try:
            value = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as e:
            raise CommandError(f"cannot load feed {name} from {path}: {e}") from None
        if isinstance(value, np.lib.npyio.NpzFile):
            arrays = list(value.files)
            value.close()
            first = arrays[0] if arrays else "a"
            raise CommandError(
                f"--feed {name}={path}: a .npz archive (holding "
                f"{', '.join(arrays) if arrays else 'no arrays'}), but --feed takes one array "
                f"in a .npy file: np.save('{first}.npy', np.load('{path}')['{first}'])"
            )
        out[tensor] = value
    return out


def _fetches(graph: Any, fetches: list[str]) -> list[str]:
    """The tensor names to fetch: those given, or the graph's likely outputs (said on
    stderr, since the user did not name them)."""
    aliases = _signature_names(graph)
    if fetches:
        names = [aliases.get(f, f) for f in fetches]
        names = [f if ":" in f else f"{f}:0" for f in names]
        for name in names:
            graph.get_tensor_by_name(name)  # a misspelled name fails here, with suggestions
        return names
    sig = signature_of(graph)
    if sig is not None:  # a SavedModel: its signature's outputs, as TensorFlow returns them
        return [v.tensor.name for v in sig.outputs.values()]
    names = [t.name for t in likely_outputs(graph)]
    if not names:
        raise CommandError(
            "give at least one --fetch NAME (a tensor such as y:0): every node of this graph "
            "is read by another or is a Placeholder/Const, so it has no likely output"
        )
    print(
        f"minigraph: no --fetch given: fetching {', '.join(names)} (the nodes no other node "
        "reads; `minigraph inputs GRAPH` lists them)",
        file=sys.stderr,
    )
    return names


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


def _check_writable(path: Path, flag: str, force: bool = True) -> None:
    """Fail before any work when ``path`` cannot be written (or, unless ``force``, exists)."""
    if path.is_dir():
        raise CommandError(f"{flag} {path}: is a directory; give a file name")
    if not path.parent.is_dir():
        raise CommandError(f"{flag} {path}: directory {path.parent} does not exist")
    if not force and path.exists():
        raise CommandError(f"{flag} {path}: the file exists; add --force to replace it")


def _write(path: Path, text: str, flag: str) -> None:
    try:
        path.write_text(text)
    except OSError as e:
        raise CommandError(f"{flag} {path}: cannot write it: {e.strerror}") from None


def _cmd_demo(args: argparse.Namespace) -> int:
    from . import demo

    return demo.main()


def _cmd_inputs(args: argparse.Namespace) -> int:
    graph = load_graph(args.graph, args.allow_unsupported)

    def table(tensors: Sequence[Any], with_op: bool) -> None:
        width = max(len(t.name) for t in tensors)
        for t in tensors:
            op = f"  {t.op.type}" if with_op else ""
            print(f"  {t.name:<{width}}  {t.dtype.name:<9} {str(t.shape):<12}{op}".rstrip())

    sig = signature_of(graph)
    if sig is not None:
        for side, infos in (("inputs", sig.inputs), ("outputs", sig.outputs)):
            print(f"signature {sig.name} {side} (NAME or TENSOR in --feed/--fetch):")
            width = max([len(k) for k in infos] + [1])
            for key, info in infos.items():
                t = info.tensor
                print(f"  {key:<{width}}  {t.name}  {info.dtype.name:<9} {info.shape}".rstrip())
        return 0
    ins = placeholders(graph)
    if ins:
        print("inputs (placeholders: --feed NAME=FILE.npy):")
        table(ins, with_op=False)
    else:
        print("inputs: none (no Placeholder: the graph computes from its constants)")
    outs = likely_outputs(graph)
    if outs:
        print("outputs (nodes no other node reads: what run fetches without --fetch):")
        table(outs, with_op=True)
    else:
        print("outputs: none found (every node is read by another, or is a Placeholder/Const)")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    rows = op_rows(args.graph)
    reasons = {op: unsupported_kind(op) for op, _, ok, _ in rows if not ok}
    head = ("op", "count", "supported", "example node", "reason")
    w_op = max([len(head[0])] + [len(r[0]) for r in rows])
    w_node = max([len(head[3])] + [len(r[3]) for r in rows if not r[2]])
    print(f"{head[0]:<{w_op}}  {head[1]:>5}  {head[2]}  {head[3]:<{w_node}}  {head[4]}")
    for op, count, ok, node in rows:
        reason = "" if ok else reasons[op][0]
        example = "" if ok else node
        supported = "yes" if ok else "no"
        line = f"{op:<{w_op}}  {count:>5}  {supported:<9}  {example:<{w_node}}  {reason}"
        print(line.rstrip())
    functions = functions_line(args.graph)
    if functions:
        print(functions)
    bad = [r for r in rows if not r[2]]
    total = sum(r[1] for r in rows)
    if not bad:
        print(f"all {len(rows)} op types ({total} nodes) are supported")
        return 0
    print(
        f"{len(bad)} of {len(rows)} op types are not supported "
        f"({sum(r[1] for r in bad)} of {total} nodes):"
    )
    # One line per unsupported op type, grouped by kind so that each hint reads once per run
    # of lines; kinds in the order of their first op in the graph.
    kinds = list(dict.fromkeys(reasons[r[0]][0] for r in bad))
    bad.sort(key=lambda r: kinds.index(reasons[r[0]][0]))
    w_bad = max(len(r[0]) for r in bad)
    for op, count, _, _ in bad:
        kind, hint = reasons[op]
        nodes = f"{count} node{'s' if count != 1 else ''}"
        print(f"  {op:<{w_bad}}  {nodes:>9}  {kind}: {hint}")
    _print_fetches(args.graph)
    return 1


def _print_fetches(name: str) -> None:
    """For check: which of the graph's fetches (its likely outputs, or a SavedModel
    signature's outputs) a run with --allow-unsupported computes, and which need an op
    minigraph lacks, naming the op and a node of it."""
    from .opaque import unsupported_needed

    try:
        graph = load_graph(name, allow_unsupported=True)
    except (CommandError, errors.OpError) as e:
        print(f"fetches: cannot tell (the graph does not load even with --allow-unsupported: {e})")
        return
    sig = signature_of(graph)
    if sig is not None:
        fetches = [(f"{k} ({v.tensor.name})", v.tensor) for k, v in sig.outputs.items()]
        what = f"signature {sig.name}'s outputs"
    else:
        fetches = [(t.name, t) for t in likely_outputs(graph)]
        what = "the nodes no other node reads"
    if not fetches:
        print(f"fetches: none ({what}) to tell of")
        return
    print(f"fetches ({what}) with --allow-unsupported:")
    width = max(len(label) for label, _ in fetches)
    for (label, _), needed in zip(fetches, unsupported_needed([t for _, t in fetches])):
        by_op: dict[str, list[str]] = {}
        for node, fn in needed:
            by_op.setdefault(node.type_string, []).append(
                f"'{node.name}'" + (f" in function {fn}" if fn else "")
            )
        status = (
            "runnable"
            if not needed
            else "needs "
            + ", ".join(
                f"{op} (node {nodes[0]})"
                if len(nodes) == 1
                else f"{op} ({len(nodes)} nodes, e.g. {nodes[0]})"
                for op, nodes in by_op.items()
            )
        )
        print(f"  {label:<{width}}  {status}")


def _cmd_run(args: argparse.Namespace) -> int:
    from .session import Session

    out = Path(args.out) if args.out else None
    if out is not None:
        _check_writable(out, "--out")
    graph = load_graph(args.graph, args.allow_unsupported)
    feeds = _parse_feeds(graph, args.feed)
    names = _fetches(graph, args.fetch)
    with _executor(args) as executor:
        values = Session(graph, device=args.device, executor=executor).run(names, feeds)
    if out is not None:
        try:
            with open(out, "wb") as f:  # a file object: np.savez would add ".npz" to a name
                np.savez(f, **dict(zip(names, values)))
        except OSError as e:
            raise CommandError(f"--out {out}: cannot write it: {e.strerror}") from None
        print(f"wrote {len(values)} arrays to {out}")
    else:
        labels = {t: f"{k} ({t})" for k, t in _signature_names(graph).items()}
        for name, value in zip(names, values):
            print(f"{labels.get(name, name)}: {value.dtype}{list(value.shape)}")
            print(np.array2string(value, threshold=200))
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    dot = load_graph(args.graph, args.allow_unsupported).to_dot()
    if not args.output:
        sys.stdout.write(dot)
        return 0
    out = Path(args.output)
    _check_writable(out, "-o")
    fmt = out.suffix.lstrip(".").lower()
    if fmt in ("dot", "gv"):
        _write(out, dot, "-o")
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


def _run_nodes(executor: Any, timings: Sequence[Any]) -> int:
    """How many nodes a traced run executed: one timing per step locally; on Dask a timing
    is a task of several steps, and the executor knows each task's nodes."""
    keys = getattr(executor, "last_run_keys", None)
    if executor is None or not isinstance(keys, dict):
        return len(timings)
    return sum(len(nodes) for nodes in keys.values())


def _from_zero(timings: Sequence[Any]) -> list[Any]:
    """A run's timings shifted so that none starts before 0. On Dask, start times are the
    workers' clocks as the scheduler corrects them by an estimated offset, which can put a
    task a few ms before the moment the client submitted it."""
    from .executor import StepTiming

    first = min((t[3] for t in timings), default=0.0)
    if first >= 0:
        return list(timings)
    return [StepTiming((t[0], t[1], t[2], t[3] - first, t[4])) for t in timings]


def _cmd_trace(args: argparse.Namespace) -> int:
    from .progress import Progress
    from .session import RunMetadata, RunOptions, Session
    from .trace import trace_events

    if args.runs < 1:
        raise CommandError(f"--runs must be at least 1, got {args.runs}")
    out = Path(args.output)
    _check_writable(out, "-o", force=args.force)
    graph = load_graph(args.graph, args.allow_unsupported)
    feeds = _parse_feeds(graph, args.feed)
    names = _fetches(graph, args.fetch)
    runs = []
    nodes = 0
    with (
        _executor(args) as executor,  # on Dask: the task stream, one row per worker
        Progress("trace", args.runs, "runs") as progress,
    ):
        sess = Session(graph, device=args.device, executor=executor)
        for _ in range(args.runs):
            meta = RunMetadata()
            sess.run(names, feeds, options=RunOptions(trace=True), run_metadata=meta)
            runs.append(_from_zero(meta.step_timings))
            nodes = _run_nodes(executor, meta.step_timings)
            progress.update()
    _write(out, json.dumps(trace_events(runs)), "-o")
    total = sum(t[4] for t in runs[-1])
    where = f"in {len(runs[-1])} Dask tasks " if executor is not None else "in kernels "
    print(
        f"wrote {out}: {len(runs)} run{'s' if len(runs) != 1 else ''}, {nodes} nodes, "
        f"{total:.1f} µs {where}in the last run (open it in Perfetto or chrome://tracing)"
    )
    if args.logdir:
        from .summary import FileWriter

        with FileWriter(args.logdir, graph) as writer:
            for i, timings in enumerate(runs):
                writer.add_run_metadata(RunMetadata(step_timings=timings), f"run_{i}", i)
        print(f"wrote the graph and {len(runs)} runs to {args.logdir} (tensorboard --logdir ...)")
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors as one ``minigraph: error:`` line like every other error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"minigraph: error: {message} (see `{self.prog} --help`)\n")


def allow_unsupported_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--allow-unsupported",
        action="store_true",
        help="import a GraphDef or SavedModel that holds op types minigraph lacks (see "
        "`minigraph check`): a run fails only if its fetches need one",
    )


def _parser() -> argparse.ArgumentParser:
    raw = argparse.RawDescriptionHelpFormatter
    parser = _Parser(
        prog="minigraph",
        description="minigraph: a small TensorFlow-like dataflow runtime.",
        formatter_class=raw,
    )
    parser.add_argument("--version", action="version", version=f"minigraph {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

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
        "inputs",
        help="list a graph file's placeholders and likely outputs",
        formatter_class=raw,
        description="Print the graph's placeholders (what --feed needs) with dtype and shape, "
        "and its likely outputs: the nodes no other node reads (not Const, Placeholder, "
        "NoOp or Assign), which run and trace fetch when no --fetch is given.",
        epilog="examples:\n  minigraph inputs frozen_model.pb\n  minigraph inputs g.json",
    )
    p.add_argument("graph", metavar="GRAPH", help=GRAPH_HELP)
    allow_unsupported_arg(p)
    p.set_defaults(fn=_cmd_inputs)

    p = sub.add_parser(
        "check",
        help="list a graph file's op types and whether minigraph runs them",
        formatter_class=raw,
        description="Print one row per op type of a graph file (op, node count, "
        "supported, one node and the reason for each unsupported op), then each unsupported "
        "op type with its node count and what to do about it, and which of the graph's "
        "outputs (a SavedModel's signature outputs) a run with --allow-unsupported computes "
        "and which need an unsupported op; exit 1 if any op is unsupported.",
        epilog="examples:\n  minigraph check frozen_model.pb\n  minigraph check g.pbtxt",
    )
    p.add_argument("graph", metavar="GRAPH", help=GRAPH_HELP)
    p.set_defaults(fn=_cmd_check)

    def graph_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("graph", metavar="GRAPH", help=GRAPH_HELP)
        allow_unsupported_arg(p)
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
            help="a tensor to compute, such as y:0; repeatable. Without it: the graph's "
            "likely outputs (see `minigraph inputs`)",
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
        "--out out.npz\n  minigraph run model.pb --feed x=x.npy      # fetches its outputs",
    )
    graph_args(p)
    p.add_argument(
        "--out",
        metavar="OUT.npz",
        help="save the results to this file (an .npz archive, keyed by tensor name) "
        "instead of printing them",
    )
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
    allow_unsupported_arg(p)
    p.add_argument("-o", "--output", metavar="FILE", help="graph.dot, graph.svg or graph.png")
    p.set_defaults(fn=_cmd_show)

    p = sub.add_parser(
        "trace",
        help="time each node of a run",
        formatter_class=raw,
        description="Run a graph file and write a Chrome trace-event JSON of "
        "per-node times, for Perfetto (ui.perfetto.dev) or chrome://tracing. A progress "
        "line counts the runs on a terminal.",
        epilog="example:\n  minigraph trace g.json --feed x=x.npy --fetch y:0 "
        "-o trace.json --runs 3\n  minigraph trace model.pb --feed x=x.npy --fetch y:0 "
        "--logdir logs",
    )
    graph_args(p)
    p.add_argument(
        "-o",
        "--output",
        default="trace.json",
        metavar="TRACE.json",
        help="where to write the trace (default: trace.json); an existing file is an "
        "error unless --force is given",
    )
    p.add_argument("--force", action="store_true", help="replace the -o file if it exists")
    p.add_argument("--runs", type=int, default=1, help="how many runs to record (default 1)")
    p.add_argument(
        "--logdir",
        metavar="DIR",
        help="also write a TensorBoard event file (graph + per-node compute times) here",
    )
    p.set_defaults(fn=_cmd_trace)
    return parser


def _one_line(message: str) -> str:
    """An error message as one line of at most MAX_ERROR_CHARS characters."""
    line = " ".join(message.split())
    if len(line) > MAX_ERROR_CHARS:
        line = line[: MAX_ERROR_CHARS - 3] + "..."
    return line


def main(argv: list[str] | None = None) -> int:
    """The command line's entry point: the exit status (0 ok, 1 an error, 2 bad arguments)."""
    args = _parser().parse_args(argv)
    try:
        return args.fn(args)
    except (CommandError, errors.OpError, ImportError) as e:
        message = str(e)
    except KeyboardInterrupt:
        message = "interrupted"
    except Exception as e:  # a bug: still one line, with the traceback behind the debug knob
        if config.debug():
            raise
        message = (
            f"{type(e).__name__}: {e} (unexpected: please report it; MINIGRAPH_DEBUG=1 "
            "shows the traceback)"
        )
    print(f"minigraph: error: {_one_line(message)}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
