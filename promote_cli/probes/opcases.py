"""Op recordings: what a framework's ops (reductions, unary math, matmul, array functions and
every binary operator) give for each dtype, kept compact enough to commit.

An op recording asks each op over one axis of operands (`axis`: the contract's operand
strings, ``i8``, ``0d:i8``, ``py:int``): a unary op once per operand, a binary op once per
ordered pair, a ternary op (``where``: condition, x, y; ``clip``: x, low, high) once per
pair of leading operands the probe chose and every last operand.  Each answer is a cell:
the result operand as the contract writes it (``i64``, ``0d:i64`` when the framework
returned a 0-d result, ``weak:f32``), an integer (the index of the refusal's message in
``messages``), or ``null`` (not asked: e.g. two Python scalars).  One row a line::

    {"ruleset": "torch", "package": "torch", "version": "2.13.0", "probe": "...", "python": "3.11.7",
     "kind": "ops", "axis": ["bool", "u8", ...], "options": [{}], "messages": ["RuntimeError: ..."],
     "rows": [
      ["sum", 0, [], ["i64", "i64", ...]],
      ["add", 0, ["i8"], ["i8", "i16", ..., 0]],
      ["where", 0, ["bool", "i8"], ["i8", ...]]
     ]}

A row is ``[op, options index, leading operands, cells over axis]``.  `cases` turns a
recording back into ``(op, operands, options, result, error)``.

A value recording (``"kind": "values"``, `probes/values.py`) has the same shape with the value
operands as its axis (``py:300``, ``0d:i64=300``); a row's operands may hold one ``_``, the
place of the axis operand (``["_", "i8"]``: ``py:300 + i8``); without one it goes last.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Callable, Iterable, Iterator

from promote_cli.errors import UsageError
from promote_cli.probes import write_lines

ROW_SHAPE = "[op, options index, [leading operands], [cells over axis]]"
KINDS = ("ops", "values")
PLACE = "_"  # in a row's operands: where the axis operand goes


def operands_of(leading: list[str], x: str) -> list[str]:
    """A row's operands with axis operand `x`: at the place `_` marks, else last."""
    if PLACE in leading:
        return [x if t == PLACE else t for t in leading]
    return [*leading, x]


class Recorder:
    """Collects the rows of one op recording, interning refusal messages."""

    def __init__(self, axis: Iterable[str], kind: str = "ops"):
        self.axis, self.kind = list(axis), kind
        self.options: list[dict] = []
        self.messages: list[str] = []
        self._message_index: dict[str, int] = {}
        self.rows: list[list] = []

    def _options_index(self, options: dict) -> int:
        if options not in self.options:
            self.options.append(dict(options))
        return self.options.index(options)

    def cell(self, result: str | None, error: str | None):
        if error is not None:
            if error not in self._message_index:
                self._message_index[error] = len(self.messages)
                self.messages.append(error)
            return self._message_index[error]
        return result

    def row(self, op: str, options: dict, leading: list[str],
            ask: Callable[[str, list[str]], tuple[str | None, str | None] | None]) -> None:
        """Ask ``ask(op, operands_of(leading, x))`` for every x of the axis; ``None`` from `ask` means not
        asked."""
        cells = []
        for x in self.axis:
            answer = ask(op, operands_of(leading, x))
            cells.append(None if answer is None else self.cell(*answer))
        self.rows.append([op, self._options_index(options), list(leading), cells])

    def recording(self, head: dict) -> dict:
        return {**head, "kind": self.kind, "axis": self.axis, "options": self.options,
                "messages": self.messages, "rows": self.rows}


def cases(recording: dict) -> Iterator[tuple[str, list[str], dict, str | None, str | None]]:
    """Every asked case of an op recording: ``(op, operands, options, result, error)``."""
    axis, options, messages = recording["axis"], recording["options"], recording["messages"]
    for op, index, leading, cells in recording["rows"]:
        for x, cell in zip(axis, cells):
            if cell is None:
                continue
            if isinstance(cell, int):
                yield op, operands_of(leading, x), options[index], None, messages[cell]
            else:
                yield op, operands_of(leading, x), options[index], cell, None


def check_op_recording(data, where: str) -> None:
    """Raise UsageError naming `where` unless `data` has an op (or value) recording's shape."""
    def bad(why: str):
        raise UsageError(f"{where}: not an op recording: {why}")

    if not isinstance(data, dict) or data.get("kind") not in KINDS:
        bad('no "kind": "ops" (or "values")')
    for key, kind in (("axis", list), ("options", list), ("messages", list), ("rows", list)):
        if not isinstance(data.get(key), kind):
            bad(f"{key!r} is not a {kind.__name__}")
    width = len(data["axis"])
    for n, row in enumerate(data["rows"]):
        ok = (isinstance(row, list) and len(row) == 4 and isinstance(row[0], str) and isinstance(row[1], int)
              and 0 <= row[1] < len(data["options"]) and isinstance(row[2], list) and row[2].count(PLACE) <= 1
              and isinstance(row[3], list) and len(row[3]) == width)
        if not ok:
            bad(f"row {n} is not {ROW_SHAPE} with {width} cells")
        for cell in row[3]:
            if isinstance(cell, bool) or not (cell is None or isinstance(cell, str)
                                              or (isinstance(cell, int) and 0 <= cell < len(data["messages"]))):
                bad(f"row {n} has a cell that is neither an operand, a message index nor null: {cell!r}")


def write_op_recording(data: dict, path: str) -> None:
    """Write an op recording with one row per line, atomically."""
    head = {k: v for k, v in data.items() if k != "rows"}
    head.setdefault("python", platform.python_version())
    rows = data["rows"]
    lines = ["{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in head.items())
             + ', "rows": [']
    lines += [" " + json.dumps(r, ensure_ascii=False) + ("," if i < len(rows) - 1 else "") for i, r in enumerate(rows)]
    lines.append("]}")
    write_lines(lines, path)
