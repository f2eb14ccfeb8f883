"""The standard streams of a `promote` process, as both entry paths treat them (the Click group in
`group.py` and the Click-free `promote query` in `fast.py`): text the terminal cannot show is escaped, a
reader that went away ends the process quietly, an internal error is one line."""

from __future__ import annotations

import os
import sys

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for `git log | head -1`; never 1 ("refused")


def tolerant() -> None:
    """Text that the terminal's encoding cannot show is escaped, never an error."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass


def write(text: str, err: bool = False) -> None:
    """Text on stdout (stderr when `err`) as it is, flushed at once (as `click.echo` writes to a UTF-8 stream)."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text)
    stream.flush()


def reader_gone() -> int:
    """The reader of stdout went away (`promote table | head -1`): stop quietly, not as a refusal."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the interpreter's last flush does not fail again
    except (OSError, ValueError, AttributeError):
        pass
    return EXIT_BROKEN_PIPE


def internal_error(exc: BaseException) -> str:
    """The message for a bug of ours (the traceback only with PROMOTE_DEBUG set)."""
    return f"internal error: {type(exc).__name__}: {exc} (set PROMOTE_DEBUG=1 for the traceback)"
