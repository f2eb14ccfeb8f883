"""A rule file on PROMOTE_RULES_PATH that hides a shipped one changes every answer for its name: each run that
loads it says so once (`promote: note: FILE hides OTHER` on stderr; a `RulesHidden` warning in the API), and
two files that both claim a name's default are both named."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest
from support import run_cli

import promote_cli
from promote_cli import RuleFileError, RulesHidden
from promote_cli.oracle import registry


@pytest.fixture
def hiding(tmp_path, monkeypatch):
    """A copy of the shipped cann.toml on PROMOTE_RULES_PATH: (the copy, the shipped file)."""
    shipped = registry.builtin_dir() / "cann.toml"
    (tmp_path / "cann.toml").write_text(shipped.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(tmp_path))
    registry.clear_cache()
    yield tmp_path / "cann.toml", shipped
    registry.clear_cache()


def test_the_api_warns_once_a_process(hiding):
    mine, shipped = hiding
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert promote_cli.query("cann", "i8", "u8").result == "i16"
        promote_cli.query("cann", "i8", "i8")
        promote_cli.load("cann@8.0")
        promote_cli.query("numpy", "i8", "u8")  # another name: nothing hidden
    assert [(w.category, str(w.message)) for w in caught] == [(RulesHidden, f"{mine} hides {shipped}")]
    assert issubclass(RulesHidden, Warning)


def test_a_command_that_loads_it_notes_it_on_stderr(hiding):
    mine, shipped = hiding
    code, out, err = run_cli("table", "-f", "cann", "--types", "i8,u8", "--format", "csv")
    assert code == 0 and "i16" in out
    assert err == f"promote: note: {mine} hides {shipped}\n"


def _console(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "promote_cli", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=60)


def test_a_query_of_the_fast_path_notes_it_once(hiding):
    mine, shipped = hiding
    env = {"PROMOTE_RULES_PATH": str(mine.parent)}
    done = _console("query", "i8", "u8", "-f", "cann", env=env)
    assert (done.returncode, done.stdout, done.stderr) == (0, "i16\n", f"promote: note: {mine} hides {shipped}\n")
    done = _console("query", "i8", "u8", "-f", "numpy", env=env)
    assert (done.returncode, done.stdout, done.stderr) == (0, "i16\n", "")


def test_frameworks_notes_it_once(hiding):
    mine, shipped = hiding
    done = _console("frameworks", "--format", "csv", env={"PROMOTE_RULES_PATH": str(mine.parent)})
    assert done.returncode == 0 and done.stderr == f"promote: note: {mine} hides {shipped}\n"


def test_two_defaults_of_one_name_are_both_named(tmp_path, monkeypatch):
    shipped = registry.builtin_dir() / "cann.toml"
    mine = tmp_path / "cann@9.toml"
    mine.write_text(shipped.read_text(encoding="utf-8").replace('version = "8.0"', 'version = "9"'),
                    encoding="utf-8")
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(tmp_path))
    registry.clear_cache()
    try:
        with pytest.raises(RuleFileError) as caught:
            promote_cli.load("cann")
    finally:
        registry.clear_cache()
    message = str(caught.value)
    assert str(mine) in message and str(shipped) in message and "2 defaults" in message, message
