"""The operand grammar of the CLI contract.

    DTYPE           a tensor with at least one dimension        i8
    0d:DTYPE        a rank-0 (scalar) tensor                     0d:i8
    py:KIND         a Python scalar literal (bool int float complex)   py:int
    weak:DTYPE      a weakly typed / ambiguous value, also DTYPE?      weak:f32

`str(operand)` is the canonical spelling; results print the same way.
"""

from __future__ import annotations

from promote_cli.errors import UsageError
from promote_cli.vocab.dtypes import DType, lookup

TENSOR, RANK0, PYTHON, WEAK = "tensor", "0d", "py", "weak"
PY_KINDS = {"bool": "bool", "int": "signed", "float": "float", "complex": "complex"}


class Operand:
    """One side of a binary op: a form and a dtype (or, for a Python scalar, a kind).

    An operand compares equal to a DType when its dtype is that DType, whatever its form,
    so rule expressions can write `a == u64`.
    """

    __slots__ = ("form", "dtype", "pykind")

    def __init__(self, form: str, dtype: DType | None = None, pykind: str | None = None):
        self.form = form
        self.dtype = dtype
        self.pykind = pykind

    @property
    def kind(self) -> str:
        return self.dtype.kind if self.dtype is not None else PY_KINDS[self.pykind]

    def with_form(self, form: str) -> Operand:
        return Operand(form, self.dtype, self.pykind)

    def __str__(self) -> str:
        if self.form == PYTHON:
            return f"py:{self.pykind}"
        if self.form == TENSOR:
            return self.dtype.name
        return f"{self.form}:{self.dtype.name}"

    __repr__ = __str__

    def __eq__(self, other) -> bool:
        if isinstance(other, DType):
            return self.dtype is other
        if isinstance(other, Operand):
            return (self.form, self.dtype, self.pykind) == (other.form, other.dtype, other.pykind)
        return NotImplemented

    def __ne__(self, other) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash(self.dtype) if self.dtype is not None else hash(self.pykind)


def parse(text) -> Operand:
    """Parse one operand; UsageError (with dtype suggestions) when it is malformed. Anything but a string is
    taken as `of_object` takes it."""
    if not isinstance(text, str):
        return of_object(text)
    raw = text.strip()
    if not raw:
        raise UsageError("empty operand")
    low = raw.lower()
    if low.startswith("py:"):
        kind = low[3:]
        if not kind.strip():
            raise UsageError(f"{raw!r} needs a kind after py: (py:bool, py:int, py:float or py:complex)")
        if kind not in PY_KINDS:
            raise UsageError(f"unknown Python scalar {raw!r} (use py:bool, py:int, py:float or py:complex)")
        return Operand(PYTHON, None, kind)
    for prefix, form in (("0d:", RANK0), ("weak:", WEAK)):
        if low.startswith(prefix):
            return Operand(form, _dtype(raw, raw[len(prefix):], f"after {prefix} (e.g. {prefix}i8)"))
    if raw.endswith("?"):
        return Operand(WEAK, _dtype(raw, raw[:-1], "before ? (e.g. f32?)"))
    return Operand(TENSOR, lookup(raw))


def _dtype(raw: str, name: str, where: str):
    """The dtype a form's part names; a UsageError that says so when the part is empty (`0d:`)."""
    if not name.strip():
        raise UsageError(f"{raw!r} needs a dtype {where}")
    return lookup(name)


def of(dtype: DType | Operand, form: str = TENSOR) -> Operand:
    """An operand of `form` for a dtype (an operand passes through unchanged)."""
    if isinstance(dtype, Operand):
        return dtype
    return Operand(form, dtype)


def of_object(value) -> Operand:
    """An operand from an object: an Operand as it is; a DType, a NumPy dtype or a NumPy or ml_dtypes scalar type
    (`np.dtype("int8")`, `np.int8`, `ml_dtypes.bfloat16`; Python's `float` as NumPy reads it, f64) a tensor of that
    dtype, named by the vocabulary's `numpy` trait (numpy is imported only then). TypeError for any other object."""
    if isinstance(value, (Operand, DType)):
        return of(value)
    from promote_cli.vocab.numpy_types import canonical_of_type

    name = canonical_of_type(value)
    if name is None:
        raise TypeError(f"an operand is a spelling such as 'i8' or '0d:f32', a DType or a NumPy dtype, not {value!r:.80}")
    return Operand(TENSOR, lookup(name))
