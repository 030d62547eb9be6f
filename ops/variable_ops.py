"""Resource variables: VarHandleOp, ReadVariableOp, AssignVariableOp, AssignAdd/Sub and
VarIsInitializedOp, as TensorFlow 2's (what ``tf.Variable`` builds in graph mode).

A variable's value lives in the Session that runs the graph (``ctx.resources``, see
minigraph/resources.py), found by its VarHandleOp's ``shared_name`` (the node's name when
empty): two Sessions of one graph have two values, and a new Session starts uninitialised.
The handle that flows through the graph is a host object (dtype ``resource``) that names
the :class:`VariableState`.

A stored value is never written in place: an assign stores a new buffer (the assigned
tensor itself when no other op reads it, else a copy), so a value read earlier in a run
keeps its contents, and ReadVariableOp's output is pinned by the plan as a Const's is
(``outputs_are_state``); on the host it is read-only too, so a fetch copies it.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from minigraph import errors
from minigraph.devices import is_cupy
from minigraph.dtypes import as_dtype
from minigraph.graph import Operation, Output
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.registry import define_op, register_gradient, register_kernel
from minigraph.shapes import ShapeError, TensorShape, as_shape, merge
from minigraph.transfer import to_device, to_host
from minigraph.wrappers import make_wrapper_class

BUILDERS = ()
CONTAINER = "localhost"  # TensorFlow's default container, named in its messages


class VariableState:
    """One variable's value in one Session: None until it is first assigned."""

    __slots__ = ("name", "dtype", "shape", "value", "lock")

    def __init__(self, name: str, dtype: np.dtype, shape: TensorShape) -> None:
        self.name = name
        self.dtype = dtype
        self.shape = shape  # as declared: an assigned value must be compatible
        self.value: Any = None
        self.lock = threading.Lock()  # serialises read-modify-write updates

    def __repr__(self) -> str:
        return f"<variable {self.name!r} {self.dtype} {self.shape}>"


def variable_of(ctx: KernelContext, handle: Any, dtype: Any) -> VariableState:
    """The variable a handle input refers to, checked to hold ``dtype``."""
    var = handle.item() if isinstance(handle, np.ndarray) else handle
    if not isinstance(var, VariableState):
        ctx.fail(f"expected a variable's handle, got {type(var).__name__}")
    if np.dtype(as_dtype(dtype).np) != var.dtype:
        ctx.fail(
            f"Trying to access variable {var.name} with dtype {as_dtype(dtype).name}; "
            f"it holds {as_dtype(var.dtype).name}"
        )
    return var


def current_value(ctx: KernelContext, var: VariableState) -> Any:
    """The variable's value on this kernel's device; FailedPreconditionError when it has
    none yet."""
    value = var.value
    if value is None:
        ctx.fail(
            f"Could not find variable {var.name}. This could mean that the variable has "
            f"been deleted. In TF1, it can also mean the variable is uninitialized "
            f"(run its initializer, or mg.global_variables_initializer(), first). Debug "
            f"info: container={CONTAINER}",
            errors.FailedPreconditionError,
        )
    return on_device(ctx, value)


def on_device(ctx: KernelContext, value: Any) -> Any:
    """``value`` in this kernel's memory: the stored array when it is there already."""
    if ctx.xp is np:
        return to_host(value)
    if is_cupy(ctx.xp) and isinstance(value, np.ndarray):
        return to_device(ctx.xp, value)
    return value


def store(ctx: KernelContext, var: VariableState, value: Any, owned: bool) -> None:
    """Make ``value`` the variable's value: as it is when this kernel owns the buffer
    (``owned``: no other op reads it), else a copy; read-only on the host."""
    if var.shape.dims is not None and tuple(value.shape) != tuple(var.shape.dims):
        try:
            merge(var.shape, TensorShape(list(value.shape)))
        except ShapeError:
            ctx.fail(
                f"Trying to assign to variable {var.name} with tensor with wrong shape. "
                f"Expected {var.shape} got {list(value.shape)}"
            )
    value = ctx.xp.asarray(value)  # a 0-d result of NumPy arithmetic is a scalar
    stored = value if owned else ctx.xp.array(value, copy=True)
    if isinstance(stored, np.ndarray):
        stored.flags.writeable = False
    var.value = stored


# -- VarHandleOp ----------------------------------------------------------------------------


def _var_handle_shape(c: InferenceContext) -> TensorSpec:
    return TensorSpec(
        TensorShape([]),
        as_dtype("resource"),
        handle_data=(as_shape(c.attrs["shape"]), as_dtype(c.attrs["dtype"])),
    )


VAR_HANDLE_OP = define_op(
    "VarHandleOp",
    outputs=["resource: resource"],
    attrs=[
        'container: string = ""',
        'shared_name: string = ""',
        'debug_name: string = ""',
        "dtype: type",
        "shape: shape",
        "allowed_devices: list(string) = []",
    ],
    shape_fn=_var_handle_shape,
    is_stateful=True,
    doc="""
A handle to the variable named ``shared_name`` (the node's name when empty) in this
Session, made on first use with no value; ``dtype`` and ``shape`` are what it may hold.
``mg.Variable`` builds one; an assign gives it its value.
""",
)


@register_kernel("VarHandleOp", "CPU", "GPU")
def _var_handle_kernel(ctx: KernelContext) -> Any:
    handle = ctx.memo.get("handle")  # the same variable for every run of this step
    if handle is not None:
        return handle
    if ctx.resources is None:
        ctx.fail(
            "variables live in a Session: this executor keeps none (a Dask worker "
            "cannot hold a variable; run graphs with variables in a local Session)",
            errors.UnimplementedError,
        )
    name = ctx.attrs["shared_name"] or ctx.node_name
    dtype = np.dtype(as_dtype(ctx.attrs["dtype"]).np)
    shape = as_shape(ctx.attrs["shape"])
    container = ctx.attrs["container"] or CONTAINER
    var = ctx.resources.lookup_or_create(container, name, lambda: VariableState(name, dtype, shape))
    if var.dtype != dtype:
        ctx.fail(
            f"Trying to access resource {name} located in container {container} with "
            f"dtype {as_dtype(dtype).name}; it was created with {as_dtype(var.dtype).name}"
        )
    handle = np.empty((), object)
    handle[()] = var
    ctx.memo["handle"] = handle
    return handle


VarHandleOp = make_wrapper_class(VAR_HANDLE_OP)


# -- ReadVariableOp ------------------------------------------------------------------------


def _read_shape(c: InferenceContext, handle: TensorSpec) -> TensorShape:
    data = handle.handle_data
    if data is None:
        return TensorShape(None)
    shape, dtype = data
    if dtype != as_dtype(c.attrs["dtype"]):
        c.fail(f"Trying to read a variable of {dtype.name} as {as_dtype(c.attrs['dtype']).name}")
    return shape


READ_VARIABLE_OP = define_op(
    "ReadVariableOp",
    inputs=["resource: resource"],
    outputs=["value: dtype"],
    attrs=["dtype: type"],
    shape_fn=_read_shape,
    is_stateful=True,  # its value changes between runs: never folded or merged
    outputs_are_state=True,
    doc="""
The variable's current value (FailedPreconditionError before it has one). What it
returns is the variable's own buffer: no op writes into it, and a later assign leaves it
as it was.
""",
)


@register_kernel("ReadVariableOp", "CPU", "GPU")
def _read_variable_kernel(ctx: KernelContext, handle: Any) -> Any:
    return current_value(ctx, variable_of(ctx, handle, ctx.attrs["dtype"]))


ReadVariableOp = make_wrapper_class(READ_VARIABLE_OP)


@register_gradient("ReadVariableOp")
def _read_variable_grad(op: Operation, grad: Output) -> list[Any]:
    """The gradient of a read is the gradient of the variable (its handle), as in TF."""
    return [grad]


# -- AssignVariableOp, AssignAddVariableOp, AssignSubVariableOp ------------------------------


def _assign_shape(c: InferenceContext, handle: TensorSpec, value: TensorSpec) -> tuple[()]:
    if handle.handle_data is not None:
        shape, dtype = handle.handle_data
        if dtype != value.dtype:
            c.fail(f"Trying to assign {value.dtype.name} to a variable of {dtype.name}")
        try:
            merge(shape, value.shape)
        except ShapeError:
            c.fail(
                f"Trying to assign to variable with tensor with wrong shape. Expected "
                f"{shape} got {value.shape}"
            )
    return ()


ASSIGN_VARIABLE_OP = define_op(
    "AssignVariableOp",
    inputs=["resource: resource", "value: dtype"],
    attrs=["dtype: type", "validate_shape: bool = False"],
    shape_fn=_assign_shape,
    is_stateful=True,
    doc="""
Gives the variable the value ``value``, which must have its dtype and a shape compatible
with the one it was declared with. Readers that ran before keep what they read.
""",
)


@register_kernel("AssignVariableOp", "CPU", "GPU")
def _assign_variable_kernel(ctx: KernelContext, handle: Any, value: Any) -> tuple[()]:
    var = variable_of(ctx, handle, ctx.attrs["dtype"])
    store(ctx, var, value, owned=1 in ctx.forwardable)
    return ()


AssignVariableOp = make_wrapper_class(ASSIGN_VARIABLE_OP)


def _define_update(name: str, ufunc: str, verb: str) -> Any:
    """AssignAddVariableOp / AssignSubVariableOp: ``var = var <op> value``, atomically."""
    op_def = define_op(
        name,
        inputs=["resource: resource", "value: dtype"],
        attrs=["dtype: type"],
        shape_fn=_assign_shape,
        is_stateful=True,
        doc=f"{verb} ``value`` to the variable's value in place of it (one update at a time).",
    )

    def kernel(ctx: KernelContext, handle: Any, value: Any) -> tuple[()]:
        var = variable_of(ctx, handle, ctx.attrs["dtype"])
        with var.lock:
            old = current_value(ctx, var)
            if old.shape != value.shape:
                ctx.fail(
                    f"Cannot update variable with shape {list(old.shape)} using a Tensor "
                    f"with shape {list(value.shape)}, shapes must be equal."
                )
            store(ctx, var, getattr(ctx.xp, ufunc)(old, value), owned=True)
        return ()

    register_kernel(name, "CPU", "GPU")(kernel)
    return make_wrapper_class(op_def)


AssignAddVariableOp = _define_update("AssignAddVariableOp", "add", "Adds")
AssignSubVariableOp = _define_update("AssignSubVariableOp", "subtract", "Subtracts")


# -- VarIsInitializedOp ----------------------------------------------------------------------


VAR_IS_INITIALIZED_OP = define_op(
    "VarIsInitializedOp",
    inputs=["resource: resource"],
    outputs=["is_initialized: bool"],
    shape_fn=lambda c, handle: TensorShape([]),
    host_outputs=["is_initialized"],
    is_stateful=True,
    doc="Whether the variable has a value in this Session.",
)


@register_kernel("VarIsInitializedOp", "CPU", "GPU")
def _var_is_initialized_kernel(ctx: KernelContext, handle: Any) -> Any:
    var = handle.item()
    return np.array(isinstance(var, VariableState) and var.value is not None)


VarIsInitializedOp = make_wrapper_class(VAR_IS_INITIALIZED_OP)


__all__ = [
    "VarHandleOp",
    "ReadVariableOp",
    "AssignVariableOp",
    "AssignAddVariableOp",
    "AssignSubVariableOp",
    "VarIsInitializedOp",
    "VariableState",
]
