"""The package tree is the architecture: subsystems import only what lies below them, and no
module imports another that imports it back (docs/architecture.md draws the same picture)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "promote_cli"

#: what each subpackage may import from the project, besides itself, `errors`, `tomlcache` (parsed TOML kept on
#: disk, below everything), `records` (plain data classes, below everything) and the vocabulary.
ALLOWED = {
    "vocab": set(),
    "oracle": set(),
    "numerics": set(),
    "arrayio": {"numerics"},
    "expressions": {"oracle"},
    "probes": {"oracle", "numerics", "expressions"},
    "formats": set(),  # the output formats: payloads in, text out
    "cli": {"api", "formats"},  # commands reach everything else through the public API (promote_cli/__init__.py)
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The project modules a file imports (at any depth: lazy imports count too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("promote_cli"):
                for alias in node.names:
                    candidate = f"{node.module}.{alias.name}"
                    found.add(candidate if candidate in MODULES else node.module)
        elif isinstance(node, ast.ImportFrom) and node.level:
            found.add(f"<relative import in {path.name}>")
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("promote_cli"))
    return found


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "api"
    return parts[1] if parts[1] in ALLOWED else parts[1]  # errors, __main__: their own names


def test_imports_are_absolute():
    relative = sorted(m for p in MODULES.values() for m in imports(p) if m.startswith("<"))
    assert not relative, relative


def test_subsystems_import_only_what_lies_below_them():
    wrong = []
    for name, path in MODULES.items():
        own = layer(name)
        if own not in ALLOWED:
            continue
        for target in imports(path):
            other = layer(target)
            if other in (own, "errors", "tomlcache", "records", "vocab") or other in ALLOWED[own]:
                continue
            wrong.append(f"{name} imports {target}")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_import_cycles():
    graph = {name: {t for t in imports(path) if t in MODULES} for name, path in MODULES.items()}
    graph.pop("promote_cli", None)  # the API facade imports lazily from everything below it
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if nxt == "promote_cli":
                continue
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, "\n".join(cycles)


def test_the_layering_test_sees_a_violation(tmp_path, monkeypatch):
    """A vocab module importing the oracle would be caught (the check is not vacuous)."""
    bad = tmp_path / "bad.py"
    bad.write_text("from promote_cli.oracle.engine import answer\n")
    assert "promote_cli.oracle.engine" in imports(bad)
    assert layer("promote_cli.oracle.engine") not in ALLOWED["vocab"] | {"vocab", "errors"}
