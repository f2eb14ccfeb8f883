"""Write rules/paddle@2.6.toml from Paddle's type-promotion doc (Markdown).

The doc (spec/paddle-type-promotion.md, describing Paddle 2.6) has three tables: the
tensor-tensor table, the tensor-scalar table and the scope table of binary APIs with
the rule each follows.  This tool parses them (`parse_doc`) and writes the ruleset, so
no cell is typed by hand.  The tests use the same parser on the doc at test time.

    python tools/import_paddle_doc.py [DOC.md] [-o rules/paddle@2.6.toml]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DOC = ROOT.parent / "shared" / "spec" / "paddle-type-promotion.md"
DEFAULT_OUT = ROOT / "rules" / "paddle@2.6.toml"

#: the doc's dtype abbreviations are already the canonical names; the scalar table's
#: column heads are Python scalar kinds.
SCALAR_COLUMNS = {"bool": "py:bool", "int": "py:int", "float": "py:float", "complex": "py:complex"}
#: the doc's "no promotion" cell.
REFUSAL = "-"

#: Python operators and the API whose rule they follow ("consistent results for operator
#: overloading and binary APIs", says the doc).
OPERATOR_API = {
    "+": "add", "-": "subtract", "*": "multiply", "/": "divide", "//": "floor_divide",
    "**": "pow", "%": "remainder",
    "==": "equal", "!=": "not_equal", "<": "less_than", "<=": "less_equal",
    ">": "greater_than", ">=": "greater_equal",
    "&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor",
}


def _rows(lines: list[str], start: int) -> tuple[list[str], list[list[str]]]:
    """The header cells and body rows of the pipe table whose header is lines[start]."""
    def cells(line: str) -> list[str]:
        parts = [c.strip() for c in line.strip().split("|")]
        if parts and parts[-1] == "":
            parts = parts[:-1]
        return parts

    header = cells(lines[start])
    body = []
    i = start + 1
    while i < len(lines) and (not lines[i].strip() or set(lines[i].strip()) <= set("-|")):
        i += 1
    while i < len(lines):
        line = lines[i].strip()
        if not line:
            i += 1
            continue
        if "|" not in line:
            break
        body.append(cells(line))
        i += 1
    return header, body


def _rule_name(text: str) -> str:
    """'Common Rule' / 'Common' -> 'common'; '-' -> 'none'."""
    text = text.strip()
    if text == REFUSAL:
        return "none"
    return text.replace("Rule", "").strip().lower()


def parse_doc(text: str) -> dict:
    """The doc's tables: {"tensor": {"columns", "rows"}, "scalar": {...}, "scope": [...]}."""
    lines = text.splitlines()
    heads = [i for i, line in enumerate(lines) if line.strip().startswith("+/-/* |")]
    if len(heads) != 2:
        raise ValueError(f"expected 2 promotion tables, found {len(heads)}")
    out: dict = {}
    for key, start in zip(("tensor", "scalar"), heads):
        header, body = _rows(lines, start)
        columns = header[1:]
        if key == "scalar":
            columns = [SCALAR_COLUMNS[c] for c in columns]
        rows = {}
        for row in body:
            if len(row) != len(columns) + 1:
                raise ValueError(f"{key} table row {row[0]!r}: {len(row) - 1} cells for {len(columns)} columns")
            rows[row[0]] = row[1:]
        out[key] = {"columns": columns, "rows": rows}
    scope_head = next(i for i, line in enumerate(lines) if line.strip().startswith("Number | API |"))
    _, body = _rows(lines, scope_head)
    scope = []
    for row in body:
        number, api, tt, ts = row[:4]
        m = re.fullmatch(r"(\w+)(?:\((\w+)\))?", api)
        if not m:
            raise ValueError(f"scope table: unreadable API {api!r}")
        scope.append({"number": int(number), "api": m.group(1), "alias": m.group(2),
                      "tensor": _rule_name(tt), "scalar": _rule_name(ts)})
    out["scope"] = scope
    return out


def scalar_defaults(text: str) -> dict[str, str]:
    """The doc's sentence 'The scalar operand has default dtype: int -> int64, ...'."""
    m = re.search(r"default dtype:(.*?)\.\s", text)
    if not m:
        raise ValueError("no scalar default sentence")
    pairs = re.findall(r"(\w+)\s*->\s*(\w+)", m.group(1))
    return dict(pairs)


def groups(scope: list[dict]) -> dict[str, dict]:
    """Op groups by (tensor rule, scalar rule): {group: {"tensor", "scalar", "names"}}."""
    by_rules: dict[tuple[str, str], list[str]] = {}
    for entry in scope:
        names = by_rules.setdefault((entry["tensor"], entry["scalar"]), [])
        for name in (entry["api"], entry["alias"]):
            if name and name not in names:
                names.append(name)
    out = {}
    for (tensor, scalar), names in by_rules.items():
        if tensor == scalar:
            group = tensor
        elif tensor == "none":
            group = f"{scalar}_scalar_only"
        elif scalar == "none":
            group = f"{tensor}_tensor_only"
        else:
            group = f"{tensor}_tensor_{scalar}_scalar"
        out[group] = {"tensor": tensor, "scalar": scalar, "names": names}
    api_group = {name: g for g, spec in out.items() for name in spec["names"]}
    for symbol, api in OPERATOR_API.items():
        out[api_group[api]]["names"].append(symbol)
    return out


def render(doc: dict, defaults: dict[str, str]) -> str:
    q = json.dumps
    tensor, scalar = doc["tensor"], doc["scalar"]
    ops = groups(doc["scope"])
    types = tensor["columns"]
    lines: list[str] = []
    w = lines.append
    w(f"""# Generated by tools/import_paddle_doc.py from Paddle's type-promotion doc
# (spec/paddle-type-promotion.md, "As of Paddle version 2.6").  Do not edit by hand:
# edit the tool, or the doc, and run it again.
schema = 2
name = "paddle"
version = "2.6"
default = false
description = "PaddlePaddle 2.6 type promotion as documented"
source = "PaddlePaddle docs, 'Introduction to Data Type Promotion' (Paddle 2.6)"
follows = "spec"
types = {q(types)}
unsupported_type = "Paddle 2.6's type promotion doc has no {{dtype}} type"
notes = [
  "The doc's scalar defaults: {', '.join(f'{k} -> {v}' for k, v in defaults.items())}.",
  "The doc says nothing of 0-d tensors: they are tensors here.",
  "Operators follow the API of the same meaning (+ add, / divide, == equal, & bitwise_and, ...).",
  "The Divide rule applies where the scope table names it (divide with a scalar); tensor-tensor divide follows the Common rule.",
]

# What `promote check -f paddle@2.6` proves of these rules, on tensors with the default options (docs/rules.md).
[claims]
commutative = false
associative = false

[operands]
rank0 = "tensor"
python = "distinct"
""")
    w("[ops]")
    for group, spec in ops.items():
        doc = f"tensor-tensor: {spec['tensor']} rule; tensor-scalar: {spec['scalar']} rule"
        w(f"[ops.{group}]\nnames = {q(spec['names'])}\ndoc = {q(doc)}")
    w("")
    w(f"""[tables.tensor]
# "Type Promotion Rules in Tensor-to-Tensor" (row = a, column = b); "-": not promoted.
# Not commutative as printed: row c64 gives c64 with f64 and c128 with i64, while
# column c64 gives c128 with f64 and c64 with i64.  The doc is reproduced cell by cell.
commutative = false
refusal = "{REFUSAL}"
reason = "Paddle 2.6 promotes tensors only between floating-point types and between complex and real types: {{a}} with {{b}} raises TypeError"
columns = {q(tensor['columns'])}
[tables.tensor.rows]""")
    for row, cells in tensor["rows"].items():
        w(f"{row} = {q(cells)}")
    w("")
    w(f"""[tables.scalar]
# "Type Promotion Rules in Tensor-to-Scalar": tensor (row) with a Python scalar (column).
refusal = "{REFUSAL}"
reason = "no promotion of {{a}} with {{b}} in Paddle 2.6"
columns = {q(scalar['columns'])}
[tables.scalar.rows]""")
    for row, cells in scalar["rows"].items():
        w(f"{row} = {q(cells)}")
    w("")
    no_scalar = [g for g, s in ops.items() if s["scalar"] == "none"]
    no_tensor = [g for g, s in ops.items() if s["tensor"] == "none"]
    logic = [g for g, s in ops.items() if "logic" in (s["tensor"], s["scalar"])]
    divide_scalar = [g for g, s in ops.items() if s["scalar"] == "divide"]
    w(f"""[[rules]]
name = "two Python scalars"
if = "is_python(a) and is_python(b)"
refuse = "{{a}} with {{b}} has no tensor operand: not a Paddle tensor operation"

[[rules]]
name = "scalar outside the scope table"
ops = {q(no_scalar)}
symmetric = true
if = "is_python(b)"
refuse = "the scope table lists no tensor-scalar type promotion for this API ({{a}} with {{b}})"

[[rules]]
name = "Logic rule: no complex"
ops = {q(logic)}
symmetric = true
if = "is_complex(a)"
refuse = "Logic rule: complex types cannot be used for logical operations and are not within the scope of type promotion"

[[rules]]
name = "tensor-scalar table"
symmetric = true
if = "is_python(b)"
result = "table('scalar', a, b)"
reason = "a scalar of the tensor's broad type takes the tensor's type; otherwise the tensor-tensor rules, with the scalar's default dtype"

[[rules]]
name = "same dtype"
if = "dtype(a) == dtype(b)"
result = "dtype(a)"
reason = "identical types need no promotion"

[[rules]]
name = "tensor-tensor outside the scope table"
ops = {q(no_tensor)}
refuse = "the scope table lists no tensor-tensor type promotion for this API ({{a}} with {{b}})"

[[rules]]
name = "tensor-tensor table"
result = "table('tensor', a, b)"
reason = "the larger of the two types (floating-point, or complex with real)"

[[after]]
name = "Logic rule: bool"
ops = {q(logic)}
result = "bool"
reason = "logical APIs return bool"

[[after]]
name = "Divide rule"
ops = {q(divide_scalar)}
if = "(is_python(a) or is_python(b)) and not (is_float(result) or is_complex(result))"
result = "f32"
reason = "divide never returns a type smaller than float: int / scalar gives float32"
""")
    w(expressions_section())
    return "\n".join(lines)


#: the named ops of `promote expr` and the scope table's API each is
CALL_API = {"maximum": "maximum", "minimum": "minimum", "where": "where"}


def expressions_section() -> str:
    """`[expressions]` (docs/rules.md, "Expressions"), derived from the doc, not recorded: the doc
    says operators give the results of the API of the same meaning, so every node is the pair
    answer of its operator's API (the Logic rule's bool and the Divide rule included); literals are
    Python scalars, read by the tensor-scalar table.  The doc says nothing of unary operators (they
    keep their operand's type here), of integer literals out of range, or of where's condition
    (bool, as paddle.where documents it)."""
    out = ["""# `promote expr` (docs/rules.md, "Expressions"), derived from the doc (not recorded): each
# operator and named op is the pair answer of the API the doc says it follows; the doc says
# nothing of unary operators (they keep their operand's type), of literal ranges, or of 0-d
# tensors (tensors here).
[expressions]
doc = "derived from Paddle 2.6's type-promotion doc: each node is the promotion of the API of the same meaning"
literals = { bool = "py:bool", int = "py:int", float = "py:float", complex = "py:complex" }
"""]
    for symbol in OPERATOR_API:
        out.append(f'[expressions.operators."{symbol}"]\nop = "{symbol}"')
    out.append('[expressions.operators."-x"]\n[expressions.operators."+x"]')
    for name, api in CALL_API.items():
        out.append(f"[expressions.operators.{name}]\nop = \"{api}\"")
    out.append('condition = "is_bool(cond)"\ncondition_refuse = "where\'s condition must be a bool tensor, not {cond}"\n')
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("doc", nargs="?", default=str(DEFAULT_DOC))
    parser.add_argument("-o", "--output", default=str(DEFAULT_OUT))
    args = parser.parse_args(argv)
    text = Path(args.doc).read_text(encoding="utf-8")
    out = render(parse_doc(text), scalar_defaults(text))
    Path(args.output).write_text(out, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
