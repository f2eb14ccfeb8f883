"""A generated hostile-input suite for `promote cast`.

A seeded generator (the seed is printed in every failure, so a case replays) builds:
mutated `.npy` headers and data, lying headers (size, dtype, shape), header texts for the
bounded literal parser, special files (FIFOs, directories, symlink loops, dangling links,
device nodes), and hostile output paths (existing inputs by other names, collisions, case
variants, non-UTF-8 names, newlines). Every case asserts: no traceback, no input changed
(hash before and after), no special file replaced, every output NumPy can load (with
ml_dtypes imported) and equal to the in-memory cast of what NumPy reads from the input,
no temporary file left, and a bounded run time. The case counts are asserted, and their
sum is at least 10,000.
"""

from __future__ import annotations

import ast
import faulthandler
import hashlib
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import ml_dtypes  # noqa: F401  (np.load resolves bf16/fp8/int4 outputs)
import numpy as np
import pytest
from click.testing import CliRunner

import promote_cli
from promote_cli.arrayio import castfile, literal
from promote_cli.arrayio import npy as npyio
from promote_cli.cli.commands.cast import cast
from promote_cli.errors import UsageError
from promote_cli.numerics import cast as tosa_cast
from promote_cli.vocab.numpy_types import numpy_dtype

SEED = 20261122
N_MUTATED = 8000  # mutated .npy files through cast_file
N_LYING = 2000  # well-formed headers that lie about shape, dtype or size
N_TEXTS = 4000  # header texts through the literal parser, against ast.literal_eval
N_PATHS = 1500  # CLI runs over hostile files and paths (several files each)
N_SIGNALS = 6  # subprocess runs interrupted by SIGINT/SIGTERM
CASE_SECONDS = 10.0  # the longest any single case may take

SOURCE = Path(promote_cli.__file__).resolve().parents[1]
TARGETS = ("f16", "bf16", "f8e4m3", "f8e5m2", "i8", "i4", "f32", "u16", "bool")


def test_suite_size():
    assert N_MUTATED + N_LYING + N_TEXTS + N_PATHS + N_SIGNALS >= 10_000


TEST_SECONDS = 120  # a test still running after this has hung: the run is stopped with tracebacks


@pytest.fixture
def work(tmp_path):
    """A scratch directory, on a tmpfs when there is one (fsync there is cheap); a hang
    anywhere in the test ends the test run (with every thread's traceback) instead of
    blocking it forever."""
    faulthandler.dump_traceback_later(TEST_SECONDS, exit=True)
    shm = Path("/dev/shm")
    try:
        if shm.is_dir() and os.access(shm, os.W_OK):
            d = Path(tempfile.mkdtemp(prefix="promote-hostile-", dir=shm))
            try:
                yield d
            finally:
                shutil.rmtree(d, ignore_errors=True)
        else:
            yield tmp_path
    finally:
        faulthandler.cancel_dump_traceback_later()


def sha(p) -> str:
    with open(p, "rb") as fp:
        return hashlib.sha256(fp.read()).hexdigest()


def leftovers(d: Path) -> list:
    return [os.path.join(r, n) for r, _, names in os.walk(d) for n in names if npyio.TEMP_MARK in n]


# --------------------------------------------------------------------------- valid bases


def _bases() -> list[bytes]:
    """Valid .npy files of many kinds, as bytes."""
    import io

    arrays = [
        np.arange(12, dtype="<f4").reshape(3, 4) / 7,
        np.asfortranarray(np.arange(6, dtype=">f8").reshape(2, 3)),
        np.array([0, -1, 127, -128], dtype=np.int8),
        np.array([1, 65535, 7], dtype=">u2"),
        np.array([True, False, True]),
        np.array(2.5, dtype=np.float16),
        np.zeros((0, 3), dtype=np.float32),
        np.array([1e30, -np.inf, np.nan, 1e-40], dtype=np.float32),
        np.arange(5, dtype=np.int64) * 1000003,
    ]
    out = []
    for a in arrays:
        buf = io.BytesIO()
        np.save(buf, a)
        out.append(buf.getvalue())
    for name in ("bf16", "f8e4m3", "i4"):  # ml_dtypes descrs, as our writer names them
        a = np.array([0.5, -2, 3], dtype=np.float32).astype(numpy_dtype(name))
        out.append(npyio.header_bytes(a.shape, False, a.dtype) + a.tobytes())
    # versions 2.0 and 3.0 of one array
    a = np.arange(4, dtype="<i2")
    for version in ((2, 0), (3, 0)):
        text = b"{'descr': '<i2', 'fortran_order': False, 'shape': (4,), }\n"
        out.append(b"\x93NUMPY" + bytes(version) + len(text).to_bytes(4, "little") + text + a.tobytes())
    return out


BASES = _bases()
ALPHABET = b"()[]{}',:-+0123456789 .TrueFalseNone<>|=fiuVcb\\\n\r\t\x00\xff\x93\"L_"


def split(data: bytes):
    """(magic+version, length field, header text, data) of a well-formed file."""
    v = data[6:8]
    n = 2 if v == b"\x01\x00" else 4
    hlen = int.from_bytes(data[8 : 8 + n], "little")
    return data[:8], n, data[8 + n : 8 + n + hlen], data[8 + n + hlen :]


def join(prefix: bytes, n: int, text: bytes, body: bytes) -> bytes:
    if n == 2 and len(text) > 0xFFFF:
        return prefix[:6] + b"\x02\x00" + len(text).to_bytes(4, "little") + text + body
    return prefix + len(text).to_bytes(n, "little") + text + body


def mutate(rng: random.Random, data: bytes) -> bytes:
    """One to three random mutations, header-aware or raw bytes."""
    for _ in range(rng.randint(1, 3)):
        prefix, n, text, body = split(data) if len(data) > 12 and data[:6] == b"\x93NUMPY" else (None, 0, b"", b"")
        kind = rng.choice((0, 1, 2, 3, 4, 5, 6, 6, 6, 7, 8, 9))
        if prefix is None or kind == 0:  # raw byte edits anywhere
            b = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                if b and rng.random() < 0.5:
                    b[rng.randrange(len(b))] = rng.choice(ALPHABET)
                else:
                    b.insert(rng.randint(0, len(b)), rng.choice(ALPHABET))
            data = bytes(b)
        elif kind in (1, 2, 3):  # header text edits, length field kept right
            t = bytearray(text)
            for _ in range(rng.randint(1, 3)):
                op = rng.randrange(3)
                i = rng.randint(0, max(len(t) - 1, 0))
                if op == 0 and t:
                    t[i] = rng.choice(ALPHABET)
                elif op == 1:
                    t[i:i] = bytes(rng.choice(ALPHABET) for _ in range(rng.randint(1, 3)))
                elif t:
                    del t[i : i + rng.randint(1, 4)]
            data = join(prefix, n, bytes(t), body)
        elif kind == 4:  # a wrong length field
            hlen = len(text) + rng.choice([-3, -1, 1, 2, 64, 1 << 15, (1 << (8 * n)) - 1 - len(text)])
            data = prefix + min(max(0, hlen), (1 << (8 * n)) - 1).to_bytes(n, "little") + text + body
        elif kind == 5:  # truncated or extended file
            if rng.random() < 0.5:
                data = data[: rng.randint(0, len(data))]
            else:
                data = data + bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif kind == 6:  # data bytes edited (the header stays true)
            b = bytearray(body)
            for _ in range(rng.randint(1, 4)):
                if b:
                    b[rng.randrange(len(b))] = rng.randrange(256)
            data = prefix + len(text).to_bytes(n, "little") + text + bytes(b)
        elif kind == 7:  # deep nesting or long runs of signs
            piece = rng.choice([b"(", b"[", b"{", b"-", b"+", b"((", b"[("]) * rng.choice([10, 100, 5000, 40000])
            i = rng.randint(0, len(text))
            data = join(prefix, n, text[:i] + piece + text[i:], body)
        elif kind == 8:  # another version byte
            data = data[:6] + bytes([rng.choice([0, 1, 2, 3, 4, 255]), rng.choice([0, 1])]) + data[8:]
        else:  # the header replaced by a generated one (often lying)
            data = join(prefix, n, lying_header(rng, text), body)
    return data


_ITEMSIZE = {"<f4": 4, ">f4": 4, "<f2": 2, "|i1": 1, "<i2": 2, ">u2": 2, "<i8": 8, "|b1": 1, "<c8": 8, "|V2": 2,
             "|V1": 1, "<f1": 1, "bfloat16": 2, "float8_e4m3fn": 1, "float8_e5m2": 1, "int4": 1, "uint4": 1}


def lying_header(rng: random.Random, text: bytes, nbytes: int | None = None) -> bytes:
    """A header with a generated descr, shape and fortran_order; with `nbytes`, often a
    shape that accounts for exactly that many bytes of the descr (a lie about the dtype
    or the shape that the file size cannot reveal)."""
    descr = rng.choice(
        ["<f4", ">f4", "<f2", "|i1", "<i2", ">u2", "<i8", "|b1", "<c8", "|V2", "|V1", "<f1", "bfloat16",
         "float8_e4m3fn", "float8_e5m2", "int4", "uint4", "V0", "|O", "<U3", "|S2", "<M8[D]", "(2,)<f4",
         "i4,i4", "<f16", "<g", "|q", "float128", "x" * 40, "", "<f4 ", "\u00e9"]
    )
    shape_kind = rng.randrange(8) if nbytes is None else rng.randrange(10)
    if shape_kind == 0:
        shape = "()"
    elif shape_kind == 1:
        shape = "(" + ", ".join(str(rng.choice([0, 1, 2, 3, 4, 6, 12])) for _ in range(rng.randint(1, 3))) + ",)"
    elif shape_kind == 2:
        shape = "(" + ", ".join(str(rng.choice([-1, -2, 3])) for _ in range(2)) + ")"
    elif shape_kind == 3:
        shape = rng.choice(["(True,)", "(False, 2)", "(3.0,)", "[3]", "3", "None", "('3',)", "(3, None)"])
    elif shape_kind == 4:
        shape = "(" + "1, " * rng.choice([31, 32, 33, 63, 64, 65, 200]) + ")"
    elif shape_kind == 5:
        shape = "(" + ", ".join(str(rng.choice([2**31, 2**32, 2**62, 2**63, 2**64, 10**30])) for _ in range(2)) + ")"
    elif shape_kind == 6 or nbytes is None or descr not in _ITEMSIZE or nbytes % _ITEMSIZE[descr]:
        shape = "(" + str(rng.randint(0, 40)) + ",)"
    else:
        count = nbytes // _ITEMSIZE[descr]
        rows = rng.choice([r for r in (1, 2, 3, 4) if count % r == 0])
        shape = f"({rows}, {count // rows})" if rng.random() < 0.5 else f"({count},)"
    fortran = rng.choice(["False", "True", "0", "1", "None", "'False'"])
    keys = [("descr", repr(descr)), ("fortran_order", fortran), ("shape", shape)]
    if rng.random() < 0.1:
        keys.append((rng.choice(["x", "descr", "shape"]), "1"))
    if rng.random() < 0.1:
        keys.pop(rng.randrange(len(keys)))
    if rng.random() < 0.5:
        rng.shuffle(keys)
    out = "{" + ", ".join(f"'{k}': {v}" for k, v in keys) + (", }" if rng.random() < 0.7 else "}")
    return (out + " " * rng.randint(0, 8) + "\n").encode("utf-8")


# --------------------------------------------------------------------------- the per-file oracle


def check_cast(path: Path, out: Path, to: str, where: str, chunk_bytes: int | None = None) -> str:
    """Cast `path` to `out`; check the outcome. Returns 'ok' or 'refused'."""
    before = sha(path)
    t0 = time.perf_counter()
    try:
        rep = castfile.cast_file(path, out, to=to, mode="extended", force=True, chunk_bytes=chunk_bytes)
        outcome = "ok"
    except UsageError as e:
        msg = str(e)
        assert "\n" not in msg and npyio.TEMP_MARK not in msg, (where, msg)
        outcome = "refused"
    except Exception as e:  # a traceback in the CLI
        raise AssertionError(f"{where}: {type(e).__name__}: {e}; input {path.read_bytes()[:200]!r}") from e
    assert time.perf_counter() - t0 < CASE_SECONDS, where
    assert sha(path) == before, where
    if outcome == "refused":
        assert not out.exists(), where
        return outcome
    got = np.load(out, allow_pickle=False)  # numpy can load every output
    assert got.dtype == numpy_dtype(to) and got.shape == tuple(rep.shape), where
    raw = path.read_bytes()
    if b"'<f1'" not in raw[:200]:  # numpy cannot load the '<f1' it writes for e5m2; we read it
        src = np.load(path, allow_pickle=False)  # so numpy can load every input we accepted
        want, _ = tosa_cast.cast_array(np.ascontiguousarray(src, dtype=src.dtype.newbyteorder("=")), to, mode="extended")
        assert got.tobytes() == np.ascontiguousarray(np.asarray(want).reshape(got.shape)).tobytes(), where
        assert got.flags.f_contiguous == src.flags.f_contiguous or got.ndim < 2, where
    out.unlink()
    return outcome


@pytest.mark.parametrize("part", range(4))
def test_mutated_files(work, part):
    rng = random.Random(SEED * 10 + part)
    n = N_MUTATED // 4 + (N_MUTATED % 4 if part == 0 else 0)
    seen = {"ok": 0, "refused": 0}
    for i in range(n):
        data = mutate(rng, rng.choice(BASES))
        p = work / "in.npy"
        p.write_bytes(data)
        where = f"seed {SEED * 10 + part} case {i}"
        seen[check_cast(p, work / "out.npy", rng.choice(TARGETS), where, rng.choice([None, None, 16]))] += 1
    print("mutated files:", seen)
    assert sum(seen.values()) == n
    assert seen["ok"] > n // 20 and seen["refused"] > n // 4, seen  # both paths were exercised
    assert leftovers(work) == []


def test_lying_headers(work):
    rng = random.Random(SEED + 1)
    seen = {"ok": 0, "refused": 0}
    for i in range(N_LYING):
        base = rng.choice(BASES)
        prefix, n, text, body = split(base)
        if rng.random() < 0.3:  # data of another size than the shape says
            body = body[: rng.randint(0, len(body))] if rng.random() < 0.5 else body + bytes(rng.randint(1, 9))
        data = join(prefix, n, lying_header(rng, text, len(body)), body)
        p = work / "in.npy"
        p.write_bytes(data)
        where = f"seed {SEED + 1} case {i}"
        seen[check_cast(p, work / "out.npy", rng.choice(TARGETS), where, rng.choice([None, None, 16]))] += 1
    print("lying headers:", seen)
    assert sum(seen.values()) == N_LYING
    assert seen["ok"] > 10 and seen["refused"] > N_LYING // 2, seen
    assert leftovers(work) == []


def test_header_texts_against_literal_eval():
    """The bounded parser takes a subset of Python literals and agrees with ast.literal_eval on
    it; on anything else it raises LiteralError, never another exception."""
    rng = random.Random(SEED + 2)
    agreed = refused = 0
    for i in range(N_TEXTS):
        _, _, text, _ = split(mutate(rng, rng.choice(BASES)))
        s = text.decode("latin-1")
        t0 = time.perf_counter()
        try:
            got = literal.parse(s)
        except literal.LiteralError:
            refused += 1
            continue
        finally:
            assert time.perf_counter() - t0 < 1.0, (i, s[:100])
        try:
            want = ast.literal_eval(s.strip())
        except (SyntaxError, ValueError):
            # Python 2's long suffix (`3L`), which numpy also takes in old headers, is the one extra
            want = ast.literal_eval(re.sub(r"(?<=[0-9])[lL]", "", s.strip()))
        assert want == got, (i, s)
        agreed += 1
    assert agreed + refused == N_TEXTS and agreed > 100 and refused > 100


# --------------------------------------------------------------------------- hostile files and paths


NAMES = [
    "w.npy", "W.NPY", "a b.npy", "-dash.npy", "new\nline.npy", "tab\t.npy", os.fsdecode(b"bad\xff.npy"),
    os.fsdecode(b"\xc3(.npy"), "\u00fcber.npy", "x" * 240 + ".npy", "w.f16.npy", ".hidden.npy", "esc\x1b[31m.npy",
]


def _regular(rng, d: Path, name: str) -> Path:
    p = d / name
    with open(p, "wb") as fp:
        fp.write(rng.choice(BASES))
    return p


def build_case(rng: random.Random, d: Path):
    """Create hostile files in `d`; return (argv, input paths, description)."""
    made: list[Path] = []
    args: list[str] = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(12)
        name = rng.choice(NAMES)
        if (d / name).exists() or os.path.lexists(d / name):
            name = f"{rng.randrange(10**6)}-{name}"
        p = d / name
        if kind <= 3:
            made.append(_regular(rng, d, name))
        elif kind == 4:
            os.mkfifo(p)
        elif kind == 5:
            sub = d / f"dir{rng.randrange(10**6)}"
            sub.mkdir()
            _regular(rng, sub, rng.choice(NAMES))
            if rng.random() < 0.5:
                os.mkfifo(sub / "fifo.npy")
            if rng.random() < 0.3:
                (sub / "loop.npy").symlink_to(sub / "loop.npy")
            p = sub
        elif kind == 6:
            p.symlink_to(p)  # a loop
        elif kind == 7:
            p.symlink_to(d / "nowhere.npy")
        elif kind == 8 and made:
            os.link(made[-1], p)
        elif kind == 9 and made:
            p.symlink_to(made[-1])
        elif kind == 10 and os.geteuid() == 0:
            os.mknod(p, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null of our own
        elif kind == 11 and made:
            p = made[-1]  # the same input twice
        else:
            made.append(_regular(rng, d, name))
        args.append(str(p))
    args += ["--to", rng.choice(TARGETS), "--mode", "extended"]
    if rng.random() < 0.6:
        args.append("--force")
    if rng.random() < 0.5:
        args += ["-o", str(output_path(rng, d, made))]
    if rng.random() < 0.03:
        args += ["-j", rng.choice(["2", str(10**12)])]
    else:
        args += ["-j", "1"]
    return args


OUT_SUFFIXES = [".npy", ".NPY", "\n.npy", os.fsdecode(b"\xfe.npy")]


def output_path(rng: random.Random, d: Path, inputs: list[Path]) -> Path:
    kind = rng.randrange(10)
    p = d / (f"out{rng.randrange(10**6)}" + rng.choice(OUT_SUFFIXES))
    if kind == 0 and inputs:
        return rng.choice(inputs)
    if kind == 1 and inputs:
        return Path(os.path.join(os.path.dirname(inputs[0]), ".", os.path.basename(inputs[0])))
    if kind == 2:
        os.mkfifo(p)
    elif kind == 3:
        p.mkdir()
    elif kind == 4:
        p.symlink_to(d / "nowhere" / "x.npy")
    elif kind == 5 and inputs:
        p.symlink_to(inputs[0])
    elif kind == 6:
        p.write_bytes(b"an existing file")
        os.chmod(p, rng.choice([0o600, 0o644, 0o400]))
    elif kind == 7:
        return d / "missing-dir" / "x.npy"
    elif kind == 8 and os.geteuid() == 0:
        os.mknod(p, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return p


def snapshot(d: Path) -> dict:
    """Every entry under `d`: lstat identity, and content hash for regular files."""
    out = {}
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(root, n)
            st = os.lstat(p)
            content = sha(p) if stat.S_ISREG(st.st_mode) else (os.readlink(p) if stat.S_ISLNK(st.st_mode) else None)
            out[p] = (stat.S_IFMT(st.st_mode), st.st_ino, st.st_rdev, content, stat.S_IMODE(st.st_mode))
    return out


def test_hostile_files_and_paths(work):
    rng = random.Random(SEED + 3)
    runner = CliRunner()
    codes = {0: 0, 1: 0, 2: 0}
    for i in range(N_PATHS):
        d = work / f"c{i}"
        d.mkdir()
        args = build_case(rng, d)
        inputs = {os.path.realpath(a) for a in args[: args.index("--to")] if os.path.isfile(a)}
        before = snapshot(d)
        t0 = time.perf_counter()
        r = runner.invoke(cast, args)
        where = f"seed {SEED + 3} case {i}: {args!r}"
        assert time.perf_counter() - t0 < CASE_SECONDS, where
        assert r.exception is None or isinstance(r.exception, SystemExit), (where, r.exc_info)
        assert r.exit_code in codes, (where, r.exit_code)
        codes[r.exit_code] += 1
        for line in r.stderr.splitlines():
            assert line.startswith("promote cast: "), (where, r.stderr)
        r.stderr.encode("utf-8")  # printable: no undecodable name reaches the terminal raw
        assert npyio.TEMP_MARK not in r.stderr, where
        after = snapshot(d)
        for p, (kind, ino, rdev, content, mode) in before.items():
            if os.path.realpath(p) in inputs or kind != stat.S_IFREG:
                assert after.get(p) == before[p], (where, p)  # inputs and special files untouched
            elif after.get(p) != before[p]:
                assert "--force" in args, (where, p)  # a regular file replaced only with --force
                assert after[p][4] == mode, (where, p)  # keeping its mode
        for p, entry in after.items():
            if entry[0] == stat.S_IFREG and before.get(p) != entry:
                np.load(p, allow_pickle=False)  # every output numpy can load
        assert leftovers(d) == [], where
        shutil.rmtree(d)
    print("hostile paths: exit codes", codes)
    assert sum(codes.values()) == N_PATHS and codes[0] > 20 and codes[2] > 20, codes


# --------------------------------------------------------------------------- signals


def test_interrupted_runs_leave_only_whole_outputs(work):
    rng = random.Random(SEED + 4)
    env = dict(os.environ, PYTHONPATH=str(SOURCE))
    code = textwrap.dedent(
        """
        import sys
        from promote_cli.arrayio import npy
        npy.DEFAULT_CHUNK_BYTES = 1 << 14  # many chunks: the signal lands mid-cast
        from promote_cli.cli import run
        sys.argv[0] = "promote"
        run()
        """
    )
    for i in range(N_SIGNALS):
        d = work / f"s{i}"
        d.mkdir()
        for k in range(3):
            np.save(d / f"f{k}.npy", np.linspace(-1e5, 1e5, 1 << 19, dtype=np.float32))
        before = {n: sha(d / n) for n in os.listdir(d)}
        proc = subprocess.Popen(
            [sys.executable, "-c", code, "cast", str(d), "--to", rng.choice(["f16", "bf16", "f8e4m3"]),
             "-j", rng.choice(["1", "2"])],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 30  # wait for the cast to be under way (a temporary file)
        while not leftovers(d) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(rng.uniform(0, 0.3))
        sig = rng.choice([signal.SIGINT, signal.SIGTERM])
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=60)
        where = f"seed {SEED + 4} run {i}: {err.decode()!r}"
        # 130: interrupted; 0: done before the signal; -sig: the signal hit the interpreter's
        # exit (Python has put the default handlers back by then), after all work was done
        assert proc.returncode in (0, 130, -sig), where
        assert b"Traceback" not in err, where
        assert len(err.decode().splitlines()) <= 1, where
        assert {n: sha(d / n) for n in before} == before, where
        assert leftovers(d) == [], where
        outputs = sorted(n for n in os.listdir(d) if n.endswith(".npy") and n not in before)
        for n in outputs:
            assert np.load(d / n).shape == (1 << 19,), where
        if proc.returncode == 130 and outputs:
            assert f"kept {len(outputs)} finished output" in err.decode(), where
        if proc.returncode != 130:
            assert len(outputs) == 3, where


def test_a_worker_takes_a_second_sigterm_as_the_first(monkeypatch):
    """A busy worker defers SIGTERM to its next safe point; the pool's own SIGTERM that follows the
    parent's (a broken pool terminates every process) must not raise at an arbitrary point, where it
    could leave a lock the writer thread needs held and the worker's clean-up waiting forever."""
    from promote_cli.arrayio import atomic, castfile

    monkeypatch.setattr(castfile, "_busy", True)
    monkeypatch.setattr(atomic, "_pending", None)
    castfile._worker_sigterm(signal.SIGTERM, None)
    castfile._worker_sigterm(signal.SIGTERM, None)  # raised Terminated here before
    assert atomic._pending == signal.SIGTERM
    with pytest.raises(atomic.Terminated):
        atomic.check_interrupted()
