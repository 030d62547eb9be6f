"""Every script in examples/ runs and checks its own result."""

import runpy
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.py"))


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
    } <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs(path, capsys):
    text = path.read_text()
    assert text.startswith('"""'), "each example starts with a header saying what it shows"
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()
