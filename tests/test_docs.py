"""The docs run: every code block of README.md and docs/*.md, and the op reference.

Blocks are read as CommonMark reads them (fenced, or indented by four spaces), in order,
with one temporary directory and one Python namespace per document, so that a block may
use what an earlier one made, as a reader would. A python block runs (a ``>>>`` block as
a doctest, so that its printed output is checked too); a shell block runs or checks each
command (see ``_check_command``: minigraph's CLI runs for real); a text block (a diagram,
a layout) must name files and code that exist.

After its language, a block's info string may say what it needs:
```` ```python needs=tensorflow ```` (or ``gpu``, ``tensorboard``, ``distributed``,
``graphviz``, comma-separated). Where that is missing the block is skipped, saying so.
TensorFlow is never a dependency: its blocks skip here, and the committed fixture that
tests/tf_oracle/make_graph_fixtures.py made by the same recipe stands in for the files
they write (``STAND_INS``), so minigraph's half of those docs runs anyway.

docs/ops/*.md is generated from the op declarations, whose examples test_doctests.py
runs; test_op_reference_is_up_to_date checks that the pages are what they generate.
"""

from __future__ import annotations

import contextlib
import doctest
import importlib.util
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from minigraph import docgen

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "ops"
FIXTURES = ROOT / "tests" / "fixtures" / "graphs"
DOC_FILES = ["README.md", *(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md")))]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


# -- the op reference -------------------------------------------------------------------------


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


def test_supported_ops_table_in_tensorflow_md_is_up_to_date():
    text = (DOCS.parent / "tensorflow.md").read_text()
    table = text.split(docgen.TABLE_BEGIN)[1].split(docgen.TABLE_END)[0].strip()
    assert table == docgen.supported_ops_table(), "run `python -m minigraph.docgen`"


# -- reading the blocks -----------------------------------------------------------------------

FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
LIST_ITEM = re.compile(r"^([-*+]|\d+[.)])\s")
PYTHON = {"python", "py", "pycon"}
SHELL = {"sh", "bash", "shell", "console"}
TEXT = {"text", "mermaid"}
NEEDS = {"tensorflow", "gpu", "tensorboard", "distributed", "graphviz"}
# What a shell block of the docs may run, each checked as _check_command says.
COMMANDS = {"pip", "minigraph", "python", "pytest", "tensorboard"}


@dataclass(frozen=True)
class Block:
    doc: str
    line: int  # the line of the block's first line of code, from 1
    lang: str
    needs: tuple[str, ...]
    text: str

    @property
    def kind(self) -> str:
        if self.lang in PYTHON:
            return "doctest" if re.search(r"^\s*>>> ", self.text, re.M) else "python"
        if self.lang in SHELL:
            return "shell"
        if self.lang in TEXT:
            return "text"
        if self.lang == "":  # an indented block has no info string: commands, or text
            words = {line.split()[0] for line in self.text.splitlines() if line.strip()}
            return "shell" if words and words <= COMMANDS else "text"
        return "unknown"


def parse_blocks(doc: str, text: str | None = None) -> list[Block]:
    """The code blocks of a Markdown file (or of ``text``): fenced ones, and those indented
    by four spaces (after a blank line, outside a list), as CommonMark reads them."""
    lines = ((ROOT / doc).read_text() if text is None else text).splitlines()
    blocks: list[Block] = []
    in_list = False
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence:
            indent, marks, info = len(fence.group(1)), fence.group(2), fence.group(3).split()
            close = re.compile(rf"^ {{0,3}}{re.escape(marks[0])}{{{len(marks)},}}\s*$")
            end = next((j for j in range(i + 1, len(lines)) if close.match(lines[j])), None)
            assert end is not None, f"{doc}:{i + 1}: a code block that is never closed"
            body = [b[min(indent, len(b) - len(b.lstrip(" "))) :] for b in lines[i + 1 : end]]
            needs = tuple(n for w in info[1:] if w.startswith("needs=") for n in w[6:].split(","))
            lang = info[0] if info else ""
            blocks.append(Block(doc, i + 2, lang, needs, "\n".join(body) + "\n"))
            i = end + 1
            continue
        blank_before = i == 0 or not lines[i - 1].strip()
        if line.startswith("    ") and line.strip() and blank_before and not in_list:
            end = i
            while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
                end += 1
            body = [b[4:] for b in lines[i:end]]
            while body and not body[-1].strip():
                body.pop()
            blocks.append(Block(doc, i + 1, "", (), "\n".join(body) + "\n"))
            i = end
            continue
        if line.strip() and not line[0].isspace():
            in_list = bool(LIST_ITEM.match(line))
        i += 1
    return blocks


def shell_commands(block: Block) -> list[tuple[int, list[str]]]:
    """(line, argv) of each command of a shell block: lines joined at a trailing
    backslash, comments dropped, ``a && b`` as two commands."""
    out: list[tuple[int, list[str]]] = []
    lines = block.text.splitlines()
    k = 0
    while k < len(lines):
        start, text = k, lines[k]
        while text.rstrip().endswith("\\") and k + 1 < len(lines):
            k += 1
            text = text.rstrip()[:-1] + " " + lines[k]
        k += 1
        argv: list[str] = []
        for token in shlex.split(text, comments=True):
            if token == "&&":
                out.append((block.line + start, argv))
                argv = []
            else:
                argv.append(token)
        if argv:
            out.append((block.line + start, argv))
    return out


@dataclass(frozen=True)
class Item:
    """What one test runs: a whole python or text block, or one shell command."""

    block: Block
    index: int  # its place in the document's items
    line: int
    argv: tuple[str, ...] | None = None

    @property
    def id(self) -> str:
        what = self.block.kind if self.argv is None else " ".join(self.argv[:2])
        return f"{self.block.doc}:{self.line} {what}"


@cache
def doc_items(doc: str) -> tuple[Item, ...]:
    items: list[Item] = []
    for block in parse_blocks(doc):
        if block.kind != "shell":
            items.append(Item(block, len(items), block.line))
            continue
        for line, argv in shell_commands(block):
            if argv[0] != "pytest":  # see test_the_docs_show_the_readme_test_command
                items.append(Item(block, len(items), line, tuple(argv)))
    return tuple(items)


ALL_ITEMS = [item for doc in DOC_FILES for item in doc_items(doc)]


def test_blocks_are_found():
    """The reader sees what CommonMark sees: fenced blocks of each language, indented ones,
    and no fence taken for text."""
    kinds = {(i.block.doc, i.block.kind) for i in ALL_ITEMS}
    assert {
        ("README.md", "python"),
        ("README.md", "shell"),
        ("README.md", "text"),
        ("docs/errors.md", "doctest"),
        ("docs/architecture.md", "text"),
        ("docs/tensorflow.md", "python"),
        ("docs/distributed.md", "shell"),
    } <= kinds
    text = (
        "a\n\n    python benchmarks/ops.py\n\n- item\n\n    more of the item\n\n"
        "~~~sh needs=gpu,graphviz\nls\n~~~\n\n  ```python\n  x = 1\n  ```\n"
    )
    got = [(b.line, b.lang, b.needs, b.text) for b in parse_blocks("x.md", text)]
    assert got == [
        (3, "", (), "python benchmarks/ops.py\n"),
        (10, "sh", ("gpu", "graphviz"), "ls\n"),
        (14, "python", (), "x = 1\n"),
    ]


# -- running them -----------------------------------------------------------------------------


def _keras_mlp_files(directory: Path) -> None:
    """model.pb and x.npy as the docs' Keras recipe makes them (x:0 [None, 8] ->
    Identity:0): the committed fixture TensorFlow froze by that recipe, and its input; and
    the SavedModel ``exported`` (pixels [None, 6] -> output_0) with pixels.npy, as
    docs/tensorflow.md's export recipe writes them."""
    shutil.copy(FIXTURES / "keras_mlp.pb", directory / "model.pb")
    np.save(directory / "x.npy", np.load(FIXTURES / "keras_mlp.npz")["feed/x:0"])
    saved = FIXTURES.parent / "saved_models"
    if not (directory / "exported").exists():
        shutil.copytree(saved / "keras_export", directory / "exported")
    np.save(directory / "pixels.npy", np.load(saved / "keras_export.npz")["feed/pixels"])


# Files that a reader makes with TensorFlow before a doc's commands use them.
STAND_INS = {"README.md": _keras_mlp_files, "docs/tensorflow.md": _keras_mlp_files}


def _missing(need: str) -> str | None:
    """Why ``need`` is not met here, or None."""
    if need == "gpu":
        if importlib.util.find_spec("cupy") is None:
            return "needs a GPU: CuPy is not installed"
        import cupy

        return None if cupy.is_available() else "needs a GPU: CuPy finds no CUDA device"
    if need == "graphviz":
        return None if shutil.which("dot") else "needs Graphviz's dot program"
    if need == "tensorflow":
        if importlib.util.find_spec("tensorflow") or _tf_python():
            return None
        return "needs TensorFlow (set MINIGRAPH_TF_PYTHON to a Python that has it)"
    if importlib.util.find_spec(need) is None:  # an extra: tensorboard, distributed
        return f"needs {need}, which is not installed (the {need} extra)"
    return None


def _tf_python() -> str | None:
    """Another interpreter with TensorFlow (MINIGRAPH_TF_PYTHON), as tests/test_models.py
    takes it: TensorFlow need not share minigraph's environment."""
    python = os.environ.get("MINIGRAPH_TF_PYTHON")
    return python if python and shutil.which(python) else None


class DocRun:
    """One document's state as a reader goes through it: a directory and a namespace."""

    def __init__(self, doc: str, directory: Path) -> None:
        self.doc = doc
        self.dir = directory
        self.ns: dict[str, Any] = {"__name__": "__main__"}
        self.outcomes: dict[int, str | None] = {}  # item index -> None, or what went wrong
        if doc in STAND_INS:
            STAND_INS[doc](directory)

    def run_up_to(self, item: Item) -> None:
        """Run the items before ``item`` not run yet in this process (the test of each
        reports it), then ``item`` itself."""
        for earlier in doc_items(self.doc)[: item.index]:
            if earlier.index not in self.outcomes:
                with contextlib.suppress(Exception, pytest.skip.Exception):
                    self._run(earlier)
        failed = [o for o in self.outcomes.values() if o and not o.startswith("skipped")]
        try:
            self._run(item)
        except AssertionError:
            raise
        except Exception as e:
            note = f" (after an earlier block failed: {failed[0]})" if failed else ""
            raise AssertionError(f"{item.id}: {type(e).__name__}: {e}{note}") from e

    def _run(self, item: Item) -> None:
        """Run one item, recording how it went."""
        try:
            _run_item(item, self)
        except pytest.skip.Exception as e:
            self.outcomes[item.index] = f"skipped: {e}"
            raise
        except Exception as e:
            self.outcomes[item.index] = f"{item.id}: {type(e).__name__}: {e}".splitlines()[0]
            raise
        self.outcomes[item.index] = None

    def close(self) -> None:
        """Close what the doc started (a Dask client and its cluster)."""
        distributed = sys.modules.get("distributed")
        if distributed is None:
            return
        for value in self.ns.values():
            if isinstance(value, (distributed.Client, distributed.LocalCluster)):
                value.close()


@pytest.fixture(scope="session")
def doc_runs(tmp_path_factory):
    runs: dict[str, DocRun] = {}

    def get(doc: str) -> DocRun:
        if doc not in runs:
            runs[doc] = DocRun(doc, tmp_path_factory.mktemp(Path(doc).stem))
        return runs[doc]

    yield get
    for run in runs.values():
        run.close()


@pytest.mark.parametrize("item", ALL_ITEMS, ids=lambda i: i.id)
def test_doc_block(item, doc_runs, monkeypatch):
    """Each block (each command of a shell block) runs as the doc shows it."""
    for need in item.block.needs:
        assert need in NEEDS, f"{item.id}: unknown need {need!r}; known: {sorted(NEEDS)}"
        why = _missing(need)
        if why is not None:
            pytest.skip(why)
    run = doc_runs(item.block.doc)
    monkeypatch.chdir(run.dir)
    try:
        run.run_up_to(item)
    finally:
        if item.index == len(doc_items(item.block.doc)) - 1:
            run.close()  # the doc's last block: its Dask client need not outlive it


def _run_item(item: Item, run: DocRun) -> None:
    block = item.block
    for need in block.needs:
        why = _missing(need)
        if why is not None:
            pytest.skip(why)
    kind = block.kind
    if (
        kind == "python"
        and "tensorflow" in block.needs
        and not importlib.util.find_spec("tensorflow")
    ):  # in TensorFlow's own interpreter, in the doc's directory: it shares files only
        script = run.dir / f"block_{block.line}.py"
        script.write_text(block.text)
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
        proc = subprocess.run(
            [str(_tf_python()), script.name], cwd=run.dir, capture_output=True, text=True, env=env
        )
        _require(proc.returncode == 0, f"{block.doc}:{block.line}: {proc.stderr[-3000:]}")
    elif kind == "python":
        code = compile("\n" * (block.line - 1) + block.text, str(ROOT / block.doc), "exec")
        exec(code, run.ns)
    elif kind == "doctest":
        name = f"{block.doc}:{block.line}"
        test = doctest.DocTestParser().get_doctest(
            block.text, run.ns, name, str(ROOT / block.doc), block.line - 1
        )
        out = io.StringIO()
        runner = doctest.DocTestRunner(optionflags=FLAGS)
        runner.run(test, out=out.write, clear_globs=False)
        run.ns.update(test.globs)
        _require(runner.failures == 0, f"{name}:\n{out.getvalue()}")
    elif kind == "shell":
        assert item.argv is not None
        _check_command(list(item.argv), run, item)
    elif kind == "text":
        _check_names(block)
    else:
        raise AssertionError(
            f"{item.id}: give the block a language the doc test knows: "
            f"{sorted(PYTHON | SHELL | TEXT)} (got {block.lang!r})"
        )


# -- shell commands ---------------------------------------------------------------------------

# Addresses that stand for the reader's own Dask scheduler: the commands run on the
# scheduler of the client the doc's python blocks started instead.
PLACEHOLDER_SCHEDULERS = {"tcp://host:8786", "tcp://scheduler:8786"}


def _require(ok: Any, message: str) -> None:
    """AssertionError(message) unless ``ok``: a doc's fault, said without pytest's noise."""
    if not ok:
        raise AssertionError(message)


def _check_command(argv: list[str], run: DocRun, item: Item) -> None:
    """Run or check one command of a shell block.

    - ``minigraph ...`` runs (``minigraph.cli.main``) in the doc's directory, on the files
      its blocks made (or STAND_INS), and must exit 0.
    - ``pip install``: nothing is installed; what it names must be minigraph (``.``) and
      extras that pyproject.toml declares.
    - ``python benchmarks/X.py ...``: the script exists and its ``--help`` lists every
      option shown (running a benchmark takes minutes); no argument is a path of one
      machine. ``python examples/X.py`` runs.
    - ``tensorboard --logdir DIR`` starts a server, so it does not run: DIR must hold the
      event file that the command before it wrote, which is what TensorBoard would show.
    - ``pytest`` is the suite itself: test_the_docs_show_the_readme_test_command checks it.
    """
    for token in argv:
        _require(
            token not in {"|", ";", "||", ">", ">>", "<", "&"},
            f"{item.id}: shell syntax the doc test does not run ({token!r}): keep commands plain",
        )
    command = argv[0]
    if command == "minigraph":
        _run_cli(argv[1:], run, item)
    elif command == "pip":
        _check_pip(argv[1:], item)
    elif command == "python":
        _check_python(argv[1:], run, item)
    elif command == "tensorboard":
        logdir = run.dir / argv[argv.index("--logdir") + 1]
        events = list(logdir.rglob("events.out.tfevents.*"))
        _require(events, f"{item.id}: {logdir.name}/ has no event file for TensorBoard to show")
    else:
        raise AssertionError(
            f"{item.id}: the doc test does not know how to check `{command}` "
            "(tests/test_docs.py, _check_command)"
        )


def _run_cli(args: list[str], run: DocRun, item: Item) -> None:
    from minigraph.cli import main

    if "--dask" in args:
        pytest.importorskip("distributed", reason="needs the distributed extra")
        at = args.index("--dask") + 1
        if at < len(args) and args[at] in PLACEHOLDER_SCHEDULERS:
            clients = [v for v in run.ns.values() if type(v).__name__ == "Client"]
            _require(clients, f"{item.id}: {args[at]} stands for a scheduler the doc never started")
            args[at] = clients[0].scheduler.address
    if any(a.endswith((".pb", ".pbtxt")) for a in args):
        pytest.importorskip("tensorboard", reason="a GraphDef needs the tensorboard extra")
    if args[0] == "show" and "-o" in args and not args[args.index("-o") + 1].endswith(".dot"):
        why = _missing("graphviz")
        if why is not None:
            pytest.skip(f"`minigraph show -o {args[args.index('-o') + 1]}` {why}")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as e:
            code = e.code
    _require(
        code in (0, None),
        f"{item.id}: `minigraph {' '.join(args)}` exited {code}:\n{err.getvalue()[-2000:]}",
    )


@cache
def _extras() -> frozenset[str]:
    """The extras pyproject.toml declares (read without tomllib, which Python 3.10 lacks)."""
    text = (ROOT / "pyproject.toml").read_text()
    section = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return frozenset(re.findall(r"^([\w-]+)\s*=", section, re.M))


def _check_pip(args: list[str], item: Item) -> None:
    _require(args and args[0] == "install", f"{item.id}: pip {' '.join(args)}")
    specs = [a for a in args[1:] if a not in ("-e", "--editable", "-U", "--upgrade")]
    _require(specs, f"{item.id}: pip install names nothing")
    for spec in specs:
        m = re.fullmatch(r"(\.|minigraph)(?:\[([\w,-]+)\])?", spec)
        _require(m, f"{item.id}: `pip install {spec}`: the docs install minigraph and its extras")
        unknown = set((m.group(2) or "").split(",")) - {""} - _extras()
        _require(not unknown, f"{item.id}: no extra {sorted(unknown)} in pyproject.toml")


@cache
def _help_of(script: Path) -> str:
    proc = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=300
    )
    _require(proc.returncode == 0, f"{script.name} --help failed: {proc.stderr[-2000:]}")
    return proc.stdout


def _check_python(args: list[str], run: DocRun, item: Item) -> None:
    if args[:1] == ["-m"]:
        _require(importlib.util.find_spec(args[1]), f"{item.id}: no module {args[1]}")
        return
    script = ROOT / args[0]
    _require(script.is_file(), f"{item.id}: {args[0]} does not exist")
    for arg in args[1:]:
        _require(
            not arg.startswith(("/", "~")),
            f"{item.id}: {arg} is a path on one machine; say what goes there (PATH)",
        )
    if args[0].startswith("benchmarks/"):
        text = _help_of(script)
        for option in {a.split("=")[0] for a in args[1:] if a.startswith("-")}:
            _require(
                re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text),
                f"{item.id}: {args[0]} has no option {option}",
            )
    elif args[0].startswith("examples/"):
        proc = subprocess.run(
            [sys.executable, str(script), *args[1:]], cwd=run.dir, capture_output=True, text=True
        )
        _require(proc.returncode == 0, f"{item.id}: {proc.stderr[-2000:]}")
    else:
        raise AssertionError(f"{item.id}: the doc test runs scripts of examples/ and benchmarks/")


# -- text blocks ------------------------------------------------------------------------------


@cache
def _source_words() -> frozenset[str]:
    files = [*(ROOT / "minigraph").rglob("*.py"), *(ROOT / "ops").rglob("*.py")]
    return frozenset(w for f in files for w in re.findall(r"\w+", f.read_text()))


def _repo_paths() -> list[Path]:
    skip = {".git", "__pycache__", "node_modules"}
    return [p for p in ROOT.rglob("*") if not skip & set(p.relative_to(ROOT).parts[:-1])]


def _check_names(block: Block) -> None:
    """A diagram or a layout names files, folders and code that exist."""
    text = block.text
    paths = _repo_paths()
    names = {p.name for p in paths}
    dirs = {p.name for p in paths if p.is_dir()}
    missing = []
    for name in re.findall(r"[\w/*.-]*\w\.py\b", text):
        if "*" in name:
            if not list(ROOT.glob(name)):
                missing.append(name)
        elif Path(name).name not in names:
            missing.append(name)
    missing += [d for d in re.findall(r"(?<![\w/<])(\w+)/(?=[\s),;]|$)", text) if d not in dirs]
    code = re.findall(r"\b(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*|\b[a-z]+_\w+|\b[A-Z][a-z]+[A-Z]\w*", text)
    words = _source_words()
    missing += [c for c in code if not c.endswith(".py") and c.split(".")[-1] not in words]
    _require(not missing, f"{block.doc}:{block.line} names what does not exist: {missing}")


# -- across the docs --------------------------------------------------------------------------


def _test_lines(doc: str) -> list[list[str]]:
    out = []
    for block in parse_blocks(doc):
        if block.kind == "shell":
            for line in block.text.splitlines():
                argv = shlex.split(line, comments=True)
                if "pytest" in argv:
                    out.append(argv)
    return out


def test_the_docs_show_the_readme_test_command():
    """One way to run the tests: where a doc shows it, it is the README's (the suite itself
    is what that command runs, so it is compared, not run)."""
    readme = _test_lines("README.md")
    assert len(readme) == 1, "README.md shows how to run the tests, once"
    for doc in DOC_FILES:
        for argv in _test_lines(doc):
            assert argv == readme[0], f"{doc} runs the tests as {shlex.join(argv)}"


def test_links_between_docs_reach_their_files():
    for doc in DOC_FILES:
        text = (ROOT / doc).read_text()
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (ROOT / doc).parent / target.split("#")[0]
            assert path.exists(), f"{doc} links to {target}, which does not exist"
    readme = (ROOT / "README.md").read_text()
    assert "(docs/getting-started.md)" in readme


def test_headings_cite_no_issue_numbers():
    for doc in DOC_FILES:
        for line in (ROOT / doc).read_text().splitlines():
            assert not re.match(r"#+ .*\bissues? #?\d", line), f"{doc}: {line}"


def test_the_doc_test_checks_what_it_says(tmp_path):
    """The checks fail where they should: a stale name, a developer's path, a missing
    benchmark option, an unknown extra."""
    stale = Block("d.md", 1, "text", (), "A --> B[(nowhere.py)] --> build_plan_v2\n")
    with pytest.raises(AssertionError, match=r"nowhere\.py.*build_plan_v2"):
        _check_names(stale)
    run = DocRun("d.md", tmp_path)
    bench = Block("d.md", 1, "sh", (), "")
    cases = {
        "python benchmarks/ops.py --peers-python /root/venv/bin/python": "path on one machine",
        "python benchmarks/ops.py --no-such-option": "has no option --no-such-option",
        "pip install 'minigraph[nope]'": "no extra",
        "curl http://example.com": "does not know how to check",
        "minigraph run missing.json": "exited 1",
    }
    for line, message in cases.items():
        item = Item(bench, 0, 1, tuple(shlex.split(line)))
        with pytest.raises(AssertionError, match=re.escape(message)):
            _check_command(list(item.argv or ()), run, item)
    os.makedirs(tmp_path / "logs")
    with pytest.raises(AssertionError, match="no event file"):
        item = Item(bench, 0, 1, ("tensorboard", "--logdir", "logs"))
        _check_command(list(item.argv or ()), run, item)
