"""One differential case: a TensorFlow raw op, its inputs and attrs (NumPy only, no TF).

A family's cases live in ``cases_<family>.py`` as a list ``CASES`` of :func:`case` values::

    from oracle_case import case

    CASES = [
        case("Sum", input=np.arange(6.0).reshape(2, 3), axis=np.int32(1), keep_dims=True),
        case("Cast", x=np.array([1.7, -1.7]), DstT=np.int32),
        case("FloorMod", x=np.array([1], np.int32), y=np.array([0], np.int32)),  # TF's error
        case("ConcatV2", values=[np.ones((1, 2)), np.zeros((1, 2))], axis=np.int32(0)),
    ]

Keyword arguments use TensorFlow's argument names, exactly as ``tf.raw_ops.<op>`` takes them
(the fixture records inputs under the OpDef's names, which minigraph declares).
NumPy arrays and NumPy scalars are inputs; a list of arrays is a list input (``N * T``);
everything else is an attr: Python ints, floats, bools, strings, lists of them, and dtypes
(a NumPy dtype or scalar type, such as ``np.int32``). Type attrs that TensorFlow infers from
the inputs must not be given (minigraph infers them too).

``rtol``/``atol`` override the per-dtype float tolerance of the test. ``mg_error`` names the
mg.errors class minigraph raises where TensorFlow returns a value, with ``why`` pointing at the
documented difference (docs/semantics.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["case", "is_input", "is_dtype"]


def is_input(value: Any) -> bool:
    """Whether a keyword argument is an input (arrays, or a list of arrays) or an attr."""
    if isinstance(value, np.ndarray | np.generic):
        return True
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, np.ndarray | np.generic) for v in value)
    )


def is_dtype(value: Any) -> bool:
    return isinstance(value, np.dtype) or (
        isinstance(value, type) and issubclass(value, np.generic)
    )


def case(
    op: str,
    *,
    name: str | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    mg_error: str | None = None,
    why: str | None = None,
    **args: Any,
) -> dict[str, Any]:
    if mg_error is not None and not why:
        raise ValueError(f"{op}: a case where minigraph differs from TF must say why")
    return {
        "op": op,
        "name": name,
        "rtol": rtol,
        "atol": atol,
        "mg_error": mg_error,
        "why": why,
        "args": args,
    }
