"""Issue 12: every bad input a clear error, no allocation that cannot be afforded.

One test (or a few) per item of the issue's list, then the allocation rule: the tensor
cap (a Session option and ``mg.config``), MemoryError turned into ResourceExhaustedError,
and the guard checked in a child process under an address-space limit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors, graph_io
from minigraph.kernel import KernelContext
from minigraph.ops import array_ops

pytestmark = pytest.mark.usefixtures("any_device")


def raises_at(error: type[errors.OpError], node: str, match: str = "") -> Any:
    """pytest.raises for an mg error naming ``node``; check with ``.check()`` after."""

    class _Check:
        def __enter__(self) -> Any:
            self.ctx = pytest.raises(error, match=match)
            self.info = self.ctx.__enter__()
            return self.info

        def __exit__(self, *exc: Any) -> bool:
            out = self.ctx.__exit__(*exc)
            assert self.info.value.node_name == node, self.info.value
            assert f"'{node}'" in str(self.info.value)
            return out

    return _Check()


# -- 1. ragged and too-deep nested lists ------------------------------------------------------


@pytest.mark.parametrize(
    "value, where",
    [
        ([[1, 2], [3]], "value[1] is of shape [1], but value[0] is of shape [2]"),
        ([1, [2]], "value[1] is of shape [1], but value[0] is a scalar"),
        ([[[1]], [[2, 3]]], "value[1] is of shape [1, 2], but value[0] is of shape [1, 1]"),
    ],
)  # fmt: skip
def test_ragged_lists_say_where(value: list, where: str) -> None:
    g = mg.Graph()
    with g.as_default():
        with raises_at(errors.InvalidArgumentError, "c", "non-rectangular") as info:
            mg.constant(value, name="c")
        assert where in info.value.message
        with raises_at(errors.InvalidArgumentError, "add", "non-rectangular"):
            mg.add(mg.constant(1), value, name="add")
        p = mg.placeholder(mg.int32, name="p")
    with raises_at(errors.InvalidArgumentError, "p", "non-rectangular"):
        mg.Session(g).run(p, {p: value})


def test_too_deep_lists_are_refused() -> None:
    value: Any = [1]
    for _ in range(70):
        value = [value]
    with mg.Graph().as_default(), raises_at(errors.InvalidArgumentError, "c", "64 deep"):
        mg.constant(value, name="c")


def test_ragged_indices() -> None:
    with mg.Graph().as_default(), raises_at(errors.InvalidArgumentError, "s", "non-rectangular"):
        mg.dynamic_stitch([[0, 1], [[2], 3]], [[1.0, 2.0], [3.0, 4.0]], name="s")


@pytest.mark.parametrize(
    "value", [10**5000, [1, 10**5000], 2**64, [-(2**63) - 1]], ids=["5000-digits", "in-list",
                                                                   "2**64", "below-int64"]
)  # fmt: skip
def test_python_ints_past_int64_are_refused(value: Any) -> None:
    with mg.Graph().as_default(), raises_at(errors.InvalidArgumentError, "c", "int64"):
        mg.constant(value, name="c")


# -- 2. cast(dtype=None) --------------------------------------------------------------------


def test_cast_to_none_is_a_type_error() -> None:
    with mg.Graph().as_default():
        x = mg.constant([1, 2])
        with pytest.raises(TypeError, match="dtype"):
            mg.cast(x, None)
    with pytest.raises(TypeError):
        mg.as_dtype(None)


# -- 3. float and bool dims, element counts past 2**63 --------------------------------------------


@pytest.mark.parametrize("dims", [[2, 1.5], [2, True], [np.float64(2.0)], ["2"]])
def test_shapes_take_ints_only(dims: list) -> None:
    with pytest.raises(TypeError, match="Dimension value must be integer"):
        mg.TensorShape(dims)
    with mg.Graph().as_default():
        with raises_at(errors.InvalidArgumentError, "p", "Dimension value must be integer"):
            mg.placeholder(mg.float32, dims, name="p")
        with pytest.raises(TypeError):
            mg.constant(1.0, shape=dims)


def test_numpy_int_dims_are_fine() -> None:
    assert mg.TensorShape([np.int64(2), np.int32(3), None, -1]).dims == (2, 3, None, None)


def test_shape_past_int64_elements_is_refused() -> None:
    with mg.Graph().as_default():
        with raises_at(errors.InvalidArgumentError, "p", "too large"):
            mg.placeholder(mg.float32, [2**40, 2**40], name="p")
        with raises_at(errors.InvalidArgumentError, "q", "too large"):
            mg.placeholder(mg.float32, [None, 2**62, 4], name="q")
        mg.placeholder(mg.float32, [None, 2**40], name="ok")  # may be fed with 0 rows


@pytest.mark.parametrize("value", [True, 1.0, 2.5, "3", 2**63, 2**64, None])
def test_int_attrs_take_ints_that_fit_int64(value: Any) -> None:
    with mg.Graph().as_default(), raises_at(errors.InvalidArgumentError, "p", "num_partitions"):
        mg.dynamic_partition([1, 2], [0, 1], value, name="p")


def test_float_attrs_refuse_bools() -> None:
    from minigraph.op_def import parse_attr
    from minigraph.wrappers import _check_attr

    a = parse_attr("alpha: float = 0.2")
    op_def = mg.registered_ops()["Const"]
    assert _check_attr(op_def, "n", a, 1) == 1.0
    for bad in (True, np.bool_(False), "0.5", None, 10**400):
        with pytest.raises(errors.InvalidArgumentError, match="alpha"):
            _check_attr(op_def, "n", a, bad)


def test_list_int_attrs_refuse_floats_and_bools() -> None:
    from minigraph.op_def import parse_attr
    from minigraph.wrappers import _check_attr

    a = parse_attr("ksize: list(int)")
    op_def = mg.registered_ops()["Const"]
    assert _check_attr(op_def, "n", a, [1, np.int64(2)]) == (1, 2)
    for bad in ([1.5], [True], 3, [2**64]):
        with pytest.raises(errors.InvalidArgumentError, match="ksize"):
            _check_attr(op_def, "n", a, bad)


# -- 4. ConcatV2 and Range: non-scalars, NaN and inf -------------------------------------------


def test_concat_axis_must_be_a_scalar() -> None:
    g = mg.Graph()
    with g.as_default():
        with raises_at(errors.InvalidArgumentError, "c0", "rank 0"):
            mg.concat([[1], [2]], [0, 1], name="c0")
        axis = mg.placeholder(mg.int32, name="axis")
        c = mg.concat([[1], [2]], axis, name="c")
    sess = mg.Session(g)
    with raises_at(errors.InvalidArgumentError, "c", "Concat dim tensor should be a scalar"):
        sess.run(c, {axis: [0, 1]})
    np.testing.assert_array_equal(sess.run(c, {axis: 0}), [1, 2])  # still usable


@pytest.mark.parametrize(
    "start, limit, delta, message",
    [
        (0.0, np.nan, 1.0, "Requires start <= limit when delta > 0: 0.0/nan"),
        (np.nan, 5.0, 1.0, "Requires start <= limit when delta > 0"),
        (0.0, 5.0, np.nan, "Requires start >= limit when delta < 0"),
        (0.0, np.inf, 1.0, r"Requires \(\(limit - start\) / delta\) <= 9223372036854775807"),
        (0.0, 1e300, 1e-300, r"Requires \(\(limit - start\) / delta\) <= "),
        (0.0, 5.0, 0.0, "Requires delta != 0"),
        (5.0, 0.0, 1.0, "Requires start <= limit when delta > 0: 5.0/0.0"),
        (0.0, 5.0, -1.0, "Requires start >= limit when delta < 0"),
    ],
)
def test_range_checks_as_tensorflow(start: float, limit: float, delta: float, message: str) -> None:
    g = mg.Graph()
    with g.as_default():
        with raises_at(errors.InvalidArgumentError, "r0", message):
            mg.range(start, limit, delta, dtype=mg.float64, name="r0")
        ph = [mg.placeholder(mg.float64, name=n) for n in ("s", "l", "d")]
        r = mg.range(*ph, name="r")
    with raises_at(errors.InvalidArgumentError, "r", message):
        mg.Session(g).run(r, dict(zip(ph, [start, limit, delta])))


def test_range_arguments_must_be_scalars() -> None:
    g = mg.Graph()
    with g.as_default():
        with raises_at(errors.InvalidArgumentError, "r0", "limit must be a scalar, not shape"):
            mg.range([1, 2], name="r0")
        p = mg.placeholder(mg.int32, name="p")
        r = mg.range(0, p, name="r")
    with raises_at(errors.InvalidArgumentError, "r", r"limit must be a scalar, not shape \[2\]"):
        mg.Session(g).run(r, {p: [3, 4]})


def test_range_size_past_the_cap_is_resource_exhausted() -> None:
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.int64, name="p")
        r = mg.range(np.int64(0), p, name="r")
    with raises_at(errors.ResourceExhaustedError, "r", "bytes needed"):
        mg.Session(g).run(r, {p: 2**62})


def test_range_near_the_int32_limit_is_exact() -> None:
    g = mg.Graph()
    with g.as_default():
        r = mg.range(2**31 - 10, 2**31 - 1, 4)
    assert r.dtype == mg.int32
    np.testing.assert_array_equal(mg.Session(g).run(r), [2**31 - 10, 2**31 - 6, 2**31 - 2])


@pytest.mark.parametrize("block", [3, 1 << 16])
@pytest.mark.parametrize(
    "start, limit, delta, dtype",
    [
        (-(2**31) + 5, 2**31 - 7, 40_000, np.int32),
        (2**31 - 1, -(2**31), -30_001, np.int32),
        (-(2**62), 2**62, 2**45 + 3, np.int64),
        (7, 200_001, 1, np.int32),
    ],
)
def test_integer_ranges_across_blocks_are_exact(monkeypatch, block, start, limit, delta, dtype):
    # Host ranges are written a block at a time; every block must continue the last one.
    monkeypatch.setattr(array_ops, "_RANGE_BLOCK", block)
    with mg.Graph().as_default():
        p = mg.placeholder(mg.as_dtype(dtype), shape=[])  # not folded at build time
        r = mg.range(p, dtype(limit), dtype(delta))
        got = mg.Session().run(r, {p: dtype(start)})
    expected = [start + i * delta for i in range(len(range(start, limit, delta)))]
    np.testing.assert_array_equal(got, np.array(expected, dtype))


# -- 5. range's dtype ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, dtype",
    [
        ((5,), mg.int32),
        ((np.int64(5),), mg.int64),
        ((np.int32(5),), mg.int32),
        ((2**40, 2**40 + 3), mg.int64),
        ((0, 5, 1.5), mg.float32),
        ((np.float64(1), 5), mg.float64),
        ((np.int64(1), 5.0), mg.float32),
    ],
)
def test_range_infers_dtype_as_tensorflow(args: tuple, dtype: Any) -> None:
    g = mg.Graph()
    with g.as_default():
        r = mg.range(*args)
    assert r.dtype == dtype
    start, limit = (0, args[0]) if len(args) == 1 else args[:2]
    delta = args[2] if len(args) == 3 else 1
    expected = np.arange(start, limit, delta).astype(dtype.np)
    np.testing.assert_array_equal(mg.Session(g).run(r), expected)


def test_range_casts_tensor_arguments_to_the_widest() -> None:
    g = mg.Graph()
    with g.as_default():
        r = mg.range(mg.constant(1), np.int64(4))
    assert r.dtype == mg.int64
    np.testing.assert_array_equal(mg.Session(g).run(r), [1, 2, 3])


# -- 6. slicing --------------------------------------------------------------------------------


def test_huge_slice_indices_are_mg_errors_not_overflow() -> None:
    g = mg.Graph()
    with g.as_default():
        x = mg.constant(np.arange(12).reshape(3, 4))
        with pytest.raises(errors.InvalidArgumentError, match="out of bounds"):
            x[2**31]
        y = x[2**31 : 2**40]  # empty, as NumPy
        z = x[-(2**40) :, 1]
    np.testing.assert_array_equal(mg.Session(g).run(y), np.zeros((0, 4)))
    np.testing.assert_array_equal(mg.Session(g).run(z), [1, 5, 9])
    # Past int64: an InvalidArgumentError naming the StridedSlice it would have made.
    for key in (2**70, -(2**70), slice(2**70, None), slice(None, None, 2**70)):
        with mg.Graph().as_default():
            with raises_at(errors.InvalidArgumentError, "StridedSlice", "out of range for int64"):
                mg.constant([1])[key]


@pytest.mark.parametrize("key", [slice(1.5, None), slice(None, 2.0), slice(None, None, 0.5)])
def test_float_slice_bounds_are_type_errors(key: slice) -> None:
    with mg.Graph().as_default(), pytest.raises(TypeError, match="slice indices must be integers"):
        mg.constant([1, 2, 3])[key]


@pytest.mark.parametrize("key", [1.0, "a", True, [0, 1]])
def test_bad_indices_are_type_errors(key: Any) -> None:
    with mg.Graph().as_default(), pytest.raises(TypeError, match="valid indices"):
        mg.constant([1, 2, 3])[key]


def test_two_ellipses_are_an_invalid_argument_naming_the_op() -> None:
    # TensorFlow: InvalidArgumentError (eager), "Multiple ellipses in slice spec not allowed".
    with mg.Graph().as_default():
        with raises_at(errors.InvalidArgumentError, "StridedSlice", "Multiple ellipses"):
            mg.constant([[1]])[..., ...]
        with raises_at(errors.InvalidArgumentError, "s/StridedSlice", "Multiple ellipses"):
            with mg.name_scope("s"):
                mg.constant([[1]])[..., 0, ...]


def test_scalar_tensor_index_as_tensorflow() -> None:
    g = mg.Graph()
    with g.as_default():
        x = mg.constant(np.arange(12).reshape(3, 4))
        i = mg.placeholder(mg.int32, shape=[], name="i")
        j = mg.placeholder(mg.int64, shape=[], name="j")
        row, tail, cell = x[i], x[i:], x[i, j]
        with pytest.raises(TypeError, match="valid indices"):
            x[mg.constant([0, 1])]
        with pytest.raises(TypeError, match="valid indices"):
            x[mg.constant(1.0)]
    sess = mg.Session(g)
    expected = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(sess.run(row, {i: 2}), expected[2])
    np.testing.assert_array_equal(sess.run(tail, {i: 1}), expected[1:])
    assert sess.run(cell, {i: 1, j: 3}) == expected[1, 3]
    np.testing.assert_array_equal(sess.run(row, {i: -1}), expected[-1])
    with pytest.raises(errors.InvalidArgumentError, match="out of bounds"):
        sess.run(row, {i: 3})


# -- 7. wrong Python objects in the API -------------------------------------------------------


@pytest.mark.parametrize("spec", [42, 1.5, ["/cpu:0"], object()])
def test_device_of_the_wrong_kind_is_a_type_error(spec: Any) -> None:
    with pytest.raises(TypeError, match="device"):
        with mg.device(spec):
            pass


@pytest.mark.parametrize("feed", [[1], "x", 3, ((1, 2),)])
def test_feed_dict_not_a_mapping_is_a_type_error(feed: Any) -> None:
    g = mg.Graph()
    with g.as_default():
        c = mg.constant(1)
    with pytest.raises(TypeError, match="feed_dict"):
        mg.Session(g).run(c, feed)


def test_session_arguments_of_the_wrong_kind() -> None:
    with pytest.raises(TypeError, match="graph"):
        mg.Session("not a graph")
    for bad in (-1, 1.5, True):
        with pytest.raises((TypeError, ValueError), match="max_tensor_bytes"):
            mg.Session(mg.Graph(), max_tensor_bytes=bad)


# -- 8. sizes: num_partitions, broadcasting, fed views ---------------------------------------


def test_huge_num_partitions_allocates_nothing_at_build() -> None:
    with mg.Graph().as_default():
        with raises_at(errors.ResourceExhaustedError, "p", "num_partitions"):
            mg.dynamic_partition([1, 2], [0, 1], 2**40, name="p")
        with raises_at(errors.InvalidArgumentError, "q", "int64"):
            mg.dynamic_partition([1, 2], [0, 1], 2**70, name="q")


def test_elementwise_broadcast_size_is_checked() -> None:
    g = mg.Graph()
    with g.as_default():
        a = mg.placeholder(mg.float32, name="a")
        b = mg.placeholder(mg.float32, name="b")
        y = mg.add(a, b, name="y")
    col = np.zeros((1 << 20, 1), np.float32)
    row = np.zeros((1, 1 << 20), np.float32)
    with raises_at(errors.ResourceExhaustedError, "y", "bytes"):
        mg.Session(g, max_tensor_bytes=1 << 30).run(y, {a: col, b: row})


def test_fetching_a_fed_huge_broadcast_view() -> None:
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, name="x")
        x64 = mg.placeholder(mg.float64, name="x64")
        y = mg.add(x, x, name="y")
    view = np.broadcast_to(np.float32(1), (1 << 20, 1 << 20, 1 << 10))
    sess = mg.Session(g)
    with raises_at(errors.ResourceExhaustedError, "x", "bytes needed"):
        sess.run(x, {x: view})
    # An elementwise op on the view: its output cannot be held either.
    with pytest.raises(errors.ResourceExhaustedError) as info:
        sess.run(y, {x: view})
    assert info.value.node_name in ("x", "y")
    # A dtype conversion of a fed view is checked before it allocates, too.
    with raises_at(errors.ResourceExhaustedError, "x64", "bytes needed"):
        sess.run(x64, {x64: view})
    small = np.broadcast_to(np.float32(2), (3, 4))
    out = sess.run(x, {x: small})
    assert out.shape == (3, 4) and out.flags.writeable


# -- 9. graph files ------------------------------------------------------------------------------


def _doc(nodes: list) -> dict:
    return {"format": "minigraph.graph", "version": 1, "nodes": nodes}


def _const(shape: list, dtype: str = "float64", data: str = "") -> dict:
    return {
        "name": "c",
        "op": "Const",
        "inputs": [],
        "attrs": {
            "dtype": {"type": dtype},
            "value": {"tensor": {"dtype": dtype, "shape": shape, "base64": data}},
        },
    }


def test_graph_file_with_a_5000_digit_int() -> None:
    text = '{"format": "minigraph.graph", "version": ' + "9" * 5000 + ', "nodes": []}'
    with pytest.raises(errors.InvalidArgumentError, match="more digits"):
        graph_io.from_json(text)
    doc = _doc([_const([])])
    doc["nodes"][0]["attrs"]["value"]["tensor"]["shape"] = [10**5000]
    with pytest.raises(errors.InvalidArgumentError, match="too large"):
        graph_io.graph_from_dict(doc)


@pytest.mark.parametrize(
    "shape, match",
    [([0, 2**62, 2**62], "too large"), ([0] * 70, "70 dims"), ([2**64], "too large")],
)
def test_graph_file_const_shapes_numpy_cannot_hold(shape: list, match: str) -> None:
    with raises_at(errors.InvalidArgumentError, "c", match):
        graph_io.graph_from_dict(_doc([_const(shape)]))


@pytest.mark.parametrize("name", ["(1099511627776,)f8", "f8", "<i4", "float33", "object", "V8"])
def test_graph_file_dtype_names_are_the_documented_ones(name: str) -> None:
    with raises_at(errors.InvalidArgumentError, "c", "known names are"):
        graph_io.graph_from_dict(_doc([_const([], dtype=name)]))
    with pytest.raises(TypeError):
        mg.as_dtype(name)


def test_documented_dtype_names() -> None:
    for name in ["float16", "half", "float32", "float", "float64", "double", "int8", "uint64",
                 "bool", "complex64", "complex128"]:  # fmt: skip
        assert mg.as_dtype(name).name in (name, "float16", "float32", "float64")


def test_graph_file_list_length_attr_past_the_inputs() -> None:
    g = mg.Graph()
    with g.as_default():
        mg.stack([1, 2], name="s")
    doc = json.loads(graph_io.to_json(g))
    doc["nodes"][-1]["attrs"]["N"] = {"int": 2**40}
    with raises_at(errors.InvalidArgumentError, "s", "more inputs"):
        graph_io.graph_from_dict(doc)


def test_graph_file_bad_device() -> None:
    doc = _doc([_const([])])
    doc["nodes"][0]["device"] = "nan"
    doc["nodes"][0]["attrs"]["value"]["tensor"]["base64"] = "AAAAAAAAAAA="
    with raises_at(errors.InvalidArgumentError, "c", "Invalid device"):
        graph_io.graph_from_dict(doc)


# -- 10. side notes ---------------------------------------------------------------------------


def test_stitch_of_no_lists_is_refused() -> None:
    with mg.Graph().as_default(), raises_at(errors.InvalidArgumentError, "s", "'N' of 0"):
        mg.dynamic_stitch([], [], name="s")


def test_narrowing_int_feeds_must_fit() -> None:
    g = mg.Graph()
    with g.as_default():
        p = mg.placeholder(mg.int32, name="p")
    sess = mg.Session(g)
    with raises_at(errors.InvalidArgumentError, "p", "out of range"):
        sess.run(p, {p: np.int64(2**40)})
    with raises_at(errors.InvalidArgumentError, "p", "out of range"):
        sess.run(p, {p: np.array([1, -(2**40)], np.int64)})
    assert sess.run(p, {p: np.int64(7)}) == 7


# -- the allocation rule -------------------------------------------------------------------------


def test_tensor_cap_session_option_and_config() -> None:
    g = mg.Graph()
    with g.as_default():
        big = mg.fill([1 << 20], 1.0, name="big")
    with raises_at(errors.ResourceExhaustedError, "big", "4194304 bytes needed, at most 1048576"):
        mg.Session(g, max_tensor_bytes=1 << 20).run(big)
    assert mg.Session(g, max_tensor_bytes=1 << 22).run(big).shape == (1 << 20,)
    try:
        mg.config.set_max_tensor_bytes(1 << 20)
        assert mg.config.max_tensor_bytes() == 1 << 20
        with raises_at(errors.ResourceExhaustedError, "big", "at most 1048576"):
            mg.Session(g).run(big)
        # A Session's own cap wins over the process-wide one.
        assert mg.Session(g, max_tensor_bytes=1 << 23).run(big).shape == (1 << 20,)
    finally:
        mg.config.set_max_tensor_bytes(None)
    assert mg.config.max_tensor_bytes() == mg.config.free_memory() > 0


def test_config_cap_refuses_junk() -> None:
    for bad in (1.5, True, "1"):
        with pytest.raises(TypeError):
            mg.config.set_max_tensor_bytes(bad)
    with pytest.raises(ValueError):
        mg.config.set_max_tensor_bytes(-1)


def test_default_cap_is_the_free_memory() -> None:
    free = mg.config.free_memory()
    try:
        with open("/proc/meminfo") as f:
            line = next(x for x in f if x.startswith("MemAvailable:"))
        avail = int(line.split()[1]) * 1024
        assert abs(free - avail) < max(avail // 4, 1 << 28)
    except (OSError, StopIteration):
        assert free > 0
    ctx = KernelContext({}, np, "n", "Op")
    with pytest.raises(errors.ResourceExhaustedError, match=r"\[node 'n' \(Op\)\]"):
        ctx.check_size([free + 1], np.uint8)


_OOM_OP: list[Any] = []


def test_memory_error_from_a_kernel_is_resource_exhausted(cpu_only_op: Any) -> None:
    def kernel(ctx: Any, x: Any) -> Any:
        raise MemoryError("Unable to allocate 8 EiB")

    if not _OOM_OP:  # an op type is declared once per process
        _OOM_OP.append(cpu_only_op("_TestRobustnessOOM", kernel))
    build = _OOM_OP[0]
    g = mg.Graph()
    with g.as_default():
        y = build(mg.constant([1.0]))
    sess = mg.Session(g)
    with pytest.raises(errors.ResourceExhaustedError, match="8 EiB") as info:
        sess.run(y)
    assert info.value.node_name == y.op.name
    with g.as_default():
        ok = mg.constant(3)
    assert sess.run(ok) == 3  # the Session runs again


GUARD_CHILD = textwrap.dedent(
    """
    import resource, sys
    import numpy as np
    import minigraph as mg
    from minigraph import errors

    limit = 1 << 30  # 1 GiB more than the interpreter uses now
    with open("/proc/self/statm") as f:
        used = int(f.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (used + limit, resource.RLIM_INFINITY))
    # The cap alone would allow these: only the size checks stand between them and memory.
    mg.config.set_max_tensor_bytes(1 << 62)
    g = mg.Graph()
    with g.as_default():
        n = mg.placeholder(mg.int64, name="n")
        fill = mg.fill(mg.stack([n, n]), 1.0, name="fill")
        rng = mg.range(np.int64(0), n, name="rng")
        x = mg.placeholder(mg.float32, name="x")
        add = mg.add(x, x, name="add")
        parts = mg.dynamic_partition(x, mg.zeros_like(mg.cast(x, mg.int32)), 2, name="parts")
    sess = mg.Session(g)
    view = np.broadcast_to(np.float32(1), (1 << 16, 1 << 16))
    cases = [(fill, {n: 1 << 22}), (rng, {n: 1 << 50}), (add, {x: view}), (x, {x: view})]
    for fetch, feed in cases:
        try:
            sess.run(fetch, feed)
            print("NO ERROR", fetch.name); sys.exit(1)
        except errors.ResourceExhaustedError as e:
            print("ok", e.node_name, e.message[:60])
        except errors.OpError as e:
            print("OTHER", type(e).__name__, e); sys.exit(1)
    # With the default cap (the free memory), the size checks refuse before allocating.
    mg.config.set_max_tensor_bytes(None)
    for fetch, feed in cases[:2]:
        try:
            mg.Session(g).run(fetch, feed)
            print("NO ERROR", fetch.name); sys.exit(1)
        except errors.ResourceExhaustedError as e:
            assert "bytes needed, at most" in e.message, e
            print("checked", e.node_name)
    print("done")
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs RLIMIT_AS and /proc")
def test_allocation_guard_under_an_address_space_limit() -> None:
    """Huge sizes from fed shapes, fed scalars and fed broadcast views, run in a child
    process whose address space is capped: an unguarded allocation fails this test (a
    MemoryError, or an error other than ResourceExhaustedError) instead of taking the
    machine; each must be refused by a size check or turned into ResourceExhaustedError."""
    proc = subprocess.run(
        [sys.executable, "-c", GUARD_CHILD], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("ok ") == 4 and "done" in proc.stdout, proc.stdout
    assert proc.stdout.count("checked ") == 2, proc.stdout


# -- What the fuzzer found in the op library (each fed, so only the kernel sees it) --------


def _run_fed(build, *arrays):
    g = mg.Graph()
    with g.as_default():
        ps = [mg.placeholder(mg.as_dtype(a.dtype), name=f"p{i}") for i, a in enumerate(arrays)]
        out = build(*ps)
    return mg.Session(g).run(out, dict(zip(ps, arrays)))


@pytest.mark.parametrize(
    "build, arrays, node, match",
    [
        (
            lambda p, a: mg.gather(p, [0], axis=a, name="g"),
            (np.ones((2, 2), np.float32), np.array([0, 1], np.int32)),
            "g",
            "axis must be (a )?scalar",
        ),
        (
            lambda x, perm: mg.transpose(x, perm, name="t"),
            (np.ones((2, 2), np.float32), np.array([[1, 0]], np.int32)),
            "t",
            "perm must be a vector",
        ),
        (
            lambda x, b: mg.strided_slice(x, b, b, b, name="s"),
            (np.ones((2, 2), np.float32), np.array(1, np.int32)),
            "s",
            "1D equal size tensors",
        ),
        (
            lambda x, k: mg.nn.top_k(x, k, name="k")[0],
            (np.ones((2, 3), np.float32), np.array([1, 2], np.int32)),
            "k",
            "k must be 0-D",
        ),
    ],
)
def test_fed_shape_like_inputs_of_the_wrong_rank(build, arrays, node, match):
    with raises_at(errors.InvalidArgumentError, node, match):
        _run_fed(build, *arrays)


def test_empty_shapes_numpy_cannot_hold_are_refused():
    big = 2**62
    with raises_at(errors.ResourceExhaustedError, "r", "OOM"):
        _run_fed(lambda x, s: mg.reshape(x, s, name="r"), np.ones(0, np.float32),
                 np.array([0, big, big], np.int64))  # fmt: skip
    with raises_at(errors.ResourceExhaustedError, "b", "OOM"):
        _run_fed(lambda x, s: mg.broadcast_to(x, s, name="b"), np.ones(1, np.float32),
                 np.array([0, big, big], np.int64))  # fmt: skip


def test_a_broadcast_view_is_sized_before_an_elementwise_op_copies_it():
    view = np.broadcast_to(np.float32(1.0), (1 << 21,))  # 8 MB that nothing has paid for
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, name="x")
        y = mg.negative(x, name="neg")
    with raises_at(errors.ResourceExhaustedError, "neg", "OOM"):
        mg.Session(g, max_tensor_bytes=1 << 22).run(y, {x: view})
    assert mg.Session(g).run(y, {x: view})[0] == -1.0


def test_graph_def_constant_of_a_huge_shape_is_refused_before_it_is_filled():
    pytest.importorskip("tensorboard.compat.proto.graph_pb2")
    from tensorboard.compat.proto import graph_pb2, types_pb2

    gd = graph_pb2.GraphDef()
    node = gd.node.add(name="c", op="Const")
    node.attr["dtype"].type = types_pb2.DT_FLOAT
    t = node.attr["value"].tensor
    t.dtype = types_pb2.DT_FLOAT
    for d in (2**20, 2**20, 2**20):
        t.tensor_shape.dim.add(size=d)
    t.float_val.append(1.0)  # TensorFlow repeats the last value: 2**60 floats
    with raises_at(errors.ResourceExhaustedError, "c", "OOM"):
        mg.import_graph_def(gd, name="")


def test_graph_def_list_length_attr_larger_than_the_inputs_is_refused_before_allocating():
    pytest.importorskip("tensorboard.compat.proto.graph_pb2")
    from tensorboard.compat.proto import graph_pb2, types_pb2

    gd = graph_pb2.GraphDef()
    c = gd.node.add(name="c", op="Const")
    c.attr["dtype"].type = types_pb2.DT_INT32
    c.attr["value"].tensor.dtype = types_pb2.DT_INT32
    c.attr["value"].tensor.int_val.append(1)
    pack = gd.node.add(name="pack", op="Pack", input=["c"])
    pack.attr["N"].i = 2**40  # a list of 2**40 inputs would be made before any check
    pack.attr["T"].type = types_pb2.DT_INT32
    with raises_at(errors.InvalidArgumentError, "pack", "asks for more inputs"):
        mg.import_graph_def(gd, name="")


def test_one_tensor_concat_is_an_identity_as_in_tensorflow() -> None:
    """TensorFlow's ConcatV2 takes N >= 2 and tf.concat returns one tensor as an Identity:
    a graph minigraph writes must run in TensorFlow, so the same here."""
    from minigraph.wrappers import apply_op

    g = mg.Graph()
    with g.as_default():
        c = mg.concat([[1, 2]], 0, name="one")
        with raises_at(errors.InvalidArgumentError, "one_bad", "rank 0"):
            mg.concat([[1, 2]], [0, 1], name="one_bad")
        with pytest.raises(errors.InvalidArgumentError, match="N"):
            apply_op("ConcatV2", None, [[c], 0], {})
    assert c.op.type == "Identity" and c.op.name == "one"
    np.testing.assert_array_equal(mg.Session(g).run(c), [1, 2])


def test_unsigned_types_tensorflow_refuses_are_refused_at_build_time() -> None:
    """Neg has no unsigned types in TensorFlow, and Add (v1) only uint8."""
    from minigraph.wrappers import apply_op

    g = mg.Graph()
    with g.as_default():
        u8, u32 = mg.constant(np.uint8([1])), mg.constant(np.uint32([1]))
        with pytest.raises(errors.InvalidArgumentError, match="uint8"):
            mg.negative(u8)
        with pytest.raises(errors.InvalidArgumentError, match="uint32"):
            apply_op("Add", None, [u32, u32], {})
        ok = mg.add(u32, u32)  # AddV2 takes every unsigned type
    np.testing.assert_array_equal(mg.Session(g).run(ok), [2])


# -- Issue 25, item 5: the last mishandled inputs (the rest is in test_fuzz.py's corpus) -------

RLIMIT_CHILD = textwrap.dedent(
    """
    import resource, sys
    import minigraph as mg
    from minigraph import errors
    from tensorboard.compat.proto import graph_pb2

    with open("/proc/self/statm") as f:
        used = int(f.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (used + (1 << 30), resource.RLIM_INFINITY))
    # The default cap is now at most what the process may still map, not the free memory.
    print("cap", mg.config.free_memory() <= 1 << 30)
    gd = graph_pb2.GraphDef()
    nd = gd.node.add(name="c", op="Const")
    nd.attr["dtype"].type = 10  # DT_BOOL
    t = nd.attr["value"].tensor
    t.dtype = 10
    t.tensor_shape.dim.add(size=8 << 30)
    t.bool_val.append(True)
    for cap in (None, 1 << 62):  # the default cap; then one the address space cannot meet
        mg.config.set_max_tensor_bytes(cap)
        try:
            with mg.Graph().as_default():
                mg.import_graph_def(gd)
            print("NO ERROR"); sys.exit(1)
        except errors.ResourceExhaustedError as e:
            print("refused", e.node_name, "can be allocated" in e.message, e.message[-80:])
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs RLIMIT_AS and /proc")
def test_the_default_cap_keeps_to_an_address_space_limit() -> None:
    """Under ``ulimit -v`` the free memory overstates what can be allocated: a GraphDef's
    8 GiB bool Const was allocated (MemoryError) instead of refused by the cap. The cap now
    keeps to the limit, and an allocation it still lets through is a ResourceExhaustedError."""
    pytest.importorskip("tensorboard.compat.proto.graph_pb2")
    proc = subprocess.run(
        [sys.executable, "-c", RLIMIT_CHILD], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "cap True", proc.stdout
    assert lines[1].startswith("refused import/c True"), proc.stdout  # by the cap
    assert lines[2].startswith("refused import/c False"), proc.stdout  # by the allocation
    assert "OOM when allocating tensor with shape [8589934592]" in lines[2], proc.stdout


def test_graph_def_file_size_is_checked_before_reading(tmp_path) -> None:
    pytest.importorskip("tensorboard.compat.proto.graph_pb2")
    with open(tmp_path / "huge.pb", "wb") as f:
        f.truncate(3 << 30)  # sparse: nothing on disk
    with mg.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match="protobuf's limit"):
            mg.import_graph_def(tmp_path / "huge.pb")
    (tmp_path / "small.pbtxt").write_text("node { name: 'c' op: 'NoOp' }\n" * 64)
    try:
        mg.config.set_max_tensor_bytes(100)
        with mg.Graph().as_default():
            with pytest.raises(errors.ResourceExhaustedError, match="at most 100 can be read"):
                mg.import_graph_def(tmp_path / "small.pbtxt")
    finally:
        mg.config.set_max_tensor_bytes(None)
    fifo = tmp_path / "pipe.pb"
    if hasattr(os, "mkfifo"):
        os.mkfifo(fifo)  # opening it would block until a writer came: refused first
        with mg.Graph().as_default():
            with pytest.raises(errors.InvalidArgumentError, match="not a regular file"):
                mg.import_graph_def(fifo)


def test_graph_def_shapes_are_checked_as_tensorflow_checks_them() -> None:
    pytest.importorskip("tensorboard.compat.proto.graph_pb2")
    from tensorboard.compat.proto import graph_pb2

    from minigraph.tf_proto import NUMPY_MAX_DIMS

    gd = graph_pb2.GraphDef()
    nd = gd.node.add(name="x", op="Placeholder")
    nd.attr["dtype"].type = 1
    for _ in range(NUMPY_MAX_DIMS):
        nd.attr["shape"].shape.dim.add(size=1)
    with mg.Graph().as_default():
        (x,) = mg.import_graph_def(gd, return_elements=["x:0"])
    assert x.shape.rank == NUMPY_MAX_DIMS  # as many dims as NumPy holds: fine
    nd.attr["shape"].shape.dim.add(size=1)
    with mg.Graph().as_default():
        with raises_at(errors.InvalidArgumentError, "import/x", f"{NUMPY_MAX_DIMS + 1} dims"):
            mg.import_graph_def(gd)
