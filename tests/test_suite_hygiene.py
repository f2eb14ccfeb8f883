"""The suite itself: no test module skips whole, hedges on the project or its hard
dependencies, or guesses at click's result; the skip guard (tests/skip_guard.py) fails
every skip but the two allowed kinds; spec/ holds what spec/README.md says, with notices."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support import ROOT, SPEC, load_tool

TESTS = Path(__file__).resolve().parent
MODULES = sorted(TESTS.glob("*.py"))


def _hard_dependencies() -> set[str]:
    """Top-level import names of the project's runtime dependencies, read from pyproject.toml."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)[1]
    names = re.findall(r'"([A-Za-z0-9_.-]+)', block)
    assert "click" in names and "numpy" in names
    return {name.lower().replace("-", "_") for name in names} | {"pytest", "promote_cli"}


HARD = _hard_dependencies()


def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield node


def _name(func: ast.expr) -> str:
    return ast.unparse(func)


def _problems(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    problems = []
    top_level = {id(n) for stmt in tree.body if not isinstance(stmt, (ast.FunctionDef, ast.ClassDef))
                 for n in ast.walk(stmt)}
    for call in _calls(tree):
        name, line = _name(call.func), f"{path.name}:{call.lineno}"
        if name == "pytest.skip" and (id(call) in top_level
                                      or any(k.arg == "allow_module_level" for k in call.keywords)):
            problems.append(f"{line}: a module-level skip hides every test of the module")
        if name == "pytest.importorskip" and call.args and isinstance(call.args[0], ast.Constant):
            module = str(call.args[0].value)
            if module.split(".")[0] in HARD:
                problems.append(f"{line}: importorskip({module!r}) of the project or a hard dependency")
            if id(call) in top_level:
                problems.append(f"{line}: a module-level importorskip hides every test of the module")
        if name == "hasattr" and len(call.args) == 2 and isinstance(call.args[1], ast.Constant) \
                and call.args[1].value in ("stderr", "stdout", "output"):
            problems.append(f"{line}: hasattr(..., {call.args[1].value!r}): click's Result always has it")
        if name in ("pytest.mark.skipif", "pytest.mark.skip"):
            problems.append(f"{line}: {name}: skip through require_framework() or outside_spec_page()")
    return problems


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_no_module_skips_or_hedges(path):
    assert _problems(path) == []


def test_the_static_check_catches_each_kind(tmp_path):
    bad = tmp_path / "test_bad.py"
    bad.write_text(textwrap.dedent('''
        import pytest
        np = pytest.importorskip("numpy")
        pytest.skip("no page", allow_module_level=True)

        @pytest.mark.skipif(True, reason="x")
        def test_a(res):
            pytest.importorskip("promote_cli.oracle.engine")
            pytest.importorskip("click.testing")
            err = res.stderr if hasattr(res, "stderr") else res.output
    '''))
    found = "\n".join(_problems(bad))
    for line, words in [(3, "importorskip('numpy')"), (3, "module-level importorskip"), (4, "module-level skip"),
                        (6, "pytest.mark.skipif"), (8, "'promote_cli.oracle.engine'"),
                        (9, "'click.testing'"), (10, "hasattr(..., 'stderr')")]:
        assert f"test_bad.py:{line}: " in found and words in found, (line, words, found)


GUARDED = '''
import pytest
from support import FRAMEWORK_ABSENT, SPEC_PAGE_ABSENT

@pytest.mark.live
def test_live_framework_absent():
    pytest.skip(f"{FRAMEWORK_ABSENT} openvino")

def test_outside_page_absent():
    pytest.skip(f"{SPEC_PAGE_ABSENT} cann-aclnn-type-promotion.md, which the repository does not hold")

def test_unmarked_live_skip():
    pytest.skip(f"{FRAMEWORK_ABSENT} openvino")

def test_page_in_the_repository_absent():
    pytest.skip(f"{SPEC_PAGE_ABSENT} anvil-type-promotion.md, which is here")

def test_not_a_probes_framework():
    pytest.skip(f"{FRAMEWORK_ABSENT} torch")

def test_missing_dependency():
    pytest.importorskip("no_such_module_anywhere")

@pytest.mark.parametrize("x", [])
def test_empty_parametrization(x):
    pass
'''


def _run_guarded(tmp_path: Path, files: dict[str, str]) -> str:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "skip_guard", "-p", "no:cacheprovider",
                             "-v", "-o", "markers=live: a live test", "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path)],
                            capture_output=True, text=True, env=env, timeout=120)
    return result.stdout


def test_the_guard_allows_two_kinds_of_skip_and_fails_the_rest(tmp_path):
    out = _run_guarded(tmp_path, {"test_guarded.py": GUARDED})
    outcomes = dict(re.findall(r"::(\w+)\S* (PASSED|FAILED|SKIPPED|ERROR)", out))
    assert outcomes == {
        "test_live_framework_absent": "SKIPPED",
        "test_outside_page_absent": "SKIPPED",
        "test_unmarked_live_skip": "FAILED",
        "test_page_in_the_repository_absent": "FAILED",
        "test_not_a_probes_framework": "FAILED",
        "test_missing_dependency": "FAILED",
        "test_empty_parametrization": "ERROR",  # a skip while setting up fails as an error
    }, out
    assert "4 failed, 2 skipped, 1 error" in out


def test_the_guard_fails_a_module_that_skips_whole(tmp_path):
    out = _run_guarded(tmp_path, {"test_whole.py": "import pytest\npytest.skip('gone', allow_module_level=True)\n"
                                                    "def test_a():\n    pass\n"})
    assert "skipped as a whole (gone)" in out and "1 error" in out and "skipped" not in out.splitlines()[-1]


# ------------------------------------------------------------------ spec/

def _readme_rows() -> dict[str, bool]:
    """spec/README.md's table: {page: whether it is in spec/}."""
    rows = re.findall(r"^\| `([^`]+)` \|.*\| (yes|no) \|$", (SPEC / "README.md").read_text(encoding="utf-8"), re.M)
    return {page: here == "yes" for page, here in rows}


def test_spec_holds_exactly_the_pages_the_readme_lists_as_here():
    rows = _readme_rows()
    pages = {p.name for p in SPEC.iterdir() if p.is_file() and p.suffix not in (".license",) and p.name != "README.md"}
    assert pages == {page for page, here in rows.items() if here}
    assert {page for page, here in rows.items() if not here} == set(load_tool("import_spec_tables").OUTSIDE_PAGES)


@pytest.mark.parametrize("page", sorted(p for p, here in _readme_rows().items() if here))
def test_every_page_here_has_its_licence_beside_it(page):
    note = (SPEC / f"{page}.license").read_text(encoding="utf-8")
    licence = re.search(r"^SPDX-License-Identifier: (\S+)$", note, re.M)[1]
    assert re.search(r"^SPDX-FileCopyrightText: \S", note, re.M)
    assert (SPEC / "LICENSES" / f"{licence}.txt").is_file()
    assert "Source:" in note and "Changes:" in note
