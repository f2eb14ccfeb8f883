"""Write the recorded tables and lattices of a rule file from its framework's recording.

A rule file is rules, not dumps; what stays data is a framework's own promotion table
(PyTorch's ``torch.promote_types``, TensorFlow's per-mode tables), which the rules
consult.  This tool writes such tables from the committed recording, so no cell is
typed by hand.  A table sits in the rule file between two marker lines

    # BEGIN generated table NAME (tools/framework_tables.py)
    ...
    # END generated table NAME

(``lattice`` instead of ``table`` for a lattice, written as each node's immediate
successors)

and everything outside the markers is left as it is.  A cell is the result the
recording gives for the table's op, options and the operands of its row and column, or
the refusal marker ``x`` when the framework refused; columns are aligned so the table
reads as a table.

    python tools/framework_tables.py torch            # rewrite the blocks in place
    python tools/framework_tables.py torch --check    # exit 1 when the file is not what it would write
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOL = "tools/framework_tables.py"
REFUSAL = "x"


@dataclass
class Table:
    """One generated table: cell (row, column) is what `op` with `options` gave for (row, column)."""

    name: str
    op: str
    rows: list[str]
    columns: list[str]
    comment: list[str]
    reason: str
    options: dict = field(default_factory=dict)
    commutative: bool = False
    weak_from: list[str] = field(default_factory=list)  # a cell is weak:DTYPE where one of these ops gave it weak


@dataclass
class Lattice:
    """One generated lattice: the Hasse diagram of the join `op` with `options` gave over `nodes`.

    A cell (x, y) of the recording is the join of x and y, weak where one of `weak_from`
    gave it weak.  The tool checks that every recorded join is the least upper bound of
    the order the joins define (x <= y when join(x, y) = y) and writes each node's
    immediate successors; the engine computes the joins back from them.
    """

    name: str
    op: str
    nodes: list[str]
    comment: list[str]
    reason: str
    options: dict = field(default_factory=dict)
    weak_from: list[str] = field(default_factory=list)


@dataclass
class Source:
    """A rule file and the recording its tables come from."""

    rules: Path
    recording: Path
    tables: list[Table | Lattice]


def _types(recording: Path, op: str) -> list[str]:
    """The dtypes a recording asked `op` about, in the order it asked them."""
    data = json.loads(recording.read_text(encoding="utf-8"))
    seen: dict[str, None] = {}
    for case in data["cases"]:
        if case[0] == op and ":" not in case[1]:
            seen.setdefault(case[1], None)
    return list(seen)


def torch_source() -> Source:
    recording = ROOT / "tests" / "data" / "recordings" / "torch-2.13.json"
    types = _types(recording, "promote_types")
    return Source(ROOT / "rules" / "torch.toml", recording, [
        Table("promote", "promote_types", types, types, commutative=True,
              comment=["torch.promote_types over every dtype PyTorch has a name for: its promotion lookup",
                       "(c10/core/ScalarType.cpp) with the float8, barebones-unsigned and sub-byte checks",
                       "in front of it.  x: PyTorch refuses the pair (the rules below say why)."],
              reason="torch.promote_types refuses {a} with {b}"),
    ])


TF_WEAK = ["weak:i32", "weak:i64", "weak:f32", "weak:f64", "weak:c128"]
TF_PYTHON = ["py:bool", "py:int", "py:float", "py:complex"]
#: the nodes of TensorFlow's lattice: its public dtypes and its WeakTensors.
TF_LATTICE = ["bool", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64",
              "bf16", "f16", "f32", "f64", "c64", "c128"] + TF_WEAK


def tensorflow_source() -> Source:
    recording = ROOT / "tests" / "data" / "recordings" / "tensorflow-2.21.json"
    types = _types(recording, "tnp.result_type")

    def mode(name: str, prefer_float32: bool = False) -> dict:
        return {"dtype_conversion_mode": name, "prefer_float32": prefer_float32}

    lattice = types + TF_WEAK + TF_PYTHON
    return Source(ROOT / "rules" / "tensorflow.toml", recording, [
        Table("numpy", "tnp.result_type", types + TF_PYTHON, types + TF_PYTHON, options=mode("legacy"),
              commutative=True,
              comment=["tnp.result_type in legacy mode (and with NumPy behaviour off): NumPy's own promotion",
                       "(numpy.result_type over the ml_dtypes types), Python scalars as NumPy 2 treats them."],
              reason="NumPy cannot promote {a} with {b}"),
        Table("numpy_prefer_float32", "tnp.result_type", TF_PYTHON, types + TF_PYTHON,
              options=mode("legacy", True),
              comment=["The Python-scalar rows of the numpy table with prefer_float32=true: a Python float",
                       "is a float32, a Python complex a complex64."],
              reason="NumPy cannot promote {a} with {b}"),
        Table("safe", "tnp.result_type", lattice, lattice, options=mode("safe"), commutative=True,
              weak_from=["add", "tf.add"],
              comment=["dtype_conversion_mode=safe: TensorFlow's auto dtype conversion lattice without the",
                       "conversions that may lose precision (flexible_dtypes.py).  weak:X is a WeakTensor;",
                       "a Python int is weak i32, a float weak f32, a complex weak c128; x: refused."],
              reason="In promotion mode PromoMode.SAFE, implicit dtype promotion between {a} and {b} is disallowed"),
        Lattice("all", "tnp.result_type", TF_LATTICE, options=mode("all"), weak_from=["add", "tf.add"],
                comment=["dtype_conversion_mode=all: TensorFlow's auto dtype conversion lattice (flexible_dtypes.py),",
                         "written from the joins recorded for every pair of its nodes.  weak:X is a WeakTensor",
                         "(TensorFlow's i32*, i64*, f32*, f64*, c128*); a Python bool stands at bool, an int at",
                         "weak:i32, a float at weak:f32, a complex at weak:c128."],
                reason="TensorFlow's dtype conversion lattice has no {a} or {b}"),
    ])


SOURCES = {"torch": torch_source, "tensorflow": tensorflow_source}


def load_answers(path: Path) -> dict:
    """(op, a, b, options) -> recorded result (None when refused)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {(op, a, b, json.dumps(options, sort_keys=True)): result
            for op, a, b, options, result, _error in data["cases"]}


def _q(text: str) -> str:
    return json.dumps(text)


def render(table: Table, answers: dict) -> str:
    """The TOML text of one table, columns aligned."""
    opts = json.dumps(table.options, sort_keys=True)
    cells = {(row, col): _cell(answers, table.op, row, col, opts, table.weak_from)
             for row in table.rows for col in table.columns}
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


def _cell(answers: dict, op: str, row: str, col: str, opts: str, weak_from: list[str]) -> str:
    key = (op, row, col, opts)
    if key not in answers:
        raise SystemExit(f"{TOOL}: the recording has no case {key}")
    cell = answers[key] if answers[key] is not None else REFUSAL
    if any(answers.get((w, row, col, opts)) == f"weak:{cell}" for w in weak_from):
        cell = f"weak:{cell}"
    return cell


def hasse(lattice: Lattice, answers: dict) -> dict[str, list[str]]:
    """Each node's immediate successors; SystemExit when the recorded joins are not a lattice's."""
    opts = json.dumps(lattice.options, sort_keys=True)
    nodes = lattice.nodes
    join = {(x, y): _cell(answers, lattice.op, x, y, opts, lattice.weak_from) for x in nodes for y in nodes}

    def le(x: str, y: str) -> bool:
        return join[x, y] == y

    for (x, y), z in join.items():
        uppers = [u for u in nodes if le(x, u) and le(y, u)]
        least = [u for u in uppers if all(le(u, v) for v in uppers)]
        if least != [z]:
            raise SystemExit(f"{TOOL}: lattice {lattice.name}: the join of {x} and {y} is {z}, "
                             f"not the least upper bound ({least or 'none'})")
    edges = {}
    for x in nodes:
        above = [y for y in nodes if y != x and le(x, y)]
        edges[x] = [y for y in above if not any(z != y and le(z, y) for z in above)]
    return edges


def render_lattice(lattice: Lattice, answers: dict) -> str:
    """The TOML text of one lattice: one line of immediate successors per node."""
    edges = hasse(lattice, answers)
    keys = {n: _q(n) if not re.fullmatch(r"[A-Za-z0-9_-]+", n) else n for n in lattice.nodes}
    width = max(len(k) for k in keys.values())
    out = [f"[lattices.{lattice.name}]"]
    out += [f"# {c}" for c in lattice.comment]
    out.append(f"reason = {_q(lattice.reason)}")
    out.append(f"[lattices.{lattice.name}.edges]")
    out += [f"{keys[n]:<{width}} = [" + ", ".join(_q(e) for e in edges[n]) + "]" for n in lattice.nodes]
    return "\n".join(out)


_BLOCK = re.compile(r"^# BEGIN generated (?P<kind>table|lattice) (?P<name>\S+) \(.*?\)\n(?P<body>.*?)"
                    r"^# END generated (?P=kind) (?P=name)$", re.M | re.S)


def rewrite(text: str, tables: list[Table], answers: dict) -> str:
    """`text` with every generated block written anew; SystemExit when blocks are missing or unknown."""
    by_name = {t.name: t for t in tables}
    found = [m.group("name") for m in _BLOCK.finditer(text)]
    unknown = sorted(set(found) - set(by_name))
    missing = sorted(set(by_name) - set(found))
    doubled = sorted({n for n in found if found.count(n) > 1})
    if unknown or missing or doubled:
        raise SystemExit(f"{TOOL}: generated blocks: unknown {unknown}, missing {missing}, repeated {doubled}")

    def block(m: re.Match) -> str:
        name = m.group("name")
        item = by_name[name]
        kind = "lattice" if isinstance(item, Lattice) else "table"
        text = render_lattice(item, answers) if kind == "lattice" else render(item, answers)
        return f"# BEGIN generated {kind} {name} ({TOOL})\n{text}\n# END generated {kind} {name}"

    return _BLOCK.sub(block, text)


def check(source: Source, rules: Path | None = None) -> list[str]:
    """The names of the generated tables of the rule file that differ from what the tool writes (empty: up to date)."""
    path = rules or source.rules
    text = path.read_text(encoding="utf-8")
    new = rewrite(text, source.tables, load_answers(source.recording))
    old_blocks = {m.group("name"): m.group(0) for m in _BLOCK.finditer(text)}
    new_blocks = {m.group("name"): m.group(0) for m in _BLOCK.finditer(new)}
    return [name for name in new_blocks if old_blocks.get(name) != new_blocks[name]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("framework", choices=sorted(SOURCES))
    parser.add_argument("--check", action="store_true", help="exit 1 when the rule file is stale")
    parser.add_argument("--rules", type=Path, help="the rule file (default: rules/FRAMEWORK.toml)")
    args = parser.parse_args(argv)
    source = SOURCES[args.framework]()
    path = args.rules or source.rules
    if args.check:
        stale = check(source, path)
        if stale:
            print(f"{path}: stale generated tables: {', '.join(stale)} (run python {TOOL} {args.framework})",
                  file=sys.stderr)
            return 1
        return 0
    text = path.read_text(encoding="utf-8")
    new = rewrite(text, source.tables, load_answers(source.recording))
    if new != text:
        path.write_text(new, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
