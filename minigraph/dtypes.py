"""Element types of tensors, each a thin name over a NumPy dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import short_repr

__all__ = [
    "DType",
    "as_dtype",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool_",
    "complex64",
    "complex128",
    "variant",
    "resource",
    "ALL_TYPES",
    "NUMBER_TYPES",
    "REAL_NUMBER_TYPES",
    "INTEGER_TYPES",
    "FLOAT_TYPES",
    "COMPLEX_TYPES",
]


class DType:
    """A tensor element type (``mg.float32``, ``mg.int64``, ...).

    DTypes are interned: compare them with ``==`` or ``is``.

    >>> import minigraph as mg
    >>> mg.float32.as_numpy_dtype
    <class 'numpy.float32'>
    >>> mg.as_dtype("int64") is mg.int64
    True
    """

    __slots__ = ("name", "_np")

    def __init__(self, name: str, np_type: type) -> None:
        self.name = name
        self._np = np.dtype(np_type)

    @property
    def as_numpy_dtype(self) -> type:
        return self._np.type

    @property
    def np(self) -> np.dtype:
        """The NumPy dtype object."""
        return self._np

    @property
    def is_floating(self) -> bool:
        return self._np.kind == "f"

    @property
    def is_integer(self) -> bool:
        return self._np.kind in "iu"

    @property
    def is_unsigned(self) -> bool:
        return self._np.kind == "u"

    @property
    def is_complex(self) -> bool:
        return self._np.kind == "c"

    @property
    def is_bool(self) -> bool:
        return self._np.kind == "b"

    @property
    def is_handle(self) -> bool:
        """A variant or resource: an opaque host object, not numbers."""
        return self._np.kind == "O"

    @property
    def size(self) -> int:
        return self._np.itemsize

    def __repr__(self) -> str:
        return f"mg.{self.name}"

    def __str__(self) -> str:
        return self.name

    def __reduce__(self):
        return (as_dtype, (self.name,))


float16 = DType("float16", np.float16)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
uint16 = DType("uint16", np.uint16)
uint32 = DType("uint32", np.uint32)
uint64 = DType("uint64", np.uint64)
bool_ = DType("bool", np.bool_)
complex64 = DType("complex64", np.complex64)
complex128 = DType("complex128", np.complex128)
# TensorFlow's opaque handles. A value of either is a 0-d NumPy object array holding one
# Python object (a TensorList, a TensorArray), on the host on every device: the executor
# moves and checks it like any array, and only the ops made for it look inside.
variant = DType("variant", np.object_)
resource = DType("resource", np.object_)

FLOAT_TYPES = (float16, float32, float64)
INTEGER_TYPES = (int8, int16, int32, int64, uint8, uint16, uint32, uint64)
COMPLEX_TYPES = (complex64, complex128)
REAL_NUMBER_TYPES = FLOAT_TYPES + INTEGER_TYPES
NUMBER_TYPES = REAL_NUMBER_TYPES + COMPLEX_TYPES
ALL_TYPES = NUMBER_TYPES + (bool_,)

_BY_NAME = {d.name: d for d in ALL_TYPES}
_BY_NAME.update({"half": float16, "float": float32, "double": float64})
_BY_NAME.update({"variant": variant, "resource": resource})
_BY_NP = {d.np: d for d in ALL_TYPES}
_BY_NP[np.dtype(object)] = variant


def as_dtype(value: Any) -> DType:
    """Return the DType for a DType, a documented name ("float32", "float", "half",
    "double"...), or a NumPy dtype or scalar type; TypeError for anything else.

    Only the names above are read as strings: NumPy's own spellings ("f8", "<i4",
    "(2,)f8") are refused, so a graph file cannot smuggle a structured dtype in.
    """
    if isinstance(value, DType):
        return value
    if value is None:
        raise TypeError("Expected DataType for argument 'dtype' not None.")
    if isinstance(value, str | bytes):
        name = value.decode("ascii", "replace") if isinstance(value, bytes) else value
        if name in _BY_NAME:
            return _BY_NAME[name]
        raise TypeError(
            f"cannot convert {name[:60]!r} to a minigraph dtype: known names are "
            f"{', '.join(sorted(_BY_NAME))}"
        )
    if value is bool:
        return bool_
    found = None
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        found = _BY_NP.get(np.dtype(value))
    elif value in (int, float, complex):
        found = _BY_NP.get(np.dtype(value))
    if found is None:
        raise TypeError(f"cannot convert {short_repr(value)} to a minigraph dtype")
    return found
