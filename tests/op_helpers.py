"""What the op test modules share: run a graph built on placeholders, expect its errors."""

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors


def _placeholders(arrays, shapes):
    return [mg.placeholder(mg.as_dtype(a.dtype), shape=s) for a, s in zip(arrays, shapes)]


def run(build, *arrays):
    """Build ``build(*placeholders)`` on a new graph and run it on ``arrays``."""
    g = mg.Graph()
    with g.as_default():
        phs = _placeholders(arrays, [a.shape for a in arrays])
        out = build(*phs)
    return mg.Session(g).run(out, dict(zip(phs, arrays)))


def fails(build, *arrays, match, known=True, shapes=None):
    """``build`` on placeholders fails (at build or run time) with an InvalidArgumentError
    naming a node. The placeholders have the arrays' shapes, or unknown ones unless
    ``known``, or ``shapes``."""
    if shapes is None:
        shapes = [a.shape if known else None for a in arrays]
    with pytest.raises(errors.InvalidArgumentError, match=match) as e:
        g = mg.Graph()
        with g.as_default():
            phs = _placeholders(arrays, shapes)
            out = build(*phs)
        mg.Session(g).run(out, dict(zip(phs, arrays)))
    assert e.value.node_name
    return e.value


def build_fails(build, match):
    """``build()`` fails while the graph is built, with an error naming a node."""
    with pytest.raises(errors.InvalidArgumentError, match=match) as e:
        with mg.Graph().as_default():
            build()
    assert e.value.node_name
    return e.value


def same(got, want):
    """Equal dtype, shape and values (NaNs in the same places)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
