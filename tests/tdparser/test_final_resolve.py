"""A def's final resolution against llvm-tblgen: fields that look each other up.

The final resolution takes a field that another field looked up from the resolver's cache
instead of resolving it again (``RecordResolver.whole``); these programs make fields look up
each other in every order, through cycles and self-references, with class instances made on
the way (their numbering is part of the output), and compare both outputs with llvm-tblgen's.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

import pytest
from oracle import compare, find_llvm_tblgen
from tdflow.tdparser import TdError, parse_string

SCRATCH = Path(tempfile.mkdtemp(prefix="tdflow-final-"))
_counter = itertools.count()

PROGRAMS = [
    # a later field looks up earlier ones and the other way round
    "def A { int a = b; int b = 3; int c = !add(a, b); bits<4> d = { a{1-0}, b{1-0} }; }",
    # a chain and a diamond of lookups, read before their own turn
    "class C<int n> { int x = y; int y = z; int z = n; bits<8> f; let f{3-0} = x; "
    "let f{7-4} = z; string s = !strconcat(!cast<string>(y), \"-\", NAME); }\n"
    "def D0 : C<5>; def D1 : C<9> { let z = 2; }",
    # a field that mentions itself through another one: the lookup sees it hidden
    "def E { int a = !if(!eq(b, 1), 2, 3); int b = 1; list<int> l = [a, b, a]; }",
    # class instances made while a field is looked up: numbered in the lookup's order
    "class G<int k> { int v = !mul(k, 2); }\n"
    "class P<int n> { int late = first; int first = G<n>.v; int other = G<!add(n, 1)>.v; }\n"
    "def Q : P<3>; def R : P<4> { let first = G<40>.v; }",
    # TSFlags-like: bits of one field made of other fields' bits
    "class Enc<bits<3> f, bits<2> s> { bits<3> Form = f; bits<2> Size = s; bits<3> FormBits = Form;"
    " bits<16> TSFlags; let TSFlags{2-0} = FormBits; let TSFlags{4-3} = Size; "
    "let TSFlags{7-5} = FormBits; int Sum = !add(FormBits, Size); }\n"
    "def I0 : Enc<5, 2>; def I1 : Enc<1, 3>; def I2 : Enc<0b111, 0>;",
    # a dag and a list that look up fields also used on their own
    "def op; class K<int n> { int a = n; dag d = (op a, b); int b = !add(a, 1); "
    "list<dag> ds = [d, (op b)]; }\ndef K1 : K<7>;",
]


@pytest.mark.oracle
@pytest.mark.parametrize("program", PROGRAMS)
def test_fields_looking_each_other_up_match_llvm_tblgen(program):
    tblgen = find_llvm_tblgen()
    if tblgen is None:
        pytest.skip("llvm-tblgen (Debian llvm-19) not installed; oracle test skipped")
    path = SCRATCH / f"final{next(_counter)}.td"
    path.write_text(program + "\n")
    diffs = compare(tblgen, path)
    assert not diffs, "program:\n" + program + "\ndifferences:\n" + "\n".join(diffs)


def test_values_found_concrete_once_are_not_taken_for_unresolved_ones():
    """The concreteness walk keeps what it found concrete by identity; a shared value is
    still checked in a def whose own value is not concrete."""
    rk = parse_string("class C { int x = 1; } def A : C; def B : C;")
    assert rk["A"]["x"] == rk["B"]["x"] == 1
    with pytest.raises(TdError, match=r"Initializer of 'a' in 'B' could not be fully "
                       r"resolved: !add\(b, 1\)"):
        parse_string("class C { int x = 1; } def A : C; "
                     "def B : C { int b = ?; int a = !add(b, x); }")
