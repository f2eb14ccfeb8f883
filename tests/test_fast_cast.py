"""`promote cast` runs its common shapes without Click (cli/fast.py) and must do exactly what the Click command
does: many generated invocations (casts that work, refusals, missing files, directories, FIFOs, existing outputs
with and without --force, illegal pairs, --fail-on hits, json, several inputs in parallel, a full disk) run through
both in identical fresh directories, compared byte for byte: stdout, stderr, the exit code and every file left
behind. And a cast imports neither Click nor what a cast does not need."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))  # where the drivers find entry_paths.py

#: invocations the fast path must run itself (not leave to Click): the shapes scripts use
SIMPLE = [
    ["cast", "b.npy", "--to", "f16"],
    ["cast", "a.npy", "--to", "bf16", "-o", "out.npy", "--force"],
    ["cast", "--to", "f8e4m3", "a.npy", "--output", "new.npy", "--format", "json"],
    ["cast", "d", "--to", "f16", "-j", "2"],
    ["cast", "a.npy", "b.npy", "--jobs", "1", "--to", "bf16", "--fail-on", "inexact", "--fail-on", "nan"],
    ["cast", "u16.npy", "--from", "bf16", "--to", "f32", "-o", "new.npy"],
    ["cast", "i.npy", "--mode", "extended", "--to", "f16", "--saturate"],
    ["cast", "a.npy", "--to", "f16"],  # with the output there already (below): refused, exit 2
    ["cast", "missing.npy", "--to", "f16"],
    ["cast", "a.npy", "--to", "nope"],
    ["cast", "d", "--exclude", "n.npy", "--to", "f16", "--exclude", "z*.npy", "--format", "json"],
]

#: invocations the Click path handles (each must still do the same either way)
EDGES = [
    {"argv": ["cast", "a.npy", "--to=f16"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "-j0"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "-j", "0"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "--jobs", "x"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "-j", "+2"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "-j", "\u0663"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "-j", "-1"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "--mode", "TOSA"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "--format", "csv"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "--fail-on", "all"]},
    {"argv": ["cast", "a.npy", "--to"]},
    {"argv": ["cast", "a.npy", "b.npy"]},
    {"argv": ["cast", "--to", "f16"]},
    {"argv": ["cast", "--to", "f16", "--force"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "-h"]},
    {"argv": ["cast", "--help"]},
    {"argv": ["cast"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "--", "b.npy"]},
    {"argv": ["cast", "-", "--to", "f16"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "-o", "-x.npy"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "-o", "-"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "--exclude", "-"]},
    {"argv": ["cast", "a.npy", "--to", "-f16"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "--force", "--force"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "--to", "bf16"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "-o", "x.npy", "-o", "y.npy"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "-ox.npy"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "--out", "x.npy"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "--saturate=1"]},
    {"argv": ["cast", "a.npy", "--to", "f16", "--verbose"]},
    {"argv": ["Cast", "a.npy", "--to", "f16"]},
    {"argv": ["cast", "a.npy", "--to", "f16"], "env": {"_PROMOTE_COMPLETE": "bash_complete"}},
    {"argv": ["cast", "a.npy", "--to", "f16"], "encoding": "ascii"},
    {"argv": ["cast", "\u00e9.npy", "--to", "f16"], "encoding": "ascii"},
    {"argv": ["--version"]},
]

#: invocations whose report cannot be written (stdout is a full disk): both paths say so alike
FULL = [
    {"argv": ["cast", "a.npy", "--to", "bf16"], "stdout": "/dev/full"},
    {"argv": ["cast", "a.npy", "b.npy", "--to", "f16", "--force", "--format", "json", "-j", "1"], "stdout": "/dev/full"},
]

#: casts in which something escapes the command (an interruption before signals are deferred, an error of the
#: API, a bug, a reader gone): both paths report it as the Click group does; (API function, what it raises, code)
BROKEN = [("defer_signals", "KeyboardInterrupt", 130), ("run_cast", "UsageError", 2), ("run_cast", "RuntimeError", 2),
          ("run_cast", "BrokenPipeError", 141)]

GOOD_INPUTS = ["a.npy", "b.npy", "h.npy", "i8.npy", "s.npy", "z.npy", "f.npy", "d", "l.npy", "\u00e9.npy"]
BAD_INPUTS = ["i.npy", "missing.npy", "p.npy", "bad.npy", "t.npy", "e", "dangling.npy", "u16.npy", "out.npy", "",
              "d/x.npy", "./a.npy", "a.f16.npy"]
GOOD_TOS = ["f16", "bf16", "f8e4m3", "f8e5m2", "i8", "i16", "i32", "f32", "float16", "bfloat16"]
BAD_TOS = ["nope", "F16", "", "i4", "f64", "c64", "bool", "u8"]
OUTPUTS = ["out.npy", "new.npy", "a.npy", "l.npy", "d", "p.npy", "e/new.npy", "nodir/x.npy", "", "b.npy",
           "dangling.npy"]
FROMS = ["bf16", "u16", "i8", "nope", "f32"]


def _generated(count: int, seed: int) -> list[dict]:
    """Invocations of the shapes the fast path takes, about half of them likely to cast, the rest drawing on
    pools of inputs, types and outputs that are often wrong."""
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        good = rng.random() < 0.5
        n = rng.choice([1, 1, 1, 2, 3])
        inputs = [rng.choice(GOOD_INPUTS if good or rng.random() < 0.5 else BAD_INPUTS) for _ in range(n)]
        options = [["--to", rng.choice(GOOD_TOS if good or rng.random() < 0.6 else BAD_TOS)]]
        if rng.random() < 0.3:
            options.append([rng.choice(["-o", "--output"]), rng.choice(OUTPUTS[:2] if good else OUTPUTS)])
        if rng.random() < (0.1 if good else 0.3):
            options.append(["--from", rng.choice(FROMS)])
        if rng.random() < 0.3:
            options.append(["--mode", rng.choice(["tosa", "extended"])])
        if rng.random() < 0.15:
            options.append(["--saturate"])
        if rng.random() < 0.4:
            options.append(["--force"])
        if rng.random() < 0.4:
            options.append(["--format", rng.choice(["text", "json"])])
        for _ in range(rng.choice([0, 0, 1, 2])):
            options.append(["--fail-on", rng.choice(["overflow", "inexact", "nan"])])
        if rng.random() < 0.3:
            options.append([rng.choice(["-j", "--jobs"]), rng.choice(["1", "2", "3"])])
        if rng.random() < 0.1:
            options.append(["--exclude", rng.choice(["n.npy", "[xy].npy", "*.npy", "a*"])])
        groups = [[word] for word in inputs]
        for option in options:  # anywhere among the inputs (which keep their order)
            groups.insert(rng.randrange(len(groups) + 1), option)
        cases.append({"argv": ["cast", *(word for group in groups for word in group)]})
    return cases


DRIVER = r"""
import hashlib, json, os, re, shutil, sys
sys.path.insert(0, sys.argv[3])
import ml_dtypes, numpy as np
import promote_cli as api
from promote_cli.errors import UsageError
from entry_paths import run_case

RAISED = {"KeyboardInterrupt": KeyboardInterrupt(), "UsageError": UsageError("refused\twhole"),
          "RuntimeError": RuntimeError("a bug"), "BrokenPipeError": BrokenPipeError(32, "Broken pipe")}

path, base = sys.argv[1], sys.argv[2]

def build(root):
    # the same files for every case and both paths
    os.makedirs(root)
    os.chdir(root)
    rng = np.random.default_rng(7)
    a = (rng.standard_normal(300) * 3e4).astype(np.float32)
    a[:5] = [np.nan, np.inf, -np.inf, 1e-30, 7e4]
    np.save("a.npy", a)
    np.save("b.npy", np.arange(-8, 8, dtype=np.float32) / 4)
    np.save("h.npy", a.astype(np.float16))
    np.save("i.npy", np.arange(-300, 300, 7, dtype=np.int64))
    np.save("i8.npy", np.arange(-128, 128, dtype=np.int8))
    np.save("u16.npy", a.astype(ml_dtypes.bfloat16).view(np.uint16))
    np.save("s.npy", np.float32(3.5))
    np.save("z.npy", np.zeros((0, 3), np.float32))
    np.save("f.npy", np.asfortranarray(rng.standard_normal((7, 5)).astype(np.float32)))
    np.save("\u00e9.npy", np.ones(4, np.float32))
    os.mkdir("d")
    np.save("d/x.npy", rng.standard_normal(50).astype(np.float32))
    np.save("d/y.npy", np.float32([1, 2, 65520, 1e-8]))
    np.save("d/n.npy", np.arange(5, dtype=np.int64))
    os.mkdir("e")
    with open("bad.npy", "wb") as f:
        f.write(b"not an npy file")
    np.save("t.npy", a)
    os.truncate("t.npy", 200)
    os.mkfifo("p.npy")
    os.symlink("a.npy", "l.npy")
    os.symlink("nothing-here", "dangling.npy")
    np.save("a.f16.npy", np.zeros(3, np.float16))
    np.save("out.npy", np.zeros(2, np.float32))

def files(root):
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                found[rel] = "link " + os.readlink(p)
            elif os.path.isdir(p):
                found[rel] = "dir"
            elif os.path.isfile(p):
                with open(p, "rb") as f:
                    found[rel] = f"file {oct(os.stat(p).st_mode)} " + hashlib.sha256(f.read()).hexdigest()
            else:
                found[rel] = "other"
    return found

results = []
keep = dict(os.environ)
for i, case in enumerate(json.load(sys.stdin)):
    os.environ.clear()
    os.environ.update(keep)
    os.environ.update(case.get("env", {}))
    root = os.path.join(base, f"case{i}")
    build(root)
    if case.get("raise"):
        name, raised = case["raise"]
        kept = getattr(api, name)
        def broken(*args, **kwargs):
            raise RAISED[raised]
        setattr(api, name, broken)
    r = run_case(path, case)
    if case.get("raise"):
        setattr(api, name, kept)
    os.chdir(base)
    out, err = (re.sub(rb'"seconds": [0-9.e-]+', b'"seconds": 0.0', b) for b in (r["out"], r["err"]))
    results.append({"out": out.decode("latin-1"), "err": err.decode("latin-1").replace(base, "BASE"),
                    "code": r["code"], "files": files(root), "fast": r["fast"]})
    shutil.rmtree(root)
print(json.dumps(results))
"""


def _run(path: str, cases: list[dict], base) -> list[dict]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "_PROMOTE_COMPLETE", "PROMOTE_DEBUG")}
    os.makedirs(base)
    done = subprocess.run([sys.executable, "-c", DRIVER, path, str(base), TESTS], input=json.dumps(cases),
                          capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    broken = [{"argv": ["cast", "b.npy", "--to", "f16"], "raise": [name, raised]} for name, raised, _ in BROKEN]
    cases = [{"argv": argv} for argv in SIMPLE] + EDGES + FULL + broken + _generated(220, seed=15)
    base = tmp_path_factory.mktemp("fast-cast")
    return cases, _run("fast", cases, base / "fast"), _run("click", cases, base / "click")


def test_both_paths_print_the_same_bytes_exit_alike_and_leave_the_same_files(compared):
    cases, fast, click = compared
    differ = [(c["argv"], f, k) for c, f, k in zip(cases, fast, click)
              if (f["out"], f["err"], f["code"], f["files"]) != (k["out"], k["err"], k["code"], k["files"])]
    assert not differ, differ[:2]
    assert not any(k["fast"] for k in click)  # the Click driver really ran Click
    leftovers = [name for r in fast + click for name in r["files"] if "promote-tmp" in name]
    assert not leftovers, leftovers


def test_the_fast_path_runs_the_common_shapes_and_leaves_the_rest(compared):
    _, fast, _ = compared
    simple = fast[: len(SIMPLE)]
    assert all(r["fast"] for r in simple), [a for a, r in zip(SIMPLE, simple) if not r["fast"]]
    edges = fast[len(SIMPLE): len(SIMPLE) + len(EDGES)]
    taken = [c["argv"] for c, r in zip(EDGES, edges) if r["fast"]]
    assert not taken, taken
    full = fast[len(SIMPLE) + len(EDGES): len(SIMPLE) + len(EDGES) + len(FULL)]
    assert all(r["fast"] and r["code"] == 2 and "No space left on device" in r["err"] for r in full), full
    broken = fast[len(SIMPLE) + len(EDGES) + len(FULL): len(SIMPLE) + len(EDGES) + len(FULL) + len(BROKEN)]
    assert [(r["fast"], r["code"]) for r in broken] == [(True, code) for _, _, code in BROKEN], broken
    assert [r["err"] for r in broken[:3]] == ["\npromote: aborted\n", "promote: refused\\twhole\n",
                                              "promote: internal error: RuntimeError: a bug (set PROMOTE_DEBUG=1 "
                                              "for the traceback)\n"]
    generated = fast[len(SIMPLE) + len(EDGES) + len(FULL) + len(BROKEN):]
    assert all(r["fast"] for r in generated)
    by_code = {code: sum(1 for r in generated if r["code"] == code) for code in (0, 1, 2)}
    assert min(by_code.values()) >= 15, by_code  # casts, --fail-on hits and errors all among them
    assert sum('"failed_on"' in r["out"] for r in generated) >= 15  # json reports too
    assert sum("total: " in r["out"] or '"summary"' in r["out"] for r in generated) >= 15  # and runs of several files


def test_a_simple_cast_writes_what_it_says(compared):
    """The comparison is not of two empty runs: the common shapes cast, refuse and report as they should."""
    _, fast, _ = compared
    first = fast[0]
    assert first["code"] == 0 and first["err"] == "" and "b.f16.npy" in first["files"]
    assert first["out"] == "b.npy -> b.f16.npy: f32 -> f16 (tosa), 16 elements (16)\n  16 exact\n"
    assert json.loads(fast[2]["out"])["to"] == "f8e4m3" and "new.npy" in fast[2]["files"]
    assert fast[3]["out"] == "" and fast[3]["code"] == 2  # d/n.npy holds i64: no i64 -> f16, so nothing is cast
    assert fast[3]["err"].startswith("promote cast: d/n.npy: TOSA CAST does not define i64 -> f16")
    assert fast[3]["err"].endswith("; nothing written (leave it out with --exclude n.npy)\n")
    assert not [f for f in fast[3]["files"] if f.startswith("d/") and f.endswith(".f16.npy")]
    *reports, summary = map(json.loads, fast[10]["out"].splitlines())  # the same, n.npy left out
    assert [r["input"] for r in reports] == ["d/x.npy", "d/y.npy"] and fast[10]["code"] == 0
    assert summary["summary"]["files"] == 2 and summary["summary"]["elements"] == 54
    assert fast[4]["code"] == 1 and "a.npy: --fail-on inexact, nan" in fast[4]["err"]
    assert fast[7]["err"] == "promote cast: a.f16.npy: already exists (use --force to overwrite)\n"
    assert (fast[8]["code"], fast[9]["code"]) == (2, 2)


@pytest.mark.parametrize("module, declared", [("cast", "CAST"), ("query", "QUERY")])
def test_the_click_commands_are_built_from_the_declarations_the_fast_path_reads(module, declared):
    """Every option of `cast` and `query` is its declaration in cli/definition.py (the one the fast path reads):
    the same words, parameter, choices, bounds, default and repetition; so a value the command refuses is
    never taken without it."""
    import importlib

    import click

    from promote_cli.cli import definition

    command = getattr(importlib.import_module(f"promote_cli.cli.commands.{module}"), module)
    spec = getattr(definition, declared)
    params = {p.name: p for p in command.params}
    assert list(params) == [spec.argument.name, *(o.name for o in spec.options)]
    assert params[spec.argument.name].required == spec.argument.required
    for option in spec.options:
        param = params[option.name]
        assert set(param.opts) | set(param.secondary_opts) == set(option.words), option.name
        assert param.is_flag == option.flag and param.required == option.required
        assert param.envvar == option.envvar and param.help == option.help
        assert param.multiple == (option.multiple or option.once)
        if option.choices is not None:
            assert isinstance(param.type, click.Choice) and tuple(param.type.choices) == option.choices
        if option.minimum is not None:
            assert param.type.min == option.minimum
        if option.default is not None:
            assert param.default == option.default and param.show_default, option.name
        elif not option.flag:
            assert not isinstance(param.default, (str, int, tuple)) or param.default == (), option.name


def _modules_of_a_cast(argv: list[str], cwd) -> set[str]:
    code = ("import sys, atexit\n"
            "atexit.register(lambda: sys.__stderr__.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n'))\n"
            "from promote_cli.cli import run\n"
            f"sys.argv = ['promote', *{argv!r}]\n"
            "run()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    return set(done.stderr.rsplit("MODULES ", 1)[1].split())


#: what a cast does not need (each costs start-up time: Click about 25 ms, secrets 6, pathlib 5)
NOT_FOR_A_CAST = {"click", "rich", "pathlib", "secrets", "random", "hashlib", "traceback", "difflib", "uuid",
                  "tomllib", "promote_cli.oracle", "promote_cli.cli.group", "promote_cli.cli.answer"}


@pytest.mark.parametrize("argv", [["cast", "w.npy", "--to", "bf16", "-o", "out.npy", "--force"],
                                  ["cast", "w.npy", "--to", "f16", "--format", "json", "--fail-on", "nan"]])
def test_a_cast_imports_only_what_it_needs(tmp_path, argv):
    np.save(tmp_path / "w.npy", np.arange(10, dtype=np.float32))
    loaded = _modules_of_a_cast(argv, tmp_path)
    assert "promote_cli.numerics.cast" in loaded  # it did cast
    assert not loaded & NOT_FOR_A_CAST, loaded & NOT_FOR_A_CAST


def test_the_module_check_sees_an_import(tmp_path):
    """The check above is not vacuous: a cast spelled for Click loads Click."""
    np.save(tmp_path / "w.npy", np.arange(10, dtype=np.float32))
    assert "click" in _modules_of_a_cast(["cast", "w.npy", "--to=bf16"], tmp_path)


def _to_a_closed_pipe(argv: list[str], cwd) -> tuple[int, str]:
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "promote_cli", *argv], stdout=write, stderr=subprocess.PIPE,
                              text=True, cwd=cwd, timeout=60, check=False)
    finally:
        os.close(write)
    return done.returncode, done.stderr


def test_a_reader_that_went_away_ends_both_paths_alike(tmp_path):
    np.save(tmp_path / "w.npy", np.arange(10, dtype=np.float32))
    fast = _to_a_closed_pipe(["cast", "w.npy", "--to", "f16", "-o", "x.npy"], tmp_path)
    click = _to_a_closed_pipe(["cast", "w.npy", "--to=f16", "-o", "y.npy"], tmp_path)  # an attached value: Click
    assert fast == click == (141, "")
    assert (tmp_path / "x.npy").read_bytes() == (tmp_path / "y.npy").read_bytes()
