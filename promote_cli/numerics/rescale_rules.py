"""Which RESCALEs exist: TOSA 1.x RESCALE's type support, its ERROR_IF conditions and the
REQUIREs of its helpers, as data. One table, read by `rescale.rescale_array` (to refuse),
`promote rescale --list` (to print) and docs/rescale.md (which shows that listing).
Pure data and logic: no numpy.

The rule texts are the spec's own pseudocode lines (pseudocode/operators/RESCALE.tosac,
pseudocode/library/scale_helpers.tosac, pseudocode/library/arithmetic_helpers.tosac of
github.com/arm/tosa-specification). A configuration names the spec's in_t and out_t
(i8, i16, i32, i48) and the attributes; u8 and u16 are i8 and i16 with
input_unsigned / output_unsigned set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from promote_cli.errors import UsageError

#: in_t values of RESCALE, in the spec's order
IN_TYPES: tuple[str, ...] = ("i8", "i16", "i32", "i48")
#: out_t values of RESCALE
OUT_TYPES: tuple[str, ...] = ("i8", "i16", "i32")
#: bits of each in_t / out_t
BITS: dict[str, int] = {"i8": 8, "i16": 16, "i32": 32, "i48": 48}

#: tosa.xml's RESCALE typesupport rows: (in_t, out_t) -> profile
SUPPORT: dict[tuple[str, str], str] = {
    **{(i, o): "PRO-INT" for i in ("i8", "i16", "i32") for o in OUT_TYPES},
    **{("i48", o): "EXT-INT16" for o in OUT_TYPES},
}

#: rounding_mode values: our name -> the spec's enum name (and the extension it needs)
ROUNDING: dict[str, str] = {"single": "SINGLE_ROUND", "double": "DOUBLE_ROUND", "inexact": "INEXACT_ROUND"}
ROUNDING_EXTENSION: dict[str, str | None] = {"single": None, "double": "EXT-DOUBLEROUND",
                                             "inexact": "EXT-INEXACTROUND"}

#: the largest multiplier and the shift range of apply_scale_32 / apply_scale_16
SHIFT_MIN, SHIFT_MAX = 2, 62


@dataclass(frozen=True)
class Config:
    """One RESCALE's types and attributes (zero points as logical values: 128 for u8)."""

    in_t: str
    out_t: str
    scale32: bool = True
    rounding: str = "single"
    per_channel: bool = False
    input_unsigned: bool = False
    output_unsigned: bool = False
    input_zp: int = 0
    output_zp: int = 0
    rank: int = 1


@dataclass(frozen=True)
class Rule:
    """One condition of the spec under which a RESCALE is not defined."""

    name: str
    kind: str  # "ERROR_IF" (the graph is invalid) or "REQUIRE" (the result is unpredictable)
    text: str  # the spec's pseudocode line
    where: str  # the spec file it comes from
    fails: Callable[[Config], bool] | None = None  # None: checked on values, not on a Config


_OP = "pseudocode/operators/RESCALE.tosac"
_SCALE = "pseudocode/library/scale_helpers.tosac"
_ARITH = "pseudocode/library/arithmetic_helpers.tosac"

#: every rule, in the order the spec states them
RULES: tuple[Rule, ...] = (
    Rule("input_zp", "ERROR_IF",
         "ERROR_IF(!is_same<in_t,i8_t>() && (!is_same<in_t,i16_t>() || input_unsigned == false) && input_zp != 0);",
         _OP, lambda c: c.in_t != "i8" and (c.in_t != "i16" or not c.input_unsigned) and c.input_zp != 0),
    Rule("output_zp", "ERROR_IF",
         "ERROR_IF(!is_same<out_t,i8_t>() && (!is_same<out_t,i16_t>() || output_unsigned == false) && output_zp != 0);",
         _OP, lambda c: c.out_t != "i8" and (c.out_t != "i16" or not c.output_unsigned) and c.output_zp != 0),
    Rule("input_zp_u16", "ERROR_IF",
         "ERROR_IF(is_same<in_t,i16_t>() && input_unsigned == true && input_zp != 0 && input_zp != 32768);",
         _OP, lambda c: c.in_t == "i16" and c.input_unsigned and c.input_zp not in (0, 32768)),
    Rule("output_zp_u16", "ERROR_IF",
         "ERROR_IF(is_same<out_t,i16_t>() && output_unsigned == true && output_zp != 0 && output_zp != 32768);",
         _OP, lambda c: c.out_t == "i16" and c.output_unsigned and c.output_zp not in (0, 32768)),
    Rule("scale32_i48", "ERROR_IF", "ERROR_IF(scale32 && is_same<in_t,i48_t>());",
         _OP, lambda c: c.scale32 and c.in_t == "i48"),
    Rule("double_round_scale16", "ERROR_IF", "ERROR_IF(!scale32 && (rounding_mode == DOUBLE_ROUND));",
         _OP, lambda c: not c.scale32 and c.rounding == "double"),
    Rule("both_unsigned", "ERROR_IF", "ERROR_IF(input_unsigned && output_unsigned);",
         _OP, lambda c: c.input_unsigned and c.output_unsigned),
    Rule("unsigned_to_i32", "ERROR_IF", "ERROR_IF(is_same<out_t,i32_t>() && input_unsigned);",
         _OP, lambda c: c.out_t == "i32" and c.input_unsigned),
    Rule("i32_to_unsigned", "ERROR_IF", "ERROR_IF(is_same<in_t,i32_t>() && output_unsigned);",
         _OP, lambda c: c.in_t == "i32" and c.output_unsigned),
    Rule("i48_to_unsigned", "ERROR_IF", "ERROR_IF(is_same<in_t,i48_t>() && output_unsigned);",
         _OP, lambda c: c.in_t == "i48" and c.output_unsigned),
    Rule("u48_input", "ERROR_IF", "ERROR_IF(is_same<in_t, i48_t> && input_unsigned); // No support for u48 inputs",
         _OP, lambda c: c.in_t == "i48" and c.input_unsigned),
    Rule("u32_input", "ERROR_IF", "ERROR_IF(is_same<in_t, i32_t> && input_unsigned); // No support for u32 inputs",
         _OP, lambda c: c.in_t == "i32" and c.input_unsigned),
    Rule("u32_output", "ERROR_IF", "ERROR_IF(is_same<out_t, i32_t> && output_unsigned); // No support for u32 outputs",
         _OP, lambda c: c.out_t == "i32" and c.output_unsigned),
    Rule("per_channel_rank0", "ERROR_IF", "ERROR_IF(per_channel && rank(input) < 1);",
         _OP, lambda c: c.per_channel and c.rank < 1),
    Rule("multiplier_sign", "REQUIRE", "REQUIRE(multiplier >= 0);", _SCALE),
    Rule("shift_range", "REQUIRE", "REQUIRE(2 <= shift && shift <= 62);", _SCALE),
    Rule("value_range_32", "REQUIRE",
         "REQUIRE(value >= (-1 << (shift - 1)) && value < (1 << (shift - 1)));  // apply_scale_32", _SCALE),
    Rule("result_range_16", "REQUIRE",
         "REQUIRE(result >= minimum<int32_t> && result <= maximum<int32_t>);  // apply_scale_16", _SCALE),
    Rule("add_output_zp", "REQUIRE",
         "REQUIRE(!(b_i64 > 0 && a_i64 > maximum_s<in_t>() - b_i64)); "
         "REQUIRE(!(b_i64 < 0 && a_i64 < minimum_s<in_t>() - b_i64));  // apply_add_s<int32_t>(result, output_zp)",
         _ARITH),
)
RULE: dict[str, Rule] = {r.name: r for r in RULES}
assert len(RULE) == len(RULES)


class RescaleError(UsageError):
    """A RESCALE the spec does not define: names the rule it breaks (exit 2)."""

    def __init__(self, rule: Rule, detail: str):
        self.rule = rule
        super().__init__(f"{detail}; the spec says {rule.text}")


def logical_range(t: str, unsigned: bool) -> tuple[int, int]:
    """The values of in_t / out_t t read as signed or unsigned."""
    b = BITS[t]
    return (0, (1 << b) - 1) if unsigned else (-(1 << (b - 1)), (1 << (b - 1)) - 1)


def broken_rules(c: Config) -> list[Rule]:
    """The ERROR_IF rules a configuration breaks (empty: the spec defines it)."""
    return [r for r in RULES if r.fails is not None and r.fails(c)]


def check_config(c: Config) -> None:
    """Raise `UsageError` unless RESCALE is defined for `c`: types TOSA supports, a rounding
    mode, zero points in their type's range, and no ERROR_IF rule broken."""
    if c.in_t not in IN_TYPES:
        raise UsageError(f"TOSA RESCALE has no input type {c.in_t} (in_t is one of {', '.join(IN_TYPES)}; "
                         "u8 and u16 are i8 and i16 with input_unsigned)")
    if c.out_t not in OUT_TYPES:
        raise UsageError(f"TOSA RESCALE has no output type {c.out_t} (out_t is one of {', '.join(OUT_TYPES)}; "
                         "u8 and u16 are i8 and i16 with output_unsigned)")
    if c.rounding not in ROUNDING:
        raise UsageError(f"unknown rounding mode {c.rounding!r} (use {', '.join(ROUNDING)})")
    for side, t, uns, zp in (("input", c.in_t, c.input_unsigned, c.input_zp),
                             ("output", c.out_t, c.output_unsigned, c.output_zp)):
        lo, hi = logical_range(t, uns)
        if not lo <= zp <= hi:
            name = ("u" if uns else "i") + str(BITS[t])
            raise UsageError(f"{side} zero point {zp} is not a {name} value ({lo}..{hi})")
    broken = broken_rules(c)
    if broken:
        r = broken[0]
        raise RescaleError(r, f"{_describe(c)} is not defined")


def check_scales(multipliers, shifts, scale32: bool) -> None:
    """The multiplier and shift values: in their tensor types (i32 or i16, i8) and within the
    REQUIREs of apply_scale_32 / apply_scale_16."""
    mbits = 32 if scale32 else 16
    for m in multipliers:
        if not -(1 << (mbits - 1)) <= m < (1 << (mbits - 1)):
            raise UsageError(f"multiplier {m} is not an i{mbits} value "
                             f"({'--scale32' if scale32 else '--scale16'} multipliers are i{mbits})")
        if m < 0:
            raise RescaleError(RULE["multiplier_sign"], f"multiplier {m}")
    for s in shifts:
        if not -128 <= s <= 127:
            raise UsageError(f"shift {s} is not an i8 value")
        if not SHIFT_MIN <= s <= SHIFT_MAX:
            raise RescaleError(RULE["shift_range"], f"shift {s}")


def _describe(c: Config) -> str:
    i = ("u" if c.input_unsigned else "i") + str(BITS[c.in_t])
    o = ("u" if c.output_unsigned else "i") + str(BITS[c.out_t])
    parts = [f"RESCALE {i} -> {o}", "scale32" if c.scale32 else "scale16", ROUNDING[c.rounding]]
    if c.per_channel:
        parts.append(f"per_channel (rank {c.rank})")
    if c.input_zp:
        parts.append(f"input_zp {c.input_zp}")
    if c.output_zp:
        parts.append(f"output_zp {c.output_zp}")
    return ", ".join(parts)


#: the (storage) type names a user gives -> (in_t or out_t, unsigned)
LOGICAL: dict[str, tuple[str, bool]] = {
    "i8": ("i8", False), "i16": ("i16", False), "i32": ("i32", False), "i48": ("i48", False),
    "u8": ("i8", True), "u16": ("i16", True), "u32": ("i32", True), "u48": ("i48", True),
}


def type_combinations() -> list[dict]:
    """Every in/out type pair (signed and unsigned) x scale32 x rounding mode: the listing of
    `promote rescale --list`. Zero points 0, per-tensor: what the types and flags allow."""
    rows = []
    for a in LOGICAL:
        for b in ("i8", "i16", "i32", "u8", "u16", "u32"):
            (in_t, iu), (out_t, ou) = LOGICAL[a], LOGICAL[b]
            if (in_t, out_t) not in SUPPORT:
                continue
            for scale32 in (True, False):
                for rounding in ROUNDING:
                    c = Config(in_t, out_t, scale32, rounding, input_unsigned=iu, output_unsigned=ou)
                    broken = broken_rules(c)
                    profile = SUPPORT[(in_t, out_t)]
                    ext = ROUNDING_EXTENSION[rounding]
                    rows.append({"from": a, "to": b, "scale32": scale32, "rounding": rounding,
                                 "legal": not broken,
                                 "profile": (profile + (f" and {ext}" if ext else "")) if not broken else None,
                                 "rule": broken[0].text if broken else None})
    return rows


def listing(from_: str | None = None, to: str | None = None) -> dict:
    """`promote rescale --list`: the type combinations (optionally of one input and/or output
    type) and every rule, as data."""
    rows = [r for r in type_combinations() if (from_ is None or r["from"] == from_) and (to is None or r["to"] == to)]
    return {"operator": "RESCALE", "combinations": rows,
            "rules": [{"name": r.name, "kind": r.kind, "text": r.text, "where": r.where} for r in RULES]}
