"""SpaceToBatchND: the four examples of its documentation, and the way back.

Each example splits the spatial dims of x into a grid of blocks and moves the blocks into
the batch dim. The last one pads first, and BatchToSpaceND with the same crops recovers x.
Run: python examples/space_to_batch_nd.py
"""

import numpy as np

import minigraph as mg

CASES = [
    # (x, block_shape, paddings, the documented output)
    (
        np.array([[[[1], [2]], [[3], [4]]]], np.float32),
        [2, 2],
        [[0, 0], [0, 0]],
        [[[[1]]], [[[2]]], [[[3]]], [[[4]]]],
    ),
    (
        np.array([[[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]]], np.float32),
        [2, 2],
        [[0, 0], [0, 0]],
        [[[[1, 2, 3]]], [[[4, 5, 6]]], [[[7, 8, 9]]], [[[10, 11, 12]]]],
    ),
    (
        np.arange(1, 17, dtype=np.float32).reshape(1, 4, 4, 1),
        [2, 2],
        [[0, 0], [0, 0]],
        [
            [[[1], [3]], [[9], [11]]],
            [[[2], [4]], [[10], [12]]],
            [[[5], [7]], [[13], [15]]],
            [[[6], [8]], [[14], [16]]],
        ],
    ),
    (
        np.arange(1, 17, dtype=np.float32).reshape(2, 2, 4, 1),
        [2, 2],
        [[0, 0], [2, 0]],
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
]


def main() -> None:
    for i, (x, block, paddings, expected) in enumerate(CASES, 1):
        g = mg.Graph()
        with g.as_default():
            inp = mg.placeholder(mg.float32, shape=x.shape, name="x")
            y = mg.space_to_batch_nd(inp, block, paddings)
            back = mg.batch_to_space_nd(y, block, paddings)  # the inverse, paddings as crops
        print(f"({i}) x{list(x.shape)}, block_shape={block}, paddings={paddings}")
        print(f"    inferred output shape: {y.shape}")
        out, restored = mg.Session(g).run([y, back], {inp: x})
        print(
            "    " + np.array2string(out.squeeze(-1) if out.shape[-1] == 1 else out, prefix="    ")
        )
        assert np.array_equal(out, expected), "differs from the documented output"
        assert np.array_equal(restored, x), "BatchToSpaceND did not invert SpaceToBatchND"
    print("all four match the documentation, and BatchToSpaceND inverts each")


if __name__ == "__main__":
    main()
