"""Option declarations shared by the commands, with shell completion read from data. What the options'
values mean is parsed in `arguments.py` (no Click there: the fast `promote query` path uses it too)."""

from __future__ import annotations

import click
from click.shell_completion import BashComplete as _BashComplete
from click.shell_completion import CompletionItem, get_completion_class

from promote_cli.cli import definition
from promote_cli.cli.arguments import (  # noqa: F401  (the commands import them from here)
    MAX_TYPES,
    color_wanted,
    framework_alone,
    framework_options,
    given_once,
    parse_options,
    parse_types,
    require_framework,
)
from promote_cli.errors import UsageError


def _complete_framework(ctx, param, incomplete):
    """Ruleset names, `NAME@VERSION` included; as typed in any case."""
    import promote_cli as api

    low = incomplete.lower()
    try:
        names = api.framework_names()
    except api.PromoteError:  # completion never fails: a PROMOTE_RULES_PATH that is wrong completes nothing
        return []
    return [CompletionItem(x) for x in names if x.lower().startswith(low)]


#: the operand forms a dtype can take (the contract's `DTYPE?` is left out: a shell globs `?`)
OPERAND_FORMS = ("0d:", "weak:")
PYTHON_SCALARS = ("py:bool", "py:int", "py:float", "py:complex")


def _complete_dtype(ctx, param, incomplete):
    """Operands: canonical dtypes, each with a form (`0d:i8`, `weak:f16`), and the Python scalars."""
    from promote_cli.vocab.dtypes import DTYPES

    low = incomplete.lower()
    before = tuple(ctx.params.get(param.name) or ())
    if len(before) >= 2 and before[-1] == ":" and f"{before[-2].lower()}:" in (*OPERAND_FORMS, "py:"):
        # bash splits words at ':' (COMP_WORDBREAKS): `py:in<TAB>` arrives as `py`, `:`, `in`, and what
        # it puts in place is the part after the colon
        if before[-2].lower() == "py":
            return [CompletionItem(k[3:]) for k in PYTHON_SCALARS if k[3:].startswith(low)]
        return [CompletionItem(n) for n in DTYPES if n.startswith(low)]
    prefix = ""
    for form in OPERAND_FORMS:
        if low.startswith(form):
            prefix, low = incomplete[: len(form)], low[len(form):]
    names = [f"{prefix}{n}" for n in DTYPES if n.startswith(low)]
    if not prefix:
        names += [p for p in (*PYTHON_SCALARS, *OPERAND_FORMS) if p.startswith(low)]
    return [CompletionItem(n) for n in names]


def _complete_plain_dtype(ctx, param, incomplete):
    """A dtype without a form (`--to`, `--from`)."""
    from promote_cli.vocab.dtypes import DTYPES

    return [CompletionItem(n) for n in DTYPES if n.startswith(incomplete.lower())]


def shell_word(text: str) -> str:
    """`text` as one word a shell takes literally: an operator symbol that globs (`*`, `**`) or redirects
    (`<<`, `>`, `|`) comes quoted (`'*'`), so that completing it never inserts file names or a pipe."""
    import shlex

    return shlex.quote(text)


def _complete_op(ctx, param, incomplete):
    """The ops of the framework given with -f (API names and operator symbols, the symbols quoted)."""
    rs = _loaded(ctx.params.get("framework"))
    if rs is None:
        return []
    typed = incomplete.strip("'\"")
    return [CompletionItem(shell_word(o)) for o in rs.op_index if o.startswith(typed)]


def _loaded(spec: str | None):
    """The ruleset a name on the command line loads (`NAME[@VERSION][:KEY=VALUE,...]`), or None (completion
    never fails)."""
    import promote_cli as api

    if not spec:
        return None
    try:
        return api.load(spec.partition(":")[0])
    except Exception:  # a broken name or rule file completes nothing
        return None


def _option_words(rulesets, typed: str) -> list[str]:
    """`KEY=` for each option of `rulesets` that starts with `typed`; after `KEY=`, `KEY=VALUE` for that
    option's values (as typed so far: the key keeps the user's spelling)."""
    key, eq, value = typed.partition("=")
    options = {}
    for rs in rulesets:
        for name, opt in rs.options.items():
            options.setdefault(name, opt)
    if not eq:
        return [f"{name}=" for name in options if name.lower().startswith(key.lower())]
    opt = options.get(key.strip())
    if opt is None:
        return []
    return [f"{key}={w}" for w in opt.words() if w.lower().startswith(value.lower())]


def _complete_option(ctx, param, incomplete):
    """`-O KEY=VALUE`: the option names of the ruleset given with -f (or $PROMOTE_FRAMEWORK); after `KEY=`,
    that option's values. (`-f NAME:KEY=VALUE` and a `--diff` side carry their own: completed there.)"""
    rs = _loaded(ctx.params.get("framework"))
    return [CompletionItem(w) for w in _option_words([rs] if rs is not None else [], incomplete)]


def _complete_side(ctx, param, incomplete):
    """A `--diff` side, `NAME[@VERSION][:KEY=VALUE,...]`: the ruleset's name, then after `:` its options and
    their values (after `,` the next option, none given twice)."""
    spec, colon, given = incomplete.partition(":")
    if not colon:
        return _complete_framework(ctx, param, incomplete)
    rs = _loaded(spec)
    if rs is None:
        return []
    done, _, last = given.rpartition(",")
    before = incomplete[: len(incomplete) - len(last)]
    taken = {pair.partition("=")[0].strip() for pair in done.split(",") if pair}
    return [CompletionItem(before + w) for w in _option_words([rs], last) if w.partition("=")[0] not in taken]


def _complete_path(ctx, param, incomplete):
    """File names, completed by the shell itself."""
    return [CompletionItem(incomplete, type="file")]


COMPLETERS = {"framework": _complete_framework, "side": _complete_side, "op": _complete_op,
              "option": _complete_option, "dtype": _complete_dtype, "plain_dtype": _complete_plain_dtype,
              "path": _complete_path}


class _Whole(click.types.StringParamType):
    """A string whose environment variable is one value (a `multiple` option's variable is otherwise split)."""

    def split_envvar_value(self, rv: str):
        return [rv]


def _one(words: tuple[str, ...]):
    """The callback of an option given at most once: its value (None when not given), a UsageError when repeated."""
    def callback(ctx, param, values):
        return given_once(words, values)
    return callback


def click_option(option: definition.Option):
    """The Click option of a declaration (`definition.py`)."""
    settings: dict = {"help": option.help, "metavar": option.metavar, "multiple": option.multiple,
                      "required": option.required, "envvar": option.envvar}
    if option.flag:
        settings["is_flag"] = True
    elif option.default is not None:
        settings.update(default=option.default, show_default=True)
    if option.choices is not None:
        settings["type"] = click.Choice(list(option.choices))
    elif option.minimum is not None:
        settings["type"] = click.IntRange(min=option.minimum)
    if option.once:  # repeated: refused (Click would keep the last)
        settings.update(multiple=True, type=_Whole(), callback=_one(option.words))
    if option.complete is not None:
        settings["shell_complete"] = COMPLETERS[option.complete]
    return click.option(*option.words, option.name, **settings)


def declared(command: definition.Command):
    """A decorator giving a Click command the argument and options `command` declares, in its order."""
    argument = command.argument
    params = [click.argument(argument.name, nargs=-1, required=argument.required, metavar=argument.metavar,
                             shell_complete=COMPLETERS.get(argument.complete)),
              *(click_option(o) for o in command.options)]

    def decorate(f):
        for param in reversed(params):
            f = param(f)
        return f
    return decorate


framework_option = click_option(definition.FRAMEWORK)
op_option = click_option(definition.OP)
option_option = click_option(definition.OPTION)
dtype_argument_completion = _complete_dtype
complete_framework = _complete_framework
complete_op = _complete_op
complete_plain_dtype = _complete_plain_dtype
complete_path = _complete_path
complete_side = _complete_side


#: the characters at which bash splits a word for completion (its COMP_WORDBREAKS) that operands, options and
#: `NAME@VERSION` hold
WORD_BREAKS = ":=@"

#: set by the bash script (below) for each word after the program's name up to the one being completed: "1" when
#: it follows the word before it in the line with no space between (bash split one word there), "0" when not
JOINED_VARIABLE = "COMP_JOINED"


def rejoin(args: list[str], word: str, joined: str | None = None) -> tuple[list[str], str, str]:
    """bash splits `openvino:promote_unsafe=t` into `openvino`, `:`, `promote_unsafe`, `=`, `t` (right after a
    break, the break itself is the last piece), and readline replaces only what follows the last break (`t`, or
    nothing). Returns the words as typed, the word being completed whole, and the part of it that stays (what
    a completion must not repeat). `joined` ("0"/"1" for each of `args` and `word`, from the line itself) says
    which pieces bash split off the word before; without it, a piece made of breaks is taken to join its
    neighbours (so `--op @`, the matmul symbol, is told from `paddle@` only with it)."""
    pieces = [*args, word]
    known = joined is not None and len(joined) == len(pieces) and set(joined) <= {"0", "1"}
    out: list[str] = []
    glue = False
    for index, piece in enumerate(pieces):
        is_break = bool(piece) and not piece.strip(WORD_BREAKS)
        if out and (joined[index] == "1" if known else (glue or is_break)):
            out[-1] += piece
        else:
            out.append(piece)
        glue = is_break
    whole = out[-1]
    return out[:-1], whole, whole[: max(whole.rfind(c) for c in WORD_BREAKS) + 1]


#: bash: for each word from COMP_WORDS[1] to the current one, whether the line has no space before it (none when
#: the words are not the line's, as when COMP_LINE is not set); `%%%%` is the template's `%%`
_JOINED_SCRIPT = """\
    local line=$COMP_LINE joined="" i rest
    for ((i = 0; i <= COMP_CWORD && i < ${#COMP_WORDS[@]}; i++)); do
        rest=${line#"${line%%%%[![:blank:]]*}"}
        if [[ $rest != "${COMP_WORDS[i]}"* ]]; then
            joined=""
            break
        fi
        if ((i > 0)); then
            if [[ $rest == "$line" ]]; then joined+=1; else joined+=0; fi
        fi
        line=${rest#"${COMP_WORDS[i]}"}
    done

"""


class BashComplete(_BashComplete):
    """Click's bash completion, with the words bash split at `:`, `=` and `@` put back together before the
    completers see them (the script tells Python where the line had no space), and each completion cut to the
    piece bash replaces. A completion that ends in `:`, `=` or `,` (`weak:`, `promote_unsafe=`) gets no space
    after it."""

    source_template = (_BashComplete.source_template
                       .replace("    response=$(env COMP_WORDS=",
                                _JOINED_SCRIPT + f"    response=$(env {JOINED_VARIABLE}=\"$joined\" COMP_WORDS=")
                       .replace("        elif [[ $type == 'plain' ]]; then\n",
                                "        elif [[ $type == 'nospace' ]]; then\n"
                                "            COMPREPLY+=($value)\n"
                                "            compopt -o nospace\n"
                                "        elif [[ $type == 'plain' ]]; then\n"))

    def complete(self) -> str:
        import os

        args, word = self.get_completion_args()
        args, whole, kept = rejoin(args, word, os.environ.get(JOINED_VARIABLE))
        lines = []
        for item in self.get_completions(args, whole):
            value = item.value
            if item.type == "plain" and kept:
                if not value.lower().startswith(kept.lower()):
                    continue  # bash would put it after the part it keeps (names are as typed in any case)
                value = value[len(kept):]
            kind = "nospace" if item.type == "plain" and value.endswith((":", "=", ",")) else item.type
            lines.append(f"{kind},{value}")
        return "\n".join(lines)


#: the shells whose COMP_CWORD is the index of the word being completed (fish's is the word itself)
_INDEXED_SHELLS = ("bash", "zsh")


def check_completion_request(environ, variable: str) -> None:
    """A one-line UsageError for a shell-completion request Click would fail on or ignore silently: an unknown
    shell or instruction in `variable` (`bash_complete`, `zsh_source`, ...), no COMP_WORDS, or a COMP_CWORD
    that is not a word's index."""
    request = environ.get(variable)
    if request is None:
        return
    shell, _, instruction = request.partition("_")
    if get_completion_class(shell) is None or instruction not in ("source", "complete"):
        raise UsageError(f"{variable}={request!r}: expected SHELL_source or SHELL_complete (SHELL: bash, zsh, fish)")
    if instruction != "complete":
        return
    if "COMP_WORDS" not in environ:
        raise UsageError(f"{variable}={request}: COMP_WORDS is not set")
    cword = environ.get("COMP_CWORD", "")
    if shell in _INDEXED_SHELLS and not (cword.isascii() and cword.isdigit()):
        raise UsageError(f"{variable}={request}: COMP_CWORD must be the index of a word, got {cword!r}")


color_option = click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto",
                            show_default=True, help="Colour and boxes (auto: only on a terminal without NO_COLOR).")


#: the formats of a listing (`frameworks`, `dtypes`, `ops`, `port`)
LISTING_FORMATS = ["text", "json", "csv", "markdown", "rich"]


def listing_format(fmt: str | None, color: str):
    """A listing's format: as given, else rich on a terminal (fitted to its width) and text when piped or with
    NO_COLOR, as `promote table` does."""
    import shutil

    from promote_cli import formats

    colored = color_wanted(color)
    fmt = fmt or ("rich" if colored else "text")
    return formats.get(fmt, color=colored, width=shutil.get_terminal_size().columns if fmt == "rich" else None)
