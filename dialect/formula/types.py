"""Element types of expression nodes: what each node computes in (shared by the renderers
and by the dialect's dtype rules for formulas).

>>> from tdflow.dialect.formula.expr import Input
>>> t = infer_dtypes(Input(0) * 2 > Input(1), ["f16", "i32"])
>>> t[Input(0) * 2], t[Input(0) * 2 > Input(1)]
('f32', 'i1')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tdflow.dialect.element_types import INT_DTYPES, promote_int
from tdflow.dialect.formula.expr import (
    COMPARE_OPS,
    FLOAT_UNARY_OPS,
    LOGICAL_BINARY_OPS,
    PREDICATE_UNARY_OPS,
    Attr,
    Binary,
    Cast,
    Const,
    Expr,
    Input,
    Select,
    Unary,
)

_FLOAT_RANK = {"f16": 0, "bf16": 1, "f32": 2, "f64": 3}
# Integers combine by numpy's rule (element_types.promote_int); the rank orders the kinds for
# messages and callers that sort types.
_INT_RANK = {"i1": 0, **{n: i + 1 for i, n in enumerate(INT_DTYPES)}}


def compute_dtype(dtype: str) -> str:
    """The type arithmetic happens in: half types compute in ``f32`` (as CUDA code does)."""
    return "f32" if dtype in ("f16", "bf16") else dtype


def promote(a: str, b: str) -> str:
    """C-like promotion of two compute types: float beats int, wider beats narrower.

    >>> promote("i32", "f32"), promote("i8", "i64"), promote("f16", "f64"), promote("ui8", "i8")
    ('f32', 'i64', 'f64', 'i16')
    """
    fa, fb = a in _FLOAT_RANK, b in _FLOAT_RANK
    if fa and fb:
        return compute_dtype(a if _FLOAT_RANK[a] >= _FLOAT_RANK[b] else b)
    if fa or fb:
        return compute_dtype(a if fa else b)
    return promote_int(a, b)


def infer_dtypes(expr: Expr, in_dtypes: Sequence[str], context: str = "f32") -> dict[Expr, str]:
    """Element type of every node (the type its value is computed in).

    A constant is weak: it takes the type of the operand it meets; a subtree of constants
    only takes ``context`` (the output's compute type). Comparisons and logic give ``i1``;
    ``exp``/``log``/... of an integer compute in ``f32``; ``Cast`` gives its target type.
    """
    types: dict[Expr, str] = {}
    context = compute_dtype(context)

    def go(n: Expr) -> str | None:  # None = weak constant
        if n in types:
            return types[n]
        t: str | None
        if isinstance(n, Input):
            if n.index >= len(in_dtypes):
                raise IndexError(f"expression reads input {n.index} but only "
                                 f"{len(in_dtypes)} input dtypes were given")
            t = in_dtypes[n.index]
        elif isinstance(n, Const):
            return None
        elif isinstance(n, Attr):
            raise ValueError(f"attribute {n.name!r} is unbound; call bind() first")
        elif isinstance(n, Unary):
            x = go(n.x) or context
            if n.op == "not" or n.op in PREDICATE_UNARY_OPS:
                t = "i1"
            elif n.op in FLOAT_UNARY_OPS:
                t = compute_dtype(x) if x in _FLOAT_RANK else "f32"
            else:
                t = compute_dtype(x)
        elif isinstance(n, Binary):
            a, b = go(n.a), go(n.b)
            operand = promote(a or b or context, b or a or context)
            t = "i1" if n.op in COMPARE_OPS or n.op in LOGICAL_BINARY_OPS else operand
        elif isinstance(n, Select):
            go(n.cond)
            a, b = go(n.a), go(n.b)
            t = promote(a or b or context, b or a or context)
        elif isinstance(n, Cast):
            go(n.x)
            t = n.dtype
        else:  # pragma: no cover - closed set of node classes
            raise TypeError(f"unknown expression node {n!r}")
        types[n] = t
        return t

    go(expr)
    return types


def default_out_dtype(expr: Expr, in_dtypes: Sequence[str]) -> str:
    """The result type when none is asked for: the first input's type whose computation type is
    the one ``expr`` computes in (``f16`` inputs compute in ``f32`` but give ``f16``; a bool
    condition before the values, as in ``where``, is passed over), else the type ``expr``
    computes in (``i1`` for predicates). The numpy and CUDA renderers both use it, so they agree.

    >>> from tdflow.dialect.formula.expr import Input, where
    >>> default_out_dtype(Input(0) * 2, ["f16"]), default_out_dtype(Input(0) > 0, ["f32"])
    ('f16', 'i1')
    >>> default_out_dtype(where(Input(0), Input(1), Input(2)), ["i1", "f16", "f16"])
    'f16'
    """
    natural = infer_dtypes(expr, in_dtypes).get(expr, "f32")
    for dtype in in_dtypes:
        if dtype is not None and compute_dtype(dtype) == natural:
            return dtype
    return natural


def operand_dtype(node: Expr, types: Mapping[Expr, str], context: str = "f32") -> str:
    """Type in which a node's operands are combined; its constant operands convert to it."""
    if isinstance(node, Binary):
        if node.op in LOGICAL_BINARY_OPS:
            return "i1"
        a, b = types.get(node.a), types.get(node.b)
        c = compute_dtype(context)
        return promote(a or b or c, b or a or c)
    if isinstance(node, Unary):
        return types.get(node.x, compute_dtype(context))
    return types[node]


