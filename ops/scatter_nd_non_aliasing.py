"""ScatterNdNonAliasingAdd: TensorFlow 1's out-of-place ``scatter_nd_add`` on a tensor.

It is TensorScatterAdd with TensorFlow's older checks: the kernel runs only DoScatterNd's
validation (scatter_ops' ``_do_scatter_nd_checks``), not TensorScatter*'s own, and bool
tensors are allowed (an update ORs into the value). The scatter core, index checks and
``bad_indices_policy`` are scatter_ops'; a separate module keeps that one under its size.
"""

from __future__ import annotations

from typing import Any

from minigraph import dtypes
from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import BAD_INDICES_POLICY, INDEX_TYPES, type_set
from minigraph.ops.scatter_ops import (
    _ADD,
    _do_scatter_nd_checks,
    _known_scatter_checks,
    _scatter,
    _scatter_nd_shape_helper,
)
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, with_rank_at_least
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = ("scatter_nd_non_aliasing_add",)

_TYPES = type_set(dtypes.NUMBER_TYPES + (dtypes.bool_,))


def _no_own_checks(*args: Any) -> None:
    """This kernel adds none of its own checks before DoScatterNd's."""


def _scatter_nd_non_aliasing_add_shape(
    c: InferenceContext, x: TensorSpec, indices: TensorSpec, updates: TensorSpec
) -> TensorShape:
    """TensorFlow's ScatterNdTensorShape; with every shape known, the kernel's checks."""
    out = with_rank_at_least(x.shape, 1)
    ind = with_rank_at_least(indices.shape, 1)
    upd = with_rank_at_least(updates.shape, 1)
    _scatter_nd_shape_helper(c, ind, upd, out)
    _known_scatter_checks(c, out, indices, upd, _no_own_checks)
    return out


SCATTER_ND_NON_ALIASING_ADD = define_op(
    "ScatterNdNonAliasingAdd",
    inputs=["input: T", "indices: Tindices", "updates: T"],
    outputs=["output: T"],
    attrs=[f"T: {_TYPES}", f"Tindices: {INDEX_TYPES}", BAD_INDICES_POLICY],
    shape_fn=_scatter_nd_non_aliasing_add_shape,
    doc="""
A copy of ``input`` with ``updates`` added at ``indices`` (duplicates summed), as
TensorScatterAdd: ``indices`` is ``[..., K]``, each row indexing the first K dims of
``input``; ``updates`` is ``indices.shape[:-1] + input.shape[K:]``. Bool values OR.

Errors (InvalidArgumentError, naming the node): an index row outside ``input``
(``indices[i] = [...] does not index into shape [...]``), and updates whose shape does
not match ``indices`` and ``input`` (TensorFlow's DoScatterNd messages). With
``bad_indices_policy="IGNORE"`` bad rows are skipped. Rank-1 ``indices`` scatter only
their first element, with the first update, as TensorFlow's kernel does.

Example: ``input = [1, 2, 3, 4, 5, 6, 7, 8]``, ``indices = [[4], [3], [1], [7]]``,
``updates = [9, 10, 11, 12]`` gives ``[1, 13, 3, 14, 14, 6, 7, 20]``.
""",
)


@register_kernel("ScatterNdNonAliasingAdd", "CPU", "GPU")
def _scatter_nd_non_aliasing_add_kernel(
    ctx: KernelContext, x: Any, indices: Any, updates: Any
) -> Any:
    if indices.ndim == 1 and indices.shape[0] > 0 and x.ndim > 0 and updates.ndim > 0:
        # TensorFlow checks rank-1 indices as one row of depth 1, then scatters only their
        # first element (its flat view of them is one row): so does minigraph.
        _do_scatter_nd_checks(ctx.fail, x.shape, indices.shape, updates.shape)
        indices, updates = indices[:1].reshape(1, 1), updates[:1]
    return _scatter(ctx, x, x.shape, indices, updates, _ADD)


ScatterNdNonAliasingAdd = make_wrapper_class(SCATTER_ND_NON_ALIASING_ADD)
_scatter_nd_non_aliasing_add = make_builder(
    SCATTER_ND_NON_ALIASING_ADD, "scatter_nd_non_aliasing_add"
)


def scatter_nd_non_aliasing_add(
    input: Any,  # noqa: A002
    indices: Any,
    updates: Any,
    name: str | None = None,
    *,
    bad_indices_policy: str = "",
) -> Output:
    """``input`` with ``updates`` added at ``indices``, out of place
    (tf.compat.v1.scatter_nd_non_aliasing_add).

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     out = mg.scatter_nd_non_aliasing_add([1, 2, 3, 4], [[3], [1], [3]], [10, 20, 30])
    >>> mg.Session(g).run(out)
    array([ 1, 22,  3, 44], dtype=int32)
    """
    return _scatter_nd_non_aliasing_add(
        input, indices, updates, bad_indices_policy=bad_indices_policy, name=name
    )


__all__ = ["ScatterNdNonAliasingAdd", *BUILDERS]
