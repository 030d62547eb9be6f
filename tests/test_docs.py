"""The op reference in docs/ops/ matches what the declarations generate."""

from pathlib import Path

import pytest

from minigraph import docgen

DOCS = Path(__file__).resolve().parent.parent / "docs" / "ops"


def test_op_reference_is_up_to_date():
    expected = docgen.pages()
    actual = {p.name: p.read_text() for p in DOCS.glob("*.md")}
    stale = sorted(n for n in expected.keys() | actual.keys() if expected.get(n) != actual.get(n))
    assert not stale, f"docs/ops is out of date for {stale}: run `python -m minigraph.docgen`"


def test_every_public_op_has_a_page_with_its_signature():
    pages = docgen.pages()
    import minigraph as mg

    for name, op_def in mg.registered_ops().items():
        if name.startswith("_"):
            continue
        assert op_def.signature() in pages[f"{name}.md"]


def test_docgen_help_writes_nothing(tmp_path, monkeypatch, capsys):
    """``python -m minigraph.docgen --help`` prints its usage; it once took "--help" for the
    directory to write the reference into."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        docgen.main(["--help"])
    assert e.value.code == 0 and "usage:" in capsys.readouterr().out
    assert not any(tmp_path.iterdir())


def _python_blocks(path):
    text = path.read_text()
    return [block.split("```", 1)[0] for block in text.split("```python\n")[1:]]


@pytest.mark.parametrize("doc", ["README.md", "docs/getting-started.md"])
def test_python_examples_in_docs_run(doc):
    path = DOCS.parent.parent / doc
    blocks = _python_blocks(path)
    assert blocks, f"{doc} has no python examples"
    namespace: dict = {}
    for block in blocks:  # later blocks may use names from earlier ones, as a reader would
        exec(compile(block, str(path), "exec"), namespace)


def test_supported_ops_table_in_tensorflow_md_is_up_to_date():
    text = (DOCS.parent / "tensorflow.md").read_text()
    table = text.split(docgen.TABLE_BEGIN)[1].split(docgen.TABLE_END)[0].strip()
    assert table == docgen.supported_ops_table(), "run `python -m minigraph.docgen`"
