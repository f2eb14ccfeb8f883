"""Expect files: answers a project relies on, checked (`promote expect FILE`).

One expectation a line, `FRAMEWORK[:KEY=VALUE,...] A B [OP] -> RESULT` (or `-> refused`); an op of an op
group takes its own number of operands, `numpy i8 sum -> i64`, `numpy bool i8 f32 where -> f32` (the word before
the arrow is the op when it is no operand); `#` starts a comment and blank lines are skipped. Each line is asked as `promote query` asks it and compared with the
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
    operands: tuple = ()  # every operand (an op group's op takes one to three)
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


def parse_line(number: int, text: str, is_op=lambda framework, word: False) -> Expectation:
    """One line (without its comment) as an Expectation not yet asked; UsageError when it is malformed. The word
    before the arrow is the op when it is no operand and follows two operands or more, or `is_op(framework, word)`
    says it is an op of the framework's op groups (`numpy i8 sum`); else it is a bad operand."""
    left, arrow, right = text.partition("->")
    words, want = left.split(), right.split()
    shape = "expected 'FRAMEWORK[:KEY=VALUE,...] A B [OP] -> RESULT' (or '-> refused')"
    if not arrow or "->" in right or len(want) != 1 or not 2 <= len(words) <= 5:
        raise UsageError(shape)
    label, spec, options = parse_side(words[0])
    rest, op = words[1:], "add"
    try:
        parse_operand(rest[-1])
    except UsageError:
        if len(rest) < 3 and not is_op(spec, rest[-1]):
            raise
        rest, op = rest[:-1], rest[-1]
    if not 1 <= len(rest) <= 3 or (op == "add" and len(rest) != 2):
        raise UsageError(shape)
    given = tuple(str(parse_operand(w)) for w in rest)
    expected = None if want[0].lower() == REFUSED_WORD else str(parse_operand(want[0]))
    return Expectation(number, text, spec, options, given[0], given[1] if len(given) > 1 else "", op, expected,
                       operands=given)


def expect(path_or_lines, source: str | None = None, ask=None) -> ExpectReport:
    """Check an expect file (a path) or its lines: every expectation asked and its answer recorded. A malformed
    line, or one that cannot be asked (unknown framework, dtype, op or option), is a UsageError naming its line
    number (`SOURCE:LINE: ...`). `ask(ruleset, operands, op, options)` answers a line (default: the pair answer;
    the API's answers op groups' ops too)."""
    ask = ask or (lambda rs, given, op, options: answer(rs, given[0], given[1], op, options))
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
            e = parse_line(number, text, lambda framework, word: load(framework).by_group(word))
            ans = ask(load(e.framework), list(e.operands), e.op, e.options)
        except UsageError as exc:
            raise UsageError(f"{source}:{number}: {exc}") from None
        e.got, e.reason, e.ruleset = ans.result, ans.refusal or ans.reason, f"{ans.framework}@{ans.version}"
        checked.append(e)
    return ExpectReport(source, checked)
