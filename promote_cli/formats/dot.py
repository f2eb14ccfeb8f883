"""Graphviz dot: an order as a digraph drawn bottom to top (edges point up, from a type to the types covering it)."""

from __future__ import annotations

from promote_cli.formats import Format
from promote_cli.formats.kinds import FILL, kind_of, one_line


def quoted(text: str) -> str:
    """A dot ID as a double-quoted string."""
    return '"' + one_line(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


class Dot(Format):
    name = "dot"

    def order(self, o) -> str:
        """The Hasse diagram; weak nodes dashed ellipses, each node filled by its kind."""
        lines = [f"digraph {quoted(o.key)} {{",
                 f"  label={quoted(o.title())};",
                 "  labelloc=t;",
                 "  rankdir=BT;",
                 '  node [shape=box, style="rounded,filled", fontname="Helvetica"];']
        for n in o.nodes:
            fill = FILL[kind_of(o.weak.get(n, n))]
            style = ', shape=ellipse, style="dashed,filled"' if n in o.weak or _weak(n) else ""
            tip = f"{n} (weak: {o.weak[n]})" if n in o.weak else n
            lines.append(f"  {quoted(n)} [fillcolor={quoted(fill)}, tooltip={quoted(tip)}{style}];")
        lines += [f"  {quoted(a)} -> {quoted(b)};" for a, b in o.edges]
        lines.append("}")
        return "\n".join(lines) + "\n"


def _weak(node: str) -> bool:
    return node.startswith(("py:", "weak:"))


FORMAT = Dot
