"""The per-user cache's entries (one per TOML file: the parsed TOML, and a rule file's compiled expressions):
answers are the same with it, without it and from a warm one; a changed or hostile entry (truncated,
corrupted, another file's, another format's or installation's, a link, another user's, writable by others) is
ignored and rebuilt; a cached dict is validated like a freshly parsed file; nothing generated is committed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from promote_cli import tomlcache
from promote_cli.errors import RuleFileError
from promote_cli.oracle.loader import read_toml

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
VOCABULARY = ROOT / "promote_cli" / "vocab" / "dtypes.toml"
QUESTIONS = ["i8 u8", "I8 uint8", "0d:f16 py:float", "weak:bf16 u8", "f16 bf16", "c64 f64", "frob i8", "i8"]


def _batch(env_cache: str | None, framework: str = "paddle") -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if env_cache is None:
        env["PROMOTE_CACHE_DIR"] = ""
    else:
        env["PROMOTE_CACHE_DIR"] = env_cache
    return subprocess.run([sys.executable, "-m", "promote_cli", "query", "--batch", "-f", framework, "--format",
                           "json"], input="\n".join(QUESTIONS) + "\n", capture_output=True, text=True, env=env)


def test_answers_are_identical_without_with_a_cold_a_warm_and_an_unwritable_cache(tmp_path):
    cache = str(tmp_path / "cache")
    blocker = tmp_path / "a-file"
    blocker.write_text("")  # a directory inside a regular file cannot be made, not even by root
    off, cold, warm, unwritable = _batch(None), _batch(cache), _batch(cache), _batch(str(blocker / "cache"))
    assert off.stdout and off.stdout == cold.stdout == warm.stdout == unwritable.stdout
    assert off.returncode == cold.returncode == warm.returncode == unwritable.returncode
    assert off.stderr == cold.stderr == warm.stderr == unwritable.stderr
    entries = {p.name: json.loads(p.read_text()) for p in Path(cache).glob("*.json")}
    vocabulary, rules = (_entry(Path(cache), path).name for path in (VOCABULARY, RULES / "paddle.toml"))
    files = {_entry(Path(cache), path).name for path in [VOCABULARY, *RULES.glob("paddle*.toml")]}
    assert {vocabulary, rules} <= set(entries) <= files  # made at first use: one entry for each file read
    assert entries[rules]["expressions"]["sites"] and "expressions" not in entries[vocabulary]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("PROMOTE_CACHE_DIR", str(directory))
    return directory


def _entry(cache: Path, path: Path) -> Path:
    import hashlib

    return cache / tomlcache.entry_name(hashlib.sha256(path.read_bytes()).hexdigest())


def _parses(monkeypatch) -> list:
    calls = []
    from promote_cli.oracle import loader

    real = loader.parse_toml

    def spy(text, path):
        calls.append(path)
        return real(text, path)

    monkeypatch.setattr(loader, "parse_toml", spy)
    return calls


def test_a_warm_entry_is_used_and_equals_the_parsed_file(cache, monkeypatch):
    path = RULES / "cann.toml"
    first = read_toml(path)
    assert _entry(cache, path).is_file() and oct(_entry(cache, path).stat().st_mode & 0o777) == "0o600"
    calls = _parses(monkeypatch)
    assert read_toml(path) == first and calls == []


def test_the_cache_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("PROMOTE_CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert tomlcache.cache_dir() is None
    read_toml(RULES / "cann.toml")
    assert list(tmp_path.iterdir()) == []


def test_xdg_cache_home_is_the_default_place(tmp_path, monkeypatch):
    monkeypatch.delenv("PROMOTE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert tomlcache.cache_dir() == str(tmp_path / "promote")


def _spoil_truncated(entry: Path):
    entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])


def _spoil_corrupted(entry: Path):
    entry.write_bytes(b"\x00\xff not json")


def _spoil_wrong_format(entry: Path):
    payload = json.loads(entry.read_text())
    payload["format"] = "0/py0.0"
    entry.write_text(json.dumps(payload))


def _spoil_other_files_digest(entry: Path):
    payload = json.loads(entry.read_text())
    payload["sha256"] = "0" * 64
    entry.write_text(json.dumps(payload))


def _spoil_not_a_dict(entry: Path):
    payload = json.loads(entry.read_text())
    entry.write_text(json.dumps({"format": payload["format"], "sha256": payload["sha256"], "toml": [1, 2]}))


def _spoil_symlink(entry: Path):
    target = entry.with_name("elsewhere.json")
    entry.rename(target)
    entry.symlink_to(target)


def _spoil_others_can_write(entry: Path):
    entry.chmod(0o666)


def _spoil_another_users(entry: Path):
    if os.getuid() != 0:
        pytest.fail("giving a file to another user needs root; run this test as root or in a container")
    os.chown(entry, 12345, 12345)


@pytest.mark.parametrize("spoil", [_spoil_truncated, _spoil_corrupted, _spoil_wrong_format, _spoil_other_files_digest,
                                   _spoil_not_a_dict, _spoil_symlink, _spoil_others_can_write, _spoil_another_users])
def test_a_hostile_entry_is_ignored_and_rebuilt(cache, monkeypatch, spoil):
    path = RULES / "cann.toml"
    good = read_toml(path)
    entry = _entry(cache, path)
    if spoil is not _spoil_wrong_format:  # the entry carries content the file does not have
        payload = json.loads(entry.read_text())
        payload["toml"]["name"] = "poisoned"
        entry.write_text(json.dumps(payload))
    spoil(entry)
    calls = _parses(monkeypatch)
    assert read_toml(path) == good and len(calls) == 1  # parsed again, not taken from the entry
    assert not entry.is_symlink() and entry.stat().st_uid == os.getuid() and entry.stat().st_mode & 0o022 == 0
    assert read_toml(path) == good and len(calls) == 1  # the rebuilt entry serves


def test_a_cache_directory_others_can_write_or_a_link_is_not_used(tmp_path, monkeypatch):
    path = RULES / "cann.toml"
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    for directory, mode in [(link, 0o700), (real, 0o777)]:
        real.chmod(mode)
        monkeypatch.setenv("PROMOTE_CACHE_DIR", str(directory))
        read_toml(path)
        calls = _parses(monkeypatch)
        read_toml(path)
        assert len(calls) == 1
        monkeypatch.undo()


def test_a_cached_dict_is_validated_like_a_parsed_file(cache, tmp_path, monkeypatch):
    from promote_cli.oracle import registry

    path = RULES / "cann.toml"
    read_toml(path)
    entry = _entry(cache, path)
    payload = json.loads(entry.read_text())
    payload["toml"]["rules"] = "not a list of clauses"
    entry.write_text(json.dumps(payload))
    registry.clear_cache()
    try:
        with pytest.raises(RuleFileError):
            registry.load_path(path)
    finally:
        registry.clear_cache()


def test_a_toml_value_json_cannot_hold_is_parsed_every_time(cache, tmp_path, monkeypatch):
    path = tmp_path / "dated.toml"
    path.write_text("when = 1979-05-27\nx = nan\n")
    first = read_toml(path)
    assert "when" in first and list(cache.glob("*.json")) == []


def _deep(depth: int):
    value: object = "x"
    for _ in range(depth):
        value = {"a": value}
    return value


def _spoil_huge(entry: Path):
    payload = json.loads(entry.read_text())
    payload["pad"] = "x" * tomlcache.MAX_ENTRY_BYTES  # valid JSON, over the bound
    entry.write_text(json.dumps(payload))


def _spoil_nested_deeper_than_a_parser_nests(entry: Path):
    payload = json.loads(entry.read_text())  # the right digest and format: only the depth is wrong
    payload["toml"]["rules"] = _deep(tomlcache.MAX_ENTRY_DEPTH + 600)
    entry.write_text(json.dumps(payload))


def _spoil_nested_deeper_than_json_parses(entry: Path):
    entry.write_text('{"toml": ' + "[" * 200_000 + "]" * 200_000 + "}")


def _spoil_fifo(entry: Path):
    entry.unlink()
    os.mkfifo(entry, 0o600)


def _spoil_directory(entry: Path):
    entry.unlink()
    entry.mkdir(mode=0o700)


@pytest.mark.parametrize("spoil", [_spoil_huge, _spoil_nested_deeper_than_a_parser_nests,
                                   _spoil_nested_deeper_than_json_parses, _spoil_fifo, _spoil_directory])
def test_a_huge_deep_or_special_entry_is_ignored_and_never_waited_on(cache, tmp_path, monkeypatch, spoil):
    import time

    path = tmp_path / "rules" / "cann.toml"  # a user's file
    path.parent.mkdir()
    path.write_bytes((RULES / "cann.toml").read_bytes() + b"# a user's copy\n")
    good = read_toml(path)
    entry = _entry(cache, path)
    assert entry.is_file()
    spoil(entry)
    kind = entry.lstat().st_mode & 0o170000
    calls = _parses(monkeypatch)
    start = time.monotonic()
    assert read_toml(path) == good and len(calls) == 1  # parsed again, not taken from the entry
    assert time.monotonic() - start < 5  # a FIFO is never opened for a blocking read
    if spoil in (_spoil_fifo, _spoil_directory):
        assert entry.lstat().st_mode & 0o170000 == kind  # a special file is never replaced
    else:
        assert read_toml(path) == good and len(calls) == 1  # the rebuilt entry serves


def test_validate_survives_a_cache_entry_nested_deeper_than_a_parser_nests(cache, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from promote_cli.cli import main
    from promote_cli.oracle import registry

    path = tmp_path / "rules" / "cann.toml"
    path.parent.mkdir()
    path.write_bytes((RULES / "cann.toml").read_bytes() + b"# a user's copy\n")
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(path.parent))
    read_toml(path)
    _spoil_nested_deeper_than_a_parser_nests(_entry(cache, path))
    registry.clear_cache()
    try:
        hides = f"promote: note: {path} hides {registry.builtin_dir() / 'cann.toml'}\n"  # the copy shadows cann
        for args, said in ((["validate", str(path)], ""), (["query", "i8", "u8", "-f", "cann"], hides)):
            result = CliRunner().invoke(main, args)
            assert result.exit_code == 0 and result.stderr == said, (args, result.stderr)
    finally:
        registry.clear_cache()


def test_shallow_measures_nesting():
    assert tomlcache.shallow(_deep(tomlcache.MAX_ENTRY_DEPTH))
    assert not tomlcache.shallow(_deep(tomlcache.MAX_ENTRY_DEPTH + 1))
    assert tomlcache.shallow([[[]]], 3) and not tomlcache.shallow([[[]]], 2) and tomlcache.shallow("x", 0)
    assert not tomlcache.shallow({"a": [1, {"b": [{}]}]}, 4) and tomlcache.shallow({"a": [1, {"b": [{}]}]}, 5)


def test_writing_an_entry_keeps_the_cache_bounded(tmp_path, monkeypatch):
    """A new entry removes the oldest written beyond MAX_ENTRIES, and the temporary files of writes that never
    finished once stale; nothing but the cache's own regular files is removed."""
    import hashlib
    import time

    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv("PROMOTE_CACHE_DIR", str(cache))
    monkeypatch.setattr(tomlcache, "MAX_ENTRIES", 20)
    now = time.time()

    def digest(i):
        return hashlib.sha256(str(i).encode()).hexdigest()

    names = []
    for i in range(30):                       # 30 entries, the first written longest ago
        name = digest(i) + (".json" if i % 2 else ".expr.json")
        (cache / name).write_text("{}")
        os.utime(cache / name, (now - 10000 + i, now - 10000 + i))
        names.append(name)
    others = {"notes.txt": "file", digest(100)[:63] + ".json": "file", digest(101) + ".JSON": "file",
              digest(102) + ".json.x.tmp": "file"}
    for name in others:
        (cache / name).write_text("x")
    os.utime(cache / next(iter(others)), (now - 99999, now - 99999))
    (cache / (digest(103) + ".json")).symlink_to(cache / names[0])     # a link with an entry's name
    (cache / (digest(104) + ".json")).mkdir()                           # a directory with one
    stale, fresh = digest(105) + ".json.123.tmp", digest(106) + ".json.456.tmp"
    for name, age in ((stale, 2 * tomlcache.STALE_TEMP_SECONDS), (fresh, 10)):
        (cache / name).write_text("{")
        os.utime(cache / name, (now - age, now - age))

    new = digest(200) + ".json"
    tomlcache.write_json(new, {"format": "x"})
    left = set(os.listdir(cache))
    kept = [n for n in names if n in left]
    assert kept == names[-19:]                # with the new one: 20 entries, the newest written
    assert new in left and fresh in left and stale not in left
    assert set(others) <= left and digest(103) + ".json" in left and (cache / (digest(104) + ".json")).is_dir()


def test_prune_of_a_missing_or_unreadable_directory_is_no_error(tmp_path):
    tomlcache.prune(str(tmp_path / "nowhere"))
    f = tmp_path / "file"
    f.write_text("x")
    tomlcache.prune(str(f))


def test_an_entry_another_installation_wrote_is_not_used(cache, monkeypatch):
    """An entry carries the format of the code that wrote it, and is named by it: another installation,
    interpreter or version of the loader parses the file again and keeps an entry of its own, and one that
    carries another format under this installation's name is ignored and rewritten."""
    path = RULES / "cann.toml"
    good = read_toml(path)
    ours = _entry(cache, path)
    assert json.loads(ours.read_text())["format"] == tomlcache.tag()
    monkeypatch.setattr(tomlcache, "_tag", [f"{tomlcache.FORMAT}/another-python/another-stamp"])
    theirs = _entry(cache, path)
    calls = _parses(monkeypatch)
    assert read_toml(path) == good and len(calls) == 1
    assert theirs != ours and json.loads(theirs.read_text())["format"] == tomlcache.tag()
    assert read_toml(path) == good and len(calls) == 1
    theirs.write_text(ours.read_text())  # our entry under their name
    assert read_toml(path) == good and len(calls) == 2
    assert json.loads(theirs.read_text())["format"] == tomlcache.tag()


def _stamped_copy(tmp_path, monkeypatch) -> Path:
    """The stamped files copied to a directory the stamp is taken from from now on."""
    import shutil

    here = Path(tomlcache.__file__).parent
    for name in tomlcache.STAMPED:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(here / name, tmp_path / name)
    monkeypatch.setattr(tomlcache, "_HERE", str(tmp_path))
    monkeypatch.setattr(tomlcache, "_tag", [])
    return tmp_path


@pytest.mark.parametrize("name", tomlcache.STAMPED)
def test_the_stamp_changes_with_any_write_to_a_stamped_file(tmp_path, monkeypatch, name):
    """Even an edit that keeps the file's size and sets its mtime back changes the stamp (its ctime), so compiled
    output of an edited loader or compiler is never taken for the current one's."""
    import time

    copy = _stamped_copy(tmp_path, monkeypatch)
    before = tomlcache.tag()
    assert before is not None and before.startswith(f"{tomlcache.FORMAT}/{sys.implementation.cache_tag}/")
    monkeypatch.setattr(tomlcache, "_tag", [])
    assert tomlcache.tag() == before  # the same files: the same stamp
    path = copy / name
    info = path.stat()
    time.sleep(0.05)  # past the file system's clock tick
    data = path.read_bytes()
    path.write_bytes(data[:-1] + (b" " if data[-1:] != b" " else b"\n"))  # same size, one byte changed
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert path.stat().st_size == info.st_size and path.stat().st_mtime_ns == info.st_mtime_ns
    monkeypatch.setattr(tomlcache, "_tag", [])
    assert tomlcache.tag() not in (before, None)


def test_a_stamped_file_that_cannot_be_read_turns_the_cache_off(tmp_path, monkeypatch, cache):
    copy = _stamped_copy(tmp_path / "package", monkeypatch)
    (copy / "oracle" / "loader.py").unlink()
    calls = _parses(monkeypatch)
    read_toml(RULES / "cann.toml")
    read_toml(RULES / "cann.toml")
    assert tomlcache.tag() is None and len(calls) == 2 and not cache.exists()


def test_the_package_holds_no_generated_files():
    """The cache's entries are made at first use, never committed: what the package tracks is source (`.py`) and
    the hand-written data it reads (the vocabulary, the expression corpus)."""
    done = subprocess.run(["git", "-C", str(ROOT), "ls-files", "promote_cli"], capture_output=True, text=True,
                          check=False)
    if done.returncode == 0 and done.stdout:
        tracked = done.stdout.split()
    else:  # not a git checkout (an unpacked sdist): what is on disk
        tracked = [str(p.relative_to(ROOT)) for p in (ROOT / "promote_cli").rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts]
    assert tracked and "promote_cli/vocab/dtypes.toml" in tracked
    assert not [t for t in tracked if not t.endswith(".py")
                and t not in ("promote_cli/vocab/dtypes.toml", "promote_cli/probes/expressions.txt")]
    assert not [t for t in tracked if t.startswith("promote_cli/compiled/") or tomlcache._own_name(Path(t).name)]
