"""Partial shapes, dtypes, op declarations, and shape inference at node creation."""

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors
from minigraph.op_def import parse_arg, parse_attr
from minigraph.shapes import ShapeError, broadcast


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ([None, 4], [3, None], [3, 4]),
        (None, [1, 2], [1, 2]),
        ([2, None], None, [2, None]),
        ([], [], []),
    ],
)
def test_merge(a, b, expected):
    assert mg.TensorShape(a).merge_with(b) == mg.TensorShape(expected)


@pytest.mark.parametrize(
    "a, b, message",
    [
        (
            [1, 2],
            [2, 2],
            "Dimension 0 in both shapes must be equal, but are 1 and 2. "
            "Shapes are [1,2] and [2,2].",
        ),
        ([1], [1, 2], "Shapes must be equal rank, but are 1 and 2"),
    ],
)
def test_merge_errors(a, b, message):
    with pytest.raises(ShapeError) as e:
        mg.TensorShape(a).merge_with(b)
    assert str(e.value) == message


def test_tensor_shape_properties():
    s = mg.TensorShape([None, 3])
    assert s.rank == 2 and s.dims == (None, 3) and s.as_list() == [None, 3]
    assert not s.is_fully_defined() and s.num_elements() is None
    assert s.is_compatible_with([5, 3]) and not s.is_compatible_with([5, 4])
    # an array's shape tuple (the kernels' fast path) reads as the same list would
    assert s.is_compatible_with(np.empty((5, 3)).shape) and not s.is_compatible_with((5, 4))
    assert not s.is_compatible_with((3,)) and s.is_compatible_with((-1, 3))  # -1: unknown
    assert s.is_compatible_with((np.int64(7), 3)) and mg.TensorShape(None).is_compatible_with(())
    assert mg.TensorShape(None).rank is None and mg.TensorShape(None).dims is None
    assert mg.TensorShape([2, 3]).num_elements() == 6
    assert str(s) == "[?,3]" and str(mg.TensorShape(None)) == "<unknown>"


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ([2, 1], [1, 3], [2, 3]),
        ([None, 3], [3], [None, 3]),
        ([None], [1], [None]),
        ([5], [None], [5]),
        ([], [2, 2], [2, 2]),
        (None, [2], None),
    ],
)
def test_broadcast(a, b, expected):
    assert broadcast(mg.TensorShape(a), mg.TensorShape(b)) == mg.TensorShape(expected)


def test_dtypes():
    assert mg.as_dtype(np.float32) is mg.float32
    assert mg.as_dtype("int64") is mg.int64
    assert mg.as_dtype(bool) is mg.bool
    assert mg.complex128.as_numpy_dtype is np.complex128
    with pytest.raises(TypeError):
        mg.as_dtype("string")


def test_declaration_notation():
    arg = parse_arg("indices: N * int32", ["T"])
    assert arg.is_list and arg.number_attr == "N" and arg.dtype is mg.int32
    assert parse_arg("data: T", ["T"]).type_attr == "T"
    a = parse_attr("Tindices: {int32, int64} = int32")
    assert a.kind == "type" and a.allowed == (mg.int32, mg.int64) and a.default is mg.int32
    n = parse_attr("N: int >= 1")
    assert n.kind == "int" and n.minimum == 1 and not n.has_default
    p = parse_attr("bad_indices_policy: {'', 'DEFAULT', 'ERROR', 'IGNORE'} = ''")
    assert p.kind == "string" and p.allowed == ("", "DEFAULT", "ERROR", "IGNORE")
    assert p.default == ""


@pytest.mark.parametrize(
    "build, expected",
    [
        (lambda x: x + 1.0, [None, 4]),
        (lambda x: mg.reshape(x, [-1, 2]), [None, 2]),
        (lambda x: mg.reshape(x, [8, -1]), [8, None]),
        (lambda x: mg.transpose(x), [4, None]),
        (lambda x: mg.concat([x, x], axis=1), [None, 8]),
        (lambda x: mg.concat([x, x], axis=0), [None, 4]),
        (lambda x: mg.stack([x, x], axis=1), [None, 2, 4]),
        (lambda x: x[1:, None, ::2], [None, 1, 2]),
        (lambda x: x[..., 0], [None]),
        (lambda x: mg.shape(x), [2]),
        (lambda x: mg.size(x), []),
        (
            lambda x: mg.gather(x, [[0, 1]], axis=1),
            [
                None,
                1,
                2,
            ],
        ),
        (lambda x: mg.zeros_like(x), [None, 4]),
        (lambda x: x < 1.0, [None, 4]),
    ],
)
def test_partial_shape_inference(build, expected):
    with mg.Graph().as_default():
        x = mg.placeholder(mg.float32, shape=[None, 4])
        assert build(x).shape == mg.TensorShape(expected)


def test_unknown_rank_propagates():
    with mg.Graph().as_default():
        x = mg.placeholder(mg.float32)
        assert (x + 1.0).shape.rank is None
        assert mg.shape(x).shape == mg.TensorShape([None])


def test_constant_values_propagate_into_shapes():
    with mg.Graph().as_default():
        y = mg.placeholder(mg.float32, shape=[3, 2])
        x = mg.placeholder(mg.float32, shape=[6])
        assert mg.reshape(x, mg.shape(y)).shape == mg.TensorShape([3, 2])
        # A value computed from constants (shape(y) * 1, reversed) is still known.
        assert mg.reshape(x, mg.shape(y)[::-1] * 1).shape == mg.TensorShape([2, 3])
        assert mg.fill(mg.shape(y), 1.0).shape == mg.TensorShape([3, 2])
        assert mg.range(mg.size(y)).shape == mg.TensorShape([6])


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda x: mg.reshape(x, [5]), "tensor with 6 values, but the requested shape has 5"),
        (lambda x: mg.reshape(x, [-1, -1]), "Only one input size may be -1"),
        (lambda x: x + mg.constant([1.0, 2.0, 3.0, 4.0]), "Incompatible shapes"),
        (lambda x: mg.concat([x, mg.zeros([2, 2])], 1), "Dimension 0 in both shapes"),
        (lambda x: mg.transpose(x, [0, 0]), "not a valid permutation"),
        (lambda x: x[7], "slice index 7 of dimension 0 out of bounds"),
        (lambda x: mg.gather(x, [0], axis=2), "Expected axis in the range [-2, 2)"),
        (lambda x: mg.range(1, 5, 0), "Requires delta != 0"),
        (lambda x: mg.gather(mg.constant([1, 2]), [3]), "indices[0] = 3 is not in [0, 2)"),
    ],
)
def test_shape_errors_at_build_time_name_the_node(build, message):
    with mg.Graph().as_default():
        x = mg.placeholder(mg.float32, shape=[3, 2])
        with pytest.raises(errors.InvalidArgumentError) as e:
            build(x)
    assert message in str(e.value)
    assert e.value.node_name and e.value.node_name in str(e.value)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: mg.add(mg.constant(1), mg.constant(1.0)), "does not mix dtypes"),
        (lambda: mg.add(mg.constant(1), 1.5), "Expected int32, but got 1.5"),
        (lambda: mg.logical_and(mg.constant(1), mg.constant(2)), "expected to be a bool tensor"),
        (lambda: mg.add(mg.constant(1), np.array([1.5])), "cannot convert a float64 array"),
        (lambda: mg.concat(mg.constant([1]), 0), "Expected list for 'values'"),
        (lambda: mg.cast(mg.constant(1), "string"), None),
    ],
)
def test_dtype_rules(build, message):
    with mg.Graph().as_default():
        if message is None:
            with pytest.raises(TypeError):
                build()
            return
        with pytest.raises(errors.InvalidArgumentError, match=message.replace("(", r"\(")) as e:
            build()
    assert e.value.node_name in str(e.value)


def test_python_scalars_take_the_tensor_dtype():
    with mg.Graph().as_default():
        x = mg.placeholder(mg.float64)
        assert (x + 1).dtype == mg.float64
        assert (2 * x).dtype == mg.float64
        assert mg.constant(2**40).dtype == mg.int64
        assert mg.constant(1.5).dtype == mg.float32
        assert mg.constant(np.float64(1.5)).dtype == mg.float64
        assert mg.divide(mg.constant([1, 2]), 2).dtype == mg.float64


def test_attr_validation():
    with mg.Graph().as_default():
        with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
            mg.ops.Identity(mg.Scope(mg.get_default_graph()), 1, bogus=3)
        with pytest.raises(errors.InvalidArgumentError, match="must be at least minimum 1"):
            mg.ops.Pack(mg.Scope(mg.get_default_graph()), [])
