"""Canonical dtype names <-> numpy dtype objects (ml_dtypes for the narrow types).

Which numpy or ml_dtypes type holds each canonical type is vocabulary data (the `numpy`
trait in dtypes.toml); this module only resolves those names. Only the cast command and
the TOSA kernels import it: it needs numpy and ml_dtypes, which the query path never loads.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from promote_cli.errors import UsageError
from promote_cli.vocab.dtypes import DTYPES


def _resolve(spec: str) -> np.dtype:
    module, _, name = spec.rpartition(".")
    if module == "ml_dtypes":
        return np.dtype(getattr(ml_dtypes, name))
    if module:
        raise ValueError(f"numpy type {spec!r}: only numpy and ml_dtypes types are known")
    return np.dtype(name)


#: canonical name -> numpy dtype.  Every canonical name numpy or ml_dtypes can hold.
_NUMPY: dict[str, np.dtype] = {name: _resolve(d.numpy) for name, d in DTYPES.items() if d.numpy}

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


#: NumPy's kinds of scalar types, not types (NumPy 2.0 still reads `np.integer` as int64, with a warning; later
#: versions refuse it)
_ABSTRACT = (np.generic, np.number, np.integer, np.signedinteger, np.unsignedinteger, np.inexact, np.floating,
             np.complexfloating, np.flexible, np.character)


def canonical_of_type(value) -> str | None:
    """The canonical name of a NumPy dtype or scalar type (`np.dtype("int8")`, `np.int8`, `ml_dtypes.bfloat16`,
    Python's `float` as NumPy reads it); None for any other object (a value, a string, a class NumPy holds only as
    `object`). UsageError for a dtype that has no canonical name (`np.dtype("S5")`)."""
    if not isinstance(value, (np.dtype, type)) or (isinstance(value, type) and value in _ABSTRACT):
        return None
    try:
        dt = np.dtype(value)
    except (TypeError, ValueError):  # np.integer and the like: kinds of types, not types
        return None
    if dt.kind == "O" and not (isinstance(value, np.dtype) or value in (object, np.object_)):
        return None
    return canonical_of(dt)


def names() -> tuple[str, ...]:
    """Every canonical name that has a numpy dtype, in canonical order."""
    return tuple(_NUMPY)
