"""The layers of the package, checked: a module imports only from its own
layer and the layers below (docs/architecture.md draws them), anywhere in the
file, inside functions too; and a few libraries stay where they belong."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "arena"

# Bottom to top. A module in layer i may import layers 0..i only.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("arena", "arena.errors", "arena.untrusted")),
    ("engine", ("arena.engine",)),
    ("solve", ("arena.solve",)),
    ("botfile", ("arena.botfile",)),
    ("protocol", ("arena.protocol", "arena.sdk")),
    ("sandbox", ("arena.sandbox",)),
    ("match", ("arena.match",)),
    ("exploit", ("arena.exploit",)),
    ("running", ("arena.running",)),
    ("analysis", ("arena.analysis",)),
    ("serve", ("arena.serve",)),
    ("apps", ("arena.apps", "arena.__main__")),
]

# Libraries only some layers may use: the pure engine does no I/O, the
# command line is the only user of click, and tables stay in analysis.
ONLY_IN = {
    "click": ("apps",),
    "pandas": ("analysis",),
    "matplotlib": ("analysis",),
    "subprocess": ("botfile", "sandbox", "match", "running", "apps"),
    "multiprocess": ("running",),
    "ray": ("running",),
    "starlette": ("serve",),
    "uvicorn": ("serve",),
}


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> int:
    best, found = -1, None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, found = len(p), i
    if found is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in tests/test_structure.py")
    return found


def imports(tree: ast.AST, module: str) -> list[tuple[str, int]]:
    """Every module imported (absolute names), with its line."""
    out = []
    package = (
        module if (PACKAGE.parent / module.replace(".", "/") / "__init__.py").exists() else module.rpartition(".")[0]
    )
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            out.append((base, node.lineno))
            # `from arena import x` names a module x when arena/x exists
            for a in node.names:
                sub = f"{base}.{a.name}"
                if (PACKAGE.parent / sub.replace(".", "/")).exists() or (
                    PACKAGE.parent / (sub.replace(".", "/") + ".py")
                ).exists():
                    out.append((sub, node.lineno))
    return out


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=[module_name(p) for p in MODULES])
def test_no_module_imports_a_layer_above_its_own(path: Path) -> None:
    module = module_name(path)
    mine = layer_of(module)
    tree = ast.parse(path.read_text(), filename=str(path))
    wrong = []
    for name, line in imports(tree, module):
        top = name.split(".")[0]
        if top == "arena":
            if layer_of(name) > mine:
                wrong.append(
                    f"{path.relative_to(PACKAGE.parent)}:{line} imports {name} "
                    f"({LAYERS[layer_of(name)][0]}), above its layer {LAYERS[mine][0]}"
                )
        elif top in ONLY_IN and LAYERS[mine][0] not in ONLY_IN[top]:
            wrong.append(
                f"{path.relative_to(PACKAGE.parent)}:{line} imports {top}, which only {', '.join(ONLY_IN[top])} may use"
            )
    assert not wrong, "\n".join(wrong)


def test_every_module_is_in_a_layer() -> None:
    for path in MODULES:
        layer_of(module_name(path))
