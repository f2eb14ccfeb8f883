"""Option declarations shared by the commands, with shell completion read from data."""

from __future__ import annotations

import os
import sys

import click
from click.shell_completion import CompletionItem

from promote_cli.errors import UsageError


def _complete_framework(ctx, param, incomplete):
    import promote_cli as api

    return [CompletionItem(x) for x in api.framework_names() if x.startswith(incomplete)]


def _complete_dtype(ctx, param, incomplete):
    from promote_cli.vocab.dtypes import DTYPES

    prefix = ""
    for form in ("0d:", "weak:"):
        if incomplete.lower().startswith(form):
            prefix, incomplete = incomplete[: len(form)], incomplete[len(form):]
    names = [f"{prefix}{n}" for n in DTYPES if n.startswith(incomplete.lower())]
    if not prefix:
        names += [p for p in ("py:bool", "py:int", "py:float", "py:complex", "0d:", "weak:") if p.startswith(incomplete)]
    return [CompletionItem(n) for n in names]


def _complete_op(ctx, param, incomplete):
    import promote_cli as api

    fw = ctx.params.get("framework")
    if not fw:
        return []
    try:
        rs = api.load(fw)
    except Exception:  # completion never fails: a broken name or file completes nothing
        return []
    return [CompletionItem(o) for o in rs.op_index if o.startswith(incomplete)]


framework_option = click.option(
    "--framework", "-f", metavar="NAME[@VERSION]", envvar="PROMOTE_FRAMEWORK", shell_complete=_complete_framework,
    help="Framework ruleset (see `promote frameworks`); default from $PROMOTE_FRAMEWORK.")
op_option = click.option("--op", default="add", show_default=True, shell_complete=_complete_op,
                         help="The operation (API name or operator symbol, as the framework lists them).")
option_option = click.option(
    "--option", "-O", "options", multiple=True, metavar="KEY=VALUE",
    help="A framework attribute, e.g. -O promote_unsafe=true (repeatable).")
dtype_argument_completion = _complete_dtype
complete_framework = _complete_framework
complete_op = _complete_op


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


color_option = click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto",
                            show_default=True, help="Colour and boxes (auto: only on a terminal without NO_COLOR).")
