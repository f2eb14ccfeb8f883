"""TOSA RESCALE one element at a time, in Python integers: the spec's pseudocode
(RESCALE.tosac, apply_scale_32, apply_scale_16, apply_add_s) transliterated line by line.
Slow and plain: the fast kernel (`rescale_kernel`) is checked against it, and both against
the TOSA reference model's recordings. No numpy."""

from __future__ import annotations

from promote_cli.numerics.rescale_rules import RULE, RescaleError, logical_range

I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1


def apply_scale_32(value: int, multiplier: int, shift: int, double_round: bool = False) -> int:
    if multiplier < 0:
        raise RescaleError(RULE["multiplier_sign"], f"multiplier {multiplier}")
    if not 2 <= shift <= 62:
        raise RescaleError(RULE["shift_range"], f"shift {shift}")
    if not (-(1 << (shift - 1)) <= value < (1 << (shift - 1))):
        raise RescaleError(RULE["value_range_32"], f"value {value} with shift {shift}")
    round_ = 1 << (shift - 1)
    if double_round:
        if shift > 31 and value >= 0:
            round_ += 1 << 30
        if shift > 31 and value < 0:
            round_ -= 1 << 30
    result = value * multiplier + round_
    return result >> shift  # Python's >> on negative ints is the arithmetic shift


def apply_scale_16(value: int, multiplier: int, shift: int) -> int:
    if multiplier < 0:
        raise RescaleError(RULE["multiplier_sign"], f"multiplier {multiplier}")
    if not 2 <= shift <= 62:
        raise RescaleError(RULE["shift_range"], f"shift {shift}")
    round_ = 1 << (shift - 1)
    result = (value * multiplier + round_) >> shift
    if not I32_MIN <= result <= I32_MAX:
        raise RescaleError(RULE["result_range_16"], f"result {result} of value {value}")
    return result


def apply_add_s32(a: int, b: int) -> int:
    if (b > 0 and a > I32_MAX - b) or (b < 0 and a < I32_MIN - b):
        raise RescaleError(RULE["add_output_zp"], f"result {a} plus output_zp {b}")
    return a + b


def inexact_bounds(value: int, multiplier: int, shift: int, output_zp: int, lo: int, hi: int) -> tuple[int, int]:
    """The outputs INEXACT_ROUND allows for an input `value` (already minus input_zp): the
    spec's Precision Requirements, with err_bnd = 0.5 + 3 * |out_ref| * 2^(-23 - 1)."""
    import math

    out_ref = value * multiplier * 2.0 ** -shift
    err_bnd = 0.5 + 3 * abs(out_ref) * 2.0 ** (-23 - 1)
    out_min = min(max(math.ceil(out_ref - err_bnd + output_zp), lo), hi)
    out_max = min(max(math.floor(out_ref + err_bnd + output_zp), lo), hi)
    return int(out_min), int(out_max)


def rescale_values(values, channels, config, multipliers, shifts) -> list[int]:
    """RESCALE of `values` (logical input values: 200 for a u8 200) whose channels are
    `channels` (indices into multipliers/shifts; all 0 per-tensor). Returns logical output
    values (200 for a u8 200). Raises `RescaleError` where the spec's REQUIREs fail.
    INEXACT_ROUND is computed exactly (single rounding), one of the results it allows."""
    c = config
    lo, hi = logical_range(c.out_t, c.output_unsigned)
    out = []
    for in_value, ch in zip(values, channels):
        value = in_value - c.input_zp  # zero- or sign-extended by being a Python int
        if c.scale32:
            result = apply_scale_32(value, multipliers[ch], shifts[ch], c.rounding == "double")
        else:
            result = apply_scale_16(value, multipliers[ch], shifts[ch])
        result = apply_add_s32(result, c.output_zp)
        out.append(min(max(result, lo), hi))
    return out
