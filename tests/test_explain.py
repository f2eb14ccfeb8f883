"""`promote explain` and `promote_cli.explain`: the deciding rule, its lookups, and the options' alternatives."""

from __future__ import annotations

import json

import pytest

import promote_cli
from support import run_cli

SWEPT = ["cann", "openvino", "jax", "torch", "paddle", "tosa", "numpy@2.4"]


@pytest.mark.parametrize("framework", SWEPT)
def test_an_explanation_agrees_with_the_answer_on_every_cell(framework):
    types = [d.name for d in promote_cli.load(framework).types][:12]
    for a in types:
        for b in types:
            x = promote_cli.explain(framework, a, b)
            ans = promote_cli.query(framework, a, b)
            assert (x.result, x.refusal) == (ans.result, ans.refusal), (a, b)
            for step in x.steps:
                if step.kind == "table":
                    assert (step.row, step.column) == (a, b) or step.value is not None or x.result is None
                if step.kind == "lattice" and step.value is not None:
                    lat = promote_cli.load(framework).lattices[step.name]
                    for start, path in zip((step.row, step.column), step.path):
                        assert path[0] == start and path[-1] == step.value
                        assert all(up in lat.edges.get(low, ()) for low, up in zip(path, path[1:]))


def test_a_table_cell_is_named():
    x = promote_cli.explain("cann", "i8", "u8")
    assert x.rule["name"] == "table" and x.result == "i16"
    assert [(s.kind, s.name, s.row, s.column, s.value) for s in x.steps] == [("table", "main", "i8", "u8", "i16")]


def test_the_openvino_check_and_the_attribute_that_allows_the_pair():
    x = promote_cli.explain("openvino", "i8", "u8")
    assert x.result is None and x.rule_result == "i16"
    assert "promote_unsafe" in x.refused_by["if"] and "fails check 'promote_unsafe'" in x.refusal
    allowed = {(alt.option, alt.value): alt.result for alt in x.alternatives}
    assert allowed[("promote_unsafe", True)] == "i16"
    assert allowed[("pytorch_scalar_promotion", True)] is None
    code, out, _ = run_cli("explain", "i8", "u8", "-f", "openvino")
    assert code == 0
    assert "refused by [[after]] 'unsigned into signed needs twice the bits'" in out
    assert "promote_unsafe=true -> i16" in out and "fails check 'promote_unsafe'" in out


@pytest.mark.parametrize("framework,a,b", [("openvino", "i8", "u8"), ("jax", "i8", "f16"), ("array-api", "f32", "py:int")])
def test_every_alternative_is_the_answer_with_that_option(framework, a, b):
    x = promote_cli.explain(framework, a, b)
    assert x.alternatives
    for alt in x.alternatives:
        assert promote_cli.query(framework, a, b, options={alt.option: alt.value}).result == alt.result


def test_an_after_clause_that_changes_the_result_is_shown():
    x = promote_cli.explain("paddle", "i32", "i32", op="atan2")
    assert x.rule_result == "i32" and x.result == "f64"
    assert [(s.name, s.row, s.value) for s in x.steps if s.kind == "after"] == [
        ("atan2 of integers gives float64", "i32", "f64")]
    code, out, _ = run_cli("explain", "i32", "i32", "-f", "paddle", "--op", "atan2")
    assert "[[after]] 'atan2 of integers gives float64': i32 -> f64" in out


def test_a_lattice_path_is_the_chain_of_edges_to_the_join():
    x = promote_cli.explain("jax", "i8", "f16", op="promote_types")   # jax's add is an op group's
    (step,) = [s for s in x.steps if s.kind == "lattice"]
    assert step.value == "f16" and step.path[0][0] == "i8" and step.path[0][-1] == "f16"
    code, out, _ = run_cli("explain", "i8", "f16", "-f", "jax", "--op", "promote_types")
    assert " -> ".join(step.path[0]) in out and "numpy_dtype_promotion=strict -> refused" in out


def test_a_per_op_and_a_scalar_rule():
    x = promote_cli.explain("tosa", "i8", "i16", op="mul")
    assert x.op_group == "MUL" and x.refused_by is not None
    x = promote_cli.explain("torch", "0d:i64", "i8")
    assert x.normalised == ("0d:i64", "i8") and x.result == "i8" and x.rule["name"]


def test_json_and_bad_input():
    code, out, _ = run_cli("explain", "i8", "u8", "-f", "openvino", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["framework"] == "openvino" and data["result"] is None
    assert {"option": "promote_unsafe", "value": True, "result": "i16", "error": None} in data["alternatives"]
    assert run_cli("explain", "i8", "-f", "cann")[0] == 2
    code, _, err = run_cli("explain", "i8", "bogus", "-f", "cann")
    assert code == 2 and len(err.splitlines()) == 1
    assert run_cli("explain", "i8", "u8", "-f", "cann", "-O", "nope=1")[0] == 2


def _ruleset_with_nested_decisions(nested):
    """A fresh ruleset whose look-up of the cell (i8, u8) first runs `nested(rs)`: a decision made while another
    is being decided (as a rule that asked the ruleset again would)."""
    from promote_cli.oracle.loader import build, parse_toml

    rs = build(parse_toml(
        'schema = 2\nname = "nest"\nversion = "1"\ntypes = ["i8", "u8", "i16"]\n'
        '[tables.main]\ncolumns = ["i8", "u8", "i16"]\n[tables.main.rows]\n'
        'i8 = ["i8", "i16", "i16"]\nu8 = ["i16", "u8", "i16"]\ni16 = ["i16", "i16", "i16"]\n'
        '[[rules]]\nname = "table"\nresult = "table(\'main\', a, b)"\n', "nest.toml"), "nest.toml")
    cells = rs.tables["main"].cells
    busy = []

    class Reentrant(dict):
        def get(self, key, default=None):
            if key == ("i8", "u8") and not busy:
                busy.append(key)
                try:
                    nested(rs)
                finally:
                    busy.clear()
            return super().get(key, default)

    rs.tables["main"].cells = Reentrant(cells)
    return rs


@pytest.mark.parametrize("inner", ["answer", "explain"])
def test_a_decision_nested_in_an_explanation_neither_joins_nor_ends_its_trace(inner):
    from promote_cli.oracle import engine
    from promote_cli.oracle.explain import explain

    seen, fresh = [], [("i16", "u8"), ("u8", "i16"), ("i16", "i16")]  # never asked before: no memo hides them

    def nested(rs):
        a, b = fresh.pop(0)
        if inner == "answer":
            seen.append((a, b, engine.answer(rs, a, b).result))
        else:
            seen.append([(s.row, s.column, s.value) for s in explain(rs, a, b).steps])

    rs = _ruleset_with_nested_decisions(nested)
    x = explain(rs, "i8", "u8")
    assert [(s.kind, s.name, s.row, s.column, s.value) for s in x.steps] == [("table", "main", "i8", "u8", "i16")]
    asked = [("i16", "u8"), ("u8", "i16"), ("i16", "i16")][:len(seen)]
    assert seen == ([(a, b, "i16") for a, b in asked] if inner == "answer" else [[(a, b, "i16")] for a, b in asked])
    again = explain(rs, "u8", "u8")  # the engine keeps no trace once an explanation is done
    assert [(s.row, s.column) for s in again.steps] == [("u8", "u8")]
    assert engine.answer(rs, "i16", "u8").result == "i16"
