"""Checking rule files as the loader does, reporting every problem instead of the first.

The loader stops at its first error (`FILE: KEY: what is wrong`). This module wraps it: it
loads the file, and when a load fails it takes the problem's KEY, sets that piece of the file
aside (a list element, a named entry of a section, or a top-level key; a required key is
replaced by a placeholder) and loads again, until the rest loads. So every problem is found
by the loader itself, with its own message, and nothing here restates the schema.

A problem that only shows once an earlier piece is set aside (a rule naming a table that
did not load) is reported too: it is a real problem of the file as written.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass, field
from pathlib import Path

from promote_cli.errors import RuleFileError, UsageError

MAX_PROBLEMS = 1000
# Keys the loader requires: set aside means replaced by a value it accepts.
_PLACEHOLDERS = {"name": "placeholder", "version": "0", "types": []}
_KEY = re.compile(r"^(?P<top>[A-Za-z_][\w-]*)(?:\[(?P<index>\d+)\](?: \((?P<label>.*?)\))?|\.(?P<entry>[^.\[\s]+))?")
_CLAUSE_KEY = re.compile(r"^((?:rules|after)\[\d+\] \(.*?\)(?:\.\w+)?): ")


@dataclass
class Problem:
    """One problem of one rule file; `column` (1-based) locates it inside an expression."""

    file: str
    key: str
    message: str
    column: int | None = None

    def line(self) -> str:
        shown = self.column is None or f"column {self.column}" in self.message  # the compiler may say it
        where = "" if shown else f" (column {self.column})"
        key = f"{self.key}: " if self.key else ""
        return f"{self.file}: {key}{self.message}{where}"

    def to_dict(self) -> dict:
        return {"file": self.file, "key": self.key, "message": self.message, "column": self.column}


@dataclass
class FileCheck:
    """The verdict on one file."""

    file: str
    name: str | None = None
    version: str | None = None
    problems: list[Problem] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.problems


def check_file(path: str | Path) -> FileCheck:
    """Every problem of one rule file (merged with its `extends` base, as the registry loads it)."""
    from promote_cli.oracle import registry
    from promote_cli.oracle.loader import build

    path = Path(path)
    label = str(path)
    result = FileCheck(label)
    try:
        raw = registry._raw(path, registry.rule_files())  # TOML errors and the `extends` chain
    except RuleFileError as exc:
        result.problems.append(_problem(label, str(exc)))
        return result
    except UsageError as exc:  # an `extends` naming an unknown ruleset
        result.problems.append(Problem(label, "extends", str(exc)))
        return result
    original = raw
    raw = copy.deepcopy(raw)
    positions: dict[str, list[int]] = {}  # list section -> original index of each remaining element
    seen: set[str] = set()
    while len(result.problems) < MAX_PROBLEMS:
        try:
            rs = build(raw, label)
        except RuleFileError as exc:
            message = str(exc)
            if message in seen:  # setting the piece aside changed nothing: stop rather than loop
                break
            seen.add(message)
            problem = _problem(label, message)
            _renumber(problem, positions)
            _locate(problem, original)
            result.problems.append(problem)
            if not _set_aside(raw, problem.key, positions, message):
                break
            continue
        if not result.problems:
            result.name, result.version = rs.name, rs.version
            _check_file_name(result, path, rs)
        break
    return result


def check_files(paths) -> list[FileCheck]:
    return [check_file(p) for p in paths]


def _problem(label: str, message: str) -> Problem:
    """Split `FILE: KEY: what` (the loader's form) into a Problem."""
    prefix = f"{label}: "
    rest = message[len(prefix):] if message.startswith(prefix) else message
    if rest.startswith(("not ", "cannot ", "too large")):  # the file as a whole: not TOML, not UTF-8, unreadable
        return Problem(label, "", rest)
    clause = _CLAUSE_KEY.match(rest)  # `rules[2] (NAME).if: ...`: the name may hold anything
    if clause:
        return Problem(label, clause[1], rest[clause.end():])
    key, sep, what = rest.partition(": ")
    return Problem(label, key, what) if sep else Problem(label, "", rest)


def _renumber(problem: Problem, positions: dict[str, list[int]]) -> None:
    """Keys name list elements by their index in what is left; report the index in the file."""
    match = _KEY.match(problem.key)
    if match and match["index"] is not None and match["top"] in positions:
        index = int(match["index"])
        original = positions[match["top"]]
        if index < len(original):
            start, end = match.span("index")
            problem.key = problem.key[:start] + str(original[index]) + problem.key[end:]


def _set_aside(raw: dict, key: str, positions: dict[str, list[int]], message: str) -> bool:
    """Remove (or replace) the piece of `raw` that `key` names; False when there is nothing to remove."""
    match = _KEY.match(key)
    if not match:
        return False
    top = match["top"]
    if top not in raw:
        if top in _PLACEHOLDERS:  # a required key that is missing
            raw[top] = copy.deepcopy(_PLACEHOLDERS[top])
            return True
        return False
    value = raw[top]
    if match["index"] is not None and isinstance(value, list):
        # the key was renumbered to the file's index: find the element by its original position
        original = int(match["index"])
        order = positions.setdefault(top, list(range(len(value))))
        if original in order:
            at = order.index(original)
            del value[at]
            del order[at]
            return True
        return False
    if match["entry"] is not None and isinstance(value, dict) and match["entry"] in value:
        del value[match["entry"]]
        return True
    if match["entry"] is not None and isinstance(value, list) and top in ("rules", "after"):
        # `rules.NAME` (a reference check): the clause of that name
        for at, clause in enumerate(value):
            if isinstance(clause, dict) and clause.get("name") == match["entry"]:
                order = positions.setdefault(top, list(range(len(value))))
                del value[at]
                del order[at]
                return True
    if top in _PLACEHOLDERS:
        if raw[top] == _PLACEHOLDERS[top]:
            return False
        raw[top] = copy.deepcopy(_PLACEHOLDERS[top])
        return True
    del raw[top]
    return True


def _locate(problem: Problem, raw: dict) -> None:
    """For a problem inside a rule expression, the 1-based column of the offending token."""
    match = re.match(r"^(rules|after)\[(\d+)\](?: \(.*\))?\.(if|result|weak)$", problem.key)
    if not match:
        return
    clauses = raw.get(match[1])
    index = int(match[2])
    if not isinstance(clauses, list) or index >= len(clauses) or not isinstance(clauses[index], dict):
        return
    text = clauses[index].get(match[3])
    if isinstance(text, str):
        problem.column = expression_column(text, problem.message)


def expression_column(text: str, message: str) -> int | None:
    """Where in `text` the loader's complaint `message` points (syntax error, unknown name or function)."""
    lead = len(text) - len(text.lstrip())
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        return lead + exc.offset if exc.offset else None
    named = re.match(r"unknown (?:name|function) '([^']*)'", message)
    banned = re.match(r"(\w+) is not allowed", message)
    for node in ast.walk(tree):
        if named and isinstance(node, ast.Name) and node.id == named[1]:
            return lead + node.col_offset + 1
        if banned and type(node).__name__ == banned[1] and hasattr(node, "col_offset"):
            return lead + node.col_offset + 1
    return None


def _check_file_name(result: FileCheck, path: Path, rs) -> None:
    """What the registry checks when it loads a file by name: the name and version match the file's."""
    stem_name, _, stem_version = path.stem.partition("@")
    if rs.name != stem_name:
        result.problems.append(Problem(result.file, "name", f"{rs.name!r} does not match the file name {path.name!r}"))
    if stem_version and rs.version != stem_version:
        result.problems.append(Problem(result.file, "version",
                                       f"{rs.version!r} does not match the file name {path.name!r}"))
