"""tdflow.dialect.patterns: DRR rewrite rules (``Pat``/``Pattern`` records) as data.

>>> from tdflow.dialect.patterns import Bind
>>> Bind("x", "any").kind
'any'
"""

from __future__ import annotations

from .model import Bind, Constraint, OpNode, Pattern

__all__ = ["Bind", "Constraint", "OpNode", "Pattern"]
