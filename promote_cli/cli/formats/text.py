"""Plain text: a query's result alone, aligned columns for matrices and listings."""

from __future__ import annotations

from promote_cli.cli.formats import (
    REFUSED_TEXT,
    Format,
    Records,
    corner,
    grid,
    one_line,
    shown,
    side_heads,
    slices,
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
        rows = [[a] + [shown(r, REFUSED_TEXT) for r in row] for a, row in zip(m.types, m.results())]
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
        rows = [[x["a"], x["b"], *(shown(x[f], REFUSED_TEXT) for f in d.frameworks)] for x in d.differences]
        return grid(["a", "b", *side_heads(d)], rows)

    def records(self, r: Records) -> str:
        text = grid(r.header, r.rows)
        return text + "".join(f"{line}\n" for line in r.details)

    def report(self, r, limit: int) -> str:
        lines = [m.line() for m in r.mismatches]
        out = lines[:limit]
        if len(lines) > limit:
            out.append(f"... and {len(lines) - limit} more")
        out.append(f"{r.framework} vs {r.source}: {r.cases - len(r.mismatches)} of {r.cases} cases agree")
        for label, n, bad in r.checks:
            out += bad[:limit]
            if len(bad) > limit:
                out.append(f"... and {len(bad) - limit} more")
            out.append(f"{label}: {n - len(bad)} of {n} cases agree")
        return "".join(f"{one_line(line)}\n" for line in out)

    def validation(self, checks) -> str:
        out = []
        for check in checks:
            out += [p.line() for p in check.problems] if check.problems else [f"{check.file}: ok"]
        return "".join(f"{one_line(line)}\n" for line in out)

    def cast_outcome(self, outcome, failed_on: list[str]) -> str:
        if outcome.error is not None:
            return ""  # the error is the command's one line on stderr
        r, s = outcome.report, outcome.report.stats
        shape = "x".join(str(d) for d in r.shape) if r.shape else "scalar"
        overflow = sum(s.get(k, 0) for k in ("overflow_inf", "overflow_nan", "saturated", "wrapped"))
        line = (f"{one_line(r.input)} -> {one_line(r.output)}: {r.src} -> {r.dst} ({r.mode}), "
                f"{r.elements} elements ({shape}): {s.get('exact', 0)} exact, {s.get('rounded', 0)} rounded, "
                f"{overflow} overflowed ({s.get('overflow_inf', 0)} to inf, {s.get('overflow_nan', 0)} to NaN, "
                f"{s.get('saturated', 0)} saturated, {s.get('wrapped', 0)} wrapped), "
                f"{s.get('nan_in', 0)} NaN in, {s.get('subnormal_out', 0)} subnormal out, "
                f"{s.get('unpredictable', 0)} unpredictable")
        extra = [f"{k} {v}" for k, v in s.items() if k not in CAST_COUNTS]
        return line + (" (" + ", ".join(extra) + ")" if extra else "") + "\n"

    def rescale_report(self, r) -> str:
        s = r.stats
        shape = "x".join(str(d) for d in r.shape) if r.shape else "scalar"
        how = ["scale32" if r.scale32 else "scale16", r.rounding_name]
        if r.per_channel:
            how.append(f"per-channel x{len(r.multiplier)}")
        return (f"{one_line(r.input)} -> {one_line(r.output)}: {r.src} -> {r.dst} ({', '.join(how)}), "
                f"{r.elements} elements ({shape}): {s['saturated']} saturated "
                f"({s['saturated_low']} low, {s['saturated_high']} high)\n")


#: the counters a cast report's text line names, in its order
CAST_COUNTS = ("exact", "rounded", "overflow_inf", "overflow_nan", "saturated", "wrapped", "nan_in",
               "subnormal_out", "unpredictable")

FORMAT = Text
