"""Every CuPy function the kernels call exists in the installed CuPy.

``import cupy`` needs no CUDA device, so this runs wherever CuPy is installed, GPU or not;
it is skipped where CuPy is not. Calls are found in the source: ``xp.name`` and
``ctx.xp.name`` attributes, and the ufunc names given to ``math_ops.elementwise``.
"""

import ast
from pathlib import Path

import pytest

cupy = pytest.importorskip("cupy")

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*ROOT.joinpath("ops").glob("*.py"), *ROOT.joinpath("minigraph").glob("*.py")]) + [
    ROOT / "benchmarks" / "gpu.py"
]


def _is_xp(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id == "xp") or (
        isinstance(node, ast.Attribute) and node.attr == "xp"
    )


def _used_names() -> dict[str, str]:
    """CuPy attribute -> the first file that uses it."""
    used: dict[str, str] = {}
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            name = None
            if isinstance(node, ast.Attribute) and _is_xp(node.value):
                name = node.attr
            elif (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "elementwise"
                and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant)
            ):
                name = node.args[1].value  # elementwise("Add", "add", ...): cupy.add
            if name is not None:
                used.setdefault(name, path.name)
    return used


def test_the_scan_finds_the_kernels_calls():
    used = _used_names()
    assert {"take", "argsort", "put", "add", "logical_and", "copyto"} <= set(used)


def test_cupy_has_every_function_the_kernels_call():
    missing = {name: where for name, where in _used_names().items() if not hasattr(cupy, name)}
    assert missing == {}
