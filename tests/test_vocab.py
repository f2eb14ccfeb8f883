"""The dtype vocabulary is data (promote_cli/vocab/dtypes.toml): the values derived from
its traits agree with numpy's and ml_dtypes' own finfo/iinfo, the spellings are those
the frameworks use, and a type added to the data needs no code."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from support import run_cli

from promote_cli.errors import UsageError
from promote_cli.vocab import dtypes, numpy_types
from promote_cli.vocab.dtypes import DTYPES, lookup

ROOT = Path(__file__).resolve().parent.parent


def test_order_follows_the_contract():
    """bool, integers (sub-byte ones after the rest), floats, complex: the contract's table."""
    names = list(DTYPES)
    kinds = [DTYPES[n].kind for n in names]
    assert names[0] == "bool" and names[-3:] == ["c32", "c64", "c128"]
    assert kinds == ["bool"] + ["signed"] * 5 + ["unsigned"] * 6 + ["signed", "unsigned"] + ["float"] * 18 + [
        "complex"] * 3
    assert names[names.index("u64") + 1:names.index("u64") + 3] == ["i2", "u2"]
    assert names.index("f4e2m1") == names.index("u2") + 1
    assert names[names.index("f8e5m2"):names.index("bf16")] == [
        "f8e5m2", "f8e8m0", "f8e4m3ieee", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e4m3b15", "f8e3m4", "nf4", "hif8"]


# --------------------------------------------------------------------------- derived traits

WITH_NUMPY = [d for d in DTYPES.values() if d.numpy]


#: ml_dtypes types the vocabulary does not map: added in ml_dtypes 0.6, above the declared
#: minimum 0.5 (complex32 and uint1 would serve c32 and u1; int1 and bcomplex32 have no
#: canonical name: `i1` is anvil's bool)
NEWER_THAN_MINIMUM = {"complex32", "uint1", "int1", "bcomplex32"}


def test_every_type_of_ml_dtypes_has_a_canonical_name():
    held = {numpy_types.numpy_dtype(d.name) for d in WITH_NUMPY}
    for name in dir(ml_dtypes):
        obj = getattr(ml_dtypes, name)
        if isinstance(obj, type) and issubclass(obj, np.generic) and name not in NEWER_THAN_MINIMUM:
            assert np.dtype(obj) in held, name


@pytest.mark.parametrize("d", [d for d in WITH_NUMPY if d.kind == "float"], ids=str)
def test_float_traits_match_finfo(d):
    fi = ml_dtypes.finfo(numpy_types.numpy_dtype(d.name))
    assert (d.bits, d.exp_bits, d.man_bits) == (fi.bits, fi.nexp, fi.nmant)
    assert d.max == float(fi.max)
    assert d.min == (float(fi.min) if d.signed else float(fi.smallest_normal))
    assert d.smallest_normal == float(fi.smallest_normal)
    assert d.smallest_subnormal == float(fi.smallest_subnormal)
    assert d.emin == fi.minexp
    dt = numpy_types.numpy_dtype(d.name)
    if d.bits > 16:
        return
    with np.errstate(all="ignore"):
        values = np.arange(1 << d.bits, dtype=np.uint64).astype(f"u{dt.itemsize}").view(dt).astype(np.float64)
    assert bool(np.isinf(values).any()) == d.has_inf
    assert bool(np.isnan(values).any()) == d.has_nan
    assert bool((values < 0).any()) == d.signed
    assert float(values[np.isfinite(values)].max()) == d.max


@pytest.mark.parametrize("d", [d for d in WITH_NUMPY if d.kind in ("signed", "unsigned")], ids=str)
def test_integer_traits_match_iinfo(d):
    ii = ml_dtypes.iinfo(numpy_types.numpy_dtype(d.name))
    assert (d.bits, d.max, d.min) == (ii.bits, ii.max, ii.min)
    assert d.man_bits == d.bits - (d.kind == "signed")


@pytest.mark.parametrize("d", [d for d in WITH_NUMPY if d.kind == "complex"], ids=str)
def test_complex_traits_are_their_parts(d):
    fi = np.finfo(numpy_types.numpy_dtype(d.name))
    assert (d.exp_bits, d.man_bits, d.max, d.min) == (fi.nexp, fi.nmant, float(fi.max), float(fi.min))
    assert numpy_types.numpy_dtype(d.name).itemsize * 8 == d.bits


def test_types_numpy_lacks_have_stated_or_derived_ranges():
    assert lookup("nf4").max == 1.0 and lookup("nf4").min == -1.0
    assert (lookup("u1").max, lookup("u1").min) == (1, 0)
    assert lookup("c32").max == lookup("f16").max
    assert set(d.name for d in DTYPES.values() if not d.numpy) == {"u1", "nf4", "c32", "f8e4m3b15", "hif8"}
    # HiFloat8 is tapered (its exponent width varies): its range is stated, 2**15 either way, with inf and NaN
    assert (lookup("hif8").max, lookup("hif8").min) == (2.0 ** 15, -(2.0 ** 15))
    assert lookup("hifloat8").name == "hif8" and lookup("hif8").has_inf and lookup("hif8").has_nan


def test_e4m3_with_bias_15_has_every_pattern_finite():
    """Triton's fp8e4b15: E4M3 with bias 15, no inf and no NaN, so 0x7f is 1.875 (2**0 * 1.875)."""
    d = lookup("f8e4m3b15")
    assert (d.has_inf, d.has_nan, d.max, d.min) == (False, False, 1.875, -1.875)
    assert (d.smallest_normal, d.smallest_subnormal) == (2.0 ** -14, 2.0 ** -17)
    assert lookup("fp8e4b15") is d


# --------------------------------------------------------------------------- spellings


@pytest.mark.parametrize("spelling,name", [
    ("float8_e4m3", "f8e4m3ieee"), ("jnp.float8_e4m3", "f8e4m3ieee"), ("ml_dtypes.float8_e4m3", "f8e4m3ieee"),
    ("float8_e4m3fn", "f8e4m3"), ("torch.float8_e4m3fn", "f8e4m3"), ("fp8e4m3", "f8e4m3"), ("F8E4M3", "f8e4m3"),
    ("torch.float8_e4m3fnuz", "f8e4m3fnuz"), ("jnp.float8_e4m3fnuz", "f8e4m3fnuz"),
    ("torch.float8_e5m2fnuz", "f8e5m2fnuz"), ("float8_e4m3b11fnuz", "f8e4m3b11fnuz"),
    ("float8_e3m4", "f8e3m4"), ("torch.float8_e8m0fnu", "f8e8m0"), ("torch.float4_e2m1fn_x2", "f4e2m1"),
    ("float6_e2m3fn", "f6e2m3"), ("float6_e3m2fn", "f6e3m2"), ("int2", "i2"), ("uint2", "u2"),
    ("jnp.int2", "i2"), ("ml_dtypes.uint2", "u2"), ("U2", "u2"), ("i8_t", "i8"), ("fp16_t", "f16"),
])
def test_framework_spellings(spelling, name):
    assert lookup(spelling).name == name


def test_float8_e4m3_never_means_e4m3fn():
    assert "float8_e4m3" not in dtypes.aliases("f8e4m3")
    assert lookup("float8_e4m3").max == 240.0 and lookup("f8e4m3").max == 448.0


@pytest.mark.parametrize("code", ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"])
def test_byte_counting_codes_are_not_aliases(code):
    """numpy's 'i4' is int32, 'f8' float64: the vocabulary's names count bits instead,
    and no other numpy code is an alias (i1 is anvil's bool)."""
    d = dtypes.find(code)
    if d is None:
        return
    assert d.name == code or (code == "i1" and d.name == "bool")
    if np.dtype(code).kind in "iuf" and d.name == code:
        assert d.bits != np.dtype(code).itemsize * 8 or d.bits == 8


def test_every_spelling_names_one_type():
    seen = {}
    for name, by_framework in dtypes.SPELLINGS.items():
        for names in by_framework.values():
            for s in names:
                assert seen.setdefault(s.lower(), name) == name, s


def test_unknown_names_suggest():
    with pytest.raises(UsageError, match="did you mean f8e4m3fnuz"):
        lookup("f8e4m3fnu")


# --------------------------------------------------------------------------- a type from data only

EXTRA = """
[f8e2m5]
kind = "float"
bits = 8
exp_bits = 2
man_bits = 5
bias = 1
specials = "ieee"
doc = "an experimental format"
[f8e2m5.spellings]
example = ["float8_e2m5"]
"""


def test_a_type_added_to_the_data_is_known_without_code(tmp_path):
    data = tmp_path / "dtypes.toml"
    data.write_text(Path(dtypes.DATA).read_text(encoding="utf-8") + EXTRA, encoding="utf-8")
    probe = ("from promote_cli.vocab.dtypes import lookup, DTYPES; d = lookup('torch.FLOAT8_E2M5'); "
             "print(d.name, d.max, d.smallest_subnormal, list(DTYPES)[-1])")
    env = dict(os.environ, PROMOTE_DTYPES_FILE=str(data))
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True).stdout
    want_max = (2 - 2.0 ** -5) * 2.0 ** (2 - 1)   # exponent field 2 (3 is inf/NaN), bias 1
    assert out.split() == ["f8e2m5", repr(want_max), repr(2.0 ** -5), "f8e2m5"]
    cli = "import sys; from promote_cli.cli import run; sys.argv[0] = 'promote'; run()"
    listed = subprocess.run([sys.executable, "-c", cli, "dtypes", "--format", "csv"], env=env,
                            capture_output=True, text=True, check=True).stdout
    assert any(line.startswith("f8e2m5,") and "float8_e2m5" in line for line in listed.splitlines())


@pytest.mark.parametrize("bad,message", [
    ('[x]\nkind = "float"\nbits = 8\nexp_bits = 4\nman_bits = 2\nbias = 7\ndoc = "d"\n', "do not hold"),
    ('[x]\nkind = "float"\nbits = 8\nexp_bits = 4\nman_bits = 3\nbias = 7\nmax = 1.0\ndoc = "d"\n', "derived"),
    ('[x]\nkind = "real"\nbits = 8\ndoc = "d"\n', "kind"),
    ('[x]\nkind = "float"\nbits = 8\nexp_bits = 4\nman_bits = 3\nbias = 7\nspecials = "odd"\ndoc = "d"\n',
     "specials"),
    ('[x]\nkind = "complex"\nbits = 8\npart = "y"\ndoc = "d"\n', "part"),
    ('[x]\nkind = "signed"\nbits = 8\n', "missing 'doc'"),
    ('[uncovered.q]\nis = "a q type"\nspellings = {x = ["q8"]}\n', "needs exactly is, reason and spellings"),
    ('[uncovered.q]\nis = "a q type"\nreason = "r"\nspellings = {x = ["q8"]}\nextra = 1\n', "needs exactly"),
])
def test_bad_data_is_refused(tmp_path, bad, message):
    path = tmp_path / "bad.toml"
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        dtypes.load(path)


@pytest.mark.parametrize("name", ["qint8", "quint8", "qint32", "quint4x2", "quint2x4", "torch.qint8", "QUINT8",
                                  "tf.qint16"])
def test_quantized_spellings_are_refused_not_read_as_integers(name):
    """torch.qint8 stores int8 values but is not int8: promote does not cover quantized types (rules/torch.toml)."""
    with pytest.raises(UsageError, match=rf"^{name.replace('.', '[.]')} is a quantized type; promote does not "
                                         "cover quantized types$"):
        lookup(name)
    assert dtypes.find(name) is None
    assert not any(name.lower().split(".")[-1] in dtypes.aliases(t) for t in DTYPES)


@pytest.mark.parametrize("args", [("query", "qint8", "i8", "-f", "torch"), ("query", "u8", "quint8", "-f", "torch"),
                                  ("query", "0d:qint32", "i8", "-f", "torch")])
def test_a_quantized_operand_is_one_line_and_exit_2_on_both_paths(args):
    cli = "import sys; from promote_cli.cli import run; sys.argv[0] = 'promote'; run()"
    done = subprocess.run([sys.executable, "-c", cli, *args], capture_output=True, text=True)
    name = next(a for a in args[1:] if "q" in a).removeprefix("0d:")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"promote: {name} is a quantized type; promote does not cover quantized types\n"
    assert run_cli(*args) == (2, "", done.stderr)


def test_a_spelling_may_not_be_both_a_type_and_uncovered(tmp_path):
    data = tmp_path / "dtypes.toml"
    text = Path(dtypes.DATA).read_text(encoding="utf-8").replace('torch = ["int8"]', 'torch = ["int8", "qint8"]')
    data.write_text(text, encoding="utf-8")
    env = dict(os.environ, PROMOTE_DTYPES_FILE=str(data))
    done = subprocess.run([sys.executable, "-c", "import promote_cli.vocab.dtypes"], env=env, capture_output=True,
                          text=True)
    assert done.returncode != 0 and "'qint8' is both i8 and uncovered (quantized)" in done.stderr


def test_derived_maxima_by_encoding():
    assert math.isclose(dtypes._float_max(4, 3, 7, "fn"), 448)
    assert dtypes._float_max(4, 3, 7, "ieee") == 240
    assert dtypes._float_max(4, 3, 8, "fnuz") == 240
    assert dtypes._float_max(8, 0, 127, "e8m0") == 2.0 ** 127
    assert dtypes._float_max(2, 1, 1, "none") == 6


def test_promote_dtypes_lists_the_new_formats_and_traits():
    from click.testing import CliRunner

    from promote_cli.cli import main

    out = CliRunner().invoke(main, ["dtypes", "--format", "json"])
    assert out.exit_code == 0, out.output
    rows = {r["name"]: r for r in json.loads(out.stdout)}
    for name in ("f8e4m3ieee", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e3m4", "f6e2m3", "f6e3m2", "i2", "u2"):
        assert name in rows
    e4m3 = rows["f8e4m3ieee"]
    assert (e4m3["max"], e4m3["inf"], e4m3["specials"], e4m3["bias"]) == (240.0, True, "ieee", 7)
    assert "float8_e4m3" in e4m3["aliases"] and e4m3["spellings"]["jax"] == ["float8_e4m3"]
    assert rows["f8e4m3fnuz"]["numpy"] == "ml_dtypes.float8_e4m3fnuz"
    assert rows["f8e8m0"]["signed"] is False and rows["f8e8m0"]["specials"] == "e8m0"
    text = CliRunner().invoke(main, ["dtypes"]).stdout
    assert "f8e4m3b11fnuz" in text
