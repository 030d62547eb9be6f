"""Elementwise fusion: a chain of ufunc ops becomes one step that writes one buffer.

A chain is a run of steps whose op is one ufunc (``OpDef.ufunc``: Add, Mul, Sqrt...), on
one device, where each step reads the one before it and nothing else reads (or fetches)
the values in between. The chain becomes one ``_FusedElementwise`` step, named after its
last node, whose kernel

- computes the broadcast shape of all the chain's inputs once, and makes one output buffer
  (or takes over an input of the first op that the executor lets it overwrite);
- runs each ufunc into that buffer in place (``ufunc(acc, y, out=acc)``), so no
  intermediate is allocated and the executor pays one step instead of one per op;
- on the CPU, walks large outputs in cache-sized blocks of rows, both cores at once, so
  that the chain reads and writes main memory once instead of once per op (only for
  ufuncs whose results are correctly rounded on every code path: +, -, *, /, sqrt, min,
  max..., on real types, so a block boundary can never change a bit).

Results are bitwise those of the unfused steps: each element goes through the same ufuncs
in the same order. When the inputs do not broadcast together, or the output would be too
large, the kernel runs the original kernels one by one instead, so the error is the one
the unfused plan raises, naming the same node. NumPy's floating-point warnings (inf - inf)
are not raised inside a fused chain.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from . import errors
from .inference import InferenceContext, TensorSpec
from .kernel import KernelContext
from .registry import define_op, lookup_kernel, lookup_op, register_kernel
from .shapes import TensorShape

__all__ = ["FUSED_OP", "fuse_elementwise"]

FUSED_OP = "_FusedElementwise"
ACC = -1  # an operand that is the chain's running value

# ufuncs that IEEE rounds exactly, so any loop (SIMD or scalar, any block) gives one answer
_BLOCKABLE = frozenset(
    "add subtract multiply true_divide maximum minimum negative absolute square sqrt "
    "reciprocal floor ceil rint logical_and logical_or logical_not".split()
)
# Outputs at least this large are computed block by block ...
_BLOCK_MIN_BYTES = 1 << 22
# ... of about this many bytes of output, so a block's operands stay in the L2 cache.
_BLOCK_BYTES = 1 << 19
# As in the unfused kernels: an input this large may be an unpaid broadcast view.
_CHECKED_SIZE = 1 << 20


class Member(NamedTuple):
    """One op of a fused chain: what its kernel needs, and where its operands come from
    (an index into the fused step's inputs, or ACC for the value so far)."""

    op_type: str
    node_name: str
    attrs: dict[str, Any]
    ufunc: str
    operands: tuple[int, ...]


def _fused_shape(c: InferenceContext, *inputs: TensorSpec) -> TensorShape:
    c.fail(f"{FUSED_OP} is made by the graph optimizer; a graph cannot hold one")


define_op(
    FUSED_OP,
    inputs=["inputs: N * T"],
    outputs=["output: T"],
    attrs=["N: int >= 1", "T: type"],
    shape_fn=_fused_shape,
    doc="Internal: a chain of elementwise ops run as one step (see minigraph.fusion).",
)


@register_kernel(FUSED_OP, "CPU", "GPU")
def _fused_kernel(ctx: KernelContext, *inputs: Any) -> Any:
    members: tuple[Member, ...] = ctx.attrs["members"]
    program = ctx.memo.get("program")
    if program is None:
        program = ctx.memo["program"] = _compile(members, ctx.xp, len(inputs))
    shape = _broadcast_shape(inputs)
    if shape is None:  # the unfused kernels say which op and which shapes
        return _unfused(ctx, inputs)
    dtype = inputs[0].dtype
    if math.prod(shape) >= _CHECKED_SIZE or all(x.shape != shape for x in inputs):
        try:  # an input may be an unpaid broadcast view, or the chain broadcasts up
            ctx.check_size(shape, dtype)
        except errors.ResourceExhaustedError:  # named as the unfused op that grows it
            return _unfused(ctx, inputs)
    out = _output_buffer(ctx, members, inputs, shape, dtype)
    with np.errstate(all="ignore"):
        if ctx.xp is not np or out.nbytes < _BLOCK_MIN_BYTES or not _blockable(members, dtype):
            _run(program, inputs, out)  # a GPU queues its kernels: blocks would not help
            return out
        rows = max(1, _BLOCK_BYTES * shape[0] // out.nbytes)
        n = shape[0]

        def blocks(part: slice) -> None:
            for start in range(part.start, part.stop, rows):
                block = slice(start, min(start + rows, part.stop))
                cut = [x[block] if x.ndim == out.ndim and x.shape[0] == n else x for x in inputs]
                _run(program, cut, out[block])

        ctx.parallel_slices(blocks, n, out.nbytes)
    return out


def _compile(members: Sequence[Member], xp: Any, num_inputs: int) -> list[tuple[Any, ...]]:
    """Each op as (ufunc, operand, operand or None), indexing the inputs followed by the
    running value."""
    program = []
    for m in members:
        a, *b = [num_inputs if k == ACC else k for k in m.operands]
        program.append((getattr(xp, m.ufunc), a, b[0] if b else None))
    return program


def _broadcast_shape(inputs: Sequence[Any]) -> tuple[int, ...] | None:
    """The shape all inputs broadcast to, or None when they do not."""
    shape: tuple[int, ...] = ()
    for x in inputs:
        s = x.shape
        if s != shape and s:
            if not shape:
                shape = s
                continue
            try:
                shape = np.broadcast_shapes(shape, s)
            except ValueError:
                return None
    return shape


def _blockable(members: Sequence[Member], dtype: np.dtype) -> bool:
    """Whether block boundaries cannot change a bit: exactly rounded ufuncs on real types."""
    return dtype.kind in "biuf" and all(m.ufunc in _BLOCKABLE for m in members)


def _output_buffer(
    ctx: KernelContext, members: Sequence[Member], inputs: Sequence[Any], shape: Any, dtype: Any
) -> Any:
    """An input the first op may overwrite (read by it alone, and handed over by the
    executor), else a new array (its size is checked above when nothing paid for it)."""
    reusable = ctx.memo.get("reusable")
    if reusable is None:
        reads = [k for m in members for k in m.operands]
        reusable = ctx.memo["reusable"] = tuple(
            i for i in ctx.forwardable if i in members[0].operands and reads.count(i) == 1
        )
    for i in reusable:
        x = inputs[i]
        flags = x.flags
        if (
            x.shape == shape
            and x.dtype == dtype
            and flags.c_contiguous
            and getattr(flags, "writeable", True)  # CuPy arrays have no such flag
        ):
            return x
    return ctx.xp.empty(shape, dtype)


def _run(program: Sequence[tuple[Any, ...]], inputs: Sequence[Any], out: Any) -> None:
    """Every op of the chain into ``out``, in order."""
    values = [*inputs, out]
    for ufunc, a, b in program:
        if b is None:
            ufunc(values[a], out=out)
        else:
            ufunc(values[a], values[b], out=out)


def _unfused(ctx: KernelContext, inputs: Sequence[Any]) -> Any:
    """The chain's original kernels, one after another: the unfused plan's result or error."""
    contexts = ctx.memo.get("contexts")
    device_type = ctx.device.partition(":")[0]
    if contexts is None:
        contexts = ctx.memo["contexts"] = [
            (
                lookup_kernel(m.op_type, device_type, m.node_name),
                KernelContext(
                    dict(m.attrs),
                    ctx.xp,
                    m.node_name,
                    m.op_type,
                    ctx.device,
                    (),
                    ctx.memory_limit,
                    ctx.tensor_bytes,
                    ctx.threads,
                ),
            )
            for m in ctx.attrs["members"]
        ]
    acc = None
    for m, (kernel, member_ctx) in zip(ctx.attrs["members"], contexts):
        acc = kernel(member_ctx, *[acc if k == ACC else inputs[k] for k in m.operands])
    return acc


# -- The optimizer pass ----------------------------------------------------------------------


def fuse_elementwise(protos: list[Any], keep: frozenset[int]) -> tuple[list[Any], int]:
    """Plan steps with each chain of two or more ufunc steps made one fused step, and how
    many steps were fused away. A chain grows through a value that only its next op reads
    and that is not fetched, on one device; the fused step takes the place (and the name)
    of the chain's last op."""
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


def _fusable(p: Any) -> bool:
    return (
        p.op_def.ufunc is not None
        and len(p.outputs) == 1
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
        members.append(
            Member(p.op_def.name, p.name, dict(p.attrs), p.op_def.ufunc, tuple(operands))
        )
    last = chain[-1]
    return replace(
        last,
        op_def=lookup_op(FUSED_OP),
        attrs={"N": len(inputs), "T": last.specs[0].dtype, "members": tuple(members)},
        inputs=tuple(inputs),
        input_lengths=(None,) * len(inputs),
    )
