"""`query --batch` answers by canonical operands through bounded memos: the output must be byte for byte what
answering every line on its own gives (the reference below is the straightforward per-line algorithm: decode,
strip the comment, split, ask the engine with the operands as written, render), whatever the spellings."""

from __future__ import annotations

import io
import random

import pytest
from click.testing import CliRunner

import promote_cli
import promote_cli.oracle.batch
from promote_cli import MAX_LINE_BYTES, BatchLine
from promote_cli import formats
from promote_cli.cli import main
from promote_cli.errors import PromoteError, UsageError
from promote_cli.expressions import ops
from promote_cli.oracle import engine
from promote_cli.oracle.batch import TOKEN_CHARS, Asker

SEED = 20261122
FORMS = ["{}", "0d:{}", "0D:{}", "weak:{}", "WEAK:{}", "{}?"]
PY = ["py:int", "py:float", "PY:bool", "py:complex", "py:Int", "py:str"]
BAD = [b"\xff\xfe i8", b"i8 \xc3", b"i8 u8 f32", b"i8  u8 f32", b"i8 u8  f32 # c", b"i8", b"x" * (MAX_LINE_BYTES + 10),
       b"frob i8", b"i8 0d:frob", b"I8  0d:frob", b"", b"   ", b"# comment", b"i8 u8 # trailing", b"\ti8\t\tu8\t",
       b"py: i8", b"weak:weak:i8 i8", b"i8 u8\r", b"i8 u8 # \xff not UTF-8 in a comment", b"i8\xa0u8",
       b"i8 u8" + b" " * (MAX_LINE_BYTES - 5), b"i8 u8" + b" " * (MAX_LINE_BYTES - 4), "\u00e9 i8".encode() * 30,
       b"i8 " + b"u" * 200, b"f" * 200 + b" i8", b"i8 u8 # " + "\u00e9".encode() * (MAX_LINE_BYTES // 2 - 4),
       b"i8 u8 # " + "\u00e9".encode() * (MAX_LINE_BYTES // 2 - 3), b"#", b"i8#u8", b"i8 u8#", "i8\u00a0u8".encode()]


def _spellings(rng: random.Random) -> list[str]:
    out = []
    for d in promote_cli.DTYPES:
        for name in [d] + promote_cli.aliases(d):
            shown = rng.choice([name, name.upper(), name.capitalize()])
            out.append(rng.choice(FORMS).format(shown))
    return out + PY


def _stream(seed: int, n: int, newline: bytes = b"\n", last: bytes = b"\n") -> bytes:
    """`n` generated lines: pairs of spellings (aliases, letter case, forms), now and then spaced and
    commented, and every tenth line or so one of `BAD`, and in the middle an unknown dtype (however the
    vocabulary's spellings move the draws, a stream holds a usage error); `last` ends the stream."""
    rng = random.Random(seed)
    words = _spellings(rng)
    lines = []
    for number in range(n):
        if number == n // 2:
            lines.append(b"frob i8")
            continue
        if rng.random() < 0.1:
            lines.append(rng.choice(BAD))
            continue
        line = f"{rng.choice(words)}{' ' * rng.randint(1, 3)}{rng.choice(words)}"
        if rng.random() < 0.3:
            line = f"{' ' * rng.randint(0, 2)}{line} # {number}"
        lines.append(line.encode())
    return newline.join(lines) + last


def _reference(framework: str, stdin: bytes, fmt: str, op: str, options: dict) -> str:
    out = formats.get(fmt)
    rs = promote_cli.load(framework)
    rendered = []
    lines = stdin.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    for number, line in enumerate(lines, 1):
        if len(line) > MAX_LINE_BYTES:
            item = BatchLine(number, None, None, UsageError(f"line {number}: longer than {MAX_LINE_BYTES} bytes"),
                             rs.name, op, rs.version)
            rendered.append(out.batch_line(item))
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            item = BatchLine(number, None, None, UsageError(
                f"line {number}: not UTF-8 (byte 0x{line[exc.start]:02x} at offset {exc.start})"), rs.name, op, rs.version)
            rendered.append(out.batch_line(item))
            continue
        text = text.split("#", 1)[0].strip()
        if not text:
            continue
        parts = tuple(text.split())
        try:
            if len(parts) != 2:
                shown = text if len(text) <= 80 else text[:77] + "..."
                raise UsageError(f"expected `A B`, got {shown!r}")
            got = promote_cli.query(framework, parts[0], parts[1], op=op, options=options)  # an op group's op too
            item = BatchLine(number, parts, got, None, rs.name, op, rs.version)
        except PromoteError as exc:
            item = BatchLine(number, parts, None, exc, rs.name, op, rs.version)
        rendered.append(out.batch_line(item))
    return "".join(text + "\n" for text in rendered)


@pytest.mark.parametrize("framework, op, options", [
    ("cann", "add", {}), ("paddle", "/", {}), ("openvino", "add", {"promote_unsafe": "true"}),
    ("jax", "add", {}), ("torch", "add", {})])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_batch_output_is_byte_identical_to_answering_each_line_alone(framework, op, options, fmt, monkeypatch):
    if framework not in promote_cli.framework_names():
        pytest.fail(f"no ruleset {framework}")
    monkeypatch.setattr(promote_cli, "MEMO_ENTRIES", 50)  # evictions happen constantly
    stdin = _stream(SEED + hash((framework, fmt)) % 1000, 3000)
    args = ["query", "--batch", "-f", framework, "--op", op, "--format", fmt]
    for key, value in options.items():
        args += ["-O", f"{key}={value}"]
    result = CliRunner().invoke(main, args, input=stdin)
    assert result.exit_code in (0, 1, 2), result.output
    assert result.stdout == _reference(framework, stdin, fmt, op, {k: v for k, v in options.items()})


@pytest.mark.parametrize("chunk", [1, 7, 4096, 1 << 18])
@pytest.mark.parametrize("newline, last", [(b"\n", b"\n"), (b"\r\n", b"\r\n"), (b"\n", b""), (b"\n", b"\n\n\n")])
def test_blocks_of_any_size_give_the_same_bytes(chunk, newline, last, monkeypatch):
    """Lines split across the blocks the stream is read in (overlong ones too), CRLF, no final newline."""
    monkeypatch.setattr(promote_cli.oracle.batch, "CHUNK_BYTES", chunk)
    monkeypatch.setattr(promote_cli, "MEMO_ENTRIES", 30)
    stdin = _stream(SEED + chunk, 400 if chunk > 1 else 60, newline, last)
    result = CliRunner().invoke(main, ["query", "--batch", "-f", "paddle", "--op", "/"], input=stdin)
    assert result.stdout == _reference("paddle", stdin, "text", "/", {})
    assert result.exit_code == 2


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_api_renders_what_the_command_prints(fmt, monkeypatch):
    """`batch` (a BatchLine per line, each rendered) and `batch_write` (rendered lines from a memo) agree
    with each other and with the per-line reference, on a stream and on a list of lines."""
    monkeypatch.setattr(promote_cli, "MEMO_ENTRIES", 40)
    out = formats.get(fmt)
    stdin = _stream(SEED + 7, 2000)
    expected = _reference("torch", stdin, fmt, "add", {})
    each = "".join(out.batch_line(line) + "\n" for line in promote_cli.batch("torch", io.BytesIO(stdin)))
    assert each == expected
    short = [line for line in stdin.split(b"\n")[:-1] if len(line) <= MAX_LINE_BYTES]  # a list's lines: any length
    listed = "".join(out.batch_line(line) + "\n" for line in promote_cli.batch("torch", short))
    assert listed == _reference("torch", b"\n".join(short) + b"\n", fmt, "add", {})
    written: list[str] = []
    status, unanswered = promote_cli.batch_write("torch", io.BytesIO(stdin), out.batch_line, written.append)
    assert "".join(written) == expected
    items = list(promote_cli.batch("torch", io.BytesIO(stdin)))
    assert status == max(item.status for item in items) == 2
    assert unanswered == sum(item.status == 2 for item in items) > 0


def test_exit_code_of_refusals_alone_is_one():
    lines = b"c64 u32\nc64 U32 # again\nf32 f64\nC64 uint32\n"
    written: list[str] = []
    assert promote_cli.batch_write("paddle", io.BytesIO(lines), formats.get("text").batch_line, written.append,
                                   op="/") == (1, 0)
    assert "".join(written).count("error: ") == 3
    assert promote_cli.batch_write("paddle", io.BytesIO(b"f32 f64\nF32 float64\n"), str, [].append, op="/") == (0, 0)


def test_batch_memos_stay_bounded(monkeypatch):
    """Every memo (spellings, pairs, rendered lines, each side's spellings, error renderings) stays within
    `MEMO_ENTRIES`, and a spelling longer than any dtype's is never kept."""
    seen: dict[int, int] = {}
    kept: list = []
    real = Asker.remember

    def spy(self, memo, key, value):
        out = real(self, memo, key, value)
        seen[id(memo)] = max(seen.get(id(memo), 0), len(memo))
        kept.append(key)
        return out

    monkeypatch.setattr(promote_cli, "MEMO_ENTRIES", 20)
    monkeypatch.setattr(Asker, "remember", spy)
    lines = ([f"i8 u8 #{n}" for n in range(500)] + [f"I8{' ' * (n % 7 + 1)}U8" for n in range(500)]
             + [f"{d} {e}" for d in promote_cli.DTYPES for e in promote_cli.DTYPES]
             + [f"x{n} i8" for n in range(200)] + [f"i8 {'u' * (TOKEN_CHARS + 1 + n)}" for n in range(50)])
    items = list(promote_cli.batch("cann", lines))
    assert {item.answer.result for item in items[:1000]} == {"i16"}
    assert len(items) == len(lines)
    stdin = io.BytesIO("\n".join(lines).encode())
    promote_cli.batch_write("cann", stdin, formats.get("text").batch_line, [].append)
    assert len(seen) >= 6 and max(seen.values()) <= 20
    assert max(len(k) for k in kept if isinstance(k, str)) <= 2 * TOKEN_CHARS
    assert not any(isinstance(k, str) and k.startswith("u" * (TOKEN_CHARS + 1)) for k in kept)


def test_a_line_seen_again_after_eviction_answers_the_same(monkeypatch):
    monkeypatch.setattr(promote_cli, "MEMO_ENTRIES", 2)
    lines = ["i8 u8", "frob i8", "f16 bf16", "int8 UINT8", "i8 u8", "frob i8", "", "i8 u8"]
    got = [(item.operands, item.answer.result if item.answer else None, str(item.error) if item.error else None)
           for item in promote_cli.batch("cann", lines)]
    alone = [(item.operands, item.answer.result if item.answer else None, str(item.error) if item.error else None)
             for line in lines for item in promote_cli.batch("cann", [line])]
    assert got == alone
    rendered: list[str] = []
    promote_cli.batch_write("cann", io.BytesIO("\n".join(lines).encode()), formats.get("json").batch_line,
                            rendered.append)
    each = [formats.get("json").batch_line(item) for line in lines for item in promote_cli.batch("cann", [line])]
    assert "".join(rendered) == "".join(text + "\n" for text in each)
