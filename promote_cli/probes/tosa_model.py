"""The TOSA reference model as a runner (pip: tosa-tools): one-operator graphs built with
``tosa_serializer`` and executed by ``tosa_reference_model``, in child processes where a graph
the model refuses may end the process.

Shared by the probes that ask the model: `promote_cli.probes.tosa` (elementwise operators and
CAST) and `promote_cli.probes.tosa_rescale` (RESCALE). tosa-tools is imported inside the
functions only, so importing this module never fails when the package is absent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from promote_cli.numerics.legality import TOSA_TYPES
from promote_cli.vocab.dtypes import native_names

PACKAGE = "tosa-tools"


#: canonical name -> tosa_serializer DType attribute name, for legality's TOSA types (the
#: vocabulary's ``tosa_serializer`` spellings)
TO_TOSA = {name: native_names("tosa_serializer")[name] for name in TOSA_TYPES}


def version() -> str | None:
    """The installed tosa-tools version, or None when the reference model is absent."""
    try:
        import tosa_reference_model  # noqa: F401
        import tosa_serializer  # noqa: F401
    except ImportError:
        return None
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version(PACKAGE)
    except PackageNotFoundError:  # pragma: no cover - a source build
        return "unknown"


def _bits_dtype(t: str):
    import numpy as np

    from promote_cli.vocab.numpy_types import numpy_dtype

    if t == "bool":
        return np.dtype(np.bool_)
    return np.dtype(f"u{numpy_dtype(t).itemsize}")


def build_cast_graph(src: str, dst: str, shape: list[int]) -> bytes:
    """A serialized TOSA graph: input (src) -> CAST -> output (dst)."""
    import tosa_serializer as ts

    with tempfile.TemporaryDirectory() as d:
        ser = ts.TosaSerializer(d)
        ser.addInputTensor(ts.TosaSerializerTensor("input", list(shape), getattr(ts.DType, TO_TOSA[src])))
        out = ser.addOutput(list(shape), getattr(ts.DType, TO_TOSA[dst]))
        attr = ts.TosaSerializerAttribute()
        attr.CastAttribute()
        ser.addOperator(ts.Op.CAST, inputs=["input"], outputs=[out.name], attributes=attr)
        return ser.serialize()


def run_cast(bits, src: str, dst: str):
    """Run CAST on the reference model; `bits` holds src values as bit patterns
    (bool for bool, signed ints as themselves, floats as unsigned ints).
    Returns the output as bit patterns (bool, int or unsigned)."""
    import numpy as np
    import tosa_reference_model as rm

    from promote_cli.vocab.numpy_types import numpy_dtype

    x = np.ascontiguousarray(bits)
    if src in ("i8", "i16", "i32", "i64"):
        x = x.view(numpy_dtype(src))
    graph = build_cast_graph(src, dst, list(x.shape))
    outs, status = rm.run(graph, [x])
    if status != rm.GraphStatus.TOSA_VALID:
        raise RuntimeError(f"reference model: CAST {src} -> {dst}: {status.name}")
    y = np.ascontiguousarray(outs[0])
    want = _bits_dtype(dst)
    if dst == "bool":
        return y.astype(np.bool_)
    return y.view(np.dtype(f"u{y.dtype.itemsize}")).view(want) if y.dtype.itemsize == want.itemsize else y.astype(want)


#: RESCALE element types (in_t / out_t; u8 and u16 travel as i8 and i16 with the
#: input_unsigned / output_unsigned attributes) -> (tosa_serializer DType attribute name,
#: bits, numpy storage dtype name).  i4 and i64 are no RESCALE types in the spec: the
#: probe asks them to record that the model refuses them too.
RESCALE_TOSA = {"i4": ("INT4", 4, "int8"), "i8": ("INT8", 8, "int8"), "i16": ("INT16", 16, "int16"),
                "i32": ("INT32", 32, "int32"), "i48": ("INT48", 48, "int64"), "i64": ("INT64", 64, "int64")}


def build_rescale_graph(x, in_t: str, out_t: str, multiplier, shift, input_zp: int = 0, output_zp: int = 0,
                        scale32: bool = True, rounding: str = "SINGLE_ROUND", per_channel: bool = False,
                        input_unsigned: bool = False, output_unsigned: bool = False) -> bytes:
    """A serialized TOSA graph: CONST input (in_t) -> RESCALE -> output (out_t), the
    multiplier, shift and zero points CONST tensors too (PRO-INT requires constants; the
    reference model's Python runner takes no INT48 graph input, so the input is a CONST).
    `x` holds the input values in in_t's storage (int64 for i48; u8/u16 as their bits);
    zero points are logical values (128 for u8); `rounding` is the spec's enum name."""
    import numpy as np
    import tosa_serializer as ts

    mul_t, mul_np = (ts.DType.INT32, np.int32) if scale32 else (ts.DType.INT16, np.int16)
    x = np.asarray(x)
    x = x if x.flags.c_contiguous else x.copy()  # (np.ascontiguousarray makes rank 0 rank 1)
    in_np = np.dtype(RESCALE_TOSA[in_t][2])
    xs = x.view(in_np) if x.dtype.itemsize == np.dtype(in_np).itemsize else x.astype(in_np)
    with tempfile.TemporaryDirectory() as d:
        ser = ts.TosaSerializer(d)
        ser.addConst(list(x.shape), getattr(ts.DType, RESCALE_TOSA[in_t][0]), xs, name="input")
        m = np.asarray(multiplier, dtype=np.int64).reshape(-1)
        s = np.asarray(shift, dtype=np.int64).reshape(-1)
        ser.addConst([m.size], mul_t, m.astype(mul_np), name="multiplier")
        ser.addConst([s.size], ts.DType.INT8, s.astype(np.int8), name="shift")
        ser.addConst([1], getattr(ts.DType, RESCALE_TOSA[in_t][0]), _zp_array(in_t, input_zp), name="input_zp")
        ser.addConst([1], getattr(ts.DType, RESCALE_TOSA[out_t][0]), _zp_array(out_t, output_zp), name="output_zp")
        out = ser.addOutput(list(x.shape), getattr(ts.DType, RESCALE_TOSA[out_t][0]))
        attr = ts.TosaSerializerAttribute()
        attr.RescaleAttribute(bool(scale32), getattr(ts.RoundingMode, rounding), bool(per_channel),
                              bool(input_unsigned), bool(output_unsigned))
        ser.addOperator(ts.Op.RESCALE, inputs=["input", "multiplier", "shift", "input_zp", "output_zp"],
                        outputs=[out.name], attributes=attr)
        return ser.serialize()


def _zp_array(t: str, zp: int):
    """A zero point as the one-element tensor of type t: its bit pattern in t's storage
    (the u8 zero point 128 is the i8 bit pattern -128)."""
    import numpy as np

    _, bits, storage = RESCALE_TOSA[t]
    v = int(zp) & ((1 << bits) - 1)
    if v >= 1 << (bits - 1):
        v -= 1 << bits
    return np.array([v], dtype=np.dtype(storage))


def run_rescale(x, in_t: str, out_t: str, **kw):
    """Run RESCALE on the reference model (arguments of `build_rescale_graph`). Returns the
    output as int8/int16/int32 bit patterns; raises RuntimeError naming the graph status
    when the model gives no valid result (ValueError when it refuses the graph)."""
    import numpy as np
    import tosa_reference_model as rm

    graph = build_rescale_graph(x, in_t, out_t, **kw)
    outs, status = rm.run(graph, [])
    if status != rm.GraphStatus.TOSA_VALID:
        raise RuntimeError(f"graph status {status.name}")
    return np.ascontiguousarray(outs[0])


def _dumps(obj) -> str:
    """JSON with one short list (a pair, a type list) per line."""
    def enc(o, ind):
        pad = " " * ind
        if isinstance(o, dict):
            items = [f'{pad} {json.dumps(k)}: {enc(v, ind + 1).lstrip()}' for k, v in o.items()]
            return pad + "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(o, list) and o and isinstance(o[0], list):
            return pad + "[\n" + ",\n".join(pad + " " + json.dumps(v) for v in o) + "\n" + pad + "]"
        return pad + json.dumps(o)
    return enc(obj, 0) + "\n"


#: the ruleset's op name -> TOSA operator (rules/tosa.toml names one op group per operator)
BINARY_OPS = {
    "add": "ADD", "sub": "SUB", "mul": "MUL", "maximum": "MAXIMUM", "minimum": "MINIMUM",
    "intdiv": "INTDIV", "pow": "POW",
    "bitwise_and": "BITWISE_AND", "bitwise_or": "BITWISE_OR", "bitwise_xor": "BITWISE_XOR",
    "arithmetic_right_shift": "ARITHMETIC_RIGHT_SHIFT",
    "logical_left_shift": "LOGICAL_LEFT_SHIFT", "logical_right_shift": "LOGICAL_RIGHT_SHIFT",
    "logical_and": "LOGICAL_AND", "logical_or": "LOGICAL_OR", "logical_xor": "LOGICAL_XOR",
    "equal": "EQUAL", "greater": "GREATER", "greater_equal": "GREATER_EQUAL",
}


#: the operators whose output is bool whatever the inputs
BOOL_OUTPUT = ("equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor")


#: the shape of every input and output tensor
SHAPE = [4]


def _attribute(ts, operator: str):
    """The operator's attribute, with the values a plain graph uses: MAXIMUM and MINIMUM
    propagate NaN (the spec's default), ARITHMETIC_RIGHT_SHIFT does not round."""
    attr = ts.TosaSerializerAttribute()
    camel = {"INTDIV": "IntDiv"}.get(operator) or "".join(w.capitalize() for w in operator.split("_"))
    make = getattr(attr, camel + "Attribute")
    if operator in ("MAXIMUM", "MINIMUM"):
        make(ts.NanPropagationMode.PROPAGATE)
    elif operator == "ARITHMETIC_RIGHT_SHIFT":
        make(False)
    else:
        make()
    return attr


def build_binary_graph(op: str, a: str, b: str, out: str, shape: list[int] = SHAPE,
                       shift: str | None = "const") -> bytes:
    """A serialized TOSA graph: inputs (a, b) -> one elementwise binary operator -> output (out).

    MUL gets its third input in the form the spec requires: `shift`, a tensor of shape [1]
    and type i8 that PRO-INT and PRO-FP require to be a compile-time constant, so a CONST
    holding 0 (`shift="input"` makes it a graph input instead, `None` leaves it out).
    """
    import numpy as np
    import tosa_serializer as ts

    operator = BINARY_OPS[op]
    with tempfile.TemporaryDirectory() as d:
        ser = ts.TosaSerializer(d)
        ser.addInputTensor(ts.TosaSerializerTensor("input1", list(shape), getattr(ts.DType, TO_TOSA[a])))
        ser.addInputTensor(ts.TosaSerializerTensor("input2", list(shape), getattr(ts.DType, TO_TOSA[b])))
        inputs = ["input1", "input2"]
        if operator == "MUL" and shift == "const":
            ser.addConst([1], ts.DType.INT8, np.zeros(1, dtype=np.int8), name="shift")
            inputs.append("shift")
        elif operator == "MUL" and shift == "input":
            ser.addInputTensor(ts.TosaSerializerTensor("shift", [1], ts.DType.INT8))
            inputs.append("shift")
        output = ser.addOutput(list(shape), getattr(ts.DType, TO_TOSA[out]))
        ser.addOperator(getattr(ts.Op, operator), inputs=inputs, outputs=[output.name],
                        attributes=_attribute(ts, operator))
        return ser.serialize()


def binary_input(t: str, n: int = SHAPE[0]):
    """Small positive values of type `t` in the layout the reference model takes (bit
    patterns for floats): valid for every operator (no zero divisor, shifts in range,
    positive POW bases)."""
    import numpy as np

    from promote_cli.vocab.numpy_types import numpy_dtype

    if t == "bool":
        return np.arange(n) % 2 == 0
    values = (np.arange(n) % 3 + 1).astype(numpy_dtype(t))
    return values.view(_bits_dtype(t)) if t in ("f16", "bf16", "f32", "f8e4m3", "f8e5m2") else values


def _run_job(job) -> tuple[bool, str | None]:
    """Build and run one graph in this process: (accepted, why not).

    A job is ("binary", op, a, b, out[, {"shape": [...], "shift": "const" | "input" | None}]),
    ("cast", src, dst) or ("rescale", in_t, out_t, {build_rescale_graph's keywords, "shape"})
    (inputs 0, 1, 2, 0, ...)."""
    import numpy as np
    import tosa_reference_model as rm

    if job[0] == "binary":
        _, op, a, b, out, *more = job
        form = more[0] if more else {}
        shape = form.get("shape", SHAPE)
        shift = form.get("shift", "const")
        graph = build_binary_graph(op, a, b, out, shape, shift)
        inputs = [binary_input(t, int(np.prod(shape))).reshape(shape) for t in (a, b)]
        if BINARY_OPS[op] == "MUL" and shift == "input":
            inputs.append(np.zeros(1, dtype=np.int8))
    elif job[0] == "rescale":
        _, in_t, out_t, form = job
        form = dict(form)
        shape = form.pop("shape", SHAPE)
        x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) % 3
        graph, inputs = build_rescale_graph(x, in_t, out_t, **form), []
    else:
        _, src, dst = job
        graph, inputs = build_cast_graph(src, dst, SHAPE), [binary_input(src)]
    try:
        _, status = rm.run(graph, inputs)
    except ValueError as exc:
        return False, str(exc)
    if status != rm.GraphStatus.TOSA_VALID:
        return False, f"graph status {status.name}"
    return True, None


_NOISE = ("Attaching debugger", "Caught signal", "Backtrace generation failed", "WARNING AT",
          "Unable to initialize", "An error occurred", "Node type:", "Inputs:", "Outputs:",
          "Input[", "Output[", "Input: ", "Output: ", "SUBGRAPH_ERROR_IF() fails", "ERROR_IF() fails",
          "TosaReference::Tensor attribute check failed", "Failed to validate graph", "#")


def model_message(text: str, fallback: str | None = None) -> str:
    """The reference model's own words from what it printed while refusing a graph:
    its error lines without the backtrace, node dump and source locations."""
    import re

    text = re.sub(r"SubgraphTraverser::\w+\(\): ", "\n", text)
    kept = []
    for line in text.splitlines():
        line = re.sub(r"\s+", " ", line).strip()
        if line and not line.startswith(_NOISE) and line not in kept:
            kept.append(line)
    if fallback and not kept:
        kept.append(fallback)
    return "; ".join(kept) or "refused"


def _graph_worker(results_path: str, capture_path: str) -> None:
    """Child process: run the jobs read from stdin, one result line each, flushed, so that
    the parent knows how far it got if the reference model kills the process.  What the
    model prints while a graph runs is captured per graph (it writes to fds 1 and 2)."""
    import ctypes

    libc = ctypes.CDLL(None)
    jobs = json.load(sys.stdin)
    saved = os.dup(1), os.dup(2)
    with open(results_path, "a", encoding="utf-8") as results:
        for job in jobs:
            cap = os.open(capture_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(cap, 1)
            os.dup2(cap, 2)
            try:
                accepted, why = _run_job(job)
            except Exception as exc:  # noqa: BLE001 - a refusal in any form
                accepted, why = False, f"{type(exc).__name__}: {exc}"
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                libc.fflush(None)
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
                os.close(cap)
            text = Path(capture_path).read_text(encoding="utf-8", errors="replace")
            message = None if accepted else model_message(text, why)
            results.write(json.dumps([accepted, message]) + "\n")
            results.flush()


def _run_chunk(jobs: list) -> list:
    """[accepted, message] per job, run in child processes; a child the model kills is
    restarted after the graph that killed it, which counts as refused."""
    package_root = str(Path(__file__).resolve().parents[2])
    code = ("import sys; from promote_cli.probes.tosa_model import _graph_worker; "
            "_graph_worker(sys.argv[1], sys.argv[2])")
    out: list = []
    while len(out) < len(jobs):
        rest = jobs[len(out):]
        with tempfile.TemporaryDirectory(prefix="promote-tosa-") as d:
            results, capture = Path(d) / "results", Path(d) / "capture"
            # The reference model forks gdb for a backtrace on every refused graph; a PATH
            # without gdb turns that half-second into nothing.
            env = dict(os.environ, PATH=d,
                       PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
            p = subprocess.run([sys.executable, "-c", code, str(results), str(capture)],
                               input=json.dumps(rest), capture_output=True, text=True,
                               env=env, timeout=1800)
            got = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines(keepends=True)
                   if line.endswith("\n")] if results.exists() else []
            out += got
            if len(got) < len(rest):
                if not capture.exists():
                    raise RuntimeError(f"reference-model worker failed: {p.stderr.strip()[-500:]}")
                text = capture.read_text(encoding="utf-8", errors="replace")
                ended = f"the reference model ended the process (exit code {p.returncode})"
                out.append([False, model_message(text, ended)])
    return out


def run_graphs(jobs: list, workers: int | None = None) -> list:
    """Run graph jobs on the reference model: ("binary", op, a, b, out) or ("cast", src, dst).
    Returns [accepted, message] per job, in order; `workers` child processes at a time."""
    from concurrent.futures import ThreadPoolExecutor

    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    size = -(-len(jobs) // workers)
    chunks = [jobs[i:i + size] for i in range(0, len(jobs), size)]
    with ThreadPoolExecutor(workers) as pool:
        return [r for part in pool.map(_run_chunk, chunks) for r in part]
