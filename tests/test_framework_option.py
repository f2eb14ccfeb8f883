"""`-f NAME[@VERSION][:KEY=VALUE,...]`: a ruleset's options given with its name (the syntax of a `--diff` side
and an expect line) wherever `-f` is taken, merged with `-O`; a key given two values, a repeated `-f` and a
`PROMOTE_RULES_PATH` entry that is no directory are usage errors (one line, exit 2)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from promote_cli.cli import main


def run(*args, env=None, stdin=None):
    return CliRunner().invoke(main, list(args), env=env, input=stdin)


def refused(result, *words):
    """A usage error: exit 2, one line on stderr holding `words`, nothing on stdout."""
    assert (result.exit_code, result.stdout) == (2, ""), (result.exit_code, result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("promote: "), result.stderr
    assert all(w in result.stderr for w in words), result.stderr
    return result.stderr


#: each command that takes -f and -O: its words with -f left to the parameters
SHAPES = [
    ("query", "i8", "u8"),
    ("explain", "i8", "u8"),
    ("expr", "x:i8 + y:u8"),
    ("table", "--types", "i8,u8", "--format", "text"),
    ("check", "--op", "add"),
    ("lattice", "--types", "i8,u8,i16"),
]


@pytest.mark.parametrize("shape", SHAPES, ids=[s[0] for s in SHAPES])
def test_options_with_the_name_are_the_options_of_o(shape):
    with_name = run(*shape, "-f", "openvino:promote_unsafe=true")
    with_o = run(*shape, "-f", "openvino", "-O", "promote_unsafe=true")
    both = run(*shape, "-f", "openvino:promote_unsafe=true", "-O", "promote_unsafe=true")  # the same value twice
    assert (with_name.exit_code, with_name.stdout, with_name.stderr) == (with_o.exit_code, with_o.stdout, with_o.stderr)
    assert (both.exit_code, both.stdout) == (with_o.exit_code, with_o.stdout)
    assert with_o.exit_code in (0, 1) and with_o.stdout
    merged = run(*shape, "-f", "openvino:promote_unsafe=true", "-O", "pytorch_scalar_promotion=true")
    assert merged.exit_code in (0, 1)


def test_a_query_with_the_options_on_the_name():
    assert run("query", "i8", "u8", "-f", "openvino:promote_unsafe=true").stdout == "i16\n"
    assert run("query", "i8", "u8", "-f", "jax@0.10:x64=true", "--format", "json").exit_code == 0
    assert run("query", "i8", "u8", env={"PROMOTE_FRAMEWORK": "openvino:promote_unsafe=true"}).stdout == "i16\n"
    batch = run("query", "--batch", "-f", "openvino:promote_unsafe=true", stdin="i8 u8\nu8 i16\n")
    assert (batch.exit_code, batch.stdout) == (0, "i16\ni16\n")


@pytest.mark.parametrize("shape", SHAPES, ids=[s[0] for s in SHAPES])
def test_one_key_given_two_values_is_refused(shape):
    refused(run(*shape, "-f", "openvino:promote_unsafe=true", "-O", "promote_unsafe=false"),
            "promote_unsafe", "two values")


@pytest.mark.parametrize("args", [
    ("query", "i8", "u8"), ("explain", "i8", "u8"), ("expr", "x:i8"), ("table",), ("check",), ("lattice",),
    ("verify",), ("frameworks",), ("dtypes",), ("query", "--batch")])
def test_a_repeated_framework_is_refused_never_the_last_taken(args):
    refused(run(*args, "-f", "torch", "-f", "openvino"), "-f", "torch", "openvino", "once")
    refused(run(*args, "-f", "torch", "--framework", "torch"), "-f", "once")


@pytest.mark.parametrize("args", [("verify",), ("frameworks",), ("dtypes",)])
def test_commands_without_options_refuse_them_on_the_name(args):
    refused(run(*args, "-f", "jax:x64=true"), "no ruleset options", "-f jax")


def test_malformed_options_on_the_name_are_refused():
    refused(run("query", "i8", "u8", "-f", "jax:x64"), "KEY=VALUE", "x64")
    refused(run("table", "-f", "openvino:"), "KEY=VALUE")
    refused(run("query", "i8", "u8", "-f", "jax:nosuch=1"), "nosuch")
