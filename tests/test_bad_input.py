"""No input produces a traceback: odd operands, options and files give one line and exit 2 (or 1 for a refusal)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

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
