"""Rich: coloured, boxed tables for a terminal (colour only when the format was made with `color=True`)."""

from __future__ import annotations

import io

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table

from promote_cli.formats import (
    ABSENT,
    REFUSED_MARKDOWN,
    Format,
    Records,
    diff_head,
    diff_rows,
    diff_summary,
    legend,
    matrix_rows,
    one_line,
    side_heads,
    slices,
)

_STYLE = {"bool": "bright_black", "signed": "cyan", "unsigned": "blue", "float": "green", "complex": "magenta"}


def _style(text: str) -> str:
    if text == REFUSED_MARKDOWN:
        return "red"
    if text == ABSENT:
        return "dim"
    from promote_cli.vocab.operands import parse

    op = parse(text)
    style = _STYLE.get(op.kind, "")
    return f"{style} italic" if op.form == "weak" else style


def _cell(text: str) -> str:
    """A cell's text (a result, × refused, n/a absent) in its style."""
    return f"[{_style(text)}]{text}[/]"


def _legend(rows, what: str) -> list[str]:
    """The legend line for the cells that are not results, if any."""
    text = legend({c for row in rows for c in row}, REFUSED_MARKDOWN, what)
    return [escape(text)] if text else []


class Rich(Format):

    heading = ""
    name = "rich"
    refused_mark = REFUSED_MARKDOWN
    summarises = True

    def _console(self) -> Console:
        return Console(file=io.StringIO(), no_color=not self.color, force_terminal=self.color or None,
                       highlight=False, width=self.width)

    def _render(self, *things) -> str:
        console = self._console()
        for thing in things:
            console.print(thing)
        return console.file.getvalue()

    def matrix(self, m) -> str:
        """The matrix in as many vertical slices as the width needs, each with the row labels; no cell is cut."""
        texts = matrix_rows(m, REFUSED_MARKDOWN)
        key = f"{m.framework}@{m.version}"
        title = escape(one_line(f"{key} {m.op}"))
        width = self._console().width
        label = max(len(x) for x in ["a \\ b", *m.types])
        cols = [max(len(m.types[j]), *(len(row[j]) for row in texts)) for j in range(len(m.types))]
        # SIMPLE_HEAVY: an edge space at each end, a space between columns, one of padding each side of a cell
        blocks = slices(label + 4, cols, width, 3)
        tables = []
        for n, block in enumerate(blocks):
            part = f" ({m.types[block[0]]}..{m.types[block[-1]]})" if len(blocks) > 1 else ""
            t = Table(title=title + escape(part), box=box.SIMPLE_HEAVY, show_lines=False)
            t.add_column("a \\ b", style="bold", no_wrap=True, min_width=label)
            for j in block:
                t.add_column(m.types[j], justify="center", no_wrap=True, min_width=cols[j])
            for a, row in zip(m.types, texts):
                t.add_row(a, *[_cell(row[j]) for j in block])
            tables.append(t)
        return self._render(*tables, *_legend(texts, one_line(key)))

    def diff(self, d) -> str:
        """The differing cells, then the one-line summary (one line: the terminal wraps it, not Rich)."""
        summary = diff_summary(d) + "\n"
        if not d.differences:
            return summary
        t = Table(title=escape(diff_head(d)), box=box.SIMPLE_HEAVY)
        for col in ("a", "b", *side_heads(d)):
            t.add_column(escape(col))
        rows = diff_rows(d, REFUSED_MARKDOWN)
        for row in rows:
            t.add_row(row[0], row[1], *[_cell(c) for c in row[2:]])
        return self._render(t, *_legend([row[2:] for row in rows], "a side")) + summary

    def records(self, r: Records) -> str:
        """A listing as a table where its cells fit the width whole; else one block per record (its first cell as
        a heading, then each other column as `header  value`, the values wrapped), so nothing is cut or squeezed
        into a column a word wide."""
        return self._render(*self._listing(r), *_details(r.details))

    def _listing(self, r: Records) -> list:
        width = self._console().width
        cols = [max(len(c) for c in [col] + [row[i] for row in r.rows]) for i, col in enumerate(r.header)]
        if sum(cols) + 3 * len(cols) + 1 <= width:
            t = Table(title=escape(r.title), box=box.SIMPLE_HEAVY)
            for col in r.header:
                t.add_column(escape(col), no_wrap=True)
            for rec in r.rows:
                t.add_row(*[escape(c) for c in rec])
            return [t]
        blocks = []
        for rec in r.rows:
            grid = Table.grid(padding=(0, 2))
            grid.add_column(style="dim", no_wrap=True)
            grid.add_column(overflow="fold", ratio=1)
            for col, cell in zip(r.header[1:], rec[1:]):
                if cell:
                    grid.add_row(escape(col), escape(cell))
            blocks += [f"[bold]{escape(rec[0])}[/]", Padding(grid, (0, 0, 1, 2))]
        return blocks


def _details(sections) -> list:
    """A listing's details: each section's title in bold, then its lines and bullets indented (wrapped, not cut)."""
    out = []
    for sec in sections:
        body = Table.grid(padding=(0, 1, 0, 0))
        body.add_column(no_wrap=True)  # the bullets' marks: a note's wrapped lines hang under its first word
        body.add_column(overflow="fold", ratio=1)
        for line in sec.lines:
            body.add_row("", escape(line))
        for note in sec.bullets:
            body.add_row("-", escape(note))
        out += ["", f"[bold]{escape(sec.title)}[/]", Padding(body, (0, 0, 0, 2))]
    return out


FORMAT = Rich
