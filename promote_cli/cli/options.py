"""Option declarations shared by the commands, with shell completion read from data. What the options'
values mean is parsed in `arguments.py` (no Click there: the fast `promote query` path uses it too)."""

from __future__ import annotations

import click
from click.shell_completion import CompletionItem

from promote_cli.cli.arguments import (  # noqa: F401  (the commands import them from here)
    MAX_TYPES,
    color_wanted,
    parse_options,
    parse_types,
    require_framework,
)


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


color_option = click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto",
                            show_default=True, help="Colour and boxes (auto: only on a terminal without NO_COLOR).")
