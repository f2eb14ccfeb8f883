"""Plain renderers: text, JSON, CSV and Markdown. Each returns a string for stdout.

Nothing here imports Rich; the terminal renderer lives in `render_rich.py`.
"""

from __future__ import annotations

import csv
import io
import json

from promote_cli.oracle.engine import Answer
from promote_cli.oracle.matrix import Diff, Matrix

REFUSED_TEXT = "-"
REFUSED_MARKDOWN = "×"


def dumps(data) -> str:
    return json.dumps(data, ensure_ascii=False)


# ---- query ----------------------------------------------------------------------------

def refusal_line(ans: Answer) -> str:
    """One line for stderr explaining a refusal, with the option that would allow the pair."""
    text = f"{ans.framework} refuses {ans.a} {ans.op} {ans.b}: {ans.refusal}"
    if ans.hint:
        text += f" (with -O {ans.hint['option']}={ans.hint['value']} the result is {ans.hint['result']})"
    return text


def answer_json(ans: Answer) -> str:
    return dumps(ans.to_dict())


# ---- tables -------------------------------------------------------------------------

def _grid_text(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in [header] + rows]
    return "\n".join(lines) + "\n"


def _corner(m: Matrix) -> str:
    return f"{m.framework} {m.op}"


def matrix_text(m: Matrix) -> str:
    rows = [[a] + [r if r is not None else REFUSED_TEXT for r in row] for a, row in zip(m.types, m.results())]
    return _grid_text([_corner(m)] + m.types, rows)


def matrix_csv(m: Matrix) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([_corner(m)] + m.types)
    for a, row in zip(m.types, m.results()):
        writer.writerow([a] + [r if r is not None else "" for r in row])
    return out.getvalue()


def _markdown(header: list[str], rows: list[list[str]]) -> str:
    def esc(cell: str) -> str:
        return cell.replace("|", "\\|")

    lines = ["| " + " | ".join(esc(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def matrix_markdown(m: Matrix) -> str:
    rows = [[f"**{a}**"] + [r if r is not None else REFUSED_MARKDOWN for r in row]
            for a, row in zip(m.types, m.results())]
    return _markdown([_corner(m)] + m.types, rows)


def matrix_json(m: Matrix) -> str:
    data = {"framework": m.framework, "version": m.version, "op": m.op, "types": m.types, "matrix": m.results()}
    if m.options:
        data["options"] = m.options
    return dumps(data)


MATRIX_FORMATS = {"text": matrix_text, "csv": matrix_csv, "markdown": matrix_markdown}


# ---- diffs --------------------------------------------------------------------------

def _diff_rows(d: Diff) -> list[list[str]]:
    f1, f2 = d.frameworks
    return [[x["a"], x["b"], x[f1] or REFUSED_TEXT, x[f2] or REFUSED_TEXT] for x in d.differences]


def diff_text(d: Diff) -> str:
    if not d.differences:
        return ""
    return _grid_text(["a", "b", *d.frameworks], _diff_rows(d))


def diff_csv(d: Diff) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["a", "b", *d.frameworks])
    f1, f2 = d.frameworks
    for x in d.differences:
        writer.writerow([x["a"], x["b"], x[f1] or "", x[f2] or ""])
    return out.getvalue()


def diff_markdown(d: Diff) -> str:
    f1, f2 = d.frameworks
    rows = [[x["a"], x["b"], x[f1] or REFUSED_MARKDOWN, x[f2] or REFUSED_MARKDOWN] for x in d.differences]
    return _markdown(["a", "b", *d.frameworks], rows)


def diff_json(d: Diff) -> str:
    return dumps({"frameworks": list(d.frameworks), "op": d.op, "types": d.types, "differences": d.differences})


DIFF_FORMATS = {"text": diff_text, "csv": diff_csv, "markdown": diff_markdown}


# ---- listings -----------------------------------------------------------------------

def records_text(header: list[str], records: list[list[str]]) -> str:
    return _grid_text(header, records)


def records_csv(header: list[str], records: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(records)
    return out.getvalue()


def records_markdown(header: list[str], records: list[list[str]]) -> str:
    return _markdown(header, records)


RECORD_FORMATS = {"text": records_text, "csv": records_csv, "markdown": records_markdown}
