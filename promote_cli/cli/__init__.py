"""The command line. `run` is the console-script entry point: the common `promote query` and `promote cast`
invocations are run by `fast.py` without loading Click; everything else goes to the Click group in `group.py`,
whose commands (`commands/`) load only when invoked."""

from __future__ import annotations

import sys


def run(leave=sys.exit):
    """Run the command in `sys.argv`; `leave(code)` ends a command the fast path did (default: `sys.exit`)."""
    from promote_cli.cli import fast

    code = fast.run(sys.argv[1:])
    if code is not None:
        leave(code)
        return
    from promote_cli.cli.group import main

    main()


def console():  # the console-script entry point, and `python -m promote_cli`
    """`run`, ending a query or a cast of the fast path at once, without the interpreter's teardown (freeing
    every object and module: 35 ms after a cast, numpy loaded): by then its output is written and flushed,
    its files are closed and renamed, and no process or thread of it is still working."""
    run(leave=_leave_now)


def _leave_now(code: int) -> None:
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass  # what could not be written was reported when it was written
    os._exit(code)


def __getattr__(name: str):
    # `from promote_cli.cli import main` (and the group's other names) load Click only then
    if name in ("main", "COMMANDS", "PromoteGroup", "EXIT_USAGE", "EXIT_BROKEN_PIPE"):
        from promote_cli.cli import group

        return getattr(group, name)
    raise AttributeError(f"module 'promote_cli.cli' has no attribute {name!r}")


__all__ = ["EXIT_BROKEN_PIPE", "EXIT_USAGE", "console", "main", "run"]
