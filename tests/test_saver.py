"""mg.train.Saver and TensorFlow's V2 checkpoints: round trips, a checkpoint TensorFlow wrote
(tests/fixtures/training/tf_checkpoint, by tests/tf_oracle/make_optimizer_fixtures.py)
restored and rewritten byte for byte, one minigraph wrote read by TensorFlow (skipped
without it), the state file, max_to_keep, and the errors."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest

import minigraph as mg
from minigraph import errors

pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")

from minigraph import tensor_bundle  # noqa: E402

TF_DIR = Path(__file__).resolve().parent / "fixtures" / "training" / "tf_checkpoint"
TF_PREFIX = TF_DIR / "model.ckpt-3"

VALUES = {
    "w": np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5,
    "layer/b": np.float64([0.25, -1e300]),
    "count": np.int64(-7),
    "flags": np.array([True, False]),
    "half": np.float16([1.5, -0.0]),
    "z": np.complex64([1 + 2j]),
    "empty": np.zeros((0, 3), np.float32),
}


def _graph(values=VALUES, **saver_args):
    g = mg.Graph()
    with g.as_default():
        variables = {k: mg.Variable(v, name=k) for k, v in values.items()}
        saver = mg.train.Saver(**saver_args)
        init = mg.global_variables_initializer()
    return g, variables, saver, init


def test_save_and_restore_every_dtype(tmp_path, any_device):
    g, variables, saver, init = _graph()
    with mg.Session(g) as sess:
        sess.run(init)
        prefix = saver.save(sess, tmp_path / "model")
    assert prefix == str(tmp_path / "model")
    assert sorted(os.listdir(tmp_path)) == [
        "checkpoint",
        "model.data-00000-of-00001",
        "model.index",
    ]
    assert dict(mg.train.list_variables(tmp_path)) == {
        k: list(np.shape(v)) for k, v in VALUES.items()
    }
    with mg.Session(g) as sess:  # a new Session: uninitialised until restored
        saver.restore(sess, prefix)
        for k, v in VALUES.items():
            got = sess.run(variables[k])
            assert got.dtype == np.asarray(v).dtype and got.tobytes() == np.asarray(v).tobytes()
    assert mg.train.load_variable(prefix, "w:0").tobytes() == VALUES["w"].tobytes()


def test_a_tensorflow_checkpoint_restores_and_is_rewritten_byte_for_byte(tmp_path):
    want = dict(np.load(TF_DIR / "values.npz"))
    assert mg.train.latest_checkpoint(TF_DIR) == str(TF_PREFIX)
    g = mg.Graph()
    with g.as_default():
        variables = {k: mg.Variable(np.zeros_like(v), name=k) for k, v in sorted(want.items())}
        saver = mg.train.Saver()
    with mg.Session(g) as sess:
        saver.restore(sess, mg.train.latest_checkpoint(TF_DIR))
        for k, v in want.items():
            assert sess.run(variables[k]).tobytes() == v.tobytes(), k
        prefix = saver.save(sess, tmp_path / "model.ckpt", global_step=3)
    for suffix in (".index", ".data-00000-of-00001"):
        assert Path(prefix + suffix).read_bytes() == Path(f"{TF_PREFIX}{suffix}").read_bytes()


def test_the_table_writer_is_tensorflows_and_the_reader_reads_many_blocks():
    index = (TF_DIR / "model.ckpt-3.index").read_bytes()
    assert tensor_bundle.write_table(tensor_bundle.read_table(index, "tf")) == index
    entries = [(f"key{i:05d}".encode(), bytes([i % 251]) * (i % 300)) for i in range(4000)]
    table = tensor_bundle.write_table(entries)
    assert len(table) > 2 * tensor_bundle.BLOCK_SIZE  # several data blocks and index entries
    assert tensor_bundle.read_table(table, "mine") == entries
    assert tensor_bundle.read_table(tensor_bundle.write_table([]), "empty") == []
    with pytest.raises(ValueError, match="sorted"):
        tensor_bundle.write_table([(b"b", b""), (b"a", b"")])


def test_mask_and_varint():
    for crc in (0, 1, 0xFFFFFFFF, 0x12345678):
        assert tensor_bundle.unmask(tensor_bundle.mask(crc)) == crc
    assert tensor_bundle.varint(300) == b"\xac\x02" and tensor_bundle.varint(0) == b"\x00"


def test_global_step_max_to_keep_and_the_state_file(tmp_path):
    g = mg.Graph()
    with g.as_default():
        v = mg.Variable(np.float32([0.0]), name="v")
        step = mg.train.get_or_create_global_step()
        bump = step.assign_add(1)
        saver = mg.train.Saver(max_to_keep=2)
    with mg.Session(g) as sess:
        sess.run([v.initializer, step.initializer])
        for _ in range(4):
            sess.run(bump)
            last = saver.save(sess, str(tmp_path / "model"), global_step=step)
    assert last == str(tmp_path / "model-4")
    assert saver.last_checkpoints == [str(tmp_path / "model-3"), last]
    assert sorted(p.name for p in tmp_path.glob("model-*.index")) == [
        "model-3.index",
        "model-4.index",
    ]
    assert not list(tmp_path.glob("model-1*")) and not list(tmp_path.glob("model-2*"))
    state = mg.train.get_checkpoint_state(tmp_path)
    assert state.model_checkpoint_path == last
    assert state.all_model_checkpoint_paths == saver.last_checkpoints
    assert mg.train.latest_checkpoint(tmp_path) == last
    os.remove(last + ".index")  # a state file naming a checkpoint that is gone
    assert mg.train.latest_checkpoint(tmp_path) is None
    assert mg.train.latest_checkpoint(tmp_path / "nowhere") is None


def test_keep_all_relative_paths_and_padded_steps(tmp_path, monkeypatch):
    g, variables, saver, init = _graph(
        {"a": np.float32(1)}, max_to_keep=None, save_relative_paths=True, pad_step_number=True
    )
    folder = tmp_path / "ckpt é"  # quoted in the state file as TensorFlow's text format does
    folder.mkdir()
    with mg.Session(g) as sess:
        sess.run(init)
        first = saver.save(sess, folder / "m", global_step=1)
        second = saver.save(sess, folder / "m", global_step=np.int64(2))
    assert second == str(folder / "m-00000002")
    assert Path(first + ".index").exists()  # max_to_keep=None deletes nothing
    text = (folder / "checkpoint").read_text()
    assert text == (
        'model_checkpoint_path: "m-00000002"\nall_model_checkpoint_paths: "m-00000002"\n'
    )
    assert mg.train.latest_checkpoint(folder) == second
    monkeypatch.chdir(tmp_path)  # relative in, relative to the folder in the state file
    g, _, saver, init = _graph({"b": np.float32(1)})
    with mg.Session(g) as sess:
        sess.run(init)
        saver.save(sess, "ckpt é/rel")
    assert '"rel"' in (folder / "checkpoint").read_text()
    assert mg.train.latest_checkpoint("ckpt é") == os.path.join("ckpt é", "rel")


def test_var_list_forms_and_build_errors(tmp_path):
    g = mg.Graph()
    with g.as_default():
        a = mg.Variable(np.float32(1), name="a")
        mg.Variable(np.float32(2), name="b")
        saver = mg.train.Saver({"renamed": a})
        with pytest.raises(ValueError, match="same name: a"):
            mg.train.Saver([a, a])
        with pytest.raises(TypeError, match="mg.Variable"):
            mg.train.Saver([a.value()])
        empty = mg.train.Saver([], allow_empty=True)
    with pytest.raises(ValueError, match="No variables to save"):
        mg.train.Saver([])
    with mg.Session(g) as sess:
        sess.run(a.initializer)
        prefix = saver.save(sess, tmp_path / "m")
        assert empty.save(sess, tmp_path / "e", write_state=False) == str(tmp_path / "e")
        with pytest.raises(ValueError, match="Parent directory of"):
            saver.save(sess, tmp_path / "missing" / "m")
    assert mg.train.list_variables(prefix) == [("renamed", [])]


def test_restore_errors_name_the_variable_and_change_nothing(tmp_path):
    g, variables, saver, init = _graph({"w": np.float32([1, 2]), "c": np.int64(3)})
    with mg.Session(g) as sess:
        sess.run(init)
        prefix = saver.save(sess, tmp_path / "m")
    cases = [
        ({"w": np.float32([1, 2, 3]), "c": np.int64(3)}, errors.InvalidArgumentError, "shape"),
        ({"w": np.float64([1, 2]), "c": np.int64(3)}, errors.InvalidArgumentError, "dtype float64"),
        ({"w": np.float32([1, 2]), "d": np.int64(3)}, errors.NotFoundError, "Key d not found"),
    ]
    for values, error, message in cases:
        g2, vs2, saver2, init2 = _graph(values)
        with mg.Session(g2) as sess:
            sess.run(init2)
            with pytest.raises(error, match=message) as e:
                saver2.restore(sess, prefix)
            assert "(the variable " in e.value.message
            for k, v in values.items():  # checked before anything was assigned
                assert sess.run(vs2[k]).tobytes() == np.asarray(v).tobytes()
    with mg.Session(g) as sess:
        with pytest.raises(errors.NotFoundError, match="not a valid checkpoint"):
            saver.restore(sess, tmp_path / "nothing")
        with pytest.raises(ValueError, match="None"):
            saver.restore(sess, None)
        os.remove(prefix + ".data-00000-of-00001")
        with pytest.raises(errors.NotFoundError, match="data shard"):
            saver.restore(sess, prefix)
    (tmp_path / "empty").mkdir()
    with pytest.raises(errors.NotFoundError, match="Couldn't find 'checkpoint'"):
        mg.train.list_variables(tmp_path / "empty")
    with pytest.raises(errors.NotFoundError, match="nothing_here.index"):
        mg.train.list_variables(tmp_path / "nothing_here")


def test_a_restored_variable_of_unknown_shape_takes_the_saved_shape(tmp_path):
    g, _, saver, init = _graph({"v": np.float32([[1, 2, 3]])})
    with mg.Session(g) as sess:
        sess.run(init)
        prefix = saver.save(sess, tmp_path / "m")
    g2 = mg.Graph()
    with g2.as_default():
        v = mg.Variable(np.float32([0]), name="v", shape=mg.TensorShape(None))
        saver2 = mg.train.Saver()
    with mg.Session(g2) as sess:
        saver2.restore(sess, prefix)
        np.testing.assert_array_equal(sess.run(v), [[1, 2, 3]])


# -- TensorFlow reads what minigraph writes ---------------------------------------------------

TF_READER = textwrap.dedent(
    """
    import json, os, sys
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import numpy as np
    import tensorflow as tf
    prefix, out = sys.argv[1], sys.argv[2]
    reader = tf.train.load_checkpoint(prefix)
    shapes = reader.get_variable_to_shape_map()
    values = {k: reader.get_tensor(k) for k in shapes}
    g = tf.Graph()
    with g.as_default():
        w = tf.compat.v1.Variable(np.zeros((2, 3), np.float32), name="w", use_resource=True)
        step = tf.compat.v1.Variable(np.int64(0), name="global_step", use_resource=True)
        saver = tf.compat.v1.train.Saver([w, step])
        with tf.compat.v1.Session(graph=g) as sess:
            saver.restore(sess, tf.train.latest_checkpoint(os.path.dirname(prefix)))
            restored = sess.run([w, step])
    np.savez(out, restored_w=restored[0], restored_step=restored[1], **values)
    """
)


def test_tensorflow_reads_and_restores_what_minigraph_writes(tmp_path):
    from test_graph_def import _tf_python

    python = _tf_python()
    if python is None:
        pytest.skip("TensorFlow is not installed (set MINIGRAPH_TF_PYTHON to a Python with it)")
    values = dict(VALUES, global_step=np.int64(42))
    g, _, saver, init = _graph(values)
    with mg.Session(g) as sess:
        sess.run(init)
        prefix = saver.save(sess, tmp_path / "model", global_step=42)
    (tmp_path / "read.py").write_text(TF_READER)
    proc = subprocess.run(
        [python, str(tmp_path / "read.py"), prefix, str(tmp_path / "out.npz")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = dict(np.load(tmp_path / "out.npz"))
    for k, v in values.items():
        assert got[k].dtype == np.asarray(v).dtype and got[k].tobytes() == np.asarray(v).tobytes()
    assert got["restored_w"].tobytes() == VALUES["w"].tobytes() and got["restored_step"] == 42
