"""Name scopes of the evaluator and the error it raises at a syntax node's location.

Shared by the value builder (:mod:`.expr`), the bang operators (:mod:`.bang`), multiclasses and
prototypes, so it sits below all of them.

>>> s = Scope(); s.vars["x"] = 1; Scope(s).parent.vars
{'x': 1}
"""

from __future__ import annotations

from . import ast as A
from .errors import TdError


def err(msg, loc) -> TdError:
    if loc is None:
        return TdError(msg)
    return TdError(msg, loc.file, loc.line, loc.column, loc.stack)


class Scope:
    """One level of name lookup: local variables, or a record (its fields and arguments)."""

    __slots__ = ("vars", "rec", "parent", "uncast")

    def __init__(self, parent=None, rec=None):
        self.vars = {}
        self.rec = rec
        self.parent = parent
        # Multiclass arguments whose value was substituted as given, not cast to the declared
        # type (see MulticlassStatements.mc_args): name -> declared type.
        self.uncast = None


def declared_uncast(node, scope, ty) -> bool:
    """Whether ``node`` is a bare reference to a multiclass argument holding an uncast value
    whose declared type is ``ty``.

    llvm-tblgen type-checks a template argument value when it parses it: a reference to a
    ``bit`` argument passed for a ``bit`` needs no cast, so whatever is substituted later
    stays as it is (an ``int`` 1 from a parent multiclass reference stays ``int``). Such a
    ``C<..., isW>`` is then a different record from ``C<..., 1>`` (a ``bit``).

        >>> from .types import BIT
        >>> s = Scope(); s.vars["w"] = None; s.uncast = {"w": BIT}
        >>> declared_uncast(A.Ident("w", None), Scope(s), BIT)
        True
    """
    if type(node) is not A.Ident:
        return False
    name = node.name
    while scope is not None:
        if name in scope.vars:
            decl = scope.uncast.get(name) if scope.uncast else None
            return decl is not None and (decl is ty or str(decl) == str(ty))
        if scope.rec is not None and name in scope.rec.values:
            return False
        scope = scope.parent
    return False
