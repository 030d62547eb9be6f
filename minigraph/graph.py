"""The graph: nodes and data/control edges in a networkx MultiDiGraph.

:class:`Node` holds what a node is (op, attrs, inputs, inferred output specs);
:class:`Operation` and :class:`Output` are small immutable handles on it, as in
TensorFlow's C++ API. Nodes are only ever added with inputs that already exist,
so a graph can never hold a cycle.

Thread-safety: building a graph from several threads at once is not supported;
running it from several threads is (see Session).
"""

from __future__ import annotations

import contextlib
import difflib
import itertools
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np

from . import errors, shapes
from .dtypes import DType
from .inference import InferenceContext, TensorSpec
from .kernel import KernelContext
from .op_def import OpDef

if TYPE_CHECKING:
    pass

__all__ = ["Graph", "Node", "Operation", "Output"]

# Values of at most this many elements are folded at build time so that shape
# functions can see them (e.g. ``reshape(x, shape(y))``).
CONSTANT_FOLD_LIMIT = 1024
# Names longer than this get no "did you mean" suggestion (difflib's cost grows with length
# squared; a hostile graph file may hold megabyte names).
MAX_SUGGESTED_NAME = 256


class Node:
    """One node: its op, attrs, inputs, device request and inferred output specs."""

    __slots__ = (
        "name",
        "op_def",
        "_attrs",
        "inputs",
        "input_lengths",
        "control_inputs",
        "requested_device",
        "assigned_device",
        "output_specs",
        "id",
        "graph",
        "__weakref__",
    )

    def __init__(
        self,
        graph: Graph,
        name: str,
        op_def: OpDef,
        attrs: dict[str, Any],
        inputs: tuple[Output, ...],
        input_lengths: tuple[int | None, ...],
        control_inputs: tuple[Node, ...],
        requested_device: str,
        node_id: int,
    ) -> None:
        self.graph = graph
        self.name = name
        self.op_def = op_def
        self._attrs = MappingProxyType(attrs)
        self.inputs = inputs
        self.input_lengths = input_lengths
        self.control_inputs = control_inputs
        self.requested_device = requested_device
        self.assigned_device = ""
        self.output_specs: tuple[TensorSpec, ...] = ()
        self.id = node_id

    @property
    def type_string(self) -> str:
        return self.op_def.name

    @property
    def attrs(self) -> Mapping[str, Any]:
        return self._attrs

    @property
    def num_inputs(self) -> int:
        return len(self.inputs)

    @property
    def num_outputs(self) -> int:
        return len(self.output_specs)

    @property
    def in_edges(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(source, this node, edge data) for every data and control edge into this node."""
        return [(u, v, d) for u, v, d in self.graph._nx.in_edges(self.name, data=True)]

    @property
    def out_edges(self) -> list[tuple[str, str, dict[str, Any]]]:
        return [(u, v, d) for u, v, d in self.graph._nx.out_edges(self.name, data=True)]

    def grouped_inputs(self) -> list[Any]:
        """Inputs as the op declares them: an Output, or a list of Outputs for a list arg."""
        return group_inputs(self.inputs, self.input_lengths)

    def __repr__(self) -> str:
        return f"<Node {self.name!r} type={self.type_string}>"


def group_inputs(flat: Sequence[Any], lengths: Sequence[int | None]) -> list[Any]:
    """Regroup a flat input sequence by arg: one item, or a list for a list arg."""
    out: list[Any] = []
    it = iter(flat)
    for n in lengths:
        out.append(next(it) if n is None else [next(it) for _ in range(n)])
    return out


class Operation:
    """A handle on a node, as TensorFlow's C++ ``Operation``."""

    __slots__ = ("node",)

    def __init__(self, node: Node) -> None:
        self.node = node

    name = property(lambda self: self.node.name)
    type = property(lambda self: self.node.type_string)
    graph = property(lambda self: self.node.graph)
    num_outputs = property(lambda self: self.node.num_outputs)
    num_inputs = property(lambda self: self.node.num_inputs)
    device = property(lambda self: self.node.requested_device)

    @property
    def inputs(self) -> tuple[Output, ...]:
        return self.node.inputs

    @property
    def outputs(self) -> list[Output]:
        return [Output(self, i) for i in range(self.node.num_outputs)]

    def output(self, index: int) -> Output:
        if not 0 <= index < self.node.num_outputs:
            raise errors.OutOfRangeError(
                f"output index {index} out of range [0, {self.node.num_outputs})",
                self.name,
                self.type,
            )
        return Output(self, index)

    @property
    def control_inputs(self) -> list[Operation]:
        return [Operation(n) for n in self.node.control_inputs]

    def get_attr(self, name: str) -> Any:
        try:
            return self.node.attrs[name]
        except KeyError:
            raise errors.NotFoundError(f"no attr named {name!r}", self.name, self.type) from None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Operation) and other.node is self.node

    def __hash__(self) -> int:
        return hash(self.node)

    def __repr__(self) -> str:
        return f"<Operation {self.name!r} type={self.type}>"


class Output:
    """One output of an operation: ``Output(op, index)``, named ``"op:index"``.

    Outputs are immutable and hashable. Python operators build ops (``x + 1``,
    ``-x``, ``x[1:, None]``), except ``==``, which compares handles as in
    TensorFlow's graph mode.
    """

    __slots__ = ("op", "index", "_hash")
    # NumPy defers to the Output's reflected operator (``np_array + x`` is ``x.__radd__``,
    # one Add node), as for TensorFlow's tensors, instead of an object array of one op per
    # element.
    __array_ufunc__ = None
    op: Operation
    index: int
    _hash: int

    def __init__(self, op: Operation, index: int = 0) -> None:
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "index", index)
        # As (op, index): an Operation hashes its node. Kept, since a run hashes its fetches.
        object.__setattr__(self, "_hash", hash((op.node, index)))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Output is immutable")

    @property
    def node(self) -> Node:
        return self.op.node

    @property
    def graph(self) -> Graph:
        return self.op.node.graph

    @property
    def name(self) -> str:
        return f"{self.op.node.name}:{self.index}"

    @property
    def spec(self) -> TensorSpec:
        return self.op.node.output_specs[self.index]

    @property
    def dtype(self) -> DType:
        return self.spec.dtype

    @property
    def shape(self) -> shapes.TensorShape:
        return self.spec.shape

    def get_shape(self) -> shapes.TensorShape:
        return self.spec.shape

    def consumers(self) -> list[Operation]:
        """Operations that take this output as a data input, in creation order."""
        g = self.graph._nx
        names = {
            v
            for _, v, d in g.out_edges(self.node.name, data=True)
            if d.get("src_output") == self.index
        }
        return [
            Operation(n) for n in sorted((g.nodes[v]["node"] for v in names), key=lambda n: n.id)
        ]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Output) and other.op == self.op and other.index == self.index

    def __hash__(self) -> int:
        return self._hash

    def __bool__(self) -> bool:
        raise TypeError(
            f"Using an Output ({self.name}) as a Python bool is not allowed: "
            "its value is known only when a Session runs it."
        )

    def __iter__(self) -> Iterator[Any]:
        raise TypeError(f"Output {self.name} is not iterable in a graph; index it instead.")

    def __repr__(self) -> str:
        return f"<Output {self.name!r} shape={self.shape} dtype={self.dtype.name}>"


def register_operator(method: str, fn: Callable[..., Any]) -> None:
    """Give Output a Python operator; ops/ calls this for + - * / < [] and friends."""
    setattr(Output, method, fn)


class Graph:
    """A dataflow graph: nodes with unique names in a networkx MultiDiGraph.

    Node names follow TensorFlow's rules: a name already in use gets ``_1``,
    ``_2``... appended, and scopes prefix names as ``outer/inner/name``.

    >>> import minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     a = mg.constant(1, name="a")
    ...     b = mg.constant(2, name="a")
    >>> a.name, b.name
    ('a:0', 'a_1:0')
    """

    def __init__(self) -> None:
        self._nx = nx.MultiDiGraph()
        self._names_in_use: dict[str, int] = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self.version = 0
        # Functions that call ops of this graph and of its bodies name: name -> Function
        # (minigraph.functions). Import fills it from a GraphDef's library; builders add to it.
        self.library: dict[str, Any] = {}
        # Named lists of Python objects, as TensorFlow's graph collections (its variables).
        self._collections: dict[str, list[Any]] = {}

    # -- collections ---------------------------------------------------------

    def add_to_collection(self, name: str, value: Any) -> None:
        """Append ``value`` to the collection ``name`` (``"variables"``, ...)."""
        with self._lock:
            self._collections.setdefault(name, []).append(value)

    def get_collection(self, name: str) -> list[Any]:
        """A copy of the collection ``name`` (empty if nothing was added)."""
        with self._lock:
            return list(self._collections.get(name, ()))

    # -- names ---------------------------------------------------------------

    def unique_name(self, name: str) -> str:
        """Reserve and return ``name``, or ``name_N`` for the first free N."""
        with self._lock:
            key = name.lower()
            i = self._names_in_use.get(key, 0)
            self._names_in_use[key] = i + 1
            if i == 0:
                return name
            base = key
            while key in self._names_in_use:
                key = f"{base}_{i}"
                i += 1
            self._names_in_use[key] = 1
            return f"{name}_{i - 1}"

    # -- building -----------------------------------------------------------

    def create_node(
        self,
        op_def: OpDef,
        name: str,
        inputs: Sequence[Any],
        attrs: dict[str, Any],
        *,
        device: str = "",
        control_inputs: Sequence[Node] = (),
    ) -> Node:
        """Add a node whose inputs (Outputs, or lists for list args) and attrs are final.

        Runs the shape function, then folds small integer constants so later
        shape functions can use their values. Raises InvalidArgumentError,
        naming the node, if either proves the graph wrong.
        """
        flat: list[Output] = []
        lengths: list[int | None] = []
        for arg, value in zip(op_def.inputs, inputs):
            if arg.is_list:
                flat.extend(value)
                lengths.append(len(value))
            else:
                flat.append(value)
                lengths.append(None)
        for x in flat:
            if x.graph is not self:
                raise errors.InvalidArgumentError(
                    f"input {x.name} is from a different graph", name, op_def.name
                )
        node = Node(
            self,
            name,
            op_def,
            attrs,
            tuple(flat),
            tuple(lengths),
            tuple(control_inputs),
            device,
            next(self._ids),
        )
        node.output_specs = _infer(node, inputs)
        self._add(node)
        return node

    def _add(self, node: Node) -> None:
        g = self._nx
        with self._lock:
            g.add_node(node.name, node=node)
            for i, x in enumerate(node.inputs):
                g.add_edge(x.node.name, node.name, src_output=x.index, dst_input=i, control=False)
            for c in node.control_inputs:
                g.add_edge(c.name, node.name, src_output=-1, dst_input=-1, control=True)
            self.version += 1

    # -- lookup --------------------------------------------------------------

    def nodes(self) -> list[Node]:
        """Every node, in creation order."""
        return [d["node"] for _, d in self._nx.nodes(data=True)]

    def get_operations(self) -> list[Operation]:
        return [Operation(n) for n in self.nodes()]

    def node(self, name: str) -> Node:
        try:
            return self._nx.nodes[name]["node"]
        except KeyError:
            raise errors.NotFoundError(
                f"The name '{name}' refers to an Operation not in the graph."
                + did_you_mean(nearest_names(name, self._nx.nodes))
            ) from None

    def get_operation_by_name(self, name: str) -> Operation:
        return Operation(self.node(name))

    def get_tensor_by_name(self, name: str) -> Output:
        op_name, sep, index = name.rpartition(":")
        if not sep or not index.isdigit():
            raise errors.InvalidArgumentError(
                f"The name '{name}' looks like an (invalid) Operation name, not a Tensor. "
                'Tensor names must be of the form "<op_name>:<output_index>".'
            )
        if op_name not in self._nx:  # suggest tensors, as the caller asked for one
            near = [self.node(n) for n in nearest_names(op_name, self._nx.nodes)]
            want = int(index) if index.isascii() else 0
            raise errors.NotFoundError(
                f"The name '{name}' refers to a Tensor which does not exist. "
                f"The operation, '{op_name}', does not exist in the graph."
                + did_you_mean([f"{n.name}:{want if want < n.num_outputs else 0}" for n in near])
            )
        node = self.node(op_name)
        i = int(index)
        if i >= node.num_outputs:
            raise errors.NotFoundError(
                f"The name '{name}' refers to a Tensor which does not exist. "
                f"The operation, '{op_name}', exists but only has {node.num_outputs} outputs."
            )
        return Output(Operation(node), i)

    def as_networkx(self) -> Any:
        """A read-only view of the underlying networkx MultiDiGraph."""
        return nx.graphviews.generic_graph_view(self._nx).copy(as_view=True)

    def to_dot(self) -> str:
        """The graph in Graphviz DOT: data edges labelled with dtype and shape, control dashed.
        Each function body that a node calls (While, If, PartitionedCall...) is drawn once,
        as a cluster of its own beside the graph, and each call points at it (dotted)."""
        lines = [
            "digraph minigraph {",
            "  compound=true;",
            "  node [shape=box, fontname=Helvetica];",
        ]
        lines += _dot_nodes(self, "")
        drawn: set[str] = set()
        pending = [(n.name, f) for n in self.nodes() for f in n.op_def.functions_in(n.attrs)]
        while pending:
            caller, fn = pending.pop(0)
            prefix = f"{fn.name}/"
            if fn.name not in drawn:
                drawn.add(fn.name)
                lines.append(f'  subgraph "cluster_{fn.name}" {{')
                lines.append(f'    label="{fn.name}"; style=rounded;')
                lines += ["  " + line for line in _dot_nodes(fn.graph, prefix)]
                lines.append("  }")
                pending += [
                    (prefix + n.name, f)
                    for n in fn.graph.nodes()
                    for f in n.op_def.functions_in(n.attrs)
                ]
            first = next(iter(fn.graph.nodes()), None)
            if first is not None:
                lines.append(
                    f'  "{caller}" -> "{prefix}{first.name}" '
                    f'[style=dotted, lhead="cluster_{fn.name}"];'
                )
        lines.append("}")
        return "\n".join(lines) + "\n"

    def to_json(self, indent: int | None = 1) -> str:
        """The graph as a GraphDef-like JSON document (see minigraph.graph_io)."""
        return _provided("to_json")(self, indent)

    @staticmethod
    def from_json(text: str | bytes) -> Graph:
        """Rebuild a graph from ``to_json`` output; never executes code from the file."""
        return _provided("from_json")(text)

    def as_graph_def(self) -> Any:
        """The graph as TensorFlow's GraphDef (a tensorboard.compat.proto message).

        Needs the ``tensorboard`` extra; see :mod:`minigraph.graph_def`.
        """
        return _provided("as_graph_def")(self)

    @contextlib.contextmanager
    def _undo_on_error(self) -> Iterator[None]:
        """Nodes added, names reserved and functions added to the library inside are taken
        back if the block raises."""
        with self._lock:
            names = dict(self._names_in_use)
            before = set(self._nx)
            library = dict(self.library)
        try:
            yield
        except BaseException:
            with self._lock:
                self._nx.remove_nodes_from([n for n in list(self._nx) if n not in before])
                self._names_in_use = names
                self.library.clear()
                self.library.update(library)
                self.version += 1
            raise

    def as_default(self) -> Any:
        """Context manager: builders inside it add nodes to this graph."""
        return _provided("as_default")(self)

    def __contains__(self, name: str) -> bool:
        return name in self._nx

    def __len__(self) -> int:
        return self._nx.number_of_nodes()


def nearest_names(name: str, names: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` of ``names`` closest to a misspelled ``name``, closest first.

    Names that differ only in case come first (names are case-sensitive, so ``X`` for
    ``x`` is a likely slip), then difflib's close matches ignoring case. Only called on
    the error path: it reads every name once.
    """
    if len(name) > MAX_SUGGESTED_NAME:  # difflib is quadratic in the name's length
        return []
    folded: dict[str, list[str]] = {}
    for candidate in names:
        if len(candidate) <= MAX_SUGGESTED_NAME:
            folded.setdefault(candidate.lower(), []).append(candidate)
    key = name.lower()
    out = [c for c in folded.get(key, []) if c != name]
    for match in difflib.get_close_matches(key, folded, n=n, cutoff=0.6):
        out += [c for c in folded[match] if c != name and c not in out]
    return out[:n]


def did_you_mean(names: Sequence[str]) -> str:
    """`` Did you mean 'a', 'b' or 'c'?`` for an error message, or "" when there is none."""
    if not names:
        return ""
    quoted = [f"'{n}'" for n in names]
    listed = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
    return f" Did you mean {listed}?"


# What higher layers provide to Graph's methods: the default-scope stack (minigraph.scope)
# and the file formats (graph_io, graph_def) import this module, so it imports none of them;
# each registers its part when it is imported (``import minigraph`` imports them all).
_PROVIDED: dict[str, Callable[..., Any]] = {}


def _dot_nodes(graph: Graph, prefix: str) -> list[str]:
    """DOT lines of ``graph``'s nodes and edges, node ids prefixed with ``prefix``."""
    lines = []
    for n in graph.nodes():
        lines.append(f'  "{prefix}{n.name}" [label="{n.name}\\n{n.type_string}"];')
    for u, v, d in graph._nx.edges(data=True):
        if d["control"]:
            lines.append(f'  "{prefix}{u}" -> "{prefix}{v}" [style=dashed];')
        else:
            src = graph.node(u)
            spec = src.output_specs[d["src_output"]]
            which = f"{d['src_output']}: " if src.num_outputs > 1 else ""
            lines.append(
                f'  "{prefix}{u}" -> "{prefix}{v}" [label="{which}{spec.dtype.name}{spec.shape}"];'
            )
    return lines


def provide(name: str, fn: Callable[..., Any]) -> None:
    """Register what ``Graph.<name>`` runs: ``as_default``, ``to_json``, ``from_json``,
    ``as_graph_def``."""
    _PROVIDED[name] = fn


def _provided(name: str) -> Callable[..., Any]:
    try:
        return _PROVIDED[name]
    except KeyError:
        raise RuntimeError(f"Graph.{name} needs `import minigraph` first") from None


def _infer(node: Node, grouped: Sequence[Any]) -> tuple[TensorSpec, ...]:
    """Run the node's shape function, give outputs their dtypes, fold small constants."""
    op_def = node.op_def
    attrs = dict(node.attrs)
    c = InferenceContext(attrs, node.name, op_def.name)
    specs = [[x.spec for x in v] if isinstance(v, list) else v.spec for v in grouped]
    try:
        result = op_def.shape_fn(c, *specs)
    except shapes.ShapeError as e:
        c.fail(str(e))
    out_dtypes: list[DType] = []
    for arg in op_def.outputs:
        out_dtypes.extend(arg.dtypes_in(attrs))
    single = isinstance(result, shapes.TensorShape | np.ndarray | TensorSpec)
    out_shapes = [result] if single else list(result)
    if len(out_shapes) != len(out_dtypes):
        raise errors.InternalError(
            f"shape function returned {len(out_shapes)} shapes for {len(out_dtypes)} outputs",
            node.name,
            op_def.name,
        )
    # A shape function may return a value it already knows (Shape of a known shape), or a
    # whole TensorSpec (a resource handle with its handle data).
    out = [
        TensorSpec(shapes.as_shape(s.shape), dt, _frozen(s, dt))
        if isinstance(s, np.ndarray)
        else TensorSpec(s.shape, dt, s.value, s.handle_data)
        if isinstance(s, TensorSpec)
        else TensorSpec(shapes.as_shape(s), dt)
        for s, dt in zip(out_shapes, out_dtypes)
    ]
    if any(s.value is not None for s in out):
        return tuple(out)
    values = _fold(node, out)
    if values is not None:
        out = [TensorSpec(s.shape, s.dtype, v) for s, v in zip(out, values)]
    return tuple(out)


def _fold(node: Node, out: list[TensorSpec]) -> list[np.ndarray] | None:
    """Values of a small integer/bool node whose inputs are all known, by its CPU kernel."""
    op_def = node.op_def
    if op_def.is_stateful or op_def.calls_functions or "CPU" not in op_def.kernels:
        return None  # a call runs when the graph does, never while it is built
    for s in out:
        n = s.shape.num_elements()
        if n is None or n > CONSTANT_FOLD_LIMIT or not (s.dtype.is_integer or s.dtype.is_bool):
            return None
    args = [x.spec.value for x in node.inputs]
    if any(v is None for v in args):
        return None
    ctx = KernelContext(dict(node.attrs), np, node.name, op_def.name)
    with np.errstate(all="ignore"):  # as in a run: kernels leave warnings to the runtime
        result = op_def.kernels["CPU"](ctx, *group_inputs(args, node.input_lengths))
    values = [result] if op_def.single_output else list(result)
    return [_frozen(v, s.dtype) for v, s in zip(values, out)]


def _frozen(value: Any, dtype: DType) -> np.ndarray:
    """A read-only array of ``dtype``; one already read-only (a Const's value) is not copied."""
    v = np.asarray(value, dtype=dtype.np)
    if v.flags.writeable:
        v = v.copy()
        v.flags.writeable = False
    return v
