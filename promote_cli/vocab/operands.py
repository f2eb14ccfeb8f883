"""The operand grammar of the CLI contract.

    DTYPE           a tensor with at least one dimension        i8
    0d:DTYPE        a rank-0 (scalar) tensor                     0d:i8
    0d:DTYPE=VALUE  a rank-0 tensor holding that value           0d:i64=300
    py:KIND         a Python scalar of any value (bool int float complex)   py:int
    py:VALUE        a Python scalar of that value (a Python literal)        py:300, py:1.5, py:True, py:1+1j
    weak:DTYPE      a weakly typed / ambiguous value, also DTYPE?      weak:f32

`str(operand)` is the canonical spelling; results print the same way (a result never carries a value).
Values are parsed and printed by `values.py`.
"""

from __future__ import annotations

from promote_cli.errors import UsageError
from promote_cli.vocab import values
from promote_cli.vocab.dtypes import DType, lookup

TENSOR, RANK0, PYTHON, WEAK = "tensor", "0d", "py", "weak"
PY_KINDS = {"bool": "bool", "int": "signed", "float": "float", "complex": "complex"}
_KIND_OF_VALUE = {bool: "bool", int: "int", float: "float", complex: "complex"}


class Operand:
    """One side of a binary op: a form and a dtype (or, for a Python scalar, a kind), and for a Python
    scalar or a rank-0 tensor perhaps its value (`value`, None for any value; a Python scalar's kind is
    its value's).

    An operand compares equal to a DType when its dtype is that DType, whatever its form or value,
    so rule expressions can write `a == u64`.
    """

    __slots__ = ("form", "dtype", "pykind", "value")

    def __init__(self, form: str, dtype: DType | None = None, pykind: str | None = None, value=None):
        self.form = form
        self.dtype = dtype
        self.value = value if form in (PYTHON, RANK0) else None
        self.pykind = _KIND_OF_VALUE[type(value)] if form == PYTHON and value is not None else pykind

    @classmethod
    def python(cls, value) -> Operand:
        """The Python scalar `value` (bool, int, float or complex)."""
        return cls(PYTHON, None, None, value)

    @property
    def has_value(self) -> bool:
        return self.value is not None

    def without_value(self) -> Operand:
        """The operand of any value of its type (itself when it has none)."""
        return self if self.value is None else Operand(self.form, self.dtype, self.pykind)

    @property
    def kind(self) -> str:
        return self.dtype.kind if self.dtype is not None else PY_KINDS[self.pykind]

    def with_form(self, form: str) -> Operand:
        """The same type in `form`; the value stays only where the form can carry it (py:, 0d:)."""
        return Operand(form, self.dtype, self.pykind, self.value)

    def __str__(self) -> str:
        if self.form == PYTHON:
            return f"py:{self.pykind if self.value is None else values.show(self.value)}"
        if self.form == TENSOR:
            return self.dtype.name
        if self.value is not None:
            return f"{self.form}:{self.dtype.name}={values.show(self.value)}"
        return f"{self.form}:{self.dtype.name}"

    __repr__ = __str__

    def __eq__(self, other) -> bool:
        if isinstance(other, DType):
            return self.dtype is other
        if isinstance(other, Operand):
            return (self.form, self.dtype, self.pykind) == (other.form, other.dtype, other.pykind) and (
                self.value is other.value or str(self) == str(other))
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
            raise UsageError(f"{raw!r} needs a kind or a value after py: (py:bool, py:int, py:float, py:complex, "
                             f"or a literal such as py:300)")
        if kind in PY_KINDS:
            return Operand(PYTHON, None, kind)
        if kind.strip().isalpha() and kind.strip() not in values.WORDS:
            raise UsageError(f"unknown Python scalar {raw!r} (use py:bool, py:int, py:float or py:complex, "
                             f"or a value such as py:300)")
        return Operand.python(values.parse(raw[3:], f"{raw!r}"))
    if low.startswith("0d:") and "=" in raw:
        name, _, literal = raw[3:].partition("=")
        dtype = _dtype(raw, name, "after 0d: (e.g. 0d:i64=300)")
        value, why = values.held(dtype, values.parse(literal, f"{raw!r}"))
        if why is not None:
            raise UsageError(f"{raw!r}: {literal.strip()} is not a value of {dtype} ({why})")
        return Operand(RANK0, dtype, None, value)
    if "=" in raw:
        raise UsageError(f"{raw!r}: only a Python scalar or a 0d: operand has a value (py:300, 0d:i64=300)")
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
