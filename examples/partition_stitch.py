"""DynamicPartition + DynamicStitch: apply a function only where a condition holds.

The DynamicStitch documentation's example: add 1 to every x_i != -1, leave the -1s alone.
Run: python examples/partition_stitch.py
"""

import numpy as np

import minigraph as mg


def main() -> None:
    g = mg.Graph()
    with g.as_default():
        x = mg.constant([0.1, -1.0, 5.2, 4.3, -1.0, 7.4])
        condition_mask = mg.not_equal(x, mg.constant(-1.0))
        partitioned_data = mg.dynamic_partition(x, mg.cast(condition_mask, mg.int32), 2)
        partitioned_data[1] = partitioned_data[1] + 1.0
        condition_indices = mg.dynamic_partition(
            mg.range(mg.shape(x)[0]), mg.cast(condition_mask, mg.int32), 2
        )
        x = mg.dynamic_stitch(condition_indices, partitioned_data)
    out = mg.Session(g).run(x)
    print("x =", out)
    assert np.array_equal(out, np.array([1.1, -1.0, 6.2, 5.3, -1.0, 8.4], np.float32))
    print("matches the documentation: the -1 values remain unchanged")


if __name__ == "__main__":
    main()
