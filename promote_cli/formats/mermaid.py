"""Mermaid: an order as a flowchart drawn bottom to top, for Markdown that renders Mermaid (GitHub, GitLab)."""

from __future__ import annotations

from promote_cli.formats import Format
from promote_cli.formats.kinds import FILL, NO_RESULT, kind_of, kinds, one_line


def label(text: str) -> str:
    """A node label in double quotes (Mermaid's entity code for a quote inside)."""
    return '"' + one_line(text).replace('"', "#quot;") + '"'


class Mermaid(Format):
    name = "mermaid"

    def order(self, o) -> str:
        """The Hasse diagram; nodes are `n0`, `n1`, ... labelled with their names, weak nodes round and dashed."""
        ids = {n: f"n{i}" for i, n in enumerate(o.nodes)}
        lines = ["---", f"title: {label(o.title())}", "---", "flowchart BT"]
        for n in o.nodes:
            shape = f"([{label(n)}])" if n in o.weak or n.startswith(("py:", "weak:")) else f"[{label(n)}]"
            lines.append(f"  {ids[n]}{shape}")
        lines += [f"  {ids[a]} --> {ids[b]}" for a, b in o.edges]
        for k in (k for k in kinds() if k not in NO_RESULT):  # a node has a result's kind
            lines.append(f"  classDef {k.replace(' ', '_')} fill:{FILL[k]},stroke:#555,color:#000")
        lines.append("  classDef weak stroke-dasharray:5 5")
        by_kind: dict = {}
        for n in o.nodes:
            by_kind.setdefault(kind_of(o.weak.get(n, n)), []).append(ids[n])
        for k, members in by_kind.items():
            lines.append(f"  class {','.join(members)} {k}")
        weak = [ids[n] for n in o.nodes if n in o.weak or n.startswith(("py:", "weak:"))]
        if weak:
            lines.append(f"  class {','.join(weak)} weak")
        return "\n".join(lines) + "\n"


FORMAT = Mermaid
