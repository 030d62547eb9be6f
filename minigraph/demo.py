"""The seed documents' examples as small graphs, run by ``minigraph demo``.

Each example builds its graph with the Python builders, runs it, and checks the
result against the value the seed document (or TensorFlow's run of it) gives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import minigraph as mg


@dataclass(frozen=True)
class Example:
    title: str
    ops: tuple[str, ...]  # op types it needs
    build: Callable[[], tuple[dict[str, Any], Any]]  # -> (inputs to show, fetch)
    expected: Any


def _s2b(x: list, block: list, paddings: list) -> Callable:
    def build() -> tuple[dict[str, Any], Any]:
        xs = np.array(x, np.float32)
        y = mg.space_to_batch_nd(xs, block, paddings)
        return {"x": xs, "block_shape": block, "paddings": paddings}, y

    return build


def _stitch() -> tuple[dict[str, Any], Any]:
    indices = [6, [4, 1], [[5, 2], [0, 3]]]
    data = [[61, 62], [[41, 42], [11, 12]], [[[51, 52], [21, 22]], [[1, 2], [31, 32]]]]
    return {"indices": indices, "data": data}, mg.dynamic_stitch(indices, data)


def _partition_stitch() -> tuple[dict[str, Any], Any]:
    x = mg.constant([0.1, -1.0, 5.2, 4.3, -1.0, 7.4])
    mask = mg.cast(mg.not_equal(x, mg.constant(-1.0)), mg.int32)
    parts = mg.dynamic_partition(x, mask, 2)
    parts[1] = parts[1] + 1.0
    positions = mg.dynamic_partition(mg.range(mg.shape(x)[0]), mask, 2)
    return {"x": [0.1, -1.0, 5.2, 4.3, -1.0, 7.4]}, mg.dynamic_stitch(positions, parts)


def _scatter_1d() -> tuple[dict[str, Any], Any]:
    indices, updates = [[4], [3], [1], [7]], [9, 10, 11, 12]
    tensor = mg.ones([8], mg.int32)
    return (
        {"tensor": "ones([8], int32)", "indices": indices, "updates": updates},
        mg.tensor_scatter_nd_update(tensor, indices, updates),
    )


_BLOCK = [[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]]
_ONES = [[1] * 4] * 4


def _scatter_slices() -> tuple[dict[str, Any], Any]:
    indices, updates = [[0], [2]], [_BLOCK, _BLOCK]
    tensor = mg.ones([4, 4, 4], mg.int32)
    return (
        {"tensor": "ones([4, 4, 4], int32)", "indices": indices, "updates": "two 4x4 blocks"},
        mg.tensor_scatter_nd_update(tensor, indices, updates),
    )


EXAMPLES = (
    Example(
        "SpaceToBatchND (1): [1, 2, 2, 1], block [2, 2]",
        ("SpaceToBatchND",),
        _s2b([[[[1], [2]], [[3], [4]]]], [2, 2], [[0, 0], [0, 0]]),
        [[[[1]]], [[[2]]], [[[3]]], [[[4]]]],
    ),
    Example(
        "SpaceToBatchND (2): [1, 2, 2, 3], block [2, 2]",
        ("SpaceToBatchND",),
        _s2b([[[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]]], [2, 2], [[0, 0], [0, 0]]),
        [[[[1, 2, 3]]], [[[4, 5, 6]]], [[[7, 8, 9]]], [[[10, 11, 12]]]],
    ),
    Example(
        "SpaceToBatchND (3): [1, 4, 4, 1], block [2, 2]",
        ("SpaceToBatchND",),
        _s2b(np.arange(1, 17).reshape(1, 4, 4, 1).tolist(), [2, 2], [[0, 0], [0, 0]]),
        [
            [[[1], [3]], [[9], [11]]],
            [[[2], [4]], [[10], [12]]],
            [[[5], [7]], [[13], [15]]],
            [[[6], [8]], [[14], [16]]],
        ],
    ),
    Example(
        "SpaceToBatchND (4): [2, 2, 4, 1], block [2, 2], paddings [[0, 0], [2, 0]]",
        ("SpaceToBatchND",),
        _s2b(np.arange(1, 17).reshape(2, 2, 4, 1).tolist(), [2, 2], [[0, 0], [2, 0]]),
        [
            [[[0], [1], [3]]],
            [[[0], [9], [11]]],
            [[[0], [2], [4]]],
            [[[0], [10], [12]]],
            [[[0], [5], [7]]],
            [[[0], [13], [15]]],
            [[[0], [6], [8]]],
            [[[0], [14], [16]]],
        ],
    ),
    Example(
        "DynamicStitch: the doc's interleaving",
        ("DynamicStitch",),
        _stitch,
        [[1, 2], [11, 12], [21, 22], [31, 32], [41, 42], [51, 52], [61, 62]],
    ),
    Example(
        "DynamicPartition + DynamicStitch: add 1 where x != -1",
        ("DynamicPartition", "DynamicStitch"),
        _partition_stitch,
        np.array([1.1, -1.0, 6.2, 5.3, -1.0, 8.4], np.float32),
    ),
    Example(
        "TensorScatterUpdate: 4 elements into a vector of 8",
        ("TensorScatterUpdate",),
        _scatter_1d,
        [1, 11, 1, 10, 9, 1, 1, 12],
    ),
    Example(
        "TensorScatterUpdate: two slices into a [4, 4, 4] tensor",
        ("TensorScatterUpdate",),
        _scatter_slices,
        [_BLOCK, _ONES, _BLOCK, _ONES],
    ),
)


def available_examples() -> list[Example]:
    """The examples whose ops are all registered."""
    ops = mg.registered_ops()
    return [e for e in EXAMPLES if all(op in ops for op in e.ops)]


def run_example(example: Example) -> tuple[dict[str, Any], np.ndarray, bool]:
    """Build and run one example; returns (inputs, result, matches the documented value)."""
    g = mg.Graph()
    with g.as_default():
        inputs, fetch = example.build()
    result = mg.Session(g).run(fetch)
    return inputs, result, bool(np.array_equal(result, np.asarray(example.expected)))


def _show(value: Any) -> str:
    """An input as NumPy prints it; a list of differently shaped tensors item by item."""
    if isinstance(value, str):
        return value
    try:
        arr = np.asarray(value)
    except ValueError:
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if arr.dtype.kind == "f" and np.array_equal(arr, np.round(arr)):
        arr = arr.astype(np.int64)  # the documents write whole numbers without a point
    return np.array2string(arr, separator=", ", max_line_width=100)


def main(out: Callable[[str], None] = print) -> int:
    """Run every available example, print inputs and results; 1 if any differs from its doc."""
    status = 0
    np.set_printoptions(linewidth=100)
    for example in available_examples():
        inputs, result, ok = run_example(example)
        out(f"== {example.title}")
        for name, value in inputs.items():
            out(f"   {name} = {_show(value)}".replace("\n", "\n" + " " * (6 + len(name))))
        out(f"   result {result.dtype}{list(result.shape)} =")
        out("     " + _show(result).replace("\n", "\n     "))
        out(f"   {'matches the documented result' if ok else 'DIFFERS from the documented result'}")
        status |= not ok
    return status
