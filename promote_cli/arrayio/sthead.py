"""The safetensors header, read as hostile input and written anew.

A safetensors file is an 8-byte little-endian header length N, N bytes of JSON (an object: one entry per
tensor, `{"dtype": "F32", "shape": [2, 3], "data_offsets": [BEGIN, END]}`, and an optional `__metadata__`
object of strings), then the tensors' bytes, offsets counted from the end of the header.

`read_header` trusts nothing: the length is at most `MAX_HEADER_BYTES` (a larger claim is refused before a
byte of it is read) and within the file; the JSON is an object whose names appear once (a duplicate tensor
name is refused, not silently the last one); every dtype is a safetensors name the vocabulary knows
(`vocab/dtypes.toml`, spelling `safetensors`); shapes are lists of non-negative integers whose byte count is
the tensor's span; spans lie inside the file, do not overlap and leave no gap (the data region is exactly the
tensors, as safetensors itself requires). Each problem is a one-line `UsageError` naming the file.

The `__metadata__` value is kept as the bytes it was written with (`Header.metadata_raw`), so an output's
metadata is byte-identical to its input's; `header_bytes` lays out a new header for tensors in the order
given, padded with spaces to a multiple of 8 bytes as safetensors pads it.
"""

from __future__ import annotations

import json
import math
import struct

from promote_cli.arrayio.files import pread_into
from promote_cli.errors import UsageError
from promote_cli.records import Record

#: The longest header read (safetensors' own limit).
MAX_HEADER_BYTES = 100_000_000

#: The most dimensions a tensor may have.
MAX_DIMS = 64

METADATA = "__metadata__"


def _names() -> tuple[dict[str, str], dict[str, str]]:
    from promote_cli.vocab import dtypes

    to_name = dtypes.native_names("safetensors")
    return {v: k for k, v in to_name.items()}, to_name


#: safetensors dtype name -> canonical name, and back
CANONICAL, SAFETENSORS = _names()


class Tensor(Record, frozen=True):
    """One tensor of a header: its name, canonical dtype, shape and byte span (from the data's start)."""

    name: str
    dtype: str
    shape: tuple
    begin: int
    end: int

    @property
    def nbytes(self) -> int:
        return self.end - self.begin

    @property
    def count(self) -> int:
        return math.prod(self.shape)


class Header(Record, frozen=True):
    """A file's validated header: tensors in the order of their data, the metadata's bytes (b"" when
    absent) and where the data starts."""

    tensors: tuple
    metadata_raw: bytes
    data_start: int


def bits_of(dtype: str) -> int:
    from promote_cli.vocab.dtypes import lookup

    return lookup(dtype).bits


def _read_exact(fd: int, offset: int, n: int, path: str, what: str) -> bytes:
    buf = bytearray(n)
    view = memoryview(buf)
    done = 0
    while done < n:
        got = pread_into(fd, view[done:], offset + done)
        if got == 0:
            raise UsageError(f"{path}: truncated {what}")
        done += got
    return bytes(buf)


def read_header(fd: int, size: int, path: str) -> Header:
    """The validated header of the safetensors file open on `fd`, `size` bytes long."""
    if size < 8:
        raise UsageError(f"{path}: not a safetensors file: {size} bytes, shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", _read_exact(fd, 0, 8, path, "header length"))
    if n > MAX_HEADER_BYTES:
        raise UsageError(f"{path}: header length {n} bytes is over the {MAX_HEADER_BYTES}-byte limit")
    if n > size - 8:
        raise UsageError(f"{path}: header length {n} bytes runs past the end of the file ({size} bytes)")
    raw = _read_exact(fd, 8, n, path, "header")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: header is not UTF-8 text") from None
    entries = _top_level(text, path)
    metadata_raw = b""
    tensors = []
    for name, value, span in entries:
        if name == METADATA:
            _check_metadata(value, path)
            metadata_raw = text[span[0]:span[1]].encode("utf-8")
            continue
        tensors.append(_tensor(name, value, path))
    tensors.sort(key=lambda t: (t.begin, t.end))
    data_len = size - 8 - n
    at = 0
    for t in tensors:
        if t.end > data_len:
            raise UsageError(f"{path}: tensor {t.name!r} lies past the end of the file "
                             f"(bytes {t.begin}..{t.end} of a {data_len}-byte data region)")
        if t.begin < at:
            raise UsageError(f"{path}: tensor {t.name!r} overlaps another tensor (bytes {t.begin}..{t.end})")
        if t.begin > at:
            raise UsageError(f"{path}: {t.begin - at} bytes before tensor {t.name!r} belong to no tensor")
        at = t.end
    if at != data_len:
        raise UsageError(f"{path}: {data_len - at} bytes after the last tensor belong to no tensor")
    return Header(tuple(tensors), metadata_raw, 8 + n)


def _top_level(text: str, path: str) -> list:
    """The header's top-level entries as (name, value, (start, end) of the value's text), names checked
    unique; nested objects may not repeat a key either."""
    decoder = json.JSONDecoder(object_pairs_hook=lambda pairs: unique_keys(pairs, path))
    ws = " \t\n\r"
    i = 0
    n = len(text)

    def skip(i):
        while i < n and text[i] in ws:
            i += 1
        return i

    def bad(what):
        return UsageError(f"{path}: header is not a JSON object ({what} at character {i})")

    i = skip(i)
    if i >= n or text[i] != "{":
        raise bad("no '{'")
    i = skip(i + 1)
    entries = []
    seen = set()
    if i < n and text[i] == "}":
        i += 1
    else:
        while True:
            if i >= n or text[i] != '"':
                raise bad("a name expected")
            try:
                name, i = decoder.raw_decode(text, i)
                i = skip(i)
                if i >= n or text[i] != ":":
                    raise bad("':' expected")
                i = skip(i + 1)
                start = i
                value, i = decoder.raw_decode(text, i)
            except (ValueError, RecursionError) as e:
                if isinstance(e, UsageError):
                    raise
                raise UsageError(f"{path}: header is not valid JSON ({type(e).__name__})") from None
            if name in seen:
                raise UsageError(f"{path}: tensor name {name!r} appears twice in the header")
            seen.add(name)
            entries.append((name, value, (start, i)))
            i = skip(i)
            if i < n and text[i] == ",":
                i = skip(i + 1)
                continue
            if i < n and text[i] == "}":
                i += 1
                break
            raise bad("',' or '}' expected")
    if text[i:].strip(ws):
        raise bad("text after the object")
    return entries


def unique_keys(pairs, path: str) -> dict:
    """A JSON object's (key, value) pairs as a dict; a one-line UsageError naming `path` for a repeated key
    (which `json` would silently take the last of)."""
    out = {}
    for k, v in pairs:
        if k in out:
            raise UsageError(f"{path}: key {k!r} appears twice in one JSON object")
        out[k] = v
    return out


def _check_metadata(value, path: str) -> None:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise UsageError(f"{path}: {METADATA} must be an object of strings")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _tensor(name: str, value, path: str) -> Tensor:
    where = f"{path}: tensor {name!r}"
    if not isinstance(value, dict) or set(value) != {"dtype", "shape", "data_offsets"}:
        raise UsageError(f"{where}: an entry holds exactly dtype, shape and data_offsets")
    dtype, shape, offsets = value["dtype"], value["shape"], value["data_offsets"]
    if not isinstance(dtype, str) or dtype not in CANONICAL:
        raise UsageError(f"{where}: unknown dtype {str(dtype)[:40]!r} (known: {', '.join(CANONICAL)})")
    if (not isinstance(shape, list) or len(shape) > MAX_DIMS
            or not all(_is_int(d) and 0 <= d < 1 << 62 for d in shape)):
        raise UsageError(f"{where}: shape must be a list of at most {MAX_DIMS} non-negative integers")
    if (not isinstance(offsets, list) or len(offsets) != 2 or not all(_is_int(o) and o >= 0 for o in offsets)
            or offsets[0] > offsets[1]):
        raise UsageError(f"{where}: data_offsets must be [BEGIN, END] with 0 <= BEGIN <= END")
    canonical = CANONICAL[dtype]
    t = Tensor(name, canonical, tuple(shape), offsets[0], offsets[1])
    bits = t.count * bits_of(canonical)
    if bits % 8 or bits // 8 != t.nbytes:
        raise UsageError(f"{where}: shape {list(shape)} of {dtype} needs {bits / 8:g} bytes, "
                         f"its data_offsets span {t.nbytes}")
    return t


def header_bytes(tensors, metadata_raw: bytes) -> bytes:
    """The 8-byte length and the JSON header of a file holding `tensors` (canonical dtypes; `begin`/`end`
    laid out by the caller) in this order, the metadata as its bytes, padded with spaces to 8 bytes."""
    parts = [b'"' + METADATA.encode() + b'":' + metadata_raw] if metadata_raw else []
    for t in tensors:
        entry = {"dtype": SAFETENSORS[t.dtype], "shape": list(t.shape), "data_offsets": [t.begin, t.end]}
        parts.append(json.dumps(t.name).encode("utf-8") + b":" + json.dumps(entry, separators=(",", ":")).encode())
    body = b"{" + b",".join(parts) + b"}"
    body += b" " * (-len(body) % 8)
    return struct.pack("<Q", len(body)) + body
