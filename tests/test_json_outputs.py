"""JSON outputs agree with each other and with the API: option values are JSON values in every command, a
refusal is `"refusal"` beside the contract's `"error"`, and a batch's unanswerable lines keep their operands."""

from __future__ import annotations

import json

import pytest

import promote_cli
from promote_cli import formats
from support import run_cli

OPENVINO = {"promote_unsafe": False, "pytorch_scalar_promotion": False, "u64_integer_promotion_target": "f32"}


@pytest.mark.parametrize("args", [
    ["query", "i8", "u8"], ["explain", "i8", "u8"], ["table", "--types", "i8,u8"], ["lattice"], ["check"],
    ["expr", "x:i8 + y:i8"]])
def test_every_command_gives_options_as_json_values(args):
    code, out, _ = run_cli(*args, "-f", "openvino", "--format", "json")
    assert code in (0, 1)
    assert json.loads(out)["options"] == OPENVINO


def test_explain_alternatives_and_a_lattice_choice_are_json_values():
    data = json.loads(run_cli("explain", "i8", "u8", "-f", "openvino", "--format", "json")[1])
    values = {(alt["option"], json.dumps(alt["value"])) for alt in data["alternatives"]}
    assert ("promote_unsafe", "true") in values and ("u64_integer_promotion_target", '"f64"') in values
    data = json.loads(run_cli("lattice", "-f", "jax", "-O", "x64=true", "--format", "json")[1])
    assert data["options"] == {"x64": True}
    # the words are unchanged where they are words
    assert "options: promote_unsafe=false, pytorch_scalar_promotion=false" in run_cli(
        "explain", "i8", "u8", "-f", "openvino")[1]
    assert "(x64=true)" in run_cli("lattice", "-f", "jax", "-O", "x64=true", "--format", "dot")[1]


def test_a_diffs_common_options_are_json_values_and_words_in_text():
    code, out, _ = run_cli("table", "--diff", "openvino", "openvino:promote_unsafe=true", "-O",
                           "pytorch_scalar_promotion=off", "--types", "i8,u8", "--format", "json")
    assert json.loads(out)["options"] == {"pytorch_scalar_promotion": False}
    d = promote_cli.diff("openvino", "openvino:promote_unsafe=true", types=["i8"],
                         options={"pytorch_scalar_promotion": "off"})
    assert "(add, pytorch_scalar_promotion=false)" in formats.diff_summary(d)


def test_a_refusal_is_error_and_refusal_alike():
    ans = promote_cli.query("openvino", "i8", "u8")
    code, out, _ = run_cli("query", "i8", "u8", "-f", "openvino", "--format", "json")
    data = json.loads(out)
    assert code == 1 and data["error"] == data["refusal"] == ans.refusal
    assert list(data).index("refusal") == list(data).index("error") + 1
    answered = json.loads(run_cli("query", "i8", "i16", "-f", "openvino", "--format", "json")[1])
    assert "error" not in answered and "refusal" not in answered
    x = json.loads(run_cli("explain", "i8", "u8", "-f", "openvino", "--format", "json")[1])
    assert x["error"] == x["refusal"] == ans.refusal
    x = json.loads(run_cli("explain", "i8", "i16", "-f", "openvino", "--format", "json")[1])
    assert x["error"] is None and x["refusal"] is None
    e = json.loads(run_cli("expr", "x:i8 + y:u8", "-f", "openvino", "--format", "json")[1])
    assert e["error"] == e["refusal"] is not None


def test_batch_json_error_objects_carry_the_operands_and_the_message_points_at_them(monkeypatch):
    from click.testing import CliRunner

    from promote_cli.cli import main

    lines = b"i8 u8\ni8 u8 f16\nbogus i8\n\xff\n"
    result = CliRunner().invoke(main, ["query", "--batch", "-f", "openvino", "--format", "json"], input=lines)
    assert result.exit_code == 2
    objs = [json.loads(line) for line in result.stdout.splitlines()]
    assert objs[0]["refusal"] == objs[0]["error"]  # refused: both keys
    assert objs[1]["operands"] == ["i8", "u8", "f16"] and (objs[1]["a"], objs[1]["b"]) == ("i8", "u8")
    assert objs[2]["operands"] == ["bogus", "i8"] and objs[3]["operands"] == []
    assert all("refusal" not in o and o["error"] and o["result"] is None for o in objs[1:])
    assert "`error:`" not in result.stderr and '"error"' in result.stderr
    text = CliRunner().invoke(main, ["query", "--batch", "-f", "openvino"], input=lines)
    assert "see the `error:` lines" in text.stderr
