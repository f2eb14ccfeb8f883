"""PaddlePaddle: paddle@2.6 against the doc (parsed at test time), paddle (3.3) against
its recording (tests/test_recordings.py compares every case; here its coverage and the
refusal texts), the docs' examples, the CLI, and a live re-probe when paddle is installed."""

from __future__ import annotations

import json
import random
import re
import shlex
from pathlib import Path

import pytest
from support import load_tool, require_framework, run_cli, spec_page

from promote_cli import query, query_n
from promote_cli.probes import paddle as probe

ROOT = Path(__file__).resolve().parents[1]
DOC = spec_page("paddle-type-promotion.md")
RECORDING = ROOT / "tests" / "data" / "recordings" / "paddle-3.3.json"
FRAMEWORK_DOC = ROOT / "docs" / "frameworks" / "paddle.md"

PY_OF = {bool: "py:bool", int: "py:int", float: "py:float", complex: "py:complex"}
OPERATOR_SYMBOLS = ["+", "-", "*", "/", "//", "**", "%", "==", "!=", "<", "<=", ">", ">=", "&", "|", "^"]


# --------------------------------------------------------------------- helpers

def _importer():
    return load_tool("import_paddle_doc")


def _doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def _doc() -> dict:
    return _importer().parse_doc(_doc_text())


def _canon(name: str) -> str:
    from promote_cli.vocab import dtypes

    return dtypes.lookup(name).name


def _recording() -> dict:
    return json.loads(RECORDING.read_text(encoding="utf-8"))


# ------------------------------------------------------------ paddle@2.6 = the doc

def test_doc_tables_parse():
    doc = _doc()
    assert len(doc["tensor"]["rows"]) == len(doc["tensor"]["columns"]) == 12
    assert len(doc["scalar"]["rows"]) == 12
    assert doc["scalar"]["columns"] == ["py:bool", "py:int", "py:float", "py:complex"]
    assert len(doc["scope"]) == 32


def test_tensor_table_every_cell():
    doc = _doc()
    checked = 0
    for a, cells in doc["tensor"]["rows"].items():
        for b, cell in zip(doc["tensor"]["columns"], cells):
            ans = query("paddle@2.6", a, b, op="add")
            if cell == "-":
                if a == b:  # "-" on the diagonal: nothing to promote
                    assert ans.result == a, (a, b, ans.result)
                else:
                    assert ans.result is None, (a, b, ans.result)
                    assert "TypeError" in ans.refusal
            else:
                assert ans.result == cell, (a, b, cell, ans.result)
            checked += 1
    assert checked == 144


@pytest.mark.parametrize("side", ["right", "left"])
def test_scalar_table_every_cell(side):
    doc = _doc()
    for t, cells in doc["scalar"]["rows"].items():
        for s, cell in zip(doc["scalar"]["columns"], cells):
            a, b = (t, s) if side == "right" else (s, t)
            assert query("paddle@2.6", a, b, op="add").result == cell, (a, b, cell)


def test_scalar_defaults():
    """int -> int64, float -> float32, bool -> bool, complex -> complex64: a bool tensor
    (the only type of no broad kind but its own) shows each default."""
    text = _doc_text()
    defaults = _importer().scalar_defaults(text)
    assert set(defaults) == {"int", "float", "bool", "complex"}
    for kind, name in defaults.items():
        assert query("paddle@2.6", "bool", f"py:{kind}").result == _canon(name)


def test_scope_table():
    doc = _doc()
    expect_tensor = {"common": "f32", "logic": "bool", "none": None}
    expect_scalar = {"common": ("f16", "py:float", "f16"), "divide": ("i32", "py:int", "f32"),
                     "logic": ("f16", "py:float", "bool"), "none": ("f32", "py:float", None)}
    for entry in doc["scope"]:
        for api in filter(None, (entry["api"], entry["alias"])):
            got = query("paddle@2.6", "f16", "f32", op=api).result
            assert got == expect_tensor[entry["tensor"]], (api, entry)
            a, b, want = expect_scalar[entry["scalar"]]
            assert query("paddle@2.6", a, b, op=api).result == want, (api, entry)
            assert query("paddle@2.6", b, a, op=api).result == want, (api, entry)


def test_logic_rule_refuses_complex():
    doc = _doc()
    logic = [e["api"] for e in doc["scope"] if e["tensor"] == "logic"]
    for api in logic:
        assert query("paddle@2.6", "c64", "f32", op=api).result is None
        assert query("paddle@2.6", "f32", "py:complex", op=api).result is None


_CREATE = re.compile(r"^(\w+)\s*=\s*paddle\.(?:rand|ones)\(\[[\d, ]*\],\s*dtype\s*=\s*'(\w+)'\)")
_SCALAR = re.compile(r"^(\w+)\s*=\s*([-\d.]+j?|True|False)\s*(?:#.*)?$")
_BINARY = re.compile(r"^(\w+)\s*=\s*(\w+)\s*(\+|-|\*|/|==)\s*(\w+)\s*(#.*)?$")
_API = re.compile(r"^(\w+)\s*=\s*paddle\.(add|subtract|multiply|divide)\((\w+),\s*(\w+)\)")
_PRINT = re.compile(r"^print\s*\((\w+)(?:\[0\])?\.dtype\)\s*#(.*)$")
_CASTING = re.compile(r"casting [^#]*? to (\w+)")
_DTYPE_WORD = re.compile(r"\b(bool|u?int\d+|float\d+|bfloat16|complex\d+)\b")
_SYMBOL_OP = {"+": "+", "-": "-", "*": "*", "/": "/", "==": "=="}


def _doc_examples() -> list[dict]:
    """Every `c = a OP b` / `paddle.add(a, b)` of the doc's code blocks, with the dtype
    its `print(c.dtype)` comment states and the dtype its `casting ... to` comment names."""
    text = _doc_text()
    blocks = re.findall(r"```\n(.*?)```", text, re.S)
    examples = []
    for block in blocks:
        env: dict[str, str] = {}
        last = None
        for raw in block.splitlines():
            line = raw.strip()
            if m := _CREATE.match(line):
                env[m.group(1)] = _canon(m.group(2))
            elif m := _SCALAR.match(line):
                value = eval(m.group(2), {"__builtins__": {}}, {"True": True, "False": False})  # noqa: S307
                env[m.group(1)] = PY_OF[type(value)]
            elif m := _BINARY.match(line):
                last = {"var": m.group(1), "a": env[m.group(2)], "b": env[m.group(4)],
                        "op": _SYMBOL_OP[m.group(3)], "comment": m.group(5) or "", "line": line}
                examples.append(last)
            elif m := _API.match(line):
                last = {"var": m.group(1), "a": env[m.group(3)], "b": env[m.group(4)],
                        "op": m.group(2), "comment": "", "line": line}
                examples.append(last)
            elif (m := _PRINT.match(line)) and last is not None:
                words = _DTYPE_WORD.findall(m.group(2))
                if words:
                    last["printed"] = _canon(words[-1])
            elif line.startswith("res = exe.run") and last is not None:
                pass  # static graph: res[0] is the last result
    return examples


def test_doc_examples():
    examples = _doc_examples()
    assert len(examples) >= 10
    errata = []
    for ex in examples:
        ans = query("paddle@2.6", ex["a"], ex["b"], op=ex["op"])
        if "TypeError" in ex["comment"]:
            assert ans.result is None, ex
            continue
        printed = ex.get("printed")
        assert printed is not None, ex
        if ans.result != printed:
            errata.append(ex)
            casting = _CASTING.search(ex["comment"])
            mirrored = query("paddle@2.6", ex["b"], ex["a"], op=ex["op"]).result
            # the doc contradicts itself here: either its own "casting ... to" comment
            # agrees with the ruleset (= its table), or the table's mirrored cell gives
            # what the example prints
            assert (casting and _canon(casting.group(1)) == ans.result) or mirrored == printed, ex
    # exactly two known errata:
    # - `complex64 + float64` prints complex128, as does table row f64 / column c64,
    #   while row c64 / column f64 says c64 (the printed table is not symmetric);
    # - `1.0 + int64 tensor` prints "float16" under a comment saying the tensor is cast
    #   to float32 (the scalar table says f32)
    assert sorted((e["a"], e["b"]) for e in errata) == [("c64", "f64"), ("py:float", "i64")]


def test_unsupported_example_reason():
    ans = query("paddle@2.6", "i64", "f32")
    assert ans.result is None and "TypeError" in ans.refusal


# ------------------------------------------------------------ paddle (3.3) = the recording

def test_recording_covers_every_case():
    data = _recording()
    assert data["ruleset"] == "paddle" and data["version"].startswith("3.3")
    seen = {(op, a, b) for op, a, b, _opts, _r, _e in data["cases"]}
    pairs = list(probe.operand_pairs())
    assert len(pairs) == 17 * 17 * 4 + 17 * 4 * 4  # tensor and 0-d pairs; scalars both sides of both
    for op in probe.OPS:
        missing = [p for p in pairs if (op, *p) not in seen]
        assert not missing, (op, missing[:3])
    assert set(probe.API_OPS) >= {e["api"] for e in _doc()["scope"]}
    assert set(probe.OPERATORS) == set(OPERATOR_SYMBOLS)


def test_refusal_names_paddles_reason():
    data = _recording()
    want = next(c for c in data["cases"] if c[:3] == ["add", "i64", "f32"])
    assert want[4] is None and want[5].startswith("Type promotion only support")
    ans = query("paddle", "i64", "f32")
    assert ans.result is None and ans.refusal.startswith("Type promotion only support")


def test_divide_int_with_python_float_as_paddle():
    data = _recording()
    want = next(c for c in data["cases"] if c[:3] == ["divide", "i32", "py:float"])
    ans = query("paddle", "i32", "py:float", op="divide")
    assert ans.result == want[4]
    if want[4] is None:
        assert "must be Tensor" in want[5] and "must be Tensor" in ans.refusal
    op_want = next(c for c in data["cases"] if c[:3] == ["/", "i32", "py:float"])
    assert query("paddle", "i32", "py:float", op="/").result == op_want[4]


# ------------------------------------------------------------ docs/frameworks/paddle.md

def _doc_commands() -> list[tuple[list[str], str]]:
    text = FRAMEWORK_DOC.read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("$ promote "):
                expected = lines[i + 1].strip() if i + 1 < len(lines) else ""
                out.append((shlex.split(line[2:])[1:], expected))
    return out


def test_framework_doc_examples():
    """The page's `promote query` examples, through the API (tests/test_docs.py runs every example)."""
    commands = [(argv, expected) for argv, expected in _doc_commands() if argv[0] == "query"]
    assert len(commands) >= 10
    for argv, expected in commands:
        operands = argv[1:argv.index("-f")]
        fw = argv[argv.index("-f") + 1]
        op = argv[argv.index("--op") + 1] if "--op" in argv else "add"
        ans = query(fw, *operands, op=op) if len(operands) == 2 else query_n(fw, operands, op)
        if expected.startswith("promote: ") and " refuses " in expected:
            assert ans.result is None, (argv, ans.result)
            assert expected.endswith(ans.refusal), (argv, ans.refusal)
        else:
            assert ans.result == expected, (argv, ans.result, expected)


# ------------------------------------------------------------ CLI

def test_cli_int_float_refused():
    code, _, err = run_cli("query", "i64", "f32", "-f", "paddle")
    assert code == 1
    assert "Type promotion only support" in err


def test_cli_divide_python_float():
    data = _recording()
    want = next(c for c in data["cases"] if c[:3] == ["divide", "i32", "py:float"])
    code, out, err = run_cli("query", "i32", "py:float", "-f", "paddle", "--op", "divide")
    if want[4] is None:
        assert code == 1 and "must be Tensor" in err
    else:
        assert code == 0 and out.strip() == want[4]


def test_cli_operator_symbol():
    data = _recording()
    want = next(c for c in data["cases"] if c[:3] == ["/", "i32", "py:float"])
    code, out, _ = run_cli("query", "i32", "py:float", "-f", "paddle", "--op", "/")
    assert code == 0 and out.strip() == want[4]


# ------------------------------------------------------------ live re-probe

@pytest.mark.live
def test_live_probe_sample():
    require_framework(probe)
    data = _recording()
    assert probe.version() == data["version"]
    probe._setup()
    rng = random.Random(7)
    sample = rng.sample(data["cases"], 300)
    for op, a, b, _options, result, error in sample:
        got, err = probe.ask(op, a, b)
        assert got == result, (op, a, b, result, got, err)
        if result is None:
            assert err == error


def test_the_rule_file_is_what_the_tool_writes_from_the_doc():
    """rules/paddle@2.6.toml, its derived [expressions] included, is the importer's output for the doc."""
    tool = _importer()
    written = tool.render(_doc(), tool.scalar_defaults(_doc_text()))
    assert written == (ROOT / "rules" / "paddle@2.6.toml").read_text(encoding="utf-8")
    assert "[expressions]" in written and "derived from the doc (not recorded)" in written
