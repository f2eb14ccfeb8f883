"""SVG: a matrix or a diff as a self-contained picture (no fonts, scripts or links outside the file).

Every cell is a `<g class="cell k-KIND">` (KIND a dtype kind of the vocabulary, `refused` or `absent`)
with a `<title>` tooltip, a filled `<rect>` and its result as `<text>`; a refused cell is hatched and
shows `×`, so it reads without colour, and a cell of an operand the framework lacks shows a grey `n/a`. In a diff, a differing cell (`class="cell differ"`) is
outlined and split into one band per side, each with that side's result; the cells on which every
side agrees are blank (`class="cell same"`). Column heads are turned 45 degrees and, like the row
labels, carry the type's full name as a tooltip. A legend and a title (rulesets as NAME@VERSION,
the op, the options) come with it.
"""

from __future__ import annotations

import math
import re

from promote_cli.formats import Format, side_heads
from promote_cli.formats.kinds import (
    ABSENT,
    ABSENT_INK,
    DIFF_INK,
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
    text_width,
    type_doc,
)

PAD = 16
SIZE = 12  # cell and label text
CELL_H = 22  # a matrix row
BAND_H = 17  # one side's band in a differing cell
MIN_W = 30
SLANT = math.radians(45)
LINE = SIZE + 2  # a second line of a cell's text
#: a long float name breaks after its exponent and mantissa (f8e4m3 | b11fnuz), a weak one after its form
BREAK = re.compile(r"^(f\d+e\d+m\d+|weak:|0d:)(.{3,})$")

STYLE = f"""
text {{ font-family: {FONT}; font-size: {SIZE}px; fill: #111; }}
.title {{ font-size: 16px; font-weight: bold; }}
.subtitle {{ fill: #444; }}
.head, .label {{ font-weight: bold; }}
.weak text, text.weak {{ font-style: italic; }}
.k-refused text {{ fill: {REFUSED_INK}; font-weight: bold; }}
.k-absent text {{ fill: {ABSENT_INK}; }}
rect.grid {{ stroke: #ffffff; stroke-width: 1; }}
rect.outline {{ fill: none; stroke: {DIFF_INK}; stroke-width: 2; }}
"""


def _defs() -> str:
    return (f'<defs><pattern id="refused" width="6" height="6" patternUnits="userSpaceOnUse" '
            f'patternTransform="rotate(45)"><rect width="6" height="6" fill="{FILL[REFUSED]}"/>'
            f'<line x1="0" y1="0" x2="0" y2="6" stroke="{REFUSED_INK}" stroke-opacity="0.35" stroke-width="2"/>'
            f'</pattern></defs>')


def fill_of(kind: str) -> str:
    return "url(#refused)" if kind == REFUSED else FILL[kind]


def lines_of(text: str) -> list[str]:
    """A cell's text as one line, or two for a long name (`f8e4m3b11fnuz`: `f8e4m3`, `b11fnuz`)."""
    m = BREAK.match(text) if len(text) > 7 else None
    return [m.group(1), m.group(2)] if m else [text]


def _box(x: float, y: float, w: float, h: float, kind: str, result: str | None) -> str:
    """A filled rectangle with its result (or mark) centred in it (on two lines when long)."""
    weak = ' class="weak"' if is_weak(result) else ""
    lines = lines_of(shown(result, kind == ABSENT))
    cx, base = x + w / 2, y + h / 2 + SIZE * 0.36 - (len(lines) - 1) * LINE / 2
    if len(lines) == 1:
        inner = esc(lines[0])
    else:
        inner = "".join(f'<tspan x="{cx:.1f}" y="{base + k * LINE:.1f}">{esc(t)}</tspan>' for k, t in enumerate(lines))
    return (f'<rect class="grid" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{fill_of(kind)}"/>'
            f'<text{weak} x="{cx:.1f}" y="{base:.1f}" text-anchor="middle">{inner}</text>')


class Picture:
    """The parts every picture has: title, axes with heads and labels, a grid of cells, a legend."""

    def __init__(self, title: str, subtitle: str, types: list[str], widths: list[float], row_h: float):
        self.title, self.subtitle, self.types, self.widths, self.row_h = title, subtitle, types, widths, row_h
        self.label_w = max(text_width(t, SIZE) for t in types) + 16
        longest = max(text_width(t, SIZE) for t in types)
        self.head_h = longest * math.sin(SLANT) + 14
        self.gx = PAD + self.label_w
        self.gy = PAD + 52 + self.head_h
        self.xs = [self.gx + sum(widths[:j]) for j in range(len(types))]
        self.grid_w = sum(widths)
        self.overflow = longest * math.cos(SLANT)

    def heads(self) -> list[str]:
        out = []
        for t, x, w in zip(self.types, self.xs, self.widths):
            cx, y = x + w / 2 - SIZE * 0.25, self.gy - 6
            out.append(f'<text class="head" transform="translate({cx:.1f},{y:.1f}) rotate(-45)">'
                       f'<title>{esc(type_doc(t))}</title>{esc(t)}</text>')
        for i, t in enumerate(self.types):
            y = self.gy + i * self.row_h + self.row_h / 2 + SIZE * 0.36
            out.append(f'<text class="label" x="{self.gx - 8:.1f}" y="{y:.1f}" text-anchor="end">'
                       f'<title>{esc(type_doc(t))}</title>{esc(t)}</text>')
        return out

    def legend(self, entries: list[tuple[str, str]], y: float, width: float) -> tuple[list[str], float]:
        """Swatches with their words, wrapped to `width`; (elements, height)."""
        out = ['<g class="legend">']
        x, row = PAD, 0
        for swatch, words in entries:
            w = 22 + text_width(words, SIZE) + 18
            if x + w > width - PAD and x > PAD:
                x, row = PAD, row + 1
            out.append(f'<g transform="translate({x:.1f},{y + row * 24:.1f})">{swatch}'
                       f'<text x="22" y="12">{esc(words)}</text></g>')
            x += w
        out.append("</g>")
        return out, (row + 1) * 24

    def document(self, body: list[str], legend: list[tuple[str, str]]) -> str:
        n = len(self.types)
        width = max(self.gx + self.grid_w + self.overflow, text_width(self.title, 16) + PAD, 640) + PAD
        ly = self.gy + n * self.row_h + 20
        items, lh = self.legend(legend, ly, width)
        height = ly + lh + PAD
        parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
                 f'viewBox="0 0 {width:.0f} {height:.0f}" role="img">',
                 f"<title>{esc(self.title)}</title>",
                 f"<style>{STYLE}</style>", _defs(),
                 f'<rect width="100%" height="100%" fill="#ffffff"/>',
                 f'<text class="title" x="{PAD}" y="{PAD + 16}">{esc(self.title)}</text>',
                 f'<text class="subtitle" x="{PAD}" y="{PAD + 36}">{esc(self.subtitle)}</text>',
                 f'<text class="subtitle" x="{PAD}" y="{self.gy - 6:.1f}">a \\ b</text>',
                 *self.heads(), *body, *items, "</svg>"]
        return "\n".join(parts) + "\n"


def swatch(kind: str) -> str:
    glyph = ""
    if kind == REFUSED:
        glyph = f'<text x="8" y="12" text-anchor="middle" fill="{REFUSED_INK}" font-weight="bold">{REFUSED_GLYPH}</text>'
    elif kind == ABSENT:
        glyph = f'<text x="8" y="11" text-anchor="middle" fill="{ABSENT_INK}" font-size="7">{shown(None, True)}</text>'
    return f'<rect width="16" height="16" fill="{fill_of(kind)}" stroke="#888"/>{glyph}'


def kind_legend(cells) -> list[tuple[str, str]]:
    """The legend of the kinds among `cells` ((result, lacking) pairs), and of italics where a result is weak."""
    present = {kind_of(r, gone) for r, gone in cells}
    entries = [(swatch(k), LEGEND[k]) for k in kinds() if k in present]
    if any(is_weak(r) for r, _ in cells):
        entries.append(('<text x="8" y="12" text-anchor="middle" class="weak">w</text>', "italic: weak"))
    return entries


def width_of(texts) -> float:
    """The width a column needs for these cell texts."""
    return max([MIN_W] + [text_width(line, SIZE) + 12 for t in texts for line in lines_of(t)])


def wraps(texts) -> bool:
    return any(len(lines_of(t)) > 1 for t in texts)


class Svg(Format):
    name = "svg"

    def matrix(self, m) -> str:
        results = cell_pairs(m)
        texts = [[shown(r, gone) for r, gone in row] for row in results]
        row_h = CELL_H + (LINE if wraps(t for row in texts for t in row) else 0)
        widths = [width_of(row[j] for row in texts) for j in range(len(m.types))]
        pic = Picture(matrix_title(m), "rows: left operand a   ·   columns: right operand b   ·   "
                      + marks_words(m, "   ·   "), m.types, widths, row_h)
        body = ['<g class="cells">']
        for i, (a, row) in enumerate(zip(m.types, results)):
            y = pic.gy + i * row_h
            for j, (b, (r, gone)) in enumerate(zip(m.types, row)):
                kind = kind_of(r, gone)
                tip = f"{a} {m.op} {b} → {answer_words(r, gone)}"
                body.append(f'<g class="cell k-{kind}" data-a="{esc(a)}" data-b="{esc(b)}"><title>{esc(tip)}</title>'
                            f'{_box(pic.xs[j], y, pic.widths[j], row_h, kind, r)}</g>')
        body.append("</g>")
        return pic.document(body, kind_legend([c for row in results for c in row]))

    def diff(self, d) -> str:
        cells = cells_by_pair(d)
        heads = side_heads(d)
        by_col: dict = {b: [] for b in d.types}
        for (a, b), rs in cells.items():
            by_col[b] += [shown(r, gone) for r, gone in rs]
        band = BAND_H + (LINE if wraps(t for col in by_col.values() for t in col) else 0)
        row_h = len(d.frameworks) * band + 4
        widths = [width_of(by_col[b]) for b in d.types]
        order = "   ·   ".join(f"band {i + 1}: {h}" for i, h in enumerate(heads))
        pic = Picture(diff_title(d), f"differing cells outlined, one band per side ({order})", d.types, widths, row_h)
        body = ['<g class="cells">']
        for i, a in enumerate(d.types):
            y = pic.gy + i * row_h
            for j, b in enumerate(d.types):
                x, w = pic.xs[j], pic.widths[j]
                results = cells.get((a, b))
                if results is None:
                    body.append(f'<g class="cell same" data-a="{esc(a)}" data-b="{esc(b)}"><title>{esc(a)} {esc(d.op)} '
                                f'{esc(b)}: the same on every side</title><rect class="grid" x="{x:.1f}" y="{y:.1f}" '
                                f'width="{w:.1f}" height="{row_h:.1f}" fill="{SAME_FILL}"/></g>')
                    continue
                tip = f"{a} {d.op} {b}: " + ", ".join(
                    f"{h} → {answer_words(r, gone)}" for h, (r, gone) in zip(heads, results))
                part = [f'<g class="cell differ" data-a="{esc(a)}" data-b="{esc(b)}"><title>{esc(tip)}</title>']
                for k, (h, (r, gone)) in enumerate(zip(heads, results)):
                    kind = kind_of(r, gone)
                    part.append(f'<g class="side k-{kind}" data-side="{esc(h)}">'
                                f'{_box(x, y + 2 + k * band, w, band, kind, r)}</g>')
                part.append(f'<rect class="outline" x="{x + 1:.1f}" y="{y + 1:.1f}" width="{w - 2:.1f}" '
                            f'height="{row_h - 2:.1f}"/></g>')
                body.append("".join(part))
        body.append("</g>")
        legend = kind_legend([c for rs in cells.values() for c in rs])
        legend.append((f'<rect width="16" height="16" fill="#fff" stroke="{DIFF_INK}" stroke-width="2"/>',
                       "differs: " + " / ".join(heads)))
        legend.append((f'<rect width="16" height="16" fill="{SAME_FILL}" stroke="#888"/>', "same on every side"))
        return pic.document(body, legend)


FORMAT = Svg
