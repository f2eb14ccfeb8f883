"""Op groups (`[opgroups]`, docs/ops.md): the schema checked on load, answers by the framework's own op
names over one to three operands, binary groups agreeing with `promote expr`, and the command line's
shapes. `tests/data/opgroups/opsdemo.toml` is a small ruleset over NumPy's rules written for these tests."""

from __future__ import annotations

import json

import pytest
from support import ROOT, run_cli

import promote_cli
from promote_cli.errors import RuleFileError, UsageError
from promote_cli.oracle import loader, registry

OPS_DIR = ROOT / "tests" / "data" / "opgroups"


@pytest.fixture(autouse=True)
def rules_path(monkeypatch):
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(OPS_DIR))


def q(*operands, op, fw="opsdemo"):
    return promote_cli.query_n(fw, list(operands), op)


# ---- answers ------------------------------------------------------------------------

@pytest.mark.parametrize("operands, op, result", [
    (["i8"], "sum", "0d:i64"),             # integer sums accumulate in the default integer ...
    (["u8"], "prod", "0d:u64"),            # ... of their sign
    (["f16"], "sum", "0d:f16"),
    (["bool"], "sum", "0d:i64"),
    (["i8"], "mean", "0d:f64"),            # mean of an integer is the default float
    (["c64"], "absolute", "f32"),          # abs of complex is the real type of the same width
    (["0d:c128"], "abs", "0d:f64"),        # an alias; a 0-d operand keeps its rank
    (["u8"], "cumsum", "u64"),             # via another group's op, rank tensor
    (["0d:i8"], "cumulative_sum", "i64"),
    (["i8", "u8"], "/", "f64"),            # the operator's own answer
    (["0d:i8", "0d:u8"], "true_divide", "0d:f64"),
    (["i8", "py:int"], "add", "i8"),
    (["f16", "i8"], "@", "0d:f16"),
    (["bool", "i8", "f32"], "where", "f32"),
    (["i8", "u8", "py:float"], "where", "f64"),     # promote over the operands `args` names
    (["i8", "u8"], "matmul", "0d:i16"),             # two vectors: a 0-d result
    (["py:int"], "sum", "0d:i64"),                  # a Python scalar: the array NumPy makes of it
    (["i8", "u8", "f64"], "clip", "f64"),
])
def test_an_op_group_answers_by_its_rule(operands, op, result):
    got = q(*operands, op=op)
    assert str(got.result_operand) == result
    assert got.result == result.removeprefix("0d:")
    assert got.operands == tuple(operands)


def test_the_order_of_an_op_groups_answers_is_drawn_from_them():
    got = promote_cli.lattice("opsdemo", "+", answers=True, types=["i8", "i16", "u8", "f32"])
    assert got.edges == [("i8", "i16"), ("i16", "f32"), ("u8", "i16")] and got.cells == []


def test_a_binary_group_with_an_operator_gives_what_expr_gives():
    for a in ("bool", "i8", "u8", "f16", "c64", "py:int", "py:float", "0d:i16"):
        for b in ("bool", "i16", "u64", "f32", "py:int", "0d:f64"):
            if a.startswith("py:") and b.startswith("py:"):
                continue
            expr = promote_cli.expr(f"x:{a} / y:{b}", "opsdemo")
            got = q(a, b, op="/")
            assert (str(got.result_operand) if got.result else None) == expr.result, (a, b)


@pytest.mark.parametrize("operands, op, message", [
    (["bool", "bool"], "subtract", "TypeError: numpy boolean subtract, the `-` operator, is not supported"),
    (["0d:i8", "i8"], "matmul", "ValueError: matmul: Input operand does not have enough dimensions"),
])
def test_a_refusal_says_the_frameworks_words(operands, op, message):
    got = q(*operands, op=op)
    assert got.refused and got.refusal == message and got.rule.startswith("opgroups.")


def test_an_unknown_op_names_the_closest_ones():
    with pytest.raises(UsageError, match=r"opsdemo@1 has no op 'summ'; closest: sum, cumsum"):
        q("i8", op="summ")


def test_an_op_takes_its_arity():
    with pytest.raises(UsageError, match="takes 1 operand, not 2"):
        q("i8", "i8", op="sum")
    with pytest.raises(UsageError, match="takes 3 operands, not 2"):
        q("bool", "i8", op="where")


def test_an_op_group_op_that_is_also_a_promotion_op_keeps_its_n_operand_answer():
    """`add` and `+` are opsdemo's group ops (two operands) and NumPy's promotion op: three operands are still
    NumPy's result_type of three (as `promote query A B C -f numpy` asks), not an arity error."""
    for op in ("add", "+"):
        got = q("i8", "u8", "f16", op=op)
        assert got.result == promote_cli.query_n("numpy", ["i8", "u8", "f16"]).result == "f16"
    with pytest.raises(UsageError, match="takes 2 operands, not 3"):
        q("i8", "u8", "f16", op="subtract")   # a group's op only: its arity holds


def test_the_order_of_an_op_groups_answers():
    """`promote lattice --answers --op OP` reads the matrix the op's group answers, as `promote table` does."""
    order = promote_cli.lattice("opsdemo", op="/", answers=True, types=["i8", "u8", "f64"])
    assert ("i8", "f64") in order.edges and ("u8", "f64") in order.edges
    assert promote_cli.lattice("opsdemo", op="add", answers=True, types=["i8", "i16"]).edges == [("i8", "i16")]


def test_pair_ops_of_the_rules_still_answer():
    assert promote_cli.query("opsdemo", "i8", "u8", op="result_type").result == "i16"
    assert promote_cli.query("opsdemo", "i8", op="sum").result == "i64"


def test_ops_lists_every_op_with_its_group_and_rule():
    rows = promote_cli.ops("opsdemo")
    by_op = {r["op"]: r for r in rows}
    assert by_op["divide"]["aliases"] == ["true_divide"] and by_op["divide"]["arity"] == 2
    assert by_op["sum"]["group"] == "sums" and "default_int_of(result)" in by_op["sum"]["rule"]
    assert by_op["where"]["rule"] == "promote result_type(b, c)"
    assert by_op["/"]["rule"] == "operator /"
    assert all(r["source"] and r["doc"] for r in rows)


# ---- the schema --------------------------------------------------------------------

def build(groups: str, extra: str = ""):
    text = (f'schema = 2\nname = "bad"\nversion = "1"\nextends = "numpy"\n{extra}\n' + groups)
    raw = loader.merge(registry._raw(registry._find("numpy", registry._files()), registry._files()),
                       loader.parse_toml(text, "bad.toml"))
    return loader.build(raw, "bad.toml")


GOOD = '[opgroups.g]\ndoc = "d"\nsource = "s"\narity = 1\nops = ["total"]\n'


def test_a_good_group_loads():
    assert build(GOOD).op_names["total"] == "g"


@pytest.mark.parametrize("operand, result", [
    ("i8", "0d:i8"), ("0d:i8", "0d:i8"),      # where zero_if holds: 0-d, whatever the operand's form
    ("f32", "f32"), ("0d:f32", "f32"),        # where it does not: a tensor, a 0-d operand's too
])
def test_zero_if_with_rank_tensor_says_the_results_form(operand, result):
    from promote_cli.expressions import ops

    rs = build(GOOD + 'zero_if = "is_int(result)"\nrank = "tensor"\n')
    assert str(ops.answer(rs, "total", [operand]).result_operand) == result
    assert ops.describe(rs.opgroups["g"]) == "a; 0-d if is_int(result); rank tensor"


@pytest.mark.parametrize("rank", ["zero", "tensor", "keep"])
def test_a_weak_result_stays_weak_whatever_the_rank(rank):
    from promote_cli.expressions import ops  # noqa: PLC0415

    rs = build(GOOD + f'result = "weak(f32) if is_int(a) else a"\nrank = "{rank}"\n')
    assert str(ops.answer(rs, "total", ["i8"], {}).result_operand) == "weak:f32"
    assert str(ops.answer(rs, "total", ["f16"], {}).result_operand) == {"zero": "0d:f16", "tensor": "f16",
                                                                      "keep": "f16"}[rank]


@pytest.mark.parametrize("groups, message", [
    (GOOD + 'colour = "red"\n', r"opgroups.g.colour: unknown key"),
    (GOOD.replace('source = "s"\n', ""), r"opgroups.g.source: every op group says it"),
    (GOOD.replace("arity = 1", "arity = 4"), r"opgroups.g.arity: expected 1, 2 or 3"),
    (GOOD + 'operator = "/"\n', r"opgroups.g.arity: operator '/' takes 2 operands, not 1"),
    (GOOD + 'operator = "@@"\n', r"opgroups.g.operator: '@@' is no \[expressions.operators\] entry"),
    (GOOD + 'promote = "nosuch"\n', r"opgroups.g.promote: 'nosuch' is not an op of this file's promotion rules"),
    (GOOD + 'via = "nosuch"\n', r"opgroups.g.via: 'nosuch' is no op of an op group"),
    (GOOD + 'via = "sum"\noperator = "-x"\n', r"opgroups.g: a group starts from one of"),
    (GOOD.replace('"total"', '"sum"'), r"op 'sum' is already in group 'sums'"),   # numpy's, inherited
    (GOOD + 'aliases = { total = "nosuch" }\n', r"opgroups.g.aliases.total: 'nosuch' is not one of"),
    (GOOD + 'refuse_if = "is_bool(a)"\n', r"opgroups.g: refuse_if and refuse go together"),
    (GOOD + 'refuse_if = "is_bool(a)"\nrefuse = { message = "nosuch" }\n', r"opgroups.g.refuse.message: 'nosuch'"),
    (GOOD + 'result = "b"\n', r"opgroups.g.result: .*'b'"),
    (GOOD + 'rank = "two"\n', r"opgroups.g.rank: expected one of keep, zero, tensor"),
    (GOOD + 'zero_if = "is_int(b)"\n', r"opgroups.g.zero_if: .*'b'"),
    (GOOD + 'result = "' + " or ".join(["is_int(a)"] * 12) + '"\n', r"longer than 120 characters"),
    (GOOD + '[opgroups.h]\ndoc = "d"\nsource = "s"\narity = 1\nops = ["total"]\n', r"'total' is already in group 'g'"),
    (GOOD + 'via = "grand"\n[opgroups.h]\ndoc = "d"\nsource = "s"\narity = 1\nops = ["grand"]\nvia = "total"\n',
     r"go through each other: g -> h -> g"),
    (GOOD + 'args = ["a"]\n', r"opgroups.g.args: only `promote` and `via` read args"),
])
def test_a_bad_group_is_one_line_naming_its_key(groups, message):
    with pytest.raises(RuleFileError, match=message) as info:
        build(groups)
    assert "\n" not in str(info.value)


# ---- the command line --------------------------------------------------------------

@pytest.mark.parametrize("args, out", [
    (["query", "i8", "--op", "sum"], "i64\n"),
    (["query", "i8", "u8", "--op", "/"], "f64\n"),
    (["query", "bool", "i8", "f32", "--op", "where"], "f32\n"),
])
def test_query_with_an_op(args, out):
    assert run_cli(*args, "-f", "opsdemo") == (0, out, "")


def test_query_refusal_and_unknown_op():
    code, out, err = run_cli("query", "bool", "bool", "--op", "subtract", "-f", "opsdemo")
    assert code == 1 and err == ("promote: opsdemo@1 refuses bool subtract bool: TypeError: numpy boolean "
                                 "subtract, the `-` operator, is not supported\n")
    code, out, err = run_cli("query", "i8", "--op", "means", "-f", "opsdemo")
    assert code == 2 and err == "promote: opsdemo@1 has no op 'means'; closest: mean, min, max, any\n"


def test_ops_command_lists_the_groups_in_every_listing_format():
    code, out, err = run_cli("ops", "-f", "opsdemo", "--format", "text")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["op", "aliases", "arity", "group", "rule"]
    assert any(line.split()[:4] == ["divide", "true_divide", "2", "divide"] for line in lines)
    code, out, _ = run_cli("ops", "-f", "opsdemo", "--format", "json")
    assert json.loads(out) == promote_cli.ops("opsdemo")
    code, out, _ = run_cli("ops", "-f", "opsdemo", "--format", "csv")
    assert out.splitlines()[0] == "op,aliases,arity,group,rule"
    code, out, err = run_cli("ops", "-f", "cann", "--format", "text")
    assert code == 0 and "declares no op groups" in err


def test_explain_names_the_group_and_its_rule():
    code, out, err = run_cli("explain", "i8", "--op", "mean", "-f", "opsdemo")
    assert code == 0
    assert out.splitlines()[:2] == [
        "opsdemo@1: mean(i8) -> 0d:f64",
        "  rule: [opgroups.mean] promote result_type(a); result f64 if is_int(result) or is_bool(result) else result; "
        "rank zero (mean of an integer or bool is the default float; source: numpy/_core/_methods.py: _mean)"]
    x = promote_cli.explain("opsdemo", "bool", "i8", op="where", c="f32")
    assert x.operands == ["bool", "i8", "f32"] and x.result == "f32" and x.rule["name"] == "where"


def test_batch_takes_the_ops_number_of_operands_a_line():
    lines = [b.answer.result if b.answer else f"error: {b.error}"
             for b in promote_cli.batch("opsdemo", ["i8", "u8 # a comment", "i8 u8", "c64"], op="sum")]
    assert lines == ["i64", "u64", "error: expected 1 operand (sum), got 'i8 u8'", "c64"]
    lines = [b.answer.result if b.answer else f"error: {b.error}"
             for b in promote_cli.batch("opsdemo", ["bool i8 f32", "bool i8"], op="where")]
    assert lines == ["f32", "error: expected 3 operands (where), got 'bool i8'"]
    assert [b.answer.result for b in promote_cli.batch("opsdemo", ["i8 u8"], op="/")] == ["f64"]
    written = []
    status, bad = promote_cli.batch_write("opsdemo", ["i8 u8", "bool bool", "i8 u8"], lambda line: (
        line.answer.result or "refused") if line.answer else "error", written.append, op="subtract")
    assert "".join(written) == "i16\nrefused\ni16\n" and (status, bad) == (1, 0)


def test_expect_lines_take_an_ops_operands():
    report = promote_cli.expect(["opsdemo i8 sum -> i64", "opsdemo bool i8 f32 where -> f32",
                                 "opsdemo i8 u8 -> i16", "opsdemo bool bool subtract -> refused",
                                 "opsdemo i8 mean -> f32"])
    assert [e.line for e in report.mismatches] == [5]
    with pytest.raises(UsageError, match="unknown dtype 'bogus'"):
        promote_cli.expect(["opsdemo i8 bogus -> i16"])


# ---- tables of an op ---------------------------------------------------------------

def test_table_of_a_binary_op_is_its_matrix():
    m = promote_cli.table("opsdemo", "i8,u8,f16", op="/")
    assert m.results() == [["f64", "f64", "f16"], ["f64", "f64", "f16"], ["f16", "f16", "f16"]]


def test_table_of_an_op_of_one_operand_is_a_column_in_every_listing_format():
    c = promote_cli.table("opsdemo", "i8,u8,c64,py:int", op="sum")
    assert isinstance(c, promote_cli.Column) and c.results == [["i64"], ["u64"], ["c64"], ["i64"]]
    assert run_cli("table", "--op", "sum", "-f", "opsdemo", "--types", "i8,u8", "--format", "text") == (
        0, "opsdemo@1 sum  result\ni8             i64\nu8             u64\n", "")
    assert run_cli("table", "--op", "sum", "-f", "opsdemo", "--types", "i8,u8", "--format", "csv")[1] == (
        "opsdemo@1 sum,result\ni8,i64\nu8,u64\n")
    assert "| i8 | i64 |" in run_cli("table", "--op", "sum", "-f", "opsdemo", "--types", "i8", "--format", "markdown")[1]
    assert "i64" in run_cli("table", "--op", "sum", "-f", "opsdemo", "--types", "i8", "--format", "rich")[1]
    code, out, _ = run_cli("table", "--op", "sum", "-f", "opsdemo", "--types", "i8,u8", "--format", "json")
    assert code == 0 and json.loads(out)["results"] == {"opsdemo": ["i64", "u64"]}


def test_a_diff_of_an_op_of_one_operand_is_each_sides_column_with_differences_marked():
    d = promote_cli.diff("opsdemo", "opsdemo@2", types="bool,i64,f16", op="sum")
    assert d.results == [["i64", "i32"], ["i64", "i64"], ["f16", "f16"]]
    assert d.differences == [{"a": "bool", "opsdemo": "i64", "opsdemo@2": "i32"}]
    code, out, err = run_cli("table", "--op", "sum", "--diff", "opsdemo", "opsdemo@2", "--types", "bool,i64",
                             "--format", "text")
    assert (code, out.splitlines(), err) == (0, [
        "a     opsdemo@1  opsdemo@2  differs",
        "bool  i64        i32        *",
        "i64   i64        i64"], "opsdemo@1 vs opsdemo@2 (sum): 1 of 2 operands differ\n")
    code, out, err = run_cli("table", "--op", "sum", "--diff", "opsdemo", "opsdemo@2", "--types", "bool",
                             "--format", "json")
    assert json.loads(out)["differences"] == [{"a": "bool", "opsdemo": "i64", "opsdemo@2": "i32"}] and err == ""


def test_a_table_of_an_op_of_three_operands_is_a_usage_error():
    code, _, err = run_cli("table", "--op", "where", "-f", "opsdemo")
    assert code == 2 and "where takes three operands, which no table shows" in err


# ---- expressions: calls of ops and @ -------------------------------------------------

@pytest.mark.parametrize("text, result", [
    ("sum(x:i8) / 2", "0d:f64"),              # a reduction's 0-d result, then the operator's rule
    ("mean(x:i32) + y:f16", "f64"),
    ("x:f16 @ y:i8", "0d:f16"),               # @: its op group
    ("abs(x:c64) * 2", "f32"),
    ("where(c:bool, x:i8, y:u8) + 1", "i16"),
    ("cumsum(x:0d:u8)", "u64"),
])
def test_expr_calls_an_ops_group_and_reads_at(text, result):
    assert promote_cli.expr(text, "opsdemo").result == result


def test_expr_op_calls_refuse_and_check_their_arity():
    got = promote_cli.expr("x:0d:i8 @ y:i8", "opsdemo")
    assert got.refused and got.refusal.endswith("ValueError: matmul: Input operand does not have enough dimensions")
    with pytest.raises(UsageError, match="sum takes 1 argument, not 2"):
        promote_cli.expr("sum(x:i8, y:i8)", "opsdemo")
    with pytest.raises(UsageError, match=r"tosa@\S+ has no rule for @ in expressions"):
        promote_cli.expr("x:f16 @ y:bf16", "tosa")      # tosa declares no op groups
    code, out, err = run_cli("expr", "sum(x:i8) / 2", "-f", "opsdemo")
    assert (code, out) == (0, "0d:f64\n")


# ---- start-up -------------------------------------------------------------------------

def test_a_pair_query_of_a_ruleset_without_op_groups_loads_no_expression_module():
    """OpenVINO declares no op groups: its pair query runs on the fast path with nothing of the op groups or
    expressions loaded (a ruleset with op groups answers `add` by its group, as its recording has it)."""
    from test_fast_path import _modules_of_a_query

    loaded = _modules_of_a_query(["query", "i8", "u8", "-f", "openvino", "-O", "promote_unsafe=true"])
    assert not {m for m in loaded if m.startswith("promote_cli.expressions")}
    assert "click" not in {m.split(".")[0] for m in loaded}


def test_a_name_of_an_op_group_is_answered_by_it_with_its_arity_and_by_the_rules_with_another():
    rs = registry.load("numpy")
    assert rs.by_group("add", 2) and rs.by_group("+", 2) and rs.by_group("/") and rs.by_group("sum")
    assert not rs.by_group("add", 3) and not rs.by_group("result_type", 2)
    assert promote_cli.query("numpy", "i8", "u8", op="add").rule.startswith("opgroups")
    assert promote_cli.query("numpy", "i8", "u8", op="/").rule.startswith("opgroups.divide")
    assert promote_cli.query_n("numpy", ["i8", "u8", "f16"], "add").result == "f16"  # [nary]'s answer


def test_a_weak_result_keeps_no_rank_in_a_rank_zero_group():
    """A weak value has no rank (the contract's ``weak:``): `rank = "zero"` makes 0-d arrays only."""
    from promote_cli.expressions import ops

    text = ('schema = 2\nname = "weakdemo"\nversion = "1"\nextends = "jax"\n[opgroups.g]\ndoc = "d"\nsource = "s"\n'
            'arity = 2\nops = ["g"]\npromote = "add"\nrank = "zero"\n')
    raw = loader.merge(registry._raw(registry._find("jax", registry._files()), registry._files()),
                       loader.parse_toml(text, "weakdemo.toml"))
    rs = loader.build(raw, "weakdemo.toml")
    assert str(ops.answer(rs, "g", ["i8", "py:float"], {}).result_operand) == "weak:f32"
    assert str(ops.answer(rs, "g", ["i8", "i16"], {}).result_operand) == "0d:i16"


def test_zero_if_makes_a_0d_result_where_it_holds_else_rank_decides():
    """`zero_if`: 0-d where the condition holds (a contraction of two vectors), else as `rank` says."""
    extra = ('[opgroups.g]\ndoc = "d"\nsource = "s"\narity = 2\nops = ["g"]\npromote = "add"\n'
             'zero_if = "is_tensor(a) and is_tensor(b)"\n')
    from promote_cli.expressions import ops

    rs = build(extra)
    assert str(ops.answer(rs, "g", ["i8", "i16"], {}).result_operand) == "0d:i16"
    assert str(ops.answer(rs, "g", ["i8", "0d:i16"], {}).result_operand) == "i16"
    assert str(ops.answer(rs, "g", ["0d:i8", "py:int"], {}).result_operand) == "0d:i8"
    assert "0-d if is_tensor(a) and is_tensor(b)" in ops.describe(rs.opgroups["g"])


def test_a_refused_ops_answer_names_the_option_under_which_it_answers():
    """As a pair answer does: JAX's strict promotion refuses i8 + i16, the standard one gives i16."""
    from promote_cli.expressions import ops

    got = ops.answer(registry.load("jax"), "+", ["i8", "i16"], {"numpy_dtype_promotion": "strict"})
    assert got.refused and got.hint == {"option": "numpy_dtype_promotion", "value": "standard", "result": "i16"}


def test_an_op_of_a_group_and_of_the_rules_asked_with_more_operands_is_the_rules():
    """`add` is a binary group's op and the promotion rules' op: three operands are the rules' N-operand answer;
    an op only a group has still takes its own number."""
    assert promote_cli.query_n("opsdemo", ["i8", "u8", "f16"]).result == "f16"
    assert promote_cli.query_n("opsdemo", ["i8", "u8"], "add").rule.startswith("opgroups.add")
    with pytest.raises(UsageError, match="takes 2 operands, not 3"):
        promote_cli.query_n("opsdemo", ["i8", "u8", "f16"], "subtract")
