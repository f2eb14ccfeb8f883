"""The standard streams of a `promote` process, as both entry paths treat them (the Click group in
`group.py` and the Click-free `promote query` in `fast.py`): text the terminal cannot show is escaped, a
reader that went away ends the process quietly, an internal error is one line."""

from __future__ import annotations

import errno
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


def noting():
    """Show the API's warnings as notes (`promote: note: MESSAGE` on stderr) while a command runs; returns what
    to give `stop_noting` after it."""
    from promote_cli import errors

    previous, errors.show_note = errors.show_note, _note
    return previous


def stop_noting(previous) -> None:
    from promote_cli import errors

    errors.show_note = previous


def _note(message: str) -> None:
    from promote_cli.errors import one_line

    sys.stderr.write(f"promote: note: {one_line(message)}\n")
    sys.stderr.flush()


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


#: the errors of a write that the output's file system refused (every file a command writes itself is
#: reported by the command: what escapes it is standard output's)
_OUTPUT_FULL = {getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EFBIG", "EIO") if hasattr(errno, name)}


def failure(exc: BaseException) -> str:
    """The message for what escaped a command: standard output that cannot be written (a full disk), or a bug."""
    if isinstance(exc, OSError) and exc.errno in _OUTPUT_FULL:
        return f"cannot write standard output: {exc.strerror or type(exc).__name__}"
    return internal_error(exc)
