"""The generated tables of rules/torch.toml (and the other files tools/framework_tables.py
writes) are what the tool writes from the committed recordings: a re-recording without a
re-run of the tool fails here."""

from __future__ import annotations

import pytest
from support import load_tool


def _tool():
    return load_tool("framework_tables")


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
def test_generated_tables_are_up_to_date(framework):
    tool = _tool()
    stale = tool.check(tool.SOURCES[framework]())
    assert not stale, f"stale generated tables for {framework}: {stale}; run python tools/framework_tables.py {framework}"


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
def test_every_generated_table_is_used_by_a_rule(framework):
    tool = _tool()
    source = tool.SOURCES[framework]()
    text = source.rules.read_text(encoding="utf-8")
    for table in source.tables:
        assert f"table('{table.name}'" in text, table.name


def test_check_notices_a_changed_cell_and_rewrites_it(tmp_path):
    tool = _tool()
    source = tool.SOURCES["torch"]()
    text = source.rules.read_text(encoding="utf-8")
    start = text.index("[tables.promote.rows]")
    line_start = text.index("\nu8 ", start) + 1
    line = text[line_start:text.index("\n", line_start)]
    changed = line.replace('"i16"', '"i32"', 1)
    assert changed != line
    rules = tmp_path / "torch.toml"
    rules.write_text(text.replace(line, changed, 1), encoding="utf-8")
    assert tool.check(source, rules) == ["promote"]
    assert tool.main(["torch", "--check", "--rules", str(rules)]) == 1
    assert tool.main(["torch", "--rules", str(rules)]) == 0
    assert rules.read_text(encoding="utf-8") == text
    assert tool.main(["torch", "--check", "--rules", str(rules)]) == 0


def test_text_outside_the_blocks_stays(tmp_path):
    tool = _tool()
    source = tool.SOURCES["torch"]()
    text = source.rules.read_text(encoding="utf-8")
    rules = tmp_path / "torch.toml"
    rules.write_text(text.replace("[[rules]]", "# a note\n[[rules]]", 1), encoding="utf-8")
    assert tool.check(source, rules) == []


def test_a_missing_block_is_an_error(tmp_path):
    tool = _tool()
    source = tool.SOURCES["torch"]()
    text = source.rules.read_text(encoding="utf-8")
    rules = tmp_path / "torch.toml"
    rules.write_text(text.replace("# END generated table promote", "", 1), encoding="utf-8")
    with pytest.raises(SystemExit, match="missing"):
        tool.check(source, rules)
