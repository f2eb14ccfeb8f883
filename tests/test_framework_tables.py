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
    for item in source.tables:
        call = "join" if isinstance(item, tool.Lattice) else "table"
        assert f"{call}('{item.name}'" in text, item.name


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


def test_a_lattice_is_written_as_immediate_successors_and_checked():
    tool = _tool()
    lattice = tool.Lattice("demo", "join", ["a", "b", "c", "top"], comment=[], reason="none")
    joins = {("a", "b"): "top", ("a", "c"): "c", ("b", "c"): "top"}
    answers = {}
    for x in lattice.nodes:
        for y in lattice.nodes:
            z = x if x == y else joins.get((x, y)) or joins.get((y, x)) or "top"
            answers["join", x, y, "{}"] = z
    assert tool.hasse(lattice, answers) == {"a": ["c"], "b": ["top"], "c": ["top"], "top": []}
    text = tool.render_lattice(lattice, answers)
    assert "[lattices.demo.edges]" in text and 'a   = ["c"]' in text
    answers["join", "a", "b", "{}"] = answers["join", "b", "a", "{}"] = "c"  # c is not above b
    with pytest.raises(SystemExit, match="not the least upper bound"):
        tool.hasse(lattice, answers)


def test_the_tensorflow_lattice_gives_the_recorded_joins():
    tool = _tool()
    source = tool.SOURCES["tensorflow"]()
    lattice = next(item for item in source.tables if isinstance(item, tool.Lattice))
    edges = tool.hasse(lattice, tool.load_answers(source.recording))
    assert edges["bool"] == ["weak:i32"] and edges["weak:i64"] == ["u8", "i8", "weak:f32"]
