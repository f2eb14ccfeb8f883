"""Errors and exit codes shared by the engine, the kernels and the CLI.

`UsageError` is a malformed question (unknown dtype, framework or option, bad file):
exit code 2. `Refusal` is a well-formed question whose answer is "no" (the framework
does not promote the pair): exit code 1.
"""

EXIT_OK = 0
EXIT_NO = 1
EXIT_USAGE = 2


class PromoteError(Exception):
    """Base class of every error `promote` reports to its user as one line."""

    exit_code = EXIT_USAGE


class UsageError(PromoteError, ValueError):
    """A usage or input error: the question cannot be asked as written."""

    exit_code = EXIT_USAGE


class RuleFileError(UsageError):
    """A rule file that does not load: `FILE: KEY: what is wrong`."""


class RuleDefect(UsageError):
    """A rule file that loaded but fails while answering (an expression raised, a result outside
    its types): a defect of the file, reported naming file and rule, never taken for a refusal."""


class Refusal(PromoteError):
    """The framework refuses the pair (or the cast): the answer is "no"."""

    exit_code = EXIT_NO


class RulesHidden(UserWarning):
    """A rule file earlier on the rules path (a `PROMOTE_RULES_PATH` file) hides another of the same name (a
    shipped one): every answer for that name is the first file's. Warned once a process per hiding file."""


#: how the command line shows the API's warnings while it runs a command (`promote: note: MESSAGE` on stderr);
#: None: as Python shows warnings (`warnings.warn`)
show_note = None


def warn(warning: Warning) -> None:
    """Issue a warning of the API: `warnings.warn`, or the command line's note while it runs (`show_note`)."""
    if show_note is not None:
        show_note(str(warning))
        return
    import warnings

    warnings.warn(warning, stacklevel=3)


def one_line(text: str) -> str:
    """`text` on one printable line, as every message of `promote` is: bytes that are not UTF-8
    (a file name's surrogate escapes) as `\\xNN`, control characters as `\\n`, `\\t`, `\\r` or
    `\\xNN` (a path holding a newline stays on one line)."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:  # os.fsdecode's escape of an undecodable byte
            out.append(f"\\x{o - 0xDC00:02x}")
        elif 0xD800 <= o <= 0xDFFF:
            out.append(f"\\u{o:04x}")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif o < 0x20 or 0x7F <= o < 0xA0 or o in (0x2028, 0x2029):
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)
