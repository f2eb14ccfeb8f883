"""Write `promote_cli/compiled/`: the shipped rule files and the dtype vocabulary parsed, and the rule files'
expressions checked and compiled, as entries of the kinds the per-user cache keeps (`promote_cli/tomlcache.py`,
`promote_cli/oracle/exprcache.py`), so that no run parses TOML or compiles an expression for them: not the
first, nor one with the cache off (`PROMOTE_CACHE_DIR=`) or unwritable.

An entry is named by the SHA-256 of what it follows from (a file's bytes; a merged rule file, the vocabulary
and the compiler's source) and is read with the checks a cache entry gets, so a rule file, vocabulary or
compiler that changed selects no entry: it is parsed and compiled as before, and `--check` fails until the
directory is written again.

    python tools/compiled_rules.py --write    # after changing a rule file, dtypes.toml or the compiler
    python tools/compiled_rules.py --check    # exit 1 when the directory is not what --write makes
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "promote_cli" / "compiled"
sys.path.insert(0, str(ROOT))


def _dump(payload: dict) -> str:
    text = json.dumps(payload, ensure_ascii=False)  # keys in file order: the vocabulary's order is meaningful
    if json.loads(text) != payload:  # a NaN or a date would not read back the same
        raise SystemExit(f"not plain JSON data: {str(payload)[:200]}")
    return text + "\n"


def entries() -> dict[str, str]:
    """File name -> contents of every entry, made from the files themselves (never from an entry)."""
    os.environ["PROMOTE_CACHE_DIR"] = ""
    os.environ.pop("PROMOTE_RULES_PATH", None)
    from promote_cli import tomlcache

    tomlcache.SHIPPED_DIR = str(ROOT / "no such directory")  # parse everything afresh
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    from promote_cli.oracle import exprcache, loader, registry
    from promote_cli.vocab import dtypes

    files = registry._files()
    out = {}
    parsed = {}
    for path in [dtypes.DATA, *sorted(files.values())]:
        data = Path(path).read_bytes()
        digest = tomlcache.sha256(data)
        parsed[path] = tomllib.loads(data.decode("utf-8"))
        out[f"{digest}.json"] = _dump({"format": tomlcache.SHIPPED_TAG, "sha256": digest, "toml": parsed[path]})
    if list(parsed[dtypes.DATA]) != list(dtypes.DTYPES):  # the package loaded its vocabulary as the file says
        raise SystemExit(f"{dtypes.DATA}: the loaded vocabulary is not the file's")
    for stem in sorted(files):
        raw = registry._raw(files[stem], files)
        name = exprcache.shipped_key(raw, list(parsed[dtypes.DATA]))
        if name is None:
            raise SystemExit(f"{files[stem]}: cannot be keyed (the compiler's source cannot be read)")
        _, sites = loader._build(raw, str(files[stem]), None)
        out[f"{name}.expr.json"] = _dump({"format": exprcache.SHIPPED_TAG, "key": name, "expressions": sites})
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="write the directory (removing entries no longer made)")
    mode.add_argument("--check", action="store_true", help="exit 1 when the directory is not what --write makes")
    args = parser.parse_args(argv)
    want = entries()
    have = {p.name: p.read_text(encoding="utf-8") for p in OUT.glob("*.json")} if OUT.is_dir() else {}
    if args.check:
        stale = sorted(n for n in want if have.get(n) != want[n]) + sorted(n for n in have if n not in want)
        if stale:
            print(f"{OUT.relative_to(ROOT)} is not current ({len(stale)} entries differ): run "
                  "python tools/compiled_rules.py --write", file=sys.stderr)
            return 1
        print(f"{OUT.relative_to(ROOT)}: {len(want)} entries, current")
        return 0
    OUT.mkdir(exist_ok=True)
    for name in have:
        if name not in want:
            (OUT / name).unlink()
    for name, text in want.items():
        if have.get(name) != text:
            (OUT / name).write_text(text, encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {len(want)} entries written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
