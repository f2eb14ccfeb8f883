"""The NumPy, JAX and array API probes: one dtype-name mapping, no byte-counting codes,
importable without their frameworks, and (NumPy, a dependency of promote) asked live."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from promote_cli.probes import dtype_names, write_recording
from promote_cli.vocab.dtypes import DTYPES

PROBES = ["numpy", "jax", "array_api"]


def test_every_mapped_name_is_canonical_and_every_key_a_dtype_name():
    assert set(dtype_names.CANONICAL.values()) <= set(DTYPES)
    assert len(set(dtype_names.CANONICAL.values())) == len(dtype_names.CANONICAL)
    for native in dtype_names.CANONICAL:
        assert re.fullmatch(r"[a-z]+[0-9]+(_[a-z0-9]+)?|bool", native), native


def test_no_byte_counting_code_is_a_key():
    codes = {np.dtype(t).str.lstrip("<>|=") for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                                      np.uint32, np.uint64, np.float16, np.float32, np.float64,
                                                      np.complex64, np.complex128, np.bool_)}
    assert codes == {"i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16", "b1"}
    assert not codes & set(dtype_names.CANONICAL)


#: ml_dtypes types newer than the oldest ml_dtypes the project supports (0.5): the probe maps them,
#: an installation at the minimum lacks them.
NEWER_THAN_MINIMUM = {"uint1", "complex32"}


def test_each_mapping_names_a_dtype_of_that_width():
    missing = {n for n in dtype_names.ML_DTYPES if not hasattr(ml_dtypes, n)}
    assert missing <= NEWER_THAN_MINIMUM, missing
    for native, name in dtype_names.CANONICAL.items():
        if native in missing:
            continue
        dt = np.dtype(getattr(ml_dtypes, native) if native in dtype_names.ML_DTYPES else native)
        assert dt.name == native
        if DTYPES[name].bits >= 8:
            assert dt.itemsize * 8 == DTYPES[name].bits, (native, name)
        assert dtype_names.canonical(dt) == name


def test_float8_e4m3_is_the_ieee_type_not_e4m3fn():
    assert dtype_names.canonical("float8_e4m3") == "f8e4m3ieee"
    assert dtype_names.canonical("float8_e4m3fn") == "f8e4m3"


@pytest.mark.parametrize("name", PROBES)
def test_probe_module_has_the_protocol(name):
    probe = importlib.import_module(f"promote_cli.probes.{name}")
    assert probe.FRAMEWORK in ("numpy", "jax", "array-api")
    assert isinstance(probe.PACKAGE, str) and callable(probe.version) and callable(probe.record)


def test_numpy_probe_asks_numpy_and_the_ruleset_agrees(tmp_path):
    from promote_cli.probes import numpy as probe
    from promote_cli.probes.recordings import compare, load_recording

    assert probe.ask("add", ["u64", "i64"]) == ("f64", None)
    assert probe.ask("add", ["bf16", "f16"]) == ("f32", None)
    result, error = probe.ask("result_type", ["bf16", "f16"])
    assert result is None and "common DType" in error
    assert probe.ask("result_type", ["i8", "u8", "f16"]) == ("f16", None)
    data = {"ruleset": "numpy", "package": "numpy", "version": probe.version(),
            "cases": [[op, a, b, {}, *probe.ask(op, [a, b])] for op, a, b in
                      [("add", "u64", "i64"), ("add", "bf16", "f16"), ("result_type", "u4", "py:int"),
                       ("add", "u4", "py:int"), ("promote_types", "i8", "py:int")]]}
    path = tmp_path / "r.json"
    write_recording(data, str(path))
    total, mismatches = compare(load_recording(path))
    assert total == 5 and not mismatches, [m.line() for m in mismatches]


def test_recordings_write_nary_cases_one_per_line(tmp_path):
    path = tmp_path / "r.json"
    write_recording({"ruleset": "numpy", "version": "1", "nary": [["result_type", ["i8", "u8", "f16"], None, {},
                                                                   "f16", None]],
                     "cases": [["add", "i8", "u8", {}, "i16", None]]}, str(path))
    lines = path.read_text().splitlines()
    assert lines[1] == ' ["result_type", ["i8", "u8", "f16"], null, {}, "f16", null]'
    assert lines[2] == '], "cases": ['
    assert json.loads(path.read_text())["cases"] == [["add", "i8", "u8", {}, "i16", None]]


def test_verify_without_the_framework_is_a_usage_error(monkeypatch):
    from support import run_cli

    from promote_cli.probes import jax as probe

    monkeypatch.setattr(probe, "version", lambda: None)
    code, out, err = run_cli("verify", "-f", "jax")
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and "pip install jax" in err


def test_verify_asks_a_versioned_probe_for_the_version_named(monkeypatch):
    from promote_cli.probes import array_api as probe
    from promote_cli.probes import array_api_ops, expressions
    from promote_cli.probes.recordings import load_recording, run

    asked = []

    def record_for(ruleset):
        asked.append(ruleset)
        return {"ruleset": ruleset, "package": probe.PACKAGE, "version": "2.6.1",
                "cases": [["result_type", "f32", "py:int", {}, None, "refused before 2024.12"]]}

    def record_expressions(name):  # the expression probe answers with the committed recording
        asked.append(f"expressions of {name}")
        return json.loads((Path(__file__).resolve().parents[1] / expressions.recording_path(name)).read_text(encoding="utf-8"))

    def record_ops(ruleset):  # the op probe answers with the committed recording's sum rows
        asked.append(f"ops of {ruleset}")
        data = load_recording(Path(__file__).resolve().parents[1] / "tests" / "data" / "recordings"
                              / f"ops-array-api-{ruleset.partition('@')[2]}.json")
        return dict(data, rows=[row for row in data["rows"] if row[0] == "sum"])

    def record_values(ruleset):  # the value probe answers with the committed recording
        asked.append(f"values of {ruleset}")
        return load_recording(Path(__file__).resolve().parents[1] / "tests" / "data" / "recordings" / "values"
                              / f"array-api-{ruleset.partition('@')[2]}.json")

    monkeypatch.setattr(probe, "version", lambda: "2.6.1")
    monkeypatch.setattr(probe, "record_for", record_for)
    monkeypatch.setattr(probe, "record_values", record_values)
    monkeypatch.setattr(expressions, "record", record_expressions)
    monkeypatch.setattr(array_api_ops, "record_ops", record_ops)
    report = run("array-api@2023.12")
    assert asked == ["array-api@2023.12", "expressions of array-api@2023.12", "ops of array-api@2023.12",
                     "values of array-api@2023.12"]
    assert report.agrees and report.cases == 1
    assert sorted(label for label, _, _ in report.checks) == ["ops", "values", "whole expressions"]
    assert not run("array-api@2025.12").agrees


def test_the_probes_mapping_agrees_with_the_vocabulary():
    """Where the vocabulary names a numpy/ml_dtypes type for a dtype, the probes' mapping
    names the same one; the probes also map ml_dtypes' uint1 and complex32, which ml_dtypes
    0.6 has and the vocabulary's cast path does not carry."""
    vocab = {d.numpy.rpartition(".")[2]: name for name, d in DTYPES.items() if d.numpy}
    probes = dict(dtype_names.CANONICAL)
    assert {probes.pop("uint1"), probes.pop("complex32")} == {"u1", "c32"}
    assert probes == vocab
