"""A one-line progress counter for long work, drawn only on a terminal.

    with Progress("trace", total=100, unit="runs") as bar:
        for _ in range(100):
            ...
            bar.update()

It writes ``trace: 40/100 runs (40%), 2.1 s`` on stderr, redrawn in place, and erases it
when the work ends, so the lines printed after it (a table row, a summary) read as if it
had never been there. Nothing is written when stderr is not a terminal (a pipe, a file, a
CI log, pytest's capture) or before ``delay`` seconds have passed, so short work stays
silent. It is a built-in helper rather than a dependency (tqdm, rich) because one line is
all minigraph needs. Updates may come from any thread (Dask calls back from its own).
"""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import TextIO

__all__ = ["Progress", "DELAY", "enabled_for"]

# Seconds of work before the line first appears: work shorter than this prints nothing.
DELAY = 0.5
# At most this many redraws a second (a terminal write per update would slow short steps).
RATE = 10.0


def enabled_for(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal, the only place a line redrawn in place belongs."""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):  # a closed or detached stream
        return False


class Progress:
    """Counts ``done`` out of ``total`` and shows it on one terminal line; see the module.

    ``stream`` defaults to ``sys.stderr`` as it is when the Progress is made; ``enabled``
    defaults to whether that stream is a terminal. ``close`` (or leaving the ``with``
    block) erases the line. Thread-safe: ``update`` takes a lock.
    """

    def __init__(
        self,
        label: str,
        total: int,
        unit: str = "",
        *,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        delay: float | None = None,
    ) -> None:
        self.label = label
        self.total = max(int(total), 0)
        self.unit = unit
        self.done = 0
        self._stream = sys.stderr if stream is None else stream
        self._enabled = enabled_for(self._stream) if enabled is None else enabled
        self._delay = DELAY if delay is None else delay
        self._start = time.monotonic()
        self._last_draw = float("-inf")
        self._drawn = 0  # width of what is on the line now (0: nothing shown)
        self._closed = False
        self._lock = threading.Lock()

    def text(self) -> str:
        """The line as it would be drawn now."""
        unit = f" {self.unit}" if self.unit else ""
        pct = f" ({100 * self.done // self.total}%)" if self.total else ""
        elapsed = time.monotonic() - self._start
        return f"{self.label}: {self.done}/{self.total}{unit}{pct}, {elapsed:.1f} s"

    def update(self, n: int = 1) -> None:
        """Count ``n`` more units done (never past ``total``) and redraw if it is time."""
        with self._lock:
            if self._closed:
                return
            self.done = min(self.done + n, self.total)
            if not self._enabled:
                return
            now = time.monotonic()
            if now - self._start < self._delay:
                return
            if self.done < self.total and now - self._last_draw < 1.0 / RATE:
                return
            self._last_draw = now
            self._write(self.text())

    def close(self) -> None:
        """Erase the line (if one was drawn); later updates are ignored."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._drawn:
                self._write("")

    def _write(self, text: str) -> None:
        pad = " " * max(self._drawn - len(text), 0)  # covers a longer earlier line
        try:
            self._stream.write(f"\r{text}{pad}" + ("\r" if not text else ""))
            self._stream.flush()
        except (OSError, ValueError):  # the terminal went away: the work goes on
            self._enabled = False
            return
        self._drawn = len(text)

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
