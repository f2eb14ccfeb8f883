"""One invocation of `promote`, run in this process by either entry path, its standard streams captured: what
the driver processes of tests/test_fast_path.py and tests/test_fast_cast.py run for each case, to compare the
Click-free path (`promote_cli.cli.run`) with the Click group. Importing it installs a spy on `fast.run` that
records whether the fast path answered."""

from __future__ import annotations

import io
import sys

import promote_cli.cli
from promote_cli.cli import fast

#: for each invocation since the last `clear()`: whether `fast.run` answered it (True) or left it to Click
answered: list[bool] = []
_real_run = fast.run


def _spy(argv):
    code = _real_run(argv)
    answered.append(code is not None)
    return code


fast.run = _spy


def invoke(path: str, argv: list[str]) -> None:
    """Run `argv` by the console script's path ("fast": the fast path first) or by the Click group ("click")."""
    if path == "fast":
        sys.argv = ["promote", *argv]
        promote_cli.cli.run()
    else:
        from promote_cli.cli.group import main

        main.main(args=list(argv), prog_name="promote")


def run_case(path: str, case: dict) -> dict:
    """Run `case["argv"]` with stdout to `case["stdout"]` (a path) or captured, both streams in `case["encoding"]`
    (default UTF-8): its stdout and stderr bytes, exit code, and whether the fast path answered it."""
    answered.clear()
    raw_out = open(case["stdout"], "wb") if case.get("stdout") else io.BytesIO()
    err = io.BytesIO()
    enc = case.get("encoding", "utf-8")
    sys.stdout = io.TextIOWrapper(raw_out, encoding=enc)
    sys.stderr = io.TextIOWrapper(err, encoding=enc)
    try:
        invoke(path, case["argv"])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    try:
        sys.stdout.flush()
    except OSError:
        pass
    sys.stderr.flush()
    out = b"" if case.get("stdout") else raw_out.getvalue()
    result = {"out": out, "err": err.getvalue(), "code": code, "fast": bool(answered and answered[0])}
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__  # (the wrappers close what they wrap once dropped)
    return result
