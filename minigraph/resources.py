"""State that outlives a run: a Session's resources (its variables), as TensorFlow's ResourceMgr.

A graph only describes variables; their values live in the Session that runs it, so two
Sessions of one graph each have their own, as in TensorFlow. Each LocalExecutor (one per
Session, and the executors of the function bodies its steps call) holds one
:class:`ResourceManager`, and kernels reach it as ``ctx.resources``: an op that makes a
resource (VarHandleOp) looks it up by name there, or creates it, and passes it on as a
handle. What a resource is belongs to the ops that use it (ops/variable_ops.py); the
runtime only keeps them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["ResourceManager"]

T = TypeVar("T")


class ResourceManager:
    """Resources by (container, name), shared by the threads that run a Session."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()

    def lookup_or_create(self, container: str, name: str, create: Callable[[], T]) -> T:
        """The resource named ``name`` in ``container``, made by ``create()`` the first time."""
        key = (container, name)
        item = self._items.get(key)
        if item is None:
            with self._lock:
                item = self._items.get(key)
                if item is None:
                    item = self._items[key] = create()
        return item

    def get(self, container: str, name: str) -> Any:
        """The resource named ``name`` in ``container``, or None when there is none yet."""
        return self._items.get((container, name))

    def names(self) -> list[tuple[str, str]]:
        """The (container, name) of every resource made so far."""
        with self._lock:
            return list(self._items)

    def clear(self) -> None:
        """Forget every resource (a closed Session's variables)."""
        with self._lock:
            self._items.clear()
