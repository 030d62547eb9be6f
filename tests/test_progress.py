"""minigraph.progress: one line redrawn in place on a terminal, nothing anywhere else."""

import io
import threading
import time

import numpy as np
import pytest

from minigraph import progress
from minigraph.progress import Progress, enabled_for


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_sees_the_count_redrawn_then_erased(monkeypatch):
    monkeypatch.setattr(progress, "RATE", 1e9)  # every update draws
    term = Terminal()
    with Progress("trace", 4, "runs", stream=term, delay=0) as bar:
        for _ in range(4):
            bar.update()
    text = term.getvalue()
    frames = text.split("\r")
    assert [f.split(",")[0] for f in frames if f.strip()] == [
        "trace: 1/4 runs (25%)",
        "trace: 2/4 runs (50%)",
        "trace: 3/4 runs (75%)",
        "trace: 4/4 runs (100%)",
    ]
    # Erased at the end: spaces over the last frame, the cursor back at the line's start.
    last = next(f for f in reversed(frames) if f.strip())
    assert text.endswith("\r" + " " * len(last) + "\r")


def test_nothing_is_written_when_the_stream_is_not_a_terminal():
    pipe = io.StringIO()
    with Progress("trace", 3, "runs", stream=pipe, delay=0) as bar:
        for _ in range(3):
            bar.update()
    assert pipe.getvalue() == ""
    assert bar.done == 3
    assert not enabled_for(pipe)
    assert enabled_for(Terminal())


def test_short_work_stays_silent():
    term = Terminal()
    with Progress("trace", 3, stream=term, delay=60) as bar:
        bar.update(3)
    assert term.getvalue() == ""


def test_counts_never_pass_the_total_and_updates_after_close_are_ignored():
    term = Terminal()
    bar = Progress("chunks", 2, stream=term, delay=0)
    bar.update(5)
    assert bar.done == 2
    bar.close()
    written = term.getvalue()
    bar.update()
    bar.close()
    assert term.getvalue() == written


def test_a_longer_earlier_line_is_covered(monkeypatch):
    monkeypatch.setattr(progress, "RATE", 1e9)
    term = Terminal()
    bar = Progress("x", 1000, stream=term, delay=0)
    bar._write("a much longer line than the next")
    bar._write("short")
    assert term.getvalue().endswith("\rshort" + " " * (len("a much longer line than the next") - 5))


def test_a_closed_stream_turns_it_off():
    term = Terminal()
    bar = Progress("x", 2, stream=term, delay=0)
    term.close()
    bar.update()  # no ValueError from writing to the closed stream
    assert bar.done == 1


def test_updates_from_many_threads_are_all_counted():
    bar = Progress("x", 8000, stream=io.StringIO())
    threads = [
        threading.Thread(target=lambda: [bar.update() for _ in range(1000)]) for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bar.done == 8000


@pytest.mark.parametrize("total, text", [(0, "x: 0/0"), (3, "x: 0/3 (0%)")])
def test_text(total, text):
    assert Progress("x", total, stream=io.StringIO()).text().startswith(text + ",")


# -- map_batches: the chunks done, on the caller's terminal -----------------------------------


def _batches_graph():
    import minigraph as mg

    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, [None, 2], name="x")
        y = x * 2.0
    return g, x, y


@pytest.fixture
def terminal(monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "RATE", 1e9)
    monkeypatch.setattr(progress, "enabled_for", lambda stream: True)


def _frames(err):
    return [f.split(",")[0] for f in err.split("\r") if f.strip()]


def test_map_batches_counts_chunks_on_the_local_scheduler(terminal, capsys):
    da = pytest.importorskip("dask.array", reason="needs the 'distributed' extra")
    pytest.importorskip("distributed", reason="needs the 'distributed' extra")
    from minigraph.distributed import map_batches

    g, x, y = _batches_graph()
    feed = da.ones((8, 2), chunks=(2, 2), dtype="float32")
    out = map_batches(g, y, {x: feed}, client=None)
    np.testing.assert_array_equal(out.compute(scheduler="threads"), np.full((8, 2), 2.0))
    frames = _frames(capsys.readouterr().err)
    assert sorted(frames) == [f"map_batches: {i}/4 chunks ({25 * i}%)" for i in range(1, 5)]
    out.compute(scheduler="sync")  # each compute gets a line of its own
    assert _frames(capsys.readouterr().err)[-1] == "map_batches: 4/4 chunks (100%)"


def test_map_batches_shows_nothing_when_not_on_a_terminal(capsys):
    da = pytest.importorskip("dask.array", reason="needs the 'distributed' extra")
    pytest.importorskip("distributed", reason="needs the 'distributed' extra")
    from minigraph.distributed import map_batches
    from minigraph.distributed.batches import _progress

    g, x, y = _batches_graph()
    calls = len(_progress)
    out = map_batches(g, y, {x: da.ones((4, 2), chunks=(2, 2), dtype="float32")}, client=None)
    out.compute(scheduler="sync")
    assert capsys.readouterr().err == ""
    assert len(_progress) == calls  # no topic, no watcher


def test_map_batches_counts_chunks_from_worker_processes(terminal, capsys):
    distributed = pytest.importorskip("distributed", reason="needs the 'distributed' extra")
    import dask.array as da

    from minigraph.distributed import map_batches

    g, x, y = _batches_graph()
    with (
        distributed.LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",
            silence_logs=50,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        feed = da.ones((6, 2), chunks=(2, 2), dtype="float32")
        out = map_batches(g, y, {x: feed}, client=client)
        np.testing.assert_array_equal(out.compute(), np.full((6, 2), 2.0))
        err = ""
        deadline = time.monotonic() + 10  # the workers' events come after the results
        while "3/3" not in err and time.monotonic() < deadline:
            time.sleep(0.05)
            err += capsys.readouterr().err
    assert sorted(_frames(err)) == [
        f"map_batches: {i}/3 chunks ({100 * i // 3}%)" for i in (1, 2, 3)
    ]
