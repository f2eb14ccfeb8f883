"""Generated hostile input for the commands of the CLI layer (query, batch, table, diff, frameworks, dtypes,
verify, validate): thousands of seeded inputs, in-process.

Whatever the input: no traceback, an exit code of 0, 1 or 2, at most one line on stderr (exactly one on exit 2),
and in a batch every good line answered, in order, whatever bad lines surround it. The generator is seeded
(PROMOTE_HOSTILE_SEED to vary it) so a failure replays.
"""

from __future__ import annotations

import os
import random

import pytest
from click.testing import CliRunner

import promote_cli
from promote_cli.cli import main
from promote_cli.oracle import registry

SEED = int(os.environ.get("PROMOTE_HOSTILE_SEED", "20261122"))
RULESETS = {rs.key: rs for rs in promote_cli.frameworks()}
NAMES = sorted({rs.name for rs in RULESETS.values()}) + sorted(RULESETS) + [
    stem for stem in registry.rule_files() if "@" in stem]
DTYPE_NAMES = list(promote_cli.DTYPES)
ALIASES = [a for name in DTYPE_NAMES for a in promote_cli.aliases(name)]
OPTION_KEYS = sorted({k for rs in RULESETS.values() for k in rs.options})
OPS = sorted({op for rs in RULESETS.values() for op in rs.op_index})
NASTY = ["", " ", "\x00", "\n", "\r", "\t", "\x1b[31m", "\u2028", "\x85", "\ufeff", "\udcff", "é", "ｉ８", "🙂",
         "%s", "{}", "{0}", "'", '"', "\\", "../", "/", ":", "@", "?", "=", ",", "#", "-", "--", "-f", "--help",
         "py:", "0d:", "weak:", "x" * 3000, "9" * 400, "nan", "None", "[]", "i8" * 50]


def _junk(rng: random.Random) -> str:
    return "".join(rng.choice(NASTY + ["a", "8", "i", "u", "f"]) for _ in range(rng.randint(1, 4)))


def _operand(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.35:
        text = rng.choice(DTYPE_NAMES)
    elif roll < 0.55:
        text = rng.choice(ALIASES)
    elif roll < 0.65:
        text = rng.choice(["py:bool", "py:int", "py:float", "py:complex"])
    else:
        text = _junk(rng)
    roll = rng.random()
    if roll < 0.1:
        text = rng.choice(["0d:", "weak:", "py:", "0d:weak:", "WEAK:", "0D:"]) + text
    elif roll < 0.15:
        text += rng.choice(["?", "??", " ", "\x00"])
    if rng.random() < 0.1:
        text = text.upper()
    return text


def _framework(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.7:
        return rng.choice(NAMES)
    if roll < 0.85:
        return rng.choice(NAMES).split("@")[0] + "@" + rng.choice(["", "9.9", "x", "@", _junk(rng)])
    return _junk(rng)


def _option(rng: random.Random) -> str:
    key = rng.choice(OPTION_KEYS + [_junk(rng), ""])
    value = rng.choice(["true", "false", "1", "maybe", "f64", "i8", "py:int", "", _junk(rng)])
    return rng.choice([f"{key}={value}", key, f"={value}", f"{key}=={value}"])


def _common(rng: random.Random) -> list[str]:
    args = []
    if rng.random() < 0.3:
        args += ["--op", rng.choice(OPS + [_junk(rng)])]
    for _ in range(rng.choice([0, 0, 0, 1, 2])):
        args += ["-O", _option(rng)]
    return args


def _types(rng: random.Random) -> str:
    count = rng.choice([1, 2, 3, 5, 8])
    return rng.choice([",", ", ", ",,"]).join(_operand(rng) if rng.random() < 0.3 else rng.choice(DTYPE_NAMES)
                                               for _ in range(count))


def _command(rng: random.Random) -> list[str]:
    roll = rng.random()
    if roll < 0.55:
        args = ["query", _operand(rng), _operand(rng), "-f", _framework(rng)]
        if rng.random() < 0.05:
            args.insert(3, _operand(rng))
        return args + _common(rng) + rng.choice([[], ["--format", "json"]])
    if roll < 0.75:
        args = ["table", "-f", _framework(rng), "--format", rng.choice(["text", "json", "csv", "markdown"])]
        if rng.random() < 0.97:  # a whole matrix now and then (they cost a few milliseconds each)
            args += ["--types", _types(rng)]
        return args + _common(rng)
    if roll < 0.9:
        side = rng.choice([_framework(rng), _framework(rng) + ":" + _option(rng)])
        return ["table", "--diff", _framework(rng), side, "--types", _types(rng),
                "--format", rng.choice(["text", "json"])] + _common(rng) + rng.choice([[], ["--exit-code"]])
    if roll < 0.95:
        return [rng.choice(["frameworks", "dtypes"]), "-f", _framework(rng),
                "--format", rng.choice(["text", "json", "csv", "markdown"])]
    return [rng.choice(["verify", "validate"]), _junk(rng), "-f", _framework(rng)]


def _check(result, args) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, repr(result.exception))
    assert result.exit_code in (0, 1, 2), (args, result.exit_code, result.stderr)
    assert "Traceback" not in result.stderr, args
    lines = result.stderr.splitlines()
    assert len(lines) <= 1, (args, result.stderr)
    if result.exit_code == 2:
        assert len(lines) == 1 and lines[0].startswith(("promote: ", "Usage:")), (args, result.stderr)


def test_generated_commands_never_trace():
    rng = random.Random(SEED)
    runner = CliRunner()
    codes = {0: 0, 1: 0, 2: 0}
    for _ in range(1200):
        args = _command(rng)
        result = runner.invoke(main, args)
        _check(result, args)
        codes[result.exit_code] += 1
    assert all(codes.values()), codes  # the generator reaches answers, refusals and errors alike


# ---- batch streams --------------------------------------------------------------------------------------

BAD_LINES = [b"\xff\xfe i8", b"i8 \xc3", b"\xed\xa0\x80 i8", b"\x00 i8", b"i8\x00 u8", b"i8 " * 5000,
             b"i8 u8 f32", b"i8", b"x" * 70000, b"\x1b[2J i8", b"i8 u8\r", b"\xef\xbb\xbfi8 u8", b"py:int py:int",
             b"0d:i8 weak:u8", b"i8? py:float",
             b"\t\t", b"# only a comment", b"", b"weak:weak:i8 i8", "ｉ８ u8".encode(), b"i8 u8 # fine"]


def _alone(framework: str, line: bytes) -> list[str | None]:
    """What a line gives on its own (none for a comment or blank): its answer, or None for "an error line"."""
    items = list(promote_cli.batch(framework, [line]))
    if not items:
        return []
    (item,) = items
    if item.error is not None:
        return [None]
    return [item.answer.result if item.answer.result is not None else f"error: {item.answer.refusal}"]


def _good_pair(rng: random.Random, rs) -> tuple[str, str]:
    names = [d.name for d in rs.types]
    return rng.choice(names), rng.choice(names)


@pytest.mark.parametrize("case", range(30))
def test_generated_batch_streams_answer_every_good_line_in_order(case):
    rng = random.Random(SEED * 1000 + case)
    rs = rng.choice(list(RULESETS.values()))
    lines: list[bytes] = []
    expected: list[str | None] = []  # the answer of each line that is a question; None for a bad line
    for _ in range(rng.randint(50, 300)):
        if rng.random() < 0.7:
            a, b = _good_pair(rng, rs)
            lines.append(f"{a} {b}".encode())
            ans = promote_cli.query(rs.key, a, b)
            expected.append(ans.result if ans.result is not None else f"error: {ans.refusal}")
        else:
            bad = rng.choice(BAD_LINES)
            lines.append(bad)
            expected += _alone(rs.key, bad)
    stdin = b"\n".join(lines) + rng.choice([b"\n", b""])
    result = CliRunner().invoke(main, ["query", "--batch", "-f", rs.key], input=stdin)
    _check(result, ["query", "--batch", "-f", rs.key])
    out = result.stdout.split("\n")
    assert out[-1] == ""
    out = out[:-1]
    assert len(out) == len(expected), (len(out), len(expected))
    for got, want in zip(out, expected):
        if want is None:
            assert got.startswith("error: ") and len(got) < 400
        else:
            assert got == want
    assert result.exit_code == (2 if None in expected else 1 if any(e and e.startswith("error") for e in expected)
                                else 0)


# ---- expressions, properties, orders, pictures, expect files, completion ---------------------------------

import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from promote_cli.vocab import operators  # noqa: E402

EXPR_FRAMEWORKS = sorted({rs.key for rs in RULESETS.values() if rs.expressions is not None})
LITERALS = ["1", "0", "-1", "2.5", "1e3", "1e999", "True", "False", "1j", "1L", "0x10", "1_000", "9" * 500, ".5",
            "1.", "1e", "nan", "inf", "2**64"]
CASE_SECONDS = 2.0  # the longest one generated invocation may take


class _TooSlow(Exception):
    pass


def _bounded(seconds: float):
    """A context that interrupts a case running longer than `seconds` (the case then fails)."""
    import contextlib

    @contextlib.contextmanager
    def limit():
        def stop(signum, frame):
            raise _TooSlow(f"over {seconds} s")

        old = signal.signal(signal.SIGALRM, stop)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    return limit()


def _variable(rng: random.Random, seen: list) -> str:
    if seen and rng.random() < 0.5:
        return rng.choice(seen)
    name = rng.choice(["x", "y", "z", "w", "_a", "é", "x1"] * 5 + ["1x", "if", "True", "maximum", _junk(rng)])
    seen.append(name)
    form = rng.choice(["", "", "", "", "0d:", "weak:", "py:", "0d:weak:", "weak:weak:"])
    kinds = ["i8", "u8", "i16", "i32", "f16", "f32", "bool", "bf16", "f64", "c64"]
    return f"{name}:{form}{_operand(rng) if rng.random() < 0.1 else rng.choice(kinds * 4 + DTYPE_NAMES)}"


def _expression(rng: random.Random, depth: int = 0, seen: list | None = None) -> str:
    seen = [] if seen is None else seen
    roll = rng.random()
    if depth > 6 or roll < 0.3:
        leaf = rng.random()
        if leaf < 0.6:
            return _variable(rng, seen)
        if leaf < 0.97:
            return rng.choice(LITERALS[:9])
        return rng.choice(LITERALS[9:] + [_junk(rng)])
    if roll < 0.7:
        op = rng.choice(operators.BINARY + ("@", "<<", "and", "", "+-"))
        return f"{_expression(rng, depth + 1, seen)} {op} {_expression(rng, depth + 1, seen)}"
    if roll < 0.8:
        return rng.choice(["-", "+", "~", "not ", "--"]) + _expression(rng, depth + 1, seen)
    if roll < 0.9:
        name = rng.choice(list(operators.CALLS) + ["abs", "x", ""])
        count = rng.choice([0, 1, 2, 3, 4])
        return f"{name}({', '.join(_expression(rng, depth + 1, seen) for _ in range(count))})"
    return f"({_expression(rng, depth + 1, seen)})"


def _clean_expression(rng: random.Random, depth: int = 0) -> str:
    """A well-formed expression over a few common types (most frameworks answer it)."""
    if depth > 3 or rng.random() < 0.35:
        if rng.random() < 0.7:
            name = rng.choice("xyzw")
            form = rng.choice(["", "", "", "0d:", "weak:"])
            return f"{name}{depth}{rng.randrange(9)}:{form}{rng.choice(['i8', 'u8', 'i32', 'f16', 'f32', 'bool'])}"
        return rng.choice(LITERALS[:9])
    if rng.random() < 0.8:
        op = rng.choice(operators.BINARY)
        return f"({_clean_expression(rng, depth + 1)} {op} {_clean_expression(rng, depth + 1)})"
    name = rng.choice(list(operators.CALLS))
    return f"{name}({', '.join(_clean_expression(rng, depth + 1) for _ in range(operators.CALLS[name]))})"


def _hostile_expression(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.3:
        text = _clean_expression(rng)
    elif roll < 0.6:
        text = _expression(rng)
    elif roll < 0.7:  # deeply nested
        n = rng.choice([40, 47, 48, 49, 60, 500, 5000])
        text = rng.choice(["(" * n + "x:i8" + ")" * n, "-" * n + "x:i8", "maximum(" * n + "x:i8, 1" + ")" * n,
                           "x:i8" + "**x" * n, "x:i8" + " + 1" * n, "(" * n])
    elif roll < 0.8:  # huge
        text = rng.choice(["x:i8 + " + " + ".join(["1"] * rng.choice([999, 1000, 1001, 3000])),
                           "x" * rng.choice([4096, 4097, 100_000]), "x:i8 + " + "9" * 5000])
    elif roll < 0.9:
        text = _junk(rng) + _expression(rng) + _junk(rng)
    else:
        text = rng.choice(["", " ", "\x00", "x:", ":i8", "x:i8 +", "x:i8 x:i8", "x:i8 + x:i16", "x + 1",
                           "where(x:bool, 1, 2.5)", "x:i8 ** -1", "1 / 0", "x:i8 % 0", "0 ** -1", "1e308 * 1e308",
                           "x:i8\n+ 1", "x:i8 \u2028 + 1", "x:i8 + ｙ:i8", "x:\udcffi8", "x:i8 # c", "x:i8;1"])
    return text


def _expr_command(rng: random.Random) -> list[str]:
    fw = rng.choice(EXPR_FRAMEWORKS) if rng.random() < 0.8 else _framework(rng)
    args = ["expr", _hostile_expression(rng), "-f", fw]
    for _ in range(rng.choice([0] * 8 + [1, 2])):
        args += ["-O", _option(rng)]
    if rng.random() < 0.3:
        args.append("--explain")
    return args + rng.choice([[], [], ["--format", "json"], ["--format", _junk(rng)]])


def _check_command(rng: random.Random) -> list[str]:
    args = ["check", "-f", _framework(rng), "--limit", rng.choice(["0", "1", "5", "2"] * 3 + ["-1", "x", "", "9" * 30,
                                                                                          "1.5"]),
            "--forms", rng.choice(["tensor", "0d", "py", "weak", "all", "0d,py", "py,py", "", ",", "tensor,all",
                                   _junk(rng)])]
    if rng.random() < 0.6:
        args += ["--op", rng.choice(OPS + [_junk(rng), "+", "", "*"])]
    return args + (_common(rng)[2:] if rng.random() < 0.2 else []) + rng.choice(
        [[], ["--format", "json"], ["--format", _junk(rng)]])


def _lattice_command(rng: random.Random) -> list[str]:
    args = ["lattice", "-f", _framework(rng),
            "--format", rng.choice(["text", "json", "dot", "mermaid"] * 3 + ["svg", _junk(rng)])]
    if rng.random() < 0.4:
        args += ["--lattice", rng.choice(["", "main", "default", "numeric", _junk(rng)])]
    if rng.random() < 0.4:
        args += ["--types", _types(rng)]
    if rng.random() < 0.3:
        args.append("--answers")
    return args + (_common(rng) if rng.random() < 0.3 else [])


def _diff_command(rng: random.Random) -> list[str]:
    count = rng.choice([0, 1, 2, 3, 10])
    sides = [rng.choice([rng.choice(NAMES)] * 6 + [_framework(rng), _framework(rng) + ":" + _option(rng),
                        rng.choice(NAMES) + ":" + ",".join(_option(rng) for _ in range(3)), "nosuch", ":", "-"])
             for _ in range(count)]
    args = ["table", "--diff", *sides, "--types", _types(rng) if rng.random() < 0.3 else "i8,u8,f16,bf16"]
    if rng.random() < 0.05:
        args += ["-f", _framework(rng)]
    return args + (_common(rng) if rng.random() < 0.3 else []) + rng.choice(
        [[], ["--format", "json"], ["--exit-code"], ["--format", "csv"]])


def _new_command(rng: random.Random) -> list[str]:
    roll = rng.random()
    if roll < 0.55:
        return _expr_command(rng)
    if roll < 0.7:
        return _check_command(rng)
    if roll < 0.85:
        return _lattice_command(rng)
    return _diff_command(rng)


def _check_new(result, args) -> None:
    """`_check`, with the one documented exception: a malformed expression's caret form (three lines)."""
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, repr(result.exception))
    assert result.exit_code in (0, 1, 2), (args, result.exit_code, result.stderr)
    assert "Traceback" not in result.stderr, args
    lines = result.stderr.splitlines()
    if result.exit_code == 2 and args[0] == "expr" and len(lines) == 3 and "column" in lines[0]:
        assert lines[0].startswith("promote: ") and lines[1].startswith("  "), (args, result.stderr)
        assert lines[2].startswith("  ") and set(lines[2].strip()) == {"^"}, (args, result.stderr)
        return
    if args[0] == "lattice" and result.exit_code == 1 and {"dot", "mermaid"} & set(args):
        lines = lines[-1:]  # documented: dot and mermaid draw nothing then, and the cells go to stderr
    assert len(lines) <= 1, (args, result.stderr)
    if result.exit_code == 2:
        assert len(lines) == 1 and lines[0].startswith(("promote: ", "Usage:")), (args, result.stderr)


N_NEW = 400  # generated invocations of expr, check, lattice and the N-way diff


def test_generated_new_commands_never_trace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a command that wrote a file would show here
    rng = random.Random(SEED + 1)
    runner = CliRunner()
    codes = {0: 0, 1: 0, 2: 0}
    for _ in range(N_NEW):
        args = _new_command(rng)
        with _bounded(CASE_SECONDS):
            result = runner.invoke(main, args)
        _check_new(result, args)
        codes[result.exit_code] += 1
    assert all(codes.values()), codes
    assert list(tmp_path.iterdir()) == []
