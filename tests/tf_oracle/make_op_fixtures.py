"""Writes tests/fixtures/ops/<family>.npz: each case of cases_<family>.py run by TensorFlow.

Run by hand, with TensorFlow 2.21 installed in a scratch virtual environment (never a
dependency of minigraph), from the repository root::

    python3 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu==2.21.0
    /tmp/tfvenv/bin/python tests/tf_oracle/make_op_fixtures.py math reductions ...

Each case is run eagerly as ``tf.raw_ops.<op>(**args)`` on the CPU. A family whose cases
module sets ``TF_ENV`` (environment variables TensorFlow reads when imported, such as
``{"TF_ENABLE_ONEDNN_OPTS": "0"}`` for its reference CPU kernels rather than oneDNN's) is
run in a process of its own with them. The file holds, per case, its inputs and either
TensorFlow's outputs or the name of the error TensorFlow raised; tests/test_tf_op_fixtures.py
replays every case through minigraph without TensorFlow.

Layout: ``meta`` is a JSON list (one object per case: op, name, input names and list lengths,
attrs, tolerances, TF's error or the number of outputs); arrays are ``<i>/in/<name>[/<k>]``
and ``<i>/out/<k>``.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "fixtures" / "ops"
sys.path.insert(0, str(HERE))

from oracle_case import is_dtype, is_input  # noqa: E402


def _attr_to_json(value: Any) -> Any:
    if is_dtype(value):
        return {"dtype": np.dtype(value).name}
    if isinstance(value, list | tuple):
        return [_attr_to_json(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return {"float": repr(value)}
    return value


def _attr_to_tf(tf: Any, value: Any) -> Any:
    if is_dtype(value):
        return tf.as_dtype(np.dtype(value))
    if isinstance(value, list | tuple):
        return [_attr_to_tf(tf, v) for v in value]
    return value


def _input_names(tf: Any, op: str) -> dict[str, str]:
    """``tf.raw_ops`` argument name -> the OpDef's input name (an api_def may rename an input,
    as Sum's ``reduction_indices`` is ``axis`` there); inputs come first, in OpDef order."""
    from tensorflow.python.framework import op_def_registry

    op_def = op_def_registry.get(op)
    params = [n for n in inspect.signature(getattr(tf.raw_ops, op)).parameters if n != "name"]
    return dict(zip(params, [a.name for a in op_def.input_arg]))


def run_family(tf: Any, family: str) -> None:
    cases = importlib.import_module(f"cases_{family}").CASES
    arrays: dict[str, np.ndarray] = {}
    meta = []
    for i, c in enumerate(cases):
        inputs, attrs, tf_args = {}, {}, {}
        names = _input_names(tf, c["op"])
        for key, value in c["args"].items():
            if is_input(value):
                tf_args[key] = (
                    [tf.constant(np.asarray(v)) for v in value]
                    if isinstance(value, list)
                    else tf.constant(np.asarray(value))
                )
                key = names.get(key, key)  # recorded under the OpDef's name, as minigraph's
                if isinstance(value, list):
                    inputs[key] = len(value)
                    for k, v in enumerate(value):
                        arrays[f"{i}/in/{key}/{k}"] = np.asarray(v)
                else:
                    inputs[key] = None
                    arrays[f"{i}/in/{key}"] = np.asarray(value)
            else:
                attrs[key] = _attr_to_json(value)
                tf_args[key] = _attr_to_tf(tf, value)
        entry = {k: v for k, v in c.items() if k != "args"}
        entry.update(inputs=inputs, attrs=attrs)
        try:
            with tf.device("/CPU:0"):
                result = getattr(tf.raw_ops, c["op"])(**tf_args)
        except (tf.errors.OpError, TypeError, ValueError) as e:
            entry["tf_error"] = type(e).__name__
            entry["tf_message"] = str(e).splitlines()[0][:300]
        else:
            outs = list(result) if isinstance(result, list | tuple) else [result]
            if outs and isinstance(outs[0], list):  # a list output (Split, Unpack...)
                outs = [t for group in outs for t in group]
            entry["n_outputs"] = len(outs)
            for k, t in enumerate(outs):
                arrays[f"{i}/out/{k}"] = t.numpy()
        meta.append(entry)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{family}.npz"
    np.savez_compressed(path, meta=np.array(json.dumps(meta)), **arrays)
    errors = sum("tf_error" in m for m in meta)
    print(f"{path}: {len(meta)} cases ({errors} TF errors), {path.stat().st_size} bytes")


def main(argv: list[str]) -> None:
    families = argv or sorted(p.stem[len("cases_") :] for p in HERE.glob("cases_*.py"))
    here = []
    for family in families:
        env = getattr(importlib.import_module(f"cases_{family}"), "TF_ENV", {})
        if all(os.environ.get(k) == v for k, v in env.items()):
            here.append(family)
        else:  # TensorFlow reads these when imported: a process of its own
            command = [sys.executable, __file__, family]
            subprocess.run(command, env={**os.environ, **env}, check=True)
    if not here:
        return
    import tensorflow as tf

    if tf.__version__ != "2.21.0":
        print(f"warning: the fixtures are meant for TensorFlow 2.21.0, this is {tf.__version__}")
    for family in here:
        run_family(tf, family)


if __name__ == "__main__":
    main(sys.argv[1:])
