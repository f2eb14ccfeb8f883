"""`promote cast` on a terminal: the progress bar, and what is printed while it is up.

The command runs in a subprocess whose stdout and stderr are a pseudo-terminal of 100 x 30,
as they are in a shell; a small screen model (`Screen`) replays what it wrote, so the tests
look at the screen a person would see, and at every frame the bar drew.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time

import numpy as np
import pytest

from promote_cli.cli.casting import files_done

WIDTH, HEIGHT = 100, 30

#: the cast command, with the one-file progress bar shown from 1 byte on (it is 64 MiB), through the Click
#: group (`main`) or the console script's entry (`run`, which takes the Click-free path)
SCRIPT = ("import sys, promote_cli.cli.casting as c; c.PROGRESS_MIN_BYTES = 1; "
          "from promote_cli.cli import {entry}; sys.argv[0] = 'promote'; {entry}()")

ENTRIES = pytest.mark.parametrize("entry", ["main", "run"])

CSI = re.compile(r"\x1b\[([?0-9;]*)([A-Za-z])")


class Screen:
    """Enough of a terminal to replay Rich's progress output: text, CR, LF, cursor up, erase line."""

    def __init__(self, width: int):
        self.width = width
        self.rows: list[list[str]] = [[]]
        self.row = self.col = 0

    def _put(self, ch: str) -> None:
        if self.col >= self.width:  # the terminal wraps
            self._newline()
        line = self.rows[self.row]
        line.extend(" " * (self.col - len(line) + 1))
        line[self.col] = ch
        self.col += 1

    def _newline(self) -> None:
        self.row += 1
        self.col = 0
        while len(self.rows) <= self.row:
            self.rows.append([])

    def feed(self, text: str) -> None:
        i = 0
        while i < len(text):
            m = CSI.match(text, i)
            if m:
                args, cmd = m.groups()
                n = int(args) if args.isdigit() else 1
                if cmd == "A":
                    self.row = max(0, self.row - n)
                elif cmd == "K":
                    self.rows[self.row] = [] if args == "2" else self.rows[self.row][:self.col]
                elif cmd == "G":
                    self.col = n - 1
                i = m.end()
                continue
            ch = text[i]
            if ch == "\r":
                self.col = 0
            elif ch == "\n":
                self._newline()
            elif ch == "\x1b":  # another escape (a charset, an OSC): not drawn
                i += 1
            elif ch >= " ":
                self._put(ch)
            i += 1

    def lines(self) -> list[str]:
        return ["".join(r).rstrip() for r in self.rows if "".join(r).strip()]


def on_terminal(args: list[str], cwd, entry: str = "main") -> tuple[int, str]:
    """Run `promote ARGS` with stdout and stderr on a 100 x 30 terminal: (exit code, what it wrote)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", HEIGHT, WIDTH, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES")}
    env["TERM"] = "xterm-256color"
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT.format(entry=entry), *args], stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=slave, cwd=cwd, env=env, close_fds=True)
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # the terminal closed: the command is done
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
    return proc.wait(timeout=60), b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(1)
    for i in range(4):
        np.save(tmp_path / f"m{i}.npy", rng.standard_normal(300_000).astype(np.float32))
    (tmp_path / "bad.npy").write_bytes(b"not an array")
    return tmp_path


def _no_bar_left(lines):
    return not any("━" in line or "files" in line and "/" in line and "->" not in line for line in lines)


@ENTRIES
def test_one_file_report_is_printed_on_its_own_lines_not_onto_the_bar(files, entry):
    code, raw = on_terminal(["cast", "m0.npy", "--to", "f16"], files, entry)
    assert code == 0, raw
    assert "cast m0.npy" in raw and "━" in raw  # the bar was drawn
    frames = [f for f in re.split(r"[\r\n]", CSI.sub("", raw)) if "cast m0.npy" in f]
    assert frames and all(re.fullmatch(r"cast m0\.npy [━╸╺ ]*━[━╸╺]* \S.*", f.rstrip()) for f in frames), frames
    assert not [f for f in frames if "  " in f.split("━")[-1].strip()], frames  # no column left empty
    screen = Screen(WIDTH)
    screen.feed(raw)
    lines = screen.lines()
    assert lines[0].startswith("m0.npy -> m0.f16.npy: f32 -> f16 (tosa), 300000 elements"), lines
    assert _no_bar_left(lines), lines


@ENTRIES
def test_several_files_count_files_and_name_the_file_a_refusal_concerns(files, entry):
    args = ["cast", "m0.npy", "m1.npy", "bad.npy", "m2.npy", "m3.npy", "--to", "f16", "-j", "1"]
    code, raw = on_terminal(args, files, entry)
    assert code == 2, raw
    assert f"cast {files_done(0, 5)}" in raw and f"cast {files_done(4, 5)}" in raw and "bytes" not in raw
    screen = Screen(WIDTH)
    screen.feed(raw)
    lines = screen.lines()
    assert _no_bar_left(lines), lines
    reports = [line for line in lines if " -> " in line and line.startswith("m")]
    assert [line.split()[0] for line in reports] == ["m0.npy", "m1.npy", "m2.npy", "m3.npy"]
    refusal = [line for line in lines if line.startswith("promote cast:")]
    assert refusal and refusal[0].startswith("promote cast: bad.npy: "), lines


def test_files_done_counts_files():
    assert files_done(3, 10) == "3/10 files"


def test_the_screen_model_shows_a_line_glued_onto_a_bar():
    """The check above can fail: a report written after a bar without clearing it stays on the bar's line."""
    screen = Screen(WIDTH)
    screen.feed("\x1b[?25lcast m0.npy ━━━━ 1.0/2.0 MB\x1b[?25h" + "m0.npy -> m0.f16.npy: ...\r\n")
    assert not _no_bar_left(screen.lines())
    screen = Screen(WIDTH)
    screen.feed("cast m0.npy ━━━━ 1.0/2.0 MB\r\x1b[2K" + "m0.npy -> m0.f16.npy: ...\r\n")
    assert screen.lines() == ["m0.npy -> m0.f16.npy: ..."]


@ENTRIES
def test_a_checkpoint_has_one_bar_counting_bytes_and_tensors(tmp_path, entry):
    import json
    import struct

    arrays = {f"t{i}": np.random.default_rng(i).standard_normal(200_000).astype(np.float32) for i in range(3)}
    head, data = {}, b""
    for name, a in arrays.items():
        head[name] = {"dtype": "F32", "shape": [a.size], "data_offsets": [len(data), len(data) + a.nbytes]}
        data += a.tobytes()
    text = json.dumps(head).encode()
    (tmp_path / "m.safetensors").write_bytes(struct.pack("<Q", len(text)) + text + data)
    code, raw = on_terminal(["cast", "m.safetensors", "--to", "f16"], tmp_path, entry)
    assert code == 0, raw
    assert "cast m.safetensors 0/3 tensors" in raw and "cast m.safetensors 2/3 tensors" in raw and "━" in raw
    screen = Screen(WIDTH)
    screen.feed(raw)
    lines = screen.lines()
    assert _no_bar_left(lines) and not any("tensors" in line and "/" in line for line in lines), lines
    assert [line.split()[0] for line in lines if "f32 -> f16" in line] == ["t0", "t1", "t2"], lines
