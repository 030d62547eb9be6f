"""The graph, names, scopes, the default-scope stack and the C++-mirror API."""

import pickle
import threading

import networkx as nx
import numpy as np
import pytest

import minigraph as mg
from minigraph import errors, ops


def test_name_uniquing_follows_tensorflow():
    g = mg.Graph()
    with g.as_default():
        names = [mg.constant(1, name="c").op.name for _ in range(3)]
        explicit = mg.constant(1, name="c_1").op.name  # taken above: uniquified again
        default = [mg.constant(1).op.name, mg.constant(1).op.name]
    assert names == ["c", "c_1", "c_2"]
    assert explicit == "c_1_1"
    assert default == ["Const", "Const_1"]


def test_name_scopes_nest_and_uniquify():
    g = mg.Graph()
    with g.as_default():
        with mg.name_scope("outer"):
            with mg.name_scope("inner"):
                a = mg.constant(1.0, name="a")
        with mg.name_scope("outer"):
            b = mg.constant(1.0, name="a")
        c = mg.add(a, b)
    assert c.op.name == "AddV2"
    assert a.name == "outer/inner/a:0"
    assert b.name == "outer_1/a:0"


def test_auto_constants_are_named_under_the_op():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, name="x")
        y = x + 1.0
    assert [i.op.name for i in y.op.inputs] == ["x", "AddV2/y"]
    assert y.op.inputs[1].dtype == mg.float32


def test_node_operation_output_accessors():
    g = mg.Graph()
    with g.as_default():
        a = mg.constant([[1, 2]], name="a")
        b = mg.identity(a, name="b")
        mg.add(a, a, name="c")
    node = b.node
    assert node.name == "b" and node.type_string == "Identity"
    assert node.attrs["T"] == mg.int32
    assert node.num_inputs == 1 and node.num_outputs == 1
    assert [u for u, _, _ in node.in_edges] == ["a"]
    assert sorted(v for _, v, _ in a.node.out_edges) == ["b", "c", "c"]
    assert b.op.type == "Identity" and b.op.inputs == (a,)
    assert b.op.outputs == [b] and b.op.output(0) == b
    assert [op.name for op in a.consumers()] == ["b", "c"]
    assert b.graph is g and b.index == 0 and b.name == "b:0"
    assert hash(b) == hash(mg.Output(b.op, 0))
    with pytest.raises(errors.OutOfRangeError, match="'b'"):
        b.op.output(1)


def test_graph_lookup_and_views():
    g = mg.Graph()
    with g.as_default():
        a = mg.constant(1, name="a")
        mg.negative(a, name="n")
    assert g.get_tensor_by_name("n:0").op.name == "n"
    assert g.get_operation_by_name("a").type == "Const"
    with pytest.raises(errors.NotFoundError, match="zz"):
        g.get_operation_by_name("zz")
    with pytest.raises(errors.NotFoundError, match="only has 1 outputs"):
        g.get_tensor_by_name("a:3")
    view = g.as_networkx()
    assert isinstance(view, nx.MultiDiGraph) and list(view.edges()) == [("a", "n")]
    with pytest.raises(nx.NetworkXError):
        view.add_node("x")
    assert nx.is_directed_acyclic_graph(view)
    dot = g.to_dot()
    assert dot.startswith("digraph") and '"a" -> "n"' in dot


def test_inputs_from_another_graph_are_rejected():
    g1, g2 = mg.Graph(), mg.Graph()
    with g1.as_default():
        a = mg.constant(1.0)
    with g2.as_default(), pytest.raises(errors.InvalidArgumentError, match="different graph"):
        mg.add(a, mg.constant(2.0))


def test_ops_outside_as_default_go_to_their_inputs_graph():
    g = mg.Graph()
    with g.as_default():
        a = mg.constant(1.0)
    b = a + 1.0
    assert b.graph is g


def test_default_scope_stack_is_per_thread():
    g = mg.Graph()
    seen = {}

    def worker():
        seen["graph"] = mg.get_default_graph()

    with g.as_default():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert mg.get_default_graph() is g
    assert seen["graph"] is not g


def test_device_and_control_dependency_contexts():
    g = mg.Graph()
    with g.as_default():
        a = mg.constant(1.0, name="a")
        with mg.device("/job:localhost/task:0"), mg.device("/gpu:1"):
            b = mg.constant(2.0, name="b")
        with mg.control_dependencies([a]):
            c = mg.constant(3.0, name="c")
            with mg.control_dependencies(None):
                d = mg.constant(4.0, name="d")
    assert b.node.requested_device == "/job:localhost/task:0/device:GPU:1"
    assert c.op.control_inputs == [a.op]
    assert d.op.control_inputs == []
    assert ("a", "c") in g.as_networkx().edges()


def test_cpp_scope_api():
    root = mg.Scope.new_root_scope()
    sub = root.new_sub_scope("layer")
    sub2 = root.new_sub_scope("layer")
    w = ops.Const(sub.with_op_name("w"), [1.0, 2.0])
    v = ops.Const(sub2.with_op_name("w"), [3.0, 4.0])
    s = ops.Add(root.with_op_name("sum").with_device("/cpu:0"), w, v)
    n = ops.Neg(root.with_control_dependencies([s.operation]), s)
    assert w.output.name == "layer/w:0" and v.output.name == "layer_1/w:0"
    assert s.z.name == "sum:0" and s.node().requested_device == "/device:CPU:0"
    assert n.operation.control_inputs == [s.operation]
    assert root.graph is sub.graph
    with root:
        assert mg.get_default_graph() is root.graph
    out = mg.ClientSession(root).run([n.y, s])
    np.testing.assert_array_equal(out[0], [-4.0, -6.0])
    np.testing.assert_array_equal(out[1], [4.0, 6.0])


def test_design_mirror_snippet():
    root = mg.Scope.new_root_scope()
    d = ops.Const(root, [[1, 2], [3, 4]])
    st = ops.DynamicStitch(root.with_op_name("merged"), [ops.Const(root, [1, 0])], [d])
    assert isinstance(st.merged, mg.Output)
    assert isinstance(st.operation, mg.Operation)
    assert isinstance(st.operation.node, mg.Node)
    (out,) = mg.ClientSession(root).run([st.merged])
    np.testing.assert_array_equal(out, [[3, 4], [1, 2]])


def test_registry_lists_ops_and_kernel_devices():
    reg = mg.registered_ops()
    for name in ["Const", "Placeholder", "Add", "Reshape", "StridedSlice", "GatherV2"]:
        assert "CPU" in reg[name].kernel_devices
    assert reg["Add"].signature() == "Add(x: T, y: T) -> (z: T)"


def test_registering_twice_raises():
    from minigraph.registry import define_op, register_kernel

    with pytest.raises(ValueError, match="already defined"):
        define_op("Add", inputs=["x: T"], outputs=["y: T"], attrs=["T: type"], shape_fn=None)
    with pytest.raises(ValueError, match="already registered"):
        register_kernel("Add", "CPU")(lambda ctx, x, y: x)


def test_errors_pickle_with_node_and_message():
    e = errors.InvalidArgumentError("bad index", "my/node", "GatherNd")
    e2 = pickle.loads(pickle.dumps(e))
    assert type(e2) is errors.InvalidArgumentError
    assert (e2.message, e2.node_name, e2.op_type) == ("bad index", "my/node", "GatherNd")
    assert "my/node" in str(e2)
    for cls in [
        errors.NotFoundError,
        errors.OutOfRangeError,
        errors.ResourceExhaustedError,
        errors.FailedPreconditionError,
        errors.UnimplementedError,
        errors.UnavailableError,
        errors.InternalError,
    ]:
        assert issubclass(cls, errors.OpError)


def test_output_is_not_a_python_bool_or_iterable():
    with mg.Graph().as_default():
        x = mg.constant([1, 2])
    with pytest.raises(TypeError, match="bool"):
        bool(x)
    with pytest.raises(TypeError, match="not iterable"):
        list(x)
    assert (x == x) is True  # == compares handles, as in TensorFlow graph mode


def test_minigraph_reexports_every_builder():
    builders = ops.builders()
    assert {"space_to_batch_nd", "dynamic_partition", "tensor_scatter_nd_max", "conv2d"} <= set(
        builders
    )
    for name, fn in builders.items():
        assert getattr(mg, name) is fn and name in mg.__all__, name
