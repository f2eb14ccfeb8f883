"""Every example in the docs does what the doc says: console commands print it, python fences run and
state true values, commands quote what a shell would expand (tools/doc_examples.py; it refreshes them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import load_tool

ROOT = Path(__file__).resolve().parent.parent
doc_examples = load_tool("doc_examples")

DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
WITH_EXAMPLES = [p for p in DOCS if doc_examples.steps(p) or doc_examples.shell_line_problems(p)
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


def _found(problems: list[str]) -> list[str]:
    """The characters (or operators) the problems name, or "quote" for an unclosed one."""
    return [p.split("'")[1] if "unquoted" in p else "quote" for p in problems]


#: what a shell reads in each command: the unquoted characters or operators, or "quote" (an unclosed one)
SHELL_READS = {
    "?": ["promote query f32? i8 -f anvil"],
    "*": ["promote query f64 py:complex -f paddle --op *"],
    "* *": ["promote query i8 u8 -f tosa --op **"],
    "[": ["pip install .[test]"],
    "<": ["promote query py:int f8e4m3 -f paddle --op <"],
    "&": ["promote query i32 py:int -f paddle --op &"],
    "|": ["promote query i8 u8 -f numpy --op |"],
    ">> <<": ["promote query i8 u8 -f numpy --op >> --op <<"],
    ";": ["promote query i8 u8 -f numpy; echo"],
    "&&": ["promote query i8 u8 -f numpy && echo done"],
    "( )": ["promote expr (x:i8 + 1) -f numpy"],
    "$": ["promote query $A u8 -f numpy", 'promote query "$A" u8 -f numpy'],
    "`": ["promote query `echo i8` u8"],
    "~": ["promote validate ~/mine.toml"],
    "quote": ["promote query 'i8 u8", 'promote expr "x:i8 + 1 -f numpy', "promote query i8 u8\\"],
    "": ["promote query 'f32?' i8 -f anvil", 'promote query "f32?" i8 --op \\* -f anvil',
         "promote query i8 u8 -f paddle --op '**'", "promote table -f cann   # every cell? yes; a | b & c",
         "promote query i32 py:int -f paddle --op '&' --op '<'", "promote query '$A' u8 -f numpy",
         "promote validate a~b.toml", "promote query i8 u8 -f numpy --op \\< --op a\\&b"],
}


@pytest.mark.parametrize("command, bad", [(c, bad) for bad, commands in SHELL_READS.items() for c in commands])
def test_a_command_is_read_as_a_shell_reads_it(command, bad):
    assert _found(doc_examples.shell_problems(command)) == bad.split()


@pytest.mark.parametrize("command, runs, feeds, bad", [
    ("promote query --batch -f cann < pairs.txt", True, True, []),
    ("promote query --batch -f cann < pairs.txt", True, False, ["<"]),   # a console fence does not feed files
    ("promote query --batch -f cann <", True, True, ["<"]),               # no file: a syntax error
    ("promote table -f cann > t.txt", True, True, [">"]),                 # the runner does not write stdout to files
    ("python3 -m venv .venv && .venv/bin/pip install '.[test]'", False, True, []),
    ("python3 -m venv .venv && .venv/bin/pip install .[test]", False, True, ["["]),
    ("make docs | tee log > out.txt", False, True, []),
    ("make docs &", False, True, ["&"]),
    ("make docs &&", False, True, ["&&"]),
    ("&& make docs", False, True, ["&&"]),
    ("(cd docs; make)", False, True, ["(", ")"]),
])
def test_setting_up_lines_may_join_commands_and_redirect(command, runs, feeds, bad):
    assert _found(doc_examples.shell_problems(command, runs=runs, feeds=feeds)) == bad


def test_the_doc_runner_flags_shell_syntax_in_console_and_shell_fences(tmp_path):
    doc = _page(tmp_path, """
```console
$ promote query f32? i8 -f anvil
weak:f32
$ promote query i32 i32 -f paddle --op &
i32
```

```sh
promote query i8 u8 -f tosa --op *    # multiplies
promote query i8 u8 -f tosa --op '*'
promote query i8 u8 -f paddle --op <
```
""")
    problems = doc_examples.check(doc)
    assert len(problems) == 4, problems
    assert "page.md:3: `promote query f32? i8 -f anvil` holds an unquoted '?', which a shell expands" in problems[0]
    assert "page.md:5: `promote query i32 i32 -f paddle --op &` holds an unquoted '&', which a shell reads as" \
        in problems[1]
    assert "page.md:10: `promote query i8 u8 -f tosa --op *    # multiplies` holds an unquoted '*'" in problems[2]
    assert "page.md:12: `promote query i8 u8 -f paddle --op <` holds an unquoted '<', which a shell reads as a " \
        "redirection: quote it" in problems[3]


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
