"""`promote table`: a refused cell and a cell of an operand the framework lacks read differently in every format
(JSON keeps null in both and lists the absent operands), and `--common` / `--drop-refused` trim the axes."""

from __future__ import annotations

import csv
import io
import json

import pytest

import promote_cli as api
from support import run_cli

#: i8 u16 refused by CANN; py:int (a form it has no rules for) and f8e4m3b11fnuz (a type it lacks) absent
TYPES = "i8,u16,py:int,f8e4m3b11fnuz"
ABSENT = ["py:int", "f8e4m3b11fnuz"]


def _table(*args):
    code, out, err = run_cli("table", "-f", "cann", "--types", TYPES, *args, "--color", "never")
    assert code == 0, err
    return out


def test_json_keeps_null_cells_and_lists_the_absent_operands():
    data = json.loads(_table("--format", "json"))
    assert data["types"] == TYPES.split(",") and data["absent"] == ABSENT
    assert data["matrix"][0][1] is None and data["matrix"][0][2] is None  # refused and absent: both null
    assert api.table("cann", TYPES.split(",")).absent == ABSENT
    assert json.loads(run_cli("table", "-f", "cann", "--format", "json")[1])["absent"] == []


@pytest.mark.parametrize("fmt,refused", [("text", "-"), ("markdown", "×"), ("rich", "×")])
def test_refused_and_absent_cells_read_differently(fmt, refused):
    out = _table("--format", fmt)
    rows = [line.replace("|", " ").replace("**", "").split() for line in out.splitlines()]
    assert next(r for r in rows if r[:1] == ["i8"])[1:] == ["i8", refused, "n/a", "n/a"]
    if fmt == "rich":  # the legend names both marks and the ruleset
        assert "× refused" in out and "n/a: cann@8.0 has no such type" in out


def test_csv_leaves_a_refused_cell_empty_and_marks_an_absent_one():
    rows = list(csv.reader(io.StringIO(_table("--format", "csv"))))
    assert rows[1] == ["i8", "i8", "", "n/a", "n/a"]


@pytest.mark.parametrize("kind", ["svg", "html"])
def test_pictures_mark_absent_cells_apart_with_a_legend(kind):
    out = _table(f"--{kind}", "-")
    assert out.count("k-absent") >= 7 and "k-refused" in out  # 7 cells lack an operand, one more is refused
    assert "no such type" in out and "n/a" in out


def test_a_diff_marks_each_side_and_lists_what_each_lacks():
    code, out, _ = run_cli("table", "--diff", "cann", "numpy", "--types", TYPES, "--format", "json")
    data = json.loads(out)
    assert data["absent"] == {"cann": ABSENT, "numpy": []}
    assert all(x["cann"] is None for x in data["differences"])  # null either way, as the contract says
    code, out, _ = run_cli("table", "--diff", "cann", "numpy", "--types", TYPES)
    rows = {tuple(line.split()[:2]): line.split()[2] for line in out.splitlines()[1:]}
    assert rows[("i8", "u16")] == "-" and rows[("i8", "py:int")] == "n/a" and rows[("u16", "f8e4m3b11fnuz")] == "n/a"
    code, out, _ = run_cli("table", "--diff", "cann", "numpy", "--types", TYPES, "--format", "csv")
    rows = {(r[0], r[1]): r[2] for r in csv.reader(io.StringIO(out))}
    assert rows[("i8", "u16")] == "" and rows[("i8", "py:int")] == "n/a"


def test_common_keeps_the_operands_every_side_has():
    assert json.loads(_table("--common", "--format", "json"))["types"] == ["i8", "u16"]
    d = api.diff("jax", "numpy", common_types=True)
    have = [{t.name for t in api.load(fw).types} for fw in ("jax", "numpy")]
    assert d.types == [t for t in api.diff("jax", "numpy").types if all(t in h for h in have)]
    assert d.summary["type_absent"] == 0 and d.absent == {"jax": [], "numpy": []}
    code, out, _ = run_cli("table", "--diff", "jax", "numpy", "--common", "--format", "json")
    assert json.loads(out)["types"] == d.types


def test_drop_refused_leaves_out_what_has_no_answer_anywhere():
    full = api.table("tosa")
    kept = api.table("tosa", drop_refused=True)
    results = full.results()
    answered = [t for i, t in enumerate(full.types)
                if any(results[i][j] is not None or results[j][i] is not None for j in range(len(full.types)))]
    assert kept.types == answered and len(answered) < len(full.types)
    code, out, _ = run_cli("table", "-f", "tosa", "--drop-refused", "--format", "json")
    assert json.loads(out)["types"] == answered
    d, trimmed = api.diff("cann", "tosa"), api.diff("cann", "tosa", drop_refused=True)
    assert trimmed.differences == d.differences and set(trimmed.types) < set(d.types)
    assert trimmed.summary["cells"] == len(trimmed.types) ** 2


@pytest.mark.parametrize("args", [["table", "--cast", "--common"], ["table", "--cast", "--drop-refused"],
                                  ["table", "-f", "tosa", "--types", "i8,u16", "--drop-refused"],
                                  ["table", "-f", "cann", "--types", "py:int", "--common"]])
def test_what_cannot_be_trimmed_is_a_usage_error(args):
    code, out, err = run_cli(*args)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
