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

from tdflow.core.plain import Frozen, Plain, frozen_init


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


class DefRef(Frozen):
    """A reference to a concrete record (``def``), by name."""

    field_names = ("name",)
    name: str

    def __init__(self, name: str) -> None:
        frozen_init(self, name=name)

    def __str__(self) -> str:
        return self.name


class Unresolved(Frozen):
    """A value that stays symbolic after resolution.

    ``kind`` is llvm-tblgen's JSON kind: ``"var"`` (an unresolved variable ``name``),
    ``"varbit"`` (bit ``index`` of variable ``name``) or ``"complex"``; ``printable`` is the
    text llvm-tblgen prints for it.
    """

    field_names = ("kind", "printable", "name", "index")
    kind: str
    printable: str
    name: str | None
    index: int | None

    def __init__(self, kind: str, printable: str, name: str | None = None,
                 index: int | None = None) -> None:
        frozen_init(self, kind=kind, printable=printable, name=name, index=index)

    def __str__(self) -> str:
        return self.printable


class Dag(Frozen):
    """A ``dag`` value ``(op arg:$name, ...)``.

    ``operator`` is usually a :class:`DefRef`; ``operator_name`` is the ``:$name`` on the
    operator, if any; ``args`` is a tuple of ``(value, name_or_None)``.

    >>> d = Dag(DefRef("ins"), (( DefRef("TDF_Tensor"), "x"),))
    >>> d.arg_names
    ('x',)
    """

    field_names = ("operator", "args", "operator_name")
    operator: Value
    args: tuple[tuple[Value, str | None], ...]
    operator_name: str | None

    def __init__(self, operator: Value, args: tuple[tuple[Value, str | None], ...] = (),
                 operator_name: str | None = None) -> None:
        frozen_init(self, operator=operator, args=args, operator_name=operator_name)

    @property
    def arg_names(self) -> tuple[str | None, ...]:
        return tuple(n for _, n in self.args)

    @property
    def arg_values(self) -> tuple[Value, ...]:
        return tuple(v for v, _ in self.args)


Value = int | str | Code | Bits | list | Dag | DefRef | Unresolved | None


class Loc(Frozen):
    """Where a record was defined (``file:line``, as in ``!locs``), plus the column."""

    field_names = ("file", "line", "col")
    file: str
    line: int
    col: int

    def __init__(self, file: str, line: int, col: int = 0) -> None:
        frozen_init(self, file=file, line=line, col=col)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class Record(Plain):
    """A resolved record: a ``class`` or a concrete ``def``.

    ``superclasses`` lists every direct and indirect superclass in llvm-tblgen's order (the
    order of ``!superclasses`` in ``--dump-json``). ``fields`` maps field name to value in
    declaration order (template arguments excluded); ``field_types`` maps field name to its
    TableGen type spelling (``"int"``, ``"list<string>"``, ``"dag"``, a class name, ...);
    ``nonconcrete`` names the fields declared with ``field``.
    """

    field_names = ("name", "superclasses", "fields", "field_types", "locs", "anonymous",
                   "is_class", "template_args", "nonconcrete", "template_arg_info")
    name: str
    superclasses: tuple[str, ...]
    fields: dict[str, Value]
    field_types: dict[str, str]
    locs: tuple[Loc, ...]
    anonymous: bool
    is_class: bool
    template_args: tuple[str, ...]
    nonconcrete: frozenset[str]
    # (qualified name, type spelling, default value) of each template argument, in order.
    template_arg_info: tuple[tuple[str, str, Value], ...]

    def __init__(self, name: str, superclasses: tuple[str, ...] = (),
                 fields: dict[str, Value] | None = None,
                 field_types: dict[str, str] | None = None, locs: tuple[Loc, ...] = (),
                 anonymous: bool = False, is_class: bool = False,
                 template_args: tuple[str, ...] = (), nonconcrete: frozenset[str] = frozenset(),
                 template_arg_info: tuple[tuple[str, str, Value], ...] = ()) -> None:
        self.name = name
        self.superclasses = superclasses
        self.fields = {} if fields is None else fields
        self.field_types = {} if field_types is None else field_types
        self.locs = locs
        self.anonymous = anonymous
        self.is_class = is_class
        self.template_args = template_args
        self.nonconcrete = nonconcrete
        self.template_arg_info = template_arg_info

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


class RecordKeeper(Plain):
    """All classes and defs of a resolved TableGen program, in definition order."""

    field_names = ("classes", "defs", "files")
    classes: dict[str, Record]
    defs: dict[str, Record]
    files: tuple[str, ...]  # every file read, main file first (for caching)

    def __init__(self, classes: dict[str, Record] | None = None,
                 defs: dict[str, Record] | None = None, files: tuple[str, ...] = ()) -> None:
        self.classes = {} if classes is None else classes
        self.defs = {} if defs is None else defs
        self.files = files

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
