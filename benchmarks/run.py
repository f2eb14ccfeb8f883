"""Every target against its reference, in one run: `promote query` start-up and `--batch` throughput,
`promote cast` in memory, on files, and on a large file (the cast targets: `cast_targets.py`).

Each target runs next to its reference, alternately, in fresh processes (`time.perf_counter` around the
process, output to /dev/null; peak RSS of that process from `os.wait4`); the medians and their ratio
(ours / reference, lower is better) are printed with the target.

    python benchmarks/run.py                      # all three, default sizes
    python benchmarks/run.py --only startup --rounds 30
    python benchmarks/run.py --lines 200000 --json out.json
    python benchmarks/run.py --promote /path/to/other/venv/bin/promote   # another build, same references
    python benchmarks/run.py --only startup --wheel   # also from a wheel installed in a fresh venv

Targets:
  startup    `promote query i8 u8 -f openvino -O promote_unsafe=true`  vs  `python -c "import click"`, both with
             the interpreter of the venv `promote` is installed in (its cache warm; `--wheel` adds the same
             measured on a wheel of this checkout installed in a fresh venv, as a user gets it;
             `startup-cold`, `startup-nocache` and `startup-unwritable`: the first run (an empty cache),
             `PROMOTE_CACHE_DIR=` and a cache directory that cannot be made or written, measured against the
             same reference without a target: each parses and compiles what it loads)
  repeated   `promote query --batch -f cann` on N lines of repeated pairs  vs  a Python loop over
             `numpy.promote_types` on the same pairs
  distinct   `promote query --batch -f paddle --op /` on N textually distinct lines (aliases, letter case,
             `0d:` / `weak:` / `?` forms, spacing, a trailing comment)  vs  the numpy loop on the same
             pairs; also the peak RSS
  cast-pairs, cast-f16, cast-bf16, cast-f8e4m3, cast-2g   see cast_targets.py
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import promote_cli

NUMPY_LOOP = """
import sys
import numpy as np
promote = np.promote_types
write = sys.stdout.write
for line in sys.stdin:
    a, b = line.split()
    write(str(promote(a, b)) + "\\n")
"""

TARGETS = {"startup": 1.2, "repeated": 0.33, "distinct": 0.67}
CAST_TARGETS = ("cast-pairs", "cast-f16", "cast-bf16", "cast-f8e4m3", "cast-2g")   # cast_targets.py
QUERY = ["query", "i8", "u8", "-f", "openvino", "-O", "promote_unsafe=true"]
RSS_TARGET_MIB = 64


def promote_command() -> list[str]:
    """The installed `promote` script next to this interpreter, else `python -m promote_cli`."""
    script = Path(sys.executable).with_name("promote")
    return [str(script)] if script.exists() else [sys.executable, "-m", "promote_cli"]


def python_of(promote: list[str]) -> str:
    """The interpreter of the venv a `promote` script is installed in (the reference runs with it)."""
    beside = Path(promote[0]).with_name("python")
    return str(beside) if len(promote) == 1 and beside.exists() else sys.executable


#: the environment of every measured process: as a user's, bytecode written (an editable install's
#: first run writes it, as pip writes it for a wheel), so no run pays for compiling the package's source
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str], stdin_path: str | None = None, env: dict | None = None) -> tuple[float, float]:
    """(seconds, peak RSS in MiB) of one run of `cmd` in a fresh process."""
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=env or ENV)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if stdin_path:
            stdin.close()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)}: exit {proc.returncode}")
    return elapsed, usage.ru_maxrss / 1024


def compare(ours: list[str], reference: list[str], rounds: int, stdin_ours=None, stdin_ref=None,
            env: dict | None = None, before=None) -> dict:
    """Both sides in turn, `rounds` times (`before()` ahead of each run of ours); medians, the ratio of the
    medians, and the median and range of the ratios of each round's pair (steadier when the machine drifts)."""
    runs = {"ours": [], "reference": []}
    for _ in range(rounds):
        if before is not None:
            before()
        runs["ours"].append(timed(ours, stdin_ours, env))
        runs["reference"].append(timed(reference, stdin_ref))
    out = {}
    for side, samples in runs.items():
        out[side] = {"median_s": statistics.median(t for t, _ in samples),
                     "peak_rss_mib": max(r for _, r in samples)}
    out["ratio"] = out["ours"]["median_s"] / out["reference"]["median_s"]
    paired = [o[0] / r[0] for o, r in zip(runs["ours"], runs["reference"])]
    out["paired"] = {"median": statistics.median(paired), "min": min(paired), "max": max(paired)}
    return out


def wheel_venv(directory: str) -> list[str]:
    """A wheel of this checkout installed (with its dependencies) in a fresh venv of this interpreter: the
    `promote` script a user gets from `pip install`."""
    root = Path(__file__).resolve().parent.parent
    wheels, venv = os.path.join(directory, "wheels"), os.path.join(directory, "venv")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", wheels, str(root)], check=True)
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    (wheel,) = Path(wheels).glob("*.whl")
    subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", str(wheel)], check=True)
    return [os.path.join(venv, "bin", "promote")]


def startup(promote: list[str], rounds: int, directory: str, info: bool) -> dict:
    """The start-up target (the cache warmed first) and, with `info`, start-up without a usable cache (measured,
    no target): the first run, the cache off, a cache directory that cannot be written."""
    python = python_of(promote)
    subprocess.run(promote + QUERY, stdout=subprocess.DEVNULL, env=ENV)  # the cache and the bytecode, written
    out = {"startup": compare(promote + QUERY, [python, "-c", "import click"], rounds)}
    if info:
        cold_dir = os.path.join(directory, "cold-cache")

        def empty():
            shutil.rmtree(cold_dir, ignore_errors=True)

        out["startup-cold"] = compare(promote + QUERY, [python, "-c", "import click"], rounds,
                                      env={**ENV, "PROMOTE_CACHE_DIR": cold_dir}, before=empty)
        out["startup-nocache"] = compare(promote + QUERY, [python, "-c", "import click"], rounds,
                                         env={**ENV, "PROMOTE_CACHE_DIR": ""})
        blocker = os.path.join(directory, "a-file")
        open(blocker, "w").close()  # a directory inside a regular file cannot be made or written, even by root
        out["startup-unwritable"] = compare(promote + QUERY, [python, "-c", "import click"], rounds,
                                            env={**ENV, "PROMOTE_CACHE_DIR": os.path.join(blocker, "cache")})
    return out


def numpy_names(framework: str) -> dict[str, str]:
    """Canonical name -> numpy's name, for the framework's dtypes numpy itself has (not ml_dtypes')."""
    have = {d.name for d in promote_cli.load(framework).types}
    return {d.name: str(np.dtype(d.numpy)) for d in promote_cli.DTYPES.values()
            if d.name in have and d.numpy and not d.numpy.startswith("ml_dtypes")}


def write_streams(directory: str, framework: str, lines: int, distinct: bool, seed: int) -> tuple[str, str]:
    """Our input and numpy's (the same pairs, in numpy's names)."""
    rng = random.Random(seed)
    names = numpy_names(framework)
    canon = sorted(names)
    ours_path, ref_path = os.path.join(directory, f"{framework}.ours"), os.path.join(directory, f"{framework}.np")
    spellings = {c: [c] + promote_cli.aliases(c) for c in canon}
    with open(ours_path, "w") as ours, open(ref_path, "w") as ref:
        if not distinct:
            pool = [(rng.choice(canon), rng.choice(canon)) for _ in range(64)]
        for n in range(lines):
            if distinct:
                a, b = rng.choice(canon), rng.choice(canon)
                ours.write(f"{' ' * rng.randint(0, 2)}{_spell(rng, a, spellings)}{' ' * rng.randint(1, 3)}"
                           f"{_spell(rng, b, spellings)} # {n}\n")
            else:
                a, b = pool[n % len(pool)]
                ours.write(f"{a} {b}\n")
            ref.write(f"{names[a]} {names[b]}\n")
    return ours_path, ref_path


def _spell(rng: random.Random, canonical: str, spellings: dict[str, list[str]]) -> str:
    word = rng.choice(spellings[canonical])
    word = rng.choice([word, word.upper(), word.capitalize()])
    return rng.choice(["{}", "{}", "0d:{}", "0D:{}", "weak:{}", "{}?"]).format(word)


def machine() -> str:
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs {cpu}; Python {sys.version.split()[0]}; numpy {np.__version__}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", choices=sorted(TARGETS) + list(CAST_TARGETS),
                        help="run only these (repeatable)")
    parser.add_argument("--rounds", type=int, default=21, help="start-up runs of each side (default 21)")
    parser.add_argument("--batch-rounds", type=int, default=3, help="batch runs of each side (default 3)")
    parser.add_argument("--lines", type=int, default=1_000_000, help="batch lines (default 1M)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--promote", help="the `promote` command to measure (default: the one beside this Python)")
    parser.add_argument("--cast-rounds", type=int, default=5, help="rounds of each cast comparison (default 5)")
    parser.add_argument("--cast-elements", type=int, default=1 << 24, help="elements per in-memory cast (default 16Mi)")
    parser.add_argument("--cast-mib", type=int, default=256, help="file size of the file-cast targets (default 256)")
    parser.add_argument("--big-mib", type=int, default=2048, help="file size of cast-2g (default 2048)")
    parser.add_argument("--dir", help="directory for the cast targets' scratch files (default: a temporary one)")
    parser.add_argument("--wheel", action="store_true",
                        help="also measure start-up from a wheel of this checkout in a fresh venv (pip installs it)")
    parser.add_argument("--no-startup-info", action="store_true",
                        help="measure only the start-up target (not the first run, the cache off, nor an unwritable cache)")
    args = parser.parse_args(argv)
    if args.dir is not None and not os.path.isdir(args.dir):
        parser.error(f"--dir {args.dir}: not a directory")
    only = args.only or list(TARGETS) + list(CAST_TARGETS)
    promote = args.promote.split() if args.promote else promote_command()
    results = {"machine": machine(), "lines": args.lines}
    print(results["machine"])
    tmp = tempfile.mkdtemp(prefix="promote-bench-")
    try:
        if "startup" in only:
            builds = [("", promote)]
            if args.wheel:
                builds.append(("wheel: ", wheel_venv(tmp)))
            for label, build in builds:
                for name, r in startup(build, args.rounds, tmp, not args.no_startup_info).items():
                    results[label.replace(": ", "-") + name] = r
                    _show(name, r, f"{label}query i8 u8 -f openvino", "import click", ms=True)
        for name, framework, op, distinct in [("repeated", "cann", "add", False), ("distinct", "paddle", "/", True)]:
            if name not in only:
                continue
            ours_in, ref_in = write_streams(tmp, framework, args.lines, distinct, args.seed)
            results[name] = compare(promote + ["query", "--batch", "-f", framework, "--op", op],
                                    [sys.executable, "-c", NUMPY_LOOP], args.batch_rounds, ours_in, ref_in)
            _show(name, results[name], f"--batch -f {framework} --op {op}", "numpy loop", ms=False,
                  lines=args.lines)
        if any(t in only for t in CAST_TARGETS):
            import cast_targets

            results.update(cast_targets.run(only, promote, rounds=args.cast_rounds, elements=args.cast_elements,
                                            file_mib=args.cast_mib, big_mib=args.big_mib, directory=args.dir))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


def _show(name: str, r: dict, ours: str, ref: str, ms: bool, lines: int = 0) -> None:
    target = TARGETS.get(name)
    verdict = "no target" if target is None else "met" if r["ratio"] <= target else "missed"
    if ms:
        figures = f"{r['ours']['median_s'] * 1e3:7.1f} ms vs {r['reference']['median_s'] * 1e3:7.1f} ms"
    else:
        figures = (f"{r['ours']['median_s']:6.2f} s ({lines / r['ours']['median_s'] / 1e3:5.0f}k lines/s) vs "
                   f"{r['reference']['median_s']:6.2f} s ({lines / r['reference']['median_s'] / 1e3:5.0f}k lines/s)")
    rss = f"peak RSS {r['ours']['peak_rss_mib']:.0f} MiB vs {r['reference']['peak_rss_mib']:.0f} MiB"
    paired = r["paired"]
    goal = f"target <= {target}: {verdict}" if target is not None else verdict
    line = (f"{name:9} {ours} vs {ref}: {figures}  ratio {r['ratio']:.2f} ({goal}); paired {paired['median']:.2f} "
            f"[{paired['min']:.2f}-{paired['max']:.2f}]; {rss}")
    if name == "distinct":
        rss_ok = "met" if r["ours"]["peak_rss_mib"] <= RSS_TARGET_MIB else "missed"
        line += f" (target <= {RSS_TARGET_MIB} MiB: {rss_ok})"
    print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
