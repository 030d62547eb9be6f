"""Writes tests/fixtures/grads/<family>.npz: the gradients TensorFlow computes for each case
of grads_<family>.py.

Run by hand with TensorFlow 2.21 in a scratch virtual environment (never a dependency),
from the repository root::

    /tmp/tfvenv/bin/python tests/tf_oracle/make_grad_fixtures.py math array ...

A case is an ``oracle_case.case`` (a raw op, its inputs and attrs) whose float and complex
inputs are differentiated, or only those named by ``wrt=[...]``. Each float or complex
output gets a fixed random weight ``dy`` (recorded); TensorFlow's registered gradient
functions (the ones graph mode's tf.gradients calls, here through a GradientTape) give the
gradient of ``sum(dy * output)`` for each input, or None. tests/test_tf_grad_fixtures.py
replays the cases through ``mg.gradients`` without TensorFlow, once with placeholders of
no shape; ``known_shape=[...]`` names inputs fed with their shape known instead (those whose
size TensorFlow's shape function of the op requires, as SpaceToBatchND's block_shape).

Layout: ``meta`` is a JSON list (op, name, inputs, attrs, wrt, known_shape, tolerances, which
outputs have a dy, which inputs got None); arrays ``<i>/in/<name>[/<k>]``, ``<i>/dy/<k>``,
``<i>/grad/<name>[/<k>]``.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

import numpy as np
from make_op_fixtures import HERE, _attr_to_json, _attr_to_tf, _input_names
from oracle_case import is_input

OUT = HERE.parent / "fixtures" / "grads"


def _inexact(a: np.ndarray) -> bool:
    return np.asarray(a).dtype.kind in "fc"


def run_family(tf: Any, family: str) -> None:
    cases = importlib.import_module(f"grads_{family}").CASES
    arrays: dict[str, np.ndarray] = {}
    meta = []
    for i, c in enumerate(cases):
        rng = np.random.default_rng(i)
        names = _input_names(tf, c["op"])
        args = dict(c["args"])
        wrt = args.pop("wrt", None)
        known_shape = args.pop("known_shape", [])
        inputs, attrs, tf_args, watched = {}, {}, {}, {}
        for key, value in args.items():
            if not is_input(value):
                attrs[key] = _attr_to_json(value)
                tf_args[key] = _attr_to_tf(tf, value)
                continue
            name = names.get(key, key)
            values = value if isinstance(value, list) else [value]
            tensors = [tf.constant(np.asarray(v)) for v in values]
            tf_args[key] = tensors if isinstance(value, list) else tensors[0]
            inputs[name] = len(values) if isinstance(value, list) else None
            for k, v in enumerate(values):
                suffix = f"/{k}" if isinstance(value, list) else ""
                arrays[f"{i}/in/{name}{suffix}"] = np.asarray(v)
                if (wrt is None or name in wrt) and _inexact(v):
                    watched[f"{name}{suffix}"] = tensors[k]
        with tf.device("/CPU:0"), tf.GradientTape(persistent=True) as tape:
            for t in watched.values():
                tape.watch(t)
            result = getattr(tf.raw_ops, c["op"])(**tf_args)
        outs = list(result) if isinstance(result, list | tuple) else [result]
        if outs and isinstance(outs[0], list):
            outs = [t for group in outs for t in group]
        weighted = []
        for k, t in enumerate(outs):
            if t.dtype.is_floating or t.dtype.is_complex:
                dy = rng.standard_normal(t.shape).astype(t.dtype.as_numpy_dtype)
                if t.dtype.is_complex:
                    dy = dy + 1j * rng.standard_normal(t.shape).astype(dy.dtype)
                arrays[f"{i}/dy/{k}"] = np.asarray(dy)
                weighted.append(k)
        grads = tape.gradient(
            [outs[k] for k in weighted],
            list(watched.values()),
            output_gradients=[tf.constant(arrays[f"{i}/dy/{k}"]) for k in weighted],
            unconnected_gradients=tf.UnconnectedGradients.NONE,
        )
        none = []
        for key, g in zip(watched, grads):
            if g is None:
                none.append(key)
            else:
                arrays[f"{i}/grad/{key}"] = tf.convert_to_tensor(g).numpy()
        entry = {k: v for k, v in c.items() if k != "args"}
        entry.update(inputs=inputs, attrs=attrs, wrt=list(watched), known_shape=known_shape)
        entry.update(dy=weighted, none=none)
        meta.append(entry)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{family}.npz"
    np.savez_compressed(path, meta=np.array(json.dumps(meta)), **arrays)
    print(f"{path}: {len(meta)} cases, {path.stat().st_size} bytes")


def main(argv: list[str]) -> None:
    families = argv or sorted(p.stem[len("grads_") :] for p in HERE.glob("grads_*.py"))
    import tensorflow as tf

    for family in families:
        run_family(tf, family)


if __name__ == "__main__":
    main(sys.argv[1:])
