"""`promote query` and `promote cast` without Click, for the invocations scripts make thousands of times.

The console script asks `run(argv)` first. It takes only these shapes, the options anywhere among the
operands or inputs, each option and its value as two words:

    query A B [C ...] [-f|--framework FW] [--op OP] [-O|--option KEY=VALUE]... [--format text|json]
    cast IN... --to T [-o|--output OUT] [--from F] [--mode tosa|extended] [--saturate] [--force]
         [--format text|json] [--fail-on overflow|inexact|nan]... [-j|--jobs N]

(`-f` may be left to `$PROMOTE_FRAMEWORK`, as the Click option allows). It prints what the Click command
prints by calling the same function (`answer.printed`; `casting.cast`). Anything else returns None before
anything is done, and the Click group then handles the whole invocation: another command, help, `--batch`,
shell completion, an option given twice or spelled another way (`-fcann`, `--op=add`, `-j2`), a value, an
operand or an input that begins with `-`, a value that is not one of the option's choices (`--jobs 0`),
standard streams that are not UTF-8 (Click re-encodes those), and every error of a query (the question is
asked again there and reported as the contract says). A cast, once begun, reports its own errors as the
Click command does. `tests/test_fast_path.py` and `tests/test_fast_cast.py` run many invocations both
ways and compare stdout, stderr, the exit code (and a cast's files) byte for byte.
"""

from __future__ import annotations

import os
import sys

from promote_cli.cli import streams
from promote_cli.errors import EXIT_USAGE, PromoteError, one_line

#: each option this path knows: the parameter it sets
OPTIONS = {"-f": "framework", "--framework": "framework", "--op": "op", "--format": "fmt",
           "-O": "option_pairs", "--option": "option_pairs"}
FORMATS = ("text", "json")
FRAMEWORK_VARIABLE = "PROMOTE_FRAMEWORK"
COMPLETION_VARIABLE = "_PROMOTE_COMPLETE"  # Click's shell completion for a program named `promote`

#: each option of `cast` this path knows that takes a value: the parameter it sets
CAST_OPTIONS = {"--to": "to", "-o": "output", "--output": "output", "--from": "from_", "--mode": "mode",
                "--format": "fmt", "--fail-on": "fail_on", "-j": "jobs", "--jobs": "jobs"}
#: the flags of `cast` (no value)
CAST_FLAGS = {"--saturate": "saturate", "--force": "force"}
#: the values the Click command's choices allow
CAST_CHOICES = {"mode": ("tosa", "extended"), "fmt": ("text", "json"), "fail_on": ("overflow", "inexact", "nan")}


def _words(argv: list[str], given: dict, options: dict, flags: dict | None = None,
           choices: dict | None = None) -> list[str] | None:
    """The positional words of `argv`, filling `given` from its options (`options`: the word -> the parameter,
    its value the next word; a parameter whose `given` value is a list may repeat; `flags`: the word -> the
    parameter set True; `choices`: the values a parameter allows). None for anything the Click path must
    handle: an unknown option, one given twice, a value missing, beginning with `-` or not among the choices."""
    flags, choices = flags or {}, choices or {}
    positional = []
    words = iter(argv)
    for word in words:
        if not word.startswith("-"):
            positional.append(word)
            continue
        flag = flags.get(word)
        if flag is not None:
            if given[flag]:
                return None
            given[flag] = True
            continue
        name = options.get(word)
        value = next(words, None)
        if name is None or value is None or value.startswith("-"):
            return None
        if name in choices and value not in choices[name]:
            return None
        if isinstance(given[name], list):
            given[name].append(value)
        elif given[name] is not None:
            return None
        else:
            given[name] = value
    return positional


def recognise(argv: list[str], environ) -> dict | None:
    """The arguments of `answer.printed` for an invocation of one of the shapes above, else None."""
    if len(argv) < 3 or argv[0] != "query" or COMPLETION_VARIABLE in environ:
        return None
    given: dict = {"framework": None, "op": None, "fmt": None, "option_pairs": []}
    operands = _words(argv[1:], given, OPTIONS, choices={"fmt": FORMATS})
    if operands is None:
        return None
    if given["framework"] is None:
        given["framework"] = environ.get(FRAMEWORK_VARIABLE) or None
        if given["framework"] is None:
            return None
    if given["fmt"] is None:
        given["fmt"] = "text"
    if given["op"] is None:
        given["op"] = "add"
    given["operands"] = tuple(operands)
    return given


def recognise_cast(argv: list[str], environ) -> dict | None:
    """The arguments of `casting.cast` for an invocation of the cast shape above, else None."""
    if len(argv) < 4 or argv[0] != "cast" or COMPLETION_VARIABLE in environ:
        return None
    given: dict = {"to": None, "output": None, "from_": None, "mode": None, "saturate": False, "force": False,
                   "fmt": None, "fail_on": [], "jobs": None}
    inputs = _words(argv[1:], given, CAST_OPTIONS, CAST_FLAGS, CAST_CHOICES)
    if not inputs or given["to"] is None:
        return None
    if given["jobs"] is not None:
        if not (given["jobs"].isascii() and given["jobs"].isdigit()) or int(given["jobs"]) < 1:
            return None
        given["jobs"] = int(given["jobs"])
    given["mode"] = given["mode"] or "tosa"
    given["fmt"] = given["fmt"] or "text"
    given["inputs"] = tuple(inputs)
    given["fail_on"] = tuple(given["fail_on"])
    return given


def _utf8(stream) -> bool:
    encoding = getattr(stream, "encoding", None)
    return bool(encoding) and encoding.replace("_", "-").lower() in ("utf-8", "utf8")


def run(argv: list[str]) -> int | None:
    """The exit code of a query or a cast this path did (its output written), or None: ask Click."""
    if argv[:1] == ["cast"]:
        return _cast(argv)
    call = recognise(argv, os.environ)
    if call is None or not _utf8(sys.stdout) or not _utf8(sys.stderr):
        return None
    from promote_cli.cli import answer

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
            sys.stderr.write(f"promote: {one_line(streams.failure(exc))}\n")
            sys.stderr.flush()
        except OSError:
            pass
        return EXIT_USAGE
    return code


def _cast(argv: list[str]) -> int | None:
    """A cast of the common shape, run as the Click command runs it (errors reported as the Click group
    reports what escapes a command); None for any other."""
    call = recognise_cast(argv, os.environ)
    if call is None or not _utf8(sys.stdout) or not _utf8(sys.stderr):
        return None
    streams.tolerant()
    try:
        from promote_cli.cli import casting

        return casting.cast(**call)
    except KeyboardInterrupt:
        return _said("\npromote: aborted\n", 130)
    except BrokenPipeError:
        return streams.reader_gone()
    except PromoteError as exc:
        lines = getattr(exc, "context_lines", None)
        return _said("".join(f"{line}\n" for line in [f"promote: {one_line(str(exc))}", *(lines() if lines else ())]),
                     exc.exit_code)
    except Exception as exc:  # noqa: BLE001 - a bug of ours: one line, the traceback on request
        if os.environ.get("PROMOTE_DEBUG"):
            import traceback

            traceback.print_exc()
        return _said(f"promote: {one_line(streams.failure(exc))}\n", EXIT_USAGE)


def _said(text: str, code: int) -> int:
    """`code`, once `text` is on stderr (as far as stderr can take it)."""
    try:
        streams.write(text, err=True)
    except OSError:
        pass
    return code
