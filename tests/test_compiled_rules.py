"""The parsed rule files and compiled expressions shipped in `promote_cli/compiled/` (tools/compiled_rules.py):
current, used with the cache off, giving the answers of compiling afresh, and ignored when they do not fit."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import promote_cli
from promote_cli import tomlcache
from promote_cli.oracle import expr, exprcache, loader, registry

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setenv("PROMOTE_CACHE_DIR", "")  # nothing from (or to) a per-user cache
    monkeypatch.delenv("PROMOTE_RULES_PATH", raising=False)
    registry.clear_cache()
    yield
    registry.clear_cache()


def _spies(monkeypatch) -> tuple[list, list]:
    """(expressions compiled, files parsed as TOML) from now on."""
    compiled, parsed = [], []
    real_compile, real_parse = expr.compile_checked, loader.parse_toml

    def compile_spy(text, *args, **kwargs):
        compiled.append(text)
        return real_compile(text, *args, **kwargs)

    def parse_spy(text, path):
        parsed.append(path)
        return real_parse(text, path)

    monkeypatch.setattr(expr, "compile_checked", compile_spy)
    monkeypatch.setattr(loader, "parse_toml", parse_spy)
    return compiled, parsed


def _answers(spec: str) -> dict:
    registry.clear_cache()
    rs = promote_cli.load(spec)
    out = {}
    groups: dict = {}  # one op of each group: every op of a group is answered by the same clauses
    for op, group in (rs.op_index or {"add": "add"}).items():
        groups.setdefault(group, op)
    for op in groups.values():
        out[op] = promote_cli.table(spec, op=op).results()
        hinted = {name: opt.hint[0] for name, opt in rs.options.items() if opt.hint}
        if hinted:
            out[op, "hinted"] = promote_cli.table(spec, op=op, options=hinted).results()
    return out


def test_the_shipped_entries_are_current():
    """A rule file, the vocabulary or the compiler changed without `tools/compiled_rules.py --write` fails here."""
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "compiled_rules.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_every_shipped_ruleset_answers_the_same_from_its_entries(monkeypatch, tmp_path):
    specs = sorted({promote_cli.load(spec).key for spec in promote_cli.framework_names()})
    compiled, parsed = _spies(monkeypatch)
    shipped = {spec: _answers(spec) for spec in specs}
    assert compiled == [] and parsed == []  # every file and expression came from the shipped entries
    monkeypatch.setattr(tomlcache, "SHIPPED_DIR", str(tmp_path / "none"))
    fresh = {spec: _answers(spec) for spec in specs}
    assert compiled and parsed
    assert shipped == fresh


def test_a_query_with_the_cache_off_parses_and_compiles_nothing():
    code = ("import sys; import promote_cli; promote_cli.query('paddle', '0d:i8', 'py:float', '/'); "
            "promote_cli.query('openvino', 'i8', 'u8', options={'promote_unsafe': True}); "
            "print(sorted(m for m in ('ast', 'promote_cli.oracle.expr', 'tomllib', 'tomli') if m in sys.modules))")
    env = {**os.environ, "PROMOTE_CACHE_DIR": ""}
    env.pop("PROMOTE_RULES_PATH", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_a_changed_rule_file_selects_no_shipped_entry(monkeypatch, tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    text = (RULES / "openvino.toml").read_text(encoding="utf-8")
    (rules / "openvino.toml").write_text(text.replace('description = "', 'description = "Changed. ', 1),
                                         encoding="utf-8")
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(rules))
    compiled, parsed = _spies(monkeypatch)
    rs = promote_cli.load("openvino")
    assert rs.description.startswith("Changed. ")
    assert compiled and [Path(p).parent for p in parsed] == [rules]


def _copy_with(tmp_path: Path, monkeypatch, change) -> None:
    """The shipped entries copied, `change(directory, toml entry of openvino.toml, its expression entry)` made,
    and the copy used from now on."""
    directory = tmp_path / "compiled"
    shutil.copytree(tomlcache.SHIPPED_DIR, directory)
    path = RULES / "openvino.toml"
    toml_entry = directory / f"{tomlcache.sha256(path.read_bytes())}.json"
    files = registry._files()
    key = exprcache.shipped_key(registry._raw(files["openvino"], files), promote_cli.DTYPES)
    expr_entry = directory / f"{key}.expr.json"
    assert toml_entry.is_file() and expr_entry.is_file()
    change(directory, toml_entry, expr_entry)
    monkeypatch.setattr(tomlcache, "SHIPPED_DIR", str(directory))
    registry.clear_cache()


def _edit(entry: Path, change) -> None:
    payload = json.loads(entry.read_text(encoding="utf-8"))
    change(payload)
    entry.write_text(json.dumps(payload), encoding="utf-8")


def _hostile_source(d, t, e):
    _edit(e, lambda p: [site.__setitem__(1, "().__class__.__base__.__subclasses__()") for site in
                        p["expressions"].values()])


def _source_of_another_text(d, t, e):
    _edit(e, lambda p: [site.__setitem__(0, site[0] + " ") for site in p["expressions"].values()])


def _expressions_of_another_format(d, t, e):
    _edit(e, lambda p: p.__setitem__("format", "expr1/py3.11"))


def _expressions_a_link(d, t, e):
    target = d / "elsewhere.json"
    e.rename(target)
    e.symlink_to(target)


def _huge(entry: Path) -> None:
    _edit(entry, lambda p: p.__setitem__("pad", "x" * tomlcache.MAX_ENTRY_BYTES))


def _nested_deeper_than_json_parses(entry: Path) -> None:
    entry.write_text('{"toml": ' + "[" * 200_000 + "]" * 200_000 + "}", encoding="utf-8")


def _fifo(entry: Path) -> None:
    entry.unlink()
    os.mkfifo(entry)


def _directory(entry: Path) -> None:
    entry.unlink()
    entry.mkdir()


def _expressions_huge(d, t, e):
    _huge(e)


def _expressions_nested_deeper_than_json_parses(d, t, e):
    _nested_deeper_than_json_parses(e)


def _expressions_a_fifo(d, t, e):
    _fifo(e)


def _expressions_a_directory(d, t, e):
    _directory(e)


@pytest.mark.parametrize("spoil", [_hostile_source, _source_of_another_text, _expressions_of_another_format,
                                   _expressions_a_link, _expressions_huge, _expressions_nested_deeper_than_json_parses,
                                   _expressions_a_fifo, _expressions_a_directory])
def test_a_spoiled_expression_entry_is_ignored(spoil, monkeypatch, tmp_path):
    good = _answers("openvino")
    _copy_with(tmp_path, monkeypatch, spoil)
    compiled, parsed = _spies(monkeypatch)
    assert _answers("openvino") == good
    assert compiled and parsed == []  # compiled afresh; the TOML entry still served


def _toml_of_another_file(d, t, e):
    _edit(t, lambda p: p.__setitem__("sha256", "0" * 64))


def _toml_of_another_format(d, t, e):
    _edit(t, lambda p: p.__setitem__("format", "1/py3.11"))


def _toml_not_json(d, t, e):
    t.write_text("{", encoding="utf-8")


def _toml_huge(d, t, e):
    _huge(t)


def _toml_nested_deeper_than_json_parses(d, t, e):
    _nested_deeper_than_json_parses(t)


def _toml_a_fifo(d, t, e):
    _fifo(t)


def _toml_a_directory(d, t, e):
    _directory(t)


@pytest.mark.parametrize("spoil", [_toml_of_another_file, _toml_of_another_format, _toml_not_json, _toml_huge,
                                   _toml_nested_deeper_than_json_parses, _toml_a_fifo, _toml_a_directory])
def test_a_spoiled_toml_entry_is_ignored(spoil, monkeypatch, tmp_path):
    good = _answers("openvino")
    _copy_with(tmp_path, monkeypatch, spoil)
    _, parsed = _spies(monkeypatch)
    assert _answers("openvino") == good
    assert [Path(p).name for p in parsed] == ["openvino.toml"]
