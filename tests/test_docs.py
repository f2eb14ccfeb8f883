"""Every console example in the docs prints what the doc says (tools/doc_examples.py refreshes them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import load_tool

ROOT = Path(__file__).resolve().parent.parent
doc_examples = load_tool("doc_examples")

DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
WITH_EXAMPLES = [p for p in DOCS if doc_examples.examples(p)]


def test_the_framework_docs_have_examples():
    names = {p.stem for p in WITH_EXAMPLES}
    assert {"openvino", "paddle", "cann", "anvil", "tosa", "cast", "numpy", "jax", "array-api"} <= names


@pytest.mark.parametrize("path", WITH_EXAMPLES, ids=[str(p.relative_to(ROOT)) for p in WITH_EXAMPLES])
def test_doc_examples_print_what_the_doc_says(path):
    problems = doc_examples.check(path)
    assert not problems, "\n".join(problems[:10])


def test_a_stale_example_is_caught_and_rewritten(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("```console\n$ promote query s8 u8 -f cann\ni8\n$ promote query u16 f32 -f cann\n```\n")
    assert len(doc_examples.check(doc)) == 2
    assert doc_examples.write(doc) == 2
    assert doc_examples.check(doc) == []
    assert "# exit 1" in doc.read_text()


def test_cast_json_report_example_matches_but_for_time(tmp_path, monkeypatch):
    import json

    from click.testing import CliRunner

    from promote_cli.cli import main

    doc = ROOT / "docs" / "cast.md"
    text = doc.read_text(encoding="utf-8")
    example = json.loads(next("\n".join(lines) for _, lines in doc_examples.fenced_blocks(text, "json")
                              if '"input": "w.npy"' in "\n".join(lines)))
    doc_examples.setup_files(doc, tmp_path)
    monkeypatch.chdir(tmp_path)
    got = json.loads(CliRunner().invoke(main, ["cast", "w.npy", "--to", "f16", "--format", "json"]).stdout)
    example.pop("seconds"), got.pop("seconds")
    assert got == example
