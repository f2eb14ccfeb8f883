"""The cast targets of `run.py`: every TOSA CAST pair in memory, `promote cast` of a file against numpy,
and a large cast's use of the CPUs and memory.

    python benchmarks/run.py --only cast-pairs --only cast-file --only cast-2g

cast-pairs   `cast_array(x, dst)` with statistics (what `promote cast` computes) on N elements of typical
             values, against `x.astype(dst)` (numpy / ml_dtypes, no statistics, not TOSA's semantics) and
             against `x.copy()`, alternately; each ratio is the median of the paired ratios.
             vs astype: astype's time / ours (>= 1: ours is as fast).  vs memcpy: the bytes ours moves per
             second (input + output) / the bytes the copy moves per second (2 x input).
cast-f16 / cast-bf16 / cast-f8e4m3
             `promote cast IN --to T -o OUT --force` on a 256 MiB f32 file, against a script doing
             `np.load(IN).astype(T)`, `np.save` and `os.fsync` (as durable as promote's atomic write),
             alternately in fresh processes; ratio = ours / numpy (median wall times).
cast-2g      `promote cast` of a 2 GiB f32 file to f16: CPU time (user + system) / wall time, and peak RSS;
             beside it, the CPU/wall of two busy threads (hashing) run between its runs: what a shared
             machine granted (2.0 on an idle 2-CPU machine), and the disk's durable write rate (the 1 GiB
             output must be on the disk before the cast ends). `cast-2g-mem`: the same in a memory-backed
             directory (/dev/shm, where there is one), where the disk does not bound the wall time.
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

#: name -> (comparison, goal)
GOALS = {
    "cast-pairs": {"astype": 1.0, "memcpy": 0.25},
    "cast-f16": 0.8,
    "cast-bf16": 0.8,
    "cast-f8e4m3": 0.5,
    "cast-2g": {"cpu/wall": 1.5, "rss_mib": 256},
}
FILE_TARGETS = ("cast-f16", "cast-bf16", "cast-f8e4m3")

NUMPY_CAST = """
import os, sys
import numpy as np
import ml_dtypes
src, dst, to = sys.argv[1:4]
dtype = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f8e4m3": ml_dtypes.float8_e4m3fn}[to]
with np.errstate(all="ignore"):
    y = np.load(src).astype(dtype)
with open(dst, "wb") as f:
    np.save(f, y)
    f.flush()
    os.fsync(f.fileno())
"""


def _verdict(ok: bool) -> str:
    return "met" if ok else "missed"


# --------------------------------------------------------------------------- in memory

def _pair_input(src: str, n: int, rng) -> np.ndarray:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_cast import make_input

    return make_input(src, n, rng)


def _paired(fa, fb, rounds: int) -> tuple[float, float, float]:
    """(median time of a, median time of b, median of the paired ratios b/a), a and b alternating."""
    fa(), fb()
    ta, tb, r = [], [], []
    for _ in range(rounds):
        t = time.perf_counter()
        fa()
        a = time.perf_counter() - t
        t = time.perf_counter()
        fb()
        b = time.perf_counter() - t
        ta.append(a), tb.append(b), r.append(b / a)
    return statistics.median(ta), statistics.median(tb), statistics.median(r)


def cast_pairs(n: int, rounds: int, pairs=None, show=print) -> dict:
    """Every legal pair: ours (with statistics) against astype and against a copy of the input."""
    from promote_cli.numerics.cast import cast_array
    from promote_cli.numerics.legality import LEGAL, TOSA_TYPES
    from promote_cli.vocab.numpy_types import numpy_dtype

    order = sorted(LEGAL, key=lambda p: (TOSA_TYPES.index(p[0]), TOSA_TYPES.index(p[1])))
    if pairs:
        order = [p for p in order if f"{p[0]}->{p[1]}" in pairs]
    rng = np.random.default_rng(0)
    inputs: dict = {}
    rows = {}
    goal = GOALS["cast-pairs"]
    for src, dst in order:
        x = inputs.setdefault(src, _pair_input(src, n, rng))
        dt = numpy_dtype(dst)

        def ours(x=x, src=src, dst=dst):
            cast_array(x, dst, src=src)

        def astype(x=x, dt=dt):
            with np.errstate(all="ignore"):
                x.astype(dt)

        t_ours, t_astype, vs_astype = _paired(ours, astype, rounds)
        _, t_copy, copy_over_ours = _paired(ours, x.copy, rounds)
        moved = x.nbytes + x.size * dt.itemsize
        vs_memcpy = copy_over_ours * moved / (2 * x.nbytes)
        rows[f"{src}->{dst}"] = {"ours_s": t_ours, "astype_s": t_astype, "copy_s": t_copy,
                                 "vs_astype": vs_astype, "vs_memcpy": vs_memcpy}
        show(f"  {src + '->' + dst:14} {x.nbytes / t_ours / 1e9:6.2f} GB/s in; astype {x.nbytes / t_astype / 1e9:6.2f};"
             f" copy {x.nbytes / t_copy / 1e9:6.2f}  vs astype {vs_astype:5.2f} ({_verdict(vs_astype >= goal['astype'])})"
             f"  vs memcpy {vs_memcpy:5.2f} ({_verdict(vs_memcpy >= goal['memcpy'])})")
    out = {"elements": n, "pairs": rows}
    for key in ("astype", "memcpy"):
        vals = {p: r[f"vs_{key}"] for p, r in rows.items()}
        worst = min(vals, key=vals.get)
        out[f"vs_{key}"] = {"geomean": math.exp(statistics.fmean(math.log(v) for v in vals.values())),
                            "worst": vals[worst], "worst_pair": worst,
                            "met": sum(v >= goal[key] for v in vals.values())}
    a, m = out["vs_astype"], out["vs_memcpy"]
    show(f"cast-pairs {len(rows)} pairs in memory with statistics, {n} elements: vs astype geomean {a['geomean']:.2f},"
         f" worst {a['worst']:.2f} ({a['worst_pair']}), {a['met']}/{len(rows)} >= {goal['astype']} "
         f"(target: {_verdict(a['met'] == len(rows))}); vs memcpy geomean {m['geomean']:.2f}, worst {m['worst']:.2f}"
         f" ({m['worst_pair']}), {m['met']}/{len(rows)} >= {goal['memcpy']} (target: {_verdict(m['met'] == len(rows))})")
    return out


# --------------------------------------------------------------------------- files

def write_f32(path: str, mib: int, seed: int = 0) -> None:
    """A .npy of `mib` MiB of f32 weights-like values (normal, a few large), written in chunks."""
    n = (mib << 20) // 4
    rng = np.random.default_rng(seed)
    with open(path, "wb") as fp:
        np.lib.format.write_array_header_1_0(fp, {"descr": "<f4", "fortran_order": False, "shape": (n,)})
        block = 1 << 22
        for s in range(0, n, block):
            m = min(block, n - s)
            v = rng.standard_normal(m, dtype=np.float32)
            v[::4099] *= np.float32(1000)
            fp.write(v.tobytes())


#: runs a command and prints its wall time, CPU time and peak RSS: measured from this small process, since a
#: process started from the (large) benchmark would inherit its peak RSS (Linux keeps it across exec)
LAUNCH = """
import json, os, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = proc.stderr.read()
_, status, usage = os.wait4(proc.pid, 0)
print(json.dumps({"wall": time.perf_counter() - start, "cpu": usage.ru_utime + usage.ru_stime,
                  "rss_mib": usage.ru_maxrss / 1024, "code": os.waitstatus_to_exitcode(status),
                  "stderr": err.decode(errors="replace")}))
"""


def run_process(cmd: list[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS MiB) of one run of `cmd` in a fresh process."""
    import json

    got = subprocess.run([sys.executable, "-c", LAUNCH, *cmd], capture_output=True, text=True, check=True)
    r = json.loads(got.stdout)
    if r["code"] not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)}: exit {r['code']}: {r['stderr'].strip()}")
    return r["wall"], r["cpu"], r["rss_mib"]


def cast_files(promote: list[str], directory: str, rounds: int, mib: int, targets, show=print) -> dict:
    """`promote cast` of a `mib` MiB f32 file against the numpy script, per target type."""
    src = os.path.join(directory, "in.npy")
    write_f32(src, mib)
    out = {}
    for name in targets:
        to = name.split("-", 1)[1]
        ours_out, ref_out = os.path.join(directory, "ours.npy"), os.path.join(directory, "numpy.npy")
        ours = promote + ["cast", src, "--to", to, "-o", ours_out, "--force"]
        ref = [sys.executable, "-c", NUMPY_CAST, src, ref_out, to]
        run_process(ours), run_process(ref)
        samples = []
        for _ in range(rounds):
            a = run_process(ours)
            b = run_process(ref)
            samples.append((a, b))
        r = {"ours_s": statistics.median(a[0] for a, _ in samples),
             "numpy_s": statistics.median(b[0] for _, b in samples),
             "ratio": statistics.median(a[0] / b[0] for a, b in samples),
             "ours_rss_mib": max(a[2] for a, _ in samples), "numpy_rss_mib": max(b[2] for _, b in samples)}
        out[name] = r
        goal = GOALS[name]
        show(f"{name:11} promote cast {mib} MiB f32 -> {to} vs numpy+fsync: {r['ours_s']:6.2f} s vs {r['numpy_s']:6.2f} s"
             f"  ratio {r['ratio']:.2f} (target <= {goal}: {_verdict(r['ratio'] <= goal)});"
             f" peak RSS {r['ours_rss_mib']:.0f} MiB vs {r['numpy_rss_mib']:.0f} MiB")
        for p in (ours_out, ref_out):
            if os.path.exists(p):
                os.unlink(p)
    os.unlink(src)
    return out


#: two threads hashing (hashlib releases the GIL): the CPU/wall the machine grants a process right now
TWO_BUSY_THREADS = """
import hashlib, threading, time
data = b"x" * (64 << 20)
def work():
    for _ in range(8):
        hashlib.sha256(data).digest()
threads = [threading.Thread(target=work) for _ in range(2)]
start, cpu = time.perf_counter(), time.process_time()
for t in threads:
    t.start()
for t in threads:
    t.join()
print((time.process_time() - cpu) / (time.perf_counter() - start))
"""


def available_parallelism() -> float:
    """CPU time / wall time of two busy threads: 2 on an idle 2-CPU machine, less when others run."""
    got = subprocess.run([sys.executable, "-c", TWO_BUSY_THREADS], capture_output=True, text=True, check=True)
    return float(got.stdout)


def durable_write_rate(directory: str, nbytes: int) -> float:
    """Bytes per second the file system under `directory` takes durably: `nbytes` written in 16 MiB
    writes, then fsync (what `dd conv=fsync` measures)."""
    path = os.path.join(directory, "disk-rate.tmp")
    block = b"\x5a" * (16 << 20)
    start = time.perf_counter()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        left = nbytes
        while left > 0:
            left -= os.write(fd, block[:min(left, len(block))])
        os.fsync(fd)
    finally:
        os.close(fd)
    seconds = time.perf_counter() - start
    os.unlink(path)
    return nbytes / seconds


def memory_directory(need: int) -> str | None:
    """A memory-backed directory with room for `need` bytes (Linux's /dev/shm), or None."""
    d = "/dev/shm"
    try:
        st = os.statvfs(d)
    except (OSError, AttributeError):
        return None
    return d if os.access(d, os.W_OK) and st.f_bavail * st.f_frsize > need + (1 << 30) else None


def cast_big(promote: list[str], directory: str, rounds: int, mib: int, show=print) -> dict:
    """CPU time / wall time and peak RSS of `promote cast` of a large f32 file to f16, next to the
    CPU/wall two busy threads get between its runs (what the machine granted), on the scratch
    directory's disk and, where there is one, in a memory-backed directory: the output must reach
    the disk before the cast ends (fsync), so on a disk slower than the cast the wall time is the
    disk's, which the disk's durable write rate, measured between the runs, shows."""
    out = {}
    places = [("cast-2g", directory, True)]
    mem = memory_directory(3 * (mib << 20) // 2)
    if mem is not None:
        places.append(("cast-2g-mem", tempfile.mkdtemp(prefix="promote-cast-bench-", dir=mem), False))
    for name, where, disk in places:
        try:
            out[name] = _cast_big_in(name, promote, where, rounds, mib, disk, show)
        finally:
            if where != directory:
                import shutil

                shutil.rmtree(where, ignore_errors=True)
    return out


def _cast_big_in(name, promote, directory, rounds, mib, disk, show) -> dict:
    src = os.path.join(directory, "big.npy")
    dst = os.path.join(directory, "big.f16.npy")
    write_f32(src, mib, seed=1)
    cmd = promote + ["cast", src, "--to", "f16", "-o", dst, "--force"]
    samples, granted, rates = [], [], []
    for _ in range(rounds):
        if os.path.exists(dst):  # a new output each time: freeing the last one's gigabyte is no part of a cast
            os.unlink(dst)
        granted.append(available_parallelism())
        if disk:
            rates.append(durable_write_rate(directory, (mib << 20) // 2))
        samples.append(run_process(cmd))
    for p in (src, dst):
        if os.path.exists(p):
            os.unlink(p)
    r = {"wall_s": statistics.median(s[0] for s in samples), "cpu_s": statistics.median(s[1] for s in samples),
         "cpu_per_wall": statistics.median(s[1] / s[0] for s in samples), "rss_mib": max(s[2] for s in samples),
         "two_busy_threads_cpu_per_wall": statistics.median(granted), "directory": directory}
    goal = GOALS["cast-2g"]
    where = ""
    if disk:
        r["disk_mb_per_s"] = statistics.median(rates) / 1e6
        r["output_to_disk_s"] = (mib << 20) / 2 / statistics.median(rates)
        where = (f"; the disk took {r['disk_mb_per_s']:.0f} MB/s durably meanwhile: the output alone needs "
                 f"{r['output_to_disk_s']:.2f} s there")
    else:
        where = f" (in {os.path.dirname(directory)}, memory-backed)"
    show(f"{name:11} promote cast {mib} MiB f32 -> f16: {r['wall_s']:6.2f} s wall, {r['cpu_s']:6.2f} s CPU"
         f"  CPU/wall {r['cpu_per_wall']:.2f} (target >= {goal['cpu/wall']}: {_verdict(r['cpu_per_wall'] >= goal['cpu/wall'])});"
         f" peak RSS {r['rss_mib']:.0f} MiB (target <= {goal['rss_mib']} MiB: {_verdict(r['rss_mib'] <= goal['rss_mib'])});"
         f" two busy threads got CPU/wall {r['two_busy_threads_cpu_per_wall']:.2f} meanwhile{where}")
    return r


def run(only, promote: list[str], *, rounds: int, elements: int, file_mib: int, big_mib: int,
        directory: str | None = None, pairs=None) -> dict:
    """The cast targets named in `only`, printed as they finish; their figures."""
    results = {}
    if "cast-pairs" in only:
        results["cast-pairs"] = cast_pairs(elements, rounds, pairs)
    files = [t for t in FILE_TARGETS if t in only]
    if files or "cast-2g" in only:
        with tempfile.TemporaryDirectory(prefix="promote-cast-bench-", dir=directory) as d:
            if files:
                results.update(cast_files(promote, d, rounds, file_mib, files))
            if "cast-2g" in only:
                results.update(cast_big(promote, d, max(1, rounds // 2), big_mib))
    return results
