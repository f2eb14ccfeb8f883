"""`promote query --batch`: lines of `A B` (an op group's op: its one to three operands) answered by canonical operands, through bounded memos.

    asker = Asker(ruleset, "add", options, entries=16384)
    asker.line("I8 uint8  # a comment")      # (("I8", "uint8"), Answer, None, pair key); None for a blank
    for number, items, clean in blocks(stream, MAX_LINE_BYTES): ...   # a binary stream, in whole lines
    status, unanswered = write_rendered(asker, lines, render, write)  # what the command prints

Each distinct operand spelling is parsed once and each canonical pair asked once. A line's answer depends
only on its text (the comment stripped, split on whitespace); only the errors of lines that cannot be read
(not UTF-8, too long) name the line's number. Every memo holds at most `entries` entries (then starts
again, empty) and remembers only operand spellings of at most `TOKEN_CHARS` characters, so memory stays
flat whatever the input.
"""

from __future__ import annotations

from promote_cli.errors import EXIT_USAGE, PromoteError, UsageError
from promote_cli.oracle.engine import Answer
from promote_cli.records import Record
from promote_cli.vocab.operands import parse as parse_operand

MAX_LINE_BYTES = 65536  # a batch line longer than this is an error line (a pair is a few dozen bytes)
CHUNK_BYTES = 1 << 18  # a stream is read this much at a time, and answered a block of whole lines at a time
TOKEN_CHARS = 64  # an operand spelled longer than this (no dtype's spelling is) is parsed every time, not kept
_WIDTH = 1 << 20  # pair key = index of a's canonical operand * _WIDTH + index of b's


class BatchLine(Record):
    """One answered line of a batch: its 1-based line `number`, its `operands`, and either the `answer`
    (whose result is None when refused) or the `error` that kept it from being asked."""

    number: int
    operands: tuple[str, ...] | None  # None when the line could not be read (not UTF-8, too long)
    answer: Answer | None
    error: PromoteError | None
    framework: str = ""  # the ruleset's name, the op asked and the ruleset's version, for renderings of a line
    op: str = ""         # that has no answer
    version: str = ""

    @property
    def status(self) -> int:
        """The line's exit code: 0 answered, 1 refused, 2 not a question (or a defect of the rules)."""
        if self.error is not None:
            return self.error.exit_code
        return 1 if self.answer.result is None else 0


class Asker:
    """Answers decoded batch lines of one ruleset, op and options, remembering what it parsed and asked."""

    def __init__(self, rs, op: str, options, entries: int, arity: int = 2, ask=None):
        """`arity` operands a line (an op group's op takes one to three); `ask(operands)` answers them (default:
        the ruleset's pair answer for `op`)."""
        from promote_cli.oracle.engine import answer

        self.rs, self.op, self.options, self.entries = rs, op, options, max(1, entries)
        self.arity = arity
        self._ask = ask or (lambda pair: answer(rs, pair[0], pair[1], op, options))
        self.tokens: dict = {}  # operand as written -> (Operand, index of its canonical spelling) or (None, error)
        self.canonical: dict = {}  # canonical spelling -> its index (a finite set: the vocabulary's operands)
        self.pairs: dict = {}  # operands' key -> (answer, None) or (None, the error asking raised)

    def remember(self, memo: dict, key, value):
        """Store in a bounded memo: a full memo starts again, empty."""
        if len(memo) >= self.entries:
            memo.clear()
        memo[key] = value
        return value

    def token(self, token: str):
        """(Operand, index of its canonical spelling), or (None, the error parsing it)."""
        hit = self.tokens.get(token)
        if hit is not None:
            return hit
        try:
            operand = parse_operand(token)
        except PromoteError as exc:
            hit = (None, exc)
        else:
            spelling = str(operand)
            index = self.canonical.get(spelling)
            if index is None:  # the vocabulary's dtypes in three forms and four Python kinds: never near _WIDTH
                index = self.canonical[spelling] = len(self.canonical)
            hit = (operand, index)
        if len(token) <= TOKEN_CHARS:
            self.remember(self.tokens, token, hit)
        return hit

    def line(self, line: str):
        """(operands as written, answer, error) for one decoded line, with the pair's key as a fourth item
        (None unless answered or refused); None for a blank or comment line."""
        text = line.split("#", 1)[0].strip() if "#" in line else line.strip()
        if not text:
            return None
        parts = tuple(text.split())
        if len(parts) != self.arity:
            shown = text if len(text) <= 80 else text[:77] + "..."
            wanted = "`A B`" if self.arity == 2 else f"{self.arity} operand{'s' * (self.arity > 1)} ({self.op})"
            return parts, None, UsageError(f"expected {wanted}, got {shown!r}"), None
        found, key = [], 0
        for part in parts:
            token = self.token(part)
            if token[0] is None:
                return parts, None, token[1], None
            found.append(token[0])
            key = key * _WIDTH + token[1]
        hit = self.pairs.get(key)
        if hit is None:
            try:
                hit = (self._ask(found), None)
            except PromoteError as exc:
                hit = (None, exc)
            self.remember(self.pairs, key, hit)
        return parts, hit[0], hit[1], key if hit[1] is None else None

    def batch_line(self, number: int, item) -> BatchLine | None:
        """The `BatchLine` of a decoded line (str) or of the error reading it (UsageError); None for a blank."""
        rs = self.rs
        if not isinstance(item, str):
            return BatchLine(number, None, None, item, rs.name, self.op, rs.version)
        hit = self.line(item)
        if hit is None:
            return None
        return BatchLine(number, hit[0], hit[1], hit[2], rs.name, self.op, rs.version)


def blocks(stream, limit: int = MAX_LINE_BYTES, size: int | None = None):
    """A binary stream's lines, a block at a time: `(number of the block's first line, items, clean)`.

    Items are the decoded lines (without "\\n"); in a block that is not `clean`, a line that is not UTF-8 or
    longer than `limit` bytes is its `UsageError` instead (an overlong line is skipped, never held whole).
    A clean block is all decoded lines of at most `limit` bytes."""
    read = getattr(stream, "read1", None) or stream.read
    size = size or CHUNK_BYTES
    number = 1
    carry = b""
    skipping = False  # inside an overlong line, until its newline
    while True:
        data = read(size)
        if not data:
            break
        if skipping:
            end = data.find(b"\n")
            if end < 0:
                continue
            data = data[end + 1:]
            skipping = False
        end = data.rfind(b"\n")
        if end >= 0:
            items, clean = _decode(carry + data[:end] if carry else data[:end], number, limit)
            yield number, items, clean
            number += len(items)
            carry = data[end + 1:]
        else:
            carry += data
        if len(carry) > limit:
            yield number, [_too_long(number, limit)], False
            number += 1
            carry = b""
            skipping = True
    if carry:
        items, clean = _decode(carry, number, limit)
        yield number, items, clean


def _too_long(number: int, limit: int) -> UsageError:
    return UsageError(f"line {number}: longer than {limit} bytes")


def _decode(block: bytes, number: int, limit: int):
    """(items, clean) of whole lines: one decoding for the block, line by line only when that fails."""
    try:
        lines = block.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        pass
    else:
        # a character is at most 4 bytes: only a block with a line that long needs its lines' bytes counted
        if len(block) <= limit or max(map(len, lines)) * 4 <= limit:
            return lines, True
    items: list = []
    for offset, raw in enumerate(block.split(b"\n")):
        if len(raw) > limit:
            items.append(_too_long(number + offset, limit))
            continue
        try:
            items.append(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            items.append(UsageError(f"line {number + offset}: not UTF-8 (byte 0x{raw[exc.start]:02x} at offset "
                                    f"{exc.start})"))
    return items, False


def items_of(lines, limit: int = MAX_LINE_BYTES):
    """`(number of the first line, items, clean)` blocks of a binary stream (see `blocks`) or of an iterable
    of str or bytes lines (each element one line, bytes decoded on its own), so that both read alike."""
    if hasattr(lines, "readline"):
        yield from blocks(lines, limit)
        return
    for number, line in enumerate(lines, 1):
        if isinstance(line, (bytes, bytearray)):
            try:
                line = bytes(line).decode("utf-8")
            except UnicodeDecodeError as exc:
                line = UsageError(f"line {number}: not UTF-8 (byte 0x{line[exc.start]:02x} at offset {exc.start})")
        yield number, [line], False


def write_rendered(asker: Asker, lines, render, write, limit: int = MAX_LINE_BYTES) -> tuple[int, int]:
    """Answer every line, `render(BatchLine)` each (a line without its newline), and `write` the text a block
    at a time; returns (the worst line's exit code, how many lines could not be answered).

    A line whose operands were answered (or refused) before costs two spelling look-ups and one pair look-up:
    its text comes from a memo of rendered lines keyed by the canonical pair. Whatever stops the run, the
    lines answered so far are written."""
    status = 0
    unanswered = 0
    texts: dict = {}  # pair key -> rendered line with "\n" (answered or refused: a refused pair set status 1)
    errors: dict = {}  # an unanswerable line's text -> its rendering (the same text renders the same)
    left: dict = {}  # operand as written -> index of its canonical spelling * _WIDTH
    right: dict = {}  # operand as written -> index of its canonical spelling
    remember = asker.remember

    def slow(number: int, item) -> str:
        """A line that is not a remembered answer: asked (and remembered), or an error, or a blank."""
        nonlocal status, unanswered
        if not isinstance(item, str):
            unanswered += 1
            status = EXIT_USAGE
            return render(asker.batch_line(number, item)) + "\n"
        hit = asker.line(item)
        if hit is None:
            return ""
        parts, ans, error, key = hit
        if key is None:  # not a question, or a defect of the rules: counted each time, rendered per text
            unanswered += 1
            status = max(status, error.exit_code)
            shown = " ".join(parts) if len(parts) == 2 else item.split("#", 1)[0].strip()
            text = errors.get(shown)
            if text is None:
                text = render(BatchLine(number, parts, ans, error, asker.rs.name, asker.op, asker.rs.version)) + "\n"
                if len(shown) <= 2 * TOKEN_CHARS:
                    remember(errors, shown, text)
            return text
        text = texts.get(key)
        if text is None:
            text = remember(texts, key, render(BatchLine(number, parts, ans, None, asker.rs.name, asker.op,
                                                         asker.rs.version)) + "\n")
        if ans.result is None:
            status = max(status, 1)
        if len(parts) != 2:  # an op of one or three operands: its lines come through here
            return text
        a, b = parts
        if len(a) <= TOKEN_CHARS and len(b) <= TOKEN_CHARS:  # a's index does not change: kept apart from b's
            remember(left, a, key - key % _WIDTH)
            remember(right, b, key % _WIDTH)
        return text

    out: list[str] = []
    try:
        for number, items, clean in items_of(lines, limit):
            append = out.append
            if not clean:
                for offset, item in enumerate(items):
                    append(slow(number + offset, item))
            else:
                text_of, left_of, right_of = texts.get, left.get, right.get
                for line in items:
                    if "#" in line:
                        line = line[:line.index("#")]
                    try:
                        a, b = line.split()
                        text = text_of(left_of(a) + right_of(b))
                    except (ValueError, TypeError):  # not two words, or a spelling not yet seen
                        text = None
                    if text is None:
                        text = slow(number + len(out), line)
                    append(text)
            chunk = "".join(out)
            out.clear()
            if chunk:
                write(chunk)
    finally:  # whatever stops the stream (an interrupt, a bug), the answers so far are not lost
        if out:
            write("".join(out))
    return status, unanswered
