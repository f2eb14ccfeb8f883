"""The package tree is the architecture: every module belongs to a layer, each layer imports only the layers
ALLOWED names (the layers below it), and no module imports another that imports it back. The public API
(promote_cli/__init__.py) is a layer like the others: it may import everything below it, nothing of the
command line. docs/architecture.md states the same table."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "promote_cli"

BASE = {"errors", "records", "tomlcache", "vocab"}  # beneath every subsystem

#: what each layer may import from the project besides itself. A module's layer is its subpackage, or its own
#: name for a top-level module (`api` is promote_cli/__init__.py).
ALLOWED = {
    "errors": set(),
    "records": set(),
    "tomlcache": set(),
    "vocab": {"errors", "records", "tomlcache"},
    "oracle": BASE,
    "numerics": BASE,
    "arrayio": BASE | {"numerics"},
    "expressions": BASE | {"oracle"},
    "probes": BASE | {"oracle", "numerics", "expressions"},
    "formats": {"errors", "records", "vocab"},
    "api": BASE | {"oracle", "numerics", "arrayio", "expressions", "probes", "formats"},
    "cli": {"errors", "vocab", "formats", "api"},
    "__main__": {"cli"},
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports(path: Path) -> set[str]:
    """The project modules a file imports (at any depth: lazy imports count too, and so does a string naming a
    module or `MODULE.NAME`, as a table of names loaded on first use holds them)."""
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
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            module, _, name = node.value.rpartition(".")
            if node.value in MODULES:
                found.add(node.value)
            elif module in MODULES and name.isidentifier():
                found.add(module)
    return found


def layer(module: str) -> str:
    parts = module.split(".")
    return "api" if len(parts) == 1 else parts[1]


def wrong_imports(name: str, path: Path) -> list[str]:
    own = layer(name)
    return [f"{name} imports {target}" for target in sorted(imports(path))
            if layer(target) != own and layer(target) not in ALLOWED[own]]


def cycles(graph: dict[str, set[str]]) -> list[str]:
    found = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    return found


def test_imports_are_absolute():
    relative = sorted(m for p in MODULES.values() for m in imports(p) if m.startswith("<"))
    assert not relative, relative


def test_every_module_belongs_to_a_layer():
    assert sorted(name for name in MODULES if layer(name) not in ALLOWED) == []


def test_each_layer_imports_only_what_lies_below_it():
    wrong = [line for name, path in MODULES.items() for line in wrong_imports(name, path)]
    assert not wrong, "\n".join(wrong)


def test_the_layers_are_ordered():
    """"Below" means something: no layer may import, even through others, a layer that may import it."""
    assert cycles({name: set(allowed) for name, allowed in ALLOWED.items()}) == []


def test_no_import_cycles():
    graph = {name: {t for t in imports(path) if t in MODULES and t != name} for name, path in MODULES.items()}
    found = cycles(graph)
    assert not found, "\n".join(found)


def test_the_checks_see_a_violation(tmp_path):
    """A vocab module importing the oracle, the API importing the command line (at once, lazily or by a name in a
    table) and a cycle through the API would each be caught: the checks are not vacuous."""
    bad = tmp_path / "bad.py"
    bad.write_text("from promote_cli.oracle.engine import answer\n")
    assert wrong_imports("promote_cli.vocab.bad", bad) == ["promote_cli.vocab.bad imports promote_cli.oracle.engine"]
    for source in ("from promote_cli.cli import formats\n", "def f():\n    import promote_cli.cli.fast\n",
                   "LAZY = {'run': 'promote_cli.cli.fast.run'}\n"):
        bad.write_text(source)
        assert [w.startswith("promote_cli imports promote_cli.cli") for w in wrong_imports("promote_cli", bad)] \
            == [True], source
    assert cycles({"promote_cli": {"promote_cli.oracle.matrix"}, "promote_cli.oracle.matrix": {"promote_cli"}})


def test_the_architecture_page_states_the_layers():
    """docs/architecture.md's table of layers says what ALLOWED says, row for row."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    stated = {}
    for names, allowed in re.findall(r"^\| ((?:`\w+`(?:, )?)+) \| ([^|]*) \|$", page, re.M):
        for name in re.findall(r"`(\w+)`", names):
            stated[name] = set(re.findall(r"`(\w+)`", allowed))
    assert stated == ALLOWED
