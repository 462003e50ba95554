"""Element types of expression nodes: what each node computes in (shared by the renderers).

The rules live in the dialect (:mod:`tdflow.dialect.formula.types`), next to the expression IR,
because an op's dtype admission is derived from its formula when the dialect loads; they are
re-exported here unchanged.

>>> from tdflow.lowering.elementwise import Input
>>> t = infer_dtypes(Input(0) * 2 > Input(1), ["f16", "i32"])
>>> t[Input(0) * 2], t[Input(0) * 2 > Input(1)]
('f32', 'i1')
"""

from __future__ import annotations

from tdflow.dialect.formula.types import (  # noqa: F401 - re-exported
    _FLOAT_RANK,
    _INT_RANK,
    compute_dtype,
    default_out_dtype,
    infer_dtypes,
    operand_dtype,
    promote,
)

__all__ = ["compute_dtype", "default_out_dtype", "infer_dtypes", "operand_dtype", "promote"]
