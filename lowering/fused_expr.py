"""Text form of fused elementwise expressions, as carried by ``tdflow.fused_elementwise``.

The parser lives in the dialect (:mod:`tdflow.dialect.formula.text`), because the fused op's
hooks read the expression too; it is re-exported here for lowering's passes and kernels.

>>> from tdflow.lowering.elementwise import Input, exp
>>> e = exp(Input(0)) + Input(1) * 2.0
>>> parse_expr(format_expr(e)) == e
True
>>> parse_expr("where(gt(in0, 0), in0, mul(in0, 0.25))")
where(gt(in0, 0), in0, mul(in0, 0.25))
>>> parse_expr("frob(in0)")
Traceback (most recent call last):
...
ValueError: unknown function 'frob' at offset 0 in 'frob(in0)'
"""

from __future__ import annotations

from tdflow.dialect.formula.text import format_expr, parse_expr

__all__ = ["format_expr", "parse_expr"]
