"""`promote lattice`: Hasse diagrams of declared lattices, orders derived from answers, dot and mermaid."""

from __future__ import annotations

import json
import re
import textwrap

import pytest

import promote_cli as api
from promote_cli.oracle.loader import build
from promote_cli.oracle.order import order
from tests.support import ROOT, run_cli

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


def closure(o) -> dict[str, set[str]]:
    """Each node's upper set, from the diagram's edges alone."""
    up = {n: {n} for n in o.nodes}
    changed = True
    while changed:
        changed = False
        for a, b in o.edges:
            for n in o.nodes:
                if a in up[n] and not up[b] <= up[n]:
                    up[n] |= up[b]
                    changed = True
    return up


def join(up, a, b):
    common = up[a] & up[b]
    least = [c for c in common if common <= up[c]]
    return least[0] if len(least) == 1 else None


def strong(operand):
    return operand.split(":", 1)[1] if operand and operand.startswith("weak:") else operand


@pytest.mark.parametrize("lattice", ["standard", "strict"])
@pytest.mark.parametrize("x64", [True, False])
def test_jax_diagram_joins_are_promote_types(lattice, x64):
    """The least upper bound in the diagram (a weak node standing for its dtype) is jnp.promote_types' answer for
    every pair of dtypes; without x64 a weak join is np.dtype of the Python type instead (f64, not f32)."""
    opts = {"x64": x64, "numpy_dtype_promotion": lattice}
    o = api.lattice("jax", options={"x64": x64}, name=lattice)
    assert o.lattice_name == f"{lattice}_{'x64' if x64 else 'x32'}" and o.options == {"x64": x64}
    up = closure(o)
    dtypes = [d.name for d in api.dtypes("jax")]
    checked = 0
    for a in dtypes:
        for b in dtypes:
            node = join(up, a, b)
            if not x64 and node in o.weak:
                continue
            assert api.query("jax", a, b, "promote_types", opts).result == strong(o.weak.get(node, node)), (a, b)
            checked += 1
    assert checked > 900


def test_tensorflow_diagram_joins_are_its_answers_in_all_mode():
    """Every answered pair of dtypes in dtype_conversion_mode=all is the diagram's join (a weak node's WeakTensor)."""
    o = api.lattice("tensorflow")
    up = closure(o)
    answered = 0
    for a in (n for n in o.nodes if ":" not in n):
        for b in (n for n in o.nodes if ":" not in n):
            got = api.query("tensorflow", a, b, "add", {"dtype_conversion_mode": "all"}).result
            if got is not None:
                node = join(up, a, b)
                assert got == o.weak.get(node, node), (a, b)
                answered += 1
    assert answered > 200


@pytest.mark.parametrize("framework, name", [("jax", None), ("jax", "strict"), ("tensorflow", None)])
def test_diagram_is_the_covering_relation_of_the_declared_order(framework, name):
    o = api.lattice(framework, name=name)
    rs = api.load(framework)
    lat = rs.lattices[o.lattice_name]
    up = closure(o)
    assert {n: set(lat.upper[n]) for n in o.nodes} == up  # the same order as the file's edges
    for a, b in o.edges:  # no transitive edge: nothing lies strictly between
        assert not any(c not in (a, b) and c in up[a] and b in up[c] for c in o.nodes), (a, b)
    assert len(set(o.edges)) == len(o.edges)


def test_weak_nodes_are_marked():
    o = api.lattice("jax")
    assert o.weak == {"py:int": "weak:i32", "py:float": "weak:f32", "py:complex": "weak:c64"}
    assert set(api.lattice("tensorflow").weak) == {"weak:i32", "weak:i64", "weak:f32", "weak:f64", "weak:c128"}


# ---------------------------------------------------------------- orders derived from a table

BASE = """
schema = 1
name = "tiny"
version = "1"
types = ["bool", "i8", "u8", "i16", "f32"]
[tables.main]
commutative = true
columns = ["bool", "i8", "u8", "i16", "f32"]
rows.bool = ["bool", "i8",  "u8",  "i16", "f32"]
rows.i8   = ["i8",   "i8",  "I8U8", "i16", "f32"]
rows.u8   = ["u8",   "I8U8", "u8",  "i16", "f32"]
rows.i16  = ["i16",  "i16", "i16", "i16", "f32"]
rows.f32  = ["f32",  "f32", "f32", "f32", "f32"]
[[rules]]
name = "table"
result = "table('main', a, b)"
"""


def tiny(cell: str):
    return build(tomllib.loads(textwrap.dedent(BASE).replace("I8U8", cell)), "tiny.toml")


def test_a_table_that_is_a_lattice_gives_its_hasse_diagram():
    """By construction: bool below i8 and u8, both below i16, below f32; i8 + u8 = i16 is their join."""
    o = order(tiny("i16"))
    assert o.is_lattice and o.cells == []
    assert sorted(o.edges) == sorted([("bool", "i8"), ("bool", "u8"), ("i8", "i16"), ("u8", "i16"), ("i16", "f32")])
    assert o.source == "answers" and o.op == "add"


@pytest.mark.parametrize("cell, why", [
    ("f32", "gives f32, but the least upper bound of {a} and {b} is i16"),
    ("x", "refused, but i16 is the least upper bound of {a} and {b}"),
])
def test_a_table_that_is_not_a_join_lists_exactly_the_cells(cell, why):
    o = order(tiny(cell))
    assert not o.is_lattice
    assert [(c.a, c.b, c.join) for c in o.cells] == [("i8", "u8", "i16"), ("u8", "i8", "i16")]
    assert [c.why for c in o.cells] == [why.format(a="i8", b="u8"), why.format(a="u8", b="i8")]
    assert [c.result for c in o.cells] == [None if cell == "x" else cell] * 2


def test_a_cycle_has_no_least_upper_bound():
    """i8 + u8 = u8 and u8 + i8 = i8 in a non-commutative table: each is below the other, so every pair whose
    upper bounds include them (all of bool, i8, u8 but bool with bool) has two least ones."""
    text = textwrap.dedent(BASE).replace("commutative = true", "commutative = false")
    text = text.replace('rows.i8   = ["i8",   "i8",  "I8U8"', 'rows.i8   = ["i8",   "i8",  "u8"')
    text = text.replace('rows.u8   = ["u8",   "I8U8"', 'rows.u8   = ["u8",   "i8"')
    o = order(build(tomllib.loads(text), "tiny.toml"))
    assert {(c.a, c.b) for c in o.cells} == {(a, b) for a in ("bool", "i8", "u8") for b in ("bool", "i8", "u8")
                                             if (a, b) != ("bool", "bool")}
    assert all("no least upper bound (i8 and u8 are each minimal)" in c.why for c in o.cells)


@pytest.mark.parametrize("framework", ["openvino", "cann", "cann@opbase", "paddle", "paddle@2.6", "array-api"])
def test_shipped_tables_give_their_joins_or_the_cells_that_are_not(framework):
    """Every cell the analysis does not list is the join of the diagram's order; every listed one is not."""
    o = api.lattice(framework)
    m = api.table(framework)
    up = closure(o)
    listed = {(c.a, c.b) for c in o.cells}
    for a, row in zip(m.types, m.results()):
        for b, got in zip(m.types, row):
            if (a, b) in listed:
                assert got != join(up, a, b) or got is None, (a, b)
            else:
                assert got == join(up, a, b), (a, b)
    for a, b in o.edges:
        assert not any(c not in (a, b) and c in up[a] and b in up[c] for c in o.nodes), (a, b)


def test_array_api_result_type_is_a_lattice():
    o = api.lattice("array-api", "result_type")
    assert o.is_lattice and ("i8", "i16") in o.edges and ("f32", "f64") in o.edges


# ---------------------------------------------------------------- the command

DOT_NODE = re.compile(r'^  "([^"]+)" \[fillcolor="#[0-9a-f]{6}", tooltip="[^"]+"(, shape=ellipse, style="dashed,filled")?\];$')
DOT_EDGE = re.compile(r'^  "([^"]+)" -> "([^"]+)";$')


def test_dot_is_a_well_formed_digraph_of_the_diagram():
    code, out, err = run_cli("lattice", "-f", "jax", "--format", "dot")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == 'digraph "jax@0.10" {' and lines[-1] == "}"
    assert lines[1] == '  label="jax@0.10 lattice standard_x32 (x64=false)";'
    o = api.lattice("jax")
    nodes, edges, dashed = [], [], []
    for line in lines[2:-1]:
        if m := DOT_NODE.match(line):
            nodes.append(m.group(1))
            if m.group(2):
                dashed.append(m.group(1))
        elif m := DOT_EDGE.match(line):
            edges.append((m.group(1), m.group(2)))
        else:
            assert re.match(r"^  [a-z]+( \[.*\])?=?.*;$", line), line  # graph attributes
    assert nodes == o.nodes and edges == o.edges and set(dashed) == set(o.weak)


def test_mermaid_is_a_flowchart_of_the_diagram():
    code, out, err = run_cli("lattice", "-f", "tensorflow", "--format", "mermaid")
    assert code == 0
    lines = out.splitlines()
    assert lines[:4] == ["---", 'title: "tensorflow@2.21 lattice all"', "---", "flowchart BT"]
    labels, edges, classes = {}, [], {}
    for line in lines[4:]:
        if m := re.match(r'^  (n\d+)(\(\[|\[)"([^"]+)"(\]\)|\])$', line):
            labels[m.group(1)] = m.group(3)
        elif m := re.match(r"^  (n\d+) --> (n\d+)$", line):
            edges.append((labels[m.group(1)], labels[m.group(2)]))
        elif m := re.match(r"^  class ([n\d,]+) (\w+)$", line):
            for node in m.group(1).split(","):
                classes.setdefault(labels[node], set()).add(m.group(2))
        else:
            assert re.match(r"^  classDef \w+ [-\w:#,. ]+$", line), line
    o = api.lattice("tensorflow")
    assert list(labels.values()) == o.nodes and edges == o.edges
    assert {n for n, c in classes.items() if "weak" in c} == set(o.weak)
    assert classes["u8"] == {"unsigned"} and classes["weak:f32"] == {"float", "weak"}


def test_text_and_json():
    code, out, _ = run_cli("lattice", "-f", "anvil")
    assert code == 0 and "bool -> i8, u8" in out.splitlines()
    code, out, _ = run_cli("lattice", "-f", "jax", "-O", "x64=true", "--format", "json")
    data = json.loads(out)
    assert data["lattice"] is True and data["lattice_name"] == "standard_x64" and data["cells"] == []
    assert ["bool", "py:int"] in data["edges"] and data["weak"]["py:float"] == "weak:f64"


def test_not_a_lattice_exits_1_listing_the_cells():
    code, out, err = run_cli("lattice", "-f", "cann")
    o = api.lattice("cann")
    assert code == 1 and not o.is_lattice
    assert out.splitlines() == [f"{c.a} {c.b}: {c.why}" for c in o.cells]
    assert err.splitlines() == [f"cann@8.0 add: not a lattice: {len(o.cells)} of 256 cells are not the least upper "
                                "bound of their operands in the order a <= b when a add b = b"]
    code, out, err = run_cli("lattice", "-f", "cann", "--format", "dot")
    assert code == 1 and out == ""  # no diagram for what is not a lattice; the cells on stderr
    assert err.splitlines()[:-1] == [f"{c.a} {c.b}: {c.why}" for c in o.cells]
    code, out, _ = run_cli("lattice", "-f", "cann", "--format", "json")
    assert code == 1 and json.loads(out)["cells"] == [c.to_dict() for c in o.cells]


def test_many_cells_are_cut_on_stderr():
    code, out, err = run_cli("lattice", "-f", "openvino", "--format", "mermaid")
    lines = err.splitlines()
    assert code == 1 and out == "" and len(lines) == 22
    assert re.match(r"^\.\.\. and \d+ more \(--format text lists them all\)$", lines[20])


@pytest.mark.parametrize("args, message", [
    (["-f", "cann", "--lattice", "all"], "cann@8.0 states no lattice"),
    (["-f", "jax", "--lattice", "nope"], "jax@0.10 has no lattice 'nope' (lattices: standard_x32"),
    (["-f", "jax", "--lattice", "strict", "--answers"], "exclude each other"),
    (["-f", "jax", "--lattice", "strict", "--types", "i8,u8"], "exclude each other"),
    (["-f", "jax", "--lattice", "strict", "--op", "add"], "exclude each other"),
    (["-f", "jax", "-O", "x64=maybe"], "option x64 takes true or false"),
    (["-f", "cann", "--op", "nope"], "has no op 'nope'"),
    ([], "which framework?"),
])
def test_usage_errors(args, message):
    code, out, err = run_cli("lattice", *args)
    assert code == 2 and out == "" and message in err and len(err.splitlines()) == 1


def test_answers_of_a_lattice_ruleset_on_request():
    o = api.lattice("jax", "promote_types", {"x64": True}, answers=True)
    assert o.source == "answers" and o.op == "promote_types"
    code, out, _ = run_cli("lattice", "-f", "jax", "--answers", "--op", "promote_types", "--types", "i8,i16,f32")
    assert code == 0 and out == "i8 -> i16\ni16 -> f32\nf32\n"
    # --op or --types alone mean the answers too, never a declared lattice with the op silently ignored
    assert run_cli("lattice", "-f", "jax", "--op", "promote_types", "--types", "i8,i16,f32")[1] == out
    code, out, _ = run_cli("lattice", "-f", "jax", "--op", "promote_types", "-O", "x64=true", "--format", "json")
    assert json.loads(out)["source"] == "answers" and json.loads(out)["op"] == "promote_types"
    with pytest.raises(api.UsageError, match="--types goes with the order of the answers"):
        api.lattice("jax", types=["i8"], answers=False)


def test_the_order_of_an_op_groups_op_is_its_groups_answers(monkeypatch):
    """`promote lattice --op subtract` orders what `promote table --op subtract` shows: the group refuses
    bool - bool, so that cell is no join (the promotion rules' own add would give bool)."""
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(ROOT / "tests" / "data" / "opgroups"))
    o = api.lattice("opsdemo", "subtract", types="bool,i8,i16")
    assert ("i8", "i16") in o.edges and ("bool", "i8") in o.edges
    assert [(c.a, c.b) for c in o.cells] == [("bool", "bool")]
    assert api.table("opsdemo", types="bool,i8", op="subtract").results()[0][0] is None
