"""SBP signatures of a formula op, derived from its formula (no ``get_sbp`` hook needed).

An elementwise op computes each output element from the operand elements at the same
(broadcast) position, so:

* every output axis can be split: each operand is split along its own dim for that axis,
  or broadcast (``B``) where it is stretched (a dim of 1 against a larger one);
* partial sums (``P``) pass through where the formula is linear: ``P`` for every operand when
  the result is homogeneous-linear in all of them together (``x + y``, ``x - y``, ``-x``),
  else ``P`` for operand 0 with the others broadcast when it is linear in operand 0 alone
  (``x * y``, ``x / y``, ``in * c``); affine formulas (``x + 1``) are not linear.

>>> from tdflow.dialect import standard_dialect
>>> from tdflow.dialect.types import TensorType as T
>>> op = standard_dialect().lookup("tdflow.broadcast_mul")
>>> [s.inputs for s in formula_sbp_signatures(op, [T((4, 8), "f32"), T((8,), "f32")])]
[(('x_0', 'S(0)'), ('y_0', 'B')), (('x_0', 'S(1)'), ('y_0', 'S(0)')), (('x_0', 'P'), ('y_0', 'B'))]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .formula.expr import Binary, Cast, Const, Expr, Input, Select, Unary
from .hooks.context import SbpSignature
from .opdef import OpDef
from .types import TensorType

# Degrees of an expression in the chosen inputs: 0 (does not depend on them), 1 (homogeneous
# linear in them) or None (anything else).
_LINEAR_UNARY = frozenset({"neg"})


def formula_sbp_signatures(op: OpDef, inputs: Sequence[TensorType],
                           attrs: dict[str, Any] | None = None) -> list[SbpSignature]:
    """The SBP signatures of formula op ``op`` on operands of types ``inputs`` (one per
    operand, in order); ``[]`` when a shape is unranked (broadcasting everything, always valid,
    is implied). ``attrs`` is accepted for the ``get_sbp`` hook's signature; the rule does not
    depend on attribute values (an attribute is a constant of the formula).
    """
    checked = op.formula
    shapes = [t.shape for t in inputs]
    if checked is None or not shapes or any(s is None for s in shapes):
        return []
    names = [o.name for o in op.operands]
    outs = [f"{r}_0" for r in checked.results]
    rank = max(len(s) for s in shapes)
    out_dims = _broadcast_dims(shapes, rank)
    sigs = []
    for axis in range(rank):
        ins = {}
        for name, s in zip(names, shapes):
            own = axis - (rank - len(s))
            stretched = own < 0 or (s[own] == 1 and out_dims[axis] != 1)
            ins[f"{name}_0"] = "B" if stretched else f"S({own})"
        sigs.append(SbpSignature.make(ins, {o: f"S({axis})" for o in outs}))
    every = frozenset(range(len(names)))
    if all(_degree(e, every) == 1 for e in checked.exprs):
        sigs.append(SbpSignature.make({f"{n}_0": "P" for n in names}, {o: "P" for o in outs}))
    elif names and all(_degree(e, frozenset({0})) == 1 for e in checked.exprs):
        ins = {f"{n}_0": ("P" if i == 0 else "B") for i, n in enumerate(names)}
        sigs.append(SbpSignature.make(ins, {o: "P" for o in outs}))
    return sigs


def _broadcast_dims(shapes: Sequence[tuple], rank: int) -> list:
    """Each output axis's dim (``None`` unknown): the largest known non-1 dim, else 1/None."""
    dims = []
    for axis in range(rank):
        here = [s[axis - (rank - len(s))] for s in shapes if axis - (rank - len(s)) >= 0]
        known = [d for d in here if d is not None and d != 1]
        dims.append(known[0] if known else (None if None in here else 1))
    return dims


def _degree(e: Expr, chosen: frozenset[int]) -> int | None:
    """0, 1 or None: ``e``'s degree in the inputs ``chosen`` (see the module docstring).

    >>> from tdflow.dialect.formula.expr import Input
    >>> x, y = Input(0), Input(1)
    >>> _degree(x * y, frozenset({0})), _degree(x * y, frozenset({0, 1})), _degree(x + 1.0, frozenset({0}))
    (1, None, None)
    """
    if isinstance(e, Input):
        return 1 if e.index in chosen else 0
    if isinstance(e, Const) or not e.children():
        return 0
    if isinstance(e, Unary):
        d = _degree(e.x, chosen)
        return d if d == 0 or e.op in _LINEAR_UNARY else None
    if isinstance(e, Cast):
        return _degree(e.x, chosen) and None  # 0 stays 0; a cast of a linear value is not linear
    if isinstance(e, Select):
        c, a, b = (_degree(x, chosen) for x in (e.cond, e.a, e.b))
        return a if c == 0 and a == b else None
    if isinstance(e, Binary):
        a, b = _degree(e.a, chosen), _degree(e.b, chosen)
        if a is None or b is None:
            return None
        if e.op in ("add", "sub"):
            return a if a == b else None
        if e.op == "mul":
            return a + b if a + b <= 1 else None
        if e.op == "div":
            return a if b == 0 else None
        return 0 if a == b == 0 else None
    return None
