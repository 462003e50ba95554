"""Value classes without :mod:`dataclasses`: equality, ``repr`` and (when frozen) hashing and
refused assignment by a ``field_names`` tuple, with a hand-written ``__init__`` in each subclass.

Importing :mod:`dataclasses` pulls in :mod:`inspect` (and with it ``ast``, ``dis``,
``tokenize``), about 8 ms, and each decorated class costs more as its methods' source is
generated and compiled: on a cold ``tdflow tblgen`` that is a twentieth of the run. The classes
on that path (``SourceLoc``, ``TdError``, the resolved records) derive from these two instead.
They behave as the ``@dataclass`` / ``@dataclass(frozen=True)`` classes they replace: equal
when of the same class with equal fields, the dataclass ``repr``, unhashable when mutable;
frozen ones hash by their fields and refuse assignment with an ``AttributeError``.

>>> class Point(Frozen):
...     field_names = ("x", "y")
...     def __init__(self, x, y):
...         frozen_init(self, x=x, y=y)
>>> Point(1, 2), Point(1, 2) == Point(1, 2), hash(Point(1, 2)) == hash((1, 2))
(Point(x=1, y=2), True, True)
"""

from __future__ import annotations


class Plain:
    """A mutable value class: ``field_names`` names its fields in ``__init__`` order; equality and
    ``repr`` go by them, and it is unhashable (as a dataclass with ``eq=True``).

    >>> class Box(Plain):
    ...     field_names = ("item",)
    ...     def __init__(self, item):
    ...         self.item = item
    >>> Box([1]) == Box([1]), Box([1]) == Box([2]), Box("a")
    (True, False, Box(item='a'))
    """

    field_names: tuple[str, ...] = ()

    def field_values(self) -> tuple:
        """The fields' values, in order.

        >>> Plain().field_values()
        ()
        """
        d = self.__dict__
        return tuple(d[f] for f in self.field_names)

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return self.field_values() == other.field_values()
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self):
        d = self.__dict__
        body = ", ".join(f"{f}={d[f]!r}" for f in self.field_names)
        return f"{type(self).__qualname__}({body})"


class Frozen(Plain):
    """A frozen value class: as :class:`Plain`, hashable by its fields, and assigning or
    deleting an attribute raises ``AttributeError``. ``__init__`` stores the fields with
    :func:`frozen_init`.

    >>> class Name(Frozen):
    ...     field_names = ("text",)
    ...     def __init__(self, text):
    ...         frozen_init(self, text=text)
    >>> try:
    ...     Name("a").text = "b"
    ... except AttributeError as e:
    ...     print(e)
    cannot assign to field 'text'
    """

    def __hash__(self):
        return hash(self.field_values())

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r}")


def frozen_init(obj: Frozen, **values) -> None:
    """Store ``values`` as ``obj``'s fields (a :class:`Frozen` refuses ``setattr``); pickling
    restores the ``__dict__`` directly, so it needs nothing more.

    >>> class One(Frozen):
    ...     field_names = ("v",)
    ...     def __init__(self, v):
    ...         frozen_init(self, v=v)
    >>> One(3).v
    3
    """
    obj.__dict__.update(values)
