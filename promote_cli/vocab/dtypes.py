"""The dtype vocabulary: canonical names, what each type is, and every framework's aliases.

Names count bits (`i8` is int8, `c64` is complex64), as the CLI contract fixes them.
Lookups are case-insensitive and forgive framework prefixes (`torch.float16`,
`paddle.int8`, `ACL_FLOAT16`, `DT_HALF`). This module imports nothing heavy.
"""

from __future__ import annotations

from dataclasses import dataclass

from promote_cli.errors import UsageError

KINDS = ("bool", "signed", "unsigned", "float", "complex")


@dataclass(frozen=True)
class DType:
    """One element type.

    `bits` is the storage width (bool counts 8, as every framework stores it).
    For floats `exp_bits`/`man_bits` are the exponent and explicit mantissa bits;
    for integers `exp_bits` is 0 and `man_bits` the value bits (7 for i8, 8 for u8).
    `max`/`min` are the largest and lowest finite values.
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

    def __repr__(self) -> str:
        return self.name

    def __str__(self) -> str:
        return self.name

    @property
    def priority(self) -> int:
        """0 bool, 1 integer, 2 float, 3 complex."""
        return _PRIORITY[self.kind]


_PRIORITY = {"bool": 0, "signed": 1, "unsigned": 1, "float": 2, "complex": 3}


def _int(name: str, bits: int, signed: bool) -> DType:
    if signed:
        lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        return DType(name, "signed", bits, 0, bits - 1, hi, lo, False, False, f"{bits}-bit signed integer")
    return DType(name, "unsigned", bits, 0, bits, 2**bits - 1, 0, False, False, f"{bits}-bit unsigned integer")


def _float(name, bits, exp, man, fmax, inf, nan, doc, fmin=None) -> DType:
    return DType(name, "float", bits, exp, man, fmax, -fmax if fmin is None else fmin, inf, nan, doc)


def _complex(name, bits, part: DType) -> DType:
    return DType(name, "complex", bits, part.exp_bits, part.man_bits, part.max, part.min, True, True,
                 f"complex of two {part.name}")


_F16 = _float("f16", 16, 5, 10, 65504.0, True, True, "IEEE 754 half precision")
_F32 = _float("f32", 32, 8, 23, 3.4028234663852886e38, True, True, "IEEE 754 single precision")
_F64 = _float("f64", 64, 11, 52, 1.7976931348623157e308, True, True, "IEEE 754 double precision")

# In the contract's order: bool, signed, unsigned, float, complex.
DTYPES: dict[str, DType] = {d.name: d for d in (
    DType("bool", "bool", 8, 0, 1, 1, 0, False, False, "boolean"),
    _int("i4", 4, True), _int("i8", 8, True), _int("i16", 16, True), _int("i32", 32, True), _int("i64", 64, True),
    _int("u1", 1, False), _int("u4", 4, False), _int("u8", 8, False), _int("u16", 16, False),
    _int("u32", 32, False), _int("u64", 64, False),
    _float("f4e2m1", 4, 2, 1, 6.0, False, False, "OCP MX FP4 E2M1 (no inf, no NaN)"),
    _float("f8e4m3", 8, 4, 3, 448.0, False, True, "OCP FP8 E4M3FN (no inf; NaN)"),
    _float("f8e5m2", 8, 5, 2, 57344.0, True, True, "OCP FP8 E5M2"),
    _float("f8e8m0", 8, 8, 0, 2.0**127, False, True, "OCP MX scale E8M0 (powers of two, unsigned)", fmin=2.0**-127),
    _float("nf4", 4, 0, 0, 1.0, False, False, "4-bit NormalFloat (16 quantiles of N(0,1) in [-1, 1])"),
    _float("bf16", 16, 8, 7, 3.3895313892515355e38, True, True, "bfloat16"),
    _F16, _F32, _F64,
    _complex("c32", 32, _F16), _complex("c64", 64, _F32), _complex("c128", 128, _F64),
)}

# Framework spellings. Keys are compared case-insensitively after prefix stripping.
_ALIASES: dict[str, tuple[str, ...]] = {
    "bool": ("bool_", "boolean", "pred", "i1", "b1", "b8", "bool8", "acl_bool", "dt_bool", "bool_t"),
    "i4": ("int4", "s4", "acl_int4", "dt_int4", "int4_t"),
    "i8": ("int8", "s8", "si8", "acl_int8", "dt_int8", "int8_t", "qint8"),
    "i16": ("int16", "s16", "si16", "short", "acl_int16", "dt_int16", "int16_t"),
    "i32": ("int32", "s32", "si32", "int", "intc", "acl_int32", "dt_int32", "int32_t"),
    "i64": ("int64", "s64", "si64", "long", "int_", "intp", "acl_int64", "dt_int64", "int64_t"),
    "u1": ("uint1", "bit", "acl_uint1", "dt_uint1"),
    "u4": ("uint4", "ui4", "dt_uint4"),
    "u8": ("uint8", "ui8", "ubyte", "acl_uint8", "dt_uint8", "uint8_t", "quint8"),
    "u16": ("uint16", "ui16", "ushort", "acl_uint16", "dt_uint16", "uint16_t"),
    "u32": ("uint32", "ui32", "uintc", "acl_uint32", "dt_uint32", "uint32_t"),
    "u64": ("uint64", "ui64", "uintp", "ulong", "acl_uint64", "dt_uint64", "uint64_t"),
    "f4e2m1": ("float4_e2m1fn", "float4_e2m1", "fp4e2m1", "f4e2m1fn", "acl_float4_e2m1", "dt_float4_e2m1",
               "float4_e2m1fn_x2"),
    "f8e4m3": ("float8_e4m3fn", "fp8e4m3", "f8e4m3fn", "float8_e4m3", "e4m3", "fp8_e4m3", "acl_float8_e4m3fn",
               "dt_float8_e4m3fn", "fp8e4m3_t"),
    "f8e5m2": ("float8_e5m2", "fp8e5m2", "e5m2", "fp8_e5m2", "acl_float8_e5m2", "dt_float8_e5m2", "fp8e5m2_t"),
    "f8e8m0": ("float8_e8m0fnu", "float8_e8m0", "fp8e8m0", "f8e8m0fnu", "e8m0", "acl_float8_e8m0",
               "dt_float8_e8m0"),
    "nf4": ("normalfloat4",),
    "bf16": ("bfloat16", "bf16_t", "acl_bf16", "dt_bf16", "dt_bfloat16", "bfloat"),
    "f16": ("float16", "fp16", "half", "acl_float16", "dt_float16", "dt_half", "fp16_t"),
    "f32": ("float32", "fp32", "float", "single", "acl_float", "dt_float", "fp32_t"),
    "f64": ("float64", "fp64", "double", "acl_double", "dt_double", "fp64_t"),
    "c32": ("complex32", "chalf", "acl_complex32", "dt_complex32"),
    "c64": ("complex64", "cfloat", "csingle", "acl_complex64", "dt_complex64"),
    "c128": ("complex128", "cdouble", "acl_complex128", "dt_complex128", "complex"),
}

# Module prefixes that frameworks put in front of a dtype name.
_PREFIXES = ("torch.", "paddle.", "np.", "numpy.", "jnp.", "jax.numpy.", "tf.", "tensorflow.",
             "ml_dtypes.", "mx.", "ov.type.", "type.", "element.", "stablehlo.", "tosa.")

_INDEX: dict[str, str] = {}
for _name in DTYPES:
    _INDEX[_name] = _name
for _name, _spellings in _ALIASES.items():
    for _spelling in _spellings:
        _INDEX[_spelling] = _name
# OpenVINO precision names as the IR writes them: FP16, I16, U8, BOOL ...
for _name in DTYPES:
    if _name[0] == "f" and _name[1:].isdigit():
        _INDEX.setdefault("fp" + _name[1:], _name)


def _normal(text: str) -> str:
    key = text.strip().lower()
    for prefix in _PREFIXES:
        if key.startswith(prefix):
            key = key[len(prefix):]
            break
    return key


def lookup(name: str) -> DType:
    """The DType a (possibly framework-specific) name means; UsageError with suggestions if none."""
    found = _INDEX.get(_normal(name))
    if found is None:
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


def int_of(bits: int, signed: bool) -> DType | None:
    """The integer type of that width and signedness, if the vocabulary has it."""
    return DTYPES.get(("i" if signed else "u") + str(bits))
