"""Markdown: pipe tables (a refusal is ×, an operand the framework lacks n/a, row labels in bold)."""

from __future__ import annotations

from promote_cli.formats import REFUSED_MARKDOWN, Format, Records, corner, diff_rows, matrix_rows, side_heads


def _esc(cell: str) -> str:
    return cell.replace("|", "\\|")


def _code(text: str) -> str:
    """Text for a code span (a backtick inside would end it)."""
    return text.replace("`", "'")


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(_esc(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


class Markdown(Format):

    heading = "### {title}\n\n"
    name = "markdown"
    refused_mark = REFUSED_MARKDOWN

    def matrix(self, m) -> str:
        rows = [[f"**{a}**"] + row for a, row in zip(m.types, matrix_rows(m, REFUSED_MARKDOWN))]
        return _table([corner(m)] + m.types, rows)

    def diff(self, d) -> str:
        return _table(["a", "b", *side_heads(d)], diff_rows(d, REFUSED_MARKDOWN))

    def records(self, r: Records) -> str:
        """The table, then each section of details: its title in bold and its lines and bullets as a list."""
        out = [_table(r.header, r.rows)]
        for sec in r.details:
            items = [f"- `{_code(x)}`" for x in sec.lines] + [f"- {x}" for x in sec.bullets]
            out.append(f"\n**{sec.title}**\n\n" + "".join(f"{item}\n" for item in items))
        return "".join(out)


FORMAT = Markdown
