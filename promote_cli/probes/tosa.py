"""Probe: run one-operator graphs on the TOSA reference model (pip: tosa-tools).

Elementwise binary operators (`record()`, the referee of rules/tosa.toml): for every
operator the ruleset lists, every ordered pair of TOSA types and every output type, a
graph input1, input2 -> operator -> output is built and run; the model accepts it or
refuses it with a message.  A case's result is the output type the model accepts (it
never accepts two), else its refusal.  Refused graphs are run in child processes, many
per process, each restarted after a graph that ends it.  `record(spec_xml)` also stores
tosa.xml's type-support tables and where they differ from the model;
``python -m promote_cli.probes.tosa --spec tosa.xml OUT.json`` writes the recording.
`extra_checks()` re-checks `promote cast` (promote_cli.numerics) against the model, and
`promote rescale` (`promote_cli.probes.tosa_rescale`, which builds its graphs here:
`build_rescale_graph`, `run_rescale`, and "rescale" jobs of `run_graphs`).

CAST: ``tosa_serializer`` builds a graph with one input, one CAST and one output;
``tosa_reference_model.run`` executes it on a numpy array and returns the output
bytes.  For every legal CAST pair the probe feeds edge-case inputs and records the
output bit patterns:

* sources of 8 and 16 bits (bool, i8, i16, f16, bf16, f8e4m3, f8e5m2): every bit pattern;
* f32, i32 and i64: specials, the boundaries of every output format, exact rounding
  ties with their neighbours, integer-range edges, and seeded random values.

`record_cast(dir)` writes one compressed ``<src>.npz`` per source type (the inputs
once, as bit patterns, and one output array per destination) and ``manifest.json``
(tool version, pairs with their profiles, array names).  Pairs TOSA does not define
are run too, each in a child process (the reference model aborts on them), and the
ones it refuses are listed in the manifest.

tosa-tools is imported inside the functions only, so importing this module never
fails when the package is absent.
"""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

from promote_cli.numerics.legality import TOSA_TYPES
from promote_cli.vocab.dtypes import native_names

FRAMEWORK = "tosa"
PACKAGE = "tosa-tools"

#: canonical name -> tosa_serializer DType attribute name, for legality's TOSA types (the
#: vocabulary's ``tosa_serializer`` spellings)
TO_TOSA = {name: native_names("tosa_serializer")[name] for name in TOSA_TYPES}
#: tosa.xml element type -> canonical name (the vocabulary's ``tosa`` spellings)
FROM_SPEC = {native_names("tosa")[name]: name for name in TOSA_TYPES}


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


# --------------------------------------------------------------------------- RESCALE

#: RESCALE element types (in_t / out_t; u8 and u16 travel as i8 and i16 with the
#: input_unsigned / output_unsigned attributes) -> tosa_serializer DType attribute name
RESCALE_TOSA = {"i8": "INT8", "i16": "INT16", "i32": "INT32", "i48": "INT48"}


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
    in_np = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i48": np.int64}[in_t]
    xs = x.view(in_np) if x.dtype.itemsize == np.dtype(in_np).itemsize else x.astype(in_np)
    with tempfile.TemporaryDirectory() as d:
        ser = ts.TosaSerializer(d)
        ser.addConst(list(x.shape), getattr(ts.DType, RESCALE_TOSA[in_t]), xs, name="input")
        m = np.asarray(multiplier, dtype=np.int64).reshape(-1)
        s = np.asarray(shift, dtype=np.int64).reshape(-1)
        ser.addConst([m.size], mul_t, m.astype(mul_np), name="multiplier")
        ser.addConst([s.size], ts.DType.INT8, s.astype(np.int8), name="shift")
        ser.addConst([1], getattr(ts.DType, RESCALE_TOSA[in_t]), _zp_array(in_t, input_zp), name="input_zp")
        ser.addConst([1], getattr(ts.DType, RESCALE_TOSA[out_t]), _zp_array(out_t, output_zp), name="output_zp")
        out = ser.addOutput(list(x.shape), getattr(ts.DType, RESCALE_TOSA[out_t]))
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

    bits = {"i8": 8, "i16": 16, "i32": 32, "i48": 64}[t]
    v = int(zp) & ((1 << bits) - 1)
    if v >= 1 << (bits - 1):
        v -= 1 << bits
    return np.array([v], dtype=np.dtype(f"i{bits // 8}"))


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


# --------------------------------------------------------------------------- inputs


def _f32_inputs(rng):
    """float32 bit patterns: specials, boundaries of every output format, ties."""
    import numpy as np

    vals: list[float] = [0.0, 1.0, 0.5, 1.5, 2.5, 3.5, 0.25, 0.75, 1e-45, 1e-40, 1e-38,
                         float(np.finfo(np.float32).tiny), float(np.finfo(np.float32).max)]
    # integer-range edges and half-integers around them
    for b in (8, 16, 32):
        hi, lo = 2.0 ** (b - 1) - 1, -(2.0 ** (b - 1))
        for v in (hi, lo):
            vals += [v - 1, v - 0.5, v, v + 0.5, v + 1]
    for k in range(-4, 34):
        vals += [2.0 ** k, 2.0 ** k + 0.5, 2.0 ** k - 0.5]
    vals += [k + 0.5 for k in range(-10, 10)]
    # output-format boundaries: max, overflow tie, min normal, min subnormal and halves
    from promote_cli.vocab.dtypes import DTYPES

    for name in ("f16", "bf16", "f8e4m3", "f8e5m2"):
        f = DTYPES[name]
        top = f.max
        ulp_top = 2.0 ** (math.frexp(top)[1] - 1 - f.man_bits)
        minsub = f.smallest_subnormal
        for v in (top, top + ulp_top / 2, top + ulp_top, f.smallest_normal, minsub, minsub / 2,
                  minsub * 1.5, minsub * 2.5, f.smallest_normal - minsub / 2):
            vals.append(v)
    arr = np.array(vals, dtype=np.float64)
    with np.errstate(over="ignore"):
        arr = np.concatenate([arr, -arr]).astype(np.float32)
    bits = [arr.view(np.uint32)]
    # ties at every output precision, in many binades, with +-1 ulp neighbours
    for man in (2, 3, 7, 10):
        for e in range(1, 255, 3):
            base = np.uint32(e << 23)
            frac = rng.integers(0, 1 << man, 4, dtype=np.uint32) << np.uint32(23 - man)
            tie = base | frac | np.uint32(1 << (22 - man))
            bits += [tie, tie + np.uint32(1), tie - np.uint32(1)]
    # NaN payloads, infinities
    bits.append(np.array([0x7F800000, 0x7FC00000, 0x7F800001, 0x7FBFFFFF, 0x7FFFFFFF,
                          0x7F7FFFFF, 0x00000001, 0x007FFFFF, 0x00800000], dtype=np.uint32))
    b = np.concatenate([x.astype(np.uint32).ravel() for x in bits])
    b = np.concatenate([b, b ^ np.uint32(0x80000000)])
    # random bit patterns and random values of moderate size
    b = np.concatenate([b, rng.integers(0, 1 << 32, 3000, dtype=np.uint64).astype(np.uint32),
                        (rng.standard_normal(1500) * 10.0 ** rng.integers(-6, 6, 1500))
                        .astype(np.float32).view(np.uint32)])
    return np.unique(b)


def _int_inputs(bits: int, rng):
    import numpy as np

    dt = np.dtype(f"i{bits // 8}")
    vals = {0, 1, -1, 2, -2}
    info = np.iinfo(dt)
    vals |= {int(info.min), int(info.max), int(info.min) + 1, int(info.max) - 1}
    for k in range(1, bits):
        for d in (-1, 0, 1):
            for s in (1, -1):
                v = s * (2 ** k) + d
                if info.min <= v <= info.max:
                    vals.add(v)
    # rounding ties and neighbours for 8, 11 (f16) and 24 (f32) significant bits
    for p in (8, 11, 24):
        for k in range(p, bits - 1):
            for m in rng.integers(1 << (p - 1), 1 << p, 3):
                tie = (int(m) << (k - p + 1)) + (1 << (k - p))
                for d in (-1, 0, 1):
                    for s in (1, -1):
                        v = s * (tie + d)
                        if info.min <= v <= info.max:
                            vals.add(v)
    for v in (65504, 65519, 65520, 65535, 65536, 57344, 61439, 61440, 61441, 448, 464, 465):
        vals |= {v, -v}
    arr = np.array(sorted(vals), dtype=np.int64)
    arr = arr[(arr >= info.min) & (arr <= info.max)].astype(dt)
    rand = rng.integers(info.min, info.max, 3000, dtype=dt, endpoint=True)
    small = rng.integers(-70000, 70000, 1000).astype(dt)
    return np.unique(np.concatenate([arr, rand, small]))


def cast_inputs(src: str):
    """The recorded inputs of one source type, as bit patterns."""
    import numpy as np

    rng = np.random.default_rng(20260 + sum(map(ord, src)))
    if src == "bool":
        return np.array([False, True])
    if src in ("i8", "i16"):
        return np.arange(1 << (8 * (1 if src == "i8" else 2)), dtype=np.dtype(f"u{1 if src == 'i8' else 2}")).view(f"i{1 if src == 'i8' else 2}")
    if src in ("f16", "bf16"):
        return np.arange(1 << 16, dtype=np.uint16)
    if src in ("f8e4m3", "f8e5m2"):
        return np.arange(256, dtype=np.uint8)
    if src == "f32":
        return _f32_inputs(rng)
    if src == "i32":
        return _int_inputs(32, rng)
    if src == "i64":
        return _int_inputs(64, rng)
    raise ValueError(src)


# --------------------------------------------------------------------------- spec table


def spec_pairs(xml_text: str) -> list[list[str]]:
    """[src, dst, profile] for every CAST pair in a tosa.xml over the canonical types.

    DEDUCE-EXT profiles are resolved the way the spec's tools do: the extensions the
    pair's types need (bf16 -> EXT-BF16, fp8e4m3 -> EXT-FP8E4M3, ...), joined by " and ".
    """
    import xml.etree.ElementTree as ET

    deduce = {"i64_t": "EXT-INT64", "i16_t": "EXT-INT16", "bf16_t": "EXT-BF16",
              "fp8e4m3_t": "EXT-FP8E4M3", "fp8e5m2_t": "EXT-FP8E5M2"}
    root = ET.fromstring(xml_text)
    op = next(o for o in root.iter("operator") if o.findtext("name") == "CAST")
    pairs = []
    for ts in op.iter("typesupport"):
        sets = {s.get("name"): s.get("values").split() for s in ts.iter("type_set")}
        fixed = {k: [ts.get(k)] for k in ("in_t", "out_t") if ts.get(k)}
        for b in ts.iter("type_bind"):
            fixed[b.get("type")] = sets[b.get("set")]
        profiles = [p.get("name") for p in ts.iter("op_profile")]
        for i in fixed.get("in_t", []):
            for o in fixed.get("out_t", []):
                if i not in FROM_SPEC or o not in FROM_SPEC:
                    continue
                if profiles == ["DEDUCE-EXT"]:
                    prof = " and ".join(sorted({deduce[t] for t in (i, o) if t in deduce}))
                else:
                    prof = " and ".join(profiles)
                pairs.append([FROM_SPEC[i], FROM_SPEC[o], prof])
    return pairs


# --------------------------------------------------------------------------- recording


def _refused_by_reference(src: str, dst: str) -> bool:
    """Whether the reference model rejects a CAST graph (run in a child process:
    the model aborts the process on an unsupported operator)."""
    code = (
        "import sys, numpy as np\n"
        "from promote_cli.probes.tosa import run_cast, _bits_dtype\n"
        f"x = np.zeros(4, dtype=_bits_dtype({src!r}))\n"
        f"run_cast(x, {src!r}, {dst!r})\n"
        "print('ACCEPTED')\n"
    )
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return True
    return "ACCEPTED" not in p.stdout


def record_cast(directory, spec_xml: str | None = None, check_illegal: bool = True) -> dict:
    """Record every legal CAST pair into `directory`; returns the manifest."""
    import numpy as np

    from promote_cli.numerics.legality import LEGAL, TOSA_TYPES

    out_dir = Path(directory)
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest = {
        "framework": FRAMEWORK,
        "package": PACKAGE,
        "version": version(),
        "probe": __name__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "format": "one <src>.npz per source type: 'input' holds the input bit patterns "
                  "(bool, signed ints as themselves, floats as unsigned ints); '<dst>' the "
                  "reference model's output bit patterns, same layout",
        "pairs": [],
        "sources": {},
    }
    for src in TOSA_TYPES:
        dsts = [d for d in TOSA_TYPES if (src, d) in LEGAL]
        if not dsts:
            continue
        x = cast_inputs(src)
        arrays = {"input": x}
        for dst in dsts:
            arrays[dst] = run_cast(x, src, dst)
            manifest["pairs"].append([src, dst, LEGAL[(src, dst)]])
        np.savez_compressed(out_dir / f"{src}.npz", **arrays)
        manifest["sources"][src] = {"file": f"{src}.npz", "count": int(x.size), "outputs": dsts}
    if spec_xml is not None:
        text = Path(spec_xml).read_text(encoding="utf-8")
        import xml.etree.ElementTree as ET

        v = ET.fromstring(text).find("version")
        ver = f"{v.get('major')}.{v.get('minor')}.{v.get('patch')}" + (" draft" if v.get("draft") == "true" else "")
        manifest["spec"] = {"file": "tosa.xml", "version": ver, "pairs": spec_pairs(text)}
    if check_illegal:
        refused, accepted = [], []
        for s in TOSA_TYPES:
            for d in TOSA_TYPES:
                if (s, d) in LEGAL:
                    continue
                (refused if _refused_by_reference(s, d) else accepted).append([s, d])
        manifest["refused_by_reference"] = refused
        manifest["accepted_beyond_spec"] = accepted
    (out_dir / "manifest.json").write_text(_dumps(manifest), encoding="utf-8")
    return manifest


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


def mismatches(src: str, dst: str, inputs, expected, actual):
    """Boolean mask of elements where `actual` disagrees with `expected` (both as bit
    patterns, the recording's layout): NaN equals any NaN, and NaN -> integer, which the
    spec leaves unpredictable, is masked out."""
    import numpy as np

    from promote_cli.vocab.numpy_types import numpy_dtype

    exp = np.asarray(expected)
    act = np.asarray(actual)
    if dst != "bool":
        act = act.view(exp.dtype) if act.dtype.itemsize == exp.dtype.itemsize else act.astype(exp.dtype)
    differ = act != exp
    if dst in ("f16", "bf16", "f32", "f8e4m3", "f8e5m2"):
        dt = numpy_dtype(dst)
        with np.errstate(invalid="ignore"):
            both_nan = np.isnan(exp.view(dt).astype(np.float64)) & np.isnan(act.view(dt).astype(np.float64))
        differ &= ~both_nan
    if src in ("f16", "bf16", "f32", "f8e4m3", "f8e5m2") and dst in ("i8", "i16", "i32", "i64"):
        with np.errstate(invalid="ignore"):
            differ &= ~np.isnan(np.asarray(inputs).view(numpy_dtype(src)).astype(np.float64))
    return differ


def load_cast_recording(directory):
    """(manifest, {src: npz}) of a recording written by `record_cast`."""
    import numpy as np

    d = Path(directory)
    manifest = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
    data = {src: np.load(d / info["file"]) for src, info in manifest["sources"].items()}
    return manifest, data


# --------------------------------------------------------------------------- elementwise binary operators

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
#: every element type the probe tries, as inputs and as outputs
TYPES = tuple(TO_TOSA)
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
    code = ("import sys; from promote_cli.probes.tosa import _graph_worker; "
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


# --------------------------------------------------------------------------- the spec's view

#: graphs beyond the type matrix: the form of MUL's shift, rank-0 tensors
FORMS = {
    "mul i32, shift a CONST": ("binary", "mul", "i32", "i32", "i32", {"shift": "const"}),
    "mul i32, shift a graph input": ("binary", "mul", "i32", "i32", "i32", {"shift": "input"}),
    "mul i32, no shift": ("binary", "mul", "i32", "i32", "i32", {"shift": None}),
    "add i32, rank-0 tensors": ("binary", "add", "i32", "i32", "i32", {"shape": []}),
}


def spec_view(xml_text: str) -> dict:
    """What a tosa.xml says about the probed operators: its version, per operator the
    [input, output, profiles] rows of its type support over the canonical types, and the
    form of MUL's `shift` argument."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(xml_text)
    v = root.find("version")
    ver = f"{v.get('major')}.{v.get('minor')}.{v.get('patch')}" + (" draft" if v.get("draft") == "true" else "")
    by_name = {o.findtext("name"): o for o in root.iter("operator")}
    support = {}
    shift = None
    for op, operator in BINARY_OPS.items():
        node = by_name[operator]
        rows = []
        for ts_ in node.iter("typesupport"):
            t_in = ts_.get("in_out_t") or ts_.get("in_t")
            t_out = ts_.get("in_out_t") or ts_.get("out_t")
            if t_in in FROM_SPEC and t_out in FROM_SPEC:
                rows.append([FROM_SPEC[t_in], FROM_SPEC[t_out],
                             " or ".join(p.get("name") for p in ts_.iter("op_profile"))])
        support[op] = rows
        for arg in node.iter("argument"):
            if operator == "MUL" and arg.get("name") == "shift":
                shift = {"shape": arg.get("shape"), "type": FROM_SPEC.get(arg.get("tensor-element-type")),
                         "constant_in": [p.get("name") for c in arg.iter("ctc") for p in c.iter("op_profile")],
                         "unless": [p.get("name") for c in arg.iter("ctc_remove") for p in c.iter("op_profile")]}
    return {"file": "tosa.xml", "version": ver, "support": support, "mul_shift": shift}


def spec_answer(spec: dict, op: str, a: str, b: str) -> str | None:
    """The output type tosa.xml gives for `a op b` (both inputs share one type variable),
    None when it has no such form."""
    if a != b:
        return None
    return next((out for t_in, out, _ in spec["support"][op] if t_in == a), None)


# --------------------------------------------------------------------------- recording


def record(spec_xml: str | None = None, workers: int | None = None) -> dict:
    """Ask the reference model about every elementwise binary operator of rules/tosa.toml
    and every ordered pair of TOSA types: one graph per output type; the case's result is
    the output type the model accepts, or null with the model's message when it accepts
    none (the message of the graph whose output is the input type, bool for comparisons).

    With `spec_xml` (a tosa.xml), the recording also holds the spec's view and the cases
    where the spec and the model differ.
    """
    matrix = [("binary", op, a, b, out) for op in BINARY_OPS for a in TYPES for b in TYPES for out in TYPES]
    outcomes = run_graphs(matrix + list(FORMS.values()), workers)
    answers = dict(zip(matrix, outcomes))
    cases = []
    for op in BINARY_OPS:
        for a in TYPES:
            for b in TYPES:
                accepted = [out for out in TYPES if answers["binary", op, a, b, out][0]]
                if len(accepted) > 1:
                    raise RuntimeError(f"reference model accepts {a} {op} {b} with outputs {accepted}")
                if accepted:
                    cases.append([op, a, b, {}, accepted[0], None])
                else:
                    natural = "bool" if op in BOOL_OUTPUT else a
                    cases.append([op, a, b, {}, None, answers["binary", op, a, b, natural][1]])
    data = {
        "ruleset": FRAMEWORK, "package": PACKAGE, "version": version(), "probe": "promote_cli.probes.tosa",
        "python": platform.python_version(),
        "method": f"one operator per graph, inputs of shape {SHAPE}, every output type tried; "
                  "MUL's shift a CONST i8 [1] holding 0; MAXIMUM/MINIMUM nan_mode PROPAGATE; "
                  "ARITHMETIC_RIGHT_SHIFT round false",
        "forms": [[label, ok, msg] for label, (ok, msg) in zip(FORMS, outcomes[len(matrix):])],
    }
    if spec_xml is not None:
        spec = spec_view(Path(spec_xml).read_text(encoding="utf-8"))
        spec["differences"] = [[op, a, b, spec_answer(spec, op, a, b), result]
                               for op, a, b, _, result, _ in cases
                               if spec_answer(spec, op, a, b) != result]
        data["spec"] = spec
    data["cases"] = cases
    return data


# --------------------------------------------------------------------------- CAST checks


def cast_value_check() -> tuple[str, int, list[str]]:
    """Every legal CAST pair on the recorded-vector inputs: the live reference model
    against `promote_cli.numerics.cast.cast_array` (NaN as NaN, NaN -> integer masked)."""
    import numpy as np

    from promote_cli.numerics.cast import cast_array
    from promote_cli.numerics.legality import LEGAL, TOSA_TYPES
    from promote_cli.vocab.numpy_types import numpy_dtype

    bad, n = [], 0
    for src in TOSA_TYPES:
        x = cast_inputs(src)
        xv = x if src == "bool" else x.view(numpy_dtype(src))
        for dst in TOSA_TYPES:
            if (src, dst) not in LEGAL:
                continue
            n += 1
            try:
                ref = run_cast(x, src, dst)
            except (RuntimeError, ValueError) as exc:
                bad.append(f"CAST {src} -> {dst}: the reference model refuses it ({exc})")
                continue
            ours, _ = cast_array(xv, dst, src=src)
            differ = mismatches(src, dst, x, ref, ours)
            if differ.any():
                i = np.flatnonzero(differ)[:3]
                ref, ours = np.asarray(ref), np.asarray(ours)
                ours = ours if dst == "bool" else ours.view(ref.dtype)
                bad.append(f"CAST {src} -> {dst}: {int(differ.sum())} of {x.size} values differ, "
                           f"e.g. input bits {x[i].tolist()}: reference {ref[i].tolist()}, "
                           f"promote cast {ours[i].tolist()}")
    return f"CAST values vs {PACKAGE} {version()} ({n} legal pairs)", n, bad


def cast_support_check(workers: int | None = None) -> tuple[str, int, list[str]]:
    """Every ordered pair of TOSA types: the reference model accepts a CAST graph exactly
    when `promote_cli.numerics.legality.LEGAL` has the pair."""
    from promote_cli.numerics.legality import LEGAL, TOSA_TYPES

    pairs = [(s, d) for s in TOSA_TYPES for d in TOSA_TYPES]
    outcomes = run_graphs([("cast", s, d) for s, d in pairs], workers)
    bad = []
    for (s, d), (ok, msg) in zip(pairs, outcomes):
        if ok != ((s, d) in LEGAL):
            bad.append(f"CAST {s} -> {d}: the reference model {'accepts' if ok else 'refuses'} it "
                       f"({msg or 'accepted'}), promote cast {'allows' if (s, d) in LEGAL else 'refuses'} it")
    return f"CAST type support vs {PACKAGE} {version()} ({len(pairs)} ordered pairs)", len(pairs), bad


def extra_checks() -> list:
    """`promote verify -f tosa` beyond the ruleset: CAST type support and CAST values, RESCALE
    type support and RESCALE values (`promote_cli.probes.tosa_rescale`)."""
    from promote_cli.probes import tosa_rescale

    return [cast_support_check(), cast_value_check(), *tosa_rescale.checks()]


def main(argv: list[str] | None = None) -> int:
    """python -m promote_cli.probes.tosa [--spec tosa.xml] OUT.json: record the operators."""
    import argparse

    from promote_cli.probes import write_recording

    parser = argparse.ArgumentParser(prog="python -m promote_cli.probes.tosa", description=main.__doc__)
    parser.add_argument("out", help="the recording to write (tests/data/recordings/tosa-ops.json)")
    parser.add_argument("--spec", help="a tosa.xml: also record the spec's view and its differences")
    args = parser.parse_args(argv)
    if version() is None:
        parser.error(f"{PACKAGE} is not installed: pip install {PACKAGE}")
    write_recording(record(args.spec), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
