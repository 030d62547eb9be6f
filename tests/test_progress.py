"""minigraph.progress: one line redrawn in place on a terminal, nothing anywhere else."""

import io
import threading

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
