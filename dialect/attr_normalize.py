"""Attributes normalized once, in the dialect: what an op's record says its attributes are.

Base.td's attribute wrappers (MLIR's ``ConfinedAttr`` style: the wrapped attribute keeps its
kind, default and accessors) say what a value means:

* ``TDF_AxisAttr<"x", attr>``: an axis of operand ``x``, in ``[-rank, rank)`` (``extra``
  widens the range: ``expand_dims`` inserts at ``rank``); made non-negative;
* ``TDF_AxesAttr<"x", attr>``: a list of such axes, each made non-negative, none twice (an
  empty list stays empty: for a reduction it means every axis);
* ``TDF_PairAttr<attr, minimum>``: one value per spatial dim of a 2-D window: an int ``k``
  becomes ``[k, k]``; a list must have two entries; entries below ``minimum`` are errors;
* ``TDF_ScanAxisAttr<"x", attr>``: an axis where a scalar counts as one dim (cumsum's);
* ``TDF_PermAttr<"x", attr>``: a permutation of ``x``'s dims, entries made non-negative;
* ``TDF_DimsAttr<"x", attr, minimum, note>``: one entry per dim of ``x``, none below
  ``minimum`` (``note``: the hint a smaller one gets: pad's "crop with slice").

A bad value's message names the op, the attribute, the value, the operand and its shape, and
the valid range ("perm [0, 0, 1] is not a permutation of 0..2 for 'input' of shape [2, 3, 4]").

:func:`normalize_attrs` applies them for hooks (through inference) and the verifier;
:func:`complete_attrs` for the seams that hand attributes to kernels (a compiled program's
``select_kernels.kernel_attrs``, an eager call's ``OpRunner``, the CUDA ``generate``), so CPU
kernels and CUDA generators read ``attrs["axis"]`` and trust it.

>>> from tdflow.dialect import standard_dialect
>>> d = standard_dialect()
>>> normalize_attrs(d.lookup("tdflow.bias_add"), {"axis": -1}, {"a": (4, 8), "b": (8,)})
{'axis': 1}
>>> normalize_attrs(d.lookup("tdflow.reduce_sum"), {"axis": [-1, 0]}, [(2, 3, 4)])
{'keepdims': False, 'axis': [2, 0]}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .hooks._shape import fmt
from .hooks.context import HookError
from .opdef import AttrDef, OpDef

__all__ = ["AttrError", "complete_attrs", "normalize_attrs", "normalize_value"]

class AttrError(HookError):
    """A value an attribute's rule rejects; names the op and the attribute. ``message`` is the
    text without them (how inference reports it at the op, located by the verifier)."""

    def __init__(self, op: str, attr: str, message: str) -> None:
        super().__init__(message, attr=attr)
        self.op = op

    def __str__(self) -> str:
        return f"'{self.op}': attribute '{self.attr}': {self.message}"


def normalize_attrs(opdef: OpDef, attrs: Mapping[str, Any] | None = None,
                    operand_shapes: Mapping[str, Any] | Sequence[Any] | None = None,
                    ruled_by: OpDef | None = None) -> dict[str, Any]:
    """The op's complete attributes: ``attrs`` over the defaults, each ruled attribute
    normalized (axes non-negative and in range, pairs expanded and checked).

    ``attrs`` holds plain Python values (typed, as hooks see them; ``None`` takes the default).
    ``operand_shapes`` maps operand names to shapes (a tuple, ``None`` when unranked, or a list
    of shapes for a variadic operand), or lists them in operand order. An axis of an operand
    whose rank is unknown is kept as given. ``ruled_by`` is the op whose record's rules apply
    when it is not ``opdef``: the standard op serving it (``Dialect.hook_op``: same attribute
    and operand names and kinds; a OneFlow record says no rule). Raises :class:`AttrError`
    naming the op and the attribute.

    >>> from tdflow.dialect import standard_dialect
    >>> conv = standard_dialect().lookup("tdflow.conv2d")
    >>> normalize_attrs(conv, {"kernel_size": 3, "strides": 2, "padding_before": [1, 0],
    ...                        "dilation_rate": [1, 1], "data_format": "channels_first",
    ...                        "filters": 8})["kernel_size"]
    [3, 3]
    >>> normalize_attrs(standard_dialect().lookup("tdflow.gather"), {"axis": 2}, [(4, 5), (3,)])
    Traceback (most recent call last):
    ...
    tdflow.dialect.attr_normalize.AttrError: 'tdflow.gather': attribute 'axis': axis 2 is out of range for 'in' of shape [4, 5] (expected -2 <= axis < 2)
    """
    out: dict[str, Any] = {a.name: a.default for a in opdef.attributes
                           if a.default_text is not None}
    for name, value in (attrs or {}).items():
        if value is not None:
            out[name] = value
    shapes = _by_name(opdef, operand_shapes)
    for a in (ruled_by or opdef).attributes:
        if a.rule is not None and out.get(a.name) is not None:
            out[a.name] = normalize_value(opdef, a, out[a.name], shapes)
    return out


def complete_attrs(opdef: OpDef | None, attrs: Mapping[str, Any],
                   operand_shapes: Sequence[Any] | Mapping[str, Any] | None = None,
                   ruled_by: OpDef | None = None) -> dict[str, Any]:
    """The attributes a kernel or a CUDA generator receives: :func:`normalize_attrs` with each
    default as the IR holds it (an ``f32`` default rounded to float32, so eager calls, compiled
    programs and generators compute the same bits).

    ``operand_shapes`` lists the shapes of the op's data operands in order, flat (a variadic
    operand's values one after another, as kernels receive them), or maps names to shapes.
    An op without a definition (``opdef`` ``None``: a fused op) keeps its attributes as given;
    an attribute given as ``None`` without a default stays ``None``. ``ruled_by``: as for
    :func:`normalize_attrs`.

    >>> from tdflow.dialect import standard_dialect
    >>> d = standard_dialect()
    >>> complete_attrs(d.lookup("tdflow.cat"), {"axis": -1}, [(2, 3), (2, 4)])
    {'axis': 1, 'max_dim_size': 0}
    >>> complete_attrs(d.lookup("tdflow.adam_update"), {})["beta1"]  # 0.9 as float32 holds it
    0.8999999761581421
    """
    if opdef is None:
        return dict(attrs)
    from .attr_kinds import as_stored

    merged = {a.name: as_stored(a.kind, a.default) for a in opdef.attributes
              if a.default_text is not None}
    merged.update((k, v) for k, v in attrs.items() if v is not None)
    shapes = operand_shapes if isinstance(operand_shapes, Mapping) \
        else _grouped(opdef, operand_shapes)
    out = normalize_attrs(opdef, merged, shapes, ruled_by)
    for k, v in attrs.items():
        out.setdefault(k, v)  # None for an attribute without a default, as given
    return out


def normalize_value(opdef: OpDef, attr: AttrDef, value: Any,
                    shapes: Mapping[str, Any]) -> Any:
    """One ruled attribute's value, normalized (see :func:`normalize_attrs`).

    >>> from tdflow.dialect import standard_dialect
    >>> t = standard_dialect().lookup("tdflow.transpose")
    >>> normalize_value(t, t.attr("perm"), [-1, 0, 1], {"input": (2, 3, 4)})
    [2, 0, 1]
    """
    rule = attr.rule
    if rule.kind == "pair":
        return _pair(opdef, attr, value)
    shape = _shape(shapes.get(rule.operand))
    if shape is None:
        if rule.kind == "dims":  # the entries' bound needs no rank
            _at_least(opdef, attr, _ints(opdef, attr.name, value), value)
        return value
    where = _Where(opdef, attr, shape)
    if rule.kind == "axis":
        return where.axis(value, max(len(shape), rule.minimum or 0) + rule.extra)
    if rule.kind == "dims":
        return where.dims(value)
    if rule.kind == "perm":
        return where.perm(value)
    axes = [where.axis(v, len(shape) + rule.extra) for v in _ints(opdef, attr.name, value)]
    if len(set(axes)) != len(axes):
        raise where.error("names a dimension twice", value, operand=False)
    return tuple(axes) if isinstance(value, tuple) else axes


class _Where:
    """An attribute of ``opdef`` bounded by its operand's ``shape``: messages name the value,
    the operand and its shape (so its rank) and the valid range."""

    __slots__ = ("opdef", "attr", "shape")

    def __init__(self, opdef: OpDef, attr: AttrDef, shape: tuple) -> None:
        self.opdef, self.attr, self.shape = opdef, attr, shape

    def error(self, what: str, value: Any, *, operand: bool = True,
              after: str = "") -> AttrError:
        v = list(value) if isinstance(value, (list, tuple)) else value
        name = self.attr.name
        tail = f" for '{self.attr.rule.operand}' of shape {fmt(self.shape)}" if operand else ""
        return AttrError(self.opdef.name, name, f"{name} {v} {what}{tail}{after}")

    def axis(self, value: Any, bound: int) -> int:
        name = self.attr.name
        if isinstance(value, bool) or not isinstance(value, int):
            raise AttrError(self.opdef.name, name, f"{name} must be an integer, got {value!r}")
        if not -bound <= value < bound:
            if bound == 0:
                raise AttrError(self.opdef.name, name, f"{name} {value} is out of range: "
                                f"'{self.attr.rule.operand}' is a scalar (rank 0) and has "
                                f"no dimension")
            raise self.error("is out of range", value,
                             after=f" (expected {-bound} <= {name} < {bound})")
        return value + bound if value < 0 else value

    def perm(self, value: Any) -> Any:
        rank = len(self.shape)
        vals = _ints(self.opdef, self.attr.name, value)
        perm = [v + rank if v < 0 else v for v in vals]
        if sorted(perm) != list(range(rank)):  # a wrong length, an entry twice or out of range
            raise self.error(f"is not a permutation of {f'0..{rank - 1}' if rank else '[]'}",
                             value)
        return tuple(perm) if isinstance(value, tuple) else perm

    def dims(self, value: Any) -> Any:
        vals = _ints(self.opdef, self.attr.name, value)
        rank = len(self.shape)
        if len(vals) != rank:
            raise self.error(f"has {len(vals)} entr{'y' if len(vals) == 1 else 'ies'} but "
                             f"'{self.attr.rule.operand}' of shape {fmt(self.shape)} has "
                             f"{rank} dim{'' if rank == 1 else 's'} (one entry per dim)",
                             value, operand=False)
        _at_least(self.opdef, self.attr, vals, value)
        return value


def _at_least(opdef: OpDef, attr: AttrDef, vals: list[int], value: Any) -> None:
    minimum = attr.rule.minimum
    if minimum is not None and any(v < minimum for v in vals):
        note = f" ({attr.rule.note})" if attr.rule.note else ""
        raise AttrError(opdef.name, attr.name,
                        f"{attr.name} {list(vals)} has an entry below {minimum}{note}")


def _pair(opdef: OpDef, attr: AttrDef, value: Any) -> list[int]:
    # a bare int stands for both dims; a list must say both (as OneFlow's records do)
    vals = [value, value] if isinstance(value, int) and not isinstance(value, bool) \
        else _ints(opdef, attr.name, value)
    if len(vals) != 2:
        raise AttrError(opdef.name, attr.name, f"{attr.name} must have 2 entries (one per "
                                               f"spatial dim), got {list(vals)}")
    minimum = attr.rule.minimum
    if minimum is not None and any(v < minimum for v in vals):
        raise AttrError(opdef.name, attr.name,
                        f"{attr.name} entries must be >= {minimum}, got {list(vals)}")
    return vals


def _ints(opdef: OpDef, name: str, value: Any) -> list[int]:
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        raise AttrError(opdef.name, name, f"{name} must be integers, got {value!r}")
    return items


def _grouped(opdef: OpDef, shapes: Sequence[Any] | None) -> dict[str, Any]:
    """Flat operand shapes by operand name; a variadic or optional operand takes what the
    single ones leave (when it is the only such operand; otherwise operands after the first
    non-single one stay unknown, and their axes are kept as given)."""
    if not shapes:
        return {}
    shapes = list(shapes)
    flexible = [o for o in opdef.operands if not o.is_single]
    out: dict[str, Any] = {}
    i = 0
    for o in opdef.operands:
        if o.is_single:
            if i >= len(shapes):
                break
            out[o.name] = shapes[i]
            i += 1
            continue
        if len(flexible) > 1:
            break
        n = len(shapes) - (len(opdef.operands) - 1)
        out[o.name] = [s for s in shapes[i:i + max(n, 0)]]
        i += max(n, 0)
    return out


def _by_name(opdef: OpDef, shapes: Mapping[str, Any] | Sequence[Any] | None) -> dict[str, Any]:
    if shapes is None:
        return {}
    if isinstance(shapes, Mapping):
        return dict(shapes)
    return dict(zip((o.name for o in opdef.operands), shapes))


def _shape(shape: Any) -> tuple | None:
    """A shape as a tuple: of a shape, of a TensorType, or of a variadic operand's first
    value (``None`` when unranked or unknown)."""
    if isinstance(shape, list) and shape and not isinstance(shape[0], int):
        shape = shape[0]  # a variadic operand: its first value's shape
    shape = getattr(shape, "shape", shape)
    if shape is None or isinstance(shape, list) and not shape:
        return None
    return tuple(shape)
