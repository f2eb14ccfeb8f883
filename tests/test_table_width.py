"""Matrices fit a terminal: every shipped ruleset at 80 and 120 columns, in vertical slices, no cell cut."""

from __future__ import annotations

import pytest

import promote_cli
from promote_cli import formats
from support import run_cli

WIDTHS = (80, 120)


def _cells(text: str, header_start: str, corner_tokens: int, refused: str) -> dict:
    """(row, column) -> cell, read back from slices whose header lines start with `header_start`."""
    cells: dict = {}
    cols = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(header_start):
            cols = stripped.split()[corner_tokens:]
            continue
        tokens = stripped.split()
        if cols is None or not tokens or set(stripped) <= {"━"}:
            continue
        if len(tokens) != len(cols) + 1 or tokens[0] == refused:
            continue  # a title line, or the legend under the table ("× refused")
        for b, cell in zip(cols, tokens[1:]):
            key = (tokens[0], b)
            assert key not in cells, f"cell {key} printed twice"
            cells[key] = None if cell == refused else cell
    return cells


def _expected(m) -> dict:
    return {(a, b): r for a, row in zip(m.types, m.results()) for b, r in zip(m.types, row)}


@pytest.mark.parametrize("framework", promote_cli.framework_names())
@pytest.mark.parametrize("width", WIDTHS)
def test_every_ruleset_fits_with_no_cell_cut(framework, width):
    m = promote_cli.table(framework)
    for name, start, tokens, refused in (("rich", "a \\ b", 3, formats.REFUSED_MARKDOWN),
                                          ("text", formats.corner(m), len(formats.corner(m).split()),
                                           formats.REFUSED_TEXT)):
        out = formats.get(name, width=width).matrix(m)
        assert max(len(line.rstrip()) for line in out.splitlines()) <= width, (name, framework)
        assert "…" not in out
        assert _cells(out, start, tokens, refused) == _expected(m), (name, framework)


def test_a_wide_matrix_is_sliced_and_a_narrow_one_is_not():
    wide = formats.get("text", width=80).matrix(promote_cli.table("numpy"))
    corner = formats.corner(promote_cli.table("numpy"))
    assert sum(line.startswith(corner) for line in wide.splitlines()) >= 3
    narrow = formats.get("text", width=120).matrix(promote_cli.table("tosa"))
    assert narrow == formats.get("text").matrix(promote_cli.table("tosa"))


def test_piped_text_keeps_one_grid_unless_a_width_is_asked_for():
    code, out, _ = run_cli("table", "-f", "numpy")
    assert code == 0 and len(out.splitlines()) == 1 + len(promote_cli.table("numpy").types)
    code, sliced, _ = run_cli("table", "-f", "numpy", "--width", "80")
    assert code == 0 and max(len(line) for line in sliced.splitlines()) <= 80
    assert len(sliced.splitlines()) > len(out.splitlines())


def test_rich_takes_the_width_it_is_given():
    code, out, _ = run_cli("table", "-f", "openvino", "--format", "rich", "--color", "never", "--width", "100")
    assert code == 0 and max(len(line.rstrip()) for line in out.splitlines()) <= 100 and "…" not in out
