"""Python and NumPy values meeting ops (issue 25, item 6: what TensorFlow's own kernel tests
found). Empty lists take the dtype the op needs, lists holding tensors are packed, and
NumPy defers to a tensor's operators. Expected values are TensorFlow's documented results
or NumPy references computed here."""

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors

pytestmark = pytest.mark.usefixtures("any_device")


def run(build, feeds=None):
    g = mg.Graph()
    with g.as_default():
        out = build()
    return mg.Session(g).run(out, feeds)


def same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    np.testing.assert_array_equal(got, want)


# -- an empty Python list has no dtype of its own -------------------------------------------


@pytest.mark.parametrize(
    "value, dtype, shape",
    [
        ([], mg.int32, (0,)),
        ([[], []], mg.int32, (2, 0)),
        ([], mg.int64, (0,)),
        ([[]], mg.bool, (1, 0)),
    ],
)
def test_constant_of_an_empty_list_takes_the_dtype_asked_for(value, dtype, shape):
    got = run(lambda: mg.constant(value, dtype=dtype))
    same(got, np.zeros(shape, dtype.as_numpy_dtype))


def test_constant_of_an_empty_list_is_float32_by_default():
    same(run(lambda: mg.constant([])), np.zeros((0,), np.float32))  # tf.constant([])


def test_a_shape_input_of_an_empty_list_is_the_ops_int_type():
    """``ones([])`` and ``reshape(x, [])``: the shape is a Python ``[]``, which TensorFlow
    converts to the op's preferred index type (int32), not to float32."""
    same(run(lambda: mg.ones([])), np.ones([], np.float32))
    same(run(lambda: mg.zeros([], dtype=mg.int64)), np.zeros([], np.int64))
    same(run(lambda: mg.reshape(mg.constant([7.0]), [])), np.reshape(np.float32([7.0]), []))
    g = mg.Graph()
    with g.as_default():
        r = mg.reshape(mg.constant([7.0]), [])
        f = mg.ones([])
    assert r.shape.as_list() == [] and f.shape.as_list() == []
    assert r.op.node.attrs["Tshape"] == mg.int32 and f.op.node.attrs["index_type"] == mg.int32


def test_sparse_segment_sum_of_empty_lists():
    # TensorFlow's testWithEmptySegments and testWithEmptySegmentsWithNumSegments.
    data = lambda: mg.zeros([0, 4])  # noqa: E731
    same(run(lambda: mg.sparse_segment_sum(data(), [], [])), np.zeros((0, 4), np.float32))
    same(run(lambda: mg.sparse_segment_mean(data(), [], [])), np.zeros((0, 4), np.float32))
    same(
        run(lambda: mg.sparse_segment_sum(data(), [], [], num_segments=5)),
        np.zeros((5, 4), np.float32),
    )


def test_an_empty_list_beside_typed_values_takes_their_dtype():
    # The dtype comes from the other inputs first: [] and [1, 2] of an Add are both int32.
    same(run(lambda: mg.concat([[], mg.constant([1, 2])], axis=0)), np.int32([1, 2]))
    same(run(lambda: mg.concat([[], np.int64([3])], axis=0)), np.int64([3]))


def test_an_empty_list_for_an_index_input_is_int32():
    # GatherV2's Tindices has no default; int32 is TensorFlow's type for Python ints.
    got = run(lambda: mg.gather(mg.constant([[1.0, 2.0]]), []))
    same(got, np.zeros((0, 2), np.float32))


def test_non_empty_float_data_still_refused_for_int_inputs():
    with pytest.raises(errors.InvalidArgumentError, match="float32"):
        with mg.Graph().as_default():
            mg.reshape(mg.constant([7.0]), [1.0])
    with pytest.raises(errors.InvalidArgumentError, match="Expected int32"):
        with mg.Graph().as_default():
            mg.constant([1.5], dtype=mg.int32)


# -- a Python list holding tensors is packed (TensorFlow's auto-packing) ------------------------


def test_tensor_scatter_update_with_a_list_of_tensors():
    want = np.zeros((3, 2), np.float32)
    want[[0, 2]] = [[1.0, 2.0], [3.0, 4.0]]
    got = run(
        lambda: mg.tensor_scatter_nd_update(
            mg.zeros([3, 2]), [[0], [2]], [mg.constant([1.0, 2.0]), mg.constant([3.0, 4.0])]
        )
    )
    same(got, want)


def test_reshape_to_a_list_holding_a_dynamic_dim():
    x = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.float32, shape=[None, 3, 2])
        y = mg.reshape(p, [mg.shape(p)[0], -1])
    assert y.shape.rank == 2
    assert y.op.inputs[1].op.type == "Pack"
    same(mg.Session(g).run(y, {p: x}), x.reshape(x.shape[0], -1))


def test_nested_lists_mixing_tensors_and_python_values():
    t = lambda v: mg.constant(np.int64(v))  # noqa: E731
    got = run(lambda: mg.identity([[t(1), 2], [3, t(4)]]))
    same(got, np.array([[1, 2], [3, 4]], np.int64))  # the tensors' dtype, not int32
    got = run(lambda: mg.add(mg.constant([1.0, 2.0]), [mg.constant(10.0), 20]))
    same(got, np.float32([11.0, 22.0]))
    got = run(lambda: mg.constant([1.0, 2.0]) * [mg.constant(3.0), np.float32(4.0)])
    same(got, np.float32([3.0, 8.0]))


def test_packed_lists_are_checked_as_tensorflow_checks_them():
    with mg.Graph().as_default():
        z = mg.zeros([3, 2])
        # A tensor of another dtype is refused (TensorFlow: TypeError "Cannot convert a list
        # containing a tensor of dtype int32 to float32").
        with pytest.raises(errors.InvalidArgumentError, match="tensor of dtype int32 to float32"):
            mg.tensor_scatter_nd_update(z, [[0], [2]], [mg.constant([1, 2]), [3.0, 4.0]])
        # Items of different shapes: the Pack says so, named.
        with pytest.raises(errors.InvalidArgumentError, match="must be equal") as e:
            mg.tensor_scatter_nd_update(z, [[0], [2]], [mg.constant([1.0, 2.0]), [3.0]])
        assert e.value.op_type == "Pack" and e.value.node_name.endswith("/updates")
        # A fixed dtype input (DynamicPartition's int32 partitions) takes int32 tensors only.
        with pytest.raises(errors.InvalidArgumentError, match="int64 to int32"):
            mg.dynamic_partition([1.0, 2.0], [mg.constant(np.int64(0)), 1], 2)


def test_packing_does_not_touch_what_the_user_passed():
    arr = np.float32([3.0, 4.0])
    g = mg.Graph()
    with g.as_default():
        value = [mg.constant([1.0, 2.0]), arr]
        y = mg.identity(value)
    assert isinstance(value[0], mg.Output) and value[1] is arr
    same(mg.Session(g).run(y), np.float32([[1.0, 2.0], [3.0, 4.0]]))
    assert arr.flags.writeable and arr.tolist() == [3.0, 4.0]


def test_lists_holding_tensors_of_another_graph_go_to_that_graph():
    g = mg.Graph()
    with g.as_default():
        c = mg.constant(2)
    y = mg.identity([c, 3])  # no default graph: the op goes where its inputs are
    assert y.graph is g
    same(mg.Session(g).run(y), np.int32([2, 3]))


# -- NumPy defers to a tensor's operators -------------------------------------------------------


def test_numpy_array_plus_a_tensor_runs_the_tensors_operator():
    g = mg.Graph()
    with g.as_default():
        c = mg.constant([10, 20])
        y = np.array([1, 2], np.int32) + c
        z = np.int32(3) * c
        w = np.array([15, 15], np.int32) < c
    assert isinstance(y, mg.Output) and y.op.type == "AddV2"
    assert isinstance(z, mg.Output) and isinstance(w, mg.Output)
    a, b, d = mg.Session(g).run([y, z, w])
    same(a, np.array([1, 2], np.int32) + np.int32([10, 20]))
    same(b, np.int32(3) * np.int32([10, 20]))
    same(d, np.array([15, 15], np.int32) < np.int32([10, 20]))


def test_numpy_ufuncs_on_a_tensor_are_refused_not_made_object_arrays():
    with mg.Graph().as_default():
        c = mg.constant([1, 2])
        with pytest.raises(TypeError, match="does not support ufuncs"):
            np.add(np.int32([1, 2]), c)
