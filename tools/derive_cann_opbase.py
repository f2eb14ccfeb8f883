#!/usr/bin/env python3
"""Derive what aclnn's `op::PromoteType` computes from the public hicann sources (nothing is run).

aclnn ops promote with `opcommon::PromoteType` (hicann/opbase,
include/nnopbase/opdev/op_common/data_type_utils.h): it returns `type_a` when both
types are equal, else `kPromoteTypesLookup[type_a][type_b]`, a C array indexed by the
`ge::DataType` enum (hicann/metadef, inc/external/graph/types.h, whose values come from
graph/c_types.h).  This tool parses that array and that enum and evaluates PromoteType
for every ordered pair of the enum's dtypes that have a canonical name.

The array is declared `[DT_MAX][DT_MAX]` but initialised with fewer rows and columns:
C++ aggregate initialisation fills the rest with zero, and 0 is DT_FLOAT, so those
cells give f32.  DT_UNDEFINED in a cell is a refusal.

The headers are not part of the project: get them from the public repositories, e.g.

    git --git-dir=OPBASE.git show HEAD:include/nnopbase/opdev/op_common/data_type_utils.h > /tmp/dtu.h
    git --git-dir=METADEF.git show HEAD:inc/external/graph/types.h > /tmp/types.h
    git --git-dir=METADEF.git show HEAD:inc/external/graph/c_types.h > /tmp/c_types.h
    python tools/derive_cann_opbase.py /tmp/dtu.h --enum /tmp/c_types.h --enum /tmp/types.h \\
        --commit OPBASE_COMMIT --enum-commit METADEF_COMMIT --derived --write

`--derived` writes tests/data/derived/cann-opbase.json, the answers derived from the
headers (labelled derived: no CANN installation answered them); `--write` rewrites the
generated `[tables.main]` block of rules/cann@opbase.toml (`--check` only compares).
The JSON file has the shape of a recording, so `promote verify --recording` reads it.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from import_spec_tables import ROOT, SpecError, toml_table, write_or_check  # noqa: E402

PACKAGE = "hicann/opbase"
HEADER = "include/nnopbase/opdev/op_common/data_type_utils.h"
ENUM_PACKAGE = "hicann/metadef"
ENUM_HEADER = "inc/external/graph/types.h (values from graph/c_types.h)"
DERIVED = ROOT / "tests" / "data" / "derived" / "cann-opbase.json"
RULES = ROOT / "rules" / "cann@opbase.toml"
REFUSAL = "×"

# ge::DataType names -> canonical names.  Enum members not listed here have no
# canonical name (DT_HIFLOAT8, DT_FLOAT6_*, DT_FLOAT4_E1M2, DT_HIFLOAT4, DT_INT2,
# DT_UINT2) or are not numbers (DT_STRING, DT_RESOURCE, DT_VARIANT, the quantised and
# dual types, DT_UNDEFINED) and are skipped.
GE_NAMES = {
    "DT_FLOAT": "f32", "DT_FLOAT16": "f16", "DT_DOUBLE": "f64", "DT_BF16": "bf16",
    "DT_INT8": "i8", "DT_INT16": "i16", "DT_INT32": "i32", "DT_INT64": "i64",
    "DT_UINT8": "u8", "DT_UINT16": "u16", "DT_UINT32": "u32", "DT_UINT64": "u64",
    "DT_BOOL": "bool", "DT_COMPLEX32": "c32", "DT_COMPLEX64": "c64", "DT_COMPLEX128": "c128",
    "DT_INT4": "i4", "DT_UINT1": "u1",
    "DT_FLOAT8_E5M2": "f8e5m2", "DT_FLOAT8_E4M3FN": "f8e4m3", "DT_FLOAT8_E8M0": "f8e8m0",
    "DT_FLOAT4_E2M1": "f4e2m1",
}


# ------------------------------------------------------------------ C parsing

def strip_comments(code: str) -> str:
    """`code` without comments, string literals or preprocessor lines."""
    code = re.sub(r"/\*.*?\*/", " ", code, flags=re.S)
    code = re.sub(r"//[^\n]*", " ", code)
    code = re.sub(r"^\s*#.*?(?<!\\)$", " ", code, flags=re.M | re.S)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', code)


def parse_enums(texts: list[str]) -> dict[str, int]:
    """Every member of every enum that mentions DT_FLOAT, as {name: value}.

    Values are integer literals, other members (`::C_DT_FLOAT`) or, when absent, the
    previous member plus one, as C defines them.
    """
    symbols: dict[str, int] = {}
    pending: list[list[tuple[str, str | None]]] = []
    for text in texts:
        for body in re.findall(r"\benum\b[^{;]*\{([^}]*)\}", strip_comments(text)):
            if "DT_FLOAT" not in body:
                continue
            members = []
            for item in body.split(","):
                item = item.strip()
                if not item:
                    continue
                m = re.fullmatch(r"(\w+)\s*(?:=\s*(.+))?", item, flags=re.S)
                if not m:
                    raise SpecError(f"enum member not understood: {item!r}")
                members.append((m[1], m[2].strip() if m[2] else None))
            pending.append(members)
    for _ in range(len(pending) + 1):
        for members in pending:
            previous = -1
            for name, expr in members:
                if expr is None:
                    value = previous + 1 if previous is not None else None
                elif re.fullmatch(r"-?\d+", expr):
                    value = int(expr)
                else:
                    value = symbols.get(re.sub(r"^(::|\w+::)+", "", expr.replace(" ", "")))
                if value is not None:
                    symbols[name] = value
                previous = value
    return symbols


def _balanced(text: str, start: int) -> tuple[str, int]:
    """The text inside the braces opening at `start`, and the index after them."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1:i], i + 1
    raise SpecError("unbalanced braces in the initialiser")


def parse_lookup(header: str, enum: dict[str, int]) -> tuple[int, int, list[list[int]]]:
    """kPromoteTypesLookup as (rows, columns, initialiser rows of enum values)."""
    code = strip_comments(header)
    aliases = {}
    for alias, member in re.findall(
            r"constexpr\s+(?:auto|ge::DataType)\s+(\w+)\s*=\s*(?:ge::)?(?:DataType::)?(DT_\w+)\s*;", code):
        if member not in enum:
            raise SpecError(f"alias {alias} names {member}, which the enum does not have")
        aliases[alias] = enum[member]
    m = re.search(r"kPromoteTypesLookup\s*\[([^\]]*)\]\s*\[([^\]]*)\]\s*=\s*\{", code)
    if not m:
        raise SpecError("kPromoteTypesLookup not found")

    def dimension(expr: str) -> int:
        names = re.findall(r"DT_\w+", expr)
        if len(names) == 1 and names[0] in enum:
            return enum[names[0]]
        if re.fullmatch(r"\s*\d+\s*", expr):
            return int(expr)
        raise SpecError(f"array dimension not understood: {expr!r}")

    n_rows, n_cols = dimension(m[1]), dimension(m[2])
    body, _ = _balanced(code, m.end() - 1)
    rows = []
    pos = 0
    while True:
        start = body.find("{", pos)
        if start < 0:
            break
        if body[pos:start].strip(" \n\t,"):
            raise SpecError(f"unexpected text between rows: {body[pos:start].strip()!r}")
        inner, pos = _balanced(body, start)
        row = []
        for token in (t.strip() for t in inner.split(",")):
            if not token:
                continue
            if token in aliases:
                row.append(aliases[token])
            elif token.split("::")[-1] in enum:
                row.append(enum[token.split("::")[-1]])
            else:
                raise SpecError(f"cell {token!r} is neither an alias nor an enum member")
        if len(row) > n_cols:
            raise SpecError(f"row {len(rows)} has {len(row)} cells for {n_cols} columns")
        rows.append(row)
    if len(rows) > n_rows:
        raise SpecError(f"{len(rows)} rows for {n_rows}")
    return n_rows, n_cols, rows


def check_promote_type(header: str) -> None:
    """Fail unless PromoteType still reads as this tool evaluates it."""
    code = " ".join(strip_comments(header).split())
    m = re.search(r"PromoteType\s*\(\s*(?:const\s+)?ge::DataType\s+type_a\s*,\s*(?:const\s+)?ge::DataType\s+type_b\s*\)\s*\{", code)
    if not m:
        raise SpecError("PromoteType(type_a, type_b) not found")
    body, _ = _balanced(code, m.end() - 1)
    expected = [
        "type_a >= ge::DataType::DT_MAX || type_b >= ge::DataType::DT_MAX) { return ge::DataType::DT_UNDEFINED; }",
        "if (type_a == type_b) { return type_a; }",
        "return kPromoteTypesLookup[static_cast<int>(type_a)][static_cast<int>(type_b)];",
    ]
    for piece in expected:
        if piece not in body:
            raise SpecError(f"PromoteType has changed: {piece!r} not in its body")


class Opbase:
    """PromoteType as the header defines it."""

    def __init__(self, header: str, enum_texts: list[str]):
        self.enum = parse_enums(enum_texts)
        for name in ("DT_MAX", "DT_UNDEFINED", "DT_FLOAT"):
            if name not in self.enum:
                raise SpecError(f"the enum has no {name}")
        check_promote_type(header)
        self.n_rows, self.n_cols, self.rows = parse_lookup(header, self.enum)
        self.names = {v: k for k, v in self.enum.items() if k.startswith("DT_") and k != "DT_MAX"}
        self.types = sorted((v for k, v in self.enum.items() if k in GE_NAMES), key=lambda v: v)

    def cell(self, a: int, b: int) -> tuple[int, bool]:
        """kPromoteTypesLookup[a][b], and whether the initialiser wrote it (else it is zero)."""
        if a < len(self.rows) and b < len(self.rows[a]):
            return self.rows[a][b], True
        return 0, False

    def promote(self, a: int, b: int) -> int:
        if a < 0 or b < 0 or a >= self.enum["DT_MAX"] or b >= self.enum["DT_MAX"]:
            return self.enum["DT_UNDEFINED"]
        if a == b:
            return a
        return self.cell(a, b)[0]

    def canonical(self, value: int) -> str:
        return GE_NAMES[self.names[value]]

    def results(self) -> dict[tuple[str, str], "str | None"]:
        """{(a, b): canonical result, or None for DT_UNDEFINED} over every mapped pair."""
        out = {}
        for a in self.types:
            for b in self.types:
                r = self.promote(a, b)
                if r == self.enum["DT_UNDEFINED"]:
                    out[self.canonical(a), self.canonical(b)] = None
                elif self.names.get(r) in GE_NAMES:
                    out[self.canonical(a), self.canonical(b)] = self.canonical(r)
                else:
                    raise SpecError(f"PromoteType({self.names[a]}, {self.names[b]}) = "
                                    f"{self.names.get(r, r)}, which has no canonical name")
        return out

    def raw(self) -> dict[tuple[str, str], "str | None"]:
        """kPromoteTypesLookup itself over every mapped pair, diagonal included."""
        out = {}
        for a in self.types:
            for b in self.types:
                r = self.cell(a, b)[0]
                if r == self.enum["DT_UNDEFINED"]:
                    out[self.canonical(a), self.canonical(b)] = None
                elif self.names.get(r) in GE_NAMES:
                    out[self.canonical(a), self.canonical(b)] = self.canonical(r)
                else:
                    raise SpecError(f"kPromoteTypesLookup[{self.names[a]}][{self.names[b]}] = "
                                    f"{self.names.get(r, r)}, which has no canonical name")
        return out

    def zero_filled(self) -> list[tuple[str, str]]:
        """Mapped pairs (a != b) whose cell the initialiser leaves to zero."""
        return [(self.canonical(a), self.canonical(b)) for a in self.types for b in self.types
                if a != b and not self.cell(a, b)[1]]

    def error(self, a: str, b: str) -> str:
        ge = {v: k for k, v in GE_NAMES.items()}
        return f"PromoteType({ge[a]}, {ge[b]}) gives DT_UNDEFINED: aclnn cannot promote {a} with {b}"


# ------------------------------------------------------------------ outputs

def derived(ob: Opbase, commit: str, enum_commit: str | None) -> str:
    """The derived answers as JSON, shaped as a recording (one case per line)."""
    head = {
        "ruleset": "cann@opbase", "derived": "from the C++ headers by evaluating PromoteType; no CANN was run",
        "package": PACKAGE, "version": commit,
        "source": HEADER, "enum": f"{ENUM_PACKAGE} {ENUM_HEADER}" + (f" at {enum_commit}" if enum_commit else ""),
        "tool": "tools/derive_cann_opbase.py", "python": platform.python_version(),
    }
    lines = []
    for (a, b), r in ob.results().items():
        case = ["add", a, b, {}, r, None if r is not None else ob.error(a, b)]
        lines.append("  " + json.dumps(case, ensure_ascii=False))
    text = json.dumps(head, ensure_ascii=False)[:-1] + ', "cases": [\n' + ",\n".join(lines) + "\n]}\n"
    json.loads(text)
    return text


def toml_block(ob: Opbase, commit: str) -> str:
    types = [ob.canonical(v) for v in ob.types]
    return toml_table(
        "main", types, ob.raw(), commutative=False, refusal=REFUSAL,
        reason="aclnn's PromoteType gives DT_UNDEFINED for {a} with {b}",
        comment=(f"kPromoteTypesLookup of {PACKAGE} {commit[:12]}: rows = type_a, columns = type_b, in\n"
                 "ge::DataType order; × = DT_UNDEFINED.  Cells the initialiser leaves out are zero, i.e.\n"
                 "DT_FLOAT (f32).  The diagonal is never read: PromoteType returns type_a first."),
    )


def summary(ob: Opbase) -> str:
    res = ob.results()
    order = [(a, b) for (a, b), r in res.items() if a < b and r != res[b, a]]
    zero = ob.zero_filled()
    lines = [f"{len(ob.types)} dtypes, {len(res)} ordered pairs, {sum(r is None for r in res.values())} refused",
             f"order-dependent pairs: {len(order)}"]
    lines += [f"  {a},{b} -> {res[a, b]}   {b},{a} -> {res[b, a]}" for a, b in order]
    lines.append(f"cells left to zero by the initialiser (f32): {len(zero)}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("header", type=Path, help="a copy of data_type_utils.h")
    p.add_argument("--enum", type=Path, action="append", required=True,
                   help="a copy of graph/types.h or graph/c_types.h (repeat for both)")
    p.add_argument("--commit", required=True, help="the hicann/opbase commit the header comes from")
    p.add_argument("--enum-commit", help="the hicann/metadef commit the enum comes from")
    p.add_argument("--derived", action="store_true", help=f"write {DERIVED.relative_to(ROOT)}")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_const", dest="mode", const="write",
                      help=f"rewrite the generated block of {RULES.relative_to(ROOT)}")
    mode.add_argument("--check", action="store_const", dest="mode", const="check",
                      help="exit 1 when the generated block is stale")
    mode.add_argument("--summary", action="store_const", dest="mode", const="summary")
    args = p.parse_args(argv)
    try:
        ob = Opbase(args.header.read_text(encoding="utf-8"),
                    [f.read_text(encoding="utf-8") for f in args.enum])
        if args.derived:
            DERIVED.write_text(derived(ob, args.commit, args.enum_commit), encoding="utf-8")
            print(f"{DERIVED}: written", file=sys.stderr)
        if args.mode == "summary":
            sys.stdout.write(summary(ob))
            return 0
        if args.mode is None and args.derived:
            return 0
        return write_or_check(RULES, toml_block(ob, args.commit), "tools/derive_cann_opbase.py",
                              args.mode or "print")
    except (SpecError, OSError) as exc:
        print(f"derive_cann_opbase: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
