"""Resolvers: what a variable name resolves to while values are resolved (llvm-tblgen's
``MapResolver``, ``RecordResolver``, ``ShadowResolver`` and ``TrackUnresolvedResolver``).

>>> r = Resolver(); r.set("x", 1); r.resolve("x")
1
"""

from __future__ import annotations


def _unset():
    from .values import UNSET

    return UNSET


class Resolver:
    """Maps variable names to values (llvm's ``MapResolver``)."""

    __slots__ = ("map", "done", "cur", "final", "keep_unset")

    def __init__(self, cur=None, final=False):
        self.map = {}
        self.done = set()
        self.cur = cur
        self.final = final
        self.keep_unset = False

    def set(self, name, value):
        self.map[name] = value

    def resolve(self, name):
        m = self.map
        if name not in m:
            return None
        v = m[name]
        if name not in self.done and len(m) > 1:
            del m[name]
            v = v.resolve(self)
            m[name] = v
            self.done.add(name)
        return v


class RecordResolver:
    """Resolves references to a record's own fields (llvm's ``RecordResolver``)."""

    __slots__ = ("rec", "cache", "stack", "name", "cur", "final", "keep_unset")

    def __init__(self, rec, name=None, final=False):
        self.rec = rec
        self.cur = rec
        self.cache = {}
        self.stack = []
        self.name = name
        self.final = final
        self.keep_unset = True

    def resolve(self, name):
        c = self.cache
        if name in c:
            return c[name]
        if name in self.stack:
            return None
        v = None
        rv = self.rec.values.get(name)
        if rv is not None:
            if rv.value is not _unset():
                self.stack.append(name)
                v = rv.value.resolve(self)
                self.stack.pop()
        elif self.name is not None and name == self.rec.name:
            v = self.name
        c[name] = v
        return v


class ShadowResolver:
    """Delegates to ``inner`` except for the names bound by an enclosing ``!foreach``."""

    __slots__ = ("inner", "shadow", "cur", "final", "keep_unset")

    def __init__(self, inner, shadow):
        self.inner = inner
        self.shadow = shadow
        self.cur = inner.cur
        self.final = inner.final
        self.keep_unset = inner.keep_unset

    def resolve(self, name):
        if name in self.shadow:
            return None
        return self.inner.resolve(name)


class TrackResolver:
    """Delegates to ``inner`` (if any) and notes whether anything stayed unresolved."""

    __slots__ = ("inner", "unresolved", "cur", "final", "keep_unset")

    def __init__(self, inner=None):
        self.inner = inner
        self.unresolved = False
        self.cur = inner.cur if inner else None
        self.final = inner.final if inner else False
        self.keep_unset = inner.keep_unset if inner else False

    def resolve(self, name):
        v = None
        if self.inner is not None:
            v = self.inner.resolve(name)
            if v is not None and v.refs:
                self.unresolved = True
        if v is None:
            self.unresolved = True
        return v
