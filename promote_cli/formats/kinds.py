"""What the picture and graph formats (svg, html, dot, mermaid) share: the kind of a result, its colour, titles.

A result's kind is its dtype's `kind` trait in the vocabulary (`vocab/dtypes.toml`); a refused cell
is the kind "refused", drawn hatched with a `×` so that it reads without colour; a cell of an operand
the framework lacks (a type it does not have, a form it has no rules for) is the kind "absent", drawn
plain with a grey `n/a`. Colours are pale enough for black text, and distinct for the common forms of
colour blindness.
"""

from __future__ import annotations

from xml.sax.saxutils import escape as _escape

from promote_cli.formats import ABSENT as ABSENT_GLYPH
from promote_cli.formats import diff_options, one_line, option_words, side_heads, tally
from promote_cli.vocab import dtypes, operands

#: the pictures' text font: monospaced, so that cell widths follow from lengths
FONT = "DejaVu Sans Mono, Menlo, Consolas, Liberation Mono, monospace"

REFUSED = "refused"
REFUSED_GLYPH = "×"
ABSENT = "absent"
#: the kinds of a cell that holds no result
NO_RESULT = (REFUSED, ABSENT)

#: the fill of a cell of each kind (every kind of the vocabulary, refused and absent)
FILL = {"bool": "#d9d9d9", "signed": "#9ecae1", "unsigned": "#a1d99b", "float": "#fdd0a2", "complex": "#d4b9da",
        REFUSED: "#ffffff", ABSENT: "#e8e8e8"}
#: the hatching and glyph colour of refused cells; the glyph colour of absent ones; the outline of cells that
#: differ in a diff
REFUSED_INK = "#b2182b"
ABSENT_INK = "#6b6b6b"
DIFF_INK = "#d7301f"
SAME_FILL = "#f4f4f4"

LEGEND = {"bool": "bool", "signed": "signed integer", "unsigned": "unsigned integer", "float": "float",
          "complex": "complex", REFUSED: "refused", ABSENT: "no such type (or operand form)"}


def kinds() -> list[str]:
    """Every kind a cell can have, in the vocabulary's order, then refused and absent."""
    return [*dtypes.KINDS, *NO_RESULT]


def kind_of(result: str | None, lacking: bool = False) -> str:
    """The kind of a cell: its result's kind trait, or absent where the framework lacks an operand, or refused."""
    if result is None:
        return ABSENT if lacking else REFUSED
    return operands.parse(result).kind


def is_weak(result: str | None) -> bool:
    return result is not None and ":" in result and not result.startswith("0d:")


def shown(result: str | None, lacking: bool = False) -> str:
    """A cell's text: its result, else `n/a` (absent) or `×` (refused)."""
    if result is not None:
        return result
    return ABSENT_GLYPH if lacking else REFUSED_GLYPH


def answer_words(result: str | None, lacking: bool = False) -> str:
    """A cell's answer for a tooltip: its result, or why there is none."""
    if result is not None:
        return result
    return "n/a (no such type or form)" if lacking else "refused"


def marks_words(m, sep: str = " · ") -> str:
    """What a matrix picture's marks mean: `× refused`, and `n/a no such type` where the framework lacks one."""
    return f"{REFUSED_GLYPH} refused" + (f"{sep}{ABSENT_GLYPH} no such type" if m.absent else "")


def cell_pairs(m) -> list[list[tuple[str | None, bool]]]:
    """A matrix's cells as (result, whether the framework lacks an operand), a row per left operand."""
    return [list(zip(row, lacks)) for row, lacks in zip(m.results(), m.lacking())]


def type_doc(name: str) -> str:
    """A type's full name for a tooltip: `i8: 8-bit signed integer`."""
    try:
        op = operands.parse(name)
    except Exception:  # an operand the vocabulary cannot parse is shown as it is
        return name
    doc = op.dtype.doc if op.dtype is not None else f"a Python {op.pykind} scalar"
    return f"{name}: {doc}"


def matrix_title(m) -> str:
    opts = option_words(m.options)
    return one_line(f"{m.framework}@{m.version}  ·  op {m.op}" + (f"  ·  {opts}" if opts else ""))


def diff_title(d) -> str:
    n = len(d.types)
    opts = diff_options(d)
    return one_line(f"{' vs '.join(side_heads(d))}  ·  op {d.op}" + (f"  ·  {opts}" if opts else "")
                    + f"  ·  {tally(len(d.differences), n * n, 'cell', 'differ')}")


def cells_by_pair(d) -> dict[tuple[str, str], list[tuple[str | None, bool]]]:
    """A diff's differing cells, (a, b) -> each side's (result, whether it lacks an operand), in the order of
    its sides."""
    return {(x["a"], x["b"]): list(zip([x[f] for f in d.frameworks], d.lacking(x))) for x in d.differences}


def esc(text: str) -> str:
    """Text for XML and HTML content and attribute values."""
    return _escape(str(text), {'"': "&quot;"})


def text_width(text: str, size: float) -> float:
    """The width of `text` in a monospace font of `size` pixels (0.6 em a character, generously)."""
    return len(text) * size * 0.62
