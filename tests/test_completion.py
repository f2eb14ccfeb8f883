"""Shell completion, through Click's completion machinery and through bash itself.

Click answers `_PROMOTE_COMPLETE=bash_complete` with `TYPE,VALUE` lines; the script that
`_PROMOTE_COMPLETE=bash_source promote` prints turns them into bash's COMPREPLY. An
operator symbol such as `*` must come back quoted: bash's `COMPREPLY+=($value)` would
otherwise expand it to the file names of the working directory.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.shell_completion import BashComplete

import promote_cli
from promote_cli.cli import main
from promote_cli.vocab.dtypes import DTYPES

#: characters a shell acts on in an unquoted word: globs, redirections, pipes, jobs, history
SHELL_SPECIAL = set("*?[]<>|&;!^$`\"' (){}~#")


def complete(*words: str) -> list[tuple[str, str]]:
    """(type, value) of each completion of the last word after `promote WORDS...`, as Click computes it."""
    args, incomplete = list(words[:-1]), words[-1]
    items = BashComplete(main, {}, "promote", "_PROMOTE_COMPLETE").get_completions(args, incomplete)
    return [(item.type, item.value) for item in items]


def values(*words: str) -> list[str]:
    return [v for _, v in complete(*words)]


@pytest.mark.parametrize("fw", ["tosa", "numpy", "torch", "paddle", "tensorflow", "jax", "openvino"])
def test_ops_are_offered_as_words_a_shell_keeps_as_they_are(fw):
    offered = values("query", "i8", "u8", "-f", fw, "--op", "")
    ops = set(promote_cli.load(fw).op_index)
    assert offered and {shlex.split(v)[0] for v in offered} == ops  # every op, each one word
    for v in offered:
        word = shlex.split(v)[0]
        assert len(shlex.split(v)) == 1
        if SHELL_SPECIAL & set(word):
            assert v == shlex.quote(word) and v.startswith("'"), v  # quoted, never bare


def test_the_multiply_symbol_is_offered_quoted():
    assert "*" in promote_cli.load("tosa").op_index
    assert values("query", "i8", "u8", "-f", "tosa", "--op", "*") == ["'*'", "'**'"]
    assert sorted(values("table", "-f", "tosa", "--op", "<")) == ["'<'", "'<<'", "'<='"]
    assert "add" in values("table", "-f", "numpy", "--op", "a")


def test_cast_and_rescale_complete_file_names():
    for words in (["cast", ""], ["cast", "w.npy", "-o", ""], ["cast", "w.npy", "w2"], ["rescale", "a"],
                  ["rescale", "a.npy", "--to", "i8", "-o", ""]):
        assert [t for t, _ in complete(*words)] == ["file"], words
    assert values("cast", "w.npy", "--to", "bf") == ["bf16"]
    assert values("cast", "w.npy", "--from", "f8e5") == ["f8e5m2", "f8e5m2fnuz"]


def test_framework_names_with_versions_in_any_case():
    assert values("query", "-f", "paddle@") == ["paddle@2.6", "paddle@3.3"]
    assert values("query", "-f", "PAD") == ["paddle", "paddle@2.6", "paddle@3.3"]
    assert "cann@opbase" in values("table", "-f", "cann")
    assert set(values("query", "-f", "array-api@")) == {x for x in promote_cli.framework_names()
                                                        if x.startswith("array-api@")}


def test_operands_complete_with_their_forms_and_python_scalars():
    assert values("query", "0d:i1") == ["0d:i16"]
    assert values("query", "0D:u6") == ["0D:u64"]
    assert values("query", "weak:f1") == ["weak:f16"]
    assert values("query", "py:") == ["py:bool", "py:int", "py:float", "py:complex"]
    assert values("query", "w") == ["weak:"]
    assert values("explain", "i8", "0d:") == [f"0d:{n}" for n in DTYPES]
    every = values("query", "")
    assert set(DTYPES) < set(every) and {"0d:", "weak:", "py:int"} < set(every)
    assert not any(SHELL_SPECIAL & set(v) for v in every)  # no `DTYPE?`: a shell globs `?`


def test_after_a_colon_that_bash_split_off_the_rest_of_the_operand_completes():
    assert values("query", "py", ":", "") == ["bool", "int", "float", "complex"]
    assert values("query", "i8", "py", ":", "f") == ["float"]
    assert values("query", "0d", ":", "i1") == ["i16"]
    assert values("explain", "WEAK", ":", "bf") == ["bf16"]
    assert "py:int" in values("query", "i8", "")  # no colon before: whole operands


def test_the_installed_program_answers_bash_complete(tmp_path):
    env = dict(os.environ, _PROMOTE_COMPLETE="bash_complete", COMP_WORDS="promote query i8 u8 -f tosa --op *",
               COMP_CWORD="7")
    out = subprocess.run([sys.executable, "-m", "promote_cli"], env=env, capture_output=True, text=True,
                         cwd=tmp_path, check=True).stdout
    assert out.splitlines() == ["plain,'*'", "plain,'**'"]
    env.update(COMP_WORDS="promote cast ", COMP_CWORD="2")
    out = subprocess.run([sys.executable, "-m", "promote_cli"], env=env, capture_output=True, text=True,
                         cwd=tmp_path, check=True).stdout
    assert out.splitlines() == ["file,"]


BASH_DRIVER = r"""
eval "$(_PROMOTE_COMPLETE=bash_source promote)"
try() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
        _promote_completion promote 2>/dev/null; printf '%s\n' "${COMPREPLY[@]}"; printf '%s\n' '--'; }
try promote query i8 u8 -f tosa --op '*'
try promote table -f tosa --op ''
try promote query -f paddle @
try promote query i8 py : i
try promote query weak : f1
"""


def test_bash_itself_never_expands_an_offered_op_into_file_names(tmp_path):
    bash = shutil.which("bash")
    assert bash, "bash is needed to check what bash makes of the completions"
    for name in ("a.npy", "b.npy", "notes.txt"):
        (tmp_path / name).write_text("")
    bindir = Path(sys.executable).parent
    assert (bindir / "promote").exists(), "the project is installed in the test environment"
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    out = subprocess.run([bash, "--norc", "--noprofile", "-c", BASH_DRIVER], env=env, cwd=tmp_path,
                         capture_output=True, text=True, check=True).stdout
    star, every, versions, python, weak, _ = out.split("--\n")
    assert python.split() == ["int"] and weak.split() == ["f16"]  # bash completes the part after the ':'
    assert star.split() == ["'*'", "'**'"]
    assert not any(name in out for name in ("a.npy", "b.npy", "notes.txt"))
    ops = every.split()
    assert "'*'" in ops and "add" in ops and "'<<'" in ops
    assert {shlex.split(op)[0] for op in ops} == set(promote_cli.load("tosa").op_index)
    assert versions.split() == ["2.6", "3.3"]  # bash replaces what follows the `@`


def test_options_complete_their_names_then_their_values():
    assert values("query", "i8", "u8", "-f", "openvino", "-O", "pro") == ["promote_unsafe="]
    assert values("table", "-f", "openvino", "-O", "") == [f"{k}=" for k in promote_cli.load("openvino").options]
    assert values("query", "i8", "u8", "-f", "openvino", "-O", "promote_unsafe=") == ["promote_unsafe=true",
                                                                                       "promote_unsafe=false"]
    assert values("query", "-f", "jax", "-O", "numpy_dtype_promotion=s") == ["numpy_dtype_promotion=standard",
                                                                           "numpy_dtype_promotion=strict"]
    assert values("table", "-f", "openvino", "-O", "u64_integer_promotion_target=f") == [
        "u64_integer_promotion_target=f8e4m3", "u64_integer_promotion_target=f8e5m2",
        "u64_integer_promotion_target=f16", "u64_integer_promotion_target=f32", "u64_integer_promotion_target=f64",
        "u64_integer_promotion_target=f4e2m1", "u64_integer_promotion_target=f8e8m0"]
    assert values("query", "-f", "cann", "-O", "") == []  # no options, nothing offered
    assert values("query", "-O", "") == []  # no ruleset on the line: nothing to read options from
    assert values("query", "-f", "nosuch", "-O", "") == []


def test_options_come_from_the_framework_in_the_environment(monkeypatch):
    monkeypatch.setenv("PROMOTE_FRAMEWORK", "tensorflow")
    assert values("query", "i8", "u8", "-O", "") == ["dtype_conversion_mode=", "prefer_float32="]
    assert values("check", "-O", "dtype_conversion_mode=a") == ["dtype_conversion_mode=all"]


def test_a_framework_with_its_options_completes_as_a_diff_side_does():
    assert values("query", "-f", "openvino:pro") == ["openvino:promote_unsafe="]
    assert values("query", "i8", "u8", "-f", "jax:x64=true", "-O", "numpy_dtype_promotion=s") == [
        "numpy_dtype_promotion=standard", "numpy_dtype_promotion=strict"]
    assert "add" in values("query", "i8", "u8", "-f", "numpy:x=1", "--op", "a")


def test_diff_sides_complete_names_then_their_options():
    assert values("table", "--diff", "openvino", "paddle@") == ["paddle@2.6", "paddle@3.3"]
    assert values("table", "--diff", "cann", "openvino:pro") == ["openvino:promote_unsafe="]
    assert values("table", "--diff", "cann", "openvino:promote_unsafe=t") == ["openvino:promote_unsafe=true"]
    assert values("table", "--diff", "jax", "jax:x64=true,") == ["jax:x64=true,numpy_dtype_promotion="]  # x64 given
    assert values("table", "--diff", "jax", "jax@0.10:numpy_dtype_promotion=st") == [
        "jax@0.10:numpy_dtype_promotion=standard", "jax@0.10:numpy_dtype_promotion=strict"]
    assert values("table", "--diff", "jax", "nosuch:x") == []


def test_words_bash_split_at_colons_and_equals_are_completed_whole():
    from promote_cli.cli.options import rejoin

    assert rejoin(["-O", "promote_unsafe", "="], "t") == (["-O"], "promote_unsafe=t", "promote_unsafe=")
    assert rejoin(["-O", "promote_unsafe"], "=") == (["-O"], "promote_unsafe=", "promote_unsafe=")
    assert rejoin(["query", "py"], ":") == (["query"], "py:", "py:")
    assert rejoin(["-O", "x64", "=", "true,"], "") == (["-O", "x64=true,"], "", "")
    assert rejoin(["--diff", "a", "openvino", ":", "x", "="], "true,u") == (
        ["--diff", "a"], "openvino:x=true,u", "openvino:x=")
    assert rejoin(["py", ":", "int", "u8"], "") == (["py:int", "u8"], "", "")


def bash_completions(tmp_path, *lines: str) -> list[list[str]]:
    """What bash puts in COMPREPLY for each line of words (as bash splits them), through the script
    `_PROMOTE_COMPLETE=bash_source promote` prints."""
    bash = shutil.which("bash")
    assert bash, "bash is needed to check what bash makes of the completions"
    bindir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("PROMOTE_FRAMEWORK", None)
    script = BASH_DRIVER.split("\ntry promote")[0] + "\n" + "\n".join(f"try {line}" for line in lines) + "\n"
    out = subprocess.run([bash, "--norc", "--noprofile", "-c", script], env=env, cwd=tmp_path,
                         capture_output=True, text=True, check=True).stdout
    return [part.split() for part in out.split("--\n")[:-1]]


def test_bash_completes_options_and_diff_sides_after_its_word_breaks(tmp_path):
    got = bash_completions(
        tmp_path,
        "promote query i8 u8 -f openvino -O promote_u",
        "promote query i8 u8 -f openvino -O promote_unsafe = t",
        "promote query i8 u8 -f openvino -O promote_unsafe =",  # right after '=': readline adds to the '='
        "promote query i8 py :",
        "promote table --diff cann openvino : promote_unsafe = true,py",
        "promote table --diff cann openvino : pro",
        "promote query i8 u8 -f openvino -O promote_unsafe = true -O u64_integer_promotion_target = i6",
    )
    assert got == [["promote_unsafe="], ["true"], ["true", "false"], ["bool", "int", "float", "complex"],
                   ["true,pytorch_scalar_promotion="], ["promote_unsafe="], ["i64"]]


def test_the_bash_script_leaves_no_space_after_a_name_that_takes_more():
    from promote_cli.cli.options import BashComplete

    source = BashComplete(main, {}, "promote", "_PROMOTE_COMPLETE").source()
    assert "compopt -o nospace" in source and "'nospace'" in source
    env = dict(os.environ, _PROMOTE_COMPLETE="bash_complete", COMP_WORDS="promote query -f openvino -O promote_u",
               COMP_CWORD="5")
    out = subprocess.run([sys.executable, "-m", "promote_cli"], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines() == ["nospace,promote_unsafe="]
    env.update(COMP_WORDS="promote query w", COMP_CWORD="2")
    out = subprocess.run([sys.executable, "-m", "promote_cli"], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines() == ["nospace,weak:"]


def test_a_version_after_the_at_sign_bash_split_off_completes():
    from promote_cli.cli.options import rejoin

    # `-f paddle@<Tab>`: bash's COMP_WORDBREAKS holds `@`, so the words are `paddle` and `@`, and readline
    # replaces what follows the `@`
    assert rejoin(["query", "-f", "paddle"], "@") == (["query", "-f"], "paddle@", "paddle@")
    assert rejoin(["query", "-f", "array-api", "@"], "202") == (["query", "-f"], "array-api@202", "array-api@")
    # the script says which pieces the line had no space before: `--op @` (matmul) stays two words
    assert rejoin(["query", "i8", "u8", "--op"], "@", "00000") == (["query", "i8", "u8", "--op"], "@", "@")
    assert rejoin(["query", "-f", "paddle"], "@", "0001") == (["query", "-f"], "paddle@", "paddle@")
    assert rejoin(["-O", "x64"], "=", "001") == (["-O"], "x64=", "x64=")
    assert rejoin(["-O", "x64"], "=", "0") == (["-O"], "x64=", "x64=")  # flags that do not fit: as without them


def bash_typed(tmp_path, *lines: str) -> list[list[str]]:
    """What bash offers for each line when it is typed at an interactive bash and Tab pressed: bash itself
    splits the line into COMP_WORDS (at its COMP_WORDBREAKS) and runs the script `_PROMOTE_COMPLETE=bash_source
    promote` prints. A wrapper around the script's function records COMPREPLY."""
    import pty
    import select
    import time

    bash = shutil.which("bash")
    assert bash, "bash is needed to check what bash makes of the completions"
    bindir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if k not in ("PROMOTE_FRAMEWORK", "BASH_ENV", "ENV")}
    env.update(PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", PS1="$ ", TERM="dumb", INPUTRC="/dev/null")
    record = tmp_path / "offered.txt"
    to_record = f'printf "%s\\n" "${{COMPREPLY[@]}}" -- >> {shlex.quote(str(record))}'
    setup = ('eval "$(_PROMOTE_COMPLETE=bash_source promote)"\n'
             f"_rec() {{ _promote_completion \"$@\"; {to_record}; }}\n"
             "complete -o nosort -F _rec promote\n")
    pid, fd = pty.fork()
    if pid == 0:  # the child: an interactive bash on the pseudo-terminal
        os.chdir(tmp_path)
        os.execve(bash, [bash, "--norc", "--noprofile", "-i"], env)

    def drain(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if select.select([fd], [], [], 0.05)[0]:
                try:
                    os.read(fd, 65536)
                except OSError:
                    return

    def answered() -> int:
        return record.read_text().count("--\n") if record.exists() else 0

    try:
        os.write(fd, setup.encode())
        drain(0.5)
        for number, line in enumerate(lines, 1):
            os.write(fd, line.encode() + b"\t")
            deadline = time.monotonic() + 30
            while answered() < number and time.monotonic() < deadline:
                drain(0.05)
            os.write(fd, b"\x15")  # readline's unix-line-discard: the next line starts empty
            drain(0.1)
        os.write(fd, b"exit\n")
        drain(0.2)
    finally:
        os.close(fd)
        os.waitpid(pid, 0)
    return [part.split() for part in record.read_text().split("--\n")[:-1]] if record.exists() else []


def test_bash_completes_what_is_typed_at_its_prompt(tmp_path):
    got = bash_typed(
        tmp_path,
        "promote query -f paddle@",
        "promote query -f array-api@202",
        "promote table --diff cann Paddle@3",  # the name as typed, the version completed
        "promote query i8 u8 -f openvino -O promote_unsafe=t",
        "promote table --diff cann openvino:promote_unsafe=true,py",
        "promote query i8 py:f",
    )
    versions = sorted(x.partition("@")[2] for x in promote_cli.framework_names() if x.startswith("array-api@202"))
    assert got == [["2.6", "3.3"], versions, ["3.3"], ["true"], ["true,pytorch_scalar_promotion="], ["float"]]
