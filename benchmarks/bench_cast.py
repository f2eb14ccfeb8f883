"""Throughput of the TOSA CAST kernels, pair by pair, against numpy/ml_dtypes `astype`,
a plain copy of the input, and the TOSA reference model, all measured in the same run.

    python benchmarks/bench_cast.py [--n 4194304] [--repeat 5] [--pairs f32->f8e4m3,...]
                                    [--no-ref] [--no-stats] [--json FILE] [--quick]

Figures are GB/s of input bytes (best of --repeat runs).  `ours` is cast_array without
statistics, `stats` with them (what `promote cast` always computes).  `astype` is what numpy or
ml_dtypes does for the same pair (not TOSA semantics: no saturation for float -> int,
no NaN policy); `copy` is `x.copy()`; `ref` is `tosa_reference_model.run` on a one-CAST
graph (graph building excluded), when tosa-tools is importable.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from promote_cli.numerics.cast import cast_array  # noqa: E402
from promote_cli.numerics.legality import LEGAL, TOSA_TYPES  # noqa: E402
from promote_cli.numerics.reference import reference_cast  # noqa: E402
from promote_cli.vocab.numpy_types import numpy_dtype  # noqa: E402


def make_input(src: str, n: int, rng) -> np.ndarray:
    """Typical values: mostly in range, some overflow, zeros, a few NaN/inf for floats."""
    if src == "bool":
        return rng.integers(0, 2, n).astype(bool)
    dt = numpy_dtype(src)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    v = rng.standard_normal(n) * np.exp2(rng.integers(-12, 12, n))
    v[:: 997] = np.nan
    v[1:: 991] = np.inf
    return reference_cast(v.astype(np.float64), "f64", src) if src != "f64" else v


def best(fn, repeat: int) -> float:
    fn()
    t = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 22, help="elements per input (default 4Mi)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--pairs", default="", help="comma-separated src->dst (default: all 52)")
    ap.add_argument("--no-ref", action="store_true", help="skip the reference model")
    ap.add_argument("--no-stats", action="store_true", help="skip timing cast_array with statistics")
    ap.add_argument("--stats", action="store_true", help=argparse.SUPPRESS)  # the default; kept for old scripts
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--quick", action="store_true", help="1 Mi elements, best of 3, no reference model")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.repeat, args.no_ref = 1 << 20, 3, True

    pairs = sorted(LEGAL, key=lambda p: (TOSA_TYPES.index(p[0]), TOSA_TYPES.index(p[1])))
    if args.pairs:
        want = {tuple(p.split("->")) for p in args.pairs.split(",")}
        pairs = [p for p in pairs if p in want]

    ref_run = None
    if not args.no_ref:
        try:
            import tosa_reference_model as rm

            from promote_cli.probes import tosa as probe

            ref_run = (rm, probe)
        except ImportError:
            pass

    rng = np.random.default_rng(0)
    rows = []
    head = (f"{'pair':<16}{'ours':>8}{'stats':>8}{'astype':>8}{'copy':>8}{'ref':>8}   "
            f"{'/astype':>8}{'/copy':>7}{'st/copy':>8}{'/ref':>8}")
    print(f"GB/s of input, n={args.n}, best of {args.repeat}")
    print(head)
    inputs: dict[str, np.ndarray] = {}
    for src, dst in pairs:
        x = inputs.setdefault(src, make_input(src, args.n, rng))
        gb = x.nbytes / 1e9
        out_dt = numpy_dtype(dst)
        t_ours = best(lambda: cast_array(x, dst, src=src, stats=False), args.repeat)
        t_stats = None if args.no_stats else best(lambda: cast_array(x, dst, src=src, stats=True), args.repeat)

        def astype():
            with np.errstate(all="ignore"):
                x.astype(out_dt)

        t_astype = best(astype, args.repeat)
        t_copy = best(x.copy, args.repeat)
        t_ref = None
        if ref_run is not None:
            rm, probe = ref_run
            graph = probe.build_cast_graph(src, dst, [x.size])
            xin = x if src == "bool" else x.view(f"u{x.itemsize}") if src in ("bf16", "f8e4m3", "f8e5m2") else x
            t_ref = best(lambda: rm.run(graph, [xin]), 1)
        row = {
            "pair": f"{src}->{dst}", "profile": LEGAL[(src, dst)], "n": int(x.size),
            "ours": gb / t_ours, "stats": gb / t_stats if t_stats else None,
            "astype": gb / t_astype, "copy": gb / t_copy, "ref": gb / t_ref if t_ref else None,
        }
        rows.append(row)

        def f(v):
            return f"{v:8.2f}" if v is not None else f"{'-':>8}"

        print(f"{row['pair']:<16}{f(row['ours'])}{f(row['stats'])}{f(row['astype'])}{f(row['copy'])}{f(row['ref'])}"
              f"   {row['ours'] / row['astype']:8.2f}{row['ours'] / row['copy']:7.2f}"
              f"{(row['stats'] / row['copy']) if row['stats'] else float('nan'):8.2f}"
              f"{(row['ours'] / row['ref']) if row['ref'] else float('nan'):8.1f}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
