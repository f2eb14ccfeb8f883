"""End-to-end file cast throughput and peak memory, measured in one run.

Compares, on the same generated .npy file:

* ``copy``   -- a plain file copy (shutil.copyfile): the I/O floor;
* ``numpy``  -- ``np.save(out, np.load(in).astype(dtype))``: whole array in memory,
  numpy's own (non-TOSA) conversion, no statistics, no fsync;
* ``promote``-- ``castfile.cast_file``: streamed TOSA CAST with statistics, atomic write.

Each variant runs in a fresh Python process so that its peak RSS is its own.

    python benchmarks/bench_cast_file.py --size-mib 512 --to f16
    python benchmarks/bench_cast_file.py --size-mib 4096 --only promote   # the 4 GiB check
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, resource, shutil, sys, time
sys.path.insert(0, {root!r})
kind, src, dst, to = sys.argv[1:5]
t = time.perf_counter()
if kind == "copy":
    shutil.copyfile(src, dst)
elif kind == "numpy":
    import numpy as np
    from promote_cli.vocab.numpy_types import numpy_dtype
    with np.errstate(all="ignore"):
        np.save(dst, np.load(src).astype(numpy_dtype(to)))
else:
    from promote_cli.arrayio.castfile import cast_file
    cast_file(src, dst, to=to, force=True)
dt = time.perf_counter() - t
print(json.dumps({{"seconds": dt, "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}}))
"""


def make_input(path: Path, size_mib: int, src: str) -> int:
    """Write a random .npy of about size_mib MiB in chunks, in a child process.

    (Linux keeps a process's peak RSS across exec, so the parent stays small.)
    """
    out = subprocess.run(
        [sys.executable, __file__, "--make-input", str(path), str(size_mib), src],
        check=True, capture_output=True, text=True,
    )
    return int(out.stdout.strip())


def _make_input(path: Path, size_mib: int, src: str) -> int:
    sys.path.insert(0, str(ROOT))
    import numpy as np

    from promote_cli.arrayio import npy as npyio
    from promote_cli.vocab.numpy_types import numpy_dtype

    dt = numpy_dtype(src)
    n = (size_mib << 20) // dt.itemsize
    rng = np.random.default_rng(0)
    block = 1 << 22
    with open(path, "wb") as fp:
        fp.write(npyio.header_bytes((n,), False, dt))
        for s in range(0, n, block):
            m = min(block, n - s)
            fp.write((rng.standard_normal(m) * 3e4).astype(dt).tobytes())
    return n * dt.itemsize


def run(kind: str, src: Path, dst: Path, to: str) -> dict:
    code = _CHILD.format(root=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", code, kind, str(src), str(dst), to], check=True, capture_output=True, text=True
    )
    res = json.loads(out.stdout.strip().splitlines()[-1])
    if dst.exists():
        dst.unlink()
    return res


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--make-input"]:
        print(_make_input(Path(argv[1]), int(argv[2]), argv[3]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mib", type=int, default=256, help="input size in MiB (default 256)")
    ap.add_argument("--from", dest="src", default="f32", help="input dtype (default f32)")
    ap.add_argument("--to", default="f16", help="output dtype (default f16)")
    ap.add_argument("--dir", default=None, help="directory for the scratch files (default: a temp dir)")
    ap.add_argument("--only", choices=["copy", "numpy", "promote"], action="append")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)

    kinds = args.only or ["copy", "numpy", "promote"]
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench-cast-") as d:
        src = Path(d) / "in.npy"
        nbytes = make_input(src, args.size_mib, args.src)
        results = {}
        for kind in kinds:
            r = run(kind, src, Path(d) / f"out-{kind}.npy", args.to)
            r["mib_per_s"] = nbytes / (1 << 20) / r["seconds"]
            results[kind] = r
    if args.json:
        print(json.dumps({"size_mib": args.size_mib, "from": args.src, "to": args.to, "results": results}))
        return 0
    print(f"{args.size_mib} MiB {args.src} -> {args.to}  ({os.cpu_count()} CPUs)")
    print(f"{'variant':<10}{'seconds':>10}{'MiB/s in':>12}{'peak RSS MiB':>15}")
    for kind, r in results.items():
        print(f"{kind:<10}{r['seconds']:>10.2f}{r['mib_per_s']:>12.1f}{r['peak_rss_kib'] / 1024:>15.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
