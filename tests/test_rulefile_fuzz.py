"""Generated hostile rule files: mutations of every shipped rule file, loaded and asked as the CLI would.

Whatever the mutation, loading either succeeds or raises one `PromoteError` whose message is one
line naming the file; a loaded file answers every query of its types with an answer, a refusal or
a `PromoteError` (a rule defect), never another exception, and in bounded time.
"""

from __future__ import annotations

import copy
import json
import random
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import pytest

from promote_cli.errors import PromoteError
from promote_cli.oracle import registry
from promote_cli.oracle.engine import answer
from promote_cli.oracle.loader import merge
from support import error_lines, time_limit

RULES = sorted((Path(__file__).resolve().parent.parent / "rules").glob("*.toml"))
CASES_PER_FILE = 150  # x every shipped file (8 now): over 1,000 mutated files per run

# Values a careless or hostile author writes where another value belongs.
HOSTILE_VALUES = [
    "", "zz", "f64", "a +", "a+" * 400 + "a", "(" * 300, "'ab' * 100000000 * 20", " * ".join(["999999937"] * 300),
    "{a:{b}}", "{a.__class__}", "{a[0]}", "{dtype!r:>99999}", "{nosuch}", "{", "}", "x" * 100_000, "\x00", "\udcff",
    "nope", "os.system", "nosuch@1", "h", "weak:nosuch", "py:int", "0d:i8", "x", "REFUSE",
    0, -1, 2**70, 3.5, True, False, [], [[[]]], {}, {"x": 1}, ["i8", "i8"], ["nosuch"], [1, 2], {"i8": ["i8"]},
]
SNIPPETS = ["[", "]", '"', "=", "\n", "{b}", " or ", " + ", "(", "result", "nosuch", "\udcff"]


def toml_value(v) -> str:
    """A minimal TOML writer: every table inline, which TOML allows anywhere."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_value(x)}" for k, x in v.items()) + "}"


def toml_text(data: dict) -> str:
    return "".join(f"{json.dumps(str(k))} = {toml_value(v)}\n" for k, v in data.items())


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


def mutate(data: dict, rng: random.Random) -> dict:
    data = copy.deepcopy(data)
    for _ in range(rng.randint(1, 3)):
        path = rng.choice([p for p in _paths(data) if p])
        parent = data
        for step in path[:-1]:
            parent = parent[step]
        key, old = path[-1], parent[path[-1]]
        move = rng.randrange(5)
        if move == 0:
            del parent[key]
        elif move == 1 or not isinstance(old, str):
            parent[key] = copy.deepcopy(rng.choice(HOSTILE_VALUES))
        elif move == 2:
            i = rng.randrange(len(old) + 1)
            parent[key] = old[:i] + rng.choice(SNIPPETS) + old[i:]
        elif move == 3 and isinstance(parent, dict):
            parent[rng.choice(["if", "result", "refuse", "weak", "reason", "x", "extends", "probe"])] = old
        else:
            parent[key] = old * rng.randint(2, 50)
    return data




def ask_everything(rs) -> None:
    kinds = [d.name for d in rs.types][:6]
    ops = list(dict.fromkeys(names[0] for names in (rs.ops or {"": ("add",)}).values()))
    for op in ops:
        for a in kinds:
            for b in kinds:
                try:
                    answer(rs, a, b, op)
                except PromoteError as exc:
                    assert "\n" not in str(exc), str(exc)


@pytest.mark.parametrize("path", RULES, ids=lambda p: p.stem)
def test_mutated_rule_files_fail_cleanly(tmp_path, path, monkeypatch):
    data = registry.merge_chain(path)   # its bases are not on the path the mutant is read from: merged in
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(tmp_path))
    rng = random.Random(path.stem)
    loaded, failures = 0, []
    target = tmp_path / path.name
    for n in range(CASES_PER_FILE):
        text = toml_text(mutate(data, rng))
        target.write_text(text, encoding="utf-8", errors="surrogateescape")
        registry.clear_cache()
        try:
            with time_limit(3):
                try:
                    rs = registry.load_path(target)
                except PromoteError as exc:
                    assert "\n" not in str(exc), str(exc)
                    continue
                loaded += 1
                ask_everything(rs)
        except Exception as exc:  # anything but a PromoteError is a defect; keep the mutated file for the report
            failures.append(f"mutation {n}: {type(exc).__name__}: {str(exc)[:200]}")
            (tmp_path / f"failed-{n}.toml").write_text(text, errors="surrogateescape")
    registry.clear_cache()
    summary = f"{len(failures)} of {CASES_PER_FILE} mutations of {path.name} failed:\n"
    assert not failures, summary + "\n".join(failures[:8])
    assert 0 < loaded < CASES_PER_FILE, "the generator does not mutate: every file loaded, or none did"


# ---- the sections `expr`, `check` and pictures read: [expressions], [claims], [tables.*.reasons] ------------

from click.testing import CliRunner  # noqa: E402

from promote_cli.cli import main  # noqa: E402

TARGETED = ("numpy", "anvil", "tosa", "cann")  # files with [expressions], [claims] and reasons between them
TARGETED_CASES = 16  # x 4 files, each mutant asked by query, expr, check, lattice and validate
EXPRESSION_VALUES = [
    "is_bool(result)", "result", "a", "f32", "weak:f32", "py:int", "0d:i8", "nosuch(result)", "result.__class__",
    "().__class__.__bases__[0]", "__import__('os')", "(" * 200 + "a" + ")" * 200, "a if a else " * 300 + "a",
    "{result.__class__}", "{dtype:>999999999}", "{value!r}", "{0}", "{result}{dtype}{value}", "{", "refused: {x}",
    "x" * 200_000, "\x00", "\udcff", "", 1, True, [], {}, {"op": "+"}, ["+"], 2**70, -1.5,
]
SECTION_KEYS = ["op", "literal_range", "literal_range_message", "refuse_if", "refuse", "result", "doc", "literals",
                "nosuch", "commutative", "associative", "lossless", "consistent", "bool", "int", "long", "float",
                "complex", "operators", "+", "-x", "where", "maximum", "@", ""]


def _section_paths(data: dict):
    for path in _paths(data):
        if path and (path[0] in ("expressions", "claims") or (path[0] == "tables" and "reasons" in path)):
            yield path


def mutate_sections(data: dict, rng: random.Random) -> dict:
    data = copy.deepcopy(data)
    for _ in range(rng.choice([1, 1, 2])):
        targets = list(_section_paths(data))
        if not targets:
            data[rng.choice(["expressions", "claims"])] = rng.choice([{}, [], "x", {"nosuch": 1}])
            continue
        path = rng.choice(targets)
        parent = data
        for step in path[:-1]:
            parent = parent[step]
        key, old = path[-1], parent[path[-1]]
        move = rng.randrange(4)
        if move == 0 and isinstance(parent, dict):
            parent[rng.choice(SECTION_KEYS)] = copy.deepcopy(rng.choice(EXPRESSION_VALUES + [old]))
        elif move == 1:
            parent[key] = copy.deepcopy(rng.choice(EXPRESSION_VALUES))
        elif move == 2 and isinstance(old, dict):
            old[rng.choice(SECTION_KEYS)] = copy.deepcopy(rng.choice(EXPRESSION_VALUES))
        else:
            del parent[key]
    return data


def _cli_check(result, args) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, repr(result.exception))
    assert result.exit_code in (0, 1, 2), (args, result.exit_code, result.stderr)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, (args, result.stderr)
    lines = error_lines(result.stderr)  # the mutant hides its shipped file: a note beside an error's one line
    if args[0] == "expr" and len(lines) == 3 and "column" in lines[0]:
        lines = lines[:1]  # the documented caret form
    if args[0] == "lattice" and result.exit_code == 1 and {"dot", "mermaid"} & set(args):
        lines = lines[-1:]  # documented: dot and mermaid draw nothing then, and the cells go to stderr
    if args[0] == "validate":
        lines = [line for line in lines if line.startswith("promote: ")]  # validate lists every problem
    assert len(lines) <= 1 or args[0] == "validate", (args, result.stderr)


@pytest.mark.parametrize("stem", TARGETED)
def test_mutated_expression_claim_and_reason_sections_fail_cleanly(tmp_path, stem, monkeypatch):
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(tmp_path))
    monkeypatch.delenv("PROMOTE_FRAMEWORK", raising=False)
    path = Path(__file__).resolve().parent.parent / "rules" / f"{stem}.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    base = data.get("extends")
    if base:
        data = merge(tomllib.loads((path.parent / f"{base}.toml").read_text(encoding="utf-8")), data)
    rng = random.Random("sections-" + stem)
    target = tmp_path / path.name
    runner = CliRunner()
    codes = {0: 0, 2: 0}
    for n in range(TARGETED_CASES):
        text = toml_text(mutate_sections(data, rng))
        target.write_text(text, encoding="utf-8", errors="surrogateescape")
        registry.clear_cache()
        commands = [["query", "i8", "u8", "-f", stem], ["expr", "x:i8 + 1 * y:f16 / 2.5", "-f", stem],
                    ["expr", "where(x:bool, 300, y:i8) - 1", "-f", stem],
                    ["check", "-f", stem, "--limit", "1", "--op", "add"], ["lattice", "-f", stem],
                    ["table", "-f", stem, "--types", "i8,u8,f16", "--svg", "-"], ["validate", str(target)]]
        for args in commands:
            with time_limit(5):
                result = runner.invoke(main, args)
            _cli_check(result, [*args, f"mutation {n}"])
            if args[0] == "query":
                codes[0 if result.exit_code != 2 else 2] += 1
        assert target.read_text(encoding="utf-8", errors="surrogateescape") == text  # nothing changed its input
    registry.clear_cache()
    assert all(codes.values()), codes  # some mutants load, some do not
