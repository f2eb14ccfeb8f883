"""The shipped rule files read like specs: short expressions, every type set and op list written once."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from promote_cli.oracle import registry
from promote_cli.oracle.loader import read_toml
from promote_cli.vocab.dtypes import DTYPES

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted([*(ROOT / "rules").glob("*.toml"), *(ROOT / "examples" / "rules").glob("*.toml")])
LONGEST = 120


def expressions(raw: dict):
    """(where, text) of every expression of a rule file: clause conditions and results, lets, [nary],
    [expressions] operators."""
    for phase in ("rules", "after"):
        for clause in raw.get(phase, []):
            for field in ("if", "result", "weak"):
                if field in clause:
                    yield f"{phase} {clause['name']!r} {field}", clause[field]
    for name, text in raw.get("let", {}).items():
        yield f"let {name}", text
    for field in ("knows", "keeps"):
        if field in raw.get("nary", {}):
            yield f"nary {field}", raw["nary"][field]
    section = raw.get("expressions", {})
    blocks = [("expressions.defaults", section.get("defaults", {}))]
    blocks += [(f"expressions.groups.{name}", spec) for name, spec in section.get("groups", {}).items()]
    blocks += [(f"expressions.operators.{name}", spec) for name, spec in section.get("operators", {}).items()]
    for where, spec in blocks:
        for field in ("promotion", "promotion_if", "both_python", "result", "refuse_if", "literal_range", "condition"):
            if isinstance(spec.get(field), str):  # `false` leaves an inherited key out
                yield f"{where} {field}", spec[field]


def normal(text: str) -> str:
    return " ".join(text.split())


def type_collections(raw: dict, rs):
    """(where, frozenset of dtype names) for every type set written in the file. A set written as the name of
    one other set is an alias (a role: ONNX's `add_types` is `wide_numeric` at opset 13, `numeric` from 14),
    not a second copy of its types."""
    written_sets = registry.merge_chain(rs.path).get("sets", {})
    for name, members in rs.sets.items():
        given = written_sets.get(name, [])
        if len(given) == 1 and given[0] in rs.sets:
            continue
        yield f"sets.{name}", frozenset(d.name for d in members)
    for where, text in expressions(raw):
        for node in ast.walk(ast.parse(normal(text), mode="eval")):
            if isinstance(node, (ast.Tuple, ast.Set, ast.List)) and len(node.elts) > 1 and all(
                    isinstance(e, ast.Name) and e.id in DTYPES for e in node.elts):
                yield where, frozenset(e.id for e in node.elts)
    written = {"types": raw.get("types", [])}
    written.update({f"options.{n}.values": o.get("values", []) for n, o in raw.get("options", {}).items()
                    if o.get("type") == "dtype"})  # a choice option's values are words, not dtypes
    resolved = {"types": rs.types, **{f"options.{n}.values": o.values for n, o in rs.options.items()}}
    for where, items in written.items():
        if len(items) > 1 or (items and items[0] not in rs.sets):  # a list, not just the name of a set
            yield where, frozenset(getattr(d, "name", d) for d in resolved[where])


def op_collections(raw: dict, rs):
    """(where, frozenset of op groups) for every op list written in the file."""
    for name, groups in rs.op_lists.items():
        yield f"op_lists.{name}", frozenset(groups)
    for phase in ("rules", "after"):
        for raw_clause, clause in zip(raw.get(phase, []), getattr(rs, phase)):
            written = raw_clause.get("ops")
            just_a_name = isinstance(written, str) or (len(written or ()) == 1 and written[0] in rs.op_lists)
            if written is not None and not just_a_name and len(clause.ops) > 1:
                yield f"{phase} {clause.name!r} ops", clause.ops


def written_twice(collections) -> list[str]:
    seen: dict[frozenset, str] = {}
    twice = []
    for where, members in collections:
        if len(members) < 2:
            continue
        if members in seen:
            twice.append(f"{where} repeats {seen[members]}: {', '.join(sorted(members))}")
        else:
            seen[members] = where
    return twice


def load(path: Path):
    return read_toml(path), registry.load_path(path)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_no_expression_is_longer_than_a_line(path):
    raw, _ = load(path)
    long = [f"{where}: {len(normal(text))} characters" for where, text in expressions(raw) if len(normal(text)) > LONGEST]
    assert not long, f"{path.name}: name a part of these with [let] or [sets]:\n" + "\n".join(long)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_no_type_set_or_op_list_is_written_twice(path):
    raw, rs = load(path)
    twice = written_twice(type_collections(raw, rs)) + written_twice(op_collections(raw, rs))
    assert not twice, f"{path.name}: name it once in [sets] or [op_lists]:\n" + "\n".join(twice)


def test_the_checks_catch_what_they_look_for(tmp_path):
    path = tmp_path / "demo.toml"
    path.write_text("""
schema = 2
name = "demo"
version = "1"
description = "d"
source = "s"
types = ["i8", "i16", "i32", "f32"]
[sets]
small = ["i8", "i16"]
[ops.a]
names = ["add"]
[ops.b]
names = ["sub"]
[op_lists]
both = ["a", "b"]
[[rules]]
name = "r"
ops = ["a", "b"]
if = "dtype(a) in (i8, i16) or dtype(b) in (i16, i32) or dtype(a) in (i32, i16) or bits(a) + bits(b) + bits(a) + bits(b) > 100000000000000"
result = "a"
""")
    raw, rs = load(path)
    assert len(normal(raw["rules"][0]["if"])) > LONGEST
    assert [w.split(" repeats")[0] for w in written_twice(type_collections(raw, rs))] == ["rules 'r' if", "rules 'r' if"]
    assert written_twice(op_collections(raw, rs)) == ["rules 'r' ops repeats op_lists.both: a, b"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_kinds_are_named_not_numbered(path):
    """A rule says `is_float(x)` or `kind(x) == 'float'`, never a number standing for a kind (`priority(x) < 2`)."""
    numbered = []
    for where, text in expressions(read_toml(path)):
        for node in ast.walk(ast.parse(normal(text), mode="eval")):
            if isinstance(node, ast.Compare) and any(
                    isinstance(side, ast.Constant) and isinstance(side.value, int) for side in node.comparators) and any(
                    isinstance(call, ast.Call) and getattr(call.func, "id", "") == "priority"
                    for call in ast.walk(node.left)):
                numbered.append(f"{where}: {normal(text)}")
    assert not numbered, "\n".join(numbered)


MESSAGE_KEYS = ("refuse", "reason", "refuse_message", "condition_refuse", "unsupported_type", "literal_range_message")


def messages(raw, where=""):
    """(where, text) of every message a rule file writes out (a `{ message = NAME }` reference is not one)."""
    if isinstance(raw, dict):
        for key, value in raw.items():
            inside = f"{where}.{key}" if where else str(key)
            if key in MESSAGE_KEYS and isinstance(value, str) and value:
                yield inside, value
            else:
                yield from messages(value, inside)
    elif isinstance(raw, list):
        for index, item in enumerate(raw):
            yield from messages(item, f"{where}[{index}]")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_message_is_written_twice(path):
    """A message said in two places is written once: in `[messages]`, or in an `[expressions]` group."""
    first, twice = {}, []
    for where, text in messages(read_toml(path)):
        if text in first:
            twice.append(f"{where} repeats {first[text]}: {text!r}")
        first.setdefault(text, where)
    assert not twice, "\n".join(twice)
