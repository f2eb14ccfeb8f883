"""Where the cast semantics disagree (`promote cast --compare`): every semantics of `semantics.SEMANTICS`
applied to the same values, grouped by value class.

A `Tally` takes arrays (the recorded edge-case inputs of a type, for `promote_cli.compare_cast`; a file's chunks,
one after another, for `arrayio/comparefile.py`) and gives, per value class, how many inputs the semantics
convert differently and one example with each output. TOSA's column is CAST's extended mode
where TOSA does not define the pair (it is marked so).
"""

from __future__ import annotations

import numpy as np

from promote_cli.numerics.legality import LEGAL, SEMANTICS
from promote_cli.numerics.reference import float_format, reference_cast
from promote_cli.numerics.semantics import check, library_cast
from promote_cli.records import Record
from promote_cli.vocab.dtypes import DTYPES
from promote_cli.vocab.numpy_types import numpy_dtype

#: the value classes, in the order they are listed
FLOAT_CLASSES = ("NaN", "infinity", "overflow", "tie", "underflow to zero", "subnormal", "other")
INT_CLASSES = ("NaN", "infinity", "negative to unsigned", "out of range", "fraction", "integer")


def columns(src: str, dst: str) -> list[str]:
    """The semantics compared, in order (`tosa` is `tosa (extended)` where TOSA lacks the pair)."""
    return [s if s != "tosa" or (src, dst) in LEGAL else "tosa (extended)" for s in SEMANTICS]


def outputs(x: np.ndarray, src: str, dst: str, saturate: bool = True) -> list[np.ndarray]:
    """x (src values) cast under each semantics, as output bit patterns (unsigned integers for floats)."""
    out = [reference_cast(x, src, dst)]
    out += [library_cast(x, src, dst, lib, saturate) for lib in SEMANTICS[1:]]
    return [np.asarray(o).view(_bits(dst)) for o in out]


def _bits(t: str) -> np.dtype:
    d = DTYPES[t]
    return numpy_dtype(t) if d.is_integer else np.dtype(f"u{d.bits // 8}")


def classify(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    """The index of each element's value class (`FLOAT_CLASSES` or `INT_CLASSES`)."""
    x = np.asarray(x).view(numpy_dtype(src))
    v = x.astype(np.float64)
    nan, inf = np.isnan(v), np.isinf(v)
    d = DTYPES[dst]
    a = np.abs(v)
    with np.errstate(all="ignore"):
        if d.is_integer:
            r = np.rint(v)
            out_of = (r < float(d.min)) | (r > float(d.max))
            neg_u = (d.kind == "unsigned") & (r < 0)
            classes = [nan, inf, neg_u, out_of, v != np.trunc(v), np.ones(v.shape, bool)]
        else:
            fmt = float_format(dst)
            r = reference_cast(x, src, dst)
            mag = r.view(fmt.uint).astype(np.int64) & (fmt.sign_bit - 1)
            over = np.isfinite(v) & (mag > fmt.max_bits)
            ra = np.abs(r.astype(np.float64))          # the nearest, and the neighbour on a's other side
            other = np.clip(mag + np.where(a > ra, 1, -1), 0, fmt.max_bits + 1)
            oa = np.abs(other.astype(fmt.uint).view(numpy_dtype(dst)).astype(np.float64))
            tie = (np.abs(a - ra) == np.abs(oa - a)) & (a != ra)
            sub = (a < d.smallest_normal) & (a > 0)
            under = sub & (ra == 0)
            classes = [nan, inf, over, tie, under, sub, np.ones(v.shape, bool)]
    which = np.full(v.shape, len(classes) - 1, np.int8)
    for i in range(len(classes) - 2, -1, -1):
        which[classes[i]] = i
    return which


class ClassRow(Record, frozen=True):
    """One value class of a comparison: inputs in it, how many the semantics convert differently (`differ`),
    per semantics how many differ from TOSA's (`vs_tosa`), and an example input with each output."""

    value_class: str
    inputs: int
    differ: int
    vs_tosa: list
    example: str | None = None
    outputs: list | None = None

    def as_dict(self) -> dict:
        return {"class": self.value_class, "values": self.inputs, "differ": self.differ, "vs_tosa": self.vs_tosa,
                "example": self.example, "outputs": self.outputs}


class Tally:
    """Counts by value class over arrays given one after another (a file's chunks)."""

    def __init__(self, src: str, dst: str, saturate: bool = True):
        check("ml_dtypes", src, dst)
        self.src, self.dst, self.saturate = src, dst, saturate
        self.names = INT_CLASSES if DTYPES[dst].is_integer else FLOAT_CLASSES
        n = len(self.names)
        self.inputs = np.zeros(n, np.int64)
        self.differ = np.zeros(n, np.int64)
        self.vs_tosa = np.zeros((n, len(SEMANTICS)), np.int64)
        self.examples: dict[int, tuple] = {}

    def add(self, x: np.ndarray) -> None:
        x = np.ascontiguousarray(x).reshape(-1).view(numpy_dtype(self.src))
        with np.errstate(all="ignore"):
            outs = outputs(x, self.src, self.dst, self.saturate)
            which = classify(x, self.src, self.dst)
        n = len(self.names)
        self.inputs += np.bincount(which, minlength=n)
        any_diff = np.zeros(x.size, bool)
        for k, o in enumerate(outs):
            d = o != outs[0]
            any_diff |= d
            self.vs_tosa[:, k] += np.bincount(which[d], minlength=n)
        self.differ += np.bincount(which[any_diff], minlength=n)
        for c in np.unique(which[any_diff]):
            if int(c) not in self.examples:
                i = int(np.flatnonzero(any_diff & (which == c))[0])
                self.examples[int(c)] = (x.view(_bits(self.src))[i], [o[i] for o in outs])

    def rows(self) -> list[ClassRow]:
        out = []
        for c, name in enumerate(self.names):
            if not self.inputs[c]:
                continue
            ex = self.examples.get(c)
            out.append(ClassRow(name, int(self.inputs[c]), int(self.differ[c]), [int(k) for k in self.vs_tosa[c]],
                                None if ex is None else show(ex[0], self.src),
                                None if ex is None else [show(o, self.dst) for o in ex[1]]))
        return out


def show(value, t: str) -> str:
    """A value of type t (a bit pattern, for floats) as text: the value, and a float's bits in hex."""
    d = DTYPES[t]
    if d.is_integer:
        return str(int(value))
    bits = np.asarray(value).astype(_bits(t))
    with np.errstate(invalid="ignore"):
        v = float(bits.view(numpy_dtype(t)).astype(np.float64))
    return f"{v:.9g} (0x{int(bits):0{d.bits // 4}x})"
