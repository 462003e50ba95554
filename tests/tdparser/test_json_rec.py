"""``json_of_file`` (``tdflow tblgen --dump-json --no-cache``: the text written straight from
the evaluator's records, :mod:`tdflow.tdparser.json_rec`) against the route it replaces,
``json_text(parse_file(..., use_cache=False))``: the same text, byte for byte, and the same
errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tdflow.tdparser import TdError, parse_file
from tdflow.tdparser.api import json_of_file
from tdflow.tdparser.json_text import json_text

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from oracle import ROOT, mlir_include_dir  # noqa: E402

REPROS = ROOT.parent / "shared" / "corpus" / "tablegen-repros"


def _same(path, include_dirs=(), defines=()) -> str:
    ours = json_of_file(path, include_dirs, defines)
    assert ours == json_text(parse_file(path, include_dirs, defines, use_cache=False)), path
    return ours


# Every kind of value the evaluator leaves in a def: bits with unresolved bits, code, lists of
# lists, dags with names, records by name (anonymous ones included, renamed on a clash),
# unset and unresolved values, `field`s, values shared with classes, non-ASCII and the
# escapes LLVM spells its own way.
PROGRAM = r'''
def ops; def ins; def GPR;
class B<bits<4> v> { bits<4> Bits = v; bits<8> Inst; let Inst{3-0} = Bits; field bits<2> F; }
class C<string n, list<int> l> : B<5> {
  string N = n; list<int> L = l; dag D = (ops GPR:$a, (ins 1, "s"):$b);
  list<list<string>> LL = [[n], [], ["é\t\"q\\"]]; code K = [{ x "\f" }];
}
def X : C<"x\n", [1, 2]>;
def Y : C<"y", []> { let Inst{7-4} = 0b1010; bits<3> half = {?, 1, 0}; }
defvar anon = C<"z", [3]>;
def Z { C c = anon; int u = ?; bits<2> q; dag e = (ops); list<C> cs = [anon, X]; }
class H<int n> { int N = n; bits<4> S = {1, ?, 0, ?}; }
def W : H<1>, B<2> { int unset; string s = ?; }
multiclass M<int i> { def _a : H<i>; def _b : C<"m", [i]>; def NAME # _c; }
defm M1 : M<7>;
defm M2 : M<8>;
foreach i = [1, 2] in def Loop # i : H<i>;
def { int anonymous_field = 1; }
def Big { int big = 0x7fffffffffffffff; int neg = -9223372036854775808; }
'''


def test_a_program_with_every_kind_of_value(tmp_path):
    p = tmp_path / "p.td"
    p.write_text(PROGRAM)
    text = _same(p)
    assert '"anonymous_' in text and '"Loop2"' in text


def test_defines_and_include_dirs(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "i.td").write_text("class I { int x = 1; }\n")
    p = tmp_path / "p.td"
    p.write_text('include "i.td"\n#ifdef D\ndef A : I;\n#else\ndef B : I;\n#endif\n')
    assert '"A"' in _same(p, [tmp_path / "inc"], ["D"])
    assert '"B"' in _same(p, [tmp_path / "inc"])


def test_errors_are_the_same(tmp_path):
    p = tmp_path / "p.td"
    p.write_text("class C<int n> { int x = n; }\ndef A : C<1>;\ndef A : C<2>;\n")
    with pytest.raises(TdError) as a:
        json_of_file(p)
    with pytest.raises(TdError) as b:
        parse_file(p, use_cache=False)
    assert (a.value.message, a.value.line, a.value.col) == \
        (b.value.message, b.value.line, b.value.col)


def test_deeply_nested_values(tmp_path):
    # Each dag's text holds its printable form, so a dag's text grows with the square of its
    # depth: the writer keeps no long texts (a list of such a dag).
    d = 300
    p = tmp_path / "p.td"
    p.write_text("def op;\n"
                 + "def X { " + "list<" * d + "int" + ">" * d + " v = "
                 + "[" * d + "1" + "]" * d + "; }\n"
                 + "def Y { dag v = " + "(op " * d + "1" + ")" * d + "; }\n"
                 + "def Z { list<dag> v = [" + "(op " * d + "1" + ")" * d + "]; }\n")
    _same(p)


def test_the_writer_falls_back_on_recursion_error(monkeypatch, tmp_path):
    from tdflow.tdparser import json_rec

    def boom(self, ev):
        raise RecursionError

    monkeypatch.setattr(json_rec._RecWriter, "document", boom)
    p = tmp_path / "p.td"
    p.write_text(PROGRAM)
    _same(p)


def test_the_tablegen_reproducers():
    if not REPROS.is_dir():
        pytest.skip(f"shared corpus absent ({REPROS})")
    for path in sorted(REPROS.glob("*.td")):
        _same(path)


@pytest.mark.parametrize("rel", [
    "mlir/Dialect/Arith/IR/ArithOps.td", "mlir/Dialect/SPIRV/IR/SPIRVOps.td",
    "mlir/Dialect/LLVMIR/LLVMOps.td", "mlir/Dialect/Linalg/IR/LinalgStructuredOps.td",
    "mlir/Dialect/Tosa/IR/TosaOps.td", "mlir/IR/BuiltinAttributes.td",
])
def test_mlir_files(rel):
    inc = mlir_include_dir()
    if inc is None or not (inc / rel).is_file():
        pytest.skip("MLIR .td files (Debian libmlir-19-dev) not installed")
    _same(inc / rel, [inc])
