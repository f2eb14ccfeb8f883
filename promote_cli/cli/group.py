"""The `promote` Click group. Commands live in `commands/` and load only when invoked, so `promote query`
imports neither numpy nor Rich; every error is one line with the contract's exit code."""

from __future__ import annotations

import importlib
import os
import sys
import traceback

import click
from click.shell_completion import add_completion_class

from promote_cli.cli.fast import COMPLETION_VARIABLE
from promote_cli.cli.options import BashComplete, check_completion_request
from promote_cli.cli.streams import (
    EXIT_BROKEN_PIPE,
    failure,
    noting,
    reader_gone,
    stop_noting,
    tolerant,
)
from promote_cli.errors import EXIT_USAGE, PromoteError
from promote_cli.formats import one_line

COMMANDS = {
    "query": ("promote_cli.cli.commands.query", "query", "The common dtype of two operands (or more)."),
    "table": ("promote_cli.cli.commands.table", "table", "The full promotion matrix, or the differences of two or more."),
    "ops": ("promote_cli.cli.commands.info", "ops", "A framework's ops by its own names: arity, group, rule."),
    "expr": ("promote_cli.cli.commands.expr", "expr", "The result type of a whole expression, node by node."),
    "explain": ("promote_cli.cli.commands.explain", "explain", "Which rule decides a pair, and what other options give."),
    "expect": ("promote_cli.cli.commands.explain", "expect", "Check a file of expected answers (for CI)."),
    "port": ("promote_cli.cli.commands.port", "port",
             "The casts that make a target framework reproduce a source framework's dtypes."),
    "check": ("promote_cli.cli.commands.check", "check",
              "Properties of a ruleset (commutative, associative, lossless, consistent) and its claims."),
    "lattice": ("promote_cli.cli.commands.lattice", "lattice", "The Hasse diagram of a ruleset's order (dot, mermaid)."),
    "cast": ("promote_cli.cli.commands.cast", "cast", "Convert .npy files with TOSA CAST semantics."),
    "rescale": ("promote_cli.cli.commands.rescale", "rescale", "Requantize a .npy file with TOSA RESCALE (multiply, add, shift)."),
    "verify": ("promote_cli.cli.commands.verify", "verify", "Re-check a ruleset against the installed framework."),
    "validate": ("promote_cli.cli.commands.validate", "validate", "Check rule files, reporting every problem."),
    "frameworks": ("promote_cli.cli.commands.info", "frameworks", "The frameworks and rulesets this installation knows."),
    "dtypes": ("promote_cli.cli.commands.info", "dtypes", "The dtype vocabulary and every accepted alias."),
}


add_completion_class(BashComplete)  # bash's words split at `:`, `=` and `@` completed whole


class PromoteGroup(click.Group):
    """Loads subcommands lazily; reports every error as one line with the contract's exit code."""

    def list_commands(self, ctx):
        return list(COMMANDS)

    def get_command(self, ctx, name):
        entry = COMMANDS.get(name)
        if entry is None:
            return None
        module = importlib.import_module(entry[0])
        return getattr(module, entry[1])

    def format_commands(self, ctx, formatter):
        rows = [(name, help_text) for name, (_, _, help_text) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise _ReaderGone() from None  # click would turn it into exit code 1, which means "refused"

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        tolerant()
        previous = noting()
        try:
            check_completion_request(os.environ, complete_var or COMPLETION_VARIABLE)
            code = super().main(args, prog_name or "promote", complete_var, standalone_mode=False, **extra)
            sys.stdout.flush()  # a reader that went away is noticed here, not at interpreter exit
        except click.exceptions.Exit as exc:
            code = exc.exit_code
        except _NO_ARGS_IS_HELP as exc:  # `promote` alone: the help, as click before 8.2 printed it
            click.echo(exc.ctx.get_help())
            code = 0
        except click.ClickException as exc:
            _error(" ".join(exc.format_message().split()), _speaker(exc))
            code = exc.exit_code
        except PromoteError as exc:
            _error(str(exc))
            _context(exc)
            code = exc.exit_code
        except click.exceptions.Abort:
            _error("aborted")
            code = 130
        except (BrokenPipeError, _ReaderGone):
            code = reader_gone()
        except Exception as exc:  # a bug of ours: one line, the traceback on request
            if os.environ.get("PROMOTE_DEBUG"):
                traceback.print_exc()
            _error(failure(exc))
            code = EXIT_USAGE
        finally:
            stop_noting(previous)
        sys.exit(code if isinstance(code, int) else 0)


_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())  # click >= 8.2


class _ReaderGone(Exception):
    """Standard output's reader went away while a command wrote to it."""


#: commands whose every diagnostic starts `promote NAME: ` (the contract's exception: they name files)
NAMED_DIAGNOSTICS = ("cast", "rescale")


def _speaker(exc: click.ClickException) -> str:
    """Who a Click error speaks as: `promote cast` for an error in cast's or rescale's arguments, else `promote`."""
    ctx = getattr(exc, "ctx", None)
    name = getattr(getattr(ctx, "command", None), "name", None)
    return f"promote {name}" if name in NAMED_DIAGNOSTICS else "promote"


def _error(message: str, speaker: str = "promote") -> None:
    """A diagnostic: one line on stderr, whatever the message holds (a path with a newline, a control byte)."""
    try:
        click.echo(f"{speaker}: {one_line(message)}", err=True)
    except BrokenPipeError:
        pass


def _context(exc: PromoteError) -> None:
    """After an error's line, the lines that show where it is (a malformed expression: the expression
    and a caret under the position); the first line says it all on its own."""
    lines = getattr(exc, "context_lines", None)
    if lines is None:
        return
    try:
        for line in lines():
            click.echo(line, err=True)
    except BrokenPipeError:
        pass


@click.group(cls=PromoteGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="promote", prog_name="promote")
def main():
    """A type-promotion oracle for machine-learning frameworks.

    \b
      promote query i8 u8 -f openvino
      promote table -f cann --format csv
      promote table --diff paddle cann
      promote cast weights.npy --to f16
    """


__all__ = ["COMMANDS", "EXIT_BROKEN_PIPE", "EXIT_USAGE", "PromoteGroup", "main"]
