"""Schema 2 of the rule files: type sets, op lists, lets, weak lattice nodes, lattices picked by
an option, N-ary answers, messages with the op group, and defects that are never hidden."""

from __future__ import annotations

import re
import textwrap

import pytest

from promote_cli.errors import RuleDefect, RuleFileError, UsageError
from promote_cli.oracle.engine import _environment, answer, answer_n
from promote_cli.oracle.loader import build
from promote_cli.vocab.dtypes import DTYPES

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

BASE = """
schema = 2
name = "demo"
version = "1"
types = ["bool", "i8", "u8", "i16", "u16", "i32", "i64", "f16", "bf16", "f32", "f64", "c64"]
"""


def rules(text: str, base: str = BASE):
    return build(tomllib.loads(base + textwrap.dedent(text)), "demo.toml")


def fails(text: str, *fragments: str, base: str = BASE):
    with pytest.raises(RuleFileError) as err:
        rules(text, base)
    for fragment in fragments:
        assert fragment in str(err.value), str(err.value)
    return str(err.value)


# ---- type sets ------------------------------------------------------------------------

SETS = """
[sets]
signed = ["i8", "i16", "i32", "i64"]
small = ["signed", "u8", "-i32", "-i64"]
inexact = ["kind:float", "kind:complex"]
ints = ["kind:int"]
[[rules]]
name = "sets"
result = "bool if dtype(a) in small else f32 if dtype(a) in inexact else i64"
"""


def test_sets_are_unions_kinds_and_removals_and_names_in_expressions():
    rs = rules(SETS)
    assert [d.name for d in rs.sets["small"]] == ["i8", "i16", "u8"]
    assert [d.name for d in rs.sets["inexact"]] == ["f16", "bf16", "f32", "f64", "c64"]
    assert [d.name for d in rs.sets["ints"]] == ["i8", "u8", "i16", "u16", "i32", "i64"]
    assert [answer(rs, t, t).result for t in ("i16", "u8", "bf16", "i32", "u16")] == ["bool", "bool", "f32", "i64", "i64"]


def test_types_and_option_values_may_name_sets():
    rs = rules("""
        [options.target]
        type = "dtype"
        default = "f32"
        values = ["floats"]
        [[rules]]
        name = "t"
        result = "target"
        """, base=BASE.replace('types = [', 'types = ["floats", ').replace('"f16", "bf16", "f32", "f64", ', '')
        + '[sets]\nfloats = ["f16", "bf16", "f32", "f64"]\n')
    assert [d.name for d in rs.types][:4] == ["f16", "bf16", "f32", "f64"]
    assert [d.name for d in rs.options["target"].values] == ["f16", "bf16", "f32", "f64"]


@pytest.mark.parametrize("text, key, message", [
    ('[sets]\nx = ["i8", "i8"]', "sets.x[1]", "duplicate dtype i8"),
    ('[sets]\nx = ["y"]\ny = ["x"]', "sets.", "built from itself"),
    ('[sets]\nx = ["i9"]', "sets.x[0]", "unknown dtype 'i9'"),
    ('[sets]\nx = ["u64"]', "sets.x", "u64 not in the file's types"),
    ('[sets]\nx = ["kind:real"]', "sets.x[0]", "unknown kind 'real'"),
    ('[sets]\nhalf = ["f16"]', "sets.half", "already a dtype name"),
    ('[sets]\nresult = ["f16"]', "sets.result", "identifier other than"),
])
def test_broken_sets_name_the_key(text, key, message):
    assert f"demo.toml: {key}" in fails(text, message)


def test_types_cannot_be_built_from_kinds_and_schema_1_has_no_sets():
    fails('[sets]\nk = ["kind:float"]', "sets.k[0]", "kind: selects from `types`",
          base=BASE.replace('types = [', 'types = ["k", '))
    fails('[sets]\nx = ["i8"]', "demo.toml: sets: needs schema = 2", base=BASE.replace("schema = 2", "schema = 1"))


# ---- op lists -----------------------------------------------------------------------

OPS = """
[ops.add]
names = ["add", "+"]
[ops.sub]
names = ["subtract", "-"]
[ops.eq]
names = ["equal", "=="]
[ops.lt]
names = ["less", "<"]
[op_lists]
compare = ["eq", "lt"]
every = ["add", "sub", "compare"]
arith = ["every", "-compare"]
[[rules]]
name = "arith"
ops = "arith"
result = "a"
reason = "{op} is in group {op_group}"
[[rules]]
name = "compare"
ops = ["compare"]
if = "op in compare"
result = "bool"
"""


def test_op_lists_expand_to_groups_and_messages_see_group_and_spelling():
    rs = rules(OPS)
    assert rs.op_lists == {"compare": ("eq", "lt"), "every": ("add", "sub", "eq", "lt"), "arith": ("add", "sub")}
    assert answer(rs, "i8", "i8", "+").reason == "+ is in group add"
    assert answer(rs, "i8", "i8", "<").result == "bool"


@pytest.mark.parametrize("text, message", [
    ('[op_lists]\nx = ["nope"]', "neither an op group nor an op list"),
    ('[op_lists]\nadd = ["sub"]', "already an op group"),
    ('[op_lists]\nx = ["add", "add"]', "already in the list"),
    ('[[rules]]\nname = "r"\nops = ["nope"]\nresult = "a"', "unknown op group 'nope'"),
])
def test_broken_op_lists(text, message):
    fails(OPS.split("[op_lists]")[0] + text, message)


# ---- lets ---------------------------------------------------------------------------

LETS = """
[let]
"default_of(x)" = "bool if is_bool(x) else i64 if is_int(x) else f32 if is_float(x) else c64"
"both(s)" = "dtype(a) in s and dtype(b) in s"
scalar = "b if is_python(b) else a"
tensor = "a if is_python(b) else b"
[sets]
floats = ["f16", "bf16", "f32", "f64"]
[operands]
python = "distinct"
[[rules]]
name = "scalar"
if = "is_python(scalar)"
result = "default_of(scalar) if not is_python(tensor) and priority(scalar) > priority(tensor) else dtype(tensor)"
[[rules]]
name = "floats"
if = "both(floats)"
result = "f32"
[[rules]]
name = "other"
result = "a"
"""


def test_lets_are_inlined_with_parameters():
    rs = rules(LETS)
    assert answer(rs, "i8", "py:float").result == "f32"
    assert answer(rs, "py:complex", "f16").result == "c64"
    assert answer(rs, "f16", "py:int").result == "f16"
    assert answer(rs, "f16", "bf16").result == "f32"
    assert answer(rs, "i8", "u8").result == "i8"


@pytest.mark.parametrize("let, message", [
    ('x = "y"\ny = "x"', "refers to itself: x -> y -> x"),
    ('x = "nope(a)"', "unknown function 'nope'"),
    ('x = "c"', "unknown name 'c'"),
    ('"f(x)" = "x"\ng = "f"', "f takes 1 argument(s)"),
    ('"f(x)" = "x"\ng = "f(a, b)"', "f takes 1 argument(s), given 2"),
    ('i8 = "a"', "'i8' would hide a name"),
    ('"f(kind)" = "kind"', "'kind' would hide a name"),
    ('x = "table(\'nope\', a, b)"', "names no table"),
])
def test_broken_lets_are_load_errors(let, message):
    assert "demo.toml: let:" in fails(f"[let]\n{let}\n", message)


def test_a_let_reading_result_is_refused_in_rules_but_not_in_after_clauses():
    text = '[let]\nwide = "bits(result) > 16"\n[[rules]]\nname = "r"\nif = "wide"\nresult = "a"\n'
    fails(text, "rules[0] (r).if", "unknown name 'result'", "with let wide inlined")
    rs = rules(text.replace("[[rules]]\nname = \"r\"\nif", '[[rules]]\nname = "r"\nresult = "a"\n[[after]]\nname = "w"\nif')
               .replace('result = "a"\n', 'result = "f64"\n', 2))
    assert answer(rs, "i32", "i32").result == "f64"
    assert answer(rs, "i8", "i8").result == "f64"


# ---- lattices: weak nodes, options, diamonds ----------------------------------------------

JAX_LIKE = """
[operands]
weak = "distinct"
python = "distinct"
[options.x64]
type = "bool"
default = false
[lattices.x32]
weak = { "py:int" = "i32", "py:float" = "f32" }
[lattices.x32.edges]
bool = ["py:int"]
"py:int" = ["u8", "i8"]
u8 = ["u16", "i16"]
i8 = ["i16"]
u16 = ["i32"]
i16 = ["i32"]
i32 = ["i64"]
i64 = ["py:float"]
"py:float" = ["f16", "bf16"]
f16 = ["f32"]
bf16 = ["f32"]
f32 = ["f64"]
[lattices.x64]
base = "x32"
weak = { "py:int" = "i64", "py:float" = "f64" }
[lattices.standard]
option = "x64"
pick = { true = "x64", false = "x32" }
[nary]
method = "join"
lattice = "standard"
[[rules]]
name = "join"
result = "join('standard', a, b)"
"""


@pytest.mark.parametrize("a, b, x32, x64", [
    ("i8", "u8", "i16", "i16"),
    ("u8", "py:int", "u8", "u8"),
    ("i8", "py:float", "weak:f32", "weak:f64"),
    ("py:int", "py:int", "weak:i32", "weak:i64"),
    ("weak:i16", "py:float", "weak:f32", "weak:f64"),   # a weak int stands at py:int
    ("weak:i8", "u16", "u16", "u16"),
    ("py:bool", "py:bool", "bool", "bool"),              # py:bool stands at bool: strong
    ("py:bool", "py:int", "weak:i32", "weak:i64"),
    ("f16", "bf16", "f32", "f32"),
    ("i64", "f16", "f16", "f16"),
])
def test_weak_nodes_and_the_lattice_the_option_picks(a, b, x32, x64):
    rs = rules(JAX_LIKE)
    assert answer(rs, a, b).result == x32
    assert answer(rs, a, b, "add", {"x64": "true"}).result == x64


def test_a_lattice_with_a_base_is_that_lattice_patched():
    rs = rules(JAX_LIKE.replace("[lattices.standard]", '[lattices.x64.edges]\nf64 = ["c64"]\n[lattices.standard]'))
    x32, x64 = rs.lattices["x32"], rs.lattices["x64"]
    assert (x32.edges["f64"], x64.edges["f64"], x64.edges["c64"]) == ((), ("c64",), ())
    assert list(x64.edges) == [*x32.edges, "c64"]  # the base's nodes in its order, then the new one
    assert x64.reason == x32.reason and x64.weak["py:int"].dtype.name == "i64"
    assert answer(rs, "f64", "c64", options={"x64": True}).result == "c64"
    assert answer(rs, "f64", "c64").refused and answer(rs, "i8", "f32", options={"x64": True}).result == "f32"


@pytest.mark.parametrize("patch, message", [
    ('[lattices.x64.edges]\nu8 = ["u16", "i16"]\n', 'lattices.x64.edges.u8: repeats the successors x32 gives it'),
    ('[lattices.x64]\nreason = "no common type for {a} and {b}"\n', "lattices.x64.reason: repeats the reason of x32"),
])
def test_a_patch_that_repeats_its_base_is_a_load_error(patch, message):
    fails(JAX_LIKE.replace('[lattices.standard]', patch.replace("[lattices.x64]\n", "") + '[lattices.standard]')
          if "edges" in patch else JAX_LIKE.replace('base = "x32"\n', 'base = "x32"\n' + patch.split("\n", 1)[1]),
          message)


def test_a_weak_result_is_a_weak_operand():
    result = answer(rules(JAX_LIKE), "py:int", "py:float").result_operand
    assert (result.form, result.dtype.name) == ("weak", "f32")


@pytest.mark.parametrize("change, key, message", [
    ('weak = { "py:int" = "i32" }', "lattices.x32.weak", "py:float declares no default dtype"),
    ('weak = { "py:int" = "i32", "py:float" = "f128" }', "lattices.x32.weak.py:float", "unknown dtype"),
    ('weak = { "py:int" = "i32", "py:float" = "u64" }', "lattices.x32", "weak:u64, whose dtype is not in the file's types"),
    ('weak = { "py:int" = "i32", "py:float" = "f32", "i8" = "i8" }', "lattices.x32.weak.i8", "not a weak node"),
])
def test_broken_weak_nodes(change, key, message):
    text = JAX_LIKE.replace('weak = { "py:int" = "i32", "py:float" = "f32" }', change)
    assert f"demo.toml: {key}" in fails(text, message)


@pytest.mark.parametrize("change, message", [
    ('pick = { true = "x64" }', "no lattice for x64 = false"),
    ('option = "nope"', "is not an option of this file"),
    ('pick = { true = "x64", false = "nope" }', "names no lattice"),
    ('pick = { true = "x64", false = "x32", maybe = "x32" }', "takes true or false"),
])
def test_broken_lattice_choices(change, message):
    key = change.split(" =")[0]
    old = {"pick": 'pick = { true = "x64", false = "x32" }', "option": 'option = "x64"'}[key]
    fails(JAX_LIKE.replace(old, change), "lattices.standard", message)


DIAMOND = """
[lattices.main.edges]
i8 = ["i16", "f16"]
u8 = ["i16", "f16"]
i16 = ["f32"]
f16 = ["f32"]
[[rules]]
name = "join"
result = "join('main', a, b)"
"""


def test_a_diamond_without_a_join_is_rejected_naming_file_lattice_and_pair():
    message = fails(DIAMOND, "demo.toml: lattices.main:", "no least upper bound", "f16 and i16 are both minimal")
    assert "i8 and u8" in message or "u8 and i8" in message
    # with the join node added the same lattice loads, and the pair has its least upper bound
    rs = rules(DIAMOND.replace('i8 = ["i16", "f16"]\nu8 = ["i16", "f16"]', 'i8 = ["i16"]\nu8 = ["i16"]\ni16 = ["f16"]')
               .replace('i16 = ["f32"]\n', ""))
    assert answer(rs, "i8", "u8").result == "i16"
    assert answer(rs, "u8", "f16").result == "f16"
    assert answer(rs, "u8", "i32").refusal == "no common type for u8 and i32"


# ---- defects: results outside types ----------------------------------------------------

def test_a_result_outside_the_types_is_a_rule_defect_naming_file_and_rule():
    rs = rules('[[rules]]\nname = "too wide"\nresult = "c128 if is_complex(a) else a"\n')
    assert answer(rs, "i8", "i8").result == "i8"
    with pytest.raises(RuleDefect, match=r"demo.toml: rule 'too wide' gives c128 .*not one of the file's types"):
        answer(rs, "c64", "c64")


def test_table_cells_and_lattice_nodes_outside_the_types_are_load_errors():
    fails('[tables.t]\ncolumns = ["i8"]\nrows.i8 = ["u64"]\n', "tables.t.rows.i8", "gives u64, which is not in the file's types")
    fails('[lattices.l.edges]\ni8 = ["u64"]\n', "lattices.l", "u64 gives u64")


def test_a_ruleset_has_an_engine_per_option_values_sharing_one_environment():
    from promote_cli.oracle.engine import engine

    rs = rules(JAX_LIKE)
    x32, x64 = engine(rs, {"x64": False}), engine(rs, {"x64": True})
    assert engine(rs, {"x64": False}) is x32 and x64 is not x32
    assert x64.env is x32.env and x64.set_text is x32.set_text and x64.ranks is x32.ranks
    assert answer(rs, "u8", "py:int", options={"x64": True}).result == "u8"
    assert len(x64.memo) == 1 and not x32.memo


def test_priority_is_the_vocabulary_s():
    env = _environment(rules('[[rules]]\nname = "r"\nresult = "a"\n'))
    assert all(env["priority"](d) == d.priority for d in DTYPES.values())


# ---- N-ary answers -------------------------------------------------------------------------

def test_answer_n_joins_all_operands_on_the_lattice():
    rs = rules(JAX_LIKE)
    ans = answer_n(rs, ["i8", "u8", "f16"])
    assert (ans.result, ans.operands, ans.a, ans.b) == ("f16", ("i8", "u8", "f16"), "i8", "u8")
    assert answer_n(rs, ["u8", "py:int", "py:float"]).result == "weak:f32"
    assert answer_n(rs, ["u8", "py:int", "py:float"], options={"x64": True}).result == "weak:f64"
    assert answer_n(rs, ["py:int"]).result == "weak:i32"
    assert answer_n(rs, ["i8", "u8"]).result == answer(rs, "i8", "u8").result
    assert answer_n(rs, ["i8", "u8"]).to_dict()["operands"] == ["i8", "u8"]


NOT_ASSOCIATIVE = """
[[rules]]
name = "same"
if = "dtype(a) == dtype(b)"
result = "a"
[[rules]]
name = "integers widen"
if = "is_int(a) and is_int(b)"
result = "signed_int(2 * max(bits(a), bits(b)))"
[[rules]]
name = "refuse the rest"
refuse = "no {a} with {b}"
"""


def test_answer_n_folds_left_when_the_file_says_so_or_says_nothing():
    rs = rules(NOT_ASSOCIATIVE)
    assert rs.nary.method == "fold"
    left = answer_n(rs, ["i8", "u8", "i16"])     # (i8 u8 -> i16) i16 -> i16
    right = answer_n(rs, ["u8", "i16", "i8"])    # (u8 i16 -> i32) i8 -> i64
    assert (left.result, right.result) == ("i16", "i64")
    assert right.rule == "integers widen; integers widen"
    refused = answer_n(rs, ["i8", "u8", "f16"])
    assert refused.result is None and refused.refusal == "i16 add f16: no i16 with f16"
    assert rules(NOT_ASSOCIATIVE + '[nary]\nmethod = "fold"\n').nary.method == "fold"


def test_answer_n_refusal_names_the_option_that_allows_it():
    rs = rules(NOT_ASSOCIATIVE + """
        [options.wide]
        type = "bool"
        default = false
        [[after]]
        name = "at most 16 bits"
        if = "not wide and bits(result) > 16"
        refuse = "{a} with {b} needs {result}"
        """.replace("        ", ""))
    ans = answer_n(rs, ["i8", "u8", "u16"])
    assert ans.refusal == "i16 add u16: i16 with u16 needs i32"
    assert ans.hint == {"option": "wide", "value": "true", "result": "i32"}


@pytest.mark.parametrize("nary, message", [
    ('method = "zip"', "nary.method"),
    ('method = "join"\nlattice = "nowhere"', "nary.lattice"),
    ('method = "fold"\nlattice = "x32"', "only the join method"),
])
def test_broken_nary(nary, message):
    fails(JAX_LIKE.split("[nary]")[0] + f"[nary]\n{nary}\n", message)


# ---- messages ------------------------------------------------------------------------------

def test_a_type_set_in_a_message_lists_its_types():
    rs = rules("""
        [sets]
        narrow = ["i8", "i16", "u8"]
        [[rules]]
        name = "narrow"
        if = "dtype(a) in narrow"
        refuse = "{a} is one of {narrow} (any of {narrow:or}; all of {narrow:and})"
        """)
    assert answer(rs, "i8", "i8").refusal == "i8 is one of i8, i16, u8 (any of i8, i16 or u8; all of i8, i16 and u8)"
    fails('[[rules]]\nname = "r"\nrefuse = "{a:or}"\n', "only a type set takes a format")


def test_tosa_names_the_operator_not_the_spelling():
    from promote_cli.oracle import registry

    ans = answer(registry.load("tosa"), "i8", "i8", "+")
    assert ans.refusal.startswith("TOSA ADD has no i8 form (it takes i32, i64, f16, bf16 or f32)")


def test_the_python_examples_of_docs_rules_md_run(monkeypatch):
    import doctest
    from pathlib import Path

    from support import load_tool

    root = Path(__file__).resolve().parent.parent
    text = (root / "docs" / "rules.md").read_text(encoding="utf-8")
    blocks = [ln for _, ln in load_tool("doc_examples").fenced_blocks(text, "python") if any(">>>" in x for x in ln)]
    assert blocks
    monkeypatch.chdir(root)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for block in blocks:
        runner.run(doctest.DocTestParser().get_doctest("\n".join(block), {}, "rules.md", "docs/rules.md", 0))
    assert runner.failures == 0 and runner.tries >= 6


# ---- type maps ----------------------------------------------------------------------------

MAPS = """
[options.x64]
type = "bool"
default = false
[sets]
wide = ["i64", "f64"]
[maps.x32]
i64 = "i32"
f64 = "f32"
[maps.x64]
[maps.canonical]
option = "x64"
pick = { true = "x64", false = "x32" }
[operands]
rank0 = "distinct"
[[rules]]
name = "canonical, then the wider"
result = "mapped('canonical', a) if bits(mapped('canonical', a)) >= bits(mapped('canonical', b)) else mapped('canonical', b)"
"""


def test_a_type_map_picked_by_an_option():
    rs = rules(MAPS)
    assert answer(rs, "i64", "i8").result == "i32"
    assert answer(rs, "0d:f64", "f16").result == "f32"
    assert answer(rs, "i64", "i8", "add", {"x64": True}).result == "i64"
    assert answer(rs, "f64", "f16", "add", {"x64": True}).result == "f64"


@pytest.mark.parametrize("old, new, message", [
    ('i64 = "i32"', 'i64 = "u64"', "maps.x32.i64: u64 is not in the file's types"),
    ('[maps.x64]', '[maps.x64]\nwide = "f16"\nf64 = "f32"', "maps.x64.f64: f64 is mapped twice"),
    ('pick = { true = "x64", false = "x32" }', 'pick = { true = "x64" }', "maps.canonical.pick: no map for x64 = false"),
    ("mapped('canonical', a) if", "mapped('nope', a) if", "names no map of this file"),
    ('[maps.x64]', '[lattices.x64.edges]\ni8 = ["i16"]\n[maps.x64]', "maps.x64: 'x64' is already the name of a lattice"),
])
def test_broken_type_maps(old, new, message):
    fails(MAPS.replace(old, new, 1), message)


def test_a_table_s_columns_may_be_a_set():
    rs = rules("""
        [sets]
        small = ["i8", "u8"]
        [tables.t]
        columns = "small"
        rows.i8 = ["i8", "i16"]
        rows.u8 = ["i16", "u8"]
        [[rules]]
        name = "t"
        result = "table('t', a, b)"
        """)
    assert rs.tables["t"].columns == ("i8", "u8")
    assert answer(rs, "u8", "i8").result == "i16"


def test_lattice_joins_agree_with_brute_force_on_random_dags():
    import itertools
    import random

    names = ["bool", "i8", "u8", "i16", "u16", "i32", "i64", "f16", "bf16", "f32"]
    rng = random.Random(20261122)
    loaded = rejected = 0
    for _ in range(150):
        order = rng.sample(names, rng.randint(3, len(names)))
        edges = {n: sorted({m for m in order[i + 1:] if rng.random() < 0.3}) for i, n in enumerate(order)}
        upper = {}
        for n in reversed(order):
            upper[n] = {n}.union(*(upper[m] for m in edges[n]))
        diamond = None
        for x, y in itertools.combinations(order, 2):
            common = upper[x] & upper[y]
            minimal = [c for c in common if not any(d != c and c in upper[d] for d in common)]
            if len(minimal) > 1:
                diamond = (x, y)
                break
        text = "[lattices.l.edges]\n" + "".join(f'{n} = [{", ".join(repr(m) for m in ms)}]\n'.replace("'", '"')
                                                 for n, ms in edges.items())
        text += "[[rules]]\nname = \"j\"\nresult = \"join('l', a, b)\"\n"
        if diamond:
            with pytest.raises(RuleFileError, match="no least upper bound"):
                rules(text)
            rejected += 1
            continue
        rs = rules(text)
        loaded += 1
        for x, y in itertools.product(order, repeat=2):
            common = upper[x] & upper[y]
            least = [c for c in common if common <= upper[c]]
            got = answer(rs, x, y).result
            assert got == (least[0] if least else None), (edges, x, y)
    assert loaded > 20 and rejected > 20


@pytest.mark.parametrize("name", ["openvino", "paddle"])
def test_the_schema_1_form_of_a_rewritten_file_still_loads_and_agrees(name):
    import itertools
    from pathlib import Path

    from promote_cli.oracle import registry

    old = registry.load_path(Path(__file__).parent / "data" / "schema1" / f"{name}.toml")
    new = registry.load(name)
    assert (old.schema, new.schema) == (1, 2)
    assert old.types == new.types and list(old.options) == list(new.options)
    forms = [f"{p}{t.name}" for p in ("", "0d:") for t in new.types] + ["py:int", "py:float", "py:complex", "py:bool"]
    ops = [names[0] for names in new.ops.values()] if new.ops else ["add"]
    flags = [dict(zip(new.options, v)) for v in itertools.product((False, True), repeat=2)] if name == "openvino" else [{}]
    compared = 0
    for op, options, a, b in itertools.product(ops, flags, forms, forms):
        try:
            want = answer(old, a, b, op, options)
        except UsageError as exc:  # a Python scalar where the file refuses them: the same usage error
            with pytest.raises(UsageError, match=re.escape(str(exc))):
                answer(new, a, b, op, options)
            continue
        got = answer(new, a, b, op, options)
        assert (got.result, got.rule, got.reason, got.refusal, got.hint) == (
            want.result, want.rule, want.reason, want.refusal, want.hint), (op, options, a, b)
        compared += 1
    assert compared > 5000


# ---- messages ---------------------------------------------------------------------------

MESSAGES = """
[messages]
no_pair = "demo refuses {a} with {b}"
[operands]
python = "refuse"
refuse_message = { message = "no_pair" }
[tables.t]
reason = { message = "no_pair" }
columns = ["i8", "u8"]
rows.i8 = ["i8", "x"]
rows.u8 = ["x", "u8"]
[[rules]]
name = "bool"
if = "is_bool(a) or is_bool(b)"
refuse = { message = "no_pair" }
[[rules]]
name = "table"
result = "table('t', a, b)"
"""


def test_a_message_is_written_once_and_named_where_it_is_said():
    rs = rules(MESSAGES)
    assert rs.tables["t"].reason == rs.rules[0].refuse == "demo refuses {a} with {b}"
    assert answer(rs, "i8", "u8").refusal == "demo refuses i8 with u8"
    assert answer(rs, "bool", "i8").refusal == "demo refuses bool with i8"
    assert rs.operands.refuse_message == "demo refuses {a} with {b}"


@pytest.mark.parametrize("change, message", [
    (('refuse = { message = "no_pair" }', 'refuse = { message = "nope" }'),
     "rules[0] (bool).refuse.message: 'nope' names no message of this file ([messages]: no_pair)"),
    (('refuse = { message = "no_pair" }', 'refuse = { message = ["no_pair"] }'), "refuse.message: \"['no_pair']\" names no message"),
    (('refuse = { message = "no_pair" }', 'refuse = { message = "no_pair", extra = 1 }'),
     "rules[0] (bool).refuse.extra: unknown key"),
    (('no_pair = "demo', 'unused = "x"\nno_pair = "demo'), "messages.unused: no message site names it"),
    (('no_pair = "demo refuses {a} with {b}"', 'no_pair = 3'), "messages.no_pair: expected a string, got int"),
    (('no_pair = "demo refuses {a} with {b}"', 'no_pair = "{a} and {c}"'), "unknown placeholder {c}"),
    (('[messages]\n', '[messages]\n"not a name" = "x"\n'), "messages.not a name: a message name is an identifier"),
])
def test_broken_messages_are_load_errors(change, message):
    fails(MESSAGES.replace(*change), message)


def test_schema_1_has_no_messages():
    fails('[messages]\nm = "x"\n', "messages: needs schema = 2", base=BASE.replace("schema = 2", "schema = 1"))
