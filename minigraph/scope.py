"""Scope, as TensorFlow's C++ ``Scope``, and the thread-local default-scope stack.

A Scope is an immutable value: a graph, a name prefix, an optional name for
the next op, a device and control dependencies. Every ``with_*`` method returns
a new Scope. The Python builders take the Scope on top of a thread-local stack,
which ``with g.as_default()``, ``mg.name_scope``, ``mg.device``,
``mg.control_dependencies`` and ``with scope:`` push and pop.

Naming rules (TensorFlow's): an op is named ``prefix/name``; a name already in
use in the graph gets ``_1``, ``_2``... appended; sub-scope names are made
unique the same way, so ``new_sub_scope("a")`` twice gives ``a`` and ``a_1``.

Lifetime and thread-safety: a Scope keeps its graph alive. Scopes are safe to
share between threads; the default stack is per thread.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from .devices import DeviceSpec, parse_device
from .graph import Graph, Node, Operation, Output, provide

__all__ = [
    "Scope",
    "current_scope",
    "default_scope",
    "name_scope",
    "device",
    "control_dependencies",
    "get_default_graph",
    "reset_default_graph",
]


@dataclass(frozen=True)
class Scope:
    """Where the next op goes: graph, name prefix, device and control dependencies.

    >>> import minigraph as mg
    >>> root = mg.Scope.new_root_scope()
    >>> layer = root.new_sub_scope("layer")
    >>> mg.ops.Const(layer.with_op_name("w"), 1.0).output.name
    'layer/w:0'
    """

    graph: Graph
    prefix: str = ""
    op_name: str | None = None
    device_spec: DeviceSpec = DeviceSpec()
    control_deps: tuple[Node, ...] = ()

    @staticmethod
    def new_root_scope() -> Scope:
        """A Scope on a new, empty Graph."""
        return Scope(Graph())

    @staticmethod
    def _root(graph: Graph) -> Scope:
        return Scope(graph)

    def new_sub_scope(self, name: str) -> Scope:
        """A child scope whose ops are named ``prefix/name/...`` (name made unique)."""
        if not name:
            return replace(self, op_name=None)
        if name.endswith("/"):  # an absolute scope name, as tf.name_scope("a/") re-enters
            return replace(self, prefix=name.rstrip("/"), op_name=None)
        full = f"{self.prefix}/{name}" if self.prefix else name
        return replace(self, prefix=self.graph.unique_name(full), op_name=None)

    def with_op_name(self, name: str) -> Scope:
        """The same scope, naming the next op ``name`` (made unique in the graph)."""
        return replace(self, op_name=name)

    def with_device(self, spec: str | DeviceSpec | None) -> Scope:
        """Ops created under the result request this device (merged over the current one)."""
        if spec is None:
            return replace(self, device_spec=DeviceSpec())
        if not isinstance(spec, str | DeviceSpec):
            raise TypeError(
                f"device_name_or_function must be a str, a DeviceSpec or None, got "
                f"{type(spec).__name__}"
            )
        new = spec if isinstance(spec, DeviceSpec) else parse_device(spec)
        return replace(self, device_spec=self.device_spec.merge(new))

    def with_control_dependencies(self, ops: Iterable[Any] | None) -> Scope:
        """Ops created under the result run after ``ops`` (None clears the dependencies)."""
        if ops is None:
            return replace(self, control_deps=())
        nodes = list(self.control_deps)
        for op in ops:
            node = _as_node(op)
            if node not in nodes:
                nodes.append(node)
        return replace(self, control_deps=tuple(nodes))

    @property
    def device(self) -> str:
        return self.device_spec.to_string()

    def unique_op_name(self, default: str) -> str:
        """Reserve the name of the next op: ``op_name`` if set, else ``default``."""
        base = self.op_name or default
        return self.graph.unique_name(f"{self.prefix}/{base}" if self.prefix else base)

    def __enter__(self) -> Scope:
        _stack().append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _stack().pop()


def _as_node(op: Any) -> Node:
    if isinstance(op, Operation):
        return op.node
    if isinstance(op, Output):
        return op.node
    if isinstance(op, Node):
        return op
    operation = getattr(op, "operation", None)
    if isinstance(operation, Operation):
        return operation.node
    raise TypeError(f"control dependency must be an Operation or Output, got {op!r}")


class _State(threading.local):
    def __init__(self) -> None:
        self.stack: list[Scope] = []


_state = _State()
_global_graph_lock = threading.Lock()
_global_graph: list[Graph] = [Graph()]


def _stack() -> list[Scope]:
    return _state.stack


def get_default_graph() -> Graph:
    """The graph builders use here: the innermost ``as_default()`` one, else the global one."""
    stack = _stack()
    return stack[-1].graph if stack else _global_graph[0]


def reset_default_graph() -> None:
    """Replace the global default graph with a new empty one."""
    with _global_graph_lock:
        _global_graph[0] = Graph()


def has_default_scope() -> bool:
    """Whether this thread is inside an ``as_default()`` (or another scope context)."""
    return bool(_stack())


def current_scope() -> Scope:
    stack = _stack()
    return stack[-1] if stack else Scope(_global_graph[0])


@contextlib.contextmanager
def default_scope(scope: Scope) -> Iterator[Scope]:
    stack = _stack()
    stack.append(scope)
    try:
        yield scope
    finally:
        stack.pop()


def name_scope(name: str | None) -> Any:
    """Context manager: builders inside it name their ops ``name/...``.

    >>> import minigraph as mg
    >>> with mg.Graph().as_default():
    ...     with mg.name_scope("outer"), mg.name_scope("inner"):
    ...         x = mg.constant(1.0, name="x")
    >>> x.name
    'outer/inner/x:0'
    """
    scope = current_scope()
    return default_scope(scope.new_sub_scope(name) if name else replace(scope, prefix=""))


def device(spec: str | None) -> Any:
    """Context manager: ops built inside it request this device ("/cpu:0", "/gpu:0")."""
    return default_scope(current_scope().with_device(spec))


def control_dependencies(ops: Iterable[Any] | None) -> Any:
    """Context manager: ops built inside it run after ``ops`` (None clears)."""
    return default_scope(current_scope().with_control_dependencies(ops))


provide("as_default", lambda graph: default_scope(Scope._root(graph)))
