"""The dtype vocabulary: canonical names, what each type is, and every framework's aliases.

The facts live in `dtypes.toml` beside this module, one table per type: its traits
(kind, width, exponent and mantissa bits, bias, how infinities and NaN are encoded,
sign) and each framework's spellings. Everything else (ranges, smallest normal and
subnormal values, whether there are infinities or NaN) is derived here from those
traits, so adding a type is a data change only.

Names count bits (`i8` is int8, `c64` is complex64), as the CLI contract fixes them.
Lookups are case-insensitive and forgive framework prefixes (`torch.float16`,
`paddle.int8`, `ACL_FLOAT16`, `DT_HALF`). A framework's first spelling is its own name
for the type: `native_names(framework)` gives them, for the probes. This module imports
nothing heavy.
"""

from __future__ import annotations

import os

from promote_cli.errors import UsageError
from promote_cli.records import Record

KINDS = ("bool", "signed", "unsigned", "float", "complex")
#: how a float format encodes infinities and NaN (see dtypes.toml)
SPECIALS = ("ieee", "fn", "fnuz", "e8m0", "none")

#: the data file; PROMOTE_DTYPES_FILE names another one (tests add types through it)
DATA = os.environ.get("PROMOTE_DTYPES_FILE") or os.path.join(os.path.dirname(__file__), "dtypes.toml")


class DType(Record, frozen=True):
    """One element type.

    `bits` is the width of one value (bool counts 8, as every framework stores it).
    For floats `exp_bits`/`man_bits` are the exponent and explicit mantissa bits, `bias`
    the exponent bias and `specials` how infinities and NaN are encoded (`SPECIALS`);
    for integers `exp_bits` is 0 and `man_bits` the value bits (7 for i8, 8 for u8).
    `max`/`min` are the largest and lowest finite values. `signed` says whether the type
    has negative values. `numpy` names the numpy or ml_dtypes type that holds the values
    ("int8", "ml_dtypes.bfloat16"), None when there is none.
    """

    name: str
    kind: str
    bits: int
    exp_bits: int
    man_bits: int
    max: float
    min: float
    has_inf: bool
    has_nan: bool
    doc: str
    bias: int = 0
    specials: str = "none"
    signed: bool = True
    numpy: str | None = None

    def __repr__(self) -> str:
        return self.name

    def __str__(self) -> str:
        return self.name

    @property
    def priority(self) -> int:
        """0 bool, 1 integer, 2 float, 3 complex."""
        return _PRIORITY[self.kind]

    @property
    def is_integer(self) -> bool:
        return self.kind in ("signed", "unsigned")

    @property
    def is_binary_float(self) -> bool:
        """A float with exponent bits (not a table of values like nf4)."""
        return self.kind == "float" and self.exp_bits > 0

    @property
    def emin(self) -> int:
        """The exponent of the smallest normal value (binary floats)."""
        return -self.bias if self.specials == "e8m0" else 1 - self.bias

    @property
    def smallest_normal(self) -> float:
        return 2.0 ** self.emin

    @property
    def smallest_subnormal(self) -> float:
        """The smallest positive value (the smallest normal one when there are no subnormals)."""
        return 2.0 ** (self.emin - self.man_bits)


_PRIORITY = {"bool": 0, "signed": 1, "unsigned": 1, "float": 2, "complex": 3}


def _float_max(exp_bits: int, man_bits: int, bias: int, specials: str) -> float:
    """The largest finite value of a binary float format."""
    top_exp = (1 << exp_bits) - 1                  # the all-ones exponent field
    top_man = (1 << man_bits) - 1
    if specials == "ieee":                         # all-ones exponent: inf and NaN
        top_exp -= 1
    elif specials in ("fn", "e8m0"):               # all-ones pattern: NaN
        if man_bits == 0:
            top_exp -= 1
        else:
            top_man -= 1
    return (1 + top_man / 2.0 ** man_bits) * 2.0 ** (top_exp - bias)


def _build(name: str, t: dict, done: dict[str, DType]) -> DType:
    def need(key):
        if key not in t:
            raise ValueError(f"dtype {name}: missing {key!r}")
        return t[key]

    kind, bits, doc = need("kind"), need("bits"), need("doc")
    if kind not in KINDS:
        raise ValueError(f"dtype {name}: kind {kind!r} is not one of {', '.join(KINDS)}")
    numpy = t.get("numpy")
    if kind == "bool":
        return DType(name, kind, bits, 0, 1, 1, 0, False, False, doc, signed=False, numpy=numpy)
    if kind in ("signed", "unsigned"):
        if kind == "signed":
            return DType(name, kind, bits, 0, bits - 1, 2 ** (bits - 1) - 1, -(2 ** (bits - 1)), False, False, doc,
                         numpy=numpy)
        return DType(name, kind, bits, 0, bits, 2 ** bits - 1, 0, False, False, doc, signed=False, numpy=numpy)
    if kind == "complex":
        part = done.get(need("part"))
        if part is None or part.kind != "float":
            raise ValueError(f"dtype {name}: part {t['part']!r} is not a float type listed before it")
        return DType(name, kind, bits, part.exp_bits, part.man_bits, part.max, part.min, True, True, doc,
                     bias=part.bias, specials=part.specials, numpy=numpy)
    specials = t.get("specials", "ieee")
    if specials not in SPECIALS:
        raise ValueError(f"dtype {name}: specials {specials!r} is not one of {', '.join(SPECIALS)}")
    signed = t.get("signed", True)
    exp_bits, man_bits = t.get("exp_bits", 0), t.get("man_bits", 0)
    has_inf, has_nan = specials == "ieee", specials not in ("none",)
    if exp_bits == 0:                              # a table of values: its range is stated
        fmax, fmin = float(need("max")), float(need("min"))
        return DType(name, kind, bits, 0, man_bits, fmax, fmin, has_inf, has_nan, doc, specials=specials,
                     signed=signed, numpy=numpy)
    if "max" in t or "min" in t:
        raise ValueError(f"dtype {name}: max/min are derived from the exponent and mantissa bits")
    if bits != exp_bits + man_bits + (1 if signed else 0):
        raise ValueError(f"dtype {name}: {bits} bits do not hold a sign, {exp_bits} exponent and "
                         f"{man_bits} mantissa bits")
    bias = need("bias")
    fmax = _float_max(exp_bits, man_bits, bias, specials)
    if signed:
        fmin = -fmax
    elif specials == "e8m0":                       # no zero: the lowest value is the smallest
        fmin = 2.0 ** (-bias)
    else:
        fmin = 0.0
    return DType(name, kind, bits, exp_bits, man_bits, fmax, fmin, has_inf, has_nan, doc, bias=bias,
                 specials=specials, signed=signed, numpy=numpy)


#: the vocabulary's table of type families that are not covered (not a type)
UNCOVERED = "uncovered"


class Uncovered(Record, frozen=True):
    """A family of types that frameworks have and promote does not cover: what each one is, and why."""

    family: str
    what: str
    reason: str


def load(path: str = DATA) -> tuple[dict[str, DType], dict[str, dict[str, list[str]]]]:
    """The types of a vocabulary file, in file order, and each one's spellings by framework."""
    types, spellings, _ = load_all(path)
    return types, spellings


def load_all(path: str = DATA) -> tuple[dict[str, DType], dict[str, dict[str, list[str]]], dict[str, Uncovered]]:
    """`load`, and each spelling (lower case) of a type family the file says is not covered."""
    from promote_cli import tomlcache

    with open(path, "rb") as handle:
        data = handle.read()
    raw = dict(tomlcache.loads(data, lambda: _parse(data)))
    uncovered = _uncovered(raw.pop(UNCOVERED, {}))
    types: dict[str, DType] = {}
    spellings: dict[str, dict[str, list[str]]] = {}
    for name, table in raw.items():
        table = dict(table)
        spellings[name] = table.pop("spellings", {})
        types[name] = _build(name, table, types)
        _check_numpy_spelling(types[name], spellings[name])
    return types, spellings, uncovered


def _uncovered(tables: dict) -> dict[str, Uncovered]:
    out: dict[str, Uncovered] = {}
    for family, table in tables.items():
        if set(table) != {"is", "reason", "spellings"}:
            raise ValueError(f"uncovered.{family}: needs exactly is, reason and spellings")
        for names in table["spellings"].values():
            for spelling in names:
                out[spelling.lower()] = Uncovered(family, table["is"], table["reason"])
    return out


def _parse(data: bytes) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib.loads(data.decode("utf-8"))


def _check_numpy_spelling(d: DType, spellings: dict[str, list[str]]) -> None:
    """The `numpy` trait and the first numpy (or ml_dtypes) spelling name the same type."""
    if d.numpy is None:
        return
    module, _, own = d.numpy.rpartition(".")
    framework = module or "numpy"
    first = spellings.get(framework, [None])[0]
    if first != own:
        raise ValueError(f"dtype {d.name}: numpy = {d.numpy!r}, but its first {framework} spelling is {first!r}")


# In the contract's order: bool, signed, unsigned, float, complex.
DTYPES, SPELLINGS, _UNCOVERED = load_all()

# Module prefixes that frameworks put in front of a dtype name.
_PREFIXES = ("torch.", "paddle.", "np.", "numpy.", "jnp.", "jax.numpy.", "tf.", "tensorflow.",
             "ml_dtypes.", "mx.", "ov.type.", "type.", "element.", "stablehlo.", "tosa.")


def _index() -> dict[str, str]:
    index = {name: name for name in DTYPES}
    for name, by_framework in SPELLINGS.items():
        for framework, names in by_framework.items():
            for spelling in names:
                key = spelling.lower()
                if index.setdefault(key, name) != name:
                    raise ValueError(f"dtype spelling {spelling!r} ({framework}) means both "
                                     f"{index[key]} and {name}")
    for key, family in _UNCOVERED.items():
        if key in index:
            raise ValueError(f"dtype spelling {key!r} is both {index[key]} and uncovered ({family.family})")
    return index


_INDEX: dict[str, str] = _index()


def _normal(text: str) -> str:
    key = text.strip().lower()
    for prefix in _PREFIXES:
        if key.startswith(prefix):
            key = key[len(prefix):]
            break
    return key


def lookup(name: str) -> DType:
    """The DType a (possibly framework-specific) name means; UsageError with suggestions if none."""
    key = _normal(name)
    found = _INDEX.get(key)
    if found is None:
        family = _UNCOVERED.get(key)
        if family is not None:
            raise UsageError(f"{name} is {family.what}; {family.reason}")
        raise UsageError(f"unknown dtype {name!r}{suggest(name)}")
    return DTYPES[found]


def find(name: str) -> DType | None:
    """Like lookup, but None for an unknown name."""
    found = _INDEX.get(_normal(name))
    return DTYPES[found] if found else None


def suggest(name: str) -> str:
    """A ' (did you mean ...?)' tail naming the closest canonical names, or a pointer to the list."""
    import difflib

    key = _normal(name)
    close = difflib.get_close_matches(key, list(_INDEX), n=8, cutoff=0.5 if len(key) > 2 else 0.45)
    names = list(dict.fromkeys(_INDEX[c] for c in close))[:3]
    if names:
        return " (did you mean " + ", ".join(names) + "?)"
    return " (see `promote dtypes`)"


def aliases(name: str) -> list[str]:
    """Every spelling accepted for a canonical name (lower case, without prefixes)."""
    return sorted(k for k, v in _INDEX.items() if v == name and k != name)


def native_names(framework: str) -> dict[str, str]:
    """Canonical name -> the framework's own name for the type (its first spelling), for
    every type the framework has a spelling list for, in the contract's order."""
    return {name: by_framework[framework][0] for name, by_framework in SPELLINGS.items()
            if by_framework.get(framework)}


def int_of(bits: int, signed: bool) -> DType | None:
    """The integer type of that width and signedness, if the vocabulary has it."""
    return DTYPES.get(("i" if signed else "u") + str(bits))
