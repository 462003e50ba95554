"""Rewrite patterns as data: what a DRR ``Pat``/``Pattern`` record says, read once.

The reader (:mod:`tdflow.dialect.patterns.reader`) builds these from TableGen records;
the applier matches and rewrites IR with them. Nothing here runs code from a ``.td`` file:
C++ snippets (``CPred``, ``NativeCodeCall``) are kept as text, and a Python native with the
record's name supplies the behaviour.

>>> b = Bind("x", "any")
>>> node = OpNode("op", "tdflow.relu", (b,), ("x",))
>>> p = Pattern("GeneratedConvert0", "tdflow.relu", 1, node, (b,), matched_ops=("tdflow.relu",))
>>> p.root, p.results[0].name
('tdflow.relu', 'x')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tdflow.core.valueclass import value_class

if TYPE_CHECKING:
    from tdflow.tdparser.records import Loc

__all__ = ["Bind", "Constraint", "OpNode", "Pattern"]


@value_class(frozen=True)
class Bind:
    """A leaf argument of a pattern dag: ``$x``, ``F32Attr:$a``, ``?``, ``AnyTensor``, a constant.

    ``kind`` is one of ``"any"`` (bare ``$x`` or ``?``), ``"type"`` (a TypeConstraint record),
    ``"attr"`` (an AttrConstraint record), ``"constant_attr"`` (``ConstantAttr<...>`` and its
    ``ConstBoolAttrTrue``/``ConstF32Attr`` forms), ``"native"`` (a NativeCodeCall used as a
    leaf) or ``"literal"`` (a bare int/string value).

    >>> Bind("a", "attr", "F32Attr").constraint
    'F32Attr'
    >>> Bind(None, "constant_attr", "F32Attr", ("F32Attr", "1.0")).value
    ('F32Attr', '1.0')
    """

    name: str | None
    kind: str
    constraint: str | None = None
    # constant_attr: (attr-constraint record name, value text as in the .td);
    # literal: the int/str; native leaf: the NativeCodeCall expression text
    value: object = None
    pred: str | None = None  # the constraint's CPred text, for messages


@value_class(frozen=True)
class OpNode:
    """A dag of a pattern: an op, a NativeCodeCall call, or a DRR directive.

    ``kind`` is ``"op"``, ``"native"``, ``"either"``, ``"replace_with_value"``, ``"location"``,
    ``"return_type"``, ``"variadic"`` or ``"constraint_dag"``. For ``"op"``, ``arg_names`` are
    the op's argument names in binding order (operands, then attributes), aligned with ``args``
    (an MLIR op whose ``arguments`` interleave operands and attributes binds in that order).
    An ``either`` argument covers one slot per child: its entry in the parent's ``arg_names``
    is the first slot's name, and its own ``arg_names`` lists every slot's. A result op's
    trailing ``location``/``returnType`` directives take no slot (``"$location"``,
    ``"$return_type"`` in ``arg_names``).

    >>> OpNode("op", "toy.reshape", (Bind("x", "any"),), ("input",), name="res").name
    'res'
    """

    kind: str
    op: str | None
    args: tuple[OpNode | Bind, ...] = ()
    arg_names: tuple[str, ...] = ()
    name: str | None = None  # the `:$name` on the dag operator (binds the op's results)
    expr: str | None = None  # "native": the NativeCodeCall expression text


@value_class(frozen=True)
class Constraint:
    """One entry of a pattern's constraint list, e.g. ``(TypesAreIdentical $res, $arg)``.

    ``kind`` is ``"cpred"`` (a C++ predicate: needs a Python native) or ``"known"`` (tdflow
    checks it itself).

    >>> Constraint("TypesAreIdentical", ("res", "arg"), "cpred", "$0.getType() == $1.getType()").args
    ('res', 'arg')
    """

    record: str
    args: tuple[str, ...]
    kind: str
    pred: str | None = None
    summary: str = ""


@value_class(frozen=True)
class Pattern:
    """One rewrite rule: a source dag rooted at ``root`` and the result dags replacing it.

    ``name`` is mlir-tblgen's (the record name, or ``GeneratedConvertN`` for the N-th anonymous
    pattern); ``benefit`` is as mlir-tblgen computes it (ops in the source + ``addBenefit``).

    >>> src = OpNode("op", "toy.transpose", (Bind("x", "any"),), ("input",))
    >>> Pattern("P", "toy.transpose", 1, src, (Bind("x", "any"),)).generated_ops
    ()
    """

    name: str
    root: str
    benefit: int
    source: OpNode
    results: tuple[OpNode | Bind, ...]
    constraints: tuple[Constraint, ...] = ()
    supplemental: tuple[OpNode, ...] = ()
    matched_ops: tuple[str, ...] = ()  # every op in the source pattern, root first
    generated_ops: tuple[str, ...] = ()  # sorted, unique, as mlir-tblgen lists them
    natives: tuple[str, ...] = ()  # NativeCodeCall / CPred-constraint records Python must supply
    loc: Loc | None = None
