"""`promote query` answers its common shapes without Click (cli/fast.py) and must print exactly what the Click
command prints: many generated invocations (valid, invalid, refused; options in every spelling and order; the
framework from `-f` or `$PROMOTE_FRAMEWORK`; NO_COLOR; unknown names; json; a full disk; a terminal that is not
UTF-8) run through both, compared byte for byte (stdout, stderr, exit code). And the query path imports
neither numpy nor Rich, and with the fast path not Click either."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))  # where the drivers find entry_paths.py

FRAMEWORKS = ["openvino", "paddle", "cann", "jax", "torch", "numpy", "tensorflow", "tosa", "array-api", "CANN",
              "Paddle@2.6", "paddle@3.3", "cann@opbase", "nope", "openvino@1", " openvino", ""]
OPERANDS = ["i8", "u8", "i16", "u64", "f16", "bf16", "f32", "f64", "c64", "bool", "int8", "UINT8", "torch.float16",
            "0d:i8", "0d:f32", "py:int", "py:float", "py:bool", "py:complex", "weak:f32", "i8?", "f8e4m3", "x8", "",
            "py:str", "i 8", "é8", "py:300", "py:-1", "py:1.5", "py:nan", "py:1+1j", "0d:i64=300", "py:1e",
            "0d:i8=300"]
OPS = ["add", "add", "/", "mul", "sub", "true_divide", "nope", "ADD", "+", "result_type"]
OPTIONS = [["promote_unsafe=true"], ["promote_unsafe=yes"], ["promote_unsafe=maybe"], ["nokey"], ["=x"],
           ["u64_integer_promotion_target=f64"], ["unknown=1"], ["promote_unsafe=true", "pytorch_scalar_promotion=true"],
           [" promote_unsafe = true "], ["promote_unsafe=true", "promote_unsafe=false"]]
FORMATS = ["text", "json", "csv", "JSON", "rich"]

#: invocations the fast path must answer itself (not leave to Click): the shapes scripts use
SIMPLE = [
    {"argv": ["query", "i8", "u8", "-f", "openvino", "-O", "promote_unsafe=true"]},
    {"argv": ["query", "i8", "u8", "-f", "openvino"]},  # refused (exit 1)
    {"argv": ["query", "i8", "u8", "--format", "json", "-f", "openvino"]},
    {"argv": ["query", "-f", "paddle", "--op", "/", "i8", "f16"]},
    {"argv": ["query", "i8", "u8", "f16", "--framework", "jax", "--format", "json"]},
    {"argv": ["query", "i8", "u8", "-f", "paddle"], "env": {"PROMOTE_FRAMEWORK": "cann"}},  # -f wins
    {"argv": ["query", "s8", "u8"], "env": {"PROMOTE_FRAMEWORK": "cann"}},
    {"argv": ["query", "0d:i8", "py:float", "-f", "torch"], "env": {"NO_COLOR": "1"}},
    {"argv": ["query", "i8", "u8", "-f", "openvino:promote_unsafe=true"]},  # the ruleset's options with its name
    {"argv": ["query", "i8", "u8", "-f", "jax:x64=true", "-O", "x64=true", "--format", "json"]},
    {"argv": ["query", "i8", "py:300", "-f", "numpy"]},  # a value out of range: refused (exit 1)
    {"argv": ["query", "0d:i64=300", "py:-1", "-f", "torch", "--format", "json"]},
]

#: questions of the common shapes that cannot be asked: the fast path reports them itself, as Click's path does,
#: and never asks them again through Click
ERRORS = [
    {"argv": ["query", "i8", "u8", "-f", "cann", "-f", "paddle"]},  # -f given twice: refused, not the last taken
    {"argv": ["query", "i8", "u8", "-f", "jax:x64=true", "-O", "x64=false"]},  # one key, two values
    {"argv": ["query", "i8", "u8", "-f", "jax:x64"]},
    {"argv": ["query", "i8", "x8", "-f", "cann"]},
    {"argv": ["query"]},
    {"argv": ["query", "i8"]},
    {"argv": ["query", "i8", "-f", "cann"]},
    {"argv": ["query", "i8", "u8"]},
    {"argv": ["query", "i8", "u8"], "env": {"PROMOTE_FRAMEWORK": ""}},
    {"argv": ["query", "i8", "u8"], "env": {"PROMOTE_FRAMEWORK": "nope"}},
    {"argv": ["query", "i8", "u8", "-f", "openvino", "-O", "promote_unsafe=true"], "stdout": "/dev/full"},
    {"argv": ["query", "i8", "py:1e", "-f", "numpy"]},  # malformed values
    {"argv": ["query", "0d:i8=300", "u8", "-f", "numpy"]},
]

#: invocations the Click path handles (each must still print the same either way)
EDGES = [
    {"argv": ["query", "i8", "u8", "-fopenvino"]},
    {"argv": ["query", "i8", "u8", "-fcann", "-f", "paddle"]},  # Click refuses a repeated -f too
    {"argv": ["query", "i8", "u8", "-fjax:x64=true", "-O", "x64=false"]},
    {"argv": ["query", "i8", "u8", "--framework=openvino"]},
    {"argv": ["query", "i8", "u8", "-f", "cann", "--op=add"]},
    {"argv": ["query", "i8", "u8", "-f", "cann", "-Ofoo=1"]},
    {"argv": ["query", "i8", "u8", "-f", "cann", "--format"]},
    {"argv": ["query", "i8", "u8", "-f"]},
    {"argv": ["query", "i8", "u8", "-f", "-h"]},
    {"argv": ["query", "i8", "u8", "-f", "cann", "--", "f16"]},
    {"argv": ["query", "i8", "-1", "-f", "cann"]},
    {"argv": ["query", "i8", "u8", "-f", "cann", "--batch"]},
    {"argv": ["query", "i8", "u8", "-f", "cann", "-h"]},
    {"argv": ["query", "--help"]},
    {"argv": ["query", "i8", "u8", "-f", "cann"], "env": {"_PROMOTE_COMPLETE": "bash_complete"}},
    {"argv": ["query", "i8", "u8", "-f", "cann", "--format", "markdown"]},
    {"argv": ["Query", "i8", "u8", "-f", "cann"]},
    {"argv": ["table", "-f", "cann", "--types", "i8,u8"]},
    {"argv": ["--version"]},
    {"argv": []},
    {"argv": ["query", "i8", "u8", "-f", "paddle", "--op", "/"], "encoding": "ascii"},
    {"argv": ["query", "i8", "é8", "-f", "paddle"], "encoding": "ascii"},
    {"argv": ["query", "i8", "u8", "-f", "openvino"], "stdout": "/dev/full"},
]


GOOD_FRAMEWORKS = ["openvino", "paddle", "cann", "jax", "torch", "numpy", "tensorflow", "array-api", "CANN",
                   "Paddle@2.6"]
GOOD_OPERANDS = ["i8", "u8", "i16", "u64", "f16", "bf16", "f32", "c64", "bool", "int8", "UINT8", "0d:i8", "py:int",
                 "py:float", "weak:f32"]
GOOD_OPTIONS = [["promote_unsafe=true"], ["promote_unsafe=false"], ["u64_integer_promotion_target=f64"],
                ["promote_unsafe=true", "pytorch_scalar_promotion=true"]]


def _generated(count: int, seed: int) -> list[dict]:
    """Invocations of the shapes the fast path takes, two in three asked well (answers and refusals), the
    rest from pools of names that are often wrong (errors)."""
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        good = rng.random() < 0.65
        fw = rng.choice(GOOD_FRAMEWORKS if good else FRAMEWORKS)
        count_ = rng.choice([2, 2, 2, 3] if good else [0, 1, 2, 2, 3, 4])
        words = [rng.choice(GOOD_OPERANDS if good else OPERANDS) for _ in range(count_)]
        options: list[list[str]] = []
        env = {}
        how = rng.choice(["-f", "-f", "--framework", "env", "both"] + ([] if good else ["none"]))
        if how in ("-f", "--framework", "both"):
            options.append([how if how != "both" else "-f", fw])
        if how in ("env", "both"):
            env["PROMOTE_FRAMEWORK"] = fw if how == "env" else rng.choice(FRAMEWORKS)
        if rng.random() < 0.4:
            options.append(["--op", rng.choice(["add", "/"] if good and fw.lower().startswith("paddle") else
                                               ["add"] if good else OPS)])
        if rng.random() < (0.6 if good and fw == "openvino" else 0 if good else 0.5):
            for pair in rng.choice(GOOD_OPTIONS if good else OPTIONS):
                options.append([rng.choice(["-O", "--option"]), pair])
        if rng.random() < 0.4:
            options.append(["--format", rng.choice(["text", "json"] if good else FORMATS)])
        if rng.random() < 0.2:
            env["NO_COLOR"] = "1"
        for option in options:  # anywhere among the operands
            at = rng.randrange(len(words) + 1)
            words[at:at] = option
        cases.append({"argv": ["query", *words], "env": env})
    return cases


DRIVER = r"""
import json, os, sys
sys.path.insert(0, sys.argv[2])
from entry_paths import run_case

path = sys.argv[1]
results = []
keep = dict(os.environ)
for case in json.load(sys.stdin):
    os.environ.clear()
    os.environ.update(keep)
    os.environ.update(case.get("env", {}))
    r = run_case(path, case)
    results.append({"out": r["out"].decode("latin-1"), "err": r["err"].decode("latin-1"), "code": r["code"],
                    "fast": r["fast"]})
print(json.dumps(results))
"""


def _run(path: str, cases: list[dict]) -> list[dict]:
    env = {k: v for k, v in os.environ.items() if k not in ("PROMOTE_FRAMEWORK", "NO_COLOR", "_PROMOTE_COMPLETE")}
    done = subprocess.run([sys.executable, "-c", DRIVER, path, TESTS], input=json.dumps(cases),
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def compared():
    cases = SIMPLE + ERRORS + EDGES + _generated(300, seed=15)
    return cases, _run("fast", cases), _run("click", cases)


def test_both_paths_print_the_same_bytes_and_exit_codes(compared):
    cases, fast, click = compared
    differ = [(c["argv"], c.get("env"), f, k) for c, f, k in zip(cases, fast, click)
              if (f["out"], f["err"], f["code"]) != (k["out"], k["err"], k["code"])]
    assert not differ, differ[:3]
    assert not any(k["fast"] for k in click)  # the Click driver really ran Click


def test_the_fast_path_answers_the_common_shapes_and_leaves_the_rest(compared):
    _, fast, _ = compared
    assert all(r["fast"] for r in fast[: len(SIMPLE)]), [c["argv"] for c, r in zip(SIMPLE, fast) if not r["fast"]]
    errors = fast[len(SIMPLE): len(SIMPLE) + len(ERRORS)]
    assert all(r["fast"] and r["code"] == 2 and r["err"].count("\n") == 1 for r in errors), errors
    edges = fast[len(SIMPLE) + len(ERRORS): len(SIMPLE) + len(ERRORS) + len(EDGES)]
    answered = [c["argv"] for c, r in zip(EDGES, edges) if r["fast"] and not c.get("stdout")]
    assert not answered, answered
    generated = fast[len(SIMPLE) + len(ERRORS) + len(EDGES):]
    by_code = {code: sum(1 for r in generated if r["code"] == code) for code in (0, 1, 2)}
    assert min(by_code.values()) >= 20, by_code  # answers, refusals and errors all among the generated cases
    assert sum(r["fast"] for r in generated) >= 60  # and many of them answered without Click
    assert sum(r["fast"] for r in generated if r["code"] == 2) >= 10  # errors reported here, never asked again


def _modules_of_a_query(argv: list[str], env: dict | None = None) -> set[str]:
    code = ("import sys, atexit\n"
            "atexit.register(lambda: sys.__stderr__.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n'))\n"
            "from promote_cli.cli import run\n"
            f"sys.argv = ['promote', *{argv!r}]\n"
            "run()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=60, check=False)
    line = done.stderr.rsplit("MODULES ", 1)[1]
    return set(line.split())


HEAVY = {"numpy", "rich", "ml_dtypes"}
START_UP = {"click", "dataclasses", "inspect", "ast", "tomllib", "hashlib", "difflib", "pathlib", "promote_cli.oracle.expr"}


@pytest.mark.parametrize("argv", [["query", "i8", "u8", "-f", "openvino", "-O", "promote_unsafe=true"],
                                  ["query", "i8", "u8", "f16", "-f", "paddle", "--op", "/", "--format", "json"],
                                  ["query", "i8", "u8", "-f", "openvino:promote_unsafe=true"],
                                  ["query", "i8", "py:300", "0d:f64=1e+300", "-f", "jax"]])
def test_a_query_imports_neither_numpy_nor_rich_nor_click_nor_a_parser(argv):
    _modules_of_a_query(argv)  # warms the caches
    loaded = _modules_of_a_query(argv)
    tops = {m.split(".")[0] for m in loaded}
    assert not tops & HEAVY, tops & HEAVY
    assert not loaded & START_UP, loaded & START_UP


def test_a_question_the_fast_path_cannot_ask_is_reported_without_click():
    """An error of a common shape is the fast path's to report: Click is never loaded to ask it again."""
    loaded = _modules_of_a_query(["query", "i8", "u8", "-f", "openvino", "-O", "promote_unsafe"])
    assert "click" not in {m.split(".")[0] for m in loaded}


def test_a_query_click_answers_imports_neither_numpy_nor_rich():
    loaded = _modules_of_a_query(["query", "i8", "u8", "-fopenvino"])
    tops = {m.split(".")[0] for m in loaded}
    assert "click" in tops and not tops & HEAVY, tops & HEAVY


def test_the_module_check_sees_an_import():
    """The check above is not vacuous: a query that loads Click is seen to."""
    assert "click" in _modules_of_a_query(["query", "--help"])


def _to_a_closed_pipe(argv: list[str]) -> tuple[int, str]:
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "promote_cli", *argv], stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=60, check=False)
    finally:
        os.close(write)
    return done.returncode, done.stderr


def test_a_reader_that_went_away_ends_both_paths_alike():
    fast = _to_a_closed_pipe(["query", "i8", "u8", "-f", "cann"])
    click = _to_a_closed_pipe(["query", "i8", "u8", "-fcann"])  # an attached value: the Click path
    assert fast == click == (141, "")
