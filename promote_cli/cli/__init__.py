"""The `promote` command group. Commands live in `commands/` and load only when invoked,
so `promote query` imports neither numpy nor Rich."""

from __future__ import annotations

import importlib
import os
import sys

import click

from promote_cli.errors import EXIT_USAGE, PromoteError

COMMANDS = {
    "query": ("promote_cli.cli.commands.query", "query", "The common dtype of two operands."),
    "table": ("promote_cli.cli.commands.table", "table", "The full promotion matrix, or the differences of two."),
    "cast": ("promote_cli.cli.commands.cast", "cast", "Convert .npy files with TOSA CAST semantics."),
    "rescale": ("promote_cli.cli.commands.rescale", "rescale", "Requantize a .npy file with TOSA RESCALE (multiply, add, shift)."),
    "verify": ("promote_cli.cli.commands.verify", "verify", "Re-check a ruleset against the installed framework."),
    "frameworks": ("promote_cli.cli.commands.info", "frameworks", "The frameworks and rulesets this installation knows."),
    "dtypes": ("promote_cli.cli.commands.info", "dtypes", "The dtype vocabulary and every accepted alias."),
}


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

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name or "promote", complete_var, standalone_mode=False, **extra)
        except click.exceptions.Exit as exc:
            code = exc.exit_code
        except click.ClickException as exc:
            message = " ".join(exc.format_message().split())
            click.echo(f"promote: {message}", err=True)
            code = exc.exit_code
        except PromoteError as exc:
            click.echo(f"promote: {exc}", err=True)
            code = exc.exit_code
        except click.exceptions.Abort:
            click.echo("promote: aborted", err=True)
            code = 130
        except BrokenPipeError:
            # The reader went away (`promote table | head`): not an error of ours.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            code = 0
        sys.exit(code if isinstance(code, int) else 0)


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


def run():  # the console-script entry point
    main()


__all__ = ["main", "run", "EXIT_USAGE"]
