"""The values of the shared options, parsed (no Click here: `definition.py` declares the options, `options.py`
builds Click's from it, and the Click-free path in `fast.py` parses the same values with these functions)."""

from __future__ import annotations

import os
import sys

from promote_cli.errors import UsageError


def parse_options(pairs) -> dict:
    """`KEY=VALUE` strings to a dict; UsageError for a malformed one."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"-O takes KEY=VALUE, got {pair!r}")
        out[key.strip()] = value.strip()
    return out


MAX_TYPES = 1000  # far more than the vocabulary's operands: a longer list must repeat some


def parse_types(text: str | None) -> list[str] | None:
    """`--types A,B,...` as a list (None when not given); a list of repeats is refused early."""
    if text is None:
        return None
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise UsageError("--types lists no operand (give A,B,...)")
    if len(items) > MAX_TYPES:
        raise UsageError(f"--types lists {len(items)} operands; a table has at most one row per operand")
    return items


def require_framework(framework: str | None) -> str:
    if not framework:
        raise UsageError("which framework? give -f NAME (see `promote frameworks`)")
    return framework


def framework_options(framework: str | None, pairs=()) -> tuple[str, dict]:
    """`-f NAME[@VERSION][:KEY=VALUE,...]` and the `-O KEY=VALUE` pairs: the ruleset's name and every option
    (a `--diff` side's syntax, `promote_cli.parse_side`). UsageError for no framework, a malformed option, or a
    key that `-f` and `-O` give different values."""
    import promote_cli

    label, name, own = promote_cli.parse_side(require_framework(framework))
    options = parse_options(pairs)
    for key, value in own.items():
        if options.get(key, value) != value:
            raise UsageError(f"-f {label} and -O {key}={options[key]} give {key} two values; give it once")
    return name, {**options, **own}


def framework_alone(framework: str | None, command: str) -> str | None:
    """`-f NAME[@VERSION]` of a command that takes no ruleset options (None when not given); UsageError for
    options given with the name."""
    if framework is None:
        return None
    import promote_cli

    label, name, own = promote_cli.parse_side(framework)
    if own:
        raise UsageError(f"{command} takes no ruleset options: -f {name}, not -f {label}")
    return name


def given_once(words: tuple[str, ...], values) -> str | None:
    """The value of an option that may be given once (None when it is not given); UsageError when repeated."""
    if len(values) > 1:
        spelled = "/".join(sorted(words, key=len))
        raise UsageError(f"{spelled} given {len(values)} times ({', '.join(values)}); give it once")
    return values[0] if values else None


def color_wanted(color: str) -> bool:
    """--color auto|always|never, honouring NO_COLOR and whether stdout is a terminal."""
    if color == "always":
        return True
    if color == "never" or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()
