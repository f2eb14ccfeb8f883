"""promote: a type-promotion oracle for machine-learning frameworks.

    from promote_cli import query, query_n, table, diff, batch, validate, load
    query("cann", "s8", "u8").result                      # 'i16'
    query("openvino", "i8", "u8", options={"promote_unsafe": True}).result
    query_n("cann", ["i8", "u8", "f16"]).result          # 'f16': N operands, result_type(a, b, c)
    table("cann").results()                               # the full matrix
    diff("cann", "cann@opbase").differences               # where two rulesets disagree
    diff("openvino", "openvino:promote_unsafe=true")      # a side may carry its own options
    for line in batch("cann", sys.stdin.buffer): ...      # `promote query --batch`, line by line
    validate(["my-rules.toml"])                           # every problem of rule files
    explain("openvino", "i8", "u8").refused_by           # which rule decided, what options would change
    check("cann@opbase").findings                         # commutativity, associativity, ... with counterexamples
    expect("examples/ci.expect").mismatches               # a CI file of `FW A [B [C ...]] [OP] -> RESULT` lines
    lattice("jax").edges                                  # the Hasse diagram of a ruleset's order
    render(table("openvino"), "svg")                      # a payload in an output format (svg, html, dot, ...)
    cast_array(x, "f16")                                  # TOSA CAST of a numpy array (numpy loaded on use)
    cast_file("w.npy", to="bf16")                         # the same on a .npy file, streamed
    run_checkpoint(plan_checkpoint("m.safetensors", "bf16"))  # a checkpoint, tensor by tensor

Everything the CLI does is here, with the same errors (`UsageError` for a question that
cannot be asked, `RuleDefect` for a rule file that fails while answering); the CLI only
parses, calls and renders.
"""

from __future__ import annotations

from promote_cli.errors import PromoteError, Refusal, RuleDefect, RuleFileError, RulesHidden, UsageError
from promote_cli.vocab.dtypes import DTYPES, DType, aliases, lookup
from promote_cli.vocab.operands import Operand
from promote_cli.vocab.operands import parse as parse_operand

__all__ = ["query", "query_n", "ops", "batch", "batch_write", "table", "diff", "parse_side", "port", "check", "explain",
           "expect",
           "expr", "lattice", "load", "frameworks", "framework_names", "shadowed", "is_default", "dtypes", "aliases",
           "spellings", "verify", "validate", "cast_pairs", "cast_array", "cast_file", "plan_cast", "run_cast",
           "compare_cast", "compare_columns", "compare_npy", "compare_checkpoint",
           "plan_checkpoint", "run_checkpoint", "is_checkpoint", "cast_totals", "defer_signals", "interrupted_by",
           "rescale_array", "rescale_file", "rescale_table", "render",
           "write_output", "write_outputs", "lookup", "parse_operand",
           # what the functions return
           "Answer", "BatchLine", "Matrix", "Diff", "Column", "Check", "Explanation", "ExpectReport", "Expectation",
           "ExprResult", "Order", "Ruleset", "Report", "Port", "PortCase", "FileCheck", "CastRequest", "CastPlan",
           "Outcome", "CastReport", "CastTotals", "CheckpointPlan", "TensorReport", "CheckpointTotals", "RescaleReport",
           "DType", "DTYPES", "Operand",
           "PromoteError", "Refusal", "RuleDefect", "RuleFileError", "RulesHidden", "UsageError"]

#: names loaded on first use, each from its module (`MODULE.NAME`): the engine is not loaded by commands that
#: answer no query (cast, rescale), and the numeric parts load numpy and ml_dtypes
LAZY = {
    "Answer": "promote_cli.oracle.engine.Answer",
    "BatchLine": "promote_cli.oracle.batch.BatchLine",
    "MAX_LINE_BYTES": "promote_cli.oracle.batch.MAX_LINE_BYTES",  # the longest line `batch` reads
    "parse_side": "promote_cli.oracle.registry.parse_side",
    "Ruleset": "promote_cli.oracle.model.Ruleset",
    "Matrix": "promote_cli.oracle.matrix.Matrix",
    "Diff": "promote_cli.oracle.matrix.Diff",
    "Column": "promote_cli.oracle.matrix.Column",
    "Check": "promote_cli.oracle.properties.Check",
    "Port": "promote_cli.oracle.port.Port",
    "PortCase": "promote_cli.oracle.port.PortCase",
    "Explanation": "promote_cli.oracle.explain.Explanation",
    "ExpectReport": "promote_cli.oracle.expect.ExpectReport",
    "Expectation": "promote_cli.oracle.expect.Expectation",
    "Order": "promote_cli.oracle.order.Order",
    "FileCheck": "promote_cli.oracle.validate.FileCheck",
    "ExprResult": "promote_cli.expressions.evaluate.ExprResult",
    "Report": "promote_cli.probes.recordings.Report",
    "cast_array": "promote_cli.numerics.cast.cast_array",
    "cast_file": "promote_cli.arrayio.castfile.cast_file",  # a .npy file, streamed
    "compare_columns": "promote_cli.numerics.compare.columns",  # the semantics a comparison shows, in order
    "compare_npy": "promote_cli.arrayio.comparefile.compare_npy",  # every semantics over a .npy file, streamed
    "compare_checkpoint": "promote_cli.arrayio.comparefile.compare_checkpoint",  # over a safetensors checkpoint
    "CastRequest": "promote_cli.numerics.legality.CastRequest",
    "CastPlan": "promote_cli.arrayio.castfile.CastPlan",
    "Outcome": "promote_cli.arrayio.castfile.Outcome",
    "CastReport": "promote_cli.arrayio.castfile.CastReport",
    "CastTotals": "promote_cli.arrayio.castfile.CastTotals",
    "CheckpointPlan": "promote_cli.arrayio.checkpoint.CheckpointPlan",
    "TensorReport": "promote_cli.arrayio.checkpoint.TensorReport",
    "CheckpointTotals": "promote_cli.arrayio.checkpoint.CheckpointTotals",
    "rescale_array": "promote_cli.numerics.rescale.rescale_array",
    "rescale_file": "promote_cli.arrayio.rescalefile.rescale_file",  # TOSA RESCALE of a .npy file, streamed
    "RescaleReport": "promote_cli.arrayio.rescalefile.RescaleReport",
    "rescale_table": "promote_cli.numerics.rescale_rules.listing",  # RESCALE's rules as data
}


def load(framework: str) -> Ruleset:
    """The compiled Ruleset for `NAME` or `NAME@VERSION`."""
    from promote_cli.oracle.registry import load as _load

    return _load(framework)


def query(framework: str, a, b=None, op: str = "add", options: dict | None = None) -> Answer:
    """The answer of `framework` for `a op b`; `.result` is None when the framework refuses. An operand is a
    spelling (`"i8"`, `"int8"`, `"0d:f32"`, `"py:int"`), a `DType`, an `Operand`, or a NumPy dtype or scalar type
    (`np.dtype("int8")`, `np.int8`, `ml_dtypes.bfloat16`); any other object is a TypeError. An op of the ruleset's
    op groups (`promote ops`) takes its own number of operands: `query("numpy", "i8", op="sum")`."""
    return _ask(load(framework), [a] if b is None else [a, b], op, options)


def query_n(framework: str, operands, op: str = "add", options: dict | None = None) -> Answer:
    """The answer of `framework` for two or more operands (`result_type(a, b, c, ...)`), as the ruleset's
    `[nary]` says (folded pairwise from the left, or one join on a lattice); `.operands` lists them all.
    `operands` is a list of operands (as `query` takes them) or a string of them, `"i8 u8 f16"`, as the command
    line's words. An op of the ruleset's op groups takes its own number of operands (`where`: three)."""
    operands = operands.split() if isinstance(operands, str) else list(operands)
    return _ask(load(framework), operands, op, options, pair=False)


def _op_answer(rs, operands: list, op: str, options: dict | None) -> Answer:
    from promote_cli.expressions.ops import answer as op_answer

    return op_answer(rs, op, operands, options)


def _ask(rs, operands: list, op: str, options: dict | None, pair: bool = True) -> Answer:
    """A ruleset's answer for its operands: an op group's op, else the pair answer of the rules (`pair`, for two
    operands) or their N-operand answer."""
    if rs.by_group(op, len(operands)):
        return _op_answer(rs, operands, op, options)
    if len(operands) < 2:
        _too_few(rs, op)
    if len(operands) == 2 and pair:
        from promote_cli.oracle.engine import answer

        return answer(rs, operands[0], operands[1], op, options)
    from promote_cli.oracle.engine import answer_n

    return answer_n(rs, operands, op, options)


def _too_few(rs, op: str):
    """UsageError: an unknown op (with the closest names), else a pair op given fewer than two operands."""
    from promote_cli.oracle.engine import resolve_op

    resolve_op(rs, op)
    raise UsageError("query takes two operands (or more): promote query A B [C ...] -f FRAMEWORK")


def ops(framework: str) -> list[dict]:
    """Every op of the ruleset's op groups (`[opgroups]`, docs/ops.md), in the file's order: a dict per op with
    `op`, `aliases`, `arity`, `group`, `rule` (the group's rule in one line), `doc` and `source`."""
    from promote_cli.expressions.ops import listing

    return listing(load(framework))


MEMO_ENTRIES = 16384  # each of a batch's memos (operand spellings, canonical pairs, rendered lines) holds at most this many


def batch(framework: str, lines, op: str = "add", options: dict | None = None) -> Iterator[BatchLine]:
    """Answer `A B` lines in order (an op group's op: `A`, `A B` or `A B C`, as many as it takes): yields a
    `BatchLine` per line that is not blank or a `#` comment.

    `lines` is an iterable of str or bytes lines, or a binary stream (read in blocks of whole lines). A bytes
    line is decoded as UTF-8 on its own: an undecodable or overlong line gets its own error and the lines
    after it are still answered. The framework, op and options are checked before the first line
    (UsageError). A rule that fails on a line is that line's error (`RuleDefect`), never a refusal.

    Lines are answered by their canonical operands: each distinct operand spelling is parsed once and
    each canonical pair asked once, so `I8 uint8` after `i8 u8` costs two look-ups. Every memo is bounded
    (`MEMO_ENTRIES`), so memory stays flat however long or varied the input.
    """
    from promote_cli.oracle.batch import items_of

    asker = _asker(framework, op, options)
    for number, items, _ in items_of(lines):
        for offset, item in enumerate(items):
            line = asker.batch_line(number + offset, item)
            if line is not None:
                yield line


def batch_write(framework: str, lines, render, write, op: str = "add", options: dict | None = None) -> tuple[int, int]:
    """`promote query --batch` as text: every line answered as `batch` answers it, `render(BatchLine)` (the
    line's text without its newline, as `formats/` make it) written with `write(str)` a block of lines at
    a time; returns `(exit code, lines that could not be answered)`, the worst line's code (2 outranks 1).

    The same output as rendering each of `batch`'s lines, faster: a line whose canonical operands were
    answered before is rendered from a memo of rendered lines (bounded like the others), without making
    its `BatchLine`. The lines answered so far are written whatever stops the stream."""
    from promote_cli.oracle.batch import write_rendered

    return write_rendered(_asker(framework, op, options), lines, render, write)


def _asker(framework: str, op: str, options: dict | None):
    """The framework, op and options checked (UsageError before the first line), ready to answer lines."""
    from promote_cli.oracle.batch import Asker
    from promote_cli.oracle.engine import parse_options, resolve_op

    rs = load(framework)
    if rs.by_group(op):  # an op group's op: its own number of operands a line
        from promote_cli.expressions.ops import group_of

        parse_options(rs, options)
        return Asker(rs, op, options, MEMO_ENTRIES, group_of(rs, op).arity,
                     lambda found: _op_answer(rs, found, op, options))
    resolve_op(rs, op)
    parse_options(rs, options)
    return Asker(rs, op, options, MEMO_ENTRIES)


def table(framework: str, types: list[str] | str | None = None, op: str = "add", options: dict | None = None, *,
          common_types: bool = False, drop_refused: bool = False, operands: list[str] | str | None = None
          ) -> Matrix | Column:
    """The promotion matrix (a `Matrix`: `.types`, `.results()`, `.absent`: the operands it lacks); `types` (a list
    of operands, or a string of them as `--types` takes it, `"i8,u8"`) may not repeat an operand. `common_types`
    keeps only the operands the framework has, `drop_refused` only those with an answer in their row or column;
    `operands` (as `types`) go after the types on both axes (`"0d:i64,py:int"`). An op of one operand of the ruleset's op groups (`sum`) gives a `Column` instead: `.results`, a result per
    operand."""
    from promote_cli.oracle import matrix

    rs = load(framework)
    if _arity(rs, op) == 1:
        side = matrix.Side(framework, rs, dict(options or {}))
        return matrix.column([side], types, op, _ask, common_types=common_types, drop_refused=drop_refused,
                             operands=operands)
    return matrix.matrix(rs, types, op, options, common_types, drop_refused, ask=_ask, operands=operands)


def diff(*sides, types: list[str] | str | None = None, op: str = "add", options: dict | None = None,
         common_types: bool = False, drop_refused: bool = False, operands: list[str] | str | None = None) -> Diff | Column:
    """The cells where rulesets answer differently (a `Diff`: `.frameworks`, `.differences`).

    `diff("cann", "cann@opbase")` or `diff(["openvino", ("openvino", {"promote_unsafe": True})])`:
    two or more sides, each a name, a spec string `NAME[@VERSION][:KEY=VALUE,...]` or a pair
    (NAME, options). `options` applies to every side that has the option; an option no side has,
    or a side's own option its ruleset lacks, is a UsageError (as on the command line). `common_types` compares only the
    operands every side has, `drop_refused` leaves out those no side answers any pair of (`.absent`: per side,
    the operands it lacks); `operands` go after the types on both axes, as in `table`. An op of one operand of the sides' op groups (`sum`) gives a `Column`: every
    operand with each side's result, `.differences` those where they differ.
    """
    from promote_cli.oracle import matrix

    loaded = matrix.sides(sides, options)
    arity = next((_arity(s.ruleset, op) for s in loaded if s.ruleset.by_group(op)), 2)
    if arity == 1:
        return matrix.column(loaded, types, op, _ask, common_types=common_types, drop_refused=drop_refused,
                             operands=operands)
    return matrix.diff(loaded, types, op, options, common_types=common_types, drop_refused=drop_refused, ask=_ask,
                       operands=operands)


def _arity(rs, op: str) -> int:
    """How many operands `op` takes in ruleset `rs` (2 for a pair op of its rules); UsageError for three, which no
    table shows."""
    if not rs.by_group(op):
        return 2
    arity = rs.opgroups[rs.op_names[op]].arity
    if arity == 3:
        raise UsageError(f"{op} takes three operands, which no table shows: ask `promote query A B C --op {op}` "
                         "or --batch")
    return arity


def compare_cast(src: str, dst: str, saturate: bool = True) -> list:
    """Per value class, how each library's cast semantics converts `src`'s recorded edge-case inputs (the TOSA
    probe's: every bit pattern of an 8- or 16-bit type, the edges of a wider one) to `dst` (`ClassRow`s)."""
    from promote_cli.numerics.compare import Tally
    from promote_cli.probes.tosa import cast_inputs

    tally = Tally(src, dst, saturate)
    tally.add(cast_inputs(src))
    return tally.rows()


def port(source, target, op: list[str] | str | None = None, types: list[str] | str | None = None,
         kinds: list[str] | str | None = None) -> Port:
    """The casts that make `target` reproduce `source` (a `Port`: `.ops`, `.cases`, `.counts()`, `.summary()`).

    `port("torch", "onnx", op="+")`: each side a name, a spec `NAME[@VERSION][:KEY=VALUE,...]` or a pair (NAME,
    options); `op` one op name or several, as either side names it (`Add`, `+`, `sum`; default: every op the
    source has that the target has too); `types` the source's dtypes asked (default: all); `kinds` the operand
    forms beside tensors (`"0d,py,weak"`; default `"all"`: those the source distinguishes). For every case the
    target answers differently or refuses: the input casts, the target's answer for the cast inputs and the
    output cast that give the source's dtype (each checked by the target's rules), or why none does.
    """
    from promote_cli.oracle.port import port as _port

    ops = [op] if isinstance(op, str) else op
    if isinstance(types, str):
        types = [t for t in types.replace(",", " ").split() if t]
    return _port(_ask, source, target, ops, types, kinds)


def check(framework: str, op: str | None = None, options: dict | None = None, forms="tensor", limit: int = 5) -> Check:
    """Properties of a ruleset's rules (a `Check`: `.findings`, `.claims`, `.broken`): commutativity,
    associativity, lossy promotions and consistency between ops, each with its counterexamples counted and
    `limit` of each kind kept. `op` checks one op (None: every op group); `forms` adds operand forms to the
    tensors (`"0d,py,weak"` or `"all"`: those the ruleset distinguishes). The rule file's `[claims]` are
    judged by a whole check (every op, default options, tensors): `.broken` lists the ones that do not hold."""
    from promote_cli.oracle.properties import check as _check

    return _check(load(framework), op, options, forms, limit)


def explain(framework: str, a, b=None, op: str = "add", options: dict | None = None, c=None) -> Explanation:
    """Why `framework` answers `a op b` as it does (an `Explanation`): the `[[rules]]` clause that decided, the
    table cells and lattice joins it consulted (with the chain of edges to each join), the `[[after]]` clauses
    that applied or refused, the reason, and the answer under every other value of each option. An op of the
    ruleset's op groups takes its own operands (`b`, `c` when it has them) and names its group and rule."""
    rs = load(framework)
    given = [x for x in (a, b, c) if x is not None]
    if rs.by_group(op):
        from promote_cli.expressions.ops import explain as explain_op

        return explain_op(rs, op, given, options)
    from promote_cli.oracle.explain import explain as _explain

    if len(given) != 2:
        from promote_cli.oracle.engine import resolve_op

        resolve_op(rs, op)
        raise UsageError("explain takes two operands: promote explain A B -f FRAMEWORK")
    return _explain(rs, a, b, op, options)


def expect(path_or_lines, source: str | None = None) -> ExpectReport:
    """Check an expect file (a path, its bytes, or its lines): each `FRAMEWORK[:KEY=VALUE,...] A [B [C ...]] [OP] ->
    RESULT` line is asked and compared (three or more operands as `query_n` asks them; an `ExpectReport` of
    `Expectation`s); `#` comments and blank lines are skipped. A malformed line, one that cannot be asked (unknown
    framework, dtype, op or option), or bytes that are not UTF-8, is a UsageError naming its line number."""
    from promote_cli.oracle.expect import expect as _expect

    return _expect(path_or_lines, source, _ask)


def expr(text: str, framework: str, options: dict | None = None) -> ExprResult:
    """The result of a whole expression in `framework` (an `ExprResult`): `x:i16 * (y:i8 + 1) / 2.0`.

    `.result` is the final operand (`i16`, `weak:f32`, `0d:f32`, `py:float`), None when the framework
    refuses a step (`.refusal` names the sub-expression and its columns); `.tree` holds every node's
    `Step` (source span, operand, weak flag, deciding rule). The ruleset's op groups' ops are calls with their
    own number of arguments, `sum(x:i8) / 2`, and `x @ y` is its group's `@` (docs/ops.md). A malformed expression raises
    `ExpressionSyntaxError` (a UsageError with the position: `.context_lines()` draws the caret); an
    operator or literal the framework's `[expressions]` rules lack is a UsageError too."""
    from promote_cli.expressions.evaluate import evaluate
    from promote_cli.expressions.ops import answer as op_answer

    return evaluate(load(framework), text, options, op_answer)


def lattice(framework: str, op: str = "add", options: dict | None = None, *, name: str | None = None,
            answers: bool | None = None, types: list[str] | str | None = None) -> Order:
    """The order behind a ruleset (an `Order`: `.nodes`, `.edges` (lower, upper) of its Hasse diagram, `.weak`,
    `.cells`, `.is_lattice`). A ruleset with lattices gives the lattice `name` (default: the first one no other
    picks, chosen among by `options`); a table-shaped one, or `answers=True`, the smallest order consistent with
    `op`'s answers (a <= b when a op b = b), with every cell that is not the least upper bound of its operands
    there (none: the answers are a lattice's joins)."""
    from promote_cli.oracle.order import order

    return order(load(framework), op, options, lattice=name, answers=answers, types=types, ask=_ask)


def render(payload, fmt: str = "text", **settings) -> str:
    """A payload (a `Matrix`, `Diff`, `Order`, `Answer`, ...) as the text of an output format of the command line:
    text, json, csv, markdown, rich, svg, html, dot, mermaid. UsageError for a format without a form for it."""
    from promote_cli import formats

    out = formats.get(fmt, **settings)
    return formats.render(out, payload)


def write_output(path, text: str, protect: tuple = ()) -> None:
    """Write `text` (UTF-8) to `path` atomically: a new file, or the replacement of the regular file there (its
    mode kept); a directory, FIFO, device, socket or dangling symbolic link is refused with a one-line UsageError,
    as is one of the files `protect` names (the inputs), and a failed or interrupted write leaves nothing behind."""
    write_outputs({path: text}, protect)


def write_outputs(files: dict, protect: tuple = ()) -> None:
    """`write_output` for several files: every path checked and every file written to its temporary file before
    the first is renamed into place, so that a failure leaves none of them (two names of one file are a
    UsageError)."""
    from promote_cli.arrayio.atomic import write_texts

    write_texts(files, protect)


def frameworks(framework: str | None = None, errors: list | None = None) -> list[Ruleset]:
    """Every ruleset this installation knows (by name, then version), or only those of one framework.

    With `errors` (a list), a rule file that does not load is appended there (its RuleFileError) and the
    others are still listed; without it, the first one raises."""
    from promote_cli.oracle.registry import all_rulesets

    if framework is None:
        return all_rulesets(errors)
    name = load(framework).name  # an unknown name is a usage error with suggestions
    return [rs for rs in all_rulesets(errors) if rs.name == name]


def shadowed() -> dict[str, list[str]]:
    """Rule files hidden by a file of the same name earlier on the rules path (a `PROMOTE_RULES_PATH` file named
    like a shipped one): file stem -> the hidden files, in path order."""
    from promote_cli.oracle.registry import shadowed as _shadowed

    return {stem: [str(p) for p in paths] for stem, paths in _shadowed().items()}


def framework_names() -> list[str]:
    """Every `NAME` and `NAME@VERSION` this installation answers to, sorted (files read, none compiled:
    cheap enough for shell completion)."""
    from promote_cli.oracle import registry

    return registry.labels()


def is_default(ruleset: Ruleset) -> bool:
    """Whether the ruleset is the one a bare framework name means."""
    from promote_cli.oracle.registry import is_default as _is_default

    return _is_default(ruleset)


def dtypes(framework: str | None = None) -> list[DType]:
    """The dtype vocabulary in its canonical order, or only the dtypes of one framework's ruleset."""
    if framework is None:
        return list(DTYPES.values())
    have = set(load(framework).types)
    return [d for d in DTYPES.values() if d in have]


def spellings(name: str) -> dict[str, list[str]]:
    """How each framework spells a canonical dtype (`{"numpy": [...], "openvino": [...], ...}`)."""
    from promote_cli.vocab.dtypes import SPELLINGS

    return dict(SPELLINGS.get(lookup(name).name, {}))


def verify(framework: str, recording: str | None = None, save: str | None = None) -> Report:
    """A `Report` of a ruleset against a saved recording or, without one, the live framework (and the probe's own
    checks, such as TOSA's CAST kernels against the reference model); `.agrees` is the verdict. A recording is
    checked before use, and one made for another framework is refused (UsageError). `save` also writes what
    was compared (the framework's answers) to that file, atomically."""
    from promote_cli.probes.recordings import run

    report = run(framework, recording)
    if save:
        from promote_cli.probes import write_recording

        write_recording(report.recording, save)
    return report


def cast_pairs() -> dict[tuple[str, str], str]:
    """The legal TOSA CAST pairs, (from, to) -> the profile or extension that requires each."""
    from promote_cli.numerics.legality import LEGAL

    return dict(LEGAL)


def validate(paths) -> list[FileCheck]:
    """Check rule files as the loader does: a `FileCheck` per file (`.valid`, `.problems`: every problem,
    each with file, key, message and, inside an expression, its column)."""
    from promote_cli.oracle.validate import check_files

    if isinstance(paths, str):
        paths = [paths]
    return check_files(paths)


def plan_cast(inputs, to, *, output=None, from_=None, mode: str = "tosa", saturate: bool | None = None,
              semantics: str = "tosa", force: bool = False, exclude=()) -> CastPlan:
    """Everything a cast of `.npy` files will do, checked before anything is written: the cast asked for
    (`to` and `from_`: any dtype name or alias, or a numpy dtype; `mode`, `saturate`, `semantics`: TOSA's or
    another library's, `numerics.semantics`), directories expanded
    to their `*.npy` files less those an `exclude` glob matches (by name), each output decided (`output`, for
    one input, or `IN.TO.npy`), no file both read and written, no two casts writing one file, only regular
    files replaced (and only with `force`), and in a run of several files, each file's type castable to
    the target. A plan (`.items`: a job, or the `Outcome` of an input refused while planning; `.request`:
    the cast); UsageError for a run refused as a whole. Nothing is written here."""
    from promote_cli.arrayio import castfile

    return castfile.plan(inputs, to, output=output, from_=from_, mode=mode, saturate=saturate,
                         semantics=semantics, force=force, exclude=exclude)


def run_cast(plan: CastPlan, *, jobs: int | None = None, progress=None) -> Iterator[Outcome]:
    """Run a `plan_cast` plan: yields an `Outcome` per input, in input order (`.report`, a `CastReport`, or
    `.error`). `jobs` files in parallel; `progress(bytes_done)` for a single large file. Each output appears
    atomically when its cast is complete; an interruption leaves the finished ones (`plan.kept()`) and no
    partial output."""
    from promote_cli.arrayio import atomic, castfile

    def outcomes():
        yield from castfile.run_plan(plan, jobs=jobs, progress=progress)
        atomic.check_interrupted()  # a signal that arrived during the last file

    return outcomes()


def plan_checkpoint(path, to, *, output=None, from_=None, mode: str = "tosa", saturate: bool | None = None,
                    semantics: str = "tosa", force: bool = False, only=(), skip=()) -> CheckpointPlan:
    """Everything a cast of a checkpoint will do, checked before anything is written: `path` a `.safetensors`
    file (output `output`, default `NAME.TO.safetensors`), an `.npz` archive (`NAME.TO.npz`) or a directory of
    shards with its
    `model.safetensors.index.json` (into the directory `output`, default `DIR.TO`: every shard and the index
    under their own names). Every header is validated as hostile input; the tensors cast are those whose name
    an `only` glob matches (all when none is given) and no `skip` glob matches, of dtype `from_` when given,
    not already of type `to`; each must have a cast to `to` in `mode` (or under `semantics`, as `plan_cast`).
    UsageError for anything that stops the run; nothing is written here."""
    from promote_cli.arrayio import checkpoint

    return checkpoint.plan(path, to, output=output, from_=from_, mode=mode, saturate=saturate,
                           semantics=semantics, force=force, only=only, skip=skip)


def run_checkpoint(plan: CheckpointPlan, *, progress=None) -> Iterator[TensorReport]:
    """Run a `plan_checkpoint` plan: yields a `TensorReport` per tensor as it is done (cast, with its statistics
    and largest errors, or copied bit for bit); `progress(bytes_done)` counts the tensors' input bytes. The
    outputs take their names together once the iterator is exhausted; an error or an interruption leaves
    none. `plan.totals()` starts the sums (`.add(report)` each)."""
    from promote_cli.arrayio import atomic, checkpoint

    def reports():
        yield from checkpoint.run(plan, progress=progress)
        atomic.check_interrupted()

    return reports()


def is_checkpoint(path) -> bool:
    """Whether `path` is a checkpoint `plan_checkpoint` casts (a `.safetensors` file, or a directory of them)."""
    from promote_cli.arrayio.files import is_checkpoint as found

    return found(path)


def cast_totals(outcomes) -> CastTotals:
    """The sums over a run's outcomes (a `CastTotals`: `.files`, `.failed`, `.elements`, `.stats`, the bytes):
    what `promote cast` of several files reports last."""
    from promote_cli.arrayio.castfile import CastTotals

    return CastTotals.of(outcomes)


def defer_signals() -> None:
    """For a program that casts files: from now on SIGINT and SIGTERM raise `KeyboardInterrupt` or
    `Terminated` only at safe points of a cast (between chunks, between files, before an output takes its
    name), so that an interruption never leaves a partial output or a stuck thread."""
    from promote_cli.arrayio.atomic import install_sigterm_handler

    install_sigterm_handler()


def interrupted_by() -> tuple[type[BaseException], ...]:
    """The exceptions an interruption raises during a cast (after `defer_signals`)."""
    from promote_cli.arrayio.atomic import Terminated

    return (KeyboardInterrupt, Terminated)


def __getattr__(name: str):
    path = LAZY.get(name)
    if path is None:
        raise AttributeError(f"module 'promote_cli' has no attribute {name!r}")
    import importlib

    module, _, attr = path.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(LAZY))
