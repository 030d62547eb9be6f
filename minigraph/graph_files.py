"""The files the ``minigraph`` command is handed: graph files, and what is mistaken for one.

A graph file is minigraph's JSON (``Graph.to_json()``), a TensorFlow GraphDef (``.pb``
binary, ``.pbtxt`` text) or a SavedModel directory (or the ``saved_model.pb`` in it), whose
serving signature names the inputs and outputs (:func:`signature_of`). Users also hand the
command what Keras saves: a ``.keras`` or ``.h5`` model; those, and a SavedModel's graph
apart from its directory, are recognised (by name, and by their first bytes when renamed)
and refused with what to do, rather than parsed and reported as a decoding error.
Each problem is a :class:`CommandError` (or an mg.errors.OpError from the parsers) whose
message the command prints as one line.
"""

from __future__ import annotations

import json
import weakref
from pathlib import Path
from typing import Any

from . import errors
from .op_kinds import unsupported_kind

__all__ = [
    "CommandError",
    "load_graph",
    "op_rows",
    "signature_of",
    "unsupported_kind",
    "SAVED_MODEL_HINT",
]


class CommandError(Exception):
    """A problem with the command's inputs, reported without a traceback."""


TF_SUFFIXES = (".pb", ".pbtxt")
_GRAPH_KINDS = (
    "minigraph reads .json graph files, TensorFlow GraphDefs .pb / .pbtxt and SavedModel "
    "directories"
)
SAVED_MODEL_HINT = (
    "a SavedModel apart from its directory: give minigraph the directory that holds "
    'saved_model.pb and variables/ (docs/tensorflow.md, "SavedModel")'
)
# The signature the command runs, of each graph loaded from a SavedModel.
_SIGNATURES: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
KERAS_HINT = (
    "a Keras model file, not a graph: see docs/tensorflow.md (freeze the model into a "
    "GraphDef .pb with TensorFlow, then give minigraph that file)"
)
# Formats recognised by suffix alone: what the file is, said in the error.
OTHER_FORMATS = {
    ".keras": KERAS_HINT,
    ".h5": KERAS_HINT,
    ".hdf5": KERAS_HINT,
    ".onnx": "an ONNX model: minigraph reads TensorFlow GraphDefs (.pb, .pbtxt) and its own .json",
    ".tflite": "a TensorFlow Lite model: minigraph reads GraphDefs (.pb, .pbtxt) and its own .json",
}
ZIP_MAGIC = b"PK\x03\x04"  # a .keras file is a zip archive
HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
# A SavedModel proto starts with saved_model_schema_version = 1 (field 1, varint) and then
# its first MetaGraphDef (field 2); a GraphDef never starts with a varint field 1.
SAVED_MODEL_MAGIC = b"\x08\x01\x12"


def _head(path: Path, n: int = 8) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(n)
    except OSError:
        return b""


def _saved_model_dir(path: Path) -> Path | None:
    """The SavedModel directory ``path`` names (the directory, or its saved_model.pb)."""
    from .saved_model import is_saved_model

    if path.is_dir():
        return path if is_saved_model(path) else None
    if path.name in ("saved_model.pb", "saved_model.pbtxt") and path.is_file():
        return path.parent
    return None


def _refuse_non_graphs(path: Path) -> None:
    """A CommandError when ``path`` is missing or is something other than a graph file."""
    if _saved_model_dir(path) is not None:
        return
    if path.is_dir():
        raise CommandError(f"{path} is a directory, not a graph file ({_GRAPH_KINDS})")
    if not path.is_file():
        raise CommandError(f"cannot read graph file {path}: No such file")
    if path.name.lower() in ("saved_model.pb", "saved_model.pbtxt"):
        raise CommandError(f"{path} is the graph of {SAVED_MODEL_HINT}")
    hint = OTHER_FORMATS.get(path.suffix.lower())
    if hint:
        raise CommandError(f"{path} is {hint}")
    head = _head(path)
    if head.startswith((ZIP_MAGIC, HDF5_MAGIC)):
        raise CommandError(f"{path} is {KERAS_HINT} (its bytes are a zip or HDF5 file)")
    if path.suffix.lower() == ".pb" and head.startswith(SAVED_MODEL_MAGIC):
        raise CommandError(f"{path} is the graph of {SAVED_MODEL_HINT} (judged by its bytes)")
    if not head:  # said before parsing, which for a GraphDef needs the tensorboard extra
        raise _empty(path)


def _is_graph_def(path: Path) -> bool:
    return path.suffix.lower() in TF_SUFFIXES


def _json_document(path: Path) -> dict[str, Any]:
    """A JSON graph file's document, checked to be one (format, and a list of nodes)."""
    from .graph_io import FORMAT

    try:
        data = path.read_bytes()
    except OSError as e:
        raise CommandError(f"cannot read graph file {path}: {e.strerror}") from None
    if not data.strip():
        raise CommandError(f"{path} is empty: not a graph file ({_GRAPH_KINDS})")
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as e:
        msg = errors.short_repr(str(e), 200)
        raise CommandError(f"{path}: graph file: not valid JSON ({msg}; {_GRAPH_KINDS})") from None
    what = None
    if not isinstance(doc, dict):
        what = f"its top level is a JSON {type(doc).__name__}, not an object"
    elif doc.get("format") != FORMAT:
        keys = ", ".join(errors.short_repr(k, 40) for k in list(doc)[:8]) or "none"
        what = f'it has no "format": "{FORMAT}" (its keys: {keys})'
    elif not isinstance(doc.get("nodes"), list):
        what = 'its "nodes" is not a list'
    if what:
        raise CommandError(
            f"{path} is not a minigraph graph file: {what}; a graph file is what "
            "Graph.to_json() writes"
        )
    return doc


def _empty(path: Path) -> CommandError:
    kind = "GraphDef" if _is_graph_def(path) else "graph file"
    size = path.stat().st_size
    return CommandError(
        f"{path} is an empty {kind}: it holds no nodes"
        + (" (the file is 0 bytes)" if size == 0 else "")
    )


def load_graph(name: str, allow_unsupported: bool = False) -> Any:
    """The mg.Graph of a graph file (a GraphDef imported with TensorFlow's node names);
    ``allow_unsupported`` keeps the nodes of op types minigraph lacks (minigraph.opaque)."""
    from .graph import Graph

    path = Path(name)
    _refuse_non_graphs(path)
    export_dir = _saved_model_dir(path)
    if export_dir is not None:
        from .saved_model import load

        tags = None if _one_meta_graph(export_dir) else ("serve",)
        loaded = load(export_dir, tags=tags, allow_unsupported=allow_unsupported)
        if not loaded.signatures:
            raise CommandError(f"{export_dir}: the SavedModel has no signature to run")
        _SIGNATURES[loaded.graph] = loaded.signatures.get("serving_default") or next(
            iter(loaded.signatures.values())
        )
        return loaded.graph
    if _is_graph_def(path):
        from .graph_def import import_graph_def

        graph = Graph()
        with graph.as_default():
            import_graph_def(str(path), name="", allow_unsupported=allow_unsupported)
    else:
        from .graph_io import graph_from_dict

        graph = graph_from_dict(_json_document(path))
    if not len(graph):
        raise _empty(path)
    return graph


def signature_of(graph: Any) -> Any:
    """The signature (minigraph.saved_model.Signature) the command runs of a graph that
    :func:`load_graph` read from a SavedModel (serving_default), else None."""
    return _SIGNATURES.get(graph)


def _one_meta_graph(export_dir: Path) -> bool:
    """Whether the SavedModel has one MetaGraphDef (then the command takes it, whatever
    its tags); with several, it takes the one tagged "serve"."""
    from .saved_model import _read_saved_model

    return len(_read_saved_model(str(export_dir))[0].meta_graphs) == 1


def _saved_model_graph_def(export_dir: Path) -> Any:
    """A SavedModel's frozen GraphDef, as load_graph would import it (for check)."""
    from .saved_model import frozen_graph_def

    tags = None if _one_meta_graph(export_dir) else ("serve",)
    graph_def, signatures, _ = frozen_graph_def(export_dir, tags)
    if not signatures:
        raise CommandError(f"{export_dir}: the SavedModel has no signature to run")
    return graph_def


def op_rows(name: str) -> list[tuple[str, int, bool, str]]:
    """(op, count, supported, first node) per op type of a graph file, in first-use order,
    read without building the graph (so a graph minigraph cannot run can be checked)."""
    from .graph_def import op_support, unsupported_reason

    path = Path(name)
    _refuse_non_graphs(path)
    export_dir = _saved_model_dir(path)
    if export_dir is not None:
        rows = op_support(_saved_model_graph_def(export_dir))
    elif _is_graph_def(path):
        rows = op_support(str(path))
    else:
        rows = []
        seen: dict[str, int] = {}
        for i, node in enumerate(_json_document(path)["nodes"]):
            if not (
                isinstance(node, dict)
                and isinstance(node.get("name"), str)
                and isinstance(node.get("op"), str)
            ):
                raise CommandError(
                    f'{path} is not a minigraph graph file: node {i} has no string "name" and "op"'
                )
            op = node["op"]
            if op in seen:
                row = rows[seen[op]]
                rows[seen[op]] = (op, row[1] + 1, row[2], row[3])
            else:
                seen[op] = len(rows)
                rows.append((op, 1, unsupported_reason(op) is None, node["name"]))
    if not rows:
        raise _empty(path)
    return rows


def functions_line(name: str) -> str | None:
    """For ``check``: the functions a GraphDef file's library holds (its calls and loops run
    them; their ops are in the table), or None for a graph without any."""
    from .graph_def import library_functions

    path = Path(name)
    export_dir = _saved_model_dir(path)
    if export_dir is not None:
        names = library_functions(_saved_model_graph_def(export_dir))
    elif not _is_graph_def(path):
        return None
    else:
        names = library_functions(str(path))
    if not names:
        return None
    shown = ", ".join(names[:6]) + (f", ... ({len(names) - 6} more)" if len(names) > 6 else "")
    return f"functions: {len(names)} in the library, run by its calls and loops: {shown}"
