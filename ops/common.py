"""What every op family shares: dtype sets in declaration notation, host reads of
shape-like inputs, axis checks, and index-range checks in TensorFlow's wording."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np

from minigraph import dtypes
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import PARALLEL_MIN_BYTES, KernelContext
from minigraph.runs import widened
from minigraph.shapes import TensorShape
from minigraph.wrappers import make_builder

__all__ = [
    "INDEX_TYPES",
    "BAD_INDICES_POLICY",
    "ALL",
    "NUMBER",
    "REAL",
    "INEXACT",
    "FLOAT",
    "INTEGER",
    "type_set",
    "host_array",
    "as_rows",
    "from_rows",
    "axis_value",
    "same_shape",
    "first_bad_index",
    "check_in_range",
    "multi_index",
    "shape_str",
    "reduce",
    "select_bits",
    "widened_ufunc",
    "REQUIRED",
    "tf_builder",
]


def type_set(types: Sequence[dtypes.DType]) -> str:
    """A type constraint in declaration notation: ``{float32, float64}``."""
    return "{" + ", ".join(d.name for d in types) + "}"


INDEX_TYPES = "{int32, int64}"
# How the index ops treat an out-of-range index (TensorFlow's attr; IGNORE gives zeros).
BAD_INDICES_POLICY = "bad_indices_policy: {'', 'DEFAULT', 'ERROR', 'IGNORE'} = ''"
ALL = type_set(dtypes.ALL_TYPES)
NUMBER = type_set(dtypes.NUMBER_TYPES)
REAL = type_set(dtypes.REAL_NUMBER_TYPES)
INEXACT = type_set(dtypes.FLOAT_TYPES + dtypes.COMPLEX_TYPES)
FLOAT = type_set(dtypes.FLOAT_TYPES)
INTEGER = type_set(dtypes.INTEGER_TYPES)


def host_array(ctx: KernelContext, x: Any) -> np.ndarray:
    """A small shape-like input (dims, axis, perm) as a NumPy array on the host."""
    return x if isinstance(x, np.ndarray) else ctx.xp.asnumpy(x)


def axis_value(c: Any, axis: Any, rank: int) -> int:
    """A scalar axis in ``[-rank, rank)``, made non-negative; ``c.fail`` otherwise."""
    axis = np.asarray(axis)
    if axis.ndim != 0:
        c.fail(f"axis must be a scalar, not a tensor of shape {list(axis.shape)}")
    a = int(axis)
    if not -rank <= a < rank:
        c.fail(f"Expected axis in the range [{-rank}, {rank}), but got {a}")
    return a % rank


def same_shape(c: InferenceContext, x: TensorSpec, *rest: Any) -> TensorShape:
    """The shape function of ops whose output is shaped as their first input."""
    return x.shape


def first_bad_index(flat: Any, limit: int) -> tuple[int, int] | None:
    """(position, value) of the first entry of a flat index array outside [0, limit)."""
    # One pass (one device sync) in the common case: as unsigned, a negative is too large
    # (at least 2**(bits-1), so the limit is capped there).
    bits = 8 * flat.dtype.itemsize
    if not flat.size or int(flat.view(f"u{bits // 8}").max()) < min(limit, 2 ** (bits - 1)):
        return None
    pos = int(((flat < 0) | (flat >= limit)).argmax())
    return pos, int(flat[pos])


def check_in_range(fail: Callable[[str], NoReturn], name: str, x: Any, limit: int) -> None:
    """Fails on the first entry of ``x``, in flat order, outside [0, limit), named as
    TensorFlow names it: ``indices[1,0] = 7 is not in [0, 5)``."""
    bad = first_bad_index(x.reshape(-1), limit)
    if bad is not None:
        pos, value = bad
        fail(f"{name}{multi_index(tuple(x.shape), pos)} = {value} is not in [0, {limit})")


def multi_index(shape: tuple[int, ...], flat_pos: int) -> str:
    """TensorFlow's SliceDebugString: ``[i,j]`` for a flat position, "" for a scalar."""
    if not shape:
        return ""
    return "[" + ",".join(str(int(i)) for i in np.unravel_index(flat_pos, shape)) + "]"


def shape_str(dims: Sequence[int]) -> str:
    """TensorShape::DebugString of a concrete shape: ``[2,3]``."""
    return "[" + ",".join(str(int(d)) for d in dims) + "]"


# An unsigned word of each size: NumPy gathers, scatters and copies one such element about
# as fast as one number, so rows of 1, 2, 4 or 8 bytes move as words.
WORDS = {n: np.dtype(f"u{n}") for n in (1, 2, 4, 8)}


def as_rows(xp: Any, x: Any, n: int, row: int) -> Any:
    """``x`` as ``n`` rows: one unsigned word per row when a row is 1, 2, 4 or 8 bytes, else
    an ``[n, row]`` array. The word view makes gathers and scatters 1-D, 2-5x faster."""
    rows = xp.ascontiguousarray(x).reshape(n, row)
    word = WORDS.get(row * rows.itemsize)
    return rows if word is None else rows.view(word).reshape(n)


def from_rows(rows: Any, dtype: Any, extra: tuple[int, ...]) -> Any:
    """The inverse of :func:`as_rows`: ``len(rows)`` rows of shape ``extra`` and ``dtype``."""
    return rows.view(dtype).reshape((rows.shape[0], *extra))


def row_element(nbytes: int) -> np.dtype:
    """The dtype that holds ``nbytes`` bytes as one element: a word (see WORDS), else an
    opaque void item (NumPy only; CuPy has no void dtype)."""
    return WORDS.get(nbytes, np.dtype((np.void, nbytes)))


def put_rows(out: np.ndarray, index: np.ndarray, rows: np.ndarray) -> None:
    """``out[index] = rows`` on the host, for a 1-D or ``[n, row]`` ``out`` and indices that
    never repeat. NumPy assigns 2-D rows element by element, 2-3x slower than np.put moves
    one opaque item (:func:`row_element`) per row."""
    if out.ndim == 2 and out.shape[1] and out.flags.c_contiguous and rows.dtype == out.dtype:
        item = row_element(out.shape[1] * out.itemsize)
        flat = _put_values(np.ascontiguousarray(rows).view(item).reshape(-1))
        np.put(out.view(item).reshape(-1), index, flat)
    else:
        out[index] = rows


def _put_values(values: np.ndarray) -> np.ndarray:
    """``values`` as np.put takes them without a copy. np.put asks for a writeable array
    and copies any other, and every fed tensor reaches a kernel as a read-only view: 4 MB
    copied per 64K rows of 64 bytes, the parallel stitch's Session run 78-94 ms against
    62-76 for the same kernel on writeable arrays (2026-12-03). np.put only reads its
    values, so it gets a writeable view of the same memory; where NumPy refuses one
    (memory read-only at its source, such as a bytes buffer), it copies as before."""
    if values.flags.writeable:
        return values
    view = values.view()
    try:
        view.flags.writeable = True
    except ValueError:
        return values
    return view


# NumPy's reductions (np.sum and the like, by name) as ufuncs, for folds of slices.
_REDUCE_UFUNCS = {
    "sum": np.add,
    "prod": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
    "any": np.logical_or,
    "all": np.logical_and,
}
_FOLD_MAX_LENGTH = 16  # folds over axes of at most this many elements ...
_FOLD_MIN_RESULTS = 64  # ... into at least this many results per element of the axis


def reduce(
    xp: Any, name: str, x: Any, axes: tuple[int, ...], keepdims: bool = False, dtype: Any = None
) -> Any:
    """``xp.<name>(x, axis=axes, keepdims=keepdims, dtype=dtype)`` (name: sum, prod, max,
    min, any or all; dtype for sum and prod). On the host, a reduction over one short axis
    into many results is a fold of the ufunc over the axis's slices, in order: NumPy calls
    its inner loop once per result, 40 ns each, so a max over the last axis of [10240, 5]
    took 430 us against 31 (a softmax over 5 keys, a layer norm over 8 features). A fold
    adds in the order NumPy adds a row of fewer than 8 (longer rows it adds pairwise, 8
    lanes at a time, so a sum of 8-16 may round differently: within the same bounds)."""
    promotes = dtype is None and name in ("sum", "prod") and x.dtype.kind in "biu"  # to int64
    if xp is np and len(axes) == 1 and x.ndim > 1 and not promotes:
        n = x.shape[axes[0]]
        if 1 < n <= _FOLD_MAX_LENGTH and x.size >= _FOLD_MIN_RESULTS * n * n:
            index = (slice(None),) * axes[0]
            result = np.dtype(dtype or x.dtype)
            # float16 sums and products run in float32, rounded once, as NumPy's loops do
            wide = result == np.float16 and name in ("sum", "prod")
            out = x[(*index, 0)].astype(np.float32 if wide else result)  # a new array
            fold = _REDUCE_UFUNCS[name]
            for i in range(1, n):
                fold(out, x[(*index, i)], out=out)
            out = out.astype(result, copy=False)
            return np.expand_dims(out, axes) if keepdims else out
    if xp is not np and name in ("sum", "prod") and np.dtype(dtype or x.dtype) == np.float16:
        # CuPy adds float16 in float16 (2048 + 1 + 1 + 1 is 2048); NumPy's loops, and so the
        # CPU's result, add in float32 and round once (2052).
        wide = getattr(xp, name)(x, axis=axes, keepdims=keepdims, dtype=np.float32)
        return wide.astype(np.float16)
    return getattr(xp, name)(x, axis=axes, keepdims=keepdims, **({"dtype": dtype} if dtype else {}))


def has_negative_zero(x: np.ndarray) -> bool:
    """Whether float ``x`` (on the host: on a device this is a sync) holds a -0.0: its bits
    as integers, the sign bit alone, are the lowest integer, so one integer minimum tells
    (no mask of the whole tensor: [128, 28, 28, 16] float32 0.38 -> 0.27 ms)."""
    ints = np.dtype(f"i{x.dtype.itemsize}")
    return x.size > 0 and bool(x.view(ints).min() == np.iinfo(ints).min)


# Below this many elements np.where's branches cost less than select_bits's five passes.
_SELECT_MIN_SIZE = 1 << 12


def select_bits(xp: Any, cond: Any, t: Any, e: Any) -> Any:
    """``xp.where(cond, t, e)``. On the host, for a boolean ``cond`` and ``t`` and ``e`` of
    one shape and numeric dtype, through an integer mask instead: ``e ^ ((t ^ e) & -cond)``
    on the values' bits, the same result without np.where's branch on each element (1M
    float32 on random conditions 4.5 -> 0.9 ms, float64 4.2 -> 2.2)."""
    if (
        xp is not np
        or t.size < _SELECT_MIN_SIZE
        or not cond.shape == t.shape == e.shape
        or cond.dtype != np.bool_
        or t.dtype != e.dtype
        or t.dtype.kind not in "biuf"
    ):
        return xp.where(cond, t, e)
    ints = np.dtype(f"i{t.itemsize}")
    mask = cond.astype(ints)
    np.negative(mask, out=mask)  # all ones where cond
    bits = np.bitwise_xor(t.view(ints), e.view(ints))
    bits &= mask
    bits ^= e.view(ints)
    return bits.view(t.dtype)


def widened_ufunc(ufunc: Any, x: Any, y: Any, out: Any) -> Any:
    """``ufunc(x, y, out=out)`` for host arrays that broadcast to ``out``, run on [rows,
    run] views when an operand repeats a short block of trailing axes (minigraph.runs): a
    bias of 4 channels over [1024, 8, 8, 4] then takes one inner loop per 1024 elements,
    not per pixel. The same bits."""
    (wx, wy), wide = widened((x, y), out)
    ufunc(wx, wy, out=wide)
    return out


# The default of a builder parameter the caller must give (for tf_builder's params).
REQUIRED = inspect.Parameter.empty


def tf_builder(op_def: Any, name: str, params: Sequence[tuple[str, Any]]) -> Callable[..., Any]:
    """The generated builder under tf.compat.v1's signature: ``params`` (name, default),
    then ``name=None``, all positional-or-keyword as in TensorFlow."""
    generated = make_builder(op_def, name)
    P = inspect.Parameter
    sig = inspect.Signature(
        [P(p, P.POSITIONAL_OR_KEYWORD, default=d) for p, d in params]
        + [P("name", P.POSITIONAL_OR_KEYWORD, default=None)]
    )

    def builder(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return generated(**bound.arguments)

    builder.__name__ = builder.__qualname__ = name
    builder.__signature__ = sig  # type: ignore[attr-defined]
    builder.__doc__ = generated.__doc__
    return builder


# Input shapes a step's memo keeps a fact for, at most (batch sizes vary from run to run).
SHAPES_KEPT = 64


def remember(ctx: KernelContext, name: str, shapes: Any, fact: Any) -> None:
    """Note ``fact`` for these input shapes in the step's memo ``name`` (a dict), where a
    kernel looks it up on its next call (a loop body's step meets the same shapes every
    iteration), up to SHAPES_KEPT shapes."""
    known = ctx.memo.setdefault(name, {})
    if len(known) < SHAPES_KEPT:
        known[shapes] = fact


_PAD_BORDER_MIN_SIZE = 1 << 16  # elements: below, pad_into fills the whole output


def pad_into(
    ctx: KernelContext, out: Any, x: Any, pairs: Sequence[tuple[int, int]], value: Any
) -> None:
    """``out`` as ``x`` padded by ``pairs`` (before, after) in each dim with ``value``: only
    the border is filled, and the copy of ``x`` is split over the threads when large (a fill
    of the whole output first cost as much as the copy)."""
    inner = tuple(slice(a, a + d) for d, (a, _) in zip(x.shape, pairs))
    if out.size < _PAD_BORDER_MIN_SIZE:  # one fill and one copy cost less than the border's
        out[...] = value
        out[inner] = x
        return
    for axis, (d, (a, _)) in enumerate(zip(x.shape, pairs)):
        lead = (slice(None),) * axis
        out[(*lead, slice(0, a))] = value
        out[(*lead, slice(a + d, None))] = value
    ctx.copy(out[inner], x)


# A product of this many multiply-adds or more is worth splitting over the threads even
# when its operands are small (about 0.2 ms on one BLAS thread here). On 2 cores, BLAS on
# one thread (as in a run), 2026-12-06: [400, 64] @ [64, 384] (10M) 0.20 -> 0.16 ms,
# [128, 784] @ [784, 256] 0.54 -> 0.37, a 1x1 convolution's [800, 96] @ [96, 576] 0.85 ->
# 0.51 (MobileNetV2 at batch 8: its Conv2D steps 30 -> 23 ms; the MLP's training step
# 2.01 -> 1.89 ms); below, split products ran 5-10% slower ([64, 768] @ [768, 192], 9.4M:
# 197 -> 209 µs). (50M until then: a measurement with BLAS's own two threads had made the
# split look slower.)
SPLIT_MIN_MACS = 10_000_000


def product_work(a: Any, b: Any) -> int:
    """The work, in bytes as KernelContext.parallel_map weighs it, of ``a @ b`` (2-D): the
    bytes it moves, or the threshold itself for a product of SPLIT_MIN_MACS or more."""
    moved = a.nbytes + b.nbytes + a.shape[0] * b.shape[1] * a.itemsize
    if a.shape[0] * a.shape[1] * b.shape[1] >= SPLIT_MIN_MACS:
        return max(moved, PARALLEL_MIN_BYTES)
    return moved


def matrix_product(ctx: KernelContext, a: Any, b: Any, out: Any) -> None:
    """``a @ b`` into ``out``, split over the threads (when large: BLAS runs one thread
    during a run, minigraph.blas) by rows of ``a``, or by columns of ``b`` where ``b`` has
    more columns than ``a`` has rows: each thread then reads only its part of ``b``, which
    is the larger operand (a late layer's filter at batch 1: [25, 4608] @ [4608, 512], 1.4
    -> 1.1 ms). The slices are fixed by the thread count, so the result is too; BLAS may
    round a slice's edge differently from one product over the whole."""
    work = product_work(a, b)
    if b.shape[1] > a.shape[0]:
        ctx.parallel_slices(lambda c: ctx.xp.matmul(a, b[:, c], out=out[:, c]), b.shape[1], work)
    else:
        ctx.parallel_slices(lambda r: ctx.xp.matmul(a[r], b, out=out[r]), a.shape[0], work)
