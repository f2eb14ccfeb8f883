"""`promote query` and `promote cast` without Click, for the invocations scripts make thousands of times.

The console script asks `run(argv)` first. It takes the options `definition.py` declares for `query` and
`cast` (the declarations the Click commands are built from), anywhere among the operands or inputs, each
option and its value as two words (`query i8 u8 -f cann --op add`, `cast w.npy --to f16 -j 2`); an option
with an environment variable (`-f`) may be left to it, as the Click option allows. It prints
what the Click command prints by calling the same function (`answer.printed`; `casting.cast`), and reports
every error of the question as the Click group does (one line, the same words, the same exit code), never
asking it again. Anything else returns None before anything is done, and the Click group then handles the
whole invocation: another command, help, `--batch`, shell completion, an option given twice (except one
that may be given only once: that is an error reported here) or spelled another way (`-fcann`, `--op=add`,
`-j2`), a value, an operand or an input that begins with `-`, a value the option does not take (`--format
csv`, `--jobs 0`), a required option or argument missing, and standard streams that are not UTF-8 (Click
re-encodes those). `tests/test_fast_path.py` and `tests/test_fast_cast.py` run many invocations both ways
and compare stdout, stderr, the exit code (and a cast's files) byte for byte.
"""

from __future__ import annotations

import os
import sys

from promote_cli.cli import definition, streams
from promote_cli.cli.arguments import given_once
from promote_cli.errors import EXIT_USAGE, PromoteError, one_line

COMPLETION_VARIABLE = "_PROMOTE_COMPLETE"  # Click's shell completion for a program named `promote`

#: the options of a declared command that only its Click command handles
LEFT_TO_CLICK = {"query": {"batch"}}


def _words(argv: list[str], given: dict, options: dict) -> list[str] | None:
    """The positional words of `argv`, filling `given` (each option's empty value) from its options (`options`:
    each word -> its declaration). None for anything the Click path must handle: an unknown option, one given
    twice, a value missing, beginning with `-` or not among the choices. A repeated option that may be given
    only once is a UsageError."""
    positional = []
    words = iter(argv)
    for word in words:
        if not word.startswith("-"):
            positional.append(word)
            continue
        option = options.get(word)
        if option is None:
            return None
        if option.flag:
            if given[option.name]:
                return None
            given[option.name] = True
            continue
        value = next(words, None)
        if value is None or value.startswith("-"):
            return None
        if option.choices is not None and value not in option.choices:
            return None
        if option.multiple or option.once:
            given[option.name].append(value)
        elif given[option.name] is not None:
            return None
        else:
            given[option.name] = value
    return positional


def _value(option: definition.Option, value, environ):
    """An option's value once its words are read: the environment's or the default when not given; an integer
    for an option with a minimum (None: not one Click would take)."""
    if option.once:
        value = given_once(option.words, value)
    if value is None and option.envvar is not None:
        value = environ.get(option.envvar) or None
    if value is None:
        return option.default
    if option.minimum is not None:
        if not (value.isascii() and value.isdigit()) or int(value) < option.minimum:
            return None
        return int(value)
    return tuple(value) if option.multiple else value


def recognise(command: definition.Command, argv: list[str], environ) -> dict | None:
    """The parameters of `command` (by their declared names) for an invocation the Click command would take the
    same way, else None; a UsageError for one the Click command refuses with the same words."""
    if argv[:1] != [command.name] or COMPLETION_VARIABLE in environ:
        return None
    left = LEFT_TO_CLICK.get(command.name, ())
    declared = [o for o in command.options if o.name not in left]
    given: dict = {o.name: o.empty() for o in declared}
    positional = _words(argv[1:], given, {word: o for o in declared for word in o.words})
    if positional is None or (command.argument.required and not positional):
        return None
    call = {command.argument.name: tuple(positional)}
    for option in declared:
        call[option.name] = _value(option, given[option.name], environ)
        if call[option.name] is None and (option.required or (option.minimum is not None and given[option.name])):
            return None  # missing, or a number Click refuses: Click's own words
    return call


def _utf8(stream) -> bool:
    encoding = getattr(stream, "encoding", None)
    return bool(encoding) and encoding.replace("_", "-").lower() in ("utf-8", "utf8")


def run(argv: list[str]) -> int | None:
    """The exit code of a query or a cast this path did (its output written), or None: ask Click."""
    if not _utf8(sys.stdout) or not _utf8(sys.stderr):
        return None
    command = definition.CAST if argv[:1] == ["cast"] else definition.QUERY
    try:
        call = recognise(command, argv, os.environ)
        if call is None or (command is definition.CAST and call["to"] is None and not call["compare"]):
            return None  # (a cast without --to: Click's own words)
        streams.tolerant()
        if command is definition.CAST:
            from promote_cli.cli import casting

            return casting.cast(**call)
        return _query(call)
    except KeyboardInterrupt:
        return _said("\npromote: aborted\n", 130)  # as the Click group reports an interruption
    except BrokenPipeError:
        return streams.reader_gone()
    except PromoteError as exc:  # as the Click group reports what escapes a command
        lines = getattr(exc, "context_lines", None)
        return _said("".join(f"{line}\n" for line in [f"promote: {one_line(str(exc))}", *(lines() if lines else ())]),
                     exc.exit_code)
    except Exception as exc:  # noqa: BLE001 - a bug of ours, or standard output that cannot be written: one line
        if os.environ.get("PROMOTE_DEBUG"):
            import traceback

            traceback.print_exc()
        return _said(f"promote: {one_line(streams.failure(exc))}\n", EXIT_USAGE)


def _query(call: dict) -> int:
    """A query of the common shape, printed as the Click command prints it; its exit code."""
    from promote_cli.cli import answer

    previous = streams.noting()  # a rule file that hides another is said on stderr as it is loaded
    try:
        text, diagnostic, code = answer.printed(**call)
    finally:
        streams.stop_noting(previous)
    sys.stdout.write(text)
    sys.stdout.flush()
    if diagnostic is not None:
        sys.stderr.write(diagnostic + "\n")
        sys.stderr.flush()
    return code


def _said(text: str, code: int) -> int:
    """`code`, once `text` is on stderr (as far as stderr can take it)."""
    try:
        streams.write(text, err=True)
    except OSError:
        pass
    return code
