"""The op reference (docs/ops/), generated from the op declarations alone.

    python -m minigraph.docgen [DIR]     # write DIR (default docs/ops) anew

A test compares these pages with the checked-in ones, so the reference cannot
drift from the declarations.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from .op_def import ArgDef, AttrDef, OpDef
from .registry import registered_ops

__all__ = ["op_page", "index_page", "pages", "write"]


def _arg_type(arg: ArgDef) -> str:
    t = arg.type_attr or str(arg.dtype)
    return f"list of `{arg.number_attr}` tensors of `{t}`" if arg.is_list else f"`{t}`"


def _attr_line(a: AttrDef) -> str:
    if a.kind == "type" and a.allowed:
        kind = "type in {" + ", ".join(d.name for d in a.allowed) + "}"
    elif a.kind == "string" and a.allowed:
        kind = "string in {" + ", ".join(repr(s) for s in a.allowed) + "}"
    else:
        kind = a.kind
    if a.minimum is not None:
        kind += f", at least {a.minimum}"
    default = ""
    if a.has_default:
        value = a.default.name if hasattr(a.default, "name") else repr(a.default)
        default = f" (default `{value}`)"
    return f"- `{a.name}`: {kind}{default}"


def op_page(op_def: OpDef) -> str:
    """The Markdown page of one op."""
    lines = [f"# {op_def.name}", "", f"`{op_def.signature()}`", ""]
    lines += [textwrap.dedent(op_def.doc).strip() or "(no description)", ""]
    lines += ["## Inputs", ""]
    if not op_def.inputs:
        lines.append("None.")
    for arg in op_def.inputs:
        host = " (host memory)" if arg.name in op_def.host_inputs else ""
        lines.append(f"- `{arg.name}`: {_arg_type(arg)}{host}")
    lines += ["", "## Outputs", ""]
    for arg in op_def.outputs:
        host = " (host memory)" if arg.name in op_def.host_outputs else ""
        lines.append(f"- `{arg.name}`: {_arg_type(arg)}{host}")
    inferred = op_def.inferred_attrs()
    lines += ["", "## Attrs", ""]
    if not op_def.attrs:
        lines.append("None.")
    for a in op_def.attrs:
        note = " — inferred from the inputs" if a.name in inferred else ""
        lines.append(_attr_line(a) + note)
    devices = ", ".join(sorted(op_def.kernel_devices)) or "none"
    lines += ["", "## Kernels", "", f"Devices with a kernel: {devices}."]
    if op_def.aliases_input:
        lines.append("The output may share memory with the first input (a view).")
    lines += [
        "",
        "## C++-style class",
        "",
        f"`minigraph.ops.{op_def.name}(scope, "
        + ", ".join(a.name for a in op_def.inputs)
        + (", **attrs" if set(a.name for a in op_def.attrs) - inferred else "")
        + ")`, with "
        + ", ".join(f"`.{a.name}`" for a in op_def.outputs)
        + ", `.operation` and `.node()`.",
        "",
    ]
    return "\n".join(lines)


def index_page(ops: dict[str, OpDef]) -> str:
    lines = [
        "# Op reference",
        "",
        "Generated from the op declarations by `python -m minigraph.docgen`; do not edit.",
        "",
        "| op | signature | kernels |",
        "|---|---|---|",
    ]
    for name, op_def in sorted(ops.items()):
        devices = ", ".join(sorted(op_def.kernel_devices))
        lines.append(f"| [{name}]({name}.md) | `{op_def.signature()}` | {devices} |")
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    """File name -> content for the whole reference (public ops only)."""
    ops = {n: d for n, d in registered_ops().items() if not n.startswith("_")}
    out = {f"{name}.md": op_page(op_def) for name, op_def in ops.items()}
    out["README.md"] = index_page(ops)
    return out


def write(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.md"):
        old.unlink()
    for name, text in pages().items():
        (directory / name).write_text(text)


if __name__ == "__main__":
    write(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/ops"))
