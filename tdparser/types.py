"""TableGen types (llvm-tblgen's ``RecTy``): conversion and unification rules.

>>> str(list_of(BITS(4)))
'list<bits<4>>'
>>> INT.convertible_to(BIT), BIT.convertible_to(INT)
(True, True)
"""

from __future__ import annotations


class RecTy:
    __slots__ = ("kind", "_list")

    def __init__(self, kind):
        self.kind = kind
        self._list = None

    def __str__(self):
        return self.kind

    __repr__ = __str__

    def list(self):
        if self._list is None:
            self._list = ListTy(self)
        return self._list

    def convertible_to(self, other) -> bool:
        k = other.kind
        if self is other:
            return True
        sk = self.kind
        if sk == "bit":
            return k == "int" or k == "bit" or (k == "bits" and other.size == 1)
        if sk == "int":
            return k in ("bit", "bits", "int")
        return sk == k and sk in ("string", "dag")

    def is_a(self, other) -> bool:
        return self is other


class BitsTy(RecTy):
    __slots__ = ("size",)

    def __init__(self, size):
        super().__init__("bits")
        self.size = size

    def __str__(self):
        return f"bits<{self.size}>"

    __repr__ = __str__

    def convertible_to(self, other):
        k = other.kind
        if k == "bits":
            return other.size == self.size
        return (k == "bit" and self.size == 1) or k == "int"


class ListTy(RecTy):
    __slots__ = ("elem",)

    def __init__(self, elem):
        super().__init__("list")
        self.elem = elem

    def __str__(self):
        return f"list<{self.elem}>"

    __repr__ = __str__

    def convertible_to(self, other):
        # List types are interned, so identity answers most checks at once; without it a
        # list nested n deep costs O(n) per check and O(n**2) to type a nested literal.
        return self is other or (other.kind == "list" and self.elem.convertible_to(other.elem))

    def is_a(self, other):
        return self is other or (other.kind == "list" and self.elem.is_a(other.elem))


class RecordTy(RecTy):
    """The type of a record deriving from every class in ``classes`` (sorted, minimal)."""

    __slots__ = ("classes",)

    def __init__(self, classes):
        super().__init__("record")
        self.classes = classes

    def __str__(self):
        if len(self.classes) == 1:
            return self.classes[0].name
        return "{" + ", ".join(c.name for c in self.classes) + "}"

    __repr__ = __str__

    def is_subclass_of(self, cls) -> bool:
        return any(c is cls or c.is_subclass_of(cls) for c in self.classes)

    def convertible_to(self, other):
        if self is other:
            return True
        if other.kind != "record":
            return False
        return all(self.is_subclass_of(c) for c in other.classes)

    is_a = convertible_to


BIT = RecTy("bit")
INT = RecTy("int")
STRING = RecTy("string")
DAG = RecTy("dag")
_BITS: dict[int, BitsTy] = {}
# The record type of no class (``!cast`` to an unknown record type): it holds no record.
_NO_CLASS_TY = RecordTy(())


def BITS(n: int) -> BitsTy:  # noqa: N802 - reads like the TableGen spelling
    t = _BITS.get(n)
    if t is None:
        t = _BITS[n] = BitsTy(n)
    return t


def list_of(t: RecTy) -> ListTy:
    return t.list()


def record_ty(classes) -> RecordTy:
    """The uniqued record type of ``classes`` (as LLVM: sorted by name, redundant ones removed).

    Types are uniqued per evaluator (the classes' ``keeper.record_tys``), keyed by the
    classes' ids, which stay theirs while that evaluator lives: a module-wide table would keep
    every evaluator, and all its records, alive for as long as the process runs.
    """
    if not classes:
        return _NO_CLASS_TY
    table = classes[0].keeper.record_tys
    if len(classes) == 1:
        t = table.get((id(classes[0]),))
        if t is not None:
            return t
    cs = []
    for c in classes:
        if c not in cs:
            cs.append(c)
    cs = [c for c in cs if not any(o is not c and o.is_subclass_of(c) for o in cs)]
    cs.sort(key=lambda c: c.name)
    key = tuple(id(c) for c in cs)
    t = table.get(key)
    if t is None:
        t = table[key] = RecordTy(tuple(cs))
    return t


def resolve_types(t1, t2):
    """The common type of ``t1`` and ``t2`` (llvm's ``resolveTypes``), or None."""
    if t1 is t2:
        return t1
    if t1.kind == "record" and t2.kind == "record":
        common = []
        stack = list(t1.classes)
        while stack:
            r = stack.pop()
            if t2.is_subclass_of(r):
                common.append(r)
            else:
                stack.extend(r.direct_superclasses())
        return record_ty(common)
    if t1.convertible_to(t2):
        return t2
    if t2.convertible_to(t1):
        return t1
    if t1.kind == "list" and t2.kind == "list":
        e = resolve_types(t1.elem, t2.elem)
        if e is not None:
            return e.list()
    return None
