#!/usr/bin/env bash
# Cast a directory of f32 weight files to bf16 for TOSA hardware, in parallel, and stop
# the pipeline when any weight overflowed (exit 1) -- the report says which file.
# Usage: examples/cast-weights.sh [DIR] [DTYPE]   (without a directory: a small generated one)
set -u
dir=${1:-}
to=${2:-bf16}
if [ -z "$dir" ]; then
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    python3 - "$dir" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(0)
np.save(f"{d}/conv1.npy", rng.standard_normal((16, 3, 3, 3)).astype(np.float32))
np.save(f"{d}/fc.npy", np.asfortranarray(rng.standard_normal((64, 10)).astype(">f4")))
np.save(f"{d}/scale.npy", np.array(3.4e38, dtype=np.float32))  # 0-d; beyond bf16's largest finite value
PY
fi
reports=$(promote cast "$dir" --to "$to" --force --format json --fail-on overflow)
status=$?
printf '%s\n' "$reports" | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if r.get("error"):
        print("ERROR   " + r["input"] + ": " + r["error"])
        continue
    s = r["stats"]
    flag = "OVERFLOW" if r["failed_on"] else "ok      "
    over = s["overflow_inf"] + s["overflow_nan"] + s["saturated"]
    print("%s %s -> %s: %d elements, %d exact, %d rounded, %d overflowed"
          % (flag, r["input"], r["output"], r["elements"], s["exact"], s["rounded"], over))
'
exit "$status"
