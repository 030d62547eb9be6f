"""Every script in examples/ runs and checks its own result."""

import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
FIXTURES = ROOT / "tests" / "fixtures" / "graphs"


def test_there_are_examples():
    names = {p.stem for p in EXAMPLES}
    assert {
        "space_to_batch_nd",
        "dynamic_stitch",
        "partition_stitch",
        "tensor_scatter_update",
        "builders_vs_cpp_api",
        "atrous_convolution",
        "gpu",
        "tensorflow_graph",
        "dask_cluster",
        "keras_to_minigraph",
    } <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs(path, capsys, monkeypatch):
    text = path.read_text()
    assert text.startswith('"""'), "each example starts with a header saying what it shows"
    monkeypatch.setattr(sys, "argv", [str(path)])  # as `python examples/NAME.py`
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()


def _keras_example():
    return runpy.run_path(str(ROOT / "examples" / "keras_to_minigraph.py"), run_name="example")


def test_keras_example_compares_with_keras_and_fails_on_a_wrong_output(tmp_path, capsys):
    """Its minigraph half on the committed Keras model: the output equals Keras's saved
    one, and an output that differs from it is caught."""
    pytest.importorskip("tensorboard", reason="needs the tensorboard extra")
    example = _keras_example()
    shutil.copy(FIXTURES / "keras_mlp.pb", tmp_path / "model.pb")
    saved = dict(np.load(FIXTURES / "keras_mlp.npz"))
    np.savez(tmp_path / "model.npz", **saved)
    example["main"](["run", str(tmp_path)])
    out = capsys.readouterr().out
    assert "input  x:0: float32 [?,8]" in out and "output Identity:0: float32 [?,3]" in out
    saved["fetch/Identity:0"] = saved["fetch/Identity:0"] + np.float32(1e-3)
    np.savez(tmp_path / "model.npz", **saved)
    with pytest.raises(AssertionError, match="Identity:0"):
        example["main"](["run", str(tmp_path)])


def test_keras_example_freezes_a_model_with_tensorflow(tmp_path, capsys):
    """The TensorFlow half, where TensorFlow is installed (here, or in the interpreter that
    MINIGRAPH_TF_PYTHON names); then minigraph runs what it froze."""
    pytest.importorskip("tensorboard", reason="needs the tensorboard extra")
    script = ROOT / "examples" / "keras_to_minigraph.py"
    python = os.environ.get("MINIGRAPH_TF_PYTHON")
    if python and shutil.which(python):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
        cmd = [python, str(script), "freeze", str(tmp_path)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
    else:
        pytest.importorskip(
            "tensorflow", reason="TensorFlow is not installed (or set MINIGRAPH_TF_PYTHON)"
        )
        _keras_example()["main"](["freeze", str(tmp_path)])
    saved = np.load(tmp_path / "model.npz")
    assert sorted(saved.files) == ["feed/x:0", "fetch/Identity:0"]
    assert saved["fetch/Identity:0"].shape == (4, 3)
    np.testing.assert_allclose(saved["fetch/Identity:0"].sum(axis=1), 1.0, rtol=1e-6)  # softmax
    _keras_example()["main"](["run", str(tmp_path)])
    assert "Identity:0 equals Keras's output" in capsys.readouterr().out
