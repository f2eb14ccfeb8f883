"""Every committed recording of a real framework, and every answer set derived from a
framework's source, agrees with its ruleset, case by case; each is labelled as what it is."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from promote_cli.probes.recordings import compare, compare_nary, load_recording

DATA = Path(__file__).parent / "data"
#: the recordings of pair and N-operand cases (expression recordings, expr-*.json, and op
#: recordings, ops-*.json, have their own tests: tests/test_expression_recordings.py, test_op_recordings.py)
RECORDINGS = sorted(p for p in (DATA / "recordings").glob("*.json") if not p.name.startswith(("expr-", "ops-")))
DERIVED = sorted((DATA / "derived").glob("*.json"))
ALL = RECORDINGS + DERIVED


def test_there_are_recordings_and_derived_answers():
    assert len(RECORDINGS) >= 3 and len(DERIVED) >= 1


@pytest.mark.parametrize("path", ALL, ids=[f"{p.parent.name}/{p.stem}" for p in ALL])
def test_recording_agrees_with_ruleset(path):
    data = load_recording(path)
    assert data["cases"], f"{path.name} holds no cases"
    assert data.get("version"), f"{path.name} does not say which version it comes from"
    total, mismatches = compare(data)
    shown = "\n".join(m.line() for m in mismatches[:20])
    assert not mismatches, f"{len(mismatches)} of {total} cases disagree with {data['ruleset']}:\n{shown}"


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.stem for p in RECORDINGS])
def test_a_recording_names_the_probe_that_ran_the_framework(path):
    data = load_recording(path)
    assert "derived" not in data, f"{path.name} says it is derived: it belongs in tests/data/derived/"
    probe = importlib.import_module(data["probe"])
    assert data["probe"].startswith("promote_cli.probes.") and probe.PACKAGE == data["package"]


@pytest.mark.parametrize("path", DERIVED, ids=[p.stem for p in DERIVED])
def test_derived_answers_say_so_and_name_their_tool(path):
    data = load_recording(path)
    assert data.get("derived") and "probe" not in data, f"{path.name} is not labelled derived"
    tool = Path(__file__).resolve().parents[1] / data["tool"]
    assert tool.parent.name == "tools" and tool.is_file()
    assert str(path.relative_to(tool.parents[1])) in tool.read_text(encoding="utf-8")


WITH_NARY = [p for p in RECORDINGS if '"nary": [' in p.read_text(encoding="utf-8")[:20000]]


def test_the_numpy_jax_and_array_api_recordings_hold_nary_cases():
    names = {p.stem.split("-")[0] for p in WITH_NARY}
    assert {"numpy", "jax", "array"} <= names


@pytest.mark.parametrize("path", WITH_NARY, ids=[p.stem for p in WITH_NARY])
def test_nary_cases_agree_with_ruleset(path):
    """N-operand cases (``nary``): the ruleset answers each as its ``[nary]`` method says
    (engine.answer_n), and every one agrees with the framework."""
    data = load_recording(path)
    assert data["nary"], f"{path.name} has an empty nary list"
    total, mismatches = compare_nary(data)
    shown = "\n".join(m.line() for m in mismatches[:20])
    assert not mismatches, f"{len(mismatches)} of {total} N-ary cases disagree with {data['ruleset']}:\n{shown}"
