"""HTML: a matrix or a diff as one standalone page (inline CSS; no scripts, fonts or links outside it).

The page is well-formed XML as well as HTML, a `<table>` whose header row and first column stay
in view while scrolling. Every cell is a `<td class="cell k-KIND">` with a `title` tooltip (KIND a
dtype kind of the vocabulary, `refused`: hatched, with `×`, or `absent`: an operand the framework lacks,
with a grey `n/a`); column heads are set vertically and
carry the type's full name. In a diff, a differing cell (`class="cell differ"`) is outlined and holds
one line per side, each coloured by its result's kind; cells on which every side agrees are blank
(`class="cell same"`). A legend and a title (rulesets as NAME@VERSION, the op, the options) come with it.
"""

from __future__ import annotations

from promote_cli.formats import Format, side_heads
from promote_cli.formats.kinds import (
    ABSENT,
    ABSENT_INK,
    DIFF_INK,
    NO_RESULT,
    FILL,
    FONT,
    LEGEND,
    REFUSED,
    REFUSED_GLYPH,
    REFUSED_INK,
    SAME_FILL,
    answer_words,
    cell_pairs,
    cells_by_pair,
    diff_title,
    esc,
    is_weak,
    kind_of,
    kinds,
    marks_words,
    matrix_title,
    shown,
    type_doc,
)


def _css() -> str:
    colours = "\n".join(f".k-{k} {{ background: {FILL[k]}; }}" for k in kinds() if k not in NO_RESULT)
    return f"""
body {{ font-family: {FONT}; font-size: 13px; color: #111; background: #fff; margin: 16px; }}
h1 {{ font-size: 17px; margin: 0 0 4px 0; }}
p.sub {{ color: #444; margin: 0 0 12px 0; }}
table.matrix {{ border-collapse: separate; border-spacing: 1px; }}
table.matrix th, table.matrix td {{ padding: 2px 5px; text-align: center; white-space: nowrap; }}
thead th {{ position: sticky; top: 0; background: #fff; vertical-align: bottom; z-index: 1; }}
thead th.col span {{ writing-mode: vertical-rl; transform: rotate(180deg); display: inline-block; }}
tbody th {{ position: sticky; left: 0; background: #fff; text-align: right; z-index: 1; }}
thead th.corner {{ left: 0; z-index: 2; text-align: left; color: #444; font-weight: normal; }}
{colours}
.k-{REFUSED} {{ color: {REFUSED_INK}; font-weight: bold;
  background: repeating-linear-gradient(45deg, #fff 0 3px, rgba(178, 24, 43, 0.25) 3px 5px); }}
.k-{ABSENT} {{ color: {ABSENT_INK}; background: {FILL[ABSENT]}; }}
.weak {{ font-style: italic; }}
td.same {{ background: {SAME_FILL}; }}
td.differ {{ outline: 2px solid {DIFF_INK}; outline-offset: -2px; padding: 2px; }}
td.differ span {{ display: block; padding: 0 3px; }}
ul.legend {{ list-style: none; padding: 0; margin: 14px 0 0 0; }}
ul.legend li {{ display: inline-block; margin-right: 18px; }}
ul.legend i {{ display: inline-block; width: 14px; height: 14px; vertical-align: middle; margin-right: 5px;
  border: 1px solid #888; font-style: normal; font-size: 11px; line-height: 14px; text-align: center; }}
ul.legend i.k-{ABSENT} {{ width: auto; padding: 0 2px; }}
ul.legend i.differ {{ border: 2px solid {DIFF_INK}; width: 12px; height: 12px; background: #fff; }}
ul.legend i.same {{ background: {SAME_FILL}; }}
"""


def page(title: str, subtitle: str, table: list[str], legend: list[str]) -> str:
    return "\n".join([
        "<!DOCTYPE html>",
        '<html xmlns="http://www.w3.org/1999/xhtml" lang="en">',
        '<head><meta charset="utf-8"/>',
        '<meta name="viewport" content="width=device-width, initial-scale=1"/>',
        f"<title>{esc(title)}</title>",
        f"<style>{_css()}</style></head>",
        "<body>",
        f"<h1>{esc(title)}</h1>",
        f'<p class="sub">{esc(subtitle)}</p>',
        *table,
        '<ul class="legend">', *legend, "</ul>",
        "</body></html>"]) + "\n"


def head_row(types: list[str]) -> list[str]:
    cells = "".join(f'<th class="col" title="{esc(type_doc(t))}"><span>{esc(t)}</span></th>' for t in types)
    return ['<table class="matrix">', f'<thead><tr><th class="corner">a \\ b</th>{cells}</tr></thead>', "<tbody>"]


def row_head(a: str) -> str:
    return f'<th class="row" title="{esc(type_doc(a))}">{esc(a)}</th>'


def legend_items(cells) -> list[str]:
    """The legend of the kinds among `cells` ((result, lacking) pairs), and of italics where a result is weak."""
    present = {kind_of(r, gone) for r, gone in cells}
    marks = {REFUSED: REFUSED_GLYPH, ABSENT: shown(None, True)}
    items = [f'<li><i class="k-{k}">{marks.get(k, "")}</i>{esc(LEGEND[k])}</li>' for k in kinds() if k in present]
    if any(is_weak(r) for r, _ in cells):
        items.append('<li class="weak">italic: weak</li>')
    return items


def _weak(result) -> str:
    return " weak" if is_weak(result) else ""


class Html(Format):
    name = "html"

    def matrix(self, m) -> str:
        results = cell_pairs(m)
        rows = head_row(m.types)
        for a, row in zip(m.types, results):
            cells = []
            for b, (r, gone) in zip(m.types, row):
                tip = f"{a} {m.op} {b} → {answer_words(r, gone)}"
                cells.append(f'<td class="cell k-{kind_of(r, gone)}{_weak(r)}" title="{esc(tip)}">'
                             f'{esc(shown(r, gone))}</td>')
            rows.append(f"<tr>{row_head(a)}{''.join(cells)}</tr>")
        rows.append("</tbody></table>")
        sub = f"rows: left operand a · columns: right operand b · {marks_words(m)}"
        return page(matrix_title(m), sub, rows, legend_items([c for row in results for c in row]))

    def diff(self, d) -> str:
        cells = cells_by_pair(d)
        heads = side_heads(d)
        rows = head_row(d.types)
        for a in d.types:
            out = []
            for b in d.types:
                results = cells.get((a, b))
                if results is None:
                    out.append(f'<td class="cell same" title="{esc(a)} {esc(d.op)} {esc(b)}: the same on every side">'
                               "</td>")
                    continue
                tip = f"{a} {d.op} {b}: " + ", ".join(
                    f"{h} → {answer_words(r, gone)}" for h, (r, gone) in zip(heads, results))
                sides = "".join(f'<span class="side k-{kind_of(r, gone)}{_weak(r)}" title="{esc(h)}">'
                                f'{esc(shown(r, gone))}</span>' for h, (r, gone) in zip(heads, results))
                out.append(f'<td class="cell differ" title="{esc(tip)}">{sides}</td>')
            rows.append(f"<tr>{row_head(a)}{''.join(out)}</tr>")
        rows.append("</tbody></table>")
        order = " · ".join(f"line {i + 1}: {h}" for i, h in enumerate(heads))
        legend = legend_items([c for rs in cells.values() for c in rs])
        legend.append(f'<li><i class="differ"></i>differs: {esc(" / ".join(heads))}</li>')
        legend.append('<li><i class="same"></i>same on every side</li>')
        return page(diff_title(d), f"differing cells outlined, one line per side ({order})", rows, legend)


FORMAT = Html
