"""Whole promotion matrices and the differences between rulesets.

A cell whose operand form the framework cannot reason about (CANN and Python scalars) reads
as refused. A `RuleDefect` (a rule that fails while answering) is never a cell: it propagates,
so a broken rule file is reported instead of being shown as a refusal or a difference.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from promote_cli.errors import RuleDefect, UsageError
from promote_cli.oracle.engine import Answer, answer, parse_options, resolve_op
from promote_cli.oracle.model import Ruleset, json_value
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
class Side:
    """One side of a diff: the label it is shown under, its ruleset and the options it is asked with."""

    label: str
    ruleset: Ruleset
    options: dict


#: the kinds of difference a diff counts, in the order a summary names them: two sides give different results;
#: a side refuses a pair another answers; a side lacks an operand's type (or form) that another answers for
DIFFERENT, REFUSED, ABSENT = "different_results", "refused_on_a_side", "type_absent"
KINDS = (DIFFERENT, REFUSED, ABSENT)


@dataclass
class Diff:
    """The cells where the sides answer differently; each difference is `{"a", "b", LABEL: result, ...}`.

    `summary` counts them: `cells` compared, `differing`, and one count per kind of difference (`KINDS`;
    a cell with two different results counts as `different_results` even when a third side refuses it)."""

    frameworks: tuple[str, ...]
    op: str
    types: list[str]
    differences: list[dict]
    versions: tuple[str, ...] = ()  # each side's ruleset as NAME@VERSION, in the order of `frameworks`
    summary: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)  # options given once for every side (`-O`), as JSON values


def axis(rs: Ruleset | None, types: list[str] | None) -> list[str]:
    """The operands of a table: the given ones (canonical, each once), else the framework's types."""
    if types is None:
        return [d.name for d in rs.types]
    names: list[str] = []
    seen: dict[str, str] = {}
    for given in types:
        name = str(operands.parse(given))
        if name in seen:
            raise UsageError(f"--types lists {name} twice ({seen[name]!r} and {given!r})")
        seen[name] = given
        names.append(name)
    if not names:
        raise UsageError("--types lists no operand")
    return names


def _cell(rs: Ruleset, a: str, b: str, op: str, options: dict | None) -> Answer | None:
    try:
        return answer(rs, a, b, op, options)
    except RuleDefect:
        raise
    except UsageError:
        return None  # a form this framework refuses to reason about


def matrix(rs: Ruleset, types: list[str] | None = None, op: str = "add", options: dict | None = None) -> Matrix:
    """The full matrix; UsageError for an unknown op, option or type, RuleDefect for a failing rule."""
    resolve_op(rs, op)
    shown = {k: json_value(v) for k, v in parse_options(rs, options).items()}  # bad options fail here
    names = axis(rs, types)
    cells = []
    for a in names:
        row = []
        for b in names:
            ans = _cell(rs, a, b, op, options)
            if ans is None:
                ans = Answer(rs.name, rs.version, op, a, b, {}, None, None, "", f"{rs.key} cannot take {a} op {b}")
            row.append(ans)
        cells.append(row)
    return Matrix(rs.name, rs.version, op, names, cells, shown)


def union_types(rulesets: list[Ruleset]) -> list[str]:
    """Every side's type set, in the vocabulary's order."""
    have = {d.name for rs in rulesets for d in rs.types}
    return [name for name in dtypes.DTYPES if name in have]


def diff(sides: list[Side], types: list[str] | None = None, op: str = "add", common: dict | None = None) -> Diff:
    """The cells where the sides answer differently (a refused or missing cell reads None). `common` names
    the options given once for every side (already in each side's own options), to be shown with the diff."""
    labels = [s.label for s in sides]
    if len(sides) < 2:
        raise UsageError("a diff compares two or more rulesets")
    for side in sides:
        resolve_op(side.ruleset, op)
        parse_options(side.ruleset, side.options)  # bad values fail here, once
    names = axis(None, types) if types is not None else union_types([s.ruleset for s in sides])
    out = []
    counts = dict.fromkeys(KINDS, 0)
    for a in names:
        for b in names:
            cells = [_outcome(s.ruleset, a, b, op, s.options) for s in sides]
            results = [r for r, _ in cells]
            if any(r != results[0] for r in results[1:]):
                row = {"a": a, "b": b}
                row.update(zip(labels, results))
                out.append(row)
                counts[_kind(cells)] += 1
    summary = {"cells": len(names) ** 2, "differing": len(out), **counts}
    shown = {}
    for key, value in (common or {}).items():
        opt = next(s.ruleset.options[key] for s in sides if key in s.ruleset.options)
        shown[key] = json_value(opt.parse(value))
    return Diff(tuple(labels), op, names, out, tuple(s.ruleset.key for s in sides), summary, shown)


def _kind(cells: list[tuple[str | None, bool]]) -> str:
    """The kind of a differing cell, from each side's (result, whether it has both operands)."""
    if len({r for r, _ in cells if r is not None}) > 1:
        return DIFFERENT
    if any(r is None and present for r, present in cells):
        return REFUSED
    return ABSENT


def _outcome(rs: Ruleset, a: str, b: str, op: str, options: dict | None) -> tuple[str | None, bool]:
    """(result, present): the cell's result (None when refused or absent) and whether the ruleset has both
    operands (their dtypes are among its types and it reasons about their forms)."""
    ans = _cell(rs, a, b, op, options)
    if ans is None:
        return None, False
    return ans.result, all(_has(rs, x) for x in (a, b))


def _has(rs: Ruleset, operand: str) -> bool:
    dtype = operands.parse(operand).dtype
    return dtype is None or dtype in rs.type_set
