"""tdflow.core.valueclass against dataclasses (issue 23, lever 6): each class shape the dialect
and the lowering use is made both ways from the same body, and the two must construct, compare,
hash, print, refuse assignment, copy and replace alike."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import math
import sys
from functools import partial
from typing import ClassVar

import pytest

from tdflow.core import valueclass as vc

NAN = float("nan")


def _pair(fields_spec, *, post=None, **flags):
    """(dataclass, value class) of one body: ``fields_spec`` is ``(name, kind, value)`` with
    kind ``req`` (no default), ``def`` (default), ``fac`` (default factory), ``nocmp`` (a
    default, not compared), ``norepr`` (a default, not in repr)."""
    made = []
    for deco, fld in ((dataclasses.dataclass, dataclasses.field), (vc.value_class, vc.field)):
        ns = {"__annotations__": {name: "object" for name, _, _ in fields_spec},
              "__qualname__": "C", "__module__": __name__}
        for name, kind, value in fields_spec:
            if kind == "def":
                ns[name] = value
            elif kind == "fac":
                ns[name] = fld(default_factory=value)
            elif kind == "nocmp":
                ns[name] = fld(default=value, compare=False)
            elif kind == "norepr":
                ns[name] = fld(default=value, repr=False)
        if post is not None:
            ns["__post_init__"] = post
        made.append(deco(**flags)(type("C", (), ns)))
    return made


SHAPES = [
    [],
    [("value", "req", None)],
    [("value", "req", None), ("type", "def", "i64")],
    [("a", "req", None), ("b", "req", None), ("c", "req", None)],
    [("a", "req", None), ("b", "req", None), ("c", "def", 0), ("d", "def", None),
     ("e", "def", ())],
    [("a", "req", None), ("b", "def", 1), ("c", "def", 2), ("d", "def", 3), ("e", "def", 4),
     ("f", "def", 5), ("g", "def", 6)],
    [("name", "req", None), ("items", "fac", list), ("index", "fac", dict)],
    [("x", "req", None), ("cache", "nocmp", None)],
    [("x", "req", None), ("hidden", "norepr", 7)],
]
FLAGS = [dict(frozen=True, slots=True), dict(frozen=True), dict(), dict(slots=True),
         dict(frozen=True, eq=False)]
VALUES = [0, 1, -0.0, 0.0, NAN, "a", (1, 2), [1], None]


def _args(n: int):
    """Argument tuples of length ``n`` drawn from VALUES (a few, not all products)."""
    pool = itertools.product(VALUES, repeat=n) if n <= 2 else (
        tuple(VALUES[(i + k) % len(VALUES)] for k in range(n)) for i in range(len(VALUES)))
    return list(pool)


def _tuple_eq(a, b) -> bool:
    """Equality as a value class defines it, and as dataclasses did before Python 3.13: the
    tuples of the compared fields (so one NaN object equals itself: tuples test identity first).
    Python 3.13's dataclasses compare field by field instead, where such a NaN differs."""
    if type(a) is not type(b):
        return a == b
    names = [f.name for f in dataclasses.fields(a) if f.compare]
    return tuple(getattr(a, n) for n in names) == tuple(getattr(b, n) for n in names)


#: whether this Python's dataclasses compare as tuples (the reference for equality)
TUPLE_DATACLASSES = sys.version_info < (3, 13)


def _same_outcome(f, g):
    """Both raise the same exception type, or return values whose repr agree."""
    try:
        a = f()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        # dataclasses' FrozenInstanceError and this module's are both AttributeErrors
        with pytest.raises(AttributeError if isinstance(e, AttributeError) else type(e)):
            g()
        return None, None
    b = g()
    assert repr(a).replace("C(", "") == repr(b).replace("C(", "")
    return a, b


@pytest.mark.parametrize("flags", FLAGS, ids=str)
@pytest.mark.parametrize("spec", SHAPES, ids=lambda s: "-".join(k for _, k, _ in s) or "none")
def test_value_class_behaves_as_the_dataclass(spec, flags):
    D, V = _pair(spec, **flags)
    required = [name for name, kind, _ in spec if kind == "req"]
    names = [name for name, _, _ in spec]
    assert V.__match_args__ == D.__match_args__
    assert [f.name for f in vc.fields(V)] == [f.name for f in dataclasses.fields(D)]
    assert ("__slots__" in V.__dict__) == ("__slots__" in D.__dict__)
    assert (V.__hash__ is None) == (D.__hash__ is None)
    instances = []
    for args in _args(len(required)):
        d, v = _same_outcome(partial(D, *args), partial(V, *args))
        kw = dict(zip(required, args))
        _same_outcome(partial(D, **kw), partial(V, **kw))
        full = [*args, *range(len(names) - len(args))]
        _same_outcome(partial(D, *full), partial(V, *full))
        instances.append((d, v))
    # wrong calls fail alike
    _same_outcome(lambda: D(*range(len(names) + 1)), lambda: V(*range(len(names) + 1)))
    _same_outcome(lambda: D(nope=1), lambda: V(nope=1))
    if required:
        _same_outcome(lambda: D(), lambda: V())
        _same_outcome(lambda: D(1, **{required[0]: 1}), lambda: V(1, **{required[0]: 1}))
    for (d1, v1), (d2, v2) in itertools.product(instances, repeat=2):
        if d1 is None or d2 is None or not flags.get("eq", True):
            assert (d1 == d2) == (v1 == v2)
            assert (d1 != d2) == (v1 != v2)
        else:
            want = _tuple_eq(d1, d2)
            assert (v1 == v2) == want and (v1 != v2) == (not want)
            if TUPLE_DATACLASSES:
                assert (d1 == d2) == want
        if D.__hash__ is not None and flags.get("frozen") and flags.get("eq", True):
            try:
                want = hash(d1)
            except TypeError:  # a list field
                with pytest.raises(TypeError):
                    hash(v1)
            else:
                assert hash(v1) == want
    for d, v in instances:
        assert v != d and (v == 1) is False
        assert repr(copy.deepcopy(v)) == repr(v) and repr(copy.copy(v)) == repr(v)
        for name in names:
            assert getattr(v, name) is getattr(d, name) or (
                getattr(v, name) == getattr(d, name))
        if names:
            _same_outcome(partial(setattr, d, names[0], 5), partial(setattr, v, names[0], 5))
            _same_outcome(partial(delattr, d, names[-1]), partial(delattr, v, names[-1]))
            changes = {names[-1]: "new"}
            assert repr(vc.replace(v, **changes)) == repr(dataclasses.replace(d, **changes))
        if flags.get("frozen") and flags.get("slots"):
            # dataclasses' frozen __setattr__ names the class it made before adding slots, so
            # a name that is no field reaches super() with the wrong class: TypeError there
            with pytest.raises(AttributeError):
                v.other = 1
        else:
            _same_outcome(partial(setattr, d, "other", 1),
                          partial(setattr, v, "other", 1))


def test_post_init_and_per_instance_factories():
    def post(self):
        object.__setattr__(self, "value", round(self.value, 1))

    D, V = _pair([("value", "req", None), ("tag", "fac", list)], post=post,
                 frozen=True, slots=True)
    assert repr(V(1.26)) == repr(D(1.26)).replace("C(", "C(") == "C(value=1.3, tag=[])"
    assert V(1.0).tag is not V(1.0).tag
    assert V(value=2.04, tag=[1]) == V(2.0, [1])
    D2, V2 = _pair([("value", "req", None), ("type", "def", "f64")], post=post,
                   frozen=True, slots=True)
    assert repr(V2(type="f32", value=0.26)) == repr(D2(type="f32", value=0.26))
    assert vc.replace(V2(0.5), value=0.77) == V2(0.8)


def test_frozen_errors_are_attribute_errors_naming_the_field():
    (_, V) = _pair([("x", "req", None)], frozen=True)
    with pytest.raises(AttributeError, match="cannot assign to field 'x'"):
        V(1).x = 2
    with pytest.raises(vc.FrozenInstanceError, match="cannot delete field 'x'"):
        del V(1).x


def test_nan_fields_compare_as_the_dataclass_tuples_do():
    """Equality goes through tuples, so one NaN object equals itself (identity first)."""
    D, V = _pair([("x", "req", None)], frozen=True, slots=True)
    assert V(NAN) == V(NAN) and V(math.nan * 1) != V(float("nan"))
    if TUPLE_DATACLASSES:  # 3.13's dataclasses compare field by field: there D(NAN) != D(NAN)
        assert D(NAN) == D(NAN) and D(math.nan * 1) != D(float("nan"))


def test_explicit_eq_and_hash_are_kept():
    @vc.value_class(frozen=True, slots=True, eq=False)
    class Bits:
        value: float

        def __eq__(self, other):
            return isinstance(other, Bits) and repr(self.value) == repr(other.value)

        def __hash__(self):
            return hash(repr(self.value))

    assert Bits(-0.0) != Bits(0.0) and Bits(NAN) == Bits(NAN)
    assert hash(Bits(1.0)) == hash(repr(1.0))


def test_inherited_fields_and_class_variables():
    @vc.value_class(frozen=True, slots=True)
    class Base:
        pass

    @vc.value_class(frozen=True, slots=True)
    class Leaf(Base):
        kind: ClassVar[str] = "leaf"
        x: int

    assert Leaf(3) == Leaf(x=3) and repr(Leaf(3)) == "test_inherited_fields_and_class_variables." \
        "<locals>.Leaf(x=3)" and Leaf.kind == "leaf" and isinstance(Leaf(1), Base)
    assert [f.name for f in vc.fields(Leaf)] == ["x"]


def test_a_default_before_a_required_field_is_refused():
    with pytest.raises(TypeError, match="non-default argument 'b'"):
        _pair([("a", "def", 1), ("b", "req", None)])
