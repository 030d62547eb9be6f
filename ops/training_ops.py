"""The training ops: one update of a resource variable and its slots by an optimizer's rule,
as TensorFlow's ResourceApply* ops (what ``tf.compat.v1.train``'s optimizers build).

Each op reads the variable (``var``) and its slot variables (momentum, Adam's ``m``/``v``...),
computes their new values with TensorFlow's CPU formula (core/kernels/training_ops.cc), term
for term and in its order of operations, so float results match TensorFlow bit for bit where
its kernel is plain IEEE arithmetic (+ - * / sqrt), and stores them. As for every variable
update here (ops/variable_ops.py), a value is never written in place: the new values are new
buffers, so a read made earlier in the run keeps what it read. The update of one op is
atomic: it holds the locks of every variable it updates, taken in one fixed order (by
identity) so that two ops updating overlapping variables cannot deadlock.

The scalar inputs (``lr``, ``momentum``, ...) are tensors of the variable's dtype, as
TensorFlow's: an optimizer casts its hyperparameters to it. Messages are TensorFlow's
kernel's ("var and grad do not have the same shape[2] [3]", "lr is not a scalar: [2]"), in
its order of checks; shapes known when the graph is built are checked then (its shape
functions). A dtype TensorFlow has no kernel for (integers) is refused at build time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from minigraph import dtypes, errors
from minigraph.dtypes import as_dtype
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops import training_jit
from minigraph.ops.common import NUMBER, shape_str
from minigraph.ops.variable_ops import VariableState, on_device, store, variable_of
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import TensorShape, merge, with_rank
from minigraph.wrappers import make_wrapper_class

BUILDERS = ()

# The dtypes TensorFlow registers these kernels for (TF_CALL_FLOAT_TYPES and complex; no
# bfloat16 in minigraph).
KERNEL_TYPES = dtypes.FLOAT_TYPES + dtypes.COMPLEX_TYPES


@dataclass(frozen=True)
class _Rule:
    """What one training op reads, checks and computes.

    ``slots``: the resource inputs after ``var``; ``tensors``: the other inputs, in
    TensorFlow's order (``grad`` names the gradient among them, the rest are scalars);
    ``checks``: TensorFlow's kernel's checks in its order (a scalar's name, or a slot's or
    the gradient's for "same shape as var"); ``update(xp, attrs, var, *slots, *tensors)``
    returns the new var and slots (None for one left as it is).
    """

    slots: tuple[str, ...]
    tensors: tuple[str, ...]
    grad: str
    checks: tuple[str, ...]
    update: Callable[..., tuple[Any, ...]]
    spaced: frozenset[str] = frozenset()  # scalars whose message reads "lr is not a scalar : "
    reported: tuple[tuple[str, str], ...] = ()  # a check that prints another slot's shape
    writes_out: bool = False  # update(..., out=buffers) writes each result into its buffer
    # compiled(ctx, flat arrays, tensors, outs): the update as a compiled loop into outs
    # (writes_out rules), or False where it cannot run
    compiled: Callable[..., bool] | None = None


# -- the formulas (TensorFlow's CPU functors, one Eigen expression at a time) ---------------


def _gradient_descent(xp: Any, attrs: dict, var: Any, alpha: Any, delta: Any) -> tuple:
    # var -= grad * lr()
    return (var - delta * alpha,)


def _momentum(xp: Any, attrs: dict, var: Any, accum: Any, lr: Any, grad: Any, momentum: Any):
    # accum = accum * momentum() + grad;
    # var -= grad * lr() + accum * momentum() * lr()   (nesterov)   |   var -= accum * lr()
    new_accum = accum * momentum
    new_accum += grad
    if attrs["use_nesterov"]:
        step = grad * lr
        step += new_accum * momentum * lr
    else:
        step = new_accum * lr
    return var - step, new_accum


def _keras_momentum(xp: Any, attrs: dict, var: Any, accum: Any, lr: Any, grad: Any, momentum: Any):
    # accum = accum * momentum() - grad * lr();
    # var += (accum * momentum() - grad * lr())   (nesterov)   |   var += accum
    new_accum = accum * momentum
    new_accum -= grad * lr
    if attrs["use_nesterov"]:
        step = new_accum * momentum
        step -= grad * lr
    else:
        step = new_accum
    return var + step, new_accum


def _adam(
    xp: Any,
    attrs: dict,
    var: Any,
    m: Any,
    v: Any,
    beta1_power: Any,
    beta2_power: Any,
    lr: Any,
    beta1: Any,
    beta2: Any,
    epsilon: Any,
    grad: Any,
    out: Sequence[Any] = (None, None, None),
) -> tuple:
    # m += (g - m) * (1 - beta1());  v += (g.square() - v) * (1 - beta2());
    # var -= ((g * (1 - beta1()) + beta1() * m) * alpha) / (v.sqrt() + epsilon())  (nesterov)
    # var -= (m * alpha) / (v.sqrt() + epsilon())
    alpha, c1, c2, epsilon, beta1 = _adam_scalars(
        xp, beta1_power, beta2_power, lr, beta1, beta2, epsilon
    )
    out_var, out_m, out_v = out
    new_m = xp.subtract(grad, m, out=out_m)
    new_m *= c1
    new_m += m
    new_v = xp.multiply(grad, grad, out=out_v)
    new_v -= v
    new_v *= c2
    new_v += v
    if attrs["use_nesterov"]:
        step = grad * c1
        step += beta1 * new_m
        step *= alpha
    else:
        step = new_m * alpha
    denom = xp.sqrt(new_v)
    denom += epsilon
    step /= denom
    return xp.subtract(var, step, out=out_var), new_m, new_v


def _adam_scalars(
    xp: Any, beta1_power: Any, beta2_power: Any, lr: Any, beta1: Any, beta2: Any, epsilon: Any
) -> tuple:
    """Adam's scalar terms, in T, once: alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power),
    1 - beta1, 1 - beta2, epsilon, beta1 (the order training_jit.adam takes them in)."""
    alpha = lr * xp.sqrt(1 - beta2_power) / (1 - beta1_power)
    return alpha, 1 - beta1, 1 - beta2, epsilon, beta1


def _adam_compiled(
    ctx: KernelContext, arrays: Sequence[Any], tensors: Sequence[Any], outs: Sequence[Any]
) -> bool:
    """_adam as one compiled loop (ops/training_jit.py), or False where it cannot run."""
    *scalars, grad = tensors
    terms = (*_adam_scalars(np, *scalars), grad)
    return training_jit.adam(ctx, ctx.attrs["use_nesterov"], arrays, terms, outs)


def _mean_square(grad: Any, ms: Any, rho: Any) -> Any:
    # ms += (grad.square() - ms) * (1 - rho())
    new_ms = grad * grad
    new_ms -= ms
    new_ms *= 1 - rho
    new_ms += ms
    return new_ms


def _rms_step(xp: Any, grad: Any, lr: Any, denom: Any, mom: Any, momentum: Any) -> Any:
    # mom = mom * momentum() + (grad * lr()) / denom.sqrt()
    xp.sqrt(denom, out=denom)
    new_mom = grad * lr
    new_mom /= denom
    new_mom += mom * momentum
    return new_mom


def _rms_prop(
    xp: Any,
    attrs: dict,
    var: Any,
    ms: Any,
    mom: Any,
    lr: Any,
    rho: Any,
    momentum: Any,
    epsilon: Any,
    grad: Any,
) -> tuple:
    # ...; mom = mom * momentum() + (grad * lr()) / ((ms + epsilon()).sqrt()); var -= mom
    new_ms = _mean_square(grad, ms, rho)
    new_mom = _rms_step(xp, grad, lr, new_ms + epsilon, mom, momentum)
    return var - new_mom, new_ms, new_mom


def _centered_rms_prop(
    xp: Any,
    attrs: dict,
    var: Any,
    mg: Any,
    ms: Any,
    mom: Any,
    lr: Any,
    rho: Any,
    momentum: Any,
    epsilon: Any,
    grad: Any,
) -> tuple:
    # ...; mg += (grad - mg) * (1 - rho()); denom = (ms - mg.square()) + epsilon(); ...
    new_ms = _mean_square(grad, ms, rho)
    new_mg = grad - mg
    new_mg *= 1 - rho
    new_mg += mg
    denom = new_ms - new_mg * new_mg
    denom += epsilon
    new_mom = _rms_step(xp, grad, lr, denom, mom, momentum)
    return var - new_mom, new_mg, new_ms, new_mom


def _accumulated(attrs: dict, accum: Any, grad: Any) -> Any:
    # if (update_slots) accum += grad.square()
    return accum + grad * grad if attrs["update_slots"] else accum


def _adagrad(xp: Any, attrs: dict, var: Any, accum: Any, lr: Any, grad: Any) -> tuple:
    # var -= grad * lr() * accum.rsqrt()
    new_accum = _accumulated(attrs, accum, grad)
    step = grad * lr
    step *= 1 / xp.sqrt(new_accum)
    return var - step, new_accum if attrs["update_slots"] else None


def _adagrad_v2(
    xp: Any, attrs: dict, var: Any, accum: Any, lr: Any, epsilon: Any, grad: Any
) -> tuple:
    # var -= grad * lr() / (accum.sqrt() + epsilon())
    new_accum = _accumulated(attrs, accum, grad)
    denom = xp.sqrt(new_accum)
    denom += epsilon
    step = grad * lr
    step /= denom
    return var - step, new_accum if attrs["update_slots"] else None


# -- shape function and kernel, shared by every op -----------------------------------------


def _handle_shape(spec: TensorSpec) -> TensorShape:
    return spec.handle_data[0] if spec.handle_data is not None else TensorShape(None)


def _make_shape_fn(rule: _Rule) -> Callable[..., tuple[()]]:
    """TensorFlow's shape function: the variables' shapes merged, each scalar of rank 0,
    the gradient merged with them; also the dtypes (TF has no kernel for integers and
    checks a variable's dtype only when it runs)."""
    names = ("var", *rule.slots)

    def shape_fn(c: InferenceContext, *specs: TensorSpec) -> tuple[()]:
        t = as_dtype(c.attrs["T"])
        if t not in KERNEL_TYPES:
            attrs = ", ".join(
                f"{k}={'DT_' + as_dtype(v).name.upper() if k == 'T' else str(v).lower()}"
                for k, v in sorted(c.attrs.items())
            )
            c.fail(
                f"No OpKernel was registered to support Op '{c.op_type}' used by "
                f"{{{{node {c.node_name}}}}} with these attrs: [{attrs}]; registered "
                f"kernels: T in [{', '.join(d.name for d in KERNEL_TYPES)}]"
            )
        handles = specs[: len(names)]
        for name, spec in zip(names, handles):
            if spec.handle_data is not None and spec.handle_data[1] != t:
                c.fail(
                    f"{name} is a variable of {spec.handle_data[1].name}, but T is {t.name}: "
                    f"cast the other inputs to the variable's dtype"
                )
        shape = _handle_shape(handles[0])
        for spec in handles[1:]:
            shape = merge(shape, _handle_shape(spec))
        for name, spec in zip(rule.tensors, specs[len(names) :]):
            if name == rule.grad:
                shape = merge(shape, spec.shape)
            else:
                with_rank(spec.shape, 0)
        return ()

    return shape_fn


@contextlib.contextmanager
def _locked(states: Sequence[VariableState]) -> Iterator[None]:
    """Hold the locks of ``states`` (each once) in one fixed order: by identity. (Plain
    acquire and release: an ExitStack cost 5 µs an update, a third of a small one's.)"""
    locks = sorted({id(s.lock): s.lock for s in states}.items())
    taken = []
    try:
        for _, lock in locks:
            lock.acquire()
            taken.append(lock)
        yield
    finally:
        for lock in reversed(taken):
            lock.release()


# On the host, a large update runs block by block (this many elements each), so that each
# block's dozen elementwise passes stay in the cache (784x256 float32 Adam: 1.56 -> 1.29 ms,
# the same bits), in few enough blocks that NumPy's per-call costs stay small (blocks of
# 1 << 14: 378 µs, 1 << 15: 336, 1 << 17: 660 (out of the cache), one thread, 2026-12-06).
# Two threads were slower at every block size (each ufunc call hands the GIL over).
_BLOCK = 1 << 15


def _updated(ctx: KernelContext, rule: _Rule, arrays: list[Any], tensors: Sequence[Any]) -> Any:
    """``rule.update`` of the variable and slot values ``arrays`` (one shape) with the
    other inputs ``tensors`` (the gradient of that shape, scalars): elementwise, so on the
    host it runs on blocks of the flattened arrays, into new buffers."""
    n = arrays[0].size
    if ctx.xp is not np or n <= _BLOCK:
        return rule.update(ctx.xp, ctx.attrs, *arrays, *tensors)
    flat = [a.reshape(-1) for a in arrays]
    # 0-d tensors as NumPy scalars: a block's scalar terms (Adam's alpha) then take 0.1 µs
    # an operation instead of a ufunc call's 0.7, in the same dtype and rounding
    flat_tensors = [t.reshape(-1) if t.ndim else t[()] for t in tensors]
    outs: list[Any] = []
    if rule.writes_out:  # every result changes, in the variable's dtype
        outs = [ctx.empty((n,), a.dtype) for a in arrays]
    if rule.compiled is None or not rule.compiled(ctx, flat, flat_tensors, outs):
        _update_in_blocks(ctx, rule, flat, flat_tensors, outs)
    return [None if out is None else out.reshape(arrays[0].shape) for out in outs]


def _update_in_blocks(
    ctx: KernelContext, rule: _Rule, flat: list[Any], flat_tensors: list[Any], outs: list[Any]
) -> None:
    """``rule.update`` block by block into ``outs`` (made here at the first block where the
    rule does not write out)."""
    n = flat[0].size
    for start in range(0, n, _BLOCK):
        part = slice(start, min(n, start + _BLOCK))
        pieces = [t[part] if t.ndim else t for t in flat_tensors]
        if rule.writes_out:
            into = [out[part] for out in outs]
            rule.update(np, ctx.attrs, *(a[part] for a in flat), *pieces, out=into)
            continue
        values = rule.update(np, ctx.attrs, *(a[part] for a in flat), *pieces)
        if not outs:  # which values change (None for a slot left as it is)
            outs[:] = [None if v is None else ctx.empty((n,), v.dtype) for v in values]
        for out, v in zip(outs, values):
            if out is not None:
                out[part] = v


def _make_kernel(rule: _Rule) -> Callable[..., tuple[()]]:
    names = ("var", *rule.slots)
    reported = dict(rule.reported)

    def kernel(ctx: KernelContext, *inputs: Any) -> tuple[()]:
        states = [variable_of(ctx, h, ctx.attrs["T"]) for h in inputs[: len(names)]]
        tensors = inputs[len(names) :]
        with _locked(states):
            values: dict[str, Any] = {}
            for name, state in zip(names, states):
                if state.value is None:
                    ctx.fail(
                        f"Attempting to use uninitialized variables: {state.name} (run its "
                        "initializer, or mg.global_variables_initializer(), first)",
                        errors.FailedPreconditionError,
                    )
                values[name] = on_device(ctx, state.value)
            values.update(zip(rule.tensors, tensors))
            var_shape = tuple(values["var"].shape)
            for name in rule.checks:
                x = values[name]
                if name in rule.slots or name == rule.grad:
                    if tuple(x.shape) != var_shape:
                        shown = values[reported.get(name, name)].shape
                        ctx.fail(
                            f"var and {name} do not have the same shape"
                            f"{shape_str(var_shape)} {shape_str(shown)}"
                        )
                elif x.ndim != 0:
                    sep = " : " if name in rule.spaced else ": "
                    ctx.fail(f"{name} is not a scalar{sep}{shape_str(x.shape)}")
            new = _updated(ctx, rule, [values[n] for n in names], tensors)
            for state, value in zip(states, new):
                if value is not None:
                    store(ctx, state, value, owned=True)
        return ()

    return kernel


def _define(name: str, rule: _Rule, extra_attrs: Sequence[str], doc: str) -> Any:
    """One training op: its declaration (TensorFlow's OpDef), shape function and kernel."""
    op_def = define_op(
        name,
        inputs=[f"{n}: resource" for n in ("var", *rule.slots)] + [f"{n}: T" for n in rule.tensors],
        attrs=[f"T: {NUMBER}", "use_locking: bool = False", *extra_attrs],
        shape_fn=_make_shape_fn(rule),
        is_stateful=True,
        doc=doc,
    )
    register_kernel(name, "CPU", "GPU")(_make_kernel(rule))
    return make_wrapper_class(op_def)


_NESTEROV = "use_nesterov: bool = False"
_UPDATE_SLOTS = "update_slots: bool = True"

ResourceApplyGradientDescent = _define(
    "ResourceApplyGradientDescent",
    _Rule((), ("alpha", "delta"), "delta", ("alpha", "delta"), _gradient_descent),
    (),
    "``var -= delta * alpha``: a step of gradient descent.",
)

_MOMENTUM_CHECKS = ("lr", "accum", "grad", "momentum")
ResourceApplyMomentum = _define(
    "ResourceApplyMomentum",
    _Rule(("accum",), ("lr", "grad", "momentum"), "grad", _MOMENTUM_CHECKS, _momentum),
    (_NESTEROV,),
    """
Momentum (``tf.compat.v1.train.MomentumOptimizer``): ``accum = accum * momentum + grad``,
then ``var -= accum * lr``; with ``use_nesterov``,
``var -= grad * lr + accum * momentum * lr``.
""",
)

ResourceApplyKerasMomentum = _define(
    "ResourceApplyKerasMomentum",
    _Rule(("accum",), ("lr", "grad", "momentum"), "grad", _MOMENTUM_CHECKS, _keras_momentum),
    (_NESTEROV,),
    """
Momentum as Keras' SGD keeps it: ``accum = accum * momentum - grad * lr``, then
``var += accum``; with ``use_nesterov``, ``var += accum * momentum - grad * lr``.
""",
)

_ADAM_SCALARS = ("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon")
ResourceApplyAdam = _define(
    "ResourceApplyAdam",
    _Rule(
        ("m", "v"),
        (*_ADAM_SCALARS, "grad"),
        "grad",
        (*_ADAM_SCALARS, "m", "v", "grad"),
        _adam,
        spaced=frozenset({"lr"}),
        writes_out=True,
        compiled=_adam_compiled,
    ),
    (_NESTEROV,),
    """
Adam: ``lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)``,
``m += (grad - m) * (1 - beta1)``, ``v += (grad * grad - v) * (1 - beta2)``,
``var -= m * lr_t / (sqrt(v) + epsilon)`` (epsilon outside the square root, as
TensorFlow's kernel); with ``use_nesterov`` the numerator is
``(grad * (1 - beta1) + beta1 * m) * lr_t``. ``beta1_power`` and ``beta2_power`` are
``beta1**t`` and ``beta2**t`` at step ``t``, which the optimizer keeps.
""",
)

_RMS_SCALARS = ("lr", "rho", "momentum", "epsilon")
ResourceApplyRMSProp = _define(
    "ResourceApplyRMSProp",
    _Rule(
        ("ms", "mom"),
        (*_RMS_SCALARS, "grad"),
        "grad",
        (*_RMS_SCALARS, "ms", "mom", "grad"),
        _rms_prop,
        spaced=frozenset({"lr"}),
    ),
    (),
    """
RMSProp: ``ms += (grad * grad - ms) * (1 - rho)``,
``mom = mom * momentum + grad * lr / sqrt(ms + epsilon)``, ``var -= mom``.
""",
)

ResourceApplyCenteredRMSProp = _define(
    "ResourceApplyCenteredRMSProp",
    _Rule(
        ("mg", "ms", "mom"),
        (*_RMS_SCALARS, "grad"),
        "grad",
        (*_RMS_SCALARS, "mg", "ms", "mom", "grad"),
        _centered_rms_prop,
        spaced=frozenset({"lr"}),
        reported=(("mg", "ms"),),  # TF's kernel prints ms's shape in the mg message
    ),
    (),
    """
Centered RMSProp: as ResourceApplyRMSProp, with the mean gradient
``mg += (grad - mg) * (1 - rho)`` and ``sqrt(ms - mg * mg + epsilon)`` as the denominator.
""",
)

_ADAGRAD_CHECKS = ("lr", "accum", "grad")
ResourceApplyAdagrad = _define(
    "ResourceApplyAdagrad",
    _Rule(("accum",), ("lr", "grad"), "grad", _ADAGRAD_CHECKS, _adagrad),
    (_UPDATE_SLOTS,),
    """
Adagrad: ``accum += grad * grad`` (unless ``update_slots`` is false), then
``var -= grad * lr / sqrt(accum)``.
""",
)

ResourceApplyAdagradV2 = _define(
    "ResourceApplyAdagradV2",
    _Rule(
        ("accum",),
        ("lr", "epsilon", "grad"),
        "grad",
        ("lr", "epsilon", "accum", "grad"),
        _adagrad_v2,
    ),
    (_UPDATE_SLOTS,),
    """
Adagrad with epsilon: ``accum += grad * grad`` (unless ``update_slots`` is false), then
``var -= grad * lr / (sqrt(accum) + epsilon)``.
""",
)


__all__ = [
    "ResourceApplyGradientDescent",
    "ResourceApplyMomentum",
    "ResourceApplyKerasMomentum",
    "ResourceApplyAdam",
    "ResourceApplyRMSProp",
    "ResourceApplyCenteredRMSProp",
    "ResourceApplyAdagrad",
    "ResourceApplyAdagradV2",
]
