"""The cache of compiled rule expressions: every shipped ruleset answers the same without it and from a warm one; a warm load compiles nothing (and imports no parser); a changed or hostile entry (truncated, corrupted,
another format's or file's, a link, another user's, writable by others, source that reaches beyond the rules'
names) is ignored, the file compiled again and the entry rewritten."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import promote_cli
from promote_cli import tomlcache
from promote_cli.oracle import expr, exprcache, registry

RULES = Path(__file__).resolve().parent.parent / "rules"


@pytest.fixture(autouse=True)
def _no_shipped_entries(tmp_path, monkeypatch):
    """These tests are about the per-user cache: the entries shipped with the package are out of the way
    (tests/test_compiled_rules.py tests those)."""
    monkeypatch.setattr(tomlcache, "SHIPPED_DIR", str(tmp_path / "no shipped entries"))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("PROMOTE_CACHE_DIR", str(directory))
    registry.clear_cache()
    yield directory
    registry.clear_cache()


def _compiles(monkeypatch) -> list:
    calls = []
    real = expr.compile_checked

    def spy(text, *args, **kwargs):
        calls.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(expr, "compile_checked", spy)
    return calls


def _answers(spec: str) -> dict:
    registry.clear_cache()
    rs = promote_cli.load(spec)
    out = {}
    groups = {}  # one op of each group: every op of a group is answered by the same clauses
    for op, group in (rs.op_index or {"add": "add"}).items():
        groups.setdefault(group, op)
    for op in groups.values():
        out[op] = promote_cli.table(spec, op=op).results()
        if rs.options:
            hinted = {name: opt.hint[0] for name, opt in rs.options.items() if opt.hint}
            out[op, "hinted"] = promote_cli.table(spec, op=op, options=hinted).results()
    if rs.expressions is not None:  # `promote expr`'s operators, from the [expressions] section
        for text in EXPRESSIONS:
            try:
                got = promote_cli.expr(text, spec)
                out[text] = (str(got.result), got.refusal)
            except promote_cli.UsageError as exc:
                out[text] = str(exc)
    return out


EXPRESSIONS = [line for line in (Path(promote_cli.__file__).parent / "probes" / "expressions.txt").read_text(
    encoding="utf-8").splitlines() if line.strip() and not line.startswith("#")]


def test_every_ruleset_answers_the_same_without_and_with_a_warm_cache(cache, monkeypatch):
    specs = sorted({promote_cli.load(spec).key for spec in promote_cli.framework_names()})  # each file once
    monkeypatch.setenv("PROMOTE_CACHE_DIR", "")
    off = {spec: _answers(spec) for spec in specs}
    monkeypatch.setenv("PROMOTE_CACHE_DIR", str(cache))
    for spec in specs:  # cold: compiled, and the entries written
        registry.clear_cache()
        promote_cli.load(spec)
    assert len(list(cache.glob("*.expr.json"))) == len(specs)
    calls = _compiles(monkeypatch)
    warm = {spec: _answers(spec) for spec in specs}
    assert calls == []  # every expression came from the cache
    assert off == warm


def test_a_warm_query_imports_no_expression_parser(cache, tmp_path):
    code = ("import sys; import promote_cli; promote_cli.query('paddle', 'i8', 'f16', '/'); "
            "print(sorted(m for m in ('ast', 'promote_cli.oracle.expr', 'tomllib', 'dataclasses', 'inspect') "
            "if m in sys.modules))")
    rules = tmp_path / "rules"  # a rule file the package ships no entries for
    rules.mkdir()
    text = (RULES / "paddle.toml").read_text(encoding="utf-8")
    (rules / "paddle.toml").write_text(text.replace('description = "', 'description = "Changed. ', 1), encoding="utf-8")
    env = {**os.environ, "PROMOTE_CACHE_DIR": str(cache), "PROMOTE_RULES_PATH": str(rules)}
    cold = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    warm = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert "promote_cli.oracle.expr" in cold.stdout  # the cold one compiled ...
    assert warm.stdout.strip() == "[]", warm.stdout  # ... the warm one only read


def _entry(cache: Path) -> Path:
    registry.clear_cache()
    promote_cli.load("openvino")
    (entry,) = cache.glob("*.expr.json")
    return entry


def _edit(entry: Path, change) -> None:
    payload = json.loads(entry.read_text())
    change(payload)
    entry.write_text(json.dumps(payload))


def _first_site(payload) -> list:
    return next(iter(payload["expressions"].values()))


def _truncated(entry):
    entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])


def _corrupted(entry):
    entry.write_bytes(b"\x00\xff not json")


def _other_format(entry):
    _edit(entry, lambda p: p.update(format="expr0/py0.0"))


def _other_files_key(entry):
    _edit(entry, lambda p: p.update(key="0" * 64))


def _not_a_table_of_sites(entry):
    _edit(entry, lambda p: p.update(expressions=[1, 2]))


def _a_site_missing(entry):
    _edit(entry, lambda p: p["expressions"].pop(next(iter(p["expressions"]))))


def _another_texts_source(entry):
    _edit(entry, lambda p: _first_site(p).__setitem__(0, "is_int(a)"))


def _source_calling_outside_the_rules(entry):
    _edit(entry, lambda p: _first_site(p).__setitem__(1, "__import__('os').system('false')"))


def _source_reaching_for_an_attribute(entry):
    _edit(entry, lambda p: _first_site(p).__setitem__(1, "a.__class__.__subclasses__()"))


def _source_defining_a_function(entry):
    _edit(entry, lambda p: _first_site(p).__setitem__(1, "(lambda: a)()"))


def _source_that_does_not_compile(entry):
    _edit(entry, lambda p: _first_site(p).__setitem__(1, "is_int(a"))


def _names_beyond_the_rules(entry):
    _edit(entry, lambda p: _first_site(p).__setitem__(2, ["open"]))


def _symlink(entry):
    target = entry.with_name("elsewhere.json")
    entry.rename(target)
    entry.symlink_to(target)


def _others_can_write(entry):
    entry.chmod(0o666)


def _another_users(entry):
    if os.getuid() != 0:
        pytest.fail("giving a file to another user needs root; run this test as root or in a container")
    os.chown(entry, 12345, 12345)


_GOOD: dict = {}  # openvino's answers, computed once

SPOILS = [_truncated, _corrupted, _other_format, _other_files_key, _not_a_table_of_sites, _a_site_missing,
          _another_texts_source, _source_calling_outside_the_rules, _source_reaching_for_an_attribute,
          _source_defining_a_function, _source_that_does_not_compile, _names_beyond_the_rules, _symlink,
          _others_can_write, _another_users]


@pytest.mark.parametrize("spoil", SPOILS)
def test_a_hostile_entry_is_ignored_compiled_again_and_rewritten(cache, monkeypatch, spoil):
    good = _GOOD.get("openvino") or _GOOD.setdefault("openvino", _answers("openvino"))
    entry = _entry(cache)
    if spoil not in (_truncated, _corrupted, _other_format, _not_a_table_of_sites):
        # besides what the spoil changes, the entry says something the file does not
        _edit(entry, lambda p: [site.__setitem__(1, "i8") for site in p["expressions"].values()
                                if site[0].startswith("table(")])
    spoil(entry)
    calls = _compiles(monkeypatch)
    assert _answers("openvino") == good and calls  # compiled again, not taken from the entry
    assert not entry.is_symlink() and entry.stat().st_uid == os.getuid() and entry.stat().st_mode & 0o022 == 0
    calls.clear()
    assert _answers("openvino") == good and calls == []  # the rewritten entry serves


def test_a_changed_rule_file_or_compiler_selects_another_entry(cache, tmp_path, monkeypatch):
    rules = tmp_path / "rules"
    rules.mkdir()
    text = (RULES / "openvino.toml").read_text(encoding="utf-8")
    (rules / "openvino.toml").write_text(text, encoding="utf-8")
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(rules))
    _entry(cache)
    (rules / "openvino.toml").write_text(text + "\n# a comment changes the file, not its data\n", encoding="utf-8")
    registry.clear_cache()
    promote_cli.load("openvino")
    assert len(list(cache.glob("*.expr.json"))) == 1  # the same data: the same entry
    (rules / "openvino.toml").write_text(text.replace('description = "', 'description = "Changed. ', 1),
                                         encoding="utf-8")
    registry.clear_cache()
    promote_cli.load("openvino")
    assert len(list(cache.glob("*.expr.json"))) == 2
    monkeypatch.setattr(exprcache, "_compiler_digest", ["0" * 64])
    calls = _compiles(monkeypatch)
    registry.clear_cache()
    promote_cli.load("openvino")
    assert calls and len(list(cache.glob("*.expr.json"))) == 3


def test_checking_files_writes_no_entries(cache):
    promote_cli.validate([str(RULES / "paddle.toml")])
    assert list(cache.glob("*.expr.json")) == []


def test_the_cache_off_compiles_every_time(monkeypatch, tmp_path):
    monkeypatch.setenv("PROMOTE_CACHE_DIR", "")
    registry.clear_cache()
    calls = _compiles(monkeypatch)
    promote_cli.load("openvino")
    first = len(calls)
    registry.clear_cache()
    promote_cli.load("openvino")
    registry.clear_cache()
    assert first and len(calls) == 2 * first


def _huge(entry):
    _edit(entry, lambda p: p.__setitem__("pad", "x" * tomlcache.MAX_ENTRY_BYTES))


def _nested_deeper_than_a_parser_nests(entry):
    deep: object = "x"
    for _ in range(tomlcache.MAX_ENTRY_DEPTH + 600):
        deep = [deep]
    _edit(entry, lambda p: _first_site(p).append(deep))


def _nested_deeper_than_json_parses(entry):
    entry.write_text('{"expressions": ' + "{\"a\": " * 100_000 + "1" + "}" * 100_001)


@pytest.mark.parametrize("spoil", [_huge, _nested_deeper_than_a_parser_nests, _nested_deeper_than_json_parses])
def test_a_huge_or_deep_entry_is_ignored_compiled_again_and_rewritten(cache, monkeypatch, spoil):
    test_a_hostile_entry_is_ignored_compiled_again_and_rewritten(cache, monkeypatch, spoil)


@pytest.mark.parametrize("special", ["fifo", "directory"])
def test_a_special_file_where_an_entry_goes_is_ignored_and_left(cache, monkeypatch, special):
    import time

    good = _GOOD.get("openvino") or _GOOD.setdefault("openvino", _answers("openvino"))
    entry = _entry(cache)
    entry.unlink()
    if special == "fifo":
        os.mkfifo(entry, 0o600)
    else:
        entry.mkdir(mode=0o700)
    kind = entry.lstat().st_mode & 0o170000
    calls = _compiles(monkeypatch)
    start = time.monotonic()
    assert _answers("openvino") == good and calls  # compiled, the FIFO never waited on
    assert time.monotonic() - start < 10
    assert entry.lstat().st_mode & 0o170000 == kind  # left as it is: only a regular file is ever replaced
