"""`promote rescale`: TOSA RESCALE of a .npy file, and `--list`, the combinations the spec
allows. Parsing and rendering only; the work is done by `promote_cli.numerics.rescale_file`
(files), `promote_cli.numerics.rescale` (values) and `promote_cli.numerics.rescale_rules`
(the rules)."""

from __future__ import annotations

import json
import sys

import click

from promote_cli.errors import EXIT_OK, EXIT_USAGE, PromoteError, UsageError

#: the columns of the listing: (scale32, rounding)
COLUMNS = [(s32, r) for s32 in (True, False) for r in ("single", "double", "inexact")]


def _fail(message: str) -> None:
    click.echo(f"promote rescale: {message}", err=True)


def _ints(text: str | None, name: str) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(t, 0) for t in text.split(",")]
    except ValueError:
        raise UsageError(f"--{name} takes integers separated by commas, not {text!r}") from None


def _floats(text: str, name: str) -> list[float]:
    try:
        return [float(t) for t in text.split(",")]
    except ValueError:
        raise UsageError(f"--{name} takes numbers separated by commas, not {text!r}") from None


def listing(from_: str | None = None, to: str | None = None) -> dict:
    """The type combinations and rules, as `--list --format json` prints them."""
    from promote_cli.numerics.rescale_rules import RULES, type_combinations

    rows = [r for r in type_combinations() if (from_ is None or r["from"] == from_) and (to is None or r["to"] == to)]
    return {"operator": "RESCALE", "combinations": rows,
            "rules": [{"name": r.name, "kind": r.kind, "text": r.text, "where": r.where} for r in RULES]}


def _list_text(data: dict) -> list[str]:
    from promote_cli.numerics.rescale_rules import RULES

    by_text = {r.text: r.name for r in RULES}
    cells: dict = {}
    for r in data["combinations"]:
        cells.setdefault((r["from"], r["to"]), {})[(r["scale32"], r["rounding"])] = (
            "yes" if r["legal"] else by_text[r["rule"]])
    head = ["from", "to"] + [f"{'scale32' if s else 'scale16'}:{r}" for s, r in COLUMNS]
    rows = [[a, b] + [cols[k] for k in COLUMNS] for (a, b), cols in cells.items()]
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    lines = ["  ".join(x.ljust(w) for x, w in zip(row, widths)).rstrip() for row in [head] + rows]
    used = {c for row in rows for c in row[2:]} - {"yes"}
    lines.append("")
    lines.append("yes: legal (zero points 0, per-tensor); otherwise the rule it breaks. The rules:")
    for r in RULES:
        if r.name in used or not data["combinations"] or len(data["combinations"]) == 6 * 8 * 6:
            lines.append(f"  {r.name}: {r.text}")
    return lines


@click.command("rescale")
@click.argument("input", required=False, metavar="IN.npy")
@click.option("--to", "to", metavar="TYPE", help="Output type: i8, i16, i32, u8 or u16.")
@click.option("--multiplier", metavar="M[,M...]", help="Multiplier(s): one, or one per channel with --per-channel.")
@click.option("--shift", metavar="S[,S...]", help="Shift(s), 2..62: one, or one per channel.")
@click.option("--scale", metavar="F[,F...]",
              help="Instead of --multiplier/--shift: the scaling, normalized as the spec describes.")
@click.option("--input-zp", type=int, default=0, show_default=True, help="Input zero point (a logical value: 128 for u8).")
@click.option("--output-zp", type=int, default=0, show_default=True, help="Output zero point (a logical value).")
@click.option("--scale32/--scale16", default=True, show_default=True, help="32-bit (apply_scale_32) or 16-bit multipliers.")
@click.option("--rounding", type=click.Choice(["single", "double", "inexact"]), default="single", show_default=True,
              help="SINGLE_ROUND, DOUBLE_ROUND or INEXACT_ROUND.")
@click.option("--per-channel", is_flag=True, help="One multiplier and shift per channel of the last axis.")
@click.option("--input-unsigned", is_flag=True, help="Read signed input storage as unsigned (int8 as u8).")
@click.option("--output-unsigned", is_flag=True, help="Unsigned output (i8 as u8, i16 as u16).")
@click.option("--from", "from_", metavar="TYPE", default=None, help="Input type when the storage does not say: i48 for int64 files.")
@click.option("-o", "--output", "output", metavar="OUT.npy", default=None, help="Output file. Default: IN.TYPE.npy.")
@click.option("--force", is_flag=True, help="Overwrite an existing output file (never the input).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--list", "list_", is_flag=True, help="List the type and flag combinations the spec allows, and its rules.")
def rescale(input, to, multiplier, shift, scale, input_zp, output_zp, scale32, rounding, per_channel, input_unsigned,
            output_unsigned, from_, output, force, fmt, list_):
    """TOSA RESCALE of a .npy file: integer multiply, add, shift, exactly as the TOSA
    reference model (and any conformant hardware) computes it.

    \b
      promote rescale acc.npy --to i8 --multiplier 1518500250 --shift 38 --output-zp -3
      promote rescale acc.npy --to i8 --scale 0.0052 --per-channel ...
      promote rescale --list

    Streams in chunks, writes atomically, never overwrites its input. Anything the spec
    forbids (types, flags, zero points, shifts, value ranges) exits 2 quoting the rule.
    """
    try:
        if list_:
            data = listing(from_, to)
            if fmt == "json":
                click.echo(json.dumps(data))
            else:
                for line in _list_text(data):
                    click.echo(line)
            sys.exit(EXIT_OK)
        if input is None:
            raise UsageError("no input file given (or --list)")
        if to is None:
            raise UsageError("no output type given (--to)")
        if scale is not None:
            if multiplier is not None or shift is not None:
                raise UsageError("give --scale or --multiplier/--shift, not both")
            from promote_cli.numerics.rescale import normalize_scale

            chosen = [normalize_scale(f, scale32) for f in _floats(scale, "scale")]
            mults, shifts = [m for m, _ in chosen], [s for _, s in chosen]
        else:
            mults, shifts = _ints(multiplier, "multiplier"), _ints(shift, "shift")
            if mults is None or shifts is None:
                raise UsageError("give --multiplier and --shift, or --scale")
        if rounding == "inexact":
            _fail("INEXACT_ROUND computed as the TOSA reference model does (float32 products, round half to even); "
                  "every result is within the spec's INEXACT_ROUND error bound")
        from promote_cli.numerics.rescale_file import rescale_file

        report = rescale_file(input, output, to, mults, shifts, input_zp=input_zp, output_zp=output_zp,
                              scale32=scale32, rounding=rounding, per_channel=per_channel, from_=from_,
                              input_unsigned=input_unsigned, output_unsigned=output_unsigned, force=force,
                              progress_bar=sys.stderr.isatty())
    except PromoteError as e:
        _fail(str(e))
        sys.exit(e.exit_code)
    except (OSError, ValueError) as e:
        _fail(str(e))
        sys.exit(EXIT_USAGE)
    if scale is not None:
        _fail(f"--scale {scale} -> --multiplier {','.join(map(str, mults))} --shift {','.join(map(str, shifts))}")
    if fmt == "json":
        click.echo(json.dumps(report.as_dict()))
    else:
        click.echo(report.text())
    sys.exit(EXIT_OK)
