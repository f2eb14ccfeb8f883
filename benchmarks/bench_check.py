"""`promote check -f FW` on every shipped ruleset: wall time of the whole process, against a budget.

For each ruleset, alternately and each in a fresh process (`time.perf_counter` around it, stdout to
/dev/null), `promote check -f NAME` (tensors) and `promote check -f NAME --forms all` (every operand form
the ruleset distinguishes); prints the median of each and whether it is within the budget (2 s).

    python benchmarks/bench_check.py                 # every ruleset, 5 rounds
    python benchmarks/bench_check.py --rounds 3 --only cann@opbase numpy
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import promote_cli

BUDGET_S = 2.0


def promote_command() -> list[str]:
    """The installed `promote` script next to this interpreter, else `python -m promote_cli`."""
    script = Path(sys.executable).with_name("promote")
    return [str(script)] if script.exists() else [sys.executable, "-m", "promote_cli"]


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)}: exit {done.returncode}: {done.stderr.strip()}")
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="*", metavar="NAME", help="these rulesets (NAME@VERSION) only")
    args = parser.parse_args(argv)
    names = args.only or [rs.key for rs in promote_cli.frameworks()]
    promote = promote_command()
    for name in names:
        runs: dict[str, list[float]] = {"tensors": [], "all forms": []}
        for _ in range(args.rounds):
            runs["tensors"].append(timed([*promote, "check", "-f", name]))
            runs["all forms"].append(timed([*promote, "check", "-f", name, "--forms", "all"]))
        shown = ", ".join(f"{what} {statistics.median(t):.2f} s" for what, t in runs.items())
        worst = max(statistics.median(t) for t in runs.values())
        print(f"{name:24s} {shown}  (budget {BUDGET_S:.0f} s: {'met' if worst <= BUDGET_S else 'missed'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
