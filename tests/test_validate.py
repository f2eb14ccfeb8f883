"""`promote validate FILE...` and `promote_cli.validate`: every problem of a rule file, found by the loader."""

from __future__ import annotations

import json

import pytest

import promote_cli
from promote_cli.oracle import registry
from support import run_cli

BAD = """schema = 1
name = "bad"
version = "1"
follows = "nope"
unknown_top = 3
types = ["i8", "i9", "u8", "i8"]
[options.flag]
type = "bool"
default = "maybe"
[tables.t]
columns = ["i8", "u8"]
[tables.t.rows]
i8 = ["i8", "x"]
u8 = ["x"]
[[rules]]
name = "one"
if = "is_int(a) and frob(b)"
result = "a"
[[rules]]
name = "two"
if = "a ==== b"
result = "a"
[[rules]]
name = "three"
result = "a"
refuse = "no"
[[rules]]
name = "fine"
result = "a"
[[rules]]
name = "fine"
result = "b"
"""

GOOD = """schema = 1
name = "good"
version = "1"
types = ["i8", "u8"]
[[rules]]
name = "all"
result = "a"
"""

EXPECTED = [  # (key, words of the message, column)
    ("unknown_top", "unknown key", None),
    ("follows", "expected 'spec' or 'implementation'", None),
    ("types[1]", "unknown dtype 'i9'", None),
    ("types[3]", "duplicate dtype i8", None),
    ("options.flag.default/hint", "takes true or false", None),
    ("tables.t.rows.u8", "1 cells for 2 columns", None),
    ("rules[0] (one).if", "unknown function 'frob'", 15),
    ("rules[1] (two).if", "syntax error", 5),
    ("rules[2] (three)", "either `result` or `refuse`", None),
    ("rules[4].name", "duplicate rule name 'fine'", None),
]


@pytest.fixture
def files(tmp_path):
    (tmp_path / "bad.toml").write_text(BAD)
    (tmp_path / "good.toml").write_text(GOOD)
    return tmp_path


def test_every_problem_is_reported_with_key_and_column(files):
    (check,) = promote_cli.validate([str(files / "bad.toml")])
    assert not check.valid
    got = [(p.key, p.message, p.column) for p in check.problems]
    assert [g[0] for g in got] == [e[0] for e in EXPECTED]
    for (key, message, column), (_, words, want_column) in zip(got, EXPECTED):
        assert words in message, (key, message)
        assert column == want_column, (key, column)
    assert all(p.file == str(files / "bad.toml") for p in check.problems)


def test_each_problem_is_what_the_loader_says_when_it_is_the_only_one(files):
    """Fixing every problem but one, the loader stops at exactly that one: validate adds no rules of its own."""
    from promote_cli.errors import RuleFileError
    from promote_cli.oracle.loader import build, read_toml

    raw = read_toml(files / "bad.toml")
    with pytest.raises(RuleFileError) as first:
        build(raw, str(files / "bad.toml"))
    assert str(first.value) == promote_cli.validate(str(files / "bad.toml"))[0].problems[0].line()


def test_cli_prints_each_problem_and_exits_2(files):
    code, out, err = run_cli("validate", str(files / "bad.toml"), str(files / "good.toml"))
    lines = out.splitlines()
    assert code == 2
    assert lines[-1] == f"{files / 'good.toml'}: ok (good@1)"
    assert len(lines) == len(EXPECTED) + 1
    assert lines[6] == (f"{files / 'bad.toml'}: rules[0] (one).if: unknown function 'frob' in "
                        f"'is_int(a) and frob(b)' (column 15)")
    assert err == f"promote: {len(EXPECTED)} problems in 1 of 2 files\n"


def test_cli_json(files):
    code, out, _ = run_cli("validate", str(files / "bad.toml"), str(files / "good.toml"), "--format", "json")
    data = json.loads(out)
    assert code == 2
    assert [d["valid"] for d in data] == [False, True]
    assert data[1]["name"] == "good" and data[1]["problems"] == []
    assert data[0]["problems"][7] == {"file": str(files / "bad.toml"), "key": "rules[1] (two).if",
                                      "message": data[0]["problems"][7]["message"], "column": 5}


def test_valid_files_exit_0(files):
    assert run_cli("validate", str(files / "good.toml")) == (0, f"{files / 'good.toml'}: ok (good@1)\n", "")


def test_every_shipped_rule_file_is_valid():
    paths = [str(p) for p in sorted(registry.builtin_dir().glob("*.toml"))]
    checks = promote_cli.validate(paths)
    assert paths and [c.problems for c in checks] == [[] for _ in paths]


@pytest.mark.parametrize("text, key", [
    ("name = [", ""),
    ('schema = 1\nname = "good"\nversion = "1"\ntypes = ["i8"]\nextends = "nothing@1"\n', "extends"),
    (GOOD.replace('name = "good"', 'name = "other"'), "name"),
])
def test_file_level_problems(files, text, key):
    (files / "good.toml").write_text(text)
    (check,) = promote_cli.validate([str(files / "good.toml")])
    assert [p.key for p in check.problems] == [key]


def test_unreadable_file(tmp_path):
    code, out, err = run_cli("validate", str(tmp_path / "missing.toml"))
    assert code == 2 and "cannot read" in out and len(err.splitlines()) == 1


@pytest.mark.parametrize("content, keys", [
    (b"", ["name", "version", "types"]),
    (b"\xf6\xff binary", [""]),
    (b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n", [""]),
])
def test_empty_binary_and_deeply_nested_files(tmp_path, content, keys):
    path = tmp_path / "odd.toml"
    path.write_bytes(content)
    (check,) = promote_cli.validate([str(path)])
    assert [p.key for p in check.problems] == keys
    code, _, err = run_cli("validate", str(path))
    assert code == 2 and len(err.splitlines()) == 1


def test_a_binary_rule_file_on_the_rules_path_is_a_one_line_error(tmp_path, monkeypatch):
    (tmp_path / "odd.toml").write_bytes(b"\xf6\xff")
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(tmp_path))
    registry.clear_cache()
    try:
        code, _, err = run_cli("query", "i8", "i8", "-f", "odd")
    finally:
        registry.clear_cache()
    assert code == 2 and "not UTF-8" in err and len(err.splitlines()) == 1
