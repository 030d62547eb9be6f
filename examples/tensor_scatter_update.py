"""TensorScatterUpdate: the two examples of its documentation, and duplicates.

Single elements into a vector of 8, then two whole slices into a [4, 4, 4] tensor. With
duplicate indices the last update in index order wins (the translated doc's "summed" is a
copied doc error; TensorScatterAdd is the one that sums).
Run: python examples/tensor_scatter_update.py
"""

import numpy as np

import minigraph as mg


def main() -> None:
    block = [[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]]
    g = mg.Graph()
    with g.as_default():
        vector = mg.tensor_scatter_nd_update(
            mg.ones([8], mg.int32), [[4], [3], [1], [7]], [9, 10, 11, 12]
        )
        slices = mg.tensor_scatter_nd_update(
            mg.ones([4, 4, 4], mg.int32), [[0], [2]], [block, block]
        )
        last_wins = mg.tensor_scatter_nd_update(mg.zeros([3], mg.int32), [[1], [1]], [4, 8])
        summed = mg.tensor_scatter_nd_add(mg.zeros([3], mg.int32), [[1], [1]], [4, 8])
    v, s, lw, sm = mg.Session(g).run([vector, slices, last_wins, summed])
    print("elements:", v)
    print("slices:\n", s)
    print("duplicates: update ->", lw, " add ->", sm)
    assert v.tolist() == [1, 11, 1, 10, 9, 1, 1, 12]
    ones = np.ones((4, 4), np.int32)
    assert np.array_equal(s, [block, ones, block, ones])
    assert lw.tolist() == [0, 8, 0] and sm.tolist() == [0, 12, 0]
    print("matches the documentation")


if __name__ == "__main__":
    main()
