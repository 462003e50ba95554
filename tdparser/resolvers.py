"""Resolvers: what a variable name resolves to while values are resolved (llvm-tblgen's
``MapResolver``, ``RecordResolver``, ``ShadowResolver`` and ``TrackUnresolvedResolver``).

>>> r = Resolver(); r.set("x", 1); r.resolve("x")
1
"""

from __future__ import annotations

from .init import UNSET

# Resolving a value is memoized per resolver by the identity of the (composite) value: values
# share sub-values (a `!foldl` accumulator appears in each step's result several times), and
# resolving each occurrence again is exponential -- AMDGPU's `MIMG_Sampler_AddrSizes` folds
# make trees of 3^13 nodes that way. A resolver's answers stay the same while it is used, except
# while it resolves a name for itself (that name is hidden then, against cycles), so those inner
# resolutions get a memo of their own. ``tmemo`` is the memo of the TrackResolvers over it. ``memo`` maps id(value) to (value, result),
# the value kept so that its id cannot be reused by another object.


class Resolver:
    """Maps variable names to values (llvm's ``MapResolver``)."""

    __slots__ = ("map", "done", "cur", "final", "keep_unset", "memo", "tmemo")
    tracks = False

    def __init__(self, cur=None, final=False):
        self.map = {}
        self.done = set()
        self.cur = cur
        self.final = final
        self.keep_unset = False
        self.memo = {}
        self.tmemo = {}

    def set(self, name, value):
        self.map[name] = value
        if self.memo or self.tmemo:
            self.memo, self.tmemo = {}, {}

    def resolve(self, name):
        m = self.map
        if name not in m:
            return None
        v = m[name]
        if name not in self.done and len(m) > 1:
            del m[name]
            memos = self.memo, self.tmemo
            self.memo, self.tmemo = {}, {}
            try:
                v = v.resolve(self)
            finally:
                self.memo, self.tmemo = memos
            m[name] = v
            self.done.add(name)
        return v


class RecordResolver:
    """Resolves references to a record's own fields (llvm's ``RecordResolver``).

    ``whole`` holds the fields whose cached value is what resolving the field itself with
    this resolver gives: looked up from no other field's resolution (nothing but the field
    itself hidden then) and never mentioning itself on the way (``blocked``: the names a
    lookup found hidden). :meth:`.rec.Rec.resolve` takes those from the cache instead of
    resolving them a second time (llvm-tblgen resolves them twice; X86's ``TSFlags`` looks
    up ~15 fields of each of its ~20k instructions, each then resolved again by itself).
    Every name its resolution looks up is cached by then, with the value the second
    resolution would find, so the two are the same walk with the same answer.

    >>> from .rec import Rec, RecordVal
    >>> from . import types as T
    >>> from .values import VarInit
    >>> rec = Rec("R", None, [])
    >>> rec.add_value(RecordVal("a", T.INT, VarInit("b", T.INT)))
    >>> rec.add_value(RecordVal("b", T.INT, VarInit("b", T.INT)))
    >>> r = RecordResolver(rec)
    >>> str(r.resolve("a")), sorted(r.whole), sorted(r.blocked)
    ('b', ['a'], ['b'])
    """

    __slots__ = ("rec", "cache", "stack", "name", "cur", "final", "keep_unset", "memo", "tmemo",
                 "whole", "blocked")
    tracks = False

    def __init__(self, rec, name=None, final=False):
        self.rec = rec
        self.cur = rec
        self.cache = {}
        self.stack = []
        self.name = name
        self.final = final
        self.keep_unset = True
        self.memo = {}
        self.tmemo = {}
        self.whole = set()
        self.blocked = set()

    def resolve(self, name):
        c = self.cache
        if name in c:
            return c[name]
        stack = self.stack
        if name in stack:
            self.blocked.add(name)
            return None
        v = None
        rv = self.rec.values.get(name)
        if rv is not None:
            if rv.value is not UNSET:
                top = not stack
                stack.append(name)
                memos = self.memo, self.tmemo
                self.memo, self.tmemo = {}, {}
                try:
                    v = rv.value.resolve(self)
                finally:
                    self.memo, self.tmemo = memos
                    stack.pop()
                if top and name not in self.blocked:
                    self.whole.add(name)
        elif self.name is not None and name == self.rec.name:
            v = self.name
        c[name] = v
        return v


class ShadowResolver:
    """Delegates to ``inner`` except for the names bound by an enclosing ``!foreach``."""

    __slots__ = ("inner", "shadow", "cur", "final", "keep_unset", "memo", "tmemo")
    tracks = False

    def __init__(self, inner, shadow):
        self.inner = inner
        self.shadow = shadow
        self.cur = inner.cur
        self.final = inner.final
        self.keep_unset = inner.keep_unset
        self.memo = {}
        self.tmemo = {}

    def resolve(self, name):
        if name in self.shadow:
            return None
        return self.inner.resolve(name)


class TrackResolver:
    """Delegates to ``inner`` (if any) and notes whether anything stayed unresolved."""

    __slots__ = ("inner", "unresolved", "cur", "final", "keep_unset", "memo")
    tracks = True

    def __init__(self, inner=None):
        self.inner = inner
        self.unresolved = False
        self.cur = inner.cur if inner else None
        self.final = inner.final if inner else False
        self.keep_unset = inner.keep_unset if inner else False
        # Trackers over the same resolver share one memo whose entries also say whether a
        # lookup stayed unresolved under them, so that a hit sets ``unresolved`` as the walk
        # it replaces would have (trackers nested in trackers see the same lookups).
        base = inner
        while base is not None and base.tracks:
            base = base.inner
        self.memo = base.tmemo if base is not None else {}

    def resolve(self, name):
        v = None
        if self.inner is not None:
            v = self.inner.resolve(name)
            if v is not None and v.refs:
                self.unresolved = True
        if v is None:
            self.unresolved = True
        return v


def memoized(resolve):
    """Wrap a composite value's ``resolve(self, r)`` in ``r``'s memo (see the module notes).

    >>> class V:
    ...     calls = 0
    ...     refs = True  # holds references (only such values are memoized)
    ...     @memoized
    ...     def resolve(self, r):
    ...         V.calls += 1
    ...         return 42
    >>> v, r = V(), Resolver(); v.resolve(r), v.resolve(r), V.calls
    (42, 42, 1)
    """
    def wrapper(self, r):
        if not self.refs:
            return resolve(self, r)
        m = r.memo
        hit = m.get(id(self))
        if r.tracks:
            if hit is not None and hit[0] is self:
                if hit[2]:
                    t = r
                    while t is not None and t.tracks:
                        t.unresolved = True
                        t = t.inner
                return hit[1]
            before = r.unresolved
            r.unresolved = False
            v = resolve(self, r)
            flag = r.unresolved
            r.unresolved = before or flag
            m[id(self)] = (self, v, flag)
            return v
        if hit is not None and hit[0] is self:
            return hit[1]
        v = resolve(self, r)
        m[id(self)] = (self, v)
        return v

    wrapper.__name__ = resolve.__name__
    wrapper.__doc__ = resolve.__doc__
    return wrapper
