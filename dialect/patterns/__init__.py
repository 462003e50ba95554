"""tdflow.dialect.patterns: DRR rewrite rules (``Pat<...>`` records) as data.

:mod:`~tdflow.dialect.patterns.model` holds the data (``Pattern``, ``OpNode``, ``Bind``,
``Constraint``); :func:`read_patterns` builds it from TableGen records (loaded lazily: the
model alone stays cheap to import).

>>> from tdflow.dialect.patterns import Bind
>>> Bind("x", "any").kind
'any'
"""

from __future__ import annotations

from .model import Bind, Constraint, OpNode, Pattern

__all__ = ["Bind", "Constraint", "OpNode", "Pattern", "read_patterns"]


def __getattr__(name: str):
    if name == "read_patterns":
        from .reader import read_patterns

        return read_patterns
    raise AttributeError(f"module 'tdflow.dialect.patterns' has no attribute {name!r}")
