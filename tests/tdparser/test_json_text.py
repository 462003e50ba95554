"""``json_text`` (the CLI's direct ``--dump-json`` writer) against its two references:
``dump_json_text(to_json(rk))``, the document route it replaces, and llvm-tblgen's own bytes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tdflow.tdparser import parse_file, parse_string, to_json
from tdflow.tdparser.json_text import json_text
from tdflow.tdparser.records import Bits, Code, Dag, DefRef, Loc, Record, RecordKeeper, Unresolved

from tdflow.commands.tblgen import dump_json_text

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from oracle import find_llvm_tblgen, mlir_include_dir  # noqa: E402


def _same(rk: RecordKeeper) -> None:
    assert json_text(rk) == dump_json_text(to_json(rk))


# Strings that need every kind of escape: quotes, backslashes, the short escapes (\b and \f
# are LLVM's \u0008/\u000c), other control characters, DEL, non-ASCII and astral characters.
NASTY = ['a"b', "back\\slash", "\b\f\n\r\t", "\x00\x01\x1f\x7f", "é中𝄞", "\\b", ""]


def _keeper() -> RecordKeeper:
    rk = RecordKeeper()
    rk.add_class(Record("C", is_class=True))
    rk.add_class(Record("Unused", is_class=True))
    unres = [Unresolved("var", "x", "x"), Unresolved("varbit", "x{3}", "x", 3),
             Unresolved("complex", "!add(x, 1)")]
    dag = Dag(DefRef("ins"), ((DefRef("GPR"), "a"), (Bits((1, None)), None),
                              (Dag(DefRef("sub"), (), "$n"), "b\f")), "op")
    for i, s in enumerate(NASTY):
        fields = {"s": s, "c": Code(s), "i": -(1 << 63) + i, "b": bool(i % 2), "n": None,
                  "bits": Bits((1, 0, None, True, unres[i % 2])), "plain": Bits((1, 0, 1)),
                  "l": [[], [DefRef("A0")], [1, "x", None], unres], "u": unres[i % 3],
                  "d": dag, s or "empty": s}
        rk.add_def(Record(f"A{i}{s}", superclasses=("C", "Missing"), fields=fields,
                          nonconcrete=frozenset({"s", "n"}) if i % 2 else frozenset(),
                          locs=(Loc(f"/x/y/f{s}.td", i + 1, 2), Loc("g.td", 9)),
                          anonymous=bool(i % 3)))
    return rk


def test_every_kind_of_value_and_escape():
    _same(_keeper())


def test_a_field_named_like_a_bang_key_is_written_as_to_json_writes_it():
    rk = RecordKeeper()
    rk.add_def(Record("A", fields={"!name": 3, "!zz": 1, "a": 2}))
    rk.add_def(Record("B", fields={"a": 2}))  # the same layout as A's minus the odd keys
    _same(rk)
    assert '"!name":"A"' in json_text(rk)


def test_record_names_that_sort_before_the_bang_keys():
    rk = RecordKeeper()
    for name in (" x", "!", "!instanceof2", "\x01", "~", "é"):
        rk.add_def(Record(name, fields={"v": name}))
    _same(rk)


def test_a_program_parsed_and_resolved():
    rk = parse_string('''
        def ops;
        class B<bits<4> v> { bits<4> Bits = v; bits<8> Inst; let Inst{3-0} = Bits; }
        class C<string n, list<int> l> : B<5> { string N = n; list<int> L = l; dag D = (ops); }
        def X : C<"x\\n", [1, 2]>; def Y : C<"y", []> { let Inst{7-4} = 0b1010; }
        defvar anon = C<"z", [3]>;
        def Z { C c = anon; int u = ?; bits<2> q; }
    ''')
    _same(rk)


@st.composite
def _values(draw, depth=0):
    leaves = st.one_of(st.none(), st.integers(-(1 << 64), 1 << 64), st.booleans(),
                       st.text(max_size=6), st.text(max_size=4).map(Code),
                       st.sampled_from(["A", "B", "é"]).map(DefRef),
                       st.lists(st.sampled_from([0, 1, None, Unresolved("varbit", "v{0}", "v", 0)]),
                                max_size=5).map(Bits),
                       st.builds(Unresolved, st.sampled_from(["var", "varbit", "complex"]),
                                 st.text(max_size=4), st.one_of(st.none(), st.text(max_size=3)),
                                 st.one_of(st.none(), st.integers(0, 9))))
    if depth >= 2:
        return draw(leaves)
    sub = _values(depth + 1)
    return draw(st.one_of(
        leaves, st.lists(sub, max_size=3),
        st.builds(Dag, sub, st.lists(st.tuples(sub, st.one_of(st.none(), st.text(max_size=3))),
                                     max_size=3).map(tuple),
                  st.one_of(st.none(), st.text(max_size=3)))))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(st.text(min_size=1, max_size=4), _values(), max_size=5),
                min_size=1, max_size=4))
def test_random_records_match_the_document_route(records):
    rk = RecordKeeper()
    for i, fields in enumerate(records):
        # the same field names in another order too: the layout memo is keyed by the order
        rk.add_def(Record(f"R{i}", superclasses=("C",) * (i % 2), fields=fields,
                          nonconcrete=frozenset(list(fields)[:1])))
        rk.add_def(Record(f"S{i}", fields=dict(reversed(list(fields.items())))))
    _same(rk)


def test_bytes_of_llvm_tblgen_on_mlir_files():
    """The CLI's bytes are llvm-tblgen's on files whose documents are identical (anonymous
    numbering included)."""
    tblgen, inc = find_llvm_tblgen(), mlir_include_dir()
    if tblgen is None or inc is None:
        pytest.skip("needs llvm-tblgen-19 and the MLIR .td files (Debian libmlir-19-dev)")
    for rel in ("mlir/Dialect/Arith/IR/ArithOps.td", "mlir/Dialect/SPIRV/IR/SPIRVOps.td"):
        theirs = subprocess.run([tblgen, "--dump-json", "-I", str(inc), str(inc / rel)],
                                capture_output=True, check=True).stdout
        rk = parse_file(inc / rel, include_dirs=[inc], use_cache=False)
        ours = json_text(rk).encode("utf-8")
        assert ours == theirs, rel
