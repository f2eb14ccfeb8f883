"""The command line. `run` is the console-script entry point: the common `promote query` and `promote cast`
invocations are run by `fast.py` without loading Click; everything else goes to the Click group in `group.py`,
whose commands (`commands/`) load only when invoked."""

from __future__ import annotations

import sys


def run():  # the console-script entry point
    from promote_cli.cli import fast

    code = fast.run(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from promote_cli.cli.group import main

    main()


def __getattr__(name: str):
    # `from promote_cli.cli import main` (and the group's other names) load Click only then
    if name in ("main", "COMMANDS", "PromoteGroup", "EXIT_USAGE", "EXIT_BROKEN_PIPE"):
        from promote_cli.cli import group

        return getattr(group, name)
    raise AttributeError(f"module 'promote_cli.cli' has no attribute {name!r}")


__all__ = ["EXIT_BROKEN_PIPE", "EXIT_USAGE", "main", "run"]
