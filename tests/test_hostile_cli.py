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
    lines = error_lines(result.stderr)  # a copy of a shipped rule file hides it: a note beside the one line
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

import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from promote_cli.vocab import operators  # noqa: E402
from support import error_lines, time_limit  # noqa: E402

EXPR_FRAMEWORKS = sorted({rs.key for rs in RULESETS.values() if rs.expressions is not None})
LITERALS = ["1", "0", "-1", "2.5", "1e3", "1e999", "True", "False", "1j", "1L", "0x10", "1_000", "9" * 500, ".5",
            "1.", "1e", "nan", "inf", "2**64"]
CASE_SECONDS = 2.0  # the longest one generated invocation may take




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
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, args
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


N_NEW = 300  # generated invocations of expr, check, lattice and the N-way diff


def test_generated_new_commands_never_trace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a command that wrote a file would show here
    rng = random.Random(SEED + 1)
    runner = CliRunner()
    codes = {0: 0, 1: 0, 2: 0}
    for _ in range(N_NEW):
        args = _new_command(rng)
        with time_limit(CASE_SECONDS):
            result = runner.invoke(main, args)
        _check_new(result, args)
        codes[result.exit_code] += 1
    assert all(codes.values()), codes
    assert list(tmp_path.iterdir()) == []


# ---- picture outputs: hostile paths ---------------------------------------------------------------------

def _tree(root: Path) -> dict:
    """Every entry under `root`: its kind and, for a regular file, its bytes (to see what changed)."""
    out = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        if path.is_symlink():
            out[path] = ("link", os.readlink(path))
        elif path.is_file():
            out[path] = ("file", path.read_bytes())
        else:
            out[path] = ("dir" if path.is_dir() else "special", st.st_mode)
    return out


N_PICTURES = 120  # table --svg/--html runs, each over two hostile output paths


def test_generated_picture_outputs_replace_only_regular_files(tmp_path, monkeypatch):
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "numpy.toml").write_bytes((Path(__file__).resolve().parent.parent / "rules" / "numpy.toml").read_bytes())
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(rules))
    monkeypatch.chdir(tmp_path)
    os.mkfifo("fifo")
    Path("dir").mkdir()
    Path("old.svg").write_text("old")
    os.symlink("old.svg", "to-old")
    os.symlink("rules/numpy.toml", "to-rules")
    os.symlink("nowhere", "dangling")
    os.symlink("fifo", "to-fifo")
    paths = ["fifo", "dir", "dir/", "/dev/null", "old.svg", "./old.svg", "to-old", "to-rules", "rules/numpy.toml",
             "dangling", "to-fifo", "-", "", "new.svg", "./new.svg", "dir/../new.svg", "nodir/x.svg", ".", "..",
             "new\nline.svg", "é.html", "x" * 300, "/proc/self/x.svg", "old.svg/x.svg"]
    rng = random.Random(SEED + 2)
    runner = CliRunner()
    codes = {0: 0, 2: 0}
    for _ in range(N_PICTURES):
        given = {}
        for kind in rng.sample(["--svg", "--html"], rng.choice([1, 2])):
            given[kind] = rng.choice(paths)
        sides = rng.choice([["-f", "numpy"], ["-f", "numpy@2.4"], ["--diff", "numpy", "jax"],
                            ["--diff", "numpy", "to-rules"]])
        args = ["table", *sides, "--types", "i8,u8,f16"] + [w for kv in given.items() for w in kv]
        before = _tree(tmp_path)
        with time_limit(CASE_SECONDS):
            result = runner.invoke(main, args)
        _check(result, args)
        codes[result.exit_code] += 1
        after = _tree(tmp_path)
        written = {(tmp_path / p).resolve() for p in given.values() if p not in ("-", "")}
        for path, was in before.items():
            now = after.get(path)
            if result.exit_code != 0 or path.resolve() not in written or was[0] != "file":
                assert now == was, (args, path, result.stderr)  # nothing else changed (no FIFO, device, input)
        for path in set(after) - set(before):
            assert result.exit_code == 0 and path.resolve() in written, (args, path)
            assert not path.name.startswith("."), (args, path)  # no temporary file left
        for path in written:
            if result.exit_code == 0 and path.exists():
                text = path.read_text(encoding="utf-8")
                assert text.startswith(("<svg", "<!DOCTYPE html")), (args, path)
        for path in set(after) - set(before):
            path.unlink()  # the next case starts from the same tree
        Path("old.svg").write_text("old")
    assert all(codes.values()), codes


def test_two_names_of_one_output_are_refused_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("a.svg").write_text("old")
    os.symlink("a.svg", "link")
    for second in ("link", "./a.svg", str(tmp_path / "a.svg")):
        result = CliRunner().invoke(main, ["table", "-f", "numpy", "--types", "i8,u8", "--svg", "a.svg",
                                           "--html", second])
        assert result.exit_code == 2 and "the same file as a.svg" in result.stderr, result.stderr
        assert Path("a.svg").read_text() == "old"
    result = CliRunner().invoke(main, ["table", "-f", "numpy", "--types", "i8,u8", "--svg", "b.svg",
                                       "--html", "./b.svg"])
    assert result.exit_code == 2 and not Path("b.svg").exists(), result.stderr
    with pytest.raises(promote_cli.UsageError, match="the same file"):
        promote_cli.write_outputs({"c.svg": "1", "./c.svg": "2"})
    assert not Path("c.svg").exists()


@pytest.mark.parametrize("order", ["svg first", "html first"])
def test_a_picture_that_cannot_be_written_leaves_the_other_unwritten(tmp_path, monkeypatch, order):
    monkeypatch.chdir(tmp_path)
    Path("old.svg").write_text("old")
    pictures = [["--svg", "old.svg"], ["--html", "/proc/self/page.html"]]
    if order == "html first":
        pictures.reverse()
    result = CliRunner().invoke(main, ["table", "-f", "numpy", "--types", "i8,u8", *pictures[0], *pictures[1]])
    assert result.exit_code == 2 and "cannot create output" in result.stderr, result.stderr
    assert Path("old.svg").read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["old.svg"]
    with pytest.raises(promote_cli.UsageError):
        promote_cli.write_outputs({"new.svg": "1", "/proc/self/new.html": "2"})
    assert not Path("new.svg").exists()


# ---- expect files ---------------------------------------------------------------------------------------

EXPECT_LINES = [b"numpy i8 u8 -> i16", b"jax i8 u8 -> i16", b"numpy i8 u8 add -> i16", b"cann i8 u8 -> refused",
                b"numpy:x64=true i8 u8 -> i16", b"# comment", b"", b"numpy i8 -> i16", b"-> ", b"numpy i8 u8 ->",
                b"nosuch i8 u8 -> i8", b"numpy i8 u8 nosuch -> i8", b"\xff\xfe numpy", b"numpy i8 u8 -> i16\r",
                b"\x00", b"numpy " * 5000, b"x" * 70_000, b"\xef\xbb\xbfnumpy i8 u8 -> i16", b"numpy: i8 u8 -> i8",
                b"numpy:=,= i8 u8 -> i8", "numpy ｉ８ u8 -> i16".encode(), b"numpy i8 u8 -> i16 -> i16", b"\x1b[2J"]
N_EXPECT = 40


def test_generated_expect_files_never_trace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = random.Random(SEED + 3)
    runner = CliRunner()
    codes = {0: 0, 1: 0, 2: 0}
    for n in range(N_EXPECT):
        data = b"\n".join(rng.choice(EXPECT_LINES[:6]) if rng.random() < 0.7 else rng.choice(EXPECT_LINES)
                          for _ in range(rng.randint(0, 12)))
        if rng.random() < 0.1:
            data = bytes(rng.randrange(256) for _ in range(rng.randint(1, 2000)))  # binary
        path = tmp_path / f"case{n}.expect"
        path.write_bytes(data)
        source = rng.choice([str(path), "-", str(path), str(tmp_path), "nosuch.expect", "/dev/null", ""])
        args = ["expect", source] + rng.choice([[], ["--format", "json"]])
        with time_limit(CASE_SECONDS):
            result = runner.invoke(main, args, input=data if source == "-" else None)
        _check(result, args)
        codes[result.exit_code] += 1
        assert path.read_bytes() == data
    assert all(codes.values()), codes
    os.mkfifo("fifo")  # a FIFO nobody writes: refused at once, never waited on
    with time_limit(CASE_SECONDS):
        result = runner.invoke(main, ["expect", "fifo"])
    _check(result, ["expect", "fifo"])
    assert result.exit_code == 2


# ---- shell completion -----------------------------------------------------------------------------------

N_COMPLETIONS = 200
WORDS = ["query", "table", "expr", "check", "lattice", "expect", "cast", "-f", "--op", "-O", "--diff", "--types",
         "--format", "--svg", "--lattice", "--forms", "numpy", "openvino:", "promote_unsafe=", "i8", "weak:", "=",
         ":", ",", "'", '"', "\\", "\x00", "\udcff", "é", "--", "-", "$(x)", "`x`", ""]


def test_generated_completion_requests_never_trace(monkeypatch):
    rng = random.Random(SEED + 4)
    runner = CliRunner()
    codes = {0: 0, 2: 0}
    for _ in range(N_COMPLETIONS):
        words = ["promote"] + [rng.choice(WORDS) if rng.random() < 0.8 else _junk(rng)
                               for _ in range(rng.randint(0, 6))]
        env = {"_PROMOTE_COMPLETE": rng.choice(["bash_complete"] * 8 + ["zsh_complete", "fish_complete",
                                                                        "bash_source", "bash", "nosuch_x", ""]),
               "COMP_WORDS": " ".join(words),
               "COMP_CWORD": rng.choice([str(rng.randint(0, len(words))), str(len(words) - 1), "-1", "x", "",
                                         "9" * 30, "1.5", " 1"])}
        if rng.random() < 0.05:
            del env["COMP_WORDS"]
        env = {k: v.replace("\x00", "") for k, v in env.items()}
        with time_limit(CASE_SECONDS):
            result = runner.invoke(main, [], env=env, prog_name="promote")
        _check(result, env)
        assert result.exit_code in (0, 2) and "internal error" not in result.stderr, (env, result.stderr)
        codes[result.exit_code] += 1
    assert all(codes.values()), codes


@pytest.mark.parametrize("env, message", [
    ({"_PROMOTE_COMPLETE": "bash_complete", "COMP_WORDS": "promote query", "COMP_CWORD": "x"}, "COMP_CWORD"),
    ({"_PROMOTE_COMPLETE": "bash_complete", "COMP_WORDS": "promote query", "COMP_CWORD": "-1"}, "COMP_CWORD"),
    ({"_PROMOTE_COMPLETE": "zsh_complete", "COMP_WORDS": "promote", "COMP_CWORD": ""}, "COMP_CWORD"),
    ({"_PROMOTE_COMPLETE": "bash_complete", "COMP_CWORD": "1"}, "COMP_WORDS is not set"),
    ({"_PROMOTE_COMPLETE": "nosuch_complete"}, "expected SHELL_source or SHELL_complete"),
    ({"_PROMOTE_COMPLETE": "bash_nosuch"}, "expected SHELL_source or SHELL_complete"),
])
def test_a_malformed_completion_request_is_one_usage_line(env, message):
    result = CliRunner().invoke(main, [], env=env, prog_name="promote")
    assert result.exit_code == 2 and result.stdout == "", result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr and "internal" not in result.stderr


def test_a_well_formed_completion_request_still_completes():
    env = {"_PROMOTE_COMPLETE": "bash_complete", "COMP_WORDS": "promote query i8 -f nu", "COMP_CWORD": "4"}
    result = CliRunner().invoke(main, [], env=env, prog_name="promote")
    assert result.exit_code == 0 and "plain,numpy\n" in result.stdout


# ---- the fast path's boundary ---------------------------------------------------------------------------

def _fast_argv(rng: random.Random) -> list[str]:
    base = ["query", rng.choice(DTYPE_NAMES[:12]), rng.choice(DTYPE_NAMES[:12])]
    extra = [rng.choice([["-f", rng.choice(NAMES)], ["-f=numpy"], ["-f="], ["--op=add"], ["--op="], ["--op", "add"],
                         ["--op", "-"], ["-f", "numpy", "-f", "jax"], ["-O", "x64=true", "-O", "x64=false"],
                         ["--format", "json"], ["--format", "json", "--format", "text"], ["--format"], ["-f"],
                         ["-fnumpy"], ["--framework=numpy"], ["--", "i8"], ["\udcff"], ["-f", "\udcffnumpy"],
                         ["i8\udcff"], ["-O", "\udcff=1"], ["--batch"], ["-h"], ["--op", "\udcff"]])
             for _ in range(rng.randint(0, 3))]
    argv = base + [w for ws in extra for w in ws]
    if rng.random() < 0.3:
        rng.shuffle(argv)
    return argv


N_FAST = 200


def test_generated_fast_path_boundary(monkeypatch, capsys):
    """Invocations near the fast path's shapes: it answers or declines, and what Click then says obeys the
    contract; PROMOTE_FRAMEWORK is as hostile as the words."""
    from promote_cli.cli import fast

    rng = random.Random(SEED + 5)
    runner = CliRunner()
    for _ in range(N_FAST):
        argv = _fast_argv(rng)
        framework = rng.choice([None, "numpy", "jax", "", "nosuch", "\udcff", "numpy@", "-f", _junk(rng)])
        if framework is None:
            monkeypatch.delenv("PROMOTE_FRAMEWORK", raising=False)
        else:
            monkeypatch.setenv("PROMOTE_FRAMEWORK", framework.replace("\x00", ""))
        with time_limit(CASE_SECONDS):
            code = fast.run(argv)
        out, err = capsys.readouterr()
        if code is not None:
            assert code in (0, 1, 2) and "Traceback" not in err and len(err.splitlines()) <= 1, (argv, code, err)
            continue
        assert out == err == "", argv  # declined before writing anything
        with time_limit(CASE_SECONDS):
            result = runner.invoke(main, argv)
        _check(result, argv)


def test_non_utf8_argv_and_environment_in_a_real_process(tmp_path):
    """Bytes that are not UTF-8, as a shell passes them (subprocess: argv is bytes there)."""
    cases = [([b"query", b"i8", b"\xff", b"-f", b"numpy"], {}),
             ([b"query", b"i8", b"u8"], {b"PROMOTE_FRAMEWORK": b"\xffnumpy"}),
             ([b"query", b"i8", b"u8", b"-f", b"numpy", b"-O", b"x\xff=1"], {}),
             ([b"expr", b"x:i8 + \xff", b"-f", b"numpy"], {}),
             ([b"table", b"-f", b"numpy", b"--svg", b"\xff.svg", b"--types", b"i8,u8"], {})]
    env = {k.encode(): v.encode() for k, v in os.environ.items() if k != "PROMOTE_FRAMEWORK"}
    for argv, extra in cases:
        start = time.monotonic()
        proc = subprocess.run([sys.executable.encode(), b"-c", b"from promote_cli.cli import run; run()", *argv],
                              capture_output=True, env={**env, **extra}, cwd=tmp_path, timeout=30, check=False)
        stderr = proc.stderr.decode("utf-8", "replace")
        assert time.monotonic() - start < 20
        assert proc.returncode in (0, 1, 2) and "Traceback" not in stderr, (argv, stderr)
        assert len(stderr.splitlines()) <= 1 or argv[0] == b"expr", (argv, stderr)
