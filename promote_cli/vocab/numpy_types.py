"""Canonical dtype names <-> numpy dtype objects (ml_dtypes for the narrow floats).

Only the cast command and the TOSA kernels import this module: it needs numpy and
ml_dtypes, which the query path never loads.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from promote_cli.errors import UsageError

#: canonical name -> numpy dtype.  Every canonical name numpy or ml_dtypes can hold.
_NUMPY: dict[str, np.dtype] = {
    "bool": np.dtype(np.bool_),
    "i4": np.dtype(ml_dtypes.int4),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "u4": np.dtype(ml_dtypes.uint4),
    "u8": np.dtype(np.uint8),
    "u16": np.dtype(np.uint16),
    "u32": np.dtype(np.uint32),
    "u64": np.dtype(np.uint64),
    "f4e2m1": np.dtype(ml_dtypes.float4_e2m1fn),
    "f8e4m3": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8e5m2": np.dtype(ml_dtypes.float8_e5m2),
    "f8e8m0": np.dtype(ml_dtypes.float8_e8m0fnu),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f16": np.dtype(np.float16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "c64": np.dtype(np.complex64),
    "c128": np.dtype(np.complex128),
}

_CANONICAL: dict[np.dtype, str] = {dt: name for name, dt in _NUMPY.items()}


def numpy_dtype(canonical: str) -> np.dtype:
    """The numpy dtype that holds values of the canonical dtype `canonical`."""
    try:
        return _NUMPY[canonical]
    except KeyError:
        raise UsageError(f"dtype {canonical} has no numpy representation") from None


def canonical_of(np_dtype) -> str:
    """The canonical name of a numpy dtype (native or non-native byte order)."""
    dt = np.dtype(np_dtype)
    if dt.byteorder not in ("=", "|"):
        dt = dt.newbyteorder("=")
    try:
        return _CANONICAL[dt]
    except KeyError:
        raise UsageError(f"numpy dtype {dt} has no canonical dtype name") from None


def names() -> tuple[str, ...]:
    """Every canonical name that has a numpy dtype, in canonical order."""
    return tuple(_NUMPY)
