"""The options of the commands that run without Click too (`promote query`, `promote cast`) and the options
every question shares, each declared once: its words, its parameter, its metavar, its choices or bounds, its
default, its help. `options.py` builds the Click options from these declarations; `fast.py` reads them to
recognise the same words without Click. (No Click and no `dataclasses` here: the fast path imports this.)"""

from __future__ import annotations


class Option:
    """One option: the words that give it (`--framework`, `-f`) and the parameter it sets (`framework`).

    `flag`: takes no value (True when given). `multiple`: repeatable, the values a tuple. `once`: the value a
    single word that may not be given twice (repeating it is a usage error, never "the last one wins").
    `choices`: the values allowed. `minimum`: an integer at least this. `envvar`: the environment variable that
    gives the value when the option is not given. `complete`: the name of its completer (`options.py`)."""

    __slots__ = ("words", "name", "metavar", "default", "choices", "minimum", "flag", "multiple", "once",
                 "envvar", "required", "complete", "help")

    def __init__(self, words: tuple[str, ...], name: str, help: str, *, metavar: str | None = None,  # noqa: A002
                 default=None, choices: tuple[str, ...] | None = None, minimum: int | None = None,
                 flag: bool = False, multiple: bool = False, once: bool = False, envvar: str | None = None,
                 required: bool = False, complete: str | None = None):
        self.words, self.name, self.help = words, name, help
        self.metavar, self.default, self.choices, self.minimum = metavar, default, choices, minimum
        self.flag, self.multiple, self.once, self.envvar = flag, multiple, once, envvar
        self.required, self.complete = required, complete

    def empty(self):
        """The value before any word gives it: False (a flag), [] (repeatable, or refused when repeated: the
        words are counted), else None."""
        return False if self.flag else [] if self.multiple or self.once else None


class Argument:
    """The positional words of a command: the parameter they fill (a tuple), whether one is required."""

    __slots__ = ("name", "metavar", "required", "complete")

    def __init__(self, name: str, *, metavar: str | None = None, required: bool = False, complete: str | None = None):
        self.name, self.metavar, self.required, self.complete = name, metavar, required, complete


class Command:
    """A command's positional words and options, in the order its help lists them."""

    __slots__ = ("name", "argument", "options")

    def __init__(self, name: str, argument: Argument, options: tuple[Option, ...]):
        self.name, self.argument, self.options = name, argument, options


FRAMEWORK_VARIABLE = "PROMOTE_FRAMEWORK"

# the options every question shares (`query`, `table`, `expr`, `explain`, `check`, `lattice`, `verify`)
FRAMEWORK = Option(
    ("--framework", "-f"), "framework", once=True, envvar=FRAMEWORK_VARIABLE, complete="side",
    metavar="NAME[@VERSION][:KEY=VALUE,...]",
    help="Framework ruleset (see `promote frameworks`), with options of its own if any (as -O gives them); "
         "default from $PROMOTE_FRAMEWORK.")
OP = Option(("--op",), "op", default="add", metavar="OP", complete="op",
            help="The operation (API name or operator symbol, as the framework lists them).")
OPTION = Option(("--option", "-O"), "options", multiple=True, metavar="KEY=VALUE", complete="option",
                help="A framework attribute, e.g. -O promote_unsafe=true (repeatable).")

def report_format(help: str) -> Option:  # noqa: A002
    """`--format text|json` of a command that prints a report (default text)."""
    return Option(("--format",), "fmt", help, default="text", choices=("text", "json"))


def framework_filter(help: str) -> Option:  # noqa: A002
    """`-f NAME[@VERSION]` of a listing (`promote frameworks`, `promote dtypes`): which ruleset's entries."""
    return Option(("--framework", "-f"), "framework", help, once=True, metavar="NAME[@VERSION]", complete="framework")


QUERY = Command("query", Argument("operands", complete="dtype"), (
    FRAMEWORK, OP, OPTION,
    report_format("text: the result alone; json: one object with the rule and reason."),
    Option(("--batch",), "batch", flag=True, help="Read `A B` pairs from stdin, one per line; answer each in order."),
))

CAST = Command("cast", Argument("inputs", metavar="IN.npy [IN2.npy ... | DIR]", required=True, complete="path"), (
    Option(("--to",), "to", metavar="DTYPE", complete="plain_dtype",
           help="Target dtype (any name or alias); required but with --compare FROM TO."),
    Option(("-o", "--output"), "output", metavar="OUT.npy", complete="path",
           help="Output file (one input only; - is refused: ./- names a file -). Default: IN.DTYPE.npy next to "
                "the input."),
    Option(("--from",), "from_", metavar="DTYPE", complete="plain_dtype",
           help="Reinterpret the stored bits as DTYPE (a uint16 or |V2 file as bf16, uint8 or |V1 as fp8); "
                "a checkpoint: cast only its tensors of DTYPE."),
    Option(("--mode",), "mode", default="tosa", choices=("tosa", "extended"),
           help="tosa: only the pairs TOSA CAST defines; extended: any numeric pair."),
    Option(("--saturate",), "saturate", flag=True,
           help="Clamp float overflow to the largest finite value (--mode extended; --semantics onnx: the default)."),
    Option(("--semantics",), "semantics", default="tosa", choices=("tosa", "ml_dtypes", "torch", "onnx"),
           help="Cast as this library does: TOSA CAST, ml_dtypes (numpy astype), torch (.to on CPU) or onnx "
                "(ONNX Runtime's Cast)."),
    Option(("--no-saturate",), "no_saturate", flag=True,
           help="--semantics onnx: Cast's saturate=0 for fp8 targets (float overflow to NaN or inf)."),
    Option(("--compare",), "compare", flag=True,
           help="Write nothing; show where the semantics disagree: for a conversion (cast --compare f32 f8e4m3), "
                "by value class with examples; for files (--to DTYPE), how many values each library converts "
                "differently."),
    Option(("--force",), "force", flag=True, help="Overwrite an existing output file (never the input)."),
    report_format("Report format: two lines (text) or one JSON object (json) per file, then a run's totals."),
    Option(("--fail-on",), "fail_on", multiple=True, choices=("overflow", "inexact", "nan"),
           help="Exit 1 when any element overflowed / was not exact / was or became NaN. Repeatable."),
    Option(("-j", "--jobs"), "jobs", minimum=1, metavar="N",
           help="Files cast in parallel (default and most: the number of CPUs, and the number of files)."),
    Option(("--exclude",), "exclude", multiple=True, metavar="PATTERN",
           help="Leave out the files whose name (in their directory) matches this glob, e.g. 'ids*.npy'. Repeatable."),
    Option(("--only",), "only", multiple=True, metavar="PATTERN",
           help="A checkpoint: cast only the tensors whose name matches this glob. Repeatable."),
    Option(("--skip",), "skip", multiple=True, metavar="PATTERN",
           help="A checkpoint: copy the tensors whose name matches this glob as they are. Repeatable."),
))
