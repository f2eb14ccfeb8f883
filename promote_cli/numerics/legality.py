"""Which casts exist: the TOSA CAST type-support table, the types of the extended mode,
routes through legal casts, `check_pair`, and a cast asked for (`CastRequest`, made by `request`).
Pure data and logic: no numpy (a numpy dtype given as a type's name loads `vocab.numpy_types`)."""

from __future__ import annotations

import functools

from promote_cli.errors import UsageError
from promote_cli.records import Record
from promote_cli.vocab.dtypes import DTYPES, DType, lookup

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

#: whose cast semantics a cast follows: TOSA CAST's (the modes above), or another library's
#: (`promote_cli.numerics.semantics`)
SEMANTICS = ("tosa", "ml_dtypes", "torch", "onnx")

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


def holds(t: str, s: str) -> bool:
    """Does type `t` hold every value of type `s` exactly (so a cast s -> t never changes a value)?
    A complex type is compared by its parts; nf4 (a table of values, no exponent) and f8e8m0 (powers of
    two) hold only themselves."""
    if t == s:
        return True
    a, b = DTYPES[s], DTYPES[t]
    if a.kind == "bool":
        return True  # 0 and 1 are values of every type
    if b.kind == "bool" or (a.kind == "complex" and b.kind != "complex") or b.specials == "e8m0":
        return False  # e8m0 (powers of two) has no zero
    if a.is_integer:
        if b.is_integer:
            return b.min <= a.min and a.max <= b.max
        span = min(2 ** (b.man_bits + 1), b.max)  # every integer up to this is a value of the float
        return b.exp_bits > 0 and a.max <= span and -a.min <= span and (a.min >= 0 or b.min < 0)
    if b.is_integer or not (a.exp_bits and b.exp_bits):
        return False
    return (b.man_bits >= a.man_bits and b.max >= a.max and b.smallest_subnormal <= a.smallest_subnormal
            and (b.min < 0 or a.min >= 0) and (b.has_inf or not a.has_inf) and (b.has_nan or not a.has_nan))


def _paths(src: str, dst: str, through_bool: bool = False) -> list[tuple[str, ...]]:
    """Every shortest chain of legal TOSA casts from src to dst ([] when there is none). A chain passes
    through bool only with `through_bool` (bool keeps nothing but zero and non-zero)."""
    layer, seen = [(src,)], {src}
    while layer:
        done = [p for p in layer if p[-1] == dst]
        if done:
            return done
        nxt, reached = [], set()
        for path in layer:
            for n in _HOPS:
                if (path[-1], n) in LEGAL and n not in seen and (n != "bool" or n == dst or through_bool):
                    nxt.append(path + (n,))
                    reached.add(n)
        seen |= reached
        layer = nxt
    return [] if through_bool else _paths(src, dst, through_bool=True)


def inexact_steps(path: tuple[str, ...], last: bool = False) -> list[tuple[str, str]]:
    """The casts of a route into a type that does not hold every value of its source type, so that they may
    change a value: before the last cast (the conversion asked for), or with `last` all of them."""
    steps = list(zip(path[:-1], path[1:]))
    return [(a, b) for a, b in (steps if last else steps[:-1]) if not holds(b, path[0])]


def meeting(a: str, b: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """Where operands of TOSA types a and b can meet for an elementwise operator, by legal casts: (the type,
    the route from a, the route from b; a route of one type is no cast). A type holding every value of both
    first, then a float, then the fewest casts that may change values, then the fewest casts, then the
    narrowest type."""
    best = None
    for m in TOSA_TYPES:
        ra = (a,) if a == m else route(a, m)
        rb = (b,) if b == m else route(b, m)
        if ra is None or rb is None:
            continue
        lossy = len(inexact_steps(ra, last=True)) + len(inexact_steps(rb, last=True))
        key = (lossy > 0, DTYPES[m].kind != "float", lossy, len(ra) + len(rb), DTYPES[m].bits, TOSA_TYPES.index(m))
        if best is None or key < best[0]:
            best = (key, (m, ra, rb))
    return best[1]


@functools.lru_cache(maxsize=None)
def route(src: str, dst: str) -> tuple[str, ...] | None:
    """The shortest chain of legal TOSA casts from src to dst: of the shortest, one whose casts before the
    last keep every value (so it gives what a direct cast would) where there is one, then preferring f32
    and i32 hops."""
    paths = _paths(src, dst)
    if not paths:
        return None
    return min(paths, key=lambda p: (len(inexact_steps(p)), [_hop_preference(t) for t in p[1:-1]]))


def _via(path: tuple[str, ...]) -> str:
    """A route as a hint: `via i32 (i64 -> i32 -> f16), where i64 -> i32 is not exact`."""
    text = f"via {', '.join(path[1:-1])} ({' -> '.join(path)})"
    lossy = inexact_steps(path)
    if lossy:
        text += ", where " + " and ".join(f"{a} -> {b}" for a, b in lossy) + " may change values"
    return text


def _nearest_tosa(t: str) -> str | None:
    """The narrowest TOSA type holding every value of `t`; for a float no TOSA type holds (f64), the widest
    TOSA float; else None."""
    fits = [u for u in TOSA_TYPES if holds(u, t)]
    if fits:
        return min(fits, key=lambda u: (DTYPES[u].bits, DTYPES[u].kind != DTYPES[t].kind))
    if DTYPES[t].kind == "float":
        return max((u for u in TOSA_TYPES if DTYPES[u].kind == "float"), key=lambda u: DTYPES[u].bits)
    return None


def changes(a: str, b: str, of: str | None = None) -> str:
    """Which values of type `of` (default `a`) a cast a -> b changes, in words ("" when `b` holds them all):
    `those above 2147483647` for an integer range, `integers beyond 16777216 in magnitude` for a float's
    precision, otherwise the kind of change."""
    src, t = DTYPES[of or a], DTYPES[b]
    if holds(b, of or a):
        return ""
    if t.kind == "bool":
        return "every value but 0 and 1"
    if src.is_integer and t.is_integer:
        parts = ([f"above {int(t.max)}"] if src.max > t.max else []) + ([f"below {int(t.min)}"] if src.min < t.min else [])
        return "those " + " and ".join(parts)
    if src.is_integer:
        span = int(min(2 ** (t.man_bits + 1), t.max))
        return f"integers beyond {span} in magnitude" + (", and negative ones" if src.min < 0 <= t.min else "")
    if t.is_integer:
        return f"fractions, and values outside {int(t.min)}..{int(t.max)}"
    return f"those {b} cannot hold exactly"


def _exactly(src: str, dst: str, of: str | None = None) -> str:
    lost = changes(src, dst, of)
    return f"(which may change values: {lost})" if lost else "(exact)"


def _ways(src: str, dst: str, foreign_src: bool) -> list[tuple[str, tuple[str, ...]]]:
    """Every way through TOSA for a pair with one type TOSA lacks: (the TOSA type where the extended-mode cast
    meets TOSA, the whole chain of casts), the best first: fewest casts before the last that change values of
    `src`, then through a type of the target's kind, the widest, the shortest."""
    out = []
    for inner in TOSA_TYPES:
        if inner in (src, dst):
            continue
        inside = route(inner, dst) if foreign_src else route(src, inner)
        if inside is None:
            continue
        out.append((inner, (src, *inside) if foreign_src else (*inside, dst)))
    kind = DTYPES[dst].kind
    return sorted(out, key=lambda w: (len(inexact_steps(w[1])), DTYPES[w[0]].kind != kind, -DTYPES[w[0]].bits,
                                      len(w[1]), TOSA_TYPES.index(w[0])))


def _lossy_inside(path: tuple[str, ...], foreign_src: bool) -> list[tuple[str, str]]:
    """The casts of a way's TOSA part that lose values the conversion could keep: into a type that holds
    neither the source (nor, for a foreign target, the target)."""
    src, dst = path[0], path[-1]
    steps = list(zip(path[:-1], path[1:]))[:-1]  # the last cast is the conversion asked for
    if foreign_src:
        return [(a, b) for a, b in steps[1:] if not holds(b, src)]
    return [(a, b) for a, b in steps if not holds(b, src) and not holds(b, dst)]


def _outside_hint(src: str, dst: str, foreign: list[str]) -> str:
    """The hint for a pair with a type TOSA lacks: --mode extended, and a way through TOSA: in at the narrowest
    TOSA type holding the source, or out from the narrowest holding the target. Where no TOSA type holds the
    foreign type (u64), or that way's TOSA part changes values (u32 -> i64 -> i32 -> f16), the way that changes
    fewest, saying so and which cast changes which values."""
    if not all(t in EXTENDED_TYPES for t in (src, dst)):
        return ""
    hint = "; use --mode extended"
    if len(foreign) == 2:
        return hint
    foreign_src = foreign == [src]
    outside = src if foreign_src else dst
    inner = _nearest_tosa(outside)
    held = inner is not None and holds(inner, outside)
    if inner in (src, dst):
        return hint
    if inner is not None:  # a TOSA type holding the foreign one, or for a float (f64) the widest TOSA float
        path = (src, *(route(inner, dst) or (inner, dst))) if foreign_src else (*(route(src, inner) or (src, inner)), dst)
        if held and _lossy_inside(path, foreign_src):
            inner, path = _ways(src, dst, foreign_src)[0]
    else:
        ways = _ways(src, dst, foreign_src)
        if not ways:
            return hint
        inner, path = ways[0]
    lossy = _lossy_inside(path, foreign_src)
    if not held:
        head = f"; no TOSA type holds every {outside} value: use --mode extended, or"
    elif lossy or (foreign_src and not holds(inner, src)):
        head = f"; no way through TOSA keeps every {src} value: use --mode extended, or"
    else:
        head = hint + ", or"
    where = "".join(f", where {a} -> {b} changes {changes(a, b, src)}" for a, b in lossy)
    if foreign_src:
        return head + (f" cast {src} -> {inner} with --mode extended {_exactly(src, inner)} and then "
                       f"{' -> '.join(path[1:])} in TOSA{where}")
    return head + (f" cast {' -> '.join(path[:-1])} in TOSA and then {inner} -> {dst} with --mode extended "
                   f"{_exactly(inner, dst, src)}{where}")


class CastRequest(Record, frozen=True):
    """A cast as asked for, decided once where it enters (`promote cast`, `cast_file`, `cast_array`; see
    `request`) and handed down as it is: the target's canonical name, the type the stored values are read as
    (`--from`, canonical; None: the type the array or file says), the mode, whether float overflow
    saturates, and whose semantics the cast follows."""

    dst: str
    src: str | None = None
    mode: str = "tosa"
    saturate: bool = False
    semantics: str = "tosa"

    def check(self, src: str) -> None:
        """Raise UsageError unless the mode defines a cast from the canonical type `src` to the target; the
        message names a legal route when one exists (another library's semantics: a conversion it is known for,
        `numerics.semantics.check`)."""
        if self.semantics != "tosa":
            from promote_cli.numerics.semantics import check

            check(self.semantics, src, self.dst)
        elif self.mode == "extended":
            for t in (src, self.dst):
                if t not in EXTENDED_TYPES:
                    raise UsageError(f"cast --mode extended does not support {t}; supported types: "
                                     + " ".join(EXTENDED_TYPES))
        elif (src, self.dst) not in LEGAL:
            _refuse_tosa(src, self.dst)


def request(to, from_=None, mode: str = "tosa", saturate: bool | None = None, semantics: str = "tosa") -> CastRequest:
    """The `CastRequest` for a cast to `to` (any name `dtype_name` takes) of values stored as `from_` (None:
    as the data says) in `mode`, following `semantics`; UsageError for a missing or unknown type, an unknown
    mode or semantics, or `saturate` where it means nothing. `saturate` None is the semantics' default: TOSA
    CAST does not saturate, ONNX Runtime's Cast does (its `saturate` attribute, for fp8 targets)."""
    if to is None or (isinstance(to, str) and not to.strip()):
        raise UsageError("no target dtype given (--to)")
    if mode not in MODES:
        raise UsageError(f"unknown cast mode {mode!r}; choose one of: {', '.join(MODES)}")
    if semantics not in SEMANTICS:
        raise UsageError(f"unknown cast semantics {semantics!r}; choose one of: {', '.join(SEMANTICS)}")
    if semantics == "tosa":
        if saturate and mode != "extended":
            raise UsageError("--saturate needs --mode extended (TOSA CAST does not saturate floats)")
    elif mode != "tosa":
        raise UsageError(f"--mode {mode} is TOSA's: --semantics {semantics} casts as {semantics} does")
    elif semantics != "onnx" and saturate is not None:
        raise UsageError(f"--saturate/--no-saturate: {semantics} has no such setting (ONNX Runtime's Cast has)")
    sat = (semantics == "onnx") if saturate is None else saturate
    return CastRequest(dtype_name(to), None if from_ is None else dtype_name(from_), mode, bool(sat), semantics)


def dtype_name(value) -> str:
    """The canonical name of a dtype given as any spelling of the vocabulary (`float16`, `FP16`,
    `torch.float16`: case-insensitive; UsageError with suggestions for an unknown one), a `DType`, or a NumPy
    dtype or scalar type (`np.float16`, `np.dtype("float16")`, `ml_dtypes.bfloat16`); TypeError for any other
    object."""
    if isinstance(value, str):
        return value if value in DTYPES else lookup(value).name  # a canonical name is its own
    if isinstance(value, DType):
        return value.name
    from promote_cli.vocab.numpy_types import canonical_of_type  # loads numpy: only for such an object

    name = canonical_of_type(value)
    if name is None:
        raise TypeError(f"a dtype is a spelling such as 'f16', a DType or a NumPy dtype, not {value!r:.80}")
    return name


def check_pair(src: str, dst: str, mode: str = "tosa") -> None:
    """Raise UsageError unless `mode` defines a cast from `src` to `dst` (`CastRequest.check`).

    The message names a legal route when one exists.
    """
    request(dst, mode=mode).check(dtype_name(src))


def _refuse_tosa(src: str, dst: str) -> None:
    """The UsageError for a pair TOSA CAST does not define, with the way to cast it."""
    head = f"TOSA CAST does not define {src} -> {dst}"
    if src == dst:
        raise UsageError(f"{head}: the input already has type {dst} (use --mode extended to copy)")
    foreign = [t for t in (src, dst) if t not in TOSA_TYPES]
    if foreign:
        what = " or ".join(foreign)
        raise UsageError(f"{head}: TOSA has no {what} type{_outside_hint(src, dst, foreign)}")
    path = route(src, dst)
    if path is None:  # pragma: no cover - every TOSA type reaches every other
        raise UsageError(f"{head}; use --mode extended")
    raise UsageError(f"{head}; cast {_via(path)}, or use --mode extended")
