"""The examples of docs/cast.md, run as written: the report line, the JSON object, the refusal."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

np = pytest.importorskip("numpy")
pytest.importorskip("ml_dtypes")

from promote_cli.cli import main  # noqa: E402

DOC = (Path(__file__).resolve().parent.parent / "docs" / "cast.md").read_text(encoding="utf-8")


def blocks(lang: str) -> list[str]:
    """The fenced blocks of that language ("" for plain fences), in order."""
    found, current, current_lang = [], None, None
    for line in DOC.splitlines():
        fence = re.match(r"^\s*```(\w*)\s*$", line)
        if fence and current is None:
            current, current_lang = [], fence.group(1)
        elif fence:
            if current_lang == lang:
                found.append("\n".join(current) + "\n")
            current = None
        elif current is not None:
            current.append(line)
    return found


def console_examples() -> list[tuple[str, list[str]]]:
    out = []
    for block in blocks(""):
        lines = [line.strip() for line in block.strip().splitlines()]
        if lines and lines[0].startswith("$ promote "):
            out.append((lines[0][2:], lines[1:]))
    return out


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for snippet in blocks("python"):
        if "np.save(" in snippet:
            exec(snippet, {})  # the doc's own recipe for its example files
    np.save("ids.npy", np.arange(10, dtype=np.int8))
    return tmp_path


def test_console_examples_print_what_the_doc_says(workdir):
    examples = console_examples()
    assert len(examples) >= 2
    for command, expected in examples:
        r = CliRunner().invoke(main, command.split()[1:])
        printed = (r.stdout + r.stderr).strip().splitlines()
        assert printed == expected, command


def test_json_example_matches_but_for_time(workdir):
    example = json.loads(next(b for b in blocks("json") if '"input": "w.npy"' in b))
    r = CliRunner().invoke(main, ["cast", "w.npy", "--to", "f16", "--force", "--format", "json"])
    got = json.loads(r.stdout)
    example.pop("seconds"), got.pop("seconds")
    assert got == example
