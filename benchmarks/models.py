"""Whole models TensorFlow wrote: the Keras graphs of tests/fixtures/graphs, end to end.

    python benchmarks/models.py [--repeat 20] [--batch 1 --batch 1024] [--only mlp]
    python benchmarks/models.py --peers [--peers-python /path/to/tf/venv/bin/python]
    python benchmarks/models.py --control-flow [--peers]   # Keras LSTM and GRU loops

Each Keras fixture (a frozen GraphDef written by TensorFlow 2.21: MLP, CNN, batch norm,
residual block, text models, transformer block, unrolled LSTM) is imported, and its fixture
input tiled to each batch size is fed. Timed (median ms of a Session.run): minigraph with
its optimizer (the default) and with every pass off, and, with ``--peers``, TensorFlow's
Session (Grappler on) and the graph as a concrete function, in the same run
(benchmarks/peers.py), in rounds (timing.interleaved_seconds, as benchmarks/ops.py), each
timing every contender's median of CALLS calls in a row, so a drift in the VM's speed
falls on all of them alike and each figure is a model's steady cost; the last
column is the median over the rounds of minigraph's time over TensorFlow's best. "steps"
is how many steps minigraph's plan runs, with the optimizer and without. Outputs are
checked: the optimizer's bitwise against the unoptimized plan's, TensorFlow's within the
fixture's tolerance.

``--control-flow`` times the recurrent benchmark models of tests/fixtures/control_flow
(Keras LSTM and GRU, 64 units, 32 steps, run as TensorFlow's While loop) at batch 1 and
64 instead, with a column of minigraph's cost per loop iteration in µs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import peers
from timing import interleaved_seconds, median_ratio, timer

import minigraph as mg

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "graphs"
LOOP_FIXTURES = FIXTURES.parent / "control_flow"
LOOP_STEPS = 32  # the sequence length of the recurrent benchmark models
# Each round times the median of this many calls in a row per contender: a model's
# steady cost, as a loop over batches sees it (a first call after another contender
# ran is up to 4x slower here, for TensorFlow too).
CALLS = 5
UNOPTIMIZED = mg.ConfigProto(
    graph_options=mg.GraphOptions(optimizer_options=mg.OptimizerOptions.off())
)


def load(
    case: dict[str, Any], batch: int, fixtures: Path = FIXTURES
) -> tuple[mg.Graph, dict[Any, np.ndarray], list[Any]]:
    """The imported graph, its fixture inputs tiled along the batch dim, and its fetches."""
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(str(fixtures / case["file"]), name="")
    recorded = np.load(fixtures / f"{Path(case['file']).stem}.npz")
    feeds = {}
    for name in case["feeds"]:
        x = recorded[f"feed/{name}"]
        reps = -(-batch // x.shape[0])
        feeds[g.get_tensor_by_name(name)] = np.concatenate([x] * reps)[:batch]
    return g, feeds, [g.get_tensor_by_name(name) for name in case["fetches"]]


def _missing_ops(case: dict[str, Any]) -> list[str]:
    """Op types of the case (and of its function bodies) that minigraph lacks."""
    registered = mg.registered_ops()
    ops = set(case["ops"]) | set(case.get("function_ops", []))
    return sorted(op for op in ops - set(case.get("functions", [])) if op not in registered)


def _steps(sess: mg.Session) -> int:
    plan = next(iter(getattr(sess, "_plans", {}).values()), None)
    return len(plan.steps) if plan is not None else -1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--batch", type=int, action="append", help="default: 1 and 1024")
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    parser.add_argument(
        "--control-flow", action="store_true", help="the Keras LSTM and GRU loops instead"
    )
    peers.add_arguments(parser)
    args = parser.parse_args()
    fixtures, kind = (LOOP_FIXTURES, "benchmark") if args.control_flow else (FIXTURES, "keras")
    cases = json.loads((fixtures / "cases.json").read_text())
    cases = [c for c in cases if c["kind"] == kind and args.only in c["name"]]
    cases = [c for c in cases if not _missing_ops(c)]
    tf = peers.TFPeer.start(args.peers_python) if args.peers else None
    cols = ["minigraph", "unoptimized"] + (["TF sess", "tf.fn"] if tf else [])
    print(f"{'model':<22} {'batch':>6} {'steps':>9} " + " ".join(f"{c:>11}" for c in cols), end="")
    print(f" {'mg/best TF':>10}" if tf else "", end="")
    print(f" {'µs/iter':>8}" if args.control_flow else "")
    for case in cases:
        for batch in args.batch or ([1, 64] if args.control_flow else [1, 1024]):
            g, feeds, fetches = load(case, batch, fixtures)
            sess, plain = mg.Session(g), mg.Session(g, config=UNOPTIMIZED)
            got, want = sess.run(fetches, feeds), plain.run(fetches, feeds)
            for a, b in zip(got, want, strict=True):
                assert a.tobytes() == b.tobytes(), f"{case['name']}: the optimizer changed bits"
            contenders = [
                timer(name, lambda s=s, f=fetches, d=feeds: s.run(f, d), CALLS)
                for name, s in (("minigraph", sess), ("unoptimized", plain))
            ]
            peer = None
            if tf is not None:
                peer = tf.prepare(g, feeds, fetches)
                for mode, values in peer.outputs.items():
                    for a, b in zip(got, values, strict=True):
                        np.testing.assert_allclose(
                            a,
                            b,
                            rtol=max(case.get("rtol", 1e-5), 1e-4),
                            atol=1e-4,
                            err_msg=f"{case['name']}: TF {mode} differs",
                        )
                contenders.append(lambda p=peer: p.time(CALLS))
            for contender in contenders:  # a warm-up call each
                contender()
            t = interleaved_seconds(args.repeat, contenders, f"{case['name']} batch {batch}")
            if peer is not None:
                peer.release()
            names = ["minigraph", "unoptimized"] + (["session", "function"] if peer else [])
            line = f"{case['name']:<22} {batch:>6} {_steps(sess):>4}/{_steps(plain):<4} "
            line += " ".join(f"{np.median(t[n]) * 1e3:>11.3f}" for n in names)
            if peer is not None:
                best = [min(r) for r in zip(t["session"], t["function"])]
                line += f" {median_ratio(t['minigraph'], best):>10.2f}"
            if args.control_flow:
                line += f" {np.median(t['minigraph']) * 1e6 / LOOP_STEPS:>8.1f}"
            print(line)
    if tf is not None:
        tf.close()


if __name__ == "__main__":
    main()
