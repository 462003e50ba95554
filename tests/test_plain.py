"""tdflow.core.plain's value classes against the dataclasses they replaced (SourceLoc, TdError,
the resolved records): same equality, hash, repr, frozenness, defaults and pickling."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest
from tdflow.tdparser.errors import TdError
from tdflow.tdparser.records import Bits, Dag, DefRef, Loc, Record, RecordKeeper, Unresolved

from tdflow.core.errors import SourceLoc


@dataclasses.dataclass(frozen=True)
class DLoc:
    file: str
    line: int
    col: int = 0


@dataclasses.dataclass
class DRecord:
    name: str
    superclasses: tuple = ()
    fields: dict = dataclasses.field(default_factory=dict)
    field_types: dict = dataclasses.field(default_factory=dict)
    locs: tuple = ()
    anonymous: bool = False
    is_class: bool = False
    template_args: tuple = ()
    nonconcrete: frozenset = frozenset()
    template_arg_info: tuple = ()


def _body(obj) -> str:
    return repr(obj).partition("(")[2]


LOCS = [("a.td", 1), ("a.td", 1, 0), ("a.td", 1, 3), ("b.td", 2, -0), ("", 0, 7)]


@pytest.mark.parametrize("args", LOCS)
def test_frozen_loc_as_dataclass(args):
    p, d = Loc(*args), DLoc(*args)
    assert _body(p) == _body(d)
    assert hash(p) == hash(d)
    assert (p.file, p.line, p.col) == (d.file, d.line, d.col)
    for other in LOCS:
        assert (p == Loc(*other)) == (d == DLoc(*other))
    assert p != d and p != (p.file, p.line, p.col)  # another class is never equal
    with pytest.raises(AttributeError):
        p.line = 5
    with pytest.raises(AttributeError):
        del p.file
    assert pickle.loads(pickle.dumps(p, 5)) == p and copy.deepcopy(p) == p


def test_record_as_dataclass():
    kw = dict(superclasses=("A",), fields={"x": Bits((1, 0))}, locs=(Loc("a.td", 3),),
              is_class=True, template_args=("A:t",), nonconcrete=frozenset({"x"}))
    p, d = Record("R", **kw), DRecord("R", **kw)
    assert _body(p) == _body(d)
    assert p == Record("R", **kw) and p != Record("S", **kw)
    with pytest.raises(TypeError):
        hash(p)  # mutable: unhashable, as a dataclass with eq
    # Each record gets its own dicts by default.
    a, b = Record("a"), Record("a")
    a.fields["x"] = 1
    assert b.fields == {} and a != b
    back = pickle.loads(pickle.dumps(p, 5))
    assert back == p and back.fields == p.fields
    keeper = RecordKeeper()
    keeper.add_def(p)
    assert keeper == pickle.loads(pickle.dumps(keeper, 5)) and len(RecordKeeper()) == 0


def test_values_and_errors():
    dag = Dag(DefRef("ins"), ((Unresolved("var", "x", "x"), "a"),))
    assert dag == Dag(DefRef("ins"), ((Unresolved("var", "x", "x"), "a"),))
    assert hash(dag) == hash((DefRef("ins"), dag.args, None))
    assert repr(Unresolved("var", "x")) == \
        "Unresolved(kind='var', printable='x', name=None, index=None)"
    assert SourceLoc("f", 1, 2) == SourceLoc("f", 1, 2) and str(SourceLoc("f", 1, 2)) == "f:1:2"
    assert hash(SourceLoc("f", 1, 2)) == hash(("f", 1, 2))
    e = TdError("bad", "a.td", 3, 4)
    assert e.args == ("bad",) and e.others == [] and e == TdError("bad", "a.td", 3, 4)
    assert TdError("x").others is not TdError("x").others
    with pytest.raises(TypeError):
        hash(e)
    assert repr(e).startswith("TdError(message='bad', file='a.td', line=3, col=4,")
