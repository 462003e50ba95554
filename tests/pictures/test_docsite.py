"""``tdflow doc --html``: the reference site's pages, links and content, and its search in
headless Chromium."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from cpu_clock import cpu_clock
from pictures_browser import console_errors, run_page
from tdflow.dialect.context import standard_context

import tdflow
from tdflow.cli import main
from tdflow.pictures.docsite import family_of, write_site

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def std_site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    with cpu_clock() as clock:  # CPU seconds: a busy machine does not fail the bound
        pages = write_site(standard_context().standard, out)
    return out, pages, clock.seconds


def _anchors(page: Path) -> set[str]:
    return set(re.findall(r'<section class="op" id="([^"]+)"', page.read_text()))


def test_every_op_has_one_section_and_every_link_resolves(std_site):
    out, pages, seconds = std_site
    std = standard_context().standard
    sections: dict[str, str] = {}
    for page in pages:
        for anchor in _anchors(page):
            assert anchor not in sections, f"{anchor} on {sections.get(anchor)} and {page.name}"
            sections[anchor] = page.name
    assert set(sections) == {op.name for op in std}
    for op in std:  # an op's section is on its family's page
        assert sections[op.name].removeprefix("family-").removesuffix(".html") == family_of(op)
    for page in pages:
        for href in re.findall(r'href="([^"]+)"', page.read_text()):
            file, _, anchor = html.unescape(href).partition("#")
            target = out / (file or page.name)
            assert target.is_file(), f"{page.name} links to missing {href}"
            if anchor:
                assert anchor in _anchors(target), f"{page.name} links to missing {href}"
    assert seconds < 5.0


def test_op_section_shows_its_definition(std_site):
    out, _, _ = std_site
    op = standard_context().ops["tdflow.leaky_relu"]
    page = (out / f"family-{family_of(op)}.html").read_text()
    section = page.split('id="tdflow.leaky_relu"')[1].split("</section>")[0]
    assert html.escape(op.summary) in section
    alpha = op.attr("alpha")
    assert "<code>alpha</code>" in section and alpha.default_text in section
    assert "formula" in section and "gradient" in section and "NoMemoryEffect" in section
    assert '<pre class="example">' in section  # the IR example of its description
    # a formula op's SBP signatures come from its formula (it declares no get_sbp hook)
    assert not op.declares("get_sbp") and "SBP signatures" in section
    matmul = (out / f"family-{family_of(standard_context().ops['tdflow.matmul'])}.html")
    assert "SBP signatures" in matmul.read_text().split('id="tdflow.matmul"')[1]


def test_cli_writes_a_site_of_a_user_library(tmp_path, capsys):
    lib = ROOT / "tests" / "data" / "userlib"
    assert main(["doc", "--ops", str(lib / "my_ops.td"), "--hooks", str(lib / "my_hooks.py"),
                 "--html", str(tmp_path / "site")]) == 0
    assert "wrote" in capsys.readouterr().out
    index = (tmp_path / "site" / "index.html").read_text()
    assert "mylib.scale_shift" in index and "tdflow.relu" not in index


def test_site_search_in_chromium(std_site, tmp_path):
    out, _, _ = std_site
    page = (out / "index.html").read_text()
    harness = """
    var input = document.getElementById("search");
    input.value = "leaky"; input.dispatchEvent(new Event("input"));
    var first = document.querySelector("#results li a");
    var byTrait = window.tdflowSite.search("Involution");
    report({ops: document.body.getAttribute("data-ops"), first: first.textContent,
            href: first.getAttribute("href"), results: document.querySelectorAll("#results li").length,
            byTrait: byTrait});
    """
    report, log = run_page(page, harness, tmp_path)
    std = standard_context().standard
    assert report["errors"] == [] and console_errors(log) == []
    assert int(report["ops"]) == len(std)
    leaky = [op.name for op in std if "leaky" in op.name]
    assert report["results"] == len(leaky) and report["first"].startswith("tdflow.leaky_relu")
    assert report["href"] == f"family-{family_of(std.ops['tdflow.leaky_relu'])}.html#tdflow.leaky_relu"
    assert sorted(report["byTrait"]) == sorted(op.name for op in std
                                                 if op.has_trait("Involution"))


HOSTILE_TD = """include "tdflow/Base.td"
def Evil_Dialect : Dialect { let name = "evil"; }
def Evil_Op : TDF_Op<"op", [NoMemoryEffect, SameOperandsAndResultShape,
                             SameOperandsAndResultType]> {
  let opDialect = Evil_Dialect;
  let summary = "<img src=x onerror='window.__pwned=1'>";
  let description = [{ </script><script>window.__pwned = 2</script> `<b onclick=x>` }];
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
}
"""


def test_hostile_library_site_runs_nothing(tmp_path):
    td = tmp_path / "evil.td"
    td.write_text(HOSTILE_TD)
    lib = tdflow.load_ops(td)
    pages = write_site([op for op in lib.ops.values() if op.dialect == "evil"], tmp_path / "s")
    family = next(p for p in pages if p.name.startswith("family-")).read_text()
    assert "<img" not in family and "<script>window" not in family
    harness = """
    var input = document.getElementById("search");
    input.value = "onerror"; input.dispatchEvent(new Event("input"));
    report({pwned: window.__pwned || null, injected: document.querySelectorAll("img, b").length,
            results: document.querySelectorAll("#results li").length,
            text: document.querySelector("section.op").textContent});
    """
    report, log = run_page(family, harness, tmp_path)
    assert report["pwned"] is None and report["injected"] == 0 and report["results"] == 1
    assert "window.__pwned = 2" in report["text"]
    assert report["errors"] == [] and console_errors(log) == []
