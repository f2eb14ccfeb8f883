"""The CLI contract: outputs, formats and exit codes, in-process and as the installed program."""

from __future__ import annotations

import csv
import io
import json
import re
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from promote_cli import frameworks, load, query, table
from promote_cli.cli import main
from promote_cli.vocab.dtypes import DTYPES
from support import run_cli

ROOT = Path(__file__).resolve().parent.parent


def run(*args, stdin=None, env=None):
    return CliRunner().invoke(main, list(args), input=stdin, env=env)


def test_query_prints_the_result_alone():
    r = run("query", "s8", "u8", "--framework", "cann")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "i16\n", "")


def test_query_json_carries_rule_and_reason():
    r = run("query", "ACL_INT8", "uint8", "-f", "cann", "--format", "json")
    data = json.loads(r.stdout)
    assert r.exit_code == 0
    assert {k: data[k] for k in ("framework", "op", "a", "b", "result")} == {
        "framework": "cann", "op": "add", "a": "i8", "b": "u8", "result": query("cann", "i8", "u8").result}
    assert data["rule"]


def test_refusal_exits_1_with_the_reason_on_stderr():
    r = run("query", "u16", "f32", "-f", "cann")
    assert r.exit_code == 1
    assert r.stdout == ""
    assert "u16" in r.stderr and "f32" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_refusal_json_has_null_result_and_error():
    r = run("query", "u16", "f32", "-f", "cann", "--format", "json")
    data = json.loads(r.stdout)
    assert r.exit_code == 1 and data["result"] is None and data["error"]


@pytest.mark.parametrize("args, needle", [
    (["query", "i9", "u8", "-f", "cann"], "did you mean i8"),
    (["query", "i8", "u8", "-f", "cnn"], "did you mean cann"),
    (["query", "i8", "-f", "cann"], "two operands"),
    (["query", "i8", "u8"], "-f NAME"),
    (["query", "py:int", "i8", "-f", "cann"], "Python scalars"),
    (["query", "py:long", "i8", "-f", "cann"], "py:bool, py:int"),
    (["query", "i8", "u8", "-f", "cann", "-O", "flag"], "KEY=VALUE"),
    (["query", "i8", "u8", "-f", "cann", "-O", "flag=1"], "no option 'flag'"),
    (["query", "i8", "u8", "-f", "cann", "--op", "frobnicate"], "no op 'frobnicate'"),
    (["query", "i8", "u8", "-f", "cann@9.9"], "versions"),
    (["query", "i8", "u8", "-f", "cann", "--format", "yaml"], "yaml"),
    (["table", "-f", "cann", "--types", "i8,x"], "unknown dtype 'x'"),
    (["table", "-f", "cann", "--exit-code"], "--diff"),
    (["nonsense"], "No such command"),
])
def test_usage_errors_exit_2_with_one_line(args, needle):
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert needle in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.stderr


def test_framework_from_environment():
    r = run("query", "s8", "u8", env={"PROMOTE_FRAMEWORK": "cann"})
    assert r.stdout == "i16\n"


def test_batch_answers_in_input_order():
    pairs = ["i8 u8", "# a comment", "", "u16 f32", "f16 f32  # trailing comment", "bogus i8", "i8"]
    r = run("query", "--batch", "-f", "cann", stdin="\n".join(pairs) + "\n")
    lines = r.stdout.splitlines()
    assert lines[0] == query("cann", "i8", "u8").result
    assert lines[1].startswith("error: ")
    assert lines[2] == query("cann", "f16", "f32").result
    assert lines[3].startswith("error: unknown dtype 'bogus'")
    assert lines[4].startswith("error: expected `A B`")
    assert len(lines) == 5
    assert r.exit_code == 2  # malformed lines outrank refusals


def test_batch_refusals_exit_1_and_json_lines():
    r = run("query", "--batch", "-f", "cann", "--format", "json", stdin="i8 u8\nu16 f32\n")
    objects = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["result"] for o in objects] == [query("cann", "i8", "u8").result, None]
    assert objects[1]["error"]
    assert r.exit_code == 1
    assert run("query", "--batch", "-f", "cann", stdin="i8 u8\n").exit_code == 0


def test_batch_is_fast_enough_for_tens_of_thousands_of_lines():
    names = [d.name for d in load("cann").types]
    lines = [f"{a} {b}" for a in names for b in names] * 80  # 20480 lines
    r = run("query", "--batch", "-f", "cann", stdin="\n".join(lines))
    assert len(r.stdout.splitlines()) == len(lines)


def test_table_text_is_plain_when_piped():
    r = run("table", "-f", "cann")
    assert r.exit_code == 0
    assert "\x1b" not in r.stdout and "─" not in r.stdout and "━" not in r.stdout
    rows = [line.split() for line in r.stdout.splitlines()]
    types = [d.name for d in load("cann").types]
    assert rows[0][2:] == types and len(rows) == len(types) + 1


def test_no_color_gives_plain_text_even_with_color_auto():
    r = run("table", "-f", "cann", env={"NO_COLOR": "1"})
    assert "\x1b" not in r.stdout


def test_table_csv_parses_as_a_grid():
    r = run("table", "-f", "cann", "--format", "csv")
    grid = list(csv.reader(io.StringIO(r.stdout)))
    m = table("cann")
    assert grid[0][1:] == m.types
    for row, types_row in zip(grid[1:], m.results()):
        assert row[1:] == [c or "" for c in types_row]


def test_table_json_says_which_options_it_used():
    data = json.loads(run("table", "-f", "openvino", "--types", "i8,u8", "--format", "json",
                          "-O", "promote_unsafe=true").stdout)
    assert data["options"]["promote_unsafe"] is True
    assert data["matrix"][0][1] == query("openvino", "i8", "u8", options={"promote_unsafe": True}).result
    assert run("table", "-f", "openvino", "-O", "promote_unsafe=maybe").exit_code == 2


def test_table_json_and_types_restriction():
    r = run("table", "-f", "cann", "--format", "json", "--types", "s8,uint8,f32")
    data = json.loads(r.stdout)
    assert data["types"] == ["i8", "u8", "f32"]
    assert data["matrix"] == [[query("cann", a, b).result for b in data["types"]] for a in data["types"]]


def test_table_markdown_and_rich():
    md = run("table", "-f", "cann", "--format", "markdown", "--types", "i8,u16").stdout
    assert md.splitlines()[0].startswith("| cann@8.0 add | i8 | u16 |") and "×" in md
    rich = run("table", "-f", "cann", "--format", "rich", "--color", "always", "--types", "i8,u16").stdout
    assert "\x1b[" in rich and "×" in rich


def test_diff_lists_exactly_the_differing_cells():
    r = run("table", "--diff", "cann", "cann@opbase", "--format", "json")
    data = json.loads(r.stdout)
    assert data["frameworks"] == ["cann", "cann@opbase"]
    expected = []
    for a in data["types"]:
        for b in data["types"]:
            r1 = _result("cann", a, b)
            r2 = _result("cann@opbase", a, b)
            if r1 != r2:
                expected.append({"a": a, "b": b, "cann": r1, "cann@opbase": r2})
    assert data["differences"] == expected and expected
    assert run("table", "--diff", "cann", "cann@opbase", "--exit-code").exit_code == 1
    assert run("table", "--diff", "cann", "cann", "--exit-code").exit_code == 0


def _result(fw, a, b):
    try:
        return query(fw, a, b).result
    except Exception:
        return None


def test_frameworks_and_dtypes_listings():
    fws = json.loads(run("frameworks", "--format", "json").stdout)
    assert {"cann@" + query("cann", "i8", "i8").version, "cann@opbase"} <= {f["ruleset"] for f in fws}
    assert sum(f["default"] for f in fws if f["name"] == "cann") == 1
    dts = json.loads(run("dtypes", "--format", "json").stdout)
    assert [d["name"] for d in dts] == list(DTYPES)
    assert "acl_float16" in next(d for d in dts if d["name"] == "f16")["aliases"]
    assert "cann" in run("frameworks").stdout
    only = json.loads(run("dtypes", "-f", "anvil", "--format", "json").stdout)
    assert [d["name"] for d in only] == [d.name for d in DTYPES.values() if d in load("anvil").types]
    assert {f["name"] for f in json.loads(run("frameworks", "-f", "cann", "--format", "json").stdout)} == {"cann"}
    assert run("frameworks", "-f", "cnn").exit_code == 2


def test_version_and_help():
    r = run("--version")
    assert r.exit_code == 0 and r.stdout.startswith("promote, version ")
    assert "query" in run("--help").stdout


def test_shell_completion_reads_names_from_data():
    env = {"_PROMOTE_COMPLETE": "bash_complete", "COMP_WORDS": "promote query i8 u8 -f ca", "COMP_CWORD": "5"}
    r = CliRunner().invoke(main, [], env=env, prog_name="promote")
    assert "cann" in r.stdout and "cann@opbase" in r.stdout
    env.update(COMP_WORDS="promote query bf", COMP_CWORD="2")
    assert "bf16" in CliRunner().invoke(main, [], env=env, prog_name="promote").stdout


def test_query_path_imports_neither_numpy_nor_rich():
    code = ("import sys\nfrom promote_cli.cli import main\n"
            "try:\n    main(['query', 's8', 'u8', '-f', 'cann'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('numpy', 'rich', 'ml_dtypes') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["i16", "[]"]


def _installed_promote() -> str | None:
    candidate = Path(sys.executable).parent / "promote"
    return str(candidate) if candidate.exists() else shutil.which("promote")


def test_installed_program_from_another_directory(tmp_path):
    exe = _installed_promote()
    assert exe is not None, "the promote program is not installed (pip install the project first)"
    env = {k: v for k, v in os.environ.items() if k not in ("PROMOTE_RULES_PATH", "PROMOTE_FRAMEWORK")}
    r = subprocess.run([exe, "query", "s8", "u8", "--framework", "cann"], cwd=tmp_path, capture_output=True,
                       text=True, env=env)
    assert (r.returncode, r.stdout) == (0, "i16\n")
    piped = subprocess.run(f"'{exe}' table -f cann | cat", shell=True, cwd=tmp_path, capture_output=True,
                           text=True, env=env)
    assert piped.returncode == 0 and "\x1b" not in piped.stdout and "f32" in piped.stdout
    bad = subprocess.run([exe, "query", "i9", "u8", "-f", "cann"], cwd=tmp_path, capture_output=True, text=True,
                         env=env)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "i8" in bad.stderr
    module = subprocess.run([sys.executable, "-m", "promote_cli", "query", "s8", "u8", "-f", "cann"],
                            cwd=tmp_path, capture_output=True, text=True, env=env)
    assert module.stdout == "i16\n"


def test_readme_names_every_default_ruleset_and_only_real_ones():
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `([a-z][a-z0-9@._-]*)` \|", readme, flags=re.M)
    for spec in listed:
        load(spec)  # every listed name resolves
    assert {rs.name for rs in frameworks()} <= {s.split("@")[0] for s in listed}


def test_table_cast_lists_every_legal_tosa_pair_with_its_profile():
    from promote_cli.numerics.legality import LEGAL

    data = json.loads(run("table", "--cast", "--format", "json").stdout)
    assert {(p["from"], p["to"]): p["profile"] for p in data["pairs"]} == LEGAL
    assert len(LEGAL) == 52
    text = run("table", "--cast").stdout.splitlines()
    assert len(text) == 53 and text[0].split()[:2] == ["from", "to"]
    assert "i8,f32,PRO-FP" in run("table", "--cast", "--format", "csv").stdout


def test_promote_alone_prints_the_help():
    r = run()
    assert r.exit_code == 0 and r.stdout.startswith("Usage: ") and "validate" in r.stdout and r.stderr == ""


def test_query_of_more_than_two_operands():
    from promote_cli import query_n

    r = run("query", "i8", "u8", "i16", "-f", "cann", "--format", "json")
    data = json.loads(r.stdout)
    ans = query_n("cann", ["i8", "u8", "i16"])
    assert r.exit_code == 0 and data["result"] == ans.result and data["operands"] == ["i8", "u8", "i16"]
    assert ans.result == query("cann", query("cann", "i8", "u8").result, "i16").result  # cann folds pairwise
    assert run("query", "i8", "u8", "i16", "-f", "cann").stdout == f"{ans.result}\n"
    r = run("query", "i8", "u16", "f32", "-f", "cann")
    assert r.exit_code == 1 and r.stdout == ""
    assert "refuses add of i8, u16, f32" in r.stderr and len(r.stderr.splitlines()) == 1
    assert run("query", "i8", "u8", "-f", "cann", "--format", "json").exit_code == 0  # the contract's form


def test_framework_names_are_case_insensitive_and_typos_suggest():
    assert run_cli("query", "s8", "u8", "-f", "CANN")[:2] == (0, "i16\n")
    assert run_cli("query", "s8", "u8", "-f", "Cann@8.0")[:2] == (0, "i16\n")
    code, out, err = run_cli("query", "f16", "f32", "-f", "Paddle@2.6", "--format", "json")
    assert code == 0 and json.loads(out)["result"] == "f32"
    code, out, err = run_cli("query", "s8", "u8", "-f", "cnan")
    assert code == 2 and "did you mean cann?" in err


def test_dtypes_listing_gives_integer_ranges_exactly():
    code, out, _ = run_cli("dtypes", "--format", "csv")
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO(out))}
    assert code == 0 and rows["u64"]["max"] == "18446744073709551615" and rows["i64"]["max"] == str(2**63 - 1)
    for name, d in DTYPES.items():
        if d.kind in ("bool", "signed", "unsigned"):
            assert int(rows[name]["max"]) == d.max, name
        else:
            assert float(rows[name]["max"]) == pytest.approx(d.max, rel=1e-5), name


def test_help_names_what_each_value_is_and_shared_options_share_their_names():
    """No Click type placeholder (TEXT, INTEGER) in any help; counting what to print is --limit everywhere."""
    from promote_cli.cli import COMMANDS

    for command in COMMANDS:
        code, out, _ = run_cli(command, "--help")
        assert code == 0
        for placeholder in (" TEXT", " INTEGER", " FLOAT"):
            assert placeholder not in out, (command, placeholder)
    for command in ("check", "verify"):
        assert re.search(r"--limit(, --max-lines)? N ", run_cli(command, "--help")[1]), command
    assert "query       The common dtype of two operands (or more)." in run_cli("--help")[1]
