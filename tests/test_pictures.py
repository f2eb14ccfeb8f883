"""`promote table --svg/--html`: well-formed, self-contained pictures with one cell per matrix entry, coloured by
the kind the vocabulary gives each result, diffs marked, a legend and a title; and output files written safely."""

from __future__ import annotations

import os
import re
import stat
import xml.etree.ElementTree as ET

import pytest

import promote_cli as api
from promote_cli.formats import kinds as pic
from promote_cli.formats.svg import lines_of
from tests.support import ROOT, run_cli

SVG = "{http://www.w3.org/2000/svg}"
XHTML = "{http://www.w3.org/1999/xhtml}"


def kind(result, lacking=False):
    """The expected kind of a cell, from the vocabulary's kind trait (absent where a side lacks an operand)."""
    if result is None:
        return "absent" if lacking else "refused"
    return api.parse_operand(result).kind


def mark(result, lacking=False):
    """The expected text of a cell: its result, `n/a` where a side lacks an operand, else `×`."""
    return result if result is not None else ("n/a" if lacking else "×")


def classes(el) -> list[str]:
    return el.get("class", "").split()


def svg_cells(root, state=None):
    return [g for g in root.iter(f"{SVG}g") if "cell" in classes(g) and (state is None or state in classes(g))]


def text_of(el, ns=SVG) -> str:
    return "".join(el.find(f"{ns}text").itertext()) if ns == SVG else "".join(el.itertext())


def picture(tmp_path, kind_, *args):
    out = tmp_path / f"out.{kind_}"
    code, stdout, err = run_cli("table", *args, f"--{kind_}", str(out))
    assert (code, stdout, err) == (0, "", "")
    text = out.read_text(encoding="utf-8")
    return text, ET.fromstring(text)


def self_contained(text: str):
    """Nothing outside the file: no scripts, links, imports or external references (namespaces aside)."""
    assert "<script" not in text and "@import" not in text and "href" not in text and "src=" not in text
    assert set(re.findall(r"https?://[^\"' ]+", text)) <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xhtml"}
    assert set(re.findall(r"url\(([^)]*)\)", text)) <= {"#refused"}


@pytest.mark.parametrize("framework", ["openvino", "cann", "jax"])
def test_svg_matrix_has_one_cell_per_entry_coloured_by_kind(tmp_path, framework):
    text, root = picture(tmp_path, "svg", "-f", framework)
    self_contained(text)
    assert root.tag == f"{SVG}svg" and int(root.get("width")) > 0 and int(root.get("height")) > 0
    m = api.table(framework)
    cells = svg_cells(root)
    assert len(cells) == len(m.types) ** 2
    expected = [(a, b, r) for a, row in zip(m.types, m.results()) for b, r in zip(m.types, row)]
    for g, (a, b, r) in zip(cells, expected):
        assert (g.get("data-a"), g.get("data-b")) == (a, b)
        assert classes(g) == ["cell", f"k-{kind(r)}"]
        assert text_of(g) == (r if r is not None else "×")
        fill = g.find(f"{SVG}rect").get("fill")
        assert fill == ("url(#refused)" if r is None else pic.FILL[kind(r)])
        assert g.find(f"{SVG}title").text == f"{a} {m.op} {b} → {r if r is not None else 'refused'}"
    assert {kind(r) for _, _, r in expected} >= {"refused", "float"}


def test_svg_title_legend_and_heads(tmp_path):
    text, root = picture(tmp_path, "svg", "-f", "openvino", "-O", "promote_unsafe=true", "--op", "add")
    title = root.find(f"{SVG}title").text
    assert title.startswith("openvino@2026.4.1  ·  op add  ·  ") and "promote_unsafe=true" in title
    assert title in [t.text for t in root.iter(f"{SVG}text")]
    legend = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "legend")
    words = [t.text for t in legend.iter(f"{SVG}text") if t.text != "×"]
    m = api.table("openvino", options={"promote_unsafe": True})
    present = {kind(r) for row in m.results() for r in row}
    assert words == [pic.LEGEND[k] for k in pic.kinds() if k in present]
    heads = [t for t in root.iter(f"{SVG}text") if t.get("class") == "head"]
    assert [h.find(f"{SVG}title").tail for h in heads] == m.types
    assert [h.find(f"{SVG}title").text for h in heads] == [pic.type_doc(t) for t in m.types]
    assert pic.type_doc("i8") == f"i8: {api.lookup('i8').doc}"
    assert all("rotate(-45)" in h.get("transform") for h in heads)


def test_every_kind_of_the_vocabulary_has_a_colour_and_a_legend_word():
    assert set(pic.kinds()) == {d.kind for d in api.dtypes()} | {"refused", "absent"}
    assert set(pic.FILL) == set(pic.LEGEND) == set(pic.kinds())
    assert len(set(pic.FILL.values())) == len(pic.FILL)


def test_weak_results_and_long_names(tmp_path):
    """JAX with Python scalars: weak results are italic and written out; long names break onto two lines."""
    text, root = picture(tmp_path, "svg", "-f", "jax", "--types", "weak:f32,py:int,i8,f8e4m3b11fnuz")
    cells = svg_cells(root)
    m = api.table("jax", ["weak:f32", "py:int", "i8", "f8e4m3b11fnuz"])
    results = [r for row in m.results() for r in row]
    assert "weak:f32" in results and None in results
    for g, r in zip(cells, results):
        assert text_of(g) == (r if r is not None else "×")
        t = g.find(f"{SVG}text")
        assert ("weak" in classes(t)) == (r is not None and r.startswith("weak:"))
        assert [s.text for s in t.findall(f"{SVG}tspan")] == (lines_of(r) if r and len(lines_of(r)) > 1 else [])
    assert lines_of("f8e4m3b11fnuz") == ["f8e4m3", "b11fnuz"] and lines_of("f32") == ["f32"]


@pytest.mark.parametrize("sides", [("paddle", "cann"), ("openvino", "openvino:promote_unsafe=true")])
def test_svg_diff_marks_differing_cells_with_each_side(tmp_path, sides):
    text, root = picture(tmp_path, "svg", "--diff", *sides)
    self_contained(text)
    d = api.diff(*sides)
    differ, same = svg_cells(root, "differ"), svg_cells(root, "same")
    assert len(differ) == len(d.differences) > 0
    assert len(differ) + len(same) == len(d.types) ** 2
    for g, x in zip(differ, d.differences):
        assert (g.get("data-a"), g.get("data-b")) == (x["a"], x["b"])
        bands = [s for s in g.findall(f"{SVG}g") if "side" in classes(s)]
        lacking = d.lacking(x)
        assert [classes(s)[1] for s in bands] == [f"k-{kind(x[f], gone)}" for f, gone in zip(d.frameworks, lacking)]
        assert [text_of(s) for s in bands] == [mark(x[f], gone) for f, gone in zip(d.frameworks, lacking)]
        assert g.find(f"{SVG}rect[@class='outline']") is not None
    title = root.find(f"{SVG}title").text
    assert title.startswith(" vs ".join(pic.side_heads(d))) and f"{len(d.differences)} of" in title
    legend = [t.text for t in root.iter(f"{SVG}text") if t.text and t.text.startswith("differs: ")]
    assert legend == ["differs: " + " / ".join(pic.side_heads(d))]


def test_html_matrix_is_a_standalone_table(tmp_path):
    text, root = picture(tmp_path, "html", "-f", "cann")
    self_contained(text)
    assert text.startswith("<!DOCTYPE html>") and root.tag == f"{XHTML}html"
    m = api.table("cann")
    title = root.find(f"{XHTML}head/{XHTML}title").text
    assert title == f"cann@{m.version}  ·  op add" == root.find(f".//{XHTML}h1").text
    heads = root.findall(f".//{XHTML}thead//{XHTML}th[@class='col']")
    assert ["".join(h.itertext()) for h in heads] == m.types
    assert [h.get("title") for h in heads] == [pic.type_doc(t) for t in m.types]
    rows = root.findall(f".//{XHTML}tbody/{XHTML}tr")
    assert [r.find(f"{XHTML}th").text for r in rows] == m.types
    for tr, a, results in zip(rows, m.types, m.results()):
        tds = tr.findall(f"{XHTML}td")
        assert len(tds) == len(m.types)
        for td, b, r in zip(tds, m.types, results):
            assert classes(td) == ["cell", f"k-{kind(r)}"] and td.text == (r if r is not None else "×")
            assert td.get("title") == f"{a} add {b} → {r if r is not None else 'refused'}"
    legend = [("".join(li.itertext())) for li in root.findall(f".//{XHTML}ul[@class='legend']/{XHTML}li")]
    assert "×refused" in legend and "float" in legend
    for k in pic.kinds():
        if k not in pic.NO_RESULT:
            assert f".k-{k} {{ background: {pic.FILL[k]}; }}" in text


def test_html_diff(tmp_path):
    text, root = picture(tmp_path, "html", "--diff", "paddle", "cann")
    d = api.diff("paddle", "cann")
    tds = root.findall(f".//{XHTML}td")
    differ = [td for td in tds if "differ" in classes(td)]
    assert len(tds) == len(d.types) ** 2 and len(differ) == len(d.differences)
    by_pair = {(x["a"], x["b"]): x for x in d.differences}
    cells = [(a, b) for a in d.types for b in d.types]
    for td, (a, b) in zip(tds, cells):
        x = by_pair.get((a, b))
        assert classes(td) == ["cell", "differ" if x else "same"]
        if x:
            spans = td.findall(f"{XHTML}span")
            lacking = d.lacking(x)
            assert [s.text for s in spans] == [mark(x[f], gone) for f, gone in zip(d.frameworks, lacking)]
            assert [classes(s)[1] for s in spans] == [f"k-{kind(x[f], gone)}" for f, gone in zip(d.frameworks, lacking)]
            assert [s.get("title") for s in spans] == pic.side_heads(d)


def test_svg_and_html_together_and_the_api_renders_the_same(tmp_path):
    svg, html = tmp_path / "a.svg", tmp_path / "a.html"
    code, out, err = run_cli("table", "-f", "paddle", "--svg", str(svg), "--html", str(html))
    assert (code, out, err) == (0, "", "")
    m = api.table("paddle")
    assert svg.read_text(encoding="utf-8") == api.render(m, "svg")
    assert html.read_text(encoding="utf-8") == api.render(m, "html")
    code, out, _ = run_cli("table", "-f", "paddle", "--svg", "-")
    assert code == 0 and out == api.render(m, "svg")


def test_an_existing_regular_file_is_replaced_keeping_its_mode(tmp_path):
    out = tmp_path / "t.svg"
    out.write_text("old")
    os.chmod(out, 0o640)
    assert run_cli("table", "-f", "cann", "--svg", str(out))[0] == 0
    assert out.read_text(encoding="utf-8").startswith("<svg") and stat.S_IMODE(out.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.svg"]


def test_exit_code_with_a_diff_picture(tmp_path):
    out = tmp_path / "d.svg"
    code, _, _ = run_cli("table", "--diff", "paddle", "cann", "--exit-code", "--svg", str(out))
    assert code == 1 and out.read_text(encoding="utf-8").startswith("<svg")


def _hostile(tmp_path, what):
    if what == "directory":
        return str(tmp_path), "is a directory"
    if what == "fifo":
        os.mkfifo(tmp_path / "pipe")
        return str(tmp_path / "pipe"), "is a FIFO; only a regular file is ever replaced"
    if what == "devnull":
        return os.devnull, "is a character device; only a regular file is ever replaced"
    if what == "dangling":
        os.symlink(tmp_path / "nowhere", tmp_path / "link.svg")
        return str(tmp_path / "link.svg"), "leads nowhere"
    if what == "unwritable":
        if os.geteuid() == 0:  # root writes any directory it may; /proc takes no new files from anyone
            return "/proc/promote-picture.svg", "cannot create output"
        locked = tmp_path / "locked"
        locked.mkdir()
        os.chmod(locked, 0o500)
        return str(locked / "t.svg"), "cannot create output: Permission denied"
    if what == "missing-dir":
        return str(tmp_path / "no" / "t.svg"), "cannot create output: No such file or directory"
    if what == "rule-file":
        return api.load("cann").path, "refusing to overwrite an input"
    raise AssertionError(what)


@pytest.mark.parametrize("flag", ["--svg", "--html"])
@pytest.mark.parametrize("what", ["directory", "fifo", "devnull", "dangling", "unwritable", "missing-dir",
                                  "rule-file"])
def test_hostile_outputs_are_one_line_exit_2_and_nothing_written(tmp_path, flag, what):
    path, message = _hostile(tmp_path, what)
    before = sorted(os.listdir(tmp_path))
    rule_file = api.load("cann").path
    rules_before = open(rule_file, "rb").read()
    code, out, err = run_cli("table", "-f", "cann", flag, path)
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and message in err
    assert sorted(os.listdir(tmp_path)) == before  # no temporary file left behind
    assert open(rule_file, "rb").read() == rules_before


def test_a_bad_second_output_leaves_the_first_unwritten(tmp_path):
    good = tmp_path / "good.svg"
    code, _, err = run_cli("table", "-f", "cann", "--svg", str(good), "--html", str(tmp_path))
    assert code == 2 and "is a directory" in err and not good.exists()


def test_a_failing_write_leaves_nothing(tmp_path, monkeypatch):
    import errno

    from promote_cli.arrayio import atomic

    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic, "_write", full)
    code, _, err = run_cli("table", "-f", "cann", "--svg", str(tmp_path / "t.svg"))
    assert code == 2 and "t.svg: cannot write output: No space left on device" in err
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("args, message", [
    (["--cast", "--svg", "x.svg"], "--svg and --html draw a matrix or a diff"),
    (["-f", "cann", "--format", "json", "--svg", "x.svg"], "go without --cast and --format"),
    (["-f", "cann", "--svg", "x.svg", "--html", "x.svg"], "two different files"),
    (["-f", "cann", "--svg", "-", "--html", "-"], "two different files"),
    (["--svg", "x.svg"], "which framework?"),
    (["-f", "cann", "--exit-code", "--svg", "x.svg"], "--exit-code goes with --diff"),
    (["-f", "cann", "--types", "i8,i9", "--svg", "x.svg"], "i9"),
])
def test_usage_errors(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("table", *args)
    assert code == 2 and out == "" and message in err and len(err.splitlines()) == 1
    assert os.listdir(tmp_path) == []


def test_the_screenshot_tool_knows_the_committed_pictures():
    """Every picture docs/img holds is one the tool regenerates, and the README or docs/cli.md shows each."""
    from tests.support import load_tool

    tool = load_tool("screenshot")
    names = {name for name, *_ in tool.DOCS}
    assert names == {p.name for p in (ROOT / "docs" / "img").glob("*.png")}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    cli = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert all(f"docs/img/{name}" in readme or f"](img/{name})" in cli for name in names)
    assert "](img/lattice-jax.png)" in cli
    assert {kind for _, kind, *_ in tool.DOCS} == {"svg", "html", "dot"}
    for name, kind, args, _ in tool.DOCS:
        assert name.endswith(".png") and (kind == "dot") == (args[0] == "lattice")
        code, out, _ = run_cli(*args, *(["--format", "dot"] if kind == "dot" else []))
        assert code == 0 and (kind != "dot" or out.startswith("digraph")), args
    assert tool.svg_size('<svg xmlns="x" width="12" height="34">') == (12, 34)


def test_render_picks_the_method_for_each_payload():
    o = api.lattice("anvil")
    assert api.render(o, "dot") == run_cli("lattice", "-f", "anvil", "--format", "dot")[1]
    assert api.render(api.table("cann"), "csv") == run_cli("table", "-f", "cann", "--format", "csv")[1]
    with pytest.raises(api.UsageError, match="--format svg has no form for an order"):
        api.render(o, "svg")
    with pytest.raises(api.UsageError, match="nothing renders a object"):
        api.render(object(), "text")
    with pytest.raises(api.UsageError, match="unknown format 'png'"):
        api.render(o, "png")


@pytest.mark.parametrize("kind_", ["svg", "html"])
def test_a_diff_picture_title_names_the_options_given_for_every_side(tmp_path, kind_):
    out = tmp_path / f"d.{kind_}"
    code, _, _ = run_cli("table", "--diff", "jax", "numpy", "-O", "x64=true", "--types", "i8,i64,f16",
                         f"--{kind_}", str(out))
    text = out.read_text()
    assert code == 0 and re.search(r"<title>jax@[^<]* vs numpy@[^<]*  ·  op add  ·  x64=true  ·  \d+ of 9 cells differ</title>", text)
    run_cli("table", "--diff", "jax", "numpy", "--types", "i8,i64,f16", f"--{kind_}", str(out))
    assert "x64" not in out.read_text()
