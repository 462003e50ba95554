"""What a parse leaves behind: nothing of the evaluator outlives it, and ``to_json`` leaves the
cycle collector as it found it (both matter for the cold time of LLVM's large targets)."""

from __future__ import annotations

import gc

from tdflow.tdparser import parse_string, to_json
from tdflow.tdparser.evaluator import Evaluator
from tdflow.tdparser.rec import Rec

PROGRAM = """
class Reg<string n> { string Name = n; list<Reg> Aliases = []; }
class RC<list<Reg> regs> { list<Reg> Members = regs; }
def R0 : Reg<"r0">;
def R1 : Reg<"r1"> { let Aliases = [R0]; }
def GPR : RC<[R0, R1]>;
multiclass M<int n> { def _a : Reg<"a">; def _b : RC<[!cast<Reg>(NAME # "_a")]>; }
defm X : M<1>;
def Inst { bits<4> Op = 0b1010; bits<8> Enc = {Op, 0b0101}; Reg r = Reg<"anon">; }
"""


def _alive(cls) -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, cls))


def test_parse_frees_the_evaluator():
    before = (_alive(Evaluator), _alive(Rec))
    rk = parse_string(PROGRAM)
    assert rk["Inst"]["Enc"].to_int() == 0b10100101
    assert [d.name for d in rk["GPR"]["Members"]] == ["R0", "R1"]
    # A module-wide record-type table used to keep each evaluator (and all its records) alive.
    assert (_alive(Evaluator), _alive(Rec)) == before


def test_parse_without_the_collector_frees_the_evaluator():
    # Taken apart, the evaluator is freed by reference counting alone: no collection needed.
    gc.collect()
    gc.disable()
    try:
        parse_string(PROGRAM)
        assert not any(isinstance(o, (Evaluator, Rec)) for o in gc.get_objects())
    finally:
        gc.enable()


def test_record_types_are_per_evaluator():
    a = parse_string(PROGRAM)
    b = parse_string(PROGRAM)
    assert a["X_b"]["Members"] == b["X_b"]["Members"]
    assert a["Inst"]["r"] == b["Inst"]["r"]


def test_to_json_keeps_the_collector_state():
    rk = parse_string(PROGRAM)
    assert gc.isenabled()
    doc = to_json(rk)
    assert gc.isenabled()
    gc.disable()
    try:
        assert to_json(rk) == doc
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert doc["X_a"]["Name"] == "a"
    assert doc["GPR"]["Members"] == [{"def": n, "kind": "def", "printable": n}
                                     for n in ("R0", "R1")]
