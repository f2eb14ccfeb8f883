"""`promote expr` and `promote_cli.expr`: the parser (carets at the right column, bounded on hostile
input), evaluation through the oracle (the anvil page's propagation example), and the CLI's
agreement with the API."""

from __future__ import annotations

import json
import re

import pytest
from support import ROOT, run_cli

import promote_cli
from promote_cli.errors import RuleFileError, UsageError
from promote_cli.expressions import syntax
from promote_cli.expressions.evaluate import evaluate
from promote_cli.oracle import registry
from promote_cli.vocab import operators

ANVIL_PAGE = ROOT / "spec" / "anvil-type-promotion.md"
#: the page's "Propagating Ambiguity" example, whose code the rendered page leaves out (r-xla/anvil,
#: vignettes/type-promotion.Rmd, 259318ad): z <- x + 1L; z * y with x = nv_scalar(TRUE) (a known
#: bool) and y = nv_scalar(2L, dtype = "i16")
ANVIL_EXAMPLE = "(x:bool + 1L) * y:i16"


def test_the_anvil_page_propagation_example_gives_the_page_answer():
    page = ANVIL_PAGE.read_text(encoding="utf-8")
    section = page[page.index("Propagating Ambiguity"):]
    printed = re.search(r"\[ CPU(\w+)\{\} \]", section).group(1)        # the example's printed result
    z_type = re.search(r"The type of z is (\w+)\?", section).group(1)   # "i32?": an ambiguous i32
    got = promote_cli.expr(ANVIL_EXAMPLE, "anvil")
    assert (printed, z_type) == ("i16", "i32")
    assert got.result == printed
    z = got.tree.children[0]
    assert z.source == "(x:bool + 1L)" and z.operand == f"weak:{z_type}" and z.weak
    # if z were known, y would be promoted to i32, as the page says
    assert promote_cli.expr("(x:bool + y:i32) * z:i16", "anvil").result == "i32"


@pytest.mark.parametrize("text, column, carets, message", [
    ("x:i8 + )", 8, "^", "expected an operand, found ')'"),
    ("x:i8 +", 7, "^", "the expression ends where an operand was expected"),
    ("(x:i8 + 1", 10, "^", "expected ')' to close the '(' at column 1"),
    ("x:i8 + 1)", 9, "^", "unmatched ')'"),
    ("x:i8 < y:i8 < z:i8", 13, "^", "chained comparisons are not supported"),
    ("x:i8 = 1", 6, "^", "'=' is not an operator here"),
    ("x:i8 + 1.5.2", 8, "^^^^", "malformed number '1.5.'"),
    ("x: + 1", 3, "^", "expected a type after 'x:'"),
    ("x + 1", 1, "^", "'x' is not declared"),
    ("x:i8 $ 1", 6, "^", "unexpected character '$'"),
    ("", 1, "^", "the expression is empty"),
    ("maximum(x:i8 1)", 14, "^", "expected ',' or ')' in the call of maximum"),
    ("1e+", 4, "^", "expected digits in the exponent"),
    ("x:f32 + 1.5L", 12, "^", "L follows an integer only"),
    ("x:f32 + 007", 9, "^^^", "leading zeros are not allowed in an integer"),
])
def test_a_malformed_expression_names_its_column_and_draws_a_caret(text, column, carets, message):
    with pytest.raises(syntax.ExpressionSyntaxError) as caught:
        syntax.parse(text)
    err = caught.value
    assert str(err).startswith(f"malformed expression at column {column}: {message}")
    shown, under = err.context_lines()
    assert shown == "  " + text.rstrip()
    assert under == "  " + " " * (column - 1) + carets
    code, out, stderr = run_cli("expr", text, "-f", "numpy")
    assert code == 2 and out == ""
    assert stderr.splitlines() == [f"promote: {err}", shown, under]


@pytest.mark.parametrize("text", ["", " ", "   "])
def test_the_drawn_lines_of_a_blank_expression_are_still_indented(text):
    # the contract: after the one-line message come two lines that each start with two spaces
    code, out, stderr = run_cli("expr", text, "-f", "numpy")
    first, shown, under = stderr.splitlines()
    assert code == 2 and out == "" and first.startswith("promote: malformed expression at column ")
    assert shown == "  " and under.startswith("  ") and under.strip() == "^"


@pytest.mark.parametrize("text, span, message", [
    ("x:i8 + y:bogus", (9, 14), "unknown dtype 'bogus'"),
    ("x:i8 + x:i16", (7, 12), "x is declared i8 at column 1"),
    ("x:i8 + 1L", (7, 9), "numpy@2.4 has no long literals like 1L"),
    ("x:i8 $ 1", (5, 6), "unexpected character '$'"),
    ("frobnicate(x:i8, 1)", (0, 10), "unknown function 'frobnicate'"),
    ("where(x:bool, 1)", (0, 16), "where takes 3 arguments, not 2"),
])
def test_evaluation_errors_point_at_their_part(text, span, message):
    with pytest.raises(syntax.ExpressionSyntaxError) as caught:
        promote_cli.expr(text, "numpy")
    assert message in str(caught.value)
    assert (caught.value.position, caught.value.end) == span


def test_an_operator_a_framework_lacks_is_a_usage_error_naming_what_it_has():
    with pytest.raises(UsageError, match=r"cann@8.0 has no rule for / in expressions \(it has: \+ - \*\)"):
        promote_cli.expr("x:f16 / y:f16", "cann")
    with pytest.raises(UsageError, match="cann@8.0 has no int literals like 2"):
        promote_cli.expr("x:f16 * 2", "cann")
    assert promote_cli.expr("(x:i8 * y:i8) < z:i32", "tosa").result == "bool"  # MUL widens to i32
    assert promote_cli.expr("x:f16 * s:0d:f32", "cann").result == "f32"


HOSTILE = [
    "x:i8 + " * 700 + "1",                         # too long
    " + ".join(f"v{i}:i8" for i in range(300)),     # too long a chain
    "(" * 200 + "x:i8" + ")" * 200,                # too deep
    "-" * 500 + "x:i8",                            # deep unary
    "x:i8" + " ** x" * 100,                        # right-nested power
    " + ".join(f"v{i}:i8" for i in range(1200)),    # too many nodes
    "\x00\x01\x02",
    "x:i8 + \u00e9",
    "x:i8 + \u4e00\u4e01",
    "\ud800",
    "x:i8\n+ 1",
    "x:\u0130 + 1",
    "1" * 4000,
    "2 ** 2 ** 2 ** 2 ** 2 ** 2",
    "9" * 300 + " * " + "9" * 300 + " * 1.0",
    "x:i8 + (1 / 0)",
    "x:" + "a" * 3000,
    "maximum(" * 60 + "x:i8" + ", 1)" * 60,
    "where(where(where(c:bool, c, c), c, c), c, c" + ")" * 30,
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_expressions_never_traceback_or_hang(text):
    code, out, stderr = run_cli("expr", text, "-f", "jax")
    assert code in (0, 1, 2), stderr
    assert "Traceback" not in stderr and "internal error" not in stderr
    if code:
        assert stderr.startswith("promote: ") and len(stderr.splitlines()) <= 3
    if code == 2:
        with pytest.raises(UsageError):
            promote_cli.expr(text, "jax")


def test_hostile_bounds_are_usage_errors():
    for text in HOSTILE[:5]:
        with pytest.raises(syntax.ExpressionSyntaxError, match="too long|nested too deeply|too many"):
            syntax.parse(text)


def test_a_long_flat_chain_is_not_too_deep():
    text = " + ".join(f"v{i}:i8" for i in range(150)) + " * 2"
    assert promote_cli.expr(text, "numpy").result == "i8"
    with pytest.raises(syntax.ExpressionSyntaxError, match="too long a chain of operators"):
        syntax.parse(" + ".join(f"v{i}:i8" for i in range(250)))


def test_literal_spellings():
    from promote_cli.expressions import literals

    cases = {"1": ("int", 1), "007j": ("complex", 7j), "000": ("int", 0), "1e3": ("float", 1000.0), ".5": ("float", 0.5),
             "2.": ("float", 2.0), "10L": ("long", 10), "True": ("bool", True), "1J": ("complex", 1j)}
    for text, (kind, value) in cases.items():
        node = syntax.parse(text)
        assert node.kind == "literal" and node.literal == text
        assert (literals.kind_of(text), literals.value_of(text)) == (kind, value)


def test_python_arithmetic_on_literals():
    assert promote_cli.expr("1 + 2.5", "numpy").result == "py:float"
    assert promote_cli.expr("True + True", "numpy").result == "py:int"
    assert promote_cli.expr("7 / 7", "torch").result == "py:float"
    assert promote_cli.expr("x:i8 + (200 + 100)", "numpy").refusal.endswith(
        "OverflowError: Python integer 300 out of bounds for int8")
    refused = promote_cli.expr("x:f32 + 1 // 0", "numpy")
    assert refused.result is None and refused.refused_span == (8, 14)
    assert "ZeroDivisionError" in refused.refusal and "1 // 0 (columns 9-14)" in refused.refusal
    big = promote_cli.expr("x:f32 + 2 ** 100000", "numpy")
    assert big.result is None and "OverflowError" in big.refusal


def test_forms_flow_into_the_parent():
    steps = {s.source: s.operand for s in promote_cli.expr("(s:0d:i8 + 1) * x:f16", "torch").steps()}
    assert steps == {"s:0d:i8": "0d:i8", "1": "py:1", "(s:0d:i8 + 1)": "0d:i8", "x:f16": "f16",
                     "(s:0d:i8 + 1) * x:f16": "f16"}
    assert promote_cli.expr("w:weak:i32 * 2 < 3", "jax").result == "weak:bool"
    assert promote_cli.expr("s:0d:f32 + t:0d:f16", "numpy").result == "0d:f32"


def test_the_cli_agrees_with_the_api():
    for text, fw, options in [("x:i16 * (y:i8 + 1)", "jax", []), ("x:i8 / 2", "jax", ["-O", "x64=true"]),
                              ("x:i8 & 1.5", "numpy", []), ("x:u8 + w:weak:f32", "jax", [])]:
        api = promote_cli.expr(text, fw, dict(o.split("=") for o in options[1::2]))
        code, out, err = run_cli("expr", text, "-f", fw, *options)
        assert code == (0 if api.result else 1)
        assert out == (f"{api.result}\n" if api.result else "")
        assert err == ("" if api.result else f"promote: {api.refusal}\n")
        code, out, _ = run_cli("expr", text, "-f", fw, *options, "--format", "json")
        data = json.loads(out)
        assert data.pop("refusal", None) == api.refusal and data == api.to_dict()  # the API's refusal, beside error
    with pytest.raises(UsageError) as caught:
        promote_cli.expr("x:i8 + 1", "jax", {"nonsense": "1"})
    code, _, err = run_cli("expr", "x:i8 + 1", "-f", "jax", "-O", "nonsense=1")
    assert code == 2 and err == f"promote: {caught.value}\n"


def test_explain_lists_every_node_with_its_rule():
    code, out, _ = run_cli("expr", "(x:bool + 1L) * y:i16", "-f", "anvil", "--explain")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "anvil@0.1.0.9000: (x:bool + 1L) * y:i16 -> i16"
    assert lines[1].split() == ["node", "result", "weak", "decided", "by"]
    rows = [line.split(None, 1)[0] for line in lines[2:]]
    assert rows == ["x:bool", "1L", "(x:bool", "y:i16", "(x:bool"]
    assert "weak:i32  weak  anvil@0.1.0.9000 +: one ambiguous" in out
    data = json.loads(run_cli("expr", "(x:bool + 1L) * y:i16", "-f", "anvil", "--format", "json")[1])
    assert data["result"] == "i16" and data["tree"]["children"][0]["weak"] is True
    assert data["tree"]["children"][0]["span"] == [0, 13]


def _load(tmp_path, extra: str, schema: int = 2):
    path = tmp_path / "demo.toml"
    path.write_text(f'schema = {schema}\nname = "demo"\nversion = "1"\ntypes = ["i8", "i16"]\n'
                    '[operands]\npython = "distinct"\n[[rules]]\nname = "join"\nresult = "max(a, b, key=bits)"\n'
                    .replace(", key=bits", "") + extra, encoding="utf-8")
    return registry.load_path(str(path))


@pytest.mark.parametrize("extra, message", [
    ('[expressions]\nbogus = 1\n', "expressions.bogus: unknown key"),
    ('[expressions.operators."@"]\nop = "add"\n', "expressions.operators.@: unknown operator"),
    ('[expressions.operators."+"]\nresult = "a"\n', "names the ruleset op"),
    ('[expressions.operators."+"]\nop = "add"\nresult = "nonsense(a)"\n', "unknown function 'nonsense'"),
    ('[expressions.operators."+"]\nop = "add"\nrefuse_if = "true"\n', "refuse_if and refuse go together"),
    ('[expressions]\nliterals = { int = "py:float" }\n', "int literals cannot be the Python scalar py:float"),
    ('[expressions]\nliterals = { float = "weak:f32" }\n', "f32 is not one of the file's types"),
    ('[expressions.operators."+"]\nop = "add"\ncondition = "true"\ncondition_refuse = "x"\n', "in where only"),
])
def test_the_expressions_section_is_validated_on_load(tmp_path, extra, message):
    with pytest.raises(RuleFileError, match=re.escape(message)):
        _load(tmp_path, extra)


SHARED = """
[expressions.defaults]
op = "add"
promotion = "a"
result = "a"
[expressions.groups.compare]
operators = ["==", "<"]
result = "i16"
[expressions.groups.strict]
operators = ["<"]
refuse_if = "is_int(result) and bits(result) > 8"
refuse = "no wide ordering of {result}"
[expressions.operators."+"]
[expressions.operators."=="]
[expressions.operators."-"]
result = false
[expressions.operators."-x"]
"""


def test_operators_inherit_the_defaults_then_their_groups_then_their_own_keys(tmp_path):
    ops = _load(tmp_path, SHARED).expressions.operators
    assert list(ops) == ["+", "==", "-", "-x", "<"]  # blocks in the file's order, then those only a group lists
    assert (ops["+"].op, ops["+"].result.text) == ("add", "a")
    assert (ops["=="].result.text, ops["=="].refuse_if) == ("i16", None)
    assert (ops["<"].op, ops["<"].result.text, ops["<"].refuse) == ("add", "i16", "no wide ordering of {result}")
    assert (ops["-"].op, ops["-"].result) == ("add", None)  # `false` leaves the default out
    assert (ops["-x"].op, ops["-x"].result) == (None, None)  # a unary operator takes no defaults
    rs = _load(tmp_path, SHARED)
    assert "no wide ordering of i16" in evaluate(rs, "x:i16 < y:i8", None).refusal
    assert evaluate(rs, "x:i8 < y:i16", None).result == "i16" and evaluate(rs, "x:i8 - y:i16", None).result == "i8"


@pytest.mark.parametrize("extra, message", [
    ('[expressions.defaults]\nbogus = 1\n', "expressions.defaults.bogus: unknown key"),
    ('[expressions.groups.g]\noperators = ["+"]\nbogus = 1\n', "expressions.groups.g.bogus: unknown key"),
    ('[expressions.groups.g]\nop = "add"\n', "expressions.groups.g.operators: expected a list"),
    ('[expressions.groups.g]\noperators = []\n', "a group lists the operators it is shared by"),
    ('[expressions.groups.g]\noperators = ["@"]\n', "expressions.groups.g.operators[0]: unknown operator '@'"),
    ('[expressions.groups.g]\noperators = ["+", "+"]\nop = "add"\n', "operators[1]: '+' is listed twice"),
    ('[expressions.groups]\ng = 3\n', "expressions.groups.g: expected a table"),
    ('[expressions.groups.g]\noperators = ["+"]\nop = "add"\n[expressions.groups.h]\noperators = ["+"]\nop = "add"\n',
     "expressions.groups.h.op: '+' already takes op from group 'g'"),
    ('[expressions.operators."+"]\nop = "add"\nresult = false\n',
     "expressions.operators.+.result: false leaves out an inherited key, and '+' inherits no result"),
    ('[expressions.groups.g]\noperators = ["+"]\nop = "add"\nresult = false\n', "expressions.groups.g.result: false"),
    ('[expressions.defaults]\nop = "add"\nresult = "nonsense(a)"\n[expressions.operators."+"]\n',
     "expressions.operators.+.result: unknown function 'nonsense'"),
    ('[expressions.groups.g]\noperators = ["+"]\nop = false\n', "expressions.operators.+.op: expected a string"),
])
def test_broken_defaults_and_groups_are_load_errors(tmp_path, extra, message):
    with pytest.raises(RuleFileError, match=re.escape(message)):
        _load(tmp_path, extra)


def test_schema_1_has_no_expressions(tmp_path):
    with pytest.raises(RuleFileError, match="expressions: needs schema = 2"):
        _load(tmp_path, '[expressions]\n', schema=1)


def test_every_shipped_expressions_section_loads():
    with_rules = sorted(rs.name for rs in promote_cli.frameworks() if rs.expressions is not None)
    assert {"anvil", "array-api", "cann", "jax", "numpy", "openvino", "paddle", "tensorflow", "torch", "tosa"} <= set(
        with_rules)
    for op in operators.BINARY:  # every operator of the syntax parses, and JAX has a rule for it
        tree = syntax.parse(f"x:i8 {op} y:i8")
        assert (tree.kind, tree.op) == ("binary", op)
        promote_cli.expr(f"x:i8 {op} y:i8", "jax")


TOKENS = ["x:i8", "y:u8", "z:f16", "s:0d:f32", "w:weak:i32", "b:bool", "x", "y", "1", "300", "2.5", "1e3", "True",
          "1j", "1L", "+", "-", "*", "/", "//", "**", "%", "==", "<", ">=", "&", "|", "^", "(", ")", ",",
          "maximum(", "where(", "@", ":", "\u00e9", " "]


def test_random_token_soup_is_answered_or_a_usage_error():
    import random

    rng = random.Random(14)
    for _ in range(1500):
        text = " ".join(rng.choice(TOKENS) for _ in range(rng.randint(0, 12)))
        for fw in ("jax", "numpy", "anvil"):
            try:
                got = promote_cli.expr(text, fw)
            except UsageError:
                continue
            assert got.result is not None or got.refusal.startswith(f"{got.framework}@")


def _generated(rng, depth=0) -> str:
    leaves = ["x:i8", "y:u8", "z:f16", "s:0d:i16", "t:0d:f32", "b:bool", "1", "2", "-3", "2.5", "True", "1j"]
    if depth > 3 or rng.random() < 0.3:
        return rng.choice(leaves)
    kind = rng.random()
    if kind < 0.7:
        op = rng.choice(operators.BINARY)
        return f"({_generated(rng, depth + 1)} {op} {_generated(rng, depth + 1)})"
    if kind < 0.8:
        return f"-{_generated(rng, depth + 1)}"
    if kind < 0.9:
        return f"maximum({_generated(rng, depth + 1)}, {_generated(rng, depth + 1)})"
    return f"where({_generated(rng, depth + 1)} < 1, {_generated(rng, depth + 1)}, {_generated(rng, depth + 1)})"


def test_explain_names_the_op_an_operator_is_promoted_as():
    """torch's `*` is promoted as `+` (its [expressions] say so): the row says `* (promoted as +)`, not `+`."""
    code, out, _ = run_cli("expr", "x:i8 * y:u8 + x:i8", "-f", "torch", "--explain")
    rows = {line.split("  ")[1].strip(): line for line in out.splitlines()[2:]}
    assert code == 0 and "torch@2.13 * (promoted as +): same category" in rows["x:i8 * y:u8"]
    assert "torch@2.13 +: same category" in rows["x:i8 * y:u8 + x:i8"]
    data = json.loads(run_cli("expr", "x:i8 * y:u8", "-f", "torch", "--format", "json")[1])
    assert data["tree"]["rule"] == "torch@2.13 * (promoted as +): same category"
    code, out, _ = run_cli("expr", "x:i8 * y:u8", "-f", "cann", "--explain")
    assert code == 0 and "cann@8.0 *: table" in out  # cann asks `*` as its own op


@pytest.mark.parametrize("fw", ["jax", "numpy", "torch", "paddle", "tensorflow", "array-api", "anvil", "tosa",
                                "openvino", "cann"])
def test_generated_expressions_never_meet_a_rule_defect(fw):
    """Well-formed expressions over one variable set give a result, a refusal or a usage error for what the
    framework lacks (a literal, an operator, a type): never a rule that fails (a RuleDefect)."""
    import random

    from promote_cli.errors import RuleDefect

    rng = random.Random(fw)
    for _ in range(300):
        text = _generated(rng)
        try:
            promote_cli.expr(text, fw)
        except RuleDefect:
            raise
        except UsageError:
            pass


def test_frameworks_lists_what_promote_expr_evaluates():
    code, out, _ = run_cli("frameworks", "-v", "-f", "cann")
    assert code == 0 and "  promote expr: + - *; literals: none" in out.splitlines()
    code, out, _ = run_cli("frameworks", "-f", "anvil", "--format", "json")
    (record,) = json.loads(out)
    assert record["expressions"]["operators"] == ["+", "-", "*", "/", "**"]
    assert record["expressions"]["literals"]["long"] == "weak:i32"
    paddle = {r["ruleset"]: r for r in json.loads(run_cli("frameworks", "-f", "paddle", "--format", "json")[1])}
    assert sorted(paddle["paddle@2.6"]["expressions"]["operators"]) == sorted(paddle["paddle@3.3"]["expressions"]["operators"])
    assert registry.load("paddle@2.6").expressions.doc.startswith("derived from Paddle 2.6's type-promotion doc")


def test_a_ruleset_without_expression_rules_is_a_usage_error_naming_it(tmp_path, monkeypatch):
    (tmp_path / "plain.toml").write_text('schema = 1\nname = "plain"\nversion = "1"\ndescription = "no expressions"\n'
                                        'source = "tests"\ntypes = ["i8"]\n[[rules]]\nname = "same"\nresult = "a"\n')
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(tmp_path))
    registry.clear_cache()
    try:
        with pytest.raises(UsageError, match=r"plain@1 has no \[expressions\] rules"):
            promote_cli.expr("x:i8 + y:i8", "plain")
        code, _, err = run_cli("expr", "x:i8 + y:i8", "-f", "plain")
    finally:
        registry.clear_cache()
    assert code == 2 and len(err.splitlines()) == 1 and "plain@1 has no [expressions] rules" in err


def test_every_shipped_ruleset_evaluates_expressions():
    names = [p.stem for p in (ROOT / "rules").glob("*.toml")]
    assert len(names) >= 16 and all(registry.load(n).expressions is not None for n in names)


@pytest.mark.parametrize("text, want", [
    ("x:i32 / 2", "f32"),                        # the doc's Divide rule: int / scalar gives float32
    ("x:i32 / y:i32", "i32"),                    # tensor / tensor: the Common rule
    ("x:f16 + y:f32 > 2.5", "bool"),             # the Logic rule
    ("where(b:bool, x:f16, 1.5)", "f16"),        # a float scalar with a float tensor keeps its type
    ("x:c64 < y:c64", None),                     # Logic rule: no complex
    ("x:i16 * (y:i8 + 1)", None),                # tensors of different integer types do not promote
    ("x:i8 & y:i16", None),                      # bitwise APIs: tensor-scalar only in the scope table
    ("maximum(x:f32, 2)", None),                 # maximum: tensor-tensor only
    ("maximum(x:f32, y:f16) ** 2", "f32"),
])
def test_paddle_2_6_evaluates_each_node_as_the_doc_says_its_api_promotes(text, want):
    got = promote_cli.expr(text, "paddle@2.6")
    assert got.result == want, (got.result, got.refusal)
    for step in got.steps():
        if step.kind == "binary" and step.operand is not None and not step.operand.startswith("py:"):
            a, b = (c.operand for c in step.children)
            pair = promote_cli.query("paddle@2.6", a, b, op=step.op)
            assert pair.result == step.operand.removeprefix("0d:"), step.source


@pytest.mark.parametrize("text, want", [
    ("x:f16 * (y:bf16 + s:0d:f8e4m3)", "f32"),   # FP8 cells lie outside the initialised block: f32
    ("x:u16 + y:c64", "c64"),
    ("y:c64 + x:u16", None),                     # PromoteType is not symmetric
    ("x:i4 - y:i4", "i4"),
])
def test_cann_opbase_evaluates_each_node_as_promotetype(text, want):
    got = promote_cli.expr(text, "cann@opbase")
    assert got.result == want, (got.result, got.refusal)


def test_a_weak_variable_is_a_weakly_typed_tensor_as_recorded():
    # the probe makes `w:weak:T` a (3,) tensor with JAX's weak_type; where the result stops being weak it is a
    # tensor, not a rank-0 one (the recording says f16, not 0d:f16)
    recorded = json.loads((ROOT / "tests" / "data" / "recordings" / "expr-jax.json").read_text())["expressions"]
    cases = [(text, options, result) for text, options, result, _ in recorded
             if "w:weak:" in text and "0d:" in text and result is not None and not result.startswith("weak:")]
    assert cases
    for text, options, result in cases:
        assert promote_cli.expr(text, "jax", options).result == result, text
        assert not result.startswith("0d:"), text
    weak = [s for s in promote_cli.expr("w:weak:f32 + s:0d:f16", "jax").steps() if s.source == "w:weak:f32"]
    assert [s.operand for s in weak] == ["weak:f32"]
