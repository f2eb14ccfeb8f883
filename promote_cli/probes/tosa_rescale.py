"""Probe: TOSA RESCALE on the TOSA reference model (pip: tosa-tools), through the graph
machinery of `promote_cli.probes.tosa` (`build_rescale_graph`, `run_rescale`, `run_graphs`).

`record(dir)` writes ``manifest.json`` and ``values.npz``:

* ``support``: every in_t x out_t (i8 i16 i32 i48) x scale32 x rounding mode x
  input_unsigned x output_unsigned, with zero points 0 and with the zero points 1 and
  32768 where the zero point's type holds them, per-tensor and per-channel (rank 1) and
  rank-0 inputs with and without per_channel; and every pair with i4 or i64 (integer
  types the model has that the spec gives RESCALE none of) on either side, per-tensor, zero
  points 0, SINGLE_ROUND, each scale width, signed or one side unsigned: whether the model
  accepts the graph, and its message when it does not (each graph run in a child process).
  Each form is compared with `rescale_array` given the same flags (``--from``,
  ``--input-unsigned``, ``--output-unsigned``), the path `promote rescale` takes.
* ``cases``: legal RESCALEs of every input/output type (u8 and u16 included), rounding
  mode and scale width, per-tensor and per-channel, nonzero zero points, shifts from 2 to
  62 (around 31, 32 and 40 in particular), multipliers 0, 1, powers of two and the
  largest; inputs are type edges, rounding ties and their neighbours (the values where
  DOUBLE_ROUND and SINGLE_ROUND differ among them) and seeded random values. The
  model's outputs are in ``values.npz`` (``<id>_in`` in the input's storage type,
  int64 for i48; ``<id>_out`` in the output's). Cases whose values break a REQUIRE
  (apply_scale_32's value range, apply_scale_16's result range, the shift range, a
  negative multiplier) record the model's status instead (with INEXACT_ROUND the model
  checks none of them: it computes in float32 without the spec's helpers).

``python -m promote_cli.probes.tosa_rescale DIR`` records; `checks()` re-runs the cases
on the installed model against `promote_cli.numerics.rescale` (``promote verify -f tosa``).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import sys
from pathlib import Path

from promote_cli.probes.tosa_model import PACKAGE, _dumps, run_graphs, version

#: the rounding modes: ours -> the spec's enum name
ROUNDING = {"single": "SINGLE_ROUND", "double": "DOUBLE_ROUND", "inexact": "INEXACT_ROUND"}
SUPPORT_TYPES = ("i8", "i16", "i32", "i48")
#: the model's other integer types, asked only in the plain forms of `support_jobs`
OTHER_TYPES = ("i4", "i64")
SHAPE = [4]


# --------------------------------------------------------------------------- type support


def _fits(t: str, unsigned: bool, zp: int) -> bool:
    from promote_cli.numerics.rescale_rules import logical_range

    lo, hi = logical_range(t, unsigned)
    return lo <= zp <= hi


def support_jobs() -> list[dict]:
    """Every graph form the type-support part of the recording tries."""
    forms = []
    for in_t in SUPPORT_TYPES:
        for out_t in SUPPORT_TYPES:
            for scale32 in (True, False):
                for rounding in ROUNDING:
                    for iu in (False, True):
                        for ou in (False, True):
                            zps = [(0, 0)]
                            zps += [(z, 0) for z in (1, 32768) if _fits(in_t, iu, z)]
                            zps += [(0, z) for z in (1, 32768) if out_t != "i48" and _fits(out_t, ou, z)]
                            for izp, ozp in zps:
                                for per_channel, rank in ((False, 1), (True, 1), (False, 0), (True, 0)):
                                    if (per_channel or rank == 0) and (izp or ozp):
                                        continue
                                    forms.append(dict(in_t=in_t, out_t=out_t, scale32=scale32, rounding=rounding,
                                                      per_channel=per_channel, input_unsigned=iu,
                                                      output_unsigned=ou, input_zp=izp, output_zp=ozp, rank=rank))
    every = SUPPORT_TYPES + OTHER_TYPES
    for in_t in every:
        for out_t in every:
            if in_t in SUPPORT_TYPES and out_t in SUPPORT_TYPES:
                continue
            for scale32 in (True, False):
                for iu, ou in ((False, False), (True, False), (False, True)):
                    forms.append(dict(in_t=in_t, out_t=out_t, scale32=scale32, rounding="single", per_channel=False,
                                      input_unsigned=iu, output_unsigned=ou, input_zp=0, output_zp=0, rank=1))
    return forms


def _job(f: dict):
    nc = SHAPE[0] if f["per_channel"] and f["rank"] else 1
    one, base = ((1 << 30), 30) if f["scale32"] else ((1 << 14), 14)
    shape = SHAPE if f["rank"] else []
    return ("rescale", f["in_t"], f["out_t"],
            {"shape": shape, "multiplier": [one] * nc, "shift": [base] * nc, "input_zp": f["input_zp"],
             "output_zp": f["output_zp"], "scale32": f["scale32"], "rounding": ROUNDING[f["rounding"]],
             "per_channel": f["per_channel"], "input_unsigned": f["input_unsigned"],
             "output_unsigned": f["output_unsigned"]})


def config_of(f: dict):
    from promote_cli.numerics.rescale_rules import Config

    return Config(f["in_t"], f["out_t"], f["scale32"], f["rounding"], f["per_channel"], f["input_unsigned"],
                  f["output_unsigned"], f["input_zp"], f["output_zp"], f["rank"])


def ours_accepts(f: dict) -> tuple[bool, str | None]:
    """Whether `promote rescale` accepts a support form, and its message when it does not:
    `rescale_array` on the form's input (0, 1, 2, 0 in in_t's storage, i48 and i64 in
    int64, i4 in int8) with the form's flags, as ``--from IN_T`` and the unsigned flags."""
    import numpy as np

    from promote_cli.errors import UsageError
    from promote_cli.numerics.rescale import rescale_array
    from promote_cli.probes.tosa_model import RESCALE_TOSA

    job = _job(f)[3]
    x = (np.arange(int(np.prod(job["shape"]))) % 3).reshape(job["shape"]).astype(RESCALE_TOSA[f["in_t"]][2])
    try:
        rescale_array(x, f["out_t"], job["multiplier"], job["shift"], input_zp=f["input_zp"],
                      output_zp=f["output_zp"], scale32=f["scale32"], rounding=f["rounding"],
                      per_channel=f["per_channel"], from_=f["in_t"], input_unsigned=f["input_unsigned"],
                      output_unsigned=f["output_unsigned"])
    except UsageError as e:
        return False, str(e)
    return True, None


# --------------------------------------------------------------------------- value cases


def _logical(name: str):
    from promote_cli.numerics.rescale_rules import LOGICAL

    return LOGICAL[name]


def value_cases() -> list[dict]:
    """The legal RESCALEs recorded with values (no inputs yet): configuration and scales."""
    import numpy as np

    from promote_cli.numerics.rescale_rules import Config, broken_rules

    rng = np.random.default_rng(20261122)
    cases: list[dict] = []

    def add(i, o, scale32, rounding, m, s, izp=0, ozp=0, per_channel=False, channels=1, tag=""):
        cases.append(dict(id=f"c{len(cases):03d}", input=i, output=o, scale32=scale32, rounding=rounding,
                          multiplier=[int(v) for v in m], shift=[int(v) for v in s], input_zp=int(izp),
                          output_zp=int(ozp), per_channel=per_channel, channels=channels, tag=tag))

    def legal(i, o, scale32, rounding):
        (it, iu), (ot, ou) = _logical(i), _logical(o)
        return not broken_rules(Config(it, ot, scale32, rounding, input_unsigned=iu, output_unsigned=ou))

    def zp_for(name):
        t, u = _logical(name)
        if t == "i8":
            return int(rng.integers(0, 256)) if u else int(rng.integers(-128, 128))
        if t == "i16" and u:
            return 32768
        return 0

    def scales(scale32, n):
        top = 31 if scale32 else 15
        m = rng.integers(1 << (top - 1), 1 << top, n)
        return m

    for i in ("i8", "u8", "i16", "u16", "i32", "i48"):
        for o in ("i8", "u8", "i16", "u16", "i32"):
            for scale32 in (True, False):
                for rounding in ROUNDING:
                    if not legal(i, o, scale32, rounding):
                        continue
                    ibits = {"i8": 8, "u8": 8, "i16": 16, "u16": 16, "i32": 32, "i48": 48}[i]
                    obits = {"i8": 8, "u8": 8, "i16": 16, "u16": 16, "i32": 32}[o]
                    base = 30 if scale32 else 14
                    # a scaling that maps the input range onto about the output range, and one 4x larger
                    n = max(0, ibits - obits)
                    for extra in (n, max(0, n - 2)):
                        m = scales(scale32, 1)
                        add(i, o, scale32, rounding, m, [min(62, base + extra)], tag="per-tensor")
                    add(i, o, scale32, rounding, scales(scale32, 1), [base + n], zp_for(i), zp_for(o), tag="zero points")
                    c = int(rng.integers(3, 6))
                    add(i, o, scale32, rounding, scales(scale32, c),
                        [min(62, base + n + int(d)) for d in rng.integers(-2, 3, c)], zp_for(i), zp_for(o),
                        per_channel=True, channels=c, tag="per-channel")
    # shifts across the whole range, around 31, 32 and 40, for both roundings; multipliers at the edges
    for rounding in ("single", "double"):
        for s in (2, 3, 8, 14, 15, 16, 17, 29, 30, 31, 32, 33, 34, 39, 40, 41, 47, 48, 55, 61, 62):
            add("i32", "i8", True, rounding, [1 << 30], [s], tag="shift sweep, multiplier 1<<30")
            add("i32", "i32", True, rounding, scales(True, 1), [s], tag="shift sweep")
            add("i16", "i16", True, rounding, scales(True, 1), [s], tag="shift sweep")
        for m in (0, 1, 3, (1 << 31) - 1, 1 << 30, (1 << 30) + 1):
            for s in (31, 32, 33, 40):
                add("i32", "i16", True, rounding, [m], [s], tag="multiplier edges")
        add("i32", "i8", True, rounding, [1 << 30, (1 << 31) - 1, 1518500250, 1 << 30],
            [31, 32, 40, 62], per_channel=True, channels=4, tag="per-channel shifts 31/32/40/62")
    for s in (2, 14, 15, 16, 30, 46, 47, 62):
        add("i48", "i32", False, "single", scales(False, 1), [s], tag="scale16 shift sweep")
        add("i16", "i8", False, "single", [1 << 14], [s], tag="scale16 shift sweep, multiplier 1<<14")
    for m in (0, 1, 32767):
        add("i48", "i16", False, "single", [m], [40], tag="scale16 multiplier edges")
        add("i8", "i32", False, "inexact", [m], [2], tag="scale16 multiplier edges")
    return cases


def _candidates(case: dict, rng):
    """Input values for a case (logical values): type edges, ties of the case's scaling and
    their neighbours, random values."""
    import numpy as np

    from promote_cli.numerics.rescale_rules import logical_range

    t, u = _logical(case["input"])
    lo, hi = logical_range(t, u)
    zp = case["input_zp"]
    vals = {lo, hi, lo + 1, hi - 1, 0, 1, -1, 2, -2, zp, zp + 1, zp - 1}
    for k in range(0, min(48, hi.bit_length())):
        vals |= {1 << k, (1 << k) - 1, -(1 << k), -(1 << k) + 1}
    for m, s in zip(case["multiplier"], case["shift"]):
        if m == 0:
            continue
        for q in list(range(-20, 21)) + [int(v) for v in rng.integers(-(1 << 31), 1 << 31, 40)]:
            # value * m near q * 2^s + 2^(s-1) (a tie) and near a tie minus 2^30 (where
            # DOUBLE_ROUND's first rounding decides)
            for target in (q * (1 << s) + (1 << (s - 1)), q * (1 << s) + (1 << (s - 1)) - (1 << 30)):
                v = target // m + zp
                vals |= {v - 1, v, v + 1}
    vals |= {int(v) for v in rng.integers(lo, hi, 300, endpoint=True)}
    small = max(lo, -4096), min(hi, 4096)
    vals |= {int(v) for v in rng.integers(small[0], small[1], 100, endpoint=True)}
    return np.array(sorted(v for v in vals if lo <= v <= hi), dtype=np.int64)


def case_inputs(case: dict, rng):
    """(inputs as a storage array of the case's shape, count of DOUBLE_ROUND-sensitive values):
    the candidates that break no REQUIRE (checked by the spec's own arithmetic,
    `rescale_reference`), shaped (rows, channels) for per-channel cases."""
    import numpy as np

    from promote_cli.errors import UsageError
    from promote_cli.numerics import rescale_reference as ref
    from promote_cli.numerics.rescale import STORAGE
    from promote_cli.numerics.rescale_rules import Config

    (it, iu), (ot, ou) = _logical(case["input"]), _logical(case["output"])
    cfg = Config(it, ot, case["scale32"], case["rounding"], case["per_channel"], iu, ou,
                 case["input_zp"], case["output_zp"], 2 if case["per_channel"] else 1)
    cand = _candidates(case, rng)
    C = case["channels"]
    keep = []
    for v in cand.tolist():
        ok = True
        for ch in range(C):
            try:
                ref.rescale_values([v], [ch], cfg, case["multiplier"], case["shift"])
            except UsageError:
                ok = False
                break
        if ok:
            keep.append(v)
    if len(keep) > 1500:
        idx = np.sort(rng.choice(len(keep), 1500, replace=False))
        keep = [keep[i] for i in idx]
    x = np.array(keep, dtype=np.int64)
    if C > 1:
        rows = -(-x.size // C)
        x = np.resize(x, rows * C).reshape(rows, C)
    return x.astype(STORAGE[case["input"]])


#: cases whose values break a REQUIRE: (label, case, input values)
def unpredictable_cases() -> list[tuple[str, dict, list[int]]]:
    base = dict(input="i32", output="i8", scale32=True, rounding="single", input_zp=0, output_zp=0,
                per_channel=False, channels=1)
    return [
        ("value_range_32", dict(base, id="u0", multiplier=[1 << 30], shift=[2]), [0, 1, 2]),
        ("value_range_32", dict(base, id="u1", multiplier=[1 << 30], shift=[31]), [5, -(1 << 30) - 1]),
        ("value_range_32", dict(base, id="u2", multiplier=[1 << 30], shift=[31], rounding="double"), [1 << 30]),
        ("result_range_16", dict(base, id="u3", input="i48", output="i32", scale32=False,
                                 multiplier=[1 << 14], shift=[2]), [1 << 40]),
        ("shift_range", dict(base, id="u4", multiplier=[1 << 30], shift=[63]), [1]),
        ("shift_range", dict(base, id="u5", multiplier=[1 << 30], shift=[1]), [0]),
        ("multiplier_sign", dict(base, id="u6", multiplier=[-1], shift=[30]), [1]),
        ("add_output_zp", dict(base, id="u7", input="i32", output="i8", scale32=False, output_zp=100,
                               multiplier=[1 << 14], shift=[14]), [(1 << 31) - 1]),
        # INEXACT_ROUND: the model computes in float32 without calling apply_scale_32, so it
        # checks none of its REQUIREs; the spec's pseudocode calls it for every rounding mode
        ("value_range_32", dict(base, id="u8", multiplier=[1 << 30], shift=[2], rounding="inexact"), [0, 5, -7]),
        ("shift_range", dict(base, id="u9", multiplier=[1 << 30], shift=[63], rounding="inexact"), [1]),
    ]


def _model_kwargs(case: dict) -> dict:
    iu, ou = _logical(case["input"])[1], _logical(case["output"])[1]
    return dict(multiplier=case["multiplier"], shift=case["shift"], input_zp=case["input_zp"],
                output_zp=case["output_zp"], scale32=case["scale32"], rounding=ROUNDING[case["rounding"]],
                per_channel=case["per_channel"], input_unsigned=iu, output_unsigned=ou)


@contextlib.contextmanager
def _quiet():
    """Silence what the reference model prints to file descriptors 1 and 2 (its REQUIRE
    failures, warnings and backtraces): the status it returns says the same."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (null, *saved):
            os.close(fd)


def run_case(case: dict, x):
    """The model's output for a case (in the output's storage dtype), or its status name."""
    from promote_cli.numerics.rescale import STORAGE
    from promote_cli.probes.tosa_model import run_rescale

    it, ot = _logical(case["input"])[0], _logical(case["output"])[0]
    try:
        with _quiet():
            y = run_rescale(x, it, ot, **_model_kwargs(case))
    except (RuntimeError, ValueError) as e:
        return str(e)
    return y.view(STORAGE[case["output"]]).reshape(x.shape)


def ours(case: dict, x):
    """`rescale_array`'s output for a case, or its error message."""
    from promote_cli.errors import UsageError
    from promote_cli.numerics.rescale import rescale_array

    try:
        y, _ = rescale_array(x, case["output"], case["multiplier"], case["shift"], input_zp=case["input_zp"],
                             output_zp=case["output_zp"], scale32=case["scale32"], rounding=case["rounding"],
                             per_channel=case["per_channel"], from_=case["input"])
    except UsageError as e:
        return str(e)
    return y


# --------------------------------------------------------------------------- recording


def record(directory, workers: int | None = None) -> dict:
    """Record type support and values into `directory`; returns the manifest."""
    import numpy as np

    from promote_cli.numerics import rescale_reference as ref
    from promote_cli.numerics.rescale_rules import Config

    out_dir = Path(directory)
    out_dir.mkdir(parents=True, exist_ok=True)
    forms = support_jobs()
    outcomes = run_graphs([_job(f) for f in forms], workers)
    support = [[f["in_t"], f["out_t"], f["scale32"], f["rounding"], f["per_channel"], f["rank"],
                f["input_unsigned"], f["output_unsigned"], f["input_zp"], f["output_zp"], ok, msg]
               for f, (ok, msg) in zip(forms, outcomes)]
    rng = np.random.default_rng(7)
    arrays, cases = {}, []
    for case in value_cases():
        x = case_inputs(case, rng)
        y = run_case(case, x)
        if isinstance(y, str):
            raise RuntimeError(f"reference model: {case['id']} {case['input']} -> {case['output']}: {y}")
        (it, iu), (ot, ou) = _logical(case["input"]), _logical(case["output"])
        if case["rounding"] == "double":
            cfg = Config(it, ot, True, "single", input_unsigned=iu, output_unsigned=ou,
                         input_zp=case["input_zp"], output_zp=case["output_zp"])
            flat = x.reshape(-1).astype(np.int64).tolist()
            chans = [k % case["channels"] for k in range(len(flat))]
            single = ref.rescale_values(flat, chans, cfg, case["multiplier"], case["shift"])
            case["differs_from_single"] = int(np.count_nonzero(np.array(single) != y.reshape(-1).astype(np.int64)))
        case["count"] = int(x.size)
        case["shape"] = list(x.shape)
        arrays[f"{case['id']}_in"] = x
        arrays[f"{case['id']}_out"] = y
        cases.append(case)
    unpredictable = []
    for rule, case, values in unpredictable_cases():
        import numpy as np

        from promote_cli.numerics.rescale import STORAGE

        x = np.array(values, dtype=STORAGE[case["input"]])
        y = run_case(case, x)
        unpredictable.append(dict(case, rule=rule, values=values,
                                  model=y if isinstance(y, str) else "valid: " + json.dumps(y.tolist())))
    np.savez_compressed(out_dir / "values.npz", **arrays)
    manifest = {
        "framework": "tosa", "package": PACKAGE, "version": version(), "probe": "promote_cli.probes.tosa_rescale",
        "python": platform.python_version(), "numpy": np.__version__,
        "method": "one RESCALE per graph; input, multiplier, shift and zero points CONST tensors; "
                  "support graphs take the inputs 0, 1, 2, 0 with multiplier 1<<30, shift 30 (scale32) "
                  "or 1<<14, 14 (scale16)",
        "support_columns": ["in_t", "out_t", "scale32", "rounding", "per_channel", "rank", "input_unsigned",
                            "output_unsigned", "input_zp", "output_zp", "accepted", "message"],
        "support": support,
        "unpredictable": unpredictable,
        "cases": cases,
    }
    (out_dir / "manifest.json").write_text(_dumps(manifest), encoding="utf-8")
    return manifest


def load(directory):
    """(manifest, npz) of a recording written by `record`."""
    import numpy as np

    d = Path(directory)
    return json.loads((d / "manifest.json").read_text(encoding="utf-8")), np.load(d / "values.npz")


def support_form(row: list) -> dict:
    keys = ["in_t", "out_t", "scale32", "rounding", "per_channel", "rank", "input_unsigned", "output_unsigned",
            "input_zp", "output_zp"]
    return dict(zip(keys, row[:10]))


# --------------------------------------------------------------------------- live checks


def support_check(workers: int | None = None) -> tuple[str, int, list[str]]:
    """Every support form on the installed model: accepted exactly when `promote rescale` accepts it."""
    forms = support_jobs()
    outcomes = run_graphs([_job(f) for f in forms], workers)
    bad = []
    for f, (ok, msg) in zip(forms, outcomes):
        mine, why = ours_accepts(f)
        if ok != mine:
            bad.append(f"RESCALE {f}: the reference model {'accepts' if ok else 'refuses'} it ({msg or 'accepted'}), "
                       f"promote rescale {'accepts' if mine else 'refuses'} it ({why or 'accepted'})")
    return f"RESCALE type support vs {PACKAGE} {version()} ({len(forms)} forms)", len(forms), bad


def value_check() -> tuple[str, int, list[str]]:
    """Every value case on the installed model against `rescale_array`."""
    import numpy as np

    rng = np.random.default_rng(7)
    bad, n = [], 0
    for case in value_cases():
        x = case_inputs(case, rng)
        ref_y, mine = run_case(case, x), ours(case, x)
        n += 1
        if isinstance(ref_y, str) or isinstance(mine, str) or not np.array_equal(ref_y, mine):
            bad.append(f"RESCALE {case['id']} {case['input']} -> {case['output']} ({case['tag']}): "
                       f"reference {ref_y if isinstance(ref_y, str) else 'values'}, "
                       f"promote rescale {mine if isinstance(mine, str) else 'differs'}")
    for rule, case, values in unpredictable_cases():
        from promote_cli.numerics.rescale import STORAGE

        x = np.array(values, dtype=STORAGE[case["input"]])
        ref_y, mine = run_case(case, x), ours(case, x)
        n += 1
        model_refuses = case["rounding"] != "inexact"  # see unpredictable_cases
        if not (isinstance(ref_y, str) == model_refuses and isinstance(mine, str)):
            bad.append(f"RESCALE {case['id']} ({rule}): reference {ref_y if isinstance(ref_y, str) else 'valid'}, "
                       f"promote rescale {mine if isinstance(mine, str) else 'valid'}")
    return f"RESCALE values vs {PACKAGE} {version()} ({n} cases)", n, bad


def checks() -> list:
    return [support_check(), value_check()]


def main(argv: list[str] | None = None) -> int:
    """python -m promote_cli.probes.tosa_rescale DIR: record RESCALE on the reference model."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m promote_cli.probes.tosa_rescale", description=main.__doc__)
    parser.add_argument("out", help="the directory to write (tests/data/recordings/tosa-rescale)")
    args = parser.parse_args(argv)
    if version() is None:
        parser.error(f"{PACKAGE} is not installed: pip install {PACKAGE}")
    m = record(args.out)
    print(f"{len(m['support'])} support forms, {len(m['cases'])} value cases, "
          f"{sum(c['count'] for c in m['cases'])} values", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
