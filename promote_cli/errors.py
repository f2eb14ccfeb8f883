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
