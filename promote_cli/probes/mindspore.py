"""Probe: ask MindSpore (CPU) what dtype each binary case gives, in both execution modes.

What is asked
    Two ops: ``+`` (the Tensor operator; a Python scalar on the left runs ``Tensor.__radd__``)
    and ``ops.add`` (``mindspore.ops.add``), in both execution modes: ``pynative`` (eager, the
    default) and ``graph`` (``mindspore.set_context(mode=GRAPH_MODE)``, every case compiled by
    ``mindspore.jit``).  Operands: tensors (shape ``[2]``) and 0-d tensors (shape ``[]``) of
    every dtype in `ASKED`, each pair of them, and each with a Python scalar
    (``py:bool|int|float|complex``: ``True``, ``1``, ``1.5``, ``1+2j``) on either side
    (`promote_cli.probes.cases.pair_groups`); two Python scalars are Python's arithmetic and
    are not asked.  Graph mode, where every case is a compilation, asks the pairs without a
    0-d tensor and the 0-d pairs of the types in `GRAPH_0D` (`operand_pairs`).  Value cases (`VALUES`): Python ints outside int64, which MindSpore cannot
    convert, with an int8 tensor.  Tensors are made from NumPy arrays of ones
    (``Tensor(array, dtype=...)``): MindSpore's CPU Cast and Ones kernels cannot make the
    float8 and HiFloat8 types.

    Launches are blocking (``mindspore.runtime.launch_blocking()``), so a kernel's error is
    raised by the call that caused it.  Each mode runs in a subprocess of its own (the mode and
    the device are process-global), in an empty temporary directory: MindSpore imports any
    folder named ``triton`` on ``sys.path`` and writes ``rank_0/`` (graph dumps) into the
    working directory.  In graph mode the cases are compiled in batches (one ``jit`` function
    over many pairs, each pair a separate graph input, so nothing is constant-folded); a
    batch that fails is split in two until each refusal is a case of its own.

How the answer is read
    The result's dtype as an operand (``0d:i8`` for a result of rank 0), or the refusal:
    ``ExceptionClass: first line`` of MindSpore's message (`clean_error`).

Options in the recording: ``{"mode": "pynative"|"graph"}`` on every case.  MindSpore is
imported only inside the worker subprocess, so importing this module never fails when the
package is absent.
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import tempfile

from promote_cli.probes.cases import pair_groups
from promote_cli.probes.dtype_names import PY_VALUES
from promote_cli.vocab.dtypes import native_names

FRAMEWORK = "mindspore"
PACKAGE = "mindspore"

#: the dtypes asked, in the recording's order; their MindSpore names (``mindspore.int8``) are
#: the vocabulary's (``native_names("mindspore")``); a test checks that this lists every type
#: MindSpore names.
ASKED = ("bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
         "f8e4m3", "f8e5m2", "hif8", "bf16", "f16", "f32", "f64", "c64", "c128")
_NAMES = native_names("mindspore")
#: canonical dtype name -> MindSpore attribute name, for the asked types this vocabulary names
TO_MS = {name: _NAMES[name] for name in ASKED if name in _NAMES}

MODES = ("pynative", "graph")
OPS = ("+", "ops.add")

#: value operands asked of ``+`` and ``ops.add`` with an int8 tensor: Python ints past int64
VALUES = ("py:9223372036854775808", "py:-9223372036854775809")

#: how many pairs one graph-mode compilation asks
BATCH = 24

#: the dtypes whose 0-d tensors graph mode asks (with each other and with the Python scalars)
GRAPH_0D = ("bool", "i8", "u8", "i64", "bf16", "f16", "f32", "f64", "c64")

_DASHES = re.compile(r"^-{5,}$")
_LOG_PREFIX = re.compile(r"^\[(ERROR|WARNING|INFO)\] \w+\([^)]*\)[^\[]*\[[^\]]*\] \w+\] ?")
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b")


def _dist_version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError  # noqa: PLC0415
    from importlib.metadata import version as dist_version

    try:
        return dist_version(dist)
    except PackageNotFoundError:
        return None


def version() -> str | None:
    """The installed MindSpore version (e.g. ``2.10.0``), None when absent (read from its metadata:
    importing MindSpore would fix its process-global context)."""
    return _dist_version(PACKAGE)


def clean_error(exc: BaseException) -> str:
    """``ExceptionClass: message``: the first line of MindSpore's message that says something (not a
    rule of dashes, not a log prefix), without addresses."""
    text = str(exc).strip()
    line = ""
    for raw in text.splitlines():
        raw = _LOG_PREFIX.sub("", raw.strip()).strip()
        if raw and not _DASHES.match(raw):
            line = raw
            break
    return f"{type(exc).__name__}: {_ADDRESS.sub('0x', line)}" if line else type(exc).__name__


def operand_pairs(mode: str = "pynative") -> list[tuple[str, str]]:
    """Every (a, b) pair asked of each op in `mode`: tensors, 0-d tensors and Python scalars in pynative
    mode; graph mode, which compiles every case, asks the pairs without a 0-d tensor, and the 0-d pairs of
    `GRAPH_0D` only."""
    pairs = [pair for group in pair_groups(TO_MS) for pair in group]
    if mode == "pynative":
        return pairs
    return [(a, b) for a, b in pairs if not (a.startswith("0d:") or b.startswith("0d:"))
            or {a.removeprefix("0d:"), b.removeprefix("0d:")} <= set(GRAPH_0D)]


def value_pairs() -> list[tuple[str, str]]:
    """The value cases: each of `VALUES` with an int8 tensor, on either side."""
    return [(a, b) for v in VALUES for a, b in (("i8", v), (v, "i8"))]


def _py_value(text: str):
    kind = text[3:]
    return PY_VALUES[kind] if kind in PY_VALUES else int(kind)


def _setup(mode: str):
    """Import MindSpore in this (worker) process, set the device, blocking launches and the mode."""
    os.environ.setdefault("GLOG_v", "3")
    import warnings  # noqa: PLC0415

    warnings.filterwarnings("ignore")
    import mindspore as ms  # noqa: PLC0415

    ms.set_device("CPU")
    ms.runtime.launch_blocking()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    global _OPS  # noqa: PLW0603 - the graph functions' name for mindspore.ops
    _OPS = ms.ops
    return ms


def maker(ms):
    """``make(operand)``: a MindSpore value for an operand string (a tensor of ones, or a Python scalar)."""
    import numpy as np  # noqa: PLC0415

    def make(text: str):
        if text.startswith("py:"):
            return _py_value(text)
        shape: tuple = (2,)
        if text.startswith("0d:"):
            shape, text = (), text[3:]
        return ms.Tensor(np.ones(shape, np.float32), dtype=getattr(ms, TO_MS[text]))

    return make


def reader(ms, keep_rank: bool = False):
    """``read(value) -> operand``: what an op returned, as its dtype (a pair recording's result) or,
    with `keep_rank`, as an operand with its form (``0d:i8``: an op recording's result)."""
    from promote_cli.probes.opsweep import result_operand  # noqa: PLC0415

    from_ms = {str(getattr(ms, name)): canonical for canonical, name in TO_MS.items()}

    def read(out) -> str:
        result, error = result_operand(out, lambda dtype: from_ms.get(str(dtype), str(dtype)))
        if error is not None:
            raise TypeError(error)
        return result if keep_rank or result.startswith("py:") else result.removeprefix("0d:")

    return read


# The functions graph mode compiles: each adds every pair of its arguments (a0 + a1, a2 + a3, ...).
# They live at module level so that mindspore.jit can read their source.
def _graph_plus(*args):
    out = ()
    for i in range(len(args) // 2):
        out = out + (args[2 * i] + args[2 * i + 1],)
    return out


def _graph_ops_add(*args):
    out = ()
    for i in range(len(args) // 2):
        out = out + (_OPS.add(args[2 * i], args[2 * i + 1]),)
    return out


#: ``mindspore.ops``, set by `_setup` in the worker (the graph functions read it as a global)
_OPS = None


def function(ms, op: str):
    """The callable an op name stands for: an operator (``+``) or a ``mindspore.ops`` function (``ops.add``)."""
    from promote_cli.probes.opsweep import OPERATORS  # noqa: PLC0415

    return OPERATORS[op] if op in OPERATORS else getattr(ms.ops, op.removeprefix("ops."))


def _answer(ms, op: str, operands: list[str], make, read) -> list:
    """``[result, error]`` of one case asked in pynative mode."""
    try:
        return [read(function(ms, op)(*(make(o) for o in operands))), None]
    except Exception as exc:  # noqa: BLE001 - every MindSpore error is an answer
        return [None, clean_error(exc)]


def _answer_graph(ms, op: str, batch: list, make, read) -> list:
    """``[result, error]`` of each case of `batch`, compiled together; a batch that fails is split in two
    until each refusal is a case of its own."""
    compiled = _COMPILED.get(op) or _COMPILED.setdefault(op, ms.jit(_GRAPH[op]))
    try:
        outs = compiled(*(make(o) for _, operands in batch for o in operands))
    except Exception as exc:  # noqa: BLE001 - every MindSpore error is an answer
        if len(batch) == 1:
            return [[None, clean_error(exc)]]
        half = len(batch) // 2
        return _answer_graph(ms, op, batch[:half], make, read) + _answer_graph(ms, op, batch[half:], make, read)
    return [[read(out), None] for out in outs]


_GRAPH = {"+": _graph_plus, "ops.add": _graph_ops_add}
_COMPILED: dict = {}


#: operands whose cases graph mode compiles one at a time: the types that promote with next to nothing
#: and the Python complex, whose cases mostly fail (a failed batch is split, and recompiled, until each
#: failure stands alone; compiling them alone from the start is cheaper, and answers the same)
_ALONE = ("u16", "u32", "u64", "f8e4m3", "f8e5m2", "hif8")


def _batch(cases: list, i: int, size: int) -> list:
    """Up to `size` cases from `i` on, all of one op, none of them to be compiled alone but the first."""
    def alone(case) -> bool:
        return any(o.split(":")[-1] in _ALONE or o == "py:complex" for o in case[1])

    if alone(cases[i]):
        return cases[i:i + 1]
    batch = cases[i:i + size]
    return batch[:next((n for n, c in enumerate(batch) if c[0] != batch[0][0] or alone(c)), len(batch))]


def _worker(mode: str, cases_path: str, start: int, alone: bool, out_path: str, keep_rank: bool) -> None:
    """Ask the cases of `cases_path` from `start` on in this process, appending one ``[result, error]`` line
    per case to `out_path` as it is answered (a crash loses nothing answered before it).  With `alone`, the
    first case is compiled by itself (graph mode), so that a crash names it."""
    ms = _setup(mode)
    cache: dict = {}
    base = maker(ms)

    def make(operand: str):
        return cache[operand] if operand in cache else cache.setdefault(operand, base(operand))

    read = reader(ms, keep_rank=keep_rank)
    with open(cases_path, encoding="utf-8") as handle:
        cases = json.load(handle)[start:]
    with open(out_path, "a", encoding="utf-8") as out:
        i = 0
        while i < len(cases):
            if mode == "graph":
                batch = _batch(cases, i, 1 if alone and i == 0 else BATCH)
                answers = _answer_graph(ms, batch[0][0], batch, make, read)
            else:
                answers = [_answer(ms, *cases[i], make, read)]
            out.writelines(json.dumps(answer) + "\n" for answer in answers)
            out.flush()
            i += len(answers)


#: the refusal recorded where asking a case killed the MindSpore process
CRASH = "Crash: the MindSpore process died (signal {signal}) asking this case"


def _run(module: str, mode: str, tmp: str, pos: int, alone: bool, keep_rank: bool):
    """One worker run from case `pos`: (its return code, the answers it wrote, its last line of stderr)."""
    cases_path, out_path = os.path.join(tmp, "cases.json"), os.path.join(tmp, "answers.jsonl")
    open(out_path, "w", encoding="utf-8").close()
    env = {**os.environ, "GLOG_v": "3", "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    argv = [sys.executable, "-m", module, "--worker", mode, cases_path, str(pos), str(alone).lower(), out_path,
            str(keep_rank).lower()]
    proc = subprocess.run(argv, cwd=tmp, env=env, capture_output=True, text=True, check=False)
    with open(out_path, encoding="utf-8") as handle:
        answers = [json.loads(line) for line in handle if line.strip()]
    return proc.returncode, answers, (proc.stderr.strip().splitlines() or ["no output"])[-1]


def ask_cases(module: str, mode: str, cases: list, keep_rank: bool = False) -> list:
    """``[result, error]`` for each ``[op, [operands]]`` of `cases`, asked by ``python -m MODULE --worker`` in
    `mode`, in an empty temporary directory.  A case that kills the worker (MindSpore 2.10 dies on some, e.g.
    ``f16 * 0-d bf16``) is recorded as `CRASH` (in graph mode, where cases are compiled in batches, once it
    has killed it asked alone); a new worker then goes on after it."""
    with tempfile.TemporaryDirectory(prefix="promote-mindspore-") as tmp:
        with open(os.path.join(tmp, "cases.json"), "w", encoding="utf-8") as handle:
            json.dump(cases, handle)
        answers: list = []
        crashed_at = None
        while len(answers) < len(cases):
            pos = len(answers)
            code, more, tail = _run(module, mode, tmp, pos, crashed_at == pos, keep_rank)
            answers += more
            if code == 0:
                if len(answers) != len(cases):
                    raise RuntimeError(f"the MindSpore worker ({mode}) answered {len(answers)} of {len(cases)} cases")
            elif code > 0 and code != 139:  # 139: a shell's report of SIGSEGV
                raise RuntimeError(f"the MindSpore worker ({mode}) failed: {tail}")
            elif mode != "graph" or crashed_at == len(answers):  # pynative asks one case at a time
                answers.append([None, CRASH.format(signal=-code if code < 0 else 11)])
                crashed_at = None
            else:
                crashed_at = len(answers)
        return answers


def record(modes=MODES) -> dict:
    """Ask every case, one worker per mode; return a recording."""
    cases, values = [], []
    valued = value_pairs()
    for mode in modes:
        options, pairs = {"mode": mode}, operand_pairs(mode)
        asked = [[op, [a, b]] for op in OPS for a, b in pairs + valued]
        answers = ask_cases("promote_cli.probes.mindspore", mode, asked)
        for (op, (a, b)), (result, error) in zip(asked, answers):
            (values if (a, b) in valued else cases).append([op, a, b, options, result, error])
    return {
        "ruleset": FRAMEWORK,
        "package": PACKAGE,
        "version": version(),
        "probe": "promote_cli.probes.mindspore",
        "python": platform.python_version(),
        "device": "cpu",
        "numpy": _dist_version("numpy"),
        "not_asked": [n for n in ASKED if n not in TO_MS],
        # value operands (py:9223372036854775808): a list of their own, beside the pairs every mode asks
        "values": values,
        "cases": cases,
    }


def main(argv: list[str], default: str, write) -> None:
    """The command line of a MindSpore probe module: ``--worker ...`` (internal) or ``[OUT.json]``."""
    if argv[:1] == ["--worker"]:
        mode, cases_path, start, alone, out_path, keep_rank = argv[1:7]
        _worker(mode, cases_path, int(start), alone == "true", out_path, keep_rank == "true")
    else:
        write(argv[0] if argv else default)


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    from promote_cli.probes import write_recording

    main(sys.argv[1:], "tests/data/recordings/mindspore-2.10.json", lambda path: write_recording(record(), path))
