"""Probes: modules that ask a real framework and produce recordings (see docs/recordings.md)."""

from __future__ import annotations

import json
import os
import platform
import tempfile

from promote_cli.errors import UsageError

#: the keys of a recording that hold cases, written one case per line, in this order, last
#: (``expressions``: an expression recording's cases, docs/recordings.md).
CASE_LISTS = ("nary", "cases", "expressions")


def write_recording(data: dict, path: str) -> None:
    """Write a recording with one case per line (``nary`` cases too), atomically."""
    head = {k: v for k, v in data.items() if k not in CASE_LISTS}
    head.setdefault("python", platform.python_version())
    lists = [k for k in CASE_LISTS if k in data]
    text = "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in head.items())
    lines = []
    for n, key in enumerate(lists):
        cases = data[key]
        lines.append(text + f", {json.dumps(key)}: [" if n == 0 else f"], {json.dumps(key)}: [")
        lines += [" " + json.dumps(c, ensure_ascii=False) + ("," if i < len(cases) - 1 else "")
                  for i, c in enumerate(cases)]
    lines.append("]}")
    write_lines(lines, path)


def write_lines(lines: list[str], path: str) -> None:
    """Write a recording's lines to `path` atomically (a temporary file beside it, then renamed)."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".promote-", suffix=".json.tmp", dir=directory)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write the recording: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a recording is an ordinary file
        os.replace(tmp, path)
    except OSError as exc:
        os.unlink(tmp)
        raise UsageError(f"{path}: cannot write the recording: {exc.strerror or exc}") from None
    except BaseException:
        os.unlink(tmp)
        raise
