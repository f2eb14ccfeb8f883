"""Output formats: one small module per format behind one interface.

    from promote_cli import formats
    out = formats.get("csv")            # text, json, csv, markdown, rich (`color=True` for colour,
                                        # `width=N` to fit matrices into N columns)
    formats.emit(out.matrix(m))         # the payload, on stdout

A format is a `Format` subclass in its own module (`text.py`, `json.py`, `csv.py`,
`markdown.py`, `rich.py`). Each method takes one payload and returns the text for standard
output, ending in a newline (or "" for nothing); a format that has no shape for a payload
keeps the base method, which raises `UsageError`. The payloads:

    answer(Answer)              one query's answer (`promote query`)
    batch_line(BatchLine)       one line of `promote query --batch`, without its newline
    matrix(Matrix)              a promotion matrix (`promote table`)
    diff(Diff)                  the differing cells of rulesets (`promote table --diff`); its one-line
                                summary (`diff_summary`) is in the payload only where `summarises`
                                says so (rich, json), else the command prints it on stderr
    records(Records)            a listing: header, rows of strings, and the JSON records
    port(Port)                  `promote port`: per op, the cases needing casts (json: one object a line)
    report(Report, limit)       `promote verify`: disagreements (at most `limit` in text) and verdicts
    validation([FileCheck])     `promote validate`: every problem of every file
    cast_outcome(Outcome, hit)  one file of `promote cast`: its report (and the --fail-on conditions
                                it triggered), or its error
    cast_summary(CastTotals)    the files, elements and counters of a `promote cast` of several files
    tensor_report(TensorReport) one tensor of a checkpoint `promote cast`: cast (its counts and largest
                                errors) or kept
    checkpoint_summary(CheckpointTotals)  a checkpoint cast's totals
    rescale_report(report)      one file of `promote rescale`
    explanation(Explanation)    `promote explain`: the rule that decided, what it consulted, other options
    expectations(ExpectReport)  `promote expect`: the expectations that do not hold, and a count
    expression(ExprResult, explain)  `promote expr`: the result operand, or (explain) every node
    check(Check)                `promote check`: each property with its counterexamples, the claims judged
    order(Order)                `promote lattice`: a Hasse diagram, and the cells that are not its joins

`svg` and `html` draw matrices and diffs as pictures (`table --svg/--html`), `dot` and `mermaid`
draw orders as graphs; `render(format, payload)` picks the method for a payload.

A new payload (a cast report, say) is one more method here, raising by default, and an
implementation in each format module that has a shape for it; its command offers exactly
those formats in its `--format` choice.

Formats write nothing themselves: the payload goes to stdout, and diagnostics (a refusal's
reason, a verdict, errors) go to stderr as single lines made with `one_line`, from the
command. Only `rich` imports Rich, so the other formats keep `promote query` light.
"""

from __future__ import annotations

import importlib
from promote_cli.errors import UsageError, one_line  # noqa: F401  (re-exported: formats and commands use it)
from promote_cli.records import Record, factory

NAMES = ("text", "json", "csv", "markdown", "rich", "svg", "html", "dot", "mermaid")
#: a refused cell in text, in markdown and rich (and the pictures), in csv
REFUSED_TEXT, REFUSED_MARKDOWN, REFUSED_CSV = "-", "×", ""
#: a cell of an operand the framework lacks (a type it does not have, a form it has no rules for), in every format
ABSENT = "n/a"


class Section(Record):
    """A titled block of a listing's details: `lines` (an option, a setting) then `bullets` (notes)."""

    title: str
    lines: list[str] = factory(list)
    bullets: list[str] = factory(list)


class Records(Record):
    """A listing: `rows` (strings, under `header`) for the tabular formats, `data` (JSON values) for json;
    `details` are `Section`s that text, markdown and rich print after the table (e.g. `frameworks -v`; json
    has them in `data`, csv is the table alone)."""

    title: str
    header: list[str]
    rows: list[list[str]]
    data: object
    details: list[Section] = factory(list)


#: the columns of a `promote port` listing (csv adds the op in front)
PORT_HEADER = ["operands", "source", "target", "casts", "compute", "output cast", "lossless", "cannot because"]


def port_row(case) -> list[str]:
    """One case of `promote port` as the cells of a listing: the op, then `PORT_HEADER`'s columns."""
    casts = ", ".join(f"#{c['operand']} -> {c['to']}" for c in case.casts)
    return [case.op, " ".join(case.operands), case.source, case.target or REFUSED_TEXT, casts,
            case.compute or "", case.output_cast or "", "" if case.lossless is None else str(case.lossless).lower(),
            case.impossible or ""]


class Format:
    """The interface; see the module docstring."""

    name = ""
    summarises = False  # whether `diff` holds the diff's summary (else the command prints it on stderr)
    unanswered = "the `error:` lines"  # where a batch's lines that could not be answered are, in its output
    refused_mark = REFUSED_TEXT  # how a column of an op's results shows a refusal
    heading = "{title}\n"  # a titled block's heading line where the listing does not show its title

    def __init__(self, color: bool = False, width: int | None = None):
        self.color = color
        self.width = width

    def _none(self, what: str):
        raise UsageError(f"--format {self.name} has no form for {what}")

    def answer(self, ans) -> str:
        self._none("a query answer")

    def batch_line(self, line) -> str:
        self._none("batch answers")

    def matrix(self, m) -> str:
        self._none("a matrix")

    def diff(self, d) -> str:
        self._none("a diff")

    def records(self, r: Records) -> str:
        self._none("a listing")

    def column(self, c) -> str:
        """An op of one operand over its operands (`promote table --op sum`): a listing of each side's result."""
        return self.records(column_records(c, self.refused_mark))

    def port(self, p) -> str:
        """`promote port`: per op, a listing of the cases that need casts or cannot be reproduced."""
        out = []
        for one in p.ops:
            if one.cases:
                title = f"{one.op} ({p.source}: {one.source_op}, {p.target}: {one.target_op})"
                table = self.records(Records(title, PORT_HEADER, [port_row(c)[1:] for c in one.cases],
                                             [c.to_dict() for c in one.cases]))
                out.append(self.heading.format(title=title) + table)
        return "\n".join(out)

    def report(self, r, limit: int) -> str:
        self._none("a verification report")

    def validation(self, checks) -> str:
        self._none("a validation")

    def cast_outcome(self, outcome, failed_on: list[str]) -> str:
        self._none("a cast report")

    def cast_summary(self, totals) -> str:
        self._none("a cast summary")

    def tensor_report(self, report) -> str:
        self._none("a tensor's cast report")

    def checkpoint_summary(self, totals) -> str:
        self._none("a checkpoint cast summary")

    def rescale_report(self, report) -> str:
        self._none("a rescale report")

    def explanation(self, x) -> str:
        self._none("an explanation")

    def expectations(self, report) -> str:
        self._none("expectations")

    def expression(self, result, explain: bool) -> str:
        self._none("an expression's result")
    def check(self, x) -> str:
        self._none("a check of properties")

    def order(self, o) -> str:
        self._none("an order")


#: the method of `Format` that renders a payload, by the payload's class name
METHODS = {"Answer": "answer", "Matrix": "matrix", "Diff": "diff", "Column": "column", "Records": "records", "Explanation": "explanation",
           "ExpectReport": "expectations", "Order": "order", "Check": "check"}


def render(out: Format, payload) -> str:
    """`payload` rendered by the method of `out` for its kind (UsageError for a payload no format has)."""
    method = METHODS.get(type(payload).__name__)
    if method is None:
        raise UsageError(f"nothing renders a {type(payload).__name__}")
    return getattr(out, method)(payload)


def get(name: str, color: bool = False, width: int | None = None) -> Format:
    """The format called `name` (UsageError for an unknown one); `width` is the line length matrices must fit
    (text and rich; None: text prints one grid, rich fits the width its console reports)."""
    if name not in NAMES:
        raise UsageError(f"unknown format {name!r} (formats: {', '.join(NAMES)})")
    module = importlib.import_module(f"{__name__}.{name}")
    return module.FORMAT(color=color, width=width)


def emit(text: str) -> None:
    """Write a rendered payload to stdout as it is (colour codes included: a format adds them only on request)."""
    import click

    click.echo(text, nl=False, color=True)


def grid(header: list[str], rows: list[list[str]]) -> str:
    """Left-aligned columns two spaces apart (text, and the shape tests parse)."""
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in [header] + rows]
    return "\n".join(lines) + "\n"


def slices(label_width: int, widths: list[int], width: int, gap: int) -> list[range]:
    """Split columns of `widths` into consecutive blocks that fit `width` beside a label column of
    `label_width`, each column taking `gap` more (at least one column a block)."""
    blocks: list[range] = []
    start, used = 0, label_width
    for i, w in enumerate(widths):
        if i > start and used + gap + w > width:
            blocks.append(range(start, i))
            start, used = i, label_width
        used += gap + w
    if start < len(widths) or not blocks:
        blocks.append(range(start, len(widths)))
    return blocks


def corner(m) -> str:
    """The top-left cell of a matrix: the ruleset as NAME@VERSION and the op (an op of a ruleset without an op
    list is as typed)."""
    return one_line(f"{m.framework}@{m.version} {m.op}")


def side_heads(d) -> list[str]:
    """A diff's column heads: each side's label with its ruleset's version (`openvino@2026.4.1:promote_unsafe=true`);
    a label that names its version is kept as written."""
    heads = []
    for label, key in zip(d.frameworks, d.versions or d.frameworks):
        spec, sep, opts = label.partition(":")
        heads.append(label if "@" in spec else f"{key}{sep}{opts}")
    return heads


#: how a diff summary names each kind of difference (promote_cli.oracle.matrix.KINDS)
DIFF_KINDS = {"different_results": "with different results",
              "refused_on_a_side": "refused by a side that another answers",
              "type_absent": "with a type a side lacks"}


def word(value) -> str:
    """An option's value (a JSON value in every payload) as a user types it: `true`/`false`, a name, a number."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def option_words(options: dict) -> str:
    """Option values as `KEY=VALUE, ...` ("" for none)."""
    return ", ".join(f"{k}={word(v)}" for k, v in options.items())


def diff_options(d) -> str:
    """The options a diff gave every side (`-O`), as `KEY=VALUE, ...` ("" for none)."""
    return option_words(getattr(d, "options", {}))


def diff_head(d) -> str:
    """What a diff compares: the sides, then the op and the options given to every side."""
    opts = diff_options(d)
    return f"{' vs '.join(side_heads(d))} ({d.op}{', ' + opts if opts else ''})"


def counted(n: int, noun: str) -> str:
    """`N NOUNs`, or `1 NOUN`."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def tally(k: int, n: int, noun: str, verb: str) -> str:
    """`K of N NOUNs VERB`, in English when there is one: `the 1 cell agrees`, `the 1 case does not agree`. `verb`
    may be a phrase (`depend on the operands' order`); its first word agrees."""
    if n == 1:
        return f"the 1 {noun} {_singular(verb)}" if k == 1 else f"the 1 {noun} does not {verb}"
    return f"{k} of {counted(n, noun)} {verb}"


def _singular(verb: str) -> str:
    first, space, rest = verb.partition(" ")
    return verb if first in ("cannot", "can", "may", "must") else f"{first}s{space}{rest}"


def of_count(k: int, n: int, noun: str) -> str:
    """`K of N NOUNs`, or `the 1 NOUN` when the one there is is counted."""
    return f"the 1 {noun}" if k == n == 1 else f"{k} of {counted(n, noun)}"


def diff_summary(d) -> str:
    """A diff in one line: the sides, the op, how many cells differ and by what kind of difference."""
    s = d.summary
    head = diff_head(d)
    if not s.get("differing"):
        cells = s.get("cells", len(d.types) ** 2)
        return one_line(f"{head}: {tally(1, 1, 'cell', 'agree') if cells == 1 else f'all {cells} cells agree'}")
    kinds = ", ".join(f"{s[k]} {text}" for k, text in DIFF_KINDS.items() if s.get(k))
    return one_line(f"{head}: {tally(s['differing'], s['cells'], 'cell', 'differ')}: {kinds}")


def column_summary(c) -> str:
    """A column of two sides or more in one line: the sides, the op, how many operands they answer differently."""
    head, n, differing = diff_head(c), len(c.types), len(c.differences)
    if not differing:
        return one_line(f"{head}: all {n} operands agree")
    return one_line(f"{head}: {differing} of {n} operands differ")


def broken_claims(x) -> str:
    """A check's verdict on the claims its rule file makes that do not hold, in one line."""
    parts = [f"{c.property} = {str(c.claimed).lower()}" for c in x.broken]
    return one_line(f"{x.framework}@{x.version} claims {' and '.join(parts)}, which the rules contradict")


def cell_lines(o) -> list[str]:
    """An order's cells that are not joins, one a line: `i8 u8: gives f16, but ...` (`promote lattice`)."""
    return [f"{c.a} {c.b}: {c.why}" for c in o.cells]


def shown(result: str | None, refused: str, lacking: bool = False) -> str:
    """A cell's text: its result, else `ABSENT` where the framework lacks an operand, else the format's `refused`."""
    if result is not None:
        return result
    return ABSENT if lacking else refused


def matrix_rows(m, refused: str) -> list[list[str]]:
    """A matrix's cells as text, a row per left operand (`shown`)."""
    return [[shown(r, refused, gone) for r, gone in zip(row, lacks)] for row, lacks in zip(m.results(), m.lacking())]


def diff_rows(d, refused: str) -> list[list[str]]:
    """A diff's rows as text: `a`, `b`, then each side's cell (`shown`)."""
    return [[x["a"], x["b"], *(shown(x[f], refused, gone) for f, gone in zip(d.frameworks, d.lacking(x)))]
            for x in d.differences]


def legend(marks: set[str], refused: str, what: str) -> str:
    """The marks of the cells that are not results, in words ("" when `marks` has neither): for formats with a
    legend (rich)."""
    parts = [f"{refused} refused"] if refused in marks else []
    if ABSENT in marks:
        parts.append(f"{ABSENT}: {what} has no such type (or operand form)")
    return "   ".join(parts)


def column_records(c, refused: str) -> Records:
    """A `Column` as a listing: a row per operand, its result on each side (`shown`), and with two sides or more a
    `*` where they differ; json has the column's own data."""
    heads = list(c.versions) if len(c.frameworks) == 1 else side_heads(c)
    header = [one_line(f"{' '.join(heads)} {c.op}") if len(heads) == 1 else "a", *([] if len(heads) == 1 else heads)]
    if len(heads) == 1:
        header = [header[0], "result"]
    rows = []
    for a, row in zip(c.types, c.results):
        cells = [shown(r, refused, a in c.absent.get(f, ())) for f, r in zip(c.frameworks, row)]
        mark = ["*" if len(set(row)) > 1 else ""] if len(heads) > 1 else []
        rows.append([a, *cells, *mark])
    if len(heads) > 1:
        header.append("differs")
    return Records(f"{c.op}", header, rows, c.to_dict())
