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
import platform
import subprocess
import sys
from pathlib import Path

from promote_cli.numerics.legality import TOSA_TYPES
from promote_cli.probes.tosa_model import (
    BINARY_OPS,
    BOOL_OUTPUT,
    PACKAGE,
    SHAPE,
    TO_TOSA,
    _dumps,
    run_cast,
    run_graphs,
    version,
)
from promote_cli.vocab.dtypes import native_names

FRAMEWORK = "tosa"

#: tosa.xml element type -> canonical name, for legality's TOSA types (the vocabulary's
#: ``tosa`` spellings)
FROM_SPEC = {native_names("tosa")[name]: name for name in TOSA_TYPES}


# --------------------------------------------------------------------------- RESCALE


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
        "from promote_cli.probes.tosa_model import run_cast, _bits_dtype\n"
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

#: every element type the probe tries, as inputs and as outputs
TYPES = tuple(TO_TOSA)


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
