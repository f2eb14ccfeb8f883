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
    """Ruleset names, `NAME@VERSION` included; as typed in any case."""
    import promote_cli as api

    low = incomplete.lower()
    return [CompletionItem(x) for x in api.framework_names() if x.lower().startswith(low)]


#: the operand forms a dtype can take (the contract's `DTYPE?` is left out: a shell globs `?`)
OPERAND_FORMS = ("0d:", "weak:")
PYTHON_SCALARS = ("py:bool", "py:int", "py:float", "py:complex")


def _complete_dtype(ctx, param, incomplete):
    """Operands: canonical dtypes, each with a form (`0d:i8`, `weak:f16`), and the Python scalars."""
    from promote_cli.vocab.dtypes import DTYPES

    low = incomplete.lower()
    before = tuple(ctx.params.get(param.name) or ())
    if len(before) >= 2 and before[-1] == ":" and f"{before[-2].lower()}:" in (*OPERAND_FORMS, "py:"):
        # bash splits words at ':' (COMP_WORDBREAKS): `py:in<TAB>` arrives as `py`, `:`, `in`, and what
        # it puts in place is the part after the colon
        if before[-2].lower() == "py":
            return [CompletionItem(k[3:]) for k in PYTHON_SCALARS if k[3:].startswith(low)]
        return [CompletionItem(n) for n in DTYPES if n.startswith(low)]
    prefix = ""
    for form in OPERAND_FORMS:
        if low.startswith(form):
            prefix, low = incomplete[: len(form)], low[len(form):]
    names = [f"{prefix}{n}" for n in DTYPES if n.startswith(low)]
    if not prefix:
        names += [p for p in (*PYTHON_SCALARS, *OPERAND_FORMS) if p.startswith(low)]
    return [CompletionItem(n) for n in names]


def _complete_plain_dtype(ctx, param, incomplete):
    """A dtype without a form (`--to`, `--from`)."""
    from promote_cli.vocab.dtypes import DTYPES

    return [CompletionItem(n) for n in DTYPES if n.startswith(incomplete.lower())]


def shell_word(text: str) -> str:
    """`text` as one word a shell takes literally: an operator symbol that globs (`*`, `**`) or redirects
    (`<<`, `>`, `|`) comes quoted (`'*'`), so that completing it never inserts file names or a pipe."""
    import shlex

    return shlex.quote(text)


def _complete_op(ctx, param, incomplete):
    """The ops of the framework given with -f (API names and operator symbols, the symbols quoted)."""
    import promote_cli as api

    fw = ctx.params.get("framework")
    if not fw:
        return []
    try:
        rs = api.load(fw)
    except Exception:  # completion never fails: a broken name or file completes nothing
        return []
    typed = incomplete.strip("'\"")
    return [CompletionItem(shell_word(o)) for o in rs.op_index if o.startswith(typed)]


def _complete_path(ctx, param, incomplete):
    """File names, completed by the shell itself."""
    return [CompletionItem(incomplete, type="file")]


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
complete_plain_dtype = _complete_plain_dtype
complete_path = _complete_path


color_option = click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto",
                            show_default=True, help="Colour and boxes (auto: only on a terminal without NO_COLOR).")
