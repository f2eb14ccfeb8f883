"""`promote cast --semantics`: ml_dtypes, PyTorch and ONNX Runtime casts, bit-exact with the libraries'
recorded outputs (tests/data/recordings/cast-*, written by promote_cli.probes.cast_semantics)."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from promote_cli.numerics import semantics
from promote_cli.probes import cast_semantics as probe
from promote_cli.vocab.dtypes import DTYPES
from promote_cli.vocab.numpy_types import numpy_dtype

RECORDINGS = Path(__file__).parent / "data" / "recordings"
DATA = {lib: probe.load(RECORDINGS / f"cast-{lib}") for lib in semantics.LIBRARIES}
CASES = [(lib, src, key) for lib in semantics.LIBRARIES for src in probe.SOURCES
         for key in DATA[lib][1][src].files if key != "input"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}->{c[2]}")
def test_bit_exact_with_recorded_library(case):
    lib, src, key = case
    dst, _, nosat = key.partition(":")
    z = DATA[lib][1][src]
    bits, expected = z["input"], z[key]
    y = semantics.library_cast(bits.view(numpy_dtype(src)), src, dst, lib, saturate=not nosat)
    got = y.view(expected.dtype)
    bad = got != expected
    assert not bad.any(), (f"{int(bad.sum())} of {bits.size} differ: inputs {[hex(int(b)) for b in bits[bad][:6]]}, "
                           f"{lib} {expected[bad][:6].tolist()}, ours {got[bad][:6].tolist()}")


def test_recordings_cover_the_known_conversions():
    for lib in semantics.LIBRARIES:
        manifest, data = DATA[lib]
        assert manifest["library"] == lib and manifest["version"]
        for src in semantics.SOURCES:
            outs = {k.partition(":")[0] for k in data[src].files if k != "input"}
            assert outs == set(semantics.DESTINATIONS) - {src}


# --------------------------------------------------------------------------- casting under a library's semantics

import json  # noqa: E402

import promote_cli as api  # noqa: E402
from promote_cli.arrayio import comparefile  # noqa: E402
from promote_cli.errors import UsageError  # noqa: E402
from promote_cli.numerics import compare  # noqa: E402
from promote_cli.numerics.cast import cast_array  # noqa: E402
from support import FRAMEWORK_ABSENT, run_cli  # noqa: E402


@pytest.mark.parametrize("lib, dst, flags", [("ml_dtypes", "f8e4m3", []), ("onnx", "f8e4m3", []),
                                             ("onnx", "f8e5m2", ["--no-saturate"]), ("torch", "i8", []),
                                             ("torch", "bf16", [])])
def test_a_file_cast_under_a_library_s_semantics_is_its_recorded_output(tmp_path, lib, dst, flags):
    z = DATA[lib][1]["f32"]
    np.save(tmp_path / "x.npy", z["input"].view(np.float32))
    code, out, err = run_cli("cast", str(tmp_path / "x.npy"), "--to", dst, "--semantics", lib, *flags,
                             "-o", str(tmp_path / "y.npy"), "--format", "json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["semantics"] == lib and rep["saturate"] == (lib == "onnx" and not flags)
    key = dst + (":nosat" if flags else "")
    got = np.load(tmp_path / "y.npy", allow_pickle=False) if dst in ("i8",) else None
    raw = np.fromfile(tmp_path / "y.npy", dtype=np.uint8)
    expected = z[key]
    assert np.array_equal((got if got is not None else raw[raw.size - expected.nbytes:].view(expected.dtype)),
                          expected)


def test_library_cast_keeps_the_shape():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert semantics.library_cast(x, "f32", "bf16", "torch").shape == (2, 3)
    assert semantics.library_cast(np.float32(2.0), "f32", "i8", "onnx").shape == ()


def test_array_cast_counts_wrapping_not_saturation_for_x86_truncation():
    x = np.array([300.0, -1.0, 2.5, np.nan], np.float32)
    y, st = cast_array(x, "u8", semantics="torch")
    assert y.tolist() == [300 % 256, 255, 2, 0]   # trunc into 32 bits, wrapped; NaN is INT_MIN, 0 once wrapped
    assert st.wrapped == 2 and st.saturated == 0 and st.nan_in == 1


@pytest.mark.parametrize("kwargs, said", [
    (dict(semantics="torch", saturate=True), "torch has no such setting"),
    (dict(semantics="onnx", mode="extended"), "--mode extended is TOSA's"),
    (dict(semantics="numba"), "unknown cast semantics"),
])
def test_settings_a_semantics_does_not_have_are_refused(kwargs, said):
    with pytest.raises(UsageError, match=said):
        cast_array(np.zeros(2, np.float32), "f16", **kwargs)


def test_a_conversion_no_recording_covers_is_refused():
    with pytest.raises(UsageError, match="not known"):
        cast_array(np.zeros(2, np.float64), "f16", semantics="onnx")


def test_compare_shows_the_fp8_overflow_class_from_the_recordings():
    rows = {r.value_class: r for r in api.compare_cast("f32", "f8e4m3")}
    over = rows["overflow"]
    assert over.differ == over.inputs > 0
    # the example's outputs are what each library recorded for that input
    bits = int(over.example.split("(0x")[1].rstrip(")"), 16)
    z = {lib: DATA[lib][1]["f32"] for lib in semantics.LIBRARIES}
    i = int(np.flatnonzero(z["onnx"]["input"] == bits)[0])
    for lib, shown in zip(semantics.LIBRARIES, over.outputs[1:]):
        assert shown.endswith(f"(0x{int(z[lib]['f8e4m3'][i]):02x})")
    assert over.outputs[1].startswith("nan") and over.outputs[3].startswith("448")
    assert rows["NaN"].differ == 0 and rows["tie"].differ == 0


def test_compare_of_a_file_counts_what_each_library_converts_differently(tmp_path):
    z = DATA["ml_dtypes"][1]["f32"]
    x = z["input"].view(np.float32)
    np.save(tmp_path / "w.npy", x)
    src, dst, rows = api.compare_npy(tmp_path / "w.npy", "i8")
    tosa = compare.outputs(x, "f32", "i8")[0]
    for k, lib in enumerate(semantics.LIBRARIES, start=1):
        assert sum(r.vs_tosa[k] for r in rows) == int((DATA[lib][1]["f32"]["i8"] != tosa).sum())
    assert sum(r.inputs for r in rows) == x.size


def test_compare_on_the_command_line(tmp_path):
    code, out, err = run_cli("cast", "--compare", "f32", "f8e4m3")
    assert code == 0 and err == ""
    line = next(ln for ln in out.splitlines() if ln.startswith("overflow"))
    assert "nan (0x7f)" in line and "448 (0x7e)" in line
    code, out, err = run_cli("cast", "--compare", "f32", "--format", "json")
    assert code == 2 and out == "" and err.startswith("promote cast: --compare takes a conversion")
    code, out, err = run_cli("cast", "x.npy", "--to", "f16", "--saturate", "--no-saturate")
    assert code == 2 and "contradict" in err


@pytest.mark.live
@pytest.mark.parametrize("lib", semantics.LIBRARIES)
def test_live_library_agrees(lib):
    """`promote verify`'s check: the installed library against the implementation (skipped without it)."""
    if probe.version(lib) is None:
        pytest.skip(f"{FRAMEWORK_ABSENT} {lib}")   # torch, onnx: the probes' packages (ONNX Runtime with onnx)
    title, n, bad = probe.live_check(lib)
    assert n and not bad, bad


# --------------------------------------------------------------------------- docs/cast.md's semantics table

from promote_cli.numerics import reference  # noqa: E402
from promote_cli.numerics.legality import LEGAL  # noqa: E402
from promote_cli.probes import tosa as tosa_probe  # noqa: E402

DOC = Path(__file__).resolve().parent.parent / "docs" / "cast.md"


def _table_rows() -> list[list[str]]:
    lines = DOC.read_text(encoding="utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("<!-- semantics-table"))
    rows = []
    for ln in lines[start + 3:]:
        if not ln.startswith("|"):
            break
        rows.append([c.strip() for c in ln.strip("|").split("|")])
    return rows


def test_the_docs_semantics_table_is_the_recordings():
    _, tosa_data = tosa_probe.load_cast_recording(RECORDINGS / "tosa-cast")
    rows = _table_rows()
    assert len(rows) >= 15
    for cls, conversion, shown_input, tosa, *libs, nosat in rows:
        src, dst = conversion.split(" → ")
        bits = int(shown_input.split("(0x")[1].rstrip(")`"), 16)
        i = int(np.flatnonzero(DATA["onnx"][1][src]["input"] == bits)[0])
        expected = [compare.show(DATA[lib][1][src][dst][i], dst) for lib in semantics.LIBRARIES]
        assert libs == expected, (cls, conversion)
        assert nosat == (compare.show(DATA["onnx"][1][src][f"{dst}:nosat"][i], dst) if dst in probe.FP8 else "=")
        if (src, dst) in LEGAL:
            t = tosa_data[src]
            j = int(np.flatnonzero(t["input"].view(compare._bits(src)) == bits)[0])
            assert tosa == compare.show(np.asarray(t[dst]).view(compare._bits(dst))[j], dst), (cls, conversion)
        else:
            x = np.array([bits], compare._bits(src)).view(numpy_dtype(src))
            ours = np.asarray(reference.reference_cast(x, src, dst)).view(compare._bits(dst))[0]
            assert tosa == compare.show(ours, dst) + " ext.", (cls, conversion)


def test_negative_to_unsigned_is_its_own_class():
    rows = {r.value_class: r for r in api.compare_cast("i16", "u8")}
    assert rows["negative to unsigned"].inputs == 1 << 15   # every negative i16, before "out of range"
    assert rows["out of range"].inputs == (1 << 15) - 256


def test_compare_of_a_checkpoint_counts_its_float_tensors_a_chunk_at_a_time(tmp_path, monkeypatch):
    from test_cast_checkpoint import write_st

    x = DATA["torch"][1]["bf16"]["input"]
    write_st(tmp_path / "m.safetensors", {"w": x.view(ml_dtypes.bfloat16).reshape(256, 256),
                                          "ids": np.arange(5, dtype=np.int64)})
    np.save(tmp_path / "w.npy", x)
    monkeypatch.setattr(comparefile, "CHUNK_BYTES", 1000)     # many chunks, one tally
    [(src, dst, n, rows)] = api.compare_checkpoint(tmp_path / "m.safetensors", "f8e4m3")
    assert (src, dst, n) == ("bf16", "f8e4m3", 1)           # the i64 tensor is not a float: left out
    assert rows == api.compare_npy(tmp_path / "w.npy", "f8e4m3", from_="bf16")[2]
    code, out, err = run_cli("cast", "--compare", str(tmp_path / "m.safetensors"), "--to", "f8e4m3")
    assert code == 0 and "1 bf16 tensor -> f8e4m3" in out and "overflow" in out


@pytest.mark.parametrize("case", [c for c in CASES if c[1] in ("f32", "bf16", "i32")],
                         ids=lambda c: f"{c[0]}-{c[1]}->{c[2]}")
def test_the_cast_kernel_is_the_recording_and_counts_as_the_reference_classifies(case):
    """`cast_array(..., semantics=)` runs TOSA's kernel and converts again where CAST gives inf or NaN: the
    same bits as the recording, and statistics as classifying the whole output would give."""
    from promote_cli.numerics.reference import classify, reference_cast
    from promote_cli.numerics.stats import SATURATED, WRAPPED, stats_of_classes

    lib, src, key = case
    dst, _, nosat = key.partition(":")
    z = DATA[lib][1][src]
    bits, expected = z["input"], z[key]
    x = bits.view(numpy_dtype(src))
    y, st = cast_array(x, dst, src=src, semantics=lib, saturate=None if lib != "onnx" else not nosat)
    assert np.array_equal(y.view(expected.dtype), expected)
    sat = semantics.traits(lib, src, dst, not nosat)["overflow"] == "saturate"
    codes, sub, unp = classify(x, y, src, dst, False)
    if DTYPES[dst].is_integer:
        codes[codes == SATURATED] = WRAPPED
    else:
        fmt = reference.float_format(dst)
        again = (reference_cast(x, src, dst).view(fmt.uint) & (fmt.sign_bit - 1)) > fmt.max_bits
        codes[again] = classify(x, y, src, dst, sat)[0][again]
    assert st == stats_of_classes(codes, sub, unp)
