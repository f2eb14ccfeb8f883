"""`promote cast` and `castfile.cast_file`: files in, files out, reports, exit codes.

The cast itself is `numerics.cast.cast_array`'s; here the streamed file cast is
compared with that in-memory cast of the whole array, so these tests check the
file handling, never re-derive cast values.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import ml_dtypes  # noqa: F401
import numpy as np
import pytest
from click.testing import CliRunner
from support import run_cli

from promote_cli.arrayio import castfile
from promote_cli.arrayio import npy as npyio
from promote_cli.cli.commands.cast import cast
from promote_cli.numerics import cast as tosa_cast
from promote_cli.numerics import legality
from promote_cli.vocab.numpy_types import numpy_dtype


def run(*args):
    return CliRunner().invoke(cast, [str(a) for a in args], catch_exceptions=False)


def _leftovers(directory):
    return [n for n in os.listdir(directory) if npyio.TEMP_MARK in n]


def _fingerprint(p: Path):
    st = p.stat()
    return p.read_bytes(), st.st_mtime_ns, st.st_size


@pytest.fixture
def weights(tmp_path):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((64, 33)) * 1000).astype(np.float32)
    x[0, :4] = [np.nan, np.inf, -np.inf, 1e-30]
    x[1, :2] = [1e6, -1e6]
    p = tmp_path / "w.npy"
    np.save(p, x)
    return p, x


def _bits(a):
    a = np.asarray(a)
    return a.reshape(-1).view(f"u{a.dtype.itemsize}").tolist()


# --------------------------------------------------------------------------- results


def test_default_output_name_and_values(weights):
    p, x = weights
    before = _fingerprint(p)
    r = run(p, "--to", "float16")
    assert r.exit_code == 0, r.stderr
    out = p.with_name("w.f16.npy")
    assert out.exists()
    assert str(out) in r.stdout
    want, st = tosa_cast.cast_array(x, "f16", src="f32", stats=True)
    got = np.load(out, allow_pickle=False)
    assert got.dtype == np.float16 and got.shape == x.shape
    assert _bits(got) == _bits(want)
    assert _fingerprint(p) == before
    assert _leftovers(p.parent) == []


@pytest.mark.parametrize("src", ["w.npy", "./w.npy", "d/w.npy", "d//w.npy", "./d/./w.npy", "/d/w.npy",
                                 "//d/w.npy", "///d/w.npy", "d/w.npy/", "d/../w.npy", "W.NPY", "w", "w.npy.npy",
                                 ".npy", "d/.w.npy", "é/w\nx.npy", "../w.npy", "//w.npy", "d/w.npy//."])
def test_the_default_output_is_spelled_as_pathlib_spells_it(src):
    stem = Path(src).name[:-4] if Path(src).name.lower().endswith(".npy") else Path(src).name
    assert castfile.default_output(src, "f16") == str(Path(src).with_name(f"{stem}.f16.npy"))
    assert castfile.default_output(Path(src), "bf16") == str(Path(src).with_name(f"{stem}.bf16.npy"))


@pytest.mark.parametrize("to", ["bf16", "f8e4m3", "f8e5m2", "i8"])
def test_streamed_equals_in_memory(tmp_path, weights, to):
    p, x = weights
    if ("f32", to) not in legality.LEGAL:
        pytest.skip(f"f32 -> {to} is not a TOSA CAST")
    out = tmp_path / f"o-{to}.npy"
    rep = castfile.cast_file(p, out, to=to, chunk_bytes=1000)  # many small chunks
    want, st = tosa_cast.cast_array(x, to, src="f32", stats=True)
    got = npyio.read_npy(out)  # no --from needed for our own output
    assert got.dtype == want.dtype
    assert _bits(got) == _bits(want)
    assert rep.stats == {k: int(v) for k, v in st.as_dict().items()}
    assert rep.elements == x.size


def test_fortran_big_endian_0d_and_empty(tmp_path):
    cases = {
        "fortran": np.asfortranarray(np.arange(12, dtype=">f4").reshape(3, 4) / 3),
        "zerod": np.array(2.5, dtype=">f4"),
        "empty": np.zeros((0, 5), dtype="<f4"),
    }
    for name, arr in cases.items():
        p = tmp_path / f"{name}.npy"
        np.save(p, arr)
        r = run(p, "--to", "f16", "--format", "json")
        assert r.exit_code == 0, r.stderr
        got = np.load(tmp_path / f"{name}.f16.npy")
        want, _ = tosa_cast.cast_array(np.ascontiguousarray(arr, dtype="=f4"), "f16", src="f32")
        assert got.shape == arr.shape
        assert got.flags.f_contiguous == arr.flags.f_contiguous
        assert _bits(got) == _bits(np.asarray(want).reshape(arr.shape))
        rep = json.loads(r.stdout)
        assert rep["elements"] == arr.size
        assert rep["shape"] == list(arr.shape)


def test_from_reinterprets_bf16_bits_and_round_trip(tmp_path):
    bits = np.array([0x3FC0, 0xC000, 0x7F80, 0x0001, 0x7FC0], dtype=np.uint16)
    p = tmp_path / "b.npy"
    np.save(p, bits)
    r = run(p, "--to", "f32", "--from", "bfloat16")
    assert r.exit_code == 0, r.stderr
    want, _ = tosa_cast.cast_array(bits.view(ml_dtypes.bfloat16), "f32", src="bf16")
    assert _bits(np.load(tmp_path / "b.f32.npy")) == _bits(want)
    # and back: our bf16 output is read without --from and loads in numpy as bfloat16
    r = run(tmp_path / "b.f32.npy", "--to", "bf16")
    assert r.exit_code == 0, r.stderr
    back = np.load(tmp_path / "b.f32.bf16.npy")
    assert back.dtype == np.dtype(ml_dtypes.bfloat16)


# --------------------------------------------------------------------------- legality


def _illegal_pair():
    names = legality.EXTENDED_TYPES
    for a in names:
        for b in names:
            if a != b and (a, b) not in legality.LEGAL:
                return a, b
    pytest.skip("every pair is legal")


def test_refused_pair_names_a_route(tmp_path):
    a, b = _illegal_pair()
    p = tmp_path / "x.npy"
    np.save(p, np.zeros(3, numpy_dtype(a)))
    r = run(p, "--to", b)
    assert r.exit_code == 2
    assert r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.stderr
    assert not (tmp_path / f"x.{b}.npy").exists()
    r = run(p, "--to", b, "--mode", "extended")
    assert r.exit_code == 0, r.stderr


def test_extended_mode_every_numeric_pair(tmp_path):
    names = legality.EXTENDED_TYPES
    for a in names:
        p = tmp_path / f"{a}.npy"
        x = np.array([0, 1, -1, 3, 100], dtype=np.float64)
        if a.startswith("u"):
            x = np.abs(x)
        npyio.write_npy(p, x.astype(numpy_dtype(a)))  # names ml_dtypes types: no --from needed
        for b in names:
            out = tmp_path / f"{a}-{b}.npy"
            rep = castfile.cast_file(p, out, to=b, mode="extended")
            assert np.load(out).dtype == numpy_dtype(b), (a, b)
            assert rep.elements == 5


def test_saturate_needs_extended(weights):
    p, _ = weights
    r = run(p, "--to", "f16", "--saturate")
    assert r.exit_code == 2
    r = run(p, "--to", "f16", "--saturate", "--mode", "extended", "--format", "json")
    assert r.exit_code == 0, r.stderr
    stats = json.loads(r.stdout)["stats"]
    assert stats["overflow_inf"] == 0 and stats["saturated"] > 0


# --------------------------------------------------------------------------- reports and exit codes


def test_json_report(weights):
    p, x = weights
    r = run(p, "--to", "f16", "--format", "json")
    assert r.exit_code == 0
    rep = json.loads(r.stdout)
    assert rep["from"] == "f32" and rep["to"] == "f16" and rep["mode"] == "tosa"
    assert rep["elements"] == x.size
    assert set(rep["stats"]) >= {
        "exact", "rounded", "overflow_inf", "overflow_nan", "saturated", "nan_in", "subnormal_out", "unpredictable",
    }
    assert rep["stats"]["nan_in"] == 1
    assert rep["stats"]["overflow_inf"] == 2
    assert rep["failed_on"] == []


@pytest.mark.parametrize(
    "values,cond,fails",
    [
        ([1.0, 2.0], "overflow", False),
        ([1.0, 1e6], "overflow", True),
        ([1.0, 2.0], "inexact", False),
        ([1.0, 0.1], "inexact", True),
        ([1.0, 0.1], "nan", False),
        ([1.0, np.nan], "nan", True),
    ],
)
def test_fail_on(tmp_path, values, cond, fails):
    p = tmp_path / "v.npy"
    np.save(p, np.array(values, dtype=np.float32))
    r = run(p, "--to", "f16", "--fail-on", cond, "--format", "json")
    assert r.exit_code == (1 if fails else 0), r.stderr
    assert json.loads(r.stdout)["failed_on"] == ([cond] if fails else [])
    assert (tmp_path / "v.f16.npy").exists()  # the output is still written


def test_text_report_is_two_lines_within_100_columns(weights, monkeypatch):
    """The files and types, then the counts that are not 0 (`exact` always): each line fits 100 columns."""
    p, _ = weights
    monkeypatch.chdir(p.parent)
    r = run("w.npy", "--to", "f16")
    lines = r.stdout.splitlines()
    assert len(lines) == 2 and max(len(line) for line in lines) <= 100
    assert lines[0] == "w.npy -> w.f16.npy: f32 -> f16 (tosa), 2112 elements (64x33)"
    assert lines[1] == "  3 exact, 2106 rounded, 2 overflowed to inf, 1 NaN in"
    r = run("w.npy", "--to", "i8")
    assert re.fullmatch(r"  0 exact, \d+ rounded, \d+ saturated, 1 NaN in, 1 unpredictable", r.stdout.splitlines()[1])


# --------------------------------------------------------------------------- files


def test_existing_output_needs_force(weights):
    p, _ = weights
    out = p.with_name("w.f16.npy")
    out.write_bytes(b"keep me")
    r = run(p, "--to", "f16")
    assert r.exit_code == 2 and "--force" in r.stderr
    assert out.read_bytes() == b"keep me"
    r = run(p, "--to", "f16", "--force")
    assert r.exit_code == 0
    assert np.load(out).dtype == np.float16


def test_never_overwrites_input(weights, tmp_path):
    p, _ = weights
    before = _fingerprint(p)
    link = tmp_path / "link.npy"
    link.symlink_to(p)
    for target in (p, link, tmp_path / "." / "w.npy"):
        r = run(p, "--to", "f16", "-o", target, "--force")
        assert r.exit_code == 2, target
        assert "input" in r.stderr
    assert _fingerprint(p) == before
    assert _leftovers(tmp_path) == []


def test_interrupted_cast_leaves_nothing(weights, monkeypatch):
    p, _ = weights
    before = _fingerprint(p)
    real = tosa_cast.Converter.__call__
    calls = []

    def flaky(*a, **k):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(tosa_cast.Converter, "__call__", flaky)
    monkeypatch.setattr(npyio, "DEFAULT_CHUNK_BYTES", 1024)
    with pytest.raises(KeyboardInterrupt):
        castfile.cast_file(p, to="f16", chunk_bytes=1024)
    assert not p.with_name("w.f16.npy").exists()
    assert _leftovers(p.parent) == []
    calls.clear()
    r = CliRunner().invoke(cast, [str(p), "--to", "f16"])
    assert r.exit_code == 130
    assert not p.with_name("w.f16.npy").exists()
    assert _leftovers(p.parent) == []
    assert _fingerprint(p) == before


def test_sigterm_mid_cast_leaves_nothing(weights):
    p, _ = weights
    code = textwrap.dedent(
        f"""
        import os, signal, sys
        from promote_cli.numerics import cast as tosa_cast
        from promote_cli.arrayio import npy as npyio
        from promote_cli.cli.commands.cast import cast
        real = tosa_cast.Converter.__call__
        n = []
        def slow(*a, **k):
            n.append(1)
            if len(n) == 2:
                os.kill(os.getpid(), signal.SIGTERM)
            return real(*a, **k)
        tosa_cast.Converter.__call__ = slow
        npyio.DEFAULT_CHUNK_BYTES = 1024
        cast([{str(p)!r}, "--to", "f16"])
        """
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "interrupted" in proc.stderr
    assert not p.with_name("w.f16.npy").exists()
    assert _leftovers(p.parent) == []


def test_directory_input_parallel_in_order(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    for i, name in enumerate(["c", "a", "b"]):
        np.save(d / f"{name}.npy", np.full(10, i + 0.1, dtype=np.float32))
    (d / "notes.txt").write_text("ignored")
    r = run(d, "--to", "f16", "--jobs", "2", "--format", "json")
    assert r.exit_code == 0, r.stderr
    reps = [json.loads(line) for line in r.stdout.splitlines()]  # one report a file, nothing else
    assert [Path(x["input"]).name for x in reps] == ["a.npy", "b.npy", "c.npy"]
    summary = json.loads(r.stderr)  # the run's totals go to standard error
    assert summary["summary"]["files"] == 3 and summary["summary"]["elements"] == 30
    assert sorted(n for n in os.listdir(d) if n.endswith(".f16.npy")) == ["a.f16.npy", "b.f16.npy", "c.f16.npy"]
    # a second run skips the outputs of the first and needs --force for the rest
    r = run(d, "--to", "f16", "--jobs", "2")
    assert r.exit_code == 2
    assert r.stderr.count("--force") == 3
    r = run(d, "--to", "f16", "--force", "--jobs", "1")
    assert r.exit_code == 0
    assert len(r.stdout.splitlines()) == 3 * 2 + 2  # two lines a file, two of totals


def test_several_inputs_one_bad(tmp_path):
    good = tmp_path / "good.npy"
    np.save(good, np.ones(4, np.float32))
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"not an array")
    r = run(good, bad, "--to", "f16", "--jobs", "2")
    assert r.exit_code == 2
    assert (tmp_path / "good.f16.npy").exists()
    assert not (tmp_path / "bad.f16.npy").exists()
    assert r.stderr.count("\n") == 1 and "bad.npy" in r.stderr


@pytest.mark.parametrize(
    "args,match",
    [
        (["--to", "flaot16"], "unknown dtype"),
        (["--to", "f16", "--from", "nope"], "unknown dtype"),
        (["--to", "f16", "-o", "x.npy", "EXTRA"], "exactly one input"),
        (["MISSING.npy", "--to", "f16"], "MISSING.npy: cannot read: No such file or directory"),
    ],
)
def test_usage_errors_are_one_line(weights, args, match):
    p, _ = weights
    args = [a if a != "EXTRA" else str(p) for a in args]
    if args[0] != "MISSING.npy":
        args = [str(p)] + args
    r = run(*args)
    assert r.exit_code == 2
    assert match in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_pickle_file_refused(tmp_path):
    p = tmp_path / "o.npy"
    np.save(p, np.array([object()], dtype=object), allow_pickle=True)
    r = run(p, "--to", "f16")
    assert r.exit_code == 2 and "objects" in r.stderr
    assert not (tmp_path / "o.f16.npy").exists()


def test_stream_memory_stays_bounded(tmp_path):
    """A cast's chunks never exceed chunk_bytes of input (bounded, not timed)."""
    n = 1 << 20
    p = tmp_path / "m.npy"
    np.save(p, np.linspace(-70000, 70000, n, dtype=np.float32))
    seen = []
    real = tosa_cast.Converter.__call__

    def spy(self, x, *a, **k):
        seen.append(x.nbytes)
        return real(self, x, *a, **k)

    tosa_cast.Converter.__call__ = spy
    try:
        castfile.cast_file(p, tmp_path / "o.npy", to="f16", chunk_bytes=256 << 10)
    finally:
        tosa_cast.Converter.__call__ = real
    assert max(seen) <= 256 << 10
    assert sum(seen) == n * 4


# --------------------------------------------------------------------------- the tosa ruleset


def test_tosa_ruleset_names_a_legal_cast_for_every_mixed_pair():
    """rules/tosa.toml's `join` table agrees with the CAST table `promote cast` enforces."""
    import re

    from promote_cli import query

    names = legality.TOSA_TYPES
    for a in names:
        for b in names:
            ans = query("tosa", a, b, op="add")
            if a == b:
                continue
            assert ans.result is None, (a, b)
            m = re.search(r"insert CAST (\w+) -> (\w+)", ans.refusal)
            if (a, b) in legality.LEGAL or (b, a) in legality.LEGAL:
                assert m, (a, b, ans.refusal)
                assert {m.group(1), m.group(2)} == {a, b}
                assert (m.group(1), m.group(2)) in legality.LEGAL
            else:
                assert m is None and "no single TOSA CAST" in ans.refusal, (a, b, ans.refusal)



@pytest.mark.parametrize("threads", [1, 2, 3])
def test_threaded_casting_writes_the_same_file(tmp_path, weights, threads):
    p, x = weights
    out = tmp_path / f"t{threads}.npy"
    rep = castfile.cast_file(p, out, to="f8e4m3", chunk_bytes=1024, threads=threads)
    want, st = tosa_cast.cast_array(x, "f8e4m3", src="f32", stats=True)
    assert _bits(npyio.read_npy(out)) == _bits(want)
    assert rep.stats == {k: int(v) for k, v in st.as_dict().items()}


@pytest.mark.parametrize("threads", [None, 1, 2])
def test_big_casts_split_chunks_over_threads(tmp_path, threads):
    """A file of many chunks, each large enough for `cast_array` to split over threads,
    cast with the default threads, one, or two chunks at a time: the same bytes and
    statistics as one cast of the whole array."""
    from promote_cli.numerics import cast as numcast

    rng = np.random.default_rng(3)
    x = (rng.standard_normal(3 * numcast.PARALLEL_MIN + 12345) * 3e4).astype(np.float32)
    x[::1001] = np.nan
    p = tmp_path / "big.npy"
    np.save(p, x)
    out = tmp_path / "big.f16.npy"
    rep = castfile.cast_file(p, out, to="f16", chunk_bytes=4 * numcast.PARALLEL_MIN, threads=threads)
    want, st = tosa_cast.cast_array(x, "f16", src="f32", threads=1)
    assert _bits(npyio.read_npy(out)) == _bits(want)
    assert rep.stats == {k: int(v) for k, v in st.as_dict().items()}


def test_writeback_is_started_as_output_is_written(tmp_path, monkeypatch):
    """Every WRITEBACK_BYTES of output, the kernel is asked to start writing it back (a hint:
    its failure changes nothing); the ranges follow each other from the start of the data."""
    calls = []

    def fadvise(fd, offset, length, advice):
        calls.append((offset, length, advice))
        raise OSError(22, "not supported here")

    monkeypatch.setattr(castfile.os, "posix_fadvise", fadvise, raising=False)
    monkeypatch.setattr(castfile, "_FADV", 4)
    monkeypatch.setattr(castfile, "WRITEBACK_BYTES", 3000)
    x = np.arange(20000, dtype=np.float32)
    p = tmp_path / "a.npy"
    np.save(p, x)
    out = tmp_path / "a.f16.npy"
    castfile.cast_file(p, out, to="f16", chunk_bytes=4096)
    assert np.array_equal(npyio.read_npy(out), x.astype(np.float16))
    assert calls and all(advice == 4 and length >= 3000 for _, length, advice in calls)
    head = out.stat().st_size - x.size * 2                  # the data follows the header
    assert [o for o, _, _ in calls] == [head] + [o + n for o, n, _ in calls[:-1]]
    assert calls[-1][0] + calls[-1][1] <= out.stat().st_size


def test_cast_array_into_a_given_buffer(weights):
    _, x = weights
    want, st = tosa_cast.cast_array(x, "bf16", src="f32")
    buffer = np.empty(x.size, numpy_dtype("bf16"))
    got, st2 = tosa_cast.cast_array(x, "bf16", src="f32", out=buffer)
    assert got.shape == x.shape and np.shares_memory(got, buffer)
    assert _bits(got) == _bits(want) and st2.as_dict() == st.as_dict()
    with pytest.raises(Exception):
        tosa_cast.cast_array(x, "bf16", src="f32", out=np.empty(x.size + 1, numpy_dtype("bf16")))


# --------------------------------------------------------------------------- casts split between two processes


def _split_everything(monkeypatch):
    forks = []
    real_fork = os.fork

    def fork():
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(castfile, "SPLIT_MIN_BYTES", 0)
    monkeypatch.setattr(castfile.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(castfile.os, "fork", fork)
    return forks


@pytest.mark.parametrize("to", ["f16", "bf16", "f8e4m3", "i8"])
@pytest.mark.parametrize("layout", ["C", "F", ">f4"])
def test_a_large_cast_is_split_between_two_processes(tmp_path, monkeypatch, to, layout):
    """A default cast of a large file: the second half is cast by a forked process writing into
    the same temporary file; the file and the statistics are those of a cast in one thread
    (byte-swapped and Fortran-order inputs too, an odd number of chunks)."""
    forks = _split_everything(monkeypatch)
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((301, 117)) * 3e4).astype(np.float32)
    x[::7, ::5] = np.nan
    if layout == "F":
        x = np.asfortranarray(x)
    elif layout == ">f4":
        x = x.astype(">f4")
    p = tmp_path / "w.npy"
    np.save(p, x)
    progress = []
    rep = castfile.cast_file(p, tmp_path / "split.npy", to=to, chunk_bytes=4000, progress=progress.append)
    assert len(forks) == 1
    one = castfile.cast_file(p, tmp_path / "one.npy", to=to, chunk_bytes=4000, threads=1)
    assert len(forks) == 1
    assert (tmp_path / "split.npy").read_bytes() == (tmp_path / "one.npy").read_bytes()
    assert rep.stats == one.stats and rep.bytes_out == one.bytes_out
    want, st = tosa_cast.cast_array(np.ascontiguousarray(x).astype(np.float32), to, src="f32")
    assert _bits(np.ascontiguousarray(npyio.read_npy(tmp_path / "split.npy"))) == _bits(want)
    assert rep.stats == {k: int(v) for k, v in st.as_dict().items()}
    assert progress == sorted(progress) and progress[-1] == x.nbytes


def test_each_process_of_a_split_cast_casts_in_one_thread(tmp_path, monkeypatch):
    """Two processes already use two CPUs: each casts its chunks in one thread (a file that is not
    split is cast in `cast_array`'s default threads)."""
    _split_everything(monkeypatch)
    seen = []
    real = tosa_cast.Converter.__call__

    def each_chunk(*a, **kw):
        seen.append(kw.get("threads"))
        return real(*a, **kw)

    monkeypatch.setattr(tosa_cast.Converter, "__call__", each_chunk)
    p = tmp_path / "w.npy"
    np.save(p, np.arange(3000, dtype=np.float32))
    castfile.cast_file(p, tmp_path / "split.npy", to="f16", chunk_bytes=4000)
    assert seen and set(seen) == {1}
    seen.clear()
    monkeypatch.setattr(castfile, "SPLIT_MIN_BYTES", 1 << 40)
    castfile.cast_file(p, tmp_path / "whole.npy", to="f16", chunk_bytes=4000)
    assert seen and set(seen) == {None}
    assert (tmp_path / "split.npy").read_bytes() == (tmp_path / "whole.npy").read_bytes()


def test_a_failing_helper_process_fails_the_cast(tmp_path, monkeypatch):
    """The helper cannot write (a full disk): the cast fails with one message, exit 2, and
    leaves no output and no temporary file."""
    _split_everything(monkeypatch)

    def full(fd, data, offset):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(castfile, "_pwrite", full)
    p = tmp_path / "w.npy"
    np.save(p, np.arange(50000, dtype=np.float32))
    from promote_cli.errors import UsageError

    with pytest.raises(UsageError) as e:
        castfile.cast_file(p, tmp_path / "o.npy", to="f16", chunk_bytes=4000)
    assert e.value.exit_code == 2 and "o.npy: cannot write output: No space left on device" in str(e.value)
    assert sorted(os.listdir(tmp_path)) == ["w.npy"]


def test_an_interrupted_split_cast_leaves_nothing(tmp_path):
    """SIGINT or SIGTERM during a split cast: the helper is killed and reaped before the
    temporary file is removed; no output, nothing left behind."""
    import signal
    import time

    p = tmp_path / "w.npy"
    np.save(p, np.linspace(-1e5, 1e5, 1 << 21, dtype=np.float32))
    code = textwrap.dedent(
        """
        import sys
        from promote_cli.arrayio import castfile
        castfile.SPLIT_MIN_BYTES = 0
        castfile.os.sched_getaffinity = lambda pid: {0, 1}
        from promote_cli.arrayio import npy
        npy.DEFAULT_CHUNK_BYTES = 1 << 14
        from promote_cli.cli import run
        sys.argv[0] = "promote"
        run()
        """
    )
    for sig in (signal.SIGINT, signal.SIGTERM):
        proc = subprocess.Popen([sys.executable, "-c", code, "cast", str(p), "--to", "f16"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if any(".promote-tmp-" in n for n in os.listdir(tmp_path)):
                break
            time.sleep(0.005)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode in (0, 130, 143, -sig), err
        assert b"Traceback" not in err and len(err.splitlines()) <= 1, err
        left = sorted(os.listdir(tmp_path))
        assert left in (["w.npy"], ["w.f16.npy", "w.npy"]), left
        if proc.returncode == 0:
            assert np.load(tmp_path / "w.f16.npy").shape == (1 << 21,)
            os.unlink(tmp_path / "w.f16.npy")


def test_a_cast_with_no_process_to_be_had_is_done_in_one(tmp_path, monkeypatch):
    """fork fails (no memory, too many processes): the whole file is cast in this process."""
    _split_everything(monkeypatch)

    def no_fork():
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(castfile.os, "fork", no_fork)
    x = np.arange(50000, dtype=np.float32)
    np.save(tmp_path / "w.npy", x)
    rep = castfile.cast_file(tmp_path / "w.npy", tmp_path / "o.npy", to="f16", chunk_bytes=4000)
    assert np.array_equal(npyio.read_npy(tmp_path / "o.npy"), x.astype(np.float16))
    assert rep.stats["exact"] + rep.stats["rounded"] == x.size
    assert sorted(os.listdir(tmp_path)) == ["o.npy", "w.npy"]


@pytest.mark.parametrize("args, said", [
    (["cast"], "promote cast: Missing argument"), (["cast", "w.npy"], "promote cast: Missing option '--to'"),
    (["cast", "w.npy", "--to", "f16", "--mode", "x"], "promote cast: Invalid value for '--mode'"),
    (["rescale", "--bogus"], "promote rescale: No such option"),
    (["query", "--bogus"], "promote: No such option"),
])
def test_an_argument_error_speaks_as_the_command_s_other_diagnostics_do(args, said):
    code, out, err = run_cli(*args)
    assert code == 2 and out == "" and err.startswith(said) and len(err.splitlines()) == 1
    if "--bogus" in args:
        assert "--bogus" in err   # Click 8.2.0 says `No such option: --bogus`, later ones quote it


def test_a_missing_file_reads_the_same_in_every_command(tmp_path):
    """`PATH: cannot read: REASON`, whichever command was to read it."""
    missing = tmp_path / "gone"
    said = f"{missing}: cannot read: No such file or directory"
    for args, speaker in ((["cast", str(missing), "--to", "f16"], "promote cast"),
                          (["rescale", str(missing), "--to", "i8", "--scale", "0.1"], "promote rescale"),
                          (["expect", str(missing)], "promote")):
        code, out, err = run_cli(*args)
        assert code == 2 and out == "" and err == f"{speaker}: {said}\n", args
    code, out, err = run_cli("validate", str(missing))
    assert code == 2 and out == f"{said}\n"


@pytest.mark.parametrize("target", ["hif8", "hifloat8"])
def test_a_type_numpy_cannot_hold_is_refused_in_one_line(weights, target):
    """HiFloat8 has no numpy type (and TOSA no CAST to it): one line, exit 2, nothing written."""
    p, _ = weights
    before = sorted(os.listdir(p.parent))
    r = run(p, "--to", target)
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and "hif8" in r.stderr and "Traceback" not in r.stderr
    assert sorted(os.listdir(p.parent)) == before
