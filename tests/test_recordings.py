"""Every committed recording of a real framework agrees with its ruleset, case by case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promote_cli.probes.recordings import compare, compare_nary, load_recording

RECORDINGS = sorted(p for p in (Path(__file__).parent / "data" / "recordings").glob("*.json"))


def test_there_are_recordings():
    assert len(RECORDINGS) >= 3


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.stem for p in RECORDINGS])
def test_recording_agrees_with_ruleset(path):
    data = load_recording(path)
    assert data["cases"], f"{path.name} holds no cases"
    assert data.get("version"), f"{path.name} does not say which version was recorded"
    total, mismatches = compare(data)
    shown = "\n".join(m.line() for m in mismatches[:20])
    assert not mismatches, f"{len(mismatches)} of {total} cases disagree with {data['ruleset']}:\n{shown}"


WITH_NARY = [p for p in RECORDINGS if '"nary": [' in p.read_text(encoding="utf-8")[:20000]]


def _fold(pairs: dict, operands: list, op: str, options: dict):
    """The left fold of the framework's own recorded pair answers (None: refused or not recorded)."""
    result = operands[0]
    for operand in operands[1:]:
        result = pairs.get((op, result, operand, json.dumps(options, sort_keys=True)))
        if result is None:
            return None
    return result


@pytest.mark.parametrize("path", WITH_NARY, ids=[p.stem for p in WITH_NARY])
def test_nary_cases_agree_where_the_framework_folds(path):
    """N-operand cases (``nary``): the ruleset answers as the engine's N-ary method says
    (a left fold of pair answers for a schema-1 file).  Where it disagrees with the
    framework, the framework's answer must also differ from the left fold of its own
    recorded pair answers: the gap is the framework's N-ary algorithm, never a wrong pair."""
    data = load_recording(path)
    assert data["nary"], f"{path.name} has an empty nary list"
    total, mismatches = compare_nary(data)
    pairs = {(c[0], c[1], c[2], json.dumps(c[3], sort_keys=True)): c[4] for c in data["cases"]}
    wrong = []
    for m in mismatches:
        operands = m.a.split(", ")
        if _fold(pairs, operands, m.op, m.options) == m.expected:
            wrong.append(m.line())
    shown = "\n".join(wrong[:20])
    assert not wrong, f"{len(wrong)} of {total} N-ary cases disagree although the framework folds:\n{shown}"
