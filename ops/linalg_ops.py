"""Linear algebra: matrix products and Einstein summation.

Ops: MatMul (2-D, ``transpose_a``/``transpose_b``), BatchMatMulV2 (batch dims broadcast,
``adj_x``/``adj_y``), Einsum (any equation ``np.einsum`` accepts, with shape inference).

float16 products accumulate in float32, as TensorFlow's CPU kernels do. Integer products
wrap on overflow; CuPy multiplies integer matrices with its own GEMM kernel (not cuBLAS),
so they run on the GPU too.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from minigraph import dtypes, errors
from minigraph.graph import Output, register_operator
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import PARALLEL_MIN_BYTES, UNPAID_VIEW_SIZE, KernelContext
from minigraph.ops.common import (
    NUMBER,
    matrix_product,
    product_work,
    remember,
    shape_str,
    type_set,
)
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import ShapeError, TensorShape, broadcast, with_rank
from minigraph.wrappers import as_output, convert_to_output, make_builder, make_wrapper_class

BUILDERS = ("matmul", "einsum")

_INTS = (dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64)
MATMUL_TYPES = type_set(dtypes.FLOAT_TYPES + _INTS + dtypes.COMPLEX_TYPES)
BATCH_MATMUL_TYPES = type_set(dtypes.FLOAT_TYPES + (dtypes.int16,) + _INTS + dtypes.COMPLEX_TYPES)


def _product(xp: Any, a: Any, b: Any) -> Any:
    """``a @ b`` (batched, broadcast); float16 accumulates in float32."""
    if a.dtype == np.float16:
        return xp.matmul(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
    return xp.matmul(a, b)


def _adjoint(xp: Any, a: Any, adjoint: bool) -> Any:
    if not adjoint:
        return a
    a = xp.swapaxes(a, -1, -2)
    return xp.conj(a) if a.dtype.kind == "c" else a


# -- MatMul ----------------------------------------------------------------------------------


def _inner_outer(s: TensorShape, transposed: bool) -> tuple[Any, Any]:
    """(rows, inner) of a matrix operand as used in the product."""
    r, c = s[-2], s[-1]
    return (c, r) if transposed else (r, c)


def _matmul_shape(c: InferenceContext, a: TensorSpec, b: TensorSpec) -> TensorShape:
    sa, sb = with_rank(a.shape, 2), with_rank(b.shape, 2)
    m, k = _inner_outer(sa, c.attrs["transpose_a"])
    k2, n = _inner_outer(sb, not c.attrs["transpose_b"])[::-1]
    if k is not None and k2 is not None and k != k2:
        c.fail(f"Matrix size-incompatible: In[0]: {a.shape}, In[1]: {b.shape}")
    return TensorShape([m, n])


MATMUL = define_op(
    "MatMul",
    inputs=["a: T", "b: T"],
    outputs=["product: T"],
    attrs=[
        "transpose_a: bool = False",
        "transpose_b: bool = False",
        f"T: {MATMUL_TYPES}",
        "grad_a: bool = False",
        "grad_b: bool = False",
    ],
    shape_fn=_matmul_shape,
    doc="""
The matrix product of 2-D ``a`` and ``b``, each transposed first if asked (a plain
transpose, no conjugation). ``grad_a``/``grad_b`` are TensorFlow's hints and change
nothing. Inner dims that differ: "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]".

>>> import minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     p = mg.matmul([[1, 2], [3, 4]], [[1, 0], [0, 1]], transpose_a=True)
>>> mg.Session(g).run(p)
array([[1, 3],
       [2, 4]], dtype=int32)
""",
)


@register_kernel("MatMul", "CPU", "GPU")
def _matmul_kernel(ctx: KernelContext, a: Any, b: Any) -> Any:
    plain = ctx.memo.get("plain")  # operand shapes of a product that is one NumPy matmul
    if plain is not None and (a.shape, b.shape) in plain:  # (a loop body's, every step)
        return np.matmul(
            a.T if ctx.attrs["transpose_a"] else a, b.T if ctx.attrs["transpose_b"] else b
        )
    if a.ndim != 2 or b.ndim != 2:
        i, m = (0, a) if a.ndim != 2 else (1, b)
        ctx.fail(f"In[{i}] is not a matrix. Instead it has shape {shape_str(m.shape)}")
    ta, tb = ctx.attrs["transpose_a"], ctx.attrs["transpose_b"]
    xa = a.T if ta else a
    xb = b.T if tb else b
    if xa.shape[1] != xb.shape[0]:
        ctx.fail(
            f"Matrix size-incompatible: In[0]: {shape_str(a.shape)}, In[1]: {shape_str(b.shape)}"
        )
    shape = (xa.shape[0], xb.shape[1])
    size = shape[0] * shape[1]
    if size >= UNPAID_VIEW_SIZE or size > max(a.size, b.size):
        ctx.check_size(shape, a.dtype)  # (as elementwise kernels: a small output no larger
        # than an input is not checked, to keep a loop body's small products cheap)
    if ctx.xp is np and a.dtype != np.float16:
        if product_work(xa, xb) >= PARALLEL_MIN_BYTES:  # a large product on every thread
            out = ctx.empty(shape, a.dtype)
            matrix_product(ctx, xa, xb, out)
            return out
        if size < UNPAID_VIEW_SIZE and size <= max(a.size, b.size):  # nothing was checked
            remember(ctx, "plain", (a.shape, b.shape), True)
    return _product(ctx.xp, xa, xb)


MatMul = make_wrapper_class(MATMUL)
mat_mul = make_builder(MATMUL, "mat_mul")  # the raw op, as gen_math_ops.mat_mul


# -- BatchMatMulV2 ---------------------------------------------------------------------------


def _batch_matmul_shape(c: InferenceContext, x: TensorSpec, y: TensorSpec) -> TensorShape:
    sx, sy = x.shape, y.shape
    for i, s in enumerate((sx, sy)):
        if s.rank is not None and s.rank < 2:
            c.fail(f"In[{i}] ndims must be >= 2: {s.rank}")
    if sx.rank is None or sy.rank is None:
        return TensorShape(None)
    m, k = _inner_outer(sx, c.attrs["adj_x"])
    k2, n = _inner_outer(sy, not c.attrs["adj_y"])[::-1]
    if k is not None and k2 is not None and k != k2:
        c.fail(f"Matrix size-incompatible: In[0]: {sx}, In[1]: {sy}")
    try:
        batch = broadcast(sx[:-2], sy[:-2])
    except ShapeError:
        c.fail(f"In[0] and In[1] must have compatible batch dimensions: {sx} vs. {sy}")
    return batch.concatenate([m, n])


BATCH_MATMUL_V2 = define_op(
    "BatchMatMulV2",
    inputs=["x: T", "y: T"],
    outputs=["output: T"],
    attrs=[
        f"T: {BATCH_MATMUL_TYPES}",
        "adj_x: bool = False",
        "adj_y: bool = False",
        "grad_x: bool = False",
        "grad_y: bool = False",
    ],
    shape_fn=_batch_matmul_shape,
    doc="""
Matrix products over the last two dims of ``x`` and ``y`` (rank >= 2), the leading (batch)
dims broadcast as NumPy's; ``adj_x``/``adj_y`` take the adjoint (conjugate transpose)
first. Batch dims that do not broadcast: "In[0] and In[1] must have compatible batch
dimensions: [2,2,3] vs. [3,3,5]".
""",
)


@register_kernel("BatchMatMulV2", "CPU", "GPU")
def _batch_matmul_kernel(ctx: KernelContext, x: Any, y: Any) -> Any:
    for i, a in enumerate((x, y)):
        if a.ndim < 2:
            ctx.fail(f"In[{i}] ndims must be >= 2: {a.ndim}")
    xp = ctx.xp
    xa, ya = _adjoint(xp, x, ctx.attrs["adj_x"]), _adjoint(xp, y, ctx.attrs["adj_y"])
    try:
        batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    except ValueError:
        ctx.fail(
            "In[0] and In[1] must have compatible batch dimensions: "
            f"{shape_str(x.shape)} vs. {shape_str(y.shape)}"
        )
    if xa.shape[-1] != ya.shape[-2]:
        ctx.fail(
            f"Matrix size-incompatible: In[0]: {shape_str(x.shape)}, In[1]: {shape_str(y.shape)}"
        )
    ctx.check_size(batch + (xa.shape[-2], ya.shape[-1]), x.dtype)
    return _product(xp, xa, ya)


BatchMatMulV2 = make_wrapper_class(BATCH_MATMUL_V2)
_batch_matmul_v2 = make_builder(BATCH_MATMUL_V2, "batch_mat_mul_v2")


def matmul(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    transpose_b: bool = False,
    adjoint_a: bool = False,
    adjoint_b: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    output_type: Any = None,
    grad_a: bool = False,
    grad_b: bool = False,
    name: str | None = None,
) -> Output:
    """``a @ b`` as ``tf.matmul``: MatMul for matrices, BatchMatMulV2 when either operand
    has (or may have) batch dims. ``adjoint_*`` conjugates and transposes; ``*_is_sparse``
    are hints and change nothing."""
    node = name or "MatMul"
    if (transpose_a and adjoint_a) or (transpose_b and adjoint_b):
        which = "a" if transpose_a and adjoint_a else "b"
        raise errors.InvalidArgumentError(
            f"Only one of transpose_{which} and adjoint_{which} can be True.", node, "MatMul"
        )
    x, y = as_output(a), as_output(b)
    if x is None:
        x = convert_to_output(a, None if y is None else y.dtype)
    if y is None:
        y = convert_to_output(b, x.dtype)
    if output_type is not None and dtypes.as_dtype(output_type) != x.dtype:
        raise errors.InvalidArgumentError(
            f"output_type {dtypes.as_dtype(output_type).name} differs from the inputs' "
            f"{x.dtype.name}: minigraph has no BatchMatMulV3",
            node,
            "MatMul",
        )
    complex_ = x.dtype.is_complex
    batch = x.shape.rank != 2 or y.shape.rank != 2
    if not batch and not (complex_ and (adjoint_a or adjoint_b)):
        return mat_mul(
            x,
            y,
            transpose_a=transpose_a or adjoint_a,
            transpose_b=transpose_b or adjoint_b,
            grad_a=grad_a,
            grad_b=grad_b,
            name=node,
        )
    # BatchMatMulV2 knows adjoints only: a transpose of a complex operand is the adjoint of
    # its conjugate, which minigraph writes as an explicit swap of the last two dims.
    if complex_ and (transpose_a or transpose_b):
        from minigraph.ops.shape_ops import transpose

        def swapped(t: Output) -> Output:
            if t.shape.rank is None:
                raise errors.InvalidArgumentError(
                    "a complex transpose needs an operand of known rank", node, "MatMul"
                )
            r = t.shape.rank
            return transpose(t, [*range(r - 2), r - 1, r - 2])

        x = swapped(x) if transpose_a else x
        y = swapped(y) if transpose_b else y
        transpose_a = transpose_b = False
    return _batch_matmul_v2(
        x,
        y,
        adj_x=adjoint_a or transpose_a,
        adj_y=adjoint_b or transpose_b,
        grad_x=grad_a,
        grad_y=grad_b,
        name=name or "MatMul",
    )


register_operator("__matmul__", lambda self, other: matmul(self, other))
register_operator("__rmatmul__", lambda self, other: matmul(other, self))


# -- Einsum ----------------------------------------------------------------------------------

_LABELS = frozenset(string.ascii_letters)


def parse_equation(fail: Any, equation: str, n: int) -> tuple[list[list[str]], list[str]]:
    """Each operand's subscripts and the output's, as lists of labels ("..." one item);
    an implicit output is the labels seen once, sorted, after any ellipsis (NumPy)."""
    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        fail(f"Expecting at most one '->' in einsum equation: {equation}")
    lhs, arrow, rhs = eq.partition("->")

    def labels(term: str) -> list[str]:
        if (
            term.count("...") > 1
            or term.replace("...", "").count(".")
            or not set(term.replace("...", "")) <= _LABELS
        ):
            fail(f"Invalid subscripts '{term}' in einsum equation: {equation}")
        head, dots, tail = term.partition("...")
        return [*head, *(["..."] if dots else []), *tail]

    terms = [labels(t) for t in lhs.split(",")]
    if len(terms) != n:
        fail(f"Expecting {n} input subscripts in equation '{equation}' but got: {len(terms)}")
    if arrow:
        out = labels(rhs)
        seen = {label for t in terms for label in t}
        for label in out:  # a label repeated is a diagonal (TensorFlow's "i->ii")
            if label != "..." and label not in seen:
                fail(f"Output subscript '{label}' does not appear in the inputs: {equation}")
    else:
        counts: dict[str, int] = {}
        for t in terms:
            for label in t:
                counts[label] = counts.get(label, 0) + 1
        out = (["..."] if "..." in counts else []) + sorted(
            label for label, k in counts.items() if k == 1 and label != "..."
        )
    return terms, out


def _merge_label(prev: Any, d: Any) -> tuple[bool, Any]:
    """(ok, size) of a label seen with ``prev`` and now ``d``; NumPy broadcasts a 1."""
    if d is None:
        return True, None if prev == 1 else prev
    if prev is None:
        return True, None if d == 1 else d
    if prev == d or d == 1:
        return True, prev
    return prev == 1, d


def _einsum_dims(
    fail: Any, equation: str, terms: list[list[str]], out: list[str], shapes: list[Any]
) -> list[Any] | None:
    """The output dims (None for an unknown one), or None when the rank is unknown.
    ``shapes`` are tuples of dims (None unknown) or None for an unknown rank."""
    sizes: dict[str, Any] = {}
    ellipsis: TensorShape | None = TensorShape([])
    for i, (term, dims) in enumerate(zip(terms, shapes)):
        named = [label for label in term if label != "..."]
        if dims is None:
            if "..." in term:
                ellipsis = None
            for label in named:
                sizes[label] = _merge_label(sizes[label], None)[1] if label in sizes else None
            continue
        if len(dims) < len(named) or ("..." not in term and len(dims) != len(named)):
            fail(f"Expected input {i} to have rank {len(named)} but got: {len(dims)}")
        k = term.index("...") if "..." in term else len(term)
        n_ell = len(dims) - len(named)
        axes = list(range(k)) + list(range(k + n_ell, len(dims)))
        if "..." in term and ellipsis is not None:
            try:
                ellipsis = broadcast(ellipsis, TensorShape(dims[k : k + n_ell]))
            except ShapeError:
                fail(f"Ellipsis dims of input {i} do not broadcast with the others: {equation}")
        local: dict[str, Any] = {}
        for axis, label in zip(axes, named):
            d = dims[axis]
            if label in local and None not in (d, local[label]) and d != local[label]:
                fail(f"Repeated subscript '{label}' of input {i} has unequal dims")
            if local.get(label) is None:
                local[label] = d
            if label not in sizes:
                sizes[label] = d
                continue
            ok, size = _merge_label(sizes[label], d)
            if not ok:
                fail(
                    f"Expected dimension {sizes[label]} at axis {axis} of input {i} shaped "
                    f"{TensorShape(dims)} but got dimension {d}"
                )
            sizes[label] = size
    result: list[Any] = []
    for label in out:
        if label == "...":
            if ellipsis is None:
                return None
            result.extend(ellipsis.dims or ())
        else:
            result.append(sizes.get(label))
    if "..." not in out and ellipsis is not None and ellipsis.rank:
        fail(f"Output of einsum equation '{equation}' has no '...' for the broadcast dims")
    return result


def _einsum_shape(c: InferenceContext, inputs: list[TensorSpec]) -> TensorShape:
    equation = c.attrs["equation"]
    terms, out = parse_equation(c.fail, equation, len(inputs))
    shapes = [s.shape.dims for s in inputs]
    return TensorShape(_einsum_dims(c.fail, equation, terms, out, shapes))


EINSUM = define_op(
    "Einsum",
    inputs=["inputs: N * T"],
    outputs=["output: T"],
    attrs=["equation: string", "N: int >= 1", f"T: {NUMBER}"],
    shape_fn=_einsum_shape,
    doc="""
Einstein summation over ``N`` operands, as ``np.einsum(equation, *inputs)``: letters name
dims, ``...`` stands for broadcast dims, ``->`` names the output (without it, the output is
the labels seen once, in alphabetical order). A label repeated in one operand takes its
diagonal; labels not in the output are summed; a label repeated in the output puts the
values on that diagonal, zeros elsewhere (as TensorFlow: ``"i->ii"`` is ``diag``, the
gradient of a trace). TensorFlow's kernel takes 1 or 2 operands and needs ``->``;
minigraph takes any equation NumPy accepts.

>>> import numpy as np, minigraph as mg
>>> g = mg.Graph()
>>> with g.as_default():
...     y = mg.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((3, 4)))
...     t = mg.einsum("ii", np.eye(3))
>>> y.shape, mg.Session(g).run(t)
(TensorShape([2, 4]), array(3.))
""",
)


@register_kernel("Einsum", "CPU", "GPU")
def _einsum_kernel(ctx: KernelContext, inputs: list[Any]) -> Any:
    equation = ctx.attrs["equation"]
    terms, out = parse_equation(ctx.fail, equation, len(inputs))
    dims = _einsum_dims(ctx.fail, equation, terms, out, [tuple(x.shape) for x in inputs])
    assert dims is not None
    ctx.check_size(dims, inputs[0].dtype)
    dtype = inputs[0].dtype
    xs = [x.astype(np.float32) for x in inputs] if dtype == np.float16 else list(inputs)
    # A contraction order (and BLAS) pays off for many or large operands only.
    optimize = len(xs) > 2 or sum(x.size for x in xs) > 1 << 14
    distinct = list(dict.fromkeys(out))
    lhs = ",".join("".join(t) for t in terms)
    try:
        r = ctx.xp.einsum(f"{lhs}->{''.join(distinct)}", *xs, optimize=optimize)
    except ValueError as e:  # a guard only: the checks above mirror NumPy's
        ctx.fail(f"einsum: {e}")
    r = ctx.xp.asarray(r)
    r = r if r.dtype == dtype else r.astype(dtype)
    return r if len(distinct) == len(out) else _on_diagonal(ctx, r, distinct, out, dims)


def _on_diagonal(ctx: KernelContext, r: Any, distinct: list[str], out: list[str], dims: Any) -> Any:
    """An output label repeated (TensorFlow's "i->ii"): ``r``, the result over the distinct
    labels, written on the diagonal of zeros shaped as the output (a strided view whose
    stride for a label is the sum of its axes' strides)."""
    full = ctx.xp.zeros(tuple(dims), r.dtype)
    n_ell = len(dims) - (len(out) - out.count("..."))
    axes: dict[str, list[int]] = {}
    k = 0
    for label in out:
        width = n_ell if label == "..." else 1
        axes.setdefault(label, []).extend(range(k, k + width))
        k += width
    strides: list[int] = []
    for label in distinct:
        if label == "...":
            strides.extend(full.strides[a] for a in axes[label])
        else:
            strides.append(sum(full.strides[a] for a in axes[label]))
    view = ctx.xp.lib.stride_tricks.as_strided(full, shape=r.shape, strides=tuple(strides))
    view[...] = r
    return full


Einsum = make_wrapper_class(EINSUM)
_einsum = make_builder(EINSUM, "einsum")


def einsum(equation: str, *inputs: Any, name: str | None = None, **kwargs: Any) -> Output:
    """Einstein summation, as ``tf.einsum(equation, *inputs)`` (the Einsum op)."""
    unknown = set(kwargs) - {"optimize"}  # TF's contraction-order hint: NumPy chooses
    if unknown:
        raise errors.InvalidArgumentError(
            f"einsum got unexpected keyword arguments {sorted(unknown)}", name or "Einsum", "Einsum"
        )
    return _einsum(list(inputs), equation=equation, name=name or "Einsum")


__all__ = ["MatMul", "BatchMatMulV2", "Einsum", *BUILDERS]
