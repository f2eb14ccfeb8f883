"""No input produces a traceback: odd operands, options and files give one line and exit 2 (or 1 for a refusal)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest
from click.testing import CliRunner

import promote_cli
from promote_cli import UsageError, query
from promote_cli.cli import main
from promote_cli.oracle import registry

ODD_OPERANDS = ["", " ", "?", "0d:", "weak:", "py:", "py:long", "0d:py:int", "weak:0d:i8", "0d:weak:i8", "i8??",
                "ｉ８", "i8\x00", "x" * 5000, "torch.", "ACL_", "-1", "1e9", "None", "{}", "[i8]", "i8,u8", "py:bool?"]
FRAMEWORKS = sorted({stem.split("@")[0] for stem in registry.rule_files()} | set(registry.rule_files()))


def run(*args, stdin=None):
    return CliRunner().invoke(main, list(args), input=stdin)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_odd_operands_never_trace(framework):
    for odd in ODD_OPERANDS:
        for args in (["query", odd, "i8", "-f", framework], ["query", "f32", odd, "-f", framework, "--format", "json"]):
            r = run(*args)
            assert r.exit_code in (1, 2), (args, r.output)
            assert r.exception is None or isinstance(r.exception, SystemExit), (args, repr(r.exception))
            assert "Traceback" not in r.stderr
            if r.exit_code == 2:
                assert len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)


@pytest.mark.parametrize("operand, says", [
    ("0d:", "'0d:' needs a dtype after 0d: (e.g. 0d:i8)"),
    ("0D: ", "'0D:' needs a dtype after 0d: (e.g. 0d:i8)"),
    ("weak:", "'weak:' needs a dtype after weak: (e.g. weak:i8)"),
    ("?", "'?' needs a dtype before ? (e.g. f32?)"),
    ("py:", "'py:' needs a kind or a value after py: (py:bool, py:int, py:float, py:complex, "
                "or a literal such as py:300)"),
])
def test_a_form_without_its_dtype_says_what_is_missing(operand, says):
    """`0d:` alone is a form with nothing after it, not an "unknown dtype ''"."""
    for args in (["query", operand, "u8", "-f", "torch"], ["query", "u8", operand, "-f", "numpy"]):
        r = run(*args)
        assert (r.exit_code, r.stderr) == (2, f"promote: {says}\n")


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_batch_with_odd_lines_answers_every_line(framework):
    lines = [f"{odd} i8" for odd in ODD_OPERANDS if odd.strip() and "\x00" not in odd] + ["i8 i8 i8", "f32 f16"]
    r = run("query", "--batch", "-f", framework, stdin="\n".join(lines) + "\n")
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert len(r.stdout.splitlines()) == len(lines)


@pytest.mark.parametrize("args", [
    ["query", "i8", "u8", "-f", "openvino", "-O", "="],
    ["query", "i8", "u8", "-f", "openvino", "-O", "promote_unsafe="],
    ["query", "i8", "u8", "-f", "openvino", "-O", "u64_integer_promotion_target=py:int"],
    ["query", "i8", "u8", "-f", "@"],
    ["query", "i8", "u8", "-f", "cann@"],
    ["query", "i8", "u8", "-f", "../../etc/passwd"],
    ["query", "i8", "u8", "-f", ""],
    ["query", "i8", "u8", "-f", "cann", "--op", ""],
    ["table", "-f", "cann", "--types", ",,,"],
    ["table", "-f", "cann", "--types", "py:int"],
    ["table", "--diff", "cann", "nope"],
    ["table", "--diff", "cann", "paddle", "--op", "frobnicate"],
    ["verify", "-f", "cann"],
    ["verify", "-f", "cann@opbase", "--recording", "/nonexistent.json"],
])
def test_odd_options_give_one_line(args):
    r = run(*args)
    assert r.exit_code in (0, 1, 2)
    assert r.exception is None or isinstance(r.exception, SystemExit), (args, repr(r.exception))
    if r.exit_code == 2:
        assert len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)


@pytest.mark.parametrize("framework", ["paddle", "paddle@2.6"])
def test_two_python_scalars_are_refused_with_a_reason(framework):
    r = run("query", "py:int", "py:float", "-f", framework, "--op", "+")
    assert r.exit_code == 1 and "no tensor operand" in r.stderr


# ---- batch streams ----------------------------------------------------------------------------------------

def test_batch_answers_the_good_lines_around_undecodable_ones():
    stdin = b"i8 u8\n\xff\xfe i8\nf16 f32\ni8 \xc3\n\x00 i8\nu8 u8\n"
    r = CliRunner().invoke(main, ["query", "--batch", "-f", "cann"], input=stdin)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    lines = r.stdout.splitlines()
    assert len(lines) == 6
    assert lines[0] == query("cann", "i8", "u8").result and lines[2] == query("cann", "f16", "f32").result
    assert lines[4] == "error: unknown dtype '\\x00' (see `promote dtypes`)" and lines[5] == "u8"
    assert lines[1] == "error: line 2: not UTF-8 (byte 0xff at offset 0)"
    assert lines[3] == "error: line 4: not UTF-8 (byte 0xc3 at offset 3)"
    assert r.exit_code == 2


def test_batch_refuses_an_overlong_line_and_goes_on():
    from promote_cli import MAX_LINE_BYTES

    stdin = b"i8 u8\n" + b"i8" * MAX_LINE_BYTES + b" u8\nu8 u8\n"
    r = CliRunner().invoke(main, ["query", "--batch", "-f", "cann", "--format", "json"], input=stdin)
    objects = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["result"] for o in objects] == [query("cann", "i8", "u8").result, None, "u8"]
    assert objects[1]["error"] == f"line 2: longer than {MAX_LINE_BYTES} bytes"
    assert r.exit_code == 2


def test_batch_error_for_many_fields_is_short_and_one_line():
    r = run("query", "--batch", "-f", "cann", stdin="i8 " * 10000 + "\n")
    assert r.stdout.startswith("error: expected `A B`") and len(r.stdout) < 200


def test_batch_rejects_a_bad_option_before_reading():
    r = run("query", "--batch", "-f", "openvino", "-O", "promote_unsafe=maybe", stdin="i8 u8\n")
    assert r.exit_code == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1


@pytest.mark.parametrize("env", [{"PYTHONIOENCODING": "utf-8:strict", "PYTHONUTF8": "0"},
                                 {"LC_ALL": "en_US.UTF-8", "PYTHONUTF8": "0"}, {"LC_ALL": "C.UTF-8"}])
def test_batch_with_invalid_utf8_in_a_real_process(env):
    """Under a desktop locale Python decodes stdin strictly (`utf-8:strict` forces it where the locale
    is not installed): the bytes are read and decoded line by line."""
    env = {**{k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LC_ALL")}, **env}
    proc = subprocess.run([sys.executable, "-m", "promote_cli", "query", "--batch", "-f", "cann"],
                          input=b"i8 u8\n\xff i8\nu8 u8\n", capture_output=True, env=env)
    assert proc.stdout.decode().splitlines() == [query("cann", "i8", "u8").result,
                                                 "error: line 2: not UTF-8 (byte 0xff at offset 0)", "u8"]
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr


# ---- a reader that goes away ------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [["table", "-f", "cann"], ["query", "--batch", "-f", "cann"],
                                  ["dtypes", "--format", "json"]])
def test_broken_pipe_exits_141_quietly(args):
    """The reader's end is closed before promote writes, so its first write fails (EPIPE) for certain."""
    proc = subprocess.Popen([sys.executable, "-m", "promote_cli", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    _, err = proc.communicate(b"i8 u8\n" * 20000)
    assert proc.returncode == 141 and err == b""


def test_broken_pipe_through_a_shell_pipeline():
    promote = f"{shlex.quote(sys.executable)} -m promote_cli"
    script = f"set -o pipefail; {promote} table -f cann --format csv | head -1; echo \"exit ${{PIPESTATUS[0]}}\""
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("cann@8.0 add,")
    assert lines[-1] in ("exit 0", "exit 141")  # 0 when the table fitted in the pipe before head closed it
    assert proc.stderr == ""


# ---- verify -----------------------------------------------------------------------------------------------

BAD_RECORDINGS = {
    "[]": "expected a JSON object, got list",
    "7": "expected a JSON object, got int",
    '{"cases": []}': "missing ruleset",
    '{"ruleset": "cann"}': "missing cases",
    '{"ruleset": 3, "cases": []}': "ruleset: expected a framework name",
    '{"ruleset": "cann", "cases": {}}': "cases: expected a list",
    '{"ruleset": "cann", "cases": [5]}': "cases[0]: expected [op, a, b, options, result, error]",
    '{"ruleset": "cann", "cases": [["add", "i8", "u8", {}, "i16"]]}': "cases[0]: expected",
    '{"ruleset": "cann", "cases": [["add", 1, "u8", {}, "i16", null]]}': "cases[0]: a must be a string",
    '{"ruleset": "cann", "cases": [["add", "i8", "u8", [], "i16", null]]}': "cases[0]: options must be an object",
    '{"ruleset": "cann", "cases": [["add", "i8", "u8", {"k": [1]}, "i16", null]]}': "option values",
    '{"ruleset": "cann", "cases": [["add", "i8", "u8", {}, 16, null]]}': "result must be a string or null",
    '{"ruleset": "cann", "version": [], "cases": []}': "version: expected a string",
    '{"ruleset": "cann", "cases": [], "nary": {}}': "nary: expected a list",
    '{"ruleset": "cann", "cases": [], "nary": [["add", ["i8"], null, {}, "i8", null]]}': "nary[0]: expected a list of two",
    '{"ruleset": "cann", "cases": [], "nary": [["add", ["i8", "u8"]]]}': "nary[0]: expected [op, [a, b",
    '{"ruleset": "cann", "cases": [], "nary": [["add", ["i8", "u8"], null, {}, 3, null]]}': "nary[0]: result must",
    "{": "not a readable recording",
    "[" * 100000: "not a readable recording",
}


@pytest.mark.parametrize("text, needle", BAD_RECORDINGS.items(), ids=range(len(BAD_RECORDINGS)))
def test_malformed_recordings_are_one_line_errors(tmp_path, text, needle):
    path = tmp_path / "rec.json"
    path.write_text(text)
    r = run("verify", "-f", "cann", "--recording", str(path))
    assert r.exit_code == 2 and r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code == 2
    assert len(r.stderr.splitlines()) == 1 and needle in r.stderr, r.stderr


def test_a_recording_of_another_framework_is_refused():
    path = registry.builtin_dir().parent / "tests" / "data" / "recordings" / "paddle-3.3.json"
    r = run("verify", "-f", "openvino", "--recording", str(path))
    assert r.exit_code == 2 and r.stdout == ""
    assert "records 'paddle', not openvino" in r.stderr and len(r.stderr.splitlines()) == 1
    with pytest.raises(UsageError):
        promote_cli.verify("openvino", str(path))


def test_a_recording_of_another_version_of_the_same_framework_is_compared():
    path = registry.builtin_dir().parent / "tests" / "data" / "recordings" / "paddle-3.3.json"
    r = run("verify", "-f", "paddle@2.6", "--recording", str(path))
    assert r.exit_code in (0, 1) and "paddle@2.6 vs paddlepaddle" in r.stdout


@pytest.fixture
def rules_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(tmp_path))
    registry.clear_cache()
    yield tmp_path
    registry.clear_cache()


def test_an_unknown_probe_module_is_a_one_line_error(rules_dir):
    (rules_dir / "noprobe.toml").write_text('schema = 1\nname = "noprobe"\nversion = "1"\nprobe = "nope"\n'
                                            'types = ["i8"]\n[[rules]]\nname = "all"\nresult = "a"\n')
    r = run("verify", "-f", "noprobe")
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1
    assert "probe" in r.stderr and "'nope'" in r.stderr


def test_a_probe_that_is_not_a_probe_module_is_a_one_line_error(rules_dir):
    """`recordings` is a module of promote_cli.probes but has no version() or record()."""
    (rules_dir / "noprobe.toml").write_text('schema = 1\nname = "noprobe"\nversion = "1"\nprobe = "recordings"\n'
                                            'types = ["i8"]\n[[rules]]\nname = "all"\nresult = "a"\n')
    r = run("verify", "-f", "noprobe")
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1
    assert "is not a probe (it has no version() or record())" in r.stderr


def test_save_to_an_unwritable_place_is_a_one_line_error(tmp_path):
    from promote_cli.probes import write_recording

    with pytest.raises(UsageError, match="cannot write the recording"):
        write_recording({"ruleset": "cann", "cases": []}, str(tmp_path / "missing" / "rec.json"))


# ---- --types, messages, internal errors -------------------------------------------------------------------

def test_types_with_repeats_is_refused_quickly():
    import time

    start = time.perf_counter()
    r = run("table", "-f", "cann", "--types", ",".join(["i8"] * 100000))
    assert r.exit_code == 2 and "at most one row per operand" in r.stderr
    r = run("table", "-f", "cann", "--types", "i8,s8")
    assert r.exit_code == 2 and "lists i8 twice" in r.stderr and len(r.stderr.splitlines()) == 1
    r = run("table", "--diff", "cann", "paddle", "--types", "i8,u8,int8")
    assert r.exit_code == 2 and "lists i8 twice" in r.stderr
    assert time.perf_counter() - start < 5
    with pytest.raises(UsageError, match="twice"):
        promote_cli.table("cann", ["f16", "float16"])


def test_a_path_with_a_newline_is_escaped_in_the_message(tmp_path):
    r = run("verify", "-f", "cann", "--recording", str(tmp_path / "a\nb.json"))
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1 and "a\\nb.json" in r.stderr


def test_a_rules_directory_with_a_newline_is_escaped(tmp_path, monkeypatch):
    weird = tmp_path / "x\ny"
    weird.mkdir()
    (weird / "broken.toml").write_text("name = \n")
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(weird))
    registry.clear_cache()
    try:
        r = run("query", "i8", "i8", "-f", "broken")
    finally:
        registry.clear_cache()
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1 and "x\\ny" in r.stderr


def test_an_unexpected_exception_is_one_line_and_the_traceback_is_on_request(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("a bug\nover two lines")

    monkeypatch.setattr(promote_cli, "query", broken)
    r = run("query", "i8", "u8", "-f", "cann")
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr == ("promote: internal error: RuntimeError: a bug\\nover two lines "
                        "(set PROMOTE_DEBUG=1 for the traceback)\n")
    r = CliRunner().invoke(main, ["query", "i8", "u8", "-f", "cann"], env={"PROMOTE_DEBUG": "1"})
    assert r.exit_code == 2 and "Traceback (most recent call last)" in r.stderr
    assert r.stderr.splitlines()[-1].startswith("promote: internal error: RuntimeError")


def test_a_batch_stopped_by_a_bug_keeps_the_answers_so_far(monkeypatch):
    from promote_cli.oracle import engine

    real = engine.answer

    def failing_on_f64(rs, a, b, *args, **kwargs):
        if "f64" in (str(a), str(b)):
            raise RuntimeError("boom")
        return real(rs, a, b, *args, **kwargs)

    monkeypatch.setattr(engine, "answer", failing_on_f64)
    r = run("query", "--batch", "-f", "cann", stdin="i8 u8\nf16 f16\nf64 i8\ni8 i8\n")
    assert r.stdout.splitlines() == [query("cann", "i8", "u8").result, "f16"]
    assert r.exit_code == 2 and r.stderr.startswith("promote: internal error: RuntimeError: boom")


@pytest.mark.parametrize("argv", [
    ["query", "i8", "u8", "-f", "openvino", "-O", "promote_unsafe=true"],      # the Click-free query
    ["query", "i8", "u8", "-f", "openvino", "--op", "add", "--format=json"],    # the Click path
    ["dtypes", "--format", "json"],
    ["table", "-f", "cann", "--format", "csv"],
    ["cast", "{npy}", "--to", "f16", "-o", "{out}", "--force"],                 # the Click-free cast
])
def test_standard_output_on_a_full_disk_is_one_line(tmp_path, argv):
    """stdout on a full file system (/dev/full): exit 2 and one line that says so, not an internal error."""
    import numpy as np

    np.save(tmp_path / "a.npy", np.arange(5, dtype=np.float32))
    argv = [a.format(npy=tmp_path / "a.npy", out=tmp_path / "b.npy") for a in argv]
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "promote_cli", *argv], stdout=full, stderr=subprocess.PIPE,
                           text=True)
    assert r.returncode == 2
    assert r.stderr == "promote: cannot write standard output: No space left on device\n"
