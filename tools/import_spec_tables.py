#!/usr/bin/env python3
"""Import promotion tables from the spec pages into rule files.

    python tools/import_spec_tables.py cann            # print the generated block
    python tools/import_spec_tables.py cann --write    # rewrite it in rules/cann.toml
    python tools/import_spec_tables.py anvil --check   # exit 1 if rules/anvil.toml is stale

The spec pages are markdown (`cann-aclnn-type-promotion.md`, which the repository may not
hold, and `spec/anvil-type-promotion.md`); their tables are parsed here, their dtype names are
mapped to the canonical names by explicit tables (never by guessing), and the result is
written between the `# BEGIN GENERATED` and `# END GENERATED` lines of the rule file.
The tests import `cann_table` and `anvil_tables` to check every cell at test time.

Only the standard library is used: the tool runs without the project installed.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIRS = [Path(p) for p in os.environ.get("PROMOTE_SPEC_DIR", "").split(os.pathsep) if p] + [
    ROOT / "spec",
    ROOT.parent / "shared" / "spec",
]

CANN_SPEC = "cann-aclnn-type-promotion.md"
ANVIL_SPEC = "anvil-type-promotion.md"

#: Spec pages whose licence keeps them out of `spec/`, and why (spec/README.md has the details).
OUTSIDE_PAGES = {
    CANN_SPEC: "the CANN Open Software License Agreement 2.0 allows no redistribution for this project",
    "tosa-type-conversion.adoc": "Arm's proprietary notice allows no copies",
}

# The CANN page's short names (its note spells each one out: ACL_INT8(s8), ...).
# s8..s64 are byte-free but sign-first: s = signed; the rest already are canonical.
CANN_NAMES = {
    "f32": "f32", "f16": "f16", "f64": "f64", "bf16": "bf16",
    "s8": "i8", "u8": "u8", "s16": "i16", "u16": "u16",
    "s32": "i32", "u32": "u32", "s64": "i64", "u64": "u64",
    "bool": "bool", "c32": "c32", "c64": "c64", "c128": "c128",
}
CANN_REFUSAL = "×"

# anvil's (stablehlo's) names: i1 is the boolean, ui* the unsigned integers.
ANVIL_NAMES = {
    "i1": "bool", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64",
    "ui8": "u8", "ui16": "u16", "ui32": "u32", "ui64": "u64",
    "f32": "f32", "f64": "f64",
}

BEGIN = "# BEGIN GENERATED"
END = "# END GENERATED"


class SpecError(Exception):
    """The spec page is not shaped as this tool expects."""


def find_spec(name: str) -> Path:
    """The spec page `name` in `$PROMOTE_SPEC_DIR`, `spec/` or the shared spec directory."""
    for directory in SPEC_DIRS:
        if (directory / name).is_file():
            return directory / name
    why = f" (the repository does not hold it: {OUTSIDE_PAGES[name]})" if name in OUTSIDE_PAGES else ""
    raise SpecError(f"{name}: not found in {', '.join(map(str, SPEC_DIRS))}{why}; "
                    "$PROMOTE_SPEC_DIR names more directories")


# ------------------------------------------------------------------ markdown

_SEPARATOR = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


def _cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return [cell.strip().replace("**", "").strip() for cell in body.split("|")]


def markdown_tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every pipe table in `text`, as (header cells, body rows), in page order."""
    tables = []
    lines = text.splitlines()
    i = 0
    while i < len(lines) - 1:
        if lines[i].lstrip().startswith("|") and _SEPARATOR.match(lines[i + 1].strip()):
            header = _cells(lines[i])
            body = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                body.append(_cells(lines[i]))
                i += 1
            tables.append((header, body))
        else:
            i += 1
    return tables


def _map(names: dict[str, str], name: str, where: str) -> str:
    try:
        return names[name]
    except KeyError:
        raise SpecError(f"{where}: unknown dtype name {name!r} (known: {', '.join(names)})") from None


# ------------------------------------------------------------------ the pages

Table = dict[tuple[str, str], "str | None"]


def cann_table(path: Path | None = None) -> tuple[list[str], Table]:
    """The aclnn table: (types in page order, {(row, column): result or None for ×})."""
    path = path or find_spec(CANN_SPEC)
    tables = markdown_tables(path.read_text(encoding="utf-8"))
    if len(tables) != 1:
        raise SpecError(f"{path}: expected one table, found {len(tables)}")
    header, body = tables[0]
    # header: the corner cell ("数据类型", data type), then one cell per column.
    columns = [_map(CANN_NAMES, name, f"{path}: header") for name in header[1:]]
    cells: Table = {}
    rows = []
    for row in body:
        if len(row) != len(columns) + 1:
            raise SpecError(f"{path}: row {row[0]!r} has {len(row) - 1} cells for {len(columns)} columns")
        a = _map(CANN_NAMES, row[0], f"{path}: row")
        rows.append(a)
        for b, cell in zip(columns, row[1:]):
            cells[a, b] = None if cell == CANN_REFUSAL else _map(CANN_NAMES, cell, f"{path}: cell {a},{b}")
    if rows != columns:
        raise SpecError(f"{path}: rows {rows} differ from columns {columns}")
    return columns, cells


def _anvil_table(path: Path, header: list[str], body: list[list[str]]) -> tuple[list[str], Table]:
    # The page renders an R matrix whose row names form the first column, but the
    # header row has no corner cell for them: it lists the 11 column names starting in
    # the row-name column and ends with an empty cell,
    #     | i1 | i8 | ... | f64 |   |          <- header: 11 names + ""
    #     | i1 | i1 | i8  | ... | f64 |        <- body: row name + 11 cells
    # so the header is shifted one cell to the left.  The column names are the header
    # minus its trailing empty cell; body cell k (after the row name) is column k.
    if header[-1] != "" or "" in header[:-1]:
        raise SpecError(f"{path}: header {header} is not 'names + one trailing empty cell'")
    columns = [_map(ANVIL_NAMES, name, f"{path}: header") for name in header[:-1]]
    cells: Table = {}
    rows = []
    for row in body:
        if len(row) != len(columns) + 1:
            raise SpecError(f"{path}: row {row[0]!r} has {len(row) - 1} cells for {len(columns)} columns")
        a = _map(ANVIL_NAMES, row[0], f"{path}: row")
        rows.append(a)
        for b, cell in zip(columns, row[1:]):
            cells[a, b] = _map(ANVIL_NAMES, cell, f"{path}: cell {a},{b}")
    if rows != columns:
        raise SpecError(f"{path}: rows {rows} differ from columns {columns}")
    return columns, cells


def anvil_tables(path: Path | None = None) -> tuple[list[str], Table, Table]:
    """anvil's two tables: (types, known x known, ambiguous row x known column)."""
    path = path or find_spec(ANVIL_SPEC)
    tables = markdown_tables(path.read_text(encoding="utf-8"))
    if len(tables) != 2:
        raise SpecError(f"{path}: expected two tables, found {len(tables)}")
    types, known = _anvil_table(path, *tables[0])
    types2, ambiguous = _anvil_table(path, *tables[1])
    if types2 != types:
        raise SpecError(f"{path}: the two tables have different axes")
    return types, known, ambiguous


# ------------------------------------------------------------------ TOML

def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _key(text: str) -> str:
    return text if re.fullmatch(r"[A-Za-z0-9_-]+", text) else _quote(text)


def toml_table(name: str, columns: list[str], cells: Table, *, rows: list[str] | None = None,
               row_names: dict[str, str] | None = None, commutative: bool, refusal: str,
               reason: str | dict, comment: str = "") -> str:
    """One `[tables.NAME]` block, cells aligned in columns as the spec prints them.

    `rows` defaults to `columns`; `row_names` renames a row key (e.g. f32 -> "weak:f32")
    while `cells` stays keyed by the plain name.
    """
    rows = rows or columns
    row_names = row_names or {}
    keys = {a: _key(row_names.get(a, a)) for a in rows}
    grid = [[refusal if cells[a, b] is None else cells[a, b] for b in columns] for a in rows]
    width = max(len(_quote(c)) for c in columns + [x for line in grid for x in line]) + 1
    keyw = max(len("columns"), *(len(k) for k in keys.values()))

    def line(key: str, items: list[str]) -> str:
        quoted = [(_quote(x) + ",").ljust(width) for x in items[:-1]] + [_quote(items[-1])]
        return f"{key.ljust(keyw)} = [" + " ".join(quoted) + "]"

    out = [f"[tables.{name}]"]
    if comment:
        out += [f"# {c}" for c in comment.splitlines()]
    out += [
        f"commutative = {'true' if commutative else 'false'}",
        f"refusal = {_quote(refusal)}",
        # {"message": NAME}: the rule file's [messages] NAME, written there once
        f"reason = {'{ message = ' + _quote(reason['message']) + ' }' if isinstance(reason, dict) else _quote(reason)}",
        line("columns", columns),
        f"[tables.{name}.rows]",
    ]
    out += [line(keys[a], grid[i]) for i, a in enumerate(rows)]
    return "\n".join(out) + "\n"


def is_commutative(types: list[str], cells: Table) -> bool:
    return all(cells[a, b] == cells[b, a] for a in types for b in types)


def replace_generated(text: str, block: str, generator: str) -> str:
    """`text` with the lines between BEGIN GENERATED and END GENERATED replaced by `block`."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, l in enumerate(lines) if l.startswith(BEGIN)]
    ends = [i for i, l in enumerate(lines) if l.startswith(END)]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise SpecError(f"expected one '{BEGIN}' ... '{END}' region")
    head = f"{BEGIN} by {generator}: do not edit by hand, run it with --write\n"
    return "".join(lines[: starts[0]]) + head + block + "".join(lines[ends[0]:])


def write_or_check(path: Path, block: str, generator: str, mode: str) -> int:
    """Print, write (`--write`) or check (`--check`) the generated region of `path`."""
    if mode == "print":
        sys.stdout.write(block)
        return 0
    old = path.read_text(encoding="utf-8")
    new = replace_generated(old, block, generator)
    if mode == "check":
        if new != old:
            print(f"{path}: generated tables are stale; run {generator} --write", file=sys.stderr)
            return 1
        return 0
    if new != old:
        path.write_text(new, encoding="utf-8")
        print(f"{path}: updated", file=sys.stderr)
    return 0


# ------------------------------------------------------------------ the blocks

def cann_block(path: Path | None = None) -> str:
    types, cells = cann_table(path)
    return toml_table(
        "main", types, cells, commutative=is_commutative(types, cells), refusal=CANN_REFUSAL,
        reason="aclnn does not promote {a} with {b} (× in the documentation table)",
        comment="Table 1 of the aclnn page; × = the two types cannot be promoted.",
    )


def anvil_block(path: Path | None = None) -> str:
    types, known, ambiguous = anvil_tables(path)
    first = toml_table(
        "main", types, known, commutative=is_commutative(types, known), refusal="x",
        reason={"message": "no_promotion"},
        comment="The page's first table: two known (non-ambiguous) types.",
    )
    second = toml_table(
        "ambiguous", types, ambiguous, row_names={t: f"weak:{t}" for t in types},
        commutative=False, refusal="x",
        reason={"message": "no_promotion"},
        comment="The page's second table: rows are the ambiguous operand, columns the known one.",
    )
    return first + "\n" + second


BLOCKS = {"cann": (cann_block, "cann.toml"), "anvil": (anvil_block, "anvil.toml")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("framework", choices=sorted(BLOCKS))
    parser.add_argument("--spec", type=Path, help="the spec page (default: found by name)")
    parser.add_argument("--rules", type=Path, help="the rule file (default: rules/<framework>.toml)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_const", dest="mode", const="write")
    mode.add_argument("--check", action="store_const", dest="mode", const="check")
    args = parser.parse_args(argv)
    make, filename = BLOCKS[args.framework]
    try:
        block = make(args.spec)
        return write_or_check(args.rules or ROOT / "rules" / filename, block,
                              "tools/import_spec_tables.py " + args.framework, args.mode or "print")
    except (SpecError, OSError) as exc:
        print(f"import_spec_tables: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
