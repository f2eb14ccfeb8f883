"""Expect files: answers a project relies on, checked (`promote expect FILE`).

One expectation a line, `FRAMEWORK[:KEY=VALUE,...] A B [C ...] [OP] -> RESULT` (or `-> refused`); `#` starts
a comment and blank lines are skipped. Each line is asked as `promote query` asks it (three or more operands as
`promote query A B C` does; a last word that is not an operand is the op) and compared with the canonical
spelling of its RESULT.
"""

from __future__ import annotations

import os

from promote_cli.errors import UsageError
from promote_cli.oracle.engine import answer, answer_n
from promote_cli.oracle.registry import load, parse_side
from promote_cli.records import Record
from promote_cli.vocab.operands import parse as parse_operand

#: the RESULT of a pair expected to be refused (any case)
REFUSED_WORD = "refused"


class Expectation(Record):
    """One line of an expect file: `FRAMEWORK[:KEY=VALUE,...] A B [C ...] [OP] -> RESULT` (or `-> refused`);
    `more` holds the operands after the first two."""

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
    more: tuple = ()  # the operands after a and b, canonical

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
    """One line (without its comment) as an Expectation not yet asked; UsageError when it is malformed. After the
    framework come the operands, then optionally the op: a last word (of three or more) that is not an operand is
    the op (no op's name is an operand)."""
    left, arrow, right = text.partition("->")
    words, want = left.split(), right.split()
    if not arrow or "->" in right or len(want) != 1 or len(words) < 3:
        raise UsageError("expected 'FRAMEWORK[:KEY=VALUE,...] A B [C ...] [OP] -> RESULT' (or '-> refused')")
    label, spec, options = parse_side(words[0])
    named, op = words[1:], "add"
    if len(named) > 2 and not _is_operand(named[-1]):
        named, op = named[:-1], named[-1]
    a, b, *more = (str(parse_operand(w)) for w in named)
    expected = None if want[0].lower() == REFUSED_WORD else str(parse_operand(want[0]))
    return Expectation(number, text, spec, options, a, b, op, expected, more=tuple(more))


def _is_operand(word: str) -> bool:
    try:
        parse_operand(word)
    except UsageError:
        return False
    return True


def _utf8_lines(data: bytes, source: str) -> list[str]:
    """The lines of an expect file's bytes; a UsageError naming the line and byte offset where it is not UTF-8."""
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UsageError(f"{source}:{line}: not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def expect(path_or_lines, source: str | None = None) -> ExpectReport:
    """Check an expect file (a path, its bytes, or its lines): every expectation asked and its answer recorded. A
    malformed line, one that cannot be asked (unknown framework, dtype, op or option), or bytes that are not
    UTF-8, is a UsageError naming its line number (`SOURCE:LINE: ...`)."""
    if isinstance(path_or_lines, (str, os.PathLike)):
        path = os.fspath(path_or_lines)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
        source = source or path
        lines = _utf8_lines(data, source)
    elif isinstance(path_or_lines, bytes):
        source = source or "<bytes>"
        lines = _utf8_lines(path_or_lines, source)
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
            rs = load(e.framework)
            ans = (answer_n(rs, [e.a, e.b, *e.more], e.op, e.options) if e.more
                   else answer(rs, e.a, e.b, e.op, e.options))
        except UsageError as exc:
            raise UsageError(f"{source}:{number}: {exc}") from None
        e.got, e.reason, e.ruleset = ans.result, ans.refusal or ans.reason, f"{ans.framework}@{ans.version}"
        checked.append(e)
    return ExpectReport(source, checked)
