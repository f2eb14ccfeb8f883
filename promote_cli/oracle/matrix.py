"""Whole promotion matrices and the differences between rulesets.

A cell reads None when the framework refuses the pair, and also when it lacks an operand: a type
that is not among its types, or a form it has no rules for (CANN and Python scalars). Each matrix
and diff lists the operands a ruleset lacks (`absent`), so that the two can be told apart. A `RuleDefect` (a rule that fails while answering) is never a cell: it propagates,
so a broken rule file is reported instead of being shown as a refusal or a difference.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from promote_cli.errors import Refusal, RuleDefect, UsageError
from promote_cli.oracle.engine import Answer, answer, normalise, parse_options, resolve_op
from promote_cli.oracle.model import Ruleset, json_value
from promote_cli.oracle.registry import is_pair, load, parse_side
from promote_cli.vocab import dtypes, operands


@dataclass
class Matrix:
    """rows = left operand, columns = right operand; a cell is the Answer (result None when refused, or when the
    ruleset lacks an operand: `absent` lists those operands of `types`)."""

    framework: str
    version: str
    op: str
    types: list[str]
    cells: list[list[Answer]]
    options: dict  # the option values the matrix was computed with (defaults filled in)
    absent: list[str] = field(default_factory=list)

    def results(self) -> list[list[str | None]]:
        return [[cell.result for cell in row] for row in self.cells]

    def lacking(self) -> list[list[bool]]:
        """Per cell, whether the ruleset lacks one of its operands (rather than refusing the pair)."""
        gone = set(self.absent)
        return [[a in gone or b in gone for b in self.types] for a in self.types]


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
    absent: dict = field(default_factory=dict)  # each side's label -> the operands of `types` its ruleset lacks

    def lacking(self, x: dict) -> list[bool]:
        """Per side of a difference `x`, whether that side lacks one of its operands (rather than refusing)."""
        return [x["a"] in self.absent.get(f, ()) or x["b"] in self.absent.get(f, ()) for f in self.frameworks]


def axis(rs: Ruleset | None, types: list[str] | str | None, flag: str = "--types") -> list[str]:
    """The operands of a table: the given ones (canonical, each once; a string lists them as `--types` does,
    `"i8,u8"`), else the framework's types; errors name the option `flag`."""
    if types is None:
        return [d.name for d in rs.types]
    if isinstance(types, str):
        types = [t.strip() for t in types.split(",") if t.strip()]
    names: list[str] = []
    seen: dict[str, str] = {}
    for given in types:
        name = str(operands.parse(given))
        if name in seen:
            raise UsageError(f"{flag} lists {name} twice ({seen[name]!r} and {given!r})")
        seen[name] = given
        names.append(name)
    if not names:
        raise UsageError(f"{flag} lists no operand")
    return names


def extended(names: list[str], operands: list[str] | str | None) -> list[str]:
    """An axis with `operands` after it (`--operands`: 0-d arrays, Python scalars, values), each once and
    none of them already on the axis."""
    if operands is None:
        return names
    more = axis(None, operands, "--operands")
    twice = next((n for n in more if n in names), None)
    if twice is not None:
        raise UsageError(f"--operands lists {twice}, which the axis already has")
    return names + more


def lacks(rs: Ruleset, operand: str) -> bool:
    """Whether a ruleset lacks an operand: its dtype is not among the ruleset's types, or the ruleset has no rules
    for its form (CANN and Python scalars)."""
    try:
        normalise(rs, operand)
    except (UsageError, Refusal):
        return True
    return False


def _nonempty(names: list[str], why: str) -> list[str]:
    if not names:
        raise UsageError(f"{why} leaves no operand to show")
    return names


def _cell(rs: Ruleset, a: str, b: str, op: str, options: dict | None, ask=None) -> Answer | None:
    try:
        if rs.by_group(op):  # an op group's op: answered by `ask` (the API's, which knows op groups)
            return ask(rs, [a, b], op, options)
        return answer(rs, a, b, op, options)
    except RuleDefect:
        raise
    except UsageError:
        return None  # a form this framework refuses to reason about


def _check_op(rs: Ruleset, op: str, ask) -> None:
    """UsageError for an op the ruleset lacks, or an op group's op without `ask` to answer it."""
    if not rs.by_group(op):
        resolve_op(rs, op)
    elif ask is None:
        raise UsageError(f"{op} is an op of {rs.key}'s op groups: ask through promote_cli.table or diff")


def matrix(rs: Ruleset, types: list[str] | None = None, op: str = "add", options: dict | None = None,
           common_types: bool = False, drop_refused: bool = False, ask=None, operands=None) -> Matrix:
    """The full matrix; UsageError for an unknown op, option or type, RuleDefect for a failing rule.

    `common_types` keeps only the operands the ruleset has (of `types`: without them, it has every one);
    `drop_refused` leaves out each operand whose row and column hold no answer at all. `ask(ruleset, operands,
    op, options)` answers an op group's op of two operands; `operands` go after the types on both axes."""
    _check_op(rs, op, ask)
    shown = {k: json_value(v) for k, v in parse_options(rs, options).items()}  # bad options fail here
    names = extended(axis(rs, types), operands)
    if common_types:
        names = _nonempty([n for n in names if not lacks(rs, n)], f"--common ({rs.key} has none of them)")
    cells = []
    for a in names:
        row = []
        for b in names:
            ans = _cell(rs, a, b, op, options, ask)
            if ans is None:
                ans = Answer(rs.name, rs.version, op, a, b, {}, None, None, "", f"{rs.key} cannot take {a} op {b}")
            row.append(ans)
        cells.append(row)
    if drop_refused:
        keep = [i for i in range(len(names))
                if any(cells[i][j].result is not None or cells[j][i].result is not None for j in range(len(names)))]
        _nonempty(keep, f"--drop-refused ({rs.key} answers none of these pairs)")
        names = [names[i] for i in keep]
        cells = [[cells[i][j] for j in keep] for i in keep]
    return Matrix(rs.name, rs.version, op, names, cells, shown, [n for n in names if lacks(rs, n)])


def union_types(rulesets: list[Ruleset]) -> list[str]:
    """Every side's type set, in the vocabulary's order."""
    have = {d.name for rs in rulesets for d in rs.types}
    return [name for name in dtypes.DTYPES if name in have]


def sides(given, common: dict | None = None) -> list[Side]:
    """The sides of a diff, loaded: `given` holds two or more sides (or is one list of them), each a spec string
    `NAME[@VERSION][:KEY=VALUE,...]` or a pair (NAME, options). `common` (options for every side) applies to each
    side that has the option; an option no side has, or a side's own option its ruleset lacks, is a UsageError."""
    if len(given) == 1 and isinstance(given[0], (list, tuple)) and not is_pair(given[0]):
        given = tuple(given[0])
    parsed = [parse_side(s) for s in given]
    if len(parsed) < 2:
        raise UsageError("a diff compares two or more rulesets")
    loaded = [(label, load(spec), own) for label, spec, own in parsed]
    common = dict(common or {})
    unknown = [k for k in common if not any(k in rs.options for _, rs, _ in loaded)]
    if unknown:
        names = " nor ".join(label for label, _, _ in loaded)
        raise UsageError(f"neither {names} has option {unknown[0]!r}")
    built = []
    for label, rs, own in loaded:
        merged = {k: v for k, v in common.items() if k in rs.options}
        merged.update(own)
        parse_options(rs, merged)  # a side's own unknown option or bad value: UsageError naming it
        built.append(Side(label, rs, merged))
    return built


def diff(sides: list[Side], types: list[str] | None = None, op: str = "add", common: dict | None = None,
         *, common_types: bool = False, drop_refused: bool = False, ask=None, operands=None) -> Diff:
    """The cells where the sides answer differently (a refused or missing cell reads None). `common` names
    the options given once for every side (already in each side's own options), to be shown with the diff.

    The axes are `types`, else the union of the sides' types, then `operands`; `common_types` keeps only the
    operands every side has, and `drop_refused` leaves out each operand whose row and column no side answers at all."""
    labels = [s.label for s in sides]
    if len(sides) < 2:
        raise UsageError("a diff compares two or more rulesets")
    for side in sides:
        _check_op(side.ruleset, op, ask)
        parse_options(side.ruleset, side.options)  # bad values fail here, once
    names = extended(axis(None, types) if types is not None else union_types([s.ruleset for s in sides]), operands)
    if common_types:
        names = _nonempty([n for n in names if not any(lacks(s.ruleset, n) for s in sides)],
                          "--common (no operand is every side's)")
    absent = [{n for n in names if lacks(s.ruleset, n)} for s in sides]
    out = []
    counts = dict.fromkeys(KINDS, 0)
    answered: set[str] = set()  # the operands some side answers some pair of
    for a in names:
        for b in names:
            cells = [_outcome(s.ruleset, a, b, op, s.options, lacking, ask) for s, lacking in zip(sides, absent)]
            results = [r for r, _ in cells]
            if any(r is not None for r in results):
                answered.update((a, b))
            if any(r != results[0] for r in results[1:]):
                row = {"a": a, "b": b}
                row.update(zip(labels, results))
                out.append(row)
                counts[_kind(cells)] += 1
    if drop_refused:  # a difference has an answer on some side: every one stays
        names = _nonempty([n for n in names if n in answered], "--drop-refused (no side answers any pair)")
    summary = {"cells": len(names) ** 2, "differing": len(out), **counts}
    shown = {}
    for key, value in (common or {}).items():
        opt = next(s.ruleset.options[key] for s in sides if key in s.ruleset.options)
        shown[key] = json_value(opt.parse(value))
    lacked = {label: [n for n in names if n in gone] for label, gone in zip(labels, absent)}
    return Diff(tuple(labels), op, names, out, tuple(s.ruleset.key for s in sides), summary, shown, lacked)


def _kind(cells: list[tuple[str | None, bool]]) -> str:
    """The kind of a differing cell, from each side's (result, whether it has both operands)."""
    if len({r for r, _ in cells if r is not None}) > 1:
        return DIFFERENT
    if any(r is None and present for r, present in cells):
        return REFUSED
    return ABSENT


def _outcome(rs: Ruleset, a: str, b: str, op: str, options: dict | None, lacking: set[str],
             ask=None) -> tuple[str | None, bool]:
    """(result, present): the cell's result (None when refused or absent) and whether the ruleset has both
    operands (none of them in `lacking`, the operands it lacks)."""
    ans = _cell(rs, a, b, op, options, ask)
    if ans is None:
        return None, False
    return ans.result, a not in lacking and b not in lacking


@dataclass
class Column:
    """An op of one operand over an axis of operands (`promote table --op sum`): each side's result per operand,
    None where it refuses or lacks the operand (`absent`: per side, the operands it lacks)."""

    frameworks: tuple[str, ...]   # each side's label
    versions: tuple[str, ...]     # each side's ruleset as NAME@VERSION
    op: str
    types: list[str]
    results: list[list[str | None]]   # per operand, per side
    options: dict = field(default_factory=dict)
    absent: dict = field(default_factory=dict)

    @property
    def differences(self) -> list[dict]:
        """The operands whose sides answer differently: `{"a", LABEL: result, ...}` (none for one side)."""
        return [{"a": a, **dict(zip(self.frameworks, row))} for a, row in zip(self.types, self.results)
                if len(set(row)) > 1]

    def to_dict(self) -> dict:
        data = {"frameworks": list(self.frameworks), "versions": list(self.versions), "op": self.op,
                "types": self.types, "results": {f: [row[i] for row in self.results]
                                                  for i, f in enumerate(self.frameworks)}}
        if len(self.frameworks) > 1:
            data["differences"] = self.differences
        data.update(options=self.options, absent=self.absent)
        return data


def column(sides: list[Side], types: list[str] | None, op: str, ask, *, common_types: bool = False,
           drop_refused: bool = False, operands=None) -> Column:
    """The answers of an op group's op of one operand, one per operand of the axis and side; `ask(ruleset,
    operands, op, options)` answers each (the axis as a diff's: `types`, else the union of the sides' types)."""
    for side in sides:
        _check_op(side.ruleset, op, ask)
        parse_options(side.ruleset, side.options)
    names = extended(axis(None, types) if types is not None else union_types([s.ruleset for s in sides]), operands)
    if common_types:
        names = _nonempty([n for n in names if not any(lacks(s.ruleset, n) for s in sides)],
                          "--common (no operand is every side's)")
    results = []
    for a in names:
        row = []
        for side in sides:
            try:
                row.append(ask(side.ruleset, [a], op, side.options).result)
            except RuleDefect:
                raise
            except UsageError:
                row.append(None)
        results.append(row)
    if drop_refused:
        keep = [i for i, row in enumerate(results) if any(r is not None for r in row)]
        _nonempty(keep, "--drop-refused (no side answers any operand)")
        names, results = [names[i] for i in keep], [results[i] for i in keep]
    absent = {s.label: [n for n in names if lacks(s.ruleset, n)] for s in sides}
    shown = {k: json_value(v) for s in sides for k, v in parse_options(s.ruleset, s.options).items()} \
        if len(sides) == 1 else {}
    return Column(tuple(s.label for s in sides), tuple(s.ruleset.key for s in sides), op, names, results, shown,
                  absent)
