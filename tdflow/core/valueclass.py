"""Value classes made without :mod:`dataclasses`: :func:`value_class` and :func:`field` are the
subset of ``@dataclass`` / ``field`` that the dialect and the lowering use, with the same
behaviour (positional and keyword construction, defaults and default factories,
``__post_init__``, equality and hash by the tuple of the compared fields (as dataclasses
did before Python 3.13, which compares field by field), the dataclass ``repr``, frozen
and slotted classes, ``__match_args__``), and :func:`replace` / :func:`fields` for the
dataclass functions of the same names.

Why: ``dataclasses`` writes each generated method as source and compiles it (``exec``) when the
class is created, ~0.45 ms per class here, and the ~60 classes on the path of ``tdflow
verify`` / ``lower`` / ``run`` were a quarter of each command's start-up (issue 23, lever 6).
Here every method is a closure made from a fixed function (nothing is generated or compiled);
``__init__`` gets the field names as its parameter names by renaming its code object's local
variables (``CodeType.replace``), so keyword calls, defaults and error messages read as a
dataclass's. :class:`tdflow.core.plain.Plain` / ``Frozen`` are the hand-written alternative
of the TableGen path.

>>> @value_class(frozen=True, slots=True)
... class Point:
...     x: int
...     y: int = 0
>>> Point(1), Point(x=1, y=2) == Point(1, 2), hash(Point(1, 2)) == hash((1, 2))
(Point(x=1, y=0), True, True)
>>> replace(Point(1), y=5)
Point(x=1, y=5)
"""

from __future__ import annotations

from operator import attrgetter

from .errors import TdflowError

__all__ = ["FrozenInstanceError", "field", "fields", "replace", "slot_init", "value_class"]


class FrozenInstanceError(TdflowError, AttributeError):
    """Assigning or deleting a field of a frozen value class (as ``dataclasses``' error of the
    same name, an ``AttributeError``).

    >>> issubclass(FrozenInstanceError, AttributeError)
    True
    """


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()
#: The default ``__init__`` gives a default-factory field; the factory is called when seen.
_FACTORY = _Missing()


class Field:
    """One field: its name, default or default factory, and whether it is compared (and
    hashed), shown in ``repr`` and an ``__init__`` parameter (always, here).

    >>> field(default=3).default
    3
    """

    __slots__ = ("name", "default", "default_factory", "compare", "repr", "hash", "init")

    def __init__(self, default=MISSING, default_factory=MISSING, compare=True, repr=True,
                 hash=None) -> None:  # noqa: A002 - dataclasses' parameter names
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.repr = repr
        self.hash = hash
        self.init = True

    def __repr__(self) -> str:
        return f"Field(name={self.name!r})"


def field(*, default=MISSING, default_factory=MISSING, compare: bool = True, repr: bool = True,  # noqa: A002
          hash: bool | None = None) -> Field:  # noqa: A002
    """A field's options, as ``dataclasses.field`` (``default``, ``default_factory``,
    ``compare``, ``repr``, ``hash``).

    >>> @value_class
    ... class Bag:
    ...     items: list = field(default_factory=list)
    >>> Bag().items is not Bag().items
    True
    """
    return Field(default, default_factory, compare, repr, hash)


def fields(cls_or_obj) -> tuple[Field, ...]:
    """The fields of a value class (or of one of its instances), in ``__init__`` order.

    >>> @value_class
    ... class Pair:
    ...     a: int
    ...     b: int
    >>> [f.name for f in fields(Pair)]
    ['a', 'b']
    """
    try:
        return cls_or_obj.__value_fields__
    except AttributeError:
        raise TypeError("must be called with a value class or an instance of one") from None


def is_value_class(cls_or_obj) -> bool:
    """Whether ``cls_or_obj`` is a value class (or an instance of one).

    >>> is_value_class(int)
    False
    """
    return hasattr(cls_or_obj, "__value_fields__")


def replace(obj, **changes):
    """A copy of ``obj`` with ``changes`` (field name -> value), made through ``__init__`` (so
    ``__post_init__`` runs), as ``dataclasses.replace``.

    >>> @value_class(frozen=True)
    ... class Span:
    ...     start: int
    ...     stop: int
    >>> replace(Span(1, 4), stop=9)
    Span(start=1, stop=9)
    """
    for f in fields(obj):
        if f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return obj.__class__(**changes)


def value_class(cls=None, /, *, frozen: bool = False, slots: bool = False, eq: bool = True):
    """Make ``cls`` a value class from its annotated fields, as ``@dataclass(frozen=...,
    slots=..., eq=...)`` does (usable bare or called).

    >>> @value_class(frozen=True)
    ... class Name:
    ...     text: str
    >>> try:
    ...     Name("a").text = "b"
    ... except FrozenInstanceError as e:
    ...     print(e)
    cannot assign to field 'text'
    """
    def wrap(c):
        return _process(c, frozen, slots, eq)

    return wrap if cls is None else wrap(cls)


def _is_classvar(annotation) -> bool:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return text.startswith(("ClassVar", "typing.ClassVar"))


def _collect(cls) -> tuple[Field, ...]:
    """The inherited value-class fields, then this class's own annotated ones (a redefined name
    keeps its place, as in dataclasses)."""
    found: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for f in base.__dict__.get("__value_fields__", ()):
            found[f.name] = f
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_classvar(annotation):
            continue
        value = cls.__dict__.get(name, MISSING)
        f = value if isinstance(value, Field) else Field(default=value)
        f.name = name
        found[name] = f
    seen_default = False
    for f in found.values():
        if f.default is not MISSING or f.default_factory is not MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
    return tuple(found.values())


def _process(cls, frozen: bool, slots: bool, eq: bool):
    all_fields = _collect(cls)
    own = [n for n in cls.__dict__.get("__annotations__", {})
           if any(f.name == n for f in all_fields)]
    if slots:
        ns = {k: v for k, v in cls.__dict__.items()
              if k not in own and k not in ("__dict__", "__weakref__")}
        ns["__slots__"] = tuple(own)
        qualname = cls.__qualname__
        cls = type(cls)(cls.__name__, cls.__bases__, ns)
        cls.__qualname__ = qualname
    else:
        for f in all_fields:  # a dataclass leaves plain defaults as class attributes
            if f.name in own:
                if f.default is not MISSING:
                    setattr(cls, f.name, f.default)
                elif f.name in cls.__dict__:
                    delattr(cls, f.name)
    names = tuple(f.name for f in all_fields)
    cls.__value_fields__ = all_fields
    cls.__match_args__ = names
    if "__init__" not in cls.__dict__:
        cls.__init__ = _make_init(cls, all_fields, slots)
    if "__repr__" not in cls.__dict__:
        cls.__repr__ = _make_repr(tuple(f.name for f in all_fields if f.repr))
    compared = tuple(f.name for f in all_fields if f.compare)
    explicit_hash = "__hash__" in cls.__dict__ and not (
        cls.__dict__["__hash__"] is None and "__eq__" in cls.__dict__)
    if eq and "__eq__" not in cls.__dict__:
        cls.__eq__ = _make_eq(compared)
    if eq and not explicit_hash:
        if frozen:
            cls.__hash__ = _make_hash(tuple(f.name for f in all_fields
                                            if (f.compare if f.hash is None else f.hash)))
        else:
            cls.__hash__ = None
    if frozen:
        _make_frozen(cls, frozenset(names))
        if slots:  # pickling and copying restore slots past the refused __setattr__
            _add_state(cls, names)
    if cls.__doc__ is None:
        cls.__doc__ = f"{cls.__name__}({', '.join(names)})"
    return cls


def _add_state(cls, names: tuple[str, ...]) -> None:
    def __getstate__(self):
        return [getattr(self, n) for n in names]

    def __setstate__(self, state):
        for n, v in zip(names, state):
            object.__setattr__(self, n, v)

    cls.__getstate__ = __getstate__
    cls.__setstate__ = __setstate__


def _renamed(fn, names: tuple[str, ...]):
    """``fn`` with its attribute names ``f0``, ``f1``, ... renamed to ``names`` (its code
    object's ``co_names``): the attribute loads stay plain ``self.x`` loads, which the
    interpreter specialises (an ``attrgetter`` is ~3x slower on a slotted instance)."""
    rename = {f"f{i}": n for i, n in enumerate(names)}
    code = fn.__code__
    fn.__code__ = code.replace(co_names=tuple(rename.get(n, n) for n in code.co_names))
    return fn


def _make_eq(names: tuple[str, ...]):
    """``__eq__`` by the tuple of ``names``' values, for another instance of the same class."""
    if len(names) < len(_EQS):
        return _renamed(_EQS[len(names)](), names)
    key = attrgetter(*names)

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented
    return __eq__


def _make_hash(names: tuple[str, ...]):
    """``__hash__``: the hash of the tuple of ``names``' values (as a frozen dataclass's)."""
    if len(names) < len(_HASHES):
        return _renamed(_HASHES[len(names)](), names)
    key = attrgetter(*names)
    return lambda self: hash(key(self))


def _make_repr(names: tuple[str, ...]):
    def __repr__(self):
        body = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
        return f"{self.__class__.__qualname__}({body})"

    return __repr__


def _make_frozen(cls, names: frozenset) -> None:
    def __setattr__(self, name, value):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self, name):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    cls.__setattr__ = __setattr__
    cls.__delattr__ = __delattr__


def _make_init(cls, all_fields: tuple[Field, ...], slots: bool):
    names = tuple(f.name for f in all_fields)
    post = cls.__dict__.get("__post_init__") or getattr(cls, "__post_init__", None)
    factories = tuple((f.name, f.default_factory) for f in all_fields
                      if f.default_factory is not MISSING)
    if slots and not factories and len(names) <= len(_SLOT_INITS) - 1:
        setters = tuple(cls.__dict__[n].__set__ if n in cls.__dict__ else
                        _setter_of(cls, n) for n in names)
        init = slot_init(setters, post)
    else:
        init = _generic_init(cls, names, all_fields, slots, post)
        init.__qualname__ = f"{cls.__qualname__}.__init__"
        return init
    code = init.__code__
    # the fixed function's parameters (a, b, ...) take the fields' names, so keyword calls and
    # the interpreter's own argument errors read as for a dataclass
    init.__code__ = code.replace(co_varnames=("self", *names) + code.co_varnames[len(names) + 1:])
    defaults = tuple(f.default for f in all_fields if f.default is not MISSING)
    if defaults:
        init.__defaults__ = defaults
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _setter_of(cls, name: str):
    """An inherited slot's setter (a field of a slotted base)."""
    for base in cls.__mro__:
        if name in base.__dict__:
            return base.__dict__[name].__set__
    raise TypeError(f"no slot for field {name!r}")


def _generic_init(cls, names, all_fields, slots, post):
    """``__init__`` for many fields or default factories: binds ``*args``/``**kwargs`` to the
    fields by name, as the generated one does (a little slower per call)."""
    n = len(names)
    defaults = {f.name: f.default for f in all_fields if f.default is not MISSING}
    factories = {f.name: f.default_factory for f in all_fields
                 if f.default_factory is not MISSING}
    qual = cls.__qualname__
    setters = None
    if slots:
        setters = tuple(cls.__dict__[m].__set__ if m in cls.__dict__ else _setter_of(cls, m)
                        for m in names)

    def __init__(self, *args, **kwargs):
        if not kwargs and len(args) == n:  # every field given in order (the artifact's decoder)
            if setters is None:
                self.__dict__.update(zip(names, args))
            else:
                for s, v in zip(setters, args):
                    s(self, v)
            if post is not None:
                post(self)
            return
        if len(args) > n:
            raise TypeError(f"{qual}.__init__() takes {n + 1} positional arguments but "
                            f"{len(args) + 1} were given")
        values = list(args)
        for name in names[len(args):]:
            if name in kwargs:
                values.append(kwargs.pop(name))
            elif name in defaults:
                values.append(defaults[name])
            elif name in factories:
                values.append(factories[name]())
            else:
                raise TypeError(f"{qual}.__init__() missing 1 required argument: {name!r}")
        if kwargs:
            name = next(iter(kwargs))
            if name in names:
                raise TypeError(f"{qual}.__init__() got multiple values for argument {name!r}")
            raise TypeError(f"{qual}.__init__() got an unexpected keyword argument {name!r}")
        if setters is None:
            self.__dict__.update(zip(names, values))
        else:
            for s, v in zip(setters, values):
                s(self, v)
        if post is not None:
            post(self)

    return __init__


# Fixed __init__s by field count for slotted classes: each stores its arguments through the
# slots' setters (C descriptors) and calls __post_init__ when the class has one; their
# parameters are renamed to the fields' names above.
def _init0(setters, post):
    def __init__(self):
        if post is not None:
            post(self)
    return __init__


def _init1(setters, post):
    (s0,) = setters

    def __init__(self, a):
        s0(self, a)
        if post is not None:
            post(self)
    return __init__


def _init2(setters, post):
    s0, s1 = setters

    def __init__(self, a, b):
        s0(self, a)
        s1(self, b)
        if post is not None:
            post(self)
    return __init__


def _init3(setters, post):
    s0, s1, s2 = setters

    def __init__(self, a, b, c):
        s0(self, a)
        s1(self, b)
        s2(self, c)
        if post is not None:
            post(self)
    return __init__


def _init4(setters, post):
    s0, s1, s2, s3 = setters

    def __init__(self, a, b, c, d):
        s0(self, a)
        s1(self, b)
        s2(self, c)
        s3(self, d)
        if post is not None:
            post(self)
    return __init__


def _init5(setters, post):
    s0, s1, s2, s3, s4 = setters

    def __init__(self, a, b, c, d, e):
        s0(self, a)
        s1(self, b)
        s2(self, c)
        s3(self, d)
        s4(self, e)
        if post is not None:
            post(self)
    return __init__


_SLOT_INITS = (_init0, _init1, _init2, _init3, _init4, _init5)


def slot_init(setters: tuple, post=None):
    """A fixed ``__init__(self, a, b, ...)`` of ``len(setters)`` (at most 5) positional
    parameters, storing each through its slot's setter, then calling ``post(self)`` when given
    (TableGen's syntax nodes use it too).

    >>> class P:
    ...     __slots__ = ("x", "y")
    >>> P.__init__ = slot_init((P.x.__set__, P.y.__set__))
    >>> p = P(1, 2); (p.x, p.y)
    (1, 2)
    """
    return _SLOT_INITS[len(setters)](setters, post)


# Fixed __eq__ / __hash__ by compared-field count; _renamed gives f0, f1, ... the fields' names.
def _eq0():
    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return True
        return NotImplemented
    return __eq__


def _eq1():
    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.f0,) == (other.f0,)
        return NotImplemented
    return __eq__


def _eq2():
    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.f0, self.f1) == (other.f0, other.f1)
        return NotImplemented
    return __eq__


def _eq3():
    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.f0, self.f1, self.f2) == (other.f0, other.f1, other.f2)
        return NotImplemented
    return __eq__


def _eq4():
    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.f0, self.f1, self.f2, self.f3) == (other.f0, other.f1, other.f2,
                                                            other.f3)
        return NotImplemented
    return __eq__


def _eq5():
    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.f0, self.f1, self.f2, self.f3, self.f4) == (
                other.f0, other.f1, other.f2, other.f3, other.f4)
        return NotImplemented
    return __eq__


def _hash0():
    return lambda self: hash(())


def _hash1():
    return lambda self: hash((self.f0,))


def _hash2():
    return lambda self: hash((self.f0, self.f1))


def _hash3():
    return lambda self: hash((self.f0, self.f1, self.f2))


def _hash4():
    return lambda self: hash((self.f0, self.f1, self.f2, self.f3))


def _hash5():
    return lambda self: hash((self.f0, self.f1, self.f2, self.f3, self.f4))


_EQS = (_eq0, _eq1, _eq2, _eq3, _eq4, _eq5)
_HASHES = (_hash0, _hash1, _hash2, _hash3, _hash4, _hash5)
