"""The generated tables and lattices of the NumPy, JAX and array API rule files are what
tools/recorded_tables.py writes from the committed recordings: a re-recording without a
re-run of the tool fails here."""

from __future__ import annotations

import pytest
from support import load_tool


def _tool():
    return load_tool("recorded_tables")


FILES = _tool().FILES


@pytest.mark.parametrize("spec", FILES, ids=[f.rules.name for f in FILES])
def test_generated_blocks_are_up_to_date(spec):
    assert spec.rules.exists(), spec.rules
    assert spec.recording.exists(), spec.recording
    stale = _tool().check(spec)
    assert not stale, f"stale generated blocks in {spec.rules.name}: {stale}; run python tools/recorded_tables.py"


@pytest.mark.parametrize("spec", FILES, ids=[f.rules.name for f in FILES])
def test_every_generated_block_is_used(spec):
    text = _tool()._BLOCK.sub("", spec.rules.read_text(encoding="utf-8"))  # outside the blocks
    for block in spec.blocks:
        used = f"'{block.name}'" in text or f'"{block.name}"' in text
        assert used, f"{spec.rules.name}: nothing reads {block.name}"


def test_check_notices_a_changed_cell_and_the_tool_restores_it(tmp_path):
    tool = _tool()
    spec = next(f for f in FILES if f.rules.name == "array-api@2025.12.toml")
    text = spec.rules.read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if ln.startswith("u8 "))
    changed = line.replace('"i16"', '"i32"', 1)
    assert changed != line
    rules = tmp_path / spec.rules.name
    rules.write_text(text.replace(line, changed, 1), encoding="utf-8")
    assert tool.check(spec, rules) == ["promotion"]
    assert tool.write(spec, rules)
    assert rules.read_text(encoding="utf-8") == text
    assert tool.check(spec, rules) == []


def test_a_missing_block_is_an_error(tmp_path):
    tool = _tool()
    spec = next(f for f in FILES if f.rules.name == "array-api@2025.12.toml")
    rules = tmp_path / spec.rules.name
    rules.write_text(spec.rules.read_text(encoding="utf-8").replace("# END generated table promotion", ""),
                     encoding="utf-8")
    with pytest.raises(SystemExit, match="missing"):
        tool.check(spec, rules)


def test_check_mode_exits_1_when_stale(tmp_path, monkeypatch):
    tool = _tool()
    assert tool.main(["--check"]) == 0
    spec = next(f for f in FILES if f.rules.name == "array-api@2025.12.toml")
    stale = tmp_path / spec.rules.name
    stale.write_text(spec.rules.read_text(encoding="utf-8").replace('"u64", "u64"', '"u64", "f64"', 1),
                     encoding="utf-8")
    monkeypatch.setattr(spec, "rules", stale)
    assert tool.main(["--check"]) == 1
