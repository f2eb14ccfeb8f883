"""Run the examples of the docs as a reader would, check them, or rewrite their output.

A page (a Markdown file under docs/, or README.md) is replayed top to bottom as one session:

* It runs in a fresh temporary directory, which holds links to the repository's `examples/`,
  `rules/`, `spec/` and `tests/` (so `promote validate rules/cann.toml` reads the repository's
  file); every other file a page uses, the page makes itself, before it uses it.
* A ```python fence runs in one namespace, fresh for the page and shared by its fences, in
  page order. A fence written as a doctest (`>>> ` lines) is checked as one. Otherwise each
  statement runs in turn, and an expression statement whose line ends in a comment that is a
  Python literal is checked against it:

      np.load("acc.i8.npy").tolist()     # [[-125, 0, 0, 1], [10, 125, 127, -128]]

* A ```console fence holds commands and what they print:

      $ promote query i8 u8 -f openvino
      promote: openvino@2026.4.1 refuses i8 add u8: ... (with -O promote_unsafe=true the result is i16)
      # exit 1

  The lines after a `$ promote ...` line are what it prints (stdout, then stderr), and an
  optional `# exit N` line is its exit code (0 when absent). Files the commands write are
  there for the fences after them.
* A line of a ```sh / ```bash / ```shell fence that starts `promote ` runs too (its output is not
  stated): it must answer, exit 0 or 1 (a refusal, differences), never 2, unless it asks a live
  framework that is not installed (`promote verify -f torch`). `< FILE` feeds it a file.
* A command (in a console fence, or a line of a ```sh / ```bash / ```shell fence) is read as a
  shell reads it (quotes, backslashes, `#` comments), and must mean what the runner runs: no
  unquoted `*`, `?` or `[` (file names), `$`, a backquote or a leading `~` (expansions), `<`, `>`,
  `&`, `|`, `;`, `(` or `)` (the shell's own syntax), and no unclosed quote (`--op <` is
  `--op '<'`, `f32?` is `'f32?'` or `weak:f32`). A line of a sh fence may feed a file (`< FILE`),
  and one that promote does not run (setting up: `python3 -m venv .venv && ...`) may join
  commands with `&&`, `||`, `;` or `|` and redirect to or from a file.

    python tools/doc_examples.py --check docs/frameworks/openvino.md   # exit 1 on a stale example
    python tools/doc_examples.py --write docs/frameworks/*.md          # refresh the printed lines
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import doctest
import io
import os
import re
import shlex
import sys
import tempfile
import textwrap
import tokenize
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^(\s*)```(\w*)\s*$")

#: fences whose lines are shell commands (read as a shell reads them; those that start `promote ` run)
SHELL_FENCES = ("sh", "bash", "shell")

#: what each unquoted character a shell treats specially means to it (the runner reads them as plain text)
SHELL_MEANINGS = {
    **dict.fromkeys("*?[", "expands to file names"),
    **dict.fromkeys("$`", "expands (a variable, a command's output)"),
    "~": "expands to a home directory",
    **dict.fromkeys(("<", ">", ">>", "<<", "<&", ">&", "<>", ">|"), "reads as a redirection"),
    "&": "reads as 'run in the background'",
    **dict.fromkeys(("|", "|&"), "reads as a pipe"),
    **dict.fromkeys((";", "&&", "||", ";;"), "reads as the end of a command"),
    **dict.fromkeys("()", "reads as a subshell"),
}

#: the shell's operators, longest first (what a shell splits words at, unquoted)
SHELL_OPERATORS = ("&&", "||", ";;", "|&", ">>", "<<", "<&", ">&", "<>", ">|", *"&|;<>()")

#: operators that join two commands (allowed in a line that promote does not run)
JOINING = ("&&", "||", ";", "|")

#: redirection operators (allowed with a file after them where the runner or the shell alone reads the line)
REDIRECTIONS = ("<", ">", ">>")

#: the repository's entries a page's directory links to, for examples that read them
LINKED = ("examples", "rules", "spec", "tests")


@dataclass
class Example:
    path: Path
    line: int            # 1-based line of the `$ promote` command
    command: str
    printed: list[str]
    exit_code: int


@dataclass
class ShellCommand:
    path: Path
    line: int            # 1-based line of the command in its sh fence
    command: str


@dataclass
class PythonBlock:
    path: Path
    line: int            # 1-based line of the fence's first line of code
    code: str


def fenced_blocks(text: str, lang: str) -> list[tuple[int, list[str]]]:
    """(first content line index, lines) of each fence of that language ("" = plain fence)."""
    return [(start, lines) for start, kind, lines in fenced_blocks_with_lang(text) if kind == lang]


def fenced_blocks_with_lang(text: str) -> list[tuple[int, str, list[str]]]:
    """(first content line index, language, lines) of every fence, in page order."""
    found, current, start, current_lang = [], None, 0, None
    for index, line in enumerate(text.splitlines()):
        fence = FENCE.match(line)
        if fence and current is None:
            current, current_lang, start = [], fence.group(2), index + 1
        elif fence:
            found.append((start, current_lang, current))
            current = None
        elif current is not None:
            current.append(line)
    return found


def _console(path: Path, start: int, lines: list[str]) -> list[Example]:
    out, current = [], None
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


def steps(path: Path) -> list[Example | PythonBlock]:
    """A page's console examples and python fences, in page order."""
    out: list = []
    for start, lang, lines in fenced_blocks_with_lang(path.read_text(encoding="utf-8")):
        if lang == "console":
            out += _console(path, start, lines)
        elif lang == "python":
            out.append(PythonBlock(path, start + 1, textwrap.dedent("\n".join(lines))))
        elif lang in SHELL_FENCES:
            out += [ShellCommand(path, start + offset + 1, line.strip()) for offset, line in enumerate(lines)
                    if line.strip().startswith("promote ")]
    return out


def examples(path: Path) -> list[Example]:
    return [s for s in steps(path) if isinstance(s, Example)]


def python_blocks(path: Path) -> list[PythonBlock]:
    return [s for s in steps(path) if isinstance(s, PythonBlock)]


ROOT = Path(__file__).resolve().parent.parent


@dataclass
class ShellToken:
    text: str
    operator: bool               # a shell operator (`&&`, `<`, ...), else a word
    expansions: tuple[str, ...]  # a word's unquoted characters that a shell expands


def shell_tokens(command: str) -> tuple[list[ShellToken], bool]:
    """A command line split as a shell splits it (quotes, backslashes, operators, a `#` comment ends it), and
    whether it ends inside a quote or after a lone backslash."""
    tokens: list[ShellToken] = []
    word, expansions, in_word = [], [], False
    quote, escaped, i = None, False, 0

    def end_word():
        nonlocal word, expansions, in_word
        if in_word:
            tokens.append(ShellToken("".join(word), False, tuple(expansions)))
        word, expansions, in_word = [], [], False

    while i < len(command):
        ch = command[i]
        if escaped or quote:
            if escaped:
                escaped = False
            elif ch == quote:
                quote = None
            elif ch == "\\" and quote == '"':
                escaped = True
            elif quote == '"' and ch in "$`":
                expansions.append(ch)
            word.append(ch)
            i += 1
            continue
        operator = next((op for op in SHELL_OPERATORS if command.startswith(op, i)), None)
        if operator:
            end_word()
            tokens.append(ShellToken(operator, True, ()))
            i += len(operator)
            continue
        if ch.isspace():
            end_word()
        elif ch == "#" and not in_word:
            break
        else:
            if ch == "\\":
                escaped = True
            elif ch in "'\"`":
                quote = ch
                expansions += ch if ch == "`" else ""  # a command's output, up to the closing backquote
            elif ch in "*?[$" or (ch == "~" and not in_word):
                expansions.append(ch)
            word.append(ch)
            in_word = True
        i += 1
    end_word()
    return tokens, bool(quote or escaped)


def shell_problems(command: str, *, runs: bool = True, feeds: bool = False) -> list[str]:
    """What a shell would make of a command line that the runner does not: each unquoted special character or
    operator with its meaning to a shell, and an unclosed quote. `runs`: the runner runs it as one promote
    command (else it only sets up, and may join commands and redirect); `feeds`: `< FILE` is allowed (a sh
    fence's line)."""
    tokens, unclosed = shell_tokens(command)
    found = []
    for at, token in enumerate(tokens):
        if not token.operator:
            found += [f"holds an unquoted {ch!r}, which a shell {SHELL_MEANINGS[ch]}" for ch in token.expansions]
            continue
        before = at > 0 and not tokens[at - 1].operator
        after = at + 1 < len(tokens) and not tokens[at + 1].operator
        if token.text in REDIRECTIONS and after and (not runs or (feeds and token.text == "<")):
            continue
        if token.text in JOINING and before and after and not runs:
            continue
        found.append(f"holds an unquoted {token.text!r}, which a shell {SHELL_MEANINGS[token.text]}")
    if unclosed:
        found.append("ends inside a quote (or after a lone backslash), which a shell reads as unfinished")
    return found


def shell_line_problems(path: Path) -> list[str]:
    """The commands of a page that a shell would read otherwise than the runner (see `shell_problems`)."""
    problems = []
    for start, lang, lines in fenced_blocks_with_lang(path.read_text(encoding="utf-8")):
        for offset, raw in enumerate(lines):
            line = raw.strip()
            if lang == "console" and line.startswith("$ "):
                command = line[2:]
            elif lang in SHELL_FENCES and line and not line.startswith("#"):
                command = line[2:] if line.startswith("$ ") else line
            else:
                continue
            runs = lang == "console" or command.startswith("promote ")
            for problem in shell_problems(command, runs=runs, feeds=lang in SHELL_FENCES):
                problems.append(f"{path}:{start + offset + 1}: `{command}` {problem}: quote it")
    return problems


def setup_files(path: Path, directory: Path) -> None:
    """Run the doc's file-making python fences in `directory` (the files a page makes, without its commands)."""
    here = os.getcwd()
    os.chdir(directory)
    try:
        namespace: dict = {"__name__": "__doc__"}
        for block in python_blocks(path):
            if "np.save(" in block.code:
                exec(compile(block.code, f"{path}:{block.line}", "exec"), namespace)
    finally:
        os.chdir(here)


@contextlib.contextmanager
def page_directory():
    """A fresh temporary directory with links to the repository's `LINKED` entries; the working directory
    while the page runs."""
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="promote-doc-") as tmp:
        for name in LINKED:
            if (ROOT / name).exists():
                os.symlink(ROOT / name, Path(tmp) / name)
        os.chdir(tmp)
        try:
            yield Path(tmp)
        finally:
            os.chdir(here)


def _checked_comments(code: str) -> dict[int, object]:
    """Line (1-based, in `code`) -> the literal a trailing comment on that line states."""
    out = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return out
    for tok in tokens:
        if tok.type == tokenize.COMMENT and tok.line[: tok.start[1]].strip():
            try:
                out[tok.start[0]] = ast.literal_eval(tok.string[1:].strip())
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                pass
    return out


def run_python(block: PythonBlock, namespace: dict) -> list[str]:
    """Run one python fence in the page's namespace: its problems (a doctest that fails, an exception, a value
    that is not what its comment says)."""
    where = f"{block.path}:{block.line}"
    if any(line.lstrip().startswith(">>> ") for line in block.code.splitlines()):
        test = doctest.DocTestParser().get_doctest(block.code, namespace, where, str(block.path), block.line - 1)
        report = io.StringIO()
        runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        runner.run(test, out=report.write, clear_globs=False)
        return [f"{where}: doctest fails:\n{report.getvalue()}"] if runner.failures else []
    try:
        tree = ast.parse(block.code, where)
    except SyntaxError as exc:
        return [f"{block.path}:{block.line + (exc.lineno or 1) - 1}: python block does not parse: {exc.msg}"]
    stated = _checked_comments(block.code)
    for stmt in tree.body:
        line, end = block.line + stmt.lineno - 1, stmt.end_lineno
        module = ast.Module([stmt], type_ignores=[])
        ast.increment_lineno(module, block.line - 1)  # tracebacks name the page's lines
        try:
            if isinstance(stmt, ast.Expr) and end in stated:
                value = eval(compile(ast.Expression(stmt.value), str(block.path), "eval"), namespace)
                want = stated[end]
                if value != want:
                    return [f"{block.path}:{line}: `{ast.unparse(stmt)}` is {value!r}, the doc says {want!r}"]
            else:
                exec(compile(module, str(block.path), "exec"), namespace)
        except Exception as exc:  # the doc's code failed: its problem, and the rest of the fence is moot
            return [f"{block.path}:{line}: `{ast.unparse(stmt)}` raises {type(exc).__name__}: {exc}"]
    return []


def replay(path: Path) -> tuple[list[tuple[Example, list[str], int]], list[str]]:
    """Run a page as the module docstring says: each console example with what it printed and its exit code,
    and the problems of its python fences."""
    ran, problems = [], []
    namespace: dict = {"__name__": "__doc__"}
    page = steps(path)  # read before the working directory changes
    with page_directory() as directory:
        for step in page:
            if isinstance(step, PythonBlock):
                with contextlib.redirect_stdout(io.StringIO()):
                    problems += run_python(step, namespace)
            elif isinstance(step, ShellCommand):
                problems += run_shell(step, directory)
            else:
                printed, code = run(step, directory)
                ran.append((step, printed, code))
    return ran, problems


#: what promote says when a command needs a live framework that is not installed
NOT_INSTALLED = "is not installed here"


def run_shell(command: ShellCommand, directory: Path) -> list[str]:
    """Run a line of a sh fence: its problem, if it did not answer (exit 2, a live framework aside). A line that a
    shell would read otherwise is not run (`shell_line_problems` reports it)."""
    if shell_problems(command.command, feeds=True):
        return []
    argv = shlex.split(command.command, comments=True)
    stdin = None
    if "<" in argv:
        at = argv.index("<")
        source = directory / argv[at + 1]
        if not source.is_file():
            return [(f"{command.path}:{command.line}: `{command.command}` reads {argv[at + 1]}, which the page has "
                     "not made")]
        stdin = source.read_text(encoding="utf-8")
        argv = argv[:at] + argv[at + 2:]
    printed, code = run(Example(command.path, command.line, shlex.join(argv), [], 0), directory, stdin)
    if code in (0, 1) or (code == 2 and any(NOT_INSTALLED in line for line in printed)):
        return []
    return [f"{command.path}:{command.line}: `{command.command}` exits {code}: {' / '.join(printed[-2:])}"]


def run(example: Example, directory: Path, stdin: str | None = None) -> tuple[list[str], int]:
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
        result = CliRunner().invoke(main, argv[1:], prog_name="promote", env=env, input=stdin)
    finally:
        os.chdir(here)
    printed = [line.strip() for line in (result.stdout + result.stderr).splitlines()]
    return printed, result.exit_code


def check(path: Path) -> list[str]:
    """Disagreements between a page's examples and what they do now, and the commands a shell would read otherwise."""
    ran, problems = replay(path)
    for ex, printed, code in ran:
        if printed != ex.printed or code != ex.exit_code:
            problems.append(f"{path}:{ex.line}: `{ex.command}` prints {printed} (exit {code}), "
                            f"the doc says {ex.printed} (exit {ex.exit_code})")
    return problems + shell_line_problems(path)


def write(path: Path) -> int:
    """Rewrite each example's printed lines and exit code with what it prints now; returns how many changed."""
    lines = path.read_text(encoding="utf-8").splitlines()
    ran, _ = replay(path)
    changed = 0
    for ex, printed, code in reversed(ran):
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
