"""`promote rescale` against `promote cast` on the same i32 file: wall time and peak memory.

Makes (or reuses) an i32 .npy file of --size-mib MiB shaped (N, --channels), then runs,
alternately and each in a fresh process under ``/usr/bin/time -v`` (for the peak RSS),

* ``cast``    -- ``promote cast IN --to i8``;
* ``rescale`` -- ``promote rescale IN --to i8 --per-channel`` with one multiplier and shift
  per channel (shifts 38 to 40, DOUBLE_ROUND with --rounding double).

and prints the median wall time and peak RSS of each and the speed ratio
cast_time / rescale_time (1.0: as fast as the cast; 0.5: half its speed).

    python benchmarks/bench_rescale.py --size-mib 1024 --rounds 5
    python benchmarks/bench_rescale.py --size-mib 64 --rounds 3 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def make_file(path: Path, size_mib: int, channels: int) -> None:
    import numpy as np

    rows = (size_mib << 20) // (4 * channels)
    rng = np.random.default_rng(0)
    mm = np.lib.format.open_memmap(path, mode="w+", dtype=np.int32, shape=(rows, channels))
    step = max(1, (16 << 20) // (4 * channels))
    for i in range(0, rows, step):
        k = min(step, rows - i)
        mm[i:i + k] = (rng.standard_normal((k, channels)) * 2.0 ** rng.integers(8, 31, (k, channels))).astype(np.int32)
    mm.flush()
    del mm


def run(argv: list[str]) -> tuple[float, int]:
    """(wall seconds, peak RSS KiB) of one command."""
    timer = shutil.which("time") or "/usr/bin/time"
    cmd = [timer, "-v", *argv] if os.path.exists(timer) else argv
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {p.stderr.strip()[-500:]}")
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    return wall, int(m.group(1)) if m else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--channels", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rounding", choices=["single", "double", "inexact"], default="single")
    ap.add_argument("--input", help="an existing (N, C) i32 .npy file to use")
    ap.add_argument("--dir", help="where to put the generated and output files (default: a temporary directory)")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)

    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench-rescale-"))
    work.mkdir(parents=True, exist_ok=True)
    src = Path(args.input) if args.input else work / f"acc-{args.size_mib}MiB-{args.channels}.npy"
    if not src.exists():
        make_file(src, args.size_mib, args.channels)
    import numpy as np

    channels = int(np.load(src, mmap_mode="r").shape[-1])
    mults = ",".join(str(1518500250 + 7919 * k) for k in range(channels))
    shifts = ",".join(str(38 + k % 3) for k in range(channels))
    exe = [sys.executable, "-m", "promote_cli"]
    commands = {
        "cast": exe + ["cast", str(src), "--to", "i8", "-o", str(work / "out-cast.npy"), "--force"],
        "rescale": exe + ["rescale", str(src), "--to", "i8", "--per-channel", "--multiplier", mults, "--shift", shifts,
                          "--rounding", args.rounding, "-o", str(work / "out-rescale.npy"), "--force"],
    }
    times: dict = {k: [] for k in commands}
    rss: dict = {k: [] for k in commands}
    for r in range(args.rounds):
        for name in (commands if r % 2 == 0 else reversed(list(commands))):
            wall, peak = run(commands[name])
            times[name].append(wall)
            rss[name].append(peak)
            print(f"round {r + 1} {name:8s} {wall:7.2f} s  {peak / 1024:7.1f} MiB", flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    med_rss = {k: statistics.median(v) for k, v in rss.items()}
    ratio = med["cast"] / med["rescale"]
    size = src.stat().st_size
    print(f"input {size / 2**20:.0f} MiB, {channels} channels, rounding {args.rounding}, {args.rounds} rounds (medians)")
    for k in commands:
        print(f"  {k:8s} {med[k]:7.2f} s  {size / med[k] / 2**20:8.1f} MiB/s  peak RSS {med_rss[k] / 1024:7.1f} MiB")
    print(f"speed ratio rescale/cast: {ratio:.2f} (target >= 0.5)")
    if args.json:
        Path(args.json).write_text(json.dumps({"input_bytes": size, "channels": channels, "rounding": args.rounding,
                                               "seconds": times, "peak_rss_kib": rss, "median_seconds": med,
                                               "ratio": ratio}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
