"""TensorList ops, TF1 TensorArray ops and mg.TensorArray, against references written here
(a Python list of NumPy arrays standing for TensorFlow's TensorList) and TensorFlow's
documented semantics; every error names its node."""

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors, ops
from minigraph.ops.tensor_array import TensorArray
from minigraph.scope import current_scope

F32 = mg.float32


def run(fetches, device=None, feed_dict=None, graph=None):
    return mg.Session(graph or mg.get_default_graph(), device=device).run(fetches, feed_dict)


def reserve(n, shape=(2,), dtype=F32):
    return ops.tensor_list_reserve(np.array(shape, np.int32), n, element_dtype=dtype)


def unknown():
    return np.array(-1, np.int32)


def stack(lst, shape=-1, dtype=F32, **kw):
    return ops.tensor_list_stack(lst, np.array(shape, np.int32), element_dtype=dtype, **kw)


def get(lst, i, shape=-1, dtype=F32):
    return ops.tensor_list_get_item(lst, i, np.array(shape, np.int32), element_dtype=dtype)


def set_item(lst, i, value, **kw):
    return ops.tensor_list_set_item(lst, i, np.asarray(value, np.float32), **kw)


def fails(build, match, error=errors.InvalidArgumentError, device=None):
    """``build()`` (in a new graph) fails, at build or run time, naming a node."""
    with pytest.raises(error, match=match) as e:
        g = mg.Graph()
        with g.as_default():
            out = build()
        mg.Session(g, device=device).run(out)
    assert e.value.node_name
    return e.value


# -- The list ops against a Python list of arrays ---------------------------------------------


def test_reserve_set_get_stack_length(any_device):
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((4, 3)).astype(np.float32)
    ref = [None] * 4  # TensorFlow: an unset element reads as zeros of the known shape
    with mg.Graph().as_default():
        lst = reserve(4, (3,))
        for i in (2, 0, 2):
            lst = set_item(lst, i, rows[i] * (i + 1))
            ref[i] = rows[i] * (i + 1)
        got = run(
            [
                stack(lst, [3]),
                get(lst, 1, [3]),
                get(lst, 2, -1),
                ops.tensor_list_length(lst),
            ]
        )
    want = np.stack([np.zeros(3, np.float32) if r is None else r for r in ref])
    np.testing.assert_array_equal(got[0], want)
    np.testing.assert_array_equal(got[1], np.zeros(3, np.float32))
    np.testing.assert_array_equal(got[2], ref[2])
    assert got[3] == 4 and got[3].dtype == np.int32


def test_from_tensor_gather_concat_split(any_device):
    x = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    with mg.Graph().as_default():
        xp = mg.placeholder(F32, [None, 3, 2])
        lst = ops.tensor_list_from_tensor(xp, np.array([3, 2], np.int32))
        idx = np.array([[3, 0], [1, 3]], np.int32)
        gathered = ops.tensor_list_gather(lst, idx, np.array([3, 2], np.int32), element_dtype=F32)
        cat, lengths = ops.tensor_list_concat_v2(
            lst, np.array([-1, 2], np.int32), np.zeros(0, np.int64), element_dtype=F32
        )
        parts = ops.tensor_list_split(
            mg.constant(np.arange(10, dtype=np.float32).reshape(5, 2)),
            np.array([-1, 2], np.int32),
            np.array([2, 0, 3], np.int64),
        )
        split_items = [get(parts, i, [-1, 2]) for i in range(3)]
        got = run([gathered, cat, lengths, *split_items], feed_dict={xp: x})
    np.testing.assert_array_equal(got[0], x[idx])
    np.testing.assert_array_equal(got[1], x.reshape(12, 2))
    np.testing.assert_array_equal(got[2], [3, 3, 3, 3])
    ten = np.arange(10, dtype=np.float32).reshape(5, 2)
    for g_, w in zip(got[3:], [ten[:2], ten[2:2], ten[2:]]):
        np.testing.assert_array_equal(g_, w)


def test_push_pop_resize_element_shape(any_device):
    with mg.Graph().as_default():
        lst = ops.empty_tensor_list(np.array([-1, 2], np.int32), -1, element_dtype=F32)
        lst = ops.tensor_list_push_back(lst, np.ones((1, 2), np.float32))
        lst = ops.tensor_list_push_back(lst, np.full((3, 2), 2, np.float32))
        popped, last = ops.tensor_list_pop_back(lst, np.array([-1, 2], np.int32), element_dtype=F32)
        grown = ops.tensor_list_resize(popped, 3)
        cut = ops.tensor_list_resize(lst, 1)
        got = run(
            [
                last,
                ops.tensor_list_length(popped),
                ops.tensor_list_length(grown),
                stack(cut, [-1, 2]),
                ops.tensor_list_element_shape(lst, shape_type=mg.int64),
                ops.tensor_list_element_shape(reserve(1, -1), shape_type=mg.int32),
                ops.tensor_list_concat_v2(
                    grown, unknown(), np.array([0, 0, 4], np.int64), element_dtype=F32
                )[1],
            ]
        )
    np.testing.assert_array_equal(got[0], np.full((3, 2), 2, np.float32))
    assert got[1] == 1 and got[2] == 3
    np.testing.assert_array_equal(got[3], np.ones((1, 1, 2), np.float32))
    assert got[4].tolist() == [-1, 2] and got[4].dtype == np.int64
    assert got[5].shape == () and got[5] == -1
    np.testing.assert_array_equal(got[6], [1, 0, 4])  # unset: leading_dims gives the rows


def test_scatter_into_existing_list_keeps_last_of_a_repeated_index(any_device):
    rows = np.arange(8, dtype=np.float32).reshape(4, 2)
    idx = np.array([1, 5, 1, 0], np.int32)
    ref = [np.zeros(2, np.float32)] * 6
    for i, r in zip(idx, rows):
        ref[i] = r
    with mg.Graph().as_default():
        lst = ops.tensor_list_scatter_into_existing_list(reserve(2), rows, idx)
        got = run([stack(lst, [2]), ops.tensor_list_length(lst)])
    np.testing.assert_array_equal(got[0], np.stack(ref))
    assert got[1] == 6


def test_unset_element_shape_comes_from_set_elements_or_the_input(any_device):
    with mg.Graph().as_default():
        lst = set_item(reserve(3, -1), 1, [[1.0, 2.0]])
        got = run([get(lst, 0), stack(lst), get(reserve(2, [-1]), 0, [4])])
    np.testing.assert_array_equal(got[0], np.zeros((1, 2), np.float32))
    np.testing.assert_array_equal(got[1], [[[0, 0]], [[1, 2]], [[0, 0]]])
    np.testing.assert_array_equal(got[2], np.zeros(4, np.float32))


def test_set_item_resizes_when_asked(any_device):
    with mg.Graph().as_default():
        lst = set_item(reserve(1), 3, [1.0, 2.0], resize_if_index_out_of_bounds=True)
        got = run([ops.tensor_list_length(lst), stack(lst, [2])])
    assert got[0] == 4
    np.testing.assert_array_equal(got[1], [[0, 0], [0, 0], [0, 0], [1, 2]])


def test_a_list_is_a_value_earlier_lists_keep_their_elements(any_device):
    with mg.Graph().as_default():
        a = set_item(reserve(2), 0, [1.0, 1.0])
        b = set_item(a, 0, [2.0, 2.0])
        c, _ = ops.tensor_list_pop_back(b, np.array([2], np.int32), element_dtype=F32)
        got = run(
            [stack(a, [2]), stack(b, [2]), ops.tensor_list_length(c), ops.tensor_list_length(b)]
        )
    np.testing.assert_array_equal(got[0], [[1, 1], [0, 0]])
    np.testing.assert_array_equal(got[1], [[2, 2], [0, 0]])
    assert got[2] == 1 and got[3] == 2


def test_in_place_consumers_cannot_corrupt_a_list(any_device):
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    kept = x.copy()
    with mg.Graph().as_default():
        xp = mg.placeholder(F32, [3, 2])
        doubled = xp * 2.0  # a fresh buffer the list must not keep
        lst = ops.tensor_list_from_tensor(doubled, np.array([2], np.int32))
        item = get(lst, 1, [2])
        bumped = (item + 1.0) + 1.0  # may run in place on item's buffer
        again = (get(lst, 1, [2]) + 5.0) * 2.0
        whole = stack(lst, [2])
        whole2 = whole + 1.0
        popped = ops.tensor_list_pop_back(lst, np.array([2], np.int32), element_dtype=F32)[1] + 1.0
        got = run([bumped, again, whole2, popped, stack(lst, [2])], feed_dict={xp: x})
    np.testing.assert_array_equal(got[0], x[1] * 2 + 2)
    np.testing.assert_array_equal(got[1], (x[1] * 2 + 5) * 2)
    np.testing.assert_array_equal(got[2], x * 2 + 1)
    np.testing.assert_array_equal(got[3], x[2] * 2 + 1)
    np.testing.assert_array_equal(got[4], x * 2)
    np.testing.assert_array_equal(x, kept)  # the fed array is as it was


def test_set_item_keeps_a_copy_of_the_item(any_device):
    with mg.Graph().as_default():
        xp = mg.placeholder(F32, [2])
        v = xp + 1.0
        lst = ops.tensor_list_set_item(reserve(1), 0, v)
        w = v * 3.0  # v's last reader: may be overwritten in place
        got = run([w, stack(lst, [2])], feed_dict={xp: np.array([1, 2], np.float32)})
    np.testing.assert_array_equal(got[0], [6, 9])
    np.testing.assert_array_equal(got[1], [[2, 3]])


def test_shapes_at_build_time():
    with mg.Graph().as_default():
        lst = reserve(3, (2,))
        assert lst.dtype == mg.variant and lst.shape == mg.TensorShape([])
        assert stack(lst, [2], num_elements=3).shape == mg.TensorShape([3, 2])
        assert stack(lst, -1).shape == mg.TensorShape(None)
        assert get(lst, 0, [-1, 2]).shape == mg.TensorShape([None, 2])
        gathered = ops.tensor_list_gather(lst, [0, 1], np.array([2], np.int32), element_dtype=F32)
        assert gathered.shape == mg.TensorShape([2, 2])
        cat, lengths = ops.tensor_list_concat_v2(
            lst, np.array([-1, 4], np.int32), np.zeros(0, np.int64), element_dtype=F32
        )
        assert cat.shape == mg.TensorShape([None, 4]) and lengths.shape == mg.TensorShape([None])
        assert ops.tensor_list_length(lst).shape == mg.TensorShape([])


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: reserve(-1), "num_elements to reserve must be a non negative number, but got -1"),
        (lambda: reserve(2, [[2]]), "at most rank 1 but is rank 2"),
        (lambda: stack(reserve(2), [-2]), "Dimension -2 must be >= -1"),
        (lambda: stack(reserve(2), 3), "The only valid scalar shape tensor is the fully unknown"),
        (
            lambda: get(reserve(3), 3, [2]),
            r"Trying to access element 3 in a list with 3 elements\.",
        ),
        (lambda: get(reserve(3), -1, [2]), "Trying to access element -1 in a list with 3"),
        (
            lambda: get(reserve(3), 0, [2], mg.int32),
            "Invalid data types; op elements int32 but list elements float",
        ),
        (
            lambda: get(reserve(3, -1), 0),
            "Trying to read an uninitialized tensor but element_shape is not fully defined: "
            "<unknown> and no list element is set",
        ),
        (lambda: get(reserve(3), 0, [3]), r"Incompatible shapes during merge: \[3\] vs\. \[2\]"),
        (lambda: set_item(reserve(3), 3, [1, 2]), "Trying to modify element 3 in a list with 3"),
        (lambda: set_item(reserve(3), -1, [1, 2]), "Trying to modify element -1 in a list"),
        (
            lambda: set_item(reserve(3), 0, [1, 2, 3]),
            r"incompatible shape at a list index. Item element shape: \[3\] list shape: \[2\]",
        ),
        (
            lambda: ops.tensor_list_set_item(reserve(3), 0, np.array([1, 2], np.int32)),
            "Invalid data types; op elements int32 but list elements float",
        ),
        (
            lambda: ops.tensor_list_push_back(reserve(1), np.ones(3, np.float32)),
            r"Tried to append a tensor with incompatible shape to a list. Op element shape: \[3\]",
        ),
        (
            lambda: ops.tensor_list_push_back(
                ops.empty_tensor_list(np.array([2], np.int32), 0, element_dtype=F32),
                np.ones(2, np.float32),
            ),
            "Tried to push item into a full list list size: 0 max_num_elements: 0",
        ),
        (
            lambda: ops.tensor_list_pop_back(
                ops.empty_tensor_list(unknown(), -1, element_dtype=F32),
                unknown(),
                element_dtype=F32,
            ),
            r"Trying to pop from an empty list\.",
        ),
        (
            lambda: ops.tensor_list_pop_back(reserve(1, -1), unknown(), element_dtype=F32),
            r"element_shape is not fully defined\.<unknown>",
        ),
        (
            lambda: stack(reserve(3), [2], num_elements=2),
            "Operation expected a list with 2 elements but got a list with 3 elements",
        ),
        (lambda: stack(reserve(0, -1)), "Tried to stack elements of an empty list"),
        (lambda: stack(reserve(2, -1)), "only contains uninitialized tensors"),
        (
            lambda: stack(set_item(set_item(reserve(2, -1), 0, [1]), 1, [1, 2])),
            r"Incompatible shapes during merge: \[1\] vs\. \[2\]",
        ),
        (
            lambda: ops.tensor_list_from_tensor(mg.placeholder(F32, []), unknown()),
            r"Tensor must be at least a vector, but saw shape: \[\]",
        ),
        (
            lambda: ops.tensor_list_from_tensor(
                np.ones((1, 1), np.float32), np.array([2], np.int32)
            ),
            r"Specified a list with shape \[2\] from a tensor with shape \[1\]",
        ),
        (
            lambda: ops.tensor_list_gather(
                reserve(3), np.array([0, 3], np.int32), np.array([2], np.int32), element_dtype=F32
            ),
            "Index 3 out o range; list only has 3 elements",
        ),
        (
            lambda: ops.tensor_list_gather(
                reserve(3, -1), np.zeros(0, np.int32), unknown(), element_dtype=F32
            ),
            "Tried to gather 0-elements from a list with non-fully-defined shape",
        ),
        (
            lambda: ops.tensor_list_scatter_into_existing_list(
                reserve(3), np.ones((1, 2), np.float32), np.array([0, 1], np.int32)
            ),
            r"Expected len\(indices\) == tensor.shape\[0\], but saw: 2 vs. 1",
        ),
        (
            lambda: ops.tensor_list_scatter_into_existing_list(
                reserve(3), np.ones((1, 2), np.float32), np.array([-1], np.int32)
            ),
            "must all be non-negative",
        ),
        (
            lambda: ops.tensor_list_scatter_into_existing_list(
                reserve(3), np.ones((1, 2), np.int32), np.array([0], np.int32)
            ),
            "Invalid data types; input tensor type: int32 list element_type: float",
        ),
        (
            lambda: ops.tensor_list_resize(reserve(3), -1),
            "expects size to be non-negative. Got: -1",
        ),
        (
            lambda: ops.tensor_list_split(
                np.arange(5, dtype=np.float32), unknown(), np.array([2, 2], np.int64)
            ),
            "Unused values in tensor. Length of tensor: 5 Values used: 4",
        ),
        (
            lambda: ops.tensor_list_split(
                np.arange(5, dtype=np.float32), unknown(), np.array([3, 3], np.int64)
            ),
            r"Attempting to slice \[3, 6\] from tensor with length 5",
        ),
        (
            lambda: ops.tensor_list_split(
                np.arange(5, dtype=np.float32), unknown(), np.array([-1, 6], np.int64)
            ),
            "Invalid value in lengths: -1",
        ),
        (
            lambda: ops.tensor_list_concat_v2(
                ops.tensor_list_from_tensor(np.ones(2, np.float32), unknown()),
                unknown(),
                np.zeros(0, np.int64),
                element_dtype=F32,
            )[0],
            "Concat saw a scalar shape at index 0 but requires at least vectors",
        ),
        (
            lambda: ops.tensor_list_concat_v2(
                reserve(0, -1), unknown(), np.zeros(0, np.int64), element_dtype=F32
            )[0],
            "All except the first dimension must be fully defined when concating an empty",
        ),
    ],
)
def test_list_errors_name_the_node(build, match, any_device):
    fails(build, match)


# -- TF1 TensorArray ops ------------------------------------------------------------------------


def ta_v3(size=3, **attrs):
    t = ops.TensorArrayV3(current_scope(), size, dtype=F32, **attrs)
    return t.handle, t.flow


def write(h, flow, i, v):
    return ops.TensorArrayWriteV3(current_scope(), h, i, np.asarray(v, np.float32), flow).flow_out


def read(h, flow, i, dtype=F32):
    return ops.TensorArrayReadV3(current_scope(), h, i, flow, dtype=dtype).value


def test_tensor_array_v3_write_read_gather_scatter_concat_split_size(any_device):
    scope = current_scope
    with mg.Graph().as_default():
        h, f = ta_v3(3, clear_after_read=False)
        f = write(h, f, 0, [1, 2])
        f = ops.TensorArrayScatterV3(
            scope(), h, [2, 1], np.array([[5, 6], [3, 4]], np.float32), f
        ).flow_out
        r = read(h, f, 1)
        g = ops.TensorArrayGatherV3(scope(), h, [2, 0], f, dtype=F32).value
        size = ops.TensorArraySizeV3(scope(), h, f).size
        cat = ops.TensorArrayConcatV3(scope(), h, f, dtype=F32)
        h2, f2 = ta_v3(0, dynamic_size=True)
        f2 = ops.TensorArraySplitV3(
            scope(), h2, np.arange(5, dtype=np.float32), np.array([2, 0, 3], np.int64), f2
        ).flow_out
        cat2 = ops.TensorArrayConcatV3(scope(), h2, f2, dtype=F32)
        size2 = ops.TensorArraySizeV3(scope(), h2, f2).size
        got = run([r, g, size, cat.value, cat.lengths, cat2.value, cat2.lengths, size2])
    np.testing.assert_array_equal(got[0], [3, 4])
    np.testing.assert_array_equal(got[1], [[5, 6], [1, 2]])
    assert got[2] == 3
    np.testing.assert_array_equal(got[3], [1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(got[4], [2, 2, 2])
    np.testing.assert_array_equal(got[5], np.arange(5))
    np.testing.assert_array_equal(got[6], [2, 0, 3])
    assert got[7] == 3


def test_tensor_array_v3_unwritten_reads_zeros_with_a_known_shape_and_each_run_is_new(any_device):
    with mg.Graph().as_default():
        h, f = ta_v3(2, element_shape=[2])
        f = write(h, f, 0, [1, 2])
        g = ops.TensorArrayGatherV3(current_scope(), h, [0, 1], f, dtype=F32).value
        sess = mg.Session(mg.get_default_graph())
        first, second = sess.run(g), sess.run(g)  # a new array each run: no "read twice"
    np.testing.assert_array_equal(first, [[1, 2], [0, 0]])
    np.testing.assert_array_equal(second, first)


def test_tensor_array_v3_read_hands_out_a_value_the_array_does_not_share(any_device):
    with mg.Graph().as_default():
        h, f = ta_v3(1, clear_after_read=False)
        f = write(h, f, 0, [1, 2])
        a = read(h, f, 0) + 1.0
        with mg.control_dependencies([a]):
            b = read(h, f, 0) * 1.0
        got = run([a, b])
    np.testing.assert_array_equal(got[0], [2, 3])
    np.testing.assert_array_equal(got[1], [1, 2])


def _two_writes():
    h, f = ta_v3()
    return write(h, write(h, f, 0, [1.0]), 0, [2.0])


def _read_twice():
    h, f = ta_v3()
    f = write(h, f, 0, [1.0])
    r = read(h, f, 0)
    with mg.control_dependencies([r]):
        return read(h, f, 0)


def _write_after_read():
    h, f = ta_v3(clear_after_read=False)
    f = write(h, f, 0, [1.0])
    r = read(h, f, 0)
    with mg.control_dependencies([r]):
        return write(h, f, 0, [2.0])


def _after_close():
    h, f = ta_v3()
    close = ops.TensorArrayCloseV3(current_scope(), h)
    with mg.control_dependencies([close.operation]):
        return read(h, f, 0)


def _gather_none():
    h, f = ta_v3()
    return ops.TensorArrayGatherV3(current_scope(), h, np.zeros(0, np.int32), f, dtype=F32).value


def _scatter(indices, value, **attrs):
    h, f = ta_v3(3, **attrs)
    return ops.TensorArrayScatterV3(current_scope(), h, indices, np.asarray(value), f).flow_out


def _split(lengths, size=2, value=(1.0, 2.0, 3.0)):
    h, f = ta_v3(size)
    return ops.TensorArraySplitV3(
        current_scope(), h, np.asarray(value, np.float32), np.array(lengths, np.int64), f
    ).flow_out


@pytest.mark.parametrize(
    "build, match, error",
    [
        (
            lambda: write(*ta_v3(), 3, [1.0]),
            r"Tried to write to index 3 but array is not resizeable and size is: 3",
            None,
        ),
        (lambda: write(*ta_v3(), -1, [1.0]), "Tried to write to index -1", None),
        (
            lambda: (
                ops.TensorArrayWriteV3(
                    current_scope(), *ta_v3()[:1], 0, np.array([1], np.int32), ta_v3()[1]
                ).flow_out
            ),
            "TensorArray dtype is float but Op is trying to write dtype int32",
            None,
        ),
        (
            _two_writes,
            "Could not write to TensorArray index 0 because it has already been written to",
            None,
        ),
        (
            _read_twice,
            "Could not read index 0 twice because it was cleared after a previous read",
            None,
        ),
        (_write_after_read, "because it has already been read", None),
        (lambda: read(*ta_v3(), 3), "Tried to read from index 3 but array size is: 3", None),
        (
            lambda: read(*ta_v3(), 0),
            r"Could not read from TensorArray index 0\.  Furthermore, the element shape is not "
            "fully defined: <unknown>",
            None,
        ),
        (
            lambda: read(*ta_v3(), 0, mg.int32),
            "TensorArray dtype is float but Op requested dtype int32",
            None,
        ),
        (_after_close, "has already been closed", None),
        (lambda: ta_v3(-1)[1], r"Size should be >= 0\.", None),
        (
            _gather_none,
            "TensorArray has size zero, but element shape <unknown> is not fully defined",
            errors.UnimplementedError,
        ),
        (
            lambda: _scatter([3, 0], np.ones((2, 2), np.float32)),
            r"Max scatter index must be < array size \(3 vs\. 3\)",
            None,
        ),
        (
            lambda: _scatter([0, 0], np.ones((2, 2), np.float32)),
            "has already been written to",
            None,
        ),
        (
            lambda: _scatter([0, 1, 2], np.ones((2, 2), np.float32)),
            "Dimensions must be equal, but are 3 and 2",
            None,
        ),
        (
            lambda: _scatter([0], np.ones((1, 2), np.int32)),
            "Op is trying to write dtype int32",
            None,
        ),
        (
            lambda: _split([1, 1]),
            "Expected sum of lengths to be equal to values.shape\\[0\\], but sum of lengths is 2",
            None,
        ),
        (
            lambda: _split([1, 2], size=3),
            r"TensorArray's size is not equal to the size of lengths \(3 vs\. 2\)",
            None,
        ),
        (lambda: _split([-1, 4]), "Invalid value in lengths: -1", None),
    ],
)
def test_tensor_array_v3_errors_name_the_node(build, match, error, any_device):
    fails(build, match, error or errors.InvalidArgumentError)


def test_tensor_array_v3_identical_element_shapes_and_inconsistent_gathers():
    def identical():
        h, f = ta_v3(identical_element_shapes=True)
        return write(h, write(h, f, 0, [1.0, 2.0]), 1, [1.0, 2.0, 3.0])

    fails(
        identical,
        r"value shape is \[3\] which is incompatible with the TensorArray's inferred element "
        r"shape: \[2\]",
    )

    def mixed():
        h, f = ta_v3(2)
        f = write(h, write(h, f, 0, [1.0, 2.0]), 1, [1.0])
        return ops.TensorArrayGatherV3(current_scope(), h, [0, 1], f, dtype=F32).value

    fails(mixed, r"inconsistent shapes.  Index 0 has shape: \[2\] but index 1 has shape: \[1\]")


# -- mg.TensorArray (tf.TensorArray in TensorFlow 2) -------------------------------------------


def test_tensor_array_round_trips(any_device):
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    with mg.Graph().as_default():
        ta = TensorArray(F32, size=4)
        for i in range(4):
            ta = ta.write(i, x[i] * 2)
        assert ta.element_shape == mg.TensorShape([3])
        un = TensorArray(F32, size=4).unstack(x)
        sc = TensorArray(F32, size=5).scatter([4, 1], x[:2])
        sp = TensorArray(F32, size=2, infer_shape=False).split(
            np.arange(5, dtype=np.float32), [2, 3]
        )
        dyn = TensorArray(F32, size=0, dynamic_size=True).write(2, [1.0, 2.0])
        got = run(
            [
                ta.stack(),
                ta.read(3),
                un.gather([3, 1]),
                un.concat(),
                sc.stack(),
                sp.read(1),
                sp.concat(),
                ta.size(),
                dyn.size(),
                dyn.stack(),
            ]
        )
    np.testing.assert_array_equal(got[0], x * 2)
    np.testing.assert_array_equal(got[1], x[3] * 2)
    np.testing.assert_array_equal(got[2], x[[3, 1]])
    np.testing.assert_array_equal(got[3], x.reshape(-1))
    want = np.zeros((5, 3), np.float32)
    want[[4, 1]] = x[:2]
    np.testing.assert_array_equal(got[4], want)
    np.testing.assert_array_equal(got[5], [2, 3, 4])
    np.testing.assert_array_equal(got[6], np.arange(5))
    assert got[7] == 4 and got[8] == 3
    np.testing.assert_array_equal(got[9], [[0, 0], [0, 0], [1, 2]])


def test_tensor_array_flow_rebuilds_and_writes_leave_the_original_alone():
    with mg.Graph().as_default():
        ta = TensorArray(F32, size=2, element_shape=[2])
        written = ta.write(0, [1.0, 2.0])
        again = TensorArray.from_flow(written.flow, F32, element_shape=[2])
        assert again.handle is written.flow and written.flow.dtype == mg.variant
        assert again.read(0).shape == mg.TensorShape([2])
        got = run([again.stack(), ta.stack()])
    np.testing.assert_array_equal(got[0], [[1, 2], [0, 0]])
    np.testing.assert_array_equal(got[1], [[0, 0], [0, 0]])


def test_tensor_array_checks_shapes_and_dtypes_while_building():
    with mg.Graph().as_default():
        ta = TensorArray(F32, size=2).write(0, [1.0, 2.0])
        with pytest.raises(ValueError, match=r"Inconsistent shapes: saw \[3\] but expected \[2\]"):
            ta.write(1, [1.0, 2.0, 3.0])
        with pytest.raises(TypeError, match="dtype"):
            ta.write(1, mg.constant([1, 2]))
        with pytest.raises(ValueError, match="Size must be provided"):
            TensorArray(F32)
