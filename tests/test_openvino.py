"""OpenVINO ConvertPromoteTypes-14: spec examples, documented examples, refusals, CLI.

Expected values come from two places only: the spec page (parsed here at test time)
and the recording made by running OpenVINO (tests/data/recordings/openvino.json).
Where the spec page and the implementation disagree, the implementation's recorded
answer is asserted and the spec example is listed in SPEC_DEVIATIONS, which is itself
checked (a listed deviation that stops deviating fails the suite).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from support import require_framework, run_cli, spec_page

from promote_cli import query
from promote_cli.probes import openvino as probe
from promote_cli.vocab.dtypes import lookup

ROOT = Path(__file__).resolve().parents[1]
SPEC = spec_page("openvino-convert-promote-types-14.rst")
RECORDING = ROOT / "tests" / "data" / "recordings" / "openvino.json"
DOC = ROOT / "docs" / "frameworks" / "openvino.md"

DEFAULTS = {"promote_unsafe": False, "pytorch_scalar_promotion": False, "u64_integer_promotion_target": "f32"}

#: The spec page spells the two 8-bit floats "f8m4e3" and "f8m5e3"; it means
#: OpenVINO's f8e4m3 and f8e5m2 (documented as difference 8).
SPEC_SPELLINGS = {"f8m4e3": "f8e4m3", "f8m5e3": "f8e5m2"}

#: Spec examples whose stated result the implementation does not give under the
#: attributes their heading states.  Key: (heading id, example text as printed).
#: Value: why (docs/frameworks/openvino.md, "Spec vs implementation").
SPEC_DEVIATIONS = {
    ("pytorch", "S(i64), D(u8) -> u8"):
        "difference 2: refused by is_pytorch_promote_safe with promote_unsafe=false; u8 needs promote_unsafe=true",
}


# --------------------------------------------------------------------- helpers

def _recording() -> dict:
    data = json.loads(RECORDING.read_text())
    index = {}
    for op, a, b, options, result, error in data["cases"]:
        key = (op, a, b, tuple(sorted({**DEFAULTS, **options}.items())))
        index[key] = (result, error)
    data["index"] = index
    return data


_REC = None


def recorded(a: str, b: str, options: dict | None = None, op: str = "add"):
    """(result, error) that OpenVINO gave for this case, from the recording."""
    global _REC
    if _REC is None:
        _REC = _recording()
    key = (op, a, b, tuple(sorted({**DEFAULTS, **(options or {})}.items())))
    assert key in _REC["index"], f"case not in the recording: {key}"
    return _REC["index"][key]


def _hint(ans) -> str:
    """An answer's hint as the CLI prints it: `-O KEY=VALUE gives RESULT`."""
    hint = ans.hint
    if isinstance(hint, dict):
        return f"-O {hint['option']}={hint['value']} gives {hint['result']}"
    return str(hint or "")


def _canon(name: str) -> str:
    name = SPEC_SPELLINGS.get(name, name)
    return lookup(name).name


def _spec_operand(text: str) -> str:
    """`i8`, `S(i64)` (rank 0), `D(u8)` (dimensioned) -> contract operand."""
    text = text.strip()
    m = re.fullmatch(r"([SD])\((\w+)\)", text)
    if m:
        return ("0d:" if m.group(1) == "S" else "") + _canon(m.group(2))
    return _canon(text)


# ------------------------------------------------------------ spec page parsing

_EXAMPLE = re.compile(r"``ConvertPromoteTypes\((?P<a>[^,]+),\s*(?P<b>[^)]+\)?)\)\s*->\s*(?P<r>\w+)``")


def spec_examples():
    """Every ``ConvertPromoteTypes(X, Y) -> Z`` line, with the heading it sits under.

    Heading ids: "default" (attributes at default values), "unsafe" (promotions that
    raise when promote_unsafe is false), "pytorch" (pytorch_scalar_promotion true).
    """
    heading = None
    out = []
    for line in SPEC.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("**Attributes**"):
            break
        if stripped.startswith("* ") and "romotions" in stripped and "ConvertPromoteTypes(" not in stripped:
            low = stripped.lower()
            if "default values" in low:
                heading = "default"
            elif "exceptions" in low and "promote_unsafe" in low:
                heading = "unsafe"
            elif "pytorch_scalar_promotion" in low:
                heading = "pytorch"
            else:
                heading = None
            continue
        m = _EXAMPLE.search(stripped)
        if m and heading:
            text = f"{m.group('a').strip()}, {m.group('b').strip()} -> {m.group('r')}"
            out.append((heading, text, m.group("a"), m.group("b"), m.group("r")))
    return out


def spec_xml_examples():
    """The XML examples: (title, attributes, input ports, output precision)."""
    text = SPEC.read_text()
    out = []
    for m in re.finditer(r"\*\*(Example \d+[^*]*)\*\*(.*?)</layer>", text, re.S):
        title, body = m.group(1), m.group(2)
        data = re.search(r"<data([^>]*)/>", body).group(1)
        attrs = dict(re.findall(r'(\w+)="([^"]*)"', data))
        inp = re.search(r"<input>(.*?)</input>", body, re.S).group(1)
        outp = re.search(r"<output>(.*?)</output>", body, re.S).group(1)
        ports = []
        for pm in re.finditer(r'<port[^>]*precision="(\w+)"[^>]*>(.*?)</port>', inp, re.S):
            ports.append((pm.group(1), pm.group(2).count("<dim>")))
        outs = re.findall(r'precision="(\w+)"', outp)
        out.append((title, attrs, ports, outs))
    return out


SPEC_EXAMPLES = spec_examples()
SPEC_XML = spec_xml_examples()


def test_spec_page_parsed():
    headings = {h for h, *_ in SPEC_EXAMPLES}
    assert headings == {"default", "unsafe", "pytorch"}
    assert len(SPEC_EXAMPLES) >= 10
    assert len(SPEC_XML) == 3


def _heading_options(heading: str) -> dict:
    return {"pytorch_scalar_promotion": True} if heading == "pytorch" else {}


@pytest.mark.parametrize("heading,text,a,b,r", SPEC_EXAMPLES, ids=[f"{h}:{t}" for h, t, *_ in SPEC_EXAMPLES])
def test_spec_example(heading, text, a, b, r):
    a, b, expected = _spec_operand(a), _spec_operand(b), _canon(r)
    options = _heading_options(heading)

    if heading == "unsafe":
        # Difference 1 (docs/frameworks/openvino.md): read literally, as results under
        # default attributes, every line of this list deviates -- OpenVINO refuses them.
        # The heading says so: these raise with promote_unsafe=false ...
        result, error = recorded(a, b, options)
        assert result is None and error, f"OpenVINO accepted {text} with promote_unsafe=false"
        ans = query("openvino", a, b, options=options)
        assert ans.result is None and ans.refusal
        assert "-O promote_unsafe=true gives" in _hint(ans)
        # ... and the arrow result is what promote_unsafe=true gives.
        options = {**options, "promote_unsafe": True}

    result, error = recorded(a, b, options)
    ans = query("openvino", a, b, options=options)
    assert ans.result == result, f"{text}: promote says {ans.result}, OpenVINO {result} ({error})"
    if (heading, text) in SPEC_DEVIATIONS:
        assert result != expected, f"listed as a deviation but OpenVINO now agrees with the spec: {text}"
    else:
        assert result == expected, f"{text}: spec says {expected}, OpenVINO {result} ({error})"


def test_spec_deviations_are_spec_examples():
    listed = {(h, t) for h, t, *_ in SPEC_EXAMPLES}
    assert set(SPEC_DEVIATIONS) <= listed


def test_spec_deviation_s_i64_d_u8_needs_promote_unsafe():
    """Difference 2: the spec's u8 is the promote_unsafe=true answer."""
    for heading, text, a, b, r in SPEC_EXAMPLES:
        if (heading, text) not in SPEC_DEVIATIONS:
            continue
        a, b, expected = _spec_operand(a), _spec_operand(b), _canon(r)
        options = {**_heading_options(heading), "promote_unsafe": True}
        assert recorded(a, b, options)[0] == expected
        assert query("openvino", a, b, options=options).result == expected
        refused = query("openvino", a, b, options=_heading_options(heading))
        assert refused.result is None
        assert _hint(refused) == f"-O promote_unsafe=true gives {expected}"


def _bool(text: str) -> bool:
    return {"true": True, "false": False}[text.lower()]


@pytest.mark.parametrize("title,attrs,ports,outs", SPEC_XML, ids=[x[0] for x in SPEC_XML])
def test_spec_xml_example(title, attrs, ports, outs):
    options = {
        "promote_unsafe": _bool(attrs["promote_unsafe"]),
        "pytorch_scalar_promotion": _bool(attrs["pytorch_scalar_promotion"]),
        "u64_integer_promotion_target": _canon(attrs["u64_integer_promotion_target"]),
    }
    (pa, da), (pb, db) = ports
    a = ("0d:" if da == 0 else "") + _canon(pa)
    b = ("0d:" if db == 0 else "") + _canon(pb)
    assert len(set(outs)) == 1
    expected = _canon(outs[0])
    result, error = recorded(a, b, options)
    assert result == expected, f"{title}: spec says {expected}, OpenVINO {result} ({error})"
    assert query("openvino", a, b, options=options).result == expected


# ------------------------------------------------------------ refusals

def _ov_check(error: str) -> str:
    """The part of a recorded OpenVINO error that names the failed check."""
    m = re.match(r"Check '(?P<cond>.*?)' failed(?:: (?P<msg>.*))?$", error, re.S)
    assert m, error
    if m.group("msg"):
        return m.group("msg").strip().rstrip(".")
    return m.group("cond").strip("()")


def test_every_refusal_names_openvinos_check():
    """Each refused recorded case is refused by promote with OpenVINO's check wording."""
    data = json.loads(RECORDING.read_text())
    seen = {}
    for op, a, b, options, result, error in data["cases"]:
        if result is not None:
            continue
        check = _ov_check(error)
        if (check, a.startswith("0d:"), b.startswith("0d:")) in seen:
            continue  # one case per check and rank combination keeps this fast
        ans = query("openvino", a, b, op=op, options=options)
        assert ans.result is None, (a, b, options, ans.result)
        assert check.replace(" ", "") in ans.refusal.replace(" ", ""), (check, ans.refusal)
        seen[(check, a.startswith("0d:"), b.startswith("0d:"))] = True
    assert len({c for c, *_ in seen}) == 5


def test_rejected_types_say_convert_promote_types_does_not_accept():
    for t in ("f8e8m0", "f4e2m1", "nf4"):
        for other in (t, "f32", "bool"):
            for a, b in ((t, other), (other, t)):
                ans = query("openvino", a, b, options={"promote_unsafe": True})
                assert recorded(a, b, {"promote_unsafe": True})[0] is None
                assert ans.result is None
                assert "ConvertPromoteTypes does not accept" in ans.refusal


def test_i8_u8_hint():
    ans = query("openvino", "i8", "u8")
    assert ans.result is None and recorded("i8", "u8")[0] is None
    assert _hint(ans) == f"-O promote_unsafe=true gives {recorded('i8', 'u8', {'promote_unsafe': True})[0]}"


# ------------------------------------------------------------ documented examples

def doc_examples():
    out = []
    lines = DOC.read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("$ promote query "):
            argv = shlex.split(line[2:])
            a, b = argv[2], argv[3]
            options = {}
            it = iter(argv[4:])
            for tok in it:
                if tok == "-O":
                    k, v = next(it).split("=", 1)
                    options[k] = {"true": True, "false": False}.get(v, v)
            out.append((line[2:], a, b, options, lines[i + 1].strip()))
    return out


DOC_EXAMPLES = doc_examples()


@pytest.mark.parametrize("cmd,a,b,options,shown", DOC_EXAMPLES, ids=[c for c, *_ in DOC_EXAMPLES])
def test_doc_example(cmd, a, b, options, shown):
    result, error = recorded(a, b, options)
    ans = query("openvino", a, b, options=options)
    assert ans.result == result
    if re.match(r"promote: openvino(@\S+)? refuses ", shown):
        assert result is None
        m = re.search(r"-O (\S+?)(?: gives| the result is) (\S+)\)", shown)
        if m:
            assert _hint(ans) == f"-O {m.group(1)} gives {m.group(2)}"
            k, v = m.group(1).split("=")
            assert recorded(a, b, {**options, k: {"true": True, "false": False}.get(v, v)})[0] == m.group(2)
    else:
        assert result == shown


_ROW = re.compile(r"^\| (\d+) \| .*? \| `(?P<case>[^`]+)` \|\s*(?P<opts>[^|]*?)\s*\| (?P<impl>[^|]+) \|$")


def doc_differences():
    out = []
    for line in DOC.read_text().splitlines():
        m = _ROW.match(line)
        if m:
            a, b = m.group("case").split()
            options = {}
            for tok in m.group("opts").replace("`", "").split():
                k, v = tok.split("=", 1)
                options[k] = {"true": True, "false": False}.get(v, v)
            out.append((line, a, b, options, m.group("impl").strip()))
    return out


DOC_DIFFERENCES = doc_differences()


def test_difference_table_parsed():
    assert len(DOC_DIFFERENCES) >= 10


@pytest.mark.parametrize("row,a,b,options,impl", DOC_DIFFERENCES, ids=[f"{r[1]} {r[2]} {r[3]}" for r in DOC_DIFFERENCES])
def test_doc_difference_row(row, a, b, options, impl):
    result, error = recorded(a, b, options)
    ans = query("openvino", a, b, options=options)
    assert ans.result == result
    if impl.startswith("refused"):
        assert result is None
        check = re.search(r"`([^`]+)`", impl).group(1)
        assert check in error
    else:
        assert impl.strip("`") == result


# ------------------------------------------------------------ CLI

def test_cli_i8_u8_refused_with_hint():
    code, out, err = run_cli("query", "i8", "u8", "-f", "openvino")
    assert code == 1 and out == ""
    unsafe = recorded("i8", "u8", {"promote_unsafe": True})[0]
    assert "promote_unsafe=true" in err and re.search(rf"\b{unsafe}\b", err)


def test_cli_i8_u8_unsafe():
    code, out, _ = run_cli("query", "i8", "u8", "-f", "openvino", "-O", "promote_unsafe=true")
    assert code == 0
    assert out.strip() == recorded("i8", "u8", {"promote_unsafe": True})[0]


@pytest.mark.parametrize("opt,valid", [
    ("promote_unsafe=maybe", "true"),
    ("u64_integer_promotion_target=i9", "f64"),
    ("no_such_attribute=true", "promote_unsafe"),
])
def test_cli_bad_option_exits_2(opt, valid):
    code, out, err = run_cli("query", "i8", "u8", "-f", "openvino", "-O", opt)
    assert code == 2 and out == ""
    assert valid in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------ live probe

def test_probe_module_imports_without_openvino():
    assert probe.FRAMEWORK == "openvino" and probe.PACKAGE == "openvino"
    assert callable(probe.version) and callable(probe.record)


@pytest.mark.live
def test_live_probe_agrees_with_ruleset():
    """Re-run the probe against the installed openvino; every case must agree."""
    require_framework(probe)
    live = probe.record()
    disagree = []
    for op, a, b, options, result, error in live["cases"]:
        ans = query("openvino", a, b, op=op, options=options)
        if ans.result != result:
            disagree.append((a, b, options, result, error, ans.result))
    assert not disagree, f"{len(disagree)} of {len(live['cases'])} disagree, e.g. {disagree[:3]}"
    data = json.loads(RECORDING.read_text())
    if live["version"] == data["version"]:
        assert live["cases"] == data["cases"]
