"""Gradients through function calls, conds, cases, TensorLists and while loops
(ops/control_flow_grad.py, list_grad.py, while_grad.py).

Each model is checked against central differences (mg.test.compute_gradient_error, float64,
shapes known and unknown) and against TensorFlow 2.21's tf.gradients of the same model
built in TensorFlow's graph mode (tests/tf_oracle/make_control_flow_grad_fixtures.py,
tests/fixtures/grads_control/), on the CPU, the simulated GPU and unoptimized. The
gradient graphs themselves are checked where their form matters: a call's gradient calls a
gradient function, a cond's is a cond on the same predicate.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors
from minigraph.functions import FuncGraph, Function
from minigraph.ops import list_gather_ops as G
from minigraph.ops import list_ops as L
from minigraph.ops.control_flow_grad import inline_function
from minigraph.scope import current_scope
from minigraph.shapes import as_shape
from minigraph.wrappers import apply_op

FIXTURES = Path(__file__).parent / "fixtures" / "grads_control"
ERROR = 1e-6  # largest |theoretical - numerical| Jacobian entry, float64
DELTA = 1e-5
rng = np.random.default_rng(27)


def weights(*shape):
    """The fixed weights of a loss ``sum(weights * y)`` (as the fixture script's)."""
    return np.linspace(-1.0, 1.0, int(np.prod(shape))).reshape(shape)


def gradient_error(fn, values, unknown=False):
    """compute_gradient_error of ``fn(*xs)`` with respect to every x, each a float64
    placeholder (of unknown shape when ``unknown``) fed ``values``."""
    g = mg.Graph()
    with g.as_default():
        xs = [mg.placeholder(mg.float64, None if unknown else np.shape(v)) for v in values]
        y = fn(*xs)
    with mg.Session(g) as sess:
        y_shape = sess.run(y, dict(zip(xs, values))).shape
    with g.as_default():
        return mg.test.compute_gradient_error(
            xs, [np.shape(v) for v in values], y, y_shape, x_init_value=list(values), delta=DELTA
        )


def replay(name, model):
    """Build ``model(**placeholders)`` from fixture ``name``'s inputs; its loss and
    gradients against TensorFlow's (None where TensorFlow's is None)."""
    saved = np.load(FIXTURES / f"{name}.npz")
    inputs = {k[2:]: saved[k] for k in saved.files if k.startswith("x/")}
    g = mg.Graph()
    with g.as_default():
        ph = {k: mg.placeholder(mg.as_dtype(v.dtype), v.shape, name=k) for k, v in inputs.items()}
        loss = model(**ph)
        floats = [k for k, v in inputs.items() if v.dtype.kind == "f"]
        grads = mg.gradients(loss, [ph[k] for k in floats])
    feed = {ph[k]: v for k, v in inputs.items()}
    with mg.Session(g) as sess:
        np.testing.assert_allclose(sess.run(loss, feed), saved["y"], rtol=1e-12)
        for k, d in zip(floats, grads):
            if f"dx/{k}" not in saved.files:
                assert d is None, k
                continue
            np.testing.assert_allclose(sess.run(d, feed), saved[f"dx/{k}"], rtol=1e-10, atol=1e-12)


def op_types(fn):
    return [n.type_string for n in fn.graph.nodes()]


# -- inline_function ---------------------------------------------------------------------------


def _function(g, name, build, specs):
    """A Function whose body ``build(*args)`` returns its results."""
    body = FuncGraph(name, g)
    with body.as_default():
        args = [body.add_arg(dt, as_shape(s), f"a{i}") for i, (dt, s) in enumerate(specs)]
        outputs = build(*args)
    fn = Function(name, body, outputs)
    g.library[name] = fn
    return fn


def test_inline_copies_what_the_results_need_with_attrs_and_control_inputs():
    g = mg.Graph()
    with g.as_default():
        inner = _function(g, "inner", lambda a: [mg.sin(a)], [(mg.float64, [2])])

        def build(a, b):
            unused = mg.exp(a, name="unused")  # no result needs it: not copied
            with mg.control_dependencies([mg.no_op(name="first")]):
                c = mg.cast(b, mg.float64, name="c")
            call = apply_op("PartitionedCall", None, [[a * c]], {"f": inner, "Tout": [mg.float64]})
            del unused
            return [call.outputs[0]]

        fn = _function(g, "outer", build, [(mg.float64, [2]), (mg.int32, [])])
        x = mg.placeholder(mg.float64, [2], name="x")
        with mg.name_scope("copy"):
            (y,) = inline_function(fn, [x, mg.constant(np.int32(3))])
    copied = {n.name: n for n in g.nodes() if n.name.startswith("copy/")}
    assert "copy/unused" not in copied
    assert copied["copy/c"].attrs["DstT"] == mg.float64  # an attr not inferred, kept
    assert [c.name for c in copied["copy/c"].control_inputs] == ["copy/first"]
    assert y.op.get_attr("f") is inner  # a nested call keeps its Function
    np.testing.assert_allclose(mg.Session(g).run(y, {x: [1.0, 2.0]}), np.sin([3.0, 6.0]))


def test_inline_checks_the_arguments():
    g = mg.Graph()
    with g.as_default():
        fn = _function(g, "f", lambda a: [a * 2.0], [(mg.float64, [])])
        with pytest.raises(errors.InvalidArgumentError, match="takes 1 arguments, got 0"):
            inline_function(fn, [])


# -- PartitionedCall, StatefulPartitionedCall --------------------------------------------------


def _call_model(x, w, var=None):
    """sum(weights * sin(x) w) + sum(n * x) through one call of a function of (x, n, w[,
    a variable]); n is an int32 input."""
    g = x.graph
    specs = [(mg.float64, x.shape), (mg.int32, []), (mg.float64, w.shape)]
    if var is not None:
        specs.append((mg.resource, []))

    def build(a, n, b, *handle):
        if handle:
            b = b + apply_op("ReadVariableOp", None, [handle[0]], {"dtype": mg.float64}).outputs[0]
        return [mg.matmul(mg.sin(a), b), mg.reduce_sum(a * mg.cast(n, mg.float64)), n + 1]

    fn = _function(g, "f", build, specs)
    if var is not None:  # the handle keeps its variable's shape and dtype
        arg = fn.inputs[3]
        arg.node.output_specs = (var.handle.spec,)
    inputs = [x, np.int32(3), w] + ([var.handle] if var is not None else [])
    op_type = "StatefulPartitionedCall" if var is not None else "PartitionedCall"
    call = apply_op(op_type, None, [inputs], {"f": fn, "Tout": fn.output_dtypes})
    first, second, _ = call.outputs
    return mg.reduce_sum(first * weights(3, 2)) + second


@pytest.mark.parametrize("unknown", [False, True])
def test_call_gradient_against_differences(unknown):
    x, w = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (4, 2))
    assert gradient_error(_call_model, [x, w], unknown) < ERROR


def test_call_gradient_calls_a_gradient_function():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [3, 4], name="x")
        w = mg.placeholder(mg.float64, [4, 2], name="w")
        loss = _call_model(x, w)
        dx, dw = mg.gradients(loss, [x, w])
    call = dx.op
    assert call.type == "PartitionedCall"
    assert call.name == "gradients/PartitionedCall_grad/PartitionedCall"
    grad_fn = call.get_attr("f")
    # G(x, n, w, grad of each float result): the int result has no gradient argument, and
    # the int input gets no gradient, so G returns two.
    assert grad_fn.input_dtypes == [mg.float64, mg.int32, mg.float64, mg.float64, mg.float64]
    assert grad_fn.output_dtypes == [mg.float64, mg.float64]
    assert dw.op is call and [dx.index, dw.index] == [0, 1]
    assert "MatMul" in op_types(grad_fn) and "Sin" in op_types(grad_fn)  # the recomputation


def test_call_gradient_reaches_a_variable_through_its_handle():
    x, w = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (4, 2))
    v0 = rng.uniform(-1, 1, (4, 2))
    g = mg.Graph()
    with g.as_default():
        xp = mg.placeholder(mg.float64, [3, 4])
        wp = mg.placeholder(mg.float64, [4, 2])
        var = mg.Variable(v0, name="v")
        loss = _call_model(xp, wp, var)
        dw, dv = mg.gradients(loss, [wp, var])
        assert dv.op.type == "StatefulPartitionedCall"
        init = mg.global_variables_initializer()
    with mg.Session(g) as sess:
        sess.run(init)
        got_w, got_v = sess.run([dw, dv], {xp: x, wp: w})
    np.testing.assert_allclose(got_v, got_w)  # w + v enter alike
    np.testing.assert_allclose(got_w, np.sin(x).T @ weights(3, 2))


@pytest.mark.usefixtures("any_device")
def test_call_gradient_as_tensorflow():
    """An imported graph calling a tf.function that calls another (PartitionedCall)."""
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    saved = np.load(FIXTURES / "call.npz")
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(str(FIXTURES / "call.pb"), name="")
        x, w = g.get_tensor_by_name("x:0"), g.get_tensor_by_name("w:0")
        loss = g.get_tensor_by_name("loss:0")
        assert {"PartitionedCall", "StatefulPartitionedCall"} & {n.type_string for n in g.nodes()}
        grads = mg.gradients(loss, [x, w])
    feed = {x: saved["x/x"], w: saved["x/w"]}
    with mg.Session(g) as sess:
        for d, k in zip(sess.run(grads, feed), "xw"):
            np.testing.assert_allclose(d, saved[f"dx/{k}"], rtol=1e-10, atol=1e-12)


# -- If, StatelessIf, Case, StatelessCase -----------------------------------------------------


def cond_model(x, w, pred):
    y = mg.cond(pred, lambda: mg.tanh(mg.matmul(x, w)), lambda: x[:, :2] * 3.0 - 1.0)
    return mg.reduce_sum(y * weights(3, 2))


def case_model(x, w, index):
    y = mg.switch_case(
        index,
        [
            lambda: mg.matmul(mg.sin(x), w),
            lambda: mg.nn.relu(mg.matmul(x, w)) * 2.0,
            lambda: x[:, 1:3] * 2.0,
        ],
    )
    return mg.reduce_sum(y * weights(3, 2))


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("pred", ["true", "false"])
def test_cond_gradient_as_tensorflow(pred):
    replay(f"cond_{pred}", cond_model)


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("index", [0, 1, 2, 7])
def test_case_gradient_as_tensorflow(index):
    replay(f"case_{index}", case_model)


@pytest.mark.parametrize("unknown", [False, True])
@pytest.mark.parametrize("pred", [True, False])
def test_cond_gradient_against_differences(pred, unknown):
    x, w = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (4, 2))
    err = gradient_error(lambda x, w: cond_model(x, w, mg.constant(pred)), [x, w], unknown)
    assert err < ERROR


@pytest.mark.parametrize("index", [0, 1, 2, 5])
def test_case_gradient_against_differences(index):
    x, w = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (4, 2))
    err = gradient_error(lambda x, w: case_model(x, w, mg.constant(np.int32(index))), [x, w])
    assert err < ERROR


def test_cond_gradient_is_a_cond_on_the_same_predicate():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [3, 4])
        w = mg.placeholder(mg.float64, [4, 2])
        pred = mg.placeholder(mg.bool, [])
        y = cond_model(x, w, pred)
        forward = next(n for n in g.nodes() if n.type_string == "StatelessIf")
        dx, dw, dpred = mg.gradients(y, [x, w, pred])
    assert dpred is None
    grad = dw.op
    assert grad.type == "StatelessIf" and grad.inputs[0] == forward.inputs[0]
    assert grad is dx.op
    then_f, else_f = grad.get_attr("then_branch"), grad.get_attr("else_branch")
    assert then_f.output_dtypes == else_f.output_dtypes == [mg.float64, mg.float64]
    # The else branch does not read w: its gradient for w is zeros.
    feed = {x: np.ones((3, 4)), w: np.ones((4, 2)), pred: False}
    np.testing.assert_array_equal(mg.Session(g).run(dw, feed), np.zeros((4, 2)))


def test_branch_gradient_with_a_variable_and_no_gradient_anywhere():
    v0 = rng.uniform(-1, 1, (2,))
    g = mg.Graph()
    with g.as_default():
        var = mg.Variable(v0, name="v")
        x = mg.placeholder(mg.float64, [2])
        pred = mg.placeholder(mg.bool, [])
        y = mg.cond(pred, lambda: x * var, lambda: x * 2.0)
        dv, dx = mg.gradients(y, [var, x])
        n = mg.placeholder(mg.int32, [])
        counted = mg.cond(pred, lambda: n + 1, lambda: n * 2)
        assert mg.gradients(mg.cast(counted, mg.float64), [n]) == [None]
        init = mg.global_variables_initializer()
    with mg.Session(g) as sess:
        sess.run(init)
        xv = np.float64([3.0, -1.0])
        np.testing.assert_allclose(sess.run([dv, dx], {x: xv, pred: True}), [xv, v0])
        np.testing.assert_allclose(sess.run([dv, dx], {x: xv, pred: False}), [[0, 0], [2, 2]])


def test_nested_branch_and_call_gradients():
    """A cond in a switch_case, differentiated twice over (its gradient's gradient)."""
    x0 = rng.uniform(0.2, 1, (3,))

    def model(x):
        inner = lambda: mg.cond(mg.reduce_sum(x) > 0, lambda: mg.sin(x) * x, lambda: x)  # noqa: E731
        return mg.switch_case(mg.constant(np.int32(0)), [inner, lambda: x * 3.0])

    assert gradient_error(model, [x0]) < ERROR
    assert gradient_error(lambda x: mg.gradients(mg.reduce_sum(model(x)), x)[0], [x0]) < ERROR


# -- TensorLists ---------------------------------------------------------------------------------


def tensor_array_model(x, v):
    ta = mg.TensorArray(mg.float64, size=4).unstack(x)
    ta = ta.scatter([1, 3], v * 2.0)
    read = ta.read(0) * ta.read(3)
    gathered = ta.gather([2, 1])
    return (
        mg.reduce_sum(read * weights(3))
        + mg.reduce_sum(gathered * weights(2, 3))
        + mg.reduce_sum(ta.stack() * weights(4, 3))
    )


def tensor_array_write_model(x, v):
    ta = mg.TensorArray(mg.float64, size=3).write(0, x[0] * 2.0).write(1, v[0]).write(1, x[1])
    grown = mg.TensorArray(mg.float64, size=1, dynamic_size=True).write(0, v[1])
    grown = grown.write(2, mg.sin(x[2]))
    return mg.reduce_sum(ta.stack() * weights(3, 3)) + mg.reduce_sum(grown.stack() * weights(3, 3))


def tensor_array_split_model(x):
    ta = mg.TensorArray(mg.float64, size=2, infer_shape=False).split(x * x, [1, 3])
    return mg.reduce_sum(ta.concat() * weights(4, 3)) + mg.reduce_sum(ta.read(1) * weights(3, 3))


def tensor_list_model(x, v):
    lst = L.tensor_list_from_tensor(x, np.int32([3]))
    lst = L.tensor_list_push_back(lst, v[0] * 2.0)
    lst, last = L.tensor_list_pop_back(lst, np.int32(-1), element_dtype=mg.float64)
    lst = L.tensor_list_push_back(lst, mg.sin(v[1]))
    cut = L.tensor_list_resize(lst, np.int32(3))
    stacked = G.tensor_list_stack(lst, np.int32([3]), element_dtype=mg.float64)
    kept = G.tensor_list_stack(cut, np.int32([3]), element_dtype=mg.float64)
    return (
        mg.reduce_sum(last * last * weights(3))
        + mg.reduce_sum(stacked * weights(5, 3))
        + mg.reduce_sum(kept * weights(3, 3))
    )


LIST_MODELS = {
    "tensor_array": tensor_array_model,
    "tensor_array_write": tensor_array_write_model,
    "tensor_array_split": tensor_array_split_model,
    "tensor_list": tensor_list_model,
}


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("name", LIST_MODELS)
def test_tensor_list_gradients_as_tensorflow(name):
    replay(name, LIST_MODELS[name])


@pytest.mark.parametrize("unknown", [False, True])
@pytest.mark.parametrize("name", LIST_MODELS)
def test_tensor_list_gradients_against_differences(name, unknown):
    values = [rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (2, 3))]
    n = 1 if name == "tensor_array_split" else 2
    assert gradient_error(LIST_MODELS[name], values[:n], unknown) < ERROR


def _stack(lst):
    return G.tensor_list_stack(lst, np.int32([3]), element_dtype=mg.float64)


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: L.tensor_list_get_item(L.tensor_list_from_tensor(t, [3]), 2, [3], mg.float64),
        lambda t: _stack(
            L.tensor_list_set_item(
                L.tensor_list_from_tensor(t, [3]), 5, t[0] * 3.0, resize_if_index_out_of_bounds=True
            )
        ),
        lambda t: _stack(L.tensor_list_resize(L.tensor_list_from_tensor(t, [3]), 6)),
        lambda t: G.tensor_list_gather(L.tensor_list_from_tensor(t, [3]), [3, 0], [3], mg.float64),
        lambda t: (
            G.tensor_list_concat_v2(
                L.tensor_list_split(t, [-1, 3], np.int64([3, 0, 1])),
                [-1, 3],
                np.zeros(0, np.int64),
                element_dtype=mg.float64,
            )[0]
            * 2.0
        ),
        lambda t: L.tensor_list_pop_back(
            L.tensor_list_pop_back(L.tensor_list_from_tensor(t, [3]), [3], mg.float64)[0],
            [3],
            mg.float64,
        )[1],
    ],
    ids=["get_item", "set_item_resized", "resize_grown", "gather", "split_concat", "pop_twice"],
)
def test_each_list_op_gradient_against_differences(fn):
    assert gradient_error(fn, [rng.uniform(-1, 1, (4, 3))]) < ERROR


def test_list_gradients_that_meet_are_summed_by_add_n():
    """Two reads of one list: its gradient is the AddN of two lists, item by item."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [4, 3])
        lst = L.tensor_list_from_tensor(x, [3])
        y = L.tensor_list_get_item(lst, 1, [3], mg.float64) * L.tensor_list_get_item(
            lst, 3, [3], mg.float64
        )
        (dx,) = mg.gradients(y, x)
    add = [n for n in g.nodes() if n.type_string == "AddN"]
    assert len(add) == 1 and add[0].attrs["T"] == mg.variant
    xv = rng.uniform(-1, 1, (4, 3))
    want = np.zeros((4, 3))
    want[1], want[3] = xv[3], xv[1]
    np.testing.assert_allclose(mg.Session(g).run(dx, {x: xv}), want)


def test_gather_gradient_keeps_one_of_repeated_indices_as_tensorflow():
    """TensorFlow's gradient scatters into a list: a repeated index keeps one row."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [4, 3])
        y = G.tensor_list_gather(L.tensor_list_from_tensor(x, [3]), [3, 0, 3], [3], mg.float64)
        (dx,) = mg.gradients(y, x)
    np.testing.assert_array_equal(
        mg.Session(g).run(dx, {x: np.ones((4, 3))}), [[1] * 3, [0] * 3, [0] * 3, [1] * 3]
    )


def test_list_length_and_element_shape_stop_gradients():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [4, 3])
        lst = L.tensor_list_from_tensor(x, [3])
        n = mg.cast(L.tensor_list_length(lst), mg.float64)
        s = mg.cast(L.tensor_list_element_shape(lst, shape_type=mg.int32), mg.float64)
        assert mg.gradients([n, mg.reduce_sum(s)], x) == [None]


@pytest.mark.usefixtures("any_device")
def test_zeros_like_and_add_n_of_lists():
    """ZerosLike of a list zeroes its set items and keeps the unset ones unset; AddN adds
    item by item, an unset item taking the other's, with TensorFlow's checks."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [3, 2])
        lst = L.tensor_list_set_item(
            L.tensor_list_reserve([2], 3, element_dtype=mg.float64), 1, x[1]
        )
        full = L.tensor_list_from_tensor(x, [2])
        zeros = mg.zeros_like(full)
        total = mg.add_n([lst, full, zeros])
        stacked = [_stack2(v) for v in (mg.zeros_like(lst), total)]
        short = L.tensor_list_from_tensor(x[:2], [2])
        bad = mg.add_n([short, full])
        ints = L.tensor_list_from_tensor(mg.cast(x, mg.int32), [2])
        bad_type = mg.add_n([ints, full])
    xv = rng.uniform(-1, 1, (3, 2))
    with mg.Session(g) as sess:
        zero, summed = sess.run(stacked, {x: xv})
        np.testing.assert_array_equal(zero, np.zeros((3, 2)))
        want = xv.copy()
        want[1] *= 2
        np.testing.assert_allclose(summed, want)
        with pytest.raises(errors.InvalidArgumentError, match="different lengths. One is 2 and"):
            sess.run(bad, {x: xv})
        with pytest.raises(errors.InvalidArgumentError, match="different dtypes. One is int32"):
            sess.run(bad_type, {x: xv})


def _stack2(lst):
    return G.tensor_list_stack(lst, np.int32([2]), element_dtype=mg.float64)


# -- While, StatelessWhile -----------------------------------------------------------------------

T, B, D, H = 4, 2, 3, 5


def rnn_model(xs, w, u, h0):
    inputs = mg.TensorArray(mg.float64, size=T).unstack(xs)

    def body(t, h, out):
        h = mg.tanh(mg.matmul(inputs.read(t), w) + mg.matmul(h, u))
        return t + 1, h, out.write(t, h)

    _, last, out = mg.while_loop(
        lambda t, h, out: t < T, body, [0, h0, mg.TensorArray(mg.float64, size=T)]
    )
    return mg.reduce_sum(out.stack() * weights(T, B, H)) + mg.reduce_sum(last * last)


def data_dependent_model(x, w):
    (y,) = mg.while_loop(lambda a: mg.reduce_sum(a * a) < 50.0, lambda a: [a * 1.5 + w], [x])
    return mg.reduce_sum(y * weights(3))


def cond_in_loop_model(x, w):
    def body(i, a):
        a = mg.cond(mg.equal(i % 2, 0), lambda: mg.sin(a) * w, lambda: a * a + w)
        return i + 1, a

    return mg.reduce_sum(mg.while_loop(lambda i, a: i < 5, body, [0, x])[1] * weights(3))


def nested_loops_model(x, w):
    def outer(i, a):
        inner = mg.while_loop(lambda j, b: j < 3, lambda j, b: (j + 1, mg.tanh(b * w + a)), [0, a])
        return i + 1, inner[1]

    return mg.reduce_sum(mg.while_loop(lambda i, a: i < 2, outer, [0, x])[1] * weights(3))


def maximum_iterations_model(x, w):
    _, y = mg.while_loop(
        lambda i, a: i < 10, lambda i, a: (i + 1, mg.sin(a) + w), [0, x], maximum_iterations=4
    )
    return mg.reduce_sum(y * weights(3))


WHILE_MODELS = {
    "while_rnn": rnn_model,
    "while_data_dependent": data_dependent_model,
    "while_cond_in_loop": cond_in_loop_model,
    "while_nested": nested_loops_model,
    "while_maximum_iterations": maximum_iterations_model,
}


def _while_values(name):
    saved = np.load(FIXTURES / f"{name}.npz")
    return [saved[k] for k in saved.files if k.startswith("x/")]


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("name", WHILE_MODELS)
def test_while_gradient_as_tensorflow(name):
    replay(name, WHILE_MODELS[name])


@pytest.mark.parametrize("unknown", [False, True])
@pytest.mark.parametrize("name", WHILE_MODELS)
def test_while_gradient_against_differences(name, unknown):
    assert gradient_error(WHILE_MODELS[name], _while_values(name), unknown) < ERROR


def test_while_gradient_runs_the_loop_again_then_backwards():
    """The gradient graph: an accumulating copy of the loop (forward) and a loop that runs
    it back (backward); the captured weights ride in the backward loop, not in lists."""
    g = mg.Graph()
    with g.as_default():
        xs, w, u, h0 = (mg.placeholder(mg.float64, v.shape) for v in _while_values("while_rnn"))
        loss = rnn_model(xs, w, u, h0)
        grads = mg.gradients(loss, [xs, w, u, h0])
    loops = {n.name: n for n in g.nodes() if n.type_string in ("While", "StatelessWhile")}
    assert set(loops) == {"while", "gradients/while_grad/forward", "gradients/while_grad/backward"}
    forward = loops["gradients/while_grad/forward"]
    pushes = [
        n for n in forward.attrs["body"].graph.nodes() if n.type_string == "TensorListPushBack"
    ]
    # The loop's t, h and output list change; the input list, w and u do not.
    assert len(pushes) == 3
    assert all(d is not None for d in grads)


def test_while_gradient_none_for_integers_zeros_for_unused_variables():
    """As TensorFlow's: None for an integer input, zeros for a loop variable the loss does
    not read (its gradient passes through the loop)."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [3])
        n = mg.placeholder(mg.int32, [])
        unused = mg.placeholder(mg.float64, [3])
        i, y, _ = mg.while_loop(
            lambda i, a, b: i < n, lambda i, a, b: (i + 1, a * 2.0, b), [0, x, unused]
        )
        dn, dx, du = mg.gradients(y, [n, x, unused])
        assert dn is None
        assert mg.gradients(mg.cast(i, mg.float64), x) == [None]
    feed = {x: np.ones(3), n: 3, unused: np.ones(3)}
    got = mg.Session(g).run([dx, du], feed)
    np.testing.assert_array_equal(got, [[8.0] * 3, [0.0] * 3])


def test_while_gradient_with_no_iterations_passes_the_gradient_on():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [2])
        n = mg.placeholder(mg.int32, [])
        (y,) = mg.while_loop(
            lambda a: mg.reduce_sum(a) < mg.cast(n, mg.float64), lambda a: [a * 3.0], [x]
        )
        (dx,) = mg.gradients(y, x)
    with mg.Session(g) as sess:
        np.testing.assert_array_equal(sess.run(dx, {x: [1.0, 1.0], n: 0}), [1.0, 1.0])
        np.testing.assert_array_equal(sess.run(dx, {x: [1.0, 1.0], n: 10}), [9.0, 9.0])


def test_while_gradient_of_an_input_passed_twice():
    """Two loop variables entering with one tensor: each gets its own gradient."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [2])
        w = mg.placeholder(mg.float64, [2])

        def body(i, a, b):
            return i + 1, a * w, b  # b is x all along, and so is w (captured)

        _, a, b = mg.while_loop(lambda i, a, b: i < 2, body, [0, x, x])
        (dx,) = mg.gradients(mg.reduce_sum(a) + 3.0 * mg.reduce_sum(b), x)
    got = mg.Session(g).run(dx, {x: [1.0, 2.0], w: [2.0, 5.0]})
    np.testing.assert_array_equal(got, np.float64([2.0, 5.0]) ** 2 + 3.0)


def test_while_gradient_of_a_second_order():
    x0 = rng.uniform(0.5, 1.0, (3,))

    def model(x):
        _, y = mg.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, mg.sin(a) * x), [0, x])
        return mg.gradients(mg.reduce_sum(y), x)[0]

    assert gradient_error(model, [x0]) < ERROR


@pytest.mark.usefixtures("any_device")
def test_training_an_rnn_matches_numpy():
    """Five steps of gradient descent on an RNN over a sequence, its weights variables
    (captured by the loop): the weights after each step as the same loop in NumPy."""
    steps, lr, T_, B_, D_, H_ = 5, 0.5, 6, 4, 3, 5
    xs_v = rng.standard_normal((T_, B_, D_))
    target = rng.uniform(-0.5, 0.5, (B_, H_))
    w0, u0 = rng.standard_normal((D_, H_)) * 0.4, rng.standard_normal((H_, H_)) * 0.4
    g = mg.Graph()
    with g.as_default():
        xs = mg.placeholder(mg.float64, [T_, B_, D_], name="xs")
        y = mg.placeholder(mg.float64, [B_, H_], name="y")
        w, u = mg.Variable(w0, name="w"), mg.Variable(u0, name="u")
        sequence = mg.TensorArray(mg.float64, size=T_).unstack(xs)

        def body(t, h):
            return t + 1, mg.tanh(mg.matmul(sequence.read(t), w) + mg.matmul(h, u))

        _, last = mg.while_loop(lambda t, h: t < T_, body, [0, mg.zeros([B_, H_], mg.float64)])
        loss = mg.reduce_mean((last - y) * (last - y))
        dw, du = mg.gradients(loss, [w, u])
        train = [w.assign_sub(dw * lr), u.assign_sub(du * lr)]
        init = mg.global_variables_initializer()

    def numpy_step(w, u):
        hs = [np.zeros((B_, H_))]
        for t in range(T_):
            hs.append(np.tanh(xs_v[t] @ w + hs[-1] @ u))
        dh = 2 * (hs[-1] - target) / hs[-1].size
        dw, du = np.zeros_like(w), np.zeros_like(u)
        for t in reversed(range(T_)):
            dz = dh * (1 - hs[t + 1] ** 2)
            dw += xs_v[t].T @ dz
            du += hs[t].T @ dz
            dh = dz @ u.T
        return w - lr * dw, u - lr * du, ((hs[-1] - target) ** 2).mean()

    feed = {xs: xs_v, y: target}
    want_w, want_u = w0, u0
    with mg.Session(g) as sess:
        sess.run(init)
        losses = []
        for _ in range(steps):
            losses.append(sess.run(loss, feed))
            sess.run(train, feed)
            want_w, want_u, want_loss = numpy_step(want_w, want_u)
            np.testing.assert_allclose(losses[-1], want_loss, rtol=1e-12)
            np.testing.assert_allclose(sess.run(w.value()), want_w, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(sess.run(u.value()), want_u, rtol=1e-12, atol=1e-14)
    assert losses[-1] < losses[0]


# -- imported graphs (tests/fixtures/control_flow) ----------------------------------------------

CONTROL_FLOW = Path(__file__).parent / "fixtures" / "control_flow"
IMPORTED = sorted(p.stem.removeprefix("imported_") for p in FIXTURES.glob("imported_*.npz"))
# TensorFlow cannot differentiate its own TF1 loops once imported; minigraph imports them as
# While nodes, so they are checked against the gradient of the same model's functional form.
LOWERED = [
    f"{n[:-3]}_lowered"
    for n in IMPORTED
    if n.endswith("_fn")
    and f"{n[:-3]}_lowered" not in IMPORTED
    and (CONTROL_FLOW / f"{n[:-3]}_lowered.pb").exists()
]


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("name", IMPORTED + LOWERED)
def test_imported_graph_gradients_as_tensorflow(name):
    """The gradient of the sum of a TensorFlow graph's outputs with respect to its inputs:
    Keras LSTM/GRU/SimpleRNN/bidirectional/masked, map_fn, scan, TensorArrays, conds, cases,
    loops in conds and conds in loops, nested loops."""
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    case = next(
        c for c in json.loads((CONTROL_FLOW / "cases.json").read_text()) if c["name"] == name
    )
    saved = np.load(FIXTURES / f"imported_{name.replace('_lowered', '_fn')}.npz")
    feeds = np.load(CONTROL_FLOW / f"{name}.npz")
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(str(CONTROL_FLOW / case["file"]), name="")
        xs = [f for f in case["feeds"] if f"dx/{f}" in saved.files]
        ys = [g.get_tensor_by_name(f) for f in case["fetches"]]
        loss = mg.add_n([mg.reduce_sum(y) for y in ys if y.dtype.is_floating])
        grads = mg.gradients(loss, [g.get_tensor_by_name(f) for f in xs])
    feed = {f: feeds[f"feed/{f}"] for f in case["feeds"]}
    for f, d in zip(xs, mg.Session(g).run(grads, feed)):
        np.testing.assert_allclose(d, saved[f"dx/{f}"], rtol=2e-5, atol=2e-6, err_msg=f)


def test_imported_calls_that_tensorflow_cannot_differentiate():
    """partitioned_call_fn: a PartitionedCall of a function that holds a
    StatefulPartitionedCall, which TensorFlow's SymbolicGradient refuses; minigraph's
    gradient against central differences (float32)."""
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    g = mg.Graph()
    with g.as_default():
        mg.import_graph_def(str(CONTROL_FLOW / "partitioned_call_fn.pb"), name="")
        x = g.get_tensor_by_name("x:0")
        ys = [g.get_tensor_by_name(n) for n in ("Identity:0", "Identity_1:0")]
        loss = mg.add_n([mg.reduce_sum(y) for y in ys])
        (dx,) = mg.gradients(loss, x)
    xv = np.load(CONTROL_FLOW / "partitioned_call_fn.npz")["feed/x:0"]
    with mg.Session(g) as sess:
        got = sess.run(dx, {x: xv})
        numerical = np.zeros(xv.shape)
        for i in range(xv.size):
            moved = [xv.copy(), xv.copy()]
            moved[0].flat[i] += 1e-2
            moved[1].flat[i] -= 1e-2
            up, down = (float(sess.run(loss, {x: m})) for m in moved)
            numerical.flat[i] = (up - down) / 2e-2
    np.testing.assert_allclose(got, numerical, atol=1e-3 * max(1.0, np.abs(numerical).max()))


def test_an_op_without_gradient_in_a_body_is_named_with_its_function():
    def truncate_mod(a, b):  # an op with no gradient, as in TensorFlow
        return mg.ops.TruncateMod(current_scope(), a, b).z

    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float64, [3])
        body = lambda a: [truncate_mod(a, np.float64(7.0)) + 1.0]  # noqa: E731
        (y,) = mg.while_loop(lambda a: mg.reduce_sum(a) < 10.0, body, [x], name="loop")
        with pytest.raises(errors.NoGradientError) as e:
            mg.gradients(y, x)
        assert "(in function loop_body of StatelessWhile 'loop')" in str(e.value)
        assert e.value.op_type == "TruncateMod"
        z = mg.cond(mg.reduce_sum(x) > 0, lambda: truncate_mod(x, x), lambda: x)
        with pytest.raises(errors.NoGradientError, match="in function cond_true of StatelessIf"):
            mg.gradients(z, x)
