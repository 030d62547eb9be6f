"""DynamicStitch: interleave the rows of several tensors by index, as its documentation shows.

merged[indices[m][i, ...], ...] = data[m][i, ..., ...]; the output has max(index) + 1 rows.
Run: python examples/dynamic_stitch.py
"""

import numpy as np

import minigraph as mg


def main() -> None:
    g = mg.Graph()
    with g.as_default():
        indices = [mg.constant(6), mg.constant([4, 1]), mg.constant([[5, 2], [0, 3]])]
        data = [
            mg.constant([61, 62]),
            mg.constant([[41, 42], [11, 12]]),
            mg.constant([[[51, 52], [21, 22]], [[1, 2], [31, 32]]]),
        ]
        merged = mg.dynamic_stitch(indices, data)
        parallel = mg.parallel_dynamic_stitch(indices, data)
    print("merged shape (known at build time):", merged.shape)
    out, out_parallel = mg.Session(g).run([merged, parallel])
    print(out)
    expected = [[1, 2], [11, 12], [21, 22], [31, 32], [41, 42], [51, 52], [61, 62]]
    assert np.array_equal(out, expected) and np.array_equal(out_parallel, expected)
    print("matches the documentation (ParallelDynamicStitch too)")


if __name__ == "__main__":
    main()
