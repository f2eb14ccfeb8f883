"""Which casts exist: the TOSA CAST type-support table, the types of the extended mode,
routes through legal casts, and `check_pair`. Pure data and logic: no numpy."""

from __future__ import annotations

import functools
from collections import deque

from promote_cli.errors import UsageError
from promote_cli.vocab.dtypes import DTYPES

#: the element types TOSA CAST knows (canonical names), in the spec's order
TOSA_TYPES: tuple[str, ...] = (
    "bool", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f8e4m3", "f8e5m2",
)

def _extended(d) -> bool:
    """Does CAST's semantics extend to `d`? Booleans and integers; floats whose NaN and
    overflow rules CAST defines: a sign, a NaN, whole bytes. Left out: f4e2m1, f6e2m3,
    f6e3m2 (no NaN), f8e8m0 (no sign, no zero), nf4 and u1 (no numpy dtype) and complex
    types (not real)."""
    if not d.numpy:
        return False
    if d.kind == "bool" or d.is_integer:
        return True
    return d.kind == "float" and d.specials in ("ieee", "fn", "fnuz") and d.signed and d.bits % 8 == 0


#: canonical dtypes usable with mode="extended", in the vocabulary's order
EXTENDED_TYPES: tuple[str, ...] = tuple(name for name, d in DTYPES.items() if _extended(d))

MODES = ("tosa", "extended")

assert set(TOSA_TYPES) <= set(EXTENDED_TYPES) <= set(DTYPES)


def _tosa_legal() -> dict[tuple[str, str], str]:
    """The CAST type-support table of TOSA 1.1 (tosa.xml), one entry per ordered pair.

    Pairs marked DEDUCE-EXT in the spec get the extensions their types imply, joined
    with " and " the way the spec joins op profiles.
    """
    legal: dict[tuple[str, str], str] = {}

    def add(srcs, dsts, profile):
        for s in srcs:
            for d in dsts:
                legal[(s, d)] = profile

    signed = ("i8", "i16", "i32")
    add(["bool"], signed, "PRO-INT")                      # bool to signed
    add(["bool", "i32"], ["i64"], "EXT-INT64")            # to signed 64
    add(["bool"], ["f32"], "PRO-FP")                      # bool to fp32
    add(signed, ["bool"], "PRO-INT")                      # signed to bool
    add(["i64"], ["bool", "i32"], "EXT-INT64")            # signed 64 to bool/i32
    add(["i8"], ["i16", "i32"], "PRO-INT")                # signed 8 to signed wider
    add(["i16"], ["i8", "i32"], "PRO-INT")                # signed 16 to signed 8/32
    add(["i32"], ["i8", "i16"], "PRO-INT")                # signed 32 to signed narrower
    add(signed, ["f16", "f32"], "PRO-FP")                 # signed to fp16/fp32
    add(["f16", "f32"], signed, "PRO-FP")                 # fp16/fp32 to signed
    add(["f16"], ["f32"], "PRO-FP")
    add(["f32"], ["f16"], "PRO-FP")
    add(["f32"], ["bool"], "PRO-FP")
    add(signed + ("f32",), ["bf16"], "EXT-BF16")          # to bf16
    add(["bf16"], signed + ("f32",), "EXT-BF16")          # bf16 to signed/fp32
    ext = {"bf16": "EXT-BF16", "f8e4m3": "EXT-FP8E4M3", "f8e5m2": "EXT-FP8E5M2"}
    for fp in ("bf16", "f16", "f32"):                     # fp to fp8, fp8 to fp
        for f8 in ("f8e4m3", "f8e5m2"):
            for s, d in ((fp, f8), (f8, fp)):
                legal[(s, d)] = " and ".join(sorted({ext[t] for t in (s, d) if t in ext}))
    return legal


LEGAL: dict[tuple[str, str], str] = _tosa_legal()
assert len(LEGAL) == 52 and {t for pair in LEGAL for t in pair} == set(TOSA_TYPES)


def _hop_preference(t: str) -> tuple:
    """Intermediate types a route prefers: 32-bit ones first (f32 and i32 hold every
    narrower TOSA value), then wider before narrower, floats before integers; i64
    last (it only reaches bool and i32)."""
    d = DTYPES[t]
    return (d.bits > 32, -d.bits, d.kind != "float", TOSA_TYPES.index(t))


_HOPS = tuple(sorted(TOSA_TYPES, key=_hop_preference))


@functools.lru_cache(maxsize=None)
def route(src: str, dst: str) -> tuple[str, ...] | None:
    """Shortest chain of legal TOSA casts from src to dst (preferring f32 and i32 hops)."""
    prev = {src: None}
    queue = deque([src])
    while queue:
        t = queue.popleft()
        if t == dst:
            path = [t]
            while prev[path[-1]] is not None:
                path.append(prev[path[-1]])
            return tuple(reversed(path))
        for n in _HOPS:
            if (t, n) in LEGAL and n not in prev:
                prev[n] = t
                queue.append(n)
    return None


def check_pair(src: str, dst: str, mode: str = "tosa") -> None:
    """Raise UsageError unless `mode` defines a cast from `src` to `dst`.

    The message names a legal route when one exists.
    """
    if mode not in MODES:
        raise UsageError(f"unknown cast mode {mode!r}; choose one of: {', '.join(MODES)}")
    if mode == "extended":
        for t in (src, dst):
            if t not in EXTENDED_TYPES:
                raise UsageError(
                    f"cast --mode extended does not support {t}; supported types: "
                    + " ".join(EXTENDED_TYPES)
                )
        return
    if (src, dst) in LEGAL:
        return
    head = f"TOSA CAST does not define {src} -> {dst}"
    if src == dst:
        raise UsageError(f"{head}: the input already has type {dst} (use --mode extended to copy)")
    foreign = [t for t in (src, dst) if t not in TOSA_TYPES]
    if foreign:
        what = " or ".join(foreign)
        extra = ", or use --mode extended" if all(t in EXTENDED_TYPES for t in (src, dst)) else ""
        raise UsageError(f"{head}: TOSA has no {what} type{extra}")
    path = route(src, dst)
    if path is None:  # pragma: no cover - every TOSA type reaches every other
        raise UsageError(f"{head}; use --mode extended")
    via = ", ".join(path[1:-1])
    raise UsageError(f"{head}; cast via {via} ({' -> '.join(path)}), or use --mode extended")
