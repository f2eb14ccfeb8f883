"""CSV: a header row, then one row per matrix row, difference or record (a refusal is an empty cell, an operand
the framework lacks `n/a`)."""

from __future__ import annotations

import csv
import io

from promote_cli.formats import (
    PORT_HEADER,
    REFUSED_CSV,
    Format,
    Records,
    corner,
    diff_rows,
    matrix_rows,
    port_row,
    side_heads,
)


def _rows(header: list[str], rows) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


class Csv(Format):
    name = "csv"
    refused_mark = REFUSED_CSV

    def matrix(self, m) -> str:
        return _rows([corner(m)] + m.types, ([a] + row for a, row in zip(m.types, matrix_rows(m, REFUSED_CSV))))

    def diff(self, d) -> str:
        return _rows(["a", "b", *side_heads(d)], diff_rows(d, REFUSED_CSV))

    def records(self, r: Records) -> str:
        return _rows(r.header, r.rows)

    def port(self, p) -> str:
        return _rows(["op", *PORT_HEADER], [port_row(c) for c in p.cases])


FORMAT = Csv
