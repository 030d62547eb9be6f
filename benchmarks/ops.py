"""The documented ops on large inputs, against a data-movement floor and plain NumPy.

    python benchmarks/ops.py [--repeat 3] [--only stitch]
    python benchmarks/ops.py --peers [--peers-python /path/to/tf/venv/bin/python]

For each case: the median time of Session.run (inputs fed, so nothing is folded or cached),
of the obvious NumPy formulation, and of the floor: np.copyto of the op's output bytes into
a preallocated array. Reported as ratios to the floor (lower is better), the same measure
as ../shared/performance.md's table of TensorFlow, NumPy, PyTorch and JAX. After one
warm-up call each, the contenders are timed in rounds, one call each per round
(timing.interleaved_seconds), so a drift in the VM's speed falls on all of them alike.

With ``--peers``, TensorFlow runs each case's graph in the same run (benchmarks/peers.py:
exported with ``Graph.as_graph_def()``, timed in a worker process with tf.compat.v1.Session
and as a concrete function); its outputs are checked against minigraph's like NumPy's.
Without TensorFlow (or the ``tensorboard`` extra) the script says so and skips those columns.
The column mg/best is minigraph's time over the best peer's (NumPy, TF Session,
tf.function) in the same round, the median over the rounds; "led" counts the rounds in
which minigraph was the fastest.
minigraph and TensorFlow are fed the same 64-byte-aligned copies of the inputs (TensorFlow
copies any other); NumPy's formulation reads the arrays as NumPy made them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import peers
from timing import interleaved_seconds, median_ratio, timer

import minigraph as mg

MB = 2**20


def _floor_timer(nbytes: int) -> Callable[[], dict[str, float]]:
    """One timed np.copyto of ``nbytes`` into a preallocated array: the case's floor."""
    src = np.ones(nbytes // 4, np.float32)
    dst = np.empty_like(src)
    np.copyto(dst, src)  # the warm-up: both arrays' pages are mapped
    return timer("floor", lambda: np.copyto(dst, src))


@dataclass
class Case:
    name: str
    # -> (fetch, feeds, numpy fn[, positions whose value is unspecified: duplicate writes])
    build: Callable[[], tuple[Any, ...]]


def _placeholders(*arrays: np.ndarray) -> list[Any]:
    return [mg.placeholder(mg.as_dtype(a.dtype), shape=a.shape) for a in arrays]


def s2b_case(padding: bool) -> Case:
    def build():
        x = np.random.default_rng(0).standard_normal((16, 512, 512, 16), np.float32)  # 256 MB
        pads = [[1, 1], [3, 1]] if padding else [[0, 0], [0, 0]]
        (px,) = _placeholders(x)
        y = mg.space_to_batch_nd(px, [2, 4], pads)

        def numpy_s2b():
            p = np.pad(x, [(0, 0), *pads, (0, 0)])
            b, h, w, c = p.shape
            r = p.reshape(b, h // 2, 2, w // 4, 4, c).transpose(2, 4, 0, 1, 3, 5)
            return r.reshape(b * 8, h // 2, w // 4, c)

        return y, {px: x}, numpy_s2b

    return Case(f"space_to_batch_nd, {'padding' if padding else 'no padding'}", build)


def b2s_case(crop: bool) -> Case:
    def build():
        x = np.random.default_rng(0).standard_normal((128, 256, 128, 16), np.float32)
        crops = [[1, 1], [3, 1]] if crop else [[0, 0], [0, 0]]
        (px,) = _placeholders(x)
        y = mg.batch_to_space_nd(px, [2, 4], crops)

        def numpy_b2s():
            b, h, w, c = x.shape
            r = x.reshape(2, 4, b // 8, h, w, c).transpose(2, 3, 0, 4, 1, 5)
            r = r.reshape(b // 8, h * 2, w * 4, c)
            return r[:, crops[0][0] : h * 2 - crops[0][1], crops[1][0] : w * 4 - crops[1][1]]

        return y, {px: x}, lambda: np.ascontiguousarray(numpy_b2s())

    return Case(f"batch_to_space_nd, {'crop' if crop else 'no crop'}", build)


def stitch_case(lists: int, duplicates: bool = False, parallel: bool = False) -> Case:
    def build():
        rng = np.random.default_rng(0)
        rows, width = 4 * MB, 16  # 256 MB of float32 output
        if duplicates:
            idx = [rng.integers(0, rows, rows // lists).astype(np.int32) for _ in range(lists)]
            idx[0] = np.arange(rows, dtype=np.int32)[: rows // lists]
            idx.append(np.arange(rows, dtype=np.int32))  # make every row present
        else:
            perm = rng.permutation(rows).astype(np.int32)
            idx = np.array_split(perm, lists)
        data = [rng.standard_normal((len(i), width), np.float32) for i in idx]
        pi = _placeholders(*idx)
        pd = _placeholders(*data)
        fn = mg.parallel_dynamic_stitch if parallel else mg.dynamic_stitch
        y = fn(pi, pd)

        def numpy_stitch():
            out = np.zeros((rows, width), np.float32)
            for i, d in zip(idx, data):
                out[i] = d
            return out

        return y, dict(zip(pi + pd, idx + data)), numpy_stitch

    kind = "parallel_dynamic_stitch" if parallel else "dynamic_stitch"
    return Case(f"{kind}, {lists} lists{', duplicates' if duplicates else ''}", build)


def partition_case(n: int, parts: int, width: int | None) -> Case:
    def build():
        rng = np.random.default_rng(0)
        shape = (n,) if width is None else (n, width)
        x = rng.standard_normal(shape, np.float32)
        p = rng.integers(0, parts, n).astype(np.int32)
        px, pp = _placeholders(x, p)
        ys = mg.dynamic_partition(px, pp, parts)
        return ys, {px: x, pp: p}, lambda: [x[p == k] for k in range(parts)]

    shape = f"{n // MB}M" + ("" if width is None else f" x {width} rows")
    return Case(f"dynamic_partition {shape} into {parts}", build)


def partition_stitch_case(parts: int) -> Case:
    def build():
        rng = np.random.default_rng(0)
        n = 16 * MB
        x = rng.standard_normal(n).astype(np.float32)
        p = rng.integers(0, parts, n).astype(np.int32)
        px, pp = _placeholders(x, p)
        data = mg.dynamic_partition(px, pp, parts)
        pos = mg.dynamic_partition(mg.range(mg.shape(px)[0]), pp, parts)
        y = mg.dynamic_stitch(pos, data)

        def numpy_version():
            out = np.empty_like(x)
            positions = np.arange(n, dtype=np.int32)
            for k in range(parts):
                m = p == k
                out[positions[m]] = x[m]
            return out

        return y, {px: x, pp: p}, numpy_version

    return Case(f"partition then stitch, {parts} parts", build)


_AT = {"add": np.add, "sub": np.subtract, "min": np.minimum, "max": np.maximum}


def _index_rows(rng: np.random.Generator, rows: int, width: int, n: int, elements: bool) -> Any:
    """n int32 index rows into [rows, width]: of depth 2 (single elements) or 1 (rows)."""
    if elements:
        idx = np.stack([rng.integers(0, rows, n), rng.integers(0, width, n)], 1)
    else:
        idx = rng.integers(0, rows, (n, 1))
    return idx.astype(np.int32)


def _duplicate_positions(idx: np.ndarray, shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """The positions that more than one index row writes (index arrays, as for ``a[pos]``)."""
    flat = np.ravel_multi_index(tuple(idx.T), shape[: idx.shape[1]])
    u, counts = np.unique(flat, return_counts=True)
    return np.unravel_index(u[counts > 1], shape[: idx.shape[1]])


def scatter_case(op: str, elements: bool) -> Case:
    """TensorScatter{op}, or ScatterNd for op "scatter_nd" (into zeros of the same shape)."""

    def build():
        rng = np.random.default_rng(0)
        rows, width, n = 4 * MB, 16, MB
        t = rng.standard_normal((rows, width), np.float32)
        idx = _index_rows(rng, rows, width, n, elements)
        upd = rng.standard_normal(n if elements else (n, width), np.float32)
        if op == "scatter_nd":
            pi, pu = _placeholders(idx, upd)
            y, feeds = mg.scatter_nd(pi, pu, list(t.shape)), {pi: idx, pu: upd}
        else:
            pt, pi, pu = _placeholders(t, idx, upd)
            y = getattr(mg, f"tensor_scatter_nd_{op}")(pt, pi, pu)
            feeds = {pt: t, pi: idx, pu: upd}

        def numpy_version():
            out = np.zeros_like(t) if op == "scatter_nd" else t.copy()
            key = tuple(idx.T)
            if op == "update":
                out[key] = upd
            else:
                _AT.get(op, np.add).at(out, key, upd)
            return out

        dups = _duplicate_positions(idx, t.shape) if op == "update" else None
        return y, feeds, numpy_version, dups

    what = "1M elements" if elements else "1M rows"
    name = "scatter_nd" if op == "scatter_nd" else f"tensor_scatter_nd_{op}"
    return Case(f"{name}, {what} into [4M,16]", build)


def gather_case(elements: bool) -> Case:
    def build():
        rng = np.random.default_rng(0)
        rows, width, n = 4 * MB, 16, MB
        params = rng.standard_normal((rows, width), np.float32)
        idx = _index_rows(rng, rows, width, n, elements)
        pp, pi = _placeholders(params, idx)
        y = mg.gather_nd(pp, pi)
        return y, {pp: params, pi: idx}, lambda: params[tuple(idx.T)]

    return Case(f"gather_nd, {'1M elements' if elements else '1M rows'} from [4M,16]", build)


def elementwise_chain_case(ops: int) -> Case:
    """Alternating multiply-adds and a sqrt: minigraph fuses them into one step (its
    elementwise fusion); NumPy's best is in place after the first op."""

    def build():
        x = np.random.default_rng(0).random((64 * 1024, 1024), np.float32)  # 256 MB
        (px,) = _placeholders(x)
        a, b = np.float32(1.0001), np.float32(0.5)
        y = px
        for i in range(ops - 1):
            y = y * a if i % 2 == 0 else y + b
        y = mg.sqrt(y)

        def numpy_in_place():
            out = np.multiply(x, a)
            for i in range(1, ops - 1):
                np.multiply(out, a, out=out) if i % 2 == 0 else np.add(out, b, out=out)
            return np.sqrt(out, out=out)

        return y, {px: x}, numpy_in_place

    return Case(f"elementwise chain, {ops} ops on [64M] float32", build)


CASES = [
    s2b_case(False),
    s2b_case(True),
    b2s_case(False),
    b2s_case(True),
    stitch_case(2),
    stitch_case(8),
    stitch_case(8, duplicates=True),
    stitch_case(8, parallel=True),
    partition_case(16 * MB, 2, None),
    partition_case(16 * MB, 16, None),
    partition_case(4 * MB, 8, 16),
    partition_stitch_case(8),
    scatter_case("update", False),
    scatter_case("update", True),
    scatter_case("add", False),
    scatter_case("add", True),
    scatter_case("sub", False),
    scatter_case("min", False),
    scatter_case("max", True),
    scatter_case("scatter_nd", False),
    gather_case(False),
    gather_case(True),
    elementwise_chain_case(10),
]


def _nbytes(value: Any) -> int:
    return sum(v.nbytes for v in value) if isinstance(value, list) else value.nbytes


def _check(name: str, got: Any, other: Any, dups: Any) -> None:
    """``other`` (NumPy's or TensorFlow's) equals ``got`` (minigraph's), up to float rounding.

    Float sums may round differently. Where several index rows write one position (scatter
    update with duplicates) the winner is unspecified in NumPy and TensorFlow, so those
    positions are taken from minigraph's result before comparing (``other`` is modified).
    """
    pairs = list(zip(got, other)) if isinstance(got, list) else [(got, other)]
    for a, b in pairs:
        if dups is not None:
            b[dups] = a[dups]
        assert a.shape == b.shape and a.dtype == b.dtype, f"{name}: wrong shape or dtype"
        assert np.allclose(a, b), f"{name}: wrong result"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    peers.add_arguments(parser)
    args = parser.parse_args()
    tf = peers.TFPeer.start(args.peers_python) if args.peers else None
    head = f"{'case':<52} {'floor ms':>9} {'minigraph':>10} {'numpy':>7}"
    if tf is not None:
        head += f" {'TF sess':>8} {'tf.fn':>7} {'mg/best':>8} {'led':>6}"
    print(head, flush=True)
    for case in CASES:
        if args.only not in case.name:
            continue
        g = mg.Graph()
        with g.as_default():
            fetch, feeds, numpy_fn, *rest = case.build()
        dups = rest[0] if rest else None
        feeds = {k: peers.aligned(v) for k, v in feeds.items()}  # as TensorFlow is fed
        sess = mg.Session(g)
        result = sess.run(fetch, feeds)
        _check(case.name, result, numpy_fn(), dups)
        contenders = [
            _floor_timer(_nbytes(result)),
            timer("minigraph", lambda sess=sess, fetch=fetch, feeds=feeds: sess.run(fetch, feeds)),
            timer("numpy", numpy_fn),
        ]
        peer = None
        if tf is not None:
            fetches = fetch if isinstance(fetch, list) else [fetch]
            peer = tf.prepare(g, feeds, fetches)
            for mode, values in peer.outputs.items():
                _check(
                    f"{case.name} (TF {mode})",
                    result,
                    values if isinstance(fetch, list) else values[0],
                    dups,
                )
            peer.outputs.clear()
            contenders.append(peer.time)
        t = interleaved_seconds(args.repeat, contenders, case.name)
        if peer is not None:
            peer.release()
        floor = float(np.median(t.pop("floor")))
        med = {name: float(np.median(v)) for name, v in t.items()}
        line = f"{case.name:<52} {floor * 1e3:>9.1f}"
        line += f" {med['minigraph'] / floor:>10.1f} {med['numpy'] / floor:>7.1f}"
        if peer is not None:
            others = [v for name, v in t.items() if name != "minigraph"]
            best = [min(round_) for round_ in zip(*others)]
            line += f" {med['session'] / floor:>8.1f} {med['function'] / floor:>7.1f}"
            led = sum(m < b for m, b in zip(t["minigraph"], best))
            line += f" {median_ratio(t['minigraph'], best):>8.2f} {f'{led}/{len(best)}':>6}"
        print(line, flush=True)
        del result, fetch, feeds, sess, g
    if tf is not None:
        tf.close()


if __name__ == "__main__":
    main()
