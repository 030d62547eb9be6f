"""Elementwise fusion: a chain of elementwise ops becomes one step that writes one buffer.

A chain is a run of steps whose op declares how to run in place (``OpDef.elementwise``:
Add, Mul, Sqrt, Sigmoid, BiasAdd, Relu...), on one device, where each step reads the one
before it and nothing else reads (or fetches) the values in between. The chain becomes one
``_FusedElementwise`` step, named after its last node, whose kernel

- works out the result's shape from the inputs' shapes (once per set of shapes), and makes
  one output buffer (or takes over an input of the first op that the executor lets it
  overwrite);
- runs each op into that buffer in place (``np.add(acc, y, out=acc)``), so no intermediate
  is allocated and the executor pays one step instead of one per op;
- on the CPU, runs on [rows, run] views when an operand repeats a short block of the
  output's trailing axes (a per-channel scale or bias), that operand tiled to the run, so
  NumPy's inner loop is not called once per repeat (when every op pairs elements as NumPy
  broadcasting does: BiasAdd in NHWC, not in NCHW);
- on a GPU, runs the whole chain as one generated CUDA kernel where every op gives a C
  expression for it (minigraph.fusion_cuda), else op by op as on the host;
- on the CPU, with Numba installed, runs a large float chain of exactly rounded ops as one
  compiled loop (minigraph.fusion_jit), else op by op as follows;
- on the CPU, walks large outputs of a real type in cache-sized blocks of rows, both
  cores at once, so that the chain reads and writes main memory once instead of once per
  op. Each block starts a multiple of _BLOCK_ALIGN elements into the output, so NumPy's
  loops take for each element the path (vector body, scalar remainder, alignment
  prologue) they take in one call over the whole array: an inexact function (exp, tanh)
  or maximum's choice between signed zeros gives the same bits in blocks. (Until
  2026-12-05 only chains of exactly rounded ops ran in blocks: a swish over 38 MB took
  50 ms in memory-bound passes, 16 in blocks.)

Results are bitwise those of the unfused steps: each element goes through the same
functions in the same order. When an op would refuse its inputs' shapes, an op after the
first would broadcast the value to a larger shape, or the output would be too large, the
kernel runs the original kernels one by one instead, so the error is the one the unfused
plan raises, naming the same node. (NumPy's floating-point warnings are off in every
run: see LocalExecutor.run.)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from . import errors
from .devices import is_cupy
from .fusion_cuda import chain_kernel
from .fusion_jit import run_chain
from .kernel import REUSE_MIN_SIZE, UNPAID_VIEW_SIZE, KernelContext
from .registry import define_internal_op, lookup_kernel, lookup_op, register_kernel
from .runs import may_widen, widened

__all__ = ["FUSED_OP", "fuse_elementwise"]

FUSED_OP = "_FusedElementwise"
ACC = -1  # an operand that is the chain's running value

# Outputs at least this large are computed block by block ...
_BLOCK_MIN_BYTES = 1 << 22
# ... of about this many bytes of output, so a block's operands stay in the L2 cache, ...
_BLOCK_BYTES = 1 << 19
# ... and a multiple of this many elements from the output's start: NumPy's loops choose
# between their vector body, a scalar remainder and an alignment prologue by an element's
# position, alignment and the length left, so every element of a block takes the path it
# takes in one call over the whole array (4 KB apart for float32), and gets the same bits
# from an inexact function (exp, tanh...) or from maximum's choice between signed zeros.
_BLOCK_ALIGN = 1 << 10
Shape = tuple[int, ...]
_UNKNOWN: Any = object()
_SHAPES_KEPT = 64  # result shapes remembered per step (batch sizes vary)
# Host outputs smaller than this go straight into a new array: as in the unfused ufunc
# kernels, a buffer to reuse would save less than looking for one costs (an LSTM gate's
# sigmoid and product at batch 64: 8.3 -> 6.5 µs).
_SMALL_SIZE = REUSE_MIN_SIZE


class Member(NamedTuple):
    """One op of a fused chain: what its kernel needs, and where its operands come from
    (an index into the fused step's inputs, or ACC for the value so far)."""

    op_type: str
    node_name: str
    attrs: dict[str, Any]
    operands: tuple[int, ...]


class _Op(NamedTuple):
    """A member, compiled: ``fn(values[a], values[b], out=out)`` (b None: one operand),
    where ``values`` is the step's inputs followed by the running value."""

    fn: Callable[..., Any]
    a: int
    b: int | None
    shape: Callable[..., Shape | None] | None  # None: broadcasting
    attrs: Mapping[str, Any]
    broadcasts: bool  # pairs elements as NumPy broadcasting does: may run on reshaped views


define_internal_op(
    FUSED_OP,
    inputs=["inputs: N * T"],
    outputs=["output: T"],
    attrs=["N: int >= 1", "T: type"],
    doc="Internal: a chain of elementwise ops run as one step (see minigraph.fusion).",
)


class _Compiled(NamedTuple):
    """A fused step's program, compiled at its first run (see _compiled)."""

    program: list[_Op]
    calls: list[tuple[Any, int, int | None]]  # (fn, a, b) of each op, for _run
    widens: bool  # may run on [rows, run] views (runs.widened)
    in_blocks: bool  # may run block by block
    reusable: tuple[int, ...]  # inputs the first op may overwrite (see _output_buffer)
    shapes: dict[tuple[Shape, ...], Shape | None]  # input shapes -> result shape
    # Input shapes -> result shape, where the result is a small host array that needs no
    # check: such a call (a loop body's, at batch 1) makes it and runs the ops, no more.
    small: dict[tuple[Shape, ...], Shape]
    device_kernel: Any  # CuPy: the chain as one generated kernel (fusion_cuda), or None


@register_kernel(FUSED_OP, "CPU", "GPU")
def _fused_kernel(ctx: KernelContext, *inputs: Any) -> Any:
    compiled = ctx.memo.get("program")
    if compiled is None:  # one assignment: runs of a plan may share its steps across threads
        compiled = ctx.memo["program"] = _compiled(ctx, len(inputs))
    key = tuple([x.shape for x in inputs])
    shape = compiled.small.get(key)
    if shape is not None:  # the hot path: a loop body's step, every iteration
        out = np.empty(shape, inputs[0].dtype)
        _run(compiled.calls, inputs, out)
        return out
    shapes = compiled.shapes
    shape = shapes.get(key, _UNKNOWN)
    if shape is _UNKNOWN:
        if len(shapes) >= _SHAPES_KEPT:
            shapes.clear()
        shape = shapes[key] = _result_shape(compiled.program, key)
    if shape is None:  # the unfused kernels say which op and what is wrong
        return _unfused(ctx, inputs)
    dtype = inputs[0].dtype
    size = math.prod(shape)
    if size >= UNPAID_VIEW_SIZE or shape not in key:
        try:  # an input may be an unpaid broadcast view, or the chain broadcasts up
            ctx.check_size(shape, dtype)
        except errors.ResourceExhaustedError:  # named as the unfused op that grows it
            return _unfused(ctx, inputs)
    if compiled.device_kernel is not None:  # one launch, one pass over memory
        out = _output_buffer(ctx, inputs, shape, dtype, compiled.reusable)
        compiled.device_kernel(*inputs, out)
        return out
    if size < _SMALL_SIZE and ctx.xp is np:  # nothing to reuse or cut in blocks
        out = np.empty(shape, dtype)
        if compiled.widens and may_widen([x.size for x in inputs], size):
            wide_inputs, wide_out = widened(inputs, out)
            if wide_out is not out:
                _run(compiled.calls, wide_inputs, wide_out)
                return out
        if shape in key and len(compiled.small) < _SHAPES_KEPT:  # no check, no widening
            compiled.small[key] = shape
        _run(compiled.calls, inputs, out)
        return out
    result = out = _output_buffer(ctx, inputs, shape, dtype, compiled.reusable)
    if ctx.xp is np and run_chain(ctx, ctx.attrs["members"], inputs, out):
        return result  # one compiled loop (minigraph.fusion_jit)
    if compiled.widens:
        inputs, out = widened(inputs, out)
    # Blocks only on the host (a GPU queues its kernels: blocks would not help).
    if not compiled.in_blocks or out.nbytes < _BLOCK_MIN_BYTES or dtype.kind not in "biuf":
        _run(compiled.calls, inputs, out)
        return result
    n = out.shape[0]
    rows = _block_rows(n, out.size // n, out.itemsize)

    def block(b: int) -> None:
        part = slice(b * rows, min((b + 1) * rows, n))
        cut = [x[part] if x.ndim == out.ndim and x.shape[0] == n else x for x in inputs]
        _run(compiled.calls, cut, out[part])

    ctx.parallel_each(block, -(-n // rows), out.nbytes)
    return result


def _block_rows(n: int, row_size: int, itemsize: int) -> int:
    """Rows of a block: about _BLOCK_BYTES, a multiple of _BLOCK_ALIGN elements."""
    step = _BLOCK_ALIGN // math.gcd(_BLOCK_ALIGN, row_size)
    rows = _BLOCK_BYTES // max(row_size * itemsize, 1) // step * step
    return min(n, max(rows, step))


def _compiled(ctx: KernelContext, num_inputs: int) -> _Compiled:
    members = ctx.attrs["members"]
    program = _compile(members, ctx.xp, num_inputs)
    host = ctx.xp is np
    reads = [k for m in members for k in m.operands]
    return _Compiled(
        program,
        [(op.fn, op.a, op.b) for op in program],
        widens=host and all(op.broadcasts for op in program),
        in_blocks=host,
        reusable=tuple(k for k in members[0].operands if k != ACC and reads.count(k) == 1),
        shapes={},
        small={},
        device_kernel=(
            chain_kernel(members, ctx.attrs["T"].np, num_inputs) if is_cupy(ctx.xp) else None
        ),
    )


def _compile(members: Sequence[Member], xp: Any, num_inputs: int) -> list[_Op]:
    program = []
    for m in members:
        how = lookup_op(m.op_type).elementwise
        assert how is not None, m.op_type  # the pass fuses only such ops
        a, *b = [num_inputs if k == ACC else k for k in m.operands]
        fn = how.bind(xp, m.attrs)
        broadcasts = how.shape is None or (how.broadcasts is not None and how.broadcasts(m.attrs))
        program.append(_Op(fn, a, b[0] if b else None, how.shape, m.attrs, broadcasts))
    return program


def _result_shape(program: Sequence[_Op], shapes: tuple[Shape, ...]) -> Shape | None:
    """The chain's result shape for inputs of these shapes; None when an op would refuse
    them or an op after the first would broadcast the running value to a larger shape."""
    values: list[Shape | None] = [*shapes, None]
    for op in program:
        args: list[Any] = [values[op.a]] if op.b is None else [values[op.a], values[op.b]]
        if op.shape is not None:
            result = op.shape(op.attrs, *args)
        else:
            try:
                result = np.broadcast_shapes(*args)
            except ValueError:
                return None
        if result is None or (values[-1] is not None and result != values[-1]):
            return None
        values[-1] = result
    return values[-1]


def _output_buffer(
    ctx: KernelContext, inputs: Sequence[Any], shape: Any, dtype: Any, reusable: tuple[int, ...]
) -> Any:
    """An input the first op may overwrite (one of ``reusable``: read by it alone, and
    handed over by the executor), else a new array (its size is checked above when
    nothing paid for it)."""
    out = ctx.forwarded(inputs, shape, dtype, among=reusable) if reusable else None
    return out if out is not None else ctx.empty(shape, dtype)


def _run(calls: Sequence[tuple[Any, int, int | None]], inputs: Sequence[Any], out: Any) -> None:
    """Every op of the chain, ``(fn, a, b)`` as in _Op, into ``out``, in order."""
    values = [*inputs, out]
    for fn, a, b in calls:
        if b is None:
            fn(values[a], out=out)
        else:
            fn(values[a], values[b], out=out)


def _unfused(ctx: KernelContext, inputs: Sequence[Any]) -> Any:
    """The chain's original kernels, one after another: the unfused plan's result or error."""
    contexts = ctx.memo.get("contexts")
    device_type = ctx.device.partition(":")[0]
    if contexts is None:
        contexts = ctx.memo["contexts"] = [
            (
                lookup_kernel(m.op_type, device_type, m.node_name),
                ctx.for_member(m.attrs, m.node_name, m.op_type),
            )
            for m in ctx.attrs["members"]
        ]
    acc = None
    for m, (kernel, member_ctx) in zip(ctx.attrs["members"], contexts):
        acc = kernel(member_ctx, *[acc if k == ACC else inputs[k] for k in m.operands])
    return acc


# -- The optimizer pass ----------------------------------------------------------------------


def fuse_elementwise(
    protos: list[Any], keep: frozenset[int], places: Mapping[str, Any] | None = None
) -> tuple[list[Any], int]:
    """Plan steps with each chain of two or more elementwise steps made one fused step, and how
    many steps were fused away. A chain grows through a value that only its next op reads
    and that is not fetched, on one device and in one of ``places`` (node name -> where a
    distributed executor runs it); the fused step takes the place (and the name) of the
    chain's last op."""
    places = places or {}
    readers: dict[int, set[int]] = {}
    for k, p in enumerate(protos):
        for s in p.inputs:
            readers.setdefault(s, set()).add(k)
    chain_of: dict[int, list[int]] = {}  # a chain's running value (slot) -> its steps
    chains: list[list[int]] = []
    for k, p in enumerate(protos):
        if not _fusable(p):
            continue
        joined = next(
            (
                s
                for s in dict.fromkeys(p.inputs)
                if s in chain_of
                and readers[s] == {k}
                and s not in keep
                and protos[chain_of[s][0]].device == p.device
                and places.get(protos[chain_of[s][0]].name) == places.get(p.name)
                and not _grows(protos[chain_of[s][-1]].specs[0].shape, p.specs[0].shape)
            ),
            None,
        )
        chain = chain_of.pop(joined) if joined is not None else None
        if chain is None:
            chain = [k]
            chains.append(chain)
        else:
            chain.append(k)
        chain_of[p.outputs[0]] = chain
    fused_at = {c[-1]: c for c in chains if len(c) > 1}
    dropped = {k for c in fused_at.values() for k in c[:-1]}
    out = []
    for k, p in enumerate(protos):
        if k in fused_at:
            out.append(_fused_proto([protos[j] for j in fused_at[k]]))
        elif k not in dropped:
            out.append(p)
    return out, len(dropped)


def _grows(value: Any, result: Any) -> bool:
    """Whether an op whose running value has shape ``value`` gives a result of shape
    ``result`` that is known to be larger (a layer norm's [n, 5, 1] scale times its [8]
    gamma): the fused kernel would fall back to the unfused kernels on every run, so the
    chain ends there instead."""
    if value.rank is None or result.rank is None:
        return False
    if value.rank != result.rank:
        return True
    return any(a is not None and b is not None and a != b for a, b in zip(value.dims, result.dims))


def _fusable(p: Any) -> bool:
    return (
        p.op_def.elementwise is not None
        and not p.control_inputs  # a dead-aware plan's control dependencies stay as they are
        and p.control_output is None
        and len(p.outputs) == 1
        and 1 <= len(p.inputs) <= 2
        and p.device.partition(":")[0] in p.op_def.kernels
    )


def _fused_proto(chain: list[Any]) -> Any:
    """One step for a chain: its inputs are those the chain reads from outside, in order."""
    inputs: list[int] = []
    members = []
    for j, p in enumerate(chain):
        operands = []
        for s in p.inputs:
            if j and s == chain[j - 1].outputs[0]:
                operands.append(ACC)
                continue
            if s not in inputs:
                inputs.append(s)
            operands.append(inputs.index(s))
        members.append(Member(p.op_def.name, p.name, dict(p.attrs), tuple(operands)))
    last = chain[-1]
    return replace(
        last,
        op_def=lookup_op(FUSED_OP),
        attrs={"N": len(inputs), "T": last.specs[0].dtype, "members": tuple(members)},
        inputs=tuple(inputs),
        input_lengths=(None,) * len(inputs),
    )
