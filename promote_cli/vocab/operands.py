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


def parse(text: str) -> Operand:
    """Parse one operand; UsageError (with dtype suggestions) when it is malformed."""
    raw = text.strip()
    if not raw:
        raise UsageError("empty operand")
    low = raw.lower()
    if low.startswith("py:"):
        kind = low[3:]
        if kind not in PY_KINDS:
            raise UsageError(f"unknown Python scalar {raw!r} (use py:bool, py:int, py:float or py:complex)")
        return Operand(PYTHON, None, kind)
    if low.startswith("0d:"):
        return Operand(RANK0, lookup(raw[3:]))
    if low.startswith("weak:"):
        return Operand(WEAK, lookup(raw[5:]))
    if raw.endswith("?"):
        return Operand(WEAK, lookup(raw[:-1]))
    return Operand(TENSOR, lookup(raw))


def of(dtype: DType | Operand, form: str = TENSOR) -> Operand:
    """An operand of `form` for a dtype (an operand passes through unchanged)."""
    if isinstance(dtype, Operand):
        return dtype
    return Operand(form, dtype)
