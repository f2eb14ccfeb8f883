"""`promote cast` never damages a file, never traces back, never hangs.

The contract: no command ever changes a file it reads, replaces anything but a regular
file, or leaves a partial output; every path and header is treated as hostile. Each test
here is one way that once went wrong.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import ml_dtypes  # noqa: F401  (np.load resolves our bf16/fp8 outputs)
import numpy as np
import pytest
from click.testing import CliRunner

import promote_cli
from promote_cli.arrayio import castfile
from promote_cli.arrayio import npy as npyio
from promote_cli.cli.commands.cast import cast
from promote_cli.numerics import cast as tosa_cast
from promote_cli.numerics.legality import CastRequest

SOURCE = Path(promote_cli.__file__).resolve().parents[1]  # the checkout whose promote_cli is tested


def run(*args):
    return CliRunner().invoke(cast, [os.fspath(a) for a in args], catch_exceptions=False)


def one_line_error(r, code=2):
    assert r.exit_code == code, (r.exit_code, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    assert len(r.stderr.splitlines()) == 1, r.stderr
    return r.stderr


def digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def leftovers(d: Path) -> list[str]:
    return [n for n in os.listdir(d) if npyio.TEMP_MARK in n]


def raw_npy(path: Path, header: str | bytes, data: bytes = b"", version=(1, 0)) -> Path:
    """A .npy file with the header text given verbatim (magic, version and length added)."""
    text = header.encode("latin-1") if isinstance(header, str) else header
    if len(text) > 0xFFFF and version == (1, 0):
        version = (2, 0)
    length = len(text).to_bytes(2 if version == (1, 0) else 4, "little")
    path.write_bytes(b"\x93NUMPY" + bytes(version) + length + text + data)
    return path


def f32(path: Path, values=(1.0, 2.5, -3.0)) -> Path:
    with open(path, "wb") as fp:  # np.save(name) would add .npy to x.NPY
        np.save(fp, np.array(values, dtype=np.float32))
    return path


# --------------------------------------------------------------------------- inputs are never written


def test_an_input_that_is_another_inputs_default_output_is_never_written(tmp_path):
    w = f32(tmp_path / "w.npy")
    wf = f32(tmp_path / "w.f16.npy", (7.0, 8.0))  # an input, and w.npy's default output
    before = digest(wf)
    r = run(w, wf, "--to", "f16", "--force")
    err = one_line_error(r)
    assert "w.f16.npy" in err and "input" in err and "nothing written" in err
    assert digest(wf) == before
    assert sorted(os.listdir(tmp_path)) == ["w.f16.npy", "w.npy"]  # w.f16.f16.npy not written either


def test_an_input_whose_own_cast_is_refused_is_still_never_written(tmp_path):
    w = f32(tmp_path / "w.npy")
    wf = f32(tmp_path / "w.f16.npy", (7.0,))
    os.mkfifo(tmp_path / "w.f16.f16.npy")  # w.f16.npy's own output: refused
    before = digest(wf)
    err = one_line_error(run(w, wf, "--to", "f16", "--force"))
    assert "refusing to overwrite the input file" in err
    assert digest(wf) == before


@pytest.mark.parametrize("how", ["hardlink", "symlink", "dotted"])
def test_an_output_reaching_another_input_by_another_name_is_refused(tmp_path, how):
    src = f32(tmp_path / "a.npy")
    other = f32(tmp_path / "b.npy", (4.0,))
    before = digest(other)
    target = tmp_path / "out.npy"
    if how == "hardlink":
        os.link(other, target)
    elif how == "symlink":
        target.symlink_to(other)
    else:
        target = f"{tmp_path}/./b.npy"
    with pytest.raises(castfile.UsageError, match="refusing to overwrite the input file.*b.npy.*cast of .*a.npy; nothing written"):
        list(castfile.cast_files([str(src), str(other)], [str(target), None], to="f16", force=True, jobs=1))
    assert digest(other) == before
    assert not (tmp_path / "b.f16.npy").exists()
    assert leftovers(tmp_path) == []


def test_the_same_file_twice_or_in_two_cases_is_one_collision(tmp_path):
    x = f32(tmp_path / "x.npy")
    big = f32(tmp_path / "x.NPY", (9.0, 9.0, 9.0, 9.0))
    r = run(x, big, "--to", "f16", "--force")
    err = one_line_error(r)
    assert "x.f16.npy" in err and "nothing written" in err
    assert not (tmp_path / "x.f16.npy").exists()
    r = run(x, tmp_path, "--to", "f16")  # x.npy given and found in its directory
    one_line_error(r)
    assert not (tmp_path / "x.f16.npy").exists()
    assert leftovers(tmp_path) == []


# --------------------------------------------------------------------------- only regular files are replaced


def _special_outputs(tmp_path: Path) -> dict:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    out = {"fifo": fifo}
    link = tmp_path / "link-to-fifo.npy"
    link.symlink_to(fifo)
    out["symlink to a FIFO"] = link
    dangling = tmp_path / "dangling.npy"
    dangling.symlink_to(tmp_path / "nowhere" / "x.npy")
    out["dangling symlink"] = dangling
    loop = tmp_path / "loop.npy"
    loop.symlink_to(loop)
    out["symlink loop"] = loop
    proc = tmp_path / "proc.npy"
    proc.symlink_to("/proc/self/fd/0")
    out["symlink into /proc"] = proc
    if os.geteuid() == 0:  # a /dev/null of our own: a character device node
        node = tmp_path / "null"
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        out["character device"] = node
    return out


def test_force_never_replaces_a_special_file(tmp_path):
    src = f32(tmp_path / "a.npy")
    for name, target in _special_outputs(tmp_path).items():
        before = os.lstat(target)
        r = run(src, "--to", "f16", "-o", target, "--force")
        err = one_line_error(r)
        assert "--force" not in err, name
        after = os.lstat(target)
        assert (after.st_mode, after.st_ino, after.st_rdev) == (before.st_mode, before.st_ino, before.st_rdev), name
    assert leftovers(tmp_path) == []


def test_force_follows_a_symlink_to_a_regular_file_and_keeps_the_link(tmp_path):
    src = f32(tmp_path / "a.npy")
    real = tmp_path / "real.npy"
    real.write_bytes(b"old")
    link = tmp_path / "link.npy"
    link.symlink_to(real)
    r = run(src, "--to", "f16", "-o", link, "--force")
    assert r.exit_code == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert np.load(real).dtype == np.float16


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444])
def test_force_keeps_the_replaced_files_mode(tmp_path, mode):
    src = f32(tmp_path / "a.npy")
    out = tmp_path / "a.f16.npy"
    out.write_bytes(b"old")
    os.chmod(out, mode)
    owner = (out.stat().st_uid, out.stat().st_gid)
    if os.geteuid() == 0:  # root may keep another user's ownership too
        os.chown(out, 4321, 4322)
        owner = (4321, 4322)
    r = run(src, "--to", "f16", "--force")
    assert r.exit_code == 0, r.stderr
    assert stat.S_IMODE(out.stat().st_mode) == mode
    assert (out.stat().st_uid, out.stat().st_gid) == owner
    assert np.load(out).dtype == np.float16


def test_the_temporary_file_is_private_while_written(tmp_path, monkeypatch):
    src = f32(tmp_path / "a.npy")
    out = tmp_path / "a.f16.npy"
    out.write_bytes(b"old")
    os.chmod(out, 0o600)
    from promote_cli.arrayio import atomic

    seen = []
    real = atomic._write

    def spy(fd, data):
        seen.append(stat.S_IMODE(os.fstat(fd).st_mode))
        return real(fd, data)

    monkeypatch.setattr(atomic, "_write", spy)
    assert castfile.cast_file(src, to="f16", force=True).elements == 3
    assert seen and all(m == 0o600 for m in seen)


# --------------------------------------------------------------------------- headers


IMPOSSIBLE_HEADERS = {
    "negative shape": "{'descr': '<f4', 'fortran_order': False, 'shape': (-1, -1), }",
    "bool shape": "{'descr': '<f4', 'fortran_order': False, 'shape': (True,), }",
    "65 dims": "{'descr': '<f4', 'fortran_order': False, 'shape': (" + "1, " * 65 + "), }",
    "list shape": "{'descr': '<f4', 'fortran_order': False, 'shape': [3], }",
    "int fortran_order": "{'descr': '<f4', 'fortran_order': 0, 'shape': (3,), }",
    "extra key": "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}",
    "missing key": "{'descr': '<f4', 'shape': (3,), }",
    "dict descr": "{'descr': {'names': ['a'], 'formats': ['<f4']}, 'fortran_order': False, 'shape': (3,), }",
    "unbalanced": "{'descr': '<f4', 'fortran_order': False, 'shape': (3,, }",
    "unbalanced 2": "{'descr': '<f4', 'fortran_order': False, 'shape': ((3,), }",
    "nested minus": "{'descr': '<f4', 'fortran_order': False, 'shape': (" + "-" * 100_000 + "3,), }",
    "nested minus, short": "{'descr': '<f4', 'fortran_order': False, 'shape': (" + "-" * 60_000 + "3,), }",
    "nested brackets": "[" * 100_000 + "]" * 100_000,
    "nested brackets, short": "{'descr': '<f4', 'fortran_order': False, 'shape': " + "(" * 30_000 + ")" * 30_000 + "}",
    "overflowing shape": "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }",
    "huge int": "{'descr': '<f4', 'fortran_order': False, 'shape': (" + "9" * 5000 + ",), }",
    "code": "{'descr': __import__('os').getcwd(), 'fortran_order': False, 'shape': (3,), }",
    "subarray descr": "{'descr': '(2,)<f4', 'fortran_order': False, 'shape': (3,), }",
    "zero-size descr": "{'descr': 'V0', 'fortran_order': False, 'shape': (3,), }",
    "not a dict": "('<f4', False, (3,))",
    "empty": "",
}


@pytest.mark.parametrize("name", sorted(IMPOSSIBLE_HEADERS))
def test_impossible_headers_are_one_line_errors(tmp_path, name):
    p = raw_npy(tmp_path / "h.npy", IMPOSSIBLE_HEADERS[name] + "\n", bytes(12))
    before = digest(p)
    r = run(p, "--to", "f16")
    err = one_line_error(r)
    assert "h.npy" in err
    assert sorted(os.listdir(tmp_path)) == ["h.npy"]
    assert digest(p) == before


def test_a_v3_header_is_read_without_numpys_private_modules(tmp_path):
    text = b"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n"
    p = raw_npy(tmp_path / "v3.npy", text, np.array([1.5, -2], np.float32).tobytes(), version=(3, 0))
    assert npyio.read_npy(p).tolist() == [1.5, -2.0]
    source = (SOURCE / "promote_cli" / "arrayio" / "npy.py").read_text()
    assert "_format_impl" not in source and "numpy.lib import format" not in source


def test_trailing_bytes_are_refused(tmp_path):
    p = f32(tmp_path / "t.npy")
    with open(p, "ab") as fp:
        np.save(fp, np.ones(2, np.float32))  # a second array appended: np.load would read the first
    err = one_line_error(run(p, "--to", "f16"))
    assert "after the" in err
    assert not (tmp_path / "t.f16.npy").exists()


def test_a_file_replaced_after_its_header_was_read_is_not_mixed(tmp_path, monkeypatch):
    a = f32(tmp_path / "a.npy", np.arange(1000, dtype=np.float32))
    b = tmp_path / "b.npy"
    np.save(b, np.full(1000, 7.0, np.float32))
    real = CastRequest.check  # called between reading the header and reading the data

    def swap(*args, **kw):
        os.replace(b, a)
        return real(*args, **kw)

    monkeypatch.setattr(CastRequest, "check", swap)
    r = run(a, "--to", "f16", "-o", tmp_path / "o.npy")
    # never a mix: the cast of the file whose header was read, or an error and no output
    if r.exit_code == 0:
        assert np.load(tmp_path / "o.npy").tolist() == np.arange(1000, dtype=np.float16).tolist()
    else:
        assert "changed while being read" in one_line_error(r)
        assert not (tmp_path / "o.npy").exists()
    assert leftovers(tmp_path) == []


def test_a_file_changed_in_place_while_read_is_an_error(tmp_path, monkeypatch):
    a = f32(tmp_path / "a.npy", np.arange(1000, dtype=np.float32))
    real = CastRequest.check

    def scribble(*args, **kw):
        with open(a, "r+b") as fp:
            fp.seek(-8, os.SEEK_END)
            fp.write(np.float32([1e9, 1e9]).tobytes())
        return real(*args, **kw)

    monkeypatch.setattr(CastRequest, "check", scribble)
    err = one_line_error(run(a, "--to", "f16"))
    assert "changed while being read" in err
    assert not (tmp_path / "a.f16.npy").exists()
    assert leftovers(tmp_path) == []


# --------------------------------------------------------------------------- no hangs


def _promote(*args: bytes | str, cwd: Path, timeout: float = 30):
    code = "import sys; from promote_cli.cli import run; sys.argv[0] = 'promote'; run()"
    env = dict(os.environ, PYTHONPATH=str(SOURCE), LC_ALL="C.UTF-8")
    return subprocess.run(
        [sys.executable, "-c", code, "cast", *args], cwd=cwd, capture_output=True, timeout=timeout, env=env
    )


def test_a_fifo_input_is_refused_not_waited_on(tmp_path):
    os.mkfifo(tmp_path / "p.npy")
    proc = _promote("p.npy", "--to", "f16", cwd=tmp_path)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "FIFO" in err and len(err.splitlines()) == 1, err
    d = tmp_path / "d"
    d.mkdir()
    f32(d / "a.npy")
    os.mkfifo(d / "b.npy")
    proc = _promote("d", "--to", "f16", cwd=tmp_path)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "b.npy" in err and "FIFO" in err and len(err.splitlines()) == 1, err
    assert (d / "a.f16.npy").exists()  # the regular file is still cast


def test_jobs_is_bounded(tmp_path, monkeypatch):
    cpus = os.cpu_count() or 1
    assert castfile.job_count(10**12, 40) == min(cpus, 40, castfile.MAX_JOBS)
    assert castfile.job_count(10**12, 1) == 1
    files = [f32(tmp_path / f"f{i}.npy") for i in range(40)]
    asked = []

    class Recorder:
        def __init__(self, max_workers=None, **kw):
            asked.append(max_workers)
            raise RuntimeError("recorded")

    import concurrent.futures

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Recorder)
    try:
        outcomes = list(castfile.cast_files([str(f) for f in files], to="f16", jobs=10**12))
    except RuntimeError:  # a pool was asked for: how big?
        assert asked == [min(cpus, castfile.MAX_JOBS)]
    else:  # one CPU: cast in this process
        assert cpus == 1 and len(outcomes) == 40


# --------------------------------------------------------------------------- names and messages


def test_a_non_utf8_name_is_shown_escaped(tmp_path):
    name = b"w\xff\n.npy"
    with open(os.path.join(os.fsencode(tmp_path), name), "wb") as fp:
        np.save(fp, np.ones(3, np.float32))
    proc = _promote(name, "--to", "f16", cwd=tmp_path)
    out = proc.stdout.decode("utf-8")
    assert proc.returncode == 0, proc.stderr
    assert out.count("\n") == 2 and "w\\xff\\n.npy -> w\\xff\\n.f16.npy" in out
    proc = _promote(name, "--to", "f16", cwd=tmp_path)  # exists: a one-line error, still escaped
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 2 and err.count("\n") == 1 and "w\\xff\\n.f16.npy" in err
    proc = _promote(b"missing\xfe.npy", "--to", "f16", cwd=tmp_path)
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 2 and "Traceback" not in err and "missing\\xfe.npy" in err


def test_printable_escapes_only_what_breaks_a_line():
    from promote_cli.errors import one_line as printable

    assert printable("a b/ü.npy") == "a b/ü.npy"
    assert printable("a\nb\tc\r\x1b\x7f") == "a\\nb\\tc\\r\\x1b\\x7f"
    assert printable(os.fsdecode(b"\xff\xfe")) == "\\xff\\xfe"


def test_an_existing_directory_output_does_not_suggest_force(tmp_path):
    src = f32(tmp_path / "a.npy")
    (tmp_path / "outdir").mkdir()
    for extra in ([], ["--force"]):
        err = one_line_error(run(src, "--to", "f16", "-o", tmp_path / "outdir", *extra))
        assert "is a directory" in err and "--force" not in err


@pytest.mark.parametrize("chunk", [None, 4096])  # one chunk; many, written by a thread
def test_a_full_disk_names_the_output_never_the_input_or_a_temporary_file(tmp_path, monkeypatch, chunk):
    from promote_cli.arrayio import atomic

    if chunk:
        monkeypatch.setattr(npyio, "DEFAULT_CHUNK_BYTES", chunk)

    src = f32(tmp_path / "a.npy", np.arange(100_000, dtype=np.float32))
    written = []

    def full(fd, data):
        if sum(written) > 1000:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = os.write(fd, data[: max(1, len(data) // 4)])  # short writes, then none
        written.append(n)
        return n

    monkeypatch.setattr(atomic, "_write", full)
    err = one_line_error(run(src, "--to", "f16", "-o", tmp_path / "out.npy"))
    assert "out.npy: cannot write output: No space left on device" in err
    assert npyio.TEMP_MARK not in err and "a.npy" not in err
    assert sorted(os.listdir(tmp_path)) == ["a.npy"]


def test_an_interrupted_run_says_which_outputs_it_kept(tmp_path, monkeypatch):
    for name in "abc":
        f32(tmp_path / f"{name}.npy")
    real = tosa_cast.Converter.__call__
    calls = []

    def interrupt_third_file(*a, **k):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(tosa_cast.Converter, "__call__", interrupt_third_file)
    r = CliRunner().invoke(cast, [str(tmp_path), "--to", "f16", "-j", "1"])
    assert r.exit_code == 130
    err = r.stderr.splitlines()[-1]
    assert "kept 2 finished outputs" in err and "a.f16.npy" in err and "b.f16.npy" in err
    assert "no output" not in err
    assert sorted(n for n in os.listdir(tmp_path) if n.endswith(".f16.npy")) == ["a.f16.npy", "b.f16.npy"]
    assert leftovers(tmp_path) == []


def test_newlines_in_paths_stay_on_one_line(tmp_path):
    src = f32(tmp_path / "a\nb.npy")
    r = run(src, "--to", "f16", "--format", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["input"] == str(src)  # JSON keeps the name exactly
    r = run(src, "--to", "f16")
    err = one_line_error(r)
    assert "a\\nb.f16.npy" in err


@pytest.mark.parametrize("make", ["dangling", "loop"])
def test_an_input_that_cannot_be_stated_says_cannot_read(tmp_path, make):
    """Planning a cast states each input with the same check (and the same words) as opening it: `IN: cannot
    read: REASON`, one line, exit 2, nothing written."""
    src = tmp_path / "in.npy"
    src.symlink_to(tmp_path / "nowhere" / "x.npy" if make == "dangling" else src)
    r = run(src, "--to", "f16")
    err = one_line_error(r)
    assert r.exit_code == 2 and err.startswith(f"promote cast: {src}: cannot read: "), err
    assert leftovers(tmp_path) == []
