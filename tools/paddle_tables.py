"""Write the recorded tables of rules/paddle.toml from the Paddle recording.

rules/paddle.toml is rules, not dumps: every op group, with tensors, 0-d tensors and
Python scalars, is a handful of clauses that agree with every case of
tests/data/recordings/paddle-3.3.json.  What stays data is Paddle's own promotion table
(phi/common/type_promotion.h), which the rules consult; this tool writes it from the
recording, so no cell is typed by hand.  A table sits in the rule file between two
marker lines

    # BEGIN generated table NAME (tools/paddle_tables.py)
    ...
    # END generated table NAME

and everything outside the markers is left as it is.  A cell is the dtype the recording
gives for the table's op and the operands of its row and column, or the refusal marker
``x`` when Paddle refused; columns are aligned so the table reads as a table.  Should a
future recording defeat a rule, add a `Table` to TABLES (rows and columns may be any
operands: ``i8``, ``0d:i8``, ``py:int``) and a marker pair to the rule file.

    python tools/paddle_tables.py            # rewrite the blocks in place
    python tools/paddle_tables.py --check    # exit 1 when the file is not what it would write
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from promote_cli.oracle.loader import read_toml, type_set

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "rules" / "paddle.toml"
RECORDING = ROOT / "tests" / "data" / "recordings" / "paddle-3.3.json"
TOOL = "tools/paddle_tables.py"

#: the dtypes of Paddle's promotion table (phi/common/type_promotion.h): the rule file's `promotable` set.
PROMOTABLE = [d.name for d in type_set(read_toml(RULES), "promotable", str(RULES))]
REFUSAL = "x"
REASON = "Paddle refuses {a} with {b} for this op (see docs/frameworks/paddle.md)"


@dataclass
class Table:
    """One generated table: cell (row, column) is what `op` gave for `operands(row, column)`."""

    name: str
    op: str
    rows: list[str]
    columns: list[str]
    comment: list[str]
    reason: str = REASON
    commutative: bool = False
    rank0: bool = False  # ask the op with both operands as 0-d tensors

    def operands(self, row: str, column: str) -> tuple[str, str]:
        if self.rank0:
            return f"0d:{row}", f"0d:{column}"
        return row, column


TABLES = [
    Table(
        "promote", "add", PROMOTABLE, PROMOTABLE, commutative=True, rank0=True,
        comment=["Paddle's promoteTypes lookup over the 12 dtypes it knows (phi/common/type_promotion.h),",
                 "as add of two 0-d tensors gives it; Paddle's other dtypes have no entry."],
        reason="Invalid enum data type for type promote: Paddle's promotion table has no entry for {a} with {b}",
    ),
]


def load_recording(path: Path = RECORDING) -> dict:
    """(op, a, b) -> recorded result (None when refused)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {(op, a, b): result for op, a, b, _options, result, _error in data["cases"]}


def _q(text: str) -> str:
    return json.dumps(text)


def render(table: Table, answers: dict) -> str:
    """The TOML text of one table, columns aligned."""
    cells = {}
    for row in table.rows:
        for col in table.columns:
            key = (table.op, *table.operands(row, col))
            if key not in answers:
                raise SystemExit(f"{TOOL}: the recording has no case {key}")
            cells[row, col] = answers[key] if answers[key] is not None else REFUSAL
    head = [_q(c) for c in table.columns]
    body = {row: [_q(cells[row, c]) for c in table.columns] for row in table.rows}
    widths = [max(len(head[i]), *(len(body[r][i]) for r in table.rows)) for i in range(len(head))]
    keys = {row: _q(row) if not re.fullmatch(r"[A-Za-z0-9_-]+", row) else row for row in table.rows}
    key_width = max(len("columns"), *(len(k) for k in keys.values()))

    def line(key: str, values: list[str]) -> str:
        padded = [v + "," + " " * (w - len(v)) for v, w in zip(values[:-1], widths[:-1])]
        return f"{key:<{key_width}} = [" + " ".join(padded + [values[-1]]) + "]"

    out = [f"[tables.{table.name}]"]
    out += [f"# {c}" for c in table.comment]
    if table.commutative:
        out.append("commutative = true")
    out.append(f"reason = {_q(table.reason)}")
    out.append(line("columns", head))
    out.append(f"[tables.{table.name}.rows]")
    out += [line(keys[row], body[row]) for row in table.rows]
    return "\n".join(out)


def begin_marker(name: str) -> str:
    return f"# BEGIN generated table {name} ({TOOL})"


def end_marker(name: str) -> str:
    return f"# END generated table {name}"


_BLOCK = re.compile(r"^# BEGIN generated table (?P<name>\S+) \(.*?\)\n(?P<body>.*?)^# END generated table (?P=name)$",
                    re.M | re.S)


def rewrite(text: str, answers: dict) -> str:
    """`text` with every generated block written anew; SystemExit when blocks are missing or unknown."""
    by_name = {t.name: t for t in TABLES}
    found = [m.group("name") for m in _BLOCK.finditer(text)]
    unknown = sorted(set(found) - set(by_name))
    missing = sorted(set(by_name) - set(found))
    doubled = sorted({n for n in found if found.count(n) > 1})
    if unknown or missing or doubled:
        raise SystemExit(f"{TOOL}: generated blocks: unknown {unknown}, missing {missing}, repeated {doubled}")

    def block(m: re.Match) -> str:
        name = m.group("name")
        return f"{begin_marker(name)}\n{render(by_name[name], answers)}\n{end_marker(name)}"

    return _BLOCK.sub(block, text)


def check(rules: Path = RULES, recording: Path = RECORDING) -> list[str]:
    """The names of the generated tables of `rules` that differ from what the tool writes (empty: up to date)."""
    text = rules.read_text(encoding="utf-8")
    new = rewrite(text, load_recording(recording))
    old_blocks = {m.group("name"): m.group(0) for m in _BLOCK.finditer(text)}
    new_blocks = {m.group("name"): m.group(0) for m in _BLOCK.finditer(new)}
    return [name for name in new_blocks if old_blocks.get(name) != new_blocks[name]] if new != text else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the rule file is stale")
    parser.add_argument("--rules", type=Path, default=RULES)
    parser.add_argument("--recording", type=Path, default=RECORDING)
    args = parser.parse_args(argv)
    if args.check:
        stale = check(args.rules, args.recording)
        if stale:
            print(f"{args.rules}: stale generated tables: {', '.join(stale)} (run python {TOOL})", file=sys.stderr)
            return 1
        return 0
    text = args.rules.read_text(encoding="utf-8")
    new = rewrite(text, load_recording(args.recording))
    if new != text:
        args.rules.write_text(new, encoding="utf-8")
        print(f"wrote {args.rules}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
