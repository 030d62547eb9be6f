"""Run one graph on the GPU when there is one, and say clearly when there is not.

The same graph runs on the CPU, then with mg.Session(g, device="/gpu:0"). Without CuPy or a
CUDA device, asking for the GPU raises UnavailableError naming the node and saying why.
Run: python examples/gpu.py
"""

import numpy as np

import minigraph as mg
from minigraph.devices import gpu_unavailable_reason


def main() -> None:
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None, 8, 8, 1], name="x")
        y = mg.space_to_batch_nd(x * 2.0, [2, 2], [[0, 0], [0, 0]], name="s2b")
    feed = {x: np.arange(64, dtype=np.float32).reshape(1, 8, 8, 1)}
    cpu = mg.Session(g).run(y, feed)
    print("CPU result:", cpu.shape)
    reason = gpu_unavailable_reason()
    if reason is not None:
        print(f"no GPU here: {reason}; asking for one anyway gives:")
    try:
        gpu = mg.Session(g, device="/gpu:0").run(y, feed)
    except mg.errors.UnavailableError as e:
        print(f"  UnavailableError: {e}")
        return
    assert np.array_equal(cpu, gpu)
    print("GPU result equals the CPU result:", gpu.shape)


if __name__ == "__main__":
    main()
