"""`promote verify` and `promote_cli.verify`: a probe's recording and its own checks decide the verdict."""

from __future__ import annotations

import json
import sys
import types

import pytest
from click.testing import CliRunner

import promote_cli
from promote_cli.cli import main
from promote_cli.oracle import registry

RULES = """schema = 1
name = "fake"
version = "1"
description = "a framework that promotes i8 with u8 to i16"
source = "tests"
probe = "fakeprobe"
types = ["i8", "u8", "i16"]
[[rules]]
name = "same"
if = "dtype(a) == dtype(b)"
result = "a"
[[rules]]
name = "mixed"
result = "i16"
"""


@pytest.fixture
def fake(tmp_path, monkeypatch):
    (tmp_path / "fake.toml").write_text(RULES)
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(tmp_path))
    registry.clear_cache()
    probe = types.ModuleType("promote_cli.probes.fakeprobe")
    probe.FRAMEWORK, probe.PACKAGE = "fake", "fake-package"
    probe.installed = "1.0"
    probe.version = lambda: probe.installed
    probe.answers = {("i8", "u8"): "i16", ("i8", "i8"): "i8"}
    probe.record = lambda: {"ruleset": "fake", "package": "fake-package", "version": "1.0",
                            "cases": [["add", a, b, {}, r, None] for (a, b), r in probe.answers.items()]}
    probe.bad = []
    probe.extra_checks = lambda: [("kernels", 3, list(probe.bad))]
    monkeypatch.setitem(sys.modules, "promote_cli.probes.fakeprobe", probe)
    yield probe
    registry.clear_cache()


def test_agreement_exits_0(fake):
    r = CliRunner().invoke(main, ["verify", "-f", "fake"])
    assert r.exit_code == 0
    assert "2 of 2 cases agree" in r.output and "kernels: 3 of 3 cases agree" in r.output
    assert promote_cli.verify("fake").agrees


def test_a_disagreeing_case_exits_1_and_names_it(fake):
    fake.answers[("u8", "i8")] = "u8"
    r = CliRunner().invoke(main, ["verify", "-f", "fake"])
    assert r.exit_code == 1
    assert "u8 add i8: framework gives u8, ruleset gives i16" in r.stdout
    assert not promote_cli.verify("fake").agrees


def test_a_count_of_one_is_said_in_english(fake):
    """Not `1 of 1 cases agree` but `the 1 case agrees`; a disagreement `on the 1 case`."""
    fake.answers = {("i8", "u8"): "i16"}
    fake.record = lambda: {"ruleset": "fake", "package": "fake-package", "version": "1.0",
                           "cases": [["add", a, b, {}, r, None] for (a, b), r in fake.answers.items()]}
    r = CliRunner().invoke(main, ["verify", "-f", "fake"])
    assert r.exit_code == 0 and "fake@1 vs fake-package 1.0: the 1 case agrees" in r.stdout, r.stdout
    fake.answers = {("i8", "u8"): "i8"}
    r = CliRunner().invoke(main, ["verify", "-f", "fake"])
    assert r.exit_code == 1 and "the 1 case does not agree" in r.stdout
    assert r.stderr.endswith("disagrees with fake-package 1.0 on the 1 case\n"), r.stderr


def test_a_failing_probe_check_exits_1(fake):
    fake.bad = ["bits differ at element 7"]
    r = CliRunner().invoke(main, ["verify", "-f", "fake", "--format", "json"])
    assert r.exit_code == 1
    assert json.loads(r.stdout)["checks"] == [{"check": "kernels", "cases": 3, "disagreements": fake.bad}]
    assert not promote_cli.verify("fake").agrees


def test_absent_framework_exits_2(fake):
    fake.installed = None
    r = CliRunner().invoke(main, ["verify", "-f", "fake"])
    assert r.exit_code == 2 and "pip install fake-package" in r.stderr


def test_save_writes_what_the_framework_answered(fake, tmp_path):
    out = tmp_path / "saved.json"
    assert CliRunner().invoke(main, ["verify", "-f", "fake", "--save", str(out)]).exit_code == 0
    again = CliRunner().invoke(main, ["verify", "-f", "fake", "--recording", str(out)])
    assert again.exit_code == 0 and "2 of 2" in again.output


def test_a_recordings_n_operand_cases_are_verified_too(tmp_path):
    from promote_cli.probes import write_recording

    base = {"ruleset": "numpy", "package": "numpy", "version": "2.4.6",
            "cases": [["add", "u64", "i64", {}, "f64", None]]}
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    write_recording({**base, "nary": [["result_type", ["i8", "u8", "f16"], None, {}, "f16", None]]}, str(good))
    write_recording({**base, "nary": [["result_type", ["i8", "u8", "f16"], None, {}, "f32", None]]}, str(bad))
    report = promote_cli.verify("numpy", recording=str(good))
    assert report.agrees and ("N-operand cases", 1, []) in report.checks
    report = promote_cli.verify("numpy", recording=str(bad))
    assert not report.agrees
    result = CliRunner().invoke(main, ["verify", "-f", "numpy", "--recording", str(bad)])
    assert result.exit_code == 1
    assert "i8, u8, f16" in result.output and "framework gives f32, ruleset gives f16" in result.output
