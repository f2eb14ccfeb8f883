"""The cast asked for is decided once, where it enters (`legality.request`): every spelling `--to` takes is
taken by `cast_array` and `cast_file` too (and numpy dtypes), with one wording for each refusal; the pair is
checked once per file, not once per chunk. And what a run of several files does as a whole: `--exclude`, the
refusal of a run with a file that has no cast to the target, the totals, reports within 100 columns; and `-o -`.
"""

from __future__ import annotations

import json
import os

import ml_dtypes
import numpy as np
import pytest
from support import run_cli

from promote_cli import cast_array, cast_file
from promote_cli.arrayio import castfile
from promote_cli.errors import UsageError
from promote_cli.numerics import legality
from promote_cli.numerics.legality import CastRequest, request

X = np.float32([0.5, -2.0, 3.25, 70000.0, np.nan, 1e-8])


# --------------------------------------------------------------------------- the request


def test_a_request_holds_canonical_names_mode_and_saturate():
    assert request("FP16", "BFLOAT16", "extended", True) == CastRequest("f16", "bf16", "extended", True)
    assert request(np.float16) == CastRequest("f16") and request(ml_dtypes.bfloat16).dst == "bf16"
    assert request(np.dtype(">i2")).dst == "i16" and request("torch.float16").dst == "f16"


@pytest.mark.parametrize("to", ["float16", "FP16", "half", "Float16", "torch.float16", "ACL_FLOAT16", np.float16,
                                np.dtype("float16"), "f16"])
def test_cast_array_takes_every_spelling_of_a_type(to):
    y, stats = cast_array(X, to)
    want, want_stats = cast_array(X, "f16")
    assert y.dtype == np.float16 and y.tobytes() == want.tobytes() and stats == want_stats


@pytest.mark.parametrize("to,dtype", [("bfloat16", ml_dtypes.bfloat16), (ml_dtypes.bfloat16, ml_dtypes.bfloat16),
                                      ("int8", np.int8), ("e4m3", ml_dtypes.float8_e4m3fn),
                                      ("float8_e4m3fn", ml_dtypes.float8_e4m3fn)])
def test_cast_array_takes_numpy_names_and_types(to, dtype):
    assert cast_array(X, to)[0].dtype == np.dtype(dtype)


def test_src_takes_every_spelling_too():
    bits = X.astype(ml_dtypes.bfloat16).view(np.uint16)
    y, _ = cast_array(bits, "float32", src="BFloat16")
    assert y.tobytes() == X.astype(ml_dtypes.bfloat16).astype(np.float32).tobytes()


@pytest.mark.parametrize("to", ["flaot16", "nope", "Float8", None, ""])
def test_an_unknown_type_is_unknown_not_missing_from_tosa(to):
    with pytest.raises(UsageError) as e:
        cast_array(X, to)
    assert "TOSA has no" not in str(e.value)
    assert ("no target dtype given" if not to else f"unknown dtype {to!r} (") in str(e.value)
    if to == "flaot16":
        assert str(e.value) == "unknown dtype 'flaot16' (did you mean f16, bf16, f64?)"


@pytest.mark.parametrize("to", [3.5, np.zeros(2), np.integer, b"f16"], ids=repr)
def test_an_object_that_is_no_dtype_is_a_type_error(to):
    with pytest.raises(TypeError, match="a dtype is a spelling such as 'f16', a DType or a NumPy dtype, not "):
        cast_array(X, to)
    with pytest.raises(TypeError):
        cast_array(X, "f16", src=to)


def test_the_api_and_the_command_say_the_same_for_a_misspelt_type(tmp_path):
    np.save(tmp_path / "w.npy", X)
    code, _, err = run_cli("cast", str(tmp_path / "w.npy"), "--to", "flaot16")
    with pytest.raises(UsageError) as e:
        cast_file(tmp_path / "w.npy", to="flaot16")
    assert code == 2 and err == f"promote cast: {e.value}\n"


def test_a_canonical_type_outside_tosa_is_still_named_so():
    with pytest.raises(UsageError, match="TOSA has no u8 type"):
        cast_array(X, "uint8")


def test_big_endian_arrays_are_cast_by_their_values():
    y, stats = cast_array(X.astype(">f4"), "f16")
    want, want_stats = cast_array(X, "f16")
    assert y.tobytes() == want.tobytes() and stats == want_stats


def test_each_refusal_has_one_wording_whichever_way_in(tmp_path):
    p = tmp_path / "w.npy"
    np.save(p, X)
    saturate = "--saturate needs --mode extended (TOSA CAST does not saturate floats)"
    mode = "unknown cast mode 'fast'; choose one of: tosa, extended"
    for call in (lambda **k: cast_array(X, "f16", **k), lambda **k: cast_file(p, to="f16", **k),
                 lambda **k: list(castfile.cast_files([p], to="f16", **k))):
        with pytest.raises(UsageError) as e:
            call(saturate=True)
        assert str(e.value) == saturate
        with pytest.raises(UsageError) as e:
            call(mode="fast")
        assert str(e.value) == mode
    code, out, err = run_cli("cast", str(p), str(p.with_name("v.npy")), "--to", "f16", "--saturate")
    assert (code, out, err) == (2, "", f"promote cast: {saturate}\n")  # the run refused before any file
    assert sorted(os.listdir(tmp_path)) == ["w.npy"]


def test_a_file_cast_checks_its_pair_once_not_per_chunk(tmp_path, monkeypatch):
    p = tmp_path / "w.npy"
    np.save(p, np.linspace(-10, 10, 5000, dtype=np.float32))
    checked = []
    real = CastRequest.check
    monkeypatch.setattr(CastRequest, "check", lambda self, src: checked.append(src) or real(self, src))
    rep = cast_file(p, to="float16", chunk_bytes=1024)
    assert checked == ["f32"] and rep.dst == "f16" and rep.elements == 5000


def test_check_pair_is_the_requests_check():
    with pytest.raises(UsageError, match="cast via f32"):
        legality.check_pair("i8", "float8_e4m3fn")
    legality.check_pair("int8", "float16")


# --------------------------------------------------------------------------- -o -


def test_dash_output_is_refused_and_dot_slash_dash_is_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save("w.npy", X)
    np.save("acc.npy", np.arange(-5, 5, dtype=np.int32))
    for argv in (["cast", "w.npy", "--to", "f16", "-o", "-"],
                 ["rescale", "acc.npy", "--to", "i8", "--multiplier", "1073741824", "--shift", "31", "-o", "-"]):
        code, out, err = run_cli(*argv)
        assert (code, out) == (2, "") and err.count("\n") == 1 and "-o -" in err and "./-" in err, err
        assert sorted(os.listdir()) == ["acc.npy", "w.npy"]
    code, out, _ = run_cli("cast", "w.npy", "--to", "f16", "-o", "./-")
    assert code == 0 and np.load("-").dtype == np.float16


# --------------------------------------------------------------------------- runs of several files


@pytest.fixture
def mixed(tmp_path, monkeypatch):
    """A directory of f32 files and two integer files with no TOSA cast to f16 (i64, u8)."""
    monkeypatch.chdir(tmp_path)
    os.mkdir("d")
    np.save("d/w.npy", X)
    np.save("d/v.npy", np.float32([1, 2, 65520]))
    np.save("d/ids.npy", np.arange(4, dtype=np.int64))
    np.save("d/mask.npy", np.ones(3, np.uint8))
    return tmp_path


def _written():
    return sorted(n for n in os.listdir("d") if n.count(".") > 1)


def test_a_run_with_a_file_that_has_no_cast_is_refused_before_anything_is_written(mixed):
    code, out, err = run_cli("cast", "d", "--to", "f16")
    assert (code, out, _written()) == (2, "", [])
    assert err.startswith("promote cast: d/ids.npy: TOSA CAST does not define i64 -> f16; cast via i32")
    assert err.endswith(" (and 1 more files with no cast to f16); nothing written "
                        "(leave them out with --exclude ids.npy --exclude mask.npy)\n")
    code, out, err = run_cli("cast", "d", "--to", "f16", "--exclude", "ids.npy", "--exclude", "mask.npy")
    assert (code, err, _written()) == (0, "", ["v.f16.npy", "w.f16.npy"])
    code, _, _ = run_cli("cast", "d", "--to", "f16", "--mode", "extended", "--force")  # every pair defined there
    assert code == 0 and _written() == ["ids.f16.npy", "mask.f16.npy", "v.f16.npy", "w.f16.npy"]


def test_a_single_file_keeps_its_own_message(mixed):
    code, _, err = run_cli("cast", "d/ids.npy", "--to", "f16")
    assert code == 2 and "--exclude" not in err and "nothing written" not in err
    assert err.startswith("promote cast: d/ids.npy: TOSA CAST does not define i64 -> f16; cast via i32")


def test_exclude_is_a_glob_on_the_name_in_its_directory(mixed):
    code, out, _ = run_cli("cast", "d", "--to", "i32", "--exclude", "[vw].npy", "--exclude", "mask*")
    assert code == 0 and _written() == ["ids.i32.npy"] and out.startswith("d/ids.npy -> ")
    code, out, _ = run_cli("cast", "d/w.npy", "d/v.npy", "--to", "i32", "--exclude", "w*", "--format", "json")
    assert code == 0 and json.loads(out)["input"] == "d/v.npy"  # a file named on the command line alike
    code, _, err = run_cli("cast", "d", "--to", "i32", "--exclude", "*.npy")
    assert code == 2 and err == "promote cast: --exclude leaves out every input; nothing to cast\n"
    code, _, err = run_cli("cast", "d", "--to", "i32", "--exclude", "*.NPY", "--exclude", "mask.npy", "--force")
    assert (code, err) == (0, "") and _written() == ["ids.i32.npy", "v.i32.npy", "w.i32.npy"]


def test_the_exclude_a_refusal_names_matches_that_file_alone(mixed):
    np.save("d/a[1]*.npy", np.arange(3, dtype=np.int64))
    np.save("d/a1x.npy", np.float32([1]))
    os.remove("d/ids.npy")
    os.remove("d/mask.npy")
    _, _, err = run_cli("cast", "d", "--to", "f16")
    option = err.rsplit("--exclude ", 1)[1].rstrip(")\n")
    assert option == "'a[[]1][*].npy'"
    code, out, _ = run_cli("cast", "d", "--to", "f16", "--exclude", option.strip("'"))
    assert code == 0 and _written() == ["a1x.f16.npy", "v.f16.npy", "w.f16.npy"]


def test_a_run_of_several_files_ends_with_its_totals(mixed):
    os.remove("d/ids.npy")
    os.remove("d/mask.npy")
    with open("d/bad.npy", "wb") as f:
        f.write(b"not an array")
    code, out, err = run_cli("cast", "d", "--to", "f16", "--format", "json")
    *reports, last = map(json.loads, out.splitlines())
    cast = [r for r in reports if "error" not in r]
    summed = {k: sum(r["stats"][k] for r in cast) for k in cast[0]["stats"]}
    assert code == 2 and err.count("\n") == 1 and "d/bad.npy" in err
    assert last == {"summary": {"files": 3, "cast": 2, "failed": 1, "elements": 9, "stats": summed,
                                "bytes_in": sum(r["bytes_in"] for r in cast),
                                "bytes_out": sum(r["bytes_out"] for r in cast)}}
    code, out, _ = run_cli("cast", "d", "--to", "f16", "--force")
    lines = out.splitlines()
    assert lines[-2:] == ["total: 3 files (2 cast, 1 failed), 9 elements",
                          "  5 exact, 1 rounded, 2 overflowed to inf, 1 NaN in"]
    assert summed == {"exact": 5, "rounded": 1, "wrapped": 0, "saturated": 0, "overflow_inf": 2, "overflow_nan": 0,
                      "nan_in": 1, "subnormal_out": 0, "unpredictable": 0}
    assert max(map(len, lines)) <= 100
    _, one, _ = run_cli("cast", "d/w.npy", "--to", "f16", "--force")
    assert "total" not in one and len(one.splitlines()) == 2  # one file: no totals


def test_every_line_of_a_busy_report_fits_100_columns(tmp_path, monkeypatch):
    """A float -> int cast of a large array with most kinds of element: still two lines within 100 columns (for
    file names of a usual length)."""
    monkeypatch.chdir(tmp_path)
    big = np.full(3_000_000, 1e10, np.float32)
    big[:4] = [np.nan, 0.5, 1.0, -1e-40]
    np.save("layer_17.npy", big.reshape(1000, 3000))
    code, out, _ = run_cli("cast", "layer_17.npy", "--to", "i8")
    assert code == 0 and len(out.splitlines()) == 2 and max(map(len, out.splitlines())) <= 100, out
