"""tools/recorded_tables.py for PyTorch and TensorFlow: weak cells taken from the ops that
return WeakTensors, and a lattice written from recorded joins (checked to be a lattice's)."""

from __future__ import annotations

import pytest
from support import load_tool


def _tool():
    return load_tool("recorded_tables")


def _spec(name: str):
    return next(f for f in _tool().FILES if f.rules.name == name)


def test_torch_and_tensorflow_blocks_are_generated():
    for name in ("torch.toml", "tensorflow.toml"):
        assert _tool().check(_spec(name)) == [], name


def test_a_join_lattice_is_written_as_immediate_successors():
    tool = _tool()
    lattice = tool.JoinLattice("demo", "join", ["a", "b", "c", "top"], comment=[], reason="none")
    joins = {("a", "b"): "top", ("a", "c"): "c", ("b", "c"): "top"}
    answers = {}
    for x in lattice.nodes:
        for y in lattice.nodes:
            z = x if x == y else joins.get((x, y)) or joins.get((y, x)) or "top"
            answers["join", x, y, "{}"] = z
    assert tool.hasse(lattice, answers) == {"a": ["c"], "b": ["top"], "c": ["top"], "top": []}
    text = tool.render_join_lattice(lattice, answers)
    assert "[lattices.demo.edges]" in text and 'a   = ["c"]' in text


def test_joins_that_are_not_a_lattice_are_an_error():
    """a and b are both below c and d, which are incomparable: a diamond without a join."""
    tool = _tool()
    lattice = tool.JoinLattice("demo", "join", ["a", "b", "c", "d", "top"], comment=[], reason="none")
    joins = {("a", "b"): "c", ("a", "c"): "c", ("a", "d"): "d", ("b", "c"): "c", ("b", "d"): "d", ("c", "d"): "top"}
    answers = {("join", x, y, "{}"): x if x == y else joins.get((x, y)) or joins.get((y, x)) or "top"
               for x in lattice.nodes for y in lattice.nodes}
    with pytest.raises(SystemExit, match="the join of a and b is c, not the least upper bound"):
        tool.hasse(lattice, answers)


def test_the_tensorflow_lattice_is_tensorflows():
    tool = _tool()
    spec = _spec("tensorflow.toml")
    lattice = next(b for b in spec.blocks if isinstance(b, tool.JoinLattice))
    answers, _ = tool.load_recording(spec.recording)
    edges = tool.hasse(lattice, answers)
    assert edges["bool"] == ["weak:i32"] and edges["weak:i64"] == ["u8", "i8", "weak:f32"]
    assert edges["i64"] == edges["u64"] == ["weak:f64"]


def test_a_cell_is_weak_where_an_op_returned_a_weaktensor():
    tool = _tool()
    answers = {("result_type", "i64", "u64", "{}"): "f64", ("add", "i64", "u64", "{}"): "weak:f64",
               ("result_type", "i8", "u8", "{}"): "i16", ("add", "i8", "u8", "{}"): "i16"}
    assert tool._cell(answers, "result_type", "i64", "u64", "{}", ["add"]) == "weak:f64"
    assert tool._cell(answers, "result_type", "i8", "u8", "{}", ["add"]) == "i16"
    assert tool._cell(answers, "result_type", "i64", "u64", "{}", []) == "f64"


def test_check_notices_a_changed_torch_cell_and_the_tool_restores_it(tmp_path):
    tool = _tool()
    spec = _spec("torch.toml")
    text = spec.rules.read_text(encoding="utf-8")
    start = text.index("[tables.promote.rows]")
    line_start = text.index("\nu8 ", start) + 1
    line = text[line_start:text.index("\n", line_start)]
    changed = line.replace('"i16"', '"i32"', 1)
    assert changed != line
    rules = tmp_path / "torch.toml"
    rules.write_text(text.replace(line, changed, 1), encoding="utf-8")
    assert tool.check(spec, rules) == ["promote"]
    assert tool.write(spec, rules)
    assert rules.read_text(encoding="utf-8") == text
