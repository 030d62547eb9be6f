"""The same graph twice: with the Python builders and with the C++-mirror classes.

Both build x -> SpaceToBatchND -> +1 -> BatchToSpaceND and give the same result and node
types. The C++ style names each op through the Scope, as TensorFlow's C++ client API does.
Run: python examples/builders_vs_cpp_api.py
"""

import numpy as np

import minigraph as mg
from minigraph import ops

X = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)


def with_builders():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[1, 4, 4, 1], name="x")
        s2b = mg.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]], name="to_batch")
        shifted = mg.add(s2b, 1.0, name="shift")
        y = mg.batch_to_space_nd(shifted, [2, 2], [[0, 0], [0, 0]], name="to_space")
    return g, mg.Session(g).run(y, {x: X})


def with_cpp_api():
    root = mg.Scope.new_root_scope()
    x = ops.Placeholder(root.with_op_name("x"), mg.float32, shape=[1, 4, 4, 1])
    block = ops.Const(root, [2, 2])
    pads = ops.Const(root, [[0, 0], [0, 0]])
    s2b = ops.SpaceToBatchND(root.with_op_name("to_batch"), x, block, pads)
    shifted = ops.AddV2(root.with_op_name("shift"), s2b, ops.Const(root, 1.0))
    y = ops.BatchToSpaceND(root.with_op_name("to_space"), shifted, block, pads)
    (out,) = mg.ClientSession(root).run([y.output], {x.output: X})
    return root.graph, out


def main() -> None:
    g1, a = with_builders()
    g2, b = with_cpp_api()
    types = lambda g: sorted(n.type_string for n in g.nodes() if n.type_string != "Const")  # noqa: E731
    print("builders:", types(g1))
    print("C++ API: ", types(g2))
    assert types(g1) == types(g2)
    assert np.array_equal(a, b) and np.array_equal(a, X + 1)
    print("same graph, same result:\n", a[0, :, :, 0])


if __name__ == "__main__":
    main()
