"""``mg.train``'s optimizers, as ``tf.compat.v1.train``'s: ``minimize`` adds the gradient
ops (``mg.gradients``) and one training op per variable (ops/training_ops.py), with the same
slot variables, names and arithmetic as TensorFlow, so the numbers match its graph mode.

As in TensorFlow:

- hyperparameters given as Python numbers become float32 constants (``Adam/learning_rate``)
  cast to each variable's dtype, so a float64 model sees ``float64(float32(0.1))``; tensors
  and callables work too;
- slot variables are named after their variable (``w/Momentum``, ``w/Adam`` and
  ``w/Adam_1``, ``w/RMSProp``...), made with its device, not trainable, and listed in
  ``mg.global_variables()``: build ``mg.global_variables_initializer()`` after
  ``minimize``; Adam's ``beta1_power`` and ``beta2_power`` are float32 variables beside the
  first variable (by name) that it trains;
- ``apply_gradients`` skips variables whose gradient is None, adds its ops under the
  optimizer's name (``Adam/update_w/ResourceApplyAdam``) and returns one Operation named as
  that scope, which also increments ``global_step`` (after every update) when given.

An optimizer object can be used for several graphs; its slots are kept per variable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minigraph import dtypes, errors
from minigraph.graph import Graph, Operation, Output
from minigraph.ops.array_ops import cast, fill, identity
from minigraph.ops.gradients import gradients
from minigraph.ops.shape_ops import shape as shape_of
from minigraph.ops.variables import Variable, trainable_variables
from minigraph.scope import (
    Scope,
    control_dependencies,
    current_scope,
    default_scope,
    get_default_graph,
    name_scope,
)
from minigraph.wrappers import apply_op, as_output, convert_to_output

__all__ = [
    "Optimizer",
    "GradientDescentOptimizer",
    "MomentumOptimizer",
    "AdamOptimizer",
    "RMSPropOptimizer",
    "AdagradOptimizer",
    "create_global_step",
    "get_global_step",
    "get_or_create_global_step",
]

GLOBAL_STEP = "global_step"  # TensorFlow's collection key (and the variable's name)
TRAIN_OP = "train_op"
_VALID = (dtypes.float16, dtypes.float32, dtypes.float64)


def _check_dtypes(tensors: Sequence[Any]) -> None:
    for t in tensors:
        if t.dtype not in _VALID:
            raise ValueError(
                f"Invalid type {t.dtype.name} for {t.name}, expected: {[d.name for d in _VALID]}."
            )


def _colocated(var: Variable) -> Scope:
    """A root scope (no name prefix, no control dependencies: TensorFlow's init_scope for
    slots) on ``var``'s device."""
    scope = Scope(var.graph)
    device = var.handle.node.requested_device
    return scope.with_device(device) if device else scope


def _beside(var: Variable) -> Any:
    """The current scope on ``var``'s device, as TensorFlow's colocate_with(var)."""
    device = var.handle.node.requested_device
    return default_scope(current_scope().with_device(device) if device else current_scope())


class Optimizer:
    """The base of the optimizers: ``minimize`` = ``compute_gradients`` +
    ``apply_gradients``. Subclasses say which slots they keep (``_create_slots``), which
    tensors they need (``_prepare``) and which training op updates a variable
    (``_apply_dense``)."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking: bool, name: str) -> None:
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots: dict[str, dict[Variable, Variable]] = {}
        self._non_slot: dict[tuple[str, Graph], Variable] = {}

    def get_name(self) -> str:
        return self._name

    # -- the public steps --------------------------------------------------------------------

    def minimize(
        self,
        loss: Any,
        global_step: Variable | None = None,
        var_list: Sequence[Variable] | None = None,
        gate_gradients: int = GATE_OP,
        aggregation_method: Any = None,
        colocate_gradients_with_ops: bool = False,
        name: str | None = None,
        grad_loss: Any = None,
    ) -> Operation:
        """One Operation that updates ``var_list`` (default: the trainable variables) to
        decrease ``loss``, and then increments ``global_step`` when given.

        ``aggregation_method`` and ``colocate_gradients_with_ops`` are accepted for
        TensorFlow's code: gradients are always summed with AddN and built on their forward
        op's device.
        """
        grads_and_vars = self.compute_gradients(
            loss,
            var_list=var_list,
            gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops,
            grad_loss=grad_loss,
        )
        if all(g is None for g, _ in grads_and_vars):
            names = [repr(v) for _, v in grads_and_vars]
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do "
                f"not support gradients, between variables {names} and loss {loss!r}."
            )
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(
        self,
        loss: Any,
        var_list: Sequence[Variable] | None = None,
        gate_gradients: int = GATE_OP,
        aggregation_method: Any = None,
        colocate_gradients_with_ops: bool = False,
        grad_loss: Any = None,
    ) -> list[tuple[Output | None, Variable]]:
        """``[(gradient, variable)]`` of ``loss`` (a tensor, or a callable returning one)
        for ``var_list`` (default: the trainable variables); None where ``loss`` does not
        depend on the variable."""
        if callable(loss):
            loss = loss()
        if gate_gradients not in (self.GATE_NONE, self.GATE_OP, self.GATE_GRAPH):
            raise ValueError(
                "gate_gradients must be one of: Optimizer.GATE_NONE, Optimizer.GATE_OP, "
                f"Optimizer.GATE_GRAPH.  Not {gate_gradients}"
            )
        loss = convert_to_output(loss)
        _check_dtypes([loss])
        if grad_loss is not None:
            grad_loss = convert_to_output(grad_loss)
            _check_dtypes([grad_loss])
        variables = trainable_variables(loss.graph) if var_list is None else list(var_list)
        for v in variables:
            if not isinstance(v, Variable):
                raise TypeError(f"Trying to optimize unsupported type {v!r}: expected mg.Variable")
        if not variables:
            raise ValueError("No variables to optimize.")
        grads = gradients(loss, variables, grad_ys=None if grad_loss is None else [grad_loss])
        if gate_gradients == self.GATE_GRAPH:  # every gradient computed before any is used
            done = [g for g in grads if g is not None]
            with control_dependencies(done):
                grads = [None if g is None else identity(g) for g in grads]
        pairs = list(zip(grads, variables))
        _check_dtypes([v for g, v in pairs if g is not None])
        return pairs

    def apply_gradients(
        self,
        grads_and_vars: Any,
        global_step: Variable | None = None,
        name: str | None = None,
    ) -> Operation:
        """One Operation that applies each gradient to its variable (None gradients are
        skipped), then increments ``global_step`` when given; named ``name`` (default: the
        optimizer's name, made unique)."""
        pairs = tuple(grads_and_vars)
        if not pairs:
            raise ValueError("No variables provided.")
        converted: list[tuple[Output | None, Variable]] = []
        for g, v in pairs:
            if g is not None:
                out = as_output(g)
                if out is None:
                    try:
                        out = convert_to_output(g)
                    except errors.OpError:
                        raise TypeError(
                            f"Gradient must be convertible to a Tensor, or None: {g!r}"
                        ) from None
                g = out
            if not isinstance(v, Variable):
                raise TypeError(f"Trying to optimize unsupported type {v!r}: expected mg.Variable")
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError(
                f"No gradients provided for any variable: {[repr(v) for _, v in converted]}."
            )
        self._create_slots(var_list)
        graph = var_list[0].graph
        outer = current_scope() if current_scope().graph is graph else Scope(graph)
        with default_scope(outer), name_scope(name or self._name):
            scope_name = current_scope().prefix
            self._prepare()
            updates = []
            for grad, var in converted:
                if grad is None:
                    continue
                with name_scope(f"update_{var.op.name}"), _beside(var):
                    updates.append(self._apply_dense(grad, var))
            if global_step is None:
                apply = self._finish(updates, scope_name)
            else:
                finish = self._finish(updates, current_scope().unique_op_name("update"))
                with control_dependencies([finish]), _beside(global_step):
                    one = convert_to_output(np.array(1, global_step.dtype.np))
                    apply = apply_op(
                        "AssignAddVariableOp",
                        None,
                        [global_step.handle, one],
                        {},
                        reserved_name=scope_name,
                    )
        if apply not in apply.graph.get_collection(TRAIN_OP):
            apply.graph.add_to_collection(TRAIN_OP, apply)
        return apply

    # -- slots ------------------------------------------------------------------------------

    def get_slot(self, var: Variable, name: str) -> Variable | None:
        """The slot ``name`` made for ``var`` (see ``get_slot_names``), else None."""
        return self._slots.get(name, {}).get(var)

    def get_slot_names(self) -> list[str]:
        return sorted(self._slots)

    def variables(self) -> list[Variable]:
        """The slot and other variables this optimizer made in the current graph, by name."""
        graph = get_default_graph()
        made = [v for (_, g), v in self._non_slot.items() if g is graph]
        made += [s for slots in self._slots.values() for s in slots.values() if s.graph is graph]
        return sorted(made, key=lambda v: v.name)

    def _slot(self, var: Variable, slot: str, init: Callable[[], Any]) -> Variable:
        """The slot variable ``slot`` of ``var``, made the first time as ``<var>/<name>``
        (``_1``, ``_2``... for a second slot) with the value ``init()``."""
        slots = self._slots.setdefault(slot, {})
        if var not in slots:
            with default_scope(_colocated(var)):
                slots[var] = Variable(init, name=f"{var.name[:-2]}/{self._name}", trainable=False)
        return slots[var]

    def _zeros_slot(self, var: Variable, slot: str) -> Variable:
        return self._filled_slot(var, slot, 0)

    def _filled_slot(self, var: Variable, slot: str, value: float) -> Variable:
        def init() -> Output:
            if var.shape.is_fully_defined():
                dims = var.shape.as_list()
            else:
                known = var.initial_value  # None for Variable.from_handle: its value
                dims = shape_of(known if known is not None else var.value())
            return fill(
                dims, np.array(value, var.dtype.np), name="zeros" if value == 0 else "Const"
            )

        return self._slot(var, slot, init)

    def _non_slot_variable(self, value: Any, name: str, colocate_with: Variable) -> Variable:
        """A variable the optimizer keeps once per graph (Adam's ``beta1_power``), beside
        ``colocate_with``, in the current name scope."""
        key = (name, colocate_with.graph)
        if key not in self._non_slot:
            with control_dependencies(None), _beside(colocate_with):
                self._non_slot[key] = Variable(value, name=name, trainable=False)
        return self._non_slot[key]

    # -- what subclasses define ---------------------------------------------------------------

    def _create_slots(self, var_list: list[Variable]) -> None:
        """Make the slot variables ``var_list`` needs."""

    def _prepare(self) -> None:
        """Make the hyperparameter tensors (in the apply scope)."""

    def _apply_dense(self, grad: Output, var: Variable) -> Operation:
        raise NotImplementedError

    def _finish(self, update_ops: list[Operation], name: str) -> Operation:
        """One NoOp named ``name`` after ``update_ops``."""
        return _group(update_ops, name)

    # -- helpers ------------------------------------------------------------------------------

    @staticmethod
    def _tensor(value: Any, name: str) -> Output:
        """A hyperparameter as a tensor: a Python number is a float32 constant, as
        TensorFlow's convert_to_tensor makes it."""
        if callable(value):
            value = value()
        return convert_to_output(value, name=name)

    def _apply(
        self, op_type: str, var: Variable, slots: Sequence[str], *inputs: Any, **attrs: Any
    ) -> Operation:
        """The training op for ``var``, its hyperparameters cast to the variable's dtype."""
        handles = [var.handle] + [self._slots[s][var].handle for s in slots]
        args = [x if x.dtype == var.dtype else cast(x, var.dtype) for x in inputs]
        attrs.setdefault("use_locking", self._use_locking)
        return apply_op(op_type, None, [*handles, *args], attrs)


def _group(ops: list[Operation], name: str) -> Operation:
    """A NoOp named exactly ``name`` (a name scope's own name, as TensorFlow's group gives
    it) that runs after ``ops``."""
    with control_dependencies(ops):
        scope = current_scope()
        return apply_op("NoOp", scope, [], {}, reserved_name=name)


class GradientDescentOptimizer(Optimizer):
    """``var -= learning_rate * grad`` (ResourceApplyGradientDescent)."""

    def __init__(
        self, learning_rate: Any, use_locking: bool = False, name: str = "GradientDescent"
    ) -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _prepare(self) -> None:
        self._lr = self._tensor(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad: Output, var: Variable) -> Operation:
        return self._apply("ResourceApplyGradientDescent", var, (), self._lr, grad)


class MomentumOptimizer(Optimizer):
    """Momentum (ResourceApplyMomentum): ``accum = momentum * accum + grad``,
    ``var -= learning_rate * accum`` (Nesterov's form with ``use_nesterov``); slot
    ``<var>/Momentum``."""

    def __init__(
        self,
        learning_rate: Any,
        momentum: Any,
        use_locking: bool = False,
        name: str = "Momentum",
        use_nesterov: bool = False,
    ) -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._zeros_slot(v, "momentum")

    def _prepare(self) -> None:
        self._lr = self._tensor(self._learning_rate, "learning_rate")
        self._mom = self._tensor(self._momentum, "momentum")

    def _apply_dense(self, grad: Output, var: Variable) -> Operation:
        return self._apply(
            "ResourceApplyMomentum",
            var,
            ("momentum",),
            self._lr,
            grad,
            self._mom,
            use_nesterov=self._use_nesterov,
        )


class AdamOptimizer(Optimizer):
    """Adam (ResourceApplyAdam, Kingma and Ba's section 2 form with epsilon outside the
    square root); slots ``<var>/Adam`` (m) and ``<var>/Adam_1`` (v), and the float32
    variables ``beta1_power`` and ``beta2_power``, multiplied by beta1 and beta2 after each
    step."""

    def __init__(
        self,
        learning_rate: Any = 0.001,
        beta1: Any = 0.9,
        beta2: Any = 0.999,
        epsilon: Any = 1e-8,
        use_locking: bool = False,
        name: str = "Adam",
    ) -> None:
        super().__init__(use_locking, name)
        self._lr_value, self._beta1, self._beta2, self._epsilon = (
            learning_rate,
            beta1,
            beta2,
            epsilon,
        )

    def _create_slots(self, var_list: list[Variable]) -> None:
        first = min(var_list, key=lambda v: v.name)
        self._non_slot_variable(self._beta1, "beta1_power", first)
        self._non_slot_variable(self._beta2, "beta2_power", first)
        for v in var_list:
            self._zeros_slot(v, "m")
            self._zeros_slot(v, "v")

    def _powers(self, graph: Graph) -> tuple[Variable, Variable]:
        return self._non_slot[("beta1_power", graph)], self._non_slot[("beta2_power", graph)]

    def _prepare(self) -> None:
        self._lr = self._tensor(self._lr_value, "learning_rate")
        self._beta1_t = self._tensor(self._beta1, "beta1")
        self._beta2_t = self._tensor(self._beta2, "beta2")
        self._epsilon_t = self._tensor(self._epsilon, "epsilon")

    def _apply_dense(self, grad: Output, var: Variable) -> Operation:
        beta1_power, beta2_power = self._powers(var.graph)
        return self._apply(
            "ResourceApplyAdam",
            var,
            ("m", "v"),
            beta1_power.value(),
            beta2_power.value(),
            self._lr,
            self._beta1_t,
            self._beta2_t,
            self._epsilon_t,
            grad,
        )

    def _finish(self, update_ops: list[Operation], name: str) -> Operation:
        """After every update: ``beta1_power *= beta1``, ``beta2_power *= beta2``."""
        beta1_power, beta2_power = self._powers(get_default_graph())
        with control_dependencies(update_ops):
            new = [
                power.assign(power.value() * beta, name="Assign", read_value=False)
                for power, beta in ((beta1_power, self._beta1_t), (beta2_power, self._beta2_t))
            ]
        return _group([*update_ops, *new], name)


class RMSPropOptimizer(Optimizer):
    """RMSProp (ResourceApplyRMSProp, or ResourceApplyCenteredRMSProp with ``centered``);
    slots ``<var>/RMSProp`` (the mean square, initialised to ones, as TensorFlow's),
    ``<var>/RMSProp_1`` (the mean gradient, when centered) and the momentum."""

    def __init__(
        self,
        learning_rate: Any,
        decay: Any = 0.9,
        momentum: Any = 0.0,
        epsilon: Any = 1e-10,
        use_locking: bool = False,
        centered: bool = False,
        name: str = "RMSProp",
    ) -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._filled_slot(v, "rms", 1)
            if self._centered:
                self._zeros_slot(v, "mg")
            self._zeros_slot(v, "momentum")

    def _prepare(self) -> None:
        self._lr = self._tensor(self._learning_rate, "learning_rate")
        self._decay_t = self._tensor(self._decay, "decay")
        self._mom = self._tensor(self._momentum, "momentum")
        self._epsilon_t = self._tensor(self._epsilon, "epsilon")

    def _apply_dense(self, grad: Output, var: Variable) -> Operation:
        hyper = (self._lr, self._decay_t, self._mom, self._epsilon_t, grad)
        if self._centered:
            slots = ("mg", "rms", "momentum")
            return self._apply("ResourceApplyCenteredRMSProp", var, slots, *hyper)
        return self._apply("ResourceApplyRMSProp", var, ("rms", "momentum"), *hyper)


class AdagradOptimizer(Optimizer):
    """Adagrad (ResourceApplyAdagrad): ``accum += grad**2``,
    ``var -= learning_rate * grad / sqrt(accum)``; slot ``<var>/Adagrad`` starting at
    ``initial_accumulator_value``."""

    def __init__(
        self,
        learning_rate: Any,
        initial_accumulator_value: float = 0.1,
        use_locking: bool = False,
        name: str = "Adagrad",
    ) -> None:
        if initial_accumulator_value <= 0.0:
            raise ValueError(
                f"initial_accumulator_value must be positive: {initial_accumulator_value}"
            )
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial = initial_accumulator_value

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._filled_slot(v, "accumulator", self._initial)

    def _prepare(self) -> None:
        self._lr = self._tensor(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad: Output, var: Variable) -> Operation:
        return self._apply("ResourceApplyAdagrad", var, ("accumulator",), self._lr, grad)


# -- the global step ------------------------------------------------------------------------


def get_global_step(graph: Graph | None = None) -> Variable | None:
    """The graph's global step variable (collection ``global_step``), else None."""
    found = (graph or get_default_graph()).get_collection(GLOBAL_STEP)
    if len(found) > 1:
        raise TypeError("Multiple tensors in global_step collection.")
    return found[0] if found else None


def create_global_step(graph: Graph | None = None) -> Variable:
    """A new int64 scalar variable ``global_step`` (0, not trainable) in ``graph``."""
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with default_scope(Scope(graph)):
        step = Variable(np.int64(0), name=GLOBAL_STEP, trainable=False)
    graph.add_to_collection(GLOBAL_STEP, step)
    return step


def get_or_create_global_step(graph: Graph | None = None) -> Variable:
    """The graph's global step, made by ``create_global_step`` the first time."""
    return get_global_step(graph) or create_global_step(graph)
