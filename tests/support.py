"""Helpers shared by the test modules: loading a script from tools/, running the CLI in-process, bounding a
case's time, reading spec pages, and the only two ways a test may skip (tests/skip_guard.py enforces them)."""

from __future__ import annotations

import contextlib
import importlib.util
import signal
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def load_tool(name: str):
    """Import tools/NAME.py as module NAME (registered first: dataclasses look their module up)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class TooSlow(Exception):
    """A case ran over its `time_limit`."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Interrupt a case that computes too long (Python-level loops; a single huge C operation finishes first). The
    limit is the process's CPU time, so a busy machine slows a case without failing it; a case that waits instead
    of computing (a FIFO that never answers) is stopped after ten times as long on the wall clock."""
    def stop(signum, frame):
        raise TooSlow(f"over {seconds} s of CPU time" if signum == signal.SIGPROF else f"over {10 * seconds} s")

    old = {sig: signal.signal(sig, stop) for sig in (signal.SIGPROF, signal.SIGALRM)}
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, 10 * seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, handler in old.items():
            signal.signal(sig, handler)


def error_lines(stderr: str) -> list[str]:
    """The lines of stderr that are not notes (`promote: note: FILE hides OTHER`, said once beside an error's one
    line when a rule file on PROMOTE_RULES_PATH shadows a shipped one)."""
    return [line for line in stderr.splitlines() if not line.startswith("promote: note: ")]


def run_cli(*args: str):
    """Run `promote ARGS` in-process: (exit code, stdout, stderr); an unexpected exception is raised."""
    from click.testing import CliRunner

    from promote_cli.cli import main

    result = CliRunner().invoke(main, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


SPEC = ROOT / "spec"

#: The start of every skip reason for an absent spec page that the repository does not hold.
SPEC_PAGE_ABSENT = "spec page absent:"

#: The start of every skip reason for a live test whose framework is not installed.
FRAMEWORK_ABSENT = "framework not installed:"


def spec_page(name: str) -> Path:
    """A spec page the repository holds: spec/NAME (a missing one fails the test that reads it)."""
    path = SPEC / name
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the repository holds this spec page, but it is missing")
    return path


def outside_spec_page(name: str) -> Path:
    """A spec page that the repository may not hold (spec/README.md says why), where
    tools/import_spec_tables.py finds it; the calling test skips, naming it, when it is absent."""
    tools = load_tool("import_spec_tables")
    if name not in tools.OUTSIDE_PAGES:
        raise ValueError(f"{name} is not a page kept outside the repository: read it with spec_page()")
    try:
        return tools.find_spec(name)
    except tools.SpecError:
        dirs = ", ".join(map(str, tools.SPEC_DIRS))
        pytest.skip(f"{SPEC_PAGE_ABSENT} {name}, which the repository does not hold ({tools.OUTSIDE_PAGES[name]}), "
                    f"is not in {dirs} (set $PROMOTE_SPEC_DIR to its directory)")


def require_framework(probe) -> None:
    """Skip a live test when its framework (a promote_cli.probes module's PACKAGE) is not installed."""
    if probe.version() is None:
        pytest.skip(f"{FRAMEWORK_ABSENT} {probe.PACKAGE}")
