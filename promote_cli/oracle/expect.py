"""Expect files: answers a project relies on, checked (`promote expect FILE`).

One expectation a line, `FRAMEWORK[:KEY=VALUE,...] A B [OP] -> RESULT` (or `-> refused`); `#` starts a
comment and blank lines are skipped. Each line is asked as `promote query` asks it and compared with the
canonical spelling of its RESULT.
"""

from __future__ import annotations

import os

from promote_cli.errors import UsageError
from promote_cli.oracle.engine import answer
from promote_cli.oracle.registry import load, parse_side
from promote_cli.records import Record
from promote_cli.vocab.operands import parse as parse_operand

#: the RESULT of a pair expected to be refused (any case)
REFUSED_WORD = "refused"


class Expectation(Record):
    """One line of an expect file: `FRAMEWORK[:KEY=VALUE,...] A B [OP] -> RESULT` (or `-> refused`)."""

    line: int
    text: str
    framework: str
    options: dict
    a: str
    b: str
    op: str
    expected: str | None  # canonical result operand; None: the pair is expected to be refused
    got: str | None = None
    reason: str = ""
    ruleset: str = ""  # the ruleset that answered, as NAME@VERSION

    @property
    def holds(self) -> bool:
        return self.got == self.expected


class ExpectReport(Record):
    """What `expect` found: every expectation (`.checked`) and those that do not hold (`.mismatches`)."""

    source: str
    checked: list

    @property
    def mismatches(self) -> list:
        return [e for e in self.checked if not e.holds]


def parse_line(number: int, text: str) -> Expectation:
    """One line (without its comment) as an Expectation not yet asked; UsageError when it is malformed."""
    left, arrow, right = text.partition("->")
    words, want = left.split(), right.split()
    if not arrow or "->" in right or len(want) != 1 or len(words) not in (3, 4):
        raise UsageError("expected 'FRAMEWORK[:KEY=VALUE,...] A B [OP] -> RESULT' (or '-> refused')")
    label, spec, options = parse_side(words[0])
    a, b = (str(parse_operand(w)) for w in words[1:3])
    expected = None if want[0].lower() == REFUSED_WORD else str(parse_operand(want[0]))
    return Expectation(number, text, spec, options, a, b, words[3] if len(words) == 4 else "add", expected)


def expect(path_or_lines, source: str | None = None) -> ExpectReport:
    """Check an expect file (a path) or its lines: every expectation asked and its answer recorded. A malformed
    line, or one that cannot be asked (unknown framework, dtype, op or option), is a UsageError naming its line
    number (`SOURCE:LINE: ...`)."""
    if isinstance(path_or_lines, (str, os.PathLike)):
        path = os.fspath(path_or_lines)
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
        source = source or path
    else:
        lines = [str(line).rstrip("\r\n") for line in path_or_lines]
        source = source or "<lines>"
    checked = []
    for number, raw in enumerate(lines, 1):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            e = parse_line(number, text)
            ans = answer(load(e.framework), e.a, e.b, e.op, e.options)
        except UsageError as exc:
            raise UsageError(f"{source}:{number}: {exc}") from None
        e.got, e.reason, e.ruleset = ans.result, ans.refusal or ans.reason, f"{ans.framework}@{ans.version}"
        checked.append(e)
    return ExpectReport(source, checked)
