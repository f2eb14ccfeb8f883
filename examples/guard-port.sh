#!/usr/bin/env bash
# A CI guard for a model port from PaddlePaddle to Ascend (aclnn): fail the build when the two
# frameworks promote any pair of the dtypes the model uses differently, and show where.
# Usage: examples/guard-port.sh [DTYPES]   (default: the float types of a mixed-precision model)
set -u
types=${1:-bf16,f16,f32,i32,i64}
if promote table --diff paddle cann --types "$types" --exit-code; then
    echo "paddle and cann agree on every pair of $types"
else
    status=$?
    [ "$status" -eq 1 ] && echo "paddle and cann promote these pairs differently: insert explicit casts" >&2
    exit "$status"
fi
