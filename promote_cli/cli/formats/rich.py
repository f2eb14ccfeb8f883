"""Rich: coloured, boxed tables for a terminal (colour only when the format was made with `color=True`)."""

from __future__ import annotations

import io

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table

from promote_cli.cli.formats import (
    REFUSED_MARKDOWN,
    Format,
    Records,
    diff_head,
    diff_summary,
    one_line,
    shown,
    side_heads,
    slices,
)

_STYLE = {"bool": "bright_black", "signed": "cyan", "unsigned": "blue", "float": "green", "complex": "magenta"}


def _style(result: str | None) -> str:
    if result is None:
        return "red"
    from promote_cli.vocab.operands import parse

    op = parse(result)
    style = _STYLE.get(op.kind, "")
    return f"{style} italic" if op.form == "weak" else style


def _cell(result: str | None) -> str:
    return f"[{_style(result)}]{result if result is not None else REFUSED_MARKDOWN}[/]"


class Rich(Format):
    name = "rich"
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
        results = m.results()
        title = escape(one_line(f"{m.framework}@{m.version} {m.op}"))
        width = self._console().width
        label = max(len(x) for x in ["a \\ b", *m.types])
        cols = [max(len(m.types[j]), *(len(shown(row[j], REFUSED_MARKDOWN)) for row in results))
                for j in range(len(m.types))]
        # SIMPLE_HEAVY: an edge space at each end, a space between columns, one of padding each side of a cell
        blocks = slices(label + 4, cols, width, 3)
        tables = []
        for n, block in enumerate(blocks):
            part = f" ({m.types[block[0]]}..{m.types[block[-1]]})" if len(blocks) > 1 else ""
            t = Table(title=title + escape(part), box=box.SIMPLE_HEAVY, show_lines=False)
            t.add_column("a \\ b", style="bold", no_wrap=True, min_width=label)
            for j in block:
                t.add_column(m.types[j], justify="center", no_wrap=True, min_width=cols[j])
            for a, row in zip(m.types, results):
                t.add_row(a, *[_cell(row[j]) for j in block])
            tables.append(t)
        return self._render(*tables)

    def diff(self, d) -> str:
        """The differing cells, then the one-line summary (one line: the terminal wraps it, not Rich)."""
        summary = diff_summary(d) + "\n"
        if not d.differences:
            return summary
        t = Table(title=escape(diff_head(d)), box=box.SIMPLE_HEAVY)
        for col in ("a", "b", *side_heads(d)):
            t.add_column(escape(col))
        for x in d.differences:
            t.add_row(x["a"], x["b"], *[_cell(x[f]) for f in d.frameworks])
        return self._render(t) + summary

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
