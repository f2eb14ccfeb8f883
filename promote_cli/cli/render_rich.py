"""Terminal rendering with Rich: coloured matrices and listings. Loaded only for `--format rich`."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table

from promote_cli.oracle.matrix import Diff, Matrix

_STYLE = {"bool": "bright_black", "signed": "cyan", "unsigned": "blue", "float": "green", "complex": "magenta"}


def _console(colored: bool) -> Console:
    return Console(no_color=not colored, force_terminal=colored or None, highlight=False)


def _style(result: str | None) -> str:
    if result is None:
        return "red"
    from promote_cli.vocab.operands import parse

    op = parse(result)
    style = _STYLE.get(op.kind, "")
    return f"{style} italic" if op.form == "weak" else style


def print_matrix(m: Matrix, colored: bool) -> None:
    t = Table(title=f"{m.framework}@{m.version} {m.op}", box=box.SIMPLE_HEAVY, show_lines=False)
    t.add_column("a \\ b", style="bold")
    for name in m.types:
        t.add_column(name, justify="center")
    for a, row in zip(m.types, m.results()):
        t.add_row(a, *[f"[{_style(r)}]{r if r is not None else '×'}[/]" for r in row])
    _console(colored).print(t)


def print_diff(d: Diff, colored: bool) -> None:
    f1, f2 = d.frameworks
    if not d.differences:
        _console(colored).print(f"{f1} and {f2} agree on every cell ({len(d.types)}×{len(d.types)}, {d.op})")
        return
    t = Table(title=f"{f1} vs {f2} ({d.op}): {len(d.differences)} differences", box=box.SIMPLE_HEAVY)
    for col in ("a", "b", f1, f2):
        t.add_column(col)
    for x in d.differences:
        t.add_row(x["a"], x["b"], *[f"[{_style(x[f])}]{x[f] if x[f] is not None else '×'}[/]" for f in (f1, f2)])
    _console(colored).print(t)


def print_records(title: str, header: list[str], records: list[list[str]], colored: bool) -> None:
    t = Table(title=title, box=box.SIMPLE_HEAVY)
    for col in header:
        t.add_column(col)
    for rec in records:
        t.add_row(*rec)
    _console(colored).print(t)
