"""SpaceToBatchND and BatchToSpaceND against the seed doc, TensorFlow's tests and a reference.

Expected values come from the seed doc's examples, from semantics.md (TensorFlow
2.21's tests and runs), or from the doc's four steps (pad, reshape, permute,
reshape) written out below in NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigraph as mg
from minigraph import errors, ops
from minigraph.kernel import KernelContext

pytestmark = pytest.mark.usefixtures("any_device")  # CPU and (simulated) GPU

S2B = mg.space_to_batch_nd
B2S = mg.batch_to_space_nd
INT64_MAX = 2**63 - 1
ALL_DTYPES = [d.as_numpy_dtype for d in mg.dtypes.ALL_TYPES]  # every dtype, bool included


# -- Independent references: the doc's four steps ------------------------------------


def ref_space_to_batch(x: np.ndarray, block: list[int], pads: list[list[int]]) -> np.ndarray:
    """Pad, reshape to [batch, P1/b0, b0, ...] + rest, move the blocks first, reshape."""
    m = len(block)
    rest = list(x.shape[m + 1 :])
    padded = np.pad(x, [(0, 0)] + [(p[0], p[1]) for p in pads] + [(0, 0)] * len(rest))
    split = [x.shape[0]]
    for i, b in enumerate(block):
        split += [padded.shape[i + 1] // b, b]
    r = padded.reshape(split + rest)
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
    perm += list(range(1 + 2 * m, r.ndim))
    out_shape = [x.shape[0] * int(np.prod(block, dtype=np.int64))]
    out_shape += [padded.shape[i + 1] // b for i, b in enumerate(block)] + rest
    return r.transpose(perm).reshape(out_shape)


def ref_batch_to_space(x: np.ndarray, block: list[int], crops: list[list[int]]) -> np.ndarray:
    """Reshape the batch to block + [batch'], interleave into the spatial dims, crop."""
    m = len(block)
    batch = x.shape[0] // int(np.prod(block, dtype=np.int64))
    spatial, rest = list(x.shape[1 : m + 1]), list(x.shape[m + 1 :])
    r = x.reshape(list(block) + [batch] + spatial + rest)
    perm = [m] + [a for i in range(m) for a in (m + 1 + i, i)] + list(range(2 * m + 1, r.ndim))
    r = r.transpose(perm).reshape([batch] + [s * b for s, b in zip(spatial, block)] + rest)
    index = tuple(slice(c[0], r.shape[i + 1] - c[1]) for i, c in enumerate(crops))
    return r[(slice(None), *index)]


def values(shape: Any, dtype: Any) -> np.ndarray:
    """Distinct nonzero values (so padding zeros show), mixed for bool."""
    n = int(np.prod(shape, dtype=np.int64))
    if np.dtype(dtype) == np.bool_:
        return (np.arange(n) % 3 != 1).reshape(shape)
    return (np.arange(n) % 100 + 1).astype(dtype).reshape(shape)


# -- Running a node ------------------------------------------------------------------


def run_const(op: Any, x: Any, block: Any, pairs: Any, name: str = "op") -> np.ndarray:
    g = mg.Graph()
    with g.as_default():
        y = op(x, block, pairs, name=name)
    out = mg.Session(g).run(y)
    assert y.shape.is_compatible_with(out.shape)
    return out


def run_fed(
    op: Any,
    x: np.ndarray,
    block: np.ndarray,
    pairs: np.ndarray,
    name: str = "op",
) -> np.ndarray:
    """Inputs as placeholders (block_shape's size must be known to build), fed at run time."""
    block, pairs = np.asarray(block), np.asarray(pairs)
    block = block.astype(np.int32) if block.dtype == np.float64 else block
    pairs = pairs.astype(np.int32) if pairs.dtype == np.float64 else pairs
    g = mg.Graph()
    with g.as_default():
        xp = mg.placeholder(mg.as_dtype(x.dtype), name="x")
        bp = mg.placeholder(mg.as_dtype(block.dtype), shape=[block.shape[0]], name="block")
        pp = mg.placeholder(mg.as_dtype(pairs.dtype), name="pairs")
        y = op(xp, bp, pp, name=name)
    return mg.Session(g).run(y, {xp: x, bp: block, pp: pairs})


def infer(op: Any, x: Any, block: Any, pairs: Any) -> mg.TensorShape:
    """The inferred output shape; a spec tuple (shape, dtype) becomes a placeholder."""

    def node(v: Any, name: str) -> Any:
        if isinstance(v, tuple):
            return mg.placeholder(v[1], shape=v[0], name=name)
        return v

    with mg.Graph().as_default():
        return op(node(x, "x"), node(block, "block"), node(pairs, "pairs")).shape


def kernel(op_type: str) -> Any:
    return mg.registered_ops()[op_type].kernels["CPU"]


# -- Seed doc examples (semantics.md §10) -------------------------------------------

EX4_IN = np.arange(1, 17, dtype=np.float32).reshape(2, 2, 4, 1)
EX4_OUT = np.array(
    [[[[0], [1], [3]]], [[[0], [9], [11]]], [[[0], [2], [4]]], [[[0], [10], [12]]],
     [[[0], [5], [7]]], [[[0], [13], [15]]], [[[0], [6], [8]]], [[[0], [14], [16]]]],
    np.float32,
)  # fmt: skip

SEED_EXAMPLES = [
    (
        [[[[1], [2]], [[3], [4]]]],
        [[0, 0], [0, 0]],
        [[[[1]]], [[[2]]], [[[3]]], [[[4]]]],
    ),
    (
        [[[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]]],
        [[0, 0], [0, 0]],
        [[[[1, 2, 3]]], [[[4, 5, 6]]], [[[7, 8, 9]]], [[[10, 11, 12]]]],
    ),
    (
        np.arange(1, 17).reshape(1, 4, 4, 1),
        [[0, 0], [0, 0]],
        [
            [[[1], [3]], [[9], [11]]],
            [[[2], [4]], [[10], [12]]],
            [[[5], [7]], [[13], [15]]],
            [[[6], [8]], [[14], [16]]],
        ],
    ),  # fmt: skip
    (EX4_IN, [[0, 0], [2, 0]], EX4_OUT),
]


@pytest.mark.parametrize("x, pads, expected", SEED_EXAMPLES)
def test_seed_examples(x: Any, pads: Any, expected: Any) -> None:
    x = np.asarray(x, np.float32)
    expected = np.asarray(expected, np.float32)
    out = run_const(S2B, x, [2, 2], pads)
    assert out.dtype == np.float32 and out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(run_const(B2S, out, [2, 2], pads), x)


def test_seed_example_4_inverted_by_crops() -> None:
    np.testing.assert_array_equal(run_const(B2S, EX4_OUT, [2, 2], [[0, 0], [2, 0]]), EX4_IN)


def test_cpp_client_api() -> None:
    root = mg.Scope.new_root_scope()
    x = ops.Const(root, [[[[1], [2]], [[3], [4]]]])
    s2b = ops.SpaceToBatchND(root.with_op_name("s2b"), x, [2, 2], [[0, 0], [0, 0]])
    b2s = ops.BatchToSpaceND(root.with_op_name("b2s"), s2b, [2, 2], [[0, 0], [0, 0]])
    assert s2b.node().name == "s2b" and s2b.output.shape == mg.TensorShape([4, 1, 1, 1])
    y, z = mg.ClientSession(root).run([s2b.output, b2s.output])
    np.testing.assert_array_equal(y.ravel(), [1, 2, 3, 4])
    np.testing.assert_array_equal(z, [[[[1], [2]], [[3], [4]]]])


# -- TensorFlow's spacetobatch/batchtospace tests (semantics.md §9) ----------------

ND_PAIRS = [
    ([1, 2], [], np.zeros((0, 2), np.int32), [1, 2]),
    ([[1, 2], [3, 4]], [], np.zeros((0, 2), np.int32), [[1, 2], [3, 4]]),
    (np.arange(8).reshape(2, 2, 2), [], np.zeros((0, 2), np.int32), np.arange(8).reshape(2, 2, 2)),
    ([[1, 2], [3, 4]], [1], [[0, 0]], [[1, 2], [3, 4]]),
    (np.arange(8).reshape(2, 2, 2), [1], [[0, 0]], np.arange(8).reshape(2, 2, 2)),
    (np.arange(8).reshape(2, 2, 2), [1, 1], [[0, 0], [0, 0]], np.arange(8).reshape(2, 2, 2)),
    ([[1, 2, 3], [4, 5, 6]], [2], [[1, 0]], [[0, 2], [0, 5], [1, 3], [4, 6]]),
    (
        [[[1, 11], [2, 21], [3, 31]], [[4, 41], [5, 51], [6, 61]]],
        [2],
        [[1, 0]],
        [[[0, 0], [2, 21]], [[0, 0], [5, 51]], [[1, 11], [3, 31]], [[4, 41], [6, 61]]],
    ),
]


@pytest.mark.parametrize("x, block, pads, expected", ND_PAIRS)
def test_tf_nd_pairs_both_directions(x: Any, block: Any, pads: Any, expected: Any) -> None:
    x, expected = np.asarray(x, np.float32), np.asarray(expected, np.float32)
    block = np.asarray(block, np.int32)
    out = run_const(S2B, x, block, pads)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)
    back = run_fed(B2S, expected, block, np.asarray(pads, np.int32))
    np.testing.assert_array_equal(back, x)


LEGACY = [  # tf.space_to_batch(x, paddings, block_size), as ND with block [bs, bs]
    ([[[[1], [2]], [[3], [4]]]], 2, [[0, 0], [0, 0]], [[[[1]]], [[[2]]], [[[3]]], [[[4]]]]),
    (
        [[[[1], [2]], [[3], [4]]]],
        3,
        [[1, 0], [1, 0]],
        np.array([0, 0, 0, 0, 1, 2, 0, 3, 4]).reshape(9, 1, 1, 1),
    ),
    (
        np.arange(1, 17).reshape(2, 2, 4, 1),
        2,
        [[0, 0], [0, 0]],
        np.array([[1, 3], [9, 11], [2, 4], [10, 12], [5, 7], [13, 15], [6, 8], [14, 16]]).reshape(
            8, 1, 2, 1
        ),
    ),
    (
        np.arange(1, 33).reshape(2, 4, 4, 1),
        2,
        [[0, 0], [0, 0]],
        np.array(
            [
                [[1, 3], [9, 11]],
                [[17, 19], [25, 27]],
                [[2, 4], [10, 12]],
                [[18, 20], [26, 28]],
                [[5, 7], [13, 15]],
                [[21, 23], [29, 31]],
                [[6, 8], [14, 16]],
                [[22, 24], [30, 32]],
            ]
        ).reshape(8, 2, 2, 1),
    ),  # fmt: skip
]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.uint8, np.int64])
@pytest.mark.parametrize("x, bs, pads, expected", LEGACY)
def test_tf_legacy_cases(x: Any, bs: int, pads: Any, expected: Any, dtype: Any) -> None:
    x, expected = np.asarray(x, dtype), np.asarray(expected, dtype)
    out = run_fed(S2B, x, np.array([bs, bs], np.int32), np.array(pads, np.int32))
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(run_const(B2S, out, [bs, bs], pads), x)


DIRECT = [  # testDirect: (shape, block, paddings), checked against the reference
    ([3, 1, 2, 0], [3], [[0, 2]]),
    ([3, 0, 2, 5], [3], [[0, 0]]),
    ([3, 0, 2, 5], [3], [[1, 2]]),
    ([3, 3, 4, 5, 2], [3, 4, 2], [[1, 2], [0, 0], [3, 0]]),
    ([3, 3, 4, 5, 2], [3, 4, 2, 2], [[1, 2], [0, 0], [3, 0], [0, 0]]),
    (
        [3, 2, 2, 3, 4, 5, 2, 5],
        [1, 1, 3, 4, 2, 2],
        [[0, 0], [0, 0], [1, 2], [0, 0], [3, 0], [0, 0]],
    ),
    (
        [3, 2, 2, 3, 4, 5, 2, 5],
        [1, 1, 3, 4, 2, 2, 1],
        [[0, 0], [0, 0], [1, 2], [0, 0], [3, 0], [0, 0], [0, 0]],
    ),
    ([2, 4, 6, 3], [2], [[0, 0]]),  # fewer block dims than spatial dims
    ([0, 4, 4, 1], [2, 2], [[0, 0], [0, 0]]),  # zero-size batch
    ([1, 4, 6, 2], [1, 2, 1], [[1, 0], [0, 0], [0, 0]]),  # block 1 with padding: not combined
    ([1, 6, 2, 3, 4, 2, 3], [2, 2, 1, 2, 2], [[0, 0]] * 5),  # 5 non-combined dims: no limit here
]


@pytest.mark.parametrize("shape, block, pads", DIRECT)
def test_tf_direct_against_reference(shape: list, block: list, pads: list) -> None:
    x = values(shape, np.float32)
    expected = ref_space_to_batch(x, block, pads)
    out = run_fed(S2B, x, np.array(block, np.int32), np.array(pads, np.int32))
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)
    back = run_fed(B2S, out, np.array(block, np.int64), np.array(pads, np.int64))
    np.testing.assert_array_equal(back, x)


def test_tf_edge_shapes() -> None:
    assert run_const(S2B, np.zeros([3, 0, 2, 5]), [3], [[1, 2]]).shape == (9, 1, 2, 5)
    assert run_const(S2B, np.zeros([0, 4, 4, 1]), [2, 2], [[0, 0], [0, 0]]).shape == (0, 2, 2, 1)
    everything = run_const(B2S, np.zeros([4, 2, 3, 1]), [2, 2], [[2, 2], [0, 0]])
    assert everything.shape == (1, 0, 6, 1)


def test_matches_transposed_space_to_depth() -> None:
    """TF's check: space_to_batch(x) == T(space_to_depth(T(x))) with T = transpose [3,1,2,0]."""
    x = np.random.default_rng(0).standard_normal((5, 10, 16, 7)).astype(np.float32)
    t = x.transpose(3, 1, 2, 0)
    n, h, w, c = t.shape
    depth = t.reshape(n, h // 2, 2, w // 2, 2, c).transpose(0, 1, 3, 2, 4, 5)
    expected = depth.reshape(n, h // 2, w // 2, 4 * c).transpose(3, 1, 2, 0)
    np.testing.assert_array_equal(run_const(S2B, x, [2, 2], [[0, 0], [0, 0]]), expected)


# -- Identity cases -----------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.bool_, np.int8, np.complex128])
@pytest.mark.parametrize(
    "block, pairs",
    [([], np.zeros((0, 2), np.int32)), ([1, 1], [[0, 0], [0, 0]]), ([1], [[0, 0]])],
)
def test_unchanged_without_blocks_or_padding(dtype: Any, block: list, pairs: Any) -> None:
    x = values([2, 3, 4], dtype)
    before = x.copy()
    for op in (S2B, B2S):
        out = run_fed(op, x, np.array(block, np.int32), np.asarray(pairs, np.int32))
        assert out.dtype == dtype and out.shape == x.shape
        np.testing.assert_array_equal(out, x)
        assert not np.shares_memory(out, x)
    np.testing.assert_array_equal(x, before)


# -- Dtypes ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype(dtype: Any) -> None:
    x = values([2, 3, 5, 2], dtype)
    block, pads = [2, 3], [[1, 0], [0, 1]]
    out = run_fed(S2B, x, np.array(block, np.int64), np.array(pads, np.int32))
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, ref_space_to_batch(x, block, pads))
    back = run_fed(B2S, out, np.array(block, np.int32), np.array(pads, np.int64))
    assert back.dtype == dtype
    np.testing.assert_array_equal(back, x)


def test_index_dtype_attrs_are_independent() -> None:
    with mg.Graph().as_default():
        y = S2B(np.zeros([1, 4, 4, 1]), np.array([2, 2], np.int64), np.zeros((2, 2), np.int32))
        z = B2S(y, np.array([2, 2], np.int32), np.zeros((2, 2), np.int64))
    assert y.node.attrs["Tblock_shape"] == mg.int64 and y.node.attrs["Tpaddings"] == mg.int32
    assert z.node.attrs["Tblock_shape"] == mg.int32 and z.node.attrs["Tcrops"] == mg.int64
    assert y.dtype == z.dtype == mg.float64


def test_float_index_dtype_rejected() -> None:
    with mg.Graph().as_default(), pytest.raises(errors.InvalidArgumentError, match="Tblock_shape"):
        S2B(np.zeros([1, 4, 4, 1]), np.array([2.0, 2.0]), [[0, 0], [0, 0]])


# -- Shape inference with unknowns (semantics.md §1, §2, §9) --------------------------

F32 = mg.float32
I32 = mg.int32

INFER = [
    (S2B, ([3, None, 2, 2], F32), [2, 3], [[1, 1], [0, 1]], [18, None, 1, 2]),
    (S2B, ([3, None, None, 2], F32), [2, 3], ([2, 2], I32), [18, None, None, 2]),
    (S2B, ([3, 4, 4, 2], F32), ([2], I32), [[0, 0], [0, 0]], [None, None, None, 2]),
    (S2B, ([3, 4, 4, 2], F32), ([2], I32), ([None, None], I32), [None, None, None, 2]),
    (S2B, ([3, 2, 3, 2], F32), [2, 3], [[1, 1], [0, 0]], [18, 2, 1, 2]),
    (S2B, ([None, 4, 6, 2], F32), [2, 3], [[0, 0], [0, 0]], [None, 2, 2, 2]),
    (S2B, (None, F32), [2, 3], [[0, 0], [0, 0]], None),
    (S2B, ([3, 4], F32), np.zeros(0, np.int32), np.zeros((0, 2), np.int32), [3, 4]),
    (S2B, ([3, 4], F32), ([0], I32), (None, I32), [3, 4]),
    (B2S, ([18, None, None, 2], F32), [2, 3], [[0, 0], [0, 0]], [3, None, None, 2]),
    (B2S, ([18, None, 2, 2], F32), [2, 3], [[1, 1], [0, 1]], [3, None, 5, 2]),
    (B2S, ([18, 2, 1, 2], F32), [2, 3], [[1, 1], [0, 0]], [3, 2, 3, 2]),
    (B2S, ([None, 2, 2, 1], F32), [2, 2], [[0, 0], [0, 0]], [None, 4, 4, 1]),
    (B2S, ([18, 2, 1, 2], F32), ([2], I32), [[0, 0], [0, 0]], [None, None, None, 2]),
    (B2S, ([18, 2, 1, 2], F32), [2, 3], ([2, 2], I32), [3, None, None, 2]),
    (B2S, (None, F32), [2, 3], [[0, 0], [0, 0]], None),
]


@pytest.mark.parametrize("op, x, block, pairs, expected", INFER)
def test_shape_inference(op: Any, x: Any, block: Any, pairs: Any, expected: Any) -> None:
    assert infer(op, x, block, pairs) == mg.TensorShape(expected)


# -- Errors --------------------------------------------------------------------------

IA = errors.InvalidArgumentError
RE = errors.ResourceExhaustedError
BIG_BLOCK = np.array([1879048192, 1879048192], np.int64)
HUGE_BLOCK = np.array([2**40, 2**40], np.int64)

BUILD_ERRORS = [  # constants prove these wrong when the graph is built
    (S2B, [1, 2, 2, 1], [[2, 2]], [[0, 0], [0, 0]], IA, "block_shape must have rank 1."),
    (S2B, [1, 2], [2, 2], [[0, 0], [0, 0]], IA, "Shape must be at least rank 3 but is rank 2"),
    (
        S2B,
        [1, 2, 2, 1],
        [2, 2],
        [[0, 0]],
        IA,
        "Dimension 0 in both shapes must be equal, but are 1 and 2. Shapes are [1,2] and [2,2].",
    ),
    (S2B, [1, 2, 2, 1], [2, 2], [0, 0, 0, 0], IA, "Shapes must be equal rank, but are 1 and 2"),
    (S2B, [1, 2, 2], [0, 2], [[0, 0], [0, 0]], IA, "block_shape must be positive"),
    (S2B, [1, 2, 2], [-1, 2], [[0, 0], [0, 0]], IA, "block_shape must be positive"),
    (S2B, [10, 20, 20], np.array([-10, -10], np.int64), [[0, 0], [0, 0]], IA, "must be positive"),
    (S2B, [1, 2, 2], [1, 1], [[0, -1], [0, 0]], IA, "paddings cannot be negative"),
    (
        S2B,
        [1, 2, 3, 1],
        [3, 3],
        [[0, 0], [0, 0]],
        IA,
        "Dimension size must be evenly divisible by 3 but is 2",
    ),
    (S2B, [1, 2, 3, 1], [3, 3], [[0, 0]], IA, "Dimension 0 in both shapes must be equal"),
    (
        S2B,
        [10, 19, 22],
        BIG_BLOCK,
        [[0, 0], [0, 0]],
        RE,
        "Negative dimension size caused by overflow when multiplying 18790481920 and 1879048192",
    ),
    (
        S2B,
        [1, 1, 1],
        [1],
        np.array([[0, INT64_MAX]], np.int64),
        RE,
        "Dimension size overflow from adding 1 and 9223372036854775807",
    ),
    (B2S, [2, 2], [2, 2], [[0, 0], [0, 0]], IA, "Shape must be at least rank 3 but is rank 2"),
    (B2S, [2, 2, 3], [2, 2, 3], [[0, 0]] * 3, IA, "Shape must be at least rank 4 but is rank 3"),
    (B2S, [4, 1, 1, 1], [0, 1], [[0, 0], [0, 0]], IA, "block_shape must be positive"),
    (B2S, [4, 1, 1, 1], [-1, 1], [[0, 0], [0, 0]], IA, "block_shape must be positive"),
    (B2S, [4, 1, 1, 1], [-1, -1], [[0, 0], [0, 0]], IA, "block_shape must be positive"),
    (B2S, [4, 1, 1, 1], [2, 2], [[0, -1], [0, 0]], IA, "crops cannot be negative"),
    (
        B2S,
        [4, 2, 3, 1],
        [2, 2],
        [[3, 2], [0, 0]],
        IA,
        "Negative dimension size caused by subtracting 2 from 1",
    ),
    (
        B2S,
        [3, 1, 1, 1],
        [2, 3],
        [[0, 0], [0, 0]],
        IA,
        "Dimension size must be evenly divisible by 2 but is 3",
    ),
    (B2S, [4, 1, 1, 1], [2, 2], [[0, 0]], IA, "Dimension 0 in both shapes must be equal"),
    (
        B2S,
        [0, 5, 1],
        np.array([2**62], np.int64),
        [[0, 0]],
        RE,
        "Negative dimension size caused by overflow when multiplying 5 and 4611686018427387904",
    ),
]


@pytest.mark.parametrize("op, shape, block, pairs, error, message", BUILD_ERRORS)
def test_build_time_errors(
    op: Any, shape: list, block: Any, pairs: Any, error: type, message: str
) -> None:
    with mg.Graph().as_default(), pytest.raises(error) as info:
        op(np.zeros(shape, np.float32), block, pairs, name="bad_node")
    assert message in info.value.message
    assert info.value.node_name == "bad_node" and "bad_node" in str(info.value)


def test_build_time_block_shape_size_must_be_known() -> None:
    with mg.Graph().as_default():
        b = mg.placeholder(mg.int32, shape=[None])
        for op in (S2B, B2S):
            with pytest.raises(IA, match="block_shape must have known size.") as info:
                op(np.zeros([1, 2, 2, 1]), b, [[0, 0], [0, 0]], name=f"unsized_{op.__name__}")
            assert info.value.node_name == f"unsized_{op.__name__}"
        with pytest.raises(IA, match="block_shape must have rank 1."):
            S2B(np.zeros([1, 2, 2, 1]), mg.placeholder(mg.int32), [[0, 0], [0, 0]])


RUN_ERRORS = [  # placeholders defer these to the kernels
    (S2B, [1, 2], [2, 2], [[0, 0], [0, 0]], IA, "input rank should be >= 3 instead of 2"),
    (S2B, [1, 2, 2, 1], [2, 2], [[0, 0]], IA, "paddings should have shape [2, 2] instead of [1,2]"),
    (
        S2B,
        [1, 2, 2, 1],
        [2, 2],
        [0, 0, 0, 0],
        IA,
        "paddings should have shape [2, 2] instead of [4]",
    ),
    (
        S2B,
        [1, 2, 2],
        [0, 2],
        [[0, 0], [0, 0]],
        IA,
        "All values in block_shape must be positive, got value, 0 at index 0.",
    ),
    (
        S2B,
        [1, 2, 2],
        [2, -1],
        [[0, 0], [0, 0]],
        IA,
        "All values in block_shape must be positive, got value, -1 at index 1.",
    ),
    (
        S2B,
        [10, 20, 20],
        np.array([-10, -10], np.int64),
        [[0, 0], [0, 0]],
        IA,
        "block_shape must be positive",
    ),
    (S2B, [1, 2, 2], HUGE_BLOCK, [[0, 0], [0, 0]], IA, "Product of block sizes must be positive"),
    (S2B, [1, 2, 2], [1, 1], [[0, -1], [0, 0]], IA, "Paddings must be non-negative"),
    (
        S2B,
        [1, 2, 3, 1],
        [3, 3],
        [[0, 0], [0, 0]],
        IA,
        "padded_shape[0]=2 is not divisible by block_shape[0]=3",
    ),
    (  # dim 0's divisibility is checked before dim 1's negative pad
        S2B,
        [1, 2, 3, 1],
        [3, 3],
        [[0, 0], [-1, 0]],
        IA,
        "padded_shape[0]=2 is not divisible by block_shape[0]=3",
    ),
    (
        S2B,
        [1, 3, 2, 1],
        [3, 3],
        [[0, 0], [0, 0]],
        IA,
        "padded_shape[1]=2 is not divisible by block_shape[1]=3",
    ),
    (
        S2B,
        [10, 19, 22],
        BIG_BLOCK,
        [[0, 0], [0, 0]],
        RE,
        "Negative output dimension size caused by overflow when multiplying 10 and "
        "3530822107858468864",
    ),
    (B2S, [2, 2], [2, 2], [[0, 0], [0, 0]], IA, "input rank should be >= 3 instead of 2"),
    (B2S, [4, 2, 2, 1], [2, 2], [[0, 0]], IA, "crops should have shape [2, 2] instead of [1,2]"),
    (
        B2S,
        [1, 2, 2, 1],
        [-1, -1],
        [[0, 0], [0, 0]],
        IA,
        "All values in block_shape must be positive, got value, -1 at index 0.",
    ),
    (
        B2S,
        [1, 0, 0, 1],
        [-1, -1],
        [[0, 0], [0, 0]],
        IA,
        "All values in block_shape must be positive, got value, -1 at index 0.",
    ),
    (
        B2S,
        [4, 1, 1, 1],
        [0, 1],
        [[0, 0], [0, 0]],
        IA,
        "All values in block_shape must be positive, got value, 0 at index 0.",
    ),
    (B2S, [4, 1, 1], HUGE_BLOCK, [[0, 0], [0, 0]], IA, "Product of block sizes must be positive"),
    (
        B2S,
        [3, 1, 1, 1],
        [2, 3],
        [[0, 0], [0, 0]],
        IA,
        "Input batch dimension (3) is not divisible by product of block sizes (6)",
    ),
    (B2S, [4, 1, 1, 1], [2, 2], [[0, -1], [0, 0]], IA, "Crops must be non-negative"),
    (
        B2S,
        [4, 2, 3, 1],
        [2, 2],
        [[3, 2], [0, 0]],
        IA,
        "cropped_shape[0]=-1 must be non-negative",
    ),
]


@pytest.mark.parametrize("op, shape, block, pairs, error, message", RUN_ERRORS)
def test_run_time_errors(
    op: Any, shape: list, block: Any, pairs: Any, error: type, message: str
) -> None:
    with pytest.raises(error) as info:
        run_fed(op, np.zeros(shape, np.float32), block, pairs, name="bad_node")
    assert message in info.value.message
    assert info.value.node_name == "bad_node" and "bad_node" in str(info.value)


@pytest.mark.parametrize("op_type", ["SpaceToBatchND", "BatchToSpaceND"])
def test_kernel_rejects_block_shape_of_rank_2(op_type: str) -> None:
    """Unreachable through a graph (shape inference refuses it first); checked on the kernel."""
    ctx = KernelContext({}, np, "direct", op_type)
    with pytest.raises(IA, match=r"block_shape rank should be 1 instead of 2") as info:
        kernel(op_type)(ctx, np.zeros([4, 2, 2, 1]), np.array([[2, 2]]), np.zeros((2, 2), int))
    assert info.value.node_name == "direct"


HUGE = [  # outputs too large: ResourceExhaustedError before anything is allocated
    (S2B, [1, 1, 1], [1], np.array([[0, 2**40]], np.int64), "OOM when allocating"),
    (S2B, [1, 1, 1], [1], np.array([[0, INT64_MAX]], np.int64), "does not fit in int64"),
    (S2B, [2**20, 1, 1], [2**20], [[0, 2**20 - 1]], "OOM when allocating"),
    (B2S, [2**20, 2**20, 1], [2**20], [[0, 0]], "OOM when allocating"),
    (B2S, [0, 5, 1], np.array([2**62], np.int64), [[0, 0]], "does not fit in int64"),
]


@pytest.mark.parametrize("op, shape, block, pairs, message", HUGE)
def test_huge_outputs(op: Any, shape: list, block: Any, pairs: Any, message: str) -> None:
    x = np.broadcast_to(np.zeros((), np.float32), shape)  # no memory for the input either
    with pytest.raises(RE) as info:
        run_fed(op, x, np.asarray(block), np.asarray(pairs), name="huge")
    assert message in info.value.message and info.value.node_name == "huge"


# -- Properties against the reference ------------------------------------------------


@st.composite
def space_to_batch_cases(draw: Any) -> tuple:
    m = draw(st.integers(0, 3))
    block, pads, shape = [], [], [draw(st.integers(0, 3))]
    for _ in range(m):
        b = draw(st.integers(1, 4))
        size = draw(st.integers(0, 6))
        start = draw(st.integers(0, 5))
        end = (-(size + start)) % b + b * draw(st.integers(0, 1))
        block.append(b)
        pads.append([start, end])
        shape.append(size)
    shape += draw(st.lists(st.integers(0, 3), max_size=2))
    dtype = draw(st.sampled_from(ALL_DTYPES))
    index_dtypes = draw(
        st.tuples(st.sampled_from([np.int32, np.int64]), st.sampled_from([np.int32, np.int64]))
    )
    return shape, block, pads, dtype, index_dtypes


@st.composite
def batch_to_space_cases(draw: Any) -> tuple:
    m = draw(st.integers(0, 3))
    block, crops, shape = [], [], []
    for _ in range(m):
        b = draw(st.integers(1, 4))
        size = draw(st.integers(0, 4))
        start = draw(st.integers(0, size * b))
        end = draw(st.integers(0, size * b - start))
        block.append(b)
        crops.append([start, end])
        shape.append(size)
    batch = draw(st.integers(0, 2)) * int(np.prod(block, dtype=np.int64))
    shape = [batch, *shape, *draw(st.lists(st.integers(0, 3), max_size=2))]
    dtype = draw(st.sampled_from(ALL_DTYPES))
    index_dtypes = draw(
        st.tuples(st.sampled_from([np.int32, np.int64]), st.sampled_from([np.int32, np.int64]))
    )
    return shape, block, crops, dtype, index_dtypes


def _pairs(pairs: list, m: int, dtype: Any) -> np.ndarray:
    return np.array(pairs, dtype).reshape(m, 2)


@settings(max_examples=80, deadline=None)
@given(space_to_batch_cases())
def test_space_to_batch_matches_reference_and_round_trips(case: tuple) -> None:
    shape, block, pads, dtype, (block_dtype, pads_dtype) = case
    x = values(shape, dtype)
    before = x.copy()
    b, p = np.array(block, block_dtype), _pairs(pads, len(block), pads_dtype)
    out = run_fed(S2B, x, b, p)
    expected = ref_space_to_batch(x, block, pads)
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(run_fed(B2S, out, b, p), x)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(b, block)


@settings(max_examples=80, deadline=None)
@given(batch_to_space_cases())
def test_batch_to_space_matches_reference(case: tuple) -> None:
    shape, block, crops, dtype, (block_dtype, crops_dtype) = case
    x = values(shape, dtype)
    before = x.copy()
    out = run_fed(B2S, x, np.array(block, block_dtype), _pairs(crops, len(block), crops_dtype))
    expected = ref_batch_to_space(x, block, crops)
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(x, before)


@settings(max_examples=40, deadline=None)
@given(space_to_batch_cases())
def test_constant_inputs_give_the_inferred_shape(case: tuple) -> None:
    shape, block, pads, dtype, (block_dtype, pads_dtype) = case
    x = values(shape, dtype)
    g = mg.Graph()
    with g.as_default():
        y = S2B(x, np.array(block, block_dtype), _pairs(pads, len(block), pads_dtype))
    expected = ref_space_to_batch(x, block, pads)
    assert y.shape == mg.TensorShape(expected.shape)
    np.testing.assert_array_equal(mg.Session(g).run(y), expected)


# -- Inputs are never written ---------------------------------------------------------


def test_fed_and_constant_inputs_are_not_mutated() -> None:
    x = values([2, 4, 6, 3], np.float32)
    views = {
        "contiguous": x,
        "transposed": np.ascontiguousarray(x.transpose(3, 1, 2, 0)).transpose(3, 1, 2, 0),
        "read-only": x.copy(),
    }
    views["read-only"].flags.writeable = False
    for name, arr in views.items():
        before = arr.copy()
        block, pads = np.array([2, 3], np.int32), np.array([[2, 0], [1, 2]], np.int32)
        out = run_fed(S2B, arr, block, pads)
        np.testing.assert_array_equal(out, ref_space_to_batch(before, [2, 3], [[2, 0], [1, 2]]))
        back = run_fed(B2S, out, block, pads)
        np.testing.assert_array_equal(back, before, err_msg=name)
        np.testing.assert_array_equal(arr, before, err_msg=name)
        np.testing.assert_array_equal(block, [2, 3])
        np.testing.assert_array_equal(pads, [[2, 0], [1, 2]])


@pytest.mark.parametrize(
    "dtype, depth",
    [(np.float64, (3,)), (np.float32, (4, 4)), (np.int32, (3,)), (np.int16, (6,))]
    + [(np.float32, (5,)), (np.float32, (4,)), (np.complex128, (1,)), (np.int8, (16,))]
    + [(np.int8, (12,)), (np.float64, ())],
)
@pytest.mark.parametrize("pads", [[[0, 0], [0, 0]], [[1, 1], [2, 1]]])
def test_space_to_batch_depth_rows(dtype: Any, depth: tuple, pads: list) -> None:
    # Depth rows of 24, 64, 12, 12, 20 and 12 bytes (4-byte words copied by a ufunc, the
    # last of int8), of 16 bytes (one element each) and of 8 bytes (one element); padding
    # that cuts the blocks.
    x = values((2, 4, 3, *depth), dtype)
    block = [2, 3]
    out = run_fed(S2B, x, np.array(block), np.array(pads))
    np.testing.assert_array_equal(out, ref_space_to_batch(x, block, pads))
    np.testing.assert_array_equal(run_fed(B2S, out, np.array(block), np.array(pads)), x)
