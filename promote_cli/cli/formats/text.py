"""Plain text: a query's result alone, aligned columns for matrices and listings."""

from __future__ import annotations

from promote_cli.cli.formats import REFUSED_TEXT, Format, Records, corner, grid, one_line, shown


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
        return grid([corner(m)] + m.types, rows)

    def diff(self, d) -> str:
        if not d.differences:
            return ""
        rows = [[x["a"], x["b"], *(shown(x[f], REFUSED_TEXT) for f in d.frameworks)] for x in d.differences]
        return grid(["a", "b", *d.frameworks], rows)

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


FORMAT = Text
