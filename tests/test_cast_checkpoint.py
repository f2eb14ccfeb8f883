"""`promote cast` of checkpoints: safetensors files and sharded directories with their index.

The checkpoints are written here byte by byte (the `safetensors` package is no dependency); each cast tensor
is compared with the `.npy` path's cast of the same array (`castfile.cast_file`), every other tensor and the
metadata byte for byte with the input. Hostile checkpoints are refused with one line and exit 2, every input
unchanged and nothing left behind.
"""

from __future__ import annotations

import json
import os
import struct
import tracemalloc

import ml_dtypes
import numpy as np
import pytest
from support import FRAMEWORK_ABSENT, error_lines, run_cli

from promote_cli.arrayio import castfile, checkpoint, sthead
from promote_cli.arrayio import npy as npyio
from promote_cli.arrayio.atomic import TEMP_MARK
from promote_cli.vocab.numpy_types import numpy_dtype

ST_NAMES = {"float32": "F32", "bfloat16": "BF16", "int64": "I64", "float16": "F16"}
METADATA = {"format": "pt", "note": "caf\u00e9 \"quoted\""}


def header_text(entries: dict, metadata=None) -> bytes:
    head = {} if metadata is None else {"__metadata__": metadata}
    head.update(entries)
    return json.dumps(head).encode("utf-8")


def raw_file(path, header: bytes, data: bytes, length: int | None = None) -> None:
    """A safetensors file: the length (`length`, to lie), the header, the data."""
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header) if length is None else length) + header + data)


def write_st(path, tensors: dict, metadata=None) -> None:
    entries, blobs, at = {}, [], 0
    for name, a in tensors.items():
        b = a.tobytes()
        entries[name] = {"dtype": ST_NAMES[str(a.dtype)], "shape": list(a.shape), "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    raw_file(path, header_text(entries, metadata), b"".join(blobs))


def tensors_of(path) -> tuple[sthead.Header, dict]:
    """A file's header and each tensor's bytes."""
    data = open(path, "rb").read()
    fd = os.open(path, os.O_RDONLY)
    try:
        header = sthead.read_header(fd, len(data), str(path))
    finally:
        os.close(fd)
    base = header.data_start
    return header, {t.name: (t, data[base + t.begin:base + t.end]) for t in header.tensors}


def snapshot(directory) -> dict:
    out = {}
    for root, _, files in os.walk(directory):
        for n in files:
            p = os.path.join(root, n)
            out[p] = open(p, "rb").read() if os.path.isfile(p) else None
    return out


@pytest.fixture
def sharded(tmp_path):
    """A 3-shard checkpoint with its index: f32 (NaN, inf, overflow for fp8, tiny values), bf16, i64."""
    rng = np.random.default_rng(7)
    w = (rng.standard_normal((32, 17)) * 300).astype(np.float32)
    w[0, :5] = [np.nan, np.inf, -np.inf, 1e-30, 1e6]
    shards = {
        "model-00001-of-00003.safetensors": {
            "embed.weight": w, "position_ids": np.arange(40, dtype=np.int64).reshape(1, 40)},
        "model-00002-of-00003.safetensors": {
            "layer.0.q": rng.standard_normal((8, 8)).astype(np.float32),
            "layer.0.norm": rng.standard_normal(8).astype(ml_dtypes.bfloat16)},
        "model-00003-of-00003.safetensors": {
            "lm_head.weight": (rng.standard_normal((5, 9)) * 1e-3).astype(np.float32),
            "lm_head.bias": np.zeros(0, np.float32), "step": np.array(3, np.int64)},
    }
    d = tmp_path / "ckpt"
    d.mkdir()
    weight_map = {}
    for name, ts in shards.items():
        write_st(d / name, ts, METADATA)
        weight_map.update({t: name for t in ts})
    index = {"metadata": {"total_size": sum(a.nbytes for ts in shards.values() for a in ts.values())},
             "weight_map": weight_map}
    (d / checkpoint.INDEX_NAME).write_text(json.dumps(index, indent=2))
    return d, shards


def npy_path_cast(tmp_path, array, to) -> bytes:
    """The bytes the `.npy` path gives for `array` cast to `to`."""
    src = tmp_path / "one.npy"
    npyio.write_npy(src, array, force=True)  # names bf16 as bfloat16 (np.save writes |V2)
    out = tmp_path / "one.out.npy"
    castfile.cast_file(src, out, to=to, force=True)
    return np.load(out).tobytes()


@pytest.mark.parametrize("to, args, cast_types", [
    ("bf16", ["--from", "f32"], {"f32"}),
    ("f8e4m3", ["--skip", "position_ids", "--skip", "step"], {"f32", "bf16"}),
])
def test_sharded_checkpoint_casts_bit_exact(tmp_path, sharded, to, args, cast_types):
    d, shards = sharded
    before = snapshot(d)
    out = tmp_path / f"out-{to}"
    code, stdout, stderr = run_cli("cast", str(d), "--to", to, "-o", str(out), "--format", "json", *args)
    assert code == 0, stderr
    assert snapshot(d) == before
    reports = [json.loads(line) for line in stdout.splitlines()]
    assert {r["tensor"] for r in reports} == {t for ts in shards.values() for t in ts}
    summary = json.loads(stderr)["summary"]
    assert summary["files"] == 3 and summary["tensors"] == len(reports)
    assert sorted(os.listdir(out)) == sorted(os.listdir(d))
    total = 0
    for name, ts in shards.items():
        in_header, ins = tensors_of(d / name)
        out_header, outs = tensors_of(out / name)
        assert out_header.metadata_raw == in_header.metadata_raw != b""
        assert list(outs) == list(ins)  # the input's data order
        for tname, a in ts.items():
            t, got = outs[tname]
            total += len(got)
            report = next(r for r in reports if r["tensor"] == tname)
            if ins[tname][0].dtype in cast_types:
                assert t.dtype == to and report["cast"] and report["to"] == to
                assert got == npy_path_cast(tmp_path, a, to)
                assert report["stats"]["exact"] + report["stats"]["rounded"] <= a.size
            else:
                assert (t.dtype, got) == (ins[tname][0].dtype, ins[tname][1]) and not report["cast"]
            assert t.shape == a.shape
    index = json.loads((out / checkpoint.INDEX_NAME).read_text())
    assert index["weight_map"] == json.loads((d / checkpoint.INDEX_NAME).read_text())["weight_map"]
    assert index["metadata"]["total_size"] == total
    assert not [n for n in os.listdir(out) if TEMP_MARK in n]


def test_reports_loss_statistics_and_errors(tmp_path):
    x = np.array([1.0, 1.0 + 2 ** -10, 1e-30, -3.0, 1e6, np.nan, 0.0], np.float32)
    write_st(tmp_path / "m.safetensors", {"x": x})
    code, stdout, stderr = run_cli("cast", str(tmp_path / "m.safetensors"), "--to", "f16", "--format", "json")
    assert code == 0, stderr
    r = json.loads(stdout)
    assert r["stats"]["underflow_zero"] == 1 and r["stats"]["overflow_inf"] == 1 and r["stats"]["nan_in"] == 1
    with np.errstate(over="ignore"):
        y = x.astype(np.float16).astype(np.float64)
    finite = np.isfinite(y) & np.isfinite(x)
    err = np.abs(y - x)[finite]
    assert r["max_abs_error"] == pytest.approx(err.max())
    nz = finite & (x != 0)
    assert r["max_rel_error"] == pytest.approx((np.abs(y - x)[nz] / np.abs(x[nz].astype(np.float64))).max())
    code, stdout, _ = run_cli("cast", str(tmp_path / "m.safetensors"), "--to", "f16", "--force")
    assert stdout.splitlines()[0] == "x (7): f32 -> f16, 7 elements"
    assert "1 underflowed to 0" in stdout and "max error" in stdout
    assert stdout.splitlines()[2].startswith(f"total: {tmp_path / 'm.safetensors'} -> {tmp_path / 'm.f16.safetensors'}")


def test_only_and_skip_choose_tensors(tmp_path):
    a = np.arange(6, dtype=np.float32)
    write_st(tmp_path / "m.safetensors", {"a.weight": a, "a.bias": a, "b.weight": a})
    code, stdout, stderr = run_cli("cast", str(tmp_path / "m.safetensors"), "--to", "bf16", "--only", "*.weight",
                                   "--skip", "b.*", "--format", "json")
    assert code == 0, stderr
    cast = {r["tensor"]: r["cast"] for r in map(json.loads, stdout.splitlines())}
    assert cast == {"a.weight": True, "a.bias": False, "b.weight": False}
    code, _, stderr = run_cli("cast", str(tmp_path / "m.safetensors"), "--to", "bf16", "--only", "nothing*",
                              "--force")
    assert code == 2 and "no tensor to cast" in stderr


def test_uncastable_tensor_refuses_the_run(tmp_path):
    write_st(tmp_path / "m.safetensors", {"w": np.ones(3, np.float32), "ids": np.arange(3, dtype=np.int64)})
    before = snapshot(tmp_path)
    code, stdout, stderr = run_cli("cast", str(tmp_path / "m.safetensors"), "--to", "bf16")
    assert code == 2 and stdout == ""
    assert error_lines(stderr) == [error_lines(stderr)[0]] and "--skip ids" in stderr and "'ids' (i64)" in stderr
    assert snapshot(tmp_path) == before


def test_never_overwrites_an_input(tmp_path, sharded):
    d, _ = sharded
    before = snapshot(d)
    code, _, stderr = run_cli("cast", str(d), "--to", "bf16", "--from", "f32", "-o", str(d), "--force")
    assert code == 2 and "refusing to overwrite the input" in stderr
    assert snapshot(d) == before


def _entry(dtype="F32", shape=(2,), offsets=(0, 8)):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}


HOSTILE = {
    "length past the file": (lambda p: raw_file(p, header_text({"x": _entry()}), b"\0" * 8, length=10 ** 6),
                             "runs past the end of the file"),
    "2 GiB header claim": (lambda p: raw_file(p, header_text({"x": _entry()}), b"\0" * 8, length=2 << 30),
                           "over the 100000000-byte limit"),
    "offsets past the file": (lambda p: raw_file(p, header_text({"x": _entry(offsets=(0, 8))}), b"\0" * 4),
                              "past the end of the file"),
    "overlapping offsets": (lambda p: raw_file(p, header_text({"x": _entry(), "y": _entry(offsets=(4, 12))}),
                                               b"\0" * 12), "overlaps another tensor"),
    "unknown dtype": (lambda p: raw_file(p, header_text({"x": _entry(dtype="F128")}), b"\0" * 8),
                      "unknown dtype 'F128'"),
    "shape/byte mismatch": (lambda p: raw_file(p, header_text({"x": _entry(shape=(3,))}), b"\0" * 8),
                            "needs 12 bytes"),
    "duplicate names": (lambda p: raw_file(
        p, b'{"x":' + json.dumps(_entry()).encode() + b',"x":' + json.dumps(_entry(offsets=(8, 16))).encode()
        + b"}", b"\0" * 16), "appears twice"),
    "not JSON": (lambda p: raw_file(p, b"{" * 5000, b""), "header is not"),
    "deep nesting": (lambda p: raw_file(p, b'{"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}", b""),
                     "header is not valid JSON"),
    "empty header": (lambda p: raw_file(p, b"", b""), "header is not a JSON object"),
    "metadata not strings": (lambda p: raw_file(p, header_text({"x": _entry()}, {"n": 1}), b"\0" * 8),
                             "__metadata__ must be an object of strings"),
    "trailing bytes": (lambda p: raw_file(p, header_text({"x": _entry()}), b"\0" * 9), "after the last tensor"),
    "shorter than the length": (lambda p: open(p, "wb").write(b"\1\0\0"), "shorter than the 8-byte"),
    "a FIFO": (lambda p: os.mkfifo(p), "is a FIFO"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_file_refused(tmp_path, case):
    make, message = HOSTILE[case]
    d = tmp_path / "in"
    d.mkdir()
    make(d / "m.safetensors")
    before = sorted(os.listdir(d)), {n: os.lstat(d / n).st_mtime_ns for n in os.listdir(d)}
    code, stdout, stderr = run_cli("cast", str(d / "m.safetensors"), "--to", "bf16", "--force")
    assert code == 2 and stdout == ""
    lines = error_lines(stderr)
    assert len(lines) == 1 and message in lines[0], stderr
    assert (sorted(os.listdir(d)), {n: os.lstat(d / n).st_mtime_ns for n in os.listdir(d)}) == before


@pytest.mark.parametrize("case", ["a FIFO", "overlapping offsets", "unknown dtype"])
def test_hostile_shard_leaves_nothing(tmp_path, sharded, case):
    d, _ = sharded
    target = d / "model-00002-of-00003.safetensors"
    target.unlink()
    HOSTILE[case][0](target)
    before = snapshot(d) if case != "a FIFO" else sorted(os.listdir(d))
    out = tmp_path / "out"
    code, stdout, stderr = run_cli("cast", str(d), "--to", "bf16", "--from", "f32", "-o", str(out))
    assert code == 2 and stdout == "" and len(error_lines(stderr)) == 1
    assert (snapshot(d) if case != "a FIFO" else sorted(os.listdir(d))) == before
    assert not out.exists()


@pytest.mark.parametrize("index, message", [
    ({"weight_map": {"x": "../evil.safetensors"}}, "is not a .safetensors file name"),
    ({"weight_map": {"embed.weight": "model-00001-of-00003.safetensors"}}, "missing from weight_map"),
    ({"weight_map": []}, "weight_map must be"),
])
def test_hostile_index_refused(tmp_path, sharded, index, message):
    d, _ = sharded
    (d / checkpoint.INDEX_NAME).write_text(json.dumps(index))
    before = snapshot(d)
    code, _, stderr = run_cli("cast", str(d), "--to", "bf16", "--from", "f32", "-o", str(tmp_path / "out"))
    assert code == 2 and message in stderr and len(error_lines(stderr)) == 1
    assert snapshot(d) == before and not (tmp_path / "out").exists()


def test_failure_while_writing_leaves_nothing(tmp_path, sharded, monkeypatch):
    """A shard that turns out bad after the first shards are written: no output takes its name."""
    d, _ = sharded
    out = tmp_path / "out"
    plan = checkpoint.plan(str(d), "bf16", from_="f32", output=str(out))
    victim = plan.shards[2].input
    with open(victim, "r+b") as f:  # changed after planning: refused when it is read
        f.seek(-1, 2)
        f.write(b"\1")
    with pytest.raises(Exception, match="changed since the cast was planned"):
        list(checkpoint.run(plan))
    assert not out.exists()


def test_memory_stays_bounded(tmp_path):
    """A checkpoint several times the chunk size casts with a peak of a few chunks (tracemalloc counts
    numpy's buffers)."""
    big = np.random.default_rng(1).standard_normal(12 << 20, dtype=np.float32)  # 48 MiB
    write_st(tmp_path / "m.safetensors", {"a": big, "b": big[: 1 << 20]})
    del big
    plan = checkpoint.plan(str(tmp_path / "m.safetensors"), "bf16")
    tracemalloc.start()
    try:
        reports = list(checkpoint.run(plan))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [r.elements for r in reports] == [12 << 20, 1 << 20]
    assert peak < 8 * checkpoint.CHUNK_BYTES, peak
    assert os.path.getsize(tmp_path / "m.bf16.safetensors") < 30 << 20


@pytest.mark.live
def test_safetensors_loads_the_output(tmp_path, sharded):
    """safetensors' own loader reads every output shard: the cast tensors as the .npy path casts them."""
    try:
        from safetensors import safe_open
        from safetensors.numpy import load_file
    except ImportError:
        pytest.skip(f"{FRAMEWORK_ABSENT} safetensors")
    d, shards = sharded
    out = tmp_path / "out"
    code, _, stderr = run_cli("cast", str(d), "--to", "bf16", "--from", "f32", "-o", str(out))
    assert code == 0, stderr
    for name, ts in shards.items():
        loaded = load_file(str(out / name))
        with safe_open(str(out / name), "np") as f:
            assert f.metadata() == METADATA
        for tname, a in ts.items():
            want = npy_path_cast(tmp_path, a, "bf16") if a.dtype == np.float32 else a.tobytes()
            assert loaded[tname].tobytes() == want and loaded[tname].shape == a.shape


@pytest.fixture
def archives(tmp_path):
    """Two .npz archives of the same arrays, members stored and deflated: f32 (C, Fortran, big-endian), i64."""
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((16, 9)) * 500).astype(np.float32)
    w[0, :3] = [np.nan, np.inf, 1e-30]
    arrays = {"w": w, "wf": np.asfortranarray(w), "wbig": w.astype(">f4"), "ids": np.arange(7)}
    np.savez(tmp_path / "plain.npz", **arrays)
    np.savez_compressed(tmp_path / "small.npz", **arrays)
    return arrays


@pytest.mark.parametrize("name", ["plain.npz", "small.npz"])
@pytest.mark.parametrize("to", ["bf16", "f8e4m3"])
def test_npz_casts_bit_exact(tmp_path, archives, name, to):
    import zipfile

    src = tmp_path / name
    before = src.read_bytes()
    code, stdout, stderr = run_cli("cast", str(src), "--to", to, "--from", "f32", "--format", "json")
    assert code == 0, stderr
    assert src.read_bytes() == before
    out = tmp_path / name.replace(".npz", f".{to}.npz")
    got = np.load(out)
    assert sorted(got.files) == sorted(archives)
    for key, a in archives.items():
        if a.dtype.kind == "f":
            assert got[key].tobytes() == npy_path_cast(tmp_path, a, to)
            assert got[key].flags.f_contiguous == (a.flags.f_contiguous and not a.flags.c_contiguous)
        else:
            assert got[key].dtype == a.dtype and got[key].tobytes() == a.tobytes()
    types = {i.filename: i.compress_type for i in zipfile.ZipFile(src).infolist()}
    assert {i.filename: i.compress_type for i in zipfile.ZipFile(out).infolist()} == types
    reports = {r["tensor"]: r for r in map(json.loads, stdout.splitlines())}
    assert reports["w"]["stats"]["nan_in"] == 1 and not reports["ids"]["cast"]


@pytest.mark.parametrize("make, message", [
    (lambda zf: (zf.writestr("x.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", 6) + b"{}    "),), "invalid .npy header"),
    (lambda zf: (zf.writestr("x.txt", b"hello"),), "is not a .npy array"),
    (lambda zf: (zf.writestr("x.npy", _npy_bytes(np.ones(4, np.float32))[:-4]),), "truncated"),
    (lambda zf: (zf.writestr("x.npy", _npy_bytes(np.ones(4, np.float32))),
                 zf.writestr("x.npy", _npy_bytes(np.ones(4, np.float32)))), "appears twice"),
    (lambda zf: (zf.writestr("x.npy", _npy_bytes(np.array([b"ab"]))),), "not numbers"),
])
def test_hostile_npz_refused(tmp_path, make, message):
    import warnings
    import zipfile

    p = tmp_path / "m.npz"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate name
        with zipfile.ZipFile(p, "w") as zf:
            make(zf)
    before = snapshot(tmp_path)
    code, stdout, stderr = run_cli("cast", str(p), "--to", "bf16")
    assert code == 2 and stdout == ""
    assert len(error_lines(stderr)) == 1 and message in stderr, stderr
    assert snapshot(tmp_path) == before


def test_not_a_zip_refused(tmp_path):
    (tmp_path / "m.npz").write_bytes(b"PK\3\4 not really")
    code, _, stderr = run_cli("cast", str(tmp_path / "m.npz"), "--to", "bf16")
    assert code == 2 and "not a readable .npz archive" in stderr and len(error_lines(stderr)) == 1
    assert os.listdir(tmp_path) == ["m.npz"]


def _npy_bytes(a) -> bytes:
    import io

    f = io.BytesIO()
    np.save(f, a)
    return f.getvalue()


def test_progress_counts_every_byte_and_an_interruption_leaves_nothing(tmp_path, sharded):
    d, _ = sharded
    out = tmp_path / "out"
    plan = checkpoint.plan(str(d), "bf16", from_="f32", output=str(out))
    seen = []
    list(checkpoint.run(plan, progress=seen.append, chunk_bytes=1024))
    assert seen == sorted(seen) and seen[-1] == plan.total_bytes and len(seen) > len(plan.shards)
    assert sorted(os.listdir(out)) == sorted(os.listdir(d))

    def interrupt(done):
        if done > plan.total_bytes // 2:
            raise KeyboardInterrupt

    other = tmp_path / "other"
    plan = checkpoint.plan(str(d), "bf16", from_="f32", output=str(other))
    with pytest.raises(KeyboardInterrupt):
        list(checkpoint.run(plan, progress=interrupt, chunk_bytes=1024))
    assert not other.exists()
    assert not [n for n in os.listdir(tmp_path) if TEMP_MARK in n]


def test_fast_path_and_click_agree(tmp_path):
    """The Click-free path (`python -m promote_cli`, which takes the common shapes) casts a checkpoint as the
    Click command does: the same report, exit code and output."""
    import subprocess
    import sys

    write_st(tmp_path / "m.safetensors", {"w": np.linspace(-1, 1, 50, dtype=np.float32),
                                          "ids": np.arange(3, dtype=np.int64)}, METADATA)
    argv = ["cast", "m.safetensors", "--to", "bf16", "--skip", "ids", "-o", "fast.safetensors"]
    done = subprocess.run([sys.executable, "-m", "promote_cli", *argv], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        code, stdout, stderr = run_cli(*argv[:-1], "click.safetensors")
    finally:
        os.chdir(cwd)
    assert (done.returncode, done.stdout.replace("fast.", "click."), done.stderr) == (code, stdout, stderr) == \
        (0, stdout, "")
    assert (tmp_path / "fast.safetensors").read_bytes() == (tmp_path / "click.safetensors").read_bytes()


@pytest.mark.parametrize("to, special", [("f16", False), ("f16", True), ("bf16", False), ("f8e4m3", False)])
def test_largest_errors_and_underflow_match_a_float64_reference(tmp_path, to, special):
    """Chunk by chunk (the fast way for finite chunks, the long way for one with a NaN or an infinity), the
    largest errors and the underflow count are those of the whole tensor, computed in float64."""
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(5000) * 10.0 ** rng.integers(-9, 3, 5000)).astype(np.float32)
    x[::97] = 0
    x[x > 400] = 400  # finite in f8e4m3 too
    if special:
        x[4321] = np.inf
        x[17] = np.nan
    write_st(tmp_path / "m.safetensors", {"x": x})
    plan = checkpoint.plan(str(tmp_path / "m.safetensors"), to)
    (report,) = checkpoint.run(plan, chunk_bytes=1024)
    with np.errstate(invalid="ignore", over="ignore"):
            y = np.frombuffer(npy_path_cast(tmp_path, x, to), dtype=numpy_dtype(to)).astype(np.float64)
    x64 = x.astype(np.float64)
    fin = np.isfinite(x64) & np.isfinite(y)
    diff = np.abs(np.where(fin, y, 0) - np.where(fin, x64, 0))
    nz = fin & (x64 != 0)
    assert report.max_abs_error == pytest.approx(diff[fin].max(), rel=1e-6)
    assert report.max_rel_error == pytest.approx((diff[nz] / np.abs(x64[nz])).max(), rel=1e-6)
    underflow = np.count_nonzero(nz & (y == 0))
    assert report.stats["underflow_zero"] == underflow and (underflow > 0) == (to != "bf16")  # bf16 has f32's range


def test_only_regular_files_are_replaced_and_never_an_input_through_a_link(tmp_path):
    write_st(tmp_path / "m.safetensors", {"w": np.ones(4, np.float32)})
    before = (tmp_path / "m.safetensors").read_bytes()
    os.mkfifo(tmp_path / "fifo")
    code, _, stderr = run_cli("cast", str(tmp_path / "m.safetensors"), "--to", "bf16", "-o", str(tmp_path / "fifo"),
                              "--force")
    assert code == 2 and "is a FIFO; only a regular file is ever replaced" in stderr
    assert os.path.exists(tmp_path / "fifo") and not os.path.isfile(tmp_path / "fifo")
    os.symlink("m.safetensors", tmp_path / "link.safetensors")
    code, _, stderr = run_cli("cast", str(tmp_path / "m.safetensors"), "--to", "bf16", "-o",
                              str(tmp_path / "link.safetensors"), "--force")
    assert code == 2 and "refusing to overwrite the input" in stderr
    assert (tmp_path / "m.safetensors").read_bytes() == before
    code, _, stderr = run_cli("cast", str(tmp_path / "m.safetensors"), "--to", "bf16")
    assert code == 0
    code, _, stderr = run_cli("cast", str(tmp_path / "m.safetensors"), "--to", "bf16")
    assert code == 2 and "already exists (use --force to overwrite)" in stderr
    assert not [n for n in os.listdir(tmp_path) if TEMP_MARK in n]


def test_fail_on_applies_to_the_checkpoint_totals(tmp_path):
    write_st(tmp_path / "m.safetensors", {"a": np.ones(3, np.float32), "b": np.array([1e6], np.float32)})
    code, _, stderr = run_cli("cast", str(tmp_path / "m.safetensors"), "--to", "f16", "--fail-on", "nan",
                              "--fail-on", "overflow")
    assert code == 1 and error_lines(stderr) == [f"promote cast: {tmp_path / 'm.safetensors'}: --fail-on overflow"]
    assert (tmp_path / "m.f16.safetensors").is_file()  # written all the same, as for a .npy file
    code, _, _ = run_cli("cast", str(tmp_path / "m.safetensors"), "--to", "f16", "--fail-on", "nan", "--force")
    assert code == 0


def test_a_checkpoint_is_cast_alone(tmp_path):
    write_st(tmp_path / "m.safetensors", {"w": np.ones(4, np.float32)})
    np.save(tmp_path / "w.npy", np.ones(4, np.float32))
    code, stdout, stderr = run_cli("cast", str(tmp_path / "m.safetensors"), str(tmp_path / "w.npy"), "--to", "f16")
    assert code == 2 and stdout == "" and error_lines(stderr) == [
        "promote cast: a checkpoint (a .safetensors or .npz file, or a directory of shards) is cast alone: one "
        "input per run"]
    code, _, stderr = run_cli("cast", str(tmp_path / "w.npy"), "--to", "f16", "--only", "w")
    assert code == 2 and "--only and --skip choose the tensors of a checkpoint" in stderr
    assert sorted(os.listdir(tmp_path)) == ["m.safetensors", "w.npy"]
