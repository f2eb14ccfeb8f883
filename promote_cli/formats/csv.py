"""CSV: a header row, then one row per matrix row, difference or record (a refusal is an empty cell)."""

from __future__ import annotations

import csv
import io

from promote_cli.formats import Format, Records, corner, side_heads


def _rows(header: list[str], rows) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


class Csv(Format):
    name = "csv"

    def matrix(self, m) -> str:
        return _rows([corner(m)] + m.types,
                     ([a] + [r if r is not None else "" for r in row] for a, row in zip(m.types, m.results())))

    def diff(self, d) -> str:
        return _rows(["a", "b", *side_heads(d)],
                     ([x["a"], x["b"], *(x[f] or "" for f in d.frameworks)] for x in d.differences))

    def records(self, r: Records) -> str:
        return _rows(r.header, r.rows)


FORMAT = Csv
