"""A fused elementwise chain on the host as one compiled loop: Numba, the ``jit`` extra.

On the host a chain runs op by op into one buffer (minigraph.fusion): each op is a NumPy call
and a pass over memory, and NumPy's masks and selects take several (a batch-norm scale,
shift and Relu6 over [8, 80, 80, 96] float32: five passes, 14.8 ms on one core). Where Numba
is installed (and config.jit() allows), a float32 or float64 chain whose every op gives a
Python expression (``op_def.Elementwise.host``) runs instead as one loop that reads each
input once and writes the result once (that chain: 1.8 ms on one core, 1.2 on two).

Bits: the ops that give an expression are those whose every step is exactly rounded
(+ - * /, sqrt, comparisons and selects), each written as the NumPy kernel computes it, in
its order, rounding each op's result to the dtype: IEEE arithmetic has one answer, and
minigraph.jit compiles without fast-math or contraction. A NaN keeps its payload, but not
always its sign: LLVM takes a NaN's sign as unspecified and moves a negation through a
product (-x * c as x * -c) or drops abs under x * x. Transcendental functions (exp, tanh,
erf) have no expression: their NumPy and libm versions differ in the last bits. A chain
with one of them (an op_def.AroundUfunc) runs as two loops around NumPy's own call; a chain
with two stays NumPy's.

The loop runs over [rows, width] views: an input is the output's shape (C-contiguous), a
trailing block that repeats along the leading axes (a per-channel scale: width is its size),
one value per row (a layer norm's statistics, [n, h, w, 1]), or one value. Other layouts
(a broadcast along a middle axis, a strided view) keep the NumPy path. A chain's loop is
compiled once per process at its first large run (about 0.2 s, and Numba's import the first
time); rows go to the kernels' threads (Numba releases the GIL).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from . import config
from .jit import compile_source, wanted
from .kernel import KernelContext
from .op_def import AroundUfunc
from .registry import elementwise_forms

__all__ = ["run_chain", "run_op"]

# How the loop reads an input: the output's own buffer (the executor handed it over to be
# overwritten: read through ``out``, as a second name for it costs LLVM's vector loop, 20x
# slower), an array of the output's shape, a trailing block repeated along the leading axes
# (a per-channel scale), one value per row (a layer norm's mean), or one value.
_OUT, _FULL, _REPEATED, _PER_ROW, _ONE = "out", "full", "repeated", "per_row", "one"
# Rows of a piece for the threads: about this many bytes of output each.
_PIECE_BYTES = 1 << 20
# Chains without a repeated operand run over rows at least this long (any factoring of
# the shape gives the same elements; long rows let LLVM's vector loop run).
_MIN_WIDTH = 1024
_UNSET: Any = object()
# Each member's expression (or AroundUfunc) and operands.
Forms = tuple[tuple[str | AroundUfunc, tuple[int, ...]], ...]


def run_chain(ctx: KernelContext, members: Sequence[Any], inputs: Sequence[Any], out: Any) -> bool:
    """Run the chain ``members`` (fusion.Member) on host ``inputs`` into ``out`` as one
    compiled loop, its rows over the kernels' threads; False, with nothing written, where
    it cannot (Numba off or missing, another dtype, an op without an expression, an input
    of another layout)."""
    forms = _host_forms(ctx, members, out.dtype)
    if forms is None:
        return False
    layout = _layout(inputs, out)
    if layout is None:
        return False
    width, kinds = layout
    kernel, element_bytes = _kernel(forms, kinds, out.dtype.name)
    rows = out.size // width
    flat_out = out.reshape(rows, width)
    args = [  # (array, whether cut along with the output's rows)
        (x.reshape(rows, width), True) if kind == _FULL else (x.reshape(-1), kind == _PER_ROW)
        for x, kind in zip(inputs, kinds)
        if kind != _OUT
    ]
    step = max(1, _PIECE_BYTES // (width * element_bytes))

    def piece(p: int) -> None:
        part = slice(p * step, min(rows, (p + 1) * step))
        kernel(flat_out[part], *[a[part] if cut else a for a, cut in args])

    ctx.parallel_each(piece, -(-rows // step), 2 * out.nbytes)
    return True


class _Member(NamedTuple):
    """What _forms reads of a chain's member (fusion.Member has it too)."""

    op_type: str
    attrs: Any
    operands: tuple[int, ...]


def run_op(ctx: KernelContext, inputs: Sequence[Any], out: Any = None) -> Any | None:
    """The kernel's own op as a one-op chain (see run_chain), into ``out`` (or a new array
    shaped as the first input, made only when the loop will run): for ops whose NumPy
    kernel takes several passes (Relu's mask and product, ReluGrad's product with a cast
    mask), outside a chain (a gradient read by two ops). The array written, or None."""
    first = inputs[0]
    if not wanted(ctx.xp, first.size):
        return None
    members = ctx.memo.get("host_member")
    if members is None:
        members = ctx.memo["host_member"] = (
            _Member(ctx.op_type, ctx.attrs, tuple(range(len(inputs)))),
        )
    if _host_forms(ctx, members, first.dtype) is None:
        return None
    out = ctx.empty(first.shape, first.dtype) if out is None else out
    return out if run_chain(ctx, members, inputs, out) else None


def _host_forms(ctx: KernelContext, members: Sequence[Any], dtype: Any) -> Forms | None:
    """The chain's expressions where it may run as a compiled loop (config.jit() on, a
    float32/float64 dtype, every op with one), else None; kept in the step's memo."""
    if not config.jit() or dtype not in (np.float32, np.float64):
        return None
    forms = ctx.memo.get("host_forms", _UNSET)
    if forms is _UNSET:  # one assignment: runs of a plan may share its steps
        forms = ctx.memo["host_forms"] = _forms(members, dtype)
    return forms


def _forms(members: Sequence[Any], dtype: Any) -> Forms | None:
    """Each member's expression and operands, or None where one has none, or where two
    run around a ufunc (the loops would recompute the first one's operand twice)."""
    forms = elementwise_forms(members, "host", dtype)
    if forms is None or sum(isinstance(f, AroundUfunc) for f in forms) > 1:
        return None
    return tuple(zip(forms, [m.operands for m in members]))


def _layout(inputs: Sequence[Any], out: Any) -> tuple[int, tuple[str, ...]] | None:
    """The loop's row width and each input's kind, or None where an input fits none."""
    shape, width, kinds = out.shape, None, []
    for x in inputs:
        if x.dtype != out.dtype:
            return None
        if x.shape == shape and x.ctypes.data == out.ctypes.data and x.strides == out.strides:
            kinds.append(_OUT)  # the output's buffer (maybe another view object of it)
            continue
        if np.may_share_memory(x, out):  # partly: the loop could read what it wrote
            return None
        if x.shape == shape:
            if not x.flags.c_contiguous:
                return None
            kinds.append(_FULL)
            continue
        if x.size == 1:
            kinds.append(_ONE)
            continue
        dims = (1,) * (len(shape) - x.ndim) + x.shape
        if len(dims) != len(shape):
            return None
        lead = next(i for i, d in enumerate(dims) if d != 1)  # leading 1s: repeated over
        tail = next(i for i in range(len(dims), 0, -1) if dims[i - 1] != 1)  # trailing 1s
        if lead > 0 and dims[lead:] == shape[lead:]:
            kind, cut = _REPEATED, lead  # a channel's scale: rows of the trailing block
        elif tail < len(dims) and dims[:tail] == shape[:tail]:
            kind, cut = _PER_ROW, tail  # a layer norm's statistics: one value per row
        else:
            return None
        row = math.prod(shape[cut:])
        if width not in (None, row):
            return None
        width = row
        kinds.append(kind)
    if width is None:  # rows of whole trailing axes, at least _MIN_WIDTH long where they can
        width = 1
        for d in reversed(shape):
            if width >= _MIN_WIDTH:
                break
            width *= d
    return max(width, 1), tuple(kinds)


@functools.cache
def _kernel(forms: Forms, kinds: tuple[str, ...], dtype: str) -> tuple[Any, int]:
    """The chain's ``kernel(out, *inputs)``, out [rows, width], compiled by Numba, and the
    bytes it touches an output element (its temporaries' too). A chain with an
    AroundUfunc member runs as two loops around that ufunc: the first computes the ops
    before it and its ``before`` statements, keeping their values in temporaries; the
    second computes those ops again (a few operations: cheaper than keeping their result),
    then its ``after`` statements and the ops after it."""
    operand = {
        _OUT: "out[r, j]",
        _FULL: "x{}[r, j]",
        _REPEATED: "x{}[j]",
        _PER_ROW: "x{}[r]",
        _ONE: "x{}[0]",
    }
    indent = " " * 12
    lines: list[str] = []
    around: tuple[AroundUfunc, str, list[str]] | None = None  # the form, its operand, lines
    for form, operands in forms:
        args = ["v" if k < 0 else operand[kinds[k]].format(k) for k in operands]
        if isinstance(form, AroundUfunc):
            around, lines = (form, args[0], lines), []
        else:
            lines.append(f"{indent}v = {form.format(*args)}")
    params = "".join(f", x{k}" for k, kind in enumerate(kinds) if kind != _OUT)
    namespace = {"T": np.dtype(dtype).type, "math": math}
    title = f"fused chain: {dtype}"
    if around is None:
        source = _loop("chain", params, [*lines, f"{indent}out[r, j] = v"])
        (loop,) = compile_source(source, title, namespace, "chain")
        return loop, np.dtype(dtype).itemsize
    form, arg, before_lines = around
    kept = [f"k{i}" for i in range(form.kept)]
    through = [f"u{i}" for i in range(form.through)]
    params += "".join(f", {name}" for name in kept + through)
    *after, result = [line.format(arg) for line in form.after]
    first = [
        *before_lines,
        *[f"{indent}{line.format(arg)}" for line in form.before],
        *[f"{indent}{name}[r, j] = _{name}" for name in kept + through],
    ]
    second = [
        *before_lines,
        *[f"{indent}_{name} = {name}[r, j]" for name in kept + through],
        *[f"{indent}{line}" for line in after],
        f"{indent}v = T({result})",
        *lines,
        f"{indent}out[r, j] = v",
    ]
    source = _loop("first", params, first) + "\n\n" + _loop("second", params, second)
    first_loop, second_loop = compile_source(source, title, namespace, "first", "second")
    ufunc = getattr(np, form.ufunc)
    through_dtype = np.dtype(form.wide or dtype)

    def chain(out: Any, *inputs: Any) -> None:
        temporaries = [np.empty(out.shape, np.float64) for _ in kept]
        temporaries += [np.empty(out.shape, through_dtype) for _ in through]
        first_loop(out, *inputs, *temporaries)
        for values in temporaries[len(kept) :]:
            ufunc(values, out=values)  # NumPy's own, in place
        second_loop(out, *inputs, *temporaries)

    element_bytes = np.dtype(dtype).itemsize + 8 * len(kept) + through_dtype.itemsize * len(through)
    return chain, element_bytes


def _loop(name: str, params: str, body: list[str]) -> str:
    """The source of a loop over the elements of ``out`` [rows, width] running ``body``."""
    return "\n".join(
        [
            f"def {name}(out{params}):",
            "    rows, width = out.shape",
            "    for r in range(rows):",
            "        for j in range(width):",
            *body,
        ]
    )
