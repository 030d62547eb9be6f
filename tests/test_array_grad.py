"""Gradients of the array ops (ops/array_grad.py, slice_grad.py) against finite differences,
with static shapes and with placeholders of unknown shape (and tensor perm/axis/begin...
inputs), the ops TensorFlow declares not differentiable, PreventGradient's error, and the
gradient ops StridedSliceGrad and MirrorPadGrad (ops/array_grad_ops.py): TensorFlow's
messages from the op fixtures, and each op the adjoint of its forward op.

TensorFlow's own gradient values are replayed by test_tf_grad_fixtures.py
(tests/fixtures/grads/array.npz), its forward values of the gradient ops by
test_tf_op_fixtures.py (tests/fixtures/ops/array_grad_ops.npz).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors, ops
from minigraph.ops.array_grad_ops import mirror_pad_grad, strided_slice_grad
from minigraph.scope import current_scope
from minigraph.wrappers import apply_op

F64 = mg.float64


def _check(shape, build, fed_shape, feeds=None):
    """compute_gradient_error of ``build(x)`` at a random float64 ``x`` of ``shape``; ``x``
    is a placeholder of ``fed_shape`` (None: unknown); ``build`` may add other feeds to
    ``feeds``."""
    feeds = {} if feeds is None else feeds
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(F64, fed_shape, name="x")
        y = build(x)
        y_shape = mg.Session(g).run(y, {x: np.zeros(shape), **feeds}).shape
    value = np.random.default_rng(1).standard_normal(shape)
    return mg.test.compute_gradient_error(
        x, shape, y, y_shape, x_init_value=value, extra_feed_dict=feeds
    )


def _sum_pieces(pieces):
    return mg.add_n([p * float(i + 1) for i, p in enumerate(pieces)])


# (label, x shape, y = f(x)): every op with a gradient, small shapes
GRADIENT_CASES = [
    ("Identity", [2, 3], mg.identity),
    ("PlaceholderWithDefault", [2, 2], lambda x: mg.placeholder_with_default(x, None)),
    ("IdentityN", [3], lambda x: mg.identity_n([x, x * 2.0])[1]),
    ("Fill", [], lambda x: mg.fill([2, 3], x)),
    ("Reshape", [2, 3], lambda x: mg.reshape(x, [3, 2])),
    ("Reshape to scalar", [1, 1], lambda x: mg.reshape(x, [])),
    ("ExpandDims", [2, 3], lambda x: mg.expand_dims(x, 1)),
    ("Squeeze", [1, 3, 1], lambda x: mg.squeeze(x)),
    ("Transpose", [2, 3, 2], lambda x: mg.transpose(x, [2, 0, 1])),
    ("BroadcastTo", [3, 1], lambda x: mg.broadcast_to(x, [2, 3, 2])),
    ("Slice", [3, 4], lambda x: mg.slice(x, [1, 1], [2, -1])),
    ("ConcatV2", [2, 2], lambda x: mg.concat([x, x * x, x[:, :1]], axis=-1)),
    ("Pack", [2, 2], lambda x: mg.stack([x, x * 3.0], axis=1)),
    ("Unpack", [3, 2], lambda x: _sum_pieces(mg.unstack(x, num=2, axis=1))),
    ("Unpack one piece", [3, 2], lambda x: mg.unstack(x, num=3)[1]),
    ("Split", [2, 4], lambda x: _sum_pieces(mg.split(x, 2, axis=1))),
    ("SplitV", [5, 2], lambda x: mg.split(x, [2, -1, 1], axis=0)[1]),
    ("ReverseV2", [2, 3], lambda x: mg.reverse(x, [0, -1])),
    ("Tile", [2, 3], lambda x: mg.tile(x, [2, 2])),
    ("StridedSlice", [4, 5], lambda x: x[1:, ::-2]),
    ("StridedSlice masks", [3, 4], lambda x: x[None, ..., 1]),
    ("StridedSlice shrink", [3, 2], lambda x: x[-1, 0]),
    ("Pad", [2, 3], lambda x: mg.pad(x, [[1, 0], [2, 1]])),
    ("PadV2", [2, 2], lambda x: mg.pad(x, [[1, 1], [0, 1]], constant_values=2.5)),
    ("MirrorPad REFLECT", [3, 4], lambda x: mg.pad(x, [[2, 1], [1, 3]], "REFLECT")),
    ("MirrorPad SYMMETRIC", [2, 3], lambda x: mg.pad(x, [[2, 2], [0, 3]], "SYMMETRIC")),
    ("DepthToSpace", [1, 1, 2, 8], lambda x: mg.depth_to_space(x, 2)),
    ("SpaceToDepth", [1, 2, 4, 2], lambda x: mg.space_to_depth(x, 2)),
    ("SpaceToBatchND", [1, 4, 2, 1], lambda x: mg.space_to_batch_nd(x, [2, 2], [[0, 2], [1, 1]])),
    ("BatchToSpaceND", [4, 2, 2, 1], lambda x: mg.batch_to_space_nd(x, [2, 2], [[1, 0], [0, 1]])),
    (
        "StridedSliceGrad",
        [2, 3],
        lambda x: strided_slice_grad([4, 5], [1, 0], [3, 5], [1, 2], x),
    ),
    ("MirrorPadGrad", [6, 5], lambda x: mirror_pad_grad(x, [[2, 1], [1, 1]], mode="REFLECT")),
]


@pytest.mark.parametrize("known", [True, False], ids=["static", "unknown"])
@pytest.mark.parametrize("label,shape,build", GRADIENT_CASES, ids=[c[0] for c in GRADIENT_CASES])
def test_gradient_matches_finite_differences(label, shape, build, known):
    assert _check(shape, build, shape if known else None) < 1e-6


# Index inputs fed at run time: the gradient reads them as tensors (no constant to fold).
FED_INDEX_CASES = [
    ("Transpose perm", [2, 3, 2], mg.int32, [1, 2, 0], mg.transpose),
    ("Transpose int64 perm", [3, 2], mg.int64, [1, 0], mg.transpose),
    ("Reshape shape", [2, 3], mg.int64, [3, -1], mg.reshape),
    ("ExpandDims axis", [2, 3], mg.int32, -1, mg.expand_dims),
    ("BroadcastTo shape", [2, 1], mg.int32, [3, 2, 4], mg.broadcast_to),
    ("ConcatV2 axis", [2, 2], mg.int64, -2, lambda x, k: mg.concat([x, x[:1] * 2.0], k)),
    ("Tile multiples", [2, 2], mg.int32, [1, 3], mg.tile),
    ("ReverseV2 axis", [2, 3], mg.int32, [1], mg.reverse),
    ("Slice begin", [3, 4], mg.int64, [1, 2], lambda x, k: mg.slice(x, k, np.int64([2, 2]))),
    ("Pad paddings", [2, 2], mg.int64, [[0, 1], [2, 0]], mg.pad),
    (
        "MirrorPad paddings",
        [3, 3],
        mg.int32,
        [[1, 2], [2, 0]],
        lambda x, k: mg.pad(x, k, "SYMMETRIC"),
    ),
    (
        "StridedSlice begin",
        [4, 3],
        mg.int32,
        [3, 0],
        lambda x, k: mg.strided_slice(x, k, [0, 3], [-1, 2]),
    ),
    (
        "SpaceToBatchND paddings",
        [1, 2, 3, 1],
        mg.int32,
        [[0, 0], [1, 2]],
        lambda x, k: mg.space_to_batch_nd(x, [1, 3], k),
    ),
]


@pytest.mark.parametrize("known", [True, False], ids=["static", "unknown"])
@pytest.mark.parametrize(
    "label,shape,dtype,value,build", FED_INDEX_CASES, ids=[c[0] for c in FED_INDEX_CASES]
)
def test_gradient_with_fed_index_inputs(label, shape, dtype, value, build, known):
    feeds = {}

    def fed(x):
        k = mg.placeholder(dtype, None, name="k")
        feeds[k] = np.asarray(value, dtype.np)
        return build(x, k)

    assert _check(shape, fed, shape if known else None, feeds) < 1e-6


def test_static_shapes_need_no_shape_nodes():
    """With every shape known, the gradients are built from constants (no Shape,
    BroadcastGradientArgs or ScatterNd node reads a shape at run time)."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(F64, [2, 3, 4], name="x")
        parts = [
            mg.transpose(x, [1, 2, 0]),
            mg.broadcast_to(x[:, :1], [2, 3, 4]),
            mg.concat([x, x], axis=1),
            mg.tile(x, [1, 2, 1]),
            mg.slice(x, [0, 1, 0], [-1, 2, 3]),
            mg.pad(x, [[1, 0], [0, 1], [0, 0]]),
            x[:, ::2, 1],
            mg.reshape(x, [4, 6]),
        ]
        before = {n.name for n in g.nodes()}
        (dx,) = mg.gradients(parts, x)
    built = [n for n in g.nodes() if n.name not in before]
    assert not [n.name for n in built if n.type_string in ("Shape", "BroadcastGradientArgs")]
    assert dx.shape.as_list() == [2, 3, 4]


# -- Not differentiable ----------------------------------------------------------------


NONE_CASES = [
    ("ZerosLike", mg.zeros_like),
    ("OnesLike", mg.ones_like),
    ("StopGradient", mg.stop_gradient),
    ("Shape", lambda x: mg.cast(mg.shape(x), F64)),
    ("Size", lambda x: mg.cast(mg.size(x), F64)),
    ("Rank", lambda x: mg.cast(mg.rank(x), F64)),
    ("Range", lambda x: mg.range(x[0], 4.0, 1.0)),
]


@pytest.mark.parametrize("label,build", NONE_CASES, ids=[c[0] for c in NONE_CASES])
def test_not_differentiable_ops_give_none(label, build):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(F64, [2], name="x")
        assert mg.gradients(build(x), x) == [None]
        # Along another path the gradient still flows, the stopped one adds nothing.
        (dx,) = mg.gradients([build(x), x * 3.0], x)
    np.testing.assert_array_equal(mg.Session(g).run(dx, {x: [1.0, 2.0]}), [3.0, 3.0])


def test_stop_gradient_is_held_constant():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(F64, [2], name="x")
        (dx,) = mg.gradients(mg.stop_gradient(x) * x, x)  # d/dx (c * x) = c
    np.testing.assert_array_equal(mg.Session(g).run(dx, {x: [2.0, -5.0]}), [2.0, -5.0])


def test_prevent_gradient_raises_its_message():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(F64, [2], name="x")
        y = ops.PreventGradient(current_scope().with_op_name("guard"), x, message="no way").output
        with pytest.raises(errors.NoGradientError) as e:
            mg.gradients(y * 2.0, x)
        assert mg.gradients(y * 2.0 + x, x, stop_gradients=[y])[0] is not None
    assert isinstance(e.value, LookupError)
    assert "Gradient explicitly disabled. Reason: no way" in str(e.value)
    assert e.value.node_name == "guard" and e.value.op_type == "PreventGradient"


def test_snapshot_has_no_gradient_as_in_tensorflow():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(F64, [2], name="x")
        y = ops.Snapshot(current_scope().with_op_name("snap"), x).output
        with pytest.raises(errors.NoGradientError, match="'snap' \\(op type: Snapshot\\)"):
            mg.gradients(y, x)


def test_integer_data_gets_no_gradient():
    g = mg.Graph()
    with g.as_default():
        k = mg.placeholder(mg.int32, [2, 2], name="k")
        x = mg.placeholder(F64, [2, 2], name="x")
        y = mg.cast(mg.transpose(k), F64) * x
        assert mg.gradients(y, [k, x])[0] is None


# -- StridedSliceGrad, MirrorPadGrad ---------------------------------------------------


FIXTURES = Path(__file__).resolve().parent / "fixtures" / "ops" / "array_grad_ops.npz"


def _fixture_errors():
    with np.load(FIXTURES, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    for i, meta in enumerate(json.loads(str(arrays["meta"]))):
        if "tf_error" in meta:
            own = {k[len(f"{i}/") :]: v for k, v in arrays.items() if k.startswith(f"{i}/")}
            yield pytest.param(meta, own, id=f"{meta['op']}:{meta['name']}")


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("meta,arrays", list(_fixture_errors()))
def test_kernel_errors_carry_tensorflows_messages(meta, arrays):
    """Every input fed with its shape (so the kernel decides): TF's class and message."""
    message = meta["tf_message"].split("}} ", 1)[1].split(" [Op:", 1)[0]
    op_def = mg.registered_ops()[meta["op"]]
    g = mg.Graph()
    feeds, inputs = {}, []
    with g.as_default():
        for arg in op_def.inputs:
            value = arrays[f"in/{arg.name}"]
            p = mg.placeholder(mg.as_dtype(value.dtype), None, name=arg.name)
            feeds[p] = value
            inputs.append(p)
        op = apply_op(meta["op"], None, inputs, meta["attrs"])
    with pytest.raises(getattr(errors, meta["tf_error"])) as e:
        mg.Session(g).run(op.outputs, feeds)
    assert message in str(e.value) and e.value.node_name == op.name


@pytest.mark.parametrize(
    "build,message",
    [
        (
            lambda: strided_slice_grad([4, 6], [1, 0], [3, 5], [1, 2], np.ones((2, 2))),
            "shape of dy was [2,2] instead of [2,3]",
        ),
        (
            lambda: strided_slice_grad([4], [7], [8], [1], np.ones(()), shrink_axis_mask=1),
            "slice index 7 of dimension 0 out of bounds.",
        ),
        (
            lambda: strided_slice_grad([-4, 6], [1], [3], [1], np.ones((2, 6))),
            "Invalid value in tensor used for shape: -4",
        ),
        (
            lambda: strided_slice_grad([[4, 6]], [1], [3], [1], np.ones((2, 6))),
            "Shape must be rank 1 but is rank 2",
        ),
        (
            lambda: mirror_pad_grad(np.ones((4, 6)), [[2, 2], [3, 3]], mode="REFLECT"),
            "Total paddings must be less than the input dimension size: 4 was not less than 4",
        ),
        (
            lambda: mirror_pad_grad(np.ones((4, 6)), [[1, 1]], mode="REFLECT"),
            "Shape must be rank 1 but is rank 2",
        ),
        (
            lambda: mirror_pad_grad(np.ones((4, 6)), [[-1, 1], [0, 0]], mode="SYMMETRIC"),
            "Paddings must be non-negative: -1, 1",
        ),
    ],
)
def test_constants_that_prove_a_gradient_op_wrong_fail_at_build(build, message):
    g = mg.Graph()
    with g.as_default(), pytest.raises(errors.InvalidArgumentError) as e:
        build()
    assert message in str(e.value) and e.value.node_name


def test_shapes_of_gradient_ops_while_building():
    g = mg.Graph()
    with g.as_default():
        dims = mg.placeholder(mg.int32, [3], name="dims")
        dy = mg.placeholder(F64, None, name="dy")
        assert strided_slice_grad(dims, [0], [1], [1], dy).shape.as_list() == [None] * 3
        assert strided_slice_grad([4, 5], [0], [1], [1], dy).shape.as_list() == [4, 5]
        pads = mg.placeholder(mg.int32, [2, 2], name="pads")
        x = mg.placeholder(F64, [None, 5], name="x")
        assert mirror_pad_grad(x, pads, mode="REFLECT").shape.as_list() == [None, None]
        shaped = mirror_pad_grad(x, [[1, 1], [0, 2]], mode="SYMMETRIC")
        assert shaped.shape.as_list() == [None, 3]
        assert mirror_pad_grad(dy, pads, mode="REFLECT").shape.rank == 2
        assert mirror_pad_grad(dy, mg.placeholder(mg.int32), mode="REFLECT").shape.rank is None


def test_mirror_pad_grad_refuses_bool():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.bool, [3, 2], name="x")
        y = mirror_pad_grad(x, [[1, 1], [0, 0]], mode="SYMMETRIC")
    with pytest.raises(errors.NotFoundError, match="No MirrorPadGrad kernel for bool"):
        mg.Session(g).run(y, {x: np.ones((3, 2), bool)})


def _adjoint_gap(forward, backward, x_value, g_value):
    """|<forward(x), g> - <x, backward(g)>|, run in one Session on the current device."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(F64, None, name="x")
        dy = mg.placeholder(F64, None, name="dy")
        y, dx = forward(x), backward(dy)
    y_val, dx_val = mg.Session(g).run([y, dx], {x: x_value, dy: g_value})
    return abs(np.vdot(y_val, g_value) - np.vdot(x_value, dx_val))


# (input shape, [before, after] per dim, mode): rank up to 6 (TF's kernel stops at 5)
MIRROR_CASES = [
    ([5], [[2, 1]], "REFLECT"),
    ([3, 4], [[2, 2], [0, 3]], "SYMMETRIC"),
    ([2, 3, 4], [[1, 0], [2, 2], [3, 1]], "REFLECT"),
    ([1, 2, 1, 3], [[1, 1], [2, 0], [0, 1], [3, 3]], "SYMMETRIC"),
    ([2, 2, 2, 2, 2, 3], [[0, 1], [1, 1], [0, 0], [1, 0], [2, 2], [1, 2]], "SYMMETRIC"),
    ([], [], "REFLECT"),
]


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("shape,paddings,mode", MIRROR_CASES)
def test_mirror_pad_grad_is_the_adjoint_of_mirror_pad(shape, paddings, mode):
    rng = np.random.default_rng(len(shape))
    pads = np.array(paddings, np.int64).reshape(-1, 2)
    x_value = rng.standard_normal(shape)
    g_value = rng.standard_normal([d + a + b for d, (a, b) in zip(shape, pads.tolist())])
    gap = _adjoint_gap(
        lambda x: mg.pad(x, pads, mode),
        lambda dy: mirror_pad_grad(dy, pads, mode=mode),
        x_value,
        g_value,
    )
    assert gap < 1e-10


# (input shape, x[...] key) covering every mask, negative strides, clamped ends
SLICE_CASES = [
    ([6], np.s_[1:5:2]),
    ([6], np.s_[::-2]),
    ([4, 5], np.s_[-1:0:-1, 1:]),
    ([3, 4, 2], np.s_[..., 1]),
    ([3, 4, 2], np.s_[None, 1:, ..., None, 0]),
    ([3, 4], np.s_[2, -3]),
    ([3, 4], np.s_[5:1, :]),
    ([2, 3], np.s_[-100:100, ::3]),
]


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("shape,key", SLICE_CASES, ids=[str(c[1]) for c in SLICE_CASES])
def test_strided_slice_grad_is_the_adjoint_of_strided_slice(shape, key):
    rng = np.random.default_rng(len(shape))
    x_value = rng.standard_normal(shape)
    g_value = rng.standard_normal(x_value[key].shape)

    def backward(dy):
        forward = mg.constant(np.zeros(shape))[key]
        begin, end, strides = forward.op.inputs[1:]
        masks = {k: forward.op.get_attr(k) for k in ("begin_mask", "end_mask")}
        masks.update({k: forward.op.get_attr(k) for k in ("ellipsis_mask", "new_axis_mask")})
        masks["shrink_axis_mask"] = forward.op.get_attr("shrink_axis_mask")
        return strided_slice_grad(np.array(shape, np.int32), begin, end, strides, dy, **masks)

    assert _adjoint_gap(lambda x: x[key], backward, x_value, g_value) < 1e-10
    np.testing.assert_array_equal(x_value[key].shape, g_value.shape)


def test_second_order_gradients_of_the_gradient_ops():
    """StridedSliceGrad's gradient is the slice again, MirrorPadGrad's the mirror pad."""
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(F64, [4, 5], name="x")
        w = mg.placeholder(F64, [2, 3], name="w")
        (dx,) = mg.gradients(x[1:3, ::2], x, grad_ys=w)
        (dw,) = mg.gradients(dx * x, w)  # d/dw <ssg(w), x> = x[1:3, ::2]
        p = mg.placeholder(F64, [3, 4], name="p")
        q = mg.placeholder(F64, [5, 7], name="q")
        (dp,) = mg.gradients(mg.pad(p, [[1, 1], [2, 1]], "REFLECT"), p, grad_ys=q)
        (dq,) = mg.gradients(dp * p, q)  # d/dq <mpg(q), p> = mirror_pad(p)
    rng = np.random.default_rng(3)
    xv, wv = rng.standard_normal((4, 5)), rng.standard_normal((2, 3))
    pv, qv = rng.standard_normal((3, 4)), rng.standard_normal((5, 7))
    got_w, got_q = mg.Session(g).run([dw, dq], {x: xv, w: wv, p: pv, q: qv})
    np.testing.assert_array_equal(got_w, xv[1:3, ::2])
    np.testing.assert_array_equal(got_q, np.pad(pv, [[1, 1], [2, 1]], mode="reflect"))
