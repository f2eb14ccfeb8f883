"""Expect files: answers a project relies on, checked (`promote expect FILE`).

One expectation a line, `FRAMEWORK[:KEY=VALUE,...] A [B [C ...]] [OP] -> RESULT` (or `-> refused`); `#`
starts a comment and blank lines are skipped. Each line is asked as `promote query` asks it (three or more
operands as `promote query A B C` does; an op group's op with its own number of operands: `numpy i8 sum -> i64`,
`numpy bool i8 f32 where -> f32`; the last word is the op when it is no operand) and compared with the
canonical spelling of its RESULT.
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
    """One line of an expect file: `FRAMEWORK[:KEY=VALUE,...] A [B [C ...]] [OP] -> RESULT` (or `-> refused`);
    `operands` holds every operand (`a` and `b` the first two; `b` is empty for an op of one operand)."""

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
    operands: tuple = ()  # every operand, canonical

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
    """One line (without its comment) as an Expectation not yet asked; UsageError when it is malformed. After the
    framework come the operands, then optionally the op: a last word that is not an operand is the op when it
    follows two operands or more (no op's name is an operand), or when `is_op(framework, word)` says it is an op
    of the framework's op groups (`numpy i8 sum`); else it is a bad operand."""
    left, arrow, right = text.partition("->")
    words, want = left.split(), right.split()
    shape = "expected 'FRAMEWORK[:KEY=VALUE,...] A [B [C ...]] [OP] -> RESULT' (or '-> refused')"
    if not arrow or "->" in right or len(want) != 1 or len(words) < 2:
        raise UsageError(shape)
    label, spec, options = parse_side(words[0])
    named, op = words[1:], "add"
    if not _is_operand(named[-1]) and (len(named) > 2 or is_op(spec, named[-1])):
        named, op = named[:-1], named[-1]
    if not named or (op == "add" and len(named) < 2):
        raise UsageError(shape)
    given = tuple(str(parse_operand(w)) for w in named)
    expected = None if want[0].lower() == REFUSED_WORD else str(parse_operand(want[0]))
    return Expectation(number, text, spec, options, given[0], given[1] if len(given) > 1 else "", op, expected,
                       operands=given)


def _is_operand(word: str) -> bool:
    try:
        parse_operand(word)
    except UsageError:
        return False
    return True


def _ask_rules(rs, operands: list, op: str, options: dict):
    if len(operands) == 2:
        return answer(rs, operands[0], operands[1], op, options)
    return answer_n(rs, operands, op, options)


def _utf8_lines(data: bytes, source: str) -> list[str]:
    """The lines of an expect file's bytes; a UsageError naming the line and byte offset where it is not UTF-8."""
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UsageError(f"{source}:{line}: not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def expect(path_or_lines, source: str | None = None, ask=None) -> ExpectReport:
    """Check an expect file (a path, its bytes, or its lines): every expectation asked and its answer recorded. A
    malformed line, one that cannot be asked (unknown framework, dtype, op or option), or bytes that are not
    UTF-8, is a UsageError naming its line number (`SOURCE:LINE: ...`). `ask(ruleset, operands, op, options)`
    answers a line (default: the rules' pair or N-operand answer; the API's answers op groups' ops too)."""
    ask = ask or _ask_rules
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
            e = parse_line(number, text, lambda framework, word: load(framework).by_group(word))
            ans = ask(load(e.framework), list(e.operands), e.op, e.options)
        except UsageError as exc:
            raise UsageError(f"{source}:{number}: {exc}") from None
        e.got, e.reason, e.ruleset = ans.result, ans.refusal or ans.reason, f"{ans.framework}@{ans.version}"
        checked.append(e)
    return ExpectReport(source, checked)
