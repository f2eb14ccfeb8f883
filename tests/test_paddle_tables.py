"""The recorded tables of rules/paddle.toml are what tools/paddle_tables.py writes from
the committed recording: a re-recording without a re-run of the tool fails here."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import load_tool

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    return load_tool("paddle_tables")


def test_generated_tables_are_up_to_date():
    stale = _tool().check()
    assert not stale, f"stale generated tables in rules/paddle.toml: {stale}; run python tools/paddle_tables.py"


def test_check_notices_a_changed_cell(tmp_path):
    tool = _tool()
    text = tool.RULES.read_text(encoding="utf-8")
    start = text.index("[tables.promote.rows]")
    line_end = text.index("\n", text.index("\nu8", start) + 1)
    line = text[text.index("\nu8", start) + 1:line_end]
    changed = line.replace('"i16"', '"i32"', 1)
    assert changed != line
    rules = tmp_path / "paddle.toml"
    rules.write_text(text.replace(line, changed, 1), encoding="utf-8")
    assert tool.check(rules) == ["promote"]
    assert tool.main(["--check", "--rules", str(rules)]) == 1
    assert tool.main(["--rules", str(rules)]) == 0
    assert rules.read_text(encoding="utf-8") == text
    assert tool.main(["--check", "--rules", str(rules)]) == 0


def test_hand_written_text_outside_the_blocks_stays(tmp_path):
    tool = _tool()
    text = tool.RULES.read_text(encoding="utf-8")
    rules = tmp_path / "paddle.toml"
    rules.write_text(text.replace("[[rules]]", "# a note\n[[rules]]", 1), encoding="utf-8")
    assert tool.check(rules) == []


def test_missing_block_is_an_error(tmp_path):
    tool = _tool()
    text = tool.RULES.read_text(encoding="utf-8")
    rules = tmp_path / "paddle.toml"
    rules.write_text(text.replace("# END generated table promote", "", 1), encoding="utf-8")
    with pytest.raises(SystemExit, match="missing"):
        tool.check(rules)


def test_every_generated_table_is_used_by_a_rule():
    tool = _tool()
    text = tool.RULES.read_text(encoding="utf-8")
    for table in tool.TABLES:
        assert f"table('{table.name}'" in text, table.name
