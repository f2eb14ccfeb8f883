"""NumPy-style dtype names (numpy, ml_dtypes, JAX, array-api-strict) -> canonical names.

NumPy, ml_dtypes, JAX and array-api-strict all name a dtype by ``np.dtype(...).name``
(``int8``, ``float8_e4m3fn``, ``complex64``).  This is the one place the probes turn
those names into the contract's bit-counting names.  NumPy's byte-counting type codes
(``'i4'`` = int32, ``'c8'`` = complex64) are never looked at: the probes read
``dtype.name`` only, and tests/test_numpy_probe.py checks that no key is such a code.

``float8_e4m3`` (IEEE-style, with infinities) is ``f8e4m3ieee``; ``float8_e4m3fn`` is
``f8e4m3``.  ml_dtypes' ``int1`` and ``bcomplex32`` have no canonical name and are not
asked about (``uint1`` is ``u1``).
"""

from __future__ import annotations

#: dtype.name -> canonical name, in the contract's order (bool, signed, unsigned, float, complex).
CANONICAL = {
    "bool": "bool",
    "int2": "i2",
    "int4": "i4",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint1": "u1",
    "uint2": "u2",
    "uint4": "u4",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "float4_e2m1fn": "f4e2m1",
    "float6_e2m3fn": "f6e2m3",
    "float6_e3m2fn": "f6e3m2",
    "float8_e3m4": "f8e3m4",
    "float8_e4m3": "f8e4m3ieee",
    "float8_e4m3fn": "f8e4m3",
    "float8_e4m3fnuz": "f8e4m3fnuz",
    "float8_e4m3b11fnuz": "f8e4m3b11fnuz",
    "float8_e5m2": "f8e5m2",
    "float8_e5m2fnuz": "f8e5m2fnuz",
    "float8_e8m0fnu": "f8e8m0",
    "bfloat16": "bf16",
    "float16": "f16",
    "float32": "f32",
    "float64": "f64",
    "complex32": "c32",
    "complex64": "c64",
    "complex128": "c128",
}

#: canonical name -> dtype.name
NATIVE = {v: k for k, v in CANONICAL.items()}

#: the ml_dtypes types (attributes of the ``ml_dtypes`` module); the rest are numpy's own.
ML_DTYPES = frozenset({
    "int2", "int4", "uint1", "uint2", "uint4", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn",
    "float8_e3m4", "float8_e4m3", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
    "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "bfloat16", "complex32",
})

#: the Python scalar used for each ``py:KIND`` operand: small enough for every integer
#: type (int2 holds -2..1), so no probe answer is an overflow of the value.
PY_VALUES = {"bool": True, "int": 1, "float": 1.5, "complex": 1 + 2j}


def canonical(name) -> str:
    """The canonical name of a dtype or dtype name; the name itself when it has none."""
    text = getattr(name, "name", None) or str(name)
    return CANONICAL.get(text, text)


def first_line(exc: BaseException) -> str:
    """An exception's message, its first line, whitespace collapsed (the class name when empty)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return " ".join(text.split()) or type(exc).__name__
