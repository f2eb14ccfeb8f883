"""`query --batch` answers by canonical operands through bounded memos: the output must be byte for byte what
answering every line on its own gives (the reference below is the straightforward per-line algorithm: decode,
strip the comment, split, ask the engine with the operands as written, render), whatever the spellings."""

from __future__ import annotations

import random

import pytest
from click.testing import CliRunner

import promote_cli
from promote_cli import MAX_LINE_BYTES, BatchLine
from promote_cli.cli import formats, main
from promote_cli.errors import PromoteError, UsageError
from promote_cli.oracle.engine import answer

SEED = 20261122
FORMS = ["{}", "0d:{}", "0D:{}", "weak:{}", "WEAK:{}", "{}?"]
PY = ["py:int", "py:float", "PY:bool", "py:complex", "py:Int", "py:str"]
BAD = [b"\xff\xfe i8", b"i8 \xc3", b"i8 u8 f32", b"i8", b"x" * (MAX_LINE_BYTES + 10), b"frob i8", b"i8 0d:frob",
       b"", b"   ", b"# comment", b"i8 u8 # trailing", b"\ti8\t\tu8\t", b"py: i8", b"weak:weak:i8 i8", b"i8 u8\r"]


def _spellings(rng: random.Random) -> list[str]:
    out = []
    for d in promote_cli.DTYPES:
        for name in [d] + promote_cli.aliases(d):
            shown = rng.choice([name, name.upper(), name.capitalize()])
            out.append(rng.choice(FORMS).format(shown))
    return out + PY


def _stream(seed: int, n: int) -> bytes:
    rng = random.Random(seed)
    words = _spellings(rng)
    lines = []
    for _ in range(n):
        if rng.random() < 0.1:
            lines.append(rng.choice(BAD))
        else:
            lines.append(f"{rng.choice(words)} {rng.choice(words)}".encode())
    return b"\n".join(lines) + b"\n"


def _reference(framework: str, stdin: bytes, fmt: str, op: str, options: dict) -> str:
    out = formats.get(fmt)
    rs = promote_cli.load(framework)
    rendered = []
    for number, line in enumerate(stdin.split(b"\n")[:-1], 1):
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
            item = BatchLine(number, parts, answer(rs, parts[0], parts[1], op, options), None, rs.name, op, rs.version)
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


def test_batch_memos_stay_bounded(monkeypatch):
    seen = []
    real = promote_cli._remember

    def spy(memo, key, value, limit=None):
        out = real(memo, key, value, limit)
        seen.append(len(memo))
        return out

    monkeypatch.setattr(promote_cli, "MEMO_ENTRIES", 20)
    monkeypatch.setattr(promote_cli, "_remember", spy)
    lines = [f"i8 u8 #{n}" for n in range(500)] + [f"I8{' ' * (n % 7 + 1)}U8" for n in range(500)]
    items = list(promote_cli.batch("cann", lines))
    assert len(items) == 1000 and {item.answer.result for item in items} == {"i16"}
    assert seen and max(seen) <= 20


def test_a_line_seen_again_after_eviction_answers_the_same(monkeypatch):
    monkeypatch.setattr(promote_cli, "MEMO_ENTRIES", 2)
    lines = ["i8 u8", "frob i8", "f16 bf16", "int8 UINT8", "i8 u8", "frob i8", "", "i8 u8"]
    got = [(item.operands, item.answer.result if item.answer else None, str(item.error) if item.error else None)
           for item in promote_cli.batch("cann", lines)]
    alone = [(item.operands, item.answer.result if item.answer else None, str(item.error) if item.error else None)
             for line in lines for item in promote_cli.batch("cann", [line])]
    assert got == alone
