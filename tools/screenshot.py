"""Render `promote table ... --svg/--html` pictures to PNG in headless Chromium, and `promote lattice
--format dot` graphs with Graphviz.

    python tools/screenshot.py OUT.png table -f openvino            # the SVG of that command
    python tools/screenshot.py --html OUT.png table --diff paddle cann
    python tools/screenshot.py --dot OUT.png lattice -f jax          # the graph, drawn by `dot -Tpng`
    python tools/screenshot.py --docs                                # every picture of docs/img/

The command's picture is written to a temporary file (through `promote ... --svg FILE` or
`--html FILE`), then Chromium (`chromium`, or $CHROMIUM) takes a screenshot of it: an SVG at
its own size, an HTML page in a window of `--size W,H` (default 1500,1100). Chromium runs with
no network features, a fresh profile and no sandbox (it is started as root in containers).
A graph is drawn by Graphviz's `dot` (Debian's `graphviz`; a tool of the docs, not a dependency of
promote). Nothing here runs in the test suite: CI has no browser; tests check the files' structure.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: the pictures docs/ shows: (file under docs/img, picture kind, promote arguments, html window size)
DOCS = [
    ("table-openvino.png", "svg", ["table", "-f", "openvino"], None),
    ("table-jax.png", "svg", ["table", "-f", "jax", "--op", "promote_types"], None),
    ("diff-paddle-cann.png", "svg", ["table", "--diff", "paddle", "cann"], None),
    ("table-cann-html.png", "html", ["table", "-f", "cann"], (760, 480)),
    ("diff-openvino-unsafe-html.png", "html",
     ["table", "--diff", "openvino", "openvino:promote_unsafe=true"], (1100, 850)),
    ("lattice-jax.png", "dot", ["lattice", "-f", "jax"], None),
]

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--force-device-scale-factor=1"]


def browser() -> str:
    found = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        sys.exit("screenshot: no chromium found (apt-get install -y chromium, or set CHROMIUM)")
    return found


def svg_size(text: str) -> tuple[int, int]:
    m = re.search(r'<svg[^>]* width="(\d+)" height="(\d+)"', text)
    if not m:
        sys.exit("screenshot: the SVG states no width and height")
    return int(m.group(1)), int(m.group(2))


def graph(out: Path, args: list[str]) -> None:
    """`promote ARGS --format dot` drawn by Graphviz into the PNG `out`."""
    dot = os.environ.get("DOT") or shutil.which("dot")
    if not dot:
        sys.exit("screenshot: no Graphviz dot found (apt-get install -y graphviz, or set DOT)")
    run = subprocess.run([sys.executable, "-m", "promote_cli", *args, "--format", "dot"], capture_output=True,
                         text=True, cwd=ROOT, check=False)
    if run.returncode != 0 or not run.stdout.startswith("digraph"):
        sys.exit(f"screenshot: promote {' '.join(args)}: {run.stderr.strip()}")
    with tempfile.TemporaryDirectory() as tmp:
        png = Path(tmp) / "graph.png"
        subprocess.run([dot, "-Tpng", "-Gdpi=80", "-o", str(png)], input=run.stdout, text=True, check=True,
                       timeout=120)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(png), out)
    print(f"{out}: promote {' '.join(args)} --format dot | dot -Tpng")


def shoot(out: Path, kind: str, args: list[str], size: tuple[int, int] | None = None) -> None:
    if kind == "dot":
        return graph(out, args)
    with tempfile.TemporaryDirectory() as tmp:
        picture = Path(tmp) / f"picture.{kind}"
        run = subprocess.run([sys.executable, "-m", "promote_cli", *args, f"--{kind}", str(picture)],
                             capture_output=True, text=True, cwd=ROOT)
        if run.returncode not in (0, 1) or not picture.exists():
            sys.exit(f"screenshot: promote {' '.join(args)}: {run.stderr.strip()}")
        if kind == "svg":
            size = svg_size(picture.read_text(encoding="utf-8"))
        size = size or (1500, 1100)
        profile = Path(tmp) / "profile"
        shot = Path(tmp) / "shot.png"
        subprocess.run([browser(), *FLAGS, f"--user-data-dir={profile}", f"--screenshot={shot}",
                        f"--window-size={size[0]},{size[1]}", picture.as_uri()],
                       capture_output=True, text=True, timeout=120, check=False)
        if not shot.exists():
            sys.exit(f"screenshot: chromium made no screenshot of {' '.join(args)}")
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(shot), out)
    print(f"{out}: promote {' '.join(args)} --{kind} ({size[0]}x{size[1]})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", action="store_true", help="regenerate every picture of docs/img/")
    parser.add_argument("--html", action="store_true", help="the --html page instead of the SVG")
    parser.add_argument("--dot", action="store_true", help="a graph (`--format dot`), drawn by Graphviz")
    parser.add_argument("--size", metavar="W,H", help="window size for an HTML page")
    parser.add_argument("out", nargs="?", type=Path)
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the promote command (table ...)")
    ns = parser.parse_args(argv)
    if ns.docs:
        for name, kind, args, size in DOCS:
            shoot(ROOT / "docs" / "img" / name, kind, args, size)
        return 0
    if ns.out is None or not ns.args:
        parser.error("give OUT.png and a promote command, or --docs")
    size = tuple(int(v) for v in ns.size.split(",")) if ns.size else None
    shoot(ns.out, "dot" if ns.dot else "html" if ns.html else "svg", ns.args, size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
