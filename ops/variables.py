"""``mg.Variable``: a resource variable as ``tf.Variable`` builds it in TensorFlow 2's graph
mode, and the graph's variable collections (``mg.global_variables_initializer``,
``mg.trainable_variables``).

``mg.Variable(1.0, name="v")`` adds TensorFlow's nodes: ``v`` (VarHandleOp),
``v/Initializer/...`` (the initial value), ``v/Assign`` (its initializer) and, each time
the variable is used as a tensor, a ReadVariableOp, so that a read placed after an
assign (``mg.control_dependencies``) sees the new value. Values live in the Session
(ops/variable_ops.py): run ``mg.global_variables_initializer()`` in each new Session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from minigraph.dtypes import DType, as_dtype
from minigraph.graph import Graph, Operation, Output
from minigraph.ops.array_ops import no_op
from minigraph.scope import control_dependencies, current_scope, get_default_graph, name_scope
from minigraph.shapes import TensorShape, as_shape
from minigraph.wrappers import apply_op, as_output, convert_to_output

BUILDERS = (
    "Variable",
    "global_variables",
    "trainable_variables",
    "global_variables_initializer",
    "variables_initializer",
)

GLOBAL_VARIABLES = "variables"  # TensorFlow's collection keys
TRAINABLE_VARIABLES = "trainable_variables"


class Variable:
    """A tensor whose value persists across ``Session.run`` calls and that ops can assign.

    Args:
        initial_value: the value ``initializer`` gives it: a tensor, an array, a Python
            value, or a callable returning one.
        name: the VarHandleOp's name (made unique; default ``"Variable"``).
        dtype: converts the initial value to this dtype (default: its own).
        shape: the shape it may hold (default: the initial value's; ``mg.TensorShape(None)``
            for any).
        trainable: listed in ``mg.trainable_variables()`` (what optimizers train).

    Used as a tensor (``v * 2``, ``mg.matmul(x, v)``) it reads its current value.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     v = mg.Variable([1.0, 2.0], name="v")
    ...     step = v.assign_add([10.0, 10.0])
    ...     init = mg.global_variables_initializer()
    >>> with mg.Session(g) as sess:
    ...     _ = sess.run(init)
    ...     _ = sess.run(step)
    ...     sess.run(v)
    array([11., 12.], dtype=float32)
    """

    def __init__(
        self,
        initial_value: Any = None,
        name: str | None = None,
        dtype: Any = None,
        shape: Any = None,
        trainable: bool = True,
    ) -> None:
        if initial_value is None:
            raise ValueError("initial_value must be specified")
        outer = current_scope().with_control_dependencies(None)  # as TF's init_scope
        self._name = outer.unique_op_name(name or "Variable")
        self.graph: Graph = outer.graph
        with outer, name_scope(f"{self._name}/"):
            with name_scope("Initializer"):
                value = initial_value() if callable(initial_value) else initial_value
                want = None if dtype is None else as_dtype(dtype)
                initial = convert_to_output(value, want, name="initial_value")
            declared = initial.shape if shape is None else as_shape(shape)
            if not declared.is_compatible_with(initial.shape):
                raise ValueError(
                    f"The initial value's shape ({initial.shape}) is not compatible with the "
                    f"explicitly supplied `shape` argument ({declared})."
                )
            self._dtype: DType = initial.dtype
            self._shape: TensorShape = declared
            attrs = {"shared_name": self._name, "dtype": self._dtype, "shape": declared}
            self.handle: Output = apply_op(
                "VarHandleOp", outer, [], attrs, reserved_name=self._name
            ).output(0)
            self.initial_value: Output | None = initial
            self.initializer: Operation = apply_op(
                "AssignVariableOp",
                current_scope().with_op_name("Assign"),
                [self.handle, initial],
                {},
            )
        self._collect(trainable)

    @classmethod
    def from_handle(cls, handle: Any) -> Variable:
        """The variable of an existing ``VarHandleOp`` (its Output or Operation), such as
        one of an imported GraphDef, to read, assign, differentiate, train or save with
        ``mg.train.Saver``. It is named by its shared name (``w`` for a TensorFlow 1
        ``VariableV2`` w, whose handle import names ``w/resource``), as checkpoints key it;
        it has no initializer (restore or assign it) and joins no collection.
        """
        out = handle.outputs[0] if isinstance(handle, Operation) else as_output(handle)
        if out is None or out.op.type != "VarHandleOp":
            raise TypeError(f"from_handle takes a VarHandleOp's output, got {handle!r}")
        shared = out.op.get_attr("shared_name") or out.op.name
        dtype, shape = as_dtype(out.op.get_attr("dtype")), as_shape(out.op.get_attr("shape"))
        return cls._wrap(out, shared, dtype, shape, None, None)

    @classmethod
    def _adopt(
        cls, handle: Output, initializer: Operation, initial_value: Output, trainable: bool = True
    ) -> Variable:
        """A Variable for nodes already in a graph (an imported VarHandleOp, its initializer
        and initial value), listed in its graph's collections."""
        var = cls._wrap(
            handle,
            handle.op.name,
            initial_value.dtype,
            initial_value.shape,
            initializer,
            initial_value,
        )
        var._collect(trainable)
        return var

    @classmethod
    def _wrap(
        cls,
        handle: Output,
        name: str,
        dtype: DType,
        shape: TensorShape,
        initializer: Operation | None,
        initial_value: Output | None,
    ) -> Variable:
        var = cls.__new__(cls)
        var._name = name
        var.graph = handle.graph
        var.handle = handle
        var.initializer = initializer
        var.initial_value = initial_value
        var._dtype = dtype
        var._shape = shape
        var.trainable = False
        return var

    def _collect(self, trainable: bool) -> None:
        self.trainable = trainable
        self.graph.add_to_collection(GLOBAL_VARIABLES, self)
        if trainable:
            self.graph.add_to_collection(TRAINABLE_VARIABLES, self)

    # -- what it is ---------------------------------------------------------------------

    @property
    def name(self) -> str:
        """``"<handle node>:0"``, as TensorFlow names a variable."""
        return f"{self._name}:0"

    @property
    def op(self) -> Operation:
        """The VarHandleOp."""
        return self.handle.op

    @property
    def dtype(self) -> DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def __repr__(self) -> str:
        return f"<mg.Variable {self.name!r} shape={self._shape} dtype={self._dtype.name}>"

    # -- reading --------------------------------------------------------------------------

    def value(self) -> Output:
        """A new read of the current value (a ReadVariableOp under ``<name>/Read`` when
        built outside any name scope, else in the current one)."""
        return apply_op(
            "ReadVariableOp",
            current_scope().with_op_name("ReadVariableOp"),
            [self.handle],
            {"dtype": self._dtype},
        ).output(0)

    read_value = value

    def _as_output(self) -> Output:
        return self.value()

    def is_initialized(self, name: str | None = None) -> Output:
        """A bool tensor: whether the variable has a value in the running Session."""
        scope = current_scope().with_op_name(name or "VarIsInitializedOp")
        return apply_op("VarIsInitializedOp", scope, [self.handle], {}).output(0)

    # -- assigning ------------------------------------------------------------------------

    def _update(self, op_type: str, value: Any, name: str | None, read_value: bool) -> Any:
        tensor = convert_to_output(value, self._dtype)
        if not self._shape.is_compatible_with(tensor.shape):
            raise ValueError(
                f"Cannot assign value to variable '{self.name}': Shape mismatch. The "
                f"variable shape {self._shape}, and the assigned value shape "
                f"{tensor.shape} are incompatible."
            )
        scope = current_scope().with_op_name(name or op_type)
        op = apply_op(op_type, scope, [self.handle, tensor], {})
        if not read_value:
            return op
        with control_dependencies([op]):
            return self.value()

    def assign(
        self,
        value: Any,
        use_locking: bool = False,
        name: str | None = None,
        read_value: bool = True,
    ) -> Any:
        """Give the variable ``value``; returns the new value read after it (or the
        assign's Operation with ``read_value=False``)."""
        return self._update("AssignVariableOp", value, name, read_value)

    def assign_add(
        self,
        delta: Any,
        use_locking: bool = False,
        name: str | None = None,
        read_value: bool = True,
    ) -> Any:
        """Add ``delta`` to the variable (atomically); returns the new value read after it."""
        return self._update("AssignAddVariableOp", delta, name, read_value)

    def assign_sub(
        self,
        delta: Any,
        use_locking: bool = False,
        name: str | None = None,
        read_value: bool = True,
    ) -> Any:
        """Subtract ``delta`` from the variable (atomically); returns the new value."""
        return self._update("AssignSubVariableOp", delta, name, read_value)


def _delegate(method: str) -> Callable[..., Any]:
    def operator(self: Variable, *args: Any) -> Any:
        return getattr(self.value(), method)(*args)

    operator.__name__ = method
    return operator


# Python operators read the value and apply Output's operator (``v * 2``, ``v[0]``).
for _method in (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__",
    "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__abs__", "__lt__", "__le__",
    "__gt__", "__ge__", "__and__", "__rand__", "__or__", "__ror__", "__invert__",
    "__getitem__",
):  # fmt: skip
    setattr(Variable, _method, _delegate(_method))
Variable.__array_ufunc__ = None  # NumPy defers to the operators above, as for Outputs


def global_variables(graph: Graph | None = None) -> list[Variable]:
    """Every variable made in the graph (default: the current one), in creation order."""
    return (graph or get_default_graph()).get_collection(GLOBAL_VARIABLES)


def trainable_variables(graph: Graph | None = None) -> list[Variable]:
    """The variables made with ``trainable=True``: what optimizers train by default."""
    return (graph or get_default_graph()).get_collection(TRAINABLE_VARIABLES)


def variables_initializer(var_list: Iterable[Variable], name: str = "init") -> Operation:
    """One op that runs the initializers of ``var_list``."""
    initializers = []
    for v in var_list:
        if v.initializer is None:
            raise ValueError(f"{v.name} has no initializer (Variable.from_handle): restore it")
        initializers.append(v.initializer)
    with control_dependencies(initializers):
        return no_op(name=name)


def global_variables_initializer() -> Operation:
    """One op that initialises every variable of the current graph (named ``init``)."""
    return variables_initializer(global_variables())


__all__ = list(BUILDERS)
