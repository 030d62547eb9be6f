"""TensorFlow SavedModels, loaded without TensorFlow: ``mg.saved_model.load``.

    loaded = mg.saved_model.load("export_dir")            # tags=("serve",)
    out = loaded.signatures["serving_default"](x=np.ones((2, 3), np.float32))  # {name: array}
    loaded.graph                                          # the mg.Graph

A SavedModel directory holds ``saved_model.pb`` (a ``SavedModel`` message: its MetaGraphDefs,
each a GraphDef with its function library, signatures and saver) and ``variables/`` (a
tensor bundle, read by :mod:`minigraph.tensor_bundle`). Loading picks the MetaGraphDef whose
tags are ``tags``, keeps the nodes its signatures need, finds each variable's checkpoint key
the way TensorFlow's loader restores it (the saver's restore function assigns
``RestoreV2``'s tensors to the variables' handles), and freezes every variable into a
constant of its saved value (:mod:`minigraph.freeze_variables`). The graph is then imported
like any frozen GraphDef, with TensorFlow's node names.

Errors are mg.errors naming the file: a missing directory or file NotFoundError, a
malformed or truncated ``saved_model.pb`` DataLossError, corrupt variables DataLossError,
a model minigraph cannot run UnimplementedError.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import errors
from .graph import Graph, Output
from .shapes import TensorShape

__all__ = [
    "load",
    "frozen_graph_def",
    "LoadedSavedModel",
    "Signature",
    "TensorInfo",
    "is_saved_model",
]

INIT_OP_SIGNATURE = "__saved_model_init_op"
_SAVED_MODEL_FILES = ("saved_model.pb", "saved_model.pbtxt")


@functools.lru_cache(maxsize=1)
def _saved_model_class() -> Any:
    """The ``SavedModel`` message (tensorflow/core/protobuf/saved_model.proto) over
    tensorboard's MetaGraphDef, built from its two fields: tensorboard does not ship it."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    from .tf_proto import protos

    protos()
    import tensorboard.compat.proto.meta_graph_pb2  # noqa: F401  (registers MetaGraphDef)

    name = "minigraph/tf/saved_model.proto"
    pool = descriptor_pool.Default()
    try:
        fd = pool.FindFileByName(name)
    except KeyError:
        f = descriptor_pb2.FileDescriptorProto(name=name, package="minigraph.tf", syntax="proto3")
        f.dependency.append("tensorboard/compat/proto/meta_graph.proto")
        fdp = descriptor_pb2.FieldDescriptorProto
        msg = f.message_type.add(name="SavedModel")
        msg.field.add(
            name="saved_model_schema_version",
            number=1,
            type=fdp.TYPE_INT64,
            label=fdp.LABEL_OPTIONAL,
        )
        msg.field.add(
            name="meta_graphs",
            number=2,
            type=fdp.TYPE_MESSAGE,
            label=fdp.LABEL_REPEATED,
            type_name=".tensorboard.MetaGraphDef",
        )
        fd = pool.AddSerializedFile(f.SerializeToString())
    return message_factory.GetMessageClass(fd.message_types_by_name["SavedModel"])


def is_saved_model(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a SavedModel directory (it holds saved_model.pb or .pbtxt)."""
    return os.path.isdir(path) and any(
        os.path.isfile(os.path.join(path, f)) for f in _SAVED_MODEL_FILES
    )


@dataclass(frozen=True)
class TensorInfo:
    """One input or output of a signature: its name there, dtype, shape and the graph
    tensor behind it."""

    name: str
    dtype: Any
    shape: TensorShape
    tensor: Output

    def __repr__(self) -> str:
        return f"TensorInfo({self.name!r}, {self.dtype.name}, {self.shape}, {self.tensor.name!r})"


class Signature:
    """A signature of a loaded SavedModel, called as TensorFlow's:
    ``sig(**{input_name: array})`` returns ``{output_name: np.ndarray}``.

    Every input must be given, by name; a NumPy array must have the input's dtype (Python
    values are converted to it) and a shape compatible with the input's. Calls are
    thread-safe (one Session, made on the first call, runs them all).
    """

    def __init__(
        self,
        name: str,
        model: LoadedSavedModel,
        inputs: list[TensorInfo],
        outputs: list[TensorInfo],
    ) -> None:
        self.name = name
        self._model = model
        self.inputs = {t.name: t for t in inputs}
        self.outputs = {t.name: t for t in outputs}

    @property
    def structured_input_signature(self) -> tuple[tuple[()], dict[str, TensorInfo]]:
        return (), dict(self.inputs)

    @property
    def structured_outputs(self) -> dict[str, TensorInfo]:
        return dict(self.outputs)

    def __repr__(self) -> str:
        ins = ", ".join(f"{k}: {v.dtype.name}{v.shape}" for k, v in self.inputs.items())
        return f"<Signature {self.name}({ins}) -> {sorted(self.outputs)}>"

    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, np.ndarray]:
        if args:
            raise errors.InvalidArgumentError(
                f"signature {self.name} takes its inputs by name ({', '.join(self.inputs)}), "
                f"got {len(args)} positional argument(s)"
            )
        feeds = {}
        for key, value in kwargs.items():
            info = self.inputs.get(key)
            if info is None:
                raise errors.InvalidArgumentError(
                    f"signature {self.name} has no input {key!r}; its inputs: "
                    f"{', '.join(sorted(self.inputs)) or 'none'}"
                )
            feeds[info.tensor] = _check_feed(self.name, info, value)
        missing = sorted(set(self.inputs) - set(kwargs))
        if missing:
            raise errors.InvalidArgumentError(
                f"signature {self.name} needs input(s) {', '.join(missing)} (given: "
                f"{', '.join(sorted(kwargs)) or 'none'})"
            )
        fetches = {k: v.tensor for k, v in self.outputs.items()}
        return dict(self._model.session().run(fetches, feeds))


def _check_feed(signature: str, info: TensorInfo, value: Any) -> np.ndarray:
    want = info.dtype.as_numpy_dtype
    where = f"signature {signature}: input {info.name!r}"
    if isinstance(value, np.ndarray | np.generic):
        arr = np.asarray(value)
        if arr.dtype != want:
            raise errors.InvalidArgumentError(
                f"{where} must be {info.dtype.name}, got a {arr.dtype} array"
            )
    else:
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError) as e:
            raise errors.InvalidArgumentError(
                f"{where}: cannot convert to an array ({e})"
            ) from None
        if arr.dtype == object or not np.can_cast(arr.dtype, want, "same_kind"):
            raise errors.InvalidArgumentError(
                f"{where} must be {info.dtype.name}, got {errors.short_repr(value)} ({arr.dtype})"
            )
        arr = arr.astype(want)
    if not TensorShape(list(arr.shape)).is_compatible_with(info.shape):
        raise errors.InvalidArgumentError(
            f"{where} must have shape {info.shape}, got {list(arr.shape)}"
        )
    return arr


class LoadedSavedModel:
    """What :func:`load` returns: ``graph`` (the mg.Graph, variables frozen into constants),
    ``signatures`` (name -> :class:`Signature`), ``tags`` and ``export_dir``."""

    def __init__(self, export_dir: str, tags: tuple[str, ...], graph: Graph) -> None:
        self.export_dir = export_dir
        self.tags = tags
        self.graph = graph
        self.signatures: dict[str, Signature] = {}
        self._session: Any = None

    def session(self) -> Any:
        """The Session that runs the signatures (made on first use)."""
        if self._session is None:
            from .session import Session

            self._session = Session(self.graph)
        return self._session

    def __repr__(self) -> str:
        sigs = sorted(self.signatures)
        return f"<LoadedSavedModel {self.export_dir!r} tags={list(self.tags)} signatures={sigs}>"


# -- reading -------------------------------------------------------------------------------


def _read_saved_model(export_dir: str) -> tuple[Any, str]:
    if not os.path.isdir(export_dir):
        what = "is not a directory" if os.path.exists(export_dir) else "does not exist"
        raise errors.NotFoundError(f"SavedModel directory {export_dir} {what}")
    for name in _SAVED_MODEL_FILES:
        path = os.path.join(export_dir, name)
        if os.path.isfile(path):
            break
    else:
        raise errors.NotFoundError(
            f"SavedModel file does not exist at: {export_dir}/{{saved_model.pbtxt|saved_model.pb}}"
        )
    from .graph_def import MAX_GRAPH_DEF_BYTES

    try:
        if os.path.getsize(path) > MAX_GRAPH_DEF_BYTES:
            raise errors.InvalidArgumentError(f"{path} is larger than protobuf's 2 GiB limit")
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise errors.NotFoundError(f"cannot read {path}: {e.strerror}") from None
    sm = _saved_model_class()()
    try:
        if path.endswith(".pbtxt"):
            from google.protobuf import text_format

            text_format.Parse(data.decode("utf-8"), sm)
        else:
            sm.ParseFromString(data)
    except Exception as e:  # DecodeError, ParseError, UnicodeDecodeError
        raise errors.DataLossError(
            f"{path} is not a valid SavedModel (truncated or corrupt: {type(e).__name__}: "
            f"{errors.short_repr(str(e), 200)})"
        ) from None
    if not len(sm.meta_graphs):
        raise errors.DataLossError(f"{path} holds no MetaGraphDef (truncated or not a SavedModel)")
    return sm, path


def _meta_graph(sm: Any, tags: tuple[str, ...] | None, path: str) -> Any:
    found = [tuple(m.meta_info_def.tags) for m in sm.meta_graphs]
    for meta, have in zip(sm.meta_graphs, found):
        if tags is None and len(found) == 1 or tags is not None and set(have) == set(tags):
            return meta
    raise errors.NotFoundError(
        f"{path}: no MetaGraphDef with tags {list(tags or [])} (it has "
        + "; ".join(str(list(t)) for t in found)
        + "); pass one of those as tags="
    )


def _tensor_info(info: Any, where: str) -> tuple[str, str]:
    """(graph tensor name, its node) of a dense TensorInfo."""
    kind = info.WhichOneof("encoding")
    if kind != "name":
        raise errors.UnimplementedError(
            f"{where} is a {kind or 'nameless'} tensor; minigraph runs dense tensors only"
        )
    name = info.name if ":" in info.name else f"{info.name}:0"
    return name, name.rsplit(":", 1)[0]


def _prune(gd: Any, outputs: Iterable[str]) -> list[Any]:
    """The nodes of ``gd`` that ``outputs`` (node names) need, in GraphDef order."""
    by_name = {n.name: n for n in gd.node}
    need: set[str] = set()
    stack = [o for o in outputs if o in by_name]
    while stack:
        name = stack.pop()
        if name in need:
            continue
        need.add(name)
        for ref in by_name[name].input:
            src = ref.lstrip("^").split(":")[0]
            if src in by_name:
                stack.append(src)
    return [n for n in gd.node if n.name in need]


# -- which checkpoint key restores which variable --------------------------------------------


def _variable_keys(meta: Any, path: str) -> dict[str, str]:
    """VarHandleOp name -> checkpoint key, read from the saver's restore op the way
    TensorFlow's loader runs it: each AssignVariableOp there writes a handle with one of
    RestoreV2's tensors, whose key is in RestoreV2's ``tensor_names`` constant."""
    gd = meta.graph_def
    main = {n.name: n for n in gd.node}
    restore = main.get(meta.saver_def.restore_op_name.split(":")[0])
    keys: dict[str, str] = {}
    if restore is None:
        return keys
    bodies: list[tuple[dict[str, Any], dict[str, str]]] = [(main, {})]
    if restore.op in ("PartitionedCall", "StatefulPartitionedCall"):
        fname = restore.attr["f"].func.name
        fdef = next((f for f in gd.library.function if f.signature.name == fname), None)
        if fdef is not None:
            args = {
                a.name: restore.input[i].split(":")[0]
                for i, a in enumerate(fdef.signature.input_arg)
                if i < len(restore.input)
            }
            bodies.insert(0, ({n.name: n for n in fdef.node_def}, args))
    for nodes, args in bodies:
        for node in nodes.values():
            if node.op != "AssignVariableOp" or len(node.input) < 2:
                continue
            target = _through_identity(nodes, node.input[0])
            handle = args.get(target[0], target[0]) if target else None
            source = _through_identity(nodes, node.input[1])
            restore_v2 = nodes.get(source[0]) if source else None
            if handle is None or restore_v2 is None or restore_v2.op != "RestoreV2":
                continue
            key = _restore_key(nodes, restore_v2, source[1], path)  # type: ignore[index]
            if (
                key is not None
                and main.get(handle) is not None
                and main[handle].op == "VarHandleOp"
            ):
                keys.setdefault(handle, key)
    return keys


def _through_identity(nodes: Mapping[str, Any], ref: str) -> tuple[str, int] | None:
    """(node, output index) that ``ref`` reads, looking through Identity nodes."""
    for _ in range(len(nodes) + 1):
        parts = ref.lstrip("^").split(":")
        name = parts[0]
        index = int(parts[-1]) if len(parts) > 1 and parts[-1].isdigit() else 0
        node = nodes.get(name)
        if node is None or node.op != "Identity" or not node.input:
            return name, index
        ref = node.input[0]
    return None


def _restore_key(nodes: Mapping[str, Any], restore: Any, index: int, path: str) -> str | None:
    names = _through_identity(nodes, restore.input[1]) if len(restore.input) > 2 else None
    slices = _through_identity(nodes, restore.input[2]) if len(restore.input) > 2 else None
    if names is None or nodes.get(names[0]) is None or nodes[names[0]].op != "Const":
        return None
    values = list(nodes[names[0]].attr["value"].tensor.string_val)
    if index >= len(values):
        return None
    if slices is not None and nodes.get(slices[0]) is not None:
        specs = list(nodes[slices[0]].attr["value"].tensor.string_val)
        if index < len(specs) and specs[index]:
            raise errors.UnimplementedError(
                f"{path}: variable {values[index].decode('utf-8', 'replace')!r} is saved in "
                "slices (a partitioned variable), which minigraph does not restore"
            )
    return values[index].decode("utf-8", "replace")


def _variable_values(export_dir: str, meta: Any, handles: list[Any], path: str) -> dict[str, Any]:
    """The saved value of each VarHandleOp in ``handles``, checked against its dtype/shape."""
    if not handles:
        return {}
    from .tensor_bundle import BundleReader
    from .tf_proto import Fail, _enum_to_dtype, _shape_from_proto, protos

    keys = _variable_keys(meta, path)
    reader = BundleReader(os.path.join(export_dir, "variables", "variables"))
    p = protos()
    values = {}
    for node in handles:
        key = keys.get(node.name)
        if key is None:
            raise errors.NotFoundError(
                f"{path}: variable {node.name} is not restored by the SavedModel's saver, so "
                "its value is unknown",
                node.name,
                node.op,
            )
        value = reader.tensor(key)
        fail = Fail(node.name, node.op)
        dtype = _enum_to_dtype(p, node.attr["dtype"].type, fail, "attr 'dtype'")
        shape = _shape_from_proto(node.attr["shape"].shape, fail, "attr 'shape'")
        if value.dtype != dtype.as_numpy_dtype or not TensorShape(
            list(value.shape)
        ).is_compatible_with(shape):
            raise errors.DataLossError(
                f"{reader.index_path}: {key!r} is {value.dtype}{list(value.shape)}, but "
                f"variable {node.name} is {dtype.name}{shape}",
                node.name,
                node.op,
            )
        values[node.name] = value
    return values


# -- load --------------------------------------------------------------------------------


_Wanted = dict[str, tuple[list[tuple[str, Any, str]], list[tuple[str, Any, str]]]]


def frozen_graph_def(
    export_dir: str | os.PathLike, tags: str | Iterable[str] | None = ("serve",)
) -> tuple[Any, _Wanted, tuple[str, ...]]:
    """The SavedModel's GraphDef as :func:`load` imports it (the nodes its signatures need,
    variables frozen, the functions they call), each signature's (name, TensorInfo, tensor)
    inputs and outputs, and the MetaGraphDef's tags. ``minigraph check`` reads it."""
    from .freeze_variables import freeze
    from .tf_proto import protos

    export_dir = os.fsdecode(os.fspath(export_dir))
    tag_tuple = None if tags is None else ((tags,) if isinstance(tags, str) else tuple(tags))
    p = protos()
    sm, path = _read_saved_model(export_dir)
    meta = _meta_graph(sm, tag_tuple, path)
    signatures = {k: v for k, v in meta.signature_def.items() if k != INIT_OP_SIGNATURE}
    wanted: _Wanted = {}
    known = {n.name for n in meta.graph_def.node}
    outputs: list[str] = []
    for sig_name in sorted(signatures):
        sig = signatures[sig_name]
        sides: tuple[list[tuple[str, Any, str]], list[tuple[str, Any, str]]] = ([], [])
        for side, infos, what in (
            (sides[0], sig.inputs, "input"),
            (sides[1], sig.outputs, "output"),
        ):
            for key in sorted(infos):
                where = f"{path}: signature {sig_name} {what} {key!r}"
                tensor, node = _tensor_info(infos[key], where)
                if node not in known:
                    raise errors.DataLossError(f"{where} is tensor {tensor}, not in its graph")
                side.append((key, infos[key], tensor))
                outputs.append(node)
        wanted[sig_name] = sides
    pruned = p.graph_pb2.GraphDef()
    pruned.versions.CopyFrom(meta.graph_def.versions)
    pruned.node.extend(_prune(meta.graph_def, outputs))
    pruned.library.CopyFrom(meta.graph_def.library)
    handles = [n for n in pruned.node if n.op == "VarHandleOp"]
    frozen = freeze(p, pruned, _variable_values(export_dir, meta, handles, path))
    return frozen, wanted, tag_tuple or tuple(meta.meta_info_def.tags)


def load(
    export_dir: str | os.PathLike,
    tags: str | Iterable[str] | None = ("serve",),
    allow_unsupported: bool = False,
) -> LoadedSavedModel:
    """Load the SavedModel at ``export_dir`` (its MetaGraphDef tagged ``tags``), its
    variables frozen into constants, as ``tf.saved_model.load``.

    Returns a :class:`LoadedSavedModel`: ``.graph`` and ``.signatures[name](**inputs)``.
    ``tags=None`` takes the only MetaGraphDef there is. ``allow_unsupported`` keeps the
    nodes of op types minigraph lacks, as ``import_graph_def``'s: a signature that needs
    one raises UnimplementedError when called, the others run.
    """
    from .graph_def import import_graph_def
    from .tf_proto import protos

    frozen, wanted, found_tags = frozen_graph_def(export_dir, tags)
    p = protos()
    graph = Graph()
    with graph.as_default():
        import_graph_def(frozen, name="", allow_unsupported=allow_unsupported)
    loaded = LoadedSavedModel(os.fsdecode(os.fspath(export_dir)), found_tags, graph)
    for sig_name, (ins, outs) in wanted.items():
        loaded.signatures[sig_name] = Signature(
            sig_name,
            loaded,
            [_info(p, graph, key, info, tensor) for key, info, tensor in ins],
            [_info(p, graph, key, info, tensor) for key, info, tensor in outs],
        )
    return loaded


def _info(p: Any, graph: Graph, key: str, info: Any, tensor: str) -> TensorInfo:
    from .tf_proto import Fail, _enum_to_dtype, _shape_from_proto

    fail = Fail(tensor.rsplit(":", 1)[0])
    dtype = _enum_to_dtype(p, info.dtype, fail, f"signature tensor {key!r}")
    shape = _shape_from_proto(info.tensor_shape, fail, f"signature tensor {key!r}")
    return TensorInfo(key, dtype, shape, graph.get_tensor_by_name(tensor))
