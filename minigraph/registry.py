"""The op and kernel registries: plain dicts, explicit registration, loud lookups."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import errors
from .op_def import Elementwise, OpDef, SharedInput, parse_arg, parse_attr

__all__ = [
    "OPS",
    "define_op",
    "define_internal_op",
    "register_kernel",
    "register_shared_kernel",
    "register_input_facts",
    "lookup_op",
    "lookup_kernel",
    "registered_ops",
    "register_gradient",
    "not_differentiable",
    "lookup_gradient",
]

OPS: dict[str, OpDef] = {}

DEVICE_TYPES = ("CPU", "GPU")


def define_op(
    name: str,
    *,
    inputs: Sequence[str] = (),
    outputs: Sequence[str] = (),
    attrs: Sequence[str] = (),
    shape_fn: Callable[..., Any],
    doc: str = "",
    host_inputs: Sequence[str] = (),
    host_outputs: Sequence[str] = (),
    is_stateful: bool = False,
    aliases_input: bool = False,
    aliased_input: int = 0,
    elementwise: Elementwise | None = None,
    outputs_are_state: bool = False,
) -> OpDef:
    """Declare an op once; the builder, class wrapper and docs come from this.

    ``host_inputs`` and ``host_outputs`` stay in host memory on every device (TensorFlow's
    HostMemory: shape-like int tensors that kernels read on the host);
    ``aliases_input`` says the kernel may return views of input ``aliased_input`` (0 unless
    given), so the executor treats them as one buffer when deciding what may be overwritten;
    ``elementwise`` says how elementwise fusion may run the op inside a chain, in place
    (see :class:`~minigraph.op_def.Elementwise`); ``outputs_are_state`` says its outputs
    are buffers the op keeps after the run (a variable's value), never to be overwritten.
    """
    if name in OPS:
        raise ValueError(f"op {name!r} is already defined")
    attr_defs = tuple(parse_attr(a) for a in attrs)
    type_attrs = [a.name for a in attr_defs if a.kind == "type"]
    type_lists = [a.name for a in attr_defs if a.kind == "list(type)"]
    op_def = OpDef(
        name=name,
        inputs=tuple(parse_arg(s, type_attrs, type_lists) for s in inputs),
        outputs=tuple(parse_arg(s, type_attrs, type_lists) for s in outputs),
        attrs=attr_defs,
        shape_fn=shape_fn,
        doc=doc,
        host_inputs=frozenset(host_inputs),
        host_outputs=frozenset(host_outputs),
        is_stateful=is_stateful,
        aliases_input=aliases_input,
        aliased_input=aliased_input,
        elementwise=elementwise,
        outputs_are_state=outputs_are_state,
    )
    attr_names = {a.name for a in attr_defs}
    for arg in op_def.inputs + op_def.outputs:
        for ref in (arg.type_attr, arg.number_attr, arg.type_list_attr):
            if ref is not None and ref not in attr_names:
                raise ValueError(f"op {name!r}: arg {arg.name!r} names undeclared attr {ref!r}")
    OPS[name] = op_def
    return op_def


def define_internal_op(
    name: str, *, inputs: Sequence[str], outputs: Sequence[str], attrs: Sequence[str], doc: str
) -> OpDef:
    """An op that only the graph optimizer makes (a fused or merged step): its steps carry
    their members' output specs, and no graph may hold one."""

    def shape_fn(c: Any, *specs: Any) -> Any:
        c.fail(f"{name} is made by the graph optimizer; a graph cannot hold one")

    return define_op(name, inputs=inputs, outputs=outputs, attrs=attrs, shape_fn=shape_fn, doc=doc)


def register_kernel(op: str, *devices: str) -> Callable[[Callable], Callable]:
    """Decorator: ``@register_kernel("Add", "CPU", "GPU")`` registers one kernel function.

    A kernel is ``fn(ctx, *inputs) -> output`` (or a sequence of outputs for an
    op with several), written against ``ctx.xp``. Registering twice raises. A kernel may
    carry ``fn.specialize(ctx, input_dims)``: given what shape inference knows of its
    inputs' dims, a cheaper callable of the inputs alone with the same results, or None;
    the executor binds it instead (the elementwise ops give their bare NumPy ufunc).
    """

    def deco(fn: Callable) -> Callable:
        op_def = lookup_op(op)
        for device in devices or ("CPU",):
            if device not in DEVICE_TYPES:
                raise ValueError(f"unknown device type {device!r}; expected one of {DEVICE_TYPES}")
            if device in op_def.kernels:
                raise ValueError(f"a {device} kernel for {op!r} is already registered")
            op_def.kernels[device] = fn
        return fn

    return deco


def register_shared_kernel(
    op: str, input: int, attrs: Sequence[str] = ()
) -> Callable[[Callable], Callable]:
    """Decorator: ``@register_shared_kernel("DynamicPartition", 1, ["num_partitions"])``
    registers the kernel that runs several steps of ``op`` reading one value at ``input``,
    with equal ``attrs``, as one step (see :class:`~minigraph.op_def.SharedInput`), on
    every device the op has kernels for."""

    def deco(fn: Callable) -> Callable:
        op_def = lookup_op(op)
        if op_def.shared is not None:
            raise ValueError(f"a shared-input kernel for {op!r} is already registered")
        op_def.shared = SharedInput(input, tuple(attrs), fn)
        return fn

    return deco


def register_input_facts(op: str) -> Callable[[Callable], Callable]:
    """Decorator: ``@register_input_facts("DynamicStitch")`` registers ``fn(step, producer)``,
    which the optimizer's input-facts pass calls on each plan step of ``op``: ``producer(slot)``
    is ``(step, output index)`` of the step that writes a value slot (None for a feed), and
    ``fn`` returns attrs (named with a leading ``_``) that tell the kernel what holds of its
    inputs by construction, or None."""

    def deco(fn: Callable) -> Callable:
        op_def = lookup_op(op)
        if op_def.input_facts is not None:
            raise ValueError(f"input facts for {op!r} are already registered")
        op_def.input_facts = fn
        return fn

    return deco


def lookup_op(name: str) -> OpDef:
    try:
        return OPS[name]
    except KeyError:
        raise errors.NotFoundError(f"Op type not registered '{name}'") from None


def elementwise_forms(members: Sequence[Any], kind: str, dtype: Any) -> list[str] | None:
    """Each fused chain member's ``kind`` expression ("cuda" or "host": op_def.Elementwise)
    for ``dtype``, in order; None where one has none."""
    forms = []
    for m in members:
        how = lookup_op(m.op_type).elementwise
        make = getattr(how, kind) if how is not None else None
        form = make(m.attrs, dtype) if make is not None else None
        if form is None:
            return None
        forms.append(form)
    return forms


def lookup_kernel(op: str, device: str, node_name: str = "") -> Callable:
    op_def = lookup_op(op)
    try:
        return op_def.kernels[device]
    except KeyError:
        have = ", ".join(sorted(op_def.kernels)) or "none"
        raise errors.NotFoundError(
            f"No {device} kernel registered for op {op}; devices with a kernel: {have}",
            node_name,
            op,
        ) from None


def registered_ops() -> dict[str, OpDef]:
    """A copy of the op registry: op name -> OpDef (see ``OpDef.kernel_devices``)."""
    return dict(OPS)


# Gradient functions by op type (TensorFlow's RegisterGradient): ``fn(op, *output_grads)``
# returns one gradient (an Output or None) per input. None as the value marks an op that
# has no gradient by design (TensorFlow's NotDifferentiable: Shape, ArgMax, comparisons):
# gradients stop there instead of failing.
GRADIENTS: dict[str, Callable[..., Any] | None] = {}


def register_gradient(op: str) -> Callable[[Callable], Callable]:
    """Decorator: ``@register_gradient("Mul")`` registers the gradient function of ``op``.

    ``fn(op, *grads)`` gets the forward :class:`~minigraph.graph.Operation` and one
    gradient per output (an Output; outputs nothing depends on get zeros when another
    output has a gradient), and returns one gradient per input, None where there is none.
    It builds its ops with the ordinary builders; ``mg.gradients`` calls it under the
    forward op's name scope and device. Registering twice raises.
    """

    def deco(fn: Callable) -> Callable:
        lookup_op(op)  # a gradient for an op nobody declared is a typo
        if op in GRADIENTS:
            raise ValueError(f"a gradient for {op!r} is already registered")
        GRADIENTS[op] = fn
        return fn

    return deco


def not_differentiable(*ops: str) -> None:
    """Declare that ``ops`` have no gradient by design: gradients stop at them."""
    for op in ops:
        lookup_op(op)
        if op in GRADIENTS:
            raise ValueError(f"a gradient for {op!r} is already registered")
        GRADIENTS[op] = None


def lookup_gradient(op: str) -> tuple[bool, Callable[..., Any] | None]:
    """``(registered, fn)``: whether ``op`` has a gradient entry, and its function (None
    for an op declared not differentiable)."""
    return op in GRADIENTS, GRADIENTS.get(op)
