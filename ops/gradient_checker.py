"""``mg.test.compute_gradient`` and ``compute_gradient_error``: a gradient function
checked against finite differences, as ``tf.compat.v1.test.compute_gradient`` does.

The theoretical Jacobian comes from ``mg.gradients`` with one-hot ``grad_ys`` (one run per
element of y); the numerical one from central differences ``(y(x + d) - y(x - d)) / 2d``
(two runs per element of x). Both are ``[x.size, y.size]`` arrays, row ``i`` the
derivatives with respect to x's ``i``-th element in C order. A test tool: it loops over
elements on purpose, so keep its tensors small.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph.graph import Output
from minigraph.ops.array_ops import placeholder
from minigraph.ops.gradients import gradients
from minigraph.scope import Scope, default_scope
from minigraph.session import Session
from minigraph.wrappers import as_output

__all__ = ["compute_gradient", "compute_gradient_error"]


def _jacobians(
    sess: Session,
    x: Output,
    x_value: np.ndarray,
    y: Output,
    y_shape: tuple[int, ...],
    grad: Output | None,
    dy: Output,
    delta: float,
    feeds: dict[Any, Any],
) -> tuple[np.ndarray, np.ndarray]:
    x_size, y_size = x_value.size, int(np.prod(y_shape, dtype=np.int64))
    dtype = x.dtype.np
    theoretical = np.zeros((x_size, y_size), dtype=dtype)
    if grad is not None:
        dy_value = np.zeros(y_shape, dtype=y.dtype.np)
        for j in range(y_size):
            dy_value.flat[j] = 1
            theoretical[:, j] = np.ravel(sess.run(grad, {**feeds, x: x_value, dy: dy_value}))
            dy_value.flat[j] = 0
    numerical = np.zeros((x_size, y_size), dtype=dtype)
    moved = x_value.copy()
    for i in range(x_size):
        moved.flat[i] = x_value.flat[i] + delta
        up = np.asarray(sess.run(y, {**feeds, x: moved}), dtype=np.float64)
        moved.flat[i] = x_value.flat[i] - delta
        down = np.asarray(sess.run(y, {**feeds, x: moved}), dtype=np.float64)
        moved.flat[i] = x_value.flat[i]
        numerical[i, :] = np.ravel((up - down) / (2 * delta))
    return theoretical, numerical


def compute_gradient(
    x: Any,
    x_shape: Any,
    y: Any,
    y_shape: Any,
    x_init_value: Any = None,
    delta: float = 1e-3,
    init_targets: Any = None,
    extra_feed_dict: dict[Any, Any] | None = None,
) -> Any:
    """The theoretical and numerical Jacobians of ``y`` with respect to ``x``.

    Args:
        x: a tensor (fed with ``x_init_value``) or a list of tensors.
        x_shape: its shape (a list of shapes for a list of x).
        y: the tensor differentiated; y_shape: its shape.
        x_init_value: the point at which to differentiate (default: uniform in [0, 1)
            from a fixed seed); a list for a list of x.
        delta: the finite difference's step.
        init_targets: ops run once first (variable initializers).
        extra_feed_dict: other feeds the graph needs.

    Returns:
        ``(theoretical, numerical)``, each a ``[x size, y size]`` array; a list of such
        pairs when ``x`` is a list.
    """
    listed = isinstance(x, list | tuple)
    xs = [_tensor(t) for t in (x if listed else [x])]
    x_shapes = list(x_shape) if listed else [x_shape]
    if not listed:
        inits = [x_init_value]
    else:
        inits = [None] * len(xs) if x_init_value is None else list(x_init_value)
    if len(x_shapes) != len(xs) or len(inits) != len(xs):
        raise ValueError("x, x_shape and x_init_value must have the same length")
    y_out = _tensor(y)
    y_dims = tuple(int(d) for d in y_shape)
    for t in (*xs, y_out):
        if not (t.dtype.is_floating or t.dtype.is_complex):
            raise TypeError(f"compute_gradient needs floating tensors; {t.name} is {t.dtype.name}")
        if t.dtype.is_complex:
            raise TypeError(f"compute_gradient checks real tensors; {t.name} is complex")
    rng = np.random.default_rng(0)
    values = [
        rng.random(tuple(s)).astype(t.dtype.np)
        if v is None
        else np.array(v, dtype=t.dtype.np).reshape(tuple(s))
        for t, s, v in zip(xs, x_shapes, inits)
    ]
    graph = y_out.graph
    with default_scope(Scope(graph)):
        dy = placeholder(y_out.dtype, shape=list(y_dims), name="compute_gradient_dy")
        grads = gradients(y_out, xs, grad_ys=dy)
    feeds = dict(extra_feed_dict or {})
    with Session(graph) as sess:
        if init_targets is not None:
            sess.run(init_targets, feeds)
        pairs = []
        for k, (t, value, g) in enumerate(zip(xs, values, grads)):
            others = {o: v for j, (o, v) in enumerate(zip(xs, values)) if j != k}
            pairs.append(
                _jacobians(sess, t, value, y_out, y_dims, g, dy, delta, {**feeds, **others})
            )
    return pairs if listed else pairs[0]


def compute_gradient_error(
    x: Any,
    x_shape: Any,
    y: Any,
    y_shape: Any,
    x_init_value: Any = None,
    delta: float = 1e-3,
    init_targets: Any = None,
    extra_feed_dict: dict[Any, Any] | None = None,
) -> float:
    """The largest absolute difference between the theoretical and the numerical
    Jacobian (over every x when ``x`` is a list), as TensorFlow's."""
    result = compute_gradient(
        x, x_shape, y, y_shape, x_init_value, delta, init_targets, extra_feed_dict
    )
    pairs = result if isinstance(x, list | tuple) else [result]
    error = 0.0
    for theoretical, numerical in pairs:
        if theoretical.size:
            diff = np.abs(theoretical.astype(np.float64) - numerical.astype(np.float64))
            error = max(error, float(np.nan_to_num(diff, nan=np.inf).max()))
    return error


def _tensor(value: Any) -> Output:
    out = as_output(value)
    if out is None:
        raise TypeError(f"expected a tensor, got {type(value).__name__}")
    return out
