"""N-operand answers (`[nary]`, engine.answer_n): a left fold, a join that keeps weak
operands weak and applies the `[[after]]` clauses once, NumPy's common-type sequence, and
strong operands first; what the loader accepts; and the shipped files against their
frameworks' recorded N-ary cases."""

from __future__ import annotations

import itertools
import json
import textwrap
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from promote_cli.errors import RuleDefect, RuleFileError
from promote_cli.oracle import registry
from promote_cli.oracle.engine import answer, answer_n
from promote_cli.oracle.loader import build

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

RECORDINGS = Path(__file__).parent / "data" / "recordings"

BASE = """
schema = 2
name = "demo"
version = "1"
types = ["bool", "i8", "u8", "i16", "u16", "i32", "i64", "f16", "bf16", "f32", "f64", "c64"]
"""


def rules(text: str):
    return build(tomllib.loads(BASE + textwrap.dedent(text)), "demo.toml")


def results(rs, operand_lists, op="add", options=None):
    return [answer_n(rs, list(operands), op, options).result for operands in operand_lists]


def recorded(name: str, operands: list[str], options: dict | None = None):
    """The framework's own answer to result_type(*operands), from its recording."""
    data = json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))
    for op, ops, _, opts, result, _error in data["nary"]:
        if ops == operands and opts == (options or {}):
            return result
    raise LookupError(f"{name} recorded no result_type{tuple(operands)}")


# ---- sequence: a common-type reduction in which the operand that knows the other answers ----

TABLE = """
[tables.promote]
commutative = true
reason = "no common type of {a} and {b}"
columns = ["i8",  "u8",  "i16", "f16", "f32"]
[tables.promote.rows]
i8      = ["i8",  "x",   "i16", "f16", "f32"]
u8      = ["x",   "u8",  "i16", "f16", "f32"]
i16     = ["i16", "i16", "i16", "f32", "f32"]
f16     = ["f16", "f16", "f32", "f16", "f32"]
f32     = ["f32", "f32", "f32", "f32", "f32"]
[[rules]]
name = "the table"
result = "table('promote', a, b)"
"""

SEQUENCE = TABLE + """
[nary]
method = "sequence"
order = ["i8", "u8", "i16", "f32", "f16"]
knows = "rank(b) <= rank(a)"
"""


def test_sequence_lets_the_most_knowledgeable_operand_answer():
    seq, fold = rules(SEQUENCE), rules(TABLE)
    # f16 knows every other type: it answers, whatever the order; a fold meets i8 with u8 first
    for operands in itertools.permutations(["i8", "u8", "f16"]):
        assert answer_n(seq, list(operands)).result == "f16"
    assert answer_n(fold, ["i8", "u8", "f16"]).refusal == "i8 add u8: no common type of i8 and u8"
    assert results(seq, [["i8", "u8", "i16"], ["i16", "i8", "u8"], ["i8", "i8", "i8"]]) == ["i16", "i16", "i8"]
    ans = answer_n(seq, ["i8", "u8", "f16"])
    assert (ans.rule, ans.operands) == ("sequence", ("i8", "u8", "f16"))


def test_sequence_answers_only_where_when_holds_elsewhere_the_fold():
    text = SEQUENCE + """when = "mode == 'numpy'"
[options.mode]
type = "choice"
values = ["plain", "numpy"]
default = "plain"
doc = "which N-operand answer"
"""
    seq = rules(text)
    assert answer_n(seq, ["i8", "u8", "f16"], options={"mode": "numpy"}).result == "f16"
    assert answer_n(seq, ["i8", "u8", "f16"]).refusal == "i8 add u8: no common type of i8 and u8"
    with pytest.raises(RuleFileError, match="nary.when"):
        rules(SEQUENCE + 'when = "a == i8"\n')


def test_sequence_pairs_and_single_operands_are_the_pair_answers():
    seq = rules(SEQUENCE)
    assert answer_n(seq, ["i8", "u8"]).refusal == answer(seq, "i8", "u8").refusal
    assert answer_n(seq, ["i16"]).result == "i16"


def test_sequence_refuses_what_the_answering_operand_does_not_know():
    seq = rules(SEQUENCE.replace('knows = "rank(b) <= rank(a)"',
                                 'knows = "rank(b) <= rank(a) and not (a == f16 and b == i16)"'))
    ans = answer_n(seq, ["i16", "i8", "f16"])
    assert ans.result is None and ans.refusal == "i16 has no common type known to f16"
    # without i16, f16 answers for all
    assert answer_n(seq, ["u8", "i8", "f16"]).result == "f16"


def test_a_rank_the_order_does_not_give_is_a_defect_of_the_file():
    seq = rules(SEQUENCE.replace('order = ["i8", "u8", "i16", "f32", "f16"]', 'order = ["i8", "u8", "f16"]'))
    with pytest.raises(RuleDefect, match=r"\[nary\] order does not list i16"):
        answer_n(seq, ["i8", "u8", "i16"])


SCALARS = """
[operands]
python = "distinct"
[[rules]]
name = "two Python scalars: the float or int default"
if = "is_python(a) and is_python(b)"
result = "f64 if is_float(a) or is_float(b) else i64"
[[rules]]
name = "an array with a Python scalar: a float scalar makes an integer array f64"
symmetric = true
if = "is_python(b) and is_float(b) and is_int(a)"
result = "f64"
[[rules]]
name = "an array with a Python scalar: the array"
symmetric = true
if = "is_python(b)"
result = "a"
[[rules]]
name = "arrays: the wider"
result = "a if bits(a) >= bits(b) else b"
[nary]
method = "sequence"
order = ["i8", "i16", "f32", "f64", "f16"]
# a Python float knows a Python int and the arrays; an array knows a Python int
knows = "priority(a) >= priority(b) if is_python(a) and is_python(b) else is_float(a) if is_python(a) else is_int(b) if is_python(b) else rank(b) <= rank(a)"
"""


def test_sequence_keeps_an_abstract_result_until_the_end():
    plain, keeping = rules(SCALARS), rules(SCALARS + 'keeps = "is_python(a) and is_python(b)"\n')
    # py:float answers for py:int (py:float, or f64 without keeps) and for f16 (f16): then the two meet
    assert answer_n(plain, ["py:float", "py:int", "f16"]).result == "f64"
    assert answer_n(keeping, ["py:float", "py:int", "f16"]).result == "f16"
    # a Python scalar left at the end is the type the file gives two of them
    assert answer_n(keeping, ["py:float", "py:int"]).result == "f64"
    assert answer_n(keeping, ["py:float", "py:int", "py:float"]).result == "f64"
    assert answer_n(keeping, ["py:int"]).result == "i64"


# ---- join: weak results stay weak, the after clauses apply once -------------------------

LATTICE = """
[operands]
weak = "distinct"
python = "distinct"
[ops.add]
names = ["add"]
[ops.result_type]
names = ["result_type"]
[lattices.main]
weak = { "py:int" = "i32", "py:float" = "f32" }
[lattices.main.edges]
bool = ["py:int"]
"py:int" = ["u8", "i8"]
u8 = ["i16"]
i8 = ["i16"]
i16 = ["i32"]
i32 = ["py:float"]
"py:float" = ["f16", "bf16"]
f16 = ["f32"]
bf16 = ["f32"]
f32 = []
c64 = []
[[rules]]
name = "the bound"
result = "join('main', a, b)"
[[after]]
name = "result_type: a weak result is its default type"
ops = ["result_type"]
if = "is_weak(result)"
result = "strong(result)"
"""


def test_join_keeps_weak_operands_weak_and_applies_the_after_clauses_once():
    fold, join = rules(LATTICE), rules(LATTICE + '[nary]\nmethod = "join"\n')
    # a fold makes the weak bound of bool and py:int a strong i32 at once; the join keeps it weak
    assert answer_n(fold, ["bool", "py:int", "u8"], "result_type").result == "i32"
    for operands in itertools.permutations(["bool", "py:int", "u8"]):
        assert answer_n(join, list(operands), "result_type").result == "u8"
    assert answer_n(join, ["py:int", "py:int", "py:float"], "result_type").result == "f32"
    assert answer_n(join, ["py:int", "py:int", "py:float"], "add").result == "weak:f32"
    assert answer_n(join, ["weak:i32"], "result_type").result == "i32"
    refused = answer_n(join, ["u8", "py:float", "c64", "f16"], "result_type")
    assert refused.result is None and refused.refusal == "weak:f32 result_type c64: no common type for weak:f32 and c64"


def test_a_join_on_a_lattice_applies_the_after_clauses_too():
    join = rules(LATTICE + '[nary]\nmethod = "join"\nlattice = "main"\n')
    assert answer_n(join, ["py:int", "py:int", "py:float"], "result_type").result == "f32"
    assert answer_n(join, ["py:int", "py:int", "py:float"], "add").result == "weak:f32"
    assert answer_n(join, ["bool", "py:int", "u8"], "result_type").result == "u8"


def test_an_after_clause_that_refuses_refuses_the_join():
    join = rules(LATTICE + """
        [[after]]
        name = "no weak int"
        if = "is_int(result) and is_weak(result)"
        refuse = "a weak {result} has no default"
        [nary]
        method = "join"
        """.replace("        ", ""))
    ans = answer_n(join, ["bool", "py:int", "py:int"], "add")
    assert ans.result is None and ans.refusal == "a weak weak:i32 has no default"
    assert answer_n(join, ["bool", "py:int", "u8"], "add").result == "u8"


# ---- strong first ---------------------------------------------------------------------

STRONG_FIRST = """
[operands]
python = "distinct"
[[rules]]
name = "no array"
if = "is_python(a) and is_python(b)"
refuse = "{a} with {b}: no array"
[[rules]]
name = "a Python scalar takes the array's type"
symmetric = true
if = "is_python(b)"
result = "a"
[[rules]]
name = "arrays: the wider"
result = "a if bits(a) >= bits(b) else b"
"""


def test_strong_first_folds_the_arrays_then_the_python_scalars():
    plain, strong = rules(STRONG_FIRST), rules(STRONG_FIRST + '[nary]\nmethod = "fold"\nstrong_first = true\n')
    assert answer_n(plain, ["py:int", "py:int", "i8"]).refusal == "py:int add py:int: py:int with py:int: no array"
    assert answer_n(strong, ["py:int", "py:int", "i8"]).result == "i8"
    assert answer_n(strong, ["py:int", "i16", "py:float", "i8"]).result == "i16"
    assert answer_n(strong, ["py:int", "py:float", "py:int"]).refusal == "py:int add py:float: py:int with py:float: no array"


# ---- what the loader accepts ----------------------------------------------------------

@pytest.mark.parametrize("nary, where, message", [
    ('method = "sequence"', "nary.knows", "needs `knows`"),
    ('method = "sequence"\nknows = "nope(a)"', "nary.knows", "unknown function"),
    ('method = "sequence"\nknows = "rank(b) < rank(result)"', "nary.knows", "unknown name 'result'"),
    ('method = "sequence"\nknows = "true"\norder = ["i8", "zz"]', "nary.order[1]", "zz"),
    ('method = "sequence"\nknows = "true"\norder = ["i8", "i8"]', "nary.order", "listed twice"),
    ('method = "sequence"\nknows = "true"\norder = "i8"', "nary.order", ""),
    ('method = "fold"\nknows = "true"', "nary.knows", "only the sequence method"),
    ('method = "join"\norder = ["i8"]', "nary.order", "only the sequence method"),
    ('method = "fold"\nstrong_first = "yes"', "nary.strong_first", "true or false"),
    ('method = "join"\nmap = "m"', "nary.map", "only a join on a lattice"),
    ('method = "reduce"', "nary.method", "fold, join, sequence, grouped"),
    ('method = "grouped"', "nary.groups", ""),
    ('method = "grouped"\ngroups = ["tensor", "py"]', "nary.groups", "tensor, 0d, weak"),
    ('method = "grouped"\ngroups = ["tensor", "tensor"]', "nary.groups", "distinct"),
    ('method = "fold"\ngroups = ["tensor"]', "nary.groups", "only the grouped method"),
])
def test_broken_nary_sections(nary, where, message):
    with pytest.raises(RuleFileError) as err:
        rules(TABLE + f"[nary]\n{nary}\n")
    assert where in str(err.value) and message in str(err.value), str(err.value)


# ---- the shipped rulesets -------------------------------------------------------------

def test_numpy_order_is_numpys_type_numbers():
    """`rank` in numpy.toml is NumPy's type number, as the installed numpy and ml_dtypes number them (an
    ml_dtypes at the supported minimum lacks uint1 and complex32, which the recorded 0.6.0 has)."""
    from promote_cli.probes.dtype_names import NATIVE, np_dtype

    rs = registry.load("numpy")
    order = [name for name in rs.nary.order if not name.startswith("py:")]
    assert sorted(order) == sorted(d.name for d in rs.types)
    missing = {name for name in order if not hasattr(ml_dtypes, NATIVE[name]) and not hasattr(np, NATIVE[name])}
    assert missing <= {"u1", "c32"}, missing
    numbers = [np_dtype(name).num for name in order if name not in missing]
    assert numbers == sorted(numbers), list(zip(order, numbers))
    assert rs.nary.order.index("py:bool") == rs.nary.order.index("bool") + 1  # a Python bool is a bool array


@pytest.mark.parametrize("operands", [["i8", "u8", "f16"], ["bool", "bf16", "py:int"], ["py:complex", "py:float", "bf16"],
                                      ["py:int", "py:float", "i8"]])
def test_numpy_result_type_of_three(operands):
    assert answer_n(registry.load("numpy"), operands, "result_type").result == recorded("numpy-2.4", operands)


def test_tensorflow_result_type_of_three_is_numpys_sequence_only_where_tnp_promotes_as_numpy():
    rs = registry.load("tensorflow")
    # recorded as tnp.clip's dtypes (ops-tensorflow.json): the tensors' dtypes first, then the Python int
    assert results(rs, [["bool", "i4", "py:int"], ["bool", "py:int", "i8"], ["i4", "i4", "py:int"]],
                   "tnp.result_type") == ["i64", "i8", "i8"]
    assert answer_n(rs, ["bool", "bf16", "py:int"], "tnp.result_type").refusal
    # in safe mode, and for the operators, each pair in turn
    assert answer_n(rs, ["bool", "i4", "py:int"], "tnp.result_type", {"dtype_conversion_mode": "safe"}).refusal
    assert answer_n(rs, ["i8", "py:int", "i8"], "add").rule.count(";") == 1


def test_numpy_needs_the_sequence_and_the_abstract_python_types():
    rs = registry.load("numpy")
    fold = answer(rs, answer(rs, "i8", "u8", "result_type").result, "f16", "result_type").result
    assert recorded("numpy-2.4", ["i8", "u8", "f16"]) != fold
    rs.nary.keeps, saved = None, rs.nary.keeps
    try:
        rs.engines.clear()
        assert answer_n(rs, ["py:complex", "py:float", "bf16"], "result_type").result != \
            recorded("numpy-2.4", ["py:complex", "py:float", "bf16"])
    finally:
        rs.nary.keeps = saved
        rs.engines.clear()


@pytest.mark.parametrize("options", [{"x64": False, "numpy_dtype_promotion": "standard"},
                                     {"x64": True, "numpy_dtype_promotion": "standard"},
                                     {"x64": False, "numpy_dtype_promotion": "strict"}])
def test_jax_result_type_keeps_weak_operands_weak_through_the_join(options):
    rs = registry.load("jax")
    for operands in (["bool", "weak:i32", "u8"], ["bool", "py:int", "i8"], ["py:int", "py:float", "bf16"]):
        assert answer_n(rs, operands, "result_type", options).result == recorded("jax-0.10", operands, options)


def test_array_api_result_type_takes_the_python_scalars_last():
    for version in ("2024.12", "2025.12"):
        rs = registry.load(f"array-api@{version}")
        for operands in (["py:int", "py:int", "i8"], ["py:float", "py:complex", "f32"], ["py:bool", "py:bool", "bool"]):
            assert answer_n(rs, operands, "result_type").result == recorded(f"array-api-{version}", operands)
            assert answer_n(rs, operands, "result_type").result is not None


@pytest.mark.parametrize("doc", ["rules.md", "frameworks/numpy.md", "frameworks/jax.md", "frameworks/array-api.md"])
def test_the_nary_python_examples_of_the_docs_run(doc, monkeypatch):
    import doctest

    from support import load_tool

    root = Path(__file__).resolve().parent.parent
    text = (root / "docs" / doc).read_text(encoding="utf-8")
    section = text[text.index("## N operands"):]
    section = section[:section.find("\n## ", 1)] if "\n## " in section[1:] else section
    blocks = [lines for _, lines in load_tool("doc_examples").fenced_blocks(section, "python")
              if any(">>>" in line for line in lines)]
    assert blocks, f"docs/{doc}: no Python example in its N operands section"
    monkeypatch.chdir(root)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for block in blocks:
        runner.run(doctest.DocTestParser().get_doctest("\n".join(block), {}, doc, f"docs/{doc}", 0))
    assert runner.failures == 0 and runner.tries >= 2


def test_a_clause_op_that_is_not_a_name_is_a_load_error():
    with pytest.raises(RuleFileError, match=r"rules\[0\] \(r\)\.ops: expected op group names, got dict"):
        rules('[ops.add]\nnames = ["add"]\n[[rules]]\nname = "r"\nops = [{}]\nresult = "a"\n')


def test_a_single_operand_of_a_join_is_its_bound_with_itself_then_the_after_clauses():
    join = rules(LATTICE + '[nary]\nmethod = "join"\n')
    assert results(join, [["py:int"], ["weak:i32"], ["u8"], ["py:float"]], "result_type") == ["i32", "i32", "u8", "f32"]
    assert answer_n(join, ["py:int"], "add").result == "weak:i32"


# ---- grouped: a fold per form, then the groups from the weakest up --------------------

GROUPED = """
[operands]
rank0 = "distinct"
weak = "distinct"
[[rules]]
name = "a 0-d operand of the same kind takes the other's type"
symmetric = true
if = "is_rank0(b) and not is_rank0(a) and kind(a) == kind(b)"
result = "a"
[[rules]]
name = "the wider"
result = "a if bits(a) >= bits(b) else b"
"""


def test_grouped_folds_each_form_then_combines_from_the_weakest_up():
    fold = rules(GROUPED)
    grouped = rules(GROUPED + '[nary]\nmethod = "grouped"\ngroups = ["tensor", "0d"]\n')
    # a fold meets the two 0-d operands first (i64) and the tensor keeps nothing of its type
    assert answer_n(fold, ["0d:i64", "0d:i8", "i16"]).result == "i64"
    for operands in itertools.permutations(["0d:i64", "0d:i8", "i16"]):
        ans = answer_n(grouped, list(operands))
        assert ans.result == "i16", operands
    assert answer_n(grouped, ["0d:i64", "0d:i8", "0d:i16"]).result == "i64"
    assert answer_n(grouped, ["i8", "i32", "0d:i64"]).result == "i32"
    assert answer_n(grouped, ["i8", "0d:f16", "f32"]).result == "f32"
    assert answer_n(grouped, ["0d:i8"]).result == "i8"


def test_grouped_refuses_an_operand_of_a_form_it_does_not_group():
    from promote_cli.errors import UsageError

    grouped = rules(GROUPED + '[nary]\nmethod = "grouped"\ngroups = ["tensor", "0d"]\n')
    with pytest.raises(UsageError, match=r"answers N operands by their form \(tensor, 0d\), and weak:i8"):
        answer_n(grouped, ["i8", "weak:i8", "i16"])


def test_torch_combines_the_categories():
    rs = registry.load("torch")
    for operands in (["0d:u8", "0d:i8", "u8"], ["u8", "0d:f16", "0d:f64"], ["i32", "0d:c64", "f16"]):
        assert answer_n(rs, operands, "result_type").result == recorded("torch-2.13", operands)


@pytest.mark.parametrize("framework, recording, operands", [
    ("numpy", "numpy-2.4", ["i8", "u8", "f16"]),
    ("jax", "jax-0.10", ["bool", "weak:i32", "u8"]),
    ("array-api@2024.12", "array-api-2024.12", ["py:int", "py:int", "i8"]),
    ("torch", "torch-2.13", ["0d:i64", "0d:i8", "u8"]),
])
def test_promote_query_with_three_operands_gives_the_frameworks_answer(framework, recording, operands):
    from click.testing import CliRunner

    from promote_cli.cli import main

    options = {"x64": False, "numpy_dtype_promotion": "standard"} if framework == "jax" else None
    result = CliRunner().invoke(main, ["query", *operands, "--op", "result_type", "-f", framework])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == recorded(recording, operands, options)
