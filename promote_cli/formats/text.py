"""Plain text: a query's result alone, aligned columns for matrices and listings."""

from __future__ import annotations

from promote_cli.formats import (
    REFUSED_TEXT,
    Format,
    Records,
    cell_lines,
    corner,
    counted,
    diff_rows,
    grid,
    matrix_rows,
    one_line,
    option_words,
    side_heads,
    slices,
    tally,
    word,
)


class Text(Format):
    name = "text"

    def answer(self, ans) -> str:
        return f"{ans.result}\n" if ans.result is not None else ""

    def batch_line(self, line) -> str:
        if line.error is not None:
            return f"error: {one_line(str(line.error))}"
        ans = line.answer
        return ans.result if ans.result is not None else f"error: {one_line(ans.refusal or '')}"

    def matrix(self, m) -> str:
        rows = [[a] + row for a, row in zip(m.types, matrix_rows(m, REFUSED_TEXT))]
        header = [corner(m)] + m.types
        if self.width is None:
            return grid(header, rows)
        # several vertical slices, each with the row labels, each fitting the width
        label = max(len(line[0]) for line in [header] + rows)
        widths = [max(len(line[i]) for line in [header] + rows) for i in range(1, len(header))]
        blocks = slices(label, widths, self.width, 2)
        return "\n".join(grid([header[0]] + [header[i + 1] for i in cols],
                               [[row[0]] + [row[i + 1] for i in cols] for row in rows]) for cols in blocks)

    def diff(self, d) -> str:
        if not d.differences:
            return ""
        return grid(["a", "b", *side_heads(d)], diff_rows(d, REFUSED_TEXT))

    def records(self, r: Records) -> str:
        lines = [line for sec in r.details
                 for line in ["", sec.title, *(f"  {x}" for x in sec.lines), *(f"  - {x}" for x in sec.bullets)]]
        return grid(r.header, r.rows) + "".join(f"{line}\n" for line in lines)

    def report(self, r, limit: int) -> str:
        lines = [m.line() for m in r.mismatches]
        out = lines[:limit]
        if len(lines) > limit:
            out.append(f"... and {len(lines) - limit} more")
        pairs = r.cases or not r.checks  # an expression recording holds checks only
        if pairs:
            agree = tally(r.cases - len(r.mismatches), r.cases, "case", "agree")
            out.append(f"{r.ruleset or r.framework} vs {r.source}: {agree}")
        for label, n, bad in r.checks:
            out += bad[:limit]
            if len(bad) > limit:
                out.append(f"... and {len(bad) - limit} more")
            head = label if pairs else f"{r.framework} vs {r.source}, {label}"
            out.append(f"{head}: {tally(n - len(bad), n, 'case', 'agree')}")
        return "".join(f"{one_line(line)}\n" for line in out)

    def validation(self, checks) -> str:
        out = []
        for check in checks:
            named = f" ({check.name}@{check.version})" if check.name and check.version else ""
            out += [p.line() for p in check.problems] if check.problems else [f"{check.file}: ok{named}"]
        return "".join(f"{one_line(line)}\n" for line in out)

    def cast_outcome(self, outcome, failed_on: list[str]) -> str:
        if outcome.error is not None:
            return ""  # the error is the command's one line on stderr
        r = outcome.report
        shape = "x".join(str(d) for d in r.shape) if r.shape else "scalar"
        how = r.mode if r.semantics == "tosa" else r.semantics
        return (f"{one_line(r.input)} -> {one_line(r.output)}: {r.src} -> {r.dst} ({how}), "
                f"{r.elements} elements ({shape})\n{_cast_counts(r.stats)}")

    def cast_summary(self, totals) -> str:
        return (f"total: {totals.files} files ({totals.files - totals.failed} cast, {totals.failed} failed), "
                f"{totals.elements} elements\n{_cast_counts(totals.stats)}")

    def tensor_report(self, r) -> str:
        shape = "x".join(str(d) for d in r.shape) if r.shape else "scalar"
        if not r.cast:
            return f"{one_line(r.name)} ({shape}): {r.src}, kept\n"
        return (f"{one_line(r.name)} ({shape}): {r.src} -> {r.dst}, {r.elements} elements\n"
                f"{_cast_counts(r.stats)[:-1]}{_max_errors(r)}\n")

    def checkpoint_summary(self, t) -> str:
        files = f"{t.files} files, " if t.files > 1 else ""
        tensors = f"{t.tensors} tensor{'s' if t.tensors != 1 else ''}"
        return (f"total: {one_line(t.input)} -> {one_line(t.output)}: {files}{tensors} ({t.cast} cast, "
                f"{t.tensors - t.cast} kept), {t.elements} elements cast\n{_cast_counts(t.stats)[:-1]}"
                f"{_max_errors(t)}\n")

    def rescale_report(self, r) -> str:
        s = r.stats
        shape = "x".join(str(d) for d in r.shape) if r.shape else "scalar"
        how = ["scale32" if r.scale32 else "scale16", r.rounding_name]
        if r.per_channel:
            how.append(f"per-channel x{len(r.multiplier)}")
        return (f"{one_line(r.input)} -> {one_line(r.output)}: {r.src} -> {r.dst} ({', '.join(how)}), "
                f"{r.elements} elements ({shape}): {s['saturated']} saturated "
                f"({s['saturated_low']} low, {s['saturated_high']} high)\n")

    def explanation(self, x) -> str:
        return "".join(f"{one_line(line)}\n" for line in explanation_lines(x))

    def expression(self, result, explain: bool) -> str:
        if explain:
            return "".join(f"{one_line(line)}\n" for line in expression_lines(result))
        return f"{result.result}\n" if result.result is not None else ""

    def check(self, x) -> str:
        return "".join(f"{one_line(line)}\n" for line in check_lines(x))

    def expectations(self, report) -> str:
        out = [f"{report.source}:{e.line}: {e.text}: got {_outcome(e.got)} from {e.ruleset}"
               + (f" ({e.reason})" if e.got is None and e.reason else "") for e in report.mismatches]
        bad, n = len(report.mismatches), len(report.checked)
        out.append(f"{report.source}: {tally(n - bad, n, 'expectation', 'hold')}")
        return "".join(f"{one_line(line)}\n" for line in out)

    def order(self, o) -> str:
        """Each node and the nodes that cover it (`u8 -> i16, u16`), or the cells that are not joins."""
        if not o.is_lattice:
            return "".join(f"{one_line(line)}\n" for line in cell_lines(o))
        above: dict = {n: [] for n in o.nodes}
        for lower, upper in o.edges:
            above[lower].append(upper)
        return "".join(f"{n} -> {', '.join(above[n])}\n" if above[n] else f"{n}\n" for n in o.nodes)


def expression_lines(r) -> list[str]:
    """`promote expr --explain`: the answer, then every node (operands before their operator) with its
    result, a weak/ambiguous mark and the rule that decided."""
    out = [f"{r.framework}@{r.version}: {r.expression} -> {_outcome(r.result)}"]
    rows = [[step.source, step.operand or ("refused" if step.error else "-"), "weak" if step.weak else "",
             step.rule + (f": {step.error}" if step.error else "")] for step in r.steps()]
    out += ["  " + line for line in grid(["node", "result", "weak", "decided by"], rows).splitlines()]
    return out


def _outcome(result: str | None) -> str:
    return result if result is not None else "refused"


def _clause(c: dict) -> str:
    if c["section"] == "opgroups":
        return f"[opgroups.{c['name']}] {c['rule']} ({c['doc']}; source: {c['source']})"
    parts = [f"[[{c['section']}]] {c['name']!r}"]
    if "ops" in c:
        parts.append(f"ops {', '.join(c['ops'])}")
    if "if" in c:
        parts.append(f"if {c['if']}")
    if "result" in c:
        parts.append(f"result = {c['result']}")
    return "; ".join(parts)


def explanation_lines(x) -> list[str]:
    """`promote explain` as lines: the answer, the deciding clause, each lookup, the options' alternatives."""
    head = f"{x.framework}@{x.version}: {x.a} {x.op} {x.b} -> {_outcome(x.result)}"
    if x.operands is not None:  # an op group's op: op(operands)
        head = f"{x.framework}@{x.version}: {x.op}({', '.join(x.operands)}) -> {_outcome(x.result)}"
    out = [head + (f" (op group {x.op_group})" if x.op_group != x.op else "")]
    out += [f"  operand: {line}" for line in x.operand_policy]
    if any(not n[0].isalnum() or ":" in n for n in x.normalised):
        out.append(f"  operands as the rules see them: {', '.join(x.normalised)} (rules for 0d:, py: and weak: "
                   "operands apply)")
    if x.rule is None:
        out.append("  rule: none of the [[rules]] decides")
    elif x.rule["section"] == "types":
        out.append("  rule: the ruleset's types (an operand is not one of them)")
    else:
        out.append(f"  rule: {_clause(x.rule)}")
        if x.rule_result is not None and (x.rule_result != x.result):
            out.append(f"  the rule gives {x.rule_result}")
    for step in x.steps:
        if step.kind == "table":
            out.append(f"  table {step.name!r}: row {step.row}, column {step.column} -> {_outcome(step.value)}")
        elif step.kind == "lattice":
            out.append(f"  lattice {step.name!r}: join of {step.row} and {step.column} -> {_outcome(step.value)}")
            out += [f"    {' -> '.join(path)}" for path in step.path if len(path) > 1]
        else:
            out.append(f"  [[after]] {step.name!r}: {step.row} -> {step.value}")
    if x.refused_by is not None:
        out.append(f"  refused by {_clause(x.refused_by)}")
    if x.refusal is not None:
        out.append(f"  refusal: {x.refusal}")
    elif x.reason:
        out.append(f"  reason: {x.reason}")
    if x.options:
        out.append("  options: " + option_words(x.options))
    by_option: dict = {}
    for alt in x.alternatives:
        by_option.setdefault(alt.option, []).append(alt)
    if by_option:
        out.append("  with other option values:")
    for name, alts in by_option.items():
        groups: dict = {}
        for alt in alts:
            groups.setdefault(alt.result, []).append(word(alt.value))
        for result, values in groups.items():
            same = " (as now)" if result == x.result else ""
            out.append(f"    {name}={'|'.join(values)} -> {_outcome(result)}{same}")
    return out


#: what a counterexample of each property is, in a check's summary line
_CASES = {"commutative": ("pair", "depend on the operands' order", "in one order only"),
          "associative": ("triple", "group differently: (a op b) op c is not a op (b op c)", "in one grouping only"),
          "lossless": ("result", "cannot hold every value of both operands exactly", ""),
          "consistent": ("pair", "answer differently", "by one op only")}


def check_lines(x) -> list[str]:
    """`promote check` as lines: what was checked, each property's verdict with counterexamples, the claims."""
    opts = option_words(x.options) or "none"
    forms = "tensors" if x.forms == ["tensor"] else ", ".join(x.forms)
    out = [f"{x.framework}@{x.version}: {counted(len(x.operands), 'operand')} ({forms}); ops {', '.join(x.ops)}; "
           f"options {opts}"]
    out += [f"  {form}: not checked: {why}" for form, why in x.skipped_forms.items()]
    for f in x.findings:
        head = f"{f.op} vs {f.other}" if f.other else f.op
        unit, what, refused = _CASES[f.property]
        if f.note:
            out.append(f"{head}: {f.property}: not judged: {f.note}")
            continue
        if f.holds:
            out.append(f"{head}: {f.property}: yes ({counted(f.checked, unit)})")
            continue
        split = ""
        if f.kinds:
            split = (f" ({f.kinds.get('different_results', 0)} with different results, "
                     f"{f.kinds.get('one_refused', 0)} refused {refused})")
        out.append(f"{head}: {f.property}: no: {tally(f.count, f.checked, unit, what)}{split}")
        out += [f"  {_example(f, e)}" for e in f.examples]
        if f.examples and f.count > len(f.examples):
            out.append(f"  ... and {f.count - len(f.examples)} more")
    if not x.claims_checked:
        out.append("claims: not judged (a rule file's claims are about every op, with the default options, "
                   "on tensors)")
    elif not x.claims:
        out.append("claims: none")
    for c in x.claims:
        verdict = "holds" if c.holds else "does not hold"
        out.append(f"claim {c.property} = {str(c.claimed).lower()}: {verdict} "
                   f"({counted(c.counterexamples, 'counterexample')})")
    return out


def _example(f, e: dict) -> str:
    o = f.op
    if f.property == "commutative":
        return f"{e['a']} {o} {e['b']} -> {_outcome(e['ab'])}, {e['b']} {o} {e['a']} -> {_outcome(e['ba'])}"
    if f.property == "associative":
        return (f"({e['a']} {o} {e['b']} -> {_outcome(e['ab'])}) {o} {e['c']} -> {_outcome(e['left'])}, "
                f"{e['a']} {o} ({e['b']} {o} {e['c']} -> {_outcome(e['bc'])}) -> {_outcome(e['right'])}")
    if f.property == "lossless":
        return f"{e['a']} {o} {e['b']} -> {e['result']}: {e['why']}"
    return f"{e['a']}, {e['b']}: {o} -> {_outcome(e[o])}, {f.other} -> {_outcome(e[f.other])}"


#: the counters a cast report's text names, in its order, with their words: each one that is not 0 (`exact`
#: always), then any other counter
CAST_COUNTS = {"exact": "exact", "rounded": "rounded", "overflow_inf": "overflowed to inf",
               "overflow_nan": "overflowed to NaN", "saturated": "saturated", "wrapped": "wrapped",
               "nan_in": "NaN in", "subnormal_out": "subnormal out", "unpredictable": "unpredictable",
               "underflow_zero": "underflowed to 0"}


def _cast_counts(stats: dict) -> str:
    """The counts line of a cast report or a run's total: `  3 exact, 2106 rounded, 1 NaN in`."""
    named = [(stats.get(k, 0), word) for k, word in CAST_COUNTS.items()]
    named += [(v, k) for k, v in stats.items() if k not in CAST_COUNTS]
    return "  " + ", ".join(f"{v} {word}" for v, word in named if v or word == "exact") + "\n"

def _max_errors(r) -> str:
    """`; max error 7.95 abs, 0.0038 rel` of a checkpoint's cast (finite outputs of finite inputs)."""
    return f"; max error {r.max_abs_error:.3g} abs, {r.max_rel_error:.3g} rel"


FORMAT = Text
