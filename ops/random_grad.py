"""The random ops (ops/random_ops.py) have no gradient: their outputs are draws, not
functions of their inputs (TensorFlow's random_ops.py declares RandomUniform,
RandomStandardNormal and TruncatedNormal NotDifferentiable).

RandomUniformInt takes and gives integers only; TensorFlow declares nothing for it because
its backprop walk never reaches an op through integer tensors. minigraph's walk may reach
it (when it is one of the ``ys``), so it is declared here too: the gradient is None, as
TensorFlow's result.
"""

from __future__ import annotations

from minigraph.ops import random_ops  # noqa: F401  (the ops must be declared first)
from minigraph.registry import not_differentiable

not_differentiable("RandomUniform", "RandomStandardNormal", "TruncatedNormal", "RandomUniformInt")
