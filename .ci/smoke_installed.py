"""Smoke test of an installed minigraph: a wheel in a fresh venv, run outside the checkout.

    cd "$(mktemp -d)" && /fresh/venv/bin/python -I CHECKOUT/.ci/smoke_installed.py CHECKOUT

An editable install imports from the checkout, so it hides a module the wheel lacks
(minigraph.distributed once was). Here every module of the checkout's minigraph/ and ops/
must import from the install, ``minigraph --version`` must be the package's version, and
each extra's feature must run from it: tensorboard (GraphDef export and import, an event
file, ``minigraph check``), distributed (map_batches, a DaskExecutor session, ``minigraph
run --dask``), jit (a fused chain compiled, with NumPy's bits), test (pytest and
hypothesis); cuda12/cuda13 are declared, and without CuPy asking for a GPU is an
UnavailableError. Prints one line per check; exits 1 on the first
failure.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


def checkout_modules(root: Path) -> list[str]:
    """Every module of the checkout as it installs: minigraph/** and ops/** (minigraph.ops)."""
    names = []
    for top, package in (("minigraph", "minigraph"), ("ops", "minigraph.ops")):
        for path in sorted((root / top).rglob("*.py")):
            parts = list(path.relative_to(root / top).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            names.append(".".join([package, *parts]))
    return names


def check_modules(root: Path) -> None:
    names = checkout_modules(root)
    for name in names:
        try:
            module = importlib.import_module(name)
        except ImportError as e:
            raise SystemExit(
                f"{name} does not import from the install (missing from the wheel?): {e}"
            ) from None
        where = Path(module.__file__ or "").resolve()
        if root.resolve() in where.parents:
            raise SystemExit(f"{name} was imported from the checkout ({where}), not the install")
    print(f"ok: all {len(names)} modules of minigraph/ and ops/ import from the install")


def check_version(bin_dir: Path) -> None:
    import minigraph as mg

    installed = importlib.metadata.version("minigraph")
    out = subprocess.run(
        [str(bin_dir / "minigraph"), "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    if not (installed == mg.__version__ and out == f"minigraph {installed}"):
        raise SystemExit(f"versions differ: {installed}, {mg.__version__}, {out!r}")
    print(f"ok: minigraph --version, mg.__version__ and the metadata say {installed}")


def _graph():
    import minigraph as mg

    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, 3], name="x")
        mg.identity(mg.reduce_sum(x * 2.0 + 1.0, axis=1), name="y")
    return g


def _expected(x: np.ndarray) -> np.ndarray:
    return (x * 2.0 + 1.0).sum(axis=1)


def check_tensorboard(tmp: Path, bin_dir: Path) -> None:
    import minigraph as mg

    g = _graph()
    path = mg.write_graph(g, str(tmp), "g.pb")
    h = mg.Graph()
    with h.as_default():
        (y,) = mg.import_graph_def(path, return_elements=["y:0"], name="")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(mg.Session(h).run(y, {"x:0": x}), _expected(x))
    with mg.summary.FileWriter(str(tmp / "logs"), g):
        pass
    if not list((tmp / "logs").glob("events.out.tfevents.*")):
        raise SystemExit("FileWriter wrote no event file")
    subprocess.run([str(bin_dir / "minigraph"), "check", path], check=True, capture_output=True)
    print("ok: tensorboard extra: write_graph, import_graph_def, FileWriter, minigraph check")


def check_distributed(tmp: Path, bin_dir: Path) -> None:
    import dask.array as da
    import distributed

    import minigraph as mg
    from minigraph.distributed import DaskExecutor, map_batches

    g = _graph()
    x, y = g.get_tensor_by_name("x:0"), g.get_tensor_by_name("y:0")
    data = np.arange(24, dtype=np.float32).reshape(8, 3)
    lazy = map_batches(g, y, {x: da.from_array(data, chunks=(4, 3))}, client=None)
    np.testing.assert_array_equal(lazy.compute(scheduler="sync"), _expected(data))
    with distributed.Client(processes=False, n_workers=1, dashboard_address=":0") as client:
        got = mg.Session(g, executor=DaskExecutor(client)).run(y, {x: data})
    np.testing.assert_array_equal(got, _expected(data))
    (tmp / "g.json").write_text(g.to_json())
    np.save(tmp / "x.npy", data)
    cmd = ["run", str(tmp / "g.json"), "--feed", f"x={tmp / 'x.npy'}", "--fetch", "y:0"]
    subprocess.run(
        [str(bin_dir / "minigraph"), *cmd, "--dask", "--out", str(tmp / "o.npz")],
        check=True,
        capture_output=True,
    )
    np.testing.assert_array_equal(np.load(tmp / "o.npz")["y:0"], _expected(data))
    print("ok: distributed extra: map_batches, DaskExecutor, minigraph run --dask")


def check_jit() -> None:
    import minigraph as mg

    rng = np.random.default_rng(0)
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, 64], name="x")
        y = mg.nn.relu6(x * rng.random(64, np.float32) + 1)
    data = rng.standard_normal((4096, 64)).astype(np.float32)
    results = []
    for enabled in (True, False):
        mg.config.set_jit(enabled)
        results.append(mg.Session(g).run(y, {x: data}))
    mg.config.set_jit(None)
    if "numba" not in sys.modules:
        raise SystemExit("the jit extra is installed, but no chain was compiled")
    if results[0].tobytes() != results[1].tobytes():
        raise SystemExit("a compiled chain's bits differ from NumPy's")
    print("ok: jit extra: a fused chain compiled by Numba, NumPy's bits")


def check_test_and_cuda_extras() -> None:
    import hypothesis  # noqa: F401
    import pytest  # noqa: F401

    import minigraph as mg

    requires = importlib.metadata.requires("minigraph") or []
    for extra, package in (("cuda12", "cupy-cuda12x"), ("cuda13", "cupy-cuda13x")):
        if not any(r.startswith(package) and f'extra == "{extra}"' in r for r in requires):
            raise SystemExit(f"the {extra} extra does not require {package}: {requires}")
    try:
        importlib.import_module("cupy")
        print("ok: test extra; cupy is installed, so the no-GPU path is not checked here")
        return
    except ImportError:
        pass
    g = _graph()
    try:
        mg.Session(g, device="/gpu:0").run("y:0", {"x:0": np.ones((1, 3), np.float32)})
    except mg.errors.UnavailableError:
        pass
    else:
        raise SystemExit("a GPU session ran without CuPy")
    print("ok: test extra; cuda12/cuda13 declared; no CuPy: asking for a GPU is UnavailableError")


def main() -> None:
    root = Path(sys.argv[1])
    bin_dir = Path(sys.executable).parent
    check_modules(root)
    check_version(bin_dir)
    with tempfile.TemporaryDirectory() as tmp:
        check_tensorboard(Path(tmp), bin_dir)
        check_distributed(Path(tmp), bin_dir)
    check_jit()
    check_test_and_cuda_extras()


if __name__ == "__main__":
    main()
