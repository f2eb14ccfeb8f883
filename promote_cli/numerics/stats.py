"""What happened to the elements of a cast: `CastStats`, the running counter the
kernels add to (`Counts`, with named slots), and the statistics of a per-element
classification (`stats_of_classes`)."""

from __future__ import annotations

import numpy as np

from promote_cli.records import Record

# Slots of the counters, in CastStats' field order. Every element falls in exactly one
# of the first CATEGORIES slots; the last two are flags counted besides.
(EXACT, ROUNDED, WRAPPED, SATURATED, OVERFLOW_INF, OVERFLOW_NAN, NAN_IN,
 SUBNORMAL_OUT, UNPREDICTABLE) = range(9)
CATEGORIES = 7
SLOTS = 9


class CastStats(Record):
    """What happened to the elements of one cast.

    Every element is counted in exactly one of `exact` (the output has the input's
    value), `rounded` (a nearby value: float rounding, or a non-0/1 value cast to bool),
    `wrapped` (integer narrowing changed the value), `saturated` (clamped to the output
    range: float -> int, or --saturate), `overflow_inf` (finite input, infinite output),
    `overflow_nan` (non-NaN input, NaN output: f8e4m3 overflow, infinities included) and
    `nan_in` (NaN input).
    `subnormal_out` counts subnormal outputs (kept, though the spec allows flushing), and
    `unpredictable` the NaN -> integer elements whose value the spec leaves open (here 0).
    """

    exact: int = 0
    rounded: int = 0
    wrapped: int = 0
    saturated: int = 0
    overflow_inf: int = 0
    overflow_nan: int = 0
    nan_in: int = 0
    subnormal_out: int = 0
    unpredictable: int = 0

    def __add__(self, other: "CastStats") -> "CastStats":
        if not isinstance(other, CastStats):
            return NotImplemented
        return CastStats(**{name: getattr(self, name) + getattr(other, name) for name in FIELDS})

    def as_dict(self) -> dict:
        return {name: int(getattr(self, name)) for name in FIELDS}

    @property
    def total(self) -> int:
        return sum(getattr(self, n) for n in FIELDS[:CATEGORIES])


FIELDS = tuple(CastStats._fields)
assert FIELDS[SUBNORMAL_OUT] == "subnormal_out" and FIELDS[UNPREDICTABLE] == "unpredictable"
assert FIELDS[NAN_IN] == "nan_in" and len(FIELDS) == SLOTS


def _from_slots(c) -> CastStats:
    return CastStats(**{name: int(c[i]) for i, name in enumerate(FIELDS)})


class Counts:
    """Running counts, one per slot, plus raw histograms of table-driven casts
    (`hists[key] = (table, histogram)`, table.indicators: one row of slot flags per
    source pattern), folded into the counts at the end."""

    def __init__(self):
        self.c = [0] * SLOTS
        self.hists: dict = {}

    def add(self, slot: int, n) -> None:
        self.c[slot] += int(n)

    def merge(self, other: "Counts") -> None:
        """Add the counts of `other` (of another part of the same cast) to these."""
        for i, v in enumerate(other.c):
            self.c[i] += v
        for key, (table, h) in other.hists.items():
            if key in self.hists:
                self.hists[key][1][:] += h
            else:
                self.hists[key] = (table, h.copy())

    def result(self) -> CastStats:
        c = list(self.c)
        for table, h in self.hists.values():
            folded = h @ table.indicators
            for i in range(SLOTS):
                c[i] += int(folded[i])
        return _from_slots(c)


def stats_of_classes(codes: np.ndarray, subnormal: np.ndarray, unpredictable: np.ndarray) -> CastStats:
    """The statistics of a classification (category codes, subnormal-output and
    unpredictable flags per element: `reference.classify`)."""
    c = np.bincount(np.asarray(codes).ravel(), minlength=SLOTS)[:SLOTS].tolist()
    c[SUBNORMAL_OUT] = int(np.count_nonzero(subnormal))
    c[UNPREDICTABLE] = int(np.count_nonzero(unpredictable))
    return _from_slots(c)
