"""Writes tests/fixtures/graphs/: TensorFlow GraphDefs, their inputs and TensorFlow's outputs.

Run by hand, with TensorFlow 2.21 in a scratch virtual environment (never a dependency of
minigraph), from the repository root::

    python3 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu==2.21.0
    /tmp/tfvenv/bin/python tests/tf_oracle/make_graph_fixtures.py [--minigraph-python PY]
        [--only GROUP...]

``--only keras_3d_models`` (last, with the names of functions below) remakes those groups'
cases only and keeps the others in ``cases.json`` as they are.

For each case it writes ``<name>.pb`` (or ``.pbtxt``) and ``<name>.npz`` holding
``feed/<tensor>`` (the inputs) and ``fetch/<tensor>`` (TensorFlow's outputs for them), and
lists the cases in ``cases.json``. Cases are graph-mode builder graphs (tf.compat.v1),
frozen ``tf.function`` graphs and frozen Keras models (variables made constants with
``convert_variables_to_constants_v2``), so some need ops minigraph does not have yet;
tests/test_graph_def.py skips those, naming the ops.

It also writes ``tf_op_defs.json``: TensorFlow's OpDef (inputs, outputs, attrs with types
and defaults) for every op minigraph registers, asked of the minigraph install that
``--minigraph-python`` runs (default: /root/mgvenv/bin/python, else python3). Re-run it when
ops are added.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
from tensorflow.python.framework import op_def_registry  # noqa: E402
from tensorflow.python.framework.convert_to_constants import (  # noqa: E402
    convert_variables_to_constants_v2,
)

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "graphs"
v1 = tf.compat.v1
CASES: list[dict[str, Any]] = []


def _save(
    name: str,
    graph_def: Any,
    feeds: dict[str, np.ndarray],
    fetches: list[str],
    as_text: bool = False,
    **extra: Any,
) -> None:
    """Run ``graph_def`` in a TF1 Session on ``feeds`` and save graph, inputs and outputs."""
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    with v1.Session(graph=g) as sess:
        values = sess.run(fetches, {g.get_tensor_by_name(k): v for k, v in feeds.items()})
    suffix = ".pbtxt" if as_text else ".pb"
    tf.io.write_graph(graph_def, str(OUT), name + suffix, as_text=as_text)
    arrays = {f"feed/{k}": v for k, v in feeds.items()}
    arrays.update({f"fetch/{k}": np.asarray(v) for k, v in zip(fetches, values)})
    np.savez_compressed(OUT / f"{name}.npz", **arrays)
    ops = sorted({n.op for n in graph_def.node})
    CASES.append(
        {
            "name": name,
            "file": name + suffix,
            "feeds": list(feeds),
            "fetches": fetches,
            "ops": ops,
            **extra,
        }
    )
    print(f"{name}{suffix}: {len(graph_def.node)} nodes, ops {ops}")


def _builder(name: str, build: Any, feeds: dict[str, np.ndarray], as_text: bool = False) -> None:
    """A tf.compat.v1 graph-mode graph: ``build()`` returns the fetched tensors."""
    g = tf.Graph()
    with g.as_default():
        outs = build()
    outs = outs if isinstance(outs, list | tuple) else [outs]
    _save(name, g.as_graph_def(), feeds, [t.name for t in outs], as_text, kind="graph-mode")


def _frozen(
    name: str,
    fn: Any,
    specs: list[tf.TensorSpec],
    feeds: list[np.ndarray],
    kind: str = "tf.function",
    **extra: Any,
) -> None:
    """A tf.function (or Keras model call) traced for ``specs`` and frozen."""
    concrete = tf.function(fn).get_concrete_function(*specs)
    frozen = convert_variables_to_constants_v2(concrete)
    gd = frozen.graph.as_graph_def()
    ins = [t.name for t in frozen.inputs if t.dtype != tf.resource]
    # the converter lists the Placeholders in no fixed order: put them in the inputs' order,
    # so that re-running the script rewrites the same bytes
    first = [next(n for n in gd.node if n.name == t.split(":")[0]) for t in ins]
    rest = [n for n in gd.node if n not in first]
    del gd.node[:]
    gd.node.extend(first + rest)
    outs = [t.name for t in frozen.outputs]
    _save(name, gd, dict(zip(ins, feeds)), outs, kind=kind, **extra)


def seed_graphs() -> None:
    ph = v1.placeholder
    x1 = np.arange(1, 17, dtype=np.float32).reshape(2, 2, 4, 1)
    _builder(
        "space_to_batch_nd",
        lambda: tf.space_to_batch_nd(
            ph(tf.float32, [None, 2, 4, 1], name="x"), [2, 2], [[0, 0], [2, 0]], name="y"
        ),
        {"x:0": x1},
    )
    x2 = np.arange(1, 9, dtype=np.float32).reshape(8, 1, 1, 1)
    _builder(
        "batch_to_space_nd",
        lambda: tf.compat.v1.batch_to_space_nd(
            ph(tf.float32, [8, 1, 1, 1], name="x"), [2, 2], [[0, 0], [0, 0]], name="y"
        ),
        {"x:0": x2},
        as_text=True,
    )

    def stitch():
        idx = [tf.constant(6), tf.constant([4, 1]), tf.constant([[5, 2], [0, 3]])]
        data = [
            ph(tf.int32, [2], name="d0"),
            ph(tf.int32, [2, 2], name="d1"),
            ph(tf.int32, [2, 2, 2], name="d2"),
        ]
        return tf.dynamic_stitch(idx, data, name="y")

    _builder(
        "dynamic_stitch",
        stitch,
        {
            "d0:0": np.array([61, 62], np.int32),
            "d1:0": np.array([[41, 42], [11, 12]], np.int32),
            "d2:0": np.array([[[51, 52], [21, 22]], [[1, 2], [31, 32]]], np.int32),
        },
    )

    def partition_stitch():
        x = ph(tf.float32, [None], name="x")
        mask = tf.cast(tf.not_equal(x, -1.0), tf.int32)
        parts = tf.dynamic_partition(x, mask, 2)
        positions = tf.dynamic_partition(tf.range(tf.shape(x)[0]), mask, 2)
        return tf.dynamic_stitch(positions, [parts[0], parts[1] + 1.0], name="y")

    _builder(
        "partition_stitch",
        partition_stitch,
        {"x:0": np.array([0.1, -1.0, 5.2, 4.3, -1.0, 7.4], np.float32)},
        as_text=True,
    )

    def scatters():
        t = ph(tf.float32, [4, 4], name="t")
        i = ph(tf.int32, [2, 1], name="i")
        u = ph(tf.float32, [2, 4], name="u")
        return [
            f(t, i, u, name=n)
            for f, n in [
                (tf.tensor_scatter_nd_update, "update"),
                (tf.tensor_scatter_nd_add, "add"),
                (tf.tensor_scatter_nd_sub, "sub"),
                (tf.tensor_scatter_nd_min, "min"),
                (tf.tensor_scatter_nd_max, "max"),
            ]
        ] + [tf.scatter_nd(i, u, [4, 4], name="nd")]

    _builder(
        "tensor_scatter",
        scatters,
        {
            "t:0": np.arange(16, dtype=np.float32).reshape(4, 4),
            "i:0": np.array([[3], [0]], np.int32),
            "u:0": np.array([[9, -1, 5, 7], [2, 2, 30, -4]], np.float32),
        },
    )

    def gathers():
        p = ph(tf.float32, [3, 4], name="p")
        return [
            tf.gather_nd(p, [[1, 2], [0, 0]], name="gnd"),
            tf.gather(p, [2, 0], axis=1, name="g"),
            tf.strided_slice(p, [1, 0], [3, 4], [1, 2], name="ss"),
            tf.transpose(tf.reshape(p, [2, 6]), name="tr"),
        ]

    _builder("gather", gathers, {"p:0": np.arange(12, dtype=np.float32).reshape(3, 4)})

    def atrous():
        x = ph(tf.float32, [1, 7, 7, 2], name="x")
        w = tf.constant(np.linspace(-1, 1, 3 * 3 * 2 * 3, dtype=np.float32).reshape(3, 3, 2, 3))
        return tf.nn.atrous_conv2d(x, w, rate=2, padding="SAME", name="y")

    rng = np.random.default_rng(0)
    _builder("atrous_conv2d", atrous, {"x:0": rng.standard_normal((1, 7, 7, 2)).astype(np.float32)})


def frozen_graphs() -> None:
    rng = np.random.default_rng(1)

    def s2b(x):
        return tf.space_to_batch_nd(x, [2, 2], [[0, 1], [1, 0]]) * 2.0 - 1.0

    _frozen(
        "fn_space_to_batch",
        s2b,
        [tf.TensorSpec([None, 3, 3, 1], tf.float32, name="x")],
        [rng.standard_normal((2, 3, 3, 1)).astype(np.float32)],
    )

    def update(t, i, u):
        return tf.tensor_scatter_nd_update(t, i, u), tf.gather_nd(t, i)

    _frozen(
        "fn_scatter_gather",
        update,
        [
            tf.TensorSpec([4, 3], tf.int64, name="t"),
            tf.TensorSpec([2, 1], tf.int32, name="i"),
            tf.TensorSpec([2, 3], tf.int64, name="u"),
        ],
        [
            np.arange(12, dtype=np.int64).reshape(4, 3),
            np.array([[1], [3]], np.int32),
            np.full((2, 3), -5, np.int64),
        ],
    )

    w = tf.Variable(np.linspace(-1, 1, 2 * 2 * 1 * 2, dtype=np.float32).reshape(2, 2, 1, 2))

    def conv(x):
        return tf.nn.conv2d(x, w, 1, "VALID", dilations=2) + 0.5

    _frozen(
        "fn_conv_variable",
        conv,
        [tf.TensorSpec([1, 5, 5, 1], tf.float32, name="x")],
        [rng.standard_normal((1, 5, 5, 1)).astype(np.float32)],
    )


def keras_models() -> None:
    rng = np.random.default_rng(2)
    keras = tf.keras
    keras.utils.set_random_seed(3)
    mlp = keras.Sequential(
        [
            keras.Input((8,)),
            keras.layers.Dense(16, activation="relu"),
            keras.layers.Dense(3, activation="softmax"),
        ]
    )
    _frozen(
        "keras_mlp",
        lambda x: mlp(x),
        [tf.TensorSpec([None, 8], tf.float32, name="x")],
        [rng.standard_normal((4, 8)).astype(np.float32)],
        kind="keras",
        rtol=1e-5,
        atol=1e-6,
        why="two small matmuls and a softmax",
    )
    cnn = keras.Sequential(
        [
            keras.Input((8, 8, 1)),
            keras.layers.Conv2D(4, 3, activation="relu", padding="same"),
            keras.layers.MaxPooling2D(),
            keras.layers.Flatten(),
            keras.layers.Dense(2),
        ]
    )
    _frozen(
        "keras_cnn",
        lambda x: cnn(x),
        [tf.TensorSpec([None, 8, 8, 1], tf.float32, name="x")],
        [rng.standard_normal((2, 8, 8, 1)).astype(np.float32)],
        kind="keras",
        rtol=1e-5,
        atol=1e-6,
        why="a 3x3 convolution and a 64-term matmul",
    )


def keras_more() -> None:
    """A Keras model with batch norm, pooling and a Python-unrolled loop in a tf.function."""
    rng = np.random.default_rng(4)
    keras = tf.keras
    keras.utils.set_random_seed(5)
    bn = keras.Sequential(
        [
            keras.Input((6, 6, 2)),
            keras.layers.Conv2D(3, 3, padding="same", use_bias=False),
            keras.layers.BatchNormalization(),
            keras.layers.LeakyReLU(negative_slope=0.1),
            keras.layers.AveragePooling2D(2),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(4, activation="tanh"),
        ]
    )
    # non-trivial moving statistics, as after training
    bn.layers[1].set_weights(
        [rng.uniform(0.5, 1.5, 3), rng.normal(size=3), rng.normal(size=3), rng.uniform(0.5, 2, 3)]
    )
    _frozen(
        "keras_batchnorm",
        lambda x: bn(x, training=False),
        [tf.TensorSpec([None, 6, 6, 2], tf.float32, name="x")],
        [rng.standard_normal((3, 6, 6, 2)).astype(np.float32)],
        kind="keras",
        rtol=1e-5,
        atol=1e-6,
        why="a 3x3 convolution, batch norm, pooling means and a matmul",
    )

    def unrolled(x):
        for _ in range(3):  # a Python loop: traced as three copies, not a While
            x = tf.tanh(tf.matmul(x, tf.constant([[0.5, -1.0], [1.5, 0.25]])))
        return x

    _frozen(
        "fn_unrolled_loop",
        unrolled,
        [tf.TensorSpec([None, 2], tf.float32, name="x")],
        [rng.standard_normal((5, 2)).astype(np.float32)],
    )


def keras_real_models() -> None:
    """Issue 11's real models: a residual block, a text model, a transformer block.

    Each case states the tolerance its outputs are compared with (``rtol``/``atol`` in
    cases.json, read by tests/test_models.py) and why.
    """
    rng = np.random.default_rng(6)
    keras = tf.keras
    layers = keras.layers
    keras.utils.set_random_seed(7)

    def trained_bn(layer: Any, n: int) -> None:
        # non-trivial gamma, beta, moving mean and variance, as after training
        layer.set_weights(
            [
                rng.uniform(0.5, 1.5, n),
                rng.normal(size=n),
                rng.normal(size=n),
                rng.uniform(0.5, 2, n),
            ]
        )

    # 1. residual block: Conv2D + BN + ReLU twice, a 1x1 projection skip, Add, GAP, Dense
    x = keras.Input((8, 8, 3))
    h = layers.Conv2D(4, 3, padding="same", use_bias=False)(x)
    bn1 = layers.BatchNormalization()
    h = layers.ReLU()(bn1(h))
    h = layers.Conv2D(4, 3, padding="same", use_bias=False)(h)
    bn2 = layers.BatchNormalization()
    h = bn2(h)
    skip = layers.Conv2D(4, 1)(x)
    block = layers.ReLU()(layers.Add()([h, skip]))
    h = layers.GlobalAveragePooling2D()(block)
    resnet = keras.Model(x, [layers.Dense(3)(h), block])  # the block's output is fetched too
    trained_bn(bn1, 4)
    trained_bn(bn2, 4)
    _frozen(
        "keras_residual",
        lambda x: resnet(x, training=False),
        [tf.TensorSpec([None, 8, 8, 3], tf.float32, name="x")],
        [rng.standard_normal((2, 8, 8, 3)).astype(np.float32)],
        kind="keras",
        rtol=1e-5,
        atol=1e-5,
        why="two 3x3 convolutions and a 64-element mean: float32 sums in another order",
    )

    # 2. text model: int32 token ids -> Embedding -> GlobalAveragePooling1D -> Dense
    text = keras.Sequential(
        [
            keras.Input((6,), dtype="int32"),
            layers.Embedding(20, 8),
            layers.GlobalAveragePooling1D(),
            layers.Dense(4, activation="relu"),
            layers.Dense(2, activation="sigmoid"),
        ]
    )
    _frozen(
        "keras_text_embedding",
        lambda ids: text(ids),
        [tf.TensorSpec([None, 6], tf.int32, name="ids")],
        [rng.integers(0, 20, (3, 6)).astype(np.int32)],
        kind="keras",
        rtol=1e-5,
        atol=1e-6,
        why="a gather, a 6-element mean and two small matmuls",
    )

    # 3. transformer block: self-attention (2 heads), residual adds, layer norms, FFN, softmax
    x = keras.Input((5, 8))
    att = layers.MultiHeadAttention(num_heads=2, key_dim=4)(x, x)
    h = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([x, att]))
    ff = layers.Dense(16, activation="gelu")(h)
    ff = layers.Dense(8)(ff)
    block = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([h, ff]))
    h = layers.GlobalAveragePooling1D()(block)
    transformer = keras.Model(x, [layers.Dense(3, activation="softmax")(h), block, att])
    _frozen(
        "keras_transformer",
        lambda x: transformer(x, training=False),
        [tf.TensorSpec([None, 5, 8], tf.float32, name="x")],
        [rng.standard_normal((2, 5, 8)).astype(np.float32)],
        kind="keras",
        rtol=1e-5,
        atol=1e-5,
        why="einsums, softmax, erf and two layer norms (variance of 8 values) in float32",
    )


def keras_more_models() -> None:
    """More common Keras layers: depthwise convolution (MobileNet-like), a 1-D text CNN, an
    unrolled LSTM."""
    rng = np.random.default_rng(10)
    keras = tf.keras
    layers = keras.layers
    keras.utils.set_random_seed(11)

    bn1, bn2 = layers.BatchNormalization(), layers.BatchNormalization()
    mobile = keras.Sequential(
        [
            keras.Input((8, 8, 3)),
            layers.ZeroPadding2D(1),
            layers.Conv2D(4, 3, strides=2, use_bias=False),
            bn1,
            layers.ReLU(max_value=6.0),
            layers.DepthwiseConv2D(3, padding="same", use_bias=False),
            bn2,
            layers.ReLU(),
            layers.Conv2D(6, 1),
            layers.Dropout(0.5),
            layers.GlobalMaxPooling2D(),
            layers.Dense(2),
        ]
    )
    for bn in (bn1, bn2):
        bn.set_weights(
            [
                rng.uniform(0.5, 1.5, 4),
                rng.normal(size=4),
                rng.normal(size=4),
                rng.uniform(0.5, 2, 4),
            ]
        )
    _frozen(
        "keras_depthwise",
        lambda x: mobile(x, training=False),
        [tf.TensorSpec([None, 8, 8, 3], tf.float32, name="x")],
        [rng.standard_normal((2, 8, 8, 3)).astype(np.float32)],
        kind="keras",
        rtol=1e-5,
        atol=1e-5,
        why="a strided 3x3 convolution, a depthwise one and a 1x1 one in float32",
    )

    text_cnn = keras.Sequential(
        [
            keras.Input((7,), dtype="int32"),
            layers.Embedding(30, 8),
            layers.Conv1D(4, 3, activation="relu"),
            layers.GlobalMaxPooling1D(),
            layers.Dense(1, activation="sigmoid"),
        ]
    )
    _frozen(
        "keras_text_cnn",
        lambda ids: text_cnn(ids),
        [tf.TensorSpec([None, 7], tf.int32, name="ids")],
        [rng.integers(0, 30, (3, 7)).astype(np.int32)],
        kind="keras",
        rtol=1e-5,
        atol=1e-6,
        why="a gather, a 24-term 1-D convolution, a max and a matmul",
    )

    lstm = keras.Sequential(
        [keras.Input((4, 3)), layers.LSTM(5, unroll=True), layers.Dense(2)]
    )  # unroll=True: four copies of the cell, no While loop
    _frozen(
        "keras_lstm_unrolled",
        lambda x: lstm(x),
        [tf.TensorSpec([None, 4, 3], tf.float32, name="x")],
        [rng.standard_normal((3, 4, 3)).astype(np.float32)],
        kind="keras",
        rtol=1e-5,
        atol=1e-6,
        why="four steps of small matmuls, sigmoid and tanh",
    )


def keras_3d_models() -> None:
    """A volumetric CNN: Conv3D (same, then dilated), MaxPooling3D, AveragePooling3D."""
    rng = np.random.default_rng(12)
    keras = tf.keras
    layers = keras.layers
    keras.utils.set_random_seed(13)
    volumes = keras.Sequential(
        [
            keras.Input((5, 9, 9, 2)),
            layers.Conv3D(4, 3, padding="same", activation="relu"),
            layers.MaxPooling3D(2),
            layers.Conv3D(6, 2, dilation_rate=(1, 2, 2), padding="same"),
            layers.AveragePooling3D((2, 3, 3), strides=(1, 2, 2), padding="same"),
            layers.Flatten(),
            layers.Dense(3),
        ]
    )
    _frozen(
        "keras_conv3d",
        lambda x: volumes(x),
        [tf.TensorSpec([None, 5, 9, 9, 2], tf.float32, name="x")],
        [rng.standard_normal((2, 5, 9, 9, 2)).astype(np.float32)],
        kind="keras",
        rtol=1e-5,
        atol=1e-5,
        why="a 54-term 3-D convolution, a 32-term dilated one, means of up to 18 cells and a "
        "48-term matmul in float32",
    )


def keras_transpose_models() -> None:
    """A Keras decoder of Conv2DTranspose layers (Conv2DBackpropInput): strided SAME, strided
    VALID with output_padding, dilated."""
    rng = np.random.default_rng(14)
    keras = tf.keras
    layers = keras.layers
    keras.utils.set_random_seed(15)
    decoder = keras.Sequential(
        [
            keras.Input((3, 4, 3)),
            layers.Conv2DTranspose(4, 3, strides=2, padding="same", activation="relu"),
            layers.Conv2DTranspose(3, 2, strides=2, padding="valid", output_padding=1),
            layers.Conv2DTranspose(2, 3, dilation_rate=2, padding="same"),
        ]
    )
    _frozen(
        "keras_conv_transpose",
        lambda x: decoder(x),
        [tf.TensorSpec([None, 3, 4, 3], tf.float32, name="x")],
        [rng.standard_normal((2, 3, 4, 3)).astype(np.float32)],
        kind="keras",
        rtol=1e-5,
        atol=1e-5,
        why="three transposed convolutions of up to 36 terms a value in float32",
    )


def fn_real_graphs() -> None:
    """tf.functions as used in practice: a sharded embedding lookup with a top-k router
    (mixture-of-experts style), and segment reductions."""
    rng = np.random.default_rng(8)
    shards = [
        tf.constant(rng.standard_normal((4, 3)).astype(np.float32)) for _ in range(3)
    ]  # 12 ids, id i lives in shard i % 3 at row i // 3
    router = tf.constant(rng.standard_normal((3, 4)).astype(np.float32))
    experts = tf.constant(rng.standard_normal((4, 3, 2)).astype(np.float32))

    def sharded_moe(ids):
        shard = ids % 3
        local = ids // 3
        parts = tf.dynamic_partition(local, shard, 3)
        positions = tf.dynamic_partition(tf.range(tf.size(ids)), shard, 3)
        rows = [tf.gather(table, part) for table, part in zip(shards, parts)]
        emb = tf.dynamic_stitch(positions, rows)  # [n, 3], in ids' order
        logits = tf.matmul(emb, router)  # [n, 4] expert scores
        top, which = tf.math.top_k(logits, k=2)
        gates = tf.nn.softmax(top)  # [n, 2]
        chosen = tf.gather(experts, which)  # [n, 2, 3, 2]
        out = tf.einsum("nd,nkdh->nkh", emb, chosen)
        return tf.reduce_sum(out * gates[:, :, None], axis=1), emb, which

    _frozen(
        "fn_sharded_moe",
        sharded_moe,
        [tf.TensorSpec([None], tf.int32, name="ids")],
        [np.array([5, 0, 11, 3, 3, 7, 10], np.int32)],
        rtol=1e-5,
        atol=1e-6,
        why="exact gathers and stitches, then a 3-term matmul, softmax and einsum in float32",
    )

    def segments(data, seg, sorted_seg):
        return (
            tf.math.unsorted_segment_sum(data, seg, 4),
            tf.math.unsorted_segment_max(data, seg, 4),
            tf.math.segment_mean(data, sorted_seg),
            tf.math.segment_sum(data * 2.0, sorted_seg),
            tf.sparse.segment_mean(data, [0, 2, 5], [0, 0, 1]),
        )

    _frozen(
        "fn_segments",
        segments,
        [
            tf.TensorSpec([6, 3], tf.float32, name="data"),
            tf.TensorSpec([6], tf.int32, name="seg"),
            tf.TensorSpec([6], tf.int32, name="sorted_seg"),
        ],
        [
            rng.standard_normal((6, 3)).astype(np.float32),
            np.array([2, 0, 2, 3, 0, 2], np.int32),
            np.array([0, 0, 1, 1, 1, 3], np.int32),
        ],
        rtol=1e-6,
        atol=1e-6,
        why="sums and means of at most 3 values",
    )

    scale, offset, mean, var = (
        v.astype(np.float32)
        for v in (
            rng.uniform(0.5, 1.5, 2),
            rng.normal(size=2),
            rng.normal(size=2),
            rng.uniform(0.5, 2, 2),
        )
    )
    kernel = rng.standard_normal((3, 3, 2, 2)).astype(np.float32)

    def fused_batch_norm(x):
        # TF1-style batch norm (tf.compat.v1.layers, Keras 2) is one FusedBatchNormV3 node;
        # Keras 3's BatchNormalization is arithmetic instead
        h = tf.nn.conv2d(x, kernel, 1, "SAME")
        h, _, _ = v1.nn.fused_batch_norm(
            h, scale, offset, mean, var, epsilon=1e-3, is_training=False
        )
        return tf.nn.relu6(h) + x

    _frozen(
        "fn_fused_batchnorm",
        fused_batch_norm,
        [tf.TensorSpec([None, 5, 5, 2], tf.float32, name="x")],
        [rng.standard_normal((2, 5, 5, 2)).astype(np.float32)],
        rtol=1e-5,
        atol=1e-5,
        why="an 18-term convolution, then batch norm in float32",
    )


def unsupported_graph() -> None:
    """A graph with op types minigraph lacks: a while loop, a string op (and Sin, Erf)."""
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [None], name="x")
        y = tf.sin(x, name="s") + tf.math.erf(x, name="e")
        v1.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)], name="loop")
        tf.strings.length(tf.constant(["minigraph"]), name="len")
        tf.identity(y, name="y")
    gd = g.as_graph_def()
    tf.io.write_graph(gd, str(OUT), "unsupported.pb", as_text=False)
    print(f"unsupported.pb: {sorted({n.op for n in gd.node})}")


def _minigraph_ops(python: str) -> list[str]:
    code = "import json, minigraph; print(json.dumps(sorted(minigraph.registered_ops())))"
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return [n for n in json.loads(out.stdout.strip().splitlines()[-1]) if not n.startswith("_")]


def _attr_default(a: Any) -> Any:
    if not a.HasField("default_value"):
        return None
    v = a.default_value
    which = v.WhichOneof("value")
    if which == "type":
        return {"type": tf.as_dtype(v.type).name}
    if which == "shape":
        return {"shape": None if v.shape.unknown_rank else [d.size for d in v.shape.dim]}
    if which == "s":
        return {"s": v.s.decode()}
    if which == "list":
        return {
            "list": list(v.list.i)
            or [x.decode() for x in v.list.s]
            or list(v.list.f)
            or [tf.as_dtype(t).name for t in v.list.type]
            or []
        }
    return {which: getattr(v, which)}


def op_defs(python: str) -> None:
    path = OUT / "tf_op_defs.json"
    names = set(_minigraph_ops(python))
    if path.exists():
        names |= set(json.loads(path.read_text()))
    out = {}
    for name in sorted(names):
        od = op_def_registry.get(name)
        if od is None:
            out[name] = None
            continue
        out[name] = {
            "inputs": [a.name for a in od.input_arg],
            "outputs": [a.name for a in od.output_arg],
            "attrs": [
                {"name": a.name, "type": a.type, "default": _attr_default(a)} for a in od.attr
            ],
        }
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"tf_op_defs.json: {len(out)} ops")


def main() -> None:
    python = "/root/mgvenv/bin/python"
    if "--minigraph-python" in sys.argv:
        python = sys.argv[sys.argv.index("--minigraph-python") + 1]
    elif not Path(python).exists():
        python = "python3"
    OUT.mkdir(parents=True, exist_ok=True)
    groups = [seed_graphs, frozen_graphs, keras_models, keras_more, keras_real_models,
              keras_more_models, keras_3d_models, keras_transpose_models,
              fn_real_graphs, unsupported_graph]  # fmt: skip
    only = sys.argv[sys.argv.index("--only") + 1 :] if "--only" in sys.argv else []
    for group in groups:
        if not only or group.__name__ in only:
            group()
    cases = CASES
    if only:  # the other cases as they are, these rewritten or added
        made = {c["name"]: c for c in CASES}
        old = json.loads((OUT / "cases.json").read_text())
        cases = [made.pop(c["name"], c) for c in old] + list(made.values())
    (OUT / "cases.json").write_text(json.dumps(cases, indent=1) + "\n")
    op_defs(python)


if __name__ == "__main__":
    main()
