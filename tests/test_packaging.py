"""Packaging: the wheel holds every module of minigraph/ and ops/, and the version has one home.

The editable install the tests run from imports straight from the checkout, so a module
left out of the wheel goes unnoticed here (minigraph.distributed once was). This builds the
wheel from a clean copy of the sources and compares its modules with the source tree's;
.ci/run also installs it in a fresh venv and runs a smoke test of every extra from it.
"""

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import minigraph as mg

ROOT = Path(__file__).resolve().parent.parent


def _source_modules() -> set[str]:
    """minigraph/**/*.py and ops/**/*.py as the wheel's paths (ops/ installs as minigraph/ops)."""
    out = set()
    for top, dest in (("minigraph", "minigraph"), ("ops", "minigraph/ops")):
        for path in (ROOT / top).rglob("*.py"):
            out.add(f"{dest}/{path.relative_to(ROOT / top).as_posix()}")
    return out


def test_pyproject_finds_packages_and_reads_the_version_from_the_package():
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11's TOML reader")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    setuptools = config["tool"]["setuptools"]
    assert "packages" not in setuptools  # found from package-dir, never listed by hand
    assert setuptools["package-dir"] == {"minigraph": "minigraph", "minigraph.ops": "ops"}
    assert "version" not in config["project"] and config["project"]["dynamic"] == ["version"]
    assert setuptools["dynamic"]["version"] == {"attr": "minigraph.__version__"}
    init = (ROOT / "minigraph" / "__init__.py").read_text()
    assert re.findall(r'^__version__ = "(.+)"$', init, re.M) == [mg.__version__]


def test_the_wheel_holds_every_module(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for top in ("minigraph", "ops"):
        shutil.copytree(ROOT / top, src / top, ignore=ignore)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(src)],
        capture_output=True,
        text=True,
    )
    if proc.returncode and "No matching distribution found for setuptools" in proc.stderr:
        pytest.skip("pip cannot fetch setuptools (pyproject's build requirement) here")
    assert proc.returncode == 0, proc.stderr
    (wheel,) = tmp_path.glob("minigraph-*.whl")
    assert wheel.name.startswith(f"minigraph-{mg.__version__}-")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    in_wheel = {n for n in names if n.endswith(".py")}
    assert in_wheel == _source_modules()
    assert "minigraph/distributed/__init__.py" in in_wheel
    assert not {n for n in names if n.startswith(("ops/", "tests/", "benchmarks/"))}
