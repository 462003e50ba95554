"""The LALR table shipped as JSON (``tdparser/tablegen_lark.json``): equal to a fresh build of
the grammar, loaded without building anything (even under ``--no-cache``), parsing exactly as
the built parser does, and ignored (never trusted) when stale, damaged or naming other classes.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import lark
import pytest
from tdflow.tdparser import grammar_cache, grammar_table, parse_string
from tdflow.tdparser import parser as tdparser_parser
from tdflow.tdparser.lalr import LalrDriver
from tdflow.tdparser.lexer import Lexer
from tdflow.tdparser.parser import GRAMMAR, Feed, ToAst
from tdflow.tdparser.preprocessor import Preprocessor

from tdflow.core.cache_dir import caches_disabled

ROOT = Path(__file__).resolve().parents[2]
GRAMMAR_TEXT = Path(GRAMMAR).read_text(encoding="utf-8")


def _shipped_doc() -> dict:
    return grammar_cache.decode_table(grammar_cache.SHIPPED.read_text(encoding="utf-8"), Feed)


@pytest.fixture
def fresh_parser(monkeypatch):
    monkeypatch.setattr(tdparser_parser, "_PARSER", None)
    monkeypatch.setattr(tdparser_parser, "_DRIVER", None)


def test_the_shipped_table_is_made_from_this_grammar():
    doc = _shipped_doc()
    assert doc["grammar_sha256"] == hashlib.sha256(GRAMMAR_TEXT.encode()).hexdigest(), (
        "tablegen.lark changed: run python -m tdflow.tdparser.grammar_table")
    assert doc["lexer"] == "tdflow.tdparser.parser.Feed"


def test_the_shipped_table_equals_a_fresh_build():
    shipped = grammar_cache.SHIPPED.read_text(encoding="utf-8")
    if _shipped_doc()["lark"] != lark.__version__:
        pytest.skip(f"table written with Lark {_shipped_doc()['lark']}, this is {lark.__version__}"
                    " (the parser builds the table itself then)")
    assert grammar_table.fresh_table() == shipped, (
        "stale: run python -m tdflow.tdparser.grammar_table")
    assert grammar_table.main(["--check"]) == 0


def _describe(cb, depth: int = 0):
    """A rule callback by what it does: Lark wraps the Transformer's methods in child filters
    and expanders (objects, or closures over them), compared here by kind and content."""
    if depth > 6:
        return "..."
    if hasattr(cb, "__func__"):  # a bound method: the Transformer's rule method
        return ("method", cb.__func__.__qualname__)
    if hasattr(cb, "__code__"):  # a function: its name and what it closes over
        cells = tuple(_describe(c.cell_contents, depth + 1) for c in (cb.__closure__ or ()))
        return ("function", cb.__qualname__, cells)
    if isinstance(cb, (str, int, bool, type(None))):
        return cb
    if isinstance(cb, (list, tuple)):
        return tuple(_describe(x, depth + 1) for x in cb)
    if hasattr(cb, "__dict__"):
        return (type(cb).__name__,
                tuple((k, _describe(v, depth + 1)) for k, v in sorted(vars(cb).items())))
    return type(cb).__name__


def _driver_states(p: lark.Lark) -> tuple:
    """The parse table as the LALR loop runs it, numbered canonically (breadth first from
    the start state, symbols in name order), with rule callbacks by name: equal for two
    parsers exactly when they parse alike."""
    d = LalrDriver(p, tdparser_parser._syntax_error)
    order, seen = [d.start], {d.start}
    for st in order:
        for sym in sorted(d.states[st]):
            a = d.states[st][sym]
            if isinstance(a, int) and a not in seen:
                seen.add(a)
                order.append(a)
    num = {s: i for i, s in enumerate(order)}
    rows = []
    for st in order:
        row = []
        for sym in sorted(d.states[st]):
            a = d.states[st][sym]
            if isinstance(a, int):
                row.append((sym, "shift", num[a]))
            else:
                size, cb, origin = a
                row.append((sym, "reduce", size, str(origin), _describe(cb)))
        rows.append(tuple(row))
    return len(d.states), num[d.end], tuple(rows)


def test_the_loaded_parser_parses_as_the_built_one():
    loaded = grammar_cache.load_shipped(grammar_cache.SHIPPED, GRAMMAR_TEXT, lexer=Feed,
                                        transformer=ToAst())
    assert loaded is not None
    built = grammar_cache.build(GRAMMAR_TEXT, lexer=Feed, transformer=ToAst())
    a, b = _driver_states(loaded), _driver_states(built)
    assert a[0] == len(a[2]) and a == b
    # and the same syntax trees, through both parsers, for a file using most of the grammar
    text = (ROOT / "ops.td").read_text()
    trees = []
    for p in (loaded, built):
        toks = Lexer(Preprocessor([str(ROOT / "dialect" / "include")])).tokens_of_text(
            text, "ops.td")
        trees.append(LalrDriver(p, tdparser_parser._syntax_error).parse(toks, [None]))
    assert repr(trees[0]) == repr(trees[1]) and len(trees[0]) > 10  # tokens: by identity


def test_no_cache_still_uses_the_shipped_table_and_builds_nothing(fresh_parser, monkeypatch):
    def no_build(*a, **k):
        raise AssertionError("the LALR table was built")

    monkeypatch.setattr(grammar_cache, "build", no_build)
    with caches_disabled():
        rk = parse_string("class C<int n> { int v = n; }\ndef A : C<3>;\n", "a.td")
    assert rk.defs["A"].fields["v"] == 3


def test_without_the_shipped_table_the_parser_is_built(fresh_parser, monkeypatch, tmp_path):
    monkeypatch.setattr(grammar_cache, "SHIPPED", tmp_path / "missing.json")
    built = []
    real = grammar_cache.build
    monkeypatch.setattr(grammar_cache, "build", lambda *a, **k: built.append(1) or real(*a, **k))
    with caches_disabled():
        rk = parse_string("def A { int v = 7; }\n", "a.td")
    assert rk.defs["A"].fields["v"] == 7 and built == [1]


def _load(text: str, grammar: str = GRAMMAR_TEXT, tmp_path: Path | None = None):
    path = tmp_path / "t.json"
    path.write_text(text)
    return grammar_cache.load_shipped(path, grammar, lexer=Feed, transformer=ToAst())


def test_a_stale_or_damaged_table_is_not_used(tmp_path):
    good = grammar_cache.SHIPPED.read_text(encoding="utf-8")
    assert _load(good, tmp_path=tmp_path) is not None
    assert _load(good, GRAMMAR_TEXT + "\n// edited\n", tmp_path=tmp_path) is None
    assert _load(good[: len(good) // 2], tmp_path=tmp_path) is None  # truncated
    assert _load("[]", tmp_path=tmp_path) is None
    other_lark = good.replace(json.dumps(lark.__version__), json.dumps("0.0.1"), 1)
    assert other_lark != good and _load(other_lark, tmp_path=tmp_path) is None


def test_a_table_naming_another_class_is_refused(tmp_path):
    good = grammar_cache.SHIPPED.read_text(encoding="utf-8")
    name = '"tdflow.tdparser.parser.Feed"'
    assert name in good
    for other in ('"os.system"', '"builtins.eval"', '"subprocess.Popen"'):
        evil = good.replace('{"c":' + name, '{"c":' + other)
        assert evil != good
        with pytest.raises(ValueError):
            grammar_cache.decode_table(evil, Feed)
        assert _load(evil, tmp_path=tmp_path) is None
    # an object of any other shape (two keys, an unknown tag) is refused too
    for bad in ('{"d":[],"t":[]}', '{"x":1}', '{"c":1}', '{"d":"ab"}'):
        with pytest.raises(ValueError):
            grammar_cache.decode_table(bad, Feed)


@pytest.mark.parametrize("value", [
    {"a": (1, (2, [3, None])), 4: {"b": True}, "c": [], "d": ()},
    [{"x": {0: (False, "s")}}, (), {}],
])
def test_the_json_form_reads_back_exactly(value):
    text = json.dumps(grammar_cache._encode(value, Feed))
    back = grammar_cache.decode_table('{"d":[["v",' + text + "]]}", Feed)["v"]

    def typed(x):  # equality that tells tuples from lists and 1 from True
        if isinstance(x, dict):
            return ("dict", [(typed(k), typed(v)) for k, v in x.items()])
        if isinstance(x, (list, tuple)):
            return (type(x).__name__, [typed(v) for v in x])
        return (type(x).__name__, x)

    assert typed(back) == typed(value)


def test_the_table_ships_with_the_package():
    tomllib = pytest.importorskip("tomllib") if sys.version_info >= (3, 11) else None
    if tomllib is None:
        pytest.skip("tomllib needs Python 3.11")
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs = conf["tool"]["setuptools"]["package-data"]["tdflow.tdparser"]
    assert any(grammar_cache.SHIPPED.match(g) for g in globs), globs
    assert conf["tool"]["setuptools"]["package-dir"]["tdflow.tdparser"] == "tdparser"
