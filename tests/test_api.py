"""The public API does everything the CLI does, with the same errors: the CLI's message is `promote: ` and the
API's exception text, and its exit code is the exception's."""

from __future__ import annotations

import ast
import io
import json

import pytest

import promote_cli
from promote_cli import PromoteError, UsageError
from support import ROOT, run_cli

# (CLI arguments, the same call through the API)
PARITY = [
    (["query", "i9", "u8", "-f", "cann"], lambda: promote_cli.query("cann", "i9", "u8")),
    (["query", "i8", "u8", "-f", "cnn"], lambda: promote_cli.query("cnn", "i8", "u8")),
    (["query", "i8", "u8", "-f", "cann", "-O", "flag=1"], lambda: promote_cli.query("cann", "i8", "u8",
                                                                                     options={"flag": "1"})),
    (["query", "i8", "u8", "-f", "cann", "--op", "frob"], lambda: promote_cli.query("cann", "i8", "u8", "frob")),
    (["table", "-f", "cann", "--op", "frob"], lambda: promote_cli.table("cann", op="frob")),
    (["table", "-f", "cann", "--types", "i8,s8"], lambda: promote_cli.table("cann", ["i8", "s8"])),
    (["table", "-f", "openvino", "-O", "promote_unsafe=maybe"],
     lambda: promote_cli.table("openvino", options={"promote_unsafe": "maybe"})),
    (["table", "--diff", "cann", "paddle", "-O", "promote_unsafe=true"],
     lambda: promote_cli.diff("cann", "paddle", options={"promote_unsafe": "true"})),
    (["table", "--diff", "cann", "openvino:nope=1"], lambda: promote_cli.diff("cann", "openvino:nope=1")),
    (["table", "--diff", "cann", "openvino:flag"], lambda: promote_cli.diff("cann", "openvino:flag")),
    (["table", "--diff", "cann", "nope"], lambda: promote_cli.diff("cann", "nope")),
    (["table", "--diff", "cann", "paddle", "--op", "frob"], lambda: promote_cli.diff("cann", "paddle", op="frob")),
    (["frameworks", "-f", "cnn"], lambda: promote_cli.frameworks("cnn")),
    (["dtypes", "-f", "cnn"], lambda: promote_cli.dtypes("cnn")),
    (["verify", "-f", "cann"], lambda: promote_cli.verify("cann")),
    (["query", "--batch", "-f", "cann", "--op", "frob"], lambda: list(promote_cli.batch("cann", [], "frob"))),
]


@pytest.mark.parametrize("args, call", PARITY, ids=[" ".join(a) for a, _ in PARITY])
def test_the_cli_reports_the_api_error(args, call):
    with pytest.raises(PromoteError) as caught:
        call()
    code, out, err = run_cli(*args)
    assert (code, out, err) == (caught.value.exit_code, "", f"promote: {caught.value}\n")


def test_diff_refuses_an_option_no_side_has_and_applies_one_to_the_sides_that_have_it():
    with pytest.raises(UsageError, match="neither cann nor paddle has option 'promote_unsafe'"):
        promote_cli.diff("cann", "paddle", options={"promote_unsafe": True})
    both = promote_cli.diff("openvino", "cann", types=["i8", "u8"], options={"promote_unsafe": True})
    plain = promote_cli.diff("openvino", "cann", types=["i8", "u8"])
    unsafe = promote_cli.query("openvino", "i8", "u8", options={"promote_unsafe": True}).result
    assert promote_cli.query("openvino", "i8", "u8").result is None and unsafe is not None
    assert {"a": "i8", "b": "u8", "openvino": None, "cann": promote_cli.query("cann", "i8", "u8").result} \
        in plain.differences
    want = []
    for a in both.types:
        for b in both.types:
            r1 = promote_cli.query("openvino", a, b, options={"promote_unsafe": True}).result
            r2 = promote_cli.query("cann", a, b).result
            if r1 != r2:
                want.append({"a": a, "b": b, "openvino": r1, "cann": r2})
    assert both.differences == want != plain.differences


@pytest.mark.parametrize("side", ["openvino:promote_unsafe=true", ("openvino", {"promote_unsafe": True})])
def test_each_side_carries_its_own_options(side):
    d = promote_cli.diff(["openvino", side], types=["i8", "u8", "f16"])
    label = "openvino:promote_unsafe=true"
    assert d.frameworks == ("openvino", label)
    want = []
    for a in d.types:
        for b in d.types:
            r1 = promote_cli.query("openvino", a, b).result
            r2 = promote_cli.query("openvino", a, b, options={"promote_unsafe": True}).result
            if r1 != r2:
                want.append({"a": a, "b": b, "openvino": r1, label: r2})
    assert d.differences == want and want
    code, out, _ = run_cli("table", "--diff", "openvino", label, "--types", "i8,u8,f16", "--format", "json")
    assert code == 0 and json.loads(out)["differences"] == want


def test_three_sides():
    d = promote_cli.diff("cann", "cann@opbase", "paddle", types=["i8", "u8", "f32", "bf16"])
    assert d.frameworks == ("cann", "cann@opbase", "paddle")
    for x in d.differences:
        results = [promote_cli.query(fw, x["a"], x["b"]).result for fw in d.frameworks]
        assert [x[fw] for fw in d.frameworks] == results and len(set(results)) > 1
    with pytest.raises(UsageError, match="two or more"):
        promote_cli.diff("cann")


def test_batch_yields_a_line_per_question_in_order():
    stream = io.BytesIO(b"i8 u8\n# comment\n\nu16 f32\n\xff\nbogus i8\n")
    lines = list(promote_cli.batch("cann", stream))
    assert [line.number for line in lines] == [1, 4, 5, 6]
    assert lines[0].answer.result == promote_cli.query("cann", "i8", "u8").result and lines[0].status == 0
    assert lines[1].answer.result is None and lines[1].status == 1
    assert lines[2].operands is None and "not UTF-8" in str(lines[2].error) and lines[2].status == 2
    assert "unknown dtype 'bogus'" in str(lines[3].error)
    assert [line.answer.result for line in promote_cli.batch("cann", ["i8 u8", "i8 u8"])] == [
        lines[0].answer.result] * 2


def test_listings():
    assert [rs.name for rs in promote_cli.frameworks("cann")] == ["cann", "cann"]
    assert sum(promote_cli.is_default(rs) for rs in promote_cli.frameworks("cann")) == 1
    assert promote_cli.dtypes() == list(promote_cli.DTYPES.values())
    assert set(promote_cli.dtypes("cann")) == set(promote_cli.load("cann").types)


def test_commands_call_only_the_public_api():
    """Of the project, the command modules import only `promote_cli` (the API), the formats, the option
    declarations and errors (tests/test_architecture.py checks the layers of every module)."""
    allowed = {"promote_cli", "promote_cli.cli", "promote_cli.formats", "promote_cli.cli.options",
               "promote_cli.errors"}
    commands = ROOT / "promote_cli" / "cli" / "commands"
    for path in sorted(commands.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("promote_cli"):
                assert node.module in allowed, (path.name, node.module)
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names if alias.name.startswith("promote_cli")]
                assert all(name in allowed for name in names), (path.name, ast.dump(node))


def test_every_cli_command_has_its_api_function():
    from promote_cli.cli import COMMANDS

    for name in COMMANDS:
        if name == "cast":
            assert all(callable(getattr(promote_cli, f)) for f in ("plan_cast", "run_cast", "cast_file", "cast_array"))
        elif name == "rescale":
            assert callable(promote_cli.rescale_file) and callable(promote_cli.rescale_array)
        else:
            assert callable(getattr(promote_cli, name)), name
    lazy = {"Answer", "cast_array", "cast_file", "rescale_array", "rescale_file", "rescale_table", "BatchLine"}
    assert set(promote_cli.__all__) <= set(dir(promote_cli)) | lazy
    assert all(getattr(promote_cli, name) is not None for name in lazy)


def test_a_cast_loads_no_query_engine(tmp_path):
    """`promote cast` answers no query: the rule engine and its model stay unloaded."""
    import subprocess
    import sys

    import numpy as np

    np.save(tmp_path / "a.npy", np.ones(3, np.float32))
    code = (
        "import sys\n"
        "from promote_cli.cli import main\n"
        "try:\n"
        "    main(['cast', sys.argv[1], '--to', 'f16'])\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "print(sorted(m for m in sys.modules if m.startswith('promote_cli.oracle')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "a.npy")], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout

