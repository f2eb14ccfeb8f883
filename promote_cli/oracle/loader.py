"""Reading one rule file: TOML in, a validated and compiled `Ruleset` out.

Everything a file says is checked here, once, with errors of the form
`FILE: KEY: what is wrong`; `engine.py` can then answer without re-checking.
The schema is documented in docs/rules.md.
"""

from __future__ import annotations

import string
import sys
from pathlib import Path

from promote_cli.errors import RuleFileError, UsageError
from promote_cli.oracle.expr import Expr, ExprError, compile_expr
from promote_cli.oracle.model import REFUSE, Clause, Lattice, OperandPolicy, Option, Refuse, Ruleset, Table
from promote_cli.vocab import dtypes, operands
from promote_cli.vocab.dtypes import DType
from promote_cli.vocab.operands import Operand

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

SCHEMA = 1
TOP_KEYS = {"schema", "name", "version", "default", "description", "source", "follows", "extends", "types",
            "unsupported_type", "notes", "probe", "operands", "options", "ops", "tables", "lattices",
            "rules", "after"}
MERGED_KEYS = ("tables", "lattices", "options", "ops")
FORM_POLICIES = {"rank0": ("distinct", "tensor"), "weak": ("distinct", "tensor", "refuse"),
                 "python": ("distinct", "refuse")}
OPTION_TYPES = ("bool", "dtype", "choice", "int")
CLAUSE_KEYS = {"name", "ops", "if", "symmetric", "result", "refuse", "weak", "reason"}

# Function names an expression may call; engine.py implements them.
FUNCTIONS = ("is_bool", "is_int", "is_signed", "is_unsigned", "is_float", "is_complex", "kind", "priority",
             "is_tensor", "is_rank0", "is_python", "is_weak", "dtype", "bits", "exp_bits", "man_bits",
             "signed_int", "unsigned_int", "smallest_int", "smallest_float", "complex_of", "real_of",
             "weak", "strong", "table", "join", "max", "min", "abs")


class _Checker:
    """Collects the file name for error messages."""

    def __init__(self, path: str):
        self.path = path
        self.seen: dict[str, Operand] = {}  # operand spellings already parsed (tables repeat them)

    def fail(self, key: str, message: str):
        raise RuleFileError(f"{self.path}: {key}: {message}")

    def table_of(self, raw, key: str) -> dict:
        if not isinstance(raw, dict):
            self.fail(key, f"expected a table, got {type(raw).__name__}")
        return raw

    def str_of(self, raw, key: str, default: str | None = None) -> str:
        if raw is None and default is not None:
            return default
        if not isinstance(raw, str):
            self.fail(key, f"expected a string, got {type(raw).__name__ if raw is not None else 'nothing'}")
        return raw

    def list_of(self, raw, key: str) -> list:
        if not isinstance(raw, list):
            self.fail(key, f"expected a list, got {type(raw).__name__}")
        return raw

    def unknown_keys(self, raw: dict, allowed, key: str):
        extra = sorted(set(raw) - set(allowed))
        if extra:
            self.fail(f"{key}{'.' if key else ''}{extra[0]}",
                      f"unknown key (allowed: {', '.join(sorted(allowed))})")

    def dtype(self, raw, key: str) -> DType:
        found = dtypes.find(raw) if isinstance(raw, str) else None
        if found is None:
            self.fail(key, f"unknown dtype {raw!r}{dtypes.suggest(str(raw))}")
        return found

    def operand(self, raw, key: str) -> Operand:
        if not isinstance(raw, str):
            self.fail(key, f"expected an operand string, got {type(raw).__name__}")
        known = self.seen.get(raw)
        if known is not None:
            return known
        try:
            self.seen[raw] = operands.parse(raw)
        except UsageError as exc:
            self.fail(key, str(exc))
        return self.seen[raw]

    def template(self, raw, key: str, fields) -> str:
        text = self.str_of(raw, key)
        try:
            names = [f for _, f, _, _ in string.Formatter().parse(text) if f is not None]
        except ValueError as exc:
            self.fail(key, f"bad message template: {exc}")
        for name in names:
            if name not in fields:
                self.fail(key, f"unknown placeholder {{{name}}} (allowed: {', '.join(sorted(fields))})")
        return text


def read_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RuleFileError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise RuleFileError(f"{path}: not valid TOML: nested too deeply") from None
    except OSError as exc:
        raise RuleFileError(f"{path}: cannot read: {exc.strerror}") from None


def merge(base: dict, override: dict) -> dict:
    """A file with `extends`: the base's keys, replaced by the file's; named sections merge by name."""
    merged = dict(base)
    for key, value in override.items():
        if key in MERGED_KEYS and isinstance(value, dict) and isinstance(base.get(key), dict):
            merged[key] = {**base[key], **value}
        else:
            merged[key] = value
    merged.pop("extends", None)
    merged.pop("default", None)
    if "default" in override:
        merged["default"] = override["default"]
    return merged


def build(raw: dict, path: str) -> Ruleset:
    """Validate and compile a (merged) rule-file dict."""
    check = _Checker(path)
    check.unknown_keys(raw, TOP_KEYS, "")
    schema = raw.get("schema", SCHEMA)
    if schema != SCHEMA:
        check.fail("schema", f"this promote reads schema {SCHEMA}, the file is written for {schema!r}")
    name = check.str_of(raw.get("name"), "name")
    if not name or "@" in name or not name.replace("-", "").replace("_", "").isalnum():
        check.fail("name", f"{name!r} is not a framework name (letters, digits, - and _)")
    version = str(check.str_of(raw.get("version"), "version"))
    default = raw.get("default", False)
    if not isinstance(default, bool):
        check.fail("default", "expected true or false")
    follows = check.str_of(raw.get("follows"), "follows", "spec")
    if follows not in ("spec", "implementation"):
        check.fail("follows", f"expected 'spec' or 'implementation', got {follows!r}")

    raw_types = check.list_of(raw.get("types"), "types")
    types = []
    for index, item in enumerate(raw_types):
        dt = check.dtype(item, f"types[{index}]")
        if dt in types:
            check.fail(f"types[{index}]", f"duplicate dtype {dt.name}")
        types.append(dt)
    notes = tuple(check.str_of(n, f"notes[{i}]") for i, n in enumerate(check.list_of(raw.get("notes", []), "notes")))
    probe = raw.get("probe")
    if probe is not None and (not isinstance(probe, str) or not probe.isidentifier()):
        check.fail("probe", f"expected the name of a module in promote_cli.probes, got {probe!r}")

    policy = _operand_policy(check, raw.get("operands", {}))
    options = _options(check, raw.get("options", {}))
    ops, op_index = _ops(check, raw.get("ops"))
    tables = {n: _table(check, n, t) for n, t in check.table_of(raw.get("tables", {}), "tables").items()}
    lattices = {n: _lattice(check, n, t) for n, t in check.table_of(raw.get("lattices", {}), "lattices").items()}

    rs = Ruleset(
        name=name, version=version, path=path,
        description=check.str_of(raw.get("description"), "description", ""),
        source=check.str_of(raw.get("source"), "source", ""),
        follows=follows, default=default, types=tuple(types),
        unsupported_type=check.template(raw.get("unsupported_type", f"{name} has no {{dtype}} type"),
                                        "unsupported_type", {"dtype"}),
        notes=notes, probe=probe, operands=policy, options=options, ops=ops,
        tables=tables, lattices=lattices, rules=[], after=[], op_index=op_index,
    )
    for phase in ("rules", "after"):
        clauses = check.list_of(raw.get(phase, []), phase)
        names = set()
        for index, item in enumerate(clauses):
            clause = _clause(check, rs, phase, index, item)
            if clause.name in names:
                check.fail(f"{phase}[{index}].name", f"duplicate rule name {clause.name!r}")
            names.add(clause.name)
            getattr(rs, phase).append(clause)
    _check_references(check, rs)
    return rs


def _operand_policy(check: _Checker, raw) -> OperandPolicy:
    raw = check.table_of(raw, "operands")
    check.unknown_keys(raw, set(FORM_POLICIES) | {"refuse_message"}, "operands")
    policy = OperandPolicy()
    for key, allowed in FORM_POLICIES.items():
        if key not in raw:
            continue
        value = raw[key]
        if key == "python" and isinstance(value, dict):
            check.unknown_keys(value, operands.PY_KINDS, "operands.python")
            value = {kind: check.operand(v, f"operands.python.{kind}") for kind, v in value.items()}
            for kind, op in value.items():
                if op.form == operands.PYTHON:
                    check.fail(f"operands.python.{kind}", "a Python scalar must map to a tensor or weak operand")
        elif value not in allowed:
            check.fail(f"operands.{key}", f"expected one of {', '.join(allowed)}"
                       + (" or a table of kinds" if key == "python" else "") + f", got {value!r}")
        setattr(policy, key, value)
    policy.refuse_message = check.str_of(raw.get("refuse_message"), "operands.refuse_message", "")
    return policy


def _options(check: _Checker, raw) -> dict[str, Option]:
    options = {}
    for name, spec in check.table_of(raw, "options").items():
        key = f"options.{name}"
        if not name.isidentifier():
            check.fail(key, "an option name must be an identifier")
        spec = check.table_of(spec, key)
        check.unknown_keys(spec, {"type", "default", "values", "hint", "doc"}, key)
        kind = spec.get("type")
        if kind not in OPTION_TYPES:
            check.fail(f"{key}.type", f"expected one of {', '.join(OPTION_TYPES)}, got {kind!r}")
        values = check.list_of(spec.get("values", []), f"{key}.values")
        if kind == "dtype":
            values = tuple(check.dtype(v, f"{key}.values[{i}]") for i, v in enumerate(values))
        elif kind == "choice":
            if not values:
                check.fail(f"{key}.values", "a choice option lists its values")
            values = tuple(str(v) for v in values)
        else:
            values = tuple(values)
        option = Option(name, kind, None, values, (), check.str_of(spec.get("doc"), f"{key}.doc", ""))
        if "default" not in spec:
            check.fail(f"{key}.default", "missing")
        try:
            option.default = option.parse(spec["default"])
            hints = check.list_of(spec.get("hint", []), f"{key}.hint")
            option.hint = tuple(option.parse(h) for h in hints)
        except UsageError as exc:
            check.fail(f"{key}.default/hint", str(exc))
        if kind == "bool" and not option.hint:
            option.hint = (True, False)
        options[name] = option
    return options


def _ops(check: _Checker, raw):
    if raw is None:
        return None, {}
    index: dict[str, str] = {}
    ops = {}
    for group, spec in check.table_of(raw, "ops").items():
        key = f"ops.{group}"
        if not group.isidentifier():
            check.fail(key, "an op group name must be an identifier")
        spec = check.table_of(spec, key)
        check.unknown_keys(spec, {"names", "doc"}, key)
        names = check.list_of(spec.get("names"), f"{key}.names")
        if not names:
            check.fail(f"{key}.names", "an op group needs at least one name")
        for i, op in enumerate(names):
            op = check.str_of(op, f"{key}.names[{i}]")
            if op in index:
                check.fail(f"{key}.names[{i}]", f"op {op!r} is already in group {index[op]!r}")
            index[op] = group
        ops[group] = tuple(names)
    return ops, index


def _table(check: _Checker, name: str, raw) -> Table:
    key = f"tables.{name}"
    raw = check.table_of(raw, key)
    check.unknown_keys(raw, {"columns", "rows", "commutative", "refusal", "reason"}, key)
    marker = check.str_of(raw.get("refusal"), f"{key}.refusal", "x")
    columns = [check.operand(c, f"{key}.columns[{i}]") for i, c in
               enumerate(check.list_of(raw.get("columns"), f"{key}.columns"))]
    col_names = tuple(str(c) for c in columns)
    if len(set(col_names)) != len(col_names):
        dup = next(c for c in col_names if col_names.count(c) > 1)
        check.fail(f"{key}.columns", f"duplicate column {dup}")
    rows: dict[str, tuple] = {}
    for row_key, cells in check.table_of(raw.get("rows"), f"{key}.rows").items():
        row_op = str(check.operand(row_key, f"{key}.rows.{row_key}"))
        if row_op in rows:
            check.fail(f"{key}.rows.{row_key}", f"duplicate row {row_op}")
        cells = check.list_of(cells, f"{key}.rows.{row_key}")
        if len(cells) != len(col_names):
            check.fail(f"{key}.rows.{row_key}",
                       f"{len(cells)} cells for {len(col_names)} columns (missing or extra cells)")
        parsed = []
        for col, cell in zip(col_names, cells):
            if cell == marker:
                parsed.append(REFUSE)
            else:
                parsed.append(check.operand(cell, f"{key}.rows.{row_key} (column {col})"))
        rows[row_op] = tuple(parsed)
    commutative = raw.get("commutative", False)
    if not isinstance(commutative, bool):
        check.fail(f"{key}.commutative", "expected true or false")
    table = Table(name, col_names, rows, commutative,
                  check.str_of(raw.get("reason"), f"{key}.reason", "no promotion between {a} and {b}"), marker)
    for row, cells in rows.items():
        for col, cell in zip(col_names, cells):
            table.cells[(row, col)] = cell
    if commutative:
        if set(rows) != set(col_names):
            check.fail(key, "a commutative table has the same rows as columns")
        for (row, col), cell in table.cells.items():
            mirror = table.cells[(col, row)]
            if str(cell) != str(mirror):
                check.fail(f"{key}.rows.{row}",
                           f"column {col} says {_cell(cell, marker)} but row {col}, column {row} says "
                           f"{_cell(mirror, marker)} (the table is declared commutative)")
    check.template(table.reason, f"{key}.reason", {"a", "b", "table"})
    return table


def _cell(cell, marker: str) -> str:
    return marker if cell is REFUSE else str(cell)


def _lattice(check: _Checker, name: str, raw) -> Lattice:
    key = f"lattices.{name}"
    raw = check.table_of(raw, key)
    check.unknown_keys(raw, {"edges", "reason"}, key)
    edges: dict[str, tuple[str, ...]] = {}
    nodes: dict[str, Operand] = {}
    for node, succ in check.table_of(raw.get("edges"), f"{key}.edges").items():
        op = check.operand(node, f"{key}.edges.{node}")
        nodes[str(op)] = op
        targets = []
        for i, s in enumerate(check.list_of(succ, f"{key}.edges.{node}")):
            t = check.operand(s, f"{key}.edges.{node}[{i}]")
            nodes[str(t)] = t
            targets.append(str(t))
        edges[str(op)] = tuple(targets)
    for node in nodes:
        edges.setdefault(node, ())
    upper: dict[str, frozenset[str]] = {}

    def closure(node: str, path: tuple[str, ...]) -> frozenset[str]:
        if node in upper:
            return upper[node]
        if node in path:
            check.fail(f"{key}.edges", f"cycle through {' -> '.join(path + (node,))}")
        found = {node}
        for nxt in edges[node]:
            found |= closure(nxt, path + (node,))
        upper[node] = frozenset(found)
        return upper[node]

    for node in edges:
        closure(node, ())
    reason = check.template(raw.get("reason", "no common type for {a} and {b}"), f"{key}.reason", {"a", "b"})
    return Lattice(name, edges, reason, upper, nodes)


def _clause(check: _Checker, rs: Ruleset, phase: str, index: int, raw) -> Clause:
    key = f"{phase}[{index}]"
    raw = check.table_of(raw, key)
    check.unknown_keys(raw, CLAUSE_KEYS, key)
    name = check.str_of(raw.get("name"), f"{key}.name")
    key = f"{phase}[{index}] ({name})"
    ops = raw.get("ops")
    if ops is not None:
        ops = check.list_of(ops, f"{key}.ops")
        if rs.ops is None:
            check.fail(f"{key}.ops", "the file declares no [ops] groups")
        for op in ops:
            if op not in rs.ops:
                check.fail(f"{key}.ops", f"unknown op group {op!r} (groups: {', '.join(rs.ops)})")
        ops = frozenset(ops)
    if ("result" in raw) == ("refuse" in raw):
        check.fail(key, "a rule has either `result` or `refuse`")
    symmetric = raw.get("symmetric", False)
    if not isinstance(symmetric, bool):
        check.fail(f"{key}.symmetric", "expected true or false")
    names = {"a", "b", "op", "true", "false", "True", "False"} | set(dtypes.DTYPES) | set(rs.options)
    if phase == "after":
        names.add("result")
    fields = {"a", "b", "op", "result"} | set(rs.options)

    def expr(field_name: str) -> Expr | None:
        if field_name not in raw:
            return None
        allowed = names | {"result"} if field_name == "weak" else names
        try:
            return compile_expr(raw[field_name], allowed, FUNCTIONS)
        except ExprError as exc:
            check.fail(f"{key}.{field_name}", str(exc))

    refuse = raw.get("refuse")
    if refuse is not None:
        refuse = check.template(refuse, f"{key}.refuse", fields)
    reason = check.template(raw.get("reason", ""), f"{key}.reason", fields) if "reason" in raw else ""
    return Clause(name, ops, expr("if"), symmetric, expr("result"), refuse, expr("weak"), reason)


def _check_references(check: _Checker, rs: Ruleset):
    """Every table or lattice an expression names must exist."""
    import ast

    for phase in ("rules", "after"):
        for clause in getattr(rs, phase):
            for expr in (clause.cond, clause.result, clause.weak):
                if expr is None:
                    continue
                for node in ast.walk(ast.parse(expr.text.strip(), mode="eval")):
                    if isinstance(node, ast.Call) and node.func.id in ("table", "join"):
                        where = rs.tables if node.func.id == "table" else rs.lattices
                        first = node.args[0] if node.args else None
                        if not isinstance(first, ast.Constant) or first.value not in where:
                            kind = "table" if node.func.id == "table" else "lattice"
                            check.fail(f"{phase}.{clause.name}",
                                       f"{expr.text!r} names no {kind} of this file "
                                       f"({', '.join(where) or 'none defined'})")
