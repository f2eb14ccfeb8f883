"""What the public API accepts: every spelling the CLI accepts, and the objects a Python caller holds (a DType,
an Operand, a NumPy dtype or scalar type); anything else is a clean TypeError. And `__all__` is the API."""

from __future__ import annotations

import builtins
import collections.abc
import inspect
import json
import re
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
from support import ROOT, run_cli

import promote_cli
from promote_cli import UsageError

# (a NumPy dtype or scalar type, the canonical spelling it stands for)
NUMPY_OBJECTS = [
    (np.int8, "i8"),
    (np.dtype("int8"), "i8"),
    (np.dtype(">i4"), "i32"),  # the other byte order is the same type
    (np.uint16, "u16"),
    (np.float16, "f16"),
    (np.dtype("complex64"), "c64"),
    (np.bool_, "bool"),
    (ml_dtypes.bfloat16, "bf16"),
    (np.dtype(ml_dtypes.float8_e4m3fn), "f8e4m3fn"),
    (float, "f64"),  # a dtype-like as NumPy reads it: np.dtype(float) is float64
]


@pytest.mark.parametrize("given, name", NUMPY_OBJECTS, ids=[f"{g!r}" for g, _ in NUMPY_OBJECTS])
def test_a_numpy_dtype_or_scalar_type_is_the_operand_it_names(given, name):
    assert promote_cli.query("numpy", given, "u8") == promote_cli.query("numpy", name, "u8")
    assert promote_cli.query("jax", "i8", given) == promote_cli.query("jax", "i8", name)
    assert promote_cli.query_n("numpy", [given, "u8", np.float16]) == promote_cli.query_n("numpy", [name, "u8", "f16"])


def test_the_vocabulary_s_own_objects_and_numpy_types_reach_every_function():
    i8 = promote_cli.lookup("i8")
    assert promote_cli.query("cann", i8, promote_cli.parse_operand("u8")) == promote_cli.query("cann", "i8", "u8")
    assert promote_cli.explain("cann", np.int8, np.uint8) == promote_cli.explain("cann", "i8", "u8")
    with pytest.raises(UsageError, match="lists i8 twice"):
        promote_cli.table("torch", types=[np.int8, i8])
    assert promote_cli.table("torch", types=[np.int8, np.uint8]).types == ["i8", "u8"]


@pytest.mark.parametrize("given", [3, 2.5, None, b"i8", ["i8"], np.int8(1), np.zeros(3), np.integer,
                                   type("Tensor", (), {})], ids=repr)
def test_any_other_object_is_a_type_error(given):
    with pytest.raises(TypeError, match=r"an operand is a spelling such as 'i8'.*a NumPy dtype, not "):
        promote_cli.query("numpy", given, "u8")
    with pytest.raises(TypeError):
        promote_cli.query_n("numpy", ["u8", "i8", given])


@pytest.mark.parametrize("given", [np.dtype("S5"), np.dtype("U3"), np.object_, np.dtype([("a", "i4")])], ids=repr)
def test_a_numpy_dtype_without_a_canonical_name_is_a_usage_error(given):
    with pytest.raises(UsageError, match="has no canonical dtype name"):
        promote_cli.query("numpy", given, "u8")


def test_spellings_never_import_numpy():
    code = ("import sys, promote_cli as p\n"
            "p.query('numpy', 'int8', 'U8'); p.query_n('jax', ['i8', 'u8', 'f16']); p.table('torch', types='i8,u8')\n"
            "p.diff('cann', 'paddle', types='i8,u8'); p.explain('cann', 'i8', 'u8')\n"
            "print(sorted(m for m in ('numpy', 'ml_dtypes', 'promote_cli.vocab.numpy_types') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout == "[]\n", out.stderr


# (CLI arguments giving JSON, the same question through the API): the API takes every spelling the CLI takes
SPELLINGS = [
    (["query", "INT8", "Uint8", "-f", "CANN"], lambda: promote_cli.query("CANN", "INT8", "Uint8")),
    (["query", "0D:F32", "weak:BF16", "-f", "Jax"], lambda: promote_cli.query("Jax", "0D:F32", "weak:BF16")),
    (["query", "float16", "PY:Int", "-f", "numpy"], lambda: promote_cli.query("numpy", "float16", "PY:Int")),
    (["query", "i8", "u8", "f16?", "-f", "jax"], lambda: promote_cli.query_n("jax", ["i8", "u8", "f16?"])),
    (["query", "i8", "UINT8", "F16", "-f", "jax"], lambda: promote_cli.query_n("jax", " i8  UINT8 F16")),
    (["table", "-f", "torch", "--types", "i8,u8"], lambda: promote_cli.table("torch", types="i8,u8")),
    (["table", "-f", "Torch", "--types", " I8, uint8 ,,F16"], lambda: promote_cli.table("Torch", types=" I8, uint8 ,,F16")),
    (["table", "--diff", "CANN", "cann@opbase", "--types", "int8,UINT8,f32"],
     lambda: promote_cli.diff("CANN", "cann@opbase", types="int8,UINT8,f32")),
    (["lattice", "-f", "torch", "--answers", "--types", "i8,u8,f16"],
     lambda: promote_cli.lattice("torch", answers=True, types="i8,u8,f16")),
]


@pytest.mark.parametrize("args, call", SPELLINGS, ids=[" ".join(a) for a, _ in SPELLINGS])
def test_the_api_takes_every_spelling_the_cli_takes(args, call):
    code, out, err = run_cli(*args, "--format", "json")
    assert code in (0, 1) and out, err  # 1: a refusal, an order that is not a lattice
    assert json.loads(promote_cli.render(call(), "json")) == json.loads(out)


def test_a_types_string_repeating_an_operand_is_refused_as_on_the_command_line():
    with pytest.raises(UsageError) as caught:
        promote_cli.table("torch", types="i8,int8")
    code, out, err = run_cli("table", "-f", "torch", "--types", "i8,int8")
    assert (code, out, err) == (2, "", f"promote: {caught.value}\n")


def test_a_missing_framework_is_the_same_error_everywhere():
    for call in (lambda: promote_cli.load(""), lambda: promote_cli.query(" ", "i8", "u8"),
                 lambda: promote_cli.diff("cann", ""), lambda: promote_cli.expect([":a=b i8 u8 -> i16"])):
        with pytest.raises(UsageError, match=r"which framework\? give -f NAME"):
            call()


# ---- __all__ ----------------------------------------------------------------------------------------------

def public_names() -> set[str]:
    """Every public function and class the API module holds or loads on first use (not its submodules)."""
    names = {name for name in dir(promote_cli) if not name.startswith("_")}
    return {name for name in names if inspect.isfunction(getattr(promote_cli, name))
            or inspect.isclass(getattr(promote_cli, name))}


def test_every_public_function_and_type_is_in_all_and_all_names_only_what_exists():
    assert {"explain", "expect", "Explanation", "ExpectReport", "Expectation"} <= set(promote_cli.__all__)
    assert sorted(public_names() - set(promote_cli.__all__)) == []
    missing = [name for name in promote_cli.__all__ if not hasattr(promote_cli, name)]
    assert missing == []
    assert len(promote_cli.__all__) == len(set(promote_cli.__all__))


def test_every_result_type_is_in_all():
    """What each function of the API returns is named in its annotation, and every such type is in `__all__`."""
    known = set(dir(builtins)) | set(dir(collections.abc))
    unlisted = {}
    for name in promote_cli.__all__:
        value = getattr(promote_cli, name)
        if not inspect.isfunction(value) or value.__module__ != "promote_cli":
            continue
        returns = inspect.signature(value).return_annotation
        assert returns is not inspect.Signature.empty, f"{name} does not say what it returns"
        for word in re.findall(r"[A-Za-z_]\w*", str(returns)):
            if word not in known and word not in promote_cli.__all__:
                unlisted.setdefault(name, []).append(word)
    assert unlisted == {}
