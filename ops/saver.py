"""``mg.train.Saver``: variables to and from TensorFlow's V2 checkpoints, as
``tf.compat.v1.train.Saver`` writes and reads them.

A checkpoint with prefix ``P`` is a tensor bundle (``P.index`` and
``P.data-00000-of-00001``, minigraph/tensor_bundle.py) holding each variable under its name
without ``:0`` (``w``, ``w/Adam``, ``global_step``), and its folder's text file
``checkpoint`` lists the latest checkpoints (``model_checkpoint_path``,
``all_model_checkpoint_paths``), which ``latest_checkpoint`` reads. TensorFlow restores what
minigraph saves and the other way round.

The Saver adds its nodes to the graph when it is made (under ``save/``): a read of each
variable for ``save`` and, for ``restore``, a placeholder and an AssignVariableOp each and
one ``save/restore_all`` NoOp, so a restore is one run. Everything is checked before any
variable changes: a key missing from the checkpoint is NotFoundError, a dtype or shape that
does not match the variable InvalidArgumentError, both naming the variable. Needs the
``tensorboard`` extra (the bundle's protobuf messages), as reading a SavedModel does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minigraph import errors
from minigraph.graph import Operation, Output
from minigraph.ops.array_ops import placeholder
from minigraph.ops.variables import Variable, global_variables
from minigraph.scope import Scope, control_dependencies, current_scope, default_scope, name_scope
from minigraph.shapes import TensorShape
from minigraph.wrappers import apply_op

__all__ = [
    "Saver",
    "CheckpointState",
    "get_checkpoint_state",
    "latest_checkpoint",
    "list_variables",
    "load_variable",
]

STATE_FILE = "checkpoint"


class Saver:
    """Saves and restores variables (default: every global variable of the current graph).

    Args:
        var_list: a list of variables (each saved under its name without ``:0``) or a dict
            from checkpoint key to variable.
        max_to_keep: how many recent checkpoints ``save`` keeps; older ones are deleted
            (None or 0: none is deleted, and the state file lists only the latest).
        name: the name scope of its nodes (default ``save``).
        allow_empty: with no variables, a Saver that does nothing rather than ValueError.
        save_relative_paths: the state file names checkpoints relative to its folder.
        pad_step_number: ``P-00000042`` rather than ``P-42``.

    Example (docs/training.md runs one; the doctests run without the tensorboard extra)::

        saver = mg.train.Saver()                      # after building the variables
        prefix = saver.save(sess, "ckpt/model", global_step=step)   # "ckpt/model-<step>"
        saver.restore(sess, mg.train.latest_checkpoint("ckpt"))
    """

    def __init__(
        self,
        var_list: Sequence[Variable] | dict[str, Variable] | None = None,
        max_to_keep: int | None = 5,
        name: str | None = None,
        allow_empty: bool = False,
        save_relative_paths: bool = False,
        pad_step_number: bool = False,
    ) -> None:
        if var_list is None:
            var_list = global_variables()
        self._variables = _by_key(var_list)
        if not self._variables and not allow_empty:
            raise ValueError("No variables to save")
        self._max_to_keep = max_to_keep
        self._relative = save_relative_paths
        self._pad = pad_step_number
        self._last: list[str] = []
        self._reads: dict[str, Output] = {}
        self._feeds: dict[str, Output] = {}
        self._restore_op: Operation | None = None
        if self._variables:
            self._build(name or "save")

    def _build(self, name: str) -> None:
        graph = next(iter(self._variables.values())).graph
        outer = current_scope() if current_scope().graph is graph else Scope(graph)
        assigns = []
        with default_scope(outer.with_control_dependencies(None)), name_scope(name):
            for key, var in self._variables.items():
                self._reads[key] = var.value()
                value = placeholder(var.dtype, shape=var.shape, name="restore")
                self._feeds[key] = value
                assigns.append(apply_op("AssignVariableOp", None, [var.handle, value], {}))
            with control_dependencies(assigns):
                self._restore_op = apply_op(
                    "NoOp", current_scope().with_op_name("restore_all"), [], {}
                )

    @property
    def last_checkpoints(self) -> list[str]:
        """The checkpoints this Saver wrote and has not deleted, oldest first."""
        return list(self._last)

    def save(
        self,
        sess: Any,
        save_path: str | os.PathLike,
        global_step: Any = None,
        latest_filename: str | None = None,
        write_state: bool = True,
    ) -> str:
        """Write the variables' values in ``sess`` to the checkpoint ``save_path`` (with
        ``-<global_step>`` appended when given: an int, or a variable or tensor read in
        ``sess``); returns the checkpoint's prefix. Updates the folder's state file (named
        ``latest_filename``, default ``checkpoint``) and deletes checkpoints beyond
        ``max_to_keep``."""
        save_path = os.fspath(save_path)
        if global_step is not None:
            if not isinstance(global_step, int | np.integer):
                global_step = sess.run(global_step)
            step = int(global_step)
            save_path = f"{save_path}-{step:08d}" if self._pad else f"{save_path}-{step}"
        folder = os.path.dirname(save_path)
        if folder and not os.path.isdir(folder):
            raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.")
        if self._variables:
            from minigraph.tensor_bundle import BundleWriter

            values = sess.run(self._reads)
            writer = BundleWriter(save_path)
            for key in sorted(values):  # TensorFlow's order: its files, byte for byte
                writer.add(key, values[key])
            writer.finish()
        if write_state:
            self._remember(save_path)
            _write_state(folder, save_path, self._last, latest_filename, self._relative)
        return save_path

    def restore(self, sess: Any, save_path: str | os.PathLike | None) -> None:
        """Give the variables the values saved in the checkpoint ``save_path``."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        prefix = os.fspath(save_path)
        if not os.path.exists(f"{prefix}.index"):
            raise errors.NotFoundError(f"The passed save_path is not a valid checkpoint: {prefix}")
        if not self._variables:
            return
        from minigraph.tensor_bundle import BundleReader

        reader = BundleReader(prefix)
        feeds = {}
        for key, var in self._variables.items():
            value = _checked(reader, prefix, key, var)
            feeds[self._feeds[key]] = value
        sess.run(self._restore_op, feed_dict=feeds)

    def _remember(self, path: str) -> None:
        if path in self._last:
            self._last.remove(path)
        self._last.append(path)
        if not self._max_to_keep:
            self._last = self._last[-1:]  # nothing is deleted; only the latest is listed
            return
        while len(self._last) > self._max_to_keep:
            _delete(self._last.pop(0))


def _by_key(var_list: Sequence[Variable] | dict[str, Variable]) -> dict[str, Variable]:
    """Checkpoint key -> variable, checked."""
    if isinstance(var_list, dict):
        items = list(var_list.items())
    else:
        items = [(v.name[: -len(":0")] if isinstance(v, Variable) else "", v) for v in var_list]
    out: dict[str, Variable] = {}
    for key, var in items:
        if not isinstance(var, Variable):
            raise TypeError(f"Saver's var_list holds variables (mg.Variable), got {var!r}")
        if key in out:
            raise ValueError(f"At least two variables have the same name: {key}")
        out[key] = var
    return out


def _shape_text(dims: Sequence[Any]) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _checked(reader: Any, prefix: str, key: str, var: Variable) -> np.ndarray:
    """The saved value of ``key`` for ``var``: NotFoundError when the checkpoint lacks it,
    InvalidArgumentError when its dtype or shape is not the variable's."""
    from minigraph.tf_proto import Fail, _enum_to_dtype, _shape_from_proto, protos

    entry = reader.entries.get(key)
    if entry is None:
        raise errors.NotFoundError(
            f"Restoring from checkpoint failed: Key {key} not found in checkpoint {prefix} "
            f"(the variable {var.name})"
        )
    where = f"checkpoint {prefix}"
    dtype = _enum_to_dtype(protos(), entry.dtype, Fail(), where)
    if dtype != var.dtype:
        raise errors.InvalidArgumentError(
            f"Restoring from checkpoint failed: tensor_name = {key}; expected dtype "
            f"{var.dtype.name} does not equal original dtype {dtype.name} (the variable "
            f"{var.name})"
        )
    shape = _shape_from_proto(entry.shape, Fail(), where)
    if not var.shape.is_compatible_with(shape):
        raise errors.InvalidArgumentError(
            f"Restoring from checkpoint failed: tensor_name = {key}; shape in "
            f"shape_and_slice spec {_shape_text(var.shape.dims or [])} does not match the "
            f"shape stored in checkpoint: {_shape_text(shape.dims or [])} (the variable "
            f"{var.name})"
        )
    return reader.tensor(key)


def _delete(prefix: str) -> None:
    """Remove a checkpoint's files (its index, its data shards)."""
    folder, base = os.path.split(prefix)
    pattern = re.compile(re.escape(base) + r"(\.index|\.data-\d{5}-of-\d{5}|\.meta)$")
    for name in os.listdir(folder or "."):
        if pattern.fullmatch(name):
            try:
                os.remove(os.path.join(folder, name))
            except OSError:
                pass


# -- the state file ---------------------------------------------------------------------------


@dataclass
class CheckpointState:
    """What a folder's ``checkpoint`` file says (TensorFlow's CheckpointState)."""

    model_checkpoint_path: str = ""
    all_model_checkpoint_paths: list[str] = field(default_factory=list)


def _quote(text: str) -> str:
    """A protobuf text-format string: printable ASCII kept, the rest octal-escaped."""
    out = []
    for b in text.encode("utf-8"):
        c = chr(b)
        if c in '"\\':
            out.append("\\" + c)
        elif 32 <= b < 127:
            out.append(c)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def _unquote(text: str) -> str:
    body = text[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return body.encode("latin-1").decode("utf-8")


def _write_state(
    folder: str, latest: str, paths: list[str], filename: str | None, relative: bool
) -> None:
    def shown(path: str) -> str:
        if relative or (not os.path.isabs(folder) and not os.path.isabs(path)):
            return os.path.relpath(path, folder or ".")
        return path

    lines = [f"model_checkpoint_path: {_quote(shown(latest))}"]
    lines += [f"all_model_checkpoint_paths: {_quote(shown(p))}" for p in paths]
    path = os.path.join(folder, filename or STATE_FILE)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def get_checkpoint_state(
    checkpoint_dir: str | os.PathLike, latest_filename: str | None = None
) -> CheckpointState | None:
    """The folder's state file read (relative paths made relative to the folder), or None
    when it has none."""
    folder = os.fspath(checkpoint_dir)
    path = os.path.join(folder, latest_filename or STATE_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    state = CheckpointState()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        m = re.fullmatch(r'\s*(\w+)\s*:\s*(".*")\s*', line)
        if m is None:
            raise errors.DataLossError(f"{path}:{number}: not a checkpoint state line: {line!r}")
        key, value = m.group(1), _unquote(m.group(2))
        if not os.path.isabs(value):
            value = os.path.join(folder, value)
        if key == "model_checkpoint_path":
            state.model_checkpoint_path = value
        elif key == "all_model_checkpoint_paths":
            state.all_model_checkpoint_paths.append(value)
    return state


def latest_checkpoint(
    checkpoint_dir: str | os.PathLike, latest_filename: str | None = None
) -> str | None:
    """The prefix of the folder's latest checkpoint, or None when there is none (no state
    file, or its checkpoint's index is gone)."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state and state.model_checkpoint_path:
        if os.path.exists(f"{state.model_checkpoint_path}.index"):
            return state.model_checkpoint_path
    return None


def _prefix(ckpt_dir_or_file: str | os.PathLike) -> str:
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise errors.NotFoundError(f"Couldn't find 'checkpoint' file or checkpoints in {path}")
        return latest
    return path


def list_variables(ckpt_dir_or_file: str | os.PathLike) -> list[tuple[str, list[Any]]]:
    """``(key, shape)`` of every tensor in a checkpoint (or a folder's latest), by key."""
    from minigraph.tensor_bundle import BundleReader
    from minigraph.tf_proto import Fail, _shape_from_proto

    reader = BundleReader(_prefix(ckpt_dir_or_file))
    out = []
    for key in reader.keys():
        shape: TensorShape = _shape_from_proto(reader.entries[key].shape, Fail(), key)
        out.append((key, list(shape.dims or [])))
    return out


def load_variable(ckpt_dir_or_file: str | os.PathLike, name: str) -> np.ndarray:
    """The value saved under ``name`` (``:0`` may be given) in a checkpoint."""
    from minigraph.tensor_bundle import BundleReader

    key = name[:-2] if name.endswith(":0") else name
    return BundleReader(_prefix(ckpt_dir_or_file)).tensor(key)
