"""`promote rescale` and `rescale_file`: files in, files out, the listing, refusals, reports.

The values are `rescale_array`'s (checked against the reference model in test_rescale.py);
here the streamed file rescale is compared with the in-memory one of the whole array."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from promote_cli.arrayio import npy as npyio
from promote_cli.cli import main
from promote_cli.errors import UsageError
from promote_cli.numerics.rescale import rescale_array
from promote_cli.arrayio.rescalefile import rescale_file
from promote_cli.numerics.rescale_rules import RULE, RULES, listing


def run(*args):
    return CliRunner().invoke(main, ["rescale", *map(str, args)], catch_exceptions=False)


@pytest.fixture
def acc(tmp_path):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((300, 7)) * 2.0 ** rng.integers(4, 30, (300, 7))).astype(np.int32)
    p = tmp_path / "acc.npy"
    np.save(p, x)
    return p, x


M7 = [1518500250 + 1000 * k for k in range(7)]
S7 = [36 + k % 5 for k in range(7)]


def _csv(v):
    return ",".join(map(str, v))


@pytest.mark.parametrize("fortran", [False, True])
@pytest.mark.parametrize("chunk", [None, 4 * 5, 4 * 13 + 4, 4 * 7 * 11])
def test_file_equals_in_memory_at_any_chunking(acc, tmp_path, fortran, chunk):
    p, x = acc
    if fortran:
        x = np.asfortranarray(x)
        np.save(p, x)
    before = p.read_bytes()
    rep = rescale_file(p, tmp_path / "out.npy", "i8", M7, S7, per_channel=True, rounding="double",
                       output_zp=-5, chunk_bytes=chunk, force=True, threads=2)
    want, st = rescale_array(x, "i8", M7, S7, per_channel=True, rounding="double", output_zp=-5)
    got = np.load(tmp_path / "out.npy")
    assert got.dtype == np.int8 and got.shape == x.shape and np.isfortran(got) == fortran
    assert np.array_equal(got, want)
    assert rep.stats["saturated"] == st.saturated and rep.elements == x.size
    assert p.read_bytes() == before


def test_cli_report_text_and_json(acc, tmp_path):
    p, x = acc
    r = run(p, "--to", "i8", "--multiplier", _csv(M7), "--shift", _csv(S7), "--per-channel")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith(f"{p} -> {tmp_path / 'acc.i8.npy'}: i32 -> i8 (scale32, SINGLE_ROUND, per-channel x7), "
                               f"2100 elements (300x7): ")
    want, st = rescale_array(x, "i8", M7, S7, per_channel=True)
    assert f"{st.saturated} saturated ({st.saturated_low} low, {st.saturated_high} high)" in r.stdout
    assert np.array_equal(np.load(tmp_path / "acc.i8.npy"), want)
    r = run(p, "--to", "i8", "--multiplier", _csv(M7), "--shift", _csv(S7), "--per-channel", "--format", "json",
            "--force")
    d = json.loads(r.stdout)
    assert d["stats"] == st.as_dict() | {} or d["stats"] == {k: v for k, v in st.as_dict().items() if k != "elements"}
    assert d["rounding"] == "SINGLE_ROUND" and d["multiplier"] == M7 and d["shift"] == S7


def test_scale_is_normalized_and_said(acc, tmp_path):
    p, x = acc
    r = run(p, "--to", "u16", "--scale", "0.001", "--output-zp", "32768", "--from", "i32")
    # i32 -> unsigned is forbidden: the refusal quotes the rule, nothing is written
    assert r.exit_code == 2 and RULE["i32_to_unsigned"].text in r.stderr
    assert not (tmp_path / "acc.u16.npy").exists()
    r = run(p, "--to", "i16", "--scale", "0.001")
    assert r.exit_code == 0
    assert "--scale 0.001 -> --multiplier 1099511628 --shift 40" in r.stderr
    want, _ = rescale_array(x, "i16", 1099511628, 40)
    assert np.array_equal(np.load(tmp_path / "acc.i16.npy"), want)


@pytest.mark.parametrize("args, rule", [
    (["--to", "u8", "--input-unsigned"], "both_unsigned"),
    (["--to", "i32", "--input-unsigned"], "unsigned_to_i32"),
    (["--to", "i8", "--scale16", "--rounding", "double"], "double_round_scale16"),
    (["--to", "i16", "--output-zp", "3"], "output_zp"),
    (["--to", "u16", "--output-zp", "3"], "output_zp_u16"),
])
def test_forbidden_combinations_exit_2_quoting_the_rule(tmp_path, args, rule):
    p = tmp_path / "q.npy"
    np.save(p, np.arange(-5, 5, dtype=np.int8))
    mult = ["--multiplier", "16384", "--shift", "14"] if "--scale16" in args else ["--multiplier", "1073741824",
                                                                                   "--shift", "30"]
    r = run(p, *args, *mult)
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and RULE[rule].text in r.stderr
    assert os.listdir(tmp_path) == ["q.npy"]


def test_unsigned_storage_and_zero_points(tmp_path):
    p = tmp_path / "u.npy"
    x = np.array([0, 1, 127, 128, 129, 255], np.uint8)
    np.save(p, x)
    r = run(p, "--to", "i8", "--input-zp", "128", "--multiplier", "1073741824", "--shift", "30")
    assert r.exit_code == 0, r.stderr
    assert np.load(tmp_path / "u.i8.npy").tolist() == [-128, -127, -1, 0, 1, 127]
    r = run(p, "--to", "i8", "--input-zp", "300", "--multiplier", "1073741824", "--shift", "30", "--force")
    assert r.exit_code == 2 and "input zero point 300 is not a u8 value" in r.stderr


def test_i48_from_int64(tmp_path):
    p = tmp_path / "a48.npy"
    x = np.array([(1 << 40) + 12345, -(1 << 47), (1 << 47) - 1, -3], np.int64)
    np.save(p, x)
    assert run(p, "--to", "i32", "--scale16", "--multiplier", "16384", "--shift", "30").exit_code == 2  # needs --from
    r = run(p, "--to", "i32", "--from", "i48", "--scale16", "--multiplier", "16384", "--shift", "30")
    assert r.exit_code == 2 and "element 2: apply_scale_16 result 2147483648" in r.stderr  # (2^47 - 1) / 2^16, rounded
    r = run(p, "--to", "i32", "--from", "i48", "--scale16", "--multiplier", "16384", "--shift", "31")
    assert r.exit_code == 0, r.stderr
    want, _ = rescale_array(x, "i32", 16384, 31, scale32=False, from_="i48")
    assert np.array_equal(np.load(tmp_path / "a48.i32.npy"), want)
    r = run(p, "--to", "i32", "--from", "i48", "--multiplier", "1073741824", "--shift", "30", "--force")
    assert r.exit_code == 2 and RULE["scale32_i48"].text in r.stderr


@pytest.mark.parametrize("to", ["i8", "i16", "i32"])
@pytest.mark.parametrize("rounding", ["single", "inexact"])
def test_unsigned_i48_input_exits_2_and_writes_nothing(tmp_path, to, rounding):
    """--from i48 --input-unsigned is u48 input, which the spec (and the reference model)
    refuses; it used to be read as i48, the flag ignored."""
    p = tmp_path / "a48.npy"
    np.save(p, np.arange(-3, 5, dtype=np.int64))
    r = run(p, "--to", to, "--from", "i48", "--input-unsigned", "--scale16", "--rounding", rounding,
            "--multiplier", "16384", "--shift", "14")
    assert r.exit_code == 2
    errors = [line for line in r.stderr.splitlines() if "is not defined" in line]
    assert len(errors) == 1 and "RESCALE u48 -> " in errors[0], r.stderr
    assert RULE["u48_input" if to != "i32" else "unsigned_to_i32"].text in errors[0]
    assert os.listdir(tmp_path) == ["a48.npy"]
    with pytest.raises(UsageError, match=r"ERROR_IF\("):
        rescale_array(np.load(p), to, 16384, 14, scale32=False, rounding=rounding, from_="i48", input_unsigned=True)


def test_a_require_failing_mid_stream_leaves_no_output(tmp_path):
    p = tmp_path / "big.npy"
    x = np.zeros(200_000, np.int32)
    x[-1] = 5  # breaks apply_scale_32's value range for shift 2, in the last chunk
    np.save(p, x)
    with pytest.raises(UsageError, match=r"element 199999: .* 5 .*REQUIRE\(value >= "):
        rescale_file(p, tmp_path / "o.npy", "i8", 1, 2, chunk_bytes=4096)
    assert sorted(os.listdir(tmp_path)) == ["big.npy"]
    assert not [n for n in os.listdir(tmp_path) if npyio.TEMP_MARK in n]


def test_never_the_input_and_not_twice_without_force(acc, tmp_path):
    p, x = acc
    before = p.read_bytes()
    r = run(p, "--to", "i8", "--multiplier", "1073741824", "--shift", "40", "-o", p)
    assert r.exit_code == 2 and p.read_bytes() == before
    assert run(p, "--to", "i8", "--multiplier", "1073741824", "--shift", "40").exit_code == 0
    r = run(p, "--to", "i8", "--multiplier", "1073741824", "--shift", "40")
    assert r.exit_code == 2 and "exists" in r.stderr


@pytest.mark.parametrize("args, message", [
    ([], "no input file"),
    (["x.npy"], "no output type"),
    (["x.npy", "--to", "i8"], "--multiplier and --shift, or --scale"),
    (["x.npy", "--to", "i8", "--multiplier", "1,a", "--shift", "3"], "integers separated by commas"),
    (["x.npy", "--to", "i8", "--scale", "0.5", "--shift", "3"], "not both"),
    (["x.npy", "--to", "f16", "--scale", "0.5"], "no output type f16"),
])
def test_usage_errors_are_one_line(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    np.save("x.npy", np.arange(4, dtype=np.int8))
    r = run(*args)
    assert r.exit_code == 2 and message in r.stderr and r.stderr.count("\n") == 1


def test_list_is_the_rules_table():
    r = run("--list")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["from", "to", "scale32:single", "scale32:double", "scale32:inexact",
                                "scale16:single", "scale16:double", "scale16:inexact"]
    assert ["u8", "i8", "yes"] == r.stdout.splitlines()[[x.split()[:1] for x in lines].index(["u8"])].split()[:3]
    for rule in RULES:
        assert f"{rule.name}: {rule.text}" in r.stdout
    data = json.loads(run("--list", "--format", "json").stdout)
    assert data == listing()
    assert len(data["combinations"]) == 288 and len(data["rules"]) == len(RULES)
    only = run("--list", "--from", "u16", "--to", "i8").stdout.splitlines()
    assert only[1].split()[:2] == ["u16", "i8"] and len([x for x in only if x.startswith("u16")]) == 1


def test_python_api_exports_rescale():
    import promote_cli

    assert promote_cli.rescale_array is rescale_array
    assert promote_cli.rescale_file is rescale_file
    assert promote_cli.rescale_table() == listing()


def test_list_in_the_table_formats():
    csv = run("--list", "--from", "i48", "--format", "csv").stdout.splitlines()
    assert csv[0].startswith("from,to,scale32:single") and csv[1].startswith("i48,i8,scale32_i48,")
    md = run("--list", "--to", "u16", "--format", "markdown").stdout
    assert md.startswith("| from | to |")
    r = run("x.npy", "--to", "i8", "--scale", "0.5", "--format", "csv")
    assert r.exit_code == 2 and "is for --list" in r.stderr


def test_inexact_says_how(tmp_path):
    p = tmp_path / "x.npy"
    np.save(p, np.arange(-100, 100, dtype=np.int16))
    r = run(p, "--to", "i8", "--multiplier", "23186", "--shift", "16", "--scale16", "--rounding", "inexact")
    assert r.exit_code == 0 and "INEXACT_ROUND computed as the TOSA reference model does" in r.stderr
    assert "error bound" in r.stderr


def test_two_threads_share_no_buffers(tmp_path):
    """The driver converts chunks in two threads at once: each needs its own scratch blocks."""
    rng = np.random.default_rng(5)
    x = rng.integers(-2**31, 2**31, (40_000, 10), dtype=np.int64).astype(np.int32)
    p = tmp_path / "t.npy"
    np.save(p, x)
    mults, shifts = [1518500250 + k for k in range(10)], [33 + k for k in range(10)]
    want, _ = rescale_array(x, "i16", mults, shifts, per_channel=True)
    for _ in range(3):
        rescale_file(p, tmp_path / "o.npy", "i16", mults, shifts, per_channel=True, chunk_bytes=4000, threads=2,
                     force=True)
        assert np.array_equal(np.load(tmp_path / "o.npy"), want)


def test_the_values_docs_rescale_md_shows(tmp_path, monkeypatch):
    """docs/rescale.md's `np.load("F").tolist()  # VALUES` lines, after running its commands."""
    import ast
    import re

    from support import load_tool

    doc_examples = load_tool("doc_examples")
    doc = Path(__file__).resolve().parent.parent / "docs" / "rescale.md"
    doc_examples.setup_files(doc, tmp_path)
    shown = re.findall(r'^np\.load\("([^"]+)"\)\.tolist\(\)\s+# (.*)$', doc.read_text(), re.M)
    assert len(shown) == 4
    for ex in doc_examples.examples(doc):
        doc_examples.run(ex, tmp_path)
    monkeypatch.chdir(tmp_path)
    for name, values in shown:
        assert np.load(name).tolist() == ast.literal_eval(values), name
