"""Every rendering names the ruleset as NAME@VERSION: `paddle@2.6` never reads as `paddle`."""

from __future__ import annotations

import json

import pytest

from support import run_cli


@pytest.mark.parametrize("fmt", ["text", "csv", "markdown", "rich"])
def test_a_matrix_names_its_ruleset_with_its_version(fmt):
    code, out, _ = run_cli("table", "-f", "paddle@2.6", "--types", "i8,f16", "--format", fmt, "--color", "never")
    assert code == 0 and "paddle@2.6 add" in out


def test_a_bare_name_shows_the_version_it_means():
    code, out, _ = run_cli("table", "-f", "paddle", "--types", "i8,f16", "--format", "csv")
    assert code == 0 and out.splitlines()[0].startswith("paddle@3.3 add,")
    code, out, _ = run_cli("table", "-f", "paddle", "--types", "i8", "--format", "json")
    data = json.loads(out)
    assert (data["framework"], data["version"]) == ("paddle", "3.3")


def test_a_refusal_line_names_the_version():
    code, out, err = run_cli("query", "i8", "u16", "-f", "paddle@2.6")
    assert code == 1 and err.startswith("promote: paddle@2.6 refuses i8 add u16: ")
    code, out, err = run_cli("query", "i8", "u16", "f32", "-f", "cann")
    assert code == 1 and err.startswith("promote: cann@8.0 refuses add of i8, u16, f32")


@pytest.mark.parametrize("fmt", ["text", "csv", "markdown", "rich"])
def test_diff_heads_carry_the_versions_and_json_keeps_its_keys(fmt):
    args = ("table", "--diff", "paddle@2.6", "openvino:promote_unsafe=true", "--types", "i8,u8", "--color", "never")
    code, out, _ = run_cli(*args, "--format", fmt)
    assert code == 0 and "paddle@2.6" in out and "openvino@2026.4.1:promote_unsafe=true" in out
    code, out, _ = run_cli(*args, "--format", "json")
    data = json.loads(out)
    assert data["frameworks"] == ["paddle@2.6", "openvino:promote_unsafe=true"]
    assert data["versions"] == {"paddle@2.6": "paddle@2.6", "openvino:promote_unsafe=true": "openvino@2026.4.1"}
    assert {"a", "b", "paddle@2.6", "openvino:promote_unsafe=true"} == set(data["differences"][0])


def test_batch_lines_that_could_not_be_asked_carry_the_version():
    from click.testing import CliRunner

    from promote_cli.cli import main

    r = CliRunner().invoke(main, ["query", "--batch", "-f", "paddle@2.6", "--format", "json"],
                           input="i8 u8\nbogus i8\ni8 u8 f16\n")
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.exit_code == 2 and len(lines) == 3
    assert all((x["framework"], x["version"]) == ("paddle", "2.6") for x in lines), lines
    assert lines[1]["result"] is None and "bogus" in lines[1]["error"]


def test_verify_names_the_ruleset_with_its_version(tmp_path):
    recording = "tests/data/recordings/tosa-ops.json"
    from support import ROOT

    code, out, _ = run_cli("verify", "-f", "tosa", "--recording", str(ROOT / recording))
    assert code == 0 and out.startswith("tosa@1.1-ref2026.8.0 vs tosa-tools ")
    code, out, _ = run_cli("verify", "-f", "tosa", "--recording", str(ROOT / recording), "--format", "json")
    assert json.loads(out)["ruleset"] == "tosa@1.1-ref2026.8.0"
    data = json.loads((ROOT / recording).read_text())
    case = next(c for c in data["cases"] if c[4] is not None)
    case[4] = "f64" if case[4] != "f64" else "f32"  # one answer the ruleset does not give
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(data))
    code, out, err = run_cli("verify", "-f", "tosa", "--recording", str(wrong))
    assert code == 1 and err.startswith("promote: tosa@1.1-ref2026.8.0 disagrees with tosa-tools ")


def test_validate_and_usage_errors_name_the_version():
    from support import ROOT

    assert run_cli("validate", str(ROOT / "rules" / "cann.toml"))[1].endswith(": ok (cann@8.0)\n")
    code, _, err = run_cli("query", "i8", "u8", "-f", "paddle@2.6", "--op", "nosuchop")
    assert code == 2 and err.startswith("promote: paddle@2.6 has no op 'nosuchop'")
    code, _, err = run_cli("query", "i8", "u8", "-f", "cann", "-O", "nosuch=1")
    assert code == 2 and err.startswith("promote: cann@8.0 has no option 'nosuch'")
