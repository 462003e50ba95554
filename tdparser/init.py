"""The root of TableGen values (llvm-tblgen's ``Init``) and the unset value ``?``.

They sit below :mod:`.values` and :mod:`.resolvers`, which both need them (a record field
holding ``UNSET`` is skipped while it resolves).

>>> str(UNSET), UNSET.complete()
('?', False)
"""

from __future__ import annotations


class Init:
    __slots__ = ()
    refs = False
    ty = None

    def resolve(self, r):
        return self

    def convert(self, ty):
        return None

    def bit(self, i):
        return None

    def concrete(self):
        return True

    def complete(self):
        return True

    def unquoted(self):
        return str(self)

    def field_type(self, name):
        return None

    def __repr__(self):
        return f"<{type(self).__name__} {self}>"


class UnsetInit(Init):
    __slots__ = ()

    def __str__(self):
        return "?"

    def convert(self, ty):
        return self


    def bit(self, i):
        return self

    def complete(self):
        return False


UNSET = UnsetInit()
