"""Rich: coloured, boxed tables for a terminal (colour only when the format was made with `color=True`)."""

from __future__ import annotations

import io

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from promote_cli.cli.formats import REFUSED_MARKDOWN, Format, Records, one_line

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

    def _render(self, thing) -> str:
        console = Console(file=io.StringIO(), no_color=not self.color, force_terminal=self.color or None,
                          highlight=False)
        console.print(thing)
        return console.file.getvalue()

    def matrix(self, m) -> str:
        t = Table(title=escape(one_line(f"{m.framework}@{m.version} {m.op}")), box=box.SIMPLE_HEAVY, show_lines=False)
        t.add_column("a \\ b", style="bold")
        for name in m.types:
            t.add_column(name, justify="center")
        for a, row in zip(m.types, m.results()):
            t.add_row(a, *[_cell(r) for r in row])
        return self._render(t)

    def diff(self, d) -> str:
        if not d.differences:
            names = " and ".join(d.frameworks)
            return self._render(escape(f"{names} agree on every cell ({len(d.types)}×{len(d.types)}, {d.op})"))
        t = Table(title=escape(f"{' vs '.join(d.frameworks)} ({d.op}): {len(d.differences)} differences"),
                  box=box.SIMPLE_HEAVY)
        for col in ("a", "b", *d.frameworks):
            t.add_column(escape(col))
        for x in d.differences:
            t.add_row(x["a"], x["b"], *[_cell(x[f]) for f in d.frameworks])
        return self._render(t)

    def records(self, r: Records) -> str:
        t = Table(title=escape(r.title), box=box.SIMPLE_HEAVY)
        for col in r.header:
            t.add_column(col)
        for rec in r.rows:
            t.add_row(*[escape(c) for c in rec])
        return self._render(t)


FORMAT = Rich
