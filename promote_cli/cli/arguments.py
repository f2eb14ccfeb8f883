"""The values of the shared options, parsed (no Click here: `options.py` declares the options, and the
fast `promote query` path in `fast.py` parses the same values with these functions)."""

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


def color_wanted(color: str) -> bool:
    """--color auto|always|never, honouring NO_COLOR and whether stdout is a terminal."""
    if color == "always":
        return True
    if color == "never" or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()
