"""Writes tests/fixtures/training/{training_ops,optimizers}.npz and the checkpoint in
tests/fixtures/training/tf_checkpoint/: TensorFlow 2.21's training ops, its
tf.compat.v1.train optimizers and its Saver, for tests/test_training_ops.py,
tests/test_optimizers.py and tests/test_saver.py.

Run by hand, with TensorFlow 2.21 in a scratch virtual environment (never a dependency of
minigraph), from the repository root::

    /tmp/tfvenv/bin/python tests/tf_oracle/make_optimizer_fixtures.py

- training_ops.npz: each raw ResourceApply* op in graph mode on resource variables, applied
  a few times with a new gradient each step; per case its attrs and inputs and the values
  of the variable and its slots after each step, or the error TensorFlow raised (variables
  of unknown shape, so that the kernel's own checks run). Layout: ``meta`` (JSON list of
  cases: name, op, dtype, attrs, variables, tensors, steps, error, layout) and per case
  one flat array ``<name>`` holding ``init/<var>``, ``<step>/in/<tensor>`` and
  ``<step>/out/<var>`` as its ``layout`` ([key, shape] in order) says.
- optimizers.npz: small models (linear regression, a 2-layer perceptron) trained a few
  steps by each optimizer with ``minimize(loss, global_step)``; per case the names of the
  graph's variables, the loss before each step and every variable after each step.
  Layout: ``meta`` (JSON: cases with model, dtype, optimizer and arguments, variable
  names, global step after each step, layout), the models' data ``<model>_<dtype>/<name>``,
  and per case ``<case>/loss`` and one flat ``<case>/values`` holding ``<step>/<var>`` for
  every float variable as its layout says.
- tf_checkpoint/: ``tf.compat.v1.train.Saver`` (relative paths) saving float32, float64
  and int64 variables and Adam's slots at global step 3, and ``values.npz`` with what it
  saved.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "training"
v1 = tf.compat.v1
STEPS = 3


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any, low: float = 0.0):
    """Normal values (or uniform in [low, low + 1) when ``low`` is set: slots that must stay
    positive), complex when ``dtype`` is."""
    if low:
        x = rng.uniform(low, low + 1, shape)
    else:
        x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * (rng.uniform(low, low + 1, shape) if low else rng.standard_normal(shape))
    return x.astype(dtype)


# -- raw training ops ------------------------------------------------------------------------

# op -> (slots with the low end of their initial values (0: normal), scalars with values)
OPS: dict[str, tuple[dict[str, float], dict[str, float]]] = {
    "ResourceApplyGradientDescent": ({}, {"alpha": 0.1}),
    "ResourceApplyMomentum": ({"accum": 0.0}, {"lr": 0.1, "momentum": 0.9}),
    "ResourceApplyKerasMomentum": ({"accum": 0.0}, {"lr": 0.1, "momentum": 0.9}),
    "ResourceApplyAdam": (
        {"m": 0.0, "v": 0.5},
        {
            "beta1_power": 0.9,
            "beta2_power": 0.999,
            "lr": 0.01,
            "beta1": 0.9,
            "beta2": 0.999,
            "epsilon": 1e-7,
        },
    ),
    "ResourceApplyRMSProp": (
        {"ms": 0.5, "mom": 0.0},
        {"lr": 0.01, "rho": 0.9, "momentum": 0.5, "epsilon": 1e-7},
    ),
    "ResourceApplyCenteredRMSProp": (
        {"mg": 0.0, "ms": 2.0, "mom": 0.0},
        {"lr": 0.01, "rho": 0.9, "momentum": 0.5, "epsilon": 1e-7},
    ),
    "ResourceApplyAdagrad": ({"accum": 0.5}, {"lr": 0.1}),
    "ResourceApplyAdagradV2": ({"accum": 0.5}, {"lr": 0.1, "epsilon": 1e-7}),
}
GRAD = {"ResourceApplyGradientDescent": "delta"}


def _tensor_names(op: str) -> list[str]:
    """The op's non-resource inputs in OpDef order."""
    from tensorflow.python.framework import op_def_registry

    od = op_def_registry.get(op)
    return [a.name for a in od.input_arg if a.type != tf.resource.as_datatype_enum]


def _op_cases() -> list[dict[str, Any]]:
    cases = []
    for op, (slots, scalars) in OPS.items():
        variants: list[dict[str, Any]] = [{}]
        if op in ("ResourceApplyMomentum", "ResourceApplyKerasMomentum", "ResourceApplyAdam"):
            variants.append({"use_nesterov": True})
        if op.startswith("ResourceApplyAdagrad"):
            variants.append({"update_slots": False})
        for attrs in variants:
            for dtype in ("float32", "float64", "float16"):
                cases.append({"op": op, "dtype": dtype, "attrs": attrs, "shape": [3, 4]})
        cases.append({"op": op, "dtype": "complex64", "attrs": {}, "shape": [5]})
        cases.append({"op": op, "dtype": "float32", "attrs": {}, "shape": [0, 3]})
        # errors: a gradient or a slot of another shape, a scalar of rank 1
        grad = GRAD.get(op, "grad")
        cases.append({"op": op, "dtype": "float32", "attrs": {}, "shape": [2], "bad": grad})
        for bad in (*slots, *scalars):
            cases.append({"op": op, "dtype": "float32", "attrs": {}, "shape": [2], "bad": bad})
    return cases


def _pack(parts: list[tuple[str, np.ndarray]]) -> tuple[np.ndarray, list]:
    """Arrays of one dtype as one flat array and its layout ([key, shape] each), so that a
    case is a few entries of the .npz rather than dozens."""
    flat = np.concatenate([np.ravel(a) for _, a in parts]) if parts else np.zeros(0)
    return flat, [[k, list(np.shape(a))] for k, a in parts]


def _run_op_case(i: int, case: dict[str, Any], arrays: dict[str, np.ndarray]) -> dict:
    op, dtype, shape = case["op"], case["dtype"], tuple(case["shape"])
    slots, scalars = OPS[op]
    rng = _rng(100 + i)
    names = ["var", *slots]
    bad = case.get("bad")
    init = {}
    for n in names:
        s = (3,) if n == bad else shape
        init[n] = _values(rng, s, dtype, slots.get(n, 0.0))
    tensors = _tensor_names(op)
    grad = GRAD.get(op, "grad")
    steps = []
    for _ in range(1 if bad else STEPS):
        feed = {}
        for t in tensors:
            if t == grad:
                feed[t] = _values(rng, (3,) if bad == t else shape, dtype)
            else:
                value = scalars[t] * (1 + 0.1 * rng.random())
                feed[t] = np.asarray([value, value] if bad == t else value).astype(dtype)
        steps.append(feed)
    name = f"{i:03d}_{op}_{dtype}" + (f"_bad_{bad}" if bad else "")
    name += "".join(f"_{k}" for k in case["attrs"])
    meta = dict(case, name=name, variables=names, tensors=tensors)
    parts = [(f"init/{n}", init[n]) for n in names]
    parts += [(f"{s}/in/{t}", v) for s, feed in enumerate(steps) for t, v in feed.items()]
    g = tf.Graph()
    with g.as_default():
        variables = {
            n: v1.Variable(init[n], name=n, use_resource=True, shape=tf.TensorShape(None))
            for n in names
        }
        feeds = {t: v1.placeholder(dtype, name=t) for t in tensors}
        args = {n: variables[n].handle for n in names}
        args.update(feeds)
        apply = getattr(tf.raw_ops, op)(**args, **case["attrs"])
        with v1.Session(graph=g) as sess:
            sess.run([v.initializer for v in variables.values()])
            for s, feed in enumerate(steps):
                try:
                    sess.run(apply, {feeds[t]: v for t, v in feed.items()})
                except tf.errors.OpError as e:
                    lines = [x for x in e.message.splitlines() if x.strip()]
                    message = [x for x in lines if not x.strip().startswith("[[")][-1]
                    meta["error"] = [type(e).__name__, message]
                    break
                for n in names:
                    parts.append((f"{s}/out/{n}", sess.run(variables[n].read_value())))
    meta["steps"] = len(steps)
    arrays[name], meta["layout"] = _pack(parts)
    return meta


def write_training_ops() -> None:
    arrays: dict[str, np.ndarray] = {}
    meta = [_run_op_case(i, case, arrays) for i, case in enumerate(_op_cases())]
    arrays["meta"] = np.array(json.dumps(meta))
    path = OUT / "training_ops.npz"
    np.savez_compressed(path, **arrays)
    print(f"{path}: {len(meta)} cases, {path.stat().st_size} bytes")


# -- optimizers on small models ----------------------------------------------------------------

OPTIMIZERS: list[tuple[str, str, dict[str, Any]]] = [
    ("sgd", "GradientDescentOptimizer", {"learning_rate": 0.1}),
    ("momentum", "MomentumOptimizer", {"learning_rate": 0.1, "momentum": 0.9}),
    (
        "nesterov",
        "MomentumOptimizer",
        {"learning_rate": 0.05, "momentum": 0.9, "use_nesterov": True},
    ),
    ("adam", "AdamOptimizer", {"learning_rate": 0.01}),
    ("adam_eps", "AdamOptimizer", {"learning_rate": 0.1, "beta1": 0.5, "epsilon": 0.1}),
    ("rmsprop", "RMSPropOptimizer", {"learning_rate": 0.01}),
    (
        "rmsprop_centered",
        "RMSPropOptimizer",
        {"learning_rate": 0.01, "decay": 0.8, "momentum": 0.5, "centered": True},
    ),
    ("adagrad", "AdagradOptimizer", {"learning_rate": 0.1}),
]


def _model_data(model: str, dtype: str) -> dict[str, np.ndarray]:
    rng = _rng(7 if model == "linreg" else 8)
    if model == "linreg":
        x = rng.standard_normal((8, 3))
        return {
            "x": x.astype(dtype),
            "y": (x @ [[1.0], [-2.0], [0.5]] + 0.3).astype(dtype),
            "w": (rng.standard_normal((3, 1)) / 2).astype(dtype),
            "b": np.zeros(1, dtype),
        }
    return {
        "x": rng.standard_normal((6, 4)).astype(dtype),
        "labels": rng.integers(0, 3, 6).astype(np.int64),
        "w1": (rng.standard_normal((4, 5)) / 2).astype(dtype),
        "b1": (rng.standard_normal(5) / 4).astype(dtype),
        "w2": (rng.standard_normal((5, 3)) / 2).astype(dtype),
        "b2": (rng.standard_normal(3) / 4).astype(dtype),
    }


def _loss(model: str, data: dict[str, np.ndarray], params: dict[str, Any]) -> Any:
    x = tf.constant(data["x"], name="x")
    if model == "linreg":
        pred = tf.matmul(x, params["w"]) + params["b"]
        return tf.reduce_mean(tf.square(pred - tf.constant(data["y"], name="y")))
    hidden = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, params["w1"]), params["b1"]))
    logits = tf.nn.bias_add(tf.matmul(hidden, params["w2"]), params["b2"])
    losses = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.constant(data["labels"]), logits=logits
    )
    return tf.reduce_mean(losses)


def write_optimizers() -> None:
    arrays: dict[str, np.ndarray] = {}
    cases = []
    for model, params in (("linreg", ["w", "b"]), ("mlp", ["w1", "b1", "w2", "b2"])):
        for dtype in ("float32", "float64"):
            data = _model_data(model, dtype)
            for k, v in data.items():
                arrays[f"{model}_{dtype}/{k}"] = v
            for label, cls, kwargs in OPTIMIZERS:
                name = f"{model}_{dtype}_{label}"
                g = tf.Graph()
                with g.as_default():
                    variables = {p: v1.Variable(data[p], name=p, use_resource=True) for p in params}
                    loss = _loss(model, data, variables)
                    step = v1.train.get_or_create_global_step()
                    train = getattr(v1.train, cls)(**kwargs).minimize(loss, global_step=step)
                    names = [v.op.name for v in v1.global_variables()]
                    floats = [v for v in v1.global_variables() if v.op.name != "global_step"]
                    parts, losses, steps = [], [], []
                    with v1.Session(graph=g) as sess:
                        sess.run(v1.global_variables_initializer())
                        for s in range(STEPS + 1):
                            values = sess.run([v.read_value() for v in floats])
                            parts += [(f"{s}/{v.op.name}", x) for v, x in zip(floats, values)]
                            losses.append(sess.run(loss))
                            steps.append(int(sess.run(step)))
                            if s < STEPS:
                                sess.run(train)
                arrays[f"{name}/values"], layout = _pack(parts)
                arrays[f"{name}/loss"] = np.array(losses)
                cases.append(
                    {
                        "name": name,
                        "model": model,
                        "dtype": dtype,
                        "params": params,
                        "optimizer": cls,
                        "kwargs": kwargs,
                        "variables": names,
                        "global_step": steps,
                        "train_op": [train.name, train.type],
                        "layout": layout,
                    }
                )
    arrays["meta"] = np.array(json.dumps({"steps": STEPS, "cases": cases}))
    path = OUT / "optimizers.npz"
    np.savez_compressed(path, **arrays)
    print(f"{path}: {len(cases)} cases, {path.stat().st_size} bytes")


# -- a checkpoint TensorFlow wrote ------------------------------------------------------------


def write_checkpoint() -> None:
    folder = OUT / "tf_checkpoint"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    data = _model_data("linreg", "float32")
    g = tf.Graph()
    with g.as_default():
        w = v1.Variable(data["w"], name="w", use_resource=True)
        b = v1.Variable(np.float64([0.5, -1.5, 2.25]), name="dense/bias", use_resource=True)
        count = v1.Variable(np.int64(7), name="count", use_resource=True)
        x = tf.constant(data["x"])
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - data["y"]))
        step = v1.train.get_or_create_global_step()
        train = v1.train.AdamOptimizer(0.1).minimize(loss, global_step=step)
        saver = v1.train.Saver(save_relative_paths=True)
        with v1.Session(graph=g) as sess:
            sess.run(v1.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            prefix = saver.save(
                sess, str(folder / "model.ckpt"), global_step=step, write_meta_graph=False
            )
            values = sess.run({v.op.name: v.read_value() for v in v1.global_variables()})
    del b, count
    np.savez(folder / "values.npz", **values)
    print(f"{prefix}: {sorted(values)}")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    write_training_ops()
    write_optimizers()
    write_checkpoint()


if __name__ == "__main__":
    main()
