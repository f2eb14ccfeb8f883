""".npz archives as checkpoints: each member `NAME.npy` is a tensor `NAME`.

`read_members` opens the archive's directory (`zipfile`) and each member's `.npy` header, read from the
member's stream (stored or deflated) and validated as a `.npy` file's is (`npy.header_of`); the member must
hold exactly the data the header promises, and no name may appear twice. `output_member` opens an output
member, compressed as its input was.
"""

from __future__ import annotations

from promote_cli.arrayio import npy as npyio
from promote_cli.arrayio import sthead
from promote_cli.arrayio.files import NPZ_SUFFIX as SUFFIX  # noqa: F401  (re-exported)
from promote_cli.errors import UsageError
from promote_cli.records import Record


class Member(Record, frozen=True):
    """One member: the tensor it holds (`begin` 0, `end` its data bytes), its zip entry's name and
    compression, where its data starts, its order and whether its bytes need swapping."""

    tensor: sthead.Tensor
    entry: str
    compress_type: int
    offset: int
    fortran_order: bool
    swap: bool


def read_members(fp, path: str) -> tuple:
    """The members of the archive open as the binary file `fp`, in archive order."""
    import zipfile

    try:
        with zipfile.ZipFile(fp) as zf:
            infos = zf.infolist()
            seen = set()
            members = []
            for info in infos:
                name = info.filename
                if name in seen:
                    raise UsageError(f"{path}: member {name!r} appears twice")
                seen.add(name)
                if info.is_dir() or not name.endswith(".npy"):
                    raise UsageError(f"{path}: member {name!r} is not a .npy array")
                with zf.open(info) as stream:
                    members.append(_member(stream, info, f"{path}:{name}"))
            return tuple(members)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, OSError, RuntimeError) as e:
        raise UsageError(f"{path}: not a readable .npz archive ({type(e).__name__}: {e})") from None


def _member(stream, info, where: str) -> Member:
    pos = [0]

    def read_at(offset: int, n: int) -> bytes:
        if offset != pos[0]:  # header_of reads in order; a stream can answer nothing else
            raise UsageError(f"{where}: invalid .npy header")
        data = stream.read(n)
        pos[0] += len(data)
        return data

    header = npyio.header_of(read_at, where, info.file_size)
    source = npyio.resolve_source(header, None)
    tensor = sthead.Tensor(info.filename[:-4], source.canonical, header.shape, 0, header.nbytes)
    return Member(tensor, info.filename, info.compress_type, header.offset, header.fortran_order, source.swap)


def output_member(zout, member: Member):
    """A writable stream for the output member of `member` in the `zipfile.ZipFile` `zout` (same name and
    compression; zip64 allowed)."""
    import zipfile

    info = zipfile.ZipInfo(member.entry, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = member.compress_type
    return zout.open(info, "w", force_zip64=True)
