"""Resolved TableGen records: the data the front end hands to everything downstream.

This module is the contract between ``tdparser`` and its consumers (``dialect``, the JSON
exporter, the cache). Field values of a resolved record are plain Python data:

============================  ===============================================================
TableGen                      Python value
============================  ===============================================================
``?`` (unset)                 ``None``
``bit`` / ``int``             ``int``
``bits<n>``                   :class:`Bits` (a tuple of bit values, least significant first)
``string``                    ``str``
``code``                      :class:`Code` (a ``str`` subclass)
``list<T>``                   ``list`` of values
``dag``                       :class:`Dag`
a record (``def`` or class    :class:`DefRef`
type)
still symbolic after          :class:`Unresolved` (llvm-tblgen's ``var``/``varbit``/
resolution                    ``complex`` JSON kinds)
============================  ===============================================================

Example::

    >>> rk = RecordKeeper()
    >>> rk.add_def(Record("A", superclasses=("C",), fields={"N": 3}))
    >>> [r.name for r in rk.instances_of("C")]
    ['A']
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field


class Code(str):
    """A ``code`` value (``[{ ... }]``); behaves as ``str``, remembers it was code."""

    __slots__ = ()


class Bits(tuple):
    """A ``bits<n>`` value: bit values (0, 1, ``None`` or :class:`Unresolved`), LSB first."""

    __slots__ = ()

    def to_int(self) -> int | None:
        """The integer value, or ``None`` when any bit is unset or symbolic.

        >>> Bits((1, 0, 1)).to_int()
        5
        """
        out = 0
        for i, b in enumerate(self):
            if not isinstance(b, int):
                return None
            out |= (b & 1) << i
        return out


@dataclass(frozen=True)
class DefRef:
    """A reference to a concrete record (``def``), by name."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Unresolved:
    """A value that stays symbolic after resolution.

    ``kind`` is llvm-tblgen's JSON kind: ``"var"`` (an unresolved variable ``name``),
    ``"varbit"`` (bit ``index`` of variable ``name``) or ``"complex"``; ``printable`` is the
    text llvm-tblgen prints for it.
    """

    kind: str
    printable: str
    name: str | None = None
    index: int | None = None

    def __str__(self) -> str:
        return self.printable


@dataclass(frozen=True)
class Dag:
    """A ``dag`` value ``(op arg:$name, ...)``.

    ``operator`` is usually a :class:`DefRef`; ``operator_name`` is the ``:$name`` on the
    operator, if any; ``args`` is a tuple of ``(value, name_or_None)``.

    >>> d = Dag(DefRef("ins"), (( DefRef("TDF_Tensor"), "x"),))
    >>> d.arg_names
    ('x',)
    """

    operator: Value
    args: tuple[tuple[Value, str | None], ...] = ()
    operator_name: str | None = None

    @property
    def arg_names(self) -> tuple[str | None, ...]:
        return tuple(n for _, n in self.args)

    @property
    def arg_values(self) -> tuple[Value, ...]:
        return tuple(v for v, _ in self.args)


Value = int | str | Code | Bits | list | Dag | DefRef | Unresolved | None


@dataclass(frozen=True)
class Loc:
    """Where a record was defined (``file:line``, as in ``!locs``), plus the column."""

    file: str
    line: int
    col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class Record:
    """A resolved record: a ``class`` or a concrete ``def``.

    ``superclasses`` lists every direct and indirect superclass in llvm-tblgen's order (the
    order of ``!superclasses`` in ``--dump-json``). ``fields`` maps field name to value in
    declaration order (template arguments excluded); ``field_types`` maps field name to its
    TableGen type spelling (``"int"``, ``"list<string>"``, ``"dag"``, a class name, ...);
    ``nonconcrete`` names the fields declared with ``field``.
    """

    name: str
    superclasses: tuple[str, ...] = ()
    fields: dict[str, Value] = field(default_factory=dict)
    field_types: dict[str, str] = field(default_factory=dict)
    locs: tuple[Loc, ...] = ()
    anonymous: bool = False
    is_class: bool = False
    template_args: tuple[str, ...] = ()
    nonconcrete: frozenset[str] = frozenset()
    # (qualified name, type spelling, default value) of each template argument, in order.
    template_arg_info: tuple[tuple[str, str, Value], ...] = ()

    def isa(self, cls: str) -> bool:
        """True when ``cls`` is one of this record's superclasses."""
        return cls in self.superclasses

    def get(self, name: str, default: object = None) -> Value:
        return self.fields.get(name, default)

    def __getitem__(self, name: str) -> Value:
        return self.fields[name]

    def __contains__(self, name: object) -> bool:
        return name in self.fields

    @property
    def loc(self) -> Loc | None:
        return self.locs[0] if self.locs else None


@dataclass
class RecordKeeper:
    """All classes and defs of a resolved TableGen program, in definition order."""

    classes: dict[str, Record] = field(default_factory=dict)
    defs: dict[str, Record] = field(default_factory=dict)
    files: tuple[str, ...] = ()  # every file read, main file first (for caching)

    def add_class(self, rec: Record) -> None:
        self.classes[rec.name] = rec

    def add_def(self, rec: Record) -> None:
        self.defs[rec.name] = rec

    def __iter__(self) -> Iterator[Record]:
        return iter(self.defs.values())

    def __len__(self) -> int:
        return len(self.defs)

    def __getitem__(self, name: str) -> Record:
        return self.defs[name]

    def __contains__(self, name: object) -> bool:
        return name in self.defs

    def instances_of(self, cls: str) -> list[Record]:
        """Every concrete def deriving from ``cls``, in definition order."""
        return [r for r in self.defs.values() if cls in r.superclasses]

    @classmethod
    def from_json(cls, doc: dict[str, object]) -> RecordKeeper:
        """Build a keeper from an ``llvm-tblgen --dump-json`` document.

        Classes are not in that document, so ``classes`` stays empty; value kinds that JSON
        cannot tell apart (``bit`` vs ``int``, ``code`` vs ``string``) come back as the plainer
        one. Useful as a reference and to read files the real tool produced.
        """
        rk = cls()
        for name, body in doc.items():
            if name.startswith("!"):
                continue
            fields = {k: _value_from_json(v) for k, v in body.items() if not k.startswith("!")}
            locs = []
            for text in body.get("!locs", ()):
                file, _, line = text.rpartition(":")
                locs.append(Loc(file, int(line) if line.isdigit() else 0))
            rk.add_def(
                Record(
                    name=body.get("!name", name),
                    superclasses=tuple(body.get("!superclasses", ())),
                    fields=fields,
                    locs=tuple(locs),
                    anonymous=bool(body.get("!anonymous", False)),
                    nonconcrete=frozenset(body.get("!fields", ())),
                )
            )
        return rk


def _value_from_json(v: object) -> Value:
    if isinstance(v, dict):
        kind = v.get("kind")
        if kind == "def":
            return DefRef(v["def"])
        if kind == "dag":
            return Dag(
                _value_from_json(v["operator"]),
                tuple((_value_from_json(a), n) for a, n in v["args"]),
                _dag_operator_name(v),
            )
        if kind == "var":
            return Unresolved("var", v.get("printable", v.get("var", "")), v.get("var"))
        if kind == "varbit":
            return Unresolved("varbit", v.get("printable", ""), v.get("var"), v.get("index"))
        return Unresolved(kind or "complex", v.get("printable", ""))
    if isinstance(v, list):
        return [_value_from_json(x) for x in v]
    return v


def _dag_operator_name(v: dict) -> str | None:
    """The ``:$name`` on a dag's operator (``(Op:$res $x)``, DRR binds an op's results so):
    llvm-tblgen's JSON has no field for it, but its printable form keeps it.

    >>> _dag_operator_name({"printable": "(Op:res ?:$x)", "operator": {"printable": "Op"}})
    'res'
    """
    op = v.get("operator")
    op_text = op.get("printable") if isinstance(op, dict) else None
    printable = v.get("printable")
    if not op_text or not isinstance(printable, str):
        return None
    prefix = f"({op_text}:"  # llvm 19 prints `(Op:res ...)`, without the `$`
    if not printable.startswith(prefix):
        return None
    rest = printable[len(prefix):].removeprefix("$")
    end = 0
    while end < len(rest) and (rest[end].isalnum() or rest[end] == "_"):
        end += 1
    return rest[:end] or None
