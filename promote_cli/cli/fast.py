"""`promote query` without Click, for the invocations scripts make thousands of times.

The console script asks `run(argv)` first. It answers only these shapes, the options anywhere among the
operands, each option and its value as two words:

    query A B [C ...] [-f|--framework FW] [--op OP] [-O|--option KEY=VALUE]... [--format text|json]

(`-f` may be left to `$PROMOTE_FRAMEWORK`, as the Click option allows). It prints what the Click command
prints by calling the same function (`answer.printed`). Anything else returns None before anything is
written, and the Click group then handles the whole invocation: another command, help, `--batch`, shell
completion, an option given twice or spelled another way (`-fcann`, `--op=add`), a value or an operand that
begins with `-`, standard streams that are not UTF-8 (Click re-encodes those), and every error (the
question is asked again there and reported as the contract says). `tests/test_fast_path.py` runs many
invocations both ways and compares stdout, stderr and the exit code byte for byte.
"""

from __future__ import annotations

import os
import sys

from promote_cli.cli import answer, streams
from promote_cli.errors import EXIT_USAGE, one_line

#: each option this path knows: the parameter it sets
OPTIONS = {"-f": "framework", "--framework": "framework", "--op": "op", "--format": "fmt",
           "-O": "option_pairs", "--option": "option_pairs"}
FORMATS = ("text", "json")
FRAMEWORK_VARIABLE = "PROMOTE_FRAMEWORK"
COMPLETION_VARIABLE = "_PROMOTE_COMPLETE"  # Click's shell completion for a program named `promote`


def recognise(argv: list[str], environ) -> dict | None:
    """The arguments of `answer.printed` for an invocation of one of the shapes above, else None."""
    if len(argv) < 3 or argv[0] != "query" or COMPLETION_VARIABLE in environ:
        return None
    given: dict = {"framework": None, "op": None, "fmt": None, "option_pairs": []}
    operands = []
    words = iter(argv[1:])
    for word in words:
        if not word.startswith("-"):
            operands.append(word)
            continue
        name = OPTIONS.get(word)
        value = next(words, None)
        if name is None or value is None or value.startswith("-"):
            return None
        if name == "option_pairs":
            given[name].append(value)
        elif given[name] is not None:
            return None
        else:
            given[name] = value
    if given["framework"] is None:
        given["framework"] = environ.get(FRAMEWORK_VARIABLE) or None
        if given["framework"] is None:
            return None
    if given["fmt"] is None:
        given["fmt"] = "text"
    elif given["fmt"] not in FORMATS:
        return None
    if given["op"] is None:
        given["op"] = "add"
    given["operands"] = tuple(operands)
    return given


def _utf8(stream) -> bool:
    encoding = getattr(stream, "encoding", None)
    return bool(encoding) and encoding.replace("_", "-").lower() in ("utf-8", "utf8")


def run(argv: list[str]) -> int | None:
    """The exit code of a query this path answered (its output written), or None: ask Click."""
    call = recognise(argv, os.environ)
    if call is None or not _utf8(sys.stdout) or not _utf8(sys.stderr):
        return None
    try:
        text, diagnostic, code = answer.printed(**call)
    except KeyboardInterrupt:
        sys.stderr.write("\npromote: aborted\n")  # as the Click group reports an interruption
        return 130
    except Exception:  # noqa: BLE001 - every error is reported by the Click path, which asks again
        return None
    streams.tolerant()
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
        if diagnostic is not None:
            sys.stderr.write(diagnostic + "\n")
            sys.stderr.flush()
    except BrokenPipeError:
        return streams.reader_gone()
    except Exception as exc:  # noqa: BLE001 - writing failed (a full disk): one line, as the Click group says it
        try:
            sys.stderr.write(f"promote: {one_line(streams.internal_error(exc))}\n")
            sys.stderr.flush()
        except OSError:
            pass
        return EXIT_USAGE
    return code
