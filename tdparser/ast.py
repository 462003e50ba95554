"""The TableGen syntax tree: immutable nodes built by :mod:`.parser` from the Lark grammar.

Every node carries ``loc``, the :class:`~.lexer.Tok` it starts at (file, line, column and the
include stack), so the evaluator can point errors at the source.

The nodes behave as frozen, slotted dataclasses (positional construction, equality and hash by
type and fields, the same ``repr``, no assignment) but are made by :func:`_node`, not
:mod:`dataclasses`: making 36 dataclasses cost 20-30 ms of every cold ``tdflow tblgen`` (the
methods are generated as source and compiled at import), and their ``__init__`` is slower.

>>> Int(5, None).value
5
>>> Int(5, None) == Int(5, None), Int(5, None) == Str(5, False, None)
(True, False)
"""

from __future__ import annotations

from operator import attrgetter

from tdflow.core.valueclass import slot_init


class Node:
    """The base of every syntax node; a subclass lists its fields as annotations and is made
    by :func:`_node`. Assigning a field raises ``AttributeError`` (as a frozen dataclass's
    ``FrozenInstanceError`` is one).

    >>> Ident("x", None)
    Ident(name='x', loc=None)
    >>> try:
    ...     Ident("x", None).name = "y"
    ... except AttributeError as e:
    ...     print(e)
    cannot assign to field 'name'
    """

    __slots__ = ()
    _fields: tuple = ()
    _key = staticmethod(lambda node: ())

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return self._key(self) == self._key(other)
        return NotImplemented

    def __hash__(self):
        return hash(self._key(self))

    def __repr__(self):
        body = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{type(self).__qualname__}({body})"

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r}")

    def __getstate__(self):
        return self._key(self)

    def __setstate__(self, state):
        for f, v in zip(self._fields, state):
            object.__setattr__(self, f, v)


def _node(cls: type) -> type:
    """``cls`` (fields as annotations, trailing ones may have defaults) remade as a slotted
    :class:`Node` subclass."""
    names = tuple(cls.__dict__.get("__annotations__", {}))
    defaults = tuple(cls.__dict__[n] for n in names if n in cls.__dict__)
    ns = {k: v for k, v in cls.__dict__.items()
          if k not in names and k not in ("__dict__", "__weakref__")}
    ns.update(__slots__=names, _fields=names, __match_args__=names)
    new = type(cls.__name__, (Node,), ns)
    if not 1 <= len(names) <= 5:
        raise TypeError(f"a syntax node of {len(names)} fields")
    init = slot_init(tuple(new.__dict__[n].__set__ for n in names))
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    if defaults:
        init.__defaults__ = defaults
    new.__init__ = init
    get = attrgetter(*names)
    new._key = staticmethod(get if len(names) > 1 else lambda node: (get(node),))
    return new




# ---- types ------------------------------------------------------------------------------------
@_node
class TypeRef:
    """``kind`` is bit/int/string/code/dag/bits/list/class; ``arg`` the width, element or name."""

    kind: str
    arg: object
    loc: object


# ---- values -----------------------------------------------------------------------------------
@_node
class Int:
    value: int
    loc: object


@_node
class BinLit:
    """``0b0101``: a ``bits<n>`` value with one bit per digit written."""

    digits: str
    loc: object


@_node
class Str:
    value: str
    is_code: bool
    loc: object


@_node
class Unset:
    loc: object


@_node
class Bool:
    value: bool
    loc: object


@_node
class Ident:
    name: str
    loc: object


@_node
class Arg:
    """A template argument value, positional (``name is None``) or named ``name=value``."""

    name: object
    value: object


@_node
class AnonInst:
    cls: str
    args: tuple
    loc: object


@_node
class Range:
    """``lo...hi`` / ``lo-hi`` inside ``{}`` or ``[]``; ``hi`` is None for a single value."""

    lo: object
    hi: object
    loc: object


@_node
class BitsLit:
    items: tuple  # of Range
    loc: object


@_node
class ListLit:
    items: tuple
    elem_type: TypeRef | None
    loc: object


@_node
class DagLit:
    op: object
    op_name: str | None
    args: tuple  # of (value-or-None, name-or-None)
    loc: object


@_node
class Bang:
    op: str
    type: TypeRef | None
    args: tuple
    loc: object
    end: object = None  # the closing `)`, where llvm-tblgen reports operand type errors


@_node
class Cond:
    clauses: tuple  # of (cond, value)
    loc: object


@_node
class BitSlice:
    base: object
    ranges: tuple
    loc: object


@_node
class ListSlice:
    base: object
    ranges: tuple
    loc: object


@_node
class FieldAccess:
    base: object
    name: str
    loc: object


@_node
class Paste:
    lhs: object
    rhs: object  # None for a trailing `#`
    loc: object


# ---- statements -------------------------------------------------------------------------------
@_node
class TemplateArg:
    type: TypeRef
    name: str
    default: object
    loc: object


@_node
class ClassRef:
    name: str
    args: tuple  # of Arg
    loc: object


@_node
class FieldDecl:
    is_field: bool
    type: TypeRef
    name: str
    value: object
    loc: object


@_node
class BodyLet:
    name: str
    bits: tuple | None
    value: object
    loc: object


@_node
class ClassDef:
    name: str
    targs: tuple
    parents: tuple
    body: tuple | None  # None for `;`
    loc: object


@_node
class Def:
    name: object  # value node or None (anonymous)
    parents: tuple
    body: tuple | None
    loc: object
    name_loc: object


@_node
class Defm:
    name: object
    refs: tuple
    loc: object
    name_loc: object


@_node
class Defset:
    type: TypeRef
    name: str
    body: tuple
    loc: object


@_node
class Deftype:
    name: str
    type: TypeRef
    loc: object


@_node
class Defvar:
    name: str
    value: object
    loc: object


@_node
class Assert:
    cond: object
    message: object
    loc: object


@_node
class Dump:
    value: object
    loc: object


@_node
class Foreach:
    var: str
    iter: Range
    body: tuple
    loc: object


@_node
class If:
    cond: object
    then: tuple
    orelse: tuple | None
    loc: object


@_node
class LetItem:
    name: str
    bits: tuple | None
    value: object
    loc: object


@_node
class Let:
    items: tuple
    body: tuple
    loc: object


@_node
class Multiclass:
    name: str
    targs: tuple
    parents: tuple
    body: tuple | None
    loc: object


def mentions(node, names) -> bool:
    """Whether syntax ``node`` refers to any identifier in ``names``.

    >>> mentions((Int(1, None), Ident("n", None)), {"n"})
    True
    """
    # Asked for every statement and value under a multiclass or a tainted loop (X86: 4% of a
    # cold run), so the walk decides by the node's type, looked up once per type.
    how = _HOW.get(type(node))
    if how is None:
        how = _how(type(node))
    if how is _IDENT:
        return node.name in names
    if how is _TUPLE:
        for x in node:
            if mentions(x, names):
                return True
        return False
    for f in how:  # a node's fields other than loc
        if mentions(getattr(node, f), names):
            return True
    return False


def ident_names(node, memo: dict) -> frozenset:
    """The identifiers syntax ``node`` refers to: ``mentions(node, names)`` is
    ``not ident_names(node, memo).isdisjoint(names)``. ``memo`` (id -> (node, answer)) keeps
    each answer by the node's identity, for a caller that asks about the same syntax with many
    name sets (a defm's arguments, once per instantiation of the multiclass around it).

    >>> sorted(ident_names((Int(1, None), Ident("n", None), Ident("m", None)), {}))
    ['m', 'n']
    """
    got = memo.get(id(node))
    if got is not None and got[0] is node:
        return got[1]
    how = _HOW.get(type(node))
    if how is None:
        how = _how(type(node))
    if how is _IDENT:
        out = frozenset((node.name,))
    else:
        parts = node if how is _TUPLE else [getattr(node, f) for f in how]
        acc: set = set()
        for x in parts:
            acc |= ident_names(x, memo)
        out = frozenset(acc)
    memo[id(node)] = (node, out)  # the node kept, so that its id stays its own
    return out


_IDENT, _TUPLE = object(), object()
_HOW: dict = {}  # type -> _IDENT, _TUPLE or the names of the fields to look into


def _how(t):
    if issubclass(t, Ident):
        how = _IDENT
    elif issubclass(t, tuple):
        how = _TUPLE
    else:
        how = tuple(f for f in getattr(t, "_fields", ()) if f != "loc")
    _HOW[t] = how
    return how
