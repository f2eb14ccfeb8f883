"""A safetensors checkpoint cast f32 -> bf16: `promote cast` against the path users take today, in one run.

Compares, on the same generated checkpoint (f32 tensors of `--tensor-mib` MiB each, `--size-mib` in all,
with metadata):

* ``promote`` -- `plan_checkpoint` + `run_checkpoint` (what `promote cast CKPT --to bf16` does): streamed,
  TOSA CAST with statistics and largest errors per tensor, atomic output (fsync'ed);
* ``torch``   -- `safetensors.torch.load_file`, `tensor.to(torch.bfloat16)` for each tensor, `save_file`
  with the same metadata, then `os.fsync` of the output (as durable as ours). Runs with `--torch-python`
  (an interpreter with torch; `safetensors` is taken from this interpreter's installation when that one
  lacks it). Skipped, and said so, when no such interpreter is given or it has no torch.

Each variant runs in a fresh process, alternately, `--rounds` times; medians of the wall time and the peak
RSS of each process (`os.wait4`, from a small launcher so that it is the variant's own) are printed, with
the ratio ours / torch (target <= 1) and our peak (target <= 256 MiB):

    python benchmarks/bench_checkpoint.py --torch-python /path/to/torch-venv/bin/python
    python benchmarks/bench_checkpoint.py --size-mib 256 --rounds 1       # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROMOTE = r"""
import sys
sys.path.insert(0, {root!r})
import promote_cli
src, dst = sys.argv[1:3]
plan = promote_cli.plan_checkpoint(src, "bf16", output=dst, force=True)
for report in promote_cli.run_checkpoint(plan):
    pass
"""

TORCH = r"""
import os, sys
sys.path.append({safetensors_path!r})
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file
src, dst = sys.argv[1:3]
with safe_open(src, "pt") as f:
    metadata = f.metadata()
tensors = {{name: t.to(torch.bfloat16) for name, t in load_file(src).items()}}
save_file(tensors, dst, metadata=metadata)
fd = os.open(dst, os.O_RDONLY)
os.fsync(fd)
os.close(fd)
"""

#: runs a command and prints its wall time and peak RSS (KiB), its own (Linux keeps a process's peak RSS
#: across exec, so the launcher stays small)
LAUNCHER = r"""
import os, sys, time
t = time.perf_counter()
pid = os.spawnv(os.P_NOWAIT, sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(time.perf_counter() - t, usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""

MAKE = r"""
import json, struct, sys
import numpy as np
path, total_mib, tensor_mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
n = tensor_mib << 18  # f32 elements of a tensor
count = max(1, total_mib // tensor_mib)
head = {"__metadata__": {"format": "pt"}}
for i in range(count):
    head[f"layers.{i}.weight"] = {"dtype": "F32", "shape": [n // 1024, 1024], "data_offsets": [i * 4 * n, (i + 1) * 4 * n]}
text = json.dumps(head).encode()
text += b" " * (-len(text) % 8)
rng = np.random.default_rng(0)
with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text)
    for i in range(count):
        for _ in range(tensor_mib // 16 or 1):
            f.write((rng.standard_normal(min(n, 4 << 20), dtype=np.float32) * 0.02).tobytes())
"""


def run(cmd: list[str]) -> tuple[float, float]:
    out = subprocess.run([sys.executable, "-c", LAUNCHER, *cmd], check=True, capture_output=True, text=True)
    seconds, rss, code = out.stdout.split()
    if int(code) != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} ... failed (exit {code})")
    return float(seconds), int(rss) / 1024


def has_torch(python: str) -> bool:
    return subprocess.run([python, "-c", "import torch"], capture_output=True).returncode == 0


def safetensors_path() -> str:
    import importlib.util

    spec = importlib.util.find_spec("safetensors")
    return str(Path(spec.origin).parents[1]) if spec and spec.origin else ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--tensor-mib", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--torch-python", default=None, help="an interpreter with torch (and safetensors)")
    ap.add_argument("--dir", default=None, help="where the checkpoint and outputs go (default: a temporary dir)")
    ap.add_argument("--json", default=None, help="write the figures here too")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(dir=args.dir, prefix="promote-bench-ckpt-") as tmp:
        src = os.path.join(tmp, "model.safetensors")
        subprocess.run([sys.executable, "-c", MAKE, src, str(args.size_mib), str(args.tensor_mib)], check=True)
        size = os.path.getsize(src)
        variants = {"promote": [sys.executable, "-c", PROMOTE.format(root=str(ROOT)), src,
                                os.path.join(tmp, "promote.safetensors")]}
        torch_python = args.torch_python
        if torch_python and has_torch(torch_python):
            variants["torch"] = [torch_python, "-c", TORCH.format(safetensors_path=safetensors_path()), src,
                                 os.path.join(tmp, "torch.safetensors")]
        else:
            print("torch: not measured (give --torch-python, an interpreter with torch)")
        got: dict = {k: ([], []) for k in variants}
        for _ in range(args.rounds):
            for name, cmd in variants.items():
                seconds, rss = run(cmd)
                got[name][0].append(seconds)
                got[name][1].append(rss)
    med = {k: (statistics.median(s), statistics.median(r)) for k, (s, r) in got.items()}
    ours_s, ours_rss = med["promote"]
    mib = size / (1 << 20)
    line = (f"checkpoint-bf16  promote cast {mib:.0f} MiB f32 safetensors -> bf16: {ours_s:.2f} s "
            f"({mib / ours_s:.0f} MiB/s), peak RSS {ours_rss:.0f} MiB (target <= 256 MiB: "
            f"{'met' if ours_rss <= 256 else 'missed'})")
    figures = {"size_mib": mib, "promote": {"seconds": ours_s, "peak_rss_mib": ours_rss}}
    if "torch" in med:
        torch_s, torch_rss = med["torch"]
        ratio = ours_s / torch_s
        line += (f"; vs safetensors+torch: {torch_s:.2f} s, peak RSS {torch_rss:.0f} MiB; ratio {ratio:.2f} "
                 f"(target <= 1: {'met' if ratio <= 1 else 'missed'})")
        figures["torch"] = {"seconds": torch_s, "peak_rss_mib": torch_rss, "ratio": ratio}
    print(line)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
