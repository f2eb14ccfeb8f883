"""NumPy-style dtype names (numpy, ml_dtypes, JAX, array-api-strict) -> canonical names.

NumPy, ml_dtypes, JAX and array-api-strict all name a dtype by ``np.dtype(...).name``
(``int8``, ``float8_e4m3fn``, ``complex64``).  The names are the vocabulary's
(``dtypes.native_names`` of ``numpy`` and ``ml_dtypes``, from dtypes.toml); this module
turns them into the contract's bit-counting names for the probes.  NumPy's byte-counting type codes
(``'i4'`` = int32, ``'c8'`` = complex64) are never looked at: the probes read
``dtype.name`` only, and tests/test_numpy_probe.py checks that no key is such a code.

``float8_e4m3`` (IEEE-style, with infinities) is ``f8e4m3ieee``; ``float8_e4m3fn`` is
``f8e4m3``.  ml_dtypes' ``int1`` and ``bcomplex32`` have no canonical name and are not
asked about (``uint1`` is ``u1``).
"""

from __future__ import annotations

from promote_cli.vocab.dtypes import native_names

#: canonical name -> ``dtype.name`` of the ml_dtypes types (the vocabulary's ``ml_dtypes``
#: spellings: ``uint1`` and ``complex32`` too, which ml_dtypes has from 0.6 on) and of
#: numpy's own (its ``numpy`` spellings).
_ML = native_names("ml_dtypes")
_NAMES = {**native_names("numpy"), **_ML}

#: the canonical names the probes ask, in their recordings' order; a test checks that it
#: lists every type named above.
ORDER = ("bool", "i2", "i4", "i8", "i16", "i32", "i64", "u1", "u2", "u4", "u8", "u16", "u32", "u64",
         "f4e2m1", "f6e2m3", "f6e3m2", "f8e3m4", "f8e4m3ieee", "f8e4m3", "f8e4m3fnuz", "f8e4m3b11fnuz",
         "f8e5m2", "f8e5m2fnuz", "f8e8m0", "bf16", "f16", "f32", "f64", "c32", "c64", "c128")

#: dtype.name -> canonical name, in the probes' order (bool, signed, unsigned, float, complex).
CANONICAL = {_NAMES[name]: name for name in ORDER if name in _NAMES}

#: canonical name -> dtype.name
NATIVE = {v: k for k, v in CANONICAL.items()}

#: the ml_dtypes types (attributes of the ``ml_dtypes`` module); the rest are numpy's own.
ML_DTYPES = frozenset(_ML.values())

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


def np_dtype(name: str):
    """The numpy dtype of a canonical name (ml_dtypes types included), as the probes build arrays of it."""
    import ml_dtypes  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    native = NATIVE[name]
    return np.dtype(getattr(ml_dtypes, native) if native in ML_DTYPES else native)
