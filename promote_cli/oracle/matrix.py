"""Whole promotion matrices and the differences between two rulesets."""

from __future__ import annotations

from dataclasses import dataclass

from promote_cli.errors import PromoteError, UsageError
from promote_cli.oracle.engine import Answer, answer, parse_options
from promote_cli.oracle.model import Ruleset
from promote_cli.vocab import dtypes, operands


@dataclass
class Matrix:
    """rows = left operand, columns = right operand; a cell is the Answer (result None when refused)."""

    framework: str
    version: str
    op: str
    types: list[str]
    cells: list[list[Answer]]
    options: dict  # the option values the matrix was computed with (defaults filled in)

    def results(self) -> list[list[str | None]]:
        return [[cell.result for cell in row] for row in self.cells]


@dataclass
class Diff:
    frameworks: tuple[str, str]
    op: str
    types: list[str]
    differences: list[dict]


def axis(rs: Ruleset, types: list[str] | None) -> list[str]:
    """The operands of a table: the given ones (canonical), else the framework's types."""
    if types:
        return [str(operands.parse(t)) for t in types]
    return [d.name for d in rs.types]


def _cell(rs: Ruleset, a: str, b: str, op: str, options: dict | None) -> Answer | None:
    try:
        return answer(rs, a, b, op, options)
    except UsageError:
        return None  # a form this framework refuses to reason about


def matrix(rs: Ruleset, types: list[str] | None = None, op: str = "add", options: dict | None = None) -> Matrix:
    shown = {k: getattr(v, "name", v) for k, v in parse_options(rs, options).items()}  # bad options fail here
    names = axis(rs, types)
    cells = []
    for a in names:
        row = []
        for b in names:
            ans = _cell(rs, a, b, op, options)
            if ans is None:
                ans = Answer(rs.name, rs.version, op, a, b, {}, None, None, "", f"{rs.name} cannot take {a} op {b}")
            row.append(ans)
        cells.append(row)
    return Matrix(rs.name, rs.version, op, names, cells, shown)


def union_types(rs1: Ruleset, rs2: Ruleset) -> list[str]:
    """Both type sets, in the vocabulary's order."""
    have = {d.name for d in rs1.types} | {d.name for d in rs2.types}
    return [name for name in dtypes.DTYPES if name in have]


def diff(rs1: Ruleset, rs2: Ruleset, label1: str, label2: str, types: list[str] | None = None,
         op: str = "add", options1: dict | None = None, options2: dict | None = None) -> Diff:
    """The cells where the two rulesets answer differently (a refused or missing cell reads None)."""
    names = [str(operands.parse(t)) for t in types] if types else union_types(rs1, rs2)
    out = []
    for a in names:
        for b in names:
            r1 = _result(rs1, a, b, op, options1)
            r2 = _result(rs2, a, b, op, options2)
            if r1 != r2:
                out.append({"a": a, "b": b, label1: r1, label2: r2})
    return Diff((label1, label2), op, names, out)


def _result(rs: Ruleset, a: str, b: str, op: str, options: dict | None) -> str | None:
    try:
        return answer(rs, a, b, op, options).result
    except PromoteError:
        return None
