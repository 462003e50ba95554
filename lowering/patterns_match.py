"""Matching a DRR pattern's source dag against IR: bindings, constraints, ``either``.

MLIR's generated matchers are the model: operands bind to IR values (a nested op dag means the
operand's defining op must match, recursively), attributes bind as the op's typed Python values
(an absent ``DefaultValuedAttr`` as its default), a name bound twice means the two must be
equal, ``either`` tries both operand orders, and the pattern's constraint list is checked last.
C++ predicates are served by Python natives (:mod:`tdflow.dialect.patterns.native`).

>>> from tdflow.dialect import standard_dialect
>>> from tdflow.dialect.ir import parse_module
>>> from tdflow.dialect.patterns.model import Bind, OpNode, Pattern
>>> m = parse_module('''func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
...   %0 = "tdflow.negative"(%x) : (tensor<4xf32>) -> tensor<4xf32>
...   %1 = "tdflow.negative"(%0) : (tensor<4xf32>) -> tensor<4xf32>
...   return %1 : tensor<4xf32>
... }''')
>>> inner = OpNode("op", "tdflow.negative", (Bind("x", "any"),), ("x",))
>>> p = Pattern("NegNeg", "tdflow.negative", 2, OpNode("op", "tdflow.negative", (inner,), ("x",)),
...             (Bind("x", "any"),))
>>> ops = m["f"].ops
>>> match(p, ops[1], standard_dialect()).values["x"] is m["f"].args[0]
True
>>> match(p, ops[0], standard_dialect()) is None
True
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from tdflow.dialect.attr_convert import to_value
from tdflow.dialect.attr_kinds import KIND_BY_ATTR, DefaultError, parse_default
from tdflow.dialect.ir import Operation, Value
from tdflow.dialect.op_verify import operand_groups
from tdflow.dialect.patterns.model import Bind, OpNode, Pattern
from tdflow.dialect.patterns.native import load_standard_natives
from tdflow.dialect.patterns.native_registry import current_natives
from tdflow.dialect.types import FLOAT_DTYPES, TensorType

from tdflow.core.errors import TdflowError
from tdflow.core.valueclass import field, value_class

if TYPE_CHECKING:
    from collections.abc import Mapping

    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.opdef import AttrDef, OpDef

    from .ir_access import LoweringDialect

load_standard_natives()  # the standard rules' natives are always there

__all__ = ["Match", "PatternError", "match", "arg_layout", "check_type_constraint"]


class PatternError(TdflowError):
    """A pattern tdflow cannot apply (a native missing, a native that failed), located at the
    pattern's record."""

    def render(self) -> str:
        return f"error: {self}"


@value_class
class Match:
    """What a successful match bound: ``values`` by name (IR values, attribute Python values,
    tuples of values for variadic operands) and the matched ``ops``, root first."""

    values: dict[str, Any] = field(default_factory=dict)
    ops: list[Operation] = field(default_factory=list)


def where(pattern: Pattern) -> str:
    """``pattern 'P' (file:line:col)`` for messages."""
    loc = pattern.loc
    at = f" ({loc.file}:{loc.line}:{loc.col})" if loc is not None else ""
    return f"pattern '{pattern.name}'{at}"


def match(pattern: Pattern, op: Operation, dialect: Dialect | LoweringDialect) -> Match | None:
    """The bindings of ``pattern`` rooted at ``op``, or ``None`` when it does not match."""
    m = Match()
    if not _match_op(pattern.source, op, dialect.ops, m, pattern):
        return None
    for c in pattern.constraints:
        if not _check_constraint(pattern, c, m, dialect):
            return None
    return m


# -- op dags ---------------------------------------------------------------------------------------

def arg_layout(node: OpNode, opdef: OpDef) -> list[tuple[Any, str]]:
    """``(argument, argument name)`` pairs of an op dag, ``either`` groups flattened in place
    and ``location``/``returnType`` directives left out.

    The names come from the reader (``arg_names``, the op's declaration order, which for an
    MLIR op may interleave operands and attributes; an ``either`` names its own slots); a dag
    whose names do not line up with its arguments falls back to the op definition's order
    (operands, then attributes).

    >>> from tdflow.dialect import standard_dialect
    >>> node = OpNode("op", "tdflow.reshape", (Bind("x", "any"), Bind("s", "any")), ("in", "shape"))
    >>> [(a.name, n) for a, n in arg_layout(node, standard_dialect().lookup("tdflow.reshape"))]
    [('x', 'in'), ('s', 'shape')]
    """
    directives = ("location", "return_type")
    names = list(node.arg_names)
    if len(names) == len(node.args):
        out: list[tuple[Any, str]] = []
        for a, nm in zip(node.args, names):
            if isinstance(a, OpNode) and a.kind in directives:
                continue  # `$location`, `$return_type`: no slot
            if isinstance(a, OpNode) and a.kind == "either":
                if len(a.arg_names) != len(a.args):
                    break
                out.extend(zip(a.args, a.arg_names))  # one slot per child, named by `either`
            else:
                out.append((a, nm))
        else:
            return out
    flat: list[Any] = []
    for a in node.args:
        if isinstance(a, OpNode) and a.kind in ("either", *directives):
            if a.kind == "either":
                flat.extend(a.args)
            continue
        flat.append(a)
    names = [nm for nm in names if not nm.startswith("$")]
    if len(names) != len(flat):
        names = [d.name for d in opdef.operands] + [d.name for d in opdef.attributes]
    return list(zip(flat, names))


class _Plan:
    """How one op dag meets one op definition, worked out once: each argument with where its
    value comes from (an operand position or group, or an attribute definition)."""

    __slots__ = ("node", "opdef", "all_single", "n_operands", "entries", "spans")

    def __init__(self, node: OpNode, opdef: OpDef) -> None:
        self.node, self.opdef = node, opdef
        self.all_single = all(d.is_single for d in opdef.operands)
        self.n_operands = len(opdef.operands)
        index = {d.name: i for i, d in enumerate(opdef.operands)}
        # (argument, is an operand, operand index or attribute name, its definition)
        self.entries: list[tuple[Any, bool, Any, Any]] = []
        for arg, name in arg_layout(node, opdef):
            i = index.get(name)
            if i is not None:
                self.entries.append((arg, True, i, opdef.operands[i]))
            else:
                self.entries.append((arg, False, name, opdef.attr(name)))
        # the positions of `either` groups among the entries
        self.spans: list[tuple[int, int]] = []
        pos = 0
        for a in node.args:
            if isinstance(a, OpNode) and a.kind in ("location", "return_type"):
                continue
            n = len(a.args) if isinstance(a, OpNode) and a.kind == "either" else 1
            if isinstance(a, OpNode) and a.kind == "either":
                self.spans.append((pos, n))
            pos += n


_PLANS: dict[int, _Plan] = {}


def _plan(node: OpNode, opdef: OpDef) -> _Plan:
    plan = _PLANS.get(id(node))
    if plan is None or plan.node is not node or plan.opdef is not opdef:
        plan = _PLANS[id(node)] = _Plan(node, opdef)
    return plan


def _match_op(node: OpNode, op: Operation | None, ops: Mapping[str, OpDef], m: Match, pattern: Pattern) -> bool:
    if op is None or op.name != node.op:
        return False
    opdef = ops.get(op.name)
    if opdef is None:
        return False
    plan = _plan(node, opdef)
    if plan.all_single:
        if len(op.operands) != plan.n_operands:
            return False
        operands: Any = op.operands
    else:
        groups = operand_groups(opdef, op)
        if groups is None:
            return False
        operands = [tuple(groups[d.name]) if not d.is_single else groups[d.name][0]
                    for d in opdef.operands]
    m.ops.append(op)
    if node.name:
        if not _bind(m, node.name, op.results[0] if len(op.results) == 1 else tuple(op.results)):
            return False
        for i, r in enumerate(op.results):
            m.values[f"{node.name}__{i}"] = r
    if not plan.spans:
        return _match_args(plan.entries, op, operands, ops, m, pattern)
    # `either` groups: try each combination of orders, restoring the bindings between tries
    for mask in range(1 << len(plan.spans)):
        trial = list(plan.entries)
        for bit, (start, n) in enumerate(plan.spans):
            if mask >> bit & 1:  # swap the group's arguments, keep where their values come from
                group = plan.entries[start:start + n]
                args = [e[0] for e in group][::-1]
                trial[start:start + n] = [(a, *e[1:]) for a, e in zip(args, group)]
        saved_values, saved_ops = dict(m.values), list(m.ops)
        if _match_args(trial, op, operands, ops, m, pattern):
            return True
        m.values, m.ops = saved_values, saved_ops
    return False


def _match_args(entries, op, operands, ops, m: Match, pattern) -> bool:
    for arg, is_operand, key, d in entries:
        if is_operand:
            if not _match_operand(arg, operands[key], ops, m, pattern):
                return False
        elif d is None or not _match_attr(arg, d, op.attributes.get(key), m, pattern):
            return False
    return True


def _match_operand(arg: Any, value: Any, ops: Mapping[str, OpDef], m: Match, pattern: Pattern) -> bool:
    if isinstance(arg, OpNode):
        if arg.kind != "op" or not isinstance(value, Value):
            return False
        return _match_op(arg, value.op, ops, m, pattern)
    if arg.kind == "type" and isinstance(value, Value):
        if not check_type_constraint(arg.constraint, arg.pred, value, pattern):
            return False
    elif arg.kind not in ("any", "type"):
        return False
    return arg.name is None or _bind(m, arg.name, value)


def _match_attr(arg: Any, adef: AttrDef, attr: Any, m: Match, pattern: Pattern) -> bool:
    if isinstance(arg, OpNode):
        return False
    if attr is None:
        value = adef.default if adef.has_default else None
    elif adef.kind == "other":
        value = attr
    else:
        try:
            value = to_value(adef.kind, attr, adef.enum)
        except (TypeError, ValueError):
            return False
    if arg.kind == "constant_attr":
        if attr is None and not adef.has_default:
            return False
        if value != constant_attr_value(arg, adef):
            return False
    elif arg.kind == "literal":
        if value != arg.value:
            return False
    elif arg.kind == "attr":
        if attr is None and not adef.has_default and not adef.optional:
            return False
        kind = KIND_BY_ATTR.get(arg.constraint or "")
        if kind is not None and attr is not None and kind != adef.kind:
            try:
                to_value(kind, attr)
            except (TypeError, ValueError):
                return False
        elif kind is None and arg.constraint in current_natives():
            if not _call_native(pattern, arg.constraint, [value]):
                return False
    elif arg.kind != "any":
        return False
    return arg.name is None or _bind(m, arg.name, value)


_CONST_BOOL = {"ConstBoolAttrTrue": True, "ConstBoolAttrFalse": False, "ConstUnitAttr": True}


def constant_attr_value(arg: Bind, adef: AttrDef) -> Any:
    """The Python value of a ``ConstantAttr`` leaf, in the kind of the attribute it meets
    (``adef``, the op's attribute definition: its ``kind`` and ``enum``).

    >>> from types import SimpleNamespace
    >>> f32 = SimpleNamespace(kind="f32", enum=None)
    >>> constant_attr_value(Bind(None, "constant_attr", "F32Attr", ("F32Attr", "0.5")), f32)
    0.5
    >>> constant_attr_value(Bind(None, "constant_attr", "ConstBoolAttrTrue"), f32)
    True
    """
    if arg.constraint in _CONST_BOOL:
        return _CONST_BOOL[arg.constraint]
    rec, text = arg.value if isinstance(arg.value, tuple) else (arg.constraint, arg.value)
    kind = adef.kind if adef.kind != "other" else KIND_BY_ATTR.get(rec or "", "str")
    try:
        return parse_default(kind, str(text), adef.enum)
    except (DefaultError, ValueError):
        return text


def _bind(m: Match, name: str, value: Any) -> bool:
    """Bind ``name``; a name bound before must hold the same value (the same IR value)."""
    old = m.values.get(name, _UNBOUND)
    if old is _UNBOUND:
        m.values[name] = value
        return True
    if isinstance(old, Value) or isinstance(value, Value):
        return old is value
    return old == value


_UNBOUND = object()


# -- constraints -----------------------------------------------------------------------------------

_INTS = ("i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64")
#: Type constraints tdflow checks itself: record name -> allowed element types (None: any).
KNOWN_TYPES: dict[str, tuple[str, ...] | None] = {
    "AnyType": None, "AnyTensor": None, "TDF_Tensor": None, "OneFlow_Tensor": None,
    "AnyRankedTensor": None, "AnyStaticShapeTensor": None, "AnyShaped": None,
    "TDF_FloatTensor": tuple(FLOAT_DTYPES), "AnyFloat": tuple(FLOAT_DTYPES),
    "TDF_IntTensor": _INTS, "AnyInteger": _INTS + ("i1",), "AnySignlessInteger": _INTS + ("i1",),
    **{f"{t.upper()}Tensor": (t,) for t in ("f16", "bf16", "f32", "f64", "i1", "i8", "i16",
                                             "i32", "i64")},
    "BoolTensor": ("i1",),
    **{t.upper(): (t,) for t in ("f16", "bf16", "f32", "f64", "i1", "i8", "i16", "i32", "i64")},
}
# MLIR's TensorOf<[...]> predicate spells the element types it allows like this.
_PRED_DTYPE = re.compile(r"\.is(F16|BF16|F32|F64)\(\)|\.is(?:Signless)?Integer\((\d+)\)")


def check_type_constraint(name: str | None, pred: str | None, value: Value,
                          pattern: Pattern) -> bool:
    """Does ``value``'s type satisfy the type constraint record ``name``?

    Known records (``AnyTensor``, ``F32Tensor``, ``TDF_FloatTensor``, ...) are checked by
    tdflow; an anonymous ``TensorOf<[F32]>`` by the element types its predicate names; any
    other by its registered native, else only as "a tensor".

    >>> from tdflow.dialect.ir.core import Block
    >>> from tdflow.dialect.types import TensorType
    >>> x, = Block([TensorType((2,), "f64")]).args
    >>> p = Pattern("P", "t.a", 1, OpNode("op", "t.a"), ())
    >>> check_type_constraint("TDF_FloatTensor", None, x, p), check_type_constraint("F32Tensor", None, x, p)
    (True, False)
    >>> check_type_constraint("anonymous_7", "elementType.isF64()", x, p)
    True
    """
    t = value.type
    if name in KNOWN_TYPES:
        allowed = KNOWN_TYPES[name]
        if name in ("AnyRankedTensor", "AnyStaticShapeTensor") and (
                not isinstance(t, TensorType) or t.shape is None
                or (name == "AnyStaticShapeTensor" and not t.is_static)):
            return False
        return allowed is None or getattr(t, "dtype", t) in allowed
    if name is not None and name in current_natives():
        return bool(_call_native(pattern, name, [value]))
    found = _PRED_DTYPE.findall(pred or "")
    if found:
        allowed = {(f.lower() if f else f"i{w}") for f, w in found}
        return getattr(t, "dtype", None) in allowed
    return isinstance(t, TensorType)


def _check_constraint(pattern: Pattern, c: Any, m: Match, dialect: Dialect | LoweringDialect) -> bool:
    try:
        args = [m.values[a] for a in c.args]
    except KeyError as exc:
        raise PatternError(f"{where(pattern)}: constraint '{c.record}' names ${exc.args[0]}, "
                           f"which the source pattern does not bind") from None
    if c.record in current_natives() or c.kind == "cpred":
        return bool(_call_native(pattern, c.record, args))
    if c.record in KNOWN_TYPES or _PRED_DTYPE.search(c.pred or ""):
        return all(isinstance(v, Value) and check_type_constraint(c.record, c.pred, v, pattern)
                   for v in args)
    raise PatternError(f"{where(pattern)}: tdflow cannot check constraint '{c.record}' "
                       f"({c.pred or c.summary}); register a Python function for it with "
                       f"@tdflow.native({c.record!r}) in a --hooks module")


def native_fn(pattern: Pattern, record: str) -> Any:
    """The Python function registered for ``record``; ``PatternError`` naming the pattern and
    the record (with the hint to pass ``--hooks``) when there is none."""
    fn = current_natives().get(record)
    if fn is None:
        raise PatternError(f"{where(pattern)} needs a Python function for '{record}': define it "
                           f"with @tdflow.native({record!r}) in a hooks module and pass --hooks")
    return fn


def _call_native(pattern: Pattern, record: str, args: list[Any]) -> Any:
    fn = native_fn(pattern, record)
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - the user's code: report it with the pattern
        raise PatternError(f"{where(pattern)}: native '{record}' failed with "
                           f"{type(exc).__name__}: {exc}") from exc
