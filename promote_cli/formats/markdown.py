"""Markdown: pipe tables (a refusal is ×, row labels in bold)."""

from __future__ import annotations

from promote_cli.formats import REFUSED_MARKDOWN, Format, Records, corner, shown, side_heads


def _esc(cell: str) -> str:
    return cell.replace("|", "\\|")


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(_esc(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


class Markdown(Format):
    name = "markdown"

    def matrix(self, m) -> str:
        rows = [[f"**{a}**"] + [shown(r, REFUSED_MARKDOWN) for r in row] for a, row in zip(m.types, m.results())]
        return _table([corner(m)] + m.types, rows)

    def diff(self, d) -> str:
        rows = [[x["a"], x["b"], *(shown(x[f], REFUSED_MARKDOWN) for f in d.frameworks)] for x in d.differences]
        return _table(["a", "b", *side_heads(d)], rows)

    def records(self, r: Records) -> str:
        return _table(r.header, r.rows)


FORMAT = Markdown
