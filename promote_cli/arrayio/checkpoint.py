"""Casting checkpoints: a safetensors file, an `.npz` archive (`npzfile`), or a directory of safetensors
shards with its `model.safetensors.index.json`, tensor by tensor, streamed.

`plan` decides everything before a byte is written: each shard opened (regular files only) and its header
validated (`sthead.read_header`), the index checked against the shards (every tensor in the shard the index
names, no tensor twice, shard names plain file names in the directory), the tensors chosen (`--only`,
`--skip`, `--from`; a tensor already of the target type is kept) and each chosen tensor's cast checked in
the mode asked for (a run with one that has none is refused whole, naming the `--skip` that leaves it out),
every output checked as `promote cast` checks one (`atomic.check_output`), and no output may be an input.

`run` then streams each shard: a chunk of at most `CHUNK_BYTES` of input at a time is read, cast by the
same `numerics.cast.Converter` as a `.npy` file (so a tensor's values are bit-exact with casting the same
array as a `.npy` file), measured (`_Errors`) and written; a tensor not cast is copied bit for bit. Every
output (each shard, then the rewritten index) is written to a temporary file and takes its name only when
all of them are complete, so an error or an interruption leaves no output and every input as it was; an
output directory made by the run is removed again. It yields a `TensorReport` per tensor as it goes, in
each shard's data order.
"""

from __future__ import annotations

import json
import math
import os
import stat
from contextlib import ExitStack
from fnmatch import fnmatchcase
from typing import Callable, Iterator

import numpy as np

from promote_cli.arrayio import atomic, npzfile, sthead
from promote_cli.arrayio.castfile import _FADV, FAIL_ON, WRITEBACK_BYTES, CastTotals
from promote_cli.arrayio.files import INDEX_NAME, SAFETENSORS_SUFFIX, FileId, open_regular, os_message, pread_into
from promote_cli.errors import UsageError
from promote_cli.numerics.legality import CastRequest, request
from promote_cli.records import Record, factory

#: Input bytes read and cast at a time.
CHUNK_BYTES = 4 << 20

SUFFIX = SAFETENSORS_SUFFIX


class TensorReport(Record, kw_only=True):
    """What happened to one tensor: cast (`dst` set, its statistics and largest errors) or copied."""

    file: str
    name: str
    shape: tuple
    src: str
    dst: str | None
    elements: int
    stats: dict = factory(dict)
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    bytes_in: int = 0
    bytes_out: int = 0

    @property
    def cast(self) -> bool:
        return self.dst is not None

    def as_dict(self) -> dict:
        return {"file": self.file, "tensor": self.name, "shape": list(self.shape), "from": self.src,
                "to": self.dst, "cast": self.cast, "elements": self.elements, "stats": dict(self.stats),
                "max_abs_error": self.max_abs_error, "max_rel_error": self.max_rel_error,
                "bytes_in": self.bytes_in, "bytes_out": self.bytes_out}


class CheckpointTotals(CastTotals):
    """A checkpoint's totals: a cast run's (its files, the elements cast and their statistics summed, the
    bytes), and the tensors cast and kept, the largest errors, the time taken."""

    input: str = ""
    output: str = ""
    tensors: int = 0
    cast: int = 0
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    seconds: float = 0.0

    def add(self, r: TensorReport) -> None:
        self.tensors += 1
        self.bytes_in += r.bytes_in
        self.bytes_out += r.bytes_out
        if not r.cast:
            return
        self.cast += 1
        self.elements += r.elements
        for k, v in r.stats.items():
            self.stats[k] = self.stats.get(k, 0) + v
        self.max_abs_error = max(self.max_abs_error, r.max_abs_error)
        self.max_rel_error = max(self.max_rel_error, r.max_rel_error)

    def triggered(self, fail_on) -> list[str]:
        """The --fail-on conditions the checkpoint's casts met, in the order given."""
        return [cond for cond in fail_on if any(self.stats.get(k, 0) for k in FAIL_ON[cond])]

    def as_dict(self) -> dict:
        return {"input": self.input, "output": self.output, "files": self.files, "tensors": self.tensors,
                "cast": self.cast, "kept": self.tensors - self.cast, "elements": self.elements,
                "stats": dict(self.stats), "max_abs_error": self.max_abs_error,
                "max_rel_error": self.max_rel_error, "bytes_in": self.bytes_in, "bytes_out": self.bytes_out,
                "seconds": round(self.seconds, 6)}


class Shard(Record, frozen=True):
    """One file of a plan (a safetensors file, or an `.npz` archive: its `members`): the input as opened and
    validated, which tensors are cast, the output as checked."""

    input: str
    output: str
    source: FileId
    header: sthead.Header
    chosen: tuple  # per tensor of header.tensors: cast it
    target: atomic.OutputTarget
    members: tuple = ()  # an archive's `npzfile.Member`s, one per tensor


class CheckpointPlan(Record):
    """A checkpoint cast, decided: the shards, the index (input path, output path, its checked target, its
    parsed JSON) or None, the output directory to make (None: it exists, or a single file) and the cast."""

    input: str
    output: str
    shards: list
    index: tuple | None
    make_dir: str | None
    request: CastRequest

    @property
    def total_bytes(self) -> int:
        """The tensors' bytes: what a progress bar counts."""
        return sum(t.nbytes for s in self.shards for t in s.header.tensors)

    def totals(self) -> CheckpointTotals:
        from promote_cli.numerics.stats import CastStats

        stats = dict(CastStats().as_dict(), underflow_zero=0)
        return CheckpointTotals(input=self.input, output=self.output, files=len(self.shards), stats=stats)


def default_output(path: str, to: str) -> str:
    """`m.safetensors` -> `m.TO.safetensors`, `m.npz` -> `m.TO.npz`; a directory `ckpt` -> `ckpt.TO`."""
    path = os.fspath(path).rstrip("/") or "/"
    for suffix in (SUFFIX, npzfile.SUFFIX):
        if path.lower().endswith(suffix):
            return f"{path[:-len(suffix)]}.{to}{path[-len(suffix):]}"
    return f"{path}.{to}"


def plan(path, to, *, output=None, from_=None, mode: str = "tosa", saturate: bool | None = None,
         semantics: str = "tosa", force: bool = False, only=(), skip=()) -> CheckpointPlan:
    """Everything a cast of the checkpoint `path` will do, checked before anything is written (see the
    module's description); a one-line UsageError for anything that stops it."""
    asked = request(to, None, mode, saturate, semantics)
    dtype_from = request(to, from_).src if from_ is not None else None
    path = os.fspath(path)
    out = os.fspath(output) if output is not None else default_output(path, asked.dst)
    if os.path.isdir(path):
        names, index = _directory(path)
        make_dir = _check_out_dir(out)
        outputs = [os.path.join(out, n) for n in names]
        inputs = [os.path.join(path, n) for n in names]
    else:
        index, make_dir, inputs, outputs = None, None, [path], [out]
    shards = []
    seen: dict = {}
    for src, dst in zip(inputs, outputs):
        source, header, members = _read(src)
        if not members and asked.dst not in sthead.SAFETENSORS:
            raise UsageError(f"{src}: safetensors has no {asked.dst} type; nothing written")
        for t in header.tensors:
            if t.name in seen:
                raise UsageError(f"{src}: tensor {t.name!r} is also in {seen[t.name]}")
            seen[t.name] = src
        chosen = tuple(_choose(t, asked, dtype_from, only, skip, src) for t in header.tensors)
        target = atomic.check_output(dst, force=force) if make_dir is None else atomic.OutputTarget(dst, dst)
        shards.append(Shard(src, dst, source, header, chosen, target, members))
    index_plan = None
    if index is not None:
        ipath, data = index
        _check_index(ipath, data, {n: os.path.basename(s) for n, s in seen.items()})
        iout = os.path.join(out, INDEX_NAME)
        index_plan = (ipath, iout, atomic.check_output(iout, force=force) if make_dir is None
                      else atomic.OutputTarget(iout, iout), data)
    read = {s.source.key: s.input for s in shards}
    if index_plan is not None:
        read[FileId.of(os.stat(index_plan[0])).key] = index_plan[0]
    targets = [(s.output, s.target) for s in shards] + ([index_plan[1:3]] if index_plan else [])
    for dst, target in targets:
        if target.replaces is not None and target.replaces.key in read:
            raise UsageError(f"{dst}: refusing to overwrite the input file {read[target.replaces.key]}; "
                             "nothing written")
    if not any(any(s.chosen) for s in shards):
        raise UsageError(f"{path}: no tensor to cast to {asked.dst} (--only, --skip and --from leave none, "
                         "or every tensor is already of that type)")
    atomic.check_interrupted()
    return CheckpointPlan(path, out, shards, index_plan, make_dir, asked)


def _directory(path: str) -> tuple[list[str], tuple | None]:
    """The shard names of a checkpoint directory (the index's, else every `*.safetensors`) and its index."""
    ipath = os.path.join(path, INDEX_NAME)
    if os.path.lexists(ipath):
        data = _read_index(ipath)
        names = sorted(set(data["weight_map"].values()))
        return names, (ipath, data)
    try:
        names = sorted(n for n in os.listdir(path) if n.endswith(SUFFIX) and atomic.TEMP_MARK not in n)
    except OSError as e:
        raise UsageError(f"{path}: {os_message(e)}") from None
    if not names:
        raise UsageError(f"{path}: directory holds no .safetensors files")
    return names, None


def _read_index(ipath: str) -> dict:
    fd, st = open_regular(ipath)
    try:
        if st.st_size > sthead.MAX_HEADER_BYTES:
            raise UsageError(f"{ipath}: {st.st_size} bytes is over the {sthead.MAX_HEADER_BYTES}-byte limit")
        raw = os.pread(fd, st.st_size, 0)
    finally:
        os.close(fd)

    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=lambda pairs: sthead.unique_keys(pairs, ipath))
    except (UnicodeDecodeError, RecursionError, json.JSONDecodeError) as e:
        raise UsageError(f"{ipath}: not a JSON index ({type(e).__name__})") from None
    wm = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(wm, dict) or not all(isinstance(v, str) for v in wm.values()):
        raise UsageError(f"{ipath}: weight_map must be an object of tensor name -> shard file name")
    for shard in set(wm.values()):
        if "/" in shard or "\\" in shard or shard in (".", "..") or not shard.endswith(SUFFIX) or "\0" in shard:
            raise UsageError(f"{ipath}: shard {shard!r} is not a .safetensors file name in the directory")
    return data


def _check_index(ipath: str, data: dict, found: dict) -> None:
    """The index's weight_map must name exactly the tensors the shards hold, each in its shard."""
    wm = data["weight_map"]
    for name, shard in wm.items():
        if name not in found:
            raise UsageError(f"{ipath}: tensor {name!r} is not in {shard}")
        if found[name] != shard:
            raise UsageError(f"{ipath}: tensor {name!r} is in {found[name]}, not {shard}")
    for name, shard in found.items():
        if name not in wm:
            raise UsageError(f"{ipath}: tensor {name!r} of {shard} is missing from weight_map")


def _check_out_dir(out: str) -> str | None:
    """The output directory: None when it exists (a directory), else `out`, to be made by the run."""
    try:
        st = os.stat(out)
    except FileNotFoundError:
        if os.path.islink(out):
            raise UsageError(f"{out}: is a symbolic link that leads nowhere; not written through") from None
        parent = os.path.dirname(out.rstrip("/")) or "."
        if not os.path.isdir(parent):
            raise UsageError(f"{out}: cannot create output directory: {parent} is not a directory") from None
        return out
    except OSError as e:
        raise UsageError(f"{out}: {os_message(e)}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{out}: the output of a checkpoint directory is a directory; this is not one")
    return None


def _read(src: str) -> tuple[FileId, sthead.Header, tuple]:
    """The file's identity, its header (an archive's: its members' tensors) and an archive's members."""
    fd, st = open_regular(src)
    try:
        if src.lower().endswith(npzfile.SUFFIX):
            with os.fdopen(fd, "rb", closefd=False) as fp:
                members = npzfile.read_members(fp, src)
            return FileId.of(st), sthead.Header(tuple(m.tensor for m in members), b"", 0), members
        return FileId.of(st), sthead.read_header(fd, st.st_size, src), ()
    finally:
        os.close(fd)


def _choose(t: sthead.Tensor, asked: CastRequest, dtype_from, only, skip, src: str) -> bool:
    """Whether tensor `t` is cast; a UsageError when it is chosen and its type has no cast to the target."""
    if only and not any(fnmatchcase(t.name, p) for p in only):
        return False
    if any(fnmatchcase(t.name, p) for p in skip):
        return False
    if (dtype_from is not None and t.dtype != dtype_from) or t.dtype == asked.dst:
        return False
    try:
        asked.check(t.dtype)
    except UsageError as e:
        raise UsageError(f"{src}: tensor {t.name!r} ({t.dtype}): {e}; nothing written (leave it out with "
                         f"--skip {_quoted(t.name)}, or choose by type with --from)") from None
    return True


def _quoted(name: str) -> str:
    import shlex

    return shlex.quote("".join(f"[{c}]" if c in "*?[" else c for c in name))


def run(plan: CheckpointPlan, *, progress: Callable[[int], None] | None = None,
        chunk_bytes: int | None = None) -> Iterator[TensorReport]:
    """Do a plan: a `TensorReport` per tensor as it is done; every output takes its name once all are
    written (when the iterator is exhausted), none if it stops early."""
    chunk_bytes = max(1 << 10, chunk_bytes or CHUNK_BYTES)
    protect = tuple(s.source for s in plan.shards)
    made = False
    done = [0]
    try:
        with ExitStack() as stack:
            if plan.make_dir is not None:
                try:
                    os.mkdir(plan.make_dir)
                except OSError as e:
                    raise UsageError(f"{plan.make_dir}: cannot create output directory: {os_message(e)}") from None
                made = True
            for shard in plan.shards:
                sink = _Writeback(stack.enter_context(atomic.atomic_output(shard.output, target=shard.target,
                                                                           protect=protect)))
                each = _archive if shard.members else _shard
                yield from each(shard, plan.request, sink, chunk_bytes, progress, done)
            if plan.index is not None:
                ipath, iout, target, data = plan.index
                sink = stack.enter_context(atomic.atomic_output(iout, target=target, protect=protect))
                sink.write(_index_text(data, plan).encode("utf-8"))
    except BaseException:
        if made:
            try:
                os.rmdir(plan.make_dir)
            except OSError:
                pass
        raise


def _index_text(data: dict, plan: CheckpointPlan) -> str:
    """The index with `metadata.total_size` (when present) the outputs' tensor bytes."""
    data = dict(data)
    meta = data.get("metadata")
    if isinstance(meta, dict) and "total_size" in meta:
        total = sum(_layout(s, plan.request)[1] for s in plan.shards)
        data["metadata"] = dict(meta, total_size=total)
    return json.dumps(data, indent=2) + "\n"


def _layout(shard: Shard, asked: CastRequest) -> tuple[list, int]:
    """The output's tensors (new dtypes and spans, in the input's data order) and its data bytes."""
    at = 0
    out = []
    for t, cast in zip(shard.header.tensors, shard.chosen):
        if cast:
            n = t.count * sthead.bits_of(asked.dst) // 8
            t = sthead.Tensor(t.name, asked.dst, t.shape, at, at + n)
        else:
            t = sthead.Tensor(t.name, t.dtype, t.shape, at, at + t.nbytes)
        out.append(t)
        at = t.end
    return out, at


def _shard(shard: Shard, asked: CastRequest, sink, chunk_bytes: int, progress, done) -> Iterator[TensorReport]:
    """Write a safetensors shard's output to `sink`: the new header, then each tensor, read at its offset."""
    fd, st = open_regular(shard.input)
    try:
        if FileId.of(st) != shard.source:
            raise UsageError(f"{shard.input}: changed since the cast was planned; nothing written")
        tensors, _ = _layout(shard, asked)
        sink.write(sthead.header_bytes(tensors, shard.header.metadata_raw))
        stream = _Stream(asked, chunk_bytes, progress, done)
        for t, new, cast in zip(shard.header.tensors, tensors, shard.chosen):
            at = [shard.header.data_start + t.begin]

            def read_into(view, at=at):
                _pread_full(fd, view, at[0], shard.input)
                at[0] += len(view)

            yield stream.tensor(shard.input, t, cast, read_into, sink.write)
        if FileId.of(os.fstat(fd)) != shard.source:
            raise UsageError(f"{shard.input}: changed while it was read; nothing written")
    finally:
        os.close(fd)


def _archive(shard: Shard, asked: CastRequest, sink, chunk_bytes: int, progress, done) -> Iterator[TensorReport]:
    """Write an `.npz` archive's output to `sink`: each member's `.npy` header (its new dtype), then its data,
    compressed as the input member was."""
    import zipfile

    from promote_cli.arrayio import npy as npyio

    fd, st = open_regular(shard.input)
    try:
        if FileId.of(st) != shard.source:
            raise UsageError(f"{shard.input}: changed since the cast was planned; nothing written")
        stream = _Stream(asked, chunk_bytes, progress, done)
        with os.fdopen(fd, "rb", closefd=False) as fp, zipfile.ZipFile(fp) as zin, \
                zipfile.ZipFile(sink, "w", allowZip64=True) as zout:
            for m, cast in zip(shard.members, shard.chosen):
                t = m.tensor
                with zin.open(m.entry) as src, npzfile.output_member(zout, m) as dst:
                    head = src.read(m.offset)  # a member not cast keeps its header, byte for byte
                    dst.write(npyio.header_bytes(t.shape, m.fortran_order, stream.out_dtype) if cast else head)

                    def read_into(view, src=src, m=m):
                        if src.readinto(memoryview(view).cast("B")) != len(view):
                            raise UsageError(f"{shard.input}: member {m.entry!r} is truncated; nothing written")

                    yield stream.tensor(shard.input, t, cast, read_into, dst.write, swap=m.swap and cast)
        if FileId.of(os.fstat(fd)) != shard.source:
            raise UsageError(f"{shard.input}: changed while it was read; nothing written")
    except (zipfile.BadZipFile, EOFError) as e:
        raise UsageError(f"{shard.input}: not a readable .npz archive ({e}); nothing written") from None
    finally:
        os.close(fd)


class _Writeback:
    """An output file written from its start, whose written bytes are handed to the kernel's writeback every
    `WRITEBACK_BYTES` (as a `.npy` cast's are): the disk works while the cast goes on, and the final fsync
    finds little left to do."""

    def __init__(self, sink):
        self.sink = sink
        self.written = self.flushed = 0

    def write(self, data) -> int:
        n = self.sink.write(data)
        self.written += n
        if self.written - self.flushed >= WRITEBACK_BYTES and _FADV is not None:
            try:
                os.posix_fadvise(self.sink.fileno(), self.flushed, self.written - self.flushed, _FADV)
            except (OSError, AttributeError, ValueError):
                pass  # only a hint
            self.flushed = self.written
        return n

    def flush(self) -> None:
        pass


class _Stream:
    """Casts (or copies) tensors a chunk at a time, through buffers reused from tensor to tensor: a tensor's
    elements come from `read_into(view)` (fills the whole view), its output goes to `write(bytes)`."""

    def __init__(self, asked: CastRequest, chunk_bytes: int, progress, done):
        from promote_cli.vocab.numpy_types import numpy_dtype

        self.asked = asked
        self.raw = np.empty(chunk_bytes, np.uint8)
        self.out_dtype = numpy_dtype(asked.dst)
        self.out_buf = None
        self.progress = progress
        self.done = done

    def _advance(self, n: int) -> None:
        self.done[0] += n
        if self.progress is not None:
            self.progress(self.done[0])

    def tensor(self, file: str, t: sthead.Tensor, cast: bool, read_into, write, swap: bool = False) -> TensorReport:
        """Stream tensor `t` (stored with the other byte order when `swap`, then written natively) and report."""
        atomic.check_interrupted()
        if not cast:
            pos = 0
            while pos < t.nbytes:
                atomic.check_interrupted()
                view = self.raw[:min(len(self.raw), t.nbytes - pos)]
                read_into(view)
                write(view)
                pos += len(view)
                self._advance(len(view))
            return TensorReport(file=file, name=t.name, shape=t.shape, src=t.dtype, dst=None, elements=t.count,
                                bytes_in=t.nbytes, bytes_out=t.nbytes)
        from promote_cli.numerics.cast import Converter

        convert = Converter(self.asked, t.dtype)
        in_dtype = convert.in_dtype
        per = max(1, len(self.raw) // in_dtype.itemsize)
        if self.out_buf is None or len(self.out_buf) < per:
            self.out_buf = np.empty(per, self.out_dtype)
        errors = _Errors(in_dtype, self.out_dtype, min(per, t.count))
        stats = None
        pos = 0
        while pos < t.count:
            atomic.check_interrupted()
            n = min(per, t.count - pos)
            view = self.raw[:n * in_dtype.itemsize]
            read_into(view)
            if swap and in_dtype.itemsize > 1:
                view.view(f"u{in_dtype.itemsize}").byteswap(inplace=True)
            x = view.view(in_dtype)
            y = self.out_buf[:n]
            _, s = convert(x, out=y)
            stats = s if stats is None else stats + s
            errors.add(x, y)
            write(y.view(np.uint8))
            pos += n
            self._advance(x.nbytes)
        result = stats.as_dict() if stats is not None else _zero_stats()
        result["underflow_zero"] = errors.underflow
        return TensorReport(file=file, name=t.name, shape=t.shape, src=t.dtype, dst=self.asked.dst,
                            elements=t.count, stats=result, max_abs_error=errors.max_abs,
                            max_rel_error=errors.max_rel, bytes_in=t.nbytes,
                            bytes_out=t.count * self.out_dtype.itemsize)


def _zero_stats() -> dict:
    from promote_cli.numerics.stats import CastStats

    return CastStats().as_dict()


def _pread_full(fd: int, view: np.ndarray, offset: int, path: str) -> None:
    mv = memoryview(view).cast("B")
    got = 0
    while got < len(mv):
        n = pread_into(fd, mv[got:], offset + got)
        if n == 0:
            raise UsageError(f"{path}: truncated while it was read; nothing written")
        got += n


class _Errors:
    """The largest absolute and relative error of a cast's finite outputs of finite inputs (relative: of
    non-zero inputs), and how many non-zero finite inputs became zero, summed over its chunks. Computed in
    float32 when both types are floats of at most 32 bits (the difference of a value and its rounding to a
    narrower float is exact there), else in float64; outputs of one or two bytes are widened through a table
    of every bit pattern's value (bf16 by a shift). A few whole-array passes into buffers kept from chunk to
    chunk, without boolean indexing."""

    def __init__(self, in_dtype: np.dtype, out_dtype: np.dtype, size: int):
        floats = all(_is_float(d) and d.itemsize <= 4 for d in (in_dtype, out_dtype))
        self.work = np.dtype(np.float32 if floats else np.float64)
        self.table = None
        self.bf16 = out_dtype.name == "bfloat16" and self.work == np.float32
        if out_dtype.itemsize <= 2 and not self.bf16:
            self.bits = np.dtype(f"u{out_dtype.itemsize}")
            with np.errstate(all="ignore"):
                self.table = np.arange(1 << (8 * out_dtype.itemsize), dtype=np.uint32).astype(self.bits) \
                    .view(out_dtype).astype(self.work)
        self.d = np.empty(size, self.work)
        self.ax = np.empty(size, self.work)
        self.zero = np.empty(size, bool)
        self.mask = np.empty(size, bool)
        self.max_abs = 0.0
        self.max_rel = 0.0
        self.underflow = 0

    def _widen(self, y: np.ndarray, out: np.ndarray) -> np.ndarray:
        if self.bf16:  # bf16 is the top half of an f32
            u = out.view(np.uint32)
            np.copyto(u, y.view(np.uint16), casting="unsafe")
            np.left_shift(u, 16, out=u)
            return out
        if self.table is not None:
            return np.take(self.table, y.view(self.bits), out=out)
        np.copyto(out, y, casting="unsafe")
        return out

    def add(self, x: np.ndarray, y: np.ndarray) -> None:
        n = x.size
        if not n:
            return
        d, ax, zero, mask = self.d[:n], self.ax[:n], self.zero[:n], self.mask[:n]
        with np.errstate(all="ignore"):
            yf = self._widen(y, d)
            np.equal(yf, 0, out=zero)
            zeros = np.count_nonzero(zero)
            if x.dtype != self.work:
                np.copyto(ax, x, casting="unsafe")
                x = ax
            np.subtract(yf, x, out=d)
            hi, lo = float(d.max()), float(d.min())  # NaN when any is
            if not (math.isfinite(hi) and math.isfinite(lo)):  # a NaN or an infinity in or out: the long way
                self._add_special(x, d, zero, mask)
                return
            self.max_abs = max(self.max_abs, hi, -lo)
            if zeros:
                np.not_equal(d, 0, out=mask)
                zero &= mask  # a non-zero input cast to zero
                self.underflow += int(np.count_nonzero(zero))
            rel = np.divide(d, x, out=d)  # 0/0 (zero in, zero out) is NaN: fmax and fmin pass over it
            self._rel(float(np.fmax.reduce(rel)), -float(np.fmin.reduce(rel)))

    def _rel(self, *values) -> None:
        for v in values:
            if v == v:
                self.max_rel = max(self.max_rel, v)

    def _add_special(self, x, d, zero, mask) -> None:
        """`add` for a chunk with NaNs or infinities: only finite outputs of finite inputs count."""
        ax = np.abs(x, out=self.ax[:x.size])
        np.abs(d, out=d)
        np.isfinite(d, out=mask)  # finite exactly when both values are (a finite value's rounding is too)
        np.logical_not(mask, out=mask)
        np.copyto(d, 0, where=mask)
        self.max_abs = max(self.max_abs, float(d.max()))
        np.greater(d, 0, out=mask)
        zero &= mask  # a non-zero finite input cast to zero
        self.underflow += int(np.count_nonzero(zero))
        self._rel(float(np.fmax.reduce(np.divide(d, ax, out=d))))


def _is_float(d: np.dtype) -> bool:
    return d.kind == "f" or d.name.startswith(("float", "bfloat"))
