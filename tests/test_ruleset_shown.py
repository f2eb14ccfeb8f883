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
