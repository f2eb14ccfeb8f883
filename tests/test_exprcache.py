"""Compiled rule expressions in the rule file's cache entry: every shipped ruleset answers the same without the
cache and from a warm one; a warm load compiles nothing (and imports no parser); a changed or hostile entry
(truncated, corrupted, another format's or file's, a link, another user's, writable by others, source that
reaches beyond the rules' names) is ignored, the file compiled again and the entry rewritten; what an edited
loader compiles is never taken from an entry an earlier one wrote."""

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

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"


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
        if op in rs.op_names and rs.opgroups[rs.op_names[op]].arity == 3:  # no table: a few triples instead
            types = [str(t) for t in rs.types[:4]]
            out[op] = [promote_cli.query_n(spec, [x, y, z], op).result for x in types for y in types for z in types]
            continue
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
    assert len(_with_expressions(cache)) == len(specs)  # one rule file each
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


def _with_expressions(cache: Path) -> dict:
    """The entries that hold compiled expressions: name -> what they say."""
    entries = {p.name: json.loads(p.read_text()) for p in cache.glob("*.json")}
    return {name: payload for name, payload in entries.items() if "expressions" in payload}


def _entry_of(cache: Path, path: Path) -> Path:
    return cache / tomlcache.entry_name(tomlcache.sha256(path.read_bytes()))


def _entry(cache: Path) -> Path:
    registry.clear_cache()
    promote_cli.load("openvino")
    entry = _entry_of(cache, RULES / "openvino.toml")
    assert list(_with_expressions(cache)) == [entry.name]
    return entry


def _edit(entry: Path, change) -> None:
    payload = json.loads(entry.read_text())
    change(payload)
    entry.write_text(json.dumps(payload))


def _sites(payload) -> dict:
    return payload["expressions"]["sites"]


def _first_site(payload) -> list:
    return next(iter(_sites(payload).values()))


def _truncated(entry):
    entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])


def _corrupted(entry):
    entry.write_bytes(b"\x00\xff not json")


def _other_format(entry):
    _edit(entry, lambda p: p.update(format="expr0/py0.0"))


def _other_files_key(entry):
    _edit(entry, lambda p: p["expressions"].update(of="0" * 64))


def _not_a_table_of_sites(entry):
    _edit(entry, lambda p: p["expressions"].update(sites=[1, 2]))


def _not_a_table_of_expressions(entry):
    _edit(entry, lambda p: p.update(expressions=[1, 2]))


def _a_site_missing(entry):
    _edit(entry, lambda p: _sites(p).pop(next(iter(_sites(p)))))


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

SPOILS = [_truncated, _corrupted, _other_format, _other_files_key, _not_a_table_of_sites,
          _not_a_table_of_expressions, _a_site_missing,
          _another_texts_source, _source_calling_outside_the_rules, _source_reaching_for_an_attribute,
          _source_defining_a_function, _source_that_does_not_compile, _names_beyond_the_rules, _symlink,
          _others_can_write, _another_users]


@pytest.mark.parametrize("spoil", SPOILS)
def test_a_hostile_entry_is_ignored_compiled_again_and_rewritten(cache, monkeypatch, spoil):
    good = _GOOD.get("openvino") or _GOOD.setdefault("openvino", _answers("openvino"))
    entry = _entry(cache)
    if spoil not in (_truncated, _corrupted, _other_format, _not_a_table_of_sites, _not_a_table_of_expressions):
        # besides what the spoil changes, the entry says something the file does not
        _edit(entry, lambda p: [site.__setitem__(1, "i8") for site in _sites(p).values()
                                if site[0].startswith("table(")])
    spoil(entry)
    calls = _compiles(monkeypatch)
    assert _answers("openvino") == good and calls  # compiled again, not taken from the entry
    assert not entry.is_symlink() and entry.stat().st_uid == os.getuid() and entry.stat().st_mode & 0o022 == 0
    calls.clear()
    assert _answers("openvino") == good and calls == []  # the rewritten entry serves


@pytest.mark.filterwarnings("ignore::promote_cli.errors.RulesHidden")  # the copy hides openvino.toml, knowingly
def test_a_changed_rule_file_or_compiler_is_compiled_again(cache, tmp_path, monkeypatch):
    rules = tmp_path / "rules"
    rules.mkdir()
    text = (RULES / "openvino.toml").read_text(encoding="utf-8")
    path = rules / "openvino.toml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(rules))
    registry.clear_cache()
    promote_cli.load("openvino")
    calls = _compiles(monkeypatch)
    for changed in (text.replace('description = "', 'description = "Changed. ', 1), text):
        path.write_text(changed, encoding="utf-8")
        registry.clear_cache()
        promote_cli.load("openvino")
        assert "expressions" in json.loads(_entry_of(cache, path).read_text())
    assert len(_with_expressions(cache)) == 2 and calls  # the changed file compiled, its own entry written ...
    calls.clear()
    registry.clear_cache()
    promote_cli.load("openvino")
    assert calls == []  # ... and the file as it was is served by its entry
    monkeypatch.setattr(tomlcache, "_tag", [f"{tomlcache.FORMAT}/{sys.implementation.cache_tag}/another-stamp"])
    registry.clear_cache()
    promote_cli.load("openvino")
    assert calls and json.loads(_entry_of(cache, path).read_text())["format"].endswith("/another-stamp")


@pytest.mark.filterwarnings("ignore::promote_cli.errors.RulesHidden")  # the copies hide the shipped files
def test_a_changed_base_file_compiles_the_file_that_extends_it_again(cache, tmp_path, monkeypatch):
    rules = tmp_path / "rules"
    rules.mkdir()
    base, leaf = rules / "array-api@2025.12.toml", rules / "array-api@2021.12.toml"
    text = (RULES / base.name).read_text(encoding="utf-8")
    base.write_text(text, encoding="utf-8")
    leaf.write_bytes((RULES / leaf.name).read_bytes())
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(rules))
    registry.clear_cache()
    promote_cli.load("array-api@2021.12")
    kept = json.loads(_entry_of(cache, leaf).read_text())["expressions"]
    assert kept["of"] != tomlcache.sha256(leaf.read_bytes())  # keyed by the merged data, not the file's
    calls = _compiles(monkeypatch)
    registry.clear_cache()
    promote_cli.load("array-api@2021.12")
    assert calls == []
    base.write_text(text.replace("standard has no {dtype} type", "standard has no {dtype}", 1), encoding="utf-8")
    registry.clear_cache()
    # the same leaf file, another base: compiled again
    assert promote_cli.load("array-api@2021.12").unsupported_type.endswith("no {dtype}") and calls
    assert json.loads(_entry_of(cache, leaf).read_text())["expressions"]["of"] != kept["of"]


def test_an_edited_loader_never_takes_what_an_earlier_one_compiled(tmp_path):
    """The package copied, a query answered (its entry written), the entry made to say what an earlier loader
    might have compiled (the clauses that refuse never hold: the query then answers instead of refusing),
    which the same installation takes; after an edit to the loader that keeps its size and mtime, the file is
    compiled again and the query refuses, as the file says."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "promote_cli", copy / "promote_cli", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(RULES, copy / "rules")
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(copy), "PROMOTE_CACHE_DIR": str(cache)}
    env.pop("PROMOTE_RULES_PATH", None)

    def query():
        code = ("import sys; from promote_cli.cli import run; "
                "sys.argv = ['promote', 'query', 'i8', 'u8', '-f', 'openvino']; run()")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=copy,
                              timeout=60, check=False)
        return done.returncode, done.stdout.strip()

    def entries() -> dict:  # the copy's entries of its openvino.toml (the copy's format names them)
        digest = tomlcache.sha256((copy / "rules" / "openvino.toml").read_bytes())
        return {p: payload for p, payload in _with_expressions(cache).items() if payload["sha256"] == digest}

    assert query() == (1, "")  # refused: i8 with u8 needs promote_unsafe
    (entry,) = (cache / name for name in entries())
    _edit(entry, lambda p: [site.__setitem__(1, "False") for key, site in _sites(p).items()
                            if key.startswith("after[")])
    assert query() == (0, "i16")  # the same installation takes its entry as it is
    loader = copy / "promote_cli" / "oracle" / "loader.py"
    info = loader.stat()
    data = loader.read_bytes()
    loader.write_bytes(data[:-1] + (b" " if data[-1:] != b" " else b"\n"))  # the same size, one byte changed
    os.utime(loader, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert loader.stat().st_size == info.st_size and loader.stat().st_mtime_ns == info.st_mtime_ns
    assert query() == (1, "")  # compiled again by this loader, as the file says
    (new,) = (payload for name, payload in entries().items() if name != entry.name)
    assert new["format"] != json.loads(entry.read_text())["format"]
    assert all(site[1] != "False" for site in _sites(new).values())


def test_checking_files_writes_no_entries(cache):
    promote_cli.validate([str(RULES / "paddle.toml")])
    assert _with_expressions(cache) == {}


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
