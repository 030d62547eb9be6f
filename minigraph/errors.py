"""Error types, named as TensorFlow's.

Every error raised while building or running a graph is an :class:`OpError`
that carries the name and type of the node it concerns, and whose message names
that node. OpErrors pickle with all three, so a remote worker can raise one
that reads the same on the client.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "short_repr",
    "OpError",
    "InvalidArgumentError",
    "NotFoundError",
    "NoGradientError",
    "OutOfRangeError",
    "ResourceExhaustedError",
    "FailedPreconditionError",
    "UnimplementedError",
    "UnavailableError",
    "InternalError",
    "DataLossError",
]


class OpError(Exception):
    """Base class of every minigraph error about a node.

    Attributes:
        message: what went wrong, without the node.
        node_name: the node's name ("" when no node is concerned).
        op_type: the node's op type ("" when unknown).
    """

    def __init__(self, message: str, node_name: str = "", op_type: str = "") -> None:
        self.message = message
        self.node_name = node_name
        self.op_type = op_type
        super().__init__(self._format())

    def _format(self) -> str:
        if not self.node_name:
            return self.message
        kind = f" ({self.op_type})" if self.op_type else ""
        return f"{self.message} [node '{self.node_name}'{kind}]"

    def __reduce__(self):
        return (type(self), (self.message, self.node_name, self.op_type))


class InvalidArgumentError(OpError):
    """An input, attr or fed value is wrong for the op."""


class NotFoundError(OpError):
    """Something looked up by name (a tensor, an op, a kernel) does not exist."""


class NoGradientError(NotFoundError, LookupError):
    """An op on the path of ``mg.gradients`` has no gradient function (TensorFlow raises a
    LookupError, which this is too)."""


class OutOfRangeError(OpError):
    """An iteration went past its end."""


class ResourceExhaustedError(OpError):
    """An output is too large to count, index or allocate."""


class FailedPreconditionError(OpError):
    """The system is not in a state where the operation can run."""


class UnimplementedError(OpError):
    """The operation is not supported (for this dtype or device)."""


class UnavailableError(OpError):
    """A device (for example a GPU) that was asked for is not there."""


class InternalError(OpError):
    """A bug in minigraph: a kernel broke an invariant."""


class DataLossError(OpError):
    """A file's bytes are corrupt or cut short (a checkpoint's checksum, a truncated table)."""


def short_repr(value: Any, n: int = 80) -> str:
    """``value`` for a message, cut to ``n`` characters (an int too long for repr() too)."""
    try:
        text = value if isinstance(value, str) else repr(value)
    except ValueError:  # Python's limit on an int's digits
        if isinstance(value, int):
            text = f"<an int of about {int(value.bit_length() * 0.30103)} digits>"
        else:
            text = f"<a {type(value).__name__} holding an int too long to print>"
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= n else text[: n - 3] + "..."
