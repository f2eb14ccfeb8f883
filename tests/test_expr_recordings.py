"""Every recorded expression (tests/data/recordings/expr-*.json: what real frameworks gave for whole
expressions) is answered alike by `promote_cli.expr`: the same result operand, form included, or a
refusal (exit 1, not a usage error) where the framework raised."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import promote_cli
from promote_cli.errors import UsageError

RECORDINGS = sorted((Path(__file__).parent / "data" / "recordings").glob("expr-*.json"))


def outcome(text: str, ruleset: str, options: dict) -> str:
    """What promote answers, as a recording states it: the result operand, or `error` for a refusal.
    A usage error (an operator, literal or type the rules lack) agrees with nothing."""
    try:
        got = promote_cli.expr(text, ruleset, options)
    except UsageError as exc:
        return f"usage error ({exc})"
    return got.result if got.result is not None else f"error ({got.refusal})"


def disagreements(path: Path) -> tuple[int, list[str]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    cases = data["expressions"]
    bad = []
    for text, options, result, error in cases:
        got = outcome(text, data["ruleset"], options)
        expected = result if error is None else "error"
        if got.startswith("error") != (expected == "error") or (expected != "error" and got != expected):
            bad.append(f"{text} {options}: recorded {result if error is None else error!r}, promote gives {got}")
    return len(cases), bad


#: recorded frameworks whose rule file has no [expressions] section yet: their recordings are not
#: compared (docs/rules.md, "Expressions", says which frameworks evaluate expressions)
WITHOUT_EXPRESSION_RULES: set[str] = set()


def ruleset_of(path: Path) -> str:
    return json.loads(path.read_text(encoding="utf-8"))["ruleset"]


def test_there_are_expression_recordings():
    assert len(RECORDINGS) >= 4


def test_the_frameworks_without_expression_rules_are_the_listed_ones():
    without = {ruleset_of(p) for p in RECORDINGS if promote_cli.load(ruleset_of(p)).expressions is None}
    assert without == WITHOUT_EXPRESSION_RULES


COMPARED = [p for p in RECORDINGS if ruleset_of(p) not in WITHOUT_EXPRESSION_RULES]


@pytest.mark.parametrize("path", COMPARED, ids=[p.stem for p in COMPARED])
def test_every_recorded_expression_agrees(path):
    count, bad = disagreements(path)
    assert count >= 50, f"{path.name}: only {count} cases"
    assert not bad, f"{len(bad)} of {count} disagree:\n" + "\n".join(bad)
