"""``mg.train``: optimizers, the global step and checkpoints, under tf.compat.v1.train's
names (ops/optimizers.py, ops/saver.py).

>>> import numpy as np, minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     w = mg.Variable(np.float32([3.0]), name="w")
...     loss = mg.reduce_sum(w * w)
...     train = mg.train.GradientDescentOptimizer(0.25).minimize(loss)
...     init = mg.global_variables_initializer()
>>> with mg.Session(g) as sess:
...     sess.run(init)
...     sess.run(train)
...     sess.run(w)
array([1.5], dtype=float32)
"""

from minigraph.ops.optimizers import (
    AdagradOptimizer,
    AdamOptimizer,
    GradientDescentOptimizer,
    MomentumOptimizer,
    Optimizer,
    RMSPropOptimizer,
    create_global_step,
    get_global_step,
    get_or_create_global_step,
)
from minigraph.ops.saver import (
    CheckpointState,
    Saver,
    get_checkpoint_state,
    latest_checkpoint,
    list_variables,
    load_variable,
)

__all__ = [
    "Optimizer",
    "GradientDescentOptimizer",
    "MomentumOptimizer",
    "AdamOptimizer",
    "RMSPropOptimizer",
    "AdagradOptimizer",
    "create_global_step",
    "get_global_step",
    "get_or_create_global_step",
    "Saver",
    "CheckpointState",
    "get_checkpoint_state",
    "latest_checkpoint",
    "list_variables",
    "load_variable",
]
