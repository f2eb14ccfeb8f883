"""Probe: what dtype binary ``keras.ops`` functions other than ``add`` give, on each backend.

What is asked
    Each name of `OPS` as ``keras.ops.NAME(x, y)``, with the pair probe's operands
    (`promote_cli.probes.keras.make_operand`: ``keras.ops.cast`` of a float32 tensor of ones of shape
    ``(2,)``; Python scalars `promote_cli.probes.dtype_names.PY_VALUES`), on each backend (a subprocess
    each, ``floatx`` float32).  The axis holds Keras' dtypes as tensors and the Python scalars, no
    0-d tensors (the pair recording asks those of ``add``); two Python scalars are not asked (`opsweep`).

How the answer is read
    The result's dtype as an operand, or the refusal as the pair probe writes it.  A JAX result's weak
    type is not recorded (the pair recording has it for ``add``).

    python -m promote_cli.probes.keras_ops OUT.json
"""

from __future__ import annotations

import json
import sys

from promote_cli.probes import keras as pairs
from promote_cli.probes import opsweep
from promote_cli.probes.opcases import Recorder, write_op_recording

FRAMEWORK = "keras"
PACKAGE = "keras"

#: every keras.ops function asked, in the recording's order -> its arity
OPS: dict[str, int] = dict.fromkeys(["subtract", "multiply", "maximum", "minimum", "equal", "not_equal", "less",
                                     "greater"], 2)
#: name -> the name it is the same function as (none among these)
ALIASES: dict[str, str] = {}
#: no Python operators are asked (on a backend tensor they are the backend's), and no where
OPERATORS: dict = {}
WHERE_CONDITIONS: list[str] = []
FLOATX = "float32"
AXIS = pairs.TYPES + pairs.SCALARS


def version() -> str | None:
    return pairs.version()


def _ask(op: str, operands: list[str]):
    import keras  # noqa: PLC0415

    try:
        out = getattr(keras.ops, op)(*(pairs.make_operand(o) for o in operands))
    except Exception as exc:  # noqa: BLE001 - every refusal is an answer
        return None, pairs.clean_error(exc)
    return opsweep.result_operand(out, pairs.dtype_name)


def record_backend() -> dict:
    """The rows of this process's backend."""
    import warnings  # noqa: PLC0415

    warnings.filterwarnings("ignore")
    import keras  # noqa: PLC0415

    keras.config.set_floatx(FLOATX)
    recorder = Recorder(AXIS)
    opsweep.sweep(recorder, OPS, {"backend": keras.config.backend()}, _ask, [], [])
    return recorder.recording({})


def record_ops(ruleset: str = FRAMEWORK) -> dict:
    """Every op of `OPS` on every backend; an op recording, its rows by op, then backend."""
    rows, messages = [], []
    for n, backend in enumerate(pairs.BACKENDS):
        part = pairs.run_mode(backend, FLOATX, "promote_cli.probes.keras_ops")
        for op, _, lead, cells in part["rows"]:
            cells = [_interned(messages, part["messages"][c]) if isinstance(c, int) else c for c in cells]
            rows.append([op, n, lead, cells])
    rows.sort(key=lambda row: list(OPS).index(row[0]))
    return {"ruleset": ruleset, "package": PACKAGE, "version": version(), "probe": "promote_cli.probes.keras_ops",
            "device": "cpu", "floatx": FLOATX, **pairs.companions(), "aliases": ALIASES, "kind": "ops",
            "axis": AXIS, "options": [{"backend": b} for b in pairs.BACKENDS], "messages": messages, "rows": rows}


def _interned(messages: list, text: str) -> int:
    if text not in messages:
        messages.append(text)
    return messages.index(text)


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    if sys.argv[1:] == ["--mode"]:
        print(json.dumps(record_backend()))
    else:
        write_op_recording(record_ops(), sys.argv[1] if len(sys.argv) > 1 else "tests/data/recordings/ops-keras.json")
