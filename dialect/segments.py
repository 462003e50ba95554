"""Operand segments: which operands of a flat list belong to which operand of the op definition.

Single operands take one value, optional ones zero or one, variadic ones any number. With
several optional/variadic operands the split is ambiguous, so MLIR (and tdflow) spell it out in
``operandSegmentSizes = array<i32: ...>`` (trait ``AttrSizedOperandSegments``).

>>> from tdflow.dialect.opdef import ValueDef
>>> ops = (ValueDef("a"), ValueDef("b"), ValueDef("c", arity="optional"))
>>> split_sizes(ops, 2), split_sizes(ops, 3)
([1, 1, 0], [1, 1, 1])
"""

from __future__ import annotations

from collections.abc import Sequence

from tdflow.core.errors import TdflowError

from .opdef import OPTIONAL, SINGLE, VARIADIC, ValueDef


class SegmentError(TdflowError, ValueError):
    """The operands do not fit the definition; the message says what was expected."""


def describe_arity(defs: Sequence[ValueDef]) -> str:
    """``2`` / ``at least 2`` / ``2 to 4``: how many values ``defs`` accepts."""
    lo = sum(1 for d in defs if d.arity == SINGLE)
    if any(d.arity == VARIADIC for d in defs):
        return f"at least {lo}"
    hi = lo + sum(1 for d in defs if d.arity == OPTIONAL)
    return str(lo) if lo == hi else f"{lo} to {hi}"


def check_sizes(defs: Sequence[ValueDef], sizes: Sequence[int], total: int,
                what: str = "operand") -> list[int]:
    """Validate explicit segment sizes against ``defs`` and the number of values."""
    sizes = list(sizes)
    if len(sizes) != len(defs):
        raise SegmentError(f"{what}SegmentSizes has {len(sizes)} entries but the op has "
                           f"{len(defs)} {what} groups")
    for d, n in zip(defs, sizes):
        if n < 0:
            raise SegmentError(f"{what}SegmentSizes gives {what} '{d.name}' a negative size {n}")
        if d.arity == SINGLE and n != 1:
            raise SegmentError(f"{what}SegmentSizes gives {what} '{d.name}' {n} values; it is "
                               f"a single {what} (size 1)")
        if d.arity == OPTIONAL and n > 1:
            raise SegmentError(f"{what}SegmentSizes gives optional {what} '{d.name}' {n} "
                               f"values (at most 1)")
    if sum(sizes) != total:
        raise SegmentError(f"{what}SegmentSizes [{', '.join(map(str, sizes))}] adds up to "
                           f"{sum(sizes)} but there are {total} {what}s")
    return sizes


def split_sizes(defs: Sequence[ValueDef], total: int, what: str = "operand") -> list[int]:
    """Sizes per definition for ``total`` values without explicit segment sizes.

    Optional operands are filled left to right; a single variadic operand takes the rest.
    Raises :class:`SegmentError` when the count does not fit or the split is ambiguous.
    """
    n_single = sum(1 for d in defs if d.arity == SINGLE)
    variadic = [i for i, d in enumerate(defs) if d.arity == VARIADIC]
    optional = [i for i, d in enumerate(defs) if d.arity == OPTIONAL]
    extra = total - n_single
    if extra < 0 or (not variadic and extra > len(optional)):
        raise SegmentError(f"expects {describe_arity(defs)} {what}s, got {total}")
    sizes = [1 if d.arity == SINGLE else 0 for d in defs]
    if variadic:
        if len(variadic) > 1 or (optional and extra):
            raise SegmentError(f"cannot tell which {what}s belong to which group without "
                               f"{what}SegmentSizes (the op has several optional or variadic "
                               f"{what} groups)")
        sizes[variadic[0]] = extra
        return sizes
    for i in optional[:extra]:
        sizes[i] = 1
    return sizes


def group_flat(defs: Sequence[ValueDef], items: Sequence, sizes: Sequence[int] | None = None,
               what: str = "operand") -> dict[str, list]:
    """Group a flat list by definition name. ``None`` items stand for absent optionals.

    >>> from tdflow.dialect.opdef import ValueDef
    >>> defs = (ValueDef("a"), ValueDef("b", arity="optional"), ValueDef("c"))
    >>> group_flat(defs, ["A", None, "C"])
    {'a': ['A'], 'b': [], 'c': ['C']}
    """
    if sizes is not None:
        present = [x for x in items if x is not None]
        sizes = check_sizes(defs, sizes, len(present), what)
        out, pos = {}, 0
        for d, n in zip(defs, sizes):
            out[d.name] = present[pos:pos + n]
            pos += n
        return out
    if None not in items:
        sizes = split_sizes(defs, len(items), what)
        out, pos = {}, 0
        for d, n in zip(defs, sizes):
            out[d.name] = list(items[pos:pos + n])
            pos += n
        return out
    # Positional with placeholders: one item per definition, None = absent optional.
    if len(items) > len(defs) and not any(d.arity == VARIADIC for d in defs):
        raise SegmentError(f"expects {describe_arity(defs)} {what}s, got {len(items)}")
    out = {}
    pos = 0
    for i, d in enumerate(defs):
        if d.arity == VARIADIC:
            rest = len(defs) - i - 1
            take = [x for x in items[pos:len(items) - rest] if x is not None]
            out[d.name] = take
            pos = len(items) - rest
            continue
        x = items[pos] if pos < len(items) else None
        pos += 1
        if x is None:
            if d.arity == SINGLE:
                raise SegmentError(f"{what} '{d.name}' is required but was not given")
            out[d.name] = []
        else:
            out[d.name] = [x]
    return out
