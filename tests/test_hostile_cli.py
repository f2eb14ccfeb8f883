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
