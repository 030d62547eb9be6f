"""Partial tensor shapes, as TensorFlow's shape inference sees them.

A :class:`TensorShape` has an unknown rank (``dims is None``) or a tuple of dims,
each an ``int`` or ``None`` when unknown. The helpers at the bottom
(``with_rank``, ``merge``, ``broadcast``...) write the unknown-dim handling once
for every shape function; they raise :class:`ShapeError` with TensorFlow's
wording, which node creation turns into an InvalidArgumentError naming the node.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .errors import short_repr

__all__ = ["TensorShape", "ShapeError", "as_shape", "unknown_shape", "scalar"]


class ShapeError(ValueError):
    """A shape rule is broken; the message uses TensorFlow's wording."""


def _dim_str(d: int | None) -> str:
    return "?" if d is None else str(d)


_INT64_MAX = 2**63 - 1


def _shape_text(dims: list[int | None]) -> str:
    text = "[" + ",".join(_dim_str(d) for d in dims) + "]"
    return text if len(text) <= 200 else text[:197] + "..."


_SEQUENCES = (tuple, list)  # dims that need no Iterable check (an ABC's: slow)


class TensorShape:
    """A possibly partial shape: unknown rank, or dims that may each be unknown.

    >>> import minigraph as mg
    >>> s = mg.TensorShape([None, 4])
    >>> s.rank, s.dims, s.is_fully_defined()
    (2, (None, 4), False)
    >>> s.merge_with([3, None])
    TensorShape([3, 4])
    """

    __slots__ = ("_dims",)

    def __init__(self, dims: Iterable[Any] | None) -> None:
        if dims is None:
            self._dims: tuple[int | None, ...] | None = None
            return
        if type(dims) not in _SEQUENCES and (
            isinstance(dims, str | bytes) or not isinstance(dims, Iterable)
        ):
            raise TypeError(f"a shape must be a list of dims or None, got {short_repr(dims)}")
        out: list[int | None] = []
        for d in dims:
            if type(d) is not int:  # exact ints (an array's shape) skip the checks below
                if d is None:
                    out.append(None)
                    continue
                # Ints only (NumPy's too): a float dim is not truncated, a bool is not a 1.
                if isinstance(d, bool | np.bool_) or not isinstance(d, numbers.Integral):
                    raise TypeError(
                        f"Dimension value must be integer or None, got {short_repr(d)} of type "
                        f"{type(d).__name__}"
                    )
                d = int(d)
            if d < 0:
                if d != -1:
                    raise ShapeError(f"Dimension {d} must be >= 0")
                out.append(None)
                continue
            out.append(d)
        self._dims = tuple(out)

    @property
    def dims(self) -> tuple[int | None, ...] | None:
        return self._dims

    @property
    def rank(self) -> int | None:
        return None if self._dims is None else len(self._dims)

    ndims = rank

    def as_list(self) -> list[int | None]:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d is not None for d in self._dims)

    def num_elements(self) -> int | None:
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:  # type: ignore[union-attr]
            n *= d  # type: ignore[operator]
        return n

    def check_valid(self) -> TensorShape:
        """Itself, or ShapeError (TensorFlow's wording) when its known dims alone make more
        than 2**63 - 1 elements: a shape no tensor can have (for shapes given as attrs)."""
        count = 1
        for d in self._dims or ():
            if d is not None:
                count *= d
        if count > _INT64_MAX:
            raise ShapeError(
                f"Shape {_shape_text(list(self._dims or ()))} is too large (more than "
                "2**63 - 1 entries)"
            )
        return self

    def is_compatible_with(self, other: Any) -> bool:
        dims: tuple[int | None, ...] | None
        if type(other) is tuple and all(type(d) is int and d >= 0 for d in other):
            dims = other  # an array's shape, as kernels check it: no TensorShape made
        else:
            dims = as_shape(other)._dims
        if self._dims is None or dims is None:
            return True
        if len(self._dims) != len(dims):
            return False
        return all(a is None or a == b or b is None for a, b in zip(self._dims, dims))

    def merge_with(self, other: Any) -> TensorShape:
        """The most specific shape compatible with both; ShapeError if they conflict."""
        return merge(self, as_shape(other))

    def concatenate(self, other: Any) -> TensorShape:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def __getitem__(self, key: int | slice) -> Any:
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else None
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank.")
        return len(self._dims)

    def __iter__(self) -> Iterator[int | None]:
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __eq__(self, other: object) -> bool:
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self) -> int:
        return hash(self._dims)

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        return "[" + ",".join(_dim_str(d) for d in self._dims) + "]"

    def __repr__(self) -> str:
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({list(self._dims)})"

    def __reduce__(self):
        return (TensorShape, (self._dims,))


def as_shape(value: Any) -> TensorShape:
    if isinstance(value, TensorShape):
        return value
    return TensorShape(value)


def unknown_shape(rank: int | None = None) -> TensorShape:
    return TensorShape(None if rank is None else [None] * rank)


def scalar() -> TensorShape:
    return TensorShape(())


# Helpers for shape functions. Each takes shapes with unknowns and returns the
# most that can be known, or raises ShapeError with TensorFlow's wording.


def merge_dim(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None or a == b:
        return a
    raise ShapeError(f"Dimensions must be equal, but are {a} and {b}")


def merge(a: TensorShape, b: TensorShape) -> TensorShape:
    if a.dims is None:
        return b
    if b.dims is None:
        return a
    if len(a.dims) != len(b.dims):
        raise ShapeError(f"Shapes must be equal rank, but are {len(a.dims)} and {len(b.dims)}")
    dims = []
    for i, (x, y) in enumerate(zip(a.dims, b.dims)):
        if x is not None and y is not None and x != y:
            raise ShapeError(
                f"Dimension {i} in both shapes must be equal, but are {x} and {y}. "
                f"Shapes are {a} and {b}."
            )
        dims.append(x if x is not None else y)
    return TensorShape(dims)


def with_rank(s: TensorShape, rank: int) -> TensorShape:
    if s.dims is None:
        return unknown_shape(rank)
    if len(s.dims) != rank:
        raise ShapeError(f"Shape must be rank {rank} but is rank {len(s.dims)}")
    return s


def with_rank_at_least(s: TensorShape, rank: int) -> TensorShape:
    if s.dims is not None and len(s.dims) < rank:
        raise ShapeError(f"Shape must be at least rank {rank} but is rank {len(s.dims)}")
    return s


def with_rank_at_most(s: TensorShape, rank: int) -> TensorShape:
    if s.dims is not None and len(s.dims) > rank:
        raise ShapeError(f"Shape must be at most rank {rank} but is rank {len(s.dims)}")
    return s


def broadcast(a: TensorShape, b: TensorShape) -> TensorShape:
    """NumPy broadcasting over partial shapes."""
    if a.dims is None or b.dims is None:
        return TensorShape(None)
    n = max(len(a.dims), len(b.dims))
    x = (1,) * (n - len(a.dims)) + a.dims
    y = (1,) * (n - len(b.dims)) + b.dims
    out: list[int | None] = []
    for p, q in zip(x, y):
        if p == 1:
            out.append(q)
        elif q == 1:
            out.append(p)
        elif p is None or q is None:
            out.append(p if q is None else q)
        elif p == q:
            out.append(p)
        else:
            raise ShapeError(f"Incompatible shapes: {a} vs. {b}")
    return TensorShape(out)


def merge_prefix(data: TensorShape, prefix: TensorShape) -> TensorShape:
    """TensorFlow's MergePrefix: ``data`` must start with ``prefix``; returns the rest of it
    (ids shaped as a prefix of their data's shape, as DynamicPartition's and the segments')."""
    rank = len(prefix)
    data = with_rank_at_least(data, rank)
    if data.dims is not None:
        for a, b in zip(data.dims[:rank], prefix.dims):  # type: ignore[arg-type]
            merge_dim(a, b)
    return data[rank:]
