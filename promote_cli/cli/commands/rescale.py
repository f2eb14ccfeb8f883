"""`promote rescale`: TOSA RESCALE of a .npy file, and `--list`, the combinations the spec
allows. Parsing and rendering only: the work is `promote_cli.rescale_file` and
`promote_cli.rescale_table`."""

from __future__ import annotations

import sys

import click

import promote_cli
from promote_cli import formats
from promote_cli.cli import casting
from promote_cli.cli.options import color_option, color_wanted, complete_path
from promote_cli.errors import EXIT_OK, EXIT_USAGE, PromoteError, UsageError

#: the columns of the listing: (scale32, rounding)
COLUMNS = [(s32, r) for s32 in (True, False) for r in ("single", "double", "inexact")]


def _fail(message: str) -> None:
    click.echo(formats.one_line(f"promote rescale: {message}"), err=True)


def _numbers(text: str | None, name: str, kind=int) -> list | None:
    if text is None:
        return None
    try:
        return [kind(t, 0) if kind is int else kind(t) for t in text.split(",")]
    except ValueError:
        what = "integers" if kind is int else "numbers"
        raise UsageError(f"--{name} takes {what} separated by commas, not {text!r}") from None


def _records(data: dict) -> formats.Records:
    """The listing as a table (one row per input/output pair, one column per scale width and
    rounding mode: `yes` or the first rule broken) with the rules after it."""
    by_text = {r["text"]: r["name"] for r in data["rules"]}
    cells: dict = {}
    for r in data["combinations"]:
        cells.setdefault((r["from"], r["to"]), {})[(r["scale32"], r["rounding"])] = (
            "yes" if r["legal"] else by_text[r["rule"]])
    header = ["from", "to"] + [f"{'scale32' if s else 'scale16'}:{r}" for s, r in COLUMNS]
    rows = [[a, b] + [cols[k] for k in COLUMNS] for (a, b), cols in cells.items()]
    used = {c for row in rows for c in row[2:]}
    whole = len(data["combinations"]) == len(promote_cli.rescale_table()["combinations"])
    rules = formats.Section("yes: legal (zero points 0, per-tensor); otherwise the rule it breaks. The rules:",
                            [f"{r['name']}: {r['text']}" for r in data["rules"] if whole or r["name"] in used])
    return formats.Records("rescale", header, rows, data, [rules])


@click.command("rescale")
@click.argument("input", required=False, metavar="IN.npy", shell_complete=complete_path)
@click.option("--to", "to", metavar="TYPE", help="Output type: i8, i16, i32, u8 or u16.")
@click.option("--multiplier", metavar="M[,M...]", help="Multiplier(s): one, or one per channel with --per-channel.")
@click.option("--shift", metavar="S[,S...]", help="Shift(s), 2..62: one, or one per channel.")
@click.option("--scale", metavar="F[,F...]",
              help="Instead of --multiplier/--shift: the scaling, normalized as the spec describes.")
@click.option("--input-zp", type=int, default=0, show_default=True, metavar="ZP", help="Input zero point (a logical value: 128 for u8).")
@click.option("--output-zp", type=int, default=0, show_default=True, metavar="ZP", help="Output zero point (a logical value).")
@click.option("--scale32/--scale16", default=True, show_default=True, help="32-bit (apply_scale_32) or 16-bit multipliers.")
@click.option("--rounding", type=click.Choice(["single", "double", "inexact"]), default="single", show_default=True,
              help="SINGLE_ROUND, DOUBLE_ROUND or INEXACT_ROUND.")
@click.option("--per-channel", is_flag=True, help="One multiplier and shift per channel of the last axis.")
@click.option("--input-unsigned", is_flag=True, help="Read signed input storage as unsigned (int8 as u8).")
@click.option("--output-unsigned", is_flag=True, help="Unsigned output (i8 as u8, i16 as u16).")
@click.option("--from", "from_", metavar="TYPE", default=None, help="Input type when the storage does not say: i48 for int64 files.")
@click.option("-o", "--output", "output", metavar="OUT.npy", default=None, shell_complete=complete_path,
              help="Output file. Default: IN.TYPE.npy.")
@click.option("--force", is_flag=True, help="Overwrite an existing output file (never the input).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv", "markdown", "rich"]), default="text",
              show_default=True, help="The report (text, json) or the --list table (text, json, csv, markdown, rich).")
@click.option("--list", "list_", is_flag=True, help="List the type and flag combinations the spec allows, and its rules.")
@color_option
def rescale(input, to, multiplier, shift, scale, input_zp, output_zp, scale32, rounding, per_channel, input_unsigned,
            output_unsigned, from_, output, force, fmt, list_, color):
    """TOSA RESCALE of a .npy file: integer multiply, add, shift, exactly as the TOSA
    reference model (and any conformant hardware) computes it.

    \b
      promote rescale acc.npy --to i8 --multiplier 1518500250 --shift 38 \\
          --output-zp -3
      promote rescale acc.npy --to i8 --scale 0.0052 --per-channel ...
      promote rescale --list

    Streams in chunks, writes atomically, never overwrites its input. Anything the spec
    forbids (types, flags, zero points, shifts, value ranges) exits 2 quoting the rule.
    """
    try:
        if list_:
            formats.emit(formats.get(fmt, color=color_wanted(color)).records(_records(promote_cli.rescale_table(from_, to))))
            sys.exit(EXIT_OK)
        if fmt not in ("text", "json"):
            raise UsageError(f"--format {fmt} is for --list; a rescale reports in text or json")
        if input is None:
            raise UsageError("no input file given (or --list)")
        casting.refuse_stdout(output)
        if to is None:
            raise UsageError("no output type given (--to)")
        if rounding == "inexact":
            _fail("INEXACT_ROUND computed as the TOSA reference model does (float32 products, round half to even); "
                  "every result is within the spec's INEXACT_ROUND error bound")
        report = promote_cli.rescale_file(
            input, output, to, _numbers(multiplier, "multiplier"), _numbers(shift, "shift"),
            scale=_numbers(scale, "scale", float), input_zp=input_zp, output_zp=output_zp, scale32=scale32,
            rounding=rounding, per_channel=per_channel, from_=from_, input_unsigned=input_unsigned,
            output_unsigned=output_unsigned, force=force, progress_bar=sys.stderr.isatty())
    except PromoteError as e:
        _fail(str(e))
        sys.exit(e.exit_code)
    except (OSError, ValueError) as e:
        _fail(str(e))
        sys.exit(EXIT_USAGE)
    if scale is not None:
        _fail(f"--scale {scale} -> --multiplier {','.join(map(str, report.multiplier))} "
              f"--shift {','.join(map(str, report.shift))}")
    formats.emit(formats.get(fmt).rescale_report(report))
    sys.exit(EXIT_OK)
