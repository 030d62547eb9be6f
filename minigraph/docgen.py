"""The op reference (docs/ops/), generated from the op declarations alone.

    python -m minigraph.docgen [DIR]     # write DIR (default docs/ops) anew, and the
                                         # supported-ops table in docs/tensorflow.md

A test compares these pages with the checked-in ones, so the reference cannot
drift from the declarations.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

from .op_def import ArgDef, AttrDef, OpDef
from .registry import lookup_gradient, registered_ops

__all__ = ["op_page", "index_page", "pages", "write", "supported_ops_table", "update_table"]


def _arg_type(arg: ArgDef) -> str:
    if arg.type_list_attr is not None:
        return f"list of tensors, one dtype each from `{arg.type_list_attr}`"
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


def _gradient_text(op: str) -> str:
    """What ``mg.gradients`` does at a node of ``op``: the registered gradient function's
    docstring (its first paragraph) and module, or why there is none."""
    registered, fn = lookup_gradient(op)
    if not registered:
        return "None is registered: `mg.gradients` through this op raises `NoGradientError`."
    if fn is None:
        return "None: not differentiable, as in TensorFlow (`mg.gradients` stops here)."
    module = fn.__module__.replace("minigraph.ops.", "ops/") + ".py"
    doc = textwrap.dedent(fn.__doc__ or "").strip().split("\n\n")[0]
    summary = " ".join(doc.split()) if doc else "TensorFlow's formula."
    return f"{summary} (`{module}`)"


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
        viewed = op_def.inputs[op_def.aliased_input].name
        lines.append(f"The outputs may share memory with input `{viewed}` (views).")
    lines += ["", "## Gradient", "", _gradient_text(op_def.name)]
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


# -- docs/tensorflow.md's table of supported ops ----------------------------------------

TABLE_BEGIN = "<!-- supported-ops: generated by `python -m minigraph.docgen` -->"
TABLE_END = "<!-- end supported-ops -->"


def supported_ops_table() -> str:
    """Markdown: every TensorFlow op minigraph runs, grouped by the module of its kernel."""
    families: dict[str, list[str]] = {}
    for name, op_def in registered_ops().items():
        if name.startswith("_"):
            continue
        kernel = op_def.kernels.get("CPU") or next(iter(op_def.kernels.values()), None)
        family = getattr(kernel, "__module__", "other").rsplit(".", 1)[-1]
        families.setdefault(family, []).append(name)
    lines = [
        f"{sum(len(n) for n in families.values())} TensorFlow op types "
        "(each links to its page in docs/ops/):",
        "",
        "| family | ops |",
        "|---|---|",
    ]
    for family, names in sorted(families.items()):
        lines.append(
            f"| {family} | " + ", ".join(f"[{n}](ops/{n}.md)" for n in sorted(names)) + " |"
        )
    return "\n".join(lines)


def update_table(path: Path) -> None:
    """Rewrite the supported-ops table between its markers in ``path``."""
    text = path.read_text()
    head, sep, rest = text.partition(TABLE_BEGIN)
    _, sep2, tail = rest.partition(TABLE_END)
    if not sep or not sep2:
        raise ValueError(f"{path} lacks the supported-ops markers")
    path.write_text(f"{head}{TABLE_BEGIN}\n{supported_ops_table()}\n{TABLE_END}{tail}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m minigraph.docgen",
        description="Write the op reference anew, and the supported-ops table in the "
        "tensorflow.md beside it.",
    )
    parser.add_argument("dir", nargs="?", default="docs/ops", help="default: docs/ops")
    target = Path(parser.parse_args(argv).dir)
    write(target)
    update_table(target.parent / "tensorflow.md")


if __name__ == "__main__":
    main()
