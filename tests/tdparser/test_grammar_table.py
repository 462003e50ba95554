"""The LALR table shipped as JSON (``tdparser/tablegen_lark.json``): equal to a fresh build of
the grammar, parsing exactly as Lark's own parser does with the same Transformer, used without
importing Lark (even under ``--no-cache``), and ignored (never trusted) when stale or damaged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import lark
import pytest
from tdflow.tdparser import grammar_cache, grammar_table, lalr, parse_string
from tdflow.tdparser import parser as tdparser_parser
from tdflow.tdparser.lexer import Lexer
from tdflow.tdparser.parser import GRAMMAR, ToAst
from tdflow.tdparser.preprocessor import Preprocessor

from tdflow.core.cache_dir import caches_disabled

ROOT = Path(__file__).resolve().parents[2]
GRAMMAR_TEXT = Path(GRAMMAR).read_text(encoding="utf-8")
SHIPPED_TEXT = Path(lalr.SHIPPED).read_text(encoding="utf-8")


@pytest.fixture
def fresh_parser(monkeypatch):
    monkeypatch.setattr(tdparser_parser, "_PARSER", None)
    monkeypatch.setattr(tdparser_parser, "_DRIVER", None)


def test_the_shipped_table_is_made_from_this_grammar():
    assert lalr.load_shipped(lalr.SHIPPED, GRAMMAR_TEXT) is not None, (
        "tablegen.lark changed: run python -m tdflow.tdparser.grammar_table")


def test_the_shipped_table_equals_a_fresh_build():
    made_by = json.loads(SHIPPED_TEXT)["made_by"]
    if made_by != f"lark {lark.__version__}":
        pytest.skip(f"table made by {made_by}, this is Lark {lark.__version__} (the grammar's "
                    "rules may come out in another order; the parse tests below still run)")
    assert grammar_table.fresh_table() == SHIPPED_TEXT, (
        "stale: run python -m tdflow.tdparser.grammar_table")
    assert grammar_table.main(["--check"]) == 0


def _sources() -> list[tuple[str, str, list[str]]]:
    """(name, text, include dirs) of TableGen files using most of the grammar."""
    inc = str(ROOT / "dialect" / "include")
    out = [("ops.td", (ROOT / "ops.td").read_text(), [inc])]
    for p in sorted((ROOT / "dialect" / "include" / "tdflow").rglob("*.td"))[:6]:
        out.append((p.name, p.read_text(), [inc, str(p.parent)]))
    data = ROOT / "tests" / "tdparser" / "data"
    for p in sorted(data.rglob("*.td"))[:40] if data.is_dir() else ():
        out.append((p.name, p.read_text(errors="replace"), [str(p.parent)]))
    return out


def _tokens(text: str, name: str, dirs: list[str]):
    return Lexer(Preprocessor(dirs)).tokens_of_text(text, name)


def test_the_driver_parses_as_lark_does_with_the_same_transformer():
    """The shipped table run by :mod:`.lalr` (its own callbacks) against Lark's own LALR
    parser and callbacks, built from the grammar now, with ToAst: the same trees or the same
    error position, file by file."""
    ours = lalr.LalrDriver(lalr.load_shipped(lalr.SHIPPED, GRAMMAR_TEXT), ToAst(),
                           tdparser_parser._syntax_error)
    theirs = grammar_cache.build(GRAMMAR_TEXT, lexer=grammar_cache.Feed, transformer=ToAst())
    compared = 0
    for name, text, dirs in _sources():
        try:
            mine = repr(ours.parse(_tokens(text, name, dirs), [None]))
        except Exception as e:  # noqa: BLE001 - a file the parser rejects: Lark must too
            mine = ("error", type(e).__name__)
        try:
            other = repr(theirs.parse(_tokens(text, name, dirs)))
        except Exception:  # noqa: BLE001
            other = None
        if isinstance(mine, tuple):
            assert other is None, name
        else:
            assert mine == other, name  # tokens compare by identity: reprs
            compared += 1
    assert compared >= 5


def test_every_rule_without_a_method_is_inlined():
    """Lark's default for a rule with no Transformer method is a Tree; the driver makes a
    Subtree instead, which is only right when none ever reaches the syntax tree: every such
    rule is a ``_`` helper (its parent inlines its children) or a ``?rule`` of one child."""
    table = lalr.load_shipped(lalr.SHIPPED, GRAMMAR_TEXT)
    for origin, size, name, expand1, kept in table["rules"]:
        if hasattr(ToAst, name):
            continue
        n = size if kept is None else len(kept)
        assert name.startswith("_") or (expand1 and n == 1), (origin, name)


def test_a_cold_parse_imports_no_lark(tmp_path):
    code = ("import sys\nfrom tdflow.tdparser import parse_file\n"
            f"rk = parse_file({str(ROOT / 'ops.td')!r}, "
            f"[{str(ROOT / 'dialect' / 'include')!r}], use_cache=False)\n"
            "assert rk.defs, 'no records'\n"
            "print(sorted(m for m in sys.modules if m == 'lark' or m.startswith('lark.')))\n")
    env = {**os.environ, "TDFLOW_NO_CACHE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=tmp_path, check=True).stdout
    assert out.strip() == "[]"


def test_no_cache_still_uses_the_shipped_table_and_builds_nothing(fresh_parser, monkeypatch):
    def no_build(*a, **k):
        raise AssertionError("the LALR table was built")

    monkeypatch.setattr(grammar_cache, "build", no_build)
    with caches_disabled():
        rk = parse_string("class C<int n> { int v = n; }\ndef A : C<3>;\n", "a.td")
    assert rk.defs["A"].fields["v"] == 3


@pytest.mark.parametrize("how", ["missing", "other grammar", "damaged"])
def test_without_a_usable_table_lark_builds_it(fresh_parser, monkeypatch, tmp_path, how):
    path = tmp_path / "t.json"
    if how == "other grammar":
        path.write_text(SHIPPED_TEXT.replace(json.loads(SHIPPED_TEXT)["grammar_sha256"], "0" * 64))
    elif how == "damaged":
        path.write_text(SHIPPED_TEXT.replace('"start":', '"start":99999', 1))
    monkeypatch.setattr(tdparser_parser, "SHIPPED", str(path))
    built = []
    real = grammar_cache.build
    monkeypatch.setattr(grammar_cache, "build", lambda *a, **k: built.append(1) or real(*a, **k))
    with caches_disabled():
        rk = parse_string("def A { int v = 7; }\nclass B<int n> { int w = n; }\n", "a.td")
    assert rk.defs["A"].fields["v"] == 7 and built == [1]


def _load(text: str, tmp_path: Path, grammar: str = GRAMMAR_TEXT):
    path = tmp_path / "t.json"
    path.write_text(text)
    return lalr.load_shipped(str(path), grammar)


def _edit_table(edit) -> str:
    doc = json.loads(SHIPPED_TEXT)
    edit(doc["table"])
    return json.dumps(doc)


@pytest.mark.parametrize("edit", [
    lambda t: t["states"][0].update({"DEF": len(t["states"])}),  # shift past the last state
    lambda t: t["states"][0].update({"DEF": -1 - len(t["rules"])}),  # reduce by no rule
    lambda t: t["states"][0].update({"DEF": "1"}),
    lambda t: t["states"].append([]),
    lambda t: t["rules"][0].__setitem__(1, -1),  # a negative size
    lambda t: t["rules"][0].__setitem__(4, [[99, False]]),  # a child past the rule's size
    lambda t: t["rules"][0].__setitem__(3, 1),  # not a bool
    lambda t: t.pop("end"),
    lambda t: t.update(start=True),
])
def test_a_malformed_table_is_not_used(tmp_path, edit):
    assert _load(SHIPPED_TEXT, tmp_path) is not None
    assert _load(_edit_table(edit), tmp_path) is None


def test_a_stale_or_damaged_file_is_not_used(tmp_path):
    assert _load(SHIPPED_TEXT, tmp_path, GRAMMAR_TEXT + "\n// edited\n") is None
    assert _load(SHIPPED_TEXT[: len(SHIPPED_TEXT) // 2], tmp_path) is None  # truncated
    assert _load("[]", tmp_path) is None
    assert _load(SHIPPED_TEXT.replace('"format":2', '"format":1'), tmp_path) is None
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00")
    assert lalr.load_shipped(str(tmp_path / "bin.json"), GRAMMAR_TEXT) is None


def test_the_table_ships_with_the_package():
    if sys.version_info < (3, 11):
        pytest.skip("tomllib needs Python 3.11")
    import tomllib

    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs = conf["tool"]["setuptools"]["package-data"]["tdflow.tdparser"]
    assert any(Path(lalr.SHIPPED).match(g) for g in globs), globs
    assert conf["tool"]["setuptools"]["package-dir"]["tdflow.tdparser"] == "tdparser"
    assert Path(lalr.SHIPPED).parent == Path(GRAMMAR).parent
