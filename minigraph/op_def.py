"""Op declarations in TensorFlow's notation, parsed into OpDefs.

An op is declared once, for example::

    define_op(
        "SpaceToBatchND",
        inputs=["input: T", "block_shape: Tblock_shape", "paddings: Tpaddings"],
        outputs=["output: T"],
        attrs=["T: type", "Tblock_shape: {int32, int64} = int32",
               "Tpaddings: {int32, int64} = int32"],
        shape_fn=_space_to_batch_nd_shape,
    )

Inputs and outputs are ``name: T`` (a type attr), ``name: int32`` (a fixed
dtype), ``name: N * T`` (a list whose length is the int attr ``N``) or ``name: T``
with ``T: list(type)`` (a list whose elements each have their own dtype, as IdentityN's). Attrs are
``name: kind [>= min] [= default]`` where kind is ``type``, ``{int32, int64}``
(a type constraint), ``int``, ``float``, ``bool``, ``string``, ``{'A', 'B'}``
(allowed strings), ``list(int)``, ``list(type)``, ``shape`` or ``tensor``. Everything else
(builders, class wrappers, docs) is generated from the resulting OpDef.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import dtypes
from .errors import short_repr

__all__ = ["ArgDef", "AttrDef", "OpDef", "parse_arg", "parse_attr", "group_listed_inputs"]


@dataclass(frozen=True)
class ArgDef:
    """One input or output: a name, and either a type attr or a fixed dtype."""

    name: str
    type_attr: str | None = None  # "T" for "x: T"
    dtype: dtypes.DType | None = None  # int32 for "x: int32"
    number_attr: str | None = None  # "N" for "x: N * T"
    type_list_attr: str | None = None  # "T" for "x: T" with "T: list(type)"

    @property
    def is_list(self) -> bool:
        return self.number_attr is not None or self.type_list_attr is not None

    def count(self, attrs: Mapping[str, Any]) -> int:
        """How many tensors this arg stands for, given a node's attrs."""
        if self.type_list_attr is not None:
            return len(attrs[self.type_list_attr])
        return 1 if self.number_attr is None else int(attrs[self.number_attr])

    def dtype_in(self, attrs: Mapping[str, Any]) -> dtypes.DType:
        """This arg's dtype, given a node's attrs (one dtype for all of a ``N * T`` list)."""
        if self.type_attr is None:
            assert self.dtype is not None
            return self.dtype
        return attrs[self.type_attr]

    def declared_count(self, attrs: Mapping[str, Any]) -> int | None:
        """How many tensors a list arg's attr asks for (None: absent or not a count), as read
        from a file whose attrs are not checked yet."""
        if self.type_list_attr is not None:
            value = attrs.get(self.type_list_attr)
            return len(value) if isinstance(value, list | tuple) else None
        n = attrs.get(self.number_attr or "")
        return n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else None

    @property
    def length_attr(self) -> str | None:
        """The attr that fixes a list arg's length: ``N`` of ``N * T``, or the list(type)."""
        return self.number_attr or self.type_list_attr

    def dtypes_in(self, attrs: Mapping[str, Any]) -> list[dtypes.DType]:
        """The dtype of each tensor this arg stands for, given a node's attrs."""
        if self.type_list_attr is not None:
            return list(attrs[self.type_list_attr])
        return [self.dtype_in(attrs)] * self.count(attrs)

    def __str__(self) -> str:
        if self.type_list_attr is not None:
            return f"{self.name}: {self.type_list_attr}"
        t = self.type_attr or str(self.dtype)
        return f"{self.name}: {self.number_attr} * {t}" if self.is_list else f"{self.name}: {t}"


_NO_DEFAULT = object()


@dataclass(frozen=True)
class AttrDef:
    """One attr: kind, optional allowed values, minimum and default."""

    name: str
    kind: str  # type, int, float, bool, string, list(int), shape, tensor
    allowed: tuple[Any, ...] | None = None  # DTypes for type attrs, strings for string attrs
    minimum: int | None = None
    default: Any = _NO_DEFAULT
    spec: str = ""

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    def __str__(self) -> str:
        return self.spec


@dataclass(frozen=True)
class Elementwise:
    """An op that elementwise fusion (minigraph.fusion) may run inside a chain: its output
    has its inputs' dtype, and each output element depends on the inputs' elements at the
    same (broadcast) position only.

    ``bind(xp, attrs)`` gives ``f(*inputs, out=out)``, which writes the kernel's result into
    ``out`` (an array of the result's shape and dtype, which may be one of the inputs) with
    no check of its own: a ufunc such as ``np.add`` is one. ``shape(attrs, *shapes)`` is the
    result's shape, or None where the kernel would refuse these shapes (None: NumPy
    broadcasting). ``broadcasts(attrs)``, for an op with a shape rule:
    whether with these attrs it pairs its operands' elements as NumPy broadcasting does
    (BiasAdd in NHWC), so that it may run on reshaped views of them (an op without a shape
    rule always does).

    ``cuda(attrs, dtype)``: the op as one C expression for a generated GPU kernel
    (minigraph.fusion_cuda), or None where it has none for this dtype. The expression
    reads its operands as ``{0}`` and ``{1}``, values of the compute type ``C`` (``float``
    for float16, else the dtype's own), and rounds any intermediate the kernel rounds with
    ``R(v)`` (to the dtype and back), so that it gives the kernel's bits.

    ``host(attrs, dtype)``: the op as one Python expression for a compiled host loop
    (minigraph.fusion_jit), or None where it has none for this float dtype. It reads its
    operands as ``{0}`` and ``{1}`` and makes constants with ``T(...)`` (the dtype's scalar
    type). Only ops whose every step is exactly rounded (+ - * /, sqrt, comparisons and
    selects) give one: IEEE arithmetic then gives the kernel's bits. An op that calls a
    NumPy function such as exp gives an :class:`AroundUfunc` instead.
    """

    bind: Callable[[Any, Mapping[str, Any]], Callable[..., Any]]
    shape: Callable[..., tuple[int, ...] | None] | None = None
    broadcasts: Callable[[Mapping[str, Any]], bool] | None = None
    cuda: Callable[[Mapping[str, Any], Any], str | None] | None = None
    host: Callable[[Mapping[str, Any], Any], str | AroundUfunc | None] | None = None

    @classmethod
    def ufunc(
        cls,
        name: str,
        cuda: Callable[[Mapping[str, Any], Any], str | None] | None = None,
        host: Callable[[Mapping[str, Any], Any], str | None] | None = None,
    ) -> Elementwise:
        """The op whose kernel is NumPy's (and CuPy's) ufunc ``name`` on one dtype."""
        return cls(lambda xp, attrs: getattr(xp, name), cuda=cuda, host=host)

    @classmethod
    def result(
        cls,
        fn: Callable[..., Any],
        cuda: Callable[[Mapping[str, Any], Any], str | None] | None = None,
        host: Callable[[Mapping[str, Any], Any], str | None] | None = None,
    ) -> Elementwise:
        """The op whose kernel computes ``fn(xp, attrs, *inputs)``: that result is copied
        into ``out``, cast as the kernel's ``astype`` casts it."""

        def bind(xp: Any, attrs: Mapping[str, Any]) -> Callable[..., Any]:
            def into(*inputs: Any, out: Any) -> None:
                xp.copyto(out, fn(xp, attrs, *inputs), casting="unsafe")

            return into

        return cls(bind, cuda=cuda, host=host)


@dataclass(frozen=True)
class AroundUfunc:
    """A unary op's host form (Elementwise.host) as two compiled loops around one NumPy
    ufunc call (minigraph.fusion_jit): the ufunc stays NumPy's own, whose SIMD exp or tanh
    differs from libm's in the last bits, and the exactly rounded steps around it compile.

    ``before``: statements that read the operand as ``{0}`` and set ``_k0``, ``_k1``, ...
    (``kept`` values, float64, for the second loop) and ``_u0``, ... (``through`` values,
    of dtype ``wide`` or else the op's own, that ``ufunc`` then maps in place). ``after``:
    statements that read ``{0}`` and those names, the last one an expression: the result,
    rounded to the op's dtype. Their own names begin with ``_``.
    """

    ufunc: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    kept: int = 0
    through: int = 1
    wide: str | None = None


@dataclass(frozen=True)
class SharedInput:
    """An op whose steps that read one value at input ``input``, with equal values of the
    attrs ``attrs``, may run as one step (minigraph.sharing): work on that value is done
    once. (Other attrs, such as the other inputs' dtypes, may differ.)

    ``kernel(ctx, others, shared)`` gets each member's other inputs (a list per member, in
    order) and the shared value, with the members' attrs in ``ctx``; it returns each
    member's outputs (a list per member), or None where it would do no better, or where
    some input is bad: the members' own kernels then run one by one (and name the node).
    """

    input: int
    attrs: tuple[str, ...]
    kernel: Callable[..., Any]


@dataclass
class OpDef:
    """Everything known about an op type, built from its one declaration."""

    name: str
    inputs: tuple[ArgDef, ...]
    outputs: tuple[ArgDef, ...]
    attrs: tuple[AttrDef, ...]
    shape_fn: Callable[..., Any]
    doc: str = ""
    host_inputs: frozenset[str] = frozenset()
    host_outputs: frozenset[str] = frozenset()
    is_stateful: bool = False
    aliases_input: bool = False  # outputs may be views of an input (Identity, Reshape...)
    aliased_input: int = 0  # ... of this one (Split's value is its input 1)
    elementwise: Elementwise | None = None  # how elementwise fusion may run it in place
    # Its outputs are buffers it keeps after the run (ReadVariableOp's is the variable's
    # value): like a Const's, no kernel may write into them.
    outputs_are_state: bool = False
    shared: SharedInput | None = None  # how steps that share an input may run as one
    # What the plan knows of a step's inputs, as attrs for its kernel (see optimizer.py).
    input_facts: Callable[..., Mapping[str, Any] | None] | None = None
    kernels: dict[str, Callable[..., Any]] = field(default_factory=dict)
    # Why no kernel can ever run it, for a node of an op type minigraph lacks that an import
    # kept (minigraph.opaque): a plan that needs such a node raises UnimplementedError so.
    unsupported: str = ""

    @property
    def kernel_devices(self) -> frozenset[str]:
        """Device types ("CPU", "GPU") that have a kernel for this op."""
        return frozenset(self.kernels)

    @property
    def calls_functions(self) -> bool:
        """The op runs function bodies (a ``func`` attr: While, If, PartitionedCall...)."""
        return any(a.kind in ("func", "list(func)") for a in self.attrs)

    def functions_in(self, attrs: Mapping[str, Any]) -> list[Any]:
        """The function bodies a node of this op holds: its ``func`` attrs' values, each
        ``list(func)`` attr's in order (minigraph.functions.Function)."""
        found: list[Any] = []
        for a in self.attrs:
            if a.kind == "func":
                found.append(attrs[a.name])
            elif a.kind == "list(func)":
                found.extend(attrs[a.name])
        return found

    @property
    def single_output(self) -> bool:
        """The kernel returns one array (not a sequence): one output, not a list output."""
        return len(self.outputs) == 1 and not self.outputs[0].is_list

    def attr(self, name: str) -> AttrDef:
        for a in self.attrs:
            if a.name == name:
                return a
        raise KeyError(name)

    def inferred_attrs(self) -> frozenset[str]:
        """Attrs set from the inputs (their dtypes or list lengths), never by the caller."""
        names = set()
        for arg in self.inputs:
            for ref in (arg.type_attr, arg.number_attr, arg.type_list_attr):
                if ref:
                    names.add(ref)
        return frozenset(names)

    def signature(self) -> str:
        ins = ", ".join(str(a) for a in self.inputs)
        outs = ", ".join(str(a) for a in self.outputs)
        return f"{self.name}({ins}) -> ({outs})"


_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_ARG_RE = re.compile(rf"^\s*({_IDENT})\s*:\s*(?:({_IDENT})\s*\*\s*)?({_IDENT})\s*$")
_ATTR_RE = re.compile(
    rf"^\s*({_IDENT})\s*:\s*(\{{[^}}]*\}}|list\(\w+\)|\w+)\s*(?:>=\s*(-?\d+))?\s*(?:=\s*(.+?))?\s*$"
)


def parse_arg(spec: str, type_attrs: Sequence[str], type_list_attrs: Sequence[str] = ()) -> ArgDef:
    m = _ARG_RE.match(spec)
    if not m:
        raise ValueError(f"bad arg spec {spec!r}")
    name, number, t = m.groups()
    if t in type_list_attrs:
        if number:
            raise ValueError(f"bad arg spec {spec!r}: a list(type) attr gives the length")
        return ArgDef(name, type_list_attr=t)
    if t in type_attrs:
        return ArgDef(name, type_attr=t, number_attr=number)
    return ArgDef(name, dtype=dtypes.as_dtype(t), number_attr=number)


def parse_attr(spec: str) -> AttrDef:
    m = _ATTR_RE.match(spec)
    if not m:
        raise ValueError(f"bad attr spec {spec!r}")
    name, kind, minimum, default = m.groups()
    allowed: tuple[Any, ...] | None = None
    if kind.startswith("{"):
        items = [s.strip() for s in kind[1:-1].split(",") if s.strip()]
        if items and items[0][0] in "'\"":
            kind, allowed = "string", tuple(ast.literal_eval(s) for s in items)
        else:
            kind, allowed = "type", tuple(dtypes.as_dtype(s) for s in items)
    value: Any = _NO_DEFAULT
    if default is not None:
        value = dtypes.as_dtype(default) if kind == "type" else ast.literal_eval(default)
        if kind == "list(type)":
            value = tuple(dtypes.as_dtype(v) for v in value)
    return AttrDef(
        name,
        kind,
        allowed,
        None if minimum is None else int(minimum),
        value,
        spec.strip(),
    )


def group_listed_inputs(
    op_def: OpDef,
    attrs: Mapping[str, Any],
    data: list[Any],
    fail: Callable[[str], Any],
    source: str,
) -> list[Any]:
    """The data inputs a graph file lists for a node, grouped by the op's inputs (a list for a
    list input, whose length its attr gives); ``fail`` is told what does not fit, before any
    list of a length the inputs cannot fill is made. ``source`` names the listing."""
    grouped: list[Any] = []
    it = iter(data)
    for arg in op_def.inputs:
        if not arg.is_list:
            grouped.append(next(it, None))
            continue
        n = arg.declared_count(attrs)
        if n is None:
            return fail(f"list input '{arg.name}' needs attr '{arg.length_attr}'")
        if n > len(data):
            return fail(
                f"attr '{arg.length_attr}' = {short_repr(n)} asks for more inputs than the "
                f"{source} lists ({len(data)})"
            )
        grouped.append([next(it, None) for _ in range(n)])
    flat = [x for g in grouped for x in (g if isinstance(g, list) else [g])]
    if None in flat or next(it, None) is not None:
        fail(f"{op_def.name} takes {len(flat)} data inputs here, the {source} lists {len(data)}")
    return grouped
