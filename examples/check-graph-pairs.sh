#!/usr/bin/env bash
# Check every binary op of a model graph against OpenVINO's ConvertPromoteTypes in one call:
# the pairs come one per line (as a graph dump would list them), the answers come back in the
# same order; the script fails (exit 1) when OpenVINO would refuse any of them.
# Usage: examples/check-graph-pairs.sh [PAIRS_FILE]    (without a file: a small built-in graph)
set -u
if [ $# -ge 1 ]; then
    input=$(cat "$1")
else
    input=$'# op inputs of a small graph\nf16 f32\ni32 i64\n0d:f32 f16\ni8 u8\n'
fi
answers=$(printf '%s\n' "$input" | promote query --batch -f openvino --format json)
status=$?
printf '%s\n' "$answers" | python3 -c '
import json, sys
for line in sys.stdin:
    a = json.loads(line)
    pair = a["a"] + " " + a["b"]
    if a["result"] is None:
        hint = a.get("allowed_with")
        fix = " (-O %(option)s=%(value)s gives %(result)s)" % hint if hint else ""
        print("REFUSED " + pair + ": " + a["error"] + fix)
    else:
        print("ok      " + pair + " -> " + a["result"])
'
exit "$status"
