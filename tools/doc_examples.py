"""Run the console examples of the docs, check them, or rewrite their output.

A console example is a ```console fence in a Markdown file under docs/ (or README.md):

    $ promote query i8 u8 -f openvino
    promote: openvino@2026.4.1 refuses i8 add u8: ... (with -O promote_unsafe=true the result is i16)
    # exit 1

The lines after a `$ promote ...` line are what it prints (stdout, then stderr), and an
optional `# exit N` line is its exit code (0 when absent). Commands run in a scratch
directory where the doc's ```python fences that save files (`np.save(`) ran first.

    python tools/doc_examples.py --check docs/frameworks/openvino.md   # exit 1 on a stale example
    python tools/doc_examples.py --write docs/frameworks/*.md          # refresh the printed lines
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^(\s*)```(\w*)\s*$")


@dataclass
class Example:
    path: Path
    line: int            # 1-based line of the `$ promote` command
    command: str
    printed: list[str]
    exit_code: int


def fenced_blocks(text: str, lang: str) -> list[tuple[int, list[str]]]:
    """(first content line index, lines) of each fence of that language ("" = plain fence)."""
    found, current, start, current_lang = [], None, 0, None
    for index, line in enumerate(text.splitlines()):
        fence = FENCE.match(line)
        if fence and current is None:
            current, current_lang, start = [], fence.group(2), index + 1
        elif fence:
            if current_lang == lang:
                found.append((start, current))
            current = None
        elif current is not None:
            current.append(line)
    return found


def examples(path: Path) -> list[Example]:
    text = path.read_text(encoding="utf-8")
    out = []
    for start, lines in fenced_blocks(text, "console"):
        current = None
        for offset, raw in enumerate(lines):
            line = raw.strip()
            if line.startswith("$ "):
                current = Example(path, start + offset + 1, line[2:], [], 0)
                out.append(current)
            elif current is not None and line.startswith("# exit "):
                current.exit_code = int(line.split()[-1])
            elif current is not None:
                current.printed.append(line)
    return out


ROOT = Path(__file__).resolve().parent.parent


def makes_files(path: Path) -> bool:
    return any("np.save(" in "\n".join(lines) for _, lines in fenced_blocks(path.read_text(encoding="utf-8"), "python"))


def workdir(path: Path, scratch: Path) -> Path:
    """Where a doc's commands run: a scratch directory holding the files the doc makes, else the repository."""
    if makes_files(path):
        setup_files(path, scratch)
        return scratch
    return ROOT


def setup_files(path: Path, directory: Path) -> None:
    """Run the doc's file-making python fences in `directory`."""
    text = path.read_text(encoding="utf-8")
    here = os.getcwd()
    os.chdir(directory)
    try:
        for _, lines in fenced_blocks(text, "python"):
            code = textwrap.dedent("\n".join(lines))
            if "np.save(" in code:
                exec(compile(code, f"{path}:python", "exec"), {})
    finally:
        os.chdir(here)


def run(example: Example, directory: Path) -> tuple[list[str], int]:
    """What the command prints (stdout lines, then stderr lines) and its exit code."""
    from click.testing import CliRunner

    from promote_cli.cli import main

    argv = shlex.split(example.command)
    env = {}
    while argv and "=" in argv[0] and not argv[0].startswith("-"):  # VAR=value promote ...
        key, _, value = argv.pop(0).partition("=")
        env[key] = value
    if not argv or argv[0] != "promote":
        raise ValueError(f"{example.path}:{example.line}: not a promote command: {example.command}")
    here = os.getcwd()
    os.chdir(directory)
    try:
        result = CliRunner().invoke(main, argv[1:], prog_name="promote", env=env)
    finally:
        os.chdir(here)
    printed = [line.strip() for line in (result.stdout + result.stderr).splitlines()]
    return printed, result.exit_code


def check(path: Path) -> list[str]:
    """Disagreements between a doc's examples and what they print now."""
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        where = workdir(path, Path(tmp))
        for ex in examples(path):
            printed, code = run(ex, where)
            if printed != ex.printed or code != ex.exit_code:
                problems.append(f"{path}:{ex.line}: `{ex.command}` prints {printed} (exit {code}), "
                                f"the doc says {ex.printed} (exit {ex.exit_code})")
    return problems


def write(path: Path) -> int:
    """Rewrite each example's printed lines and exit code with what it prints now; returns how many changed."""
    lines = path.read_text(encoding="utf-8").splitlines()
    changed = 0
    with tempfile.TemporaryDirectory() as tmp:
        where = workdir(path, Path(tmp))
        for ex in reversed(examples(path)):
            printed, code = run(ex, where)
            if printed == ex.printed and code == ex.exit_code:
                continue
            changed += 1
            indent = re.match(r"\s*", lines[ex.line - 1]).group(0)
            end = ex.line  # index just after the command line
            while end < len(lines) and not lines[end].strip().startswith(("$ ", "```")):
                end += 1
            new = [indent + p for p in printed] + ([f"{indent}# exit {code}"] if code else [])
            lines[ex.line:end] = new
    if changed:
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return changed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--write", action="store_true")
    parser.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args(argv)
    status = 0
    for path in args.paths:
        if args.write:
            n = write(path)
            print(f"{path}: {n} example(s) rewritten")
        else:
            for problem in check(path):
                print(problem)
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
