"""minigraph owns BLAS's thread count during runs (minigraph.blas): set, bounded, restored."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import minigraph as mg
from minigraph import blas, config
from minigraph.executor import LocalExecutor
from minigraph.registry import lookup_kernel, registered_ops

needs_blas = pytest.mark.skipif(
    not blas.available(),
    reason="no OpenBLAS whose thread count can be set is loaded (another BLAS, or none)",
)


class Recording(LocalExecutor):
    """Records the BLAS thread count in force while each run runs."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: list[int | None] = []

    def run(self, plan: Any, feed_values: Any, timings: Any = None) -> list[Any]:
        self.seen.append(blas.get_threads())
        return super().run(plan, feed_values, timings)


@pytest.fixture
def caller_threads() -> Iterator[int]:
    """The caller's BLAS count set to 4 for the test (so that 1..3 are visible), and every
    setting put back after it."""
    before = blas.get_threads()
    blas.set_threads(4)
    setting = config.blas_threads()
    try:
        yield 4
    finally:
        config.set_blas_threads(setting)
        if before is not None:
            blas.set_threads(before)


def _matmul_graph() -> tuple[mg.Graph, Any, Any]:
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, 3], name="x")
        y = mg.matmul(x, np.ones((3, 2), np.float32))
    return g, x, y


def _run(config_proto: mg.ConfigProto | None = None, graph: Any = None) -> list[int | None]:
    g, x, y = graph or _matmul_graph()
    ex = Recording()
    sess = mg.Session(g, executor=ex, config=config_proto)
    sess.run(y, {x: np.ones((2, 3), np.float32)})
    return ex.seen


@needs_blas
def test_default_is_one_thread_in_runs_and_restored(caller_threads: int) -> None:
    config.set_blas_threads(None)
    assert _run() == [1]
    assert blas.get_threads() == caller_threads


@needs_blas
def test_intra_op_parallelism_threads_bounds_it(caller_threads: int) -> None:
    config.set_blas_threads(3)
    assert _run() == [3]
    assert _run(mg.ConfigProto(intra_op_parallelism_threads=2)) == [2]
    config.set_blas_threads(None)
    assert _run(mg.ConfigProto(intra_op_parallelism_threads=2)) == [1]
    assert blas.get_threads() == caller_threads


@needs_blas
def test_never_more_than_the_callers_count(caller_threads: int) -> None:
    blas.set_threads(2)
    config.set_blas_threads(3)
    assert _run() == [2]
    assert blas.get_threads() == 2


@needs_blas
def test_native_leaves_blas_alone(caller_threads: int) -> None:
    config.set_blas_threads(0)
    assert _run() == [caller_threads]


@needs_blas
def test_plans_without_blas_ops_leave_it_alone(caller_threads: int) -> None:
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, 3], name="x")
        y = x * 2.0
    assert _run(graph=(g, x, y)) == [caller_threads]


@needs_blas
def test_a_failed_run_restores_it(caller_threads: int) -> None:
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, None, name="x")
        y = mg.matmul(x, np.ones((3, 2), np.float32))
    with mg.Session(g) as sess, pytest.raises(mg.errors.InvalidArgumentError):
        sess.run(y, {x: np.ones((2, 4), np.float32)})  # the kernel finds the shapes wrong
    assert blas.get_threads() == caller_threads


@needs_blas
def test_runs_in_flight_share_the_smallest_count(caller_threads: int) -> None:
    blas.enter(3)
    assert blas.get_threads() == 3
    blas.enter(1)
    assert blas.get_threads() == 1
    blas.enter(3)
    blas.leave(1)  # the two runs asking 3 are left
    assert blas.get_threads() == 3
    blas.leave(3)
    assert blas.get_threads() == 3
    blas.leave(3)
    assert blas.get_threads() == caller_threads


@needs_blas
def test_concurrent_runs_restore_the_callers_count(caller_threads: int) -> None:
    g, x, y = _matmul_graph()
    sess = mg.Session(g)
    feed = {x: np.ones((64, 3), np.float32)}

    def work() -> None:
        for _ in range(200):
            sess.run(y, feed)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert blas.get_threads() == caller_threads


@needs_blas
def test_set_threads_returns_the_previous_count(caller_threads: int) -> None:
    assert blas.set_threads(2) == caller_threads
    assert blas.get_threads() == 2
    with pytest.raises(ValueError):
        blas.set_threads(0)


def test_every_matrix_product_kernel_counts_as_blas() -> None:
    """A new op whose CPU kernel lives beside MatMul or Conv2D must match the rule, or its
    runs would use BLAS's own threads."""
    for name in registered_ops():
        try:
            kernel = lookup_kernel(name, "CPU")
        except mg.errors.OpError:
            continue
        module = getattr(kernel, "__module__", "")
        if module.endswith(("linalg_ops", "conv_ops", "conv3d_ops")) and "Pool" not in name:
            assert blas.may_call_blas(name, {}), name
    assert not blas.may_call_blas("AddV2", {"T": mg.float32})


def test_set_blas_threads_checks_its_argument() -> None:
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(ValueError):
            config.set_blas_threads(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "want"), [("", None), ("auto", None), ("native", 0), ("0", 0), ("3", 3)]
)
def test_environment_setting(monkeypatch: pytest.MonkeyPatch, raw: str, want: int | None) -> None:
    monkeypatch.setenv("MINIGRAPH_BLAS_THREADS", raw)
    assert config._env_blas_threads() == want


def test_environment_setting_refuses_nonsense(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINIGRAPH_BLAS_THREADS", "many")
    with pytest.raises(ValueError, match="MINIGRAPH_BLAS_THREADS"):
        config._env_blas_threads()


def test_import_looks_nothing_up_and_changes_nothing() -> None:
    code = (
        "import numpy, sys\n"
        "import minigraph, minigraph.blas as b\n"
        "assert b._found is None, 'looked up at import'\n"
        "print(b.get_threads())\n"
    )
    env_threads = "1"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**__import__("os").environ, "OPENBLAS_NUM_THREADS": env_threads},
    )
    assert out.stderr == ""
    if blas.available():
        assert out.stdout.strip() == env_threads
