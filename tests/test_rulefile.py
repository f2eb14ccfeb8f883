"""Loading and validating rule files: every construct of docs/rules.md, and broken files."""

from __future__ import annotations

import re
import textwrap

import pytest

from promote_cli.errors import RuleFileError, UsageError
from promote_cli.oracle import registry
from promote_cli.oracle.engine import answer
from promote_cli.oracle.loader import build

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

BASE = """
schema = 1
name = "demo"
version = "1"
types = ["bool", "i8", "u8", "i16", "u16", "i32", "u64", "f16", "bf16", "f32", "f64"]
"""


def rules(text: str, base: str = BASE):
    return build(tomllib.loads(base + textwrap.dedent(text)), "demo.toml")


def ask(rs, a, b, op="add", **options):
    return answer(rs, a, b, op, options)


TABLE = """
[tables.main]
commutative = true
reason = "demo does not promote {a} with {b}"
columns = ["i8", "u8", "u16"]
rows.i8  = ["i8",  "i16", "x"]
rows.u8  = ["i16", "u8",  "u16"]
rows.u16 = ["x",   "u16", "u16"]
[[rules]]
name = "table"
result = "table('main', a, b)"
"""


def test_table_cells_and_refusal_cells():
    rs = rules(TABLE)
    assert ask(rs, "i8", "u8").result == "i16"
    assert ask(rs, "u16", "u8").result == "u16"
    refused = ask(rs, "i8", "u16")
    assert refused.result is None
    assert refused.refusal == "demo does not promote i8 with u16"
    assert refused.rule == "table"


def test_operand_outside_table_is_refused():
    assert ask(rules(TABLE), "i8", "f32").result is None


@pytest.mark.parametrize("broken, message", [
    ('rows.i8  = ["i8",  "i16", "x"]\nrows.u8  = ["i16", "u8"]', "missing or extra cells"),
    ('rows.i8  = ["i8",  "i16", "x"]\nrows.u8  = ["i8", "u8", "u16"]', "declared commutative"),
    ('rows.i8  = ["i8",  "i9", "x"]', "unknown dtype 'i9'"),
])
def test_broken_tables_name_file_and_key(broken, message):
    text = TABLE.replace('rows.i8  = ["i8",  "i16", "x"]\nrows.u8  = ["i16", "u8",  "u16"]', broken)
    with pytest.raises(RuleFileError) as err:
        rules(text)
    assert str(err.value).startswith("demo.toml: tables.main")
    assert message in str(err.value)


def test_commutative_table_needs_its_rows_as_columns():
    with pytest.raises(RuleFileError, match="same rows as columns"):
        rules(TABLE.replace('rows.u16 = ["x",   "u16", "u16"]', ""))


@pytest.mark.parametrize("text, key", [
    ('bogus = 1', "demo.toml: bogus: unknown key"),
    ('[operands]\nrank0 = "sometimes"', "operands.rank0"),
    ('[options.flag]\ntype = "bool"\ndefault = "maybe"', "options.flag.default"),
    ('[options.flag]\ntype = "colour"\ndefault = 1', "options.flag.type"),
    ('[options.t]\ntype = "dtype"\ndefault = "i9"', "options.t.default"),
    ('[[rules]]\nname = "r"\nresult = "a"\nrefuse = "no"', "either `result` or `refuse`"),
    ('[[rules]]\nname = "r"\nresult = "__import__(\'os\')"', "unknown function '__import__'"),
    ('[[rules]]\nname = "r"\nresult = "a.dtype"', "Attribute is not allowed"),
    ('[[rules]]\nname = "r"\nresult = "c"', "unknown name 'c'"),
    ('[[rules]]\nname = "r"\nif = "result == a"\nresult = "a"', "unknown name 'result'"),
    ('[[rules]]\nname = "r"\nresult = "table(\'nope\', a, b)"', "names no table"),
    ('[[rules]]\nname = "r"\nresult = "a"\nreason = "{nope}"', "unknown placeholder"),
    ('[[rules]]\nname = "r"\nresult = "a"\n[[rules]]\nname = "r"\nresult = "b"', "duplicate rule name"),
    ('[[rules]]\nname = "r"\nops = ["arith"]\nresult = "a"', "declares no [ops]"),
    ('[lattices.l.edges]\ni8 = ["i16"]\ni16 = ["i8"]', "cycle"),
])
def test_validation_errors_name_the_key(text, key):
    with pytest.raises(RuleFileError) as err:
        rules(text)
    assert key in str(err.value)


def test_duplicate_and_unknown_types():
    with pytest.raises(RuleFileError, match=r"types\[1\]: duplicate dtype i8"):
        build({"name": "d", "version": "1", "types": ["i8", "int8"]}, "d.toml")
    with pytest.raises(RuleFileError, match=r"did you mean"):
        build({"name": "d", "version": "1", "types": ["flaot16"]}, "d.toml")


LATTICE = """
[lattices.main]
reason = "no common type for {a} and {b}"
[lattices.main.edges]
bool = ["u8", "i8"]
u8 = ["u16", "i16"]
i8 = ["i16"]
u16 = ["i32"]
i16 = ["i32"]
i32 = ["f32"]
f16 = ["f32"]
bf16 = ["f32"]
f32 = ["f64"]
[[rules]]
name = "join"
result = "join('main', a, b)"
"""


def test_lattice_join_is_the_least_upper_bound():
    rs = rules(LATTICE)
    assert ask(rs, "u8", "i8").result == "i16"
    assert ask(rs, "bool", "u16").result == "u16"
    assert ask(rs, "f16", "bf16").result == "f32"
    assert ask(rs, "u16", "i8").result == "i32"
    assert ask(rs, "i8", "i8").result == "i8"
    assert ask(rs, "u64", "i8").refusal == "no common type for u64 and i8"


ALGORITHM = """
[options.promote_unsafe]
type = "bool"
default = false
[options.target]
type = "dtype"
default = "f32"
hint = ["f64"]
[ops.arith]
names = ["add", "+"]
[ops.compare]
names = ["equal", "=="]
[[rules]]
name = "same"
if = "dtype(a) == dtype(b)"
result = "a"
reason = "{a} needs no promotion"
[[rules]]
name = "u64 with signed"
symmetric = true
if = "a == u64 and is_signed(b)"
result = "target"
[[rules]]
name = "integers"
if = "is_int(a) and is_int(b)"
result = "smallest_int(a, b)"
[[rules]]
name = "floats"
if = "is_float(a) and is_float(b)"
result = "smallest_float(a, b)"
[[rules]]
name = "priority"
result = "a if priority(a) > priority(b) else b"
[[after]]
name = "no widening"
if = "not promote_unsafe and bits(result) > max(bits(a), bits(b))"
refuse = "{a} and {b} need {result}, wider than both"
[[after]]
name = "comparison"
ops = ["compare"]
result = "bool"
"""


def test_algorithm_rules_options_and_after_clauses():
    rs = rules(ALGORITHM)
    assert ask(rs, "u64", "i8").result == "f32"
    assert ask(rs, "i8", "u64", target="f64").result == "f64"
    assert ask(rs, "i8", "u8", promote_unsafe="true").result == "i16"
    assert ask(rs, "f16", "bf16", promote_unsafe=True).result == "f32"
    assert ask(rs, "i8", "f32").result == "f32"
    assert ask(rs, "i8", "u8", op="==", promote_unsafe="yes").result == "bool"
    assert ask(rs, "i8", "i8").reason == "i8 needs no promotion"


def test_refusal_names_rule_and_the_option_that_allows_it():
    ans = ask(rules(ALGORITHM), "i8", "u8")
    assert ans.result is None
    assert ans.rule == "no widening"
    assert ans.refusal == "i8 and u8 need i16, wider than both"
    assert ans.hint == {"option": "promote_unsafe", "value": "true", "result": "i16"}


@pytest.mark.parametrize("options, message", [
    ({"promote_unsafe": "maybe"}, "takes true or false"),
    ({"target": "i9"}, "takes a dtype"),
    ({"nope": "1"}, "has no option 'nope' (options: promote_unsafe, target)"),
])
def test_bad_options_are_usage_errors(options, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        ask(rules(ALGORITHM), "i8", "u8", **options)


def test_unknown_op_lists_the_ops():
    with pytest.raises(UsageError, match="no op 'divide'.*add, \\+, equal, =="):
        ask(rules(ALGORITHM), "i8", "u8", op="divide")


FORMS = """
[operands]
rank0 = "distinct"
weak = "distinct"
python = { int = "weak:i32", float = "weak:f32", bool = "bool" }
[[rules]]
name = "dimensioned wins"
symmetric = true
if = "is_rank0(a) and is_tensor(b) and kind(a) == kind(b)"
result = "b"
[[rules]]
name = "weak yields"
symmetric = true
if = "is_weak(a) and not is_weak(b) and priority(a) <= priority(b)"
result = "b"
[[rules]]
name = "weak stays weak"
if = "is_weak(a) and is_weak(b)"
result = "max(dtype(a), dtype(b), key=bits)"
[[rules]]
name = "weak float over int"
symmetric = true
if = "is_weak(a) and is_float(a)"
result = "a"
weak = "dtype(result) == dtype(a) and dtype(result) != dtype(b)"
[[rules]]
name = "other"
result = "a"
"""


def test_keyword_arguments_are_not_allowed():
    with pytest.raises(RuleFileError, match="keyword arguments"):
        rules(FORMS)


def test_operand_forms_reach_rules_per_policy():
    rs = rules(FORMS.replace("max(dtype(a), dtype(b), key=bits)", "weak(a)"))
    assert ask(rs, "0d:i16", "i8").result == "i8"
    assert ask(rs, "i8", "0d:i16").result == "i8"
    assert ask(rs, "py:int", "i8").result == "i8"
    assert ask(rs, "py:float", "i8").result == "weak:f32"
    assert ask(rs, "i8?", "f16").result == "f16"
    assert ask(rs, "weak:i8", "weak:i16").result == "weak:i8"
    with pytest.raises(UsageError, match="no Python complex scalars"):
        ask(rs, "py:complex", "i8")


def test_tensor_policy_folds_forms_and_refuse_policy_refuses():
    rs = rules(TABLE)  # defaults: 0d and weak are tensors, Python scalars refused
    assert ask(rs, "0d:i8", "weak:u8").result == "i16"
    with pytest.raises(UsageError, match="Python scalars"):
        ask(rs, "py:int", "i8")
    rs = rules('[operands]\nweak = "refuse"\nrefuse_message = "no weak types here"\n' + TABLE)
    with pytest.raises(UsageError, match="no weak types here"):
        ask(rs, "weak:i8", "i8")


def test_types_outside_the_framework_are_refused():
    rs = rules(TABLE, BASE.replace('"f64"]', '"f64"]\nunsupported_type = "demo knows no {dtype}"'))
    ans = ask(rs, "f8e4m3", "i8")
    assert ans.result is None and ans.refusal == "demo knows no f8e4m3"


def test_registry_extends_versions_and_user_directories(tmp_path, monkeypatch):
    (tmp_path / "demo.toml").write_text(BASE + TABLE)
    (tmp_path / "demo@0.9.toml").write_text(
        'schema = 1\nname = "demo"\nversion = "0.9"\nextends = "demo"\n'
        '[tables.main]\ncommutative = false\ncolumns = ["i8", "u8"]\n'
        'rows.i8 = ["i8", "x"]\nrows.u8 = ["u8", "u8"]\n')
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(tmp_path))
    registry.clear_cache()
    try:
        assert registry.load("demo").version == "1"
        assert registry.load("demo@1").version == "1"
        old = registry.load("demo@0.9")
        assert answer(old, "u8", "i8").result == "u8"
        assert answer(old, "i8", "u8").result is None
        assert answer(registry.load("demo"), "u8", "i8").result == "i16"
        with pytest.raises(UsageError, match="versions: 0.9, 1"):
            registry.load("demo@7")
        with pytest.raises(UsageError, match="did you mean demo"):
            registry.load("dem")
    finally:
        registry.clear_cache()


def test_an_extending_file_changes_one_operator_and_leaves_a_default_out():
    """`[expressions]` merges per operator, group and default: the file says only what differs, and
    ``KEY = false`` in its defaults drops the base's key (and the base's groups' ``KEY = false`` with it)."""
    from promote_cli.oracle.loader import merge  # noqa: PLC0415

    base = {"expressions": {"doc": "base", "defaults": {"op": "+", "literal_range": "result"},
                            "groups": {"comparison": {"literal_range": False, "result": "bool"}},
                            "operators": {"+": {}, "**": {"refuse_if": "x", "result": "old"}}}}
    mine = {"expressions": {"defaults": {"literal_range": False}, "operators": {"**": {"result": "new"}}}}
    merged = merge(base, mine)["expressions"]
    assert merged["doc"] == "base" and merged["defaults"] == {"op": "+"}
    assert merged["operators"] == {"+": {}, "**": {"refuse_if": "x", "result": "new"}}
    assert merged["groups"] == {"comparison": {"result": "bool"}}


def test_file_name_must_match_name(tmp_path, monkeypatch):
    (tmp_path / "other.toml").write_text(BASE + TABLE)
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(tmp_path))
    registry.clear_cache()
    try:
        with pytest.raises(RuleFileError, match="does not match the file name"):
            registry.load("other")
    finally:
        registry.clear_cache()


def test_invalid_toml_names_the_file(tmp_path, monkeypatch):
    (tmp_path / "bad.toml").write_text("name = \n")
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(tmp_path))
    registry.clear_cache()
    try:
        with pytest.raises(RuleFileError, match="bad.toml: not valid TOML"):
            registry.load("bad")
    finally:
        registry.clear_cache()


def test_every_shipped_rule_file_loads():
    registry.clear_cache()
    loaded = registry.all_rulesets()
    assert {rs.name for rs in loaded} >= {"cann", "anvil"}
    for rs in loaded:
        assert rs.description and rs.source, f"{rs.path} says nothing of what it is or where it comes from"


def test_complex_of_and_real_of():
    rs = rules('[[rules]]\nname = "c"\nresult = "complex_of(a) if is_float(a) else real_of(a)"\n',
               BASE.replace('"f64"]', '"f64", "c32", "c64", "c128"]'))
    assert [ask(rs, t, t).result for t in ("f16", "f32", "f64", "c64", "c128")] == ["c32", "c64", "c128", "f32", "f64"]
    assert ask(rs, "bf16", "bf16").result is None  # no complex type has bf16 parts


def test_recordings_are_written_one_case_per_line_and_readable(tmp_path):
    import json
    import os
    import stat

    from promote_cli.probes import write_recording

    data = {"ruleset": "demo", "package": "demo", "version": "1", "cases": [["add", "i8", "u8", {}, "i16", None]] * 3}
    path = tmp_path / "rec.json"
    write_recording(data, str(path))
    assert json.loads(path.read_text())["cases"] == data["cases"]
    assert len(path.read_text().splitlines()) == 3 + 2
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["rec.json"]


def test_example_rule_files_load():
    from pathlib import Path

    examples = sorted((Path(__file__).resolve().parent.parent / "examples" / "rules").glob("*.toml"))
    assert examples
    for path in examples:
        rs = registry.load_path(path)
        assert rs.rules and rs.description
