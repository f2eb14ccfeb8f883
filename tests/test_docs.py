"""Every example in the docs does what the doc says: console commands print it, python fences run and
state true values, commands quote what a shell would expand (tools/doc_examples.py; it refreshes them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import load_tool

ROOT = Path(__file__).resolve().parent.parent
doc_examples = load_tool("doc_examples")

DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
WITH_EXAMPLES = [p for p in DOCS if doc_examples.steps(p) or doc_examples.glob_problems(p)
                 or "```sh" in p.read_text(encoding="utf-8")]


def test_the_framework_docs_have_examples():
    names = {p.stem for p in WITH_EXAMPLES}
    assert {"openvino", "paddle", "cann", "anvil", "tosa", "cast", "numpy", "jax", "array-api"} <= names
    with_python = {p.stem for p in DOCS if doc_examples.python_blocks(p)}
    assert {"README", "cast", "rescale", "cli", "rules", "recordings"} <= with_python


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


def _page(tmp_path, text: str) -> Path:
    doc = tmp_path / "page.md"
    doc.write_text(text)
    return doc


def test_python_fences_run_in_page_order_with_the_files_commands_made(tmp_path):
    doc = _page(tmp_path, """
```python
import numpy as np
np.save("w.npy", np.arange(4, dtype=np.float32))
count = 4
```

```console
$ promote cast w.npy --to f16
w.npy -> w.f16.npy: f32 -> f16 (tosa), 4 elements (4)
  4 exact
$ promote validate rules/cann.toml
rules/cann.toml: ok (cann@8.0)
```

```python
import ml_dtypes
np.load("w.f16.npy").tolist()           # [0.0, 1.0, 2.0, 3.0]
count * 2                               # 8
```

```python
>>> str(np.load("w.f16.npy").dtype)
'float16'
```
""")
    assert doc_examples.check(doc) == []
    assert not (tmp_path / "w.npy").exists() and not Path("w.npy").exists()  # made in the page's own directory


def test_a_python_fence_that_fails_or_states_a_wrong_value_is_caught(tmp_path):
    uses_before_making = _page(tmp_path, """
```python
import numpy as np
np.load("later.npy")
```

```python
np.save("later.npy", np.zeros(2))
```
""")
    problems = doc_examples.check(uses_before_making)
    assert len(problems) == 1 and ":4: `np.load('later.npy')` raises FileNotFoundError" in problems[0]
    wrong = _page(tmp_path, """
```python
from promote_cli import query
query("cann", "s8", "u8").result      # 'i32'
query("cann", "s8", "u8").result      # the comment is prose here, not a value
```
""")
    problems = doc_examples.check(wrong)
    assert len(problems) == 1 and "is 'i16', the doc says 'i32'" in problems[0]
    doctest_page = _page(tmp_path, """
```python
>>> 1 + 1
3
```
""")
    assert "doctest fails" in doc_examples.check(doctest_page)[0]
    broken = _page(tmp_path, "```python\ndef version() -> str:\n```\n")
    assert "does not parse" in doc_examples.check(broken)[0]


@pytest.mark.parametrize("command, bad", [
    ("promote query f32? i8 -f anvil", ["?"]),
    ("promote query f64 py:complex -f paddle --op *", ["*"]),
    ("promote query i8 u8 -f tosa --op **", ["*", "*"]),
    ("pip install .[test]", ["["]),
    ("promote query 'f32?' i8 -f anvil", []),
    ('promote query "f32?" i8 --op \\* -f anvil', []),
    ("promote query i8 u8 -f paddle --op '**'", []),
    ("promote table -f cann   # every cell? yes", []),
])
def test_unquoted_glob_characters_are_found(command, bad):
    assert doc_examples.unquoted_globs(command) == bad


def test_the_doc_runner_flags_unquoted_globs_in_console_and_shell_fences(tmp_path):
    doc = _page(tmp_path, """
```console
$ promote query f32? i8 -f anvil
weak:f32
```

```sh
promote query i8 u8 -f tosa --op *    # multiplies
promote query i8 u8 -f tosa --op '*'
```
""")
    problems = doc_examples.check(doc)
    assert len(problems) == 2, problems
    assert "page.md:3: `promote query f32? i8 -f anvil` holds an unquoted '?'" in problems[0]
    assert "page.md:8: `promote query i8 u8 -f tosa --op *    # multiplies` holds an unquoted '*'" in problems[1]


def test_the_commands_of_a_sh_fence_must_answer(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("```sh\npromote query i8 u8 -f openvino   # refused: exit 1 is an answer\n"
                   "promote query i8 u9 -f cann\npromote query --batch -f cann < pairs.txt\n"
                   "promote validate mine.toml\n"
                   "source .venv/bin/activate          # not promote: not run\n```\n"
                   "```python\nopen('pairs.txt', 'w').write('i8 u8\\n')\n```\n"
                   "```sh\npromote query --batch -f cann < pairs.txt\n```\n")
    problems = doc_examples.check(doc)
    assert [p.split(": `")[0] for p in problems] == [f"{doc}:3", f"{doc}:4", f"{doc}:5"], problems
    assert "exits 2: promote: unknown dtype 'u9'" in problems[0]
    assert "reads pairs.txt, which the page has not made" in problems[1]
    assert "mine.toml: cannot read" in problems[2]


def test_a_sh_fence_may_ask_a_framework_that_is_not_installed(tmp_path, monkeypatch):
    doc = tmp_path / "doc.md"
    doc.write_text("```sh\npromote verify -f openvino\n```\n")
    monkeypatch.setattr(doc_examples, "run", lambda example, directory, stdin=None: (
        ["promote: openvino is not installed here: pip install openvino"], 2))
    assert doc_examples.check(doc) == []
    monkeypatch.setattr(doc_examples, "run", lambda example, directory, stdin=None: (["promote: boom"], 2))
    assert len(doc_examples.check(doc)) == 1
