"""`promote table --diff FW1 FW2 [FW3 ...]`: exactly the cells where `promote query` answers differently,
over the union of the sides' types, with a one-line summary by kind of difference."""

from __future__ import annotations

import json

import pytest

import promote_cli
from promote_cli.vocab.dtypes import DTYPES
from support import run_cli


def _union(*frameworks: str) -> list[str]:
    have = {d.name for fw in frameworks for d in promote_cli.dtypes(fw.partition(":")[0])}
    return [name for name in DTYPES if name in have]


def _expected(sides: list[tuple[str, str, dict]], types: list[str]):
    """Every differing cell through the query API (a refusal and a type a side lacks both read None), and the
    count of each kind of difference, each side asked on its own."""
    rows, kinds = [], {"different_results": 0, "refused_on_a_side": 0, "type_absent": 0}
    for a in types:
        for b in types:
            results, refused = [], []
            for label, fw, options in sides:
                ans = promote_cli.query(fw, a, b, options=options)
                results.append(ans.result)
                has_both = all(DTYPES[x] in set(promote_cli.dtypes(fw)) for x in (a, b))
                refused.append(ans.result is None and has_both)
            if len(set(results)) > 1:
                row = {"a": a, "b": b}
                row.update((label, r) for (label, _, _), r in zip(sides, results))
                rows.append(row)
                if len({r for r in results if r is not None}) > 1:
                    kinds["different_results"] += 1
                elif any(refused):
                    kinds["refused_on_a_side"] += 1
                else:
                    kinds["type_absent"] += 1
    return rows, kinds


def test_paddle_and_cann_json_lists_exactly_the_cells_query_answers_differently():
    code, out, err = run_cli("table", "--diff", "paddle", "cann", "--format", "json")
    data = json.loads(out)
    types = _union("paddle", "cann")
    want, kinds = _expected([("paddle", "paddle", {}), ("cann", "cann", {})], types)
    assert code == 0 and err == ""
    assert data["frameworks"] == ["paddle", "cann"] and data["types"] == types
    assert data["differences"] == want and want
    assert data["summary"] == {"cells": len(types) ** 2, "differing": len(want), **kinds}
    assert kinds["refused_on_a_side"] and kinds["type_absent"]  # the summary is tested on real counts


def test_an_option_of_one_side_shows_exactly_the_cells_it_changes():
    label = "openvino:promote_unsafe=true"
    code, out, _ = run_cli("table", "--diff", "openvino", label, "--format", "json")
    data = json.loads(out)
    changed = [(a, b) for a in data["types"] for b in data["types"]
               if promote_cli.query("openvino", a, b).result
               != promote_cli.query("openvino", a, b, options={"promote_unsafe": True}).result]
    assert code == 0 and [(x["a"], x["b"]) for x in data["differences"]] == changed and changed
    assert data["types"] == _union("openvino")
    assert data["versions"] == {"openvino": "openvino@2026.4.1", label: "openvino@2026.4.1"}


def test_three_sides_on_the_command_line():
    sides = ["cann", "cann@opbase", "numpy"]
    code, out, _ = run_cli("table", "--diff", *sides, "--format", "json")
    data = json.loads(out)
    want, kinds = _expected([(s, s, {}) for s in sides], _union(*sides))
    assert code == 0 and data["frameworks"] == sides and data["differences"] == want and want
    assert data["summary"]["differing"] == len(want) and {k: data["summary"][k] for k in kinds} == kinds
    assert all(kinds.values())  # three sides show every kind of difference
    assert run_cli("table", "--diff", *sides, "--exit-code", "--format", "json")[0] == 1
    assert run_cli("table", "--diff", "cann", "cann@8.0", "cann", "--exit-code")[0] == 0


@pytest.mark.parametrize("fmt", ["text", "csv", "markdown"])
def test_text_formats_keep_stdout_to_the_rows_and_put_the_summary_on_stderr(fmt):
    types = "i8,u8,i16,f16,bf16,i4"
    code, out, err = run_cli("table", "--diff", "paddle", "cann", "numpy", "--types", types, "--format", fmt)
    d = promote_cli.diff("paddle", "cann", "numpy", types=types.split(","))
    header_lines = 2 if fmt == "markdown" else 1
    assert code == 0 and len(out.splitlines()) == header_lines + len(d.differences)
    s = d.summary
    assert err == (f"paddle@3.3 vs cann@8.0 vs numpy@2.4 (add): {s['differing']} of 36 cells differ: "
                   f"{s['different_results']} with different results, {s['refused_on_a_side']} refused by a side "
                   f"that another answers, {s['type_absent']} with a type a side lacks\n")


@pytest.mark.parametrize("types, says, titled", [
    ("bool", "the 1 cell agrees", "the 1 cell does not differ"),
    ("u64", "the 1 cell differs: 1 refused by a side that another answers", "the 1 cell differs"),
    ("bool,u64", "1 of 4 cells differ: 1 refused by a side that another answers", "1 of 4 cells differ"),
])
def test_a_diff_of_one_cell_is_said_in_english(types, says, titled):
    """Not `all 1 cells agree`, nor `0 of 1 cells differ` in a picture's title."""
    code, out, err = run_cli("table", "--diff", "cann", "torch", "--types", types, "--format", "csv")
    assert (code, err) == (0, f"cann@8.0 vs torch@2.13 (add): {says}\n")
    code, out, err = run_cli("table", "--diff", "cann", "torch", "--types", types, "--svg", "-")
    assert code == 0 and f"  ·  {titled}</title>" in out


def test_no_difference_prints_no_rows_and_says_so():
    code, out, err = run_cli("table", "--diff", "cann", "cann@8.0", "--format", "csv", "--exit-code")
    n = len(promote_cli.dtypes("cann"))
    assert (code, out, err) == (0, "a,b,cann@8.0,cann@8.0\n", f"cann@8.0 vs cann@8.0 (add): all {n * n} cells agree\n")
    code, out, err = run_cli("table", "--diff", "cann", "cann", "--format", "text")
    assert (code, out) == (0, "") and "all" in err


def test_rich_ends_with_the_summary_and_leaves_stderr_empty():
    code, out, err = run_cli("table", "--diff", "paddle", "cann", "--types", "i8,u8,f16", "--format", "rich",
                             "--color", "never")
    d = promote_cli.diff("paddle", "cann", types=["i8", "u8", "f16"])
    assert code == 0 and err == "" and d.differences
    assert out.rstrip("\n").splitlines()[-1] == "paddle@3.3 vs cann@8.0 (add): 6 of 9 cells differ: 6 refused by a " \
                                                 "side that another answers"


def test_each_side_option_wins_over_dash_o_which_applies_to_every_side_that_has_it():
    sides = ["openvino:promote_unsafe=false", "openvino", "cann"]
    code, out, _ = run_cli("table", "--diff", *sides, "-O", "promote_unsafe=true", "--types", "i8,u8,u16",
                           "--format", "json")
    asked = [("openvino", {"promote_unsafe": False}), ("openvino", {"promote_unsafe": True}), ("cann", {})]
    want, _ = _expected([(label, fw, o) for label, (fw, o) in zip(sides, asked)], ["i8", "u8", "u16"])
    assert code == 0 and json.loads(out)["differences"] == want and want


def test_the_framework_from_the_environment_does_not_clash_with_diff(monkeypatch):
    monkeypatch.setenv("PROMOTE_FRAMEWORK", "openvino")
    code, out, _ = run_cli("table", "--diff", "paddle", "cann", "--types", "i8,u8", "--format", "csv")
    assert code == 0 and out.startswith("a,b,paddle@3.3,cann@8.0\n")
    assert run_cli("table", "--cast", "--format", "csv")[0] == 0


@pytest.mark.parametrize("args, needle", [
    (["--diff", "paddle", "cann", "-f", "numpy"], "not -f"),
    (["-f", "numpy", "--diff", "paddle", "cann"], "not -f"),
    (["--diff", "paddle"], "two or more rulesets"),
    (["--diff"], "two or more rulesets"),
    (["paddle", "cann"], "go with --diff"),
    (["-f", "cann", "paddle"], "go with --diff"),
    (["--cast", "--diff", "paddle", "cann"], "takes no --diff"),
    (["--cast", "-f", "cann"], "takes no -f"),
    (["--cast", "--op", "add"], "takes no --op"),
    (["--cast", "-O", "promote_unsafe=true"], "takes no -O"),
    (["--cast", "--types", "i8"], "takes no --types"),
    (["--cast", "--exit-code"], "takes no --exit-code"),
    (["--cast", "paddle"], "takes no rulesets"),
    (["-f", "cann", "--exit-code"], "goes with --diff"),
])
def test_options_that_do_not_go_together_are_usage_errors(args, needle):
    code, out, err = run_cli("table", *args)
    assert code == 2 and out == "" and needle in err and len(err.splitlines()) == 1


def test_the_api_takes_n_sides_as_the_cli_does():
    d = promote_cli.diff("paddle", "cann", "numpy", types=["i8", "u8", "f16"])
    code, out, _ = run_cli("table", "--diff", "paddle", "cann", "numpy", "--types", "i8,u8,f16", "--format", "json")
    data = json.loads(out)
    assert (data["differences"], data["summary"]) == (d.differences, d.summary)


def test_a_picture_of_an_n_way_diff(tmp_path):
    picture = tmp_path / "diff.svg"
    code, out, err = run_cli("table", "--diff", "paddle", "cann", "numpy", "--types", "i8,u8,f16", "--svg",
                             str(picture))
    d = promote_cli.diff("paddle", "cann", "numpy", types=["i8", "u8", "f16"])
    assert (code, out) == (0, "") and picture.read_text(encoding="utf-8") == promote_cli.render(d, "svg")
    assert run_cli("table", "--diff", "paddle", "--svg", str(tmp_path / "one.svg"))[0] == 2


def test_options_given_once_for_every_side_are_kept_and_shown():
    d = promote_cli.diff("jax", "numpy", types=["i8", "u8", "i64", "f16"], options={"x64": "true"})
    assert d.options == {"x64": True}  # JSON values, whatever the caller's spelling
    assert promote_cli.diff("jax", "numpy", types=["i8"], options={"x64": "yes"}).options == {"x64": True}
    assert promote_cli.diff("jax", "numpy", types=["i8"]).options == {}
    _, out, _ = run_cli("table", "--diff", "jax", "numpy", "-O", "x64=yes", "--types", "i8,u8,i64,f16",
                        "--format", "json")
    data = json.loads(out)
    assert data["options"] == {"x64": True}
    assert [x for x in data["differences"] if (x["a"], x["b"]) == ("i64", "f16")] == [
        {"a": "i64", "b": "f16", "jax": promote_cli.query("jax", "i64", "f16", options={"x64": True}).result,
         "numpy": promote_cli.query("numpy", "i64", "f16").result}]
    _, _, err = run_cli("table", "--diff", "jax", "numpy", "-O", "x64=true", "--types", "i8,u8,i64,f16")
    assert err.startswith("jax@") and "(add, x64=true): " in err  # the summary names them
    _, out, _ = run_cli("table", "--diff", "jax", "numpy", "-O", "x64=true", "--types", "i8,i64,f16",
                        "--format", "rich", "--color", "never")
    assert " ".join(out.split()).count("(add, x64=true)") == 2  # the table's title (wrapped to its width), the summary
    _, out, _ = run_cli("table", "--diff", "jax", "numpy", "--types", "i8", "--format", "json")
    assert "options" not in json.loads(out)


def test_operands_join_both_axes_after_the_types_and_their_cells_are_the_query_answers():
    """`--operands` adds 0-d arrays and Python scalars to the axes, where NumPy 1 and 2 differ most."""
    code, out, err = run_cli("table", "--diff", "numpy@1.26", "numpy", "--types", "i8,u8,f16",
                             "--operands", "0d:i64,py:float", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    axis = ["i8", "u8", "f16", "0d:i64", "py:float"]
    cells = {(d["a"], d["b"]) for d in data["differences"]}
    expected = {(a, b) for a in axis for b in axis
                if promote_cli.query("numpy@1.26", a, b).result != promote_cli.query("numpy", a, b).result}
    assert cells == expected and ("i8", "0d:i64") in cells and ("i8", "u8") not in cells
    matrix = promote_cli.table("numpy@1.26", "i8", operands="0d:i64")
    assert matrix.types == ["i8", "0d:i64"]


@pytest.mark.parametrize(("args", "says"), [
    (["--types", "i8", "--operands", "i8"], "--operands lists i8, which the axis already has"),
    (["--types", "i8", "--operands", "py:int,py:int"], "--operands lists py:int twice"),
    (["--types", "i8", "--operands", ","], "--operands lists no operand"),
])
def test_bad_operands_are_one_line_and_exit_2(args, says):
    code, out, err = run_cli("table", "-f", "numpy", *args)
    assert code == 2 and says in err and err.count("\n") == 1 and not out
