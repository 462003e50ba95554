"""Element types from a formula: which dtypes an op's kernel admits, and its result types.

>>> from tdflow.dialect import standard_dialect
>>> from tdflow.dialect.formula.check import check_formula
>>> from tdflow.dialect.formula.parse import parse_formula
>>> def admitted(name, text):
...     op = standard_dialect().lookup(name)
...     return sorted(formula_dtypes(check_formula(parse_formula(text, file="-", line=1, col=1), op)))
>>> admitted("tdflow.relu", "max(x, 0)")
['bf16', 'f16', 'f32', 'f64', 'i16', 'i32', 'i64', 'i8', 'ui16', 'ui32', 'ui64', 'ui8']
>>> admitted("tdflow.relu", "x * 0.5"), "i1" in admitted("tdflow.broadcast_maximum", "max(x, y)")
(['bf16', 'f16', 'f32', 'f64'], True)

The rules (the same sets ``lowering/elementwise_ops.py`` gave by hand):

* Every float type is admitted.
* Integer types are admitted unless, with integer inputs, a value read from an operand would
  go through a float function (``exp``, ``sqrt``, ``sigmoid``...), or meet a float-spelled
  literal (``1.0``, ``1e-3``) or an ``f32``/``f64`` attribute (a weak scalar adopts the
  operand's type, so ``x * 0.5`` would compute ``x * 0`` on integers). A ``?:`` whose
  condition reads no operand is decided by attributes when the kernel is built, so it admits
  integers when either branch does (``scalar_add``'s ``has_int_operand ? int_operand :
  float_operand``); one whose condition reads an operand needs both branches.
* ``i1`` is admitted only for formulas that only order and select values: operands combined
  by ``max``, ``min``, comparisons, ``&&``, ``||``, ``xor``, ``!``, the bitwise
  ``and``/``or``/``xor``/``not`` and ``?:``, with no literals or attributes.
* A formula with a bit operation (``bitwise_and``, ``left_shift``...) admits no float type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tdflow.dialect.element_types import FLOAT_DTYPES, INT_DTYPES

from tdflow.core.valueclass import value_class

from .checked import CheckedFormula
from .expr import (
    BITWISE_BINARY_OPS,
    COMPARE_OPS,
    FLOAT_UNARY_OPS,
    INT_ONLY_OPS,
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
    walk,
)
from .types import default_out_dtype

FLOATS = frozenset(FLOAT_DTYPES)
INTS = frozenset(INT_DTYPES)
NUMERIC = FLOATS | INTS
_FLOAT_KINDS = frozenset({"f32", "f64"})
_ORDER_BINARY = frozenset({"max", "min"}) | COMPARE_OPS | LOGICAL_BINARY_OPS
# Bit operations that are logic on i1 (shifts are not: a bool has no bits to move).
_BOOL_BITWISE = (BITWISE_BINARY_OPS - {"left_shift", "right_shift"}) | {"bitwise_not"}
_PLACEHOLDER = {"bool": False, "si32": 0, "si64": 0, "f32": 0.0, "f64": 0.0}


@value_class(frozen=True, slots=True)
class _Facts:
    """What a subtree is when every input is an integer.

    ``data``: it reads an operand. ``float_data`` (data only): its value is float-typed anyway
    (after a float function or a cast). ``int_possible`` (no data only): it can be an integer
    or bool constant. ``ok``: it computes correctly on integer inputs.
    """

    data: bool
    float_data: bool
    int_possible: bool
    ok: bool


def _mixed_ok(a: _Facts, b: _Facts) -> bool:
    """Whether combining ``a`` and ``b`` (either may be a constant) is right on integers."""
    if a.data and not b.data:
        return a.float_data or b.int_possible
    if b.data and not a.data:
        return b.float_data or a.int_possible
    return True


def _combine(a: _Facts, b: _Facts, ok: bool) -> _Facts:
    data = a.data or b.data
    float_data = (a.data and a.float_data) or (b.data and b.float_data)
    return _Facts(data, float_data, a.int_possible and b.int_possible,
                  ok and a.ok and b.ok and _mixed_ok(a, b))


def _facts(expr: Expr, attr_kinds: Mapping[str, str]) -> _Facts:
    memo: dict[Expr, _Facts] = {}

    def go(n: Expr) -> _Facts:
        hit = memo.get(n)
        if hit is not None:
            return hit
        if isinstance(n, Input):
            f = _Facts(True, False, False, True)
        elif isinstance(n, Const):
            f = _Facts(False, False, not isinstance(n.value, float), True)
        elif isinstance(n, Attr):
            f = _Facts(False, False, attr_kinds.get(n.name) not in _FLOAT_KINDS, True)
        elif isinstance(n, Unary):
            x = go(n.x)
            if n.op in FLOAT_UNARY_OPS:
                f = _Facts(x.data, True, False, x.ok and (not x.data or x.float_data))
            elif n.op in PREDICATE_UNARY_OPS:  # a float test: integers never reach it
                f = _Facts(x.data, False, True, x.ok and (not x.data or x.float_data))
            elif n.op == "not":
                f = _Facts(x.data, False, True, x.ok)
            else:
                f = x
        elif isinstance(n, Binary):
            a, b = go(n.a), go(n.b)
            f = _combine(a, b, True)
            if n.op in COMPARE_OPS or n.op in LOGICAL_BINARY_OPS:
                ok = a.ok and b.ok and (n.op in LOGICAL_BINARY_OPS or _mixed_ok(a, b))
                f = _Facts(f.data, False, True, ok)
        elif isinstance(n, Select):
            c, a, b = go(n.cond), go(n.a), go(n.b)
            if c.data:  # decided per element: both branches run on the data
                f = _combine(a, b, c.ok)
            elif a.ok != b.ok:  # decided by attributes: the branch that works can be chosen
                f = a if a.ok else b
                f = _Facts(f.data, f.float_data, f.int_possible, f.ok and c.ok)
            else:
                f = _Facts(a.data or b.data, (a.data and a.float_data) or (b.data and b.float_data),
                           a.int_possible or b.int_possible, a.ok and c.ok)
        elif isinstance(n, Cast):
            x = go(n.x)
            is_float = n.dtype in FLOATS
            f = _Facts(x.data, is_float, not is_float, x.ok)
        else:  # pragma: no cover - closed set of node classes
            raise TypeError(f"unknown expression node {n!r}")
        memo[n] = f
        return f

    return go(expr)


def _order_only(expr: Expr) -> bool:
    for n in walk(expr):
        if isinstance(n, Input | Select):
            continue
        if isinstance(n, Binary) and n.op in _ORDER_BINARY:
            continue
        if isinstance(n, Unary | Binary) and n.op in _BOOL_BITWISE | {"not"}:
            continue
        return False
    return True


def _int_only(expr: Expr) -> bool:
    """Whether ``expr`` uses a bit operation, which has no meaning on floats."""
    return any(isinstance(n, Unary | Binary) and n.op in INT_ONLY_OPS for n in walk(expr))


def formula_dtypes(checked: CheckedFormula) -> frozenset[str]:
    """The element types the op's kernel admits (for its operands), from its formula.

    >>> from tdflow.dialect import standard_dialect
    >>> from tdflow.dialect.formula.check import check_formula
    >>> from tdflow.dialect.formula.parse import parse_formula
    >>> op = standard_dialect().lookup("tdflow.sigmoid")
    >>> sorted(formula_dtypes(check_formula(parse_formula("sigmoid(x)", file="-", line=1, col=1), op)))
    ['bf16', 'f16', 'f32', 'f64']
    """
    return _memo(_ADMITTED, (id(checked),), checked, lambda: _admitted(checked))


def _admitted(checked: CheckedFormula) -> frozenset[str]:
    ints_ok = all(_facts(e, checked.attr_kinds).ok for e in checked.exprs)
    out = set() if any(_int_only(e) for e in checked.exprs) else set(FLOATS)
    if ints_ok:
        out |= INTS
        if all(_order_only(e) for e in checked.exprs):
            out.add("i1")
    return frozenset(out)


def result_dtypes(checked: CheckedFormula, in_dtypes: Sequence[str],
                  attrs: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """Element type of each result for operands of ``in_dtypes``: ``i1`` for a comparison or
    logic, the cast's type for a cast, else the operands' promoted type (kept as operand 0's
    when it computes in it, so ``f16`` gives ``f16``) -- the rule the numpy and CUDA renderers
    use, so inference and kernels agree. Attributes without a value or default count as 0.

    >>> from tdflow.dialect import standard_dialect
    >>> from tdflow.dialect.formula.check import check_formula
    >>> from tdflow.dialect.formula.parse import parse_formula
    >>> op = standard_dialect().lookup("tdflow.broadcast_add")
    >>> c = check_formula(parse_formula("x + y", file="-", line=1, col=1), op)
    >>> result_dtypes(c, ["f16", "f16"]), result_dtypes(c, ["i32", "i64"])
    (('f16',), ('i64',))
    """
    values = checked.filled(attrs)
    for name, kind in checked.attr_kinds.items():
        values.setdefault(name, _PLACEHOLDER[kind])
    # A float attribute's value never changes a type (constants of float kind stay float when
    # folded) unless it decides a select: key the memo on the others only, so a program whose
    # ops differ only in constants (every leaky_relu its own alpha) infers each type once.
    typed = _memo(_TYPE_DECIDING, (id(checked),), checked, lambda: _type_deciding(checked))
    key = (id(checked), tuple(in_dtypes),
           tuple((k, v) for k, v in sorted(values.items(), key=lambda kv: kv[0]) if k in typed))
    return _memo(_RESULT_DTYPES, key, checked, lambda: tuple(
        default_out_dtype(checked.bind(values, i), in_dtypes) for i in range(len(checked.exprs))))


# Per-formula memos, keyed by the checked formula's id (kept alive in the entry, so the id stays
# its own) and what else the answer depends on; each cleared when it reaches _MEMO_LIMIT.
_MEMO_LIMIT = 4096
_ADMITTED: dict[tuple, tuple[CheckedFormula, Any]] = {}
_TYPE_DECIDING: dict[tuple, tuple[CheckedFormula, Any]] = {}
_RESULT_DTYPES: dict[tuple, tuple[CheckedFormula, Any]] = {}


def _memo(table: dict[tuple, tuple[CheckedFormula, Any]], key: tuple, checked: CheckedFormula,
          compute: Callable[[], Any]) -> Any:
    try:
        hit = table.get(key)
    except TypeError:  # an unhashable attribute value (a list): compute without the memo
        return compute()
    if hit is not None and hit[0] is checked:
        return hit[1]
    value = compute()
    if len(table) >= _MEMO_LIMIT:
        table.clear()
    table[key] = (checked, value)
    return value


def type_deciding_attrs(checked: CheckedFormula) -> tuple[str, ...]:
    """The attributes whose values can change a result type, sorted (see :func:`result_dtypes`):
    memos of inferred types key on these, not on every value.

    >>> from tdflow.dialect import standard_dialect
    >>> type_deciding_attrs(standard_dialect().lookup("tdflow.leaky_relu").formula)
    ()
    """
    return _memo(_DECIDING_SORTED, (id(checked),), checked,
                 lambda: tuple(sorted(_type_deciding(checked))))


_DECIDING_SORTED: dict[tuple, tuple[CheckedFormula, Any]] = {}


def _type_deciding(checked: CheckedFormula) -> frozenset[str]:
    """The attributes whose values can change a result type: every non-float one, and a float
    one read inside a select's condition (it picks a branch)."""
    in_conditions = {n.name for e in checked.exprs for sel in walk(e) if isinstance(sel, Select)
                     for n in walk(sel.cond) if isinstance(n, Attr)}
    return frozenset(name for name, kind in checked.attr_kinds.items()
                     if kind not in _FLOAT_KINDS or name in in_conditions)
