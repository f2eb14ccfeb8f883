"""A rule that fails while answering (`RuleDefect`) is reported as exit 2 naming file and rule, in every
command: never shown as a refusal cell, a difference, or a disagreement."""

from __future__ import annotations

import json

import pytest

import promote_cli
from promote_cli.errors import RuleDefect
from promote_cli.oracle import registry
from support import run_cli

# `ratio` divides by bits(b) - 16: it fails exactly when b is 16 bits wide (and a differs from b).
SHAKY = """schema = 1
name = "shaky"
version = "1"
types = ["i8", "i16", "i32"]
[[rules]]
name = "same"
if = "a == b"
result = "a"
[[rules]]
name = "ratio"
if = "bits(a) // (bits(b) - 16) > 0"
result = "a"
[[rules]]
name = "rest"
result = "b"
"""


@pytest.fixture
def shaky(tmp_path, monkeypatch):
    path = tmp_path / "shaky.toml"
    path.write_text(SHAKY)
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(tmp_path))
    registry.clear_cache()
    yield path
    registry.clear_cache()


def _one_defect_line(stderr: str, path) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert str(path) in lines[0] and "'ratio'" in lines[0] and "(i8, i16)" in lines[0]


def test_the_rule_file_answers_where_it_does_not_fail(shaky):
    assert promote_cli.query("shaky", "i16", "i32").result == "i16"  # ratio: 16 // (32 - 16) = 1 > 0
    assert run_cli("table", "-f", "shaky", "--types", "i8,i32")[0] == 0


def test_query_exits_2(shaky):
    code, out, err = run_cli("query", "i8", "i16", "-f", "shaky")
    assert (code, out) == (2, "")
    _one_defect_line(err, shaky)


@pytest.mark.parametrize("fmt", ["text", "json", "csv", "markdown", "rich"])
def test_table_exits_2_instead_of_a_refusal_cell(shaky, fmt):
    code, out, err = run_cli("table", "-f", "shaky", "--format", fmt)
    assert (code, out) == (2, "")
    _one_defect_line(err, shaky)
    with pytest.raises(RuleDefect):
        promote_cli.table("shaky")


@pytest.mark.parametrize("sides", [("shaky", "cann"), ("cann", "shaky")])
def test_diff_exits_2_instead_of_a_difference(shaky, sides):
    code, out, err = run_cli("table", "--diff", *sides, "--format", "json")
    assert (code, out) == (2, "")
    _one_defect_line(err, shaky)
    with pytest.raises(RuleDefect):
        promote_cli.diff(*sides)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_check_exits_2_instead_of_a_counterexample(shaky, fmt):
    code, out, err = run_cli("check", "-f", "shaky", "--format", fmt)
    assert (code, out) == (2, "")
    _one_defect_line(err, shaky)
    with pytest.raises(RuleDefect):
        promote_cli.check("shaky")


def test_batch_gives_the_line_its_error_and_exits_2(shaky):
    code, out, err = run_cli_input("i8 i8\ni8 i16\ni16 i32\n", "query", "--batch", "-f", "shaky")
    lines = out.splitlines()
    assert lines[0] == "i8" and lines[2] == "i16" and len(lines) == 3
    assert lines[1].startswith("error: ") and "'ratio'" in lines[1] and str(shaky) in lines[1]
    assert code == 2
    code, out, _ = run_cli_input("i8 i16\n", "query", "--batch", "-f", "shaky", "--format", "json")
    assert code == 2 and "'ratio'" in json.loads(out)["error"]
    items = list(promote_cli.batch("shaky", ["i8 i16", "i8 i8"]))
    assert isinstance(items[0].error, RuleDefect) and items[0].status == 2 and items[1].status == 0


def test_verify_exits_2_instead_of_a_disagreement(shaky, tmp_path):
    recording = tmp_path / "rec.json"
    recording.write_text(json.dumps({"ruleset": "shaky", "package": "x", "version": "1",
                                     "cases": [["add", "i8", "i16", {}, "i16", None]]}))
    code, out, err = run_cli("verify", "-f", "shaky", "--recording", str(recording))
    assert code == 2
    _one_defect_line(err, shaky)


def run_cli_input(stdin: str, *args: str):
    from click.testing import CliRunner

    from promote_cli.cli import main

    result = CliRunner().invoke(main, list(args), input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr
